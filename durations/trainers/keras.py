"""Keras 3 ``Model.fit`` (3.15.1, verified with the torch backend): durations and resumes, emulated.

A pure emulation of what a sequence of ``Model.fit`` calls trains, checked against real runs
(``tests/frameworks/observed.json``). It imports no framework. What it models:

- **Durations.** ``epochs`` is the index of the final epoch, not a count: the loop is
  ``for epoch in range(initial_epoch, epochs)``. There is no ``max_steps``; ``steps_per_epoch``
  cuts epochs short and then keeps the data iterator *across* epochs, re-creating it only when
  the data is exhausted. An epoch that reaches the end of the data stops early with the warning
  ``Your input ran out of data; interrupting training...``, but only that epoch stops: the next
  epoch starts on a new iterator and trains on.
- **Counters.** ``optimizer.iterations`` lives on the model's optimizer: it keeps counting across
  ``fit`` calls on the same model and is saved with the weights. Epoch indices exist only inside
  ``fit``: a second ``fit`` on the same model starts again at ``initial_epoch``.
- **Gradient accumulation** is an optimizer argument. The raw counter ``_iterations`` counts
  micro-batches; an update happens when it reaches a multiple of ``k``, and ``iterations`` reports
  ``_iterations // k``. Accumulation crosses epoch and ``fit`` boundaries; nothing is flushed.
- **BackupAndRestore.** It saves the weights (with the optimizer variables, so ``_iterations``)
  and ``{"epoch": e, "batch": b}``. On restore only ``epoch`` is read, into
  ``model._initial_epoch``: an epoch interrupted mid-way restarts from batch 0 with the
  mid-epoch weights and counter, and ``model._initial_epoch`` is never reset, so later plain
  ``fit`` calls on that model also start at that epoch. The epoch it writes comes from the
  callback's own count of finished epochs, which starts at 0 in every new callback.

``simulate`` reports positions in the data: with ``shuffle=True`` (Keras's default) a batch holds
the ids at those positions of the epoch's permutation, not the ids themselves.

>>> from durations.trainers import Dataset
>>> A = Dataset(samples=100)
>>> crashed, resumed = simulate([
...     Call(data=A, batch_size=10, epochs=2, shuffle=False, backup=True, save_freq=1,
...          crash_at=13),
...     Call(data=A, batch_size=10, epochs=2, shuffle=False, backup=True, save_freq=1),
... ])
>>> crashed.steps, crashed.crashed, resumed.steps, resumed.counters["iterations"]
(13, True, 10, 23)
>>> resumed.batches[0]  # epoch 1 restarts at batch 0: samples 0-29 are trained twice
(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from ..scenario import Scenario
from ..units import Unit
from ._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported
from ._script import steps_of

__all__ = ["RAN_OUT_OF_DATA", "RULES", "VERSION", "Call", "simulate"]

VERSION = "3.15.1"
"""The Keras version whose source the rules cite and whose runs the profile reproduces."""

RAN_OUT_OF_DATA = (
    "UserWarning: Your input ran out of data; interrupting training. "
    "Make sure that your dataset or generator can generate "
    "at least `steps_per_epoch * epochs` batches. "
    "You may need to use the `.repeat()` "
    "function when building your dataset."
)
"""The warning an epoch emits when ``steps_per_epoch`` reaches past the end of the data
(``keras/src/trainers/epoch_iterator.py:88``), with its category as Python prints it."""

_TORCH_TRAINER = "keras/src/backend/torch/trainer.py"
_EPOCH_ITERATOR = "keras/src/trainers/epoch_iterator.py"
_ARRAY_ADAPTER = "keras/src/trainers/data_adapters/array_data_adapter.py"
_OPTIMIZER = "keras/src/optimizers/base_optimizer.py"
_BACKUP = "keras/src/callbacks/backup_and_restore.py"

RULES: tuple[tuple[str, str], ...] = (
    (
        "`epochs` is the index of the final epoch, not a count: `fit` runs the epochs "
        "`range(initial_epoch, epochs)`, so `initial_epoch >= epochs` trains nothing.",
        f"{_TORCH_TRAINER}:253 (fit); docstring keras/src/trainers/trainer.py:598",
    ),
    (
        "The first epoch is `model._initial_epoch or initial_epoch`: a value set by a restore "
        "wins over the argument, except 0, which is falsy and falls back to it.",
        f"{_TORCH_TRAINER}:252 (fit)",
    ),
    (
        "A new model has `_initial_epoch = None`; only BackupAndRestore sets it and nothing "
        "resets it, so every later `fit` on a restored model starts at the restored epoch.",
        f"keras/src/trainers/trainer.py:28 (Trainer.__init__); {_BACKUP}:152 (_load_model)",
    ),
    (
        "Array data is cut into `ceil(samples / batch_size)` batches in order, the last one "
        "partial; `batch_size=None` means `ceil(samples / steps_per_epoch)` when "
        "`steps_per_epoch` is set and 32 otherwise.",
        f"{_ARRAY_ADAPTER}:87 (ArrayDataAdapter.__init__)",
    ),
    (
        "Every `fit` call builds a new epoch iterator, so a second `fit` on the same model "
        "reads the data from its first batch again.",
        f"{_TORCH_TRAINER}:222 (fit)",
    ),
    (
        "An epoch runs `steps_per_epoch or num_batches` steps. Without `steps_per_epoch` each "
        "epoch starts a new pass over the data.",
        f"{_EPOCH_ITERATOR}:107 (EpochIterator._enumerate_iterator)",
    ),
    (
        "With `steps_per_epoch` set, the data iterator is kept across the epochs of one `fit`; "
        "it is re-created only after all `num_batches` batches were read.",
        f"{_EPOCH_ITERATOR}:110 and :124 (EpochIterator._enumerate_iterator)",
    ),
    (
        "When the kept iterator has read all batches before the epoch's `steps_per_epoch` "
        "steps are done, the epoch stops with the warning 'Your input ran out of data; "
        "interrupting training...'; the next epoch goes on with a new iterator.",
        f"{_EPOCH_ITERATOR}:114 (EpochIterator._enumerate_iterator), :88 (the warning)",
    ),
    (
        "`optimizer._iterations` grows by one per batch and belongs to the model's optimizer: "
        "it keeps counting across `fit` calls on the same model.",
        f"{_OPTIMIZER}:533 (BaseOptimizer.apply)",
    ),
    (
        "`gradient_accumulation_steps=k` must be at least 2 when set; otherwise building the "
        "optimizer raises ValueError.",
        f"{_OPTIMIZER}:103 (BaseOptimizer.__init__)",
    ),
    (
        "With gradient accumulation k, a batch updates the weights when `(_iterations + 1) % k "
        "== 0`; accumulated micro-batches cross epoch and `fit` boundaries and are never flushed.",
        f"{_OPTIMIZER}:551 (BaseOptimizer._backend_apply_gradients)",
    ),
    (
        "With gradient accumulation k, `optimizer.iterations` reports `_iterations // k`, the "
        "number of updates; the raw `_iterations` counts micro-batches.",
        f"{_OPTIMIZER}:196 (BaseOptimizer.iterations)",
    ),
    (
        "BackupAndRestore saves the weights, which include the optimizer variables (the raw "
        "`_iterations` and the gradient accumulators), and the metadata "
        "`{epoch: finished epochs counted by this callback, batch: last batch index}`.",
        f"{_BACKUP}:164 (_save_model)",
    ),
    (
        "With an integer `save_freq` BackupAndRestore saves after every `save_freq` batches, "
        "counted across epochs; with 'epoch' it saves at each epoch end, with epoch + 1.",
        f"{_BACKUP}:192 (_should_save_on_batch), :154 (on_epoch_end)",
    ),
    (
        "A new BackupAndRestore counts finished epochs from 0, not from the restored epoch: a "
        "resumed run interrupted again before it finishes an epoch writes epoch 0, and the next "
        "restore then starts from `initial_epoch`.",
        f"{_BACKUP}:93 (__init__), :155 (on_epoch_end)",
    ),
    (
        "On restore (at train begin) BackupAndRestore loads the weights and the optimizer "
        "counter and reads only `epoch` from the metadata; `batch` is never read, so an "
        "interrupted epoch restarts from batch 0.",
        f"{_BACKUP}:113 (on_train_begin), :130 (_load_model)",
    ),
    (
        "BackupAndRestore deletes its backup when `fit` completes, unless "
        "`delete_checkpoint=False`; an interrupted `fit` never reaches that point.",
        f"{_BACKUP}:208 (on_train_end); {_TORCH_TRAINER}:324 (fit)",
    ),
)
"""Every rule the emulation applies: (the rule, where Keras ``VERSION`` implements it)."""


def _is_save_freq(
    instance: object, attribute: attrs.Attribute[int | Literal["epoch"]], value: object
) -> None:
    if value != "epoch" and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(
            f"invalid save_freq {value!r}: expected an integer number of batches or 'epoch'"
        )


@attrs.frozen(kw_only=True)
class Call:
    """One ``Model.fit`` call, in Keras's own vocabulary (defaults are Keras's).

    ``fresh`` builds and compiles a new model (a new process resuming from the backup on disk);
    ``fresh=False`` calls ``fit`` again on the previous call's model object.
    ``gradient_accumulation_steps`` is the optimizer's argument, so it only takes effect when a
    model is built (``fresh``, or the first call). ``backup`` adds a new
    ``BackupAndRestore(save_freq=..., delete_checkpoint=...)`` on the one backup directory all
    calls share. ``crash_at`` kills the call right after the batch whose end sees
    ``optimizer.iterations >= crash_at``, once the backup (if any) of that batch is written.
    """

    data: Dataset
    batch_size: int | None = None
    epochs: int = 1
    initial_epoch: int = 0
    steps_per_epoch: int | None = None
    shuffle: bool | Literal["batch"] = True
    gradient_accumulation_steps: int | None = None
    fresh: bool = True
    backup: bool = False
    save_freq: int | Literal["epoch"] = attrs.field(default="epoch", validator=_is_save_freq)
    delete_checkpoint: bool = True
    crash_at: int | None = None


@attrs.define
class _Model:
    """A compiled model: its optimizer's raw counter and ``_initial_epoch``."""

    accumulation: int | None
    raw_iterations: int = 0
    initial_epoch: int | None = None

    @property
    def iterations(self) -> int:
        if self.accumulation:
            return self.raw_iterations // self.accumulation
        return self.raw_iterations


