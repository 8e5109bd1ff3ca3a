"""One rank of a real multi-process (DDP, gloo, CPU) training, started by ``record_ddp.py``.

Run as ``python -m tests.frameworks._ddp_worker SPEC.json``:

every rank runs this module under ``python -m torch.distributed.run --nproc_per_node=W``
(torchrun; Lightning's ``strategy="ddp"`` then finds the torchelastic environment and starts no
processes of its own).

``SPEC.json`` holds ``{"framework": ..., "world": W, "runs": [run, ...]}`` (the keys of a run are
listed in ``record_ddp.py``). The runs are done one after another in this job, each with a new
trainer and model. For every run, every rank appends JSON lines to
``<run record_dir>/rank<r>.jsonl`` and flushes each line, so a job killed with SIGKILL leaves what
it trained up to the kill:

- ``{"start": {...}}`` the rank, world size, loader and sampler classes and lengths;
- ``{"micro": [ids]}`` the sample ids of one micro-batch (from the forward pass);
- ``{"step": {...position}}`` an optimizer step closed (its ids are the micro-batches since the
  previous step);
- ``{"hold": global_step}`` checkpoint ``global_step`` is saved and the rank waits to be killed;
- ``{"end": {...counters}}`` the framework's counters after ``train``/``fit`` returned;
- ``{"logs": [...], "warnings": [...]}`` what the framework said (rank 0 and every rank's
  warnings), noise removed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tests.frameworks._common import capture

HOLD_SECONDS = 300  # the parent kills the job long before this


class Lines:
    """Append-only JSON-lines writer; every line is flushed to disk at once."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("a", encoding="utf-8")

    def write(self, **item: Any) -> None:
        self.handle.write(json.dumps(item) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        self.handle.close()


def _rank() -> int:
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")))


def _hold(lines: Lines, global_step: int) -> None:
    lines.write(hold=global_step)
    time.sleep(HOLD_SECONDS)
    raise SystemExit(f"not killed within {HOLD_SECONDS} s after step {global_step}")


def run_transformers(spec: dict[str, Any], lines: Lines) -> None:
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    transformers.logging.disable_progress_bar()

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __len__(self) -> int:
            return int(spec["n"])

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(index)]), "labels": torch.tensor([0.0])}

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                lines.write(micro=[int(v) for v in x[:, 0].tolist()])
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    class Probe(TrainerCallback):  # type: ignore[misc]
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            loader = kwargs.get("train_dataloader")
            batch_sampler = getattr(loader, "batch_sampler", None)
            inner = getattr(batch_sampler, "batch_sampler", None)
            lines.write(
                start={
                    "rank": args.process_index,
                    "world_size": args.world_size,
                    "loader": type(loader).__name__,
                    "loader_len": len(loader) if loader is not None else None,
                    "batch_sampler": type(batch_sampler).__name__,
                    "inner_sampler": type(getattr(inner, "sampler", None)).__name__,
                    "global_step_at_start": state.global_step,
                    "max_steps": state.max_steps,
                    "num_train_epochs": state.num_train_epochs,
                }
            )

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            lines.write(step={"epoch": round(state.epoch, 6), "global_step": state.global_step})
            time.sleep(spec.get("step_sleep", 0))

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            hold_at = spec.get("hold_at")
            if hold_at is not None and state.global_step >= hold_at:
                _hold(lines, state.global_step)

    save = bool(spec.get("save"))
    args = TrainingArguments(
        output_dir=spec["output_dir"],
        per_device_train_batch_size=spec["batch"],
        gradient_accumulation_steps=spec.get("accum", 1),
        num_train_epochs=spec.get("epochs", 1),
        max_steps=spec.get("max_steps", -1),
        learning_rate=0.0,
        report_to=[],
        disable_tqdm=True,
        logging_strategy="no",
        save_strategy="steps" if save else "no",
        save_steps=1,
        use_cpu=True,
        ddp_find_unused_parameters=False,
        ddp_backend="gloo",
        seed=0,
        dataloader_num_workers=0,
        dataloader_drop_last=bool(spec.get("drop_last")),
        train_sampling_strategy="random" if spec.get("shuffle") else "sequential",
    )
    trainer = Trainer(model=IdModel(), args=args, train_dataset=IdDataset(), callbacks=[Probe()])
    trainer.remove_callback(PrinterCallback)
    with capture(["transformers", "accelerate"]) as captured:
        transformers.logging.set_verbosity_info()
        trainer.train(resume_from_checkpoint=True if spec.get("resume") else None)
        transformers.logging.set_verbosity_warning()
    state = trainer.state
    lines.write(
        end={
            "global_step": state.global_step,
            "epoch": None if state.epoch is None else round(state.epoch, 6),
            "max_steps": state.max_steps,
            "num_train_epochs": state.num_train_epochs,
        }
    )
    lines.write(logs=captured.logs, warnings=captured.warnings)


