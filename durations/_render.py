"""Rendering plans, conversions and checkpoints for people (text) and programs (JSON)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TypeVar

from ._grammar import format_number
from ._timeline import Timeline
from .checkpoint import Checkpoint, LedgerEntry, _progress_to_dict
from .compare import Comparison
from .diagnostics import Diagnostic
from .errors import ConversionError
from .intervals import At, AtCallEnds, Events, Every
from .loader import Loader
from .plans import Action, Plan, SampleRange, Segment
from .progress import Progress
from .schedules import Boundary, Landmark, ResolvedSchedule, Value
from .time import Time
from .units import Unit

_T = TypeVar("_T")

TIMELINE_WIDTH = 60
#: Text output fits a terminal: the timeline and table lines stay within this many characters.
LINE_WIDTH = 100
#: A table of more rows than this shows the first and last ``EDGE_ROWS`` and says how many are left
#: out; ``--json`` lists them all.
MAX_ROWS = 40
EDGE_ROWS = 10
#: More diagnostics than this are summarised: one line per code, with its count and first message.
MAX_DIAGNOSTICS = 40
#: The longest call or loader name shown whole in a table or timeline.
MAX_NAME = 24


def number(value: int | Fraction | None) -> str:
    """A count grouped by thousands (``3,908``); a ratio exactly (``2.1``, ``1/3``)."""
    if value is None:
        return "?"
    if isinstance(value, Fraction) and value.denominator != 1:
        return format_number(value)
    return f"{int(value):,}"


# -- plans -----------------------------------------------------------------------------------


def plan_text(plan: Plan) -> str:
    config = plan.config
    head = [
        f"run: max_duration {'none' if config.max_duration is None else config.max_duration}"
        f" · resume {config.resume.value} · data {config.data.value}",
    ]
    if plan.checkpoint is not None:
        head.append(f"from: {_position(plan.start)}")
    shown, left_out = _edges(plan.segments)
    rows = [
        ["call", "action", "loader", "start", "stop", "steps", "epochs", "samples", "tokens"],
        *(_segment_row(s) for s in shown),
    ]
    table = _table(rows, frozenset({3, 4, 5, 6, 7, 8}))
    lines = [*head, "", *_elide(table, left_out, "calls"), ""]
    lines.append(f"total: {number(plan.total_steps)} steps · ends at {_position(plan.stop)}")
    lines.append("")
    lines.extend(timeline(plan))
    if plan.diagnostics:
        lines.append("")
        lines.append("diagnostics:")
        lines.extend(f"  {line}" for line in _diagnostics(plan.diagnostics))
    return "\n".join(lines) + "\n"


def _edges(items: Sequence[_T]) -> tuple[list[_T], int]:
    """The rows a table shows: all of them, or the first and last ``EDGE_ROWS`` when there are
    more than ``MAX_ROWS``; and how many are left out."""
    if len(items) <= MAX_ROWS:
        return list(items), 0
    return [*items[:EDGE_ROWS], *items[-EDGE_ROWS:]], len(items) - 2 * EDGE_ROWS


def _elide(table: list[str], left_out: int, what: str) -> list[str]:
    """``table`` (a header and the rows of ``_edges``) with a line in place of the rows left out."""
    if not left_out:
        return table
    gap = f"... {number(left_out)} more {what} (--json lists every one) ..."
    return [*table[: 1 + EDGE_ROWS], gap, *table[1 + EDGE_ROWS :]]


def _diagnostics(diagnostics: Sequence[Diagnostic]) -> list[str]:
    """One line per diagnostic; past ``MAX_DIAGNOSTICS``, one line per code (in order of first
    appearance) with its count and its first message, so that no code is hidden."""
    if len(diagnostics) <= MAX_DIAGNOSTICS:
        return [_diagnostic(d) for d in diagnostics]
    by_code: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_code.setdefault(d.code, []).append(d)
    lines = [f"{number(len(diagnostics))} diagnostics, by code (--json lists every one):"]
    for found in by_code.values():
        first = found[0]
        if len(found) == 1:
            lines.append(_diagnostic(first))
            continue
        where = f" [{first.call}]" if first.call else ""
        lines.append(
            f"{first.severity.value:<7} {first.code} ({number(len(found))} times), "
            f"the first{where}: {first.message}"
        )
    return lines


def _clip(name: str) -> str:
    """A name as a table shows it: whole, or its start and end when it is longer than
    ``MAX_NAME`` (names of phases often differ at the end)."""
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 11]}...{name[-8:]}"


def _segment_row(s: Segment) -> list[str]:
    steps = number(s.steps) if s.action is not Action.SKIP else "-"
    if s.stop_at_runtime:
        steps = f"<={steps}"
    return [
        _clip(s.name),
        s.action.value,
        _clip(s.loader.name or "-"),
        f"{number(s.start.batch)}ba",
        f"{number(s.stop.batch)}ba",
        steps,
        _epochs(s.start, s.stop, s.loader),
        number(s.stop.sample - s.start.sample),
        _difference(s.stop.token, s.start.token),
    ]


def _epochs(start: Progress, stop: Progress, loader: Loader) -> str:
    if loader.samples is None:
        return "-"
    delta = (
        stop.epoch
        - start.epoch
        + Fraction(stop.sample_in_epoch - start.sample_in_epoch, loader.samples)
    )
    return number(delta) if delta.denominator == 1 else format_number(delta)


def _difference(stop: int | None, start: int | None) -> str:
    return "?" if stop is None or start is None else number(stop - start)


def _position(p: Progress) -> str:
    tokens = "" if p.token is None else f", token {number(p.token)}"
    return (
        f"step {number(p.batch)} · epoch {number(p.epoch)}, {number(p.sample_in_epoch)} samples "
        f"in · sample {number(p.sample)}{tokens}"
    )


def _diagnostic(d: Diagnostic) -> str:
    where = f" [{d.call}]" if d.call else ""
    return f"{d.severity.value:<7} {d.code}{where}: {d.message}"


def _table(rows: list[list[str]], numeric: frozenset[int] = frozenset()) -> list[str]:
    """Columns padded to their widest cell; ``numeric`` columns aligned right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


