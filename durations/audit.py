"""Run audits: whether a run's step log shows that it followed its plan, step by step.

A *step log* (``docs/audits.md``) has one JSON line per optimizer step a run took: the lifetime
step, what the step read (data-set indices, or the lifetime sample counter), its learning rate,
and the checkpoint saved after it with the saved loader state. A job killed and run again
appends to the same log after a header line of its own, so a step the kill lost appears again;
the last record of a step is the one that counts, and the re-run must begin right after the
newest checkpoint the log shows (the plan resumes there: ``docs/semantics.md`` rule 16). A step
going back with no header before it was taken twice, or out of order, by one process.

:func:`audit` compares the records with the plan: every step of the plan logged, none past it;
each step's indices those of the plan's order (rule 19) or its samples the plan's (rule 5);
each learning rate the schedule's (rule S1, to :data:`LR_TOLERANCE` relative); and each saved
loader state at the plan's position (a frozen or restarted state would resume elsewhere, rule
11). It is pure: parsing the log's lines (:meth:`StepLog.parse`) is text in, values out.

>>> from durations import FitCall, Loader, Order, RunConfig, plan
>>> a = Loader(samples=30, batch_size=10, name="a", order=Order.sequential())
>>> p = plan(RunConfig(max_duration="1ep"), [FitCall(loader=a)])
>>> lines = [
...     '{"step": 1, "loader": "a", "indices": [0,1,2,3,4,5,6,7,8,9]}',
...     '{"step": 2, "loader": "a", "indices": [10,11,12,13,14,15,16,17,18,19]}',
...     '{"step": 3, "loader": "a", "indices": [10,11,12,13,14,15,16,17,18,19]}',
... ]
>>> result = audit(p, StepLog.parse(lines).records)
>>> result.ok, result.first.step, result.first.kind
(False, 3, 'indices')
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal

import attrs

from .errors import DurationsError, shown_value
from .order import step_indices
from .plans import Plan, Segment
from .progress import Progress
from .schedules import ResolvedSchedule

__all__ = [
    "LOG_FORMAT",
    "LR_TOLERANCE",
    "Audit",
    "Divergence",
    "LoaderState",
    "SavedCheckpoint",
    "StepLog",
    "StepLogError",
    "StepRecord",
    "StepVerdict",
    "audit",
]

#: The header line's ``log`` value.
LOG_FORMAT = "durations-step-log/1"
#: Relative tolerance of a logged learning rate against the schedule's.
LR_TOLERANCE = 1e-9

#: How a step's check came out: the plan's, not, nothing logged to check, or not logged at all.
Check = Literal["ok", "diverged", "unchecked", "missing"]

#: One rank's indices (``rank``), or every rank's together (``None``).
RankIndices = tuple[int | None, tuple[int, ...]]


class StepLogError(DurationsError, ValueError):
    """A step log that cannot be read: a line that is not a JSON object of the format."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        super().__init__(f"step log line {line}: {message}")