def run_lightning(spec: dict[str, Any], lines: Lines) -> None:
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset

    pl.seed_everything(0, verbose=False)

    class IdDataset(Dataset[torch.Tensor]):
        def __len__(self) -> int:
            return int(spec["n"])

        def __getitem__(self, index: int) -> torch.Tensor:
            return torch.tensor([float(index)])

    state: dict[str, Any] = {"lines": lines}

    class IdModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            state["lines"].write(micro=[int(v) for v in batch[:, 0].tolist()])
            state["last"] = {"epoch": self.current_epoch, "batch_idx": batch_idx}
            return (self.layer(batch) ** 2).mean()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.0)
            optimizer.register_step_post_hook(lambda *_: state["lines"].write(step=state["last"]))
            return optimizer

    class Probe(pl.Callback):
        def on_train_epoch_start(self, trainer: pl.Trainer, *_: Any) -> None:
            loader = trainer.train_dataloader
            sampler = getattr(loader, "sampler", None)
            state["lines"].write(
                start={
                    "rank": trainer.global_rank,
                    "world_size": trainer.world_size,
                    "epoch": trainer.current_epoch,
                    "loader": type(loader).__name__,
                    "loader_len": len(loader) if loader is not None else None,
                    "sampler": type(sampler).__name__,
                    "sampler_epoch": getattr(sampler, "epoch", None),
                    "sampler_seed": getattr(sampler, "seed", None),
                    "num_training_batches": _jsonable(trainer.num_training_batches),
                    "global_step_at_start": trainer.global_step,
                    "batch_progress": _progress(trainer.fit_loop.epoch_loop.batch_progress),
                }
            )

        def on_train_batch_end(self, trainer: pl.Trainer, *_: Any) -> None:
            time.sleep(spec.get("step_sleep", 0))

        def on_train_batch_start(self, trainer: pl.Trainer, *_: Any) -> None:
            hold_at = spec.get("hold_at")
            if hold_at is not None and trainer.global_step >= hold_at:
                _hold(state["lines"], trainer.global_step)

    callbacks: list[pl.Callback] = [Probe()]
    if spec.get("save"):
        callbacks.append(
            pl.callbacks.ModelCheckpoint(
                dirpath=spec["output_dir"],
                filename="{step}",
                every_n_train_steps=1,
                save_top_k=-1,
                save_last=True,
            )
        )
    trainer = pl.Trainer(
        accelerator="cpu",
        strategy="ddp",
        devices=spec["world"],
        max_epochs=spec.get("epochs", 1),
        max_steps=spec.get("max_steps", -1),
        accumulate_grad_batches=spec.get("accum", 1),
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=bool(spec.get("save")),
        num_sanity_val_steps=0,
        default_root_dir=spec["output_dir"],
        callbacks=callbacks,
        use_distributed_sampler=not spec.get("own_sampler"),
    )
    if spec.get("own_sampler"):
        # The user's own DistributedSampler, unshuffled; Lightning must not replace it.
        sampler = torch.utils.data.DistributedSampler(IdDataset(), shuffle=False)
        loader = DataLoader(
            IdDataset(),
            batch_size=spec["batch"],
            sampler=sampler,
            drop_last=bool(spec.get("drop_last")),
        )
    else:
        loader = DataLoader(
            IdDataset(),
            batch_size=spec["batch"],
            shuffle=bool(spec.get("shuffle")),
            drop_last=bool(spec.get("drop_last")),
            generator=torch.Generator().manual_seed(0),
        )
    with capture(
        ["pytorch_lightning", "lightning", "lightning_fabric", "lightning.pytorch"]
    ) as cap:
        trainer.fit(
            IdModel(), train_dataloaders=loader, ckpt_path="last" if spec.get("resume") else None
        )
    loop = trainer.fit_loop
    state["lines"].write(
        end={
            "global_step": trainer.global_step,
            "current_epoch": trainer.current_epoch,
            "batch_idx": loop.epoch_loop.batch_idx,
            "batch_progress": _progress(loop.epoch_loop.batch_progress),
            "num_training_batches": _jsonable(trainer.num_training_batches),
            "ckpt_path": None if trainer.ckpt_path is None else Path(trainer.ckpt_path).name,
        }
    )
    state["lines"].write(logs=cap.logs, warnings=cap.warnings)


def _progress(progress: Any) -> dict[str, int]:
    current = progress.current
    return {
        "ready": current.ready,
        "started": current.started,
        "processed": current.processed,
        "completed": current.completed,
    }


def _jsonable(value: object) -> Any:
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    return value


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    runner = run_transformers if job["framework"] == "transformers" else run_lightning
    for run in job["runs"]:
        lines = Lines(Path(run["record_dir"]) / f"rank{_rank()}.jsonl")
        start = time.perf_counter()
        runner({**run, "world": job["world"]}, lines)
        lines.write(seconds=round(time.perf_counter() - start, 3))
        lines.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