@attrs.frozen
class _Backup:
    """What ``BackupAndRestore`` left on disk: the optimizer counter and the metadata."""

    raw_iterations: int
    epoch: int
    batch: int


@attrs.define
class _BackupCallback:
    """One ``BackupAndRestore`` instance's counters (``backup_and_restore.py:91-93``)."""

    save_freq: int | Literal["epoch"]
    batches_seen_since_last_saving: int = 0
    last_batch_seen: int = 0
    current_epoch: int = 0

    def should_save_on_batch(self, batch: int) -> bool:
        if self.save_freq == "epoch":
            return False
        # A batch index not above the last one seen starts a new epoch.
        new_epoch = batch <= self.last_batch_seen
        add_batches = batch + 1 if new_epoch else batch - self.last_batch_seen
        self.batches_seen_since_last_saving += add_batches
        self.last_batch_seen = batch
        if self.batches_seen_since_last_saving >= self.save_freq:
            self.batches_seen_since_last_saving = 0
            return True
        return False

    def save(self, model: _Model) -> _Backup:
        return _Backup(model.raw_iterations, self.current_epoch, self.last_batch_seen)


class _CrashError(Exception):
    """The simulated kill after a backup."""


@attrs.define
class _Run:
    """The state one ``fit`` call changes, and what it records."""

    model: _Model
    disk: _Backup | None
    callback: _BackupCallback | None
    crash_at: int | None
    steps: list[tuple[int, ...]] = attrs.Factory(list)
    pending: list[int] = attrs.Factory(list)
    messages: list[str] = attrs.Factory(list)
    epochs: list[int] = attrs.Factory(list)

    def warn(self, message: str) -> None:
        if message not in self.messages:
            self.messages.append(message)

    def train_batch(self, batch: int, ids: tuple[int, ...]) -> None:
        """Train one batch: the optimizer apply, then the batch-end callbacks in order."""
        before = self.model.iterations
        self.pending.extend(ids)
        self.model.raw_iterations += 1
        if self.model.iterations != before:
            self.steps.append(tuple(self.pending))
            self.pending = []
        if self.callback is not None and self.callback.should_save_on_batch(batch):
            self.disk = self.callback.save(self.model)
        if self.crash_at is not None and self.model.iterations >= self.crash_at:
            raise _CrashError

    def end_epoch(self, epoch: int) -> None:
        if self.callback is not None:
            self.callback.current_epoch = epoch + 1
            self.callback.last_batch_seen = 0
            if self.callback.save_freq == "epoch":
                self.disk = self.callback.save(self.model)


