"""PyTorch Lightning runner: real ``pl.Trainer.fit`` calls on a tiny id-carrying dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._common import (
    JSON,
    CallSpec,
    Recorder,
    SimulatedCrashError,
    call_defaults,
    capture,
    error_dict,
    set_dotted,
)

LOGGERS = ["pytorch_lightning", "lightning", "lightning_fabric", "lightning.pytorch"]

#: The optimizer's learning rate for a call with ``lr_schedule`` is ``lr`` times this; the
#: recorded ``lr`` of a step divided by it is the profile's rate (a factor of the base).
BASE_LR = 0.1


def _scheduler(optimizer: Any, spec: dict[str, JSON], total: Any) -> Any:
    """The ``LambdaLR`` a Lightning user builds in ``configure_optimizers`` with transformers'
    schedule functions (as Lightning's "Finetune Transformers Models" tutorial does): a linear
    warmup from 0 over ``warmup`` steps, then the ``decay`` to ``floor`` (a fraction of the
    optimizer's learning rate) at step ``total``."""
    from transformers import optimization as hf

    warmup, floor = spec["warmup"], spec["floor"]
    if spec["decay"] == "constant":
        return hf.get_constant_schedule_with_warmup(optimizer, num_warmup_steps=warmup)
    if spec["decay"] == "cosine":
        return hf.get_cosine_with_min_lr_schedule_with_warmup(
            optimizer, num_warmup_steps=warmup, num_training_steps=total, min_lr_rate=floor
        )
    if floor == 0:
        return hf.get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=warmup, num_training_steps=total
        )
    return hf.get_polynomial_decay_schedule_with_warmup(
        optimizer,
        num_warmup_steps=warmup,
        num_training_steps=total,
        lr_end=floor * optimizer.defaults["lr"],
        power=1.0,
    )


def versions() -> dict[str, str]:
    import pytorch_lightning as pl
    import torch

    out = {"pytorch_lightning": pl.__version__, "torch": torch.__version__}
    try:
        import torchdata

        out["torchdata"] = torchdata.__version__
    except ImportError:
        out["torchdata"] = "not installed"
    try:  # the schedules of the lr_schedule calls
        import transformers

        out["transformers"] = transformers.__version__
    except ImportError:
        out["transformers"] = "not installed"
    return out


def _checkpoint_summary(path: Path) -> dict[str, JSON]:
    """The counters a Lightning checkpoint file carries."""
    import torch

    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    fit_loop = ckpt.get("loops", {}).get("fit_loop", {})
    batch = fit_loop.get("epoch_loop.batch_progress", {})
    epoch = fit_loop.get("epoch_progress", {})
    loader_states = fit_loop.get("state_dict", {}).get("combined_loader")
    summary: dict[str, JSON] = {
        "file": path.name,
        "epoch": ckpt.get("epoch"),
        "global_step": ckpt.get("global_step"),
        "epoch_progress_current": epoch.get("current"),
        "batch_progress_total": batch.get("total"),
        "batch_progress_current": batch.get("current"),
        "loader_state_saved": bool(loader_states),
        "callbacks": sorted(ckpt.get("callbacks") or {}),
    }
    schedulers = ckpt.get("lr_schedulers") or []
    if schedulers:
        summary["lr_scheduler"] = {
            "last_epoch": schedulers[0]["last_epoch"],
            "base_lr": schedulers[0]["base_lrs"][0],
            "lr": ckpt["optimizer_states"][0]["param_groups"][0]["lr"],
        }
    return summary


def _newest_checkpoint(directory: Path) -> Path | None:
    files = sorted(directory.glob("*.ckpt"), key=lambda p: p.stat().st_mtime_ns)
    return files[-1] if files else None


def run(calls: list[CallSpec], workdir: Path) -> list[dict[str, JSON]]:
    """Run ``calls`` in order; return one observation dict per call."""
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset

    if any(call_defaults(call)["lr_schedule"] is not None for call in calls):
        import transformers.optimization  # noqa: F401 - imported before any call is captured

    class IdDataset(Dataset[torch.Tensor]):
        def __init__(self, n: int, offset: int) -> None:
            self.n, self.offset = n, offset

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> torch.Tensor:
            return torch.tensor([float(self.offset + index)])

    class IdModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.recorder = Recorder()

            self.lr_schedule: dict[str, JSON] | None = None
            self.totals: list[JSON] = []

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            self.recorder.micro([int(v) for v in batch[:, 0].tolist()])
            self._last = {"epoch": self.current_epoch, "batch_idx": batch_idx}
            loss = (self.layer(batch) ** 2).mean()
            # with a learning rate the runner observes the schedule, not the training: a zero
            # loss keeps the weights finite
            return loss if self.lr_schedule is None else loss * 0.0

        def configure_optimizers(self) -> Any:
            """SGD at learning rate 0; with ``lr_schedule``, at ``lr`` times :data:`BASE_LR`
            under the scheduler :func:`_scheduler` builds, stepped every optimizer step."""
            spec = self.lr_schedule
            rate = 0.0 if spec is None else BASE_LR * spec["lr"]
            optimizer = torch.optim.SGD(self.parameters(), lr=rate)
            optimizer.register_step_post_hook(lambda used, *_: self._stepped(used))
            if spec is None:
                return optimizer
            total = spec["total"]
            if total is None:
                total = self.trainer.estimated_stepping_batches
            self.totals.append(total)
            scheduler = _scheduler(optimizer, spec, total)
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"},
            }

        def _stepped(self, optimizer: torch.optim.Optimizer) -> None:
            """After each optimizer step: its position and, with a schedule, the learning rate
            the step used."""
            position = dict(self._last)
            if self.lr_schedule is not None:
                position["lr"] = optimizer.param_groups[0]["lr"]
            self.recorder.step(**position)

    class Crash(pl.Callback):
        """Raise at the first batch that starts with ``global_step >= k``: the step-start hook
        (``on_train_batch_start``, called for every micro-batch, so the first one of an
        optimizer step is where the step counter first reads >= k). Everything Lightning does
        after step k has happened (its checkpoints, an epoch's end, the next epoch's start and
        the fetch of this batch); nothing of the step itself."""

        def __init__(self, at: int) -> None:
            self.at = at

        def on_train_batch_start(self, trainer: pl.Trainer, *_: Any) -> None:
            if trainer.global_step >= self.at:
                raise SimulatedCrashError(
                    f"simulated crash after global step {trainer.global_step}"
                )

    ckpt_dir = workdir / "checkpoints"
    trainer: pl.Trainer | None = None
    model: IdModel | None = None
    observations: list[dict[str, JSON]] = []
    for index, raw in enumerate(calls):
        call = call_defaults(raw)
        pl.seed_everything(0, verbose=False)
        data = IdDataset(call["data"]["n"], call["data"]["offset"])
        ckpt_path: str | None = None
        loaded: dict[str, JSON] | None = None
        if call["resume"] == "latest":
            newest = _newest_checkpoint(ckpt_dir)
            ckpt_path = str(newest) if newest else None
            loaded = _checkpoint_summary(newest) if newest else None

        exc: BaseException | None = None
        with capture(LOGGERS) as captured:
            try:
                loader_class: Any = DataLoader
                if call["loader"] == "stateful":
                    from torchdata.stateful_dataloader import StatefulDataLoader

                    loader_class = StatefulDataLoader
                loader = loader_class(
                    data,
                    batch_size=call["batch_size"],
                    shuffle=call["shuffle"],
                    generator=torch.Generator().manual_seed(0),
                )
                if call["fresh"] or trainer is None or model is None:
                    callbacks: list[pl.Callback] = []
                    if call["crash_at"] is not None:
                        callbacks.append(Crash(call["crash_at"]))
                    if isinstance(call["save_every"], int):
                        callbacks.append(
                            pl.callbacks.ModelCheckpoint(
                                dirpath=ckpt_dir,
                                filename=f"call{index}-{{step}}",
                                every_n_train_steps=call["save_every"],
                                save_top_k=-1,
                            )
                        )
                    trainer = pl.Trainer(
                        accelerator="cpu",
                        devices=1,
                        logger=False,
                        enable_progress_bar=False,
                        enable_model_summary=False,
                        # no default ModelCheckpoint: only save_every makes one
                        enable_checkpointing=isinstance(call["save_every"], int),
                        num_sanity_val_steps=0,
                        default_root_dir=workdir,
                        callbacks=callbacks,
                        **call["args"],
                    )
                    model = IdModel()
                model.recorder = Recorder()
                model.lr_schedule = call["lr_schedule"]
                model.totals = []
                for path, value in call["set"].items():
                    set_dotted(trainer, path, value)
                trainer.fit(model, train_dataloaders=loader, ckpt_path=ckpt_path)
            except Exception as caught:
                exc = caught
            if call["save_at_end"] and trainer is not None and exc is None:
                ckpt_dir.mkdir(parents=True, exist_ok=True)
                trainer.save_checkpoint(ckpt_dir / f"call{index}-end.ckpt")

        assert trainer is not None
        assert model is not None
        loop = trainer.fit_loop
        observation: dict[str, JSON] = {
            "call": raw,
            **model.recorder.as_dict(),
            "counters_after": {
                "global_step": trainer.global_step,
                "current_epoch": trainer.current_epoch,
                **_progress_counters("epoch_progress", loop.epoch_progress),
                **_progress_counters("batch_progress", loop.epoch_loop.batch_progress),
                "num_training_batches": _jsonable(trainer.num_training_batches),
                "max_epochs": loop.max_epochs,
                "max_steps": loop.max_steps,
            },
            **({"scheduler_totals": model.totals} if call["lr_schedule"] is not None else {}),
            "checkpoint_loaded": loaded,
            "warnings": captured.warnings,
            "logs": captured.logs,
            "crashed": isinstance(exc, SimulatedCrashError),
            "error": None if isinstance(exc, SimulatedCrashError) else error_dict(exc),
            "seconds": captured.seconds,
        }
        if call["save_at_end"] and exc is None:
            observation["checkpoint_saved"] = _checkpoint_summary(
                ckpt_dir / f"call{index}-end.ckpt"
            )
        elif call["crash_at"] is not None and (newest := _newest_checkpoint(ckpt_dir)):
            observation["checkpoint_saved"] = _checkpoint_summary(newest)
        observations.append(observation)
    return observations


def _progress_counters(name: str, progress: Any) -> dict[str, JSON]:
    """A loop's progress tracker as flat counters: ``{name}_{total|current}_{field}`` for the
    fields ``ready``, ``started``, ``processed`` and ``completed`` (``loops/progress.py``)."""
    return {
        f"{name}_{tracker}_{field}": getattr(getattr(progress, tracker), field)
        for tracker in ("total", "current")
        for field in ("ready", "started", "processed", "completed")
    }


def _jsonable(value: object) -> JSON:
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    return value