#: Each call's name, and its parts: a character and how many steps it stands for.
_Spans = list[tuple[str, list[tuple[str, int]]]]


def timeline(plan: Plan) -> list[str]:
    """One line, one span per fit call, proportional to steps, with a legend.

    ``.`` trained before the checkpoint, ``>`` where training resumes, ``=`` steps to train,
    ``R`` steps that read replayed samples, ``x`` an epoch's samples skipped or abandoned.
    """
    spans: _Spans = []
    first_active = _first_active(plan)
    for s in plan.segments:
        parts: list[tuple[str, int]] = []
        done = s.entry.start.batch if s.action is Action.SKIP else s.start.batch
        if s.action is Action.SKIP and s.entry.stop is not None:
            parts.append((".", s.entry.stop.batch - s.entry.start.batch))
        elif s.action is Action.RESUME:
            parts.append((".", max(0, done - s.entry.start.batch)))
        for gap in (s.abandoned, s.skipped):
            if gap is not None:
                parts.append(("x", _steps_of(gap, s.loader)))
        replay = 0 if s.replayed is None else min(s.steps, _steps_of(s.replayed, s.loader))
        if s.action is Action.RESUME or (plan.checkpoint is not None and s is first_active):
            parts.append((">", 0))
        parts.append(("R", replay))
        parts.append(("=", s.steps - replay))
        spans.append((s.name, parts))
    per_call = _one_span_per_call(spans)
    line, labels = per_call or _one_span(spans)
    used = set(line)
    meanings = [
        (".", "done before the checkpoint"),
        (">", "resume"),
        ("=", "to train"),
        ("R", "replays samples"),
        ("x", "samples skipped"),
    ]
    legend = " · ".join(f"'{char}' {meaning}" for char, meaning in meanings if char in used)
    lines = [f"timeline: {line}", f"          {labels}", f"          {legend}"]
    if per_call is None:
        lines.append(
            f"          {number(len(spans))} calls in one span, proportional to steps "
            f"(one each would not fit in {LINE_WIDTH} columns)"
        )
    return lines


