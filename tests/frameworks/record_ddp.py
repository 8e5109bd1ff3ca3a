"""Run real multi-process (DDP, gloo, CPU) trainings; write ``tests/frameworks/observed_ddp.json``.

Usage, from the repository root, with the Python that has the frameworks installed::

    .venv-frameworks/bin/python -m tests.frameworks.record_ddp                  # whole grid
    .venv-frameworks/bin/python -m tests.frameworks.record_ddp --only transformers/crash
    .venv-frameworks/bin/python -m tests.frameworks.record_ddp --annotate       # re-check only

Every job is ``python -m torch.distributed.run --nproc_per_node=W --module
tests.frameworks._ddp_worker job.json`` with ``OMP_NUM_THREADS=1`` and a free master port, started
in its own process group. One job runs at a time.

- transformers: ``Trainer`` with ``use_cpu=True, ddp_backend="gloo", report_to=[]``.
- Lightning: ``Trainer(accelerator="cpu", strategy="ddp", devices=W)``; under torchrun it finds
  the torchelastic environment and starts no processes itself.

The uncrashed runs of one framework and world size share a job (each with a new trainer and
model). A crash scenario is one job of its own: it checkpoints every step, every rank holds after
checkpoint ``k`` is saved, and once all ranks hold, SIGKILL goes to the launcher's process group
and to each worker's (torchrun puts every worker in a session of its own; see
:func:`kill_job`). Each
resume (at the same or another world size) is again a job of its own, in the killed job's output
directory restored to what the kill left, so the resumes do not see each other's checkpoints.

Every run is checked against the rules of FINDINGS.md ("Multi-process (DDP) runs"), which
:func:`predict` implements; ``checks`` in the JSON says which run matched which rule.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "observed_ddp.json"
SEED = 0  # HF TrainingArguments(seed=0); Lightning seed_everything(0) -> PL_GLOBAL_SEED=0
HOLD_TIMEOUT = 240.0
JOB_TIMEOUT = 600.0

Spec = dict[str, Any]

# --------------------------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------------------------


def _rid(framework: str, world: int, spec: Spec) -> str:
    short = {"transformers": "hf", "lightning": "pl"}[framework]
    parts = [f"w{world}", f"n{spec['n']}", f"b{spec['batch']}"]
    if spec.get("own_sampler"):
        parts.append("ownsampler")
    else:
        parts.append("shuf" if spec.get("shuffle") else "seq")
    if spec.get("drop_last"):
        parts.append("drop")
    if spec.get("accum", 1) != 1:
        parts.append(f"ga{spec['accum']}")
    if spec.get("epochs", 1) != 1:
        parts.append(f"e{spec['epochs']}")
    return f"{short}/" + "_".join(parts)


def _plain(framework: str) -> list[tuple[int, str, Spec]]:
    """(world size, about, spec) of the uncrashed runs of ``framework``."""
    hf = framework == "transformers"
    runs: list[tuple[int, str, Spec]] = []
    small = {"n": 7, "batch": 2}
    big = {"n": 101, "batch": 10}
    even = {"n": 20, "batch": 10}
    for world in (2, 3):
        runs += [
            (world, "7 samples, batch 2: padding/cycling of a small uneven set", {**small}),
            (world, "7 samples, drop_last", {**small, "drop_last": True}),
            (world, "101 samples, batch 10", {**big}),
            (world, "101 samples, batch 10, drop_last", {**big, "drop_last": True}),
            (world, "20 samples, batch 10: divisible control", {**even}),
            (world, "gradient accumulation 2", {**big, "accum": 2}),
            (world, "gradient accumulation 2, drop_last", {**big, "drop_last": True, "accum": 2}),
            (world, "gradient accumulation 2 on a per-rank remainder", {**even, "accum": 2}),
            (
                world,
                "gradient accumulation 2, 7 samples, drop_last",
                {**small, "drop_last": True, "accum": 2},
            ),
        ]
        if hf:
            runs.append((world, "num_train_epochs=0.5", {**big, "epochs": 0.5}))
        else:
            runs.append(
                (
                    world,
                    "DataLoader(shuffle=True) (the runs above say shuffle=False)",
                    {**small, "shuffle": True},
                )
            )
            runs.append(
                (
                    world,
                    "own DistributedSampler(shuffle=False), use_distributed_sampler=False",
                    {**small, "own_sampler": True},
                )
            )
            runs.append(
                (
                    world,
                    "own DistributedSampler(shuffle=False), drop_last",
                    {**small, "own_sampler": True, "drop_last": True},
                )
            )
    for world in (1, 2, 3):
        runs.append(
            (
                world,
                "shuffled, 2 epochs, same seed: the permutation per world size",
                {**big, "shuffle": True, "epochs": 2},
            )
        )
    return runs


def _crashes(framework: str) -> list[dict[str, Any]]:
    """Crash scenarios: the killed job and the world sizes it is resumed at."""
    big = {"n": 101, "batch": 10, "epochs": 2}
    shuffle = {"shuffle": True} if framework == "transformers" else {}
    out = [
        {
            "world": 2,
            "hold_at": 4,
            "spec": {**big, **shuffle},
            "resume_worlds": [2, 3, 1],
            "about": "killed mid-epoch (after step 4 of 6 per epoch)",
        },
        {
            "world": 2,
            "hold_at": 6,
            "spec": {**big, **shuffle},
            "resume_worlds": [2, 3, 1],
            "about": "killed at the epoch boundary (after step 6 of 6)",
        },
        {
            "world": 3,
            "hold_at": 2,
            "spec": {**big, **shuffle},
            "resume_worlds": [3, 2],
            "about": "killed mid-epoch (after step 2 of 4 per epoch)",
        },
    ]
    if framework == "transformers":
        out.append(
            {
                "world": 2,
                "hold_at": 4,
                "spec": {**big},
                "resume_worlds": [3],
                "about": "sequential sampler, killed mid-epoch (after step 4 of 6)",
            }
        )
        out.append(
            {
                "world": 2,
                "hold_at": 2,
                "spec": {**big, "accum": 2, **shuffle},
                "resume_worlds": [2, 3],
                "about": "gradient accumulation 2, killed mid-epoch (after step 2 of 3)",
            }
        )
    for crash in out:
        crash["id"] = _rid(framework, crash["world"], crash["spec"]) + f"_crash{crash['hold_at']}"
    # No hold: each step sleeps 0.5 s; SIGKILL only the launcher's process group once checkpoint 4
    # is on disk, and watch what the workers do.
    orphan = {
        "world": 2,
        "kill_launcher_only_at": 4,
        "spec": {**big, "step_sleep": 0.5},
        "about": "SIGKILL to the launcher's process group only, once checkpoint 4 is on disk",
    }
    orphan["id"] = _rid(framework, 2, big) + "_killlauncher4"
    out.append(orphan)
    return out


def _checkpoint_on_disk(framework: str, output_dir: Path, step: int) -> bool:
    if framework == "transformers":
        return (output_dir / f"checkpoint-{step}" / "trainer_state.json").exists()
    return (output_dir / f"step={step}.ckpt").exists()


# --------------------------------------------------------------------------------------------
# Launching
# --------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _hold_lines(record_dir: Path, world: int) -> dict[int, int]:
    held: dict[int, int] = {}
    for rank in range(world):
        path = record_dir / f"rank{rank}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if line.startswith('{"hold"'):
                held[rank] = json.loads(line)["hold"]
    return held


def _descendants(root: int) -> list[int]:
    """Every live process below ``root``, from the parent ids in ``/proc/<pid>/stat``."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2 :].split()[0] != "Z"


