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
- ``crash_at``: the job is killed at the first ``BATCH_START`` (the start of an optimizer step,
  before its first micro-batch) where ``state.timestamp.batch >= k``: everything the trainer
  does after step k (its own interval and epoch-end saves, the epoch's end, the end of the
  ``fit`` call) has happened, nothing of the next step has. The callback belongs to the trainer,
  so a later ``fit`` on it is killed at its first step.
- ``resume``: ``"latest"``, ``Trainer(load_path=<newest checkpoint of earlier calls>)``.
- ``autoresume``: ``Trainer(autoresume=True, run_name="run", save_folder=...)``.
- ``spin_dataloaders``: ``Trainer(spin_dataloaders=...)`` and ``fit(spin_dataloaders=...)``.
- ``device_train_microbatch_size``: ``Trainer(device_train_microbatch_size=...)``; each
  micro-batch's forward pass is recorded, and ``micro_batches_per_step`` says how many each
  optimizer step had.
- ``tokens_per_sample``: the dataset has ``max_seq_len = tokens_per_sample``, the convention by
  which Composer's default ``DataSpec.get_num_tokens_in_batch`` counts ``max_seq_len`` tokens a
  sample (``composer/core/data_spec.py``); without it Composer counts 0 tokens.
- ``lr``: the optimizer's learning rate, as a factor of :data:`BASE_LR` (``SGD(lr=BASE_LR * lr)``).
- ``scheduler``: ``Trainer(schedulers=...)``, one of Composer's own schedulers as a dict: its
  class name under ``"kind"`` (``CosineAnnealingWithWarmupScheduler``,
  ``LinearWithWarmupScheduler``, ``ConstantWithWarmupScheduler``) and its keyword arguments.
- ``fit_scheduler``: the same, passed to ``fit(schedulers=...)``.

Every step's position holds ``lr``: the optimizer's learning rate at the step's ``BATCH_START``
(what its ``optimizer.step()`` uses; Composer steps its schedulers after the batch), divided by
:data:`BASE_LR`. A call that fails after a step's optimizer step but before its ``BATCH_END``
leaves that step's ids in ``pending_micro_batches`` and its rate in ``pending_lr``.
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
    "device_train_microbatch_size": None,
    "tokens_per_sample": None,
    "lr": 1.0,
    "scheduler": None,
    "fit_scheduler": None,
}

#: The optimizer's learning rate for ``lr=1``; recorded rates are divided by it.
BASE_LR = 0.1

#: Warmup over 3 batches, then a cosine to 0.1 over the whole ``max_duration``.
COSINE: dict[str, JSON] = {
    "kind": "CosineAnnealingWithWarmupScheduler",
    "t_warmup": "3ba",
    "t_max": "1dur",
    "alpha_f": 0.1,
}

# Composer log lines that say nothing about durations or resumes.
# (The "Cannot split tensor" warning is a batch shorter than the micro-batch size, split into one
# micro-batch, not durations. The ResourceWarning is the garbage collection of an earlier
# trainer's CheckpointSaver temporary folder, whenever it happens. "Crash is not in the
# state_dict" is this harness's crash callback on a trainer that loads a checkpoint saved
# without it.)
NOISE = re.compile(
    r"^(Setting seed to|Run name:|Stepping schedulers every|Using precision"
    r"|UserWarning: Cannot split tensor of length"
    r"|ResourceWarning: Implicitly cleaning up <TemporaryDirectory"
    r"|UserWarning: run\.<locals>\.Crash is not in the state_dict)"
)

