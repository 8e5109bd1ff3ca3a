"""Real jobs of the integrations whose loaders have an order (``Loader(order=...)``), killed with
SIGKILL and resumed on another number of processes: 2, then 3, then 1, then 2 again
(semantics.md rule 19; docs/integrations.md, "Resume on any number of devices").

A two-phase script: 2 epochs of 23 samples read shuffled, then 1 epoch of 9 samples read in
order, 2 samples per device, ``padding="cycle"`` (accelerate's). Over all restarts, every step
of every rank reads exactly the indices ``durations.order.step_indices`` names in the plan that
restart makes from the checkpoint it resumed from, at the learning rate the schedule resolved
on that plan gives, and each epoch reads every sample once, plus the padding the plans' tails
name: nothing is read twice or skipped for the changes of world size.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations import Checkpoint, Plan, plan
from durations.order import step_indices
from tests.frameworks._kill import read_log
from tests.frameworks.record_ddp import kill_job
from tests.frameworks.test_ddp_integrations import _free_port

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.frameworks._order_hf_worker import BASE_LR, CONFIG, LOADERS, SCHEDULE, script

ROOT = Path(__file__).resolve().parents[2]


def _run(job_dir: Path, world: int, hold_at: int | None, name: str) -> list[dict[str, Any]]:
    """torchrun ``world`` processes of the worker; with ``hold_at``, SIGKILL the job (its
    process group, and each worker's) once every rank holds after that step's checkpoint."""
    (job_dir / "job.json").write_text(json.dumps({"hold_at": hold_at, "log": f"{name}.jsonl"}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={world}"]
    command += [f"--master_port={_free_port()}", "-m", "tests.frameworks._order_hf_worker"]
    command += [str(job_dir)]
    log = job_dir / f"{name}.jsonl"
    with (job_dir / f"{name}.out").open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while process.poll() is None and time.monotonic() < deadline:
            if hold_at is not None and sum("hold" in i for i in read_log(log)) == world:
                kill_job(process.pid)  # torchrun's workers run in sessions of their own
                break
            time.sleep(0.05)
        code = process.wait(timeout=60)
    output = (job_dir / f"{name}.out").read_text(errors="replace")[-3000:]
    assert code == (0 if hold_at is None else -signal.SIGKILL), output
    return read_log(log)


def _epochs(run: Plan, upto: int) -> list[tuple[str, int, int, list[int]]]:
    """(loader, epoch, lifetime step, indices of all ranks) for the steps of ``run`` up to
    lifetime step ``upto``, and each epoch this run finished, with its padding."""
    out = []
    for k in range(1, upto - run.start.batch + 1):
        segment = run.segment_at(k)
        assert segment is not None
        loader = segment.loader
        epoch = run.progress_at(k - 1).normalized(loader).epoch
        ranks = range(loader.world_size)
        out.append(
            (loader.name or "", epoch, k, [i for r in ranks for i in step_indices(run, k, rank=r)])
        )
    return out


def test_hugging_face_killed_and_resumed_on_2_3_1_2_processes_reads_the_plan(
    tmp_path: Path,
) -> None:
    """Killed after steps 3 (2 ranks: inside the first epoch), 7 (3 ranks: inside the
    second) and 15 (1 rank: inside the second call), then finished on 2 ranks."""
    chain = [(2, 3), (3, 7), (1, 15), (2, None)]
    checkpoint: Checkpoint | None = None
    read: dict[tuple[str, int], Counter[int]] = {}
    padded: dict[tuple[str, int], Counter[int]] = {}
    ended = 0
    for index, (world, hold_at) in enumerate(chain):
        run = plan(CONFIG, script(world), checkpoint)
        curve = SCHEDULE.resolve(run)
        upto = run.stop.batch if hold_at is None else hold_at
        items = _run(tmp_path, world, hold_at, f"run{index}-w{world}")
        steps = [i for i in items if "step" in i]
        assert {i["world"] for i in steps} == {world}
        got = {(i["step"], i["rank"]): i["ids"] for i in steps}
        expected = {
            (run.start.batch + k, r): step_indices(run, k, rank=r)
            for k in range(1, upto - run.start.batch + 1)
            for r in range(world)
        }
        assert got == expected, f"restart {index} on {world} processes"
        for i in steps:  # the rate of the step from k - 1 to k, on this plan's curve
            assert i["lr"] == pytest.approx(curve.lr(i["step"] - 1, BASE_LR), abs=1e-12)
        for name, epoch, k, indices in _epochs(run, upto):
            read.setdefault((name, epoch), Counter()).update(indices)
            segment = run.segment_at(k)
            assert segment is not None
            if run.progress_at(k).normalized(segment.loader).epoch > epoch or k == run.total_steps:
                repeated = sum(t.repeated for t in segment.tails if t.first <= epoch <= t.last)
                samples = LOADERS[name][0]
                order = segment.loader.order
                assert order is not None
                padded[name, epoch] = Counter(
                    order.index(samples=samples, epoch=epoch, position=q)
                    for q in range(samples, samples + repeated)
                )
        if hold_at is not None:
            held = {i["checkpoint"] for i in items if "hold" in i}
            assert len(held) == 1
            path = Path(held.pop()) / "durations.json"
            checkpoint = Checkpoint.from_dict(json.loads(path.read_text()))
            assert checkpoint == run.checkpoint_at(hold_at - run.start.batch)
            assert not checkpoint.progress.at_epoch_start  # killed inside an epoch
        else:
            ended = max(i["end"] for i in items if "end" in i)
    assert ended == run.stop.batch
    assert set(read) == {("a", 0), ("a", 1), ("b", 2)}
    for (name, epoch), counts in read.items():
        assert counts == Counter(range(LOADERS[name][0])) + padded[name, epoch], (name, epoch)


# -- refusals, before the first step ------------------------------------------------------------


def _trainer(root: Path, *, skip: bool, own_loader: bool = False) -> tuple[Any, Any]:
    """A one-process Hugging Face trainer of the first call, and its callback."""
    import torch
    from transformers import Trainer, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    class Data(torch.utils.data.Dataset[dict[str, torch.Tensor]]):
        def __len__(self) -> int:
            return LOADERS["a"][0]

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(index)]), "labels": torch.tensor([0.0])}

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    class OwnLoader(Trainer):  # type: ignore[misc]
        def get_train_dataloader(self) -> Any:
            return torch.utils.data.DataLoader(Data(), batch_size=2)

    callback = DurationsCallback(CONFIG, script(1), checkpoints=root)
    args = TrainingArguments(
        output_dir=str(root / "pretrain"),
        per_device_train_batch_size=2,
        max_steps=1000,
        save_strategy="no",
        ignore_data_skip=skip,
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
    )
    kind = OwnLoader if own_loader else Trainer
    return kind(model=Model(), args=args, train_dataset=Data(), callbacks=[callback]), callback


# (trainer options, the message, the reason)
REFUSED = [
    (
        {"skip": False},
        r"reads its loader in the order shuffled, seed 11, from the plan's position, at any "
        r"world size; Hugging Face would also skip the batches it counts as read: set "
        r"TrainingArguments\(ignore_data_skip=True\)",
        "Hugging Face's batch skip would skip the rest of the epoch's start a second time",
    ),
    (
        {"skip": True, "own_loader": True},
        r"call 'pretrain': the trainer's training dataloader does not read the sampler of the "
        r"loader's order",
        "a dataloader built elsewhere reads another order than the plan's",
    ),
]


@pytest.mark.parametrize(("options", "message", "reason"), REFUSED)
def test_hugging_face_refuses_what_would_not_read_the_order(
    tmp_path: Path, options: dict[str, bool], message: str, reason: str
) -> None:
    from durations.integrations.transformers import IntegrationError

    trainer, callback = _trainer(tmp_path, **options)
    with pytest.raises(IntegrationError, match=message):
        callback.train(trainer)
    assert not list(tmp_path.rglob("checkpoint-*")), reason  # before the first step
