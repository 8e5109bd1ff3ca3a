"""Event intervals on the plan (docs/semantics.md, rule S6): a grid on the run clock, placed on
lifetime steps, that a crash does not restart."""

from __future__ import annotations

from fractions import Fraction

import attrs
import pytest
from hypothesis import assume, given, settings, strategies as st

from durations import (
    END,
    At,
    AtCallEnds,
    Every,
    FitCall,
    Landmark,
    Loader,
    Plan,
    RunConfig,
    ScheduleError,
    Time,
    Unit,
    plan,
)
from durations.testing import crash_schedules, scenarios

runs = scenarios(units=("ba", "sp", "ep", "tok", "dur"), max_world_size=3)


@st.composite
def intervals(draw: st.DrawFn) -> Time:
    unit = draw(st.sampled_from(["ba", "sp", "tok", "ep", "dur"]))
    if unit == "ep":
        return Time(draw(st.fractions(Fraction(1, 8), 2, max_denominator=8)), unit)
    if unit == "dur":
        return Time(draw(st.fractions(Fraction(1, 10), 1, max_denominator=10)), unit)
    return Time(draw(st.integers(1, {"ba": 12, "sp": 60, "tok": 300}[unit])), unit)


def _plan(scenario: object, interval: Time) -> Plan:
    """The scenario's plan; a dur interval of a max_duration of 0 is no interval (skipped)."""
    on = plan(scenario.config, scenario.calls)  # type: ignore[attr-defined]
    limit = on.config.max_duration
    assume(not (interval.unit is Unit.DUR and limit is not None and limit.value == 0))
    return on


def step_by_step(on: Plan, interval: Time) -> list[int]:
    """The definition, one step at a time: a step is due when the run clock first reaches a
    multiple of the interval there (each ``reset_time`` starts a new grid; a jump between two
    calls is due where the next call starts). O(steps): the oracle."""
    value, unit = Fraction(interval.value), interval.unit
    if unit is Unit.DUR:
        assert on.config.max_duration is not None
        value, unit = value * on.config.max_duration.value, on.config.max_duration.unit
    due: set[int] = set()
    high: Fraction | None = None
    origin = None
    for segment in on.segments:
        if segment.failed:
            continue
        if high is not None and segment.origin != origin:
            high = Fraction(0)
        origin = segment.origin
        for j in range(segment.steps + 1):
            position = segment.start.advance(segment.loader, j)
            clock = Fraction(position.time_in(unit, loader=segment.loader, since=origin).value)
            if high is None:
                high = clock
            if clock > high:
                if clock // value > high // value:
                    due.add(segment.start_step + j)
                high = clock
    return sorted(step for step in due if step > 0)


def _chain(on: Plan, crashes: tuple[int, ...]) -> list[Plan]:
    plans, current = [], on
    for crash in crashes:
        current = plan(on.config, on.calls, current.checkpoint_at(crash - current.start.batch))
        plans.append(current)
    return plans


