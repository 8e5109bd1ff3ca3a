"""Real jobs of the integrations whose loaders have an order (``Loader(order=...)``), killed with
SIGKILL and resumed on another number of processes: 2, then 3, then 1, then 2 again
(semantics.md rule 19; docs/integrations.md, "Resume on any number of devices").

A two-phase script: 2 epochs of 23 samples read shuffled, then 1 epoch of 9 samples read in
order, 2 samples per device, ``padding="cycle"`` (accelerate's). Over all restarts, every step
of every rank reads exactly the indices ``durations.order.step_indices`` names in the plan that
restart makes from the checkpoint it resumed from, at the learning rate the schedule resolved
on that plan gives (the first step after each resume reads what ``durations plan --resume-from
CHECKPOINT --world-size N`` prints), and each epoch reads every sample once, plus the padding the
plans' tails name: nothing is read twice or skipped for the changes of world size.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations import Checkpoint, Plan, plan
from durations.order import step_indices
from tests.frameworks._kill import torchrun_held
from tests.frameworks.record_ddp import kill_job
from tests.frameworks.test_ddp_integrations import _free_port

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.frameworks._order_hf_worker import BASE_LR, CONFIG, LOADERS, SCHEDULE, script

ROOT = Path(__file__).resolve().parents[2]


#: framework -> (worker module, the loaders' padding)
WORKERS = {
    "transformers": ("tests.frameworks._order_hf_worker", "cycle"),
    "lightning": ("tests.frameworks._order_lightning_worker", "repeat"),
}


def _run(
    job_dir: Path,
    world: int,
    hold_at: int | None,
    name: str,
    framework: str,
    accumulation: int,
    *,
    one_stream: bool = False,
) -> list[dict[str, Any]]:
    """torchrun ``world`` processes of the framework's worker; with ``hold_at``, SIGKILL the
    job once every rank holds after that step's checkpoint."""
    job = {"hold_at": hold_at, "accumulation": accumulation, "log": f"{name}.jsonl"}
    job["one_stream"] = one_stream
    (job_dir / "job.json").write_text(json.dumps(job))
    return torchrun_held(
        WORKERS[framework][0],
        job_dir,
        world=world,
        hold_at=hold_at,
        name=name,
        port=_free_port(),
        kill=kill_job,
    )


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


#: framework -> the restarts: (world size, the step it is killed after, or None, accumulation).
#: Lightning's 1-rank restart reads the rest of the second epoch, 17 samples, in 9
#: micro-batches: its last step is an incomplete group of 1, as the plan's last step of an epoch
#: is. Hugging Face steps an incomplete group only at a whole epoch's end (the callback refuses
#: such a resume, below): its 1-rank restart reads a rest of 11 samples, 6 micro-batches.
CHAINS = {
    "lightning": [(2, 3, 1), (3, 6, 1), (1, 13, 2), (2, None, 1)],
    "transformers": [(2, 3, 1), (3, 7, 1), (1, 12, 2), (2, None, 1)],
}


def _scenario_file(folder: Path, padding: str, accumulation: int) -> Path:
    """The worker's script as a scenario file (its schedule left out: no indices depend on
    it), for ``durations plan``."""
    tables = []
    for name, (samples, micro, _, order) in LOADERS.items():
        kind = (
            f'order = "shuffled"\nseed = {order.seed}' if order.shuffle else 'order = "sequential"'
        )
        tables.append(
            f"[loaders.{name}]\nsamples = {samples}\nworld_size = 2\ndevice_batch_size = {micro}\n"
            f'accumulation = {accumulation}\npadding = "{padding}"\n{kind}\n'
        )
    text = (
        f'[run]\nmax_duration = "{CONFIG.max_duration}"\n' + "".join(tables)
        + '[[fit]]\nloader = "a"\nname = "pretrain"\n'
        + '[[fit]]\nloader = "b"\nduration = "1ep"\nname = "anneal"\n'
    )  # fmt: skip
    path = folder / f"script-{padding}-{accumulation}.toml"
    path.write_text(text)
    return path


