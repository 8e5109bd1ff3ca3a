"""Reading checkpoints from disk: ``durations`` JSON, and what other trainers write.

This is a shell around the pure core: it does I/O and nothing else. A trainer's own checkpoint
has no ledger; it becomes a ``durations`` checkpoint once it is located in a script's plan
(:meth:`ExternalState.locate`).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs

from ._files import (
    LEDGER_FILE,
    MAX_FILE_BYTES,
    checkpoint_json,
    ledger_checkpoint,
    read_text,
)
from .checkpoint import Checkpoint
from .errors import CheckpointFormatError, shown_value
from .plans import Plan
from .progress import Progress

__all__ = ["LEDGER_FILE", "MAX_FILE_BYTES", "ExternalState", "read_checkpoint", "read_text"]


@attrs.frozen(kw_only=True)
class ExternalState:
    """What another trainer's checkpoint says about progress.

    ``global_step`` is its optimizer-step counter; ``details`` holds the other fields read, for
    people (limits, batch size as the trainer records it).
    """

    trainer: str
    path: str
    global_step: int
    epoch: Fraction | None
    details: dict[str, Any]

    def locate(self, fresh: Plan) -> Checkpoint:
        """The ledger-less checkpoint at this step of ``fresh``, the script's own plan.

        No loader state is recorded by these trainers, so ``loader_state`` is ``False``. When
        the epoch this trainer recorded cannot be the epoch of that step (``Progress.
        counts_as_epoch``: the checkpoint was written at another geometry), the position is the
        counters as recorded instead, which the planner refuses (``checkpoint-mislocated``,
        ``docs/semantics.md`` rule 10).
        """
        step = min(self.global_step, fresh.total_steps)
        located = fresh.progress_at(step)
        if self.epoch is None:
            return Checkpoint(progress=located, ledger=None, loader_state=False)
        epoch = math.floor(self.epoch)
        inside = self.epoch != epoch  # Hugging Face's epoch counts the steps into the epoch
        past = self.global_step > fresh.total_steps and epoch >= located.epoch
        if past or located.counts_as_epoch(epoch, inside=inside):
            return Checkpoint(progress=located, ledger=None, loader_state=False)
        # The counters as recorded, inside the epoch where they say so: the planner refuses.
        recorded = Progress(
            epoch=epoch,
            batch=self.global_step,
            sample=self.global_step,
            batch_in_epoch=int(inside),
            sample_in_epoch=int(inside),
            token=None,
            token_in_epoch=None,
        )
        return Checkpoint(progress=recorded, ledger=None, loader_state=False)


def read_checkpoint(path: str | Path) -> Checkpoint | ExternalState:
    """Read the checkpoint at ``path``.

    Accepted: a ``durations`` checkpoint JSON file; a Hugging Face checkpoint directory
    (``checkpoint-N/``) or its ``trainer_state.json``; a Keras ``step-N`` folder of the Keras
    integration; a Lightning ``.ckpt`` or Composer ``.pt`` file (these need torch:
    ``durations.integrations.checkpoints`` loads them with ``weights_only=True``). Wherever the
    integrations wrote the ledger (:data:`LEDGER_FILE` in the folder, or beside the
    ``trainer_state.json``; the ``durations`` key of a torch file) it is read, exactly: the
    trainer's own counters are read only where there is none. JSON is read with
    :func:`read_text`: a regular file of at most :data:`MAX_FILE_BYTES`. Raises ``OSError`` when
    the path cannot be read and :class:`~durations.CheckpointFormatError` when its content is not
    a checkpoint.
    """
    path = Path(path)
    if path.suffix in (".ckpt", ".pt") and path.is_file():
        return _read_torch(path)
    if path.is_dir():
        ledger = path / LEDGER_FILE
        if os.path.lexists(ledger):
            return _read_ledger(ledger)
        state = path / "trainer_state.json"
        if os.path.lexists(state):  # read_text refuses what is not a regular file
            return _read_transformers(state)
        raise CheckpointFormatError(
            "",
            f"{path} is a directory without {LEDGER_FILE} or trainer_state.json; expected a "
            "durations checkpoint file, a Hugging Face checkpoint directory (or its "
            "trainer_state.json), or a Keras step-N folder of the Keras integration",
        )
    data = _read_json(path)
    if isinstance(data, dict) and "global_step" in data and "format" not in data:
        beside = path.parent / LEDGER_FILE
        if path.name == "trainer_state.json" and os.path.lexists(beside):
            return _read_ledger(beside)
        return _read_transformers(path, data)
    return Checkpoint.from_dict(data)


def _read_ledger(path: Path) -> Checkpoint:
    """The durations checkpoint an integration wrote beside a trainer's own, at ``path``; its
    errors name that file."""
    return ledger_checkpoint(_read_json(path), path)


def _read_torch(path: Path) -> Checkpoint | ExternalState:
    """A Lightning or Composer file: its durations checkpoint when it carries one (written by
    the integrations), else what its counters say, to be located in the script's plan."""
    try:
        from .integrations import checkpoints
    except ImportError as error:  # pragma: no cover - the module itself imports no framework
        raise CheckpointFormatError("", str(error)) from None
    trainer = "lightning" if path.suffix == ".ckpt" else "composer"
    read = (
        checkpoints.read_lightning_checkpoint
        if trainer == "lightning"
        else checkpoints.read_composer_checkpoint
    )
    try:
        found = read(path)
    except ImportError as error:
        raise CheckpointFormatError(
            "",
            f"reading {path} needs torch: pip install 'training-durations[frameworks]' ({error})",
        ) from None
    if found.ledger is not None:
        return found
    return ExternalState(
        trainer=trainer,
        path=str(path),
        global_step=found.progress.batch,
        epoch=Fraction(found.progress.epoch),
        details={},
    )


def _read_json(path: Path) -> Any:
    return checkpoint_json(read_text(path), path)


def _read_transformers(path: Path, data: Any = None) -> ExternalState:
    """A Hugging Face ``trainer_state.json``: ``global_step``, float ``epoch``, and limits."""
    if data is None:
        data = _read_json(path)
    if not isinstance(data, dict):
        raise CheckpointFormatError("", f"{path}: expected a JSON object")
    step = data.get("global_step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise CheckpointFormatError(
            "global_step", f"{path}: expected a whole number, got {shown_value(step)}"
        )
    epoch = data.get("epoch")
    if epoch is not None and (
        isinstance(epoch, bool)
        or not isinstance(epoch, int | float)
        or (isinstance(epoch, float) and not math.isfinite(epoch))
    ):
        raise CheckpointFormatError(
            "epoch", f"{path}: expected a finite number, got {shown_value(epoch)}"
        )
    keys = ("max_steps", "num_train_epochs", "train_batch_size", "save_steps")
    details = {key: data[key] for key in keys if key in data}
    return ExternalState(
        trainer="transformers",
        path=str(path),
        global_step=step,
        # HF writes a float; its shortest repr is what it meant (1.3, not 1.29999...).
        epoch=None if epoch is None else Fraction(epoch if isinstance(epoch, int) else repr(epoch)),
        details=details,
    )
