"""One rank of a real Hugging Face ``Trainer`` job (torchrun, gloo, CPU) reading a two-phase
mixture through ``DurationsCallback``: started by ``test_mixture_integrations.py``, as
``_mixture_lightning_worker`` is for Lightning (the same script with accelerate's ``cycle``
padding, the same job file and log).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tests.frameworks._mixture_lightning_worker import CONFIG, MICRO, script
from tests.frameworks._order_hf_worker import _append


def main(job_dir: Path) -> None:
    # Frameworks are imported here, not at the top: the main suite collects this module
    # (doctests) in an environment without them.
    import torch
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    job = json.loads((job_dir / "job.json").read_text())
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    log = (job_dir / job["log"]).open("a", encoding="utf-8")
    calls = script(world, job["edited"], padding="cycle")
    pending: list[int] = []

    class Ids(Dataset[dict[str, torch.Tensor]]):
        """The concatenation of a mixture's sources: sample ``i`` is ``i``."""

        def __init__(self, size: int) -> None:
            self.size = size

        def __len__(self) -> int:
            return self.size

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(index)]), "labels": torch.tensor([0.0])}

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                pending.extend(int(v) for v in x[:, 0].tolist())
            return {"loss": ((self.layer(x / 1000) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(CONFIG, calls, checkpoints=job_dir / "checkpoints", save_on="1ba")

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            item = {"step": callback.lifetime_step, "rank": rank, "world": world}
            _append(log, {**item, "ids": list(pending)})
            pending.clear()

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if callback.lifetime_step == job["hold_at"]:
                folder = os.path.join(str(args.output_dir), f"checkpoint-{state.global_step}")
                _append(log, {"hold": callback.lifetime_step, "rank": rank, "checkpoint": folder})
                time.sleep(300)  # the test kills the job long before this

    for call in calls:
        mixture = call.loader.mixture
        assert mixture is not None
        args = TrainingArguments(
            output_dir=str(job_dir / "checkpoints" / (call.name or "")),
            per_device_train_batch_size=MICRO,
            learning_rate=0.1,
            max_steps=1000,  # the callback stops each call
            save_strategy="no",  # only the callback's grid: a checkpoint after every step
            ignore_data_skip=True,  # the mixture's sampler starts at the plan's position
            report_to="none",
            disable_tqdm=True,
            logging_strategy="no",
            use_cpu=True,
            ddp_backend="gloo",
            ddp_find_unused_parameters=False,
            seed=0,
            dataloader_num_workers=0,
        )
        trainer = Trainer(
            model=model, args=args, train_dataset=Ids(mixture.size), callbacks=[callback, Probe()]
        )
        trainer.remove_callback(PrinterCallback)
        callback.train(trainer)
    _append(log, {"end": callback.lifetime_step, "rank": rank})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
