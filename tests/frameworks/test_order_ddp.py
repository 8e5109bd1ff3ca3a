"""A real plain PyTorch DDP job (torchrun, gloo, CPU) reading the plan's data order through
``OrderSampler``, killed with SIGKILL and resumed on another number of processes: 2, then 3,
then 1, then 2 again (semantics.md rule 19; docs/multi-device.md, "How to: read the plan's
order").

Over all restarts, every step of every rank reads exactly the indices
``durations.order.step_indices`` names in the plan that restart made from its checkpoint, and
each epoch reads every sample once, plus the padding the plan's tails name: nothing is read
twice or skipped for the changes of world size.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations import Checkpoint, FitCall, Loader, Order, Plan, RunConfig, plan
from durations.order import step_indices
from tests.frameworks._kill import torchrun_held
from tests.frameworks.record_ddp import kill_job
from tests.frameworks.test_ddp_integrations import _free_port

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES, DEVICE_BATCH, EPOCHS, SEED = 37, 2, 2, 11
ORDER = Order.shuffled(seed=SEED)
CONFIG = RunConfig(max_duration=f"{EPOCHS}ep")


def _loader(world: int) -> Loader:
    return Loader.sharded(
        samples=SAMPLES, world_size=world, device_batch_size=DEVICE_BATCH, name="data"
    )


def _run(job_dir: Path, world: int, hold_at: int | None, name: str) -> list[dict[str, Any]]:
    """torchrun ``world`` processes of the worker; with ``hold_at``, SIGKILL the job (its
    process group, and each worker's) once every rank holds after that step's checkpoint."""
    job = {
        "samples": SAMPLES,
        "device_batch_size": DEVICE_BATCH,
        "epochs": EPOCHS,
        "seed": SEED,
        "hold_at": hold_at,
        "log": f"{name}.jsonl",
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    return torchrun_held(
        "tests.frameworks._order_ddp_worker",
        job_dir,
        world=world,
        hold_at=hold_at,
        name=name,
        port=_free_port(),
        kill=kill_job,
    )


def _expected(run: Plan, world: int, upto: int) -> dict[tuple[int, int], list[int]]:
    """(lifetime step, rank) -> indices, for the steps of ``run`` up to lifetime step ``upto``."""
    return {
        (run.start.batch + k, rank): step_indices(run, k, order=ORDER, rank=rank)
        for k in range(1, upto - run.start.batch + 1)
        for rank in range(world)
    }


def test_killed_and_resumed_on_2_3_1_2_processes_reads_the_plan(tmp_path: Path) -> None:
    """Killed after steps 5 (2 ranks), 9 (3 ranks) and 17 (1 rank), then finished on 2 ranks:
    every rank reads what its restart's plan names, step by step, and each epoch reads every
    sample once plus its plans' padding."""
    # 37 samples, 2 per device: killed at positions 20 of epoch 0, 6 and 22 of epoch 1.
    chain = [(2, 5), (3, 9), (1, 17), (2, None)]
    checkpoint: Checkpoint | None = None
    read: dict[int, Counter[int]] = {epoch: Counter() for epoch in range(EPOCHS)}
    padded: dict[int, Counter[int]] = {epoch: Counter() for epoch in range(EPOCHS)}
    for index, (world, hold_at) in enumerate(chain):
        run = plan(CONFIG, [FitCall(loader=_loader(world), name="train")], checkpoint)
        upto = run.stop.batch if hold_at is None else hold_at
        expected = _expected(run, world, upto)
        items = _run(tmp_path, world, hold_at, f"run{index}-w{world}")
        got = {(i["step"], i["rank"]): i["ids"] for i in items if "step" in i}
        assert {i["world"] for i in items if "step" in i} == {world}
        assert got == expected, f"restart {index} on {world} processes"
        loader = run.segments[0].loader
        for k in range(1, upto - run.start.batch + 1):
            epoch = run.progress_at(k - 1).normalized(loader).epoch
            for rank in range(world):
                read[epoch].update(step_indices(run, k, order=ORDER, rank=rank))
            if run.progress_at(k).normalized(loader).epoch > epoch:  # this run ended the epoch
                tails = run.segments[0].tails
                repeated = sum(t.repeated for t in tails if t.first <= epoch <= t.last)
                positions = range(SAMPLES, SAMPLES + repeated)
                padded[epoch].update(
                    ORDER.index(samples=SAMPLES, epoch=epoch, position=q) for q in positions
                )
        on_disk = json.loads((tmp_path / "ckpt" / "durations.json").read_text())
        checkpoint = Checkpoint.from_dict(on_disk)
        assert checkpoint == run.checkpoint_at(upto - run.start.batch)
        if hold_at is not None:
            assert checkpoint.progress.sample_in_epoch in (20, 6, 22)  # inside an epoch
    assert checkpoint.progress.batch == run.stop.batch  # the last run finished the plan
    for epoch in range(EPOCHS):
        assert read[epoch] == Counter(range(SAMPLES)) + padded[epoch], epoch
