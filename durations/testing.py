"""``durations`` as an oracle in a trainer's own tests: hypothesis strategies and a conformance
harness. Needs the ``testing`` extra (``pip install 'training-durations[testing]'``).

The strategies are registered with hypothesis, so ``st.from_type(Time)`` and friends work once
this package is installed. The harness (:func:`check_trainer`) runs generated scenarios, with
crashes, on a trainer under test and compares every step it trained with the plan.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import attrs

try:
    from hypothesis import assume, given, settings, strategies as st
    from hypothesis.errors import ResolutionFailed
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "durations.testing needs hypothesis: pip install 'training-durations[testing]'"
    ) from error

from .checkpoint import Checkpoint, LedgerEntry, TakenUp
from .diagnostics import CODES, Diagnostic
from .errors import DurationsError, GeometryError, MixtureError, ScheduleError
from .fit import DataPolicy, FitCall, ResumeMode, RunConfig
from .interleave import Interleave
from .intervals import At, AtCallEnds, Events, Every
from .loader import Loader
from .mixture import Mixture, Source, SourceReads, StopRule, Wrap
from .order import Order
from .planner import plan
from .plans import Plan, SampleRange, Segment
from .progress import Progress
from .scenario import Scenario
from .schedules import END, Landmark, ResolvedSchedule, Schedule
from .sharding import EpochTail, Padding, Sharding, TailRange, sample_at
from .time import Time
from .units import Unit

__all__ = [
    "ConformanceError",
    "StepRecord",
    "check_trainer",
    "checkpoints",
    "crash_schedules",
    "expected_steps",
    "fit_calls",
    "loaders",
    "mixtures",
    "orders",
    "plans",
    "progresses",
    "run_configs",
    "scenarios",
    "times",
]


def _check_int(name: str, value: object, *, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r}: expected a whole number >= {minimum}")


# -- strategies -------------------------------------------------------------------------------


def times(
    *,
    units: Sequence[Unit | str] | None = None,
    max_value: int = 10**12,
) -> st.SearchStrategy[Time]:
    """Valid ``Time`` values in ``units`` (default: all), up to ``max_value``.

    Whole units get whole numbers; ``ep`` and ``dur`` also get fractions.
    """
    _check_int("max_value", max_value, minimum=0)
    chosen = [Unit(u) for u in units] if units is not None else list(Unit)
    if not chosen:
        raise ValueError("units=[]: expected at least one unit")

    def values(unit: Unit) -> st.SearchStrategy[Time]:
        whole = st.integers(min_value=0, max_value=max_value)
        if unit.is_whole:
            return whole.map(lambda v: Time(v, unit))
        fractional = st.fractions(min_value=0, max_value=max_value, max_denominator=1000)
        return st.one_of(whole, fractional).map(lambda v: Time(v, unit))

    return st.sampled_from(chosen).flatmap(values)


def loaders(
    *,
    sized: bool | None = None,
    tokens: bool | None = None,
    max_samples: int = 60,
    max_batch_size: int = 12,
    names: Sequence[str | None] = (None,),
    max_world_size: int = 1,
    ordered: bool | None = None,
    mixed: bool | None = False,
) -> st.SearchStrategy[Loader]:
    """Valid ``Loader`` geometries, small by default so a trainer can run them.

    ``sized`` and ``tokens`` force a known length or token count (``None``: either). With
    ``max_world_size`` above 1, some loaders are data-parallel (``Loader.sharded``): up to
    that many ranks, micro-batches up to ``max_batch_size``, accumulation up to 3, any padding.
    ``ordered`` forces a sized loader to have an :class:`~durations.Order` (:func:`orders`)
    or to have none (``None``: either; a stream has none). ``mixed`` forces the loader to
    read a :class:`~durations.Mixture` (:func:`mixtures`; its sources then carry the
    orders), ``None`` lets it draw either, and ``False`` (the default) keeps to one data set.
    """
    _check_flag("ordered", ordered)
    _check_flag("mixed", mixed)
    if ordered and sized is False:
        raise ValueError(
            "ordered=True with sized=False: a stream of unknown length has no epochs to order"
        )
    _check_int("max_samples", max_samples, minimum=1)
    _check_int("max_batch_size", max_batch_size, minimum=1)
    _check_int("max_world_size", max_world_size, minimum=1)
    if not names:
        raise ValueError("names=(): expected at least one name (None for unnamed)")

    @st.composite
    def build(draw: st.DrawFn) -> Loader:
        is_sized = draw(st.booleans()) if sized is None else sized
        batch = draw(st.integers(1, max_batch_size))
        samples = draw(st.integers(1, max_samples)) if is_sized else None
        drop_last = samples is not None and samples >= batch and draw(st.booleans())
        has_tokens = draw(st.booleans()) if tokens is None else tokens
        per_sample = draw(st.integers(1, 8)) if has_tokens else None
        name = draw(st.sampled_from(list(names)))
        if draw(st.booleans()) if mixed is None else mixed:
            return _mixed(draw, is_sized, batch, has_tokens, name, max_world_size, max_samples)
        order = None
        if samples is not None and (draw(st.booleans()) if ordered is None else ordered):
            order = draw(orders())
        if max_world_size > 1 and draw(st.booleans()):
            return _sharded(draw, samples, batch, per_sample, name, max_world_size, order)
        return Loader(
            samples=samples,
            batch_size=batch,
            drop_last=drop_last,
            tokens_per_sample=per_sample,
            name=name,
            order=order,
        )

    return build()


def _sharded(
    draw: st.DrawFn,
    samples: int | None,
    micro: int,
    per_sample: int | None,
    name: str | None,
    max_world_size: int,
    order: Order | None,
) -> Loader:
    """A data-parallel loader; a geometry whose epoch would train nothing (which ``Loader``
    refuses) reads with repeat padding and without ``drop_last`` instead."""
    build = functools.partial(
        Loader.sharded,
        samples=samples,
        world_size=draw(st.integers(1, max_world_size)),
        device_batch_size=micro,
        accumulation=draw(st.integers(1, 3)),
        tokens_per_sample=per_sample,
        name=name,
        order=order,
    )
    padding = draw(st.sampled_from([p.value for p in Padding]))
    try:
        return build(padding=padding, drop_last=draw(st.booleans()))
    except GeometryError:
        return build()


def _mixed(
    draw: st.DrawFn,
    sized: bool,
    micro: int,
    tokens: bool,
    name: str | None,
    max_world_size: int,
    max_samples: int,
) -> Loader:
    """A loader of a drawn mixture: sized unless ``sized`` is false, every source of one
    sample length when ``tokens``."""
    mixture = draw(mixtures(sized=sized, tokens=tokens, max_samples=max_samples))
    if max_world_size > 1 and draw(st.booleans()):
        build = functools.partial(
            Loader.mixing,
            mixture,
            world_size=draw(st.integers(1, max_world_size)),
            device_batch_size=micro,
            accumulation=draw(st.integers(1, 3)),
            name=name,
        )
        padding = draw(st.sampled_from([p.value for p in Padding]))
        try:
            return build(padding=padding, drop_last=draw(st.booleans()))
        except GeometryError:
            return build()
    epoch = mixture.epoch_samples
    drop_last = epoch is not None and epoch >= micro and draw(st.booleans())
    return Loader.mixing(mixture, batch_size=micro, drop_last=drop_last, name=name)


#: Names the drawn sources take.
_SOURCE_NAMES = ("web", "code", "math", "books", "wiki")


def mixtures(
    *,
    max_sources: int = 3,
    max_samples: int = 40,
    sized: bool | None = None,
    tokens: bool | None = None,
    ordered: bool | None = None,
) -> st.SearchStrategy[Mixture]:
    """Valid mixtures (``docs/mixtures.md``) of up to ``max_sources`` small sources, their
    parts given as shares (in samples, or in tokens), counts or repeats, any stop rule. With
    ``sized`` the mixture has epochs (``False``: it never stops; ``None``: either); with
    ``tokens`` every source has one known sample length (``False``: none has one); with
    ``ordered`` every source has an order (``False``: none).
    """
    _check_int("max_sources", max_sources, minimum=1)
    _check_int("max_samples", max_samples, minimum=1)
    for flag, value in (("sized", sized), ("tokens", tokens), ("ordered", ordered)):
        _check_flag(flag, value)
    max_sources = min(max_sources, len(_SOURCE_NAMES))

    @st.composite
    def build(draw: st.DrawFn) -> Mixture:
        count = draw(st.integers(1, max_sources))
        kind = draw(st.sampled_from(["weight", "count", "repeats"]))
        if sized is False:
            kind = "weight"
        length = draw(st.integers(1, 8)) if tokens else None
        has_tokens = draw(st.booleans()) if tokens is None else tokens
        sources = []
        for source_name in _SOURCE_NAMES[:count]:
            samples = draw(st.integers(1, max_samples))
            part: dict[str, Any] = {}
            if kind == "weight":
                # Small denominators keep the period (and the interleave's table) short.
                part["weight"] = Fraction(draw(st.integers(1, 16)), draw(st.integers(1, 4)))
            elif kind == "count":
                part["count"] = draw(st.integers(1, 2 * max_samples))
            else:
                part["repeats"] = Fraction(draw(st.integers(1, 2 * samples)), samples)
            per_sample = (
                length if length is not None else (draw(st.integers(1, 8)) if has_tokens else None)
            )
            order = None
            if draw(st.booleans()) if ordered is None else ordered:
                order = draw(orders())
            budget = draw(st.none() | st.integers(1, 6).map(Fraction))
            sources.append(
                Source(
                    name=source_name,
                    samples=samples,
                    tokens_per_sample=per_sample,
                    order=order,
                    wrap=draw(st.sampled_from(list(Wrap))),
                    max_passes=budget,
                    **part,
                )
            )
        unit = Unit.SP
        if kind == "weight" and all(s.tokens_per_sample for s in sources) and draw(st.booleans()):
            unit = Unit.TOK
        stop = None
        if kind == "weight":
            rules = [StopRule.NEVER] if sized is False else list(StopRule)
            if sized:
                rules.remove(StopRule.NEVER)
            stop = draw(st.sampled_from(rules))
        restart = draw(st.frozensets(st.sampled_from([s.name for s in sources])))
        try:
            return Mixture(sources=sources, unit=unit, stop=stop, restart=restart)
        except MixtureError:  # a source rounded to nothing, or a period too long: refused
            assume(False)
            raise  # pragma: no cover - assume raises

    return build()


def _source_reads(draw: st.DrawFn) -> SourceReads:
    samples = draw(st.integers(1, 50))
    start = draw(st.integers(0, 200))
    return SourceReads(
        name=draw(st.sampled_from(_SOURCE_NAMES)),
        samples=samples,
        start=start,
        stop=start + draw(st.integers(0, 200)),
        repeated=draw(st.integers(0, 10)),
        tokens_per_sample=draw(st.none() | st.integers(1, 8)),
    )


_loaders = loaders  # fit_calls' own ``loaders`` argument shadows the strategy


def _units(units: Sequence[Unit | str], *, allow_dur: bool = True) -> list[Unit]:
    """``units`` as ``Unit`` values, refusing an empty list (and ``dur`` where it cannot be)."""
    chosen = [Unit(u) for u in units]
    if not chosen:
        raise ValueError("units=[]: expected at least one unit")
    if not allow_dur and Unit.DUR in chosen:
        raise ValueError(
            f"units={list(units)!r}: max_duration cannot be in dur (dur is a fraction of it); "
            "expected units among ba, ep, sp, tok"
        )
    return chosen


def progresses(
    *, loader: Loader | None = None, max_steps: int = 200
) -> st.SearchStrategy[Progress]:
    """Positions a run can reach: up to ``max_steps`` steps on ``loader`` (default: any small
    loader), possibly read at another batch size first (an elastic resume)."""
    _check_int("max_steps", max_steps, minimum=0)

    @st.composite
    def build(draw: st.DrawFn) -> Progress:
        data = draw(loaders()) if loader is None else loader
        reader = data
        if data.sharding is not None:
            with contextlib.suppress(GeometryError):  # that many ranks would train nothing
                reader = data.with_world_size(draw(st.integers(1, data.world_size * 2)))
        else:
            batch = draw(st.integers(1, max(1, data.batch_size * 2)))
            if not data.drop_last or data.samples is None or batch <= data.samples:
                reader = data.with_batch_size(batch)
        return Progress().advance(reader, draw(st.integers(0, max_steps)))

    return build()


_AMOUNT_TOPS = {Unit.BA: 25, Unit.SP: 150, Unit.TOK: 600}


def _amounts(unit: Unit) -> st.SearchStrategy[Time]:
    if unit is Unit.EP:
        return st.fractions(0, 3, max_denominator=10).map(lambda v: Time(v, unit))
    if unit is Unit.DUR:
        return st.fractions(0, 1, max_denominator=10).map(lambda v: Time(v, unit))
    return st.integers(0, _AMOUNT_TOPS[unit]).map(lambda v: Time(v, unit))


def fit_calls(
    *,
    loaders: Sequence[Loader] | None = None,
    units: Sequence[Unit | str] = ("ba", "sp", "ep", "tok"),
    reset_time: bool = True,
) -> st.SearchStrategy[FitCall]:
    """Fit calls on one of ``loaders`` (default: a drawn one): a relative duration, an absolute
    target, or neither, in one of ``units``; with ``reset_time`` now and then when allowed."""
    if loaders is not None and not loaders:
        raise ValueError("loaders=[]: expected at least one Loader, or None to draw one")
    if loaders is not None and not all(isinstance(loader, Loader) for loader in loaders):
        raise ValueError(f"loaders={loaders!r}: expected Loader values")
    chosen = _units(units)
    pool = _loaders().map(lambda loader: [loader]) if loaders is None else st.just(list(loaders))

    @st.composite
    def build(draw: st.DrawFn) -> FitCall:
        loader = draw(pool.flatmap(st.sampled_from))
        usable = [
            u
            for u in chosen
            if not (u is Unit.EP and loader.samples is None)
            and not (u is Unit.TOK and loader.tokens_per_sample is None)
        ] or [Unit.BA]
        amount = draw(st.sampled_from(usable).flatmap(_amounts))
        kind = draw(st.sampled_from(["duration", "duration", "until", "none"]))
        return FitCall(
            loader=loader,
            duration=amount if kind == "duration" else None,
            until=amount if kind == "until" else None,
            reset_time=reset_time and draw(st.booleans()) and draw(st.booleans()),
        )

    return build()


def scenarios(
    *,
    max_calls: int = 4,
    max_loaders: int = 3,
    units: Sequence[Unit | str] = ("ba", "sp", "ep", "tok"),
    reset_time: bool = True,
    max_samples: int = 40,
    max_batch_size: int = 8,
    max_world_size: int = 1,
    ordered: bool | None = None,
    mixed: bool | None = False,
) -> st.SearchStrategy[Scenario]:
    """Whole runs: named, sized loaders with known tokens, a ``max_duration``, and fit calls.

    With ``"dur"`` among ``units``, calls may ask for a fraction of ``max_duration``, which is
    always drawn in one of the other units. ``max_world_size`` above 1 makes some loaders
    data-parallel, ``ordered`` gives every loader an order or none (``None``: either), and
    ``mixed`` lets loaders read mixtures (``True``: every one; ``None``: some; see
    :func:`loaders`).
    """
    _check_flag("ordered", ordered)
    _check_flag("mixed", mixed)
    _check_int("max_calls", max_calls, minimum=1)
    _check_int("max_loaders", max_loaders, minimum=1)
    chosen = _units(units)

    @st.composite
    def build(draw: st.DrawFn) -> Scenario:
        count = draw(st.integers(1, max_loaders))
        data = tuple(
            draw(
                loaders(
                    sized=True,
                    tokens=True,
                    max_samples=max_samples,
                    max_batch_size=max_batch_size,
                    names=[name],
                    max_world_size=max_world_size,
                    ordered=ordered,
                    mixed=mixed,
                )
            )
            for name in "abcdefghijklmnopqrstuvwxyz"[:count]
        )
        calls = draw(
            st.lists(
                fit_calls(loaders=data, units=chosen, reset_time=reset_time),
                min_size=1,
                max_size=max_calls,
            )
        )
        # max_duration cannot be in dur (dur is a fraction of it).
        limits = [unit for unit in chosen if unit is not Unit.DUR] or [Unit.BA]
        limit = draw(st.sampled_from(limits).flatmap(_amounts))
        return Scenario(
            config=RunConfig(max_duration=limit),
            loaders={loader.name or "": loader for loader in data},
            calls=tuple(calls),
            source="<generated>",
        )

    return build()


def run_configs(
    *,
    units: Sequence[Unit | str] = ("ba", "sp", "ep", "tok"),
    max_duration: bool | None = None,
) -> st.SearchStrategy[RunConfig]:
    """Run configurations: any resume mode and data policy, and a ``max_duration`` in one of
    ``units`` (``max_duration=True``: always one, ``False``: none, ``None``: either)."""
    chosen = _units(units, allow_dur=False)
    _check_flag("max_duration", max_duration)
    limits: st.SearchStrategy[Time | None] = st.sampled_from(chosen).flatmap(_amounts)
    if max_duration is None:
        limits = st.none() | limits
    elif not max_duration:
        limits = st.none()
    return st.builds(
        RunConfig,
        max_duration=limits,
        resume=st.sampled_from(ResumeMode),
        data=st.sampled_from(DataPolicy),
    )


def _check_flag(name: str, value: object) -> None:
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{name}={value!r}: expected True, False or None (either)")


def orders() -> st.SearchStrategy[Order]:
    """Data orders (semantics.md rule 19): in order, or shuffled with any 64-bit seed."""
    return st.just(Order.sequential()) | st.integers(0, 2**64 - 1).map(Order.shuffled)


def plans(
    *,
    max_calls: int = 4,
    units: Sequence[Unit | str] = ("ba", "sp", "ep", "tok"),
    resumed: bool | None = None,
) -> st.SearchStrategy[Plan]:
    """Plans of ``scenarios(max_calls=, units=)``: from the start, or (``resumed``) the plan of
    the same script from the checkpoint its own plan writes after a drawn step, under a drawn
    resume mode and data policy (``None``: either)."""
    _check_int("max_calls", max_calls, minimum=1)
    _units(units)
    _check_flag("resumed", resumed)

    @st.composite
    def build(draw: st.DrawFn) -> Plan:
        scenario = draw(scenarios(max_calls=max_calls, units=units))
        full = plan(scenario.config, scenario.calls)
        if not (draw(st.booleans()) if resumed is None else resumed):
            return full
        checkpoint = full.checkpoint_at(draw(st.integers(0, full.total_steps)))
        config = attrs.evolve(
            scenario.config,
            resume=draw(st.sampled_from(ResumeMode)),
            data=draw(st.sampled_from(DataPolicy)),
        )
        return plan(config, scenario.calls, checkpoint)

    return build()


def checkpoints(
    *,
    scenario: Scenario | None = None,
    ledger: bool = True,
    max_calls: int = 4,
) -> st.SearchStrategy[Checkpoint]:
    """Checkpoints ``plan()`` takes up: the one the plan of ``scenario`` (default: one drawn
    from ``scenarios(max_calls=)``) writes after a drawn step, ledger included. With
    ``ledger=False``, only its progress, as another trainer's checkpoint has (the planner
    locates it in the script's plan), with or without loader state."""
    if scenario is not None and not isinstance(scenario, Scenario):
        raise ValueError(f"scenario={scenario!r}: expected a Scenario or None (draw one)")
    if not isinstance(ledger, bool):
        raise ValueError(f"ledger={ledger!r}: expected True or False")
    _check_int("max_calls", max_calls, minimum=1)
    runs = st.just(scenario) if scenario is not None else scenarios(max_calls=max_calls)

    @st.composite
    def build(draw: st.DrawFn) -> Checkpoint:
        run = draw(runs)
        full = plan(attrs.evolve(run.config, resume=ResumeMode.CONTINUE), run.calls)
        written = full.checkpoint_at(draw(st.integers(0, full.total_steps)))
        if ledger:
            return written
        return Checkpoint(progress=written.progress, loader_state=draw(st.booleans()))

    return build()


