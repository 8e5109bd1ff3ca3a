"""The data-parallel loop of docs/training-loop.md, run as written under
``torchrun --nproc_per_node=2`` (gloo, CPU): every rank stops at the plan's step, and the
samples the ranks read, step by step, are the plan's."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> str:
    text = (ROOT / "docs" / "training-loop.md").read_text()
    block = re.search(r"```python\n(# ddp_loop\.py.*?)```", text, re.DOTALL)
    assert block is not None, "the DDP loop is gone from docs/training-loop.md"
    return block.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_documented_loop_trains_the_plan(tmp_path: Path) -> None:
    """2 processes: 12 steps, 204 samples (101 padded to 102 an epoch), exactly the plan's."""
    pytest.importorskip("torch")
    script = tmp_path / "ddp_loop.py"
    script.write_text(_script())
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2"]
    command += [f"--master_port={_free_port()}", str(script)]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "12 steps, 204 samples read, as planned" in result.stdout
