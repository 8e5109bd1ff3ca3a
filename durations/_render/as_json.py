"""``durations plan --json``: the plan, its schedule and its events as JSON values."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from .._grammar import format_number
from .._timeline import Timeline
from ..checkpoint import _progress_to_dict
from ..intervals import Events
from ..plans import Plan, SampleRange, Segment
from ..schedules import ResolvedSchedule, Value
from .schedule import boundary_text, clock_at, interval_text


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


#: ``--json`` lists at most this many event steps in all, over every interval (and each says
#: whether its list is complete): three ``every = "1ba"`` tables of a 10^15-step plan are the
#: same bounded output as one.
MAX_JSON_EVENTS = 100_000


def events_json(events: dict[str, Events]) -> list[dict[str, Any]]:
    """Every event interval with the steps it is due at, in order of the intervals, up to
    ``MAX_JSON_EVENTS`` steps in all; ``complete`` says whether an interval's list is all."""
    found = []
    left = MAX_JSON_EVENTS
    for name, interval in events.items():
        steps = list(itertools.islice(interval.steps(), left + 1))
        complete = len(steps) <= left
        del steps[left:]
        left -= len(steps)
        text = interval_text(interval.interval)
        found.append({"name": name, "interval": text, "steps": steps, "complete": complete})
    return found


def _range_json(r: SampleRange | None) -> dict[str, int] | None:
    return None if r is None else {"epoch": r.epoch, "start": r.start, "stop": r.stop}


def _sources_json(segment: Segment) -> list[dict[str, Any]]:
    """What a call reads of each source of its mixture; exact numbers as strings."""
    if segment.loader.mixture is None:
        return []
    asked = segment.loader.mixture.interleave.weights
    total = sum(r.read + r.repeated for r in segment.sources)
    return [
        {
            "name": r.name,
            "samples_per_pass": r.samples,
            "start": r.start,
            "stop": r.stop,
            "read": r.read,
            "repeated": r.repeated,
            "passes": str(r.passes),
            "tokens": r.tokens,
            "share": str(Fraction(r.read + r.repeated, total)) if total else "0",
            "requested": str(weight),
        }
        for r, weight in zip(segment.sources, asked, strict=True)
    ]


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
                "sources": _sources_json(s),
            }
            for s in plan.segments
        ],
        "cursors": plan.cursors_at(plan.total_steps),
        "diagnostics": [
            {"code": d.code, "severity": d.severity.value, "message": d.message, "call": d.call}
            for d in plan.diagnostics
        ],
    }