def crash_schedules(
    *, total_steps: int, max_crashes: int = 3
) -> st.SearchStrategy[tuple[int, ...]]:
    """Plan steps after which the process dies (each after its checkpoint is written): sorted,
    distinct, between 1 and ``total_steps - 1``."""
    _check_int("total_steps", total_steps, minimum=0)
    _check_int("max_crashes", max_crashes, minimum=0)
    if total_steps < 2:
        return st.just(())
    return st.lists(st.integers(1, total_steps - 1), max_size=max_crashes, unique=True).map(
        lambda steps: tuple(sorted(steps))
    )


# -- what st.from_type draws for every public value type ----------------------------------------


def _shardings() -> st.SearchStrategy[Sharding]:
    return st.builds(
        Sharding,
        world_size=st.integers(1, 8),
        device_batch_size=st.integers(1, 8),
        accumulation=st.integers(1, 4),
        padding=st.sampled_from(Padding),
    )


@st.composite
def _epoch_tails(draw: st.DrawFn) -> EpochTail:
    """What a drawn sharding does to the end of an epoch read from a drawn position."""
    samples = draw(st.integers(1, 60))
    return draw(_shardings()).tail(
        samples=samples, position=draw(st.integers(0, samples)), drop_last=draw(st.booleans())
    )


