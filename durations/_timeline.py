"""A script's history on lifetime steps, for schedules and event intervals (private).

A :class:`Plan` counts steps from its own start (the checkpoint). A learning-rate curve or a
grid of events must not move when the run is interrupted, so both are placed on **lifetime**
steps (``Progress.batch``) over the whole history of the script: the calls the checkpoint's
ledger records as trained (their start, loader and run clock), then the plan's own segments.
Every query here is closed-form per call: its cost grows with the number of calls, never with
steps.
"""

from __future__ import annotations

from fractions import Fraction

import attrs

from .errors import ConversionError, FitCallError, ScheduleError
from .loader import Loader
from .plans import Action, Plan, Segment, resolve_dur
from .progress import Progress
from .time import Time
from .units import Unit

__all__ = ["Span", "Timeline"]


@attrs.frozen
class Span:
    """Lifetime steps ``[first, last]`` of one call, read from ``start`` by one ``loader`` on
    the run clock that started at ``origin``."""

    call: str
    start: Progress
    loader: Loader
    origin: Progress
    last: int

    @property
    def first(self) -> int:
        """The lifetime step at which the span starts."""
        return self.start.batch

    def clock(self, unit: Unit, step: int) -> Fraction:
        """The run clock in ``unit`` after lifetime step ``step`` of this span (closed form)."""
        position = self.start.advance(self.loader, step - self.first)
        return Fraction(position.time_in(unit, loader=self.loader, since=self.origin).value)

    def steps_until(self, value: Fraction, unit: Unit) -> int:
        """Steps from the span's start until the run clock is at or past ``value``."""
        if unit.is_whole:
            value = Fraction(-(-value.numerator // value.denominator))
        return self.start.steps_until(Time(value, unit), loader=self.loader, since=self.origin)


@attrs.frozen
class Call:
    """One call of the script on lifetime steps."""

    index: int
    name: str
    start: int
    stop: int
    failed: bool


@attrs.frozen
class Timeline:
    """The script's calls on lifetime steps: what the ledger recorded, then the plan.

    ``start`` is where the script's first call started, ``origin`` the run clock that call
    measured on, ``end`` the plan's stop. ``spans`` are in the order the run trains them.
    """

    plan: Plan
    spans: tuple[Span, ...]
    #: Spans trained before the plan's start (from the checkpoint's ledger).
    past: tuple[Span, ...]
    calls: tuple[Call, ...]
    start: int
    origin: Progress
    end: int

    @classmethod
    def of(cls, plan: Plan) -> Timeline:
        """The history of ``plan``'s script, on lifetime steps."""
        if not isinstance(plan, Plan):
            raise ScheduleError(
                f"expected a Plan, such as plan(config, calls, checkpoint), not {plan!r}"
            )
        recorded = {}
        if plan.checkpoint is not None and plan.checkpoint.ledger is not None:
            recorded = {entry.name: entry for entry in plan.checkpoint.ledger}
        past: list[Span] = []
        future: list[Span] = []
        calls: list[Call] = []
        for segment in plan.segments:
            calls.append(_call(segment))
            if segment.action is Action.SKIP:
                entry = segment.entry
                assert entry.stop is not None
                past.append(
                    Span(segment.name, entry.start, entry.loader, entry.origin, entry.stop.batch)
                )
                continue
            if segment.action is Action.RESUME:
                entry = recorded.get(segment.name, segment.entry)
                past.append(
                    Span(segment.name, entry.start, entry.loader, entry.origin, plan.start.batch)
                )
            if not segment.failed:
                future.append(
                    Span(
                        segment.name,
                        segment.start,
                        segment.loader,
                        segment.origin,
                        segment.stop.batch,
                    )
                )
        trained = [s for s in plan.segments if not s.failed]
        if trained:
            first = trained[0]
            start, origin = _call(first).start, first.origin
        else:
            start, origin = plan.start.batch, plan.start
        return cls(
            plan=plan,
            spans=(*past, *future),
            past=tuple(past),
            calls=tuple(calls),
            start=start,
            origin=origin,
            end=plan.stop.batch,
        )

    @property
    def extended(self) -> bool:
        """Whether the script goes on from a run whose clock started before it (``extend``)."""
        return self.start > self.origin.batch

    def absolute(self, time: Time) -> Time:
        """``time`` with ``dur`` resolved against ``max_duration`` (rule 6)."""
        if time.unit is not Unit.DUR:
            return time
        try:
            return resolve_dur(time, self.plan.config.max_duration)
        except FitCallError as error:
            raise ScheduleError(str(error)) from None

    def clock_at_start(self, unit: Unit) -> Fraction:
        """The run clock in ``unit`` where the script's first call starts."""
        if not self.spans:
            return Fraction(0)
        return self.spans[0].clock(unit, self.spans[0].first)

    def resolve(self, time: Time) -> int | None:
        """The lifetime step at which ``time`` (not ``dur``) is first reached, or ``None``.

        The calls the ledger records come first; the plan's own steps are ``Plan.resolve``.
        """
        for span in self.past:
            try:
                steps = span.steps_until(Fraction(time.value), time.unit)
            except ConversionError:
                continue
            if span.first + steps <= span.last:
                return span.first + steps
        step = self.plan.resolve(time)
        return None if step is None else self.plan.start.batch + step

    def call(self, key: str | int) -> Call:
        """The call named ``key``, or at position ``key``."""
        for call in self.calls:
            if call.name == key or call.index == key:
                if call.failed:
                    raise ScheduleError(
                        f"call {call.name!r} could not be planned (its error diagnostic says "
                        "why), so it has no start or stop to place a boundary on"
                    )
                return call
        known = ", ".join(repr(c.name) for c in self.calls) or "none"
        raise ScheduleError(
            f"no call {key!r} in this plan: expected a call name or position among {known}"
        )


def _call(segment: Segment) -> Call:
    start = segment.start.batch if segment.action is Action.RUN else segment.entry.start.batch
    return Call(segment.index, segment.name, start, segment.stop.batch, segment.failed)
