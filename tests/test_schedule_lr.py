"""The learning rate at a step (docs/semantics.md, S1): ``ResolvedSchedule.lr(k, base)`` works out
once per piece what it needs, and must give the very floats of the formulas as first written
(kept below): an exact factor times the exact base rounded once, a float factor times
``float(base)``. A rate off by one bit, of another type, or raising where the formula does not
(or the other way round) breaks the relation."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from fractions import Fraction

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from durations import (
    END,
    FitCall,
    Loader,
    Plan,
    ResolvedSchedule,
    RunConfig,
    Schedule,
    ScheduleError,
    plan,
)
from durations._factors import MAX_FACTOR
from durations.schedules import ResolvedPiece, Value
from durations.testing import crash_schedules

from .test_schedules import _resolve, resolved, runs, schedules

# -- the formulas as first written (durations/schedules.py before the rates were precomputed) ----

_EXACT_COS = {
    Fraction(0): Fraction(1),
    Fraction(1, 3): Fraction(1, 2),
    Fraction(1, 2): Fraction(0),
    Fraction(2, 3): Fraction(-1, 2),
    Fraction(1): Fraction(-1),
}


def _cos_pi(progress: Fraction) -> Value:
    exact = _EXACT_COS.get(progress)
    return exact if exact is not None else math.cos(math.pi * float(progress))


def _sqrt_ratio(numerator: int, denominator: int) -> Value:
    ratio = Fraction(numerator, denominator)
    top, bottom = math.isqrt(ratio.numerator), math.isqrt(ratio.denominator)
    if top * top == ratio.numerator and bottom * bottom == ratio.denominator:
        return Fraction(top, bottom)
    return math.sqrt(ratio)


def _value(piece: ResolvedPiece, step: int, origin: int) -> Value:
    kind, start, v0, v1 = piece.piece.kind, piece.start, piece.start_value, piece.stop_value
    if kind == "constant":
        return v0
    if kind == "drops":
        gamma = piece.piece.gamma
        assert gamma is not None
        return v0 * gamma ** bisect.bisect_right(piece.drops, step)
    if step == start:
        return v0
    if kind == "inverse_sqrt":
        scale = start - origin
        return v0 * _sqrt_ratio(scale, scale + step - start)
    progress = Fraction(step - start, piece.stop - start)
    if kind == "cosine":
        return v1 + (v0 - v1) * (1 + _cos_pi(progress)) / 2
    if kind == "exponential":
        return float(v0) * math.pow(float(v1 / v0), float(progress))
    return v0 + (v1 - v0) * progress


def reference_factor(curve: ResolvedSchedule, step: int) -> Value:
    bounds = (curve.start, *(piece.stop for piece in curve.pieces))
    index = bisect.bisect_right(bounds, step) - 1
    if index >= len(curve.pieces):
        return curve.final
    return _value(curve.pieces[index], step, curve.start)


def reference_lr(curve: ResolvedSchedule, step: int, base: float | Fraction | int) -> float:
    factor = reference_factor(curve, step)
    if isinstance(factor, Fraction):
        return float(factor * Fraction(base))
    return factor * float(base)


# -- comparing outcomes bit for bit --------------------------------------------------------------


def outcome(compute: Callable[..., object], *args: object) -> tuple[object, ...]:
    """What ``compute(*args)`` gives, told apart to the bit: its type and its exact value (a
    float's hex, so -0.0 is not 0.0), or the type and message of what it raises."""
    try:
        value = compute(*args)
    except (ArithmeticError, ValueError) as error:
        return ("raises", type(error), str(error))
    if isinstance(value, float):
        return (float, value.hex())
    return (type(value), value)


#: Bases a trainer passes (floats, as the torch scheduler does), exact ones, and the edges of a
#: float: subnormal and huge products, a base too large for a float, signed zeros, inf and NaN.
bases = st.one_of(
    st.floats(min_value=0, max_value=10),
    st.fractions(0, 10, max_denominator=10**6),
    st.integers(0, 10**6),
    st.sampled_from([3e-4, 0.1, 1.0, 5e-324, 1e-310, 1.7e308, 10**400, Fraction(10**400, 7)]),
    st.sampled_from([-0.0, -1e-4, 0, float("inf"), float("nan")]),
)


def assert_same_rates(curve: ResolvedSchedule, steps: range, chosen: list[float]) -> None:
    """At every step of ``steps``, factor and lr are what the formulas give, to the bit."""
    for k in steps:
        assert outcome(curve.factor, k) == outcome(reference_factor, curve, k)
        for base in chosen:
            assert outcome(curve.lr, k, base) == outcome(reference_lr, curve, k, base), (k, base)


@st.composite
def taken_up(draw: st.DrawFn) -> tuple[Plan, ResolvedSchedule]:
    """A schedule on a plan that took a checkpoint up (extend or weights), or on a resumed plan:
    curves that start after step 0, or whose pieces start from another origin."""
    scenario = draw(runs)
    config, calls = scenario.config, scenario.calls
    before = plan(config, calls)
    taken = before.checkpoint_at(draw(st.integers(0, before.total_steps)))
    mode = draw(st.sampled_from(["continue", "extend", "weights"]))
    on = plan(attrs.evolve(config, resume=mode), calls, taken)
    on_extend = draw(st.sampled_from(["stretch", "rewarm"]))
    schedule = draw(schedules(on, on_extend))
    return on, _resolve(schedule, on, on_extend)


class TestRateAtAStep:
    """S1: ``lr(k, base)`` rounds ``base`` times the factor to a float once: an exact factor
    times the exact value of ``base``, rounded once; a float factor times ``float(base)``."""

    @settings(max_examples=200)
    @given(resolved(), st.lists(bases, min_size=1, max_size=4))
    def test_same_floats_as_the_formulas(
        self, case: tuple[Plan, Schedule, ResolvedSchedule], chosen: list[float]
    ) -> None:
        """Every step of a generated schedule, past its end too: the formulas' floats."""
        on, _, curve = case
        assert_same_rates(curve, range(curve.start, on.stop.batch + 3), chosen)

    @settings(max_examples=100)
    @given(taken_up(), st.lists(bases, min_size=1, max_size=3), st.data())
    def test_same_floats_after_taking_up(
        self, case: tuple[Plan, ResolvedSchedule], chosen: list[float], data: st.DataObject
    ) -> None:
        """On plans from a checkpoint (continue, extend both ways, weights), and on the plans
        of crashes after them: the formulas' floats."""
        on, curve = case
        assert_same_rates(curve, range(curve.start, on.stop.batch + 2), chosen)
        for crash in data.draw(crash_schedules(total_steps=on.total_steps)):
            resumed = plan(
                attrs.evolve(on.config, resume="continue"), on.calls, on.checkpoint_at(crash)
            )
            again = resumed.start.batch
            assert_same_rates(curve, range(again, min(again + 5, on.stop.batch + 2)), chosen)

    @pytest.mark.parametrize(
        ("schedule", "steps"),
        [
            # 2000 steps of a cosine: thirds and the half of it are exact, the rest is a float
            (Schedule.warmup("100ba").then_cosine(to=Fraction(1, 10), until=END), range(2101)),
            # an exponential decay over 1999 steps, from a warmup's exact 1
            (Schedule.warmup("101ba").then_exponential(to="0.01", until=END), range(2101)),
            # inverse square root: exact wherever t * (t + j) is a square (t = 100: j = 21, 44...)
            (Schedule.warmup("100ba").then_inverse_sqrt(until=END), range(2101)),
            # linear and constant pieces after a float (1/sqrt's end) are float pieces
            (
                Schedule.warmup("100ba")
                .then_inverse_sqrt(until="150ba")
                .then_linear(to=0, until="1000ba")
                .then_constant(until="1500ba")
                .then_cosine(to="0.5", until=END),
                range(2101),
            ),
            # 70 drops: more than the levels worked out once; each step's level then
            (
                Schedule.constant(3).then_drops(
                    at=[f"{10 * i}ba" for i in range(1, 71)], gamma="0.9", until=END
                ),
                range(2101),
            ),
        ],
    )
    def test_long_pieces(self, schedule: Schedule, steps: range) -> None:
        """Pieces of thousands of steps, every step, for bases a trainer uses."""
        loader = Loader(samples=700, batch_size=1)
        p = plan(RunConfig(max_duration="2100ba"), [FitCall(loader=loader)])
        assert_same_rates(schedule.resolve(p), steps, [3e-4, 0.1, 1.0, 7, Fraction(1, 3)])

    @pytest.mark.parametrize(
        ("schedule", "step", "factor"),
        [
            (Schedule.warmup("4ba"), 0, Fraction(0)),  # a warmup's start
            (Schedule.warmup("4ba"), 3, Fraction(3, 4)),  # inside it
            (Schedule.warmup("4ba"), 4, Fraction(1)),  # its end: 1 exactly
            (Schedule.constant().then_cosine(to=0, until=END), 2, Fraction(3, 4)),  # a third in
            (Schedule.constant().then_cosine(to=0, until=END), 3, Fraction(1, 2)),  # halfway
            (Schedule.constant().then_cosine(to=0, until=END), 4, Fraction(1, 4)),  # two thirds
            (Schedule.constant().then_cosine(to="0.1", until=END), 6, Fraction(1, 10)),  # floor
            (Schedule.constant().then_exponential(to="0.5", until=END), 6, Fraction(1, 2)),  # end
            (Schedule.warmup("1ba").then_inverse_sqrt(until=END), 4, Fraction(1, 2)),  # 1*4 = 2**2
            (Schedule.warmup("1ba").then_inverse_sqrt(until=END), 1, Fraction(1)),  # its start
            (Schedule.constant("0.5").then_drops(at="3ba", gamma="0.1", until=END), 3,
             Fraction(1, 20)),  # a drop applies from its step
        ],
    )  # fmt: skip
    def test_exact_points(self, schedule: Schedule, step: int, factor: Fraction) -> None:
        """Where the factor is rational, lr is the exact product rounded once."""
        p = plan(RunConfig(max_duration="6ba"), [FitCall(loader=Loader(samples=6, batch_size=1))])
        curve = schedule.resolve(p)
        assert curve.factor(step) == factor
        assert type(curve.factor(step)) is Fraction
        for base in (3e-4, 0.1, 1e-310, 7, Fraction(2, 3)):
            assert curve.lr(step, base) == float(factor * Fraction(base))

    def test_rounded_once(self) -> None:
        """Once, not twice: a seventh of 0.1 is 0.014285714285714287, the float nearest the exact
        product, where the float of 1/7 times 0.1 is 0.014285714285714285."""
        p = plan(RunConfig(max_duration="7ba"), [FitCall(loader=Loader(samples=7, batch_size=1))])
        curve = Schedule.warmup("7ba").resolve(p)
        assert curve.lr(1, 0.1) == 0.014285714285714287
        assert float(Fraction(1, 7)) * 0.1 == 0.014285714285714285

    @pytest.mark.parametrize(
        "schedule",
        [
            # The largest factor (MAX_FACTOR) times a base near the float's limit, or past it.
            Schedule.constant(MAX_FACTOR).then_cosine(to=0, until=END),
            Schedule.constant(MAX_FACTOR).then_exponential(to=1, until=END),
            Schedule.warmup("1ba")
            .then_constant(until="1ba", value=MAX_FACTOR)
            .then_inverse_sqrt(until="4ba"),  # float(v0) inside 1/sqrt (exact at its end)
            Schedule.constant(1).then_drops(at=["2ba", "4ba"], gamma=1000, until=END),
            Schedule.constant(MAX_FACTOR).then_linear(to=0, until=END),  # exact: rounds once
        ],
    )
    def test_rates_too_large_for_a_float(self, schedule: Schedule) -> None:
        """A rate too large for a float (factors are at most MAX_FACTOR, so only through the
        base) raises where the formulas raise, and only there."""
        p = plan(RunConfig(max_duration="6ba"), [FitCall(loader=Loader(samples=6, batch_size=1))])
        curve = schedule.resolve(p)
        bases = [1e-300, 1e-10, 1.0, 2, 1.7e308, 10**400, Fraction(1, 10**390)]
        assert_same_rates(curve, range(8), bases)

    @pytest.mark.parametrize(
        ("step", "base", "message"),
        [
            (1, "0.1", "invalid base learning rate '0.1': expected a number"),  # text
            (1, True, "invalid base learning rate True: expected a number"),  # a bool
            (-1, None, "invalid base learning rate None: expected a number"),  # base first
            (-1, 0.1, "invalid step -1: the schedule starts at lifetime step 0; the steps "
                      "before it belong to the run this plan took up"),  # before the curve
            (1.0, 0.1, "invalid step 1.0: expected a whole number of steps"),  # a float step
            (True, 0.1, "invalid step True: expected a whole number of steps"),  # a bool step
        ],
    )  # fmt: skip
    def test_invalid_arguments(self, step: int, base: float, message: str) -> None:
        """A step or a base that is not one is refused with the factor's own messages."""
        p = plan(RunConfig(max_duration="4ba"), [FitCall(loader=Loader(samples=4, batch_size=1))])
        curve = Schedule.warmup("2ba").then_cosine(to=0, until=END).resolve(p)
        with pytest.raises(ScheduleError) as error:
            curve.lr(step, base)
        assert str(error.value) == message

    def test_subclasses_of_numbers(self) -> None:
        """A subclass of int or float (an IntEnum step, a numpy-like float base) gives the same
        rate as the plain number."""

        class Step(int):
            pass

        class Base(float):
            pass

        p = plan(RunConfig(max_duration="9ba"), [FitCall(loader=Loader(samples=9, batch_size=1))])
        curve = Schedule.warmup("3ba").then_cosine(to=0, until=END).resolve(p)
        for k in range(10):
            assert curve.lr(Step(k), Base(0.1)).hex() == curve.lr(k, 0.1).hex()

    def test_a_value_still(self) -> None:
        """What lr works out on its first calls does not change the curve's equality, hash or
        repr, nor does it travel with a copy made by attrs.evolve."""
        p = plan(RunConfig(max_duration="9ba"), [FitCall(loader=Loader(samples=9, batch_size=1))])
        curve = Schedule.warmup("3ba").then_cosine(to=0, until=END).resolve(p)
        fresh = Schedule.warmup("3ba").then_cosine(to=0, until=END).resolve(p)
        before = (hash(curve), repr(curve))
        rates = [curve.lr(k, 0.1) for k in range(10)]
        assert curve == fresh
        assert (hash(curve), repr(curve)) == before
        assert [attrs.evolve(curve).lr(k, 0.1) for k in range(10)] == rates
