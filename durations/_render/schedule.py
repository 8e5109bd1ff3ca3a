"""The ``schedule:`` and ``events:`` sections of ``durations plan``'s text."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .._grammar import format_number
from .._timeline import Timeline
from ..errors import ConversionError
from ..intervals import At, AtCallEnds, Events, Every
from ..plans import Plan
from ..schedules import Boundary, Landmark, ResolvedSchedule, Value
from ..units import Unit
from ._text import EDGE_ROWS, LINE_WIDTH, aligned, clip, edges, elide, number

#: The events a line of ``events:`` counts before it stops and says "more than".
MAX_COUNTED_EVENTS = 10_000


def boundary_text(boundary: Boundary) -> str:
    """A boundary as a scenario file writes it: a time, ``end``, ``start:CALL``, ``stop:CALL``."""
    if not isinstance(boundary, Landmark):
        return str(boundary)
    if boundary.kind == "end":
        return "end"
    call = f"#{boundary.call}" if isinstance(boundary.call, int) else str(boundary.call)
    return f"{'start' if boundary.kind == 'call_start' else 'stop'}:{call}"


def interval_text(interval: Every | At | AtCallEnds) -> str:
    """``every 0.25ep``, ``at 0.5dur, stop:pretrain``, ``at call ends``."""
    if isinstance(interval, Every):
        return f"every {interval.interval}"
    if isinstance(interval, At):
        return "at " + ", ".join(boundary_text(t) for t in interval.times)
    return "at call ends"


def clock_at(timeline: Timeline, step: int) -> str:
    """The run clock at lifetime ``step``, in epochs (samples on a stream), or ``?``."""
    for span in timeline.spans:
        if span.first <= step <= span.last:
            for unit in (Unit.EP, Unit.SP):
                try:
                    return f"{format_number(span.clock(unit, step))}{unit.value}"
                except ConversionError:
                    continue
            break
    return "?"


def _factor_text(value: Value) -> str:
    return format_number(value) if isinstance(value, Fraction) else f"{value:.6g}"


def schedule_text(
    plan: Plan, curve: ResolvedSchedule | None, events: dict[str, Events]
) -> list[str]:
    """The ``schedule:`` and ``events:`` sections of ``durations plan``: each piece's start and
    stop as lifetime steps, the run clock at its stop, its factors; each interval's steps,
    summarised to fit a line."""
    timeline = Timeline.of(plan)
    lines: list[str] = []
    if curve is not None:
        rows = [["piece", "until", "start", "stop", "clock at stop", "factor"]]
        shown, left_out = edges(curve.pieces)
        for piece in shown:
            rows.append(
                [
                    piece.piece.kind,
                    clip(boundary_text(piece.piece.until)),
                    f"{number(piece.start)}ba",
                    f"{number(piece.stop)}ba",
                    clock_at(timeline, piece.stop),
                    f"{_factor_text(piece.start_value)} -> {_factor_text(piece.stop_value)}",
                ]
            )
        lines.append(
            f"schedule: from step {number(curve.start)} at factor "
            f"{format_number(curve.schedule.initial)}; after step "
            f"{number(curve.pieces[-1].stop if curve.pieces else curve.start)} it holds "
            f"{_factor_text(curve.final)}"
        )
        table = elide(aligned(rows, frozenset({2, 3})), left_out, "pieces")
        lines.extend(f"  {line}" for line in table)
        drops = [
            _steps_line(
                f"  pieces[{index}] drops by {format_number(piece.piece.gamma or 0)} at ",
                piece.drops,
                len(piece.drops),
                complete=True,
            )
            for index, piece in enumerate(curve.pieces)
            if piece.drops
        ]
        shown_drops, drops_left_out = edges(drops)
        if drops_left_out:
            gap = f"  ... {number(drops_left_out)} more drops pieces (--json lists every one) ..."
            shown_drops.insert(EDGE_ROWS, gap)
        lines.extend(shown_drops)
    if events:
        if lines:
            lines.append("")
        lines.append("events:")
        width = max(len(clip(name)) for name in events)
        for name, found in events.items():
            head = f"  {clip(name).ljust(width)}  {interval_text(found.interval)}: "
            steps, complete = _count(found)
            lines.append(_steps_line(head, steps, len(steps), complete=complete))
    return lines


def _count(events: Events) -> tuple[list[int], bool]:
    """The steps of ``events``, up to ``MAX_COUNTED_EVENTS``; and whether that is all of them."""
    steps: list[int] = []
    for step in events.steps():
        if len(steps) == MAX_COUNTED_EVENTS:
            return steps, False
        steps.append(step)
    return steps, True


def _steps_line(head: str, steps: Sequence[int], count: int, *, complete: bool) -> str:
    """``head`` then the steps, all of them if they fit in ``LINE_WIDTH``, else the first few,
    ``...`` and the last two (or ``more than N`` when not all were counted)."""
    if not steps:
        return head + "none in this plan"
    total = number(count) if complete else f"more than {number(count)}"
    noun = "step" if count == 1 and complete else "steps"
    whole = f"{head}{total} {noun}: {', '.join(number(s) for s in steps)}"
    if complete and len(whole) <= LINE_WIDTH:
        return whole
    tail = [number(s) for s in steps[-2:]] if complete else []
    for first in range(8, 0, -1):
        shown = [number(s) for s in steps[:first]]
        line = f"{head}{total} {noun}: {', '.join([*shown, '...', *tail])}"
        if len(line) <= LINE_WIDTH or first == 1:
            return line
    raise AssertionError("unreachable")  # pragma: no cover