def kill_job(launcher: int) -> dict[str, Any]:
    """SIGKILL the launcher's process group and the process group of every worker below it.

    torchrun starts every worker in a session of its own (torch/distributed/elastic/
    multiprocessing/subprocess_handler/subprocess_handler.py, ``start_new_session=True``), so
    killing the launcher's group alone leaves the workers running, orphaned.
    """
    launcher_group = os.getpgid(launcher)
    workers = _descendants(launcher)
    groups = {launcher_group}
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(pid))
    for group in sorted(groups):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {
        "process_groups_killed": len(groups),
        "processes_below_launcher": len(workers),
        "workers_in_own_process_groups": any(g != launcher_group for g in groups),
        "survivors": [pid for pid in workers if _alive(pid)],
    }


def _count_steps(record_dir: Path, world: int) -> list[int]:
    out = []
    for rank in range(world):
        path = record_dir / f"rank{rank}.jsonl"
        text = path.read_text() if path.exists() else ""
        out.append(sum(1 for line in text.splitlines() if line.startswith('{"step"')))
    return out


def launch(
    framework: str,
    world: int,
    runs: list[Spec],
    workdir: Path,
    hold_at: int | None = None,
    kill_launcher_only_at: int | None = None,
) -> dict[str, Any]:
    """Run one torchrun job; with ``hold_at``, SIGKILL its process group once every rank holds."""
    workdir.mkdir(parents=True, exist_ok=True)
    job = workdir / "job.json"
    job.write_text(json.dumps({"framework": framework, "world": world, "runs": runs}))
    port = _free_port()
    command = [
        sys.executable, "-m", "torch.distributed.run",
        f"--nproc_per_node={world}", "--nnodes=1",
        "--master_addr=127.0.0.1", f"--master_port={port}",
        "--module", "tests.frameworks._ddp_worker", str(job),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    env.pop("MASTER_PORT", None)
    log_path = workdir / "launcher.log"
    start = time.perf_counter()
    killed: dict[str, Any] | None = None
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        if hold_at is not None:
            record_dir = Path(runs[0]["record_dir"])
            deadline = time.monotonic() + HOLD_TIMEOUT
            while process.poll() is None and time.monotonic() < deadline:
                held = _hold_lines(record_dir, world)
                if len(held) == world:
                    break
                time.sleep(0.05)
            held = _hold_lines(record_dir, world)
            on_disk = sorted(
                p.name for p in Path(runs[0]["output_dir"]).glob("*") if p.name[0] != "."
            )
            if process.poll() is None:
                killed = {
                    "signal": "SIGKILL",
                    "after_step": hold_at,
                    "ranks_holding": held,
                    "seconds_after_start": round(time.perf_counter() - start, 2),
                    "output_dir_at_kill": on_disk,
                    **kill_job(process.pid),
                }
        if kill_launcher_only_at is not None:
            output_dir = Path(runs[0]["output_dir"])
            record_dir = Path(runs[0]["record_dir"])
            deadline = time.monotonic() + HOLD_TIMEOUT
            while process.poll() is None and time.monotonic() < deadline:
                if _checkpoint_on_disk(framework, output_dir, kill_launcher_only_at):
                    break
                time.sleep(0.02)
            workers = _descendants(process.pid)
            steps_at_kill = _count_steps(record_dir, world)
            os.killpg(os.getpgid(process.pid), signal.SIGKILL)
            process.wait()
            alive_after = [pid for pid in workers if _alive(pid)]
            deadline = time.monotonic() + 120
            while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
                time.sleep(0.1)
            survivors = [pid for pid in workers if _alive(pid)]
            for pid in survivors:  # only the workers of this job, by id
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed = {
                "signal": "SIGKILL",
                "launcher_process_group_only": True,
                "at_checkpoint": kill_launcher_only_at,
                "after_step": None,
                "steps_recorded_at_kill": steps_at_kill,
                "workers": len(workers),
                "workers_alive_right_after_kill": len(alive_after),
                "workers_alive_after_120s": len(survivors),
                "seconds_after_start": round(time.perf_counter() - start, 2),
                "output_dir_after": sorted(p.name for p in output_dir.glob("*")),
            }
        try:
            returncode = process.wait(timeout=JOB_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_job(process.pid)
            returncode = process.wait()
    result: dict[str, Any] = {
        "returncode": returncode,
        "seconds": round(time.perf_counter() - start, 2),
        "port": port,
        "killed": killed,
    }
    if returncode != 0 and killed is None:
        result["launcher_tail"] = log_path.read_text(errors="replace").splitlines()[-30:]
    return result


# --------------------------------------------------------------------------------------------
# Reading what the ranks wrote
# --------------------------------------------------------------------------------------------

_ROUTINE_LOGS = (
    "Num examples", "Num Epochs", "Num update steps", "Gradient Accumulation steps",
    "Total optimization steps", "Instantaneous batch size", "Total train batch size",
    "Number of trainable parameters", "Initializing distributed", "----",
)  # fmt: skip


def read_rank(path: Path) -> dict[str, Any]:
    """One rank's JSON lines as ``{"starts", "batches", "micro_batches", "positions", ...}``."""
    out: dict[str, Any] = {
        "starts": [],
        "batches": [],
        "micro_batches": [],
        "positions": [],
        "pending_micro_batches": [],
        "held_after_step": None,
        "end": None,
        "logs": [],
        "warnings": [],
        "seconds": None,
    }
    if not path.exists():
        out["missing"] = True
        return out
    pending: list[list[int]] = []
    for line in path.read_text().splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:  # a line cut by the kill
            out["torn_line"] = line
            continue
        if "micro" in item:
            pending.append(item["micro"])
        elif "step" in item:
            out["batches"].append([i for micro in pending for i in micro])
            out["micro_batches"].append(pending)
            out["positions"].append(item["step"])
            pending = []
        elif "start" in item:
            out["starts"].append(item["start"])
        elif "hold" in item:
            out["held_after_step"] = item["hold"]
        elif "end" in item:
            out["end"] = item["end"]
        elif "logs" in item:
            out["logs"] = [log for log in item["logs"] if not log.startswith(_ROUTINE_LOGS)]
            out["warnings"] = item["warnings"]
        elif "seconds" in item:
            out["seconds"] = item["seconds"]
    out["pending_micro_batches"] = pending
    return out


def _compact(rank: dict[str, Any]) -> dict[str, Any]:
    """Drop the keys that say nothing for this rank (single micro-batches, no pending, ...)."""
    out = dict(rank)
    if all(len(step) == 1 for step in out["micro_batches"]):
        del out["micro_batches"]
    for key in ("pending_micro_batches", "logs", "warnings"):
        if not out[key]:
            del out[key]
    if out["held_after_step"] is None:
        del out["held_after_step"]
    return out


def read_run(record_dir: Path, world: int) -> list[dict[str, Any]]:
    return [_compact(read_rank(record_dir / f"rank{r}.jsonl")) for r in range(world)]


def hf_checkpoint(output_dir: Path) -> dict[str, Any] | None:
    """What ``resume_from_checkpoint=True`` picks (``get_last_checkpoint``: highest number)."""
    found = [p for p in output_dir.glob("checkpoint-*") if p.is_dir()]
    if not found:
        return None
    last = max(found, key=lambda p: int(p.name.split("-")[1]))
    state = json.loads((last / "trainer_state.json").read_text())
    return {
        "dir": last.name,
        "global_step": state.get("global_step"),
        "epoch": state.get("epoch"),
        "max_steps": state.get("max_steps"),
        "train_batch_size": state.get("train_batch_size"),
        "rng_files": sorted(p.name for p in last.glob("rng_state*")),
        "checkpoints_on_disk": len(found),
    }


def pl_checkpoint(output_dir: Path) -> dict[str, Any] | None:
    """What ``ckpt_path="last"`` loads: ``last.ckpt`` of ModelCheckpoint(save_last=True)."""
    import torch

    last = output_dir / "last.ckpt"
    if not last.exists():
        return None
    ckpt = torch.load(last, map_location="cpu", weights_only=False)
    fit_loop = ckpt.get("loops", {}).get("fit_loop", {})
    return {
        "file": last.name,
        "is_symlink": last.is_symlink(),
        "epoch": ckpt.get("epoch"),
        "global_step": ckpt.get("global_step"),
        "epoch_progress_current": fit_loop.get("epoch_progress", {}).get("current"),
        "batch_progress_current": fit_loop.get("epoch_loop.batch_progress", {}).get("current"),
        "batch_progress_is_last_batch": fit_loop.get("epoch_loop.batch_progress", {}).get(
            "is_last_batch"
        ),
        "step_files_on_disk": sorted(p.name for p in output_dir.glob("step=*.ckpt")),
    }


# --------------------------------------------------------------------------------------------
# The rules (see FINDINGS.md, "Multi-process (DDP) runs")
# --------------------------------------------------------------------------------------------


def epoch_order(
    framework: str, n: int, shuffle: bool, epoch: int, own_sampler: bool = False
) -> list[int]:
    """The epoch's index order: ``randperm(n)`` seeded ``SEED + epoch``, or ``0..n-1``.

    HF shuffles only with ``train_sampling_strategy="random"`` (accelerate's
    SeedableRandomSampler, seed ``initial_seed + epoch``). Lightning's injected DistributedSampler
    always shuffles the training loader (seed ``PL_GLOBAL_SEED + epoch``), whatever the
    DataLoader's ``shuffle`` says; only an own sampler keeps ``0..n-1``.
    """
    import torch

    shuffled = shuffle if framework == "transformers" else not own_sampler
    if not shuffled:
        return list(range(n))
    generator = torch.Generator()
    generator.manual_seed(SEED + epoch)
    return [int(i) for i in torch.randperm(n, generator=generator).tolist()]


def _cycle(order: list[int], length: int) -> list[int]:
    return [order[i % len(order)] for i in range(length)]


def epoch_batches(
    framework: str, n: int, world: int, batch: int, drop_last: bool, order: list[int]
) -> list[list[list[int]]]:
    """``[rank][local batch] -> ids`` of one epoch.

    transformers (accelerate BatchSamplerShard, even_batches=True, split_batches=False):
      the batches of ``batch`` over ``order`` are dealt round-robin, local batch i of rank r is
      global batch ``i*W + r``. Without drop_last the order is cycled from its start up to
      ``T = W*b*ceil(N/(W*b))`` positions; with drop_last it is cut to ``W*b*floor(N/(W*b))``.
      So rank r, local batch i reads positions ``[(i*W + r)*b, (i*W + r + 1)*b)``.
    Lightning (torch DistributedSampler, its drop_last False): the order is cycled from its
      start to ``M*W`` positions, ``M = ceil(N/W)``; rank r takes positions ``r, r+W, r+2W, ...``;
      the per-rank DataLoader batches those by b and drops a short last batch if drop_last.
      So rank r, local batch i reads positions ``(i*b + t)*W + r`` for t < b (and < M - i*b).
    """
    if framework == "transformers" and world == 1:
        # One process: accelerate does not wrap the batch sampler; the last batch may be short.
        full = n - n % batch if drop_last else n
        return [[order[i : i + batch] for i in range(0, full, batch)]]
    if framework == "transformers":
        block = world * batch
        if drop_last:
            total = block * (n // block)
            padded = order[:total]
        else:
            total = block * math.ceil(n / block)
            padded = _cycle(order, total)
        local = total // block
        return [
            [padded[(i * world + r) * batch : (i * world + r + 1) * batch] for i in range(local)]
            for r in range(world)
        ]
    per_rank = math.ceil(n / world)
    padded = _cycle(order, per_rank * world)
    out = []
    for r in range(world):
        mine = padded[r::world]
        chunks = [mine[i : i + batch] for i in range(0, per_rank, batch)]
        if drop_last and chunks and len(chunks[-1]) < batch:
            chunks.pop()
        out.append(chunks)
    return out


def schedule(framework: str, world: int, spec: Spec, epochs: int) -> list[dict[str, Any]]:
    """An uninterrupted run's optimizer steps: ``{"epoch", "micro": [rank][micro] ids}``.

    Steps group ``g`` local batches; the last step of an epoch takes the remainder
    (``L - (ceil(L/g) - 1)*g`` micro-batches, L local batches per rank).
    """
    g = spec.get("accum", 1)
    steps: list[dict[str, Any]] = []
    for epoch in range(epochs):
        order = epoch_order(
            framework, spec["n"], bool(spec.get("shuffle")), epoch, bool(spec.get("own_sampler"))
        )
        per_rank = epoch_batches(
            framework, spec["n"], world, spec["batch"], bool(spec.get("drop_last")), order
        )
        local = len(per_rank[0])
        for first in range(0, local, g):
            steps.append({
                "epoch": epoch,
                "micro": [per_rank[r][first : first + g] for r in range(world)],
            })  # fmt: skip
    return steps


def steps_per_epoch(framework: str, world: int, spec: Spec) -> int:
    return len(schedule(framework, world, spec, 1))


def predict(
    framework: str, world: int, spec: Spec, resumed_from: dict[str, Any] | None
) -> dict[str, Any]:
    """The steps a run should train by the rules, and the rule's name.

    Fresh run: ``schedule`` for ``ceil(epochs)`` epochs; HF stops at
    ``max_steps = ceil(epochs * steps_per_epoch)``.

    HF resume from global step s (any world size W'): ``steps_per_epoch`` is recomputed at W',
    the resume starts at epoch ``s // spe`` after skipping ``(s % spe) * g`` batches per rank,
    and ends at ``ceil(epochs * spe)``: exactly steps ``s .. max_steps-1`` of an uninterrupted
    run at W'.

    Lightning resume (plain DataLoader, checkpoint saved on train batch end): e = the saved
    ``epoch_progress.current.completed``, plus 1 if the saved ``batch_progress.is_last_batch``
    (the epoch had ended at the OLD world size); c = saved ``batch_progress.current.completed``
    + 1; if c >= L' (batches per rank at the NEW world size) c = 0. Epoch e is re-iterated from
    its first batch (a fresh iterator, sampler epoch e) for ``L' - c`` batches labelled
    batch_idx c .. L'-1; then epochs e+1 .. at W'.
    """
    epochs = spec.get("epochs", 1)
    full_epochs = math.ceil(epochs)
    g = spec.get("accum", 1)
    if framework == "transformers":
        spe = steps_per_epoch(framework, world, spec)
        max_steps = math.ceil(epochs * spe)
        steps = schedule(framework, world, spec, full_epochs)
        start = 0 if resumed_from is None else resumed_from["global_step"]
        rule = "hf-fresh" if resumed_from is None else "hf-resume: steps s.. of a fresh run at W'"
        return {"rule": rule, "steps": steps[start:max_steps]}
    if resumed_from is None:
        return {"rule": "pl-fresh", "steps": schedule(framework, world, spec, full_epochs)}
    epoch = resumed_from["epoch_progress_current"]["completed"]
    if resumed_from["batch_progress_is_last_batch"]:
        epoch += 1
    done = resumed_from["batch_progress_current"]["completed"] + 1
    order = epoch_order(
        framework, spec["n"], bool(spec.get("shuffle")), epoch, bool(spec.get("own_sampler"))
    )
    per_rank = epoch_batches(
        framework, spec["n"], world, spec["batch"], bool(spec.get("drop_last")), order
    )
    local = len(per_rank[0])
    if done >= local:
        done = 0
    steps = []
    if epoch < full_epochs:
        remaining = local - done
        for first in range(0, remaining, g):
            steps.append(
                {
                    "epoch": epoch,
                    "micro": [per_rank[r][first : min(first + g, remaining)] for r in range(world)],
                }
            )
    later = schedule(framework, world, spec, full_epochs)
    steps += [step for step in later if step["epoch"] > epoch]
    return {"rule": "pl-resume: epoch e replayed from its start for L'-c batches", "steps": steps}


def check(framework: str, run: dict[str, Any], spec: Spec) -> dict[str, Any]:
    """Compare a run's recorded ids with :func:`predict`."""
    world = run["world_size"]
    predicted = predict(framework, world, spec, run.get("checkpoint_loaded"))
    steps = predicted["steps"]
    if run.get("killed") and run["killed"].get("after_step") is not None:
        steps = steps[: run["killed"]["after_step"]]
    elif run.get("killed"):  # only the launcher was killed: the recorded steps are a prefix
        steps = steps[: max(len(rank["batches"]) for rank in run["ranks"])]
    mismatches = []
    for r, rank in enumerate(run["ranks"]):
        got = rank["batches"]
        want = [[i for micro in step["micro"][r] for i in micro] for step in steps]
        if got != want:
            first = next(
                (j for j, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                min(len(got), len(want)),
            )
            mismatches.append(
                {
                    "rank": r,
                    "steps_recorded": len(got),
                    "steps_predicted": len(want),
                    "first_difference_at_step": first,
                }
            )
        micro_got = rank.get("micro_batches", [[b] for b in got])
        micro_want = [step["micro"][r] for step in steps]
        if got == want and micro_got != micro_want:
            mismatches.append({"rank": r, "micro_batches_differ": True})
    return {"rule": predicted["rule"], "matches": not mismatches, "mismatches": mismatches}


# --------------------------------------------------------------------------------------------
# Running the grid
# --------------------------------------------------------------------------------------------


def _public(spec: Spec) -> Spec:
    return {
        k: v
        for k, v in spec.items()
        if k not in ("output_dir", "record_dir", "hold_at", "save", "resume")
    }


def record(frameworks: list[str], only: list[str], tmp: Path) -> dict[str, Any]:
    observations: dict[str, Any] = {}
    jobs: list[dict[str, Any]] = []

    def wanted(rid: str) -> bool:
        return not only or any(text in rid for text in only)

    for framework in frameworks:
        by_world: dict[int, list[tuple[str, str, Spec]]] = {}
        for world, about, spec in _plain(framework):
            rid = _rid(framework, world, spec)
            if wanted(rid):
                by_world.setdefault(world, []).append((rid, about, spec))
        for world, entries in sorted(by_world.items()):
            workdir = tmp / f"{framework}-w{world}"
            runs = []
            for index, (_, _, spec) in enumerate(entries):
                runs.append(
                    {
                        **spec,
                        "output_dir": str(workdir / f"out{index}"),
                        "record_dir": str(workdir / f"rec{index}"),
                    }
                )
            print(f"{framework} W={world}: {len(runs)} runs in one job", flush=True)
            result = launch(framework, world, runs, workdir)
            jobs.append(
                {
                    "framework": framework,
                    "world": world,
                    "runs": [e[0] for e in entries],
                    **{k: v for k, v in result.items() if k != "killed"},
                }
            )
            for (rid, about, spec), run in zip(entries, runs, strict=True):
                observed = {
                    "role": "train",
                    "world_size": world,
                    "ranks": read_run(Path(run["record_dir"]), world),
                }
                observed["check"] = check(framework, observed, spec)
                observations[rid] = {
                    "framework": framework,
                    "about": about,
                    "spec": _public(spec),
                    "runs": [observed],
                }
                _print_run(rid, observed)
        for crash in _crashes(framework):
            if not wanted(crash["id"]):
                continue
            if "kill_launcher_only_at" in crash:
                observations[crash["id"]] = _orphan_scenario(framework, crash, tmp, jobs)
                continue
            workdir = tmp / crash["id"].replace("/", "-")
            spec = crash["spec"]
            base = {**spec, "save": True}
            runs_out = []
            crash_run = {
                **base,
                "hold_at": crash["hold_at"],
                "output_dir": str(workdir / "crash" / "out"),
                "record_dir": str(workdir / "crash" / "rec"),
            }
            print(f"{crash['id']}: W={crash['world']} until step {crash['hold_at']}", flush=True)
            result = launch(
                framework, crash["world"], [crash_run], workdir / "crash", crash["hold_at"]
            )
            jobs.append(
                {
                    "framework": framework,
                    "world": crash["world"],
                    "runs": [crash["id"] + " crash"],
                    **{k: v for k, v in result.items() if k != "killed"},
                }
            )
            observed = {
                "role": "crash",
                "world_size": crash["world"],
                "killed": result["killed"],
                "ranks": read_run(Path(crash_run["record_dir"]), crash["world"]),
            }
            output_dir = Path(crash_run["output_dir"])
            snapshot = workdir / "snapshot"
            shutil.copytree(output_dir, snapshot)
            observed["checkpoint_written"] = (
                hf_checkpoint if framework == "transformers" else pl_checkpoint
            )(snapshot)
            observed["check"] = check(framework, observed, spec)
            runs_out.append(observed)
            _print_run(crash["id"] + " crash", observed)
            for world in crash["resume_worlds"]:
                # The same script again, in the same output directory as the killed job, as the
                # killed job left it (earlier resumes' checkpoints removed).
                resume_dir = workdir / f"resume_w{world}"
                shutil.rmtree(output_dir)
                shutil.copytree(snapshot, output_dir)
                loaded = (hf_checkpoint if framework == "transformers" else pl_checkpoint)(
                    output_dir
                )
                resume_run = {
                    **base,
                    "resume": True,
                    "output_dir": str(output_dir),
                    "record_dir": str(resume_dir / "rec"),
                }
                result = launch(framework, world, [resume_run], resume_dir)
                jobs.append(
                    {
                        "framework": framework,
                        "world": world,
                        "runs": [f"{crash['id']} resume at W={world}"],
                        **{k: v for k, v in result.items() if k != "killed"},
                    }
                )
                observed = {
                    "role": "resume",
                    "world_size": world,
                    "checkpoint_loaded": loaded,
                    "ranks": read_run(Path(resume_run["record_dir"]), world),
                }
                if result["returncode"] != 0:
                    observed["returncode"] = result["returncode"]
                    observed["launcher_tail"] = result.get("launcher_tail")
                observed["check"] = check(framework, observed, spec)
                runs_out.append(observed)
                _print_run(f"{crash['id']} resume W={world}", observed)
            observations[crash["id"]] = {
                "framework": framework,
                "about": crash["about"] + f"; resumed at W={crash['resume_worlds']}",
                "spec": _public(spec),
                "crash_after_step": crash["hold_at"],
                "runs": runs_out,
            }
    return {"observations": observations, "jobs": jobs}


def _orphan_scenario(
    framework: str, crash: dict[str, Any], tmp: Path, jobs: list[dict[str, Any]]
) -> dict[str, Any]:
    """Kill only the launcher's process group and record what the workers do afterwards."""
    workdir = tmp / crash["id"].replace("/", "-")
    spec = crash["spec"]
    run = {
        **spec,
        "save": True,
        "output_dir": str(workdir / "out"),
        "record_dir": str(workdir / "rec"),
    }
    print(f"{crash['id']}: W={crash['world']}, launcher group killed at checkpoint", flush=True)
    result = launch(
        framework,
        crash["world"],
        [run],
        workdir,
        kill_launcher_only_at=crash["kill_launcher_only_at"],
    )
    jobs.append(
        {
            "framework": framework,
            "world": crash["world"],
            "runs": [crash["id"]],
            **{k: v for k, v in result.items() if k != "killed"},
        }
    )
    observed = {
        "role": "kill_launcher_only",
        "world_size": crash["world"],
        "killed": result["killed"],
        "ranks": read_run(Path(run["record_dir"]), crash["world"]),
    }
    observed["check"] = check(framework, observed, spec)
    _print_run(crash["id"], observed)
    return {
        "framework": framework,
        "about": crash["about"],
        "spec": _public(spec),
        "runs": [observed],
    }


def _print_run(rid: str, run: dict[str, Any]) -> None:
    steps = [len(rank["batches"]) for rank in run["ranks"]]
    end = run["ranks"][0].get("end")
    verdict = "ok" if run["check"]["matches"] else f"MISMATCH {run['check']['mismatches']}"
    print(
        f"  {rid}: W={run['world_size']} steps/rank={steps} end={json.dumps(end)} {verdict}",
        flush=True,
    )


def annotate(document: dict[str, Any]) -> None:
    """Recompute every run's ``check`` from its recorded ids."""
    for observation in document["observations"].values():
        for run in observation["runs"]:
            run["check"] = check(observation["framework"], run, observation["spec"])


def versions() -> dict[str, str]:
    out = {}
    for name in ("torch", "transformers", "accelerate", "pytorch-lightning"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", action="append", choices=["transformers", "lightning"])
    parser.add_argument("--only", action="append", default=[], help="substring of scenario ids")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--annotate", action="store_true", help="only recompute the checks of --out"
    )
    args = parser.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.frameworks.record import dumps

    if args.annotate:
        document = json.loads(args.out.read_text())
        annotate(document)
        args.out.write_text(dumps(document) + "\n")
        bad = [
            rid
            for rid, o in document["observations"].items()
            if not all(r["check"]["matches"] for r in o["runs"])
        ]
        print(f"{len(document['observations'])} scenarios, mismatching: {bad}")
        return 0
    frameworks = args.framework or ["transformers", "lightning"]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="durations-ddp-") as tmp:
        result = record(frameworks, args.only, Path(tmp))
    document = {
        "meta": {
            "recorded": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "versions": versions(),
            "launcher": "python -m torch.distributed.run --nproc_per_node=W",
            "backend": "gloo, CPU, OMP_NUM_THREADS=1",
            "seconds": round(time.perf_counter() - start, 2),
            "jobs": result["jobs"],
        },
        "observations": result["observations"],
    }
    args.out.write_text(dumps(document) + "\n")
    print(f"total {document['meta']['seconds']}s, {len(result['jobs'])} jobs; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