def _one_span_per_call(spans: _Spans) -> tuple[str, str] | None:
    """The timeline with one span per call and its name under it, or ``None`` when that does
    not fit in ``LINE_WIDTH`` or a name would run into the next."""
    room = LINE_WIDTH - len("timeline: ")
    if 2 * len(spans) + 1 > room:
        return None
    weights = [w for _, parts in spans for _, w in parts]
    cells = _allocate(weights, TIMELINE_WIDTH)
    line, labels, k = "", "", 0
    for name, parts in spans:
        start = len(line)
        line += "|"
        for char, _ in parts:
            width = cells[k]
            k += 1
            line += ">" if char == ">" else char * width
        if labels and start <= len(labels):
            return None
        labels += " " * (start - len(labels)) + _clip(name)
    line += "|"
    if max(len(line), len(labels)) > room:
        return None
    return line, labels


def _one_span(spans: _Spans) -> tuple[str, str]:
    """The timeline of many calls as one span of ``TIMELINE_WIDTH`` cells: each cell shows what
    the step at its middle does, ``>`` is put where training resumes; the first and last
    calls are named under its ends."""
    parts = [part for _, span in spans for part in span]
    total = sum(w for _, w in parts)
    ends, end = [], 0  # the step each part ends at
    for _, weight in parts:
        end += weight
        ends.append(end)
    # Cell i's middle is at step (2i + 1) * total / (2 * TIMELINE_WIDTH): compare it exactly.
    scaled = [2 * TIMELINE_WIDTH * end for end in ends]
    cells = [
        parts[bisect.bisect_right(scaled, (2 * cell + 1) * total)][0]
        for cell in range(TIMELINE_WIDTH if total else 0)
    ]
    resume = next((i for i, (char, _) in enumerate(parts) if char == ">"), None)
    if resume is not None:
        at = ends[resume] * TIMELINE_WIDTH // total if total else 0
        cells.insert(at, ">")
    line = "|" + "".join(cells) + "|"
    first, last = _clip(spans[0][0]), _clip(spans[-1][0])
    return line, first + " " * max(1, len(line) - len(first) - len(last)) + last


def _first_active(plan: Plan) -> Segment | None:
    return next((s for s in plan.segments if s.action is not Action.SKIP), None)