class TestEvery:
    """S6: ``Every(T)`` is due at the first step boundary at or past each multiple of ``T`` on
    the run clock; epochs of several loaders add as counts (rule 5)."""

    @given(runs, intervals())
    def test_as_defined_step_by_step(self, scenario: object, interval: Time) -> None:
        """The closed form gives the steps the step-by-step definition gives."""
        on = _plan(scenario, interval)
        assert list(Every(interval).resolve(on).steps()) == step_by_step(on, interval)

    def test_several_loaders(self) -> None:
        """0.5ep across a 10-step epoch and a 3-step epoch: 5, 10, then 12 and 13."""
        a = Loader(samples=100, batch_size=10, name="a")
        b = Loader(samples=60, batch_size=20, name="b")
        p = plan(RunConfig(), [FitCall(loader=a, until="1ep"), FitCall(loader=b, duration="1ep")])
        assert list(Every("0.5ep").resolve(p).steps()) == [5, 10, 12, 13]

    def test_abandoned_epoch(self) -> None:
        """A new stream abandons the rest of an epoch: the multiples it skips are due where the
        next call starts."""
        a = Loader(samples=100, batch_size=10, name="a")
        b = Loader(samples=60, batch_size=10, name="b")
        p = plan(RunConfig(), [FitCall(loader=a, until="13ba"), FitCall(loader=b, duration="1ep")])
        assert list(Every("1ep").resolve(p).steps()) == [10, 13, 19]

    def test_exact_dur(self) -> None:
        """Every 0.1dur of a 15ba run is every 1.5ba, not every 2ba."""
        p = plan(RunConfig(max_duration="15ba"), [FitCall(loader=Loader(samples=9, batch_size=1))])
        assert list(Every("0.1dur").resolve(p).steps()) == [2, 3, 5, 6, 8, 9, 11, 12, 14, 15]

    def test_cost_does_not_grow_with_steps(self) -> None:
        """A grid on a run of 10**15 tokens answers at once: no step is visited."""
        loader = Loader(samples=10**9, batch_size=512, tokens_per_sample=2048)
        p = plan(RunConfig(max_duration="1e15tok"), [FitCall(loader=loader)])
        events = Every("1e9tok").resolve(p)
        per_step = 512 * 2048
        step = events.next_after(500_000)
        assert step == -(-525 * 10**9 // per_step)  # the 525th multiple: 500,679.3 steps
        assert events.is_due(step)
        assert not events.is_due(step + 1)
        assert events.next_after(p.total_steps) is None

    def test_listing_walks_the_calls_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """steps() reads the run clock O(calls + events) times, not O(calls) per event: 4,000
        calls with an event every step took over 20 s in the text of ``durations plan``."""
        from durations import _timeline

        loader = Loader(samples=100, batch_size=10, name="a")
        calls = [FitCall(loader=loader, duration="3ba", name=f"c{i}") for i in range(4000)]
        p = plan(RunConfig(), calls)
        events = Every("1ba").resolve(p)
        reads = 0
        clock = _timeline.Span.clock

        def counted(self: _timeline.Span, unit: Unit, step: int) -> Fraction:
            nonlocal reads
            reads += 1
            return clock(self, unit, step)

        monkeypatch.setattr(_timeline.Span, "clock", counted)
        assert list(events.steps()) == list(range(1, 12_001))
        assert reads <= 3 * (4000 + 12_000)


class TestQueries:
    """``next_after`` and ``is_due`` agree with ``steps()`` at every step."""

    @given(runs, intervals())
    def test_agree(self, scenario: object, interval: Time) -> None:
        """Each query answers what the full list says."""
        on = _plan(scenario, interval)
        events = Every(interval).resolve(on)
        listed = list(events.steps())
        for k in range(on.total_steps + 2):
            assert events.is_due(k) == (k in listed)
            later = [s for s in listed if s > k]
            assert events.next_after(k) == (later[0] if later else None)
        assert list(events.steps(after=on.total_steps // 2)) == [
            s for s in listed if s > on.total_steps // 2
        ]


class TestAt:
    """S6: ``At(times)`` is due where each time is first reached (``Plan.resolve``);
    ``AtCallEnds()`` where each call stops."""

    @settings(max_examples=50)
    @given(runs, st.fractions(0, 1, max_denominator=20))
    def test_at_is_plan_resolve(self, scenario: object, fraction: Fraction) -> None:
        """At(x dur) is due where the plan reaches x dur, unless that is the start."""
        on = plan(scenario.config, scenario.calls)  # type: ignore[attr-defined]
        time = Time(fraction, "dur")
        where = on.resolve(time)
        if where is None:
            with pytest.raises(ScheduleError, match="is never reached"):
                At(time).resolve(on)
        else:
            assert list(At(time).resolve(on).steps()) == ([where] if where > 0 else [])

    @settings(max_examples=50)
    @given(runs)
    def test_call_ends(self, scenario: object) -> None:
        """AtCallEnds is due at each call's stop, once per step."""
        on = plan(scenario.config, scenario.calls)  # type: ignore[attr-defined]
        stops = sorted({s.stop_step for s in on.segments if not s.failed and s.stop_step > 0})
        assert list(AtCallEnds().resolve(on).steps()) == stops

    def test_landmarks(self) -> None:
        """Landmarks are event times too."""
        a = Loader(samples=10, batch_size=1, name="a")
        p = plan(
            RunConfig(),
            [FitCall(loader=a, until="4ba", name="x"), FitCall(loader=a, duration="3ba")],
        )
        events = At([Landmark.call_stop("x"), END, "2ba"]).resolve(p)
        assert list(events.steps()) == [2, 4, 7]

    @pytest.mark.parametrize(
        ("build", "message"),
        [
            # Every 0 would be every step at once.
            (lambda: Every("0ba"), "invalid interval 0ba: an interval must be > 0 (every 0 "
             "would be every step at once)"),
            # A grid needs a length, not a point.
            (lambda: Every(END), "invalid interval end: expected a time such as '500ba', not a "
             "landmark"),
            # No time at all.
            (lambda: At([]), "At() needs at least one time, such as At('0.5dur')"),
        ],
    )  # fmt: skip
    def test_errors(self, build: object, message: str) -> None:
        """Invalid intervals are refused with what is valid."""
        with pytest.raises(ScheduleError) as error:
            build()  # type: ignore[operator]
        assert str(error.value) == message

    def test_argument_errors(self) -> None:
        """Steps are whole numbers >= 0; event times are times, landmarks or lists of them; a
        dur interval needs a max_duration that is not 0."""
        one = [FitCall(loader=Loader(samples=10, batch_size=1), until="3ba")]
        events = Every("1ba").resolve(plan(RunConfig(), one))
        with pytest.raises(ScheduleError, match="invalid step -1: expected a whole number >= 0"):
            events.is_due(-1)
        with pytest.raises(ScheduleError, match="invalid step '3'"):
            events.next_after("3")  # type: ignore[arg-type]
        with pytest.raises(ScheduleError, match="invalid event times 5: expected a time"):
            At(5)
        with pytest.raises(ScheduleError, match="dur is a fraction of max_duration, and the run"):
            Every("0.5dur").resolve(plan(RunConfig(), one))
        with pytest.raises(ScheduleError, match="max_duration is 0ba, so the interval is 0"):
            Every("0.5dur").resolve(plan(RunConfig(max_duration="0ba"), one))

    def test_unmeasurable(self) -> None:
        """An epoch grid on a stream of unknown length cannot be placed: the call is named."""
        p = plan(
            RunConfig(), [FitCall(loader=Loader(samples=None, batch_size=4), until="8ba", name="s")]
        )
        with pytest.raises(ScheduleError, match="every 1ep cannot be measured on call 's'"):
            Every("1ep").resolve(p)


class TestInterruptionInvariance:
    """S7: after any chain of crashes the same grid goes on: the events of the resumed plans
    are the events of the uninterrupted one."""

    @given(runs, intervals(), st.data())
    def test_crash_chains(self, scenario: object, interval: Time, data: st.DataObject) -> None:
        """Every, At and AtCallEnds give the same steps on every re-planned run."""
        on = _plan(scenario, interval)
        kinds = [Every(interval), AtCallEnds()]
        if on.resolve(Time(Fraction(1, 2), "dur")) is not None:
            kinds.append(At("0.5dur"))
        expected = [list(kind.resolve(on).steps()) for kind in kinds]
        for resumed in _chain(on, data.draw(crash_schedules(total_steps=on.total_steps))):
            for kind, steps in zip(kinds, expected, strict=True):
                events = kind.resolve(resumed)
                assert list(events.steps()) == steps
                assert [k for k in range(on.total_steps + 1) if events.is_due(k)] == steps

    @given(runs, intervals(), st.sampled_from(["extend", "weights"]), st.data())
    def test_after_taking_up(
        self, scenario: object, interval: Time, mode: str, data: st.DataObject
    ) -> None:
        """A plan that took a checkpoint up under extend or weights, crashed and re-run under
        continue, keeps its grid."""
        on = _plan(scenario, interval)
        taken = on.checkpoint_at(data.draw(st.integers(0, on.total_steps)))
        taking_up = plan(attrs.evolve(on.config, resume=mode), on.calls, taken)
        kinds = [Every(interval), AtCallEnds()]
        expected = [list(kind.resolve(taking_up).steps()) for kind in kinds]
        current = taking_up
        for crash in data.draw(crash_schedules(total_steps=taking_up.total_steps)):
            k = crash + taking_up.start.batch - current.start.batch
            current = plan(on.config, on.calls, current.checkpoint_at(k))
            for kind, steps in zip(kinds, expected, strict=True):
                assert list(kind.resolve(current).steps()) == steps