def _whole(value: object, line: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StepLogError(line, f"{what}: expected a whole number >= 0, got {shown_value(value)}")
    return value


def _number(value: object, line: int, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StepLogError(line, f"{what}: expected a finite number, got {shown_value(value)}")
    try:
        number = float(value)  # an int past a float's range overflows (found by fuzzing)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise StepLogError(line, f"{what}: expected a finite number, got {shown_value(value)}")
    return number


def _indices(value: object, line: int, what: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise StepLogError(line, f"{what}: expected a list of indices, got {shown_value(value)}")
    return tuple(_whole(item, line, what) for item in value)


@attrs.frozen(kw_only=True)
class LoaderState:
    """What a saved loader state says of its place in the epoch: the samples and the batches
    it had yielded (``None``: not said), and whether its epoch's iterator had ended.

    Read from a torchdata ``StatefulDataLoader.state_dict()`` (torchdata 0.11): one process has
    ``_num_yielded`` (batches) and ``_sampler_iter_state.samples_yielded`` (samples, with
    torchdata's batch sampler); with workers, ``_snapshot._snapshot_step`` plus
    ``_steps_since_snapshot`` (batches) and ``_snapshot._main_snapshot._sampler_iter_state``.

    >>> LoaderState.from_state_dict({"_num_yielded": 3, "_iterator_finished": False,
    ...     "_sampler_iter_state": {"samples_yielded": 30}})
    LoaderState(samples=30, batches=3, finished=False)
    """

    samples: int | None = None
    batches: int | None = None
    finished: bool = False

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any], *, line: int = 0) -> LoaderState:
        """The place a ``StatefulDataLoader.state_dict()`` records (see the class docstring)."""
        if not isinstance(state, Mapping):
            raise StepLogError(
                line, f"loader_state: expected a loader's state_dict, got {shown_value(state)}"
            )
        main: Mapping[str, Any] = state
        batches: object = state.get("_num_yielded")
        snapshot = state.get("_snapshot")
        if isinstance(snapshot, Mapping):
            main = snapshot.get("_main_snapshot") or {}
            step, since = snapshot.get("_snapshot_step"), state.get("_steps_since_snapshot", 0)
            batches = (
                None
                if step is None
                else _whole(step, line, "_snapshot_step")
                + _whole(since, line, "_steps_since_snapshot")
            )
        iterator = main.get("_sampler_iter_state") if isinstance(main, Mapping) else None
        samples = iterator.get("samples_yielded") if isinstance(iterator, Mapping) else None
        if samples is None and batches is None:
            raise StepLogError(
                line,
                "loader_state: no count of what the loader yielded (expected a torchdata "
                "StatefulDataLoader state_dict, with _num_yielded or _snapshot)",
            )
        return cls(
            samples=None if samples is None else _whole(samples, line, "samples_yielded"),
            batches=None if batches is None else _whole(batches, line, "_num_yielded"),
            finished=bool(state.get("_iterator_finished", False)),
        )

    def __str__(self) -> str:
        parts = []
        if self.samples is not None:
            parts.append(f"{self.samples} samples")
        if self.batches is not None:
            parts.append(f"{self.batches} batches")
        return (
            " and ".join(parts)
            + " of the epoch yielded"
            + (" (iterator ended)" if self.finished else "")
        )


@attrs.frozen(kw_only=True)
class SavedCheckpoint:
    """A checkpoint saved after a step: its path, the loader state saved in it (``None``: the
    loader has none), and the framework's own step counter and epoch when it records them
    (Hugging Face's ``trainer_state.json`` ``global_step`` and ``epoch``)."""

    path: str | None = None
    loader_state: LoaderState | None = None
    global_step: int | None = None
    epoch: float | None = None

    @classmethod
    def from_dict(cls, data: object, *, line: int = 0) -> SavedCheckpoint:
        """A record's ``checkpoint`` object (``docs/audits.md``)."""
        if not isinstance(data, Mapping):
            raise StepLogError(line, f"checkpoint: expected an object, got {shown_value(data)}")
        path = data.get("path")
        if path is not None and not isinstance(path, str):
            raise StepLogError(line, f"checkpoint.path: expected a string, got {shown_value(path)}")
        raw = data.get("loader_state")
        if isinstance(raw, list):  # Lightning's combined loader: one state per loader
            raw = raw[0] if len(raw) == 1 else raw or None
            if isinstance(raw, list):
                raise StepLogError(
                    line, "checkpoint.loader_state: states of several loaders; log the one read"
                )
        state = None if raw is None else LoaderState.from_state_dict(raw, line=line)
        trainer = data.get("trainer_state")
        step = epoch = None
        if trainer is not None:
            if not isinstance(trainer, Mapping):
                raise StepLogError(
                    line,
                    f"checkpoint.trainer_state: expected an object, got {shown_value(trainer)}",
                )
            if trainer.get("global_step") is not None:
                step = _whole(trainer["global_step"], line, "trainer_state.global_step")
            if trainer.get("epoch") is not None:
                epoch = _number(trainer["epoch"], line, "trainer_state.epoch")
        return cls(path=path, loader_state=state, global_step=step, epoch=epoch)


@attrs.frozen(kw_only=True)
class StepRecord:
    """One line of a step log: optimizer step ``step`` (lifetime: the run has taken ``step``
    steps when it ends) as a run logged it. Fields not logged are ``None``.

    ``indices`` are the data-set indices the step read: ``(None, ...)`` every rank's together,
    ``(r, ...)`` rank ``r``'s; ``samples`` the lifetime sample counter ``(start, stop)`` over
    the step; ``line`` the line of the log it was read from (1-based; 0: not from a log);
    ``process`` the number of header lines before it (each process of the job writes one, so
    records of different ``process`` were logged by different runs of the job).
    """

    step: int
    line: int = 0
    process: int = 0
    loader: str | None = None
    indices: tuple[RankIndices, ...] | None = None
    samples: tuple[int, int] | None = None
    lr: float | None = None
    checkpoint: SavedCheckpoint | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, line: int = 0, process: int = 0) -> StepRecord:
        """A step record from its JSON object (``docs/audits.md``)."""
        step = _whole(data.get("step"), line, "step")
        if step == 0:
            raise StepLogError(line, "step: expected the lifetime step a step ends at, >= 1, got 0")
        loader = data.get("loader")
        if loader is not None and not isinstance(loader, str):
            raise StepLogError(line, f"loader: expected a name, got {shown_value(loader)}")
        indices: tuple[RankIndices, ...] | None = None
        raw = data.get("indices")
        if isinstance(raw, Mapping):
            ranked = []
            for rank, values in raw.items():
                if not (isinstance(rank, str) and rank.isascii() and rank.isdigit()):
                    raise StepLogError(
                        line, f"indices: expected ranks as keys ('0', '1', ...), got {rank!r}"
                    )
                ranked.append((int(rank), _indices(values, line, f"indices[{rank!r}]")))
            indices = tuple(sorted(ranked, key=lambda pair: pair[0] or 0))
        elif raw is not None:
            indices = ((None, _indices(raw, line, "indices")),)
        samples = None
        if data.get("samples") is not None:
            span = data["samples"]
            if not isinstance(span, Mapping):
                raise StepLogError(
                    line,
                    f"samples: expected {{'start': ..., 'stop': ...}}, got {shown_value(span)}",
                )
            samples = (
                _whole(span.get("start"), line, "samples.start"),
                _whole(span.get("stop"), line, "samples.stop"),
            )
        lr = None if data.get("lr") is None else _number(data["lr"], line, "lr")
        checkpoint = None
        if data.get("checkpoint") is not None:
            checkpoint = SavedCheckpoint.from_dict(data["checkpoint"], line=line)
        return cls(
            step=step,
            line=line,
            process=process,
            loader=loader,
            indices=indices,
            samples=samples,
            lr=lr,
            checkpoint=checkpoint,
        )


