"""One rank of a real 2-process job running a script through a durations integration.

Started by ``tests/frameworks/test_ddp_integrations.py`` as::

    python -m torch.distributed.run --nproc_per_node=2 --module \
        tests.frameworks._ddp_integration_worker job.json

``job.json`` names the framework and a folder. Each rank runs three scripts, one after the other,
in that process group:

- ``good``: :func:`script` with the loaders the job really has, ``Loader.sharded(...)`` with the
  framework's padding. Every optimizer step is recorded: the sample ids this rank read for it.
- ``variant``: the geometries the ``good`` script does not have. Hugging Face: gradient
  accumulation 2 in both calls. Lightning: the first call brings its own shuffling
  ``DistributedSampler(drop_last=True)`` (``Padding.DROP``: 21 samples read as 20), the second
  accumulates 2 micro-batches per optimizer step.
- ``bad``: the same script whose first loader is one global stream, ``Loader(samples=21,
  batch_size=10)``. The callback must refuse it before the first optimizer step; the error is
  recorded and raised again, so the job fails as the user's would.

Each rank writes ``<folder>/<script>/rank<r>.json``. Items carry their ids: loader ``a`` (21
samples, 5 per device) has ids 0-20, loader ``b`` (7 samples, 2 per device) 1000-1006. The
learning rate is 0. Hugging Face samples sequentially (``train_sampling_strategy="sequential"``);
Lightning's first call uses the ``DistributedSampler`` it injects (which shuffles the training
data whatever the ``DataLoader`` says: the rank records the epoch's order), the second an own
``DistributedSampler(shuffle=False)`` with ``use_distributed_sampler=False``.

Nothing here imports a framework at module level: the test imports :func:`script` from it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from durations import FitCall, Loader, Padding, RunConfig

WORLD = 2
#: Per-device batch, data set size and first id of each loader.
DEVICE_BATCH = {"a": 5, "b": 2}
SAMPLES = {"a": 21, "b": 7}
OFFSETS = {"a": 0, "b": 1000}
#: The padding each framework's sampler does (rule 17).
PADDING = {"transformers": Padding.CYCLE, "lightning": Padding.REPEAT}
CONFIG = RunConfig(max_duration="2ep")
WAIT_FOR_RANKS = 60.0


#: (framework, loader) -> (accumulation, padding) of the ``variant`` script.
VARIANT = {
    ("transformers", "a"): (2, Padding.CYCLE),
    ("transformers", "b"): (2, Padding.CYCLE),
    ("lightning", "a"): (1, Padding.DROP),
    ("lightning", "b"): (2, Padding.REPEAT),
}


def script(framework: str, which: str) -> tuple[RunConfig, list[FitCall]]:
    """The script: 2 epochs of ``a``, then 1.5 epochs of ``b`` (stopped inside an epoch)."""
    loaders = {
        name: Loader.sharded(
            samples=SAMPLES[name],
            world_size=WORLD,
            device_batch_size=DEVICE_BATCH[name],
            accumulation=VARIANT[framework, name][0] if which == "variant" else 1,
            padding=VARIANT[framework, name][1] if which == "variant" else PADDING[framework],
            name=name,
        )
        for name in ("a", "b")
    }
    if which == "bad":
        loaders["a"] = Loader(samples=SAMPLES["a"], batch_size=WORLD * DEVICE_BATCH["a"], name="a")
    calls = [
        FitCall(loader=loaders["a"], name="first"),
        FitCall(loader=loaders["b"], duration="1.5ep", name="second"),
    ]
    return CONFIG, calls


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


class Record:
    """What this rank did in one script: steps (call, lifetime step, epoch of the call, ids),
    per-call start facts, the error if any."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / f"rank{_rank()}.json"
        folder.mkdir(parents=True, exist_ok=True)
        self.data: dict[str, Any] = {"rank": _rank(), "starts": [], "steps": [], "error": None}
        self.pending: list[int] = []
        self.forwards = 0

    def read(self, ids: list[int]) -> None:
        self.forwards += 1
        self.pending += ids

    def step(self, call: str, lifetime: int, epoch: int) -> None:
        self.data["steps"].append(
            {"call": call, "lifetime": lifetime, "epoch": epoch, "ids": self.pending}
        )
        self.pending = []

    def save(self) -> None:
        self.data["forwards"] = self.forwards
        self.path.write_text(json.dumps(self.data))

    def wait_for_ranks(self) -> None:
        """Let every rank write its record before this one raises (torchrun stops the others
        when one rank fails)."""
        deadline = time.monotonic() + WAIT_FOR_RANKS
        folder = self.path.parent
        while time.monotonic() < deadline:
            if all((folder / f"rank{r}.json").exists() for r in range(WORLD)):
                return
            time.sleep(0.05)


def _accumulation(call: FitCall) -> int:
    sharding = call.loader.sharding
    return 1 if sharding is None else sharding.accumulation


