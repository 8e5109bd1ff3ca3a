"""Keras 3 runner (torch backend): real ``Model.fit`` calls on a tiny id-carrying dataset."""

from __future__ import annotations

import json
import os
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

LOGGERS = ["keras"]


def _import_keras() -> Any:
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    if keras.backend.backend() != "torch":
        raise RuntimeError(f"keras runs with backend {keras.backend.backend()!r}, expected 'torch'")
    return keras


def versions() -> dict[str, str]:
    import torch

    keras = _import_keras()
    return {
        "keras": keras.__version__,
        "backend": keras.backend.backend(),
        "torch": torch.__version__,
    }


def run(calls: list[CallSpec], workdir: Path) -> list[dict[str, JSON]]:
    """Run ``calls`` in order; return one observation dict per call."""
    import numpy as np
    import torch

    keras = _import_keras()

    class RecordIds(keras.layers.Layer):  # type: ignore[misc]
        """Identity layer that records the ids of each concrete (non-symbolic) batch."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.recorder = Recorder()

        def call(self, x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.device.type != "meta":
                self.recorder.micro([int(v) for v in x[:, 0].detach().cpu().tolist()])
            return x

    class Probe(keras.callbacks.Callback):  # type: ignore[misc]
        """Closes a recorded step when ``optimizer.iterations`` moves, and kills the call as
        the profile's ``Call.crash_at`` says: in ``on_train_batch_begin`` of the first
        micro-batch of an optimizer step while ``optimizer.iterations >= crash_at``, so every
        callback hook of the steps before has run (BackupAndRestore's batch-end and epoch-end
        saves, epoch ends and the next epoch's begin), and nothing of the next step has."""

        def __init__(
            self, layer: RecordIds, crash_at: int | None, rates: list[float] | None
        ) -> None:
            super().__init__()
            self.layer, self.crash_at, self.rates = layer, crash_at, rates
            self.epochs: list[int] = []
            self.epoch = -1

        def on_train_begin(self, logs: Any = None) -> None:
            self.last = int(self.model.optimizer.iterations)

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.epoch = epoch
            self.epochs.append(epoch)

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            optimizer = self.model.optimizer
            # With gradient accumulation k a batch is a micro-batch; an optimizer step starts
            # at the micro-batch that finds the raw counter at a multiple of k.
            micro = int(optimizer._iterations) % (optimizer.gradient_accumulation_steps or 1)
            now = int(optimizer.iterations)
            if self.crash_at is not None and micro == 0 and now >= self.crash_at:
                raise SimulatedCrashError(
                    f"simulated kill before the optimizer step after iterations={now}"
                )

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            now = int(self.model.optimizer.iterations)
            if now != self.last:
                position: dict[str, JSON] = {"epoch": self.epoch, "batch": batch, "iterations": now}
                if self.rates is not None:
                    position["lr"] = self.rates[-1]
                self.layer.recorder.step(**position)
                self.last = now

    def build(
        optimizer_kwargs: dict[str, JSON], lr_schedule: dict[str, JSON] | None
    ) -> tuple[Any, RecordIds, list[float] | None]:
        """A compiled model; with ``lr_schedule``, the list its optimizer appends the learning
        rate of every update to (the value the update step is given, at the moment it runs)."""
        keras.utils.set_random_seed(0)
        layer = RecordIds()
        model = keras.Sequential([keras.Input((1,)), layer, keras.layers.Dense(1)])
        learning_rate: Any = 0.0
        if lr_schedule is not None:
            learning_rate = lr_schedule["learning_rate"]
            if isinstance(learning_rate, dict):
                learning_rate = keras.optimizers.schedules.deserialize(learning_rate)
        optimizer = keras.optimizers.SGD(learning_rate=learning_rate, **optimizer_kwargs)
        rates: list[float] | None = None
        if lr_schedule is not None:
            rates = []
            update = optimizer._backend_update_step

            def recorded(grads: Any, variables: Any, rate: Any) -> Any:
                rates.append(float(rate))
                return update(grads, variables, rate)

            optimizer._backend_update_step = recorded
        model.compile(optimizer=optimizer, loss="mse")
        return model, layer, rates

    backup_dir = workdir / "backup"
    model: Any = None
    layer: RecordIds | None = None
    rates: list[float] | None = None
    default_floatx = keras.config.floatx()
    floatx = default_floatx
    observations: list[dict[str, JSON]] = []
    for raw in calls:
        call = call_defaults(raw)
        if call["resume"] is not None:
            raise ValueError("keras resumes through BackupAndRestore: use save_every, not resume")
        n, offset = call["data"]["n"], call["data"]["offset"]
        x = np.arange(offset, offset + n, dtype="float32").reshape(-1, 1)
        y = np.zeros((n, 1), dtype="float32")
        metadata_path = backup_dir / "training_metadata.json"
        loaded = json.loads(metadata_path.read_text()) if metadata_path.exists() else None

        exc: BaseException | None = None
        history: Any = None
        probe: Probe | None = None
        with capture(LOGGERS) as captured:
            try:
                if call["fresh"] or model is None or layer is None:
                    floatx = (call["lr_schedule"] or {}).get("floatx", default_floatx)
                    keras.config.set_floatx(floatx)
                    model, layer, rates = build(call["optimizer"], call["lr_schedule"])
                keras.config.set_floatx(floatx)  # the model's, for the schedule's arithmetic
                layer.recorder = Recorder()
                for path, value in call["set"].items():
                    set_dotted(model, path, value)
                callbacks: list[Any] = []
                if call["save_every"] is not None:
                    callbacks.append(
                        keras.callbacks.BackupAndRestore(
                            backup_dir=str(backup_dir),
                            save_freq=call["save_every"],
                            delete_checkpoint=not call["save_at_end"],
                        )
                    )
                probe = Probe(layer, call["crash_at"], rates)
                callbacks.append(probe)
                history = model.fit(
                    x,
                    y,
                    batch_size=call["batch_size"],
                    shuffle=call["shuffle"],
                    verbose=0,
                    callbacks=callbacks,
                    **call["args"],
                )
            except Exception as caught:  # any framework error is an observation
                exc = caught
            finally:
                keras.config.set_floatx(default_floatx)

        assert model is not None
        assert layer is not None
        optimizer = model.optimizer
        counters: dict[str, JSON] = {
            "iterations": int(optimizer.iterations),
            "raw_iterations": int(optimizer._iterations),
            "epochs_run": probe.epochs if probe else [],
            "history_epochs": list(history.epoch) if history is not None else None,
            "model_initial_epoch": getattr(model, "_initial_epoch", None),
        }
        observation: dict[str, JSON] = {
            "call": raw,
            **layer.recorder.as_dict(),
            "counters_after": counters,
            "checkpoint_loaded": loaded if call["save_every"] is not None else None,
            "backup_after": (
                json.loads(metadata_path.read_text()) if metadata_path.exists() else None
            ),
            "warnings": captured.warnings,
            "logs": captured.logs,
            "crashed": isinstance(exc, SimulatedCrashError),
            "error": None if isinstance(exc, SimulatedCrashError) else error_dict(exc),
            "seconds": captured.seconds,
        }
        observations.append(observation)
    return observations
