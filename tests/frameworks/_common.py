"""Shared pieces of the framework runners: the call specification, the batch recorder, and the
capture of warnings and log records.

Nothing here imports a framework, so pytest can import this module without them.
"""

from __future__ import annotations

import logging
import re
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

JSON = Any
"""A value made of dicts, lists, str, int, float, bool and None only."""


class DataSpec(TypedDict):
    """A map-style dataset of ``n`` samples whose items carry their own id ``offset + index``."""

    n: int
    offset: int


class CallSpec(TypedDict, total=False):
    """One ``fit``/``train`` call. Every key is optional; the defaults are in :func:`call_defaults`.

    - ``fresh``: build a new trainer and model (True) or call again on the previous ones (False).
    - ``data``: the dataset, default 100 samples with ids 0..99.
    - ``batch_size``: the per-device (here: global, one CPU process) batch size.
    - ``args``: keyword arguments for ``pl.Trainer`` / ``TrainingArguments`` / ``Model.fit``.
    - ``optimizer``: keyword arguments for the Keras optimizer (``gradient_accumulation_steps``).
    - ``loader``: Lightning only, ``"plain"`` (torch DataLoader) or ``"stateful"`` (torchdata).
    - ``shuffle``: shuffle the training data (sampler seeded); default False.
    - ``save_every``: checkpoint every k optimizer steps, or ``"epoch"`` (Keras BackupAndRestore).
    - ``save_at_end``: Lightning, save a checkpoint after ``fit`` returns
      (``trainer.save_checkpoint``); Keras, keep the backup after success
      (``delete_checkpoint=False``).
    - ``crash_at``: raise :class:`SimulatedCrashError` when the trainer is about to start an
      optimizer step while its own step counter is at least k (docs/frameworks.md, "One crash
      model"): every save and epoch end after step k has happened, nothing of the next step.
    - ``resume``: ``"latest"``, resume from the newest checkpoint written by earlier calls
      (Lightning ``ckpt_path``, HF ``resume_from_checkpoint``; Keras resumes through the backup).
    - ``set``: attributes to assign on the reused trainer before the call (dotted paths), e.g.
      ``{"fit_loop.max_epochs": 2}`` for Lightning or ``{"args.num_train_epochs": 2}`` for HF.
    - ``lr_schedule``: Keras, ``{"learning_rate": ..., "floatx": ...}``: the optimizer's
      ``learning_rate`` (a float, or a schedule as ``keras.optimizers.schedules.serialize`` writes
      it) and the ``floatx`` the model computes in (default ``"float32"``), taken where the model is
      built; the runner then records the learning rate of every update (``lr`` in its position).
    - ``lr_schedule`` (Lightning): ``{"decay", "warmup", "floor", "lr", "total"}``: the scheduler
      ``configure_optimizers`` returns with ``interval="step"`` (see ``_lightning.py``); the runner
      then records the learning rate of every optimizer step (``lr`` in its position).
    """

    fresh: bool
    data: DataSpec
    batch_size: int
    args: dict[str, JSON]
    optimizer: dict[str, JSON]
    loader: Literal["plain", "stateful"]
    shuffle: bool
    save_every: int | Literal["epoch"] | None
    save_at_end: bool
    crash_at: int | None
    resume: Literal["latest"] | None
    set: dict[str, JSON]
    lr_schedule: dict[str, JSON] | None


class Scenario(TypedDict):
    """A named sequence of calls on one framework, and what it checks."""

    id: str
    framework: Literal["lightning", "transformers", "keras"]
    about: str
    calls: list[CallSpec]
    notes: NotRequired[str]


DEFAULT_DATA: DataSpec = {"n": 100, "offset": 0}


def call_defaults(call: CallSpec) -> CallSpec:
    """Return ``call`` with every key filled in."""
    full: CallSpec = {
        "fresh": True,
        "data": DEFAULT_DATA,
        "batch_size": 10,
        "args": {},
        "optimizer": {},
        "loader": "plain",
        "shuffle": False,
        "save_every": None,
        "save_at_end": False,
        "crash_at": None,
        "resume": None,
        "set": {},
        "lr_schedule": None,
    }
    full.update(call)
    return full


class SimulatedCrashError(RuntimeError):
    """Raised by the crash callbacks to simulate a job dying after a checkpoint."""