COUNTERS = (
    "epoch",
    "batch",
    "sample",
    "token",
    "batch_in_epoch",
    "sample_in_epoch",
    "token_in_epoch",
)

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
    # -- a checkpoint at the end of training, then a fit with a duration ----------------------
    "end_checkpoint_then_fit": (
        "max_duration='10ba' with save_interval='1ep' under autoresume: the end-of-training save "
        "at BATCH_CHECKPOINT (ep0-ba10, batch_in_epoch=10) is the last, since the saver skips a "
        "second save at the same batch; the autoresumed fit(duration='1ep') spins the epoch and "
        "trains nothing",
        [
            {"max_duration": "10ba", "save_interval": "1ep", "autoresume": True},
            {"duration": "1ep", "save_interval": "1ep", "autoresume": True},
        ],
    ),
    "end_checkpoint_then_fit_1ba": (
        "the same with save_interval='1ba' (the translation's idiom): batch 10 is saved once",
        [
            {"max_duration": "10ba", "save_interval": "1ba", "autoresume": True},
            {"duration": "1ep", "save_interval": "1ba", "autoresume": True},
        ],
    ),
    "end_checkpoint_then_fit_load_path": (
        "the same end-of-training checkpoint resumed with load_path and fit(duration='1ep')",
        [
            {"max_duration": "10ba", "save_interval": "1ep"},
            {"duration": "1ep", "resume": "latest"},
        ],
    ),
    "end_checkpoint_then_fit_crash_at": (
        "crash_at=10 on the autoresumed fit that only spins: no step starts, so no kill",
        [
            {"max_duration": "10ba", "save_interval": "1ep", "autoresume": True},
            {"duration": "1ep", "save_interval": "1ep", "autoresume": True, "crash_at": 10},
        ],
    ),
    "save_interval_zero": (
        "save_interval='0ba' never saves, not even at the end of training: the resume starts "
        "from scratch",
        [
            {"max_duration": "3ba", "save_interval": "0ba"},
            {"max_duration": "3ba", "resume": "latest"},
        ],
    ),
    # -- device_train_microbatch_size -----------------------------------------------------------
    "microbatch1_6ba": (
        "device_train_microbatch_size=1, batch 10, '6ba': 60 forward micro-batches, 6 steps",
        [{"max_duration": "6ba", "device_train_microbatch_size": 1}],
    ),
    "microbatch3_of_10": (
        "a micro-batch size that does not divide the batch: 3, 3, 3 and 1 samples a step",
        [{"max_duration": "2ba", "device_train_microbatch_size": 3}],
    ),
    "microbatch4_ragged_last_batch": (
        "95 samples, batch 10, micro-batches of 4: 3 a step, 2 (4 + 1) on the last batch",
        [
            {
                "max_duration": "1ep",
                "device_train_microbatch_size": 4,
                "data": {"n": 95, "offset": 0},
            }
        ],
    ),
    "microbatch_larger_than_batch": (
        "device_train_microbatch_size=20 with batch 10: one micro-batch a step",
        [{"max_duration": "2ba", "device_train_microbatch_size": 20}],
    ),
    "microbatch_auto_on_cpu": (
        "device_train_microbatch_size='auto' on CPU: a warning, then Trainer raises ValueError",
        [{"max_duration": "2ba", "device_train_microbatch_size": "auto"}],
    ),
    "microbatch_crash_resume": (
        "micro-batches of 1, killed at step 3's BATCH_START (before its first micro-batch), "
        "resumed from the batch-3 checkpoint",
        [
            {
                "max_duration": "2ep",
                "device_train_microbatch_size": 1,
                "save_interval": "1ba",
                "crash_at": 3,
            },
            {"max_duration": "2ep", "device_train_microbatch_size": 1, "resume": "latest"},
        ],
    ),
    # -- tokens (8 a sample: the dataset's max_seq_len) -----------------------------------------
    "tokens_1000": (
        "max_duration='1000tok', 80 tokens a batch: the budget ends inside batch 13, which is "
        "trained whole (token=1040)",
        [{"max_duration": "1000tok", "tokens_per_sample": 8}],
    ),
    "tokens_ragged_last_batch": (
        "'1000tok' on 95 samples: the 5-sample last batch counts 40 tokens; exactly 1000",
        [{"max_duration": "1000tok", "tokens_per_sample": 8, "data": {"n": 95, "offset": 0}}],
    ),
    "tokens_fit_duration": (
        "'15ba', then fit(duration='200tok'): max_duration = 1200tok + 200tok, 3 batches",
        [
            {"max_duration": "15ba", "tokens_per_sample": 8},
            {"fresh": False, "duration": "200tok", "tokens_per_sample": 8},
        ],
    ),
    "tokens_fit_again_no_duration": (
        "a second fit() after '1000tok' ended at 1040 tokens: max_duration <= elapsed",
        [
            {"max_duration": "1000tok", "tokens_per_sample": 8},
            {"fresh": False, "tokens_per_sample": 8},
        ],
    ),
    "tokens_save_interval_crash": (
        "save_interval='200tok' saves at batches 3 and 5 (240, 400 tokens); killed at step 7's "
        "start, resumed from batch 5",
        [
            {
                "max_duration": "1000tok",
                "tokens_per_sample": 8,
                "save_interval": "200tok",
                "crash_at": 7,
            },
            {"max_duration": "1000tok", "tokens_per_sample": 8, "resume": "latest"},
        ],
    ),
    "tokens_microbatch": (
        "'500tok' with micro-batches of 3: tokens count whole batches",
        [{"max_duration": "500tok", "tokens_per_sample": 8, "device_train_microbatch_size": 3}],
    ),
    # -- the crash model: killed at BATCH_START once timestamp.batch >= k ----------------------
    "crash_at_epoch_end_save": (
        "save_interval='1ep', crash_at=10: the epoch-end save (ep1-ba10) happens before the kill "
        "at epoch 2's first step; the resume trains epoch 2",
        [
            {"max_duration": "2ep", "save_interval": "1ep", "crash_at": 10},
            {"max_duration": "2ep", "resume": "latest"},
        ],
    ),
    "crash_at_later_fit": (
        "crash_at=10 with fit(duration='1ep'): the first fit ends at batch 10 unharmed; the next "
        "fit on the same trainer is killed at its first step; the re-run loads ep1-ba10",
        [
            {"duration": "1ep", "save_interval": "1ep", "crash_at": 10},
            {"fresh": False, "duration": "1ep"},
            {"duration": "1ep", "resume": "latest"},
        ],
    ),
    "crash_at_zero": (
        "crash_at=0: killed at the first step, nothing trained",
        [{"max_duration": "2ep", "save_interval": "1ba", "crash_at": 0}],
    ),
    # -- learning rates: Composer's own schedulers, lr recorded at every BATCH_START ------------
    "lr_cosine_2ep": (
        "warmup 3ba, cosine to 0.1 over '1dur' of 2ep: the scheduler steps after each batch from "
        "the timestamp before it advances, so step t uses alpha(t - 1) (steps 0 and 1 alpha(0))",
        [{"max_duration": "2ep", "scheduler": COSINE}],
    ),
    "lr_cosine_crash_load_path": (
        "the same, killed at step 13 (mid-decay) and resumed with load_path: the checkpoint's lr "
        "is the next step's, then alpha of the restored timestamp: the uninterrupted rates",
        [
            {"max_duration": "2ep", "scheduler": COSINE, "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "2ep", "scheduler": COSINE, "resume": "latest"},
        ],
    ),
    "lr_cosine_crash_autoresume": (
        "the same under autoresume with save_interval='3ba': the re-run resumes from batch 12 and "
        "trains step 13 again with the rate it had",
        [
            {
                "max_duration": "2ep",
                "scheduler": COSINE,
                "autoresume": True,
                "save_interval": "3ba",
                "crash_at": 13,
            },
            {
                "max_duration": "2ep",
                "scheduler": COSINE,
                "autoresume": True,
                "save_interval": "3ba",
            },
        ],
    ),
    "lr_cosine_crash_resume_longer": (
        "killed at step 13 of a 2ep run, resumed with max_duration='3ep': the first resumed step "
        "uses the saved lr (the 2ep curve), the next ones the 3ep curve",
        [
            {"max_duration": "2ep", "scheduler": COSINE, "save_interval": "1ba", "crash_at": 13},
            {"max_duration": "3ep", "scheduler": COSINE, "resume": "latest"},
        ],
    ),
    "lr_dur_stretches": (
        "'10ba' with t_max='1dur', then fit(duration='10ba'): max_duration becomes 20ba and the "
        "curve with it; the second fit's first step has the 10ba curve's rate, then a jump up",
        [{"max_duration": "10ba", "scheduler": COSINE}, {"fresh": False, "duration": "10ba"}],
    ),
    "lr_t_max_batches": (
        "t_max='20ba' on '10ba', then fit(duration='10ba'): one curve over both fits",
        [
            {"max_duration": "10ba", "scheduler": {**COSINE, "t_max": "20ba"}},
            {"fresh": False, "duration": "10ba"},
        ],
    ),
    "lr_t_max_batches_exceeded": (
        "t_max='10ba' on '10ba', then fit(duration='10ba'): the scheduler step after the second "
        "fit's first batch finds max_duration 20ba > t_max and raises ValueError",
        [
            {"max_duration": "10ba", "scheduler": {**COSINE, "t_max": "10ba"}},
            {"fresh": False, "duration": "10ba"},
        ],
    ),
    "lr_t_max_epochs": (
        "t_max='2ep' (20 batches of this loader) on '15ba', then fit(duration='5ba')",
        [
            {"max_duration": "15ba", "scheduler": {**COSINE, "t_max": "2ep"}},
            {"fresh": False, "duration": "5ba"},
        ],
    ),
    "lr_t_max_below_max_duration": (
        "t_max='5ba' with max_duration='1ep' of 10 batches: ValueError in Trainer()",
        [{"max_duration": "1ep", "scheduler": {**COSINE, "t_max": "5ba"}}],
    ),
    "lr_reset_time": (
        "fit(duration='5ba', reset_time=True) after '10ba': the timestamp restarts and the curve "
        "with it, over the new max_duration",
        [
            {"max_duration": "10ba", "scheduler": COSINE},
            {"fresh": False, "duration": "5ba", "reset_time": True},
        ],
    ),
    "lr_fit_schedulers": (
        "fit(duration='10ba', schedulers=...) after '10ba': compiled at timestamp 10, so the "
        "second fit's first two steps use alpha(10) of the 20ba curve; no restart from 0",
        [
            {"max_duration": "10ba", "scheduler": COSINE},
            {"fresh": False, "duration": "10ba", "fit_scheduler": COSINE},
        ],
    ),
    "lr_fit_schedulers_autoresume": (
        "fit(duration='10ba', schedulers=...) under autoresume, killed at step 6: the re-run "
        "re-adds the duration (16ba) and compiles after the load, so its first step uses "
        "alpha(6) of the 16ba curve, not the saved lr",
        [
            {
                "duration": "10ba",
                "fit_scheduler": COSINE,
                "autoresume": True,
                "save_interval": "1ba",
                "crash_at": 6,
            },
            {
                "duration": "10ba",
                "fit_scheduler": COSINE,
                "autoresume": True,
                "save_interval": "1ba",
            },
        ],
    ),
    "lr_trainer_scheduler_without_max_duration": (
        "Trainer(schedulers=...) without max_duration: the scheduler is evaluated in Trainer() "
        "and its assertion fails",
        [{"duration": "10ba", "scheduler": COSINE}],
    ),
    "lr_micro_batches": (
        "micro-batches of 3: one rate a step",
        [{"max_duration": "5ba", "scheduler": COSINE, "device_train_microbatch_size": 3}],
    ),
    "lr_linear_dur_warmup": (
        "LinearWithWarmupScheduler, t_warmup='0.25dur' (5 of 20 batches), 1 to 0.2, lr 2",
        [
            {
                "max_duration": "2ep",
                "lr": 2.0,
                "scheduler": {
                    "kind": "LinearWithWarmupScheduler",
                    "t_warmup": "0.25dur",
                    "alpha_i": 1.0,
                    "alpha_f": 0.2,
                },
            }
        ],
    ),
    "lr_constant_zero_warmup": (
        "ConstantWithWarmupScheduler(t_warmup='0ba', alpha=0.5): the zero-warmup warning",
        [
            {
                "max_duration": "3ba",
                "scheduler": {
                    "kind": "ConstantWithWarmupScheduler",
                    "t_warmup": "0ba",
                    "alpha": 0.5,
                },
            }
        ],
    ),
    "lr_units_differ": (
        "max_duration='100sp' makes t_max='1dur' 100sp, against t_warmup='3ba': ValueError",
        [{"max_duration": "100sp", "scheduler": COSINE}],
    ),
    "lr_samples": (
        "max_duration='95sp' with t_warmup='30sp', t_max='1dur' (95sp): the curve in samples",
        [{"max_duration": "95sp", "scheduler": {**COSINE, "t_warmup": "30sp"}}],
    ),
    "lr_no_loader_length": (
        "the loader given to fit only, max_duration='2ep': Trainer() converts '1dur' without "
        "a loader length",
        [{"max_duration": "2ep", "scheduler": COSINE, "loader_in_fit": True}],
    ),
    "lr_switch_loader": (
        "'1ep' of 10 batches, then fit(train_dataloader=<5 batches>, duration='1ep'): '1dur' "
        "is now 2 x 5 batches, already behind the timestamp",
        [
            {"max_duration": "1ep", "scheduler": COSINE},
            {
                "fresh": False,
                "duration": "1ep",
                "loader_in_fit": True,
                "data": {"n": 50, "offset": 1000},
            },
        ],
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
    import composer.optim
    import torch
    from composer import Callback, Event, State, Trainer
    from composer.loggers import Logger
    from composer.models import ComposerModel
    from torch.utils.data import DataLoader, Dataset

    class IdDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
        def __init__(self, n: int, offset: int, tokens_per_sample: int | None) -> None:
            self.n, self.offset = n, offset
            if tokens_per_sample is not None:
                self.max_seq_len = tokens_per_sample

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
            self.lr: float | None = None

        def run_event(self, event: Event, state: State, logger: Logger) -> None:
            if event == Event.BATCH_START:
                self.lr = float(state.optimizers[0].param_groups[0]["lr"]) / BASE_LR
            if event == Event.BATCH_END:
                ts = state.timestamp
                self.model.recorder.step(
                    epoch=int(ts.epoch), batch_in_epoch_after=int(ts.batch_in_epoch), lr=self.lr
                )

    class Crash(Callback):
        """Kill the job at the first optimizer step that starts with ``timestamp.batch >= k``."""

        def __init__(self, at: int) -> None:
            self.at = at

        def batch_start(self, state: State, logger: Logger) -> None:
            if int(state.timestamp.batch) >= self.at:
                raise SimulatedCrashError(
                    f"simulated crash after batch {int(state.timestamp.batch)}"
                )

    def scheduler(spec: dict[str, JSON] | None) -> Any:
        if spec is None:
            return None
        arguments = dict(spec)
        return getattr(composer.optim, arguments.pop("kind"))(**arguments)

    save_folder = workdir / "checkpoints"
    trainer: Any = None
    model: IdModel | None = None
    recorder: StepRecorder | None = None
    observations: list[dict[str, JSON]] = []
    for raw in calls:
        call = {**DEFAULTS, **raw}
        data = call["data"]
        dataset = IdDataset(data["n"], data["offset"], call["tokens_per_sample"])
        loader = DataLoader(dataset, batch_size=call["batch_size"])
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
                    recorder = StepRecorder(model)
                    callbacks: list[Callback] = [recorder]
                    if call["crash_at"] is not None:
                        callbacks.append(Crash(call["crash_at"]))
                    trainer = None
                    trainer = Trainer(
                        model=model,
                        train_dataloader=None if call["loader_in_fit"] else loader,
                        max_duration=call["max_duration"],
                        optimizers=torch.optim.SGD(model.parameters(), lr=BASE_LR * call["lr"]),
                        schedulers=scheduler(call["scheduler"]),
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
                        device_train_microbatch_size=call["device_train_microbatch_size"],
                    )
                model.recorder = Recorder()
                trainer.fit(
                    train_dataloader=loader if call["loader_in_fit"] else None,
                    duration=call["duration"],
                    reset_time=call["reset_time"],
                    spin_dataloaders=call["spin_dataloaders"],
                    schedulers=scheduler(call["fit_scheduler"]),
                )
            except Exception as caught:
                exc = caught

        observation: dict[str, JSON] = {"call": raw}
        if model is not None:
            observation.update(model.recorder.as_dict())
            if model.recorder.pending and recorder is not None:
                observation["pending_lr"] = recorder.lr
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
