"""``durations audit``'s output: a run's step log against its plan, as text or JSON."""

from __future__ import annotations

from typing import Any

from ..audit import Audit, Divergence, StepVerdict
from ._text import number

#: Runs of steps with the same verdict shown in the text (``--json`` lists every step).
SHOWN_RUNS = 40
#: Divergences listed in the text, and in the JSON.
SHOWN_DIVERGENCES = 20
MAX_JSON_DIVERGENCES = 10_000
#: Steps listed in the JSON.
MAX_JSON_STEPS = 100_000


def _verdict(step: StepVerdict) -> str:
    if step.data == "missing":
        return "not logged"
    text = f"data {step.data}, lr {step.lr}"
    return text + ("" if step.checkpoint is None else f", checkpoint {step.checkpoint}")


def _runs(audit: Audit) -> list[tuple[int, int, str]]:
    """Maximal runs of steps with the same verdict (a checkpoint's step is a run of its own)."""
    runs: list[tuple[int, int, str]] = []
    for step in audit.steps:
        text = _verdict(step)
        if runs and runs[-1][2] == text and runs[-1][1] == step.step - 1:
            runs[-1] = (runs[-1][0], step.step, text)
        else:
            runs.append((step.step, step.step, text))
    return runs


def audit_text(audit: Audit, scenario: str, log: str) -> str:
    """The audit as lines of text: the plan's steps, restarts, verdicts, divergences."""
    restarts = len(audit.restarts)
    lines = [
        f"audit of {log} against the plan of {scenario}:",
        f"  plan: lifetime steps {number(audit.start + 1)} to {number(audit.stop)}; log: "
        f"{number(audit.records)} records, {number(restarts)} "
        f"restart{'' if restarts == 1 else 's'}",
    ]
    if audit.base_lr is not None:
        lines.append(f"  base learning rate: {audit.base_lr!r}")
    for restart in audit.restarts:
        lines.append(
            f"  restart at log line {number(restart.line)}: step {number(restart.step)} again, "
            f"the newest checkpoint logged before it after step {number(restart.checkpoint)}"
        )
    lines.append("")
    runs = _runs(audit)
    for low, high, text in runs[:SHOWN_RUNS]:
        span = f"step {number(low)}" if low == high else f"steps {number(low)}-{number(high)}"
        lines.append(f"{span}: {text}")
    if len(runs) > SHOWN_RUNS:
        lines.append(f"... and {number(len(runs) - SHOWN_RUNS)} more runs of steps (--json)")
    for note in audit.notes:
        lines.append(f"note: {note}")
    lines.append("")
    first = audit.first
    if first is None:
        lines.append("the run followed the plan")
        return "\n".join(lines) + "\n"
    lines.append(f"the run did not follow the plan: first divergence at step {number(first.step)}")
    lines.extend(_divergence_lines(first))
    rest = audit.divergences[1:]
    if rest:
        lines.append("")
        lines.append(f"{number(len(rest))} more divergence{'' if len(rest) == 1 else 's'}:")
        for divergence in rest[:SHOWN_DIVERGENCES]:
            lines.append(f"  {divergence}")
        if len(rest) > SHOWN_DIVERGENCES:
            lines.append(f"  ... and {number(len(rest) - SHOWN_DIVERGENCES)} more (--json)")
    return "\n".join(lines) + "\n"


def _divergence_lines(divergence: Divergence) -> list[str]:
    line = "not logged" if divergence.line is None else f"log line {number(divergence.line)}"
    return [
        f"  where: step {number(divergence.step)} ({line}), {divergence.kind}",
        f"  log:   {divergence.logged}",
        f"  plan:  {divergence.planned}",
        f"  rule:  {divergence.rule} (docs/semantics.md)",
    ]


def _divergence_json(divergence: Divergence) -> dict[str, Any]:
    return {
        "step": divergence.step,
        "line": divergence.line,
        "kind": divergence.kind,
        "logged": divergence.logged,
        "planned": divergence.planned,
        "rule": divergence.rule,
    }


def audit_json(audit: Audit, scenario: str, log: str) -> dict[str, Any]:
    """The audit as JSON values: every divergence and every step's verdict (up to limits)."""
    return {
        "scenario": scenario,
        "log": log,
        "ok": audit.ok,
        "plan": {"start": audit.start, "stop": audit.stop},
        "records": audit.records,
        "base_lr": audit.base_lr,
        "restarts": [
            {"line": r.line, "step": r.step, "checkpoint": r.checkpoint} for r in audit.restarts
        ],
        "first": None if audit.first is None else _divergence_json(audit.first),
        "divergences": [_divergence_json(d) for d in audit.divergences[:MAX_JSON_DIVERGENCES]],
        "steps": [
            {"step": s.step, "data": s.data, "lr": s.lr, "checkpoint": s.checkpoint}
            for s in audit.steps[:MAX_JSON_STEPS]
        ],
        "complete": len(audit.steps) <= MAX_JSON_STEPS
        and len(audit.divergences) <= MAX_JSON_DIVERGENCES,
        "notes": list(audit.notes),
    }
