"""One process of a two-phase script whose learning rate comes from a durations schedule,
through a framework's callback; run by ``test_schedule_resume.py``, which kills it from outside.

``python -m tests.frameworks._schedule_worker JOB.json``; the job names the framework
(``"hf"`` or ``"lightning"``), the checkpoint folder, the log file and optionally ``hold_at``: the
lifetime step after whose checkpoint the process writes ``{"hold": k}`` and waits to be killed,
optionally ``save_on``: the callback's ``save_on`` (the framework's own periodic checkpoints
are then off), and optionally ``accumulation``: micro-batches per optimizer step (the global
batch stays 10: per-device batch ``10 // accumulation``).
Every optimizer step appends ``{"step": k, "lr": ..., "call": ...}`` to the log before the
optimizer steps (``k``: the lifetime steps done before it), flushed and synced, so a line a kill
cut short is the only one lost. With ``pace``, every step starts after that many seconds of
sleep, so that a kill from outside lands inside the run, not after its end. When each
``callback.train``/``fit`` returns (trained or skipped), ``{"after": call, "weights": [...]}``
gives the model's weights as the hex of their bytes.

The script is the one of ``test_integrations.py``: 2 epochs of A (100 samples, batch 10), then
0.1 epoch of B (300 samples, batch 10), 23 steps.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

from durations import END, FitCall, Landmark, Loader, RunConfig, Schedule

A = Loader(samples=100, batch_size=10, name="a")
B = Loader(samples=300, batch_size=10, name="b")
CONFIG = RunConfig(max_duration="2ep")
CALLS = (FitCall(loader=A, name="pretrain"), FitCall(loader=B, duration="0.1ep", name="curated"))
STEPS = 23
BASE = 1e-2
#: Warm up over half an epoch, a cosine to 0.1 over the rest of the first call, then linearly
#: to 0 over the second.
SCHEDULE = (
    Schedule.warmup("0.5ep")
    .then_cosine(to=Fraction(1, 10), until=Landmark.call_stop("pretrain"))
    .then_linear(to=0, until=END)
)


#: The extension test's curve: warm up over 5 steps, then a cosine to 0.1 by the plan's end (in
#: ba: an extension re-placing the curve cannot measure epochs of the run it extends).
COSINE = Schedule.warmup("5ba").then_cosine(to=Fraction(1, 10), until=END)
#: What an extended run adds after the two calls: 0.2 epoch of a new stream C, 6 steps (a call
#: on B would go on inside B's epoch, which a framework's train/fit cannot start).
C = Loader(samples=300, batch_size=10, name="c")
MORE = (FitCall(loader=C, duration="0.2ep", name="more"),)


def script(job: dict[str, Any]) -> tuple[RunConfig, tuple[FitCall, ...], Schedule]:
    """The job's script and schedule: the two calls with :data:`SCHEDULE` (or :data:`COSINE`
    with ``"schedule": "cosine"``), or with ``"extend": ON_EXTEND`` the extension :data:`MORE`
    of a finished run, taken up under ``RunConfig(resume="extend")`` with :data:`COSINE`."""
    if job.get("extend"):
        return RunConfig(resume="extend"), MORE, COSINE
    return CONFIG, CALLS, COSINE if job.get("schedule") == "cosine" else SCHEDULE


def _callback(kind: Any, job: dict[str, Any]) -> tuple[Any, tuple[FitCall, ...]]:
    """The framework's ``DurationsCallback`` for the job's script, and the script's calls."""
    config, calls, schedule = script(job)
    callback = kind(
        config,
        calls,
        checkpoints=Path(job["root"]),
        schedule=schedule,
        on_extend=job.get("extend"),
        save_on=job.get("save_on"),
    )
    return callback, calls


class _Log:
    def __init__(self, path: Path) -> None:
        self.handle = path.open("a", encoding="utf-8")

    def write(self, item: dict[str, Any]) -> None:
        self.handle.write(json.dumps(item) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())


def _hold(log: _Log, step: int) -> None:
    log.write({"hold": step})
    while True:  # until the test kills the process
        time.sleep(1)


