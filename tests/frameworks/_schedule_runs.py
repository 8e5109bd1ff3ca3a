"""Processes of ``_schedule_worker.py``'s script, killed from outside: what the schedule, save_on
and restore tests share.

Kept out of the test modules so that a test importing them does not make pytest's assertion
rewriting compile a test module in the middle of a test (on CPython 3.11.7 that once failed with
"SystemError: AST constructor recursion depth mismatch").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from durations import Every, plan
from tests.frameworks._kill import held_or_past, read_log, run_and_kill
from tests.frameworks._schedule_worker import CALLS, CONFIG

TIMEOUT = 300.0


def run_worker(
    framework: str,
    root: Path,
    name: str,
    *,
    hold_at: int | None = None,
    kill_at: int | None = None,
    save_on: str | None = None,
    accumulation: int = 1,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one process of the script; SIGKILL it once it holds after ``hold_at``'s checkpoint,
    or as soon as its log shows step ``kill_at`` (its steps then paced by 0.1 s, so that on a
    busy machine the kill still lands inside the run)."""
    pace = 0.1 if kill_at is not None else 0
    log = root / f"{name}.jsonl"
    job = root / f"{name}.json"
    job.write_text(
        json.dumps(
            {
                "framework": framework,
                "root": str(root / "run"),
                "log": str(log),
                "hold_at": hold_at,
                "pace": pace,
                "save_on": save_on,
                "accumulation": accumulation,
                **(extra or {}),
            }
        )
    )
    output = root / f"{name}.out"
    due = held_or_past(hold_at, kill_at)
    returncode, killed = run_and_kill(
        "tests.frameworks._schedule_worker", job, log, output, due, TIMEOUT
    )
    items = read_log(log)
    return {
        "name": name,
        "returncode": returncode,
        "killed": killed,
        "starts": [i["start"] for i in items if "start" in i],
        "steps": [(i["step"], i["lr"], i["call"]) for i in items if "step" in i],
        "after": {i["after"]: i["weights"] for i in items if "after" in i},
        "end": any("end" in i for i in items),
        "output": output.read_text(errors="replace").splitlines()[-20:],
    }


def saved_on(interval: str) -> list[int]:
    """The lifetime steps a run of the script saves on with ``save_on=interval``: the interval
    resolved on the plan, and each call's stop."""
    full = plan(CONFIG, CALLS)
    grid = set(Every(interval).resolve(full).steps())
    return sorted(grid | {segment.stop.batch for segment in full.segments})
