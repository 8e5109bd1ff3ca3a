"""One rank of a real Lightning DDP job (torchrun, gloo, CPU) reading a two-phase mixture
through ``DurationsCallback``: started by ``test_mixture_integrations.py``.

``python -m tests.frameworks._mixture_lightning_worker JOB_DIR``: ``JOB_DIR/job.json`` holds
``hold_at`` (a lifetime step, or null), ``edited`` (whether pretraining's weights are the
edited ones) and ``log``. Each fit call's ``DataLoader`` is a ``ConcatDataset`` of its
mixture's sources in the mixture's order, whose samples are their own index in it; each rank
logs ``{"step": k, "rank": r, "world": W, "ids": [...]}`` per optimizer step, and after saving
step ``hold_at`` ``{"hold": k, "checkpoint": FILE}``, then waits to be killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from durations import FitCall, Loader, Mixture, Order, RunConfig, Source
from tests.frameworks._order_hf_worker import _append

CONFIG = RunConfig()
#: Device batch of every call.
MICRO = 2


def mixtures(edited: bool) -> tuple[Mixture, Mixture]:
    """Pretraining: web (shuffled, reshuffled each pass), code (in order) and math (shuffled,
    its first pass's order replayed) 3:1:1 until the first is exhausted (web 2:1:1 when
    ``edited``); annealing: code and math 1:2 until both are exhausted."""
    web = Source(name="web", samples=23, weight=2 if edited else 3, order=Order.shuffled(4))
    code = Source(name="code", samples=7, weight=1)
    math = Source(name="math", samples=5, weight=1, order=Order.shuffled(9), wrap="replay")
    anneal = (
        code,
        Source(name="math", samples=5, weight=2, order=Order.shuffled(9), wrap="replay"),
    )
    return Mixture(sources=(web, code, math)), Mixture(sources=anneal, stop="all_exhausted")


def script(world: int, edited: bool = False, padding: str = "repeat") -> list[FitCall]:
    """Two epochs of pretraining, then two of annealing, on ``world`` ranks evened by
    ``padding`` (torch's ``repeat`` for Lightning, accelerate's ``cycle`` for Hugging Face)."""
    pretrain, anneal = (
        Loader.mixing(m, world_size=world, device_batch_size=MICRO, padding=padding, name=n)
        for m, n in zip(mixtures(edited), ("pretrain", "anneal"), strict=True)
    )
    return [
        FitCall(loader=pretrain, duration="2ep", name="pretrain"),
        FitCall(loader=anneal, duration="2ep", name="anneal"),
    ]


def main(job_dir: Path) -> None:
    # Frameworks are imported here, not at the top: the main suite collects this module
    # (doctests) in an environment without them.
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset

    from durations.integrations.lightning import DurationsCallback

    job = json.loads((job_dir / "job.json").read_text())
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    log = (job_dir / job["log"]).open("a", encoding="utf-8")
    calls = script(world, job["edited"])
    pending: list[int] = []
    pl.seed_everything(0, verbose=False)

    class Ids(Dataset[torch.Tensor]):
        """The concatenation of a mixture's sources: sample ``i`` is ``i``."""

        def __init__(self, size: int) -> None:
            self.size = size

        def __len__(self) -> int:
            return self.size

        def __getitem__(self, index: int) -> torch.Tensor:
            return torch.tensor([float(index)])

    class IdModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            pending.extend(int(v) for v in batch[:, 0].tolist())
            loss: torch.Tensor = (self.layer(batch / 1000) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    model = IdModel()
    root = job_dir / "checkpoints"
    callback = DurationsCallback(CONFIG, calls, checkpoints=root, save_on="1ba")

    class Probe(pl.Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            item = {"step": callback.lifetime_step, "rank": rank, "world": world}
            _append(log, {**item, "ids": list(pending)})
            pending.clear()
            if callback.lifetime_step == job["hold_at"]:
                name = callback.session.current().name
                path = str(root / f"{name}-step{callback.lifetime_step}.ckpt")
                _append(log, {"hold": callback.lifetime_step, "rank": rank, "checkpoint": path})
                time.sleep(300)  # the test kills the job long before this

    for call in calls:
        mixture = call.loader.mixture
        assert mixture is not None
        trainer = pl.Trainer(
            accelerator="cpu",
            strategy="ddp",
            devices=world,
            max_epochs=-1,  # the callback stops each fit
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            num_sanity_val_steps=0,
            default_root_dir=root,
            callbacks=[callback, Probe()],
            use_distributed_sampler=False,  # the mixture's sampler gives each rank its part
        )
        callback.fit(trainer, model, DataLoader(Ids(mixture.size), batch_size=MICRO))
    _append(log, {"end": callback.lifetime_step, "rank": rank})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
