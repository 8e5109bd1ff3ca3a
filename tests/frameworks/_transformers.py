"""Hugging Face transformers runner: real ``Trainer.train`` calls on a tiny id-carrying dataset."""

from __future__ import annotations

import json
import logging
import time
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

LOGGERS = ["transformers", "accelerate"]

STATE_FIELDS = ["epoch", "global_step", "max_steps", "num_train_epochs", "train_batch_size"]


def versions() -> dict[str, str]:
    import accelerate
    import torch
    import transformers

    return {
        "transformers": transformers.__version__,
        "accelerate": accelerate.__version__,
        "torch": torch.__version__,
    }


def _checkpoints(output_dir: Path) -> list[Path]:
    found = [p for p in output_dir.glob("checkpoint-*") if p.is_dir()]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, int(p.name.split("-")[1])))


def _state_summary(checkpoint: Path) -> dict[str, JSON]:
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    return {"dir": checkpoint.name, **{key: state.get(key) for key in STATE_FIELDS}}


def run(calls: list[CallSpec], workdir: Path) -> list[dict[str, JSON]]:
    """Run ``calls`` in order; return one observation dict per call."""
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    transformers.logging.disable_progress_bar()

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __init__(self, n: int, offset: int) -> None:
            self.n, self.offset = n, offset

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {
                "x": torch.tensor([float(self.offset + index)]),
                "labels": torch.tensor([0.0]),
            }

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.recorder = Recorder()

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                self.recorder.micro([int(v) for v in x[:, 0].tolist()])
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    class Probe(TrainerCallback):  # type: ignore[misc]
        """Closes a recorded step at each optimizer step; kills the call when an optimizer step
        is about to start while ``state.global_step >= crash_at``.

        ``on_step_begin`` fires once per optimizer step, at the first micro-batch of its
        accumulation group (``step % gradient_accumulation_steps == 0`` in ``_run_epoch``), after
        the group's batches are fetched and before any forward: everything HF does after step k
        (its own saves, the epoch's end) has happened, nothing of step k + 1 has.
        """

        def __init__(self, model: IdModel, crash_at: int | None) -> None:
            self.model, self.crash_at = model, crash_at
            self.lr: float | None = None

        def on_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            # After optimizer.step() and before lr_scheduler.step(): the rate this step used.
            self.lr = float(kwargs["optimizer"].param_groups[0]["lr"])

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.crash_at is not None and state.global_step >= self.crash_at:
                raise SimulatedCrashError(
                    f"simulated kill before the step after global step {state.global_step}"
                )

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.model.recorder.step(
                epoch=round(state.epoch, 6), global_step=state.global_step, lr=self.lr
            )

    output_dir = workdir / "out"
    trainer: Any = None
    model: IdModel | None = None
    probe: Probe | None = None
    save_steps = 500  # reused by later calls, so the resume does not warn about save_steps
    observations: list[dict[str, JSON]] = []
    for raw in calls:
        call = call_defaults(raw)
        data = IdDataset(call["data"]["n"], call["data"]["offset"])
        resume: str | None = None
        loaded: dict[str, JSON] | None = None
        if call["resume"] == "latest":
            found = _checkpoints(output_dir)
            resume = str(found[-1]) if found else None
            loaded = _state_summary(found[-1]) if found else None
        started_ns = time.time_ns()

        exc: BaseException | None = None
        # logger.warning_once/info_once are lru_caches: clear them so every call reports its own.
        for once in ("warning_once", "info_once"):
            cached = getattr(logging.Logger, once, None)
            if cached is not None and hasattr(cached, "cache_clear"):
                cached.cache_clear()
        with capture(LOGGERS) as captured:
            transformers.logging.set_verbosity_info()
            try:
                if call["fresh"] or trainer is None or model is None or probe is None:
                    save = call["save_every"]
                    save_steps = save if isinstance(save, int) else save_steps
                    # save_every k: save_strategy "steps" every k; "epoch": at each epoch's end.
                    strategy = "steps" if isinstance(save, int) else save or "no"
                    # learning_rate 0 unless the call's args give one (with its scheduler)
                    args = TrainingArguments(
                        output_dir=str(output_dir),
                        per_device_train_batch_size=call["batch_size"],
                        report_to="none",
                        disable_tqdm=True,
                        logging_strategy="no",
                        save_strategy=strategy,
                        save_steps=save_steps,
                        use_cpu=True,
                        seed=0,
                        dataloader_num_workers=0,
                        train_sampling_strategy="random" if call["shuffle"] else "sequential",
                        **{"learning_rate": 0.0, **call["args"]},
                    )
                    model = IdModel()
                    probe = Probe(model, call["crash_at"])
                    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[probe])
                    trainer.remove_callback(PrinterCallback)
                else:
                    trainer.train_dataset = data
                    probe.crash_at = call["crash_at"]
                model.recorder = Recorder()
                for path, value in call["set"].items():
                    set_dotted(trainer, path, value)
                trainer.train(resume_from_checkpoint=resume)
            except Exception as caught:
                exc = caught
            finally:
                transformers.logging.set_verbosity_warning()

        assert trainer is not None
        assert model is not None
        state = trainer.state
        written = [
            p
            for p in _checkpoints(output_dir)
            if (p / "trainer_state.json").exists()
            and (p / "trainer_state.json").stat().st_mtime_ns >= started_ns
        ]
        observation: dict[str, JSON] = {
            "call": raw,
            **model.recorder.as_dict(),
            "counters_after": {
                "global_step": state.global_step,
                "epoch": None if state.epoch is None else round(state.epoch, 6),
                "max_steps": state.max_steps,
                "num_train_epochs": state.num_train_epochs,
            },
            "checkpoint_loaded": loaded,
            "checkpoints_saved": [_state_summary(p) for p in written],
            "warnings": captured.warnings,
            "logs": captured.logs,
            "crashed": isinstance(exc, SimulatedCrashError),
            "error": None if isinstance(exc, SimulatedCrashError) else error_dict(exc),
            "seconds": captured.seconds,
        }
        observations.append(observation)
    return observations
