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


def versions() -> dict[str, str]:
    import pytorch_lightning as pl
    import torch

    out = {"pytorch_lightning": pl.__version__, "torch": torch.__version__}
    try:
        import torchdata

        out["torchdata"] = torchdata.__version__
    except ImportError:
        out["torchdata"] = "not installed"
    return out


def _checkpoint_summary(path: Path) -> dict[str, JSON]:
    """The counters a Lightning checkpoint file carries."""
    import torch

    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    fit_loop = ckpt.get("loops", {}).get("fit_loop", {})
    batch = fit_loop.get("epoch_loop.batch_progress", {})
    epoch = fit_loop.get("epoch_progress", {})
    loader_states = fit_loop.get("state_dict", {}).get("combined_loader")
    return {
        "file": path.name,
        "epoch": ckpt.get("epoch"),
        "global_step": ckpt.get("global_step"),
        "epoch_progress_current": epoch.get("current"),
        "batch_progress_current": batch.get("current"),
        "loader_state_saved": bool(loader_states),
    }


def _newest_checkpoint(directory: Path) -> Path | None:
    files = sorted(directory.glob("*.ckpt"), key=lambda p: p.stat().st_mtime_ns)
    return files[-1] if files else None


def run(calls: list[CallSpec], workdir: Path) -> list[dict[str, JSON]]:
    """Run ``calls`` in order; return one observation dict per call."""
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset

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

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            self.recorder.micro([int(v) for v in batch[:, 0].tolist()])
            self._last = {"epoch": self.current_epoch, "batch_idx": batch_idx}
            return (self.layer(batch) ** 2).mean()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.0)
            optimizer.register_step_post_hook(lambda *_: self.recorder.step(**self._last))
            return optimizer

    class Crash(pl.Callback):
        """Raise at the first batch after global step k (ModelCheckpoint has saved step k)."""

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
                        enable_checkpointing=bool(callbacks),
                        num_sanity_val_steps=0,
                        default_root_dir=workdir,
                        callbacks=callbacks,
                        **call["args"],
                    )
                    model = IdModel()
                model.recorder = Recorder()
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
        batch_progress = loop.epoch_loop.batch_progress
        observation: dict[str, JSON] = {
            "call": raw,
            **model.recorder.as_dict(),
            "counters_after": {
                "global_step": trainer.global_step,
                "current_epoch": trainer.current_epoch,
                "batch_progress_current_completed": batch_progress.current.completed,
                "num_training_batches": _jsonable(trainer.num_training_batches),
                "max_epochs": loop.max_epochs,
                "max_steps": loop.max_steps,
            },
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


def _jsonable(value: object) -> JSON:
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    return value
