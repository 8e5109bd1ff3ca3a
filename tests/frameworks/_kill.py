"""Kill a training process from outside: what the kill-and-rerun tests share.

A worker appends one JSON object per line to its log (flushed and synced), so a line the kill
cut short is the only one lost; :func:`read_log` reads the rest. :func:`run_and_kill` starts a
worker module in a session of its own and sends SIGKILL to its process group as soon as its log
says so.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

Log = list[dict[str, Any]]


def read_log(path: Path) -> Log:
    """The items of a worker's JSON-lines log (none if it does not exist yet)."""
    items = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by the kill
            continue
    return items


def held_or_past(hold_at: int | None, kill_at: int | None) -> Callable[[Log], bool]:
    """Kill once the log holds after ``hold_at``'s checkpoint, or shows step ``kill_at``."""

    def due(items: Log) -> bool:
        return (hold_at is not None and any("hold" in i for i in items)) or (
            kill_at is not None and any(i.get("step", -1) >= kill_at for i in items)
        )

    return due


def run_and_kill(
    module: str, job: Path, log: Path, output: Path, due: Callable[[Log], bool], timeout: float
) -> tuple[int, bool]:
    """Run ``python -m module job`` from the repository; SIGKILL its process group once
    ``due(read_log(log))``, or at ``timeout``. Returns the exit code and whether it was killed
    on purpose."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    with output.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", module, str(job)],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        killed = False
        while process.poll() is None and time.monotonic() < deadline:
            if due(read_log(log)):
                os.killpg(process.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.02)
        if process.poll() is None and not killed:
            os.killpg(process.pid, signal.SIGKILL)
        return process.wait(), killed


def torchrun_held(
    module: str,
    job_dir: Path,
    *,
    world: int,
    hold_at: int | None,
    name: str,
    port: int,
    kill: Callable[[int], object],
) -> Log:
    """``torchrun`` ``world`` processes of ``python -m module job_dir`` (which logs to
    ``job_dir/<name>.jsonl``); with ``hold_at``, ``kill`` the job (its launcher's pid: every
    worker runs in a session of its own) once every rank logged that it holds after that
    step's checkpoint. Asserts the job ended as asked (exit 0, or SIGKILL), and returns the
    log."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={world}"]
    command += [f"--master_port={port}", "-m", module, str(job_dir)]
    log = job_dir / f"{name}.jsonl"
    with (job_dir / f"{name}.out").open("wb") as out:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while process.poll() is None and time.monotonic() < deadline:
            if hold_at is not None and sum("hold" in i for i in read_log(log)) == world:
                kill(process.pid)
                break
            time.sleep(0.05)
        code = process.wait(timeout=60)
    output = (job_dir / f"{name}.out").read_text(errors="replace")[-3000:]
    assert code == (0 if hold_at is None else -signal.SIGKILL), output
    return read_log(log)