@st.composite
def _tail_ranges(draw: st.DrawFn) -> TailRange:
    first, epochs, samples = (
        draw(st.integers(0, 50)),
        draw(st.integers(1, 5)),
        draw(st.integers(1, 60)),
    )
    tail = draw(_shardings()).tail(samples=samples, position=0, drop_last=draw(st.booleans()))
    return TailRange(
        first=first,
        last=first + epochs - 1,
        samples=samples,
        repeated=tail.repeated,
        dropped=tail.dropped,
    )


def _segments() -> st.SearchStrategy[Segment]:
    return plans().flatmap(lambda drawn: st.sampled_from(drawn.segments))


@st.composite
def _sample_ranges(draw: st.DrawFn) -> SampleRange:
    start = draw(st.integers(0, 10**6))
    return SampleRange(draw(st.integers(0, 10**4)), start, start + draw(st.integers(0, 10**4)))


def _landmarks() -> st.SearchStrategy[Landmark]:
    calls = st.integers(0, 9) | st.sampled_from(["pretrain", "anneal"])
    return st.one_of(st.just(END), calls.map(Landmark.call_start), calls.map(Landmark.call_stop))


def _schedules() -> st.SearchStrategy[Schedule]:
    """A warmup in steps, then a decay to the plan's end (or nothing more)."""

    def build(warmup: Time, to: Any, shape: str) -> Schedule:
        schedule = Schedule.warmup(warmup)
        if shape == "linear":
            return schedule.then_linear(to=to, until=END)
        if shape == "cosine":
            return schedule.then_cosine(to=to, until=END)
        return schedule

    return st.builds(
        build,
        times(units=["ba"], max_value=30),
        st.fractions(0, 1, max_denominator=10),
        st.sampled_from(["linear", "cosine", "none"]),
    )


