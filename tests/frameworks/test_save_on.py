"""Checkpoint intervals from the plan: ``DurationsCallback(save_on=...)`` saves on the interval
resolved on the plan, one grid of lifetime steps across calls and restarts (rule S6), with the
framework's own periodic checkpoints off.

The script is ``_schedule_worker.py``'s: 2 epochs of A (10 steps an epoch), then 0.1 epoch of B
(3 steps). ``Every("0.25ep")`` on the run clock is due after steps 3, 5, 8, 10, 13, 15, 18 and
20 (A's quarter epochs, each rounded up to a step boundary), and B's 3 steps reach no quarter of
its epoch; the stop of each call (20 and 23) is always saved, so the ledger records it finished.
``Every("3ba")`` is due after 3, 6, ..., 18 and 21: step 21 is B's first, so a count restarted
per ``train()``/``fit()`` (as ``save_steps`` and ``every_n_train_steps`` are) would miss it.
Killed after a checkpoint and run again, the second process keeps that grid.
"""

from __future__ import annotations

import json
import random
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from durations import Every, plan
from tests.frameworks._schedule_runs import run_worker, saved_on
from tests.frameworks._schedule_worker import CALLS, CONFIG


def _saved_steps(framework: str, root: Path) -> list[int]:
    """The lifetime step of every checkpoint in ``root``, read from what the run wrote."""
    if framework == "hf":
        return sorted(
            json.loads(ledger.read_text())["progress"]["batch"]
            for ledger in root.glob("*/checkpoint-*/durations.json")
        )
    stops = {
        call.name: segment.stop.batch
        for call, segment in zip(CALLS, plan(CONFIG, CALLS).segments, strict=True)
    }
    steps = []
    for path in root.glob("*.ckpt"):
        found = re.fullmatch(r"(.+)-(?:step(\d+)|end)\.ckpt", path.name)
        assert found is not None, path.name
        steps.append(int(found[2]) if found[2] else stops[found[1]])
    return sorted(steps)


def _ok(process: dict[str, Any]) -> None:
    assert process["returncode"] == 0, process["output"]
    assert process["end"], process["output"]


# (interval, its grid with the call stops, why)
GRIDS = [
    (
        "0.25ep",
        [3, 5, 8, 10, 13, 15, 18, 20, 23],
        "quarter epochs of A rounded up, no quarter of B",
    ),
    ("3ba", [3, 6, 9, 12, 15, 18, 20, 21, 23], "21 is B's first step: the grid crosses calls"),
]


@pytest.mark.parametrize(("interval", "grid", "why"), GRIDS)
def test_the_grids_are_the_plan_s(interval: str, grid: list[int], why: str) -> None:
    """The expected grids, from the plan alone."""
    assert saved_on(interval) == grid, why


@pytest.mark.parametrize("framework", ["hf", "lightning"])
def test_save_on_saves_on_the_plan_s_grid_across_a_kill(framework: str, tmp_path: Path) -> None:
    """Uncrashed, the run saves exactly on the 0.25ep grid; killed with SIGKILL after a random
    checkpoint of the 3ba grid and run again unchanged, the checkpoints of both processes are
    that grid (nothing restarted per call or per process), and the run finishes."""
    pytest.importorskip({"hf": "transformers", "lightning": "pytorch_lightning"}[framework])
    (tmp_path / "uncrashed").mkdir()
    _ok(run_worker(framework, tmp_path / "uncrashed", "p0", save_on="0.25ep"))
    assert _saved_steps(framework, tmp_path / "uncrashed" / "run") == saved_on("0.25ep")

    expected = saved_on("3ba")
    hold = random.choice([k for k in expected if k < 20])
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    first = run_worker(framework, crashed, "p1", hold_at=hold, save_on="3ba")
    assert first["killed"], (hold, first)
    assert first["returncode"] == -signal.SIGKILL, (hold, first)
    assert _saved_steps(framework, crashed / "run") == [k for k in expected if k <= hold], hold
    second = run_worker(framework, crashed, "p2", save_on="3ba")
    _ok(second)
    assert second["starts"][0] == hold, (hold, second["starts"])
    assert _saved_steps(framework, crashed / "run") == expected, hold


# (save_on, what Session keeps or the error names, why)
SAVE_ON = [
    ("0.25ep", Every("0.25ep"), "a time string means Every"),
    (None, None, "no grid: the framework's own checkpoints only"),
]


@pytest.mark.parametrize(("given", "kept", "why"), SAVE_ON)
def test_save_on_argument(given: str | None, kept: Every | None, why: str) -> None:
    from durations.integrations._session import Session
    from durations.integrations.checkpoints import TRANSFORMERS

    assert Session(CONFIG, CALLS, "out", TRANSFORMERS, save_on=given).save_on == kept, why


def test_save_on_refuses_what_is_not_an_interval() -> None:
    """A number is not an interval: the error names the value and what would be valid."""
    from durations.integrations._session import Session
    from durations.integrations.checkpoints import TRANSFORMERS

    with pytest.raises(
        TypeError, match=r"save_on=500: expected a durations Every, At or AtCallEnds, a time string"
    ):
        Session(CONFIG, CALLS, "out", TRANSFORMERS, save_on=500)  # type: ignore[arg-type]