def _printed(scenario: Path, checkpoint: str, world: int) -> Any:
    """What ``durations plan SCENARIO --resume-from CHECKPOINT --world-size N --json`` lists
    as the first step's indices."""
    command = [sys.executable, "-m", "durations", "plan", str(scenario)]
    command += ["--resume-from", checkpoint, "--world-size", str(world), "--json"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["indices"]


def _checkpoint(framework: str, path: str) -> Checkpoint:
    """The durations checkpoint the framework's checkpoint at ``path`` holds."""
    if framework == "lightning":
        from durations.integrations.checkpoints import read_lightning_checkpoint

        return read_lightning_checkpoint(path)
    return Checkpoint.from_dict(json.loads((Path(path) / "durations.json").read_text()))


@pytest.mark.parametrize("framework", sorted(WORKERS))
def test_killed_and_resumed_on_2_3_1_2_processes_reads_the_plan(
    tmp_path: Path, framework: str
) -> None:
    """Killed after a step on 2 ranks (inside the first epoch), on 3 (inside the second), and
    on 1 rank accumulating 2 micro-batches a step (inside the second call), then finished on
    2 ranks (``CHAINS``)."""
    if framework == "lightning":
        pytest.importorskip("pytorch_lightning")
    padding = WORKERS[framework][1]
    held_at: str | None = None
    chain = CHAINS[framework]
    checkpoint: Checkpoint | None = None
    read: dict[tuple[str, int], Counter[int]] = {}
    padded: dict[tuple[str, int], Counter[int]] = {}
    ended = 0
    for index, (world, hold_at, accumulation) in enumerate(chain):
        run = plan(CONFIG, script(world, padding, accumulation), checkpoint)
        curve = SCHEDULE.resolve(run)
        upto = run.stop.batch if hold_at is None else hold_at
        name = f"run{index}-w{world}"
        items = _run(tmp_path, world, hold_at, name, framework, accumulation)
        steps = [i for i in items if "step" in i]
        assert {i["world"] for i in steps} == {world}
        got = {(i["step"], i["rank"]): i["ids"] for i in steps}
        expected = {
            (run.start.batch + k, r): step_indices(run, k, rank=r)
            for k in range(1, upto - run.start.batch + 1)
            for r in range(world)
        }
        assert got == expected, f"restart {index} on {world} processes"
        if held_at is not None:  # the first step after the resume is what the command prints
            printed = _printed(_scenario_file(tmp_path, padding, accumulation), held_at, world)
            assert printed["step"] == run.start.batch + 1
            assert printed["ranks"] == [got[run.start.batch + 1, r] for r in range(world)]
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
            held_at = held.pop()
            checkpoint = _checkpoint(framework, held_at)
            assert checkpoint == run.checkpoint_at(hold_at - run.start.batch)
            assert not checkpoint.progress.at_epoch_start  # killed inside an epoch
        else:
            ended = max(i["end"] for i in items if "end" in i)
    assert ended == run.stop.batch
    assert set(read) == {("a", 0), ("a", 1), ("b", 2)}
    for (name, epoch), counts in read.items():
        assert counts == Counter(range(LOADERS[name][0])) + padded[name, epoch], (name, epoch)


def test_lightning_one_stream_resumed_at_another_batch_ends_its_epoch_on_the_plan_s_group(
    tmp_path: Path,
) -> None:
    """One process, its loaders one global stream each (no per-device geometry): killed after
    step 3 at batch 2 (6 samples in), resumed accumulating 2 micro-batches of 2 a step. The
    rest of the epoch, 17 samples, is 9 micro-batches: 4 steps of 4 and a last of 1, where
    Lightning must step the incomplete group; then the run goes on to its end as planned."""
    pytest.importorskip("pytorch_lightning")

    def calls(accumulation: int) -> list[Any]:
        return [
            attrs.evolve(c, loader=attrs.evolve(c.loader, sharding=None))
            for c in script(1, "repeat", accumulation)
        ]

    checkpoint = None
    for index, (hold_at, accumulation) in enumerate([(3, 1), (None, 2)]):
        run = plan(CONFIG, calls(accumulation), checkpoint)
        upto = run.stop.batch if hold_at is None else hold_at
        items = _run(
            tmp_path, 1, hold_at, f"one{index}", "lightning", accumulation, one_stream=True
        )
        got = {i["step"]: i["ids"] for i in items if "step" in i}
        expected = {
            run.start.batch + k: step_indices(run, k) for k in range(1, upto - run.start.batch + 1)
        }
        assert got == expected, f"restart {index}"
        if hold_at is not None:
            checkpoint = _checkpoint(
                "lightning", {i["checkpoint"] for i in items if "hold" in i}.pop()
            )
    assert [len(got[k]) for k in (4, 5, 6, 7, 8)] == [4, 4, 4, 4, 1]  # the rest of epoch 0


# -- refusals, before the first step ------------------------------------------------------------


def _trainer(
    root: Path,
    *,
    skip: bool,
    own_loader: bool = False,
    accumulation: int = 1,
    sharded: bool = True,
) -> tuple[Any, Any]:
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

    calls = script(1, accumulation=accumulation)
    if not sharded:  # the same loaders as one global stream each
        calls = [attrs.evolve(c, loader=attrs.evolve(c.loader, sharding=None)) for c in calls]
    callback = DurationsCallback(CONFIG, calls, checkpoints=root)
    args = TrainingArguments(
        output_dir=str(root / "pretrain"),
        per_device_train_batch_size=2,
        gradient_accumulation_steps=accumulation,
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


@pytest.mark.parametrize("options", [{}, {"sharded": False}], ids=["sharded", "one-stream"])
def test_hugging_face_refuses_an_incomplete_group_at_the_end_of_a_resumed_epoch(
    tmp_path: Path, options: dict[str, bool]
) -> None:
    """Killed after step 3 on 2 ranks and after step 6 on 3 (6 samples into the second
    epoch), then resumed on 1 rank with gradient_accumulation_steps=2: the rest, 17 samples, is
    9 micro-batches, and Hugging Face would not step the last one (before the refusal, this
    restart of the chain read on into the next epoch and stepped there); refused before the
    first step, naming the fix."""
    from durations.integrations.transformers import IntegrationError

    at3 = plan(CONFIG, script(2)).checkpoint_at(3)
    at6 = plan(CONFIG, script(3), at3).checkpoint_at(3)
    assert (at6.progress.batch, at6.progress.sample_in_epoch) == (6, 6)
    folder = tmp_path / "pretrain" / "checkpoint-6"
    folder.mkdir(parents=True)
    (folder / "durations.json").write_text(json.dumps(at6.to_dict()))
    trainer, callback = _trainer(tmp_path, skip=True, accumulation=2, **options)
    with pytest.raises(IntegrationError) as error:
        callback.train(trainer)
    assert str(error.value) == (
        "call 'pretrain' starts at sample 6 of epoch 1 and reads the rest of it in 9 "
        "micro-batches per rank, with gradient_accumulation_steps=2: its last step would be an "
        "incomplete group of 1, which Hugging Face steps only at the end of a whole epoch (it "
        "counts an epoch's micro-batches once, from a whole epoch), so its gradients would go "
        "into the next epoch's first step. Resume with gradient_accumulation_steps dividing 9 "
        "(1 always does), at another world size or device batch size, or from a checkpoint at "
        "the epoch's end"
    )


def _lightning(root: Path, **options: Any) -> tuple[Any, Any, Any]:
    """A one-process Lightning trainer of the first call, its callback and a model."""
    pl = pytest.importorskip("pytorch_lightning")
    import torch

    from durations.integrations.lightning import DurationsCallback

    class Model(pl.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            loss: torch.Tensor = self.layer(batch).pow(2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.0)

    callback = DurationsCallback(CONFIG, script(1, "repeat"), checkpoints=root)
    trainer = pl.Trainer(
        accelerator="cpu", devices=1, max_epochs=-1, logger=False, enable_progress_bar=False,
        enable_model_summary=False, enable_checkpointing=False, callbacks=[callback],
        **options,
    )  # fmt: skip
    return trainer, callback, Model()


# (trainer options, what fit gets, the message, the reason)
LIGHTNING_REFUSED = [
    (
        {},
        "loader",
        r"call 'pretrain' reads its loader in the order shuffled, seed 11, which gives each "
        r"rank its part; Lightning would shard it again with a DistributedSampler: use "
        r"pl.Trainer\(use_distributed_sampler=False\)",
        "the same script runs on one device and on many: the option is asked for on all",
    ),
    (
        {"use_distributed_sampler": False},
        "nothing",
        r"pass its training DataLoader to callback.fit\(trainer, model, loader\), not NoneType",
        "a datamodule or the model's own train_dataloader would read another order",
    ),
    (
        {"use_distributed_sampler": False},
        "other length",
        r"the training dataset has 22 samples, the plan's loader 23",
        "another data set: the order's indices would miss or overrun it",
    ),
]


@pytest.mark.parametrize(("options", "given", "message", "reason"), LIGHTNING_REFUSED)
def test_lightning_refuses_what_would_not_read_the_order(
    tmp_path: Path, options: dict[str, Any], given: str, message: str, reason: str
) -> None:
    import torch

    from durations.integrations.lightning import IntegrationError

    trainer, callback, model = _lightning(tmp_path, **options)
    size = {"loader": 23, "other length": 22}.get(given)
    args = [] if size is None else [torch.utils.data.DataLoader(torch.ones(size, 1), batch_size=2)]
    with pytest.raises(IntegrationError, match=message):
        callback.fit(trainer, model, *args)
    assert trainer.global_step == 0, reason
