"""Composer runner: real ``composer.Trainer.fit`` calls on a tiny id-carrying dataset.

Composer 0.32.1 pins ``torch<2.7.1``; it runs on torch 2.13.0+cpu in its own environment,
``.venv-composer``, which ``bash .ci/composer-env`` makes (and CI runs): ``torch==2.13.0`` first,
then ``mosaicml==0.32.1`` with ``--no-deps`` and its light dependencies, and ``torchvision``
with ``--no-deps``, patched so that the two ``register_fake`` decorators in
``torchvision/_meta_registrations.py`` apply only when ``torchvision.extension._has_ops()``
(its C extension does not load against the CPU torch; nothing here needs it). Framework
imports stay inside functions, so pytest can import this module without Composer. Record with::

    bash .ci/composer-env && .venv-composer/bin/python -m tests.frameworks._composer_runner \
        tests/frameworks/observed_composer.json

Each call is a dict (every key optional, defaults in :data:`DEFAULTS`):

- ``fresh``: build a new ``Trainer`` (True) or call ``fit`` again on the previous one (False).
- ``data``: ``{"n": 100, "offset": 0}``, a map-style dataset whose items carry their ids.
- ``batch_size``: the global batch size (one CPU process).
- ``max_duration``: ``Trainer(max_duration=...)``; ``duration``/``reset_time``: ``fit(...)``.
- ``loader_in_fit``: pass the train dataloader to ``fit(train_dataloader=...)`` instead of
  ``Trainer(train_dataloader=...)``; on a reused trainer this switches the loader.
- ``save_interval``: ``Trainer(save_interval=...)`` (checkpoints in one folder for all calls).
- ``crash_at``: raise a simulated crash at the first batch after batch k (k is saved).
- ``resume``: ``"latest"``, ``Trainer(load_path=<newest checkpoint of earlier calls>)``.
- ``autoresume``: ``Trainer(autoresume=True, run_name="run", save_folder=...)``.
- ``spin_dataloaders``: ``Trainer(spin_dataloaders=...)`` and ``fit(spin_dataloaders=...)``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from ._common import JSON, Recorder, SimulatedCrashError, capture, error_dict

LOGGERS = ["composer"]

DEFAULTS: dict[str, JSON] = {
    "fresh": True,
    "data": {"n": 100, "offset": 0},
    "batch_size": 10,
    "max_duration": None,
    "duration": None,
    "reset_time": False,
    "loader_in_fit": False,
    "save_interval": None,
    "crash_at": None,
    "resume": None,
    "autoresume": False,
    "spin_dataloaders": True,
}

# Composer log lines that say nothing about durations or resumes.
# (The "Cannot split tensor" warning is microbatching of a ragged last batch, not durations.)
NOISE = re.compile(
    r"^(Setting seed to|Run name:|Stepping schedulers every|Using precision"
    r"|UserWarning: Cannot split tensor of length)"
)

COUNTERS = ("epoch", "batch", "sample", "batch_in_epoch", "sample_in_epoch")

# Scenario id -> (what it checks, calls).
SCENARIOS: dict[str, tuple[str, list[dict[str, JSON]]]] = {
    "epochs2": ("max_duration='2ep' trains 20 batches", [{"max_duration": "2ep"}]),
    "batches15": (
        "max_duration='15ba' stops mid-epoch; the epoch counter stays at 1",
        [{"max_duration": "15ba"}],
    ),
    "fit_twice_1ep": (
        "fit(duration='1ep') twice on one trainer: additive, 2 epochs in all",
        [{"duration": "1ep"}, {"fresh": False, "duration": "1ep"}],
    ),
    "batches15_then_1ep": (
        "after a mid-epoch stop at 15ba, fit(duration='1ep') means 'to the end of epoch 2'",
        [{"max_duration": "15ba"}, {"fresh": False, "duration": "1ep"}],
    ),
    "fit_reset_time": (
        "fit(duration='5ba', reset_time=True) zeroes the timestamp",
        [{"max_duration": "15ba"}, {"fresh": False, "duration": "5ba", "reset_time": True}],
    ),
    "fit_again_no_duration": (
        "a second fit() with neither duration nor reset_time: max_duration <= elapsed",
        [{"max_duration": "1ep"}, {"fresh": False}],
    ),
    "max_duration_le_elapsed_on_resume": (
        "resume at batch 13 with max_duration='10ba': the ValueError",
        [
            {"max_duration": "2ep", "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "10ba", "resume": "latest"},
        ],
    ),
    "load_path_resume_13": (
        "load_path resume from batch 13 (mid-epoch 1): spins 3 batches, trains 7",
        [
            {"max_duration": "2ep", "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "2ep", "resume": "latest"},
        ],
    ),
    "load_path_resume_13_no_spin": (
        "load_path resume from batch 13 with spin_dataloaders=False: repeats data",
        [
            {"max_duration": "2ep", "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "2ep", "resume": "latest", "spin_dataloaders": False},
        ],
    ),
    "load_path_resume_longer": (
        "max_duration is not saved: the resumed run's '3ep' wins",
        [
            {"max_duration": "2ep", "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "3ep", "resume": "latest"},
        ],
    ),
    "autoresume_max_duration": (
        "autoresume with max_duration on init: idempotent",
        [
            {"max_duration": "2ep", "autoresume": True, "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "2ep", "autoresume": True, "save_interval": "1ba"},
        ],
    ),
    "autoresume_fit_duration": (
        "autoresume with fit(duration='2ep'): re-adds the duration on restart (#3357)",
        [
            {"duration": "2ep", "autoresume": True, "save_interval": "1ba", "crash_at": 13},
            {"duration": "2ep", "autoresume": True, "save_interval": "1ba"},
        ],
    ),
    "autoresume_reset_time": (
        "autoresume with fit(duration='2ep', reset_time=True): restarts from zero",
        [
            {"duration": "2ep", "autoresume": True, "save_interval": "1ba", "crash_at": 13},
            {"duration": "2ep", "reset_time": True, "autoresume": True, "save_interval": "1ba"},
        ],
    ),
    "autoresume_after_finish": (
        "a finished 2ep run saved with '1ba', autoresumed with max_duration='3ep': which "
        "checkpoint is the latest decides whether epoch 1 is spun once more",
        [
            {"max_duration": "2ep", "autoresume": True, "save_interval": "1ba"},
            {"max_duration": "3ep", "autoresume": True, "save_interval": "1ba"},
        ],
    ),
    "save_every_epoch_resume": (
        "save_interval='1ep', crash at batch 13: resume from the epoch-1 checkpoint (batch 10)",
        [
            {"max_duration": "2ep", "save_interval": "1ep", "crash_at": 13},
            {"max_duration": "2ep", "resume": "latest"},
        ],
    ),
    "fractional_epoch": (
        "max_duration='0.1ep' is rejected by Time.from_timestring",
        [{"max_duration": "0.1ep"}],
    ),
    "fractional_epoch_fit": (
        "fit(duration='0.1ep') is rejected the same way",
        [{"max_duration": "2ep"}, {"fresh": False, "duration": "0.1ep"}],
    ),
    "dur_max_duration": (
        "max_duration='0.5dur' is refused by the State.max_duration setter",
        [{"max_duration": "0.5dur"}],
    ),
    "switch_loader_short": (
        "15ba, then fit(train_dataloader=<5-batch loader>, duration='1ep'): batch_in_epoch=5 is "
        "kept, so all 5 batches of the new loader are skipped",
        [
            {"max_duration": "15ba"},
            {
                "fresh": False,
                "duration": "1ep",
                "loader_in_fit": True,
                "data": {"n": 50, "offset": 1000},
            },
        ],
    ),
    "switch_loader_long": (
        "15ba, then fit(train_dataloader=<10-batch loader>, duration='1ep'): starts at batch 5 "
        "of the new loader",
        [
            {"max_duration": "15ba"},
            {
                "fresh": False,
                "duration": "1ep",
                "loader_in_fit": True,
                "data": {"n": 100, "offset": 1000},
            },
        ],
    ),
    "switch_loader_epoch_end": (
        "2ep, then fit(train_dataloader=B, duration='3ba'): a clean epoch boundary",
        [
            {"max_duration": "2ep"},
            {
                "fresh": False,
                "duration": "3ba",
                "loader_in_fit": True,
                "data": {"n": 100, "offset": 1000},
            },
        ],
    ),
    "samples_duration": (
        "max_duration='25sp' with batch 10: stops after the batch that reaches 25 samples",
        [{"max_duration": "25sp"}],
    ),
    "ragged_last_batch": (
        "95 samples, batch 10: the last batch has 5 samples",
        [{"max_duration": "1ep", "data": {"n": 95, "offset": 0}}],
    ),
}


def versions() -> dict[str, str]:
    import composer
    import torch

    return {"mosaicml": composer.__version__, "torch": torch.__version__}


def _newest_checkpoint(directory: Path) -> Path | None:
    """The checkpoint saved last (what ``latest-rank0.pt`` points to)."""
    files = sorted(
        (p for p in directory.glob("ep*-ba*.pt") if not p.is_symlink()),
        key=lambda p: p.stat().st_mtime_ns,
    )
    return files[-1] if files else None


def _tidy(message: str, workdir: Path) -> str:
    return message.replace(str(workdir), "<workdir>")


def run(calls: list[dict[str, JSON]], workdir: Path) -> list[dict[str, JSON]]:
    """Run ``calls`` in order; return one observation dict per call."""
    import torch
    from composer import Callback, Event, State, Trainer
    from composer.loggers import Logger
    from composer.models import ComposerModel
    from torch.utils.data import DataLoader, Dataset

    class IdDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
        def __init__(self, n: int, offset: int) -> None:
            self.n, self.offset = n, offset

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.tensor([1.0]), torch.tensor(self.offset + index)

    class IdModel(ComposerModel):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.recorder = Recorder()

        def forward(self, batch: Any) -> torch.Tensor:
            x, ids = batch
            if self.training:
                self.recorder.micro([int(v) for v in ids.tolist()])
            return self.layer(x)

        def loss(self, outputs: Any, batch: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
            return (outputs**2).mean()

    class StepRecorder(Callback):
        def __init__(self, model: IdModel) -> None:
            self.model = model

        def run_event(self, event: Event, state: State, logger: Logger) -> None:
            if event == Event.BATCH_END:
                ts = state.timestamp
                self.model.recorder.step(
                    epoch=int(ts.epoch), batch_in_epoch_after=int(ts.batch_in_epoch)
                )

    class Crash(Callback):
        """Raise at the first batch start once batch k is done (and checkpointed)."""

        def __init__(self, at: int) -> None:
            self.at = at

        def batch_start(self, state: State, logger: Logger) -> None:
            if int(state.timestamp.batch) >= self.at:
                raise SimulatedCrashError(
                    f"simulated crash after batch {int(state.timestamp.batch)}"
                )

    save_folder = workdir / "checkpoints"
    trainer: Any = None
    model: IdModel | None = None
    observations: list[dict[str, JSON]] = []
    for raw in calls:
        call = {**DEFAULTS, **raw}
        data = call["data"]
        loader = DataLoader(IdDataset(data["n"], data["offset"]), batch_size=call["batch_size"])
        loaded: str | None = None
        exc: BaseException | None = None
        with capture(LOGGERS) as captured:
            try:
                if call["fresh"] or trainer is None or model is None:
                    if trainer is not None:
                        trainer.close()
                    model = IdModel()
                    load_path = None
                    if call["resume"] == "latest":
                        newest = _newest_checkpoint(save_folder)
                        load_path = str(newest) if newest else None
                        loaded = newest.name if newest else None
                    callbacks: list[Callback] = [StepRecorder(model)]
                    if call["crash_at"] is not None:
                        callbacks.append(Crash(call["crash_at"]))
                    trainer = None
                    trainer = Trainer(
                        model=model,
                        train_dataloader=None if call["loader_in_fit"] else loader,
                        max_duration=call["max_duration"],
                        optimizers=torch.optim.SGD(model.parameters(), lr=0.0),
                        device="cpu",
                        callbacks=callbacks,
                        progress_bar=False,
                        log_to_console=False,
                        seed=0,
                        run_name="run",
                        save_folder=str(save_folder) if call["save_interval"] else None,
                        save_interval=call["save_interval"] or "1ep",
                        save_filename="ep{epoch}-ba{batch}-rank{rank}.pt",
                        save_overwrite=not call["autoresume"],
                        autoresume=call["autoresume"],
                        load_path=load_path,
                        spin_dataloaders=call["spin_dataloaders"],
                    )
                model.recorder = Recorder()
                trainer.fit(
                    train_dataloader=loader if call["loader_in_fit"] else None,
                    duration=call["duration"],
                    reset_time=call["reset_time"],
                    spin_dataloaders=call["spin_dataloaders"],
                )
            except Exception as caught:
                exc = caught

        observation: dict[str, JSON] = {"call": raw}
        if model is not None:
            observation.update(model.recorder.as_dict())
        else:
            observation.update({"steps": 0, "batches": [], "positions": []})
        if trainer is not None:
            ts = trainer.state.timestamp
            observation["counters_after"] = {name: int(getattr(ts, name)) for name in COUNTERS}
            max_duration = trainer.state.max_duration
            observation["max_duration_after"] = None if max_duration is None else str(max_duration)
        else:
            observation["counters_after"] = None
            observation["max_duration_after"] = None
        error = None if isinstance(exc, SimulatedCrashError) else error_dict(exc)
        if error is not None:
            error["message"] = _tidy(error["message"], workdir)
        observation.update(
            {
                "checkpoint_loaded": loaded,
                "warnings": [_tidy(w, workdir) for w in captured.warnings if not NOISE.search(w)],
                "logs": [_tidy(m, workdir) for m in captured.logs if not NOISE.search(m)],
                "crashed": isinstance(exc, SimulatedCrashError),
                "error": error,
                "seconds": captured.seconds,
            }
        )
        observations.append(observation)
    if trainer is not None:
        trainer.close()
    return observations


def record(out: Path) -> dict[str, JSON]:
    """Run every scenario in a fresh temporary folder; write the observations to ``out``."""
    import platform
    import tempfile
    import time

    start = time.perf_counter()
    observations: dict[str, JSON] = {}
    for name, (about, calls) in SCENARIOS.items():
        with tempfile.TemporaryDirectory() as tmp:
            observations[f"composer/{name}"] = {
                "framework": "composer",
                "about": about,
                "calls": run(calls, Path(tmp)),
            }
    result: dict[str, JSON] = {
        "meta": {
            "python": platform.python_version(),
            "versions": versions(),
            "seconds": round(time.perf_counter() - start, 2),
        },
        "observations": observations,
    }
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    record(Path(sys.argv[1] if len(sys.argv) > 1 else "observed_composer.json"))
