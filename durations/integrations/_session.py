"""What both integrations share, framework-free: the plan of one process of a script, the call
being trained, and the mapping between a framework's step counter and the plan's lifetime steps.

A *process* of the script plans once, at its first train/fit, from the newest checkpoint under
the checkpoint location (or from scratch when there is none), then walks the script's fit calls
in order, one per train/fit.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ..diagnostics import Severity
from ..fit import DataPolicy, FitCall, RunConfig
from ..intervals import At, AtCallEnds, Events, Every
from ..loader import Loader
from ..planner import plan as make_plan
from ..plans import Action, Plan, Segment
from ..sharding import Padding
from . import IntegrationError
from .checkpoints import CheckpointReader, FoundCheckpoint, list_checkpoints

__all__ = [
    "IntegrationError",
    "Session",
    "Start",
    "StartKind",
    "check_data_parallel",
    "samples_between",
]


class StartKind(enum.Enum):
    """What a train/fit call of the script does in this process."""

    #: The ledger says the call finished (or it has no step to take): do not train; give the
    #: model the state the call ended with (``Start.restore_from``).
    SKIP = "skip"
    #: The call had started: resume from the checkpoint.
    RESUME = "resume"
    #: The call starts now (with the previous call's weights from the checkpoint, if any).
    RUN = "run"


@attrs.frozen(kw_only=True)
class Start:
    """The decision for one train/fit: the segment, and which checkpoint to resume or take the
    weights from (``None``: nothing to load).

    ``restore_from`` (a ``SKIP`` only) is the checkpoint that holds the state at the call's stop,
    which an uninterrupted run has in memory when the call returns: the callback loads it into
    the model (and the optimizer the framework keeps across calls). ``None``: the model holds
    that state already (an earlier call of this process left it), or the run has not trained yet.
    """

    kind: StartKind
    segment: Segment
    resume_from: str | None = None
    weights_from: str | None = None
    restore_from: str | None = None


class Session:
    """The plan of this process and where it is in the script."""

    def __init__(
        self,
        config: RunConfig,
        calls: Sequence[FitCall],
        checkpoints: str | os.PathLike[str],
        reader: CheckpointReader,
        save_on: Every | At | AtCallEnds | str | None = None,
        keep_final: str = "do not delete it",
    ) -> None:
        if not isinstance(config, RunConfig):
            raise TypeError(f"config={config!r}: expected a durations.RunConfig")
        calls = tuple(calls)
        if not calls or not all(isinstance(call, FitCall) for call in calls):
            raise TypeError(f"calls={calls!r}: expected a non-empty sequence of durations.FitCall")
        self.config = config
        self.calls = calls
        self.checkpoints = os.fspath(checkpoints)
        self.reader = reader
        self.save_on = _save_on(save_on)
        #: How to keep a call's final checkpoint with this framework (in the refusal when one
        #: is missing).
        self.keep_final = keep_final
        self._saves: Events | None = None
        self.plan: Plan | None = None
        self.found: FoundCheckpoint | None = None
        #: Every checkpoint under ``checkpoints``, oldest first by recorded progress (``found``
        #: is the last).
        self.available: tuple[FoundCheckpoint, ...] = ()
        self.segment: Segment | None = None
        self.offset = 0
        self._next = 0
        self._loaded = False
        self._holds_state = False

    # -- planning -----------------------------------------------------------------------------

    def _plan(self) -> Plan:
        if self.plan is None:
            self.available = tuple(list_checkpoints(self.checkpoints, reader=self.reader))
            self.found = self.available[-1] if self.available else None
            checkpoint = None if self.found is None else self.found.checkpoint
            planned = make_plan(self.config, self.calls, checkpoint)
            if not planned.ok:
                problems = "; ".join(
                    f"{d.code}: {d.message}"
                    for d in planned.diagnostics
                    if d.severity is Severity.ERROR
                )
                raise IntegrationError(f"the script cannot be planned: {problems}")
            self.plan = planned
        return self.plan

    def begin(self) -> Start:
        """Move to the script's next fit call and decide what its train/fit does."""
        planned = self._plan()
        index = self._next
        if index >= len(self.calls):
            raise IntegrationError(
                f"the script started train/fit number {index + 1}, but it has only "
                f"{len(self.calls)} FitCall(s); pass one FitCall per train/fit call, in order"
            )
        self._next += 1
        segment = planned.segments[index]
        self.segment = segment
        if segment.action is Action.SKIP or segment.steps == 0:
            restore = self._state_at_stop(segment)
            self._holds_state = True
            return Start(kind=StartKind.SKIP, segment=segment, restore_from=restore)
        if segment.stop_at_runtime:
            raise IntegrationError(
                f"call {segment.name!r} stops at a token count only known at run time; the "
                "integrations stop at exact steps only: give the loader tokens_per_sample or "
                "the call a target in ba, sp or ep"
            )
        if self.config.data is not DataPolicy.EXACT:
            raise IntegrationError(
                f"RunConfig(data={self.config.data.value!r}): the integrations resume the data "
                "exactly; use RunConfig(data='exact')"
            )
        first = not self._loaded
        self._loaded = True
        self._holds_state = True
        if segment.action is Action.RESUME:
            if self.found is None:
                raise IntegrationError(f"call {segment.name!r} resumes without a checkpoint")
            return Start(kind=StartKind.RESUME, segment=segment, resume_from=self.found.path)
        if not segment.start.at_epoch_start:
            raise IntegrationError(
                f"call {segment.name!r} starts inside an epoch of its loader (sample "
                f"{segment.start.sample_in_epoch}, going on from the previous call on the same "
                "stream); a framework's train/fit starts an epoch from its first sample. Give "
                "the loader another name (a new stream, rule 4) or end the previous call at an "
                "epoch boundary"
            )
        weights = self.found.path if first and self.found is not None else None
        return Start(kind=StartKind.RUN, segment=segment, weights_from=weights)

    def _state_at_stop(self, segment: Segment) -> str | None:
        """The checkpoint holding the state at the stop of ``segment``, a call this process does
        not train (``None``: nothing to load).

        A call the ledger records as finished: its final checkpoint, one whose recorded progress
        is the call's stop and whose ledger records the call finished there (of several, the one
        :func:`~durations.integrations.checkpoints.latest_checkpoint` would prefer). Missing, it
        is refused: the model would silently keep weights the uninterrupted run never had. A
        call with no step to take ends where it starts: with what an earlier call of this
        process left in memory, or, first, with the checkpoint the plan starts from."""
        if segment.action is not Action.SKIP:
            if self._holds_state or self.found is None:
                return None
            return self.found.path
        stop = segment.entry.stop
        assert stop is not None  # a finished entry has its stop
        finals = [
            found
            for found in self.available
            if found.checkpoint.progress.batch == stop.batch
            and any(
                entry.name == segment.name
                and entry.finished
                and entry.stop is not None
                and entry.stop.batch == stop.batch
                for entry in found.checkpoint.ledger or ()
            )
        ]
        if not finals and segment.entry.start.batch == stop.batch:
            # A call that trained no step ends with what was before it: the model as built
            # at step 0, what the previous call left in memory, or any checkpoint at that step
            # (the state after k steps is one state, whichever call saved it).
            if self._holds_state or stop.batch == 0:
                return None
            finals = [f for f in self.available if f.checkpoint.progress.batch == stop.batch]
        if not finals:
            raise IntegrationError(
                f"call {segment.name!r} finished at lifetime step {stop.batch}, but no checkpoint "
                f"under {self.checkpoints!r} records it finished there: its final checkpoint "
                "was deleted or never written, and without it the model would not hold what "
                "the uninterrupted run had after the call. Keep every call's final "
                f"checkpoint: {self.keep_final}"
            )
        return finals[-1].path

    # -- the step counter --------------------------------------------------------------------------

    def attach(self, framework_step: int) -> None:
        """Map the framework's step counter at the start of the current call to the plan."""
        segment = self.current()
        self.offset = segment.start.batch - framework_step

    def saved_loader(self, name: str) -> Loader | None:
        """Call ``name``'s loader as the checkpoint this process resumes from recorded it (the
        plan's segment has the script's loader, which may differ: another world size)."""
        entries = () if self.found is None else self.found.checkpoint.ledger or ()
        return next((entry.loader for entry in entries if entry.name == name), None)

    def current(self) -> Segment:
        if self.segment is None:
            raise IntegrationError("no fit call is running: train/fit through the callback")
        return self.segment

    def lifetime(self, framework_step: int) -> int:
        """The lifetime step (``Progress.batch``) at the framework's step ``framework_step``."""
        return framework_step + self.offset

    def should_stop(self, framework_step: int) -> bool:
        return self.lifetime(framework_step) >= self.current().stop.batch

    def check_reached_stop(self, framework: str, framework_step: int, remedy: str) -> None:
        """Refuse a call the framework ended before the plan's stop, saying what to do."""
        segment = self.current()
        lifetime = self.lifetime(framework_step)
        if lifetime < segment.stop.batch:
            raise IntegrationError(
                f"{framework} ended call {segment.name!r} at lifetime step {lifetime}, before "
                f"the plan's stop {segment.stop.batch}: {remedy}"
            )

    def stops(self) -> frozenset[int]:
        """The lifetime steps at which the script's calls up to the current one stop: where
        their final checkpoints are, which a rotation of checkpoints must keep (a skipped call
        restores its own, :attr:`Start.restore_from`)."""
        current = self.current()
        return frozenset(
            segment.stop.batch
            for segment in self._plan().segments
            if segment.index <= current.index and not segment.failed
        )

    def save_due(self, framework_step: int) -> bool:
        """Whether ``save_on`` has a checkpoint due after the framework's step: the interval
        is resolved on this process's plan, on lifetime steps, so the grid goes on across calls
        and restarts (rule S6). The current call's stop is always due: the ledger must record
        the call finished."""
        if self.save_on is None:
            return False
        step = self.lifetime(framework_step)
        if step == self.current().stop.batch:
            return True
        if self._saves is None:
            self._saves = self.save_on.resolve(self._plan())
        return self._saves.is_due(step)

    def checkpoint_dict(self, framework_step: int) -> dict[str, Any]:
        """The durations checkpoint (ledger included) at the framework's step, as JSON data."""
        planned = self._plan()
        step = self.lifetime(framework_step) - planned.start.batch
        if not 0 <= step <= planned.total_steps:
            raise IntegrationError(
                f"the framework is at lifetime step {self.lifetime(framework_step)}, outside "
                f"this process's plan ({planned.start.batch} to {planned.stop.batch})"
            )
        return planned.checkpoint_at(step).to_dict()