def _dataset(loader: Loader) -> Any:
    import torch
    from torch.utils.data import Dataset

    offset = 0 if loader.name == "a" else 1000

    class Items(Dataset[dict[str, torch.Tensor]]):
        def __len__(self) -> int:
            return loader.samples or 0

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            x = torch.tensor([float(offset + index) / 1000])
            return {"x": x, "labels": 2 * x}

    return Items()


def _weights(model: Any) -> list[str]:
    """The bytes of every tensor of ``model``'s state, in hex: equal means bit for bit."""
    return [t.detach().cpu().numpy().tobytes().hex() for t in model.state_dict().values()]


def _hf(job: dict[str, Any], log: _Log) -> None:
    import torch
    import transformers
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    root = Path(job["root"])
    torch.manual_seed(0)
    model = Model()
    callback, calls = _callback(DurationsCallback, job)
    save_on = job.get("save_on")

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            log.write({"start": callback.session.lifetime(state.global_step)})

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            time.sleep(job.get("pace") or 0)

        def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            lr = kwargs["optimizer"].param_groups[0]["lr"]
            step = callback.session.lifetime(state.global_step)
            log.write({"step": step, "lr": lr, "call": callback.session.current().name})

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if callback.session.lifetime(state.global_step) == job.get("hold_at"):
                _hold(log, job["hold_at"])

    for call in calls:
        args = TrainingArguments(
            output_dir=str(root / (call.name or "")),
            per_device_train_batch_size=10 // job.get("accumulation", 1),
            gradient_accumulation_steps=job.get("accumulation", 1),
            learning_rate=BASE,
            max_steps=1000,
            save_strategy="no" if save_on else "steps",
            save_steps=1,
            report_to="none",
            disable_tqdm=True,
            logging_strategy="no",
            use_cpu=True,
            seed=0,
            dataloader_num_workers=0,
            train_sampling_strategy="sequential",
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=_dataset(call.loader),
            callbacks=[callback, Probe()],
        )
        trainer.remove_callback(PrinterCallback)
        callback.train(trainer)
        log.write({"after": call.name, "weights": _weights(model)})


def _lightning(job: dict[str, Any], log: _Log) -> None:
    import pytorch_lightning as pl
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader

    from durations.integrations.lightning import DurationsCallback

    class Model(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: dict[str, torch.Tensor], index: int) -> torch.Tensor:
            loss: torch.Tensor = ((self.layer(batch["x"]) - batch["labels"]) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.AdamW(self.parameters(), lr=BASE)

    root = Path(job["root"])
    torch.manual_seed(0)
    model = Model()
    callback, calls = _callback(DurationsCallback, job)
    save_on = job.get("save_on")

    class Probe(pl.Callback):
        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            log.write({"start": callback.lifetime_step})

        def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
            time.sleep(job.get("pace") or 0)
            # Lightning runs ModelCheckpoint last: the previous step's checkpoint is written.
            if callback.lifetime_step == job.get("hold_at"):
                _hold(log, job["hold_at"])

        def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
            step = callback.session.lifetime(trainer.global_step)
            lr = optimizer.param_groups[0]["lr"]
            log.write({"step": step, "lr": lr, "call": callback.session.current().name})

    for call in calls:
        trainer = pl.Trainer(
            accelerator="cpu",
            devices=1,
            max_epochs=-1,
            accumulate_grad_batches=job.get("accumulation", 1),
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            num_sanity_val_steps=0,
            default_root_dir=root,
            callbacks=[callback, Probe()]
            + (
                []
                if save_on
                else [
                    pl.callbacks.ModelCheckpoint(
                        dirpath=root / (call.name or ""),
                        filename="{step}",
                        every_n_train_steps=1,
                        save_top_k=-1,
                    )
                ]
            ),
        )
        batch = 10 // job.get("accumulation", 1)
        callback.fit(trainer, model, StatefulDataLoader(_dataset(call.loader), batch_size=batch))
        log.write({"after": call.name, "weights": _weights(model)})


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    log = _Log(Path(job["log"]))
    warnings.simplefilter("ignore")
    {"hf": _hf, "lightning": _lightning}[job["framework"]](job, log)
    log.write({"end": True})


if __name__ == "__main__":
    main()