def _batch_size(call: Call) -> int:
    if call.batch_size:
        return call.batch_size
    if call.steps_per_epoch:
        return math.ceil(call.data.samples / call.steps_per_epoch)
    return 32


def _fit(call: Call, run: _Run) -> None:
    """``Model.fit`` from ``on_train_begin`` to the last epoch (``torch/trainer.py:251-313``)."""
    if run.callback is not None and run.disk is not None:  # BackupAndRestore._load_model
        run.model.raw_iterations = run.disk.raw_iterations
        run.model.initial_epoch = run.disk.epoch
    batch_size = _batch_size(call)
    samples = call.data.samples
    num_batches = math.ceil(samples / batch_size)
    # The epoch iterator: the position of the next batch in the current pass over the data.
    position: int | None = None
    for epoch in range(run.model.initial_epoch or call.initial_epoch, call.epochs):
        run.epochs.append(epoch)
        steps_per_epoch = call.steps_per_epoch or num_batches or -1
        if steps_per_epoch < 0:  # no known length: a new pass read until it runs out
            for step in range(num_batches):
                start = step * batch_size
                run.train_batch(step, call.data.ids(start, min(start + batch_size, samples)))
            run.warn(RAN_OUT_OF_DATA)
            run.end_epoch(epoch)
            continue
        if position is None or call.steps_per_epoch is None:
            position = 0
        for step in range(steps_per_epoch):
            if num_batches and position >= num_batches:
                if call.steps_per_epoch:
                    run.warn(RAN_OUT_OF_DATA)
                break
            start = position * batch_size
            position += 1
            run.train_batch(step, call.data.ids(start, min(start + batch_size, samples)))
        if num_batches and position >= num_batches:
            position = 0
        run.end_epoch(epoch)


