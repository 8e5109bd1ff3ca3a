"""``Plan``: what a run will train, call by call, exactly; and the checkpoints it would write."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from fractions import Fraction

import attrs

from . import _mixing
from .checkpoint import Checkpoint, LedgerEntry, TakenUp
from .diagnostics import Diagnostic, Severity
from .errors import ConversionError, FitCallError, shown_value
from .fit import FitCall, ResumeMode, RunConfig
from .loader import Loader
from .mixture import SourceReads
from .progress import Progress
from .sharding import TailRange
from .time import Time
from .units import Unit

__all__ = ["Action", "Plan", "SampleRange", "Segment", "resolve_dur"]


class Action(enum.Enum):
    """What a fit call does in this plan."""

    #: The call starts now.
    RUN = "run"
    #: The call had started before the checkpoint and goes on to its stored target.
    RESUME = "resume"
    #: The call finished before the checkpoint; nothing to do.
    SKIP = "skip"


@attrs.frozen
class SampleRange:
    """Samples ``[start, stop)`` of epoch ``epoch`` (the lifetime epoch counter) of a loader.

    >>> str(SampleRange(1, 30, 100)), str(SampleRange(0, 2, 3))
    ('samples 30-99 of epoch 1', 'sample 2 of epoch 0')
    """

    epoch: int
    start: int
    stop: int

    @property
    def samples(self) -> int:
        """How many samples the range holds."""
        return self.stop - self.start

    def __str__(self) -> str:
        if self.samples == 1:
            return f"sample {self.start} of epoch {self.epoch}"
        return f"samples {self.start}-{self.stop - 1} of epoch {self.epoch}"


@attrs.frozen(kw_only=True)
class Segment:
    """One fit call in a plan.

    ``start`` and ``stop`` are lifetime ``Progress``; ``steps`` optimizer steps run between
    them, from plan step ``start_step`` to ``stop_step``. ``target`` is the call's stop on the
    run clock that started at ``origin``. ``replayed`` and ``skipped`` are the samples of the
    interrupted epoch read again or never read because of a mid-epoch resume; ``abandoned``
    is the unread rest of the previous loader's epoch when this call moved to another loader
    or reset the clock. A segment whose stop depends on measured tokens has
    ``stop_at_runtime`` set, and its ``steps`` is the most it can take.
    """

    index: int
    name: str
    action: Action
    loader: Loader
    start: Progress
    stop: Progress
    steps: int
    start_step: int
    target: Time
    origin: Progress
    entry: LedgerEntry
    replayed: SampleRange | None = None
    skipped: SampleRange | None = None
    abandoned: SampleRange | None = None
    #: The ends of the epochs a data-parallel loader evened over its ranks in this call:
    #: positions read again (padding) or samples never read (truncation).
    tails: tuple[TailRange, ...] = ()
    stop_at_runtime: bool = False
    #: What a call reading a mixture reads of each source (rule 20), in the mixture's order.
    sources: tuple[SourceReads, ...] = ()
    #: Every mixture source's cursor when the call starts reading (its reads so far in the
    #: run), as ``(name, reads)`` pairs.
    cursors: tuple[tuple[str, int], ...] = ()
    #: The call could not be planned (an error diagnostic says why); it is not in the ledger.
    failed: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def stop_step(self) -> int:
        """The plan step at which this call ends."""
        return self.start_step + self.steps

    def reads(self) -> Iterator[SampleRange]:
        """The samples each step of this call reads, in order: one range per step, in-epoch
        positions of the loader read in its order (a data-parallel loader's positions past
        its data read its start again: :func:`durations.sharding.sample_at`). One value per
        step: for tests and reports."""
        if self.action is Action.SKIP:
            return
        loader, position = self.loader, self.start
        for _ in range(self.steps):
            position = position.normalized(loader)
            start = position.sample_in_epoch
            size = loader.batch_size
            if loader.samples is not None:
                size = min(size, loader.samples_left_in_epoch(start))
            yield SampleRange(position.epoch, start, start + size)
            position = position.advance(loader, 1)

    def should_stop(self, progress: Progress) -> bool:
        """Whether a run at ``progress`` has finished this call (O(1)).

        Exact stops compare the lifetime step counter; a token stop decided at run time
        compares the measured token count with the target. A call the ledger records as
        finished (``SKIP``) has nothing left: always ``True``.
        """
        if self.action is Action.SKIP:
            return True
        if self.stop_at_runtime and progress.token is not None and self.origin.token is not None:
            return progress.token - self.origin.token >= self.target.value
        return progress.batch >= self.stop.batch


@attrs.frozen(kw_only=True)
class Plan:
    """The exact plan of a run: one segment per fit call, and what to say about it.

    Steps are counted from the plan's ``start`` (the checkpoint's progress, or zero).
    """

    config: RunConfig
    calls: tuple[FitCall, ...]
    checkpoint: Checkpoint | None
    start: Progress
    stop: Progress
    segments: tuple[Segment, ...]
    diagnostics: tuple[Diagnostic, ...]
    #: Ledger entries of the checkpoint that match no call of this script; kept, not lost.
    unmatched: tuple[LedgerEntry, ...] = ()
    #: How the checkpoint is taken up: ``config.resume``, or ``continue`` when the ledger is
    #: honoured (the same ``extend`` or ``weights`` script run again continues its own ledger,
    #: ``docs/semantics.md`` rule 9).
    mode: ResumeMode = ResumeMode.CONTINUE
    #: Each mixture source's cursor where the plan starts: the checkpoint's, or, for a
    #: checkpoint without a ledger, those of the point it is located at (rule 10); ``None``
    #: when no source has one.
    found: tuple[tuple[str, int], ...] | None = None

    @property
    def taken_up(self) -> TakenUp | None:
        """What the checkpoints this plan writes record of how its script took the run up: the
        checkpoint's own record when its ledger is continued, a new one when this plan takes
        the checkpoint up under ``extend`` or ``weights``, ``None`` from scratch."""
        if self.checkpoint is None:
            return None
        if self.mode is ResumeMode.CONTINUE:
            return self.checkpoint.taken_up
        return TakenUp(self.mode, self.checkpoint.progress.batch)

    @property
    def total_steps(self) -> int:
        """Optimizer steps the plan runs."""
        return self.stop.batch - self.start.batch

    @property
    def ok(self) -> bool:
        """Whether no diagnostic is an error."""
        return all(d.severity is not Severity.ERROR for d in self.diagnostics)

    @property
    def complete(self) -> bool:
        """Whether there is nothing left to train: the run is finished."""
        return self.total_steps == 0 and self.ok

    def should_stop(self, progress: Progress) -> bool:
        """Whether a run at ``progress`` has reached the plan's end (O(1))."""
        return progress.batch >= self.stop.batch

    def _active(self) -> list[Segment]:
        return [s for s in self.segments if s.action is not Action.SKIP]

    def _passed(self, step: int) -> list[Segment]:
        """The segments a run has entered after ``step`` steps: every call before the first one
        that still has a step to take (calls with nothing to train are passed at once)."""
        passed = []
        for segment in self._active():
            if segment.start_step > step or (segment.steps > 0 and segment.start_step == step):
                break
            passed.append(segment)
        return passed

    def segment_at(self, step: int) -> Segment | None:
        """The segment that runs plan step ``step`` (the step that ends the run at ``step``).

        ``None`` for step 0, and for a plan with no step to take.
        """
        self._check_step(step)
        if step == 0:
            return None
        return next(s for s in self._active() if s.start_step < step <= s.stop_step)

    def progress_at(self, step: int) -> Progress:
        """The position after ``step`` steps of this plan, every call with nothing to train at
        that point passed."""
        self._check_step(step)
        passed = self._passed(step)
        if not passed:
            return self.start
        last = passed[-1]
        return last.start.advance(last.loader, step - last.start_step)

    def checkpoint_at(self, step: int) -> Checkpoint:
        """The checkpoint this plan writes after ``step`` steps, with its ledger.

        A call is in the ledger once it has started to train or was passed with nothing to
        train; it is finished once its last step is done. Planning the same script again from
        this checkpoint continues exactly where this plan is (``docs/semantics.md``, rule 16).
        """
        self._check_step(step)
        passing = self._passed(step)
        passed = {id(s) for s in passing}
        started = self._started_by_taking_up(step, passed) or self._moved_on(step, passed)
        ledger: list[LedgerEntry] = list(self.unmatched)
        for segment in self.segments:
            if segment.action is Action.SKIP:
                ledger.append(segment.entry)
            elif segment.failed:
                if segment.action is Action.RESUME:
                    ledger.append(segment.entry)  # as the checkpoint had it
            elif id(segment) in passed or segment.action is Action.RESUME or segment is started:
                if id(segment) in passed and segment.stop_step <= step:
                    ledger.append(segment.entry)
                else:
                    ledger.append(
                        attrs.evolve(segment.entry, finished=False, stop=None, anchor=None)
                    )
        progress = self.progress_at(step) if started is None else started.start
        cursors = dict(started.cursors) if started is not None else self._cursors_at(step, passing)
        mixed = bool(cursors) or any(entry.loader.mixture is not None for entry in ledger)
        return Checkpoint(
            progress=progress,
            ledger=tuple(ledger),
            loader_state=True,
            taken_up=self.taken_up,
            cursors=cursors if mixed else self._found_cursors(),
        )

    def _found_cursors(self) -> dict[str, int] | None:
        """The cursors the plan started from, when there were any."""
        return None if self.found is None else dict(self.found)

    def cursors_at(self, step: int) -> dict[str, int]:
        """Each mixture source's cursor (its reads so far in the run) after ``step`` steps of
        this plan (``docs/mixtures.md``): O(calls), whatever the step."""
        self._check_step(step)
        return self._cursors_at(step, self._passed(step))

    def _cursors_at(self, step: int, passed: list[Segment]) -> dict[str, int]:
        if not passed:
            return self._found_cursors() or {}
        last = passed[-1]
        cursors = dict(last.cursors)
        if last.loader.mixture is None or last.failed:
            return cursors
        at = last.start.advance(last.loader, step - last.start_step)
        return _mixing.advance(last.loader, cursors, last.start, at)[0]

    def _started_by_taking_up(self, step: int, passed: set[int]) -> Segment | None:
        """Under ``extend`` or ``weights`` the plan writes a new ledger; before its first step,
        the first call to train is recorded as started, so that a re-run under ``continue``
        keeps the clock and anchor this plan took up (rule 9)."""
        if step != 0 or self.checkpoint is None or self.mode is ResumeMode.CONTINUE:
            return None
        first = next(
            (s for s in self.segments if s.action is not Action.SKIP and not s.failed), None
        )
        if first is None or id(first) in passed:
            return None
        return first

    def _moved_on(self, step: int, passed: set[int]) -> Segment | None:
        """Before its first step, a resumed call whose stream changed since it started (another
        loader, order or mixture: rules 14, 19, 20) starts where the plan moved it, a new epoch
        with its sources' cursors as they start; its checkpoint records that position, so that
        planning again from it goes on there, not in the old stream's epoch."""
        if step != 0 or self.checkpoint is None or self.checkpoint.ledger is None:
            return None
        first = next((s for s in self._active() if not s.failed), None)
        if first is None or id(first) in passed or first.action is not Action.RESUME:
            return None
        recorded = next((e for e in self.checkpoint.ledger if e.name == first.name), None)
        if recorded is None or recorded.loader.same_stream(first.loader):
            return None
        return first

    def resolve(self, time: Time) -> int | None:
        """The plan step at which ``time`` is first reached, or ``None`` if it never is.

        ``time`` is measured on each segment's run clock; ``dur`` is first resolved against
        ``max_duration`` (``resolve_dur``).
        """
        if not isinstance(time, Time):
            raise TypeError(
                f"resolve() takes a Time, such as Time.parse('0.5dur'), not {shown_value(time)}"
            )
        if time.unit is Unit.DUR:
            time = resolve_dur(time, self.config.max_duration)
        for segment in self._active():
            start = segment.start
            try:
                steps = start.steps_until(time, loader=segment.loader, since=segment.origin)
            except ConversionError:
                continue
            if steps <= segment.steps:
                return segment.start_step + steps
        return None

    def _check_step(self, step: int) -> None:
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= self.total_steps:
            raise FitCallError(
                f"invalid step {shown_value(step)}: expected a whole number from 0 to "
                f"{self.total_steps}"
            )


def resolve_dur(time: Time, max_duration: Time | None) -> Time:
    """``x dur`` as a time in ``max_duration``'s unit: ``x`` times ``max_duration``.

    In a whole unit the result is rounded up, which reaches the same step boundary.
    """
    if max_duration is None:
        raise FitCallError(
            f"cannot resolve {time}: dur is a fraction of max_duration, and the run has none"
        )
    value = Fraction(time.value) * max_duration.value
    if max_duration.unit.is_whole:
        value = Fraction(-(-value.numerator // value.denominator))
    return Time(value, max_duration.unit)
