"""One rank of a real Lightning DDP job (torchrun, gloo, CPU) whose loaders have an order, run
through ``DurationsCallback``: started by ``test_order_integrations.py``, as
``_order_hf_worker`` is for Hugging Face (the same script, the same log), with torch's
``DistributedSampler`` padding (``repeat``) and ``use_distributed_sampler=False``.

``python -m tests.frameworks._order_lightning_worker JOB_DIR``: ``JOB_DIR/job.json`` holds
``hold_at``, ``accumulation``, ``log`` and, optionally, ``one_stream`` (one process whose
loaders are given as one global stream each); checkpoints are
``JOB_DIR/checkpoints/<call>-step<k>.ckpt`` (``save_on="1ba"``). After saving step
``hold_at`` every rank logs ``{"hold": k, "checkpoint": FILE}`` and waits to be killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from tests.frameworks._order_hf_worker import BASE_LR, CONFIG, LOADERS, SCHEDULE, _append, script

PADDING = "repeat"


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
    calls = script(world, PADDING, job["accumulation"])
    if job.get("one_stream"):  # one process, its loaders given as one global stream each
        calls = [attrs.evolve(c, loader=attrs.evolve(c.loader, sharding=None)) for c in calls]
    pending: list[int] = []
    pl.seed_everything(0, verbose=False)

    class IdDataset(Dataset[torch.Tensor]):
        def __init__(self, name: str) -> None:
            self.n = LOADERS[name][0]

        def __len__(self) -> int:
            return self.n

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
            return torch.optim.SGD(self.parameters(), lr=BASE_LR)

    model = IdModel()
    root = job_dir / "checkpoints"
    callback = DurationsCallback(CONFIG, calls, checkpoints=root, schedule=SCHEDULE, save_on="1ba")

    class Probe(pl.Callback):
        rate = 0.0

        def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
            self.rate = trainer.optimizers[0].param_groups[0]["lr"]  # the step's, unchanged
            # until it is taken

        seen = -1

        def on_train_start(self, trainer: Any, *args: Any) -> None:
            self.seen = trainer.global_step

        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            if trainer.global_step == self.seen:
                return  # a micro-batch of a step still accumulating
            self.seen = trainer.global_step
            item = {"step": callback.lifetime_step, "rank": rank, "world": world}
            _append(log, {**item, "ids": list(pending), "lr": self.rate})
            pending.clear()
            if callback.lifetime_step == job["hold_at"]:
                name = callback.session.current().name
                path = str(root / f"{name}-step{callback.lifetime_step}.ckpt")
                _append(log, {"hold": callback.lifetime_step, "rank": rank, "checkpoint": path})
                time.sleep(300)  # the test kills the job long before this

    for call in calls:
        name = call.loader.name or ""
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
            use_distributed_sampler=False,  # the order's sampler gives each rank its part
            accumulate_grad_batches=job["accumulation"],
        )
        loader = DataLoader(IdDataset(name), batch_size=LOADERS[name][1])
        callback.fit(trainer, model, loader)
    _append(log, {"end": callback.lifetime_step, "rank": rank})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
