"""Schedules on the plan (docs/semantics.md, "Schedules and intervals"). Each class is one rule;
a schedule that moved with a crash, a boundary placed off the plan's steps, or a piece that
missed its endpoint breaks the relation its tests state."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction

import attrs
import pytest
from hypothesis import assume, given, settings, strategies as st

from durations import (
    END,
    FitCall,
    Landmark,
    Loader,
    OnExtend,
    Plan,
    ResolvedSchedule,
    RunConfig,
    Schedule,
    ScheduleError,
    Time,
    plan,
)
from durations.errors import TimeParseError
from durations.schedules import Boundary, Piece
from durations.testing import crash_schedules, scenarios

UNITS = ("ba", "sp", "ep", "tok", "dur")
runs = scenarios(units=UNITS, max_world_size=3)


def _place(time: Boundary, on: Plan, on_extend: str | None = None) -> int | None:
    """Where ``time`` falls on ``on``, or ``None`` if the plan never reaches it."""
    try:
        return Schedule.constant(until=time).resolve(on, on_extend=on_extend).pieces[0].stop
    except ScheduleError:
        return None


@st.composite
def boundaries(draw: st.DrawFn, on: Plan, on_extend: str | None = None) -> list[Boundary]:
    """Times in every unit, and landmarks, that ``on`` reaches; sorted by where they fall."""
    candidates: list[Boundary] = [END]
    for segment in on.segments:
        candidates += [Landmark.call_start(segment.index), Landmark.call_stop(segment.name)]
    for _ in range(draw(st.integers(1, 6))):
        unit = draw(st.sampled_from(UNITS))
        if unit == "ep":
            value: int | Fraction = draw(st.fractions(0, 3, max_denominator=8))
        elif unit == "dur":
            value = draw(st.fractions(0, 1, max_denominator=8))
        else:
            value = draw(st.integers(0, {"ba": 60, "sp": 300, "tok": 1500}[unit]))
        candidates.append(Time(value, unit))
    placed = [
        (step, i, b)
        for i, b in enumerate(candidates)
        if (step := _place(b, on, on_extend)) is not None
    ]
    chosen = draw(st.lists(st.sampled_from(placed), min_size=1, max_size=5, unique=True))
    return [b for _, _, b in sorted(chosen)]


factors = st.fractions(0, 2, max_denominator=10)


@st.composite
def schedules(draw: st.DrawFn, on: Plan, on_extend: str | None = None) -> Schedule:
    """A schedule of random pieces whose boundaries are in order on ``on``."""
    ends = draw(boundaries(on, on_extend))
    if draw(st.booleans()):
        schedule = Schedule.warmup(ends.pop(0), initial=draw(st.sampled_from([0, Fraction(1, 10)])))
    else:
        schedule = Schedule.constant(draw(factors))
    previous: Boundary | None = None
    for until in ends:
        kind = draw(
            st.sampled_from(["constant", "jump", "linear", "cosine", "exp", "isqrt", "drops"])
        )
        if kind == "exp" and not schedule._ends_at_zero():
            schedule = schedule.then_exponential(to=draw(factors.filter(bool)), until=until)
        elif kind == "isqrt" and schedule.pieces:
            schedule = schedule.then_inverse_sqrt(until=until)
        elif kind == "drops":
            at = [until] if previous is None else [previous, until]  # at its start and end
            schedule = schedule.then_drops(
                at=at, gamma=draw(st.fractions(0, 1, max_denominator=10)), until=until
            )
        elif kind == "jump":
            schedule = schedule.then_constant(until=until, value=draw(factors))
        elif kind == "cosine":
            schedule = schedule.then_cosine(to=draw(factors), until=until)
        elif kind == "linear":
            schedule = schedule.then_linear(to=draw(factors), until=until)
        else:
            schedule = schedule.then_constant(until=until)
        previous = until
    return schedule


def _resolve(schedule: Schedule, on: Plan, on_extend: str | None = None) -> ResolvedSchedule:
    try:
        return schedule.resolve(on, on_extend=on_extend)
    except ScheduleError as error:
        # The only piece that can fail on boundaries in order: 1/sqrt from the schedule's start.
        message = str(error)
    assert "time scale" in message
    assume(False)
    raise AssertionError(message)


@st.composite
def resolved(draw: st.DrawFn) -> tuple[Plan, Schedule, ResolvedSchedule]:
    scenario = draw(runs)
    on = plan(scenario.config, scenario.calls)
    schedule = draw(schedules(on))
    return on, schedule, _resolve(schedule, on)


class TestValueAtAStep:
    """S1: the factor at lifetime step ``k`` is the factor of the optimizer step from ``k`` to
    ``k + 1`` (torch's LambdaLR: step ``k + 1`` uses ``lr_lambda(k)``), a pure function of k."""

    def test_lambda_lr_convention(self) -> None:
        """A warmup over 4 steps trains its first step at 0 and its fifth at the full rate."""
        p = plan(RunConfig(max_duration="8ba"), [FitCall(loader=Loader(samples=8, batch_size=1))])
        curve = Schedule.warmup("4ba").resolve(p)
        assert [curve.factor(k) for k in range(6)] == [0, Fraction(1, 4), Fraction(1, 2),
                                                       Fraction(3, 4), 1, 1]  # fmt: skip
        assert curve.lr(2, 0.1) == 0.05

    @settings(max_examples=50)
    @given(resolved())
    def test_pure(self, case: tuple[Plan, Schedule, ResolvedSchedule]) -> None:
        """Asking twice, or in another order, gives the same factor."""
        on, _, curve = case
        steps = list(range(on.stop.batch + 2))
        forward = [curve.factor(k) for k in steps]
        assert [curve.factor(k) for k in reversed(steps)] == forward[::-1]

    @pytest.mark.parametrize(
        ("step", "message"),
        [
            (-1, "invalid step -1: the schedule starts at lifetime step 0; the steps before it "
                 "belong to the run this plan took up"),  # before the curve
            (1.0, "invalid step 1.0: expected a whole number of steps"),  # a float step
            (True, "invalid step True: expected a whole number of steps"),  # a bool is no step
        ],
    )  # fmt: skip
    def test_invalid_steps(self, step: int, message: str) -> None:
        """A step that is not a whole number at or after the curve's start is refused."""
        p = plan(RunConfig(max_duration="4ba"), [FitCall(loader=Loader(samples=4, batch_size=1))])
        with pytest.raises(ScheduleError) as error:
            Schedule.warmup("2ba").resolve(p).factor(step)
        assert str(error.value) == message


class TestBoundaries:
    """S2: a time is placed at the first step boundary at or past it on the run clock (as
    targets are, and as ``Plan.resolve`` answers); a landmark at the plan's end or a call's
    start or stop; all on lifetime steps."""

    @settings(max_examples=50)
    @given(runs, st.data())
    def test_times_as_plan_resolve(self, scenario: object, data: st.DataObject) -> None:
        """On a plan from scratch, a time boundary falls where ``Plan.resolve`` says."""
        on = plan(scenario.config, scenario.calls)  # type: ignore[attr-defined]
        for boundary in data.draw(boundaries(on)):
            if isinstance(boundary, Time):
                assert _place(boundary, on) == on.resolve(boundary)

    @settings(max_examples=50)
    @given(runs)
    def test_landmarks(self, scenario: object) -> None:
        """Call landmarks are the segments' start and stop steps; END is the plan's stop."""
        on = plan(scenario.config, scenario.calls)  # type: ignore[attr-defined]
        assert _place(END, on) == on.total_steps
        for s in on.segments:
            assert _place(Landmark.call_start(s.name), on) == s.start_step
            assert _place(Landmark.call_stop(s.index), on) == s.stop_step

    def test_inside_a_step(self) -> None:
        """1000sp at 32 samples a step falls inside step 32: the boundary is step 32."""
        p = plan(
            RunConfig(max_duration="2000sp"), [FitCall(loader=Loader(samples=10**4, batch_size=32))]
        )
        curve = Schedule.warmup("1000sp").resolve(p)
        assert curve.pieces[0].stop == 32
        assert curve.factor(32) == 1

    def test_dur(self) -> None:
        """0.3dur of a 15ba run is 4.5ba: step 5."""
        p = plan(RunConfig(max_duration="15ba"), [FitCall(loader=Loader(samples=9, batch_size=1))])
        assert Schedule.warmup("0.3dur").resolve(p).pieces[0].stop == 5


class TestErrors:
    """S3: boundaries out of order or beyond the plan are errors that name the piece."""

    p = plan(
        RunConfig(max_duration="10ba"),
        [FitCall(loader=Loader(samples=10, batch_size=1), name="only")],
    )

    @pytest.mark.parametrize(
        ("schedule", "message"),
        [
            # Beyond the plan: the run stops at 10ba.
            (Schedule.warmup("20ba"),
             "pieces[0] (warmup until 20ba): 20ba is never reached in this plan, which ends at "
             "lifetime step 10 (or it cannot be measured on its calls' loaders); end the piece "
             "at END or earlier"),
            # Out of order: the linear piece ends before the warmup does.
            (Schedule.warmup("5ba").then_linear(to=0, until="3ba"),
             "pieces[1] (linear to 0 until 3ba) ends at lifetime step 3, before it starts (step "
             "5, where the previous piece ends): pieces must end in order"),
            # A drop outside its piece.
            (Schedule.warmup("5ba").then_drops(at=["2ba"], gamma=Fraction(1, 2), until=END),
             "pieces[1] (drops by 0.5 at 2ba until end): the drop at 2ba falls at lifetime step "
             "2, outside the piece (steps 5 to 10)"),
            # A call the script does not make.
            (Schedule.constant(until=Landmark.call_stop("other")),
             "pieces[0] (constant until stop of call 'other'): no call 'other' in this plan: "
             "expected a call name or position among 'only'"),
            # 1/sqrt needs the steps before it as its time scale.
            (Schedule.constant().then_inverse_sqrt(until=END),
             "pieces[0] (inverse_sqrt until end) starts where the schedule starts: its time "
             "scale (the steps before it) is 0; put a warmup or a constant piece before it"),
        ],
    )  # fmt: skip
    def test_resolve_errors(self, schedule: Schedule, message: str) -> None:
        """The message names the piece, where it falls, and what is valid."""
        with pytest.raises(ScheduleError) as error:
            schedule.resolve(self.p)
        assert str(error.value) == message
        assert error.value.piece is not None
        assert error.value.piece in message

    @pytest.mark.parametrize(
        ("build", "message"),
        [
            # A float is inexact.
            (lambda: Schedule.warmup("5ba").then_cosine(to=0.1, until=END),
             "invalid cosine floor 0.1: a float is inexact; pass an int, a Fraction such as "
             "Fraction(1, 10), or the text '0.1'"),
            # A factor of a learning rate is not negative.
            (lambda: Schedule.constant(-1), "invalid constant factor -1: a factor of the "
             "learning rate is >= 0"),
            # Exponential decay never reaches 0.
            (lambda: Schedule.constant().then_exponential(to=0, until=END),
             "invalid exponential piece to 0: a geometric curve runs between two factors > 0; "
             "use then_linear or then_cosine to reach 0 or leave it"),
            # ... nor leaves it.
            (lambda: Schedule.constant(0).then_exponential(to=1, until=END),
             "invalid exponential piece from 0 (the factor where it starts): a "
             "geometric curve runs between two factors > 0; use then_linear or then_cosine to "
             "reach 0 or leave it"),
            # Not a boundary.
            (lambda: Schedule.warmup(10), "invalid warmup end 10: expected a Time, a time string "
             "such as '2000ba' or '0.1dur', or a Landmark such as END"),
            # An unknown decay shape.
            (lambda: Schedule.warmup_stable_decay(warmup="1ba", decay_from="2ba", shape="exp"),
             "invalid decay shape 'exp': expected 'linear' or 'cosine'"),
            # on_extend takes two values.
            (lambda: Schedule.constant().resolve(TestErrors.p, on_extend="keep"),
             "invalid on_extend 'keep': expected 'stretch' or 'rewarm' (or None for a plan that "
             "does not extend a run)"),
        ],
    )  # fmt: skip
    def test_construction_errors(self, build: object, message: str) -> None:
        """Invalid values are refused when the schedule is built."""
        with pytest.raises(ScheduleError) as error:
            build()  # type: ignore[operator]
        assert str(error.value) == message

    @pytest.mark.parametrize(
        ("build", "message"),
        [
            # A call is a name or a position.
            (lambda: Landmark.call_start(""), "invalid call '': expected a call name (a "
             "non-empty string) or its position in the script (a whole number >= 0)"),
            (lambda: Landmark.call_stop(-1), "invalid call -1: expected a call name (a "
             "non-empty string) or its position in the script (a whole number >= 0)"),
            # Landmarks come from their constructors.
            (lambda: Landmark("middle"), "invalid landmark kind 'middle': expected 'end', "
             "'call_start' or 'call_stop'; build one with Landmark.end(), "
             "Landmark.call_start(call) or Landmark.call_stop(call)"),
            (lambda: Landmark("end", 1), "the end landmark names no call, got call=1"),
            # A factor is a number.
            (lambda: Schedule.constant("abc"), "invalid constant factor 'abc': malformed number "
             "'abc'; expected digits with an optional decimal point and exponent (such as '2.5' "
             "or '1e6'), or a ratio of whole numbers (such as '1/3'); '_' may only stand between "
             "two digits"),
            (lambda: Schedule.constant([0.1]), "invalid constant factor [0.1]: expected an int, "
             "a Fraction or a number string such as '0.1'"),
            # Pieces come from the then_* methods.
            (lambda: Piece("bogus", END), "invalid piece kind 'bogus': expected one of warmup, "
             "constant, linear, cosine, exponential, inverse_sqrt, drops"),
            (lambda: Piece("linear", END), "invalid linear piece: build pieces with the "
             "Schedule.then_* methods"),
            (lambda: Piece("linear", 5, to=Fraction(1)), "invalid piece end 5: expected a Time "
             "or a Landmark"),
            (lambda: Schedule(1, pieces=[1]), "invalid piece 1: build pieces with "
             "Schedule.then_*"),
            # Drops in order.
            (lambda: Schedule.constant().then_drops(at=["4ba", "2ba"], gamma=Fraction(1, 2),
                                                    until=END).resolve(TestErrors.p),
             "pieces[0] (drops by 0.5 at 4ba, 2ba until end): the drop times must be in order"),
            # A plan is needed.
            (lambda: Schedule.warmup("4ba").resolve("plan"), "expected a Plan, such as "
             "plan(config, calls, checkpoint), not 'plan'"),
            # A learning rate is a number.
            (lambda: Schedule.warmup("4ba").resolve(TestErrors.p).lr(5, "1"),
             "invalid base learning rate '1': expected a number"),
        ],
    )  # fmt: skip
    def test_value_errors(self, build: object, message: str) -> None:
        """Landmarks, factors, pieces and arguments that cannot mean anything are refused."""
        with pytest.raises(ScheduleError) as error:
            build()  # type: ignore[operator]
        assert str(error.value) == message

    def test_failed_call(self) -> None:
        """A call the plan could not plan has no start or stop to place a boundary on."""
        stream, sized = Loader(samples=None, batch_size=1), Loader(samples=4, batch_size=1)
        p = plan(RunConfig(), [FitCall(loader=stream, until="1ep", name="s"),
                               FitCall(loader=sized, until="3ba", name="t")])  # fmt: skip
        with pytest.raises(ScheduleError, match="call 's' could not be planned"):
            Schedule.constant(until=Landmark.call_stop("s")).resolve(p)
        assert Schedule.constant(until=Landmark.call_stop("t")).resolve(p).pieces[0].stop == 3

    def test_exact_inputs(self) -> None:
        """A decimal string or a Decimal is read exactly; one drop time needs no list."""
        assert Schedule.constant("0.1").initial == Fraction(1, 10)
        assert Schedule.constant(Decimal("0.5")).initial == Fraction(1, 2)
        drop = Schedule.constant().then_drops(at="4ba", gamma="0.5", until=END)
        assert drop.resolve(self.p).factor(4) == Fraction(1, 2)


# (factor given, the exact factor, or the refusal's reason after "invalid gamma ...: "; why)
FACTORS = [
    ("0.1", Fraction(1, 10), "a decimal string is exact"),
    (" 0.5\n", Fraction(1, 2), "surrounding ASCII whitespace is ignored, as in a time string"),
    ("1/3", Fraction(1, 3), "a ratio of whole numbers"),
    ("1_000", Fraction(1000), "'_' between digits"),
    (Decimal("0.25"), Fraction(1, 4), "a finite Decimal is exact"),
    (10**6, Fraction(10**6), "the largest factor"),
    ("1/0", "zero denominator in '1/0'", "was ZeroDivisionError"),
    ("0/0", "zero denominator in '0/0'", "was ZeroDivisionError"),
    ("1e5000", "exponent 5000 is out of range; at most 1000 in magnitude",
     "was Python's 4,300-digit limit"),
    ("1e100000000", "exponent 100000000 is out of range; at most 1000 in magnitude",
     "a 25-byte factor that hung"),
    ("1e309", "at most 1,000,000 (a factor multiplies the base learning rate)",
     "was an OverflowError under --json and --plot"),
    ("\u0661", "non-ASCII character '\u0661'; write the number with ASCII digits 0-9, such "
     "as '0.1'", "Fraction() reads an Arabic-Indic one; time strings refuse it"),
    ("\u2003 0.5", "non-ASCII character '\\u2003'; write the number with ASCII digits 0-9, "
     "such as '0.1'", "Unicode whitespace: Fraction() stripped it"),
    ("0. 5", "whitespace inside the number", "two tokens"),
    ("+1", "a sign is not allowed; write the number alone, such as '0.1'", "as in time strings"),
    ("-0.1", "negative; expected a number >= 0", "a factor is >= 0"),
    ("nan", "not a finite number; expected a number >= 0, such as '0.1'", "not a number"),
    ("1e-150", "too fine; an exact factor is a ratio of whole numbers of at most 100 digits "
     "each (this one's are 1 and 151)", "its products would grow without bound"),
    (Fraction(1, 10**5000), "too fine; an exact factor is a ratio of whole numbers of at most "
     "100 digits each (this one's are 1 and 5001)", "shown by its size: repr() cannot print it"),
    (Decimal("1e100000000"), "out of range; a factor is at most 1,000,000, a ratio of whole "
     "numbers of at most 100 digits each", "refused before Fraction() works out 10**1e8"),
    ("1" * 300, "too long; a number is at most 256 characters, whitespace included",
     "refused before any other work"),
    (0.1, "a float is inexact; pass an int, a Fraction such as Fraction(1, 10), or the text "
     "'0.1'", "floats are never taken"),
]  # fmt: skip


class TestFactors:
    """A factor is an exact number >= 0 by the number grammar of time strings, bounded."""

    @pytest.mark.parametrize(("given", "expected", "why"), FACTORS)
    def test_table(self, given: object, expected: Fraction | str, why: str) -> None:
        if isinstance(expected, Fraction):
            drops = Schedule.constant().then_drops(at=[], gamma=given, until=END).pieces[-1]
            assert drops.gamma == expected, why
            return
        with pytest.raises(ScheduleError) as error:
            Schedule.constant().then_drops(at=[], gamma=given, until=END)
        message = str(error.value)
        assert message.startswith("invalid gamma "), why
        assert message.endswith(f": {expected}"), why
        assert len(message) < 400, why

    @given(st.text(alphabet="0123456789./_eE+- \n", max_size=12))
    def test_the_grammar_of_a_time_s_number(self, text: str) -> None:
        """A factor string is accepted exactly when it is the number of a time string, with
        the same value: ``f`` as a factor is ``Time.parse(f + 'ep')``'s value."""
        try:
            expected: Fraction | None = Time.parse(text.strip(" \n") + "ep").value
        except TimeParseError:
            expected = None
        try:
            got: Fraction | None = Schedule.constant(text).initial
        except ScheduleError:
            got = None
        if (
            expected is not None
            and expected <= 10**6
            and max(expected.numerator, expected.denominator) < 10**100
        ):
            assert got == expected
        else:
            assert got is None

    def test_drops_are_bounded_before_their_power(self) -> None:
        """A drops piece whose exact factor would pass 1,000 digits (or 1,000,000) is refused
        at resolve, naming it; 100,000 drop times are refused when given, before any work."""
        p = plan(
            RunConfig(max_duration="5000ba"), [FitCall(loader=Loader(samples=10, batch_size=1))]
        )

        def drops(gamma: str, times: int) -> Schedule:
            at = [f"{k}ba" for k in range(1, times + 1)]
            return Schedule.constant().then_drops(at=at, gamma=gamma, until=END)

        # 0.9**999 is 9**999 / 10**999: 1,000 digits below, the most a reached factor has.
        assert drops("0.9", 999).resolve(p).final == Fraction(9, 10) ** 999
        assert drops("1/2", 1000).resolve(p).final == Fraction(1, 2**1000)  # 302 digits
        for gamma, times in (("0.9", 1000), ("0.123456789", 1000), ("2", 20)):  # 2**20 > 1e6
            refused = drops(gamma, times)
            with pytest.raises(ScheduleError) as error:
                refused.resolve(p)
            message = str(error.value)
            assert message.startswith("pieces[0] (drops by "), gamma
            assert len(message) < 400, gamma  # the piece is shown with its drop times elided
        with pytest.raises(ScheduleError, match="more than 1,000 drop times"):
            Schedule.constant().then_drops(
                at=(f"{k}ba" for k in range(1, 100_001)), gamma="0.9", until=END
            )

    def test_pieces_are_bounded(self) -> None:
        """At most 1,000 pieces: the 1,001st is refused with the count."""
        piece = Piece("constant", END)
        assert len(Schedule(1, [piece] * 1000).pieces) == 1000
        with pytest.raises(
            ScheduleError, match=r"^invalid schedule of 1,001 pieces: a schedule has at most 1,000$"
        ):
            Schedule(1, [piece] * 1001)


class TestPieces:
    """S4: each piece starts from the factor the previous one ended at, except a declared
    jump; a monotone piece is monotone; every piece reaches its target exactly at its end."""

    @given(resolved())
    def test_continuity(self, case: tuple[Plan, Schedule, ResolvedSchedule]) -> None:
        """The curve jumps only where a piece declares it (a constant with a level, a drop)."""
        _, schedule, curve = case
        level = schedule.initial
        for piece in curve.pieces:
            if not (piece.piece.kind == "constant" and piece.piece.value is not None):
                assert piece.start_value == level
            level = piece.stop_value
            if piece.start < piece.stop:
                dropped = sum(1 for d in piece.drops if d <= piece.start)  # drops at its start
                gamma = piece.piece.gamma if dropped else 1
                assert curve.factor(piece.start) == piece.start_value * gamma**dropped

    @given(resolved())
    def test_endpoints_exact(self, case: tuple[Plan, Schedule, ResolvedSchedule]) -> None:
        """A warmup, linear, cosine or exponential piece ends exactly (as a Fraction) at its
        target, and the curve holds the final factor from its last boundary on."""
        on, _, curve = case
        for piece in curve.pieces:
            if piece.piece.to is not None:
                assert type(piece.stop_value) is Fraction
                assert piece.stop_value == piece.piece.to
        last = curve.pieces[-1].stop if curve.pieces else curve.start
        for k in range(last, on.stop.batch + 3):
            assert curve.factor(k) == curve.final

    @given(resolved())
    def test_monotone(self, case: tuple[Plan, Schedule, ResolvedSchedule]) -> None:
        """Over each piece, from its start to the factor it reaches, the curve moves one way."""
        _, _, curve = case
        for piece in curve.pieces:
            values = [curve.factor(k) for k in range(piece.start, piece.stop)]
            values.append(piece.stop_value)
            down = piece.stop_value <= piece.start_value
            for before, after in itertools.pairwise(values):
                slack = 1e-12 if isinstance(before, float) or isinstance(after, float) else 0
                if down:
                    assert after <= before + slack
                else:
                    assert after >= before - slack

    @given(st.integers(1, 300), st.data())
    def test_warmup_then_cosine_exact_ends(self, total: int, data: st.DataObject) -> None:
        """Warmup reaches 1 exactly at its end; cosine hits its floor exactly at the end."""
        warmup = data.draw(st.integers(0, total - 1))
        floor = data.draw(factors.filter(lambda f: f <= 1))
        p = plan(
            RunConfig(max_duration=f"{total}ba"), [FitCall(loader=Loader(samples=7, batch_size=2))]
        )
        curve = Schedule.warmup(f"{warmup}ba").then_cosine(to=floor, until=END).resolve(p)
        assert curve.factor(warmup) == 1
        assert type(curve.factor(warmup)) is Fraction
        assert curve.factor(total) == floor
        assert type(curve.factor(total)) is Fraction

    def test_exact_inside_cosine(self) -> None:
        """Where cos is rational (a third, half, two thirds of the way), the factor is exact."""
        p = plan(RunConfig(max_duration="6ba"), [FitCall(loader=Loader(samples=6, batch_size=1))])
        curve = Schedule.constant().then_cosine(to=0, until=END).resolve(p)
        assert [curve.factor(k) for k in (0, 2, 3, 4, 6)] == [1, Fraction(3, 4), Fraction(1, 2),
                                                              Fraction(1, 4), 0]  # fmt: skip
        assert isinstance(curve.factor(1), float)

    def test_drops_and_inverse_sqrt(self) -> None:
        """Drops apply from the step they fall at (MultiStepLR); 1/sqrt is exact on squares."""
        p = plan(RunConfig(max_duration="16ba"), [FitCall(loader=Loader(samples=4, batch_size=1))])
        drops = Schedule.constant().then_drops(at=["1ep", "2ep"], gamma=Fraction(1, 10), until=END)
        curve = drops.resolve(p)
        tenth, hundredth = Fraction(1, 10), Fraction(1, 100)
        expected = [1, tenth, tenth, hundredth, hundredth]
        assert [curve.factor(k) for k in (3, 4, 7, 8, 16)] == expected
        rsqrt = Schedule.warmup("4ba").then_inverse_sqrt(until=END).resolve(p)
        assert [rsqrt.factor(k) for k in (4, 16)] == [1, Fraction(1, 2)]
        assert rsqrt.factor(9) == pytest.approx(2 / 3)

    def test_continuous_after_a_float(self) -> None:
        """A piece that starts from a float (after 1/sqrt) starts from exactly that float."""
        p = plan(RunConfig(max_duration="6ba"), [FitCall(loader=Loader(samples=6, batch_size=1))])
        curve = (
            Schedule.constant("0.5", until="1ba")
            .then_inverse_sqrt(until="2ba")
            .then_cosine(to=1, until=END)
        ).resolve(p)
        assert isinstance(curve.pieces[1].stop_value, float)
        assert curve.factor(2) == curve.pieces[1].stop_value == curve.pieces[2].start_value

    def test_warmup_stable_decay(self) -> None:
        """WSD: warm up, hold 1, decay over the last call (an annealing phase)."""
        a, b = (
            Loader(samples=100, batch_size=10, name="a"),
            Loader(samples=40, batch_size=10, name="b"),
        )
        p = plan(RunConfig(), [FitCall(loader=a, until="2ep", name="pretrain"),
                               FitCall(loader=b, duration="1ep", name="anneal")])  # fmt: skip
        curve = Schedule.warmup_stable_decay(
            warmup="5ba", decay_from=Landmark.call_start("anneal"), shape="cosine"
        ).resolve(p)
        assert [(x.start, x.stop) for x in curve.pieces] == [(0, 5), (5, 20), (20, 24)]
        assert [curve.factor(k) for k in (5, 19, 20, 22, 24)] == [1, 1, 1, Fraction(1, 2), 0]


def _chain(on: Plan, crashes: tuple[int, ...]) -> list[Plan]:
    """The plans a run re-plans after each crash (each at a lifetime step of ``crashes``)."""
    plans, current = [], on
    for crash in crashes:
        current = plan(on.config, on.calls, current.checkpoint_at(crash - current.start.batch))
        plans.append(current)
    return plans


class TestInterruptionInvariance:
    """S7: the same script re-planned from any chain of crashes gives the same curve: the same
    boundaries on lifetime steps, and the same factor at every step."""

    @given(resolved(), st.data())
    def test_crash_chains(
        self, case: tuple[Plan, Schedule, ResolvedSchedule], data: st.DataObject
    ) -> None:
        """Resolving on each resumed plan gives the original curve, step for step."""
        on, schedule, curve = case
        crashes = data.draw(crash_schedules(total_steps=on.total_steps))
        for resumed in _chain(on, crashes):
            again = schedule.resolve(resumed)
            assert again == curve
            for k in range(resumed.start.batch, on.stop.batch + 1):
                assert again.factor(k) == curve.factor(k)


class TestInvarianceAfterTakingUp:
    """S7 with S5: a plan that took a checkpoint up under extend or weights, crashed anywhere
    and re-run under continue, gives the same curve (with the same on_extend)."""

    @given(
        runs,
        st.sampled_from(["extend", "weights"]),
        st.sampled_from(["stretch", "rewarm"]),
        st.data(),
    )
    def test_crash_chains(
        self, scenario: object, mode: str, on_extend: str, data: st.DataObject
    ) -> None:
        """Every re-planned run of the taken-up script resolves to the same curve."""
        config, calls = scenario.config, scenario.calls  # type: ignore[attr-defined]
        before = plan(config, calls)
        taken = before.checkpoint_at(data.draw(st.integers(0, before.total_steps)))
        taking_up = plan(attrs.evolve(config, resume=mode), calls, taken)
        schedule = data.draw(schedules(taking_up, on_extend))
        curve = _resolve(schedule, taking_up, on_extend)
        current = taking_up
        for crash in data.draw(crash_schedules(total_steps=taking_up.total_steps)):
            k = crash + taking_up.start.batch - current.start.batch
            current = plan(config, calls, current.checkpoint_at(k))
            assert schedule.resolve(current, on_extend=on_extend) == curve


def _extended(first_until: int, more: int, crash: int) -> tuple[Plan, Plan]:
    """A 1-call run of ``first_until`` steps crashed at ``crash``, then taken up under extend
    for ``more`` steps more; and the uninterrupted run of the combined length."""
    a = Loader(samples=10, batch_size=1, name="a")
    first = plan(RunConfig(max_duration=f"{first_until}ba"), [FitCall(loader=a)])
    config = RunConfig(max_duration=f"{first_until + more}ba", resume="extend")
    extend = plan(config, [FitCall(loader=a, name="more")], first.checkpoint_at(crash))
    whole = plan(RunConfig(max_duration=f"{first_until + more}ba"), [FitCall(loader=a)])
    return extend, whole


class TestResumeModes:
    """S5: continue keeps the curve; weights starts a fresh one; extend asks for on_extend:
    stretch re-resolves the curve on the new plan from the run clock's origin, rewarm starts
    a fresh one where the new script starts."""

    schedule = Schedule.warmup("4ba").then_cosine(to=Fraction(1, 10), until=END)

    def test_extend_needs_a_choice(self) -> None:
        """An extended run without on_extend is refused, with both choices named."""
        extend, _ = _extended(20, 10, 12)
        with pytest.raises(ScheduleError) as error:
            self.schedule.resolve(extend)
        assert str(error.value) == (
            "this plan goes on from lifetime step 12 of a run whose clock started at step 0 (a "
            "run taken up under extend): pass on_extend='stretch' to re-resolve the curve on "
            "this plan from the run clock's origin, or on_extend='rewarm' for a fresh curve "
            "from step 12"
        )

    @given(st.integers(1, 30), st.integers(4, 30), st.data())
    def test_stretch_is_the_longer_run(self, first: int, more: int, data: st.DataObject) -> None:
        """Stretched, the curve is the one of the uninterrupted longer run: warmup kept where it
        was (not repeated), decay to the new end."""
        crash = data.draw(st.integers(0, first))
        extend, whole = _extended(first, more, crash)
        stretched = self.schedule.resolve(extend, on_extend=OnExtend.STRETCH)
        assert stretched.pieces == self.schedule.resolve(whole).pieces
        assert stretched.start == 0

    @given(st.integers(1, 30), st.integers(5, 30), st.data())
    def test_rewarm_is_a_fresh_curve(self, first: int, more: int, data: st.DataObject) -> None:
        """Rewarmed, the curve starts where the new script starts: a full warmup from there."""
        crash = data.draw(st.integers(0, first))
        extend, _ = _extended(first, more, crash)
        rewarmed = self.schedule.resolve(extend, on_extend="rewarm")
        assert rewarmed.start == crash
        assert [(p.start, p.stop) for p in rewarmed.pieces] == [
            (crash, crash + 4), (crash + 4, first + more)
        ]  # fmt: skip
        assert rewarmed.factor(crash) == 0
        assert rewarmed.factor(crash + 4) == 1

    def test_stretch_cannot_place_past_times_of_other_runs(self) -> None:
        """A boundary the run passed before this script, in a unit the checkpoint cannot place,
        is refused under stretch."""
        extend, _ = _extended(20, 10, 12)
        with pytest.raises(ScheduleError, match="give it in ba, or pass on_extend='rewarm'"):
            Schedule.warmup("4sp").resolve(extend, on_extend="stretch")

    def test_rewarm_needs_a_measurable_start(self) -> None:
        """Rewarm measures times from where the script starts: epochs of a stream cannot be."""
        stream = Loader(samples=None, batch_size=2, name="s")
        first = plan(RunConfig(max_duration="5ba"), [FitCall(loader=stream)])
        extend = plan(RunConfig(max_duration="10ba", resume="extend"), [FitCall(loader=stream)],
                      first.checkpoint_at(5))  # fmt: skip
        with pytest.raises(ScheduleError, match="cannot measure 1ep where this script starts"):
            Schedule.warmup("1ep").resolve(extend, on_extend="rewarm")
        halfway = Schedule.warmup("0.5dur").resolve(extend, on_extend="stretch")
        assert halfway.pieces[0].stop == 5  # reached exactly where the script starts

    def test_weights_is_a_fresh_curve(self) -> None:
        """A weights resume starts a fresh clock and a fresh curve, with no choice to make."""
        a = Loader(samples=10, batch_size=1, name="a")
        first = plan(RunConfig(max_duration="20ba"), [FitCall(loader=a)])
        fresh = plan(RunConfig(max_duration="8ba", resume="weights"), [FitCall(loader=a)],
                     first.checkpoint_at(20))  # fmt: skip
        curve = self.schedule.resolve(fresh)
        assert curve.start == 20
        assert [(p.start, p.stop) for p in curve.pieces] == [(20, 24), (24, 28)]

    @given(st.sampled_from(["stretch", "rewarm"]), st.integers(0, 20), st.data())
    def test_crashes_after_taking_up(self, mode: str, crash: int, data: st.DataObject) -> None:
        """Crash an extended run anywhere and re-run it under continue: the same curve."""
        extend, _ = _extended(20, 10, crash)
        curve = self.schedule.resolve(extend, on_extend=mode)
        again = attrs.evolve(extend.config, resume="continue")
        k = data.draw(st.integers(0, extend.total_steps))
        resumed = plan(again, extend.calls, extend.checkpoint_at(k))
        assert self.schedule.resolve(resumed, on_extend=mode) == curve


# -- reference formulas, reimplemented from transformers/optimization.py ------------------------


def hf_constant(step: int, warmup: int) -> float:
    if step < warmup:
        return float(step) / float(max(1.0, warmup))
    return 1.0


def hf_linear(step: int, warmup: int, total: int) -> float:
    if step < warmup:
        return float(step) / float(max(1, warmup))
    return max(0.0, float(total - step) / float(max(1, total - warmup)))


def hf_cosine(step: int, warmup: int, total: int, min_lr_rate: float = 0.0) -> float:
    if step < warmup:
        return float(step) / float(max(1, warmup))
    progress = float(step - warmup) / float(max(1, total - warmup))
    factor = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))
    return max(0, factor * (1 - min_lr_rate) + min_lr_rate)