def run_transformers(config: RunConfig, calls: list[FitCall], root: Path, record: Record) -> None:
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __init__(self, name: str) -> None:
            self.n, self.offset = SAMPLES[name], OFFSETS[name]

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(self.offset + index)]), "labels": torch.tensor([0.0])}

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                record.read([int(v) for v in x[:, 0].tolist()])
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(config, calls, checkpoints=root)

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            loader = kwargs.get("train_dataloader")
            record.data["starts"].append(
                {
                    "call": callback.session.current().name,
                    "world_size": args.world_size,
                    "train_batch_size": state.train_batch_size,
                    "loader_len": None if loader is None else len(loader),
                }
            )

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            name = callback.session.current().name
            record.step(name, callback.lifetime_step, int(state.epoch or 0))

    for call in calls:
        name = call.loader.name or ""
        args = TrainingArguments(
            output_dir=str(root / (call.name or "")),
            per_device_train_batch_size=DEVICE_BATCH[name],
            gradient_accumulation_steps=_accumulation(call),
            learning_rate=0.0,
            max_steps=1000,  # the callback stops each call
            save_strategy="steps",
            save_steps=1000,  # only the callback's save at the end of each call
            report_to="none",
            disable_tqdm=True,
            logging_strategy="no",
            use_cpu=True,
            ddp_backend="gloo",
            ddp_find_unused_parameters=False,
            seed=0,
            dataloader_num_workers=0,
            dataloader_drop_last=False,
            train_sampling_strategy="sequential",
        )
        trainer = Trainer(
            model=model, args=args, train_dataset=IdDataset(name), callbacks=[callback, Probe()]
        )
        trainer.remove_callback(PrinterCallback)
        callback.train(trainer)


def _global_order(sampler: Any) -> list[int]:
    """The epoch's order of data set indices before the ranks are evened, as torch's
    ``DistributedSampler`` builds it; checked against what this rank's sampler yields."""
    import torch

    n = len(sampler.dataset)
    if sampler.shuffle:
        generator = torch.Generator()
        generator.manual_seed(sampler.seed + sampler.epoch)
        order = torch.randperm(n, generator=generator).tolist()
    else:
        order = list(range(n))
    padded = (order * (sampler.total_size // n + 1))[: sampler.total_size]
    mine = padded[sampler.rank : sampler.total_size : sampler.num_replicas]
    if list(iter(sampler)) != mine:
        raise AssertionError(f"rank {sampler.rank}: the sampler yields {list(sampler)}, not {mine}")
    return order


def run_lightning(config: RunConfig, calls: list[FitCall], root: Path, record: Record) -> None:
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import Dataset, DistributedSampler
    from torchdata.stateful_dataloader import StatefulDataLoader

    from durations.integrations.lightning import DurationsCallback

    pl.seed_everything(0, verbose=False)

    class IdDataset(Dataset[torch.Tensor]):
        def __init__(self, name: str) -> None:
            self.n, self.offset = SAMPLES[name], OFFSETS[name]

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> torch.Tensor:
            return torch.tensor([float(self.offset + index)])

    class IdModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            record.read([int(v) for v in batch[:, 0].tolist()])
            loss: torch.Tensor = (self.layer(batch) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.0)

    model = IdModel()
    callback = DurationsCallback(config, calls, checkpoints=root)

    class Probe(pl.Callback):
        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            loader = trainer.train_dataloader
            # A StatefulDataLoader re-made by Lightning keeps a SequentialSampler as .sampler;
            # the DistributedSampler that decides what the rank reads is its batch sampler's.
            sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)
            record.data["starts"].append(
                {
                    "call": callback.session.current().name,
                    "epoch": trainer.current_epoch,
                    "world_size": trainer.world_size,
                    "loader": type(loader).__name__,
                    "batch_size": loader.batch_size,
                    "sampler": type(sampler).__name__,
                    "shuffle": getattr(sampler, "shuffle", None),
                    "sampler_epoch": getattr(sampler, "epoch", None),
                    "order": _global_order(sampler),
                }
            )

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            self.seen = trainer.global_step

        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            if trainer.global_step == self.seen:
                return  # a micro-batch of an optimizer step still accumulating
            self.seen = trainer.global_step
            name = callback.session.current().name
            record.step(name, callback.lifetime_step, trainer.current_epoch)

    for index, call in enumerate(calls):
        name = call.loader.name or ""
        sharding = call.loader.sharding
        drop = sharding is not None and sharding.padding is Padding.DROP
        # The second call brings its own sequential DistributedSampler, and so does a call
        # whose sampler drops the tail (shuffled: as the injected one would).
        own = index == 1 or drop
        trainer = pl.Trainer(
            accelerator="cpu",
            strategy="ddp",
            devices=WORLD,
            max_epochs=-1,  # the callback stops each fit
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            num_sanity_val_steps=0,
            default_root_dir=root,
            callbacks=[callback, Probe()],
            use_distributed_sampler=not own,
            accumulate_grad_batches=_accumulation(call),
        )
        dataset = IdDataset(name)
        if own:
            sampler = DistributedSampler(dataset, shuffle=drop, drop_last=drop, seed=0)
            loader = StatefulDataLoader(dataset, batch_size=DEVICE_BATCH[name], sampler=sampler)
        else:
            loader = StatefulDataLoader(dataset, batch_size=DEVICE_BATCH[name], shuffle=False)
        callback.fit(trainer, model, loader)


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    framework, root = job["framework"], Path(job["root"])
    runner = run_transformers if framework == "transformers" else run_lightning
    for which in ("good", "variant", "bad"):
        config, calls = script(framework, which)
        record = Record(root / which)
        start = time.perf_counter()
        try:
            runner(config, calls, root / which / "checkpoints", record)
        except BaseException as error:
            record.data["error"] = {
                "type": type(error).__name__,
                "message": str(error),
                "traceback": traceback.format_exc().splitlines()[-12:],
            }
            record.data["seconds"] = round(time.perf_counter() - start, 3)
            record.save()
            record.wait_for_ranks()
            raise
        record.data["seconds"] = round(time.perf_counter() - start, 3)
        record.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