@st.composite
def _resolved_schedules(draw: st.DrawFn) -> ResolvedSchedule:
    """A schedule whose every boundary a drawn plan reaches, placed on it."""
    drawn, schedule = draw(plans()), draw(_schedules())
    try:
        return schedule.resolve(drawn, on_extend=draw(st.sampled_from(["stretch", "rewarm"])))
    except ScheduleError:
        return Schedule.constant(schedule.initial).resolve(drawn, on_extend="rewarm")


@st.composite
def _events(draw: st.DrawFn) -> Events:
    drawn = draw(plans())
    steps = times(units=["ba"], max_value=40).filter(lambda t: t.value > 0).map(Every)
    interval: Every | AtCallEnds = draw(st.one_of(st.just(AtCallEnds()), steps))
    return interval.resolve(drawn)


#: For each public value type: the strategy ``st.from_type`` draws it with (the hypothesis entry
#: point registers them). Enums are drawn by hypothesis itself.
_STRATEGIES: dict[type, Callable[[], st.SearchStrategy[Any]]] = {
    At: lambda: st.builds(At, st.lists(st.one_of(times(), _landmarks()), min_size=1, max_size=4)),
    AtCallEnds: lambda: st.just(AtCallEnds()),
    Checkpoint: checkpoints,
    Diagnostic: lambda: st.builds(
        Diagnostic,
        code=st.sampled_from(sorted(CODES)),
        message=st.text(min_size=1, max_size=40),
        call=st.none() | st.sampled_from(["#0", "#1", "pretrain"]),
    ),
    EpochTail: _epoch_tails,
    Events: _events,
    Every: lambda: times().filter(lambda t: t.value > 0).map(Every),
    FitCall: fit_calls,
    Landmark: _landmarks,
    LedgerEntry: lambda: _segments().map(lambda segment: segment.entry),
    Interleave: lambda: st.lists(st.integers(1, 9), min_size=1, max_size=4).map(
        lambda weights: Interleave.of(*weights)
    ),
    Loader: loaders,
    Mixture: mixtures,
    Order: orders,
    Plan: plans,
    Progress: progresses,
    ResolvedSchedule: _resolved_schedules,
    RunConfig: run_configs,
    SampleRange: _sample_ranges,
    Scenario: scenarios,
    Schedule: _schedules,
    Segment: _segments,
    Sharding: _shardings,
    Source: lambda: mixtures().flatmap(lambda mixture: st.sampled_from(mixture.sources)),
    SourceReads: st.composite(_source_reads),
    TailRange: _tail_ranges,
    TakenUp: lambda: st.builds(
        TakenUp, st.sampled_from([ResumeMode.EXTEND, ResumeMode.WEIGHTS]), st.integers(0, 10**6)
    ),
    Time: times,
}


