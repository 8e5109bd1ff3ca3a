"""``durations compare``: each trainer's emulation next to the plan, as text and JSON."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._text import aligned, clip, number
from .as_json import plan_json

if TYPE_CHECKING:  # only for annotations: `plan` does not import the trainer profiles
    from ..compare import Comparison


#: The calls named at each end of the steps line of a comparison of many calls.
_EDGE_CALLS = 3


def compare_text(comparison: Comparison, source: str) -> str:
    plan = comparison.plan
    calls = [f"{clip(s.name)} {number(s.steps)}" for s in plan.segments]
    if len(calls) > 2 * _EDGE_CALLS:
        left_out = f"... {number(len(calls) - 2 * _EDGE_CALLS)} more calls ..."
        calls = [*calls[:_EDGE_CALLS], left_out, *calls[-_EDGE_CALLS:]]
    per_call = " · ".join(calls)
    crash = (
        f", with a crash after step {number(comparison.crash_at)} and the same script run again"
        if comparison.crash_at is not None
        else ""
    )
    world = comparison.world_size
    processes = "process" if world == 1 else "processes"
    if world is not None:
        crash += f" on {number(world)} {processes}"
    lines = [f"{source}{crash}", f"durations plans {number(plan.total_steps)} steps ({per_call})"]
    resumed = comparison.resumed
    if resumed is not None and comparison.crash_at is not None:
        lines.append(
            f"  and on {number(world or 0)} {processes} from step "
            f"{number(comparison.crash_at)}: {number(resumed.total_steps)} more steps, "
            f"{number(comparison.total_steps)} in all"
        )
    lines.append("")
    rows = [["trainer", "version", "steps", "outcome"]]
    for t in comparison.trainers:
        if not t.supported:
            outcome = f"cannot say it: {t.reason}"
            steps = "-"
        else:
            outcome = (
                "trains exactly the plan" if t.agrees else f"{len(t.differences)} difference(s)"
            )
            if comparison.scenario.schedule is not None and not t.rates:
                outcome += "; learning rate not compared"
            steps = number(t.steps)
        rows.append([t.trainer, t.version, steps, outcome])
    lines.extend(aligned(rows, frozenset({2})))
    for t in comparison.trainers:
        if not t.supported:
            continue
        lines.append("")
        lines.append(f"{t.trainer} {t.version}, written as:")
        lines.extend(f"  {note}" for note in t.translation)
        if comparison.scenario.schedule is not None:
            said = t.schedule or "not modelled: this profile does not model its scheduler"
            lines.append(f"  learning rate: {said}")
        for difference in t.differences:
            lines.append(f"  - {difference}")
    return "\n".join(lines) + "\n"


def compare_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "plan": plan_json(comparison.plan),
        "crash_at": comparison.crash_at,
        "world_size": comparison.world_size,
        "resumed": None if comparison.resumed is None else plan_json(comparison.resumed),
        "total_steps": comparison.total_steps,
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
                "schedule": t.schedule,
                "rates": list(t.rates),
                "planned_rates": list(t.planned_rates),
                "calls": [
                    {
                        "steps": o.steps,
                        "counters": {key: _finite(v) for key, v in o.counters.items()},
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


def _finite(value: object) -> object:
    """A counter as JSON has it: an infinite or NaN float (Lightning's ``inf`` batches of a
    loader of unknown length) as its text, which JSON has no number for."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
