"""``durations`` as an oracle in a trainer's own tests: hypothesis strategies and a conformance
harness. Needs the ``testing`` extra (``pip install 'training-durations[testing]'``).

The strategies are registered with hypothesis, so ``st.from_type(Time)`` and friends work once
this package is installed. The harness (:func:`check_trainer`) runs generated scenarios, with
crashes, on a trainer under test and compares every step it trained with the plan.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import attrs

try:
    from hypothesis import given, settings, strategies as st
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "durations.testing needs hypothesis: pip install 'training-durations[testing]'"
    ) from error

from .errors import DurationsError, GeometryError
from .fit import FitCall, RunConfig
from .loader import Loader
from .planner import plan
from .plans import Plan, SampleRange
from .progress import Progress
from .scenario import Scenario
from .sharding import Padding, sample_at
from .time import Time
from .units import Unit

__all__ = [
    "ConformanceError",
    "StepRecord",
    "check_trainer",
    "crash_schedules",
    "expected_steps",
    "fit_calls",
    "loaders",
    "progresses",
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
) -> st.SearchStrategy[Loader]:
    """Valid ``Loader`` geometries, small by default so a trainer can run them.

    ``sized`` and ``tokens`` force a known length or token count (``None``: either). With
    ``max_world_size`` above 1, some loaders are data-parallel (``Loader.sharded``): up to
    that many ranks, micro-batches up to ``max_batch_size``, accumulation up to 3, any padding.
    """
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
        if max_world_size > 1 and draw(st.booleans()):
            return _sharded(draw, samples, batch, per_sample, name, max_world_size)
        return Loader(
            samples=samples,
            batch_size=batch,
            drop_last=drop_last,
            tokens_per_sample=per_sample,
            name=name,
        )

    return build()


def _sharded(
    draw: st.DrawFn,
    samples: int | None,
    micro: int,
    per_sample: int | None,
    name: str | None,
    max_world_size: int,
) -> Loader:
    """A data-parallel loader; a geometry whose epoch would train nothing reads unpadded."""
    world = draw(st.integers(1, max_world_size))
    accumulation = draw(st.integers(1, 3))
    padding = draw(st.sampled_from([p.value for p in Padding]))
    drop_last = draw(st.booleans())
    try:
        return Loader.sharded(
            samples=samples,
            world_size=world,
            device_batch_size=micro,
            accumulation=accumulation,
            padding=padding,
            drop_last=drop_last,
            tokens_per_sample=per_sample,
            name=name,
        )
    except GeometryError:
        return Loader.sharded(
            samples=samples,
            world_size=world,
            device_batch_size=micro,
            accumulation=accumulation,
            tokens_per_sample=per_sample,
            name=name,
        )


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
    loaders: Sequence[Loader],
    units: Sequence[Unit | str] = ("ba", "sp", "ep", "tok"),
    reset_time: bool = True,
) -> st.SearchStrategy[FitCall]:
    """Fit calls on one of ``loaders``: a relative duration, an absolute target, or neither,
    in one of ``units``; with ``reset_time`` now and then when allowed."""
    if not loaders:
        raise ValueError("loaders=[]: expected at least one Loader")
    chosen = [Unit(u) for u in units]
    if not chosen:
        raise ValueError("units=[]: expected at least one unit")

    @st.composite
    def build(draw: st.DrawFn) -> FitCall:
        loader = draw(st.sampled_from(list(loaders)))
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
) -> st.SearchStrategy[Scenario]:
    """Whole runs: named, sized loaders with known tokens, a ``max_duration``, and fit calls.

    With ``"dur"`` among ``units``, calls may ask for a fraction of ``max_duration``, which is
    always drawn in one of the other units. ``max_world_size`` above 1 makes some loaders
    data-parallel (see :func:`loaders`).
    """
    _check_int("max_calls", max_calls, minimum=1)
    _check_int("max_loaders", max_loaders, minimum=1)
    chosen = [Unit(u) for u in units]

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
