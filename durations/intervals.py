"""Event intervals: "every 0.25ep", "every 500ba", "at 0.5dur", "at the end of each call",
placed on the exact lifetime steps of a plan, for checkpoints, evaluation and logging.

An event due at step ``k`` is due **after** optimizer step ``k`` (after ``k`` steps, as
``Progress.batch`` counts them). The grid is on the run clock and on lifetime steps, so after a
crash the same grid goes on: nothing restarts per call or per process. Rule S6 of
``docs/semantics.md``.

>>> from durations import Every, FitCall, Loader, RunConfig, plan
>>> a = Loader(samples=100, batch_size=10, name="a")
>>> b = Loader(samples=60, batch_size=20, name="b")
>>> p = plan(RunConfig(), [FitCall(loader=a, until="1ep"), FitCall(loader=b, duration="1ep")])
>>> list(Every("0.5ep").resolve(p).steps())
[5, 10, 12, 13]
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from fractions import Fraction

import attrs

from ._timeline import Span, Timeline
from .errors import ConversionError, ScheduleError, shown_value
from .plans import Plan
from .schedules import Boundary, Landmark, _boundary, _Placer
from .time import Time
from .units import Unit

__all__ = ["At", "AtCallEnds", "Events", "Every"]


def _interval(value: object) -> Time:
    time = _boundary(value, "interval")
    if not isinstance(time, Time):
        raise ScheduleError(
            f"invalid interval {value}: expected a time such as '500ba', not a landmark"
        )
    if time.value == 0:
        raise ScheduleError(
            f"invalid interval {time}: an interval must be > 0 (every 0 would be every step "
            "at once)"
        )
    return time


@attrs.frozen
class Every:
    """An event each time the run clock reaches a multiple of ``interval``.

    >>> str(Every("0.25ep").interval)
    '0.25ep'
    """

    interval: Time = attrs.field(converter=_interval)

    def resolve(self, plan: Plan) -> Events:
        """The steps of ``plan`` at which the events are due."""
        timeline = Timeline.of(plan)
        interval = self.interval
        value, unit = Fraction(interval.value), interval.unit
        if unit is Unit.DUR:
            # Exact: "every 0.1dur" of 15ba is every 1.5ba, not every 2ba.
            if plan.config.max_duration is None:
                raise ScheduleError(
                    f"invalid interval {interval}: dur is a fraction of max_duration, and the "
                    "run has none; give the run a max_duration, or the interval in ba, sp, tok "
                    "or ep"
                )
            limit = timeline.absolute(Time(1, Unit.DUR))
            value, unit = value * limit.value, limit.unit
            if value == 0:
                raise ScheduleError(
                    f"invalid interval {interval}: max_duration is {limit}, so the interval is "
                    "0; an interval must be > 0"
                )
        for span in timeline.spans:
            for step in (span.first, span.last):
                try:
                    span.clock(unit, step)
                except ConversionError as error:
                    raise ScheduleError(
                        f"every {interval} cannot be measured on call {span.call!r}: {error}"
                    ) from None
        return Events(self, timeline.start, timeline.end, timeline, every=(value, unit))


def _times(value: object) -> tuple[Boundary, ...]:
    if isinstance(value, (str, Time, Landmark)):
        value = [value]
    if not isinstance(value, Iterable):
        raise ScheduleError(
            f"invalid event times {shown_value(value)}: expected a time, a landmark or a list"
        )
    times = tuple(_boundary(v, "event time") for v in value)
    if not times:
        raise ScheduleError("At() needs at least one time, such as At('0.5dur')")
    return times


@attrs.frozen
class At:
    """An event where each of ``times`` (times on the run clock, or landmarks) is reached.

    >>> [str(t) for t in At(["0.5dur", "0.75dur"]).times]
    ['0.5dur', '0.75dur']
    """

    times: tuple[Boundary, ...] = attrs.field(converter=_times)

    def resolve(self, plan: Plan) -> Events:
        """The steps of ``plan`` at which the events are due; a time the plan never reaches is
        an error, a time reached before the script started is not an event of it."""
        timeline = Timeline.of(plan)
        placer = _Placer(timeline, stretch=False, rewarm=False)
        steps = {placer.place(time, f"At({time})") for time in self.times}
        fixed = tuple(sorted(s for s in steps if s > timeline.start))
        return Events(self, timeline.start, timeline.end, timeline, fixed=fixed)


@attrs.frozen
class AtCallEnds:
    """An event where each call of the script stops (once per step, calls of 0 steps included).

    >>> AtCallEnds()
    AtCallEnds()
    """

    def resolve(self, plan: Plan) -> Events:
        """The steps of ``plan`` at which its calls stop."""
        timeline = Timeline.of(plan)
        stops = {call.stop for call in timeline.calls if not call.failed}
        fixed = tuple(sorted(s for s in stops if s > timeline.start))
        return Events(self, timeline.start, timeline.end, timeline, fixed=fixed)


@attrs.frozen
class Events:
    """The lifetime steps at which an interval's events are due on a plan: steps ``k`` with
    ``start < k <= end`` (an event at ``k`` is due after ``k`` optimizer steps).

    Queries cost O(calls), never O(steps); ``steps()`` costs O(calls) in all, then O(1) per
    event. On a plan from a
    checkpoint the steps already trained keep their events; ``steps(after=plan.start.batch)``
    gives the ones still to come.
    """

    interval: Every | At | AtCallEnds
    #: Where the script's first call starts: events are due after it.
    start: int
    #: The plan's end.
    end: int
    _timeline: Timeline = attrs.field(eq=False, repr=False)
    _every: tuple[Fraction, Unit] | None = attrs.field(default=None, kw_only=True, repr=False)
    _fixed: tuple[int, ...] = attrs.field(default=(), kw_only=True, repr=False)

    def next_after(self, step: int) -> int | None:
        """The first step after ``step`` at which an event is due, or ``None``.

        >>> from durations import FitCall, Loader, RunConfig, plan
        >>> script = [FitCall(loader=Loader(samples=10, batch_size=1))]
        >>> p = plan(RunConfig(max_duration="1000ba"), script)
        >>> events = Every("300ba").resolve(p)
        >>> events.next_after(0), events.next_after(300), events.next_after(900)
        (300, 600, None)
        """
        _check_step(step)
        step = max(step, self.start)
        if self._every is None:
            index = bisect.bisect_right(self._fixed, step)
            return self._fixed[index] if index < len(self._fixed) else None
        return _next_on_grid(self._timeline.spans, *self._every, step)

    def is_due(self, step: int) -> bool:
        """Whether an event is due after step ``step``."""
        _check_step(step)
        return step > self.start and self.next_after(step - 1) == step

    def steps(self, *, after: int | None = None) -> Iterator[int]:
        """Every step at which an event is due, in order (after ``after``, if given): the
        steps :meth:`next_after` gives one by one, in one walk over the calls (O(calls) in
        all, then O(1) per event).

        >>> from durations import FitCall, Loader, RunConfig, plan
        >>> script = [FitCall(loader=Loader(samples=10, batch_size=1))]
        >>> p = plan(RunConfig(max_duration="1000ba"), script)
        >>> list(Every("300ba").resolve(p).steps()), list(Every("0.5ep").resolve(p).steps())[:3]
        ([300, 600, 900], [5, 10, 15])
        """
        step = self.start if after is None else after
        _check_step(step)
        step = max(step, self.start)
        if self._every is None:
            yield from self._fixed[bisect.bisect_right(self._fixed, step) :]
            return
        yield from _grid_steps(self._timeline.spans, *self._every, step)


def _check_step(step: object) -> None:
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ScheduleError(f"invalid step {shown_value(step)}: expected a whole number >= 0")


def _grid_steps(spans: tuple[Span, ...], value: Fraction, unit: Unit, step: int) -> Iterator[int]:
    """Every step after ``step`` that :func:`_next_on_grid` gives, in order, in one walk:
    the same walk, going on from each step found instead of starting again (the furthest
    clock ``high`` is the one a new walk would have on reaching the same span)."""
    high: Fraction | None = None
    origin = None
    for span in spans:
        at_start = span.clock(unit, span.first)
        if high is None:
            high = at_start
        elif span.origin != origin:
            high = Fraction(0)
        origin = span.origin
        if at_start > high:
            if at_start // value > high // value and span.first > step:
                yield span.first
                step = span.first
            high = at_start
        while span.last > step:
            here = max(high, span.clock(unit, max(span.first, step)))
            found = span.first + span.steps_until((here // value + 1) * value, unit)
            if found > span.last:
                break
            yield found
            step = found
        high = max(high, span.clock(unit, span.last))


def _next_on_grid(spans: tuple[Span, ...], value: Fraction, unit: Unit, step: int) -> int | None:
    """The first step after ``step`` where the run clock first reaches a multiple of ``value``.

    ``high`` is the furthest the current run clock has been (a replayed epoch moves the epoch
    clock back; a multiple already reached is not due again). A new clock (``reset_time``)
    starts a new grid. Multiples passed between two calls (the rest of an abandoned epoch) are
    due where the next call starts. O(spans).
    """
    high: Fraction | None = None
    origin = None
    for span in spans:
        at_start = span.clock(unit, span.first)
        if high is None:
            high = at_start  # the script's start: multiples before it are not its events
        elif span.origin != origin:
            high = Fraction(0)
        origin = span.origin
        if at_start > high:
            if at_start // value > high // value and span.first > step:
                return span.first
            high = at_start
        if span.last > step:
            here = max(high, span.clock(unit, max(span.first, step)))
            found = span.first + span.steps_until((here // value + 1) * value, unit)
            if found <= span.last:
                return found
        high = max(high, span.clock(unit, span.last))
    return None