def _save_on(value: object) -> Every | At | AtCallEnds | None:
    """``save_on=``: an interval, or a time string meaning ``Every(time)``."""
    if value is None or isinstance(value, Every | At | AtCallEnds):
        return value
    if isinstance(value, str):
        return Every(value)
    raise TypeError(
        f"save_on={value!r}: expected a durations Every, At or AtCallEnds, a time string such "
        "as '0.25ep' (every 0.25 epoch), or None"
    )


def require_registered(callback: object, callbacks: Any, constructor: str) -> None:
    """Refuse a ``callback.fit``/``train`` whose callback the trainer does not call: the plan
    would be followed by nobody. ``constructor`` is how the framework's trainer is built."""
    if callback not in callbacks:
        raise IntegrationError(
            "this DurationsCallback is not one of the trainer's callbacks: pass it as "
            f"{constructor}(..., callbacks=[callback])"
        )


def created_on_first_use(
    module: str, namespace: dict[str, Any], name: str, make: Callable[[], type[Any]]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that builds ``name`` with ``make`` when it is first asked for
    (so the framework it subclasses is imported then, not when the module is)."""

    def module_getattr(attribute: str) -> Any:
        if attribute == name:
            made = make()
            namespace[name] = made
            return made
        raise AttributeError(f"module {module!r} has no attribute {attribute!r}")

    return module_getattr


def reads_sampler(dataloader: Any, sampler: object) -> bool:
    """Whether ``dataloader`` reads ``sampler``: itself, or through the ``batch_sampler`` and
    ``sampler`` attributes the frameworks wrap it in (accelerate's ``BatchSamplerShard``,
    torch's ``BatchSampler``), a few levels deep."""
    todo, seen = [dataloader], 0
    while todo and seen < 16:
        here = todo.pop()
        seen += 1
        if here is sampler:
            return True
        todo += [
            found
            for found in (getattr(here, "batch_sampler", None), getattr(here, "sampler", None))
            if found is not None
        ]
    return False


def check_data_parallel(
    segment: Segment,
    *,
    framework: str,
    world_size: int,
    device_batch_size: int,
    accumulation: int,
    padding: Padding,
    drop_last: bool,
) -> None:
    """Refuse a run whose data-parallel geometry is not the plan's loader's (rule 17): a plan
    of one global stream on a multi-process job counts the wrong samples, silently.

    The error names the ``Loader.sharded(...)`` that describes what the job really reads.
    """
    loader = segment.loader
    sharding = loader.sharding
    wanted = (
        f"Loader.sharded(samples={loader.samples}, world_size={world_size}, "
        f"device_batch_size={device_batch_size}, accumulation={accumulation}, "
        f"padding={padding.value!r}, drop_last={drop_last}"
        + (f", name={loader.name!r}" if loader.name else "")
        + ")"
    )
    if sharding is None:
        if world_size == 1:
            return
        raise IntegrationError(
            f"call {segment.name!r} runs on {world_size} {framework} processes, but its loader "
            "is one global stream: the job's sampler evens the ranks and reads other samples "
            f"than the plan counts; describe the job's loader as {wanted}"
        )
    found = (
        sharding.world_size,
        sharding.device_batch_size,
        sharding.accumulation,
        sharding.padding,
        loader.drop_last,
    )
    if found != (world_size, device_batch_size, accumulation, padding, drop_last):
        raise IntegrationError(
            f"call {segment.name!r}: {framework} runs {world_size} processes of "
            f"{device_batch_size} per device, accumulation {accumulation}, "
            f"{padding.value} padding, drop_last={drop_last}; the plan's loader has "
            f"{sharding.world_size} of {sharding.device_batch_size}, accumulation "
            f"{sharding.accumulation}, {sharding.padding.value} padding, drop_last="
            f"{loader.drop_last}; describe the job's loader as {wanted}"
        )


def samples_between(start: tuple[int, int], stop: tuple[int, int], samples: int) -> str:
    """The samples of the data from ``(epoch, position)`` ``start`` up to ``stop``, by epoch,
    as ``"samples 15-20 of epoch 0 and samples 0-9 of epoch 1"`` (positions past the data's
    end, where the ranks are evened, are not samples of their own)."""
    parts = []
    epoch, position = start
    while (epoch, position) < stop:
        end = min(stop[1] if epoch == stop[0] else samples, samples)
        if position < end:
            span = f"{position}-{end - 1}" if end - position > 1 else f"{position}"
            parts.append(f"sample{'s' if end - position > 1 else ''} {span} of epoch {epoch}")
        epoch, position = epoch + 1, 0
    return " and ".join(parts) or "no sample"