def _steps_of(samples: SampleRange, loader: Loader) -> int:
    return -(-samples.samples // loader.batch_size)


def _allocate(weights: list[int], width: int) -> list[int]:
    """Cells for each weight: proportional, at least one for any non-zero weight."""
    total = sum(weights)
    if total == 0:
        return [0] * len(weights)
    return [max(1, w * width // total) if w else 0 for w in weights]


# -- schedules and events ----------------------------------------------------------------------

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
        for piece in curve.pieces:
            rows.append(
                [
                    piece.piece.kind,
                    _clip(boundary_text(piece.piece.until)),
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
        lines.extend(f"  {line}" for line in _table(rows, frozenset({2, 3})))
        for index, piece in enumerate(curve.pieces):
            if piece.drops:
                head = f"  pieces[{index}] drops by {format_number(piece.piece.gamma or 0)} at "
                lines.append(_steps_line(head, piece.drops, len(piece.drops), complete=True))
    if events:
        if lines:
            lines.append("")
        lines.append("events:")
        width = max(len(_clip(name)) for name in events)
        for name, found in events.items():
            head = f"  {_clip(name).ljust(width)}  {interval_text(found.interval)}: "
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


def _value_json(value: Value) -> dict[str, Any]:
    exact = format_number(value) if isinstance(value, Fraction) else None
    return {"value": float(value), "exact": exact}


def schedule_json(plan: Plan, curve: ResolvedSchedule | None) -> dict[str, Any] | None:
    """The schedule placed on ``plan``: every piece with its steps and factors."""
    if curve is None:
        return None
    timeline = Timeline.of(plan)
    return {
        "text": str(curve.schedule),
        "initial": format_number(curve.schedule.initial),
        "start": curve.start,
        "end": curve.end,
        "pieces": [
            {
                "kind": p.piece.kind,
                "until": boundary_text(p.piece.until),
                "start": p.start,
                "stop": p.stop,
                "clock_at_stop": clock_at(timeline, p.stop),
                "start_factor": _value_json(p.start_value),
                "stop_factor": _value_json(p.stop_value),
                "drops": list(p.drops),
            }
            for p in curve.pieces
        ],
    }


#: ``--json`` lists at most this many steps of an event interval (and says when there are more).
MAX_JSON_EVENTS = 1_000_000


def events_json(events: dict[str, Events]) -> list[dict[str, Any]]:
    """Every event interval with the steps it is due at: all of them, up to
    ``MAX_JSON_EVENTS``; ``complete`` says whether that is all."""
    found = []
    for name, interval in events.items():
        steps: list[int] = []
        complete = True
        for step in interval.steps():
            if len(steps) == MAX_JSON_EVENTS:
                complete = False
                break
            steps.append(step)
        text = interval_text(interval.interval)
        found.append({"name": name, "interval": text, "steps": steps, "complete": complete})
    return found


# -- JSON --------------------------------------------------------------------------------------


def _range_json(r: SampleRange | None) -> dict[str, int] | None:
    return None if r is None else {"epoch": r.epoch, "start": r.start, "stop": r.stop}


def plan_json(plan: Plan) -> dict[str, Any]:
    return {
        "config": {
            "max_duration": None
            if plan.config.max_duration is None
            else str(plan.config.max_duration),
            "resume": plan.config.resume.value,
            "data": plan.config.data.value,
        },
        "start": _progress_to_dict(plan.start),
        "stop": _progress_to_dict(plan.stop),
        "total_steps": plan.total_steps,
        "complete": plan.complete,
        "ok": plan.ok,
        "segments": [
            {
                "name": s.name,
                "action": s.action.value,
                "loader": s.loader.name,
                "steps": s.steps,
                "start_step": s.start_step,
                "start": _progress_to_dict(s.start),
                "stop": _progress_to_dict(s.stop),
                "target": str(s.target),
                "origin": _progress_to_dict(s.origin),
                "replayed": _range_json(s.replayed),
                "skipped": _range_json(s.skipped),
                "abandoned": _range_json(s.abandoned),
                "world_size": s.loader.world_size,
                "tails": [
                    {
                        "first_epoch": t.first,
                        "last_epoch": t.last,
                        "repeated": t.repeated,
                        "dropped": t.dropped,
                        "text": str(t),
                    }
                    for t in s.tails
                ],
                "stop_at_runtime": s.stop_at_runtime,
            }
            for s in plan.segments
        ],
        "diagnostics": [
            {"code": d.code, "severity": d.severity.value, "message": d.message, "call": d.call}
            for d in plan.diagnostics
        ],
    }


# -- conversions -------------------------------------------------------------------------------


def convert_text(target: Time, loader: Loader) -> str:
    """``target`` in every unit, at the start of a run on ``loader``."""
    geometry = (
        f"{number(loader.samples)} samples an epoch" if loader.samples is not None else "a stream"
    )
    tokens = (
        f", {number(loader.tokens_per_sample)} tokens a sample"
        if loader.tokens_per_sample is not None
        else ""
    )
    drop = ", drop_last" if loader.drop_last else ""
    lines = [f"{target} on {geometry}, batch {number(loader.batch_size)}{tokens}{drop}:"]
    start = Progress()
    try:
        steps = start.steps_until(target, loader=loader)
    except ConversionError as error:
        lines.append(f"  {error}")
        return "\n".join(lines) + "\n"
    stop = start.advance(loader, steps)
    for unit in (Unit.BA, Unit.SP, Unit.EP, Unit.TOK):
        try:
            reached = stop.time_in(unit, loader=loader)
        except ConversionError as error:
            lines.append(f"  {unit.value:<4}unknown: {_missing_hint(error)}")
            continue
        note = ""
        if unit is target.unit and reached != target:
            note = f"   (the first step boundary at or past {target})"
        elif unit is Unit.BA:
            note = "   (optimizer steps to reach it)"
        lines.append(f"  {unit.value:<4}{number(reached.value)}{note}")
    return "\n".join(lines) + "\n"


def _missing_hint(error: ConversionError) -> str:
    hints = {
        "loader.samples": "give --samples",
        "loader.tokens_per_sample": "give --tokens-per-sample",
        "progress.token": "give --tokens-per-sample",
    }
    return hints.get(error.missing, str(error))


# -- checkpoints -------------------------------------------------------------------------------


def checkpoint_text(checkpoint: Checkpoint, source: str, version: object) -> str:
    state = "loader state saved" if checkpoint.loader_state else "no loader state"
    lines = [
        f"{source}: durations checkpoint, format {version}, {state}",
        f"progress: {_position(checkpoint.progress)}",
    ]
    if checkpoint.ledger is None:
        lines.append("ledger: none (a checkpoint without a ledger is located in the script's plan)")
    else:
        lines.append(f"ledger: {len(checkpoint.ledger)} call(s)")
        shown, left_out = _edges(checkpoint.ledger)
        rows = [["call", "state", "loader", "asked", "start", "target", "stop", "fingerprint"]]
        rows.extend(_entry_row(e) for e in shown)
        table = _elide(_table(rows, frozenset({4, 6})), left_out, "calls")
        lines.extend("  " + line for line in table)
    return "\n".join(lines) + "\n"


def _entry_row(e: LedgerEntry) -> list[str]:
    if e.duration is not None:
        asked = f"duration {e.duration}"
    elif e.until is not None:
        asked = f"until {e.until}"
    else:
        asked = "max_duration"
    if e.reset_time:
        asked += ", reset_time"
    return [
        _clip(e.name),
        "finished" if e.finished else "started",
        _clip(e.loader.name or "-"),
        asked,
        f"{number(e.start.batch)}ba",
        str(e.target),
        "-" if e.stop is None else f"{number(e.stop.batch)}ba",
        e.fingerprint,
    ]


# -- comparisons -------------------------------------------------------------------------------


#: The calls named at each end of the steps line of a comparison of many calls.
_EDGE_CALLS = 3


def compare_text(comparison: Comparison, source: str) -> str:
    plan = comparison.plan
    calls = [f"{_clip(s.name)} {number(s.steps)}" for s in plan.segments]
    if len(calls) > 2 * _EDGE_CALLS:
        left_out = f"... {number(len(calls) - 2 * _EDGE_CALLS)} more calls ..."
        calls = [*calls[:_EDGE_CALLS], left_out, *calls[-_EDGE_CALLS:]]
    per_call = " · ".join(calls)
    crash = (
        f", with a crash after step {number(comparison.crash_at)} and the same script run again"
        if comparison.crash_at is not None
        else ""
    )
    lines = [
        f"{source}{crash}",
        f"durations plans {number(plan.total_steps)} steps ({per_call})",
        "",
    ]
    rows = [["trainer", "version", "steps", "outcome"]]
    for t in comparison.trainers:
        if not t.supported:
            outcome = f"cannot say it: {t.reason}"
            steps = "-"
        else:
            outcome = (
                "trains exactly the plan" if t.agrees else f"{len(t.differences)} difference(s)"
            )
            steps = number(t.steps)
        rows.append([t.trainer, t.version, steps, outcome])
    lines.extend(_table(rows, frozenset({2})))
    for t in comparison.trainers:
        if not t.supported:
            continue
        lines.append("")
        lines.append(f"{t.trainer} {t.version}, written as:")
        lines.extend(f"  {note}" for note in t.translation)
        for difference in t.differences:
            lines.append(f"  - {difference}")
    return "\n".join(lines) + "\n"


def compare_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "plan": plan_json(comparison.plan),
        "crash_at": comparison.crash_at,
        "trainers": [
            {
                "trainer": t.trainer,
                "version": t.version,
                "supported": t.supported,
                "reason": t.reason,
                "steps": t.steps,
                "agrees": t.agrees,
                "translation": list(t.translation),
                "differences": list(t.differences),
                "calls": [
                    {
                        "steps": o.steps,
                        "counters": dict(o.counters),
                        "messages": list(o.messages),
                        "error": None
                        if o.error is None
                        else {"type": o.error.type, "message": o.error.message},
                        "crashed": o.crashed,
                    }
                    for o in t.outcomes
                ],
            }
            for t in comparison.trainers
        ],
    }