def _strategy_for(kind: type) -> st.SearchStrategy[Any]:
    """What ``st.from_type(kind)`` draws; a type without a strategy is refused, saying so."""
    make = _STRATEGIES.get(kind)
    if make is None:
        raise ResolutionFailed(
            f"durations.testing has no strategy for {kind.__name__}; build one from its "
            "named constructors, or from a plan drawn with durations.testing.plans()"
        )
    return make()


# -- what a plan trains, step by step ----------------------------------------------------------


@attrs.frozen
class StepRecord:
    """One optimizer step as a trainer ran it: the call, the loader, the lifetime epoch, and the
    indices (within that loader's epoch) of the samples in its batch."""

    call: str
    loader: str | None
    epoch: int
    samples: tuple[int, ...]

    def __str__(self) -> str:
        ids, loader = _ranges(self.samples), self.loader or "its loader"
        return f"call {self.call} read samples {ids} of {loader} in epoch {self.epoch}"


def _ranges(ids: Sequence[int]) -> str:
    if not ids:
        return "none"
    if list(ids) == list(range(ids[0], ids[0] + len(ids))):
        return f"{ids[0]}-{ids[-1]}" if len(ids) > 1 else str(ids[0])
    return ",".join(map(str, ids))


def expected_steps(plan: Plan) -> list[StepRecord]:
    """Every step ``plan`` trains, in order, with the samples each reads (in-epoch indices, in
    the loader's order). A data-parallel loader's step lists the samples of all its ranks,
    sorted, a repeated sample as often as it is read. Costs one record per step: for tests, on
    small plans."""
    return [
        StepRecord(segment.name, segment.loader.name, read.epoch, _samples(segment.loader, read))
        for segment in plan.segments
        for read in segment.reads()
    ]


