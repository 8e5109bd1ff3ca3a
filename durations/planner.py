"""``plan``: the pure function from a script and a checkpoint to an exact ``Plan``.

Every rule applied here is written, with its reason and an example, in ``docs/semantics.md``;
the comments name the rule. The cost grows with the number of fit calls, never with steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs

from . import _mixing
from ._describe import (
    describe_change,
    describe_loader,
    describe_order,
    describe_position,
    describe_sharding,
)
from .checkpoint import Checkpoint, LedgerEntry
from .diagnostics import Diagnostic
from .errors import ConversionError, FitCallError
from .fit import DataPolicy, FitCall, ResumeMode, RunConfig
from .loader import Loader
from .mixture import Source, SourceReads, cursors_text, read_span
from .plans import Action, Plan, SampleRange, Segment, resolve_dur
from .progress import ZERO, Progress
from .sharding import TailRange, tails as sharding_tails
from .time import Time
from .units import Unit

__all__ = ["plan"]

_Say = Callable[[str, str], None]


@attrs.frozen
class _Previous:
    """The call before the one being planned: the stream it read, and its anchor (rule 3)."""

    loader: Loader
    #: The target a next relative call is measured from; ``None`` when there is none (the call
    #: was interrupted, or its target was stale).
    anchor: Time | None


@attrs.define
class _State:
    pos: Progress
    origin: Progress
    previous: _Previous | None
    #: Whether the next call that trains is the first after the checkpoint (where the data
    #: policy applies).
    at_resume_point: bool
    #: The run clock is fresh (weights mode) and starts at the first call.
    fresh_clock: bool = False
    step: int = 0
    #: Each mixture source's cursor at ``pos`` (its reads so far in the run), and the source
    #: as the data read last knew it (rule 20).
    cursors: dict[str, int] = attrs.Factory(dict)
    sources: dict[str, Source] = attrs.Factory(dict)
    #: Each source's reads, as ranges of its read numbers (rule 20: the coverage said at the
    #: plan's end); before a checkpoint, everything up to its cursor.
    reads: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)
    #: The loader that read the data last, whose position ``pos`` is (rule 4): the last call
    #: that trained, or the checkpoint's last ledger entry; calls the ledger skips read nothing.
    reader: Loader | None = None


def plan(config: RunConfig, calls: Sequence[FitCall], checkpoint: Checkpoint | None = None) -> Plan:
    """Plan ``calls`` under ``config``, from ``checkpoint`` when one is given.

    >>> from durations import FitCall, Loader, RunConfig, plan
    >>> big = Loader(samples=1000, batch_size=10, name="big")
    >>> curated = Loader(samples=200, batch_size=8, name="curated")
    >>> script = [FitCall(loader=big), FitCall(loader=curated, duration="0.1ep")]
    >>> p = plan(RunConfig(max_duration="2ep"), script)
    >>> [s.steps for s in p.segments], p.total_steps
    ([200, 3], 203)
    >>> p.stop.epoch, p.stop.sample_in_epoch
    (2, 24)
    """
    calls, names = _checked(config, calls, checkpoint)
    diagnostics: list[Diagnostic] = []
    if checkpoint is None:
        taken = _TakenUp(
            _State(pos=ZERO, origin=ZERO, previous=None, at_resume_point=False), config.resume
        )
    else:
        taken = _take_up(config, calls, names, checkpoint, diagnostics)
    state = taken.state
    segments = []
    for index, (name, call) in enumerate(zip(names, calls, strict=True)):
        recorded = taken.ledger.get(name)
        if recorded is not None and recorded.finished:
            segment = _skip(index, name, call, recorded, state)
        else:
            segment = _train(index, name, call, recorded, config, checkpoint, state)
        segments.append(segment)
        diagnostics.extend(segment.diagnostics)
    diagnostics.extend(_say_coverage(segments, state))

    start = ZERO if checkpoint is None else checkpoint.progress
    finished = all(
        s.action is Action.SKIP or (s.action is Action.RESUME and s.steps == 0 and not s.failed)
        for s in segments
    )
    if checkpoint is not None and segments and finished:
        # Rule 15: every call is finished.
        diagnostics.append(
            Diagnostic(
                code="run-complete",
                message=f"nothing left to train: the run is complete at step {start.batch}",
            )
        )
    return Plan(
        config=config,
        calls=calls,
        checkpoint=checkpoint,
        found=taken.found,
        start=start,
        stop=state.pos,
        segments=tuple(segments),
        diagnostics=tuple(diagnostics),
        unmatched=taken.unmatched,
        mode=taken.mode,
    )


def _checked(
    config: RunConfig, calls: Sequence[FitCall], checkpoint: Checkpoint | None
) -> tuple[tuple[FitCall, ...], list[str]]:
    """``plan``'s calls and their identities (rule 8); arguments that are not what it takes
    are refused with a message."""
    if not isinstance(config, RunConfig):
        raise FitCallError(f"plan() takes a RunConfig first, got {config!r}")
    if isinstance(calls, FitCall):
        raise FitCallError("plan() takes a sequence of fit calls; wrap a single call in a list")
    calls = tuple(calls)
    for position, call in enumerate(calls):
        if not isinstance(call, FitCall):
            raise FitCallError(f"calls[{position}] is {call!r}: expected a FitCall")
    if checkpoint is not None and not isinstance(checkpoint, Checkpoint):
        raise FitCallError(
            f"checkpoint must be a Checkpoint or None, got {type(checkpoint).__name__}; "
            "Checkpoint.from_dict(data) reads a serialized one"
        )
    names = [call.identity(i) for i, call in enumerate(calls)]
    duplicates = sorted(n for n, count in Counter(names).items() if count > 1)
    if duplicates:
        raise FitCallError(f"fit call names must be unique; repeated: {', '.join(duplicates)}")
    return calls, names


@attrs.frozen
class _TakenUp:
    """How the plan takes its checkpoint up: the state its first call starts from, the ledger
    it honours (by call identity), the entries of calls it no longer makes, and the mode."""

    state: _State
    mode: ResumeMode
    ledger: dict[str, LedgerEntry] = attrs.Factory(dict)
    unmatched: tuple[LedgerEntry, ...] = ()
    #: The sources' cursors the plan starts from (the checkpoint's, or the located ones).
    found: tuple[tuple[str, int], ...] | None = None


def _take_up(
    config: RunConfig,
    calls: tuple[FitCall, ...],
    names: list[str],
    checkpoint: Checkpoint,
    diagnostics: list[Diagnostic],
) -> _TakenUp:
    """Rules 8, 9 and 10: take the checkpoint up under the resume mode; the same extend or
    weights script run again continues its own ledger; a checkpoint without one is located."""
    mode = config.resume
    if _continues_its_ledger(config, names, checkpoint):
        mode = ResumeMode.CONTINUE
        assert checkpoint.taken_up is not None
        diagnostics.append(
            Diagnostic(
                code="ledger-continued",
                message=f"the checkpoint's ledger is this script's, which took the run up "
                f"under {config.resume.value} at lifetime step {checkpoint.taken_up.step:,}: "
                "it is continued (finished calls skip, the started one resumes to its "
                "stored target), not taken up again",
            )
        )
    entries, cursors = checkpoint.ledger, checkpoint.cursors
    if mode is ResumeMode.CONTINUE and entries is None:
        located = _locate(config, calls, checkpoint, diagnostics)
        entries, cursors = located.ledger, located.cursors
    last = entries[-1] if entries else None
    state = _State(
        pos=checkpoint.progress,
        origin=last.origin if last else ZERO,
        previous=_Previous(last.loader, last.anchor if last.finished else None) if last else None,
        at_resume_point=True,
        cursors=dict(cursors or ()),
        reader=last.loader if last else None,
    )
    state.reads = {name: [(0, read)] for name, read in state.cursors.items()}
    for recorded in entries or ():  # rule 20: the sources as the data read last knew them
        if recorded.loader.mixture is not None:
            state.sources.update((s.name, s) for s in recorded.loader.mixture.sources)
    if mode is ResumeMode.WEIGHTS:
        # The loader that read the data, to close its epoch by (rule 9); no anchor: a fresh
        # clock measures nothing from the checkpoint's calls.
        state.previous = _Previous(last.loader, None) if last else None
        state.fresh_clock = True
    found = None if cursors is None else tuple(cursors)
    if mode is not ResumeMode.CONTINUE:
        return _TakenUp(state, mode, found=found)
    unmatched = tuple(e for e in entries or () if e.name not in names)
    for entry in unmatched:
        diagnostics.append(
            Diagnostic(
                code="script-changed",
                call=entry.name,
                message=f"the checkpoint's ledger has call {entry.name!r}, which this "
                "script no longer makes; it is kept in the ledger and not run",
            )
        )
    ledger = {entry.name: entry for entry in entries or ()}
    return _TakenUp(state, mode, ledger, unmatched, found)


def _continues_its_ledger(config: RunConfig, names: list[str], checkpoint: Checkpoint) -> bool:
    """Rule 9: whether ``checkpoint`` holds the ledger of this very script, written when it took
    the run up under the same mode (``extend`` or ``weights``): then it is continued, so that
    the script run again is idempotent like any other. A script that makes none of the ledger's
    calls is a new script taking the run up."""
    taken = checkpoint.taken_up
    if taken is None or taken.mode is not config.resume or checkpoint.ledger is None:
        return False
    return any(entry.name in names for entry in checkpoint.ledger)


def _locate(
    config: RunConfig,
    calls: tuple[FitCall, ...],
    checkpoint: Checkpoint,
    diagnostics: list[Diagnostic],
) -> Checkpoint:
    """Rule "a checkpoint without a ledger": find it inside the script's own plan by step;
    the checkpoint that plan writes there (its ledger and source cursors)."""
    fresh = plan(attrs.evolve(config, resume=ResumeMode.CONTINUE), calls)
    recorded = checkpoint.progress
    step = min(recorded.batch, fresh.total_steps)
    where = fresh.segment_at(step)
    if recorded.batch >= fresh.total_steps:
        inside = "at or past its end"
    else:
        inside = f"inside call {where.name!r}" if where is not None else "at its start"
    diagnostics.append(
        Diagnostic(
            code="checkpoint-located",
            message=f"the checkpoint has no ledger: located by its step counter "
            f"({recorded.batch}) in this script's own plan of {fresh.total_steps} "
            f"steps, {inside}",
        )
    )
    if not _fits(recorded, fresh, step, calls):
        # Rule 10: the step counter of another geometry is not this plan's step.
        located = fresh.progress_at(step)
        diagnostics.append(
            Diagnostic(
                code="checkpoint-mislocated",
                message=f"the checkpoint has no ledger and records epoch {recorded.epoch} at "
                f"step {recorded.batch}, but step {recorded.batch} of this script's plan is in "
                f"epoch {located.epoch} (sample {located.sample_in_epoch} of it): it was "
                "written at another geometry than this script's loaders (another world size, "
                "batch size or accumulation); plan with the loaders it was written at, or "
                "resume from a checkpoint with a ledger (a durations integration's)",
            )
        )
    written = fresh.checkpoint_at(step)
    assert written.ledger is not None
    return written


def _fits(recorded: Progress, fresh: Plan, step: int, calls: tuple[FitCall, ...]) -> bool:
    """Rule 10: whether a checkpoint that records ``recorded`` can be at ``step`` of ``fresh``:
    in the epoch it records, and inside it where it records a position inside an epoch (read on
    the loader of that step, so the end of an epoch is the next one's start). Past the plan's
    end, it fits unless it records fewer epochs than the end."""
    where = fresh.segment_at(step)
    loader = where.loader if where is not None else calls[0].loader if calls else None
    counted = recorded if loader is None else recorded.normalized(loader)
    located = fresh.progress_at(step)
    fits = located.counts_as_epoch(counted.epoch, inside=not counted.at_epoch_start)
    if recorded.batch > fresh.total_steps:
        return fits or counted.epoch >= located.epoch
    return fits


def _skip(index: int, name: str, call: FitCall, entry: LedgerEntry, state: _State) -> Segment:
    """Rule "call identity": a call the ledger records as finished is not run again."""
    diagnostics = []
    if _request_changed(call, entry) or not entry.loader.same_stream(call.loader):
        diagnostics.append(
            Diagnostic(
                code="script-changed",
                call=name,
                message=f"call {name!r} changed since the checkpoint "
                f"({describe_change(call, entry)}); it had already finished, so it is not "
                "run again",
            )
        )
    state.origin = entry.origin
    assert entry.stop is not None
    state.previous = _Previous(entry.loader, entry.anchor)
    return Segment(
        index=index,
        name=name,
        action=Action.SKIP,
        loader=entry.loader,
        start=entry.start,
        stop=entry.stop,
        steps=0,
        start_step=state.step,
        target=entry.target,
        origin=entry.origin,
        entry=entry,
        cursors=tuple(state.cursors.items()),
        diagnostics=tuple(diagnostics),
    )


@attrs.define
class _Call:
    """The call being planned, and what the plan says about it so far."""

    index: int
    name: str
    call: FitCall
    #: Its ledger entry when it had started before the checkpoint (rule 8).
    entry: LedgerEntry | None
    diagnostics: list[Diagnostic] = attrs.Factory(list)

    def say(self, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(code=code, call=self.name, message=message))


@attrs.frozen
class _Start:
    """Where a call starts: the position, its run clock, whether it goes on in the stream of
    the data read last, and the rest of an epoch it leaves unread (rules 4, 7, 9)."""

    pos: Progress
    origin: Progress
    same_stream: bool
    abandoned: SampleRange | None


def _train(
    index: int,
    name: str,
    call: FitCall,
    entry: LedgerEntry | None,
    config: RunConfig,
    checkpoint: Checkpoint | None,
    state: _State,
) -> Segment:
    """Plan one call that trains (or tries to): each step below is a rule of semantics.md."""
    here = _Call(index, name, call, entry)
    loader = call.loader
    # Rule 20: a new call that does not go on in the stream read last starts its mixture.
    continues = state.reader is not None and state.reader.same_stream(loader)
    found, known = dict(state.cursors), dict(state.sources)
    pos, read_from = _take_over(state, loader, entry)
    # Rule 17: the tails of an epoch taken over count from where its loader left it.
    tails_from = read_from if pos is not read_from else None
    if entry is not None:
        start = _resume_started(here, state, pos, read_from)
        target = entry.target
    else:
        start = _start_new(here, state, pos)
        try:
            target = _target(call, config, start.pos, start.origin, state.previous)
        except (FitCallError, ConversionError) as error:
            here.say(_error_code(error), str(error))
            return _empty(here, start.pos, start.origin, state, abandoned=start.abandoned)
    pos, origin = start.pos, start.origin
    replayed = skipped = None
    at_resume_point, said = state.at_resume_point, len(here.diagnostics)
    if state.at_resume_point and start.same_stream and not pos.at_epoch_start:
        # Rule 11: where the data resumes inside an interrupted epoch.
        replayed, skipped, pos = _apply_data_policy(pos, loader, config, checkpoint, here.say)
        if replayed is not None and loader.mixture is not None:
            # The epoch is read again from its start: its cursors go back there.
            state.cursors = _mixing.epoch_start(loader, state.cursors, start.pos)
    state.at_resume_point = False
    if loader.mixture is not None:
        _enter_mixture(here, state, loader, restart=entry is None and not continues)
    runtime = target.unit is Unit.TOK and loader.tokens_per_sample is None
    planned = len(here.diagnostics)
    steps = _steps(here, pos, origin, target, runtime)
    if steps is None:
        # Rule 14: a call that cannot be planned reads nothing: the data policy, a restart or
        # a changed source wait for the call that does (said then); only the epoch it
        # abandons for another stream stays abandoned.
        del here.diagnostics[said:planned]
        state.at_resume_point, state.cursors, state.sources = at_resume_point, found, known
        return _empty(here, start.pos, origin, state, entry, abandoned=start.abandoned)
    stop = pos.advance(loader, steps)
    cursors = tuple(state.cursors.items())
    reads: tuple[SourceReads, ...] = ()
    if loader.mixture is not None:
        state.cursors, reads = _mixing.advance(loader, state.cursors, pos, stop)
        for r in reads:
            state.reads.setdefault(r.name, []).append((r.start, r.stop))
        _say_budget(here, loader, reads)
        if entry is not None and not entry.loader.same_stream(loader):
            _say_edit(here, entry, read_from, target, origin, found, reads)
    tails = _say_tails(here, loader, pos if tails_from is None else tails_from, stop)
    _say_where_it_stops(here, pos, stop, steps, target, origin, runtime)
    at_boundary = steps > 0 or (not runtime and _lands_on(stop, target, loader, origin))
    anchor = _anchor_after(state.previous, loader, target, at_boundary)
    segment = Segment(
        index=index,
        name=name,
        action=Action.RUN if entry is None else Action.RESUME,
        loader=loader,
        start=pos,
        stop=stop,
        steps=steps,
        start_step=state.step,
        target=target,
        origin=origin,
        entry=_entry_for(name, call, pos, origin, target, stop, entry, anchor),
        replayed=replayed,
        skipped=skipped,
        abandoned=start.abandoned,
        tails=tails,
        stop_at_runtime=runtime,
        sources=reads,
        cursors=cursors,
        diagnostics=tuple(here.diagnostics),
    )
    state.pos = stop
    state.step += steps
    state.origin = origin
    state.previous = _Previous(loader, anchor)
    state.reader = loader
    return segment


def _take_over(
    state: _State, loader: Loader, entry: LedgerEntry | None
) -> tuple[Progress, Progress]:
    """Rules 4 and 12: the position belongs to the data read last, so an epoch that loader
    has exhausted is closed by it; the call's own loader then takes the epoch over if it is
    the same stream. Returns the position, and where the loader read last left it (the call
    may have nothing left to read there)."""
    if entry is not None:
        reader = entry.loader
    elif state.reader is not None:
        # The loader that read last, another stream or the same one at another geometry.
        reader = state.reader
    else:
        reader = loader
    read_from = state.pos.normalized(reader)
    pos = read_from
    if reader is loader or reader.same_stream(loader):
        pos = pos.normalized(loader)
    return pos, read_from


def _resume_started(here: _Call, state: _State, pos: Progress, read_from: Progress) -> _Start:
    """Rules 8, 12, 14 and 18: a call that had started goes on to the target stored when it
    started, on the clock it started on; what changed since is said."""
    entry, loader, name = here.entry, here.call.loader, here.name
    assert entry is not None
    if _request_changed(here.call, entry):
        here.say(
            "script-changed",
            f"call {name!r} changed since it started ({describe_change(here.call, entry)}); "
            f"it keeps the target stored when it started, {entry.target}",
        )
    same_stream = entry.loader.same_stream(loader)
    abandoned = None
    before, after = entry.loader.mixture, loader.mixture
    if not same_stream and before is not None and after is not None:
        # Rule 20: the sources keep their cursors; only the mixture's epoch starts again.
        changes = before.changes(after) or [
            f"{describe_loader(entry.loader)} -> {describe_loader(loader)}"
        ]
        kept = {s.name: moved for s, _, _, moved in _entering(state, loader, restart=False)}
        here.say(
            "mixture-changed",
            f"the mixture of call {name!r} changed since it started ({'; '.join(changes)}): "
            f"each source goes on from its cursor ({cursors_text(kept)}), and the interleave "
            "starts again from its first position at the checkpoint (a new mixture epoch)",
        )
        if not pos.at_epoch_start:
            abandoned = _rest_of_epoch(pos, entry.loader)
            pos = pos.close_epoch()
    elif not same_stream:
        if attrs.evolve(entry.loader, order=loader.order).same_stream(loader):
            change = (
                f"its order: {describe_order(entry.loader.order)} -> "
                f"{describe_order(loader.order)}; resume with the order it started with to go "
                "on in its epoch"
            )
        else:
            change = f"{describe_loader(entry.loader)} -> {describe_loader(loader)}"
        here.say(
            "loader-changed",
            f"the loader of call {name!r} changed since it started ({change}); the data "
            "position of the checkpoint does not apply to it: it starts a new epoch",
        )
        if not pos.at_epoch_start:
            abandoned = _rest_of_epoch(pos, entry.loader)
            pos = pos.close_epoch()
    else:
        if entry.loader.world_size != loader.world_size:
            # Said also when the global batch stays the same: the evening still moves.
            here.say(
                "world-size-changed",
                f"{entry.loader.world_size} -> {loader.world_size} data-parallel ranks: "
                f"the rest of epoch {read_from.epoch} from sample "
                f"{read_from.sample_in_epoch} is evened for {loader.world_size} ranks",
            )
        if entry.loader.batch_size != loader.batch_size:
            _say_batch_size_changed(entry.loader, loader, entry.target, pos, here.say)
    return _Start(pos=pos, origin=entry.origin, same_stream=same_stream, abandoned=abandoned)


def _start_new(here: _Call, state: _State, pos: Progress) -> _Start:
    """Rules 4, 7 and 9: a new call starts a fresh run clock (``reset_time``, or the first
    call of a ``weights`` resume) at an epoch start, or a new epoch when it reads another
    stream; the rest of the epoch it leaves is said before its target is known, since a call
    that cannot be planned moves the data position all the same."""
    call, name = here.call, here.name
    left = state.reader
    same_stream = left is None or left.same_stream(call.loader)
    abandoned = None
    if call.reset_time or state.fresh_clock:
        if not pos.at_epoch_start:
            abandoned = _rest_of_epoch(pos, left or call.loader)
            pos = pos.close_epoch()
        state.origin = pos
        state.previous = None
        if call.reset_time:
            here.say("clock-reset", f"the run clock restarts at step {pos.batch}")
        else:
            here.say(
                "fresh-clock",
                f"weights only: a fresh run clock starts at lifetime step {pos.batch}",
            )
        state.fresh_clock = False
        same_stream = True
    elif not same_stream and not pos.at_epoch_start:
        assert left is not None
        abandoned = _rest_of_epoch(pos, left)
        pos = pos.close_epoch()
    if abandoned is not None:
        kept = (
            " (mixture positions: its sources keep their cursors, so no source sample is skipped)"
            if left is not None and left.mixture is not None
            else ""
        )
        here.say(
            "epoch-abandoned",
            f"call {name!r} starts a new epoch: the rest of the previous epoch ({abandoned}) "
            f"is not read{kept}",
        )
    return _Start(pos=pos, origin=state.origin, same_stream=same_stream, abandoned=abandoned)


def _steps(here: _Call, pos: Progress, origin: Progress, target: Time, runtime: bool) -> int | None:
    """Rules 2 and 13: the steps to the first step boundary at or past the target (at most,
    for a token target decided at run time); ``None`` when it cannot be placed (said)."""
    if runtime:
        return _runtime_token_bound(here.call, pos, origin, target, here.say)
    try:
        return pos.steps_until(target, loader=here.call.loader, since=origin)
    except ConversionError as error:
        here.say(_error_code(error), str(error))
        return None


def _say_tails(
    here: _Call, loader: Loader, start: Progress, stop: Progress
) -> tuple[TailRange, ...]:
    """Rule 17: what evening the ranks repeats or drops at the end of each epoch read."""
    tails = sharding_tails(loader, start, stop)
    for tail in tails:
        repeats = tail.repeated > 0
        here.say(
            "data-repeated" if repeats else "data-dropped",
            f"{loader.world_size} data-parallel ranks are kept even "
            f"({describe_sharding(loader)}): {tail} (positions in the epoch's order)",
        )
    return tails


def _say_where_it_stops(
    here: _Call,
    pos: Progress,
    stop: Progress,
    steps: int,
    target: Time,
    origin: Progress,
    runtime: bool,
) -> None:
    """Rule 2: a target already reached trains 0 steps; one inside a step is overshot to the
    next step boundary, and the plan says where."""
    loader = here.call.loader
    if steps == 0 and here.entry is None:
        reached = describe_position(pos, target.unit, loader, origin)
        here.say(
            "target-already-reached",
            f"the target {target} is already reached (the run clock is at {reached}); "
            "the call trains 0 steps",
        )
    elif not runtime:
        landed = stop.time_in(target.unit, loader=loader, since=origin)
        if landed != target and steps > 0:
            here.say(
                "target-rounded",
                f"the target {target} on the run clock falls inside a step: the call stops at "
                f"the first step boundary past it, {landed}",
            )


def _target(
    call: FitCall,
    config: RunConfig,
    pos: Progress,
    origin: Progress,
    previous: _Previous | None,
) -> Time:
    """Rules "absolute and relative targets" and "anchoring"."""
    if call.until is not None:
        until = call.until
        return resolve_dur(until, config.max_duration) if until.unit is Unit.DUR else until
    if call.duration is not None:
        duration = call.duration
        if duration.unit is Unit.DUR:
            duration = resolve_dur(duration, config.max_duration)
        if (
            previous is not None
            and previous.anchor is not None
            and previous.anchor.unit is duration.unit
            and previous.loader.same_stream(call.loader)
        ):
            anchor = previous.anchor
        else:
            anchor = pos.time_in(duration.unit, loader=call.loader, since=origin)
        return anchor + duration
    if config.max_duration is None:
        raise FitCallError(
            "no duration anywhere: the call gives neither duration= nor until=, and the run "
            "has no max_duration; give one of them"
        )
    return config.max_duration


def _apply_data_policy(
    pos: Progress,
    loader: Loader,
    config: RunConfig,
    checkpoint: Checkpoint | None,
    say: _Say,
) -> tuple[SampleRange | None, SampleRange | None, Progress]:
    where = f"{pos.sample_in_epoch} samples into epoch {pos.epoch}"
    if config.data is DataPolicy.REPLAY_EPOCH:
        replayed = SampleRange(pos.epoch, 0, pos.sample_in_epoch)
        say(
            "data-replayed",
            f"the checkpoint is {where}; the epoch is read again from its start: "
            f"{replayed} are trained twice",
        )
        return replayed, None, pos.restart_epoch()
    if config.data is DataPolicy.NEXT_EPOCH:
        end = loader.samples if loader.samples is not None else pos.sample_in_epoch
        skipped = SampleRange(pos.epoch, pos.sample_in_epoch, end)
        kept = (
            " (mixture positions: its sources keep their cursors, so no source sample is skipped)"
            if loader.mixture is not None
            else ""
        )
        say(
            "data-skipped",
            f"the checkpoint is {where}; training goes on from the next epoch: "
            f"{skipped} are never read{kept}",
        )
        return None, skipped, pos.close_epoch()
    if checkpoint is not None and not checkpoint.loader_state:
        say(
            "mid-epoch-no-loader-state",
            f"the checkpoint is {where} but saved no loader state: an exact resume needs "
            f"the loader to start at sample {pos.sample_in_epoch} of the epoch (a stateful "
            "loader, or a sampler that skips); a plain DataLoader would replay the epoch from "
            "its start (data policy replay_epoch)",
        )
    return None, None, pos


def _say_batch_size_changed(
    before: Loader, loader: Loader, target: Time, pos: Progress, say: _Say
) -> None:
    """Rule 12: a started call resumed at another global batch size."""
    say(
        "batch-size-changed",
        f"batch size {before.batch_size} -> {loader.batch_size}: the data "
        f"position is kept in samples ({pos.sample_in_epoch} into epoch {pos.epoch})",
    )
    if target.unit is Unit.BA:
        say(
            "ba-target-batch-size-changed",
            f"target {target} counts optimizer steps, set at batch size "
            f"{before.batch_size}; at batch size {loader.batch_size} each step "
            f"trains {loader.batch_size} samples instead, so the call trains "
            "a different number of samples; give the target in sp, tok or ep to keep "
            "its meaning",
        )


def _runtime_token_bound(
    call: FitCall, pos: Progress, origin: Progress, target: Time, say: _Say
) -> int | None:
    """Rule "tokens of unknown length": the stop is decided at run time; bound it."""
    if pos.token is None or origin.token is None:
        say(
            "tokens-unknown",
            f"the token count at this point is unknown, so {target} cannot be placed; give "
            "the loaders tokens_per_sample, or report measured tokens with every step",
        )
        return None
    missing = origin.token + int(target.value) - pos.token
    if missing <= 0:
        return 0
    # Every sample carries at least one token, so `missing` samples always suffice.
    most = pos.steps_until(Time(pos.sample + missing, Unit.SP), loader=call.loader)
    say(
        "token-stop-at-runtime",
        f"the loader's tokens_per_sample is unknown, so {target} is reached at run time: "
        f"after 1 to {most} steps (at least one token a sample); later calls are planned "
        "from the latest stop and must be planned again when this call ends",
    )
    return most


def _empty(
    here: _Call,
    pos: Progress,
    origin: Progress,
    state: _State,
    entry: LedgerEntry | None = None,
    *,
    abandoned: SampleRange | None = None,
) -> Segment:
    """A call that cannot be planned: 0 steps, its errors said. It is kept out of the ledger
    (a started call keeps its entry as it was), so a corrected script plans it later. The rest
    of an epoch it left (``abandoned``) is reported as for any call: the position it leaves is
    where the calls after it start. The resume point is not used up: the next call that
    trains applies the data policy (rule 11)."""
    state.pos = pos
    placeholder = entry or _entry_for(
        here.name, here.call, pos, origin, Time(0, Unit.BA), pos, None
    )
    return Segment(
        index=here.index,
        name=here.name,
        action=Action.RUN if entry is None else Action.RESUME,
        loader=here.call.loader,
        start=pos,
        stop=pos,
        steps=0,
        start_step=state.step,
        target=placeholder.target,
        origin=origin,
        entry=placeholder,
        abandoned=abandoned,
        failed=True,
        cursors=tuple(state.cursors.items()),
        diagnostics=tuple(here.diagnostics),
    )


def _entry_for(
    name: str,
    call: FitCall,
    start: Progress,
    origin: Progress,
    target: Time,
    stop: Progress,
    previous: LedgerEntry | None,
    anchor: Time | None = None,
) -> LedgerEntry:
    """The ledger entry of a call once it has run to ``stop``; ``anchor`` is what the next
    relative call may be measured from (rule 3)."""
    if previous is not None:
        return attrs.evolve(previous, loader=call.loader, finished=True, stop=stop, anchor=anchor)
    return LedgerEntry(
        name=name,
        fingerprint=call.fingerprint(),
        loader=call.loader,
        duration=call.duration,
        until=call.until,
        reset_time=call.reset_time,
        start=start,
        origin=origin,
        target=target,
        finished=True,
        stop=stop,
        anchor=anchor,
    )


def _lands_on(position: Progress, target: Time, loader: Loader, origin: Progress) -> bool:
    try:
        return position.time_in(target.unit, loader=loader, since=origin) == target
    except ConversionError:
        return False


def _anchor_after(
    previous: _Previous | None, loader: Loader, target: Time, at_first_boundary: bool
) -> Time | None:
    """Rule 3: the target a next relative call may anchor on, or ``None``.

    A call's target is its anchor when it trained at least one step, or trained none and the
    position is exactly its target (``at_first_boundary``), or trained none and its target is
    at or past the previous call's anchor, in the same unit on the same stream. Nothing else.
    """
    if at_first_boundary:
        return target
    if (
        previous is not None
        and previous.anchor is not None
        and previous.loader.same_stream(loader)
        and previous.anchor.unit is target.unit
        and target >= previous.anchor
    ):
        return target
    return None


def _error_code(error: Exception) -> str:
    if isinstance(error, ConversionError):
        if error.missing in ("progress.token", "loader.tokens_per_sample"):
            return "tokens-unknown"
        return "cannot-convert"
    return "no-duration"


def _request_changed(call: FitCall, entry: LedgerEntry) -> bool:
    return (call.duration, call.until, call.reset_time) != (
        entry.duration,
        entry.until,
        entry.reset_time,
    )


def _rest_of_epoch(pos: Progress, loader: Loader) -> SampleRange:
    end = loader.samples if loader.samples is not None else pos.sample_in_epoch
    return SampleRange(pos.epoch, pos.sample_in_epoch, max(end, pos.sample_in_epoch))


def _entering(
    state: _State, loader: Loader, *, restart: bool
) -> list[tuple[Source, Source | None, int, int]]:
    """Rule 20: where each source of a call's mixture starts: ``(source, as last read, cursor,
    where it starts)``; a source whose data changed since it was last read, or that the
    mixture restarts, starts a new pass."""
    mixture = loader.mixture
    assert mixture is not None
    out = []
    for source in mixture.sources:
        known = state.sources.get(source.name)
        read = state.cursors.get(source.name, 0)
        moved = read
        if known is not None and not known.same_data(source):
            moved = _mixing.new_pass(read, known, source)
        elif restart and source.name in mixture.restart:
            moved = _mixing.new_pass(read, source, source)
        out.append((source, known, read, moved))
    return out


def _enter_mixture(here: _Call, state: _State, loader: Loader, *, restart: bool) -> None:
    """Rule 20: each source of a call's mixture goes on from its cursor, where the calls
    before left it; a source whose data changed since it was last read, or that the mixture
    restarts (``Mixture.restart``, applied when a new call starts reading it), starts a new
    pass instead, and the rest of the pass it was in is said."""
    for source, known, read, moved in _entering(state, loader, restart=restart):
        if known is not None and not known.same_data(source):
            here.say(
                "source-changed",
                f"source {source.name!r} changed since it was last read ({known.describe()} "
                f"-> {source.describe()}): it starts a new pass"
                + _unread_rest(read, known.samples),
            )
        elif moved != read:
            here.say(
                "source-restarted",
                f"the mixture restarts source {source.name!r}: it starts pass "
                f"{moved // source.samples}" + _unread_rest(read, source.samples),
            )
        state.cursors[source.name] = moved
        state.sources[source.name] = source


def _unread_rest(read: int, samples: int) -> str:
    within = read % samples
    if within == 0:
        return ""
    return f"; positions {within:,}-{samples - 1:,} of its pass {read // samples} are never read"


def _passes(value: Fraction) -> str:
    """Passes as a decimal when they end, else as a fraction: ``2.5``, ``7/3``."""
    if value.denominator == 1:
        return f"{value.numerator:,}"
    rest = value.denominator
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    if rest == 1:
        return f"{float(value):,}" if value < 10**15 else str(value)
    return str(value)


def _say_budget(here: _Call, loader: Loader, reads: tuple[SourceReads, ...]) -> None:
    """Rule 20: a source read past its ``max_passes`` over the run is an error, said before
    the run."""
    mixture = loader.mixture
    assert mixture is not None
    for source, reads_of in zip(mixture.sources, reads, strict=True):
        budget = source.max_passes
        if budget is None or reads_of.stop <= budget * source.samples or not reads_of.read:
            continue
        here.say(
            "source-budget-exceeded",
            f"source {source.name!r} reaches {_passes(Fraction(reads_of.stop, source.samples))} "
            f"passes by the end of call {here.name!r} (its cursor at {reads_of.stop:,}, "
            f"{source.samples:,} samples a pass), more than its max_passes {_passes(budget)}; "
            f"this call reads {read_span(reads_of.start, reads_of.stop, source.samples)}; lower "
            "its weight or the call's duration, or raise max_passes",
        )


def _say_coverage(segments: list[Segment], state: _State) -> list[Diagnostic]:
    """Rule 20: what the plan leaves of each source it reads, when that is not whole passes
    read without a gap: the positions never read (the rest of the last pass begun, and any a
    restart or a changed source passed over), or the positions read once more than the rest.
    Before the plan's start, a source counts as read up to its cursor."""
    said: list[Diagnostic] = []
    names = dict.fromkeys(r.name for s in segments for r in s.sources if not s.failed)
    for name in names:
        samples = state.sources[name].samples
        spans = sorted((a, b) for a, b in state.reads.get(name, ()) if b > a)
        gaps, reached = [], 0
        for a, b in spans:
            if a > reached:
                gaps.append((reached, a))
            reached = max(reached, b)
        passes, within = divmod(reached, samples)
        if within:
            gaps.append((reached, (passes + 1) * samples))
        if not gaps:
            continue
        if len(gaps) == 1 and within:  # read without a gap, into its last pass
            if not passes:
                text = f"{reached:,} of its {samples:,} samples read; positions {within:,}-"
                text += f"{samples - 1:,} of pass 0 are never read"
            else:
                times = "once" if passes == 1 else f"{passes:,} times"
                text = (
                    f"{_passes(Fraction(reached, samples))} passes: every sample read {times}, "
                    f"and positions {_range_text(0, within)} of pass {passes} once more"
                )
        else:
            listed = [read_span(a, b, samples) for a, b in gaps[:4]]
            more = f"; and {len(gaps) - 4:,} more ranges" if len(gaps) > 4 else ""
            text = (
                f"its cursor at {reached:,} ({samples:,} samples a pass), never read: "
                + "; ".join(listed)
                + more
            )
        said.append(
            Diagnostic(
                code="source-unfinished", message=f"source {name!r} by the plan's end: {text}"
            )
        )
    return said


