"""`durations inspect` and `--resume-from` on Lightning checkpoints (need torch to read)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from durations import FitCall, Loader, RunConfig, plan

ROOT = Path(__file__).resolve().parent.parent.parent
SMALL = str(ROOT / "tests" / "golden" / "two-phase-small.toml")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "durations", *args], capture_output=True, text=True, check=False
    )


def test_lightning_checkpoint_without_a_ledger(tmp_path: Path) -> None:
    """A plain Lightning .ckpt is located in the script's plan by its global_step."""
    torch = pytest.importorskip("torch")
    path = tmp_path / "step13.ckpt"
    torch.save({"epoch": 1, "global_step": 13, "state_dict": {}}, path)
    inspected = run("inspect", str(path))
    assert inspected.returncode == 0
    # The header names the file, so where it wraps depends on the path's length.
    assert "lightning checkpoint (no ledger)" in " ".join(inspected.stdout.split())
    resumed = run("plan", SMALL, "--resume-from", str(path))
    assert resumed.returncode == 0
    assert "checkpoint-located" in resumed.stdout
    assert "total: 10 steps · ends at step 23" in resumed.stdout


def test_lightning_checkpoint_with_a_ledger(tmp_path: Path) -> None:
    """A .ckpt written by the durations callback carries its ledger, and plans from it."""
    torch = pytest.importorskip("torch")
    a = Loader(samples=100, batch_size=10, name="a")
    b = Loader(samples=300, batch_size=10, name="b")
    full = plan(
        RunConfig(max_duration="2ep"), [FitCall(loader=a), FitCall(loader=b, duration="0.1ep")]
    )
    path = tmp_path / "step21.ckpt"
    torch.save({"epoch": 2, "global_step": 1, "durations": full.checkpoint_at(21).to_dict()}, path)
    inspected = run("inspect", str(path))
    assert inspected.returncode == 0
    assert "ledger: 2 call(s)" in inspected.stdout
    resumed = run("plan", SMALL, "--resume-from", str(path))
    assert "total: 2 steps · ends at step 23" in resumed.stdout