def _samples(loader: Loader, read: SampleRange) -> tuple[int, ...]:
    positions = range(read.start, read.stop)
    if loader.sharding is None or loader.samples is None:
        return tuple(positions)
    return tuple(sorted(sample_at(position, loader.samples) for position in positions))


# -- the conformance harness ---------------------------------------------------------------------


class ConformanceError(DurationsError, AssertionError):
    """A trainer trained something other than the plan. The message says where, in words."""


#: What a trainer under test exposes: run ``scenario`` from scratch, dying after each step in
#: ``crashes`` (having checkpointed there) and restarting the same script, and return every
#: step it trained, in order, across all restarts.
TrainerUnderTest = Callable[[Scenario, tuple[int, ...]], Sequence[StepRecord]]


def compare(scenario: Scenario, crashes: tuple[int, ...], actual: Sequence[StepRecord]) -> None:
    """Raise :class:`ConformanceError` unless ``actual`` is exactly the plan of ``scenario``."""
    expected = expected_steps(plan(scenario.config, scenario.calls))
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if want != got:
            raise ConformanceError(
                _mismatch(scenario, crashes, index, f"expected {want}; the trainer {_got(got)}")
            )
    if len(actual) != len(expected):
        index = min(len(actual), len(expected))
        if len(actual) > len(expected):
            detail = f"the plan ends after {len(expected)} steps; the trainer {_got(actual[index])}"
        else:
            detail = f"expected {expected[index]}; the trainer stopped after {len(actual)} steps"
        raise ConformanceError(_mismatch(scenario, crashes, index, detail))