def _counters(
    model: _Model | None, run: _Run | None, disk: _Backup | None, *, finished: bool
) -> dict[str, int | float | None]:
    epochs = run.epochs if run is not None else []
    return {
        "iterations": model.iterations if model is not None else None,
        "raw_iterations": model.raw_iterations if model is not None else None,
        "first_epoch": epochs[0] if epochs else None,
        "epochs_run": len(epochs),
        "history_epochs": len(epochs) if finished else None,
        "model_initial_epoch": model.initial_epoch if model is not None else None,
        "backup_epoch": disk.epoch if disk is not None else None,
        "backup_batch": disk.batch if disk is not None else None,
    }


def simulate(calls: Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as Keras would and report what each trains.

    ``batches`` holds the data positions of each optimizer update read in that call (all its
    micro-batches; the first update after a restore or a previous call also used gradients
    accumulated before, which are not listed). ``counters`` are, after the call:

    - ``iterations``, ``raw_iterations``: ``optimizer.iterations`` and ``optimizer._iterations``;
    - ``first_epoch``, ``epochs_run``: the first epoch index the call began (``None`` if none)
      and how many epochs it began (epoch indices are consecutive);
    - ``history_epochs``: the length of the returned ``History.epoch``, ``None`` if ``fit``
      raised or was killed;
    - ``model_initial_epoch``: ``model._initial_epoch``;
    - ``backup_epoch``, ``backup_batch``: the metadata of the backup on disk (``None`` if none).

    ``messages`` are the distinct warnings in the order first emitted (Python shows a warning
    once per place by default).
    """
    model: _Model | None = None
    disk: _Backup | None = None
    outcomes: list[CallOutcome] = []
    for call in calls:
        if call.fresh or model is None:
            accumulation = call.gradient_accumulation_steps
            if accumulation and not accumulation >= 2:  # base_optimizer.py:103-109
                error = TrainerError(
                    type="ValueError",
                    message="`gradient_accumulation_steps` must be an integer >= 2. "
                    f"Received: gradient_accumulation_steps={accumulation}",
                )
                outcomes.append(
                    CallOutcome(
                        steps=0,
                        batches=(),
                        counters=_counters(model, None, disk, finished=False),
                        error=error,
                    )
                )
                continue
            model = _Model(accumulation)
        callback = _BackupCallback(call.save_freq) if call.backup else None
        run = _Run(model, disk, callback, call.crash_at)
        crashed = False
        try:
            _fit(call, run)
        except _CrashError:
            crashed = True
        disk = run.disk
        if not crashed and call.backup and call.delete_checkpoint:  # on_train_end
            disk = None
        outcomes.append(
            CallOutcome(
                steps=len(run.steps),
                batches=tuple(run.steps),
                counters=_counters(model, run, disk, finished=not crashed),
                messages=tuple(run.messages),
                crashed=crashed,
            )
        )
    return tuple(outcomes)


# -- writing a durations scenario in Keras's idiom ------------------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Keras user writes it: one model, one ``fit`` per call with a
    ``BackupAndRestore(save_freq=1)``, the data read in order, and the length as whole
    ``epochs``, or ``epochs=1, steps_per_epoch=n`` for a part of an epoch (steps; samples and
    tokens converted at the call's batch size). Re-running after a crash is the same script on a
    new model: the backup restores it.
    """
    calls: list[Call] = []
    notes: list[str] = []
    for step in steps_of(scenario, data, "Keras"):
        if step.kind == "until" and step.index > 0:
            raise Unsupported(
                "Keras counts each fit's epochs from 0; an absolute until= has no equivalent "
                f"after the first call (call #{step.index})"
            )
        per_epoch = step.steps_per_epoch()
        steps_per_epoch: int | None = None
        if step.request.unit is Unit.EP and step.request.value == int(step.request.value):
            epochs = int(step.request.value)
        else:
            steps = step.steps()
            if steps <= per_epoch:
                epochs, steps_per_epoch = 1, steps
            elif steps % per_epoch == 0:
                epochs = steps // per_epoch
            else:
                raise Unsupported(
                    "Keras trains whole epochs, or part of one with steps_per_epoch; "
                    f"{step.request} ({steps} steps of {per_epoch} an epoch) is neither"
                )
        calls.append(
            Call(
                data=step.data,
                batch_size=step.batch_size,
                epochs=epochs,
                steps_per_epoch=steps_per_epoch,
                shuffle=False,
                fresh=step.index == 0,
                backup=True,
                save_freq=1,
            )
        )
        extra = "" if steps_per_epoch is None else f", steps_per_epoch={steps_per_epoch}"
        notes.append(f"fit(epochs={epochs}{extra}, callbacks=[BackupAndRestore(save_freq=1)])")
    rerun = tuple(calls)
    return Translation(calls=tuple(calls), rerun=rerun, notes=tuple(notes))
