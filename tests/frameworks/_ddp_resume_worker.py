"""One rank of a data-parallel job that is killed with SIGKILL and run again, unchanged.

Started by ``tests/frameworks/test_ddp_resume.py`` as::

    python -m torch.distributed.run --nproc_per_node=W --module \
        tests.frameworks._ddp_resume_worker job.json

``job.json`` names the framework, the run's folder, the attempt and ``hold_at``. Every attempt
runs the same script (:func:`script`) through the framework's ``DurationsCallback``, with the
checkpoints under ``<folder>/checkpoints``: 2 epochs of loader ``a`` (21 samples, 5 per device),
then 0.5 epoch of ``b`` (7 samples, 2 per device). Its loaders are ``Loader.sharded(...)`` at the
job's world size (``WORLD_SIZE``, as a script would read it), so the script is the same at any
number of processes. The job checkpoints after every optimizer step.

Each rank appends JSON lines to ``<folder>/records/attempt<n>/rank<r>.jsonl`` and flushes every
line, so a killed attempt leaves everything up to the kill:

- ``{"start": {...}}`` when a call starts training (Lightning: every epoch, with its order);
- ``{"step": {"call", "lifetime", "epoch", "ids"}}`` after every optimizer step, before its
  checkpoint;
- ``{"hold": lifetime}`` once the checkpoint of lifetime step ``hold_at`` is complete: the rank
  then waits to be killed (Hugging Face in ``on_save``; Lightning in the next
  ``on_train_batch_start``, after ``ModelCheckpoint`` wrote it and the ranks met at its barrier);
- ``{"error": {"type", "message"}}`` when the callback refuses the run (raised again).

Items carry their ids: ``a`` has ids 0-20, ``b`` 1000-1006; the learning rate is 0. Hugging
Face samples sequentially; Lightning trains a ``StatefulDataLoader`` (resumable mid-epoch)
through the ``DistributedSampler`` it injects, which shuffles: the rank records each epoch's
order (``_ddp_integration_worker._global_order``).

Nothing here imports a framework at module level: the test imports :func:`script` from it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from durations import FitCall, Loader, Padding, RunConfig

DEVICE_BATCH = {"a": 5, "b": 2}
SAMPLES = {"a": 21, "b": 7}
OFFSETS = {"a": 0, "b": 1000}
PADDING = {"transformers": Padding.CYCLE, "lightning": Padding.REPEAT}
CONFIG = RunConfig(max_duration="2ep")
HOLD_SECONDS = 240.0


def script(framework: str, world: int) -> tuple[RunConfig, list[FitCall]]:
    """The script at ``world`` processes: 2 epochs of ``a``, then 0.5 epoch of ``b``."""
    loaders = {
        name: Loader.sharded(
            samples=SAMPLES[name],
            world_size=world,
            device_batch_size=DEVICE_BATCH[name],
            padding=PADDING[framework],
            name=name,
        )
        for name in ("a", "b")
    }
    calls = [
        FitCall(loader=loaders["a"], name="first"),
        FitCall(loader=loaders["b"], duration="0.5ep", name="second"),
    ]
    return CONFIG, calls


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def _world() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


class Lines:
    """This rank's record of one attempt, one flushed JSON line per event."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.handle = (folder / f"rank{_rank()}.jsonl").open("a", encoding="utf-8")
        self.pending: list[int] = []

    def write(self, **item: Any) -> None:
        self.handle.write(json.dumps(item) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def read(self, ids: list[int]) -> None:
        self.pending += ids

    def step(self, call: str, lifetime: int, epoch: int) -> None:
        self.write(step={"call": call, "lifetime": lifetime, "epoch": epoch, "ids": self.pending})
        self.pending = []

    def hold(self, lifetime: int) -> None:
        self.write(hold=lifetime)
        time.sleep(HOLD_SECONDS)
        raise SystemExit(f"not killed within {HOLD_SECONDS} s after step {lifetime}")


def run_transformers(root: Path, hold_at: int | None, lines: Lines) -> None:
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
                lines.read([int(v) for v in x[:, 0].tolist()])
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    config, calls = script("transformers", _world())
    callback = DurationsCallback(config, calls, checkpoints=root)

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            lines.write(
                start={
                    "call": callback.session.current().name,
                    "world_size": args.world_size,
                    "global_step": state.global_step,
                }
            )

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            name = callback.session.current().name
            lines.step(name, callback.lifetime_step, int(state.epoch or 0))

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            # After the DurationsCallback's on_save: checkpoint-N and its durations.json are
            # complete on rank 0 once rank 0 holds.
            if hold_at is not None and callback.lifetime_step >= hold_at:
                lines.hold(callback.lifetime_step)

    for call in calls:
        name = call.loader.name or ""
        args = TrainingArguments(
            output_dir=str(root / (call.name or "")),
            per_device_train_batch_size=DEVICE_BATCH[name],
            learning_rate=0.0,
            max_steps=1000,  # the callback stops each call
            save_strategy="steps",
            save_steps=1,
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


def run_lightning(root: Path, hold_at: int | None, lines: Lines) -> None:
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import Dataset
    from torchdata.stateful_dataloader import StatefulDataLoader

    from durations.integrations.lightning import DurationsCallback
    from tests.frameworks._ddp_integration_worker import _global_order

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
            lines.read([int(v) for v in batch[:, 0].tolist()])
            loss: torch.Tensor = (self.layer(batch) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.0)

    model = IdModel()
    config, calls = script("lightning", _world())
    callback = DurationsCallback(config, calls, checkpoints=root)

    class Probe(pl.Callback):
        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            # A resumed epoch has no on_train_epoch_start: record its order here, after the
            # durations callback (first in the list) has put the sampler on that epoch.
            self.on_train_epoch_start(trainer, pl_module)

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            loader = trainer.train_dataloader
            sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)
            lines.write(
                start={
                    "call": callback.session.current().name,
                    "epoch": trainer.current_epoch,
                    "world_size": trainer.world_size,
                    "global_step": trainer.global_step,
                    "sampler": type(sampler).__name__,
                    "order": _global_order(sampler),
                }
            )

        def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
            # ModelCheckpoint saved the previous step's checkpoint in its on_train_batch_end,
            # and the ranks met at its barrier: the file is complete.
            if hold_at is not None and callback.lifetime_step >= hold_at:
                lines.hold(callback.lifetime_step)

        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            name = callback.session.current().name
            lines.step(name, callback.lifetime_step, trainer.current_epoch)

    for call in calls:
        name = call.loader.name or ""
        saver = pl.callbacks.ModelCheckpoint(
            dirpath=root / (call.name or ""),
            filename="{step}",
            every_n_train_steps=1,
            save_top_k=-1,
        )
        trainer = pl.Trainer(
            accelerator="cpu",
            strategy="ddp",
            devices=_world(),
            max_epochs=-1,  # the callback stops each fit
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            num_sanity_val_steps=0,
            default_root_dir=root,
            callbacks=[callback, Probe(), saver],
        )
        loader = StatefulDataLoader(IdDataset(name), batch_size=DEVICE_BATCH[name], shuffle=False)
        callback.fit(trainer, model, loader)


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    root = Path(job["root"])
    lines = Lines(root / "records" / f"attempt{job['attempt']}")
    runner = run_transformers if job["framework"] == "transformers" else run_lightning
    try:
        runner(root / "checkpoints", job.get("hold_at"), lines)
    except BaseException as error:
        lines.write(error={"type": type(error).__name__, "message": str(error)})
        time.sleep(2.0)  # let the other ranks write theirs before torchrun stops them
        raise
    lines.write(end=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