def _got(record: StepRecord) -> str:
    return "trained " + str(record).replace("call ", "call ", 1)


def _mismatch(scenario: Scenario, crashes: tuple[int, ...], index: int, detail: str) -> str:
    return (
        f"step {index + 1} differs from the plan: {detail}\n"
        f"scenario:\n{describe(scenario)}\ncrashes after steps: {list(crashes) or 'none'}"
    )


def describe(scenario: Scenario) -> str:
    """A scenario as the TOML that states it (for failure reports)."""
    lines = ["[run]"]
    if scenario.config.max_duration is not None:
        lines.append(f'max_duration = "{scenario.config.max_duration}"')
    for name, loader in scenario.loaders.items():
        lines.append(f"[loaders.{name}]")
        lines.append(f"samples = {loader.samples}")
        if loader.sharding is None:
            lines.append(f"batch_size = {loader.batch_size}")
        else:
            sharding = loader.sharding
            lines.append(f"world_size = {sharding.world_size}")
            lines.append(f"device_batch_size = {sharding.device_batch_size}")
            lines.append(f"accumulation = {sharding.accumulation}")
            lines.append(f'padding = "{sharding.padding.value}"')
        if loader.drop_last:
            lines.append("drop_last = true")
        if loader.tokens_per_sample is not None:
            lines.append(f"tokens_per_sample = {loader.tokens_per_sample}")
    for call in scenario.calls:
        lines.append("[[fit]]")
        lines.append(f'loader = "{call.loader.name}"')
        for key in ("duration", "until"):
            value = getattr(call, key)
            if value is not None:
                lines.append(f'{key} = "{value}"')
        if call.reset_time:
            lines.append("reset_time = true")
    return "\n".join(lines)


def check_trainer(
    trainer: TrainerUnderTest,
    *,
    max_examples: int = 100,
    max_crashes: int = 3,
    scenario_strategy: st.SearchStrategy[Scenario] | None = None,
) -> None:
    """Check ``trainer`` against the plan on generated scenarios with crashes.

    On a mismatch, hypothesis shrinks to the smallest scenario and crash schedule that still
    fails, and :class:`ConformanceError` reports it with the first diverging step, expected and
    actual in words.
    """
    _check_int("max_examples", max_examples, minimum=1)
    strategy = scenarios() if scenario_strategy is None else scenario_strategy

    @settings(max_examples=max_examples, deadline=None, database=None, report_multiple_bugs=False)
    @given(strategy, st.data())
    def conformance(scenario: Scenario, data: st.DataObject) -> None:
        total = plan(scenario.config, scenario.calls).total_steps
        crashes = data.draw(crash_schedules(total_steps=total, max_crashes=max_crashes))
        compare(scenario, crashes, trainer(scenario, crashes))

    conformance()