@dataclass
class Recorder:
    """Collects the sample ids of every micro-batch and groups them by optimizer step.

    A runner calls :meth:`micro` for each micro-batch the model sees (from the forward pass) and
    :meth:`step` after each optimizer step, with the framework's position for that step.
    """

    batches: list[list[int]] = field(default_factory=list)
    positions: list[dict[str, JSON]] = field(default_factory=list)
    micro_counts: list[int] = field(default_factory=list)
    pending: list[list[int]] = field(default_factory=list)

    def micro(self, ids: list[int]) -> None:
        self.pending.append(ids)

    def step(self, **position: JSON) -> None:
        self.batches.append([i for micro in self.pending for i in micro])
        self.micro_counts.append(len(self.pending))
        self.positions.append(position)
        self.pending = []

    def as_dict(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "steps": len(self.batches),
            "batches": self.batches,
            "positions": self.positions,
        }
        if any(count != 1 for count in self.micro_counts):
            out["micro_batches_per_step"] = self.micro_counts
        if self.pending:
            out["pending_micro_batches"] = self.pending
        return out


# Messages that say nothing about durations or resumes; everything else is kept verbatim.
NOISE = [
    r"^(GPU|TPU|HPU|IPU) available",
    r"does not have many workers",
    r"^You are using a CUDA device",
    r"^Using default `ModelCheckpoint`",
    r"^LOCAL_RANK",
    r"^💡 Tip",
    r"^Tip:",
    r"^`Trainer.fit` stopped: `max_steps=\d+` reached",
    r"The '(train|val)_dataloader' does not have",
    r"^PyTorch: setting up devices",
    r"^Restoring states from the checkpoint path",
    r"^Restored all states from the checkpoint",
    r"Checkpoint directory .* exists and is not empty",
    r"^Saving model checkpoint to",
    r"^Configuration saved in",
    r"^Model weights saved in",
    r"^Training completed\. Do not forget",
    r"^\n\nTraining completed",
    r"^The following columns in the training set",
    r"^Loading model from",
    r"Total train batch size|Instantaneous batch size|Number of trainable parameters",
    r"^\s*Training with DataParallel",
    r"^\*+ Running training \*+$",
    r"__array__ implementation doesn't accept a copy keyword",
    r"is not a `PreTrainedModel`, only saving its state dict",
    r"'set_vital' is deprecated",
    r"^`weights_only` was not set, defaulting to `False`",
    r"isinstance\(treespec, LeafSpec\)",
]
_NOISE = re.compile("|".join(f"(?:{pattern})" for pattern in NOISE))


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclass
class Captured:
    """Warnings and log records seen during one call, noise removed, duplicates folded."""

    warnings: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _clean(messages: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for message in messages:
        text = message.strip()
        if text and not _NOISE.search(text):
            seen.setdefault(text, None)
    return list(seen)


@contextmanager
def quiet(logger_names: list[str]) -> Iterator[None]:
    """Silence warnings and the records below ERROR of ``logger_names`` (framework noise that
    is not under test; FINDINGS.md records it)."""
    levels = {name: logging.getLogger(name).level for name in logger_names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in logger_names:
            logging.getLogger(name).setLevel(logging.ERROR)
        try:
            yield
        finally:
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)


@contextmanager
def capture(logger_names: list[str]) -> Iterator[Captured]:
    """Record every warning and the INFO+ records of ``logger_names``; keep them off the console.

    Warnings are recorded with the ``always`` filter, so pytest's ``filterwarnings = error`` does
    not turn a framework warning into a test failure.
    """
    captured = Captured()
    handler = _ListHandler()
    saved: list[tuple[logging.Logger, int, bool, list[logging.Handler]]] = []
    for name in logger_names:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate, list(logger.handlers)))
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield captured
            finally:
                captured.warnings = _clean([f"{w.category.__name__}: {w.message}" for w in caught])
    finally:
        captured.seconds = round(time.perf_counter() - start, 3)
        for logger, level, propagate, handlers in saved:
            logger.removeHandler(handler)
            for old in handlers:
                logger.addHandler(old)
            logger.setLevel(level)
            logger.propagate = propagate
        captured.logs = _clean(handler.messages)


def error_dict(exc: BaseException | None) -> dict[str, str] | None:
    """The JSON form of an exception: its type name and message."""
    if exc is None:
        return None
    return {"type": type(exc).__name__, "message": str(exc)}


def set_dotted(root: object, path: str, value: JSON) -> None:
    """``set_dotted(trainer, "fit_loop.max_epochs", 2)`` assigns ``trainer.fit_loop.max_epochs``."""
    *parents, last = path.split(".")
    target = root
    for name in parents:
        target = getattr(target, name)
    setattr(target, last, value)


def id_ranges(ids: list[int]) -> str:
    """Compact text for a list of ids: ``[0, 1, 2, 5]`` -> ``'0-2,5'``.

    >>> id_ranges([30, 31, 32, 33, 7])
    '30-33,7'
    >>> id_ranges([])
    ''
    """
    parts: list[str] = []
    start = prev = None
    for i in ids:
        if start is not None and prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)
