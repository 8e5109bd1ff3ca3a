"""One rank of a real Hugging Face ``Trainer`` job (torchrun, gloo, CPU) whose loaders have an
order, run through ``DurationsCallback``: started by ``test_order_integrations.py``.

``python -m tests.frameworks._order_hf_worker JOB_DIR``: ``JOB_DIR/job.json`` holds
``hold_at`` (a lifetime step, or null), ``accumulation`` and ``log`` (a file name). The script is
:func:`script` at the world size torchrun gives it; the callback resumes from the newest
checkpoint under ``JOB_DIR/checkpoints`` (one after every step, ``save_on="1ba"``), reads each
loader in its order from the plan's position, and sets the learning rate from the schedule.
Each rank appends ``{"step": k, "rank": r, "world": W, "ids": [...], "lr": x}`` for every
optimizer step (``k`` the lifetime step it ends at, ``lr`` the rate it was taken at); after
saving step ``hold_at`` every rank logs ``{"hold": k, "checkpoint": DIR}`` and waits to be
killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from durations import END, FitCall, Loader, Order, RunConfig, Schedule

#: (samples, device batch, first id, order) of each loader.
LOADERS = {
    "a": (23, 2, 0, Order.shuffled(seed=11)),
    "b": (9, 2, 1000, Order.sequential()),
}
CONFIG = RunConfig(max_duration="2ep")
SCHEDULE = Schedule.warmup("3ba").then_cosine(to=0, until=END)
BASE_LR = 0.1


def script(world: int, padding: str = "cycle", accumulation: int = 1) -> list[FitCall]:
    """2 epochs of ``a`` (shuffled), then 1 epoch of ``b`` (in order), on ``world`` ranks of
    ``accumulation`` micro-batches per step, evened by ``padding`` (accelerate's ``cycle`` for
    Hugging Face)."""
    loaders = {
        name: Loader.sharded(
            samples=samples,
            world_size=world,
            device_batch_size=micro,
            accumulation=accumulation,
            padding=padding,
            name=name,
            order=order,
        )
        for name, (samples, micro, _, order) in LOADERS.items()
    }
    return [
        FitCall(loader=loaders["a"], name="pretrain"),
        FitCall(loader=loaders["b"], duration="1ep", name="anneal"),
    ]


def _append(log: Any, item: dict[str, Any]) -> None:
    log.write(json.dumps(item) + "\n")
    log.flush()
    os.fsync(log.fileno())


def main(job_dir: Path) -> None:
    # Frameworks are imported here, not at the top: the main suite collects this module
    # (doctests) in an environment without them.
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    job = json.loads((job_dir / "job.json").read_text())
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    log = (job_dir / job["log"]).open("a", encoding="utf-8")
    calls = script(world, accumulation=job["accumulation"])
    pending: list[int] = []

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __init__(self, name: str) -> None:
            self.n, self.offset = LOADERS[name][0], LOADERS[name][2]

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
                pending.extend(int(v) for v in x[:, 0].tolist())
            return {"loss": ((self.layer(x / 1000) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(
        CONFIG, calls, checkpoints=job_dir / "checkpoints", schedule=SCHEDULE, save_on="1ba"
    )

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        rate = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.rate = kwargs["optimizer"].param_groups[0]["lr"]

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            ids = [i - LOADERS[callback.session.current().loader.name or ""][2] for i in pending]
            item = {"step": callback.lifetime_step, "rank": rank, "world": world, "ids": ids}
            _append(log, {**item, "lr": self.rate})
            pending.clear()

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if callback.lifetime_step == job["hold_at"]:
                folder = os.path.join(str(args.output_dir), f"checkpoint-{state.global_step}")
                _append(log, {"hold": callback.lifetime_step, "rank": rank, "checkpoint": folder})
                time.sleep(300)  # the test kills the job long before this

    for call in calls:
        name = call.loader.name or ""
        args = TrainingArguments(
            output_dir=str(job_dir / "checkpoints" / (call.name or "")),
            per_device_train_batch_size=LOADERS[name][1],
            gradient_accumulation_steps=job["accumulation"],
            learning_rate=BASE_LR,
            max_steps=1000,  # the callback stops each call
            save_strategy="no",  # only the callback's grid: a checkpoint after every step
            ignore_data_skip=True,  # the order's sampler starts at the plan's position
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
            model=model, args=args, train_dataset=IdDataset(name), callbacks=[callback, Probe()]
        )
        trainer.remove_callback(PrinterCallback)
        callback.train(trainer)
    _append(log, {"end": callback.lifetime_step, "rank": rank})


if __name__ == "__main__":
    main(Path(sys.argv[1]))
