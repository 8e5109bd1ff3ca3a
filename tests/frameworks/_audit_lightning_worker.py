"""One process of a real Lightning CPU training that writes its step log through
``DurationsCallback(step_log=...)``: started, killed and started again by
``test_audit_runs.py``, as its own ``main`` is for Hugging Face (the same script).

``python -m tests.frameworks._audit_lightning_worker JOB_DIR``: ``JOB_DIR/run.toml`` is the
scenario, ``JOB_DIR/job.json`` holds ``hold_at`` (a lifetime step, or null). Each fit call's
``DataLoader`` reads a data set whose item is its own index; the callback rebuilds it around the
order's sampler (tapped for the step log). The script logs to ``JOB_DIR/seen.jsonl`` the items
the model trained on in every optimizer step (``{"step": k, "ids": [...]}``), and, with
``hold_at``, inside the training step after lifetime step ``hold_at`` (its batch read, the step
not taken) ``{"hold": k}``, then waits to be killed. The step log is ``JOB_DIR/steps.jsonl``,
checkpoints ``JOB_DIR/checkpoints/<call>-step<k>.ckpt`` every 4 steps and at each call's end.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from durations.scenario import Scenario
from tests.frameworks._order_hf_worker import _append

BASE_LR = 0.01


def main(job_dir: Path) -> None:
    # Frameworks are imported here, not at the top: the main suite collects this module
    # (doctests) in an environment without them.
    import warnings

    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset

    from durations.integrations.lightning import DurationsCallback

    warnings.simplefilter("ignore")
    job = json.loads((job_dir / "job.json").read_text())
    scenario = Scenario.from_toml((job_dir / "run.toml").read_text())
    seen = (job_dir / "seen.jsonl").open("a", encoding="utf-8")
    pending: list[int] = []
    pl.seed_everything(0, verbose=False)

    class IdDataset(Dataset[torch.Tensor]):
        def __init__(self, samples: int) -> None:
            self.n = samples

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
            if callback.lifetime_step == job["hold_at"]:  # the next step's batch is read
                _append(seen, {"hold": callback.lifetime_step})
                time.sleep(300)  # the test kills the job long before this
            loss: torch.Tensor = (self.layer(batch / 100) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=BASE_LR)

    class Probe(pl.Callback):
        """After the durations callback: the items of the step that just ended."""

        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            _append(seen, {"step": callback.lifetime_step, "ids": list(pending)})
            pending.clear()

    model = IdModel()
    callback = DurationsCallback(
        scenario.config,
        scenario.calls,
        checkpoints=job_dir / "checkpoints",
        schedule=scenario.schedule,
        save_on="4ba",
        step_log=job_dir / "steps.jsonl",
    )
    for call in scenario.calls:
        trainer = pl.Trainer(
            accelerator="cpu",
            max_epochs=-1,  # the callback stops each fit
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            num_sanity_val_steps=0,
            default_root_dir=job_dir / "checkpoints",
            callbacks=[callback, Probe()],
            use_distributed_sampler=False,  # the order's sampler
        )
        loader = DataLoader(IdDataset(call.loader.samples or 0), batch_size=call.loader.batch_size)
        callback.fit(trainer, model, loader)
    _append(seen, {"end": callback.lifetime_step})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
