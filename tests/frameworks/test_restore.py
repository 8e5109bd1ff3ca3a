"""After a call the script skips, the model holds what an uninterrupted run holds there, bit for
bit: the state at the call's stop, loaded from its final checkpoint (``Start.restore_from``).

The script is ``_schedule_worker.py``'s, on Hugging Face and Lightning (2 epochs of A, then
0.1 epoch of B, 23 steps, AdamW at a scheduled rate: every step changes the weights); each
process logs the model's weights when each ``callback.train``/``fit`` returns. Killed with
SIGKILL after the checkpoint of step 22 (inside the second call) and run again, the weights the
script sees right after the first call's skipped ``train``/``fit`` are the uninterrupted run's
at the end of that call (before the fix: the freshly built model's, until the second call
resumed), and the end is the uninterrupted end.

A finished script run again is checked in ``test_integrations.py`` (in one process: no kill is
needed); Keras and Composer in ``test_keras_integration.py`` and
``test_composer_integration.py``.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.frameworks._schedule_runs import run_worker

FRAMEWORKS = {"hf": "transformers", "lightning": "pytorch_lightning"}
#: Inside the second call, after two of its checkpoints.
KILL = 22


def _ok(process: dict[str, Any]) -> None:
    assert process["returncode"] == 0, process["output"]
    assert process["end"], process["output"]


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_killed_in_the_second_call_the_first_s_skip_holds_its_final_weights(
    framework: str, tmp_path: Path
) -> None:
    """Killed with SIGKILL after step 22's checkpoint and run again, the script sees the end of
    the first call's weights right after its skipped call (not the fresh model's), and ends
    with the uninterrupted run's weights, bit for bit."""
    pytest.importorskip(FRAMEWORKS[framework])
    (tmp_path / "uncrashed").mkdir()
    full = run_worker(framework, tmp_path / "uncrashed", "p0")
    _ok(full)
    assert list(full["after"]) == ["pretrain", "curated"]
    assert full["after"]["pretrain"] != full["after"]["curated"]  # the weights do change
    killed = run_worker(framework, tmp_path, "p1", hold_at=KILL)
    assert killed["killed"], killed["output"]
    assert killed["returncode"] == -signal.SIGKILL, killed["output"]
    again = run_worker(framework, tmp_path, "p2")
    _ok(again)
    assert again["starts"] == [KILL], again["starts"]
    assert again["after"] == full["after"]