def _json(text: str) -> Any:
    """``text`` as JSON, or ``None`` when it is not JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None


def _glued_header(text: str) -> dict[str, Any] | None:
    """The header a re-run appended to a line a kill cut short (a writer that did not start a
    new line first), or ``None``."""
    at = text.rfind('{"log"')
    data = _json(text[at:]) if at > 0 else None
    return data if isinstance(data, dict) and "log" in data else None


def _not_json(number: int, text: str) -> StepLogError:
    return StepLogError(number, f"not JSON: {shown_value(text.strip())}")


@attrs.frozen(kw_only=True)
class StepLog:
    """A step log read: its records in the order logged, and what its header lines say (the
    scenario's name and the base learning rate, when given)."""

    records: tuple[StepRecord, ...]
    scenario: str | None = None
    base_lr: float | None = None

    @classmethod
    def parse(cls, lines: Iterable[str]) -> StepLog:
        """Read a step log's lines. Blank lines are skipped; a line cut short by a kill is
        dropped: the last line, or one right before a header line (the re-run's), or the start
        of a line a re-run's header was appended to; a line of only ``step`` and
        ``checkpoint`` right after the record of that step adds the checkpoint to it; any other
        line that is not a record or a header is refused with :class:`StepLogError`."""
        records: list[StepRecord] = []
        scenario: str | None = None
        base: float | None = None
        process = 0
        cut: tuple[int, str] | None = None  # a line cut short, dropped if a kill's
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            data = _json(text)
            if cut is not None and not (isinstance(data, dict) and "log" in data):
                raise _not_json(*cut)  # a broken line neither last nor before a re-run's header
            cut = None
            if data is None:
                data = _glued_header(text)
                if data is None:
                    cut = (number, text)  # dropped if the log ends or a header follows
                    continue
            if not isinstance(data, dict):
                raise StepLogError(number, f"expected a JSON object, got {shown_value(data)}")
            if "log" in data:
                process += 1
                if data["log"] != LOG_FORMAT:
                    raise StepLogError(
                        number, f"log format {shown_value(data['log'])}: expected {LOG_FORMAT!r}"
                    )
                if isinstance(data.get("scenario"), str):
                    scenario = data["scenario"]
                if data.get("base_lr") is not None:
                    base = _number(data["base_lr"], number, "base_lr")
                continue
            record = StepRecord.from_dict(data, line=number, process=process)
            if (
                set(data) == {"step", "checkpoint"}
                and records
                and (records[-1].step, records[-1].process) == (record.step, process)
            ):
                # The checkpoint saved after the step just logged: part of its record.
                records[-1] = attrs.evolve(records[-1], checkpoint=record.checkpoint)
                continue
            records.append(record)
        return cls(records=tuple(records), scenario=scenario, base_lr=base)


@attrs.frozen(kw_only=True)
class Divergence:
    """Where a run did not follow its plan: at lifetime ``step`` (log ``line``, ``None`` for a
    step never logged), of ``kind`` (``indices``, ``samples``, ``loader``, ``lr``,
    ``loader-state``, ``trainer-state``, ``resume``, ``duplicate``, ``out-of-order``,
    ``missing``, ``past-plan``), what the log
    says, what the plan says, and the rule of ``docs/semantics.md`` it breaks."""

    step: int
    line: int | None
    kind: str
    logged: str
    planned: str
    rule: str

    def __str__(self) -> str:
        where = f"step {self.step}" + ("" if self.line is None else f" (log line {self.line})")
        return (
            f"{where}: {self.kind}: the log says {self.logged}; the plan says {self.planned} "
            f"(rule {self.rule})"
        )


@attrs.frozen(kw_only=True)
class StepVerdict:
    """One step of the plan as the log shows it (its last record): whether what it read and its
    learning rate are the plan's, and its checkpoint's state (``None``: no checkpoint)."""

    step: int
    data: Check
    lr: Check
    checkpoint: Check | None = None


@attrs.frozen(kw_only=True)
class Restart:
    """A re-run of the job (a header line after records): at ``line`` it logged its first
    step, ``step``; the newest checkpoint logged before it was after step ``checkpoint`` (0:
    none)."""

    line: int
    step: int
    checkpoint: int


@attrs.frozen(kw_only=True)
class Audit:
    """The audit of a step log against a plan: a verdict per plan step (lifetime steps
    ``start + 1`` to ``stop``), every divergence in step order, the restarts, and notes on
    what could not be checked."""

    start: int
    stop: int
    steps: tuple[StepVerdict, ...]
    divergences: tuple[Divergence, ...]
    restarts: tuple[Restart, ...] = ()
    notes: tuple[str, ...] = ()
    base_lr: float | None = None
    records: int = 0

    @property
    def ok(self) -> bool:
        """Whether the run followed the plan: no divergence."""
        return not self.divergences

    @property
    def first(self) -> Divergence | None:
        """The first divergence (by step, then log line), or ``None``."""
        return self.divergences[0] if self.divergences else None


def _rank_text(values: Sequence[int]) -> str:
    shown = ", ".join(str(v) for v in values[:12])
    return f"[{shown}{', ...' if len(values) > 12 else ''}] ({len(values)})"


def _planned_indices(plan: Plan, step: int) -> list[list[int]] | None:
    """Each rank's indices of plan step ``step`` (``None``: the loader has no order)."""
    segment = plan.segment_at(step)
    assert segment is not None
    loader = segment.loader
    if loader.order is None and loader.mixture is None:
        return None
    return [step_indices(plan, step, rank=r) for r in range(loader.world_size)]


def _position(segment: Segment, steps: int) -> Progress:
    """Where ``segment``'s loader is after ``steps`` of its steps."""
    return segment.start.advance(segment.loader, steps)


class _Auditor:
    def __init__(
        self, plan: Plan, curve: ResolvedSchedule | None, base_lr: float | Fraction | None
    ) -> None:
        self.plan = plan
        self.curve = curve
        self.base: float | Fraction | None = base_lr
        self.found: list[Divergence] = []
        self.notes: list[str] = []
        #: The last loader state checked: its loader, the step saved after, the state.
        self.saved: tuple[str | None, int, LoaderState] | None = None

    def diverge(
        self, step: int, line: int | None, kind: str, logged: str, planned: str, rule: str
    ) -> None:
        self.found.append(
            Divergence(step=step, line=line, kind=kind, logged=logged, planned=planned, rule=rule)
        )

    # -- what a step read --------------------------------------------------------------------

    def data(self, record: StepRecord) -> Check:
        plan = self.plan
        step = record.step - plan.start.batch
        segment = plan.segment_at(step)
        assert segment is not None
        verdict: Check = "unchecked"
        if record.loader is not None and record.loader != (segment.loader.name or None):
            self.diverge(
                record.step,
                record.line,
                "loader",
                f"loader {record.loader!r}",
                f"call {segment.name!r} reads loader {segment.loader.name!r}",
                "4",
            )
            return "diverged"
        if record.samples is not None:
            into = step - 1 - segment.start_step
            planned = (_position(segment, into).sample, _position(segment, into + 1).sample)
            if record.samples != planned:
                self.diverge(
                    record.step,
                    record.line,
                    "samples",
                    f"samples {record.samples[0]}-{record.samples[1]}",
                    f"samples {planned[0]}-{planned[1]} (the lifetime sample counter)",
                    "5",
                )
                return "diverged"
            verdict = "ok"
        if record.indices is not None:
            ranks = _planned_indices(plan, step)
            if ranks is None:
                name = segment.loader.name
                self.notes.append(
                    f"loader {name!r} has no order in the scenario: the indices logged for its "
                    "steps are not checked (give it order = ...)"
                )
                return verdict
            for rank, values in record.indices:
                if rank is None:
                    wanted = [i for r in ranks for i in r]
                    who = "the step"
                elif rank >= len(ranks):
                    self.diverge(
                        record.step,
                        record.line,
                        "indices",
                        f"indices of rank {rank}",
                        f"loader {segment.loader.name!r} is read on {len(ranks)} rank(s)",
                        "17",
                    )
                    return "diverged"
                else:
                    wanted, who = ranks[rank], f"rank {rank}"
                if sorted(values) != sorted(wanted):
                    self.diverge(
                        record.step,
                        record.line,
                        "indices",
                        f"{who} read {_rank_text(values)}",
                        f"{who} reads {_rank_text(wanted)}",
                        "19",
                    )
                    return "diverged"
            verdict = "ok"
        return verdict

    # -- the learning rate -------------------------------------------------------------------

    def lr(self, record: StepRecord) -> Check:
        curve = self.curve
        if record.lr is None or curve is None:
            return "unchecked"
        before = record.step - 1
        if before < curve.start:
            return "unchecked"
        if self.base is None:
            factor = curve.factor(before)
            if factor == 0:
                return "ok" if record.lr == 0 else self._lr_off(record, 0.0)
            self.base = record.lr / float(factor)
            self.notes.append(
                f"base learning rate {self.base!r}: the rate of step {record.step} over its "
                "schedule factor (give --base-lr, or base_lr in the log's header, to check it)"
            )
        wanted = curve.lr(before, self.base)
        if math.isclose(record.lr, wanted, rel_tol=LR_TOLERANCE, abs_tol=0.0):
            return "ok"
        return self._lr_off(record, wanted)

    def _lr_off(self, record: StepRecord, wanted: float) -> Check:
        assert self.curve is not None
        factor = self.curve.factor(record.step - 1)
        self.diverge(
            record.step,
            record.line,
            "lr",
            f"learning rate {record.lr!r}",
            f"{wanted!r} (factor {factor} at lifetime step {record.step - 1}, to "
            f"{LR_TOLERANCE:g} relative)",
            "S1",
        )
        return "diverged"

    # -- checkpoints -------------------------------------------------------------------------

    def checkpoint(self, record: StepRecord) -> Check:
        saved = record.checkpoint
        assert saved is not None
        plan = self.plan
        step = record.step - plan.start.batch
        segment = plan.segment_at(step)
        assert segment is not None
        loader = segment.loader
        here = _position(segment, step - segment.start_step)
        name = f" ({saved.path})" if saved.path else ""
        verdict: Check = "unchecked"
        if saved.global_step is not None:
            wanted = record.step - segment.entry.start.batch
            if saved.global_step != wanted:
                self.diverge(
                    record.step,
                    record.line,
                    "trainer-state",
                    f"the checkpoint{name} records global_step {saved.global_step}",
                    f"step {record.step} is step {wanted} of call {segment.name!r}, which "
                    f"started at lifetime step {segment.entry.start.batch}",
                    "16",
                )
                return "diverged"
            verdict = "ok"
        state = saved.loader_state
        if state is None:
            return verdict
        if loader.samples is None:
            self.notes.append(
                f"loader {loader.name!r} is a stream of unknown length: its saved states are "
                "not checked"
            )
            return verdict
        sharding = loader.sharding
        micro = 1 if sharding is None else sharding.accumulation
        samples_ok = {here.sample_in_epoch}
        batches_ok = {here.batch_in_epoch * micro}
        if here.sample_in_epoch == 0 and here.batch_in_epoch == 0:
            # The step ended an epoch: a state saved before the next epoch's iterator begins
            # says the whole epoch was yielded, one saved after says nothing of the next one;
            # either resumes at the next epoch's start.
            samples_ok.add(loader.samples_per_epoch or 0)
            batches_ok.add((loader.steps_per_epoch or 0) * micro)
        if sharding is not None and sharding.world_size > 1:
            check_samples = False  # one rank's state: its share, counted in micro-batches
        else:
            check_samples = state.samples is not None
        if check_samples:
            good = state.samples in samples_ok
            planned = f"{here.sample_in_epoch} samples of epoch {here.epoch} read"
        elif state.batches is not None:
            good = state.batches in batches_ok
            planned = (
                f"{here.batch_in_epoch * micro} batches of epoch {here.epoch} read "
                f"({here.batch_in_epoch} steps of {micro} micro-batch(es) per rank)"
            )
        else:
            return verdict
        before, self.saved = self.saved, (loader.name, record.step, state)
        if good:
            return "ok"
        restarted = not state.samples and not state.batches
        where = "the epoch from its start again" if restarted else "from another place"
        if (
            not restarted
            and before is not None
            and before[0] == loader.name
            and before[1] < record.step
            and (before[2].samples, before[2].batches) == (state.samples, state.batches)
        ):
            where = (
                f"from where the checkpoint after step {before[1]} does: the state is frozen, "
                "saved then and again now"
            )
        self.diverge(
            record.step,
            record.line,
            "loader-state",
            f"the loader state saved in the checkpoint{name} has {state}",
            f"{planned}: resumed from it, the run would read {where}",
            "11",
        )
        return "diverged"


def audit(
    plan: Plan,
    records: Iterable[StepRecord],
    *,
    schedule: ResolvedSchedule | None = None,
    base_lr: float | Fraction | int | None = None,
) -> Audit:
    """Whether ``records`` (a step log's, in the order logged) show a run that followed
    ``plan``: one :class:`StepVerdict` per step of the plan, and every :class:`Divergence`.

    ``schedule`` is the plan's resolved schedule, whose rate each logged ``lr`` must be
    (``base_lr`` times the factor; without ``base_lr``, the base is the first logged rate over
    its factor). The log must begin at the plan's first step (a plan from scratch: step 1).
    """
    if not isinstance(plan, Plan):
        raise TypeError(f"plan={shown_value(plan)}: expected a durations.Plan")
    if schedule is not None and not isinstance(schedule, ResolvedSchedule):
        raise TypeError(f"schedule={shown_value(schedule)}: expected a ResolvedSchedule or None")
    base = None if base_lr is None else base_lr
    auditor = _Auditor(plan, schedule, base)
    items = list(records)
    low, high = plan.start.batch + 1, plan.stop.batch
    last: dict[int, StepRecord] = {}
    restarts: list[Restart] = []
    newest = plan.start.batch  # the newest checkpoint logged so far (the plan's start: none)
    previous: StepRecord | None = None
    checkpoints: dict[int, Check] = {}
    for record in items:
        if previous is not None and record.process != previous.process:
            restarts.append(Restart(line=record.line, step=record.step, checkpoint=newest))
            if record.step <= previous.step and record.step != newest + 1:
                auditor.diverge(
                    record.step,
                    record.line,
                    "resume",
                    f"the re-run's first step is {record.step}",
                    f"the newest checkpoint logged before it is after step {newest}: the "
                    f"re-run resumes there, its first step is {newest + 1}",
                    "16",
                )
        elif previous is not None and record.step <= previous.step:
            again = record.step == previous.step
            auditor.diverge(
                record.step,
                record.line,
                "duplicate" if again else "out-of-order",
                f"step {record.step} logged after step {previous.step} (log line "
                f"{previous.line}) by the same process, no header line between",
                "each step taken once, in order: only a re-run of the job (its header line "
                "first) goes back, to the step after the newest checkpoint",
                "16",
            )
        previous = record
        if record.step > high:
            auditor.diverge(
                record.step,
                record.line,
                "past-plan",
                f"step {record.step} was taken",
                f"the run stops after step {high}",
                "2",
            )
            continue
        if record.step < low:
            auditor.diverge(
                record.step,
                record.line,
                "past-plan",
                f"step {record.step} was taken",
                f"this plan's steps are {low} to {high}",
                "16",
            )
            continue
        last[record.step] = record
        if record.checkpoint is not None:
            checkpoints[record.step] = auditor.checkpoint(record)
            newest = max(newest, record.step)
    verdicts: list[StepVerdict] = []
    gap: int | None = None
    for step in range(low, high + 2):
        logged = last.get(step) if step <= high else None
        if logged is None and step <= high:
            gap = step if gap is None else gap
            verdicts.append(StepVerdict(step=step, data="missing", lr="missing"))
            continue
        if gap is not None:
            span = f"step {gap}" if gap == step - 1 else f"steps {gap} to {step - 1}"
            auditor.diverge(
                gap, None, "missing", f"no record of {span}", f"the run takes step {gap}", "16"
            )
            gap = None
        if logged is None:
            break
        verdicts.append(
            StepVerdict(
                step=step,
                data=auditor.data(logged),
                lr=auditor.lr(logged),
                checkpoint=checkpoints.get(step),
            )
        )
    found = sorted(
        auditor.found, key=lambda d: (d.step, d.line if d.line is not None else math.inf)
    )
    base_out = auditor.base
    return Audit(
        start=plan.start.batch,
        stop=plan.stop.batch,
        steps=tuple(verdicts),
        divergences=tuple(found),
        restarts=tuple(restarts),
        notes=tuple(dict.fromkeys(auditor.notes)),
        base_lr=None if base_out is None else float(base_out),
        records=len(items),
    )