def _range_text(start: int, stop: int) -> str:
    return f"{start:,}" if stop - start == 1 else f"{start:,}-{stop - 1:,}"


def _say_edit(
    here: _Call,
    entry: LedgerEntry,
    found_at: Progress,
    target: Time,
    origin: Progress,
    found: dict[str, int],
    edited: tuple[SourceReads, ...],
) -> None:
    """Rule 20: what a mixture edited since its call started changes of each source's reads
    by the call's end, against the mixture it started with (planned from the same
    checkpoint)."""
    was = entry.loader
    if was.mixture is None:
        return
    start = found_at.normalized(was)
    try:
        steps = start.steps_until(target, loader=was, since=origin)
    except ConversionError:
        return
    _, unedited = _mixing.advance(was, found, start, start.advance(was, steps))
    then = {r.name: r for r in unedited}
    now = {r.name: r for r in edited}
    said = []
    for name in dict.fromkeys([*then, *now]):
        a, b = now.get(name), then.get(name)
        if a is not None and b is not None and a.start == b.start:
            if a.stop > b.stop:
                said.append(f"{name} reads {a.stop - b.stop:,} more ({_span(b.stop, a.stop, a)})")
            elif a.stop < b.stop:
                said.append(
                    f"{name} reads {b.stop - a.stop:,} fewer ({_span(a.stop, b.stop, a)} are "
                    "left for later calls, or never read)"
                )
            continue
        if (a is None or not a.read) and (b is None or not b.read):
            continue
        edited_text = "nothing" if a is None or not a.read else _span(a.start, a.stop, a)
        was_text = "nothing" if b is None or not b.read else _span(b.start, b.stop, b)
        said.append(f"{name} reads {edited_text}, where it read {was_text}")
    if said:
        here.say(
            "mixture-edit",
            f"by the end of call {here.name!r}, against the mixture it started with: "
            + "; ".join(said),
        )


def _span(start: int, stop: int, reads: SourceReads) -> str:
    return read_span(start, stop, reads.samples)