def hf_inverse_sqrt(step: int, warmup: int) -> float:
    if step < warmup:
        return float(step) / float(max(1, warmup))
    return 1.0 / math.sqrt(step / warmup)  # timescale = warmup, shift = 0


def _one_phase(total: int) -> Plan:
    return plan(
        RunConfig(max_duration=f"{total}ba"), [FitCall(loader=Loader(samples=13, batch_size=4))]
    )


class TestReference:
    """On one-phase plans the schedules equal transformers' get_*_schedule_with_warmup, step for
    step (both follow LambdaLR: step k + 1 uses the factor at k), to 1e-12."""

    @given(st.integers(1, 400), st.data())
    def test_linear(self, total: int, data: st.DataObject) -> None:
        """get_linear_schedule_with_warmup."""
        warmup = data.draw(st.integers(0, total))
        curve = (
            Schedule.warmup(f"{warmup}ba").then_linear(to=0, until=END).resolve(_one_phase(total))
        )
        for k in range(total + 1):
            assert abs(float(curve.factor(k)) - hf_linear(k, warmup, total)) <= 1e-12

    @given(st.integers(1, 400), st.data())
    def test_cosine(self, total: int, data: st.DataObject) -> None:
        """get_cosine_schedule_with_warmup, and its min_lr_rate variant."""
        warmup = data.draw(st.integers(0, total - 1))
        floor = data.draw(st.fractions(0, 1, max_denominator=100))
        schedule = Schedule.warmup(f"{warmup}ba").then_cosine(to=floor, until=END)
        curve = schedule.resolve(_one_phase(total))
        for k in range(total + 1):
            expected = hf_cosine(k, warmup, total, float(floor))
            assert abs(float(curve.factor(k)) - expected) <= 1e-12

    @given(st.integers(1, 400), st.data())
    def test_constant(self, total: int, data: st.DataObject) -> None:
        """get_constant_schedule_with_warmup: a warmup and nothing after it."""
        warmup = data.draw(st.integers(0, total))
        curve = Schedule.warmup(f"{warmup}ba").resolve(_one_phase(total))
        for k in range(total + 1):
            assert abs(float(curve.factor(k)) - hf_constant(k, warmup)) <= 1e-12

    @given(st.integers(1, 400), st.data())
    def test_inverse_sqrt(self, total: int, data: st.DataObject) -> None:
        """get_inverse_sqrt_schedule with its default time scale (the warmup)."""
        warmup = data.draw(st.integers(1, total))
        curve = (
            Schedule.warmup(f"{warmup}ba").then_inverse_sqrt(until=END).resolve(_one_phase(total))
        )
        for k in range(total + 1):
            assert abs(float(curve.factor(k)) - hf_inverse_sqrt(k, warmup)) <= 1e-12

    def test_a_decay_of_no_steps(self) -> None:
        """By design: when the warmup ends at the plan's end, transformers' cosine reports 1 at
        that step (progress 0 of a decay of 0 steps); durations reports the decay's end."""
        curve = Schedule.warmup("5ba").then_cosine(to=0, until=END).resolve(_one_phase(5))
        assert curve.factor(5) == 0
        assert hf_cosine(5, 5, 5) == 1.0
