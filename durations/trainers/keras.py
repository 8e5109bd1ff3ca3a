"""Keras 3 ``Model.fit`` (3.15.1, verified with the torch backend): durations and resumes, emulated.

A pure emulation of what a sequence of ``Model.fit`` calls trains, checked against real runs
(``tests/frameworks/observed.json``). It imports no framework. What it models:

- **Durations.** ``epochs`` is the index of the final epoch, not a count: the loop is
  ``for epoch in range(initial_epoch, epochs)``, so a float ``epochs``, even ``2.0``, raises a
  ``TypeError`` before any step. There is no ``max_steps``; ``steps_per_epoch``
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
- **Learning rates.** The optimizer's ``learning_rate`` is a float, which is an optimizer
  variable, or a schedule (:class:`CosineDecay`, :class:`PolynomialDecay`), which Keras calls with
  the raw ``_iterations`` as each update is applied: the update taken after ``n`` batches uses
  ``schedule(n)``, and with gradient accumulation ``n`` counts micro-batches. The schedule is built
  with the optimizer, so it is one curve over every ``fit`` on a model, and a re-run's new model
  evaluates it at the restored counter: the steps a crash loses are trained again at the rates
  they had, and the steps an epoch restarted at batch 0 adds go on along the curve (at its end
  value past its end). A float ``learning_rate`` is saved with the backup and restored over the
  re-run's own.

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
>>> tuple(resumed.batches[0])  # epoch 1 restarts at batch 0: samples 0-29 are trained twice
(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)

A kill as step 11 starts comes after epoch 0's end, whose backup the re-run resumes from:

>>> crashed, resumed = simulate([
...     Call(data=A, batch_size=10, epochs=2, shuffle=False, backup=True, crash_at=10),
...     Call(data=A, batch_size=10, epochs=2, shuffle=False, backup=True),
... ])
>>> crashed.counters["backup_epoch"], resumed.counters["first_epoch"], resumed.steps
(1, 1, 10)
>>> simulate([Call(data=A, epochs=1.5)])[0].error
TrainerError(type='TypeError', message="'float' object cannot be interpreted as an integer")

A warmup and cosine schedule across a kill as step 14 starts, with the epoch-end backups: the
re-run restores the counter of step 10, so its restarted epoch trains steps 11 to 13 again at
the rates they had, then goes on along the curve:

>>> curve = CosineDecay(
...     initial_learning_rate=0.0, decay_steps=18, alpha=0.1, warmup_target=1.0, warmup_steps=2
... )
>>> crashed, resumed = simulate([
...     Call(data=A, batch_size=10, epochs=2, backup=True, crash_at=13, learning_rate=curve),
...     Call(data=A, batch_size=10, epochs=2, backup=True, learning_rate=curve),
... ])
>>> [round(rate, 4) for rate in crashed.rates[:3]]
[0.0, 0.5, 1.0]
>>> [round(rate, 4) for rate in crashed.rates[10:]], [round(rate, 4) for rate in resumed.rates[:4]]
([0.6281, 0.55, 0.4719], [0.6281, 0.55, 0.4719, 0.3961])

Keras computes a schedule in ``floatx``, float32 unless set: the profile computes in float64,
as Keras does with ``floatx`` "float64"; under float32 Keras's rates differ from these by its
rounding (less than 1e-6 of the rate in the recorded runs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from ..planner import plan
from ..scenario import Scenario
from ..units import Unit
from ._outcome import CallOutcome, Dataset, Ids, TrainerError, Translation, Unsupported, joined
from ._script import Shape, shapes, steps_of

__all__ = [
    "RAN_OUT_OF_DATA",
    "RULES",
    "VERSION",
    "Call",
    "CosineDecay",
    "PolynomialDecay",
    "simulate",
]

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
_SCHEDULES = "keras/src/optimizers/schedules/learning_rate_schedule.py"

RULES: tuple[tuple[str, str], ...] = (
    (
        "`epochs` is the index of the final epoch, not a count: `fit` runs the epochs "
        "`range(initial_epoch, epochs)`, so `initial_epoch >= epochs` trains nothing.",
        f"{_TORCH_TRAINER}:253 (fit); docstring keras/src/trainers/trainer.py:598",
    ),
    (
        "`fit` passes `epochs` to `range` unchecked, after `on_train_begin` (so after "
        "BackupAndRestore's restore): a float, even 2.0, raises TypeError \"'float' object "
        'cannot be interpreted as an integer" before the first epoch begins, and the backup is '
        "kept, as `on_train_end` is never reached.",
        f"{_TORCH_TRAINER}:251 (on_train_begin), :253 (range)",
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
        "Each batch runs `on_train_batch_begin`, the train step, then `on_train_batch_end`; an "
        "epoch's `on_epoch_end` follows its last batch and precedes the next epoch's "
        "`on_epoch_begin`, and `on_train_end` follows the last epoch.",
        f"{_TORCH_TRAINER}:265 (batch begin), :270 (batch end), :310 (epoch end), :324 (fit)",
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
        "With gradient accumulation k every micro-batch is a batch with its own callbacks, and "
        "an update's first micro-batch is the one that finds `_iterations` at a multiple of k, "
        "which a restored `_iterations` need not be.",
        f"{_OPTIMIZER}:551 (BaseOptimizer._backend_apply_gradients); {_TORCH_TRAINER}:265",
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
    (
        "A schedule given as the optimizer's `learning_rate` is called with the raw "
        "`_iterations` whenever the learning rate is read, and an update reads it before "
        "`_iterations` grows: the update taken after n batches uses `schedule(n)`.",
        f"{_OPTIMIZER}:781 (_get_current_learning_rate), :593 (the update), :533 (the count)",
    ),
    (
        "With gradient accumulation k the schedule still reads the raw `_iterations`, which "
        "counts micro-batches: the update of micro-batches u*k to u*k + k - 1 uses "
        "`schedule(u*k + k - 1)`, so a schedule's steps are micro-batches.",
        f"{_OPTIMIZER}:575 (the accumulated update), :781; the docstring at :1176",
    ),
    (
        "`CosineDecay` with a `warmup_target` goes linearly from `initial_learning_rate` to "
        "`warmup_target` over `warmup_steps`, then along a cosine to `warmup_target * alpha` over "
        "`decay_steps`, the step capped at their sum; without one it is the cosine from "
        "`initial_learning_rate`, the step capped at `decay_steps`.",
        f"{_SCHEDULES}:713 (CosineDecay.__call__), :736 and :723 (the caps)",
    ),
    (
        "`PolynomialDecay` (without `cycle`) goes from `initial_learning_rate` to "
        "`end_learning_rate` as `(1 - step / decay_steps) ** power`, the step capped at "
        "`decay_steps`.",
        f"{_SCHEDULES}:411 (PolynomialDecay.__call__), :436 (the cap)",
    ),
    (
        "A schedule is an attribute of the optimizer built with the model, not a variable: it "
        "is one curve over every `fit` on the model, is neither saved nor restored, and a "
        "re-run's new model evaluates its own schedule at the restored `_iterations`.",
        f"{_OPTIMIZER}:172 (BaseOptimizer.__init__); {_BACKUP}:146 (_load_model)",
    ),
    (
        "A float `learning_rate` is an optimizer variable: BackupAndRestore saves it with the "
        "weights, and a restore overwrites the new optimizer's learning rate with it.",
        f"{_OPTIMIZER}:185 and :192 (BaseOptimizer.__init__); {_BACKUP}:146 (_load_model)",
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


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value <= 0:  # learning_rate_schedule.py:398 and :687
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={value}")


@attrs.frozen(kw_only=True)
class CosineDecay:
    """``keras.optimizers.schedules.CosineDecay``: with a ``warmup_target``, a linear warmup from
    ``initial_learning_rate`` over ``warmup_steps``, then a cosine from ``warmup_target`` to
    ``warmup_target * alpha`` over ``decay_steps``; without one, the cosine from
    ``initial_learning_rate``. Past its end it stays at its last value.

    >>> curve = CosineDecay(
    ...     initial_learning_rate=0.0, decay_steps=4, alpha=0.1, warmup_target=2.0, warmup_steps=2
    ... )
    >>> [round(curve(step), 6) for step in range(8)]
    [0.0, 1.0, 2.0, 1.736396, 1.1, 0.463604, 0.2, 0.2]
    """

    initial_learning_rate: float
    decay_steps: int = attrs.field(validator=_positive)
    alpha: float = 0.0
    warmup_target: float | None = None
    warmup_steps: int = 0

    def __call__(self, step: int) -> float:
        """The learning rate at ``step``, in Keras's order of operations
        (``learning_rate_schedule.py:713``), in float64."""
        initial = float(self.initial_learning_rate)
        decay_steps = float(self.decay_steps)
        at = float(step)
        if self.warmup_target is None:
            return self._decayed(min(at, decay_steps), decay_steps, initial)
        target, warmup = float(self.warmup_target), float(self.warmup_steps)
        at = min(at, decay_steps + warmup)
        if at < warmup:
            return (target - initial) * (at / warmup) + initial
        return self._decayed(at - warmup, decay_steps, target)

    def _decayed(self, at: float, decay_steps: float, start: float) -> float:
        cosine = 0.5 * (1.0 + math.cos(math.pi * (at / decay_steps)))
        return start * ((1 - self.alpha) * cosine + self.alpha)


@attrs.frozen(kw_only=True)
class PolynomialDecay:
    """``keras.optimizers.schedules.PolynomialDecay`` (without ``cycle``): from
    ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps``, linear with
    ``power=1.0``, then at ``end_learning_rate``.

    >>> line = PolynomialDecay(initial_learning_rate=1.0, decay_steps=4, end_learning_rate=0.2)
    >>> [round(line(step), 6) for step in range(6)]
    [1.0, 0.8, 0.6, 0.4, 0.2, 0.2]
    """

    initial_learning_rate: float
    decay_steps: int = attrs.field(validator=_positive)
    end_learning_rate: float = 0.0001
    power: float = 1.0

    def __call__(self, step: int) -> float:
        """The learning rate at ``step``, in Keras's order of operations
        (``learning_rate_schedule.py:411``), in float64."""
        decay_steps = float(self.decay_steps)
        done = min(float(step), decay_steps) / decay_steps
        start, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        return float((start - end) * (1 - done) ** self.power + end)


LearningRate = float | CosineDecay | PolynomialDecay
"""What a Keras optimizer takes as ``learning_rate``, as far as the profile models it."""


@attrs.frozen(kw_only=True)
class Call:
    """One ``Model.fit`` call, in Keras's own vocabulary (defaults are Keras's).

    ``fresh`` builds and compiles a new model (a new process resuming from the backup on disk);
    ``fresh=False`` calls ``fit`` again on the previous call's model object.
    ``gradient_accumulation_steps`` is the optimizer's argument, so it only takes effect when a
    model is built (``fresh``, or the first call). ``backup`` adds a new
    ``BackupAndRestore(save_freq=..., delete_checkpoint=...)`` on the one backup directory all
    calls share. ``epochs`` takes what ``fit`` takes: an int, or a float, which Keras refuses
    with a ``TypeError`` once the call has begun (see :data:`RULES`). ``learning_rate`` is the
    optimizer's: a float, or Keras's built-in schedule for a warmup then a cosine
    (:class:`CosineDecay`) or for a linear decay (:class:`PolynomialDecay` with ``power=1.0``).
    Like the accumulation steps it takes effect where a model is built; ``None`` leaves the
    learning rate out (the outcomes then have no ``rates``).

    ``crash_at = k`` kills the process, as SIGKILL would, at the moment Keras is about to start
    an optimizer step while ``optimizer.iterations >= k``: in ``on_train_batch_begin`` of the
    step's first micro-batch (with gradient accumulation, the batch that finds the raw
    ``_iterations`` at a multiple of the accumulation steps). Everything Keras does after step
    k and before the next step has happened: BackupAndRestore's saves at batch ends (every
    ``save_freq`` batches, so not necessarily at step k) and at an epoch's end, the epoch's
    end and the next epoch's begin. Nothing of the next step has (no batch read, no counter
    moved). A call that ends without starting another step is not killed (its
    ``on_train_end`` deletes the backup), and a call that starts with ``optimizer.iterations
    >= k`` is killed before its first step. The re-run resumes from the backup on disk, so
    the steps after it are lost and trained again.
    """

    data: Dataset
    batch_size: int | None = None
    epochs: int | float = 1
    initial_epoch: int = 0
    steps_per_epoch: int | None = None
    shuffle: bool | Literal["batch"] = True
    gradient_accumulation_steps: int | None = None
    fresh: bool = True
    backup: bool = False
    save_freq: int | Literal["epoch"] = attrs.field(default="epoch", validator=_is_save_freq)
    delete_checkpoint: bool = True
    crash_at: int | None = None
    learning_rate: LearningRate | None = None


@attrs.define
class _Model:
    """A compiled model: its optimizer's raw counter, learning rate and ``_initial_epoch``."""

    accumulation: int | None
    learning_rate: LearningRate | None = None
    raw_iterations: int = 0
    initial_epoch: int | None = None

    def rate(self) -> float | None:
        """The learning rate an update applied now uses: a schedule's value at the raw
        counter, which the update increments only after it (``base_optimizer.py:777``)."""
        if isinstance(self.learning_rate, (CosineDecay, PolynomialDecay)):
            return self.learning_rate(self.raw_iterations)
        return self.learning_rate

    @property
    def iterations(self) -> int:
        if self.accumulation:
            return self.raw_iterations // self.accumulation
        return self.raw_iterations

    @property
    def starts_step(self) -> bool:
        """Whether the next batch is the first micro-batch of an optimizer step."""
        return self.raw_iterations % (self.accumulation or 1) == 0


@attrs.frozen
class _Backup:
    """What ``BackupAndRestore`` left on disk: the optimizer counter, the learning rate when it
    is a variable (a float), and the metadata."""

    raw_iterations: int
    epoch: int
    batch: int
    learning_rate: float | None


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
        rate = model.learning_rate if isinstance(model.learning_rate, float) else None
        return _Backup(model.raw_iterations, self.current_epoch, self.last_batch_seen, rate)


class _CrashError(Exception):
    """The simulated kill, as the next optimizer step starts."""


class _FitError(Exception):
    """An exception ``fit`` raises: it ends the call, without ``on_train_end``."""

    def __init__(self, error: TrainerError) -> None:
        super().__init__(error.message)
        self.error = error


@attrs.define
class _Run:
    """The state one ``fit`` call changes, and what it records."""

    model: _Model
    disk: _Backup | None
    callback: _BackupCallback | None
    crash_at: int | None
    steps: list[Ids] = attrs.Factory(list)
    pending: list[Ids] = attrs.Factory(list)
    messages: list[str] = attrs.Factory(list)
    epochs: list[int] = attrs.Factory(list)
    rates: list[float] = attrs.Factory(list)

    def warn(self, message: str) -> None:
        if message not in self.messages:
            self.messages.append(message)

    def train_batch(self, batch: int, ids: Ids) -> None:
        """Train one batch: the kill if it starts a step at ``crash_at``, the optimizer apply,
        then the batch-end callbacks in order."""
        crash_at, model = self.crash_at, self.model
        if crash_at is not None and model.starts_step and model.iterations >= crash_at:
            raise _CrashError
        before = self.model.iterations
        rate = self.model.rate()  # read as the update is applied, before the count grows
        self.pending.append(ids)
        self.model.raw_iterations += 1
        if self.model.iterations != before:
            self.steps.append(joined(self.pending))
            self.pending = []
            if rate is not None:
                self.rates.append(rate)
        if self.callback is not None and self.callback.should_save_on_batch(batch):
            self.disk = self.callback.save(self.model)

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
        if run.disk.learning_rate is not None and isinstance(run.model.learning_rate, float):
            run.model.learning_rate = run.disk.learning_rate
    first = run.model.initial_epoch or call.initial_epoch
    if not isinstance(call.epochs, int):  # range(initial_epoch, epochs) takes only integers
        message = f"'{type(call.epochs).__name__}' object cannot be interpreted as an integer"
        raise _FitError(TrainerError(type="TypeError", message=message))
    batch_size = _batch_size(call)
    samples = call.data.samples
    num_batches = math.ceil(samples / batch_size)
    # The epoch iterator: the position of the next batch in the current pass over the data.
    position: int | None = None
    for epoch in range(first, call.epochs):
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
    once per place by default). ``rates`` are the learning rates of the call's updates, the
    values Keras computes (a schedule's numbers are the rates themselves; :func:`translate`
    writes a schedule for a base learning rate of 1, so there they are factors of the base),
    when the model has a ``learning_rate``.
    """
    model: _Model | None = None
    disk: _Backup | None = None
    outcomes: list[CallOutcome] = []
    for call in calls:
        error: TrainerError | None = None
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
            model = _Model(accumulation, call.learning_rate)
        callback = _BackupCallback(call.save_freq) if call.backup else None
        run = _Run(model, disk, callback, call.crash_at)
        crashed = False
        try:
            _fit(call, run)
        except _CrashError:
            crashed = True
        except _FitError as raised:
            error = raised.error
        disk = run.disk
        finished = not crashed and error is None
        if finished and call.backup and call.delete_checkpoint:  # on_train_end
            disk = None
        outcomes.append(
            CallOutcome(
                steps=len(run.steps),
                batches=tuple(run.steps),
                counters=_counters(model, run, disk, finished=finished),
                messages=tuple(run.messages),
                error=error,
                crashed=crashed,
                rates=tuple(run.rates),
            )
        )
    return tuple(outcomes)


# -- writing a durations scenario in Keras's idiom ------------------------------------------------


def _learning_rate(scenario: Scenario) -> tuple[LearningRate | None, str]:
    """The optimizer's ``learning_rate`` for the scenario's schedule (a base learning rate of
    1), and how it was written or why it could not be."""
    if scenario.schedule is None:
        return None, ""
    try:
        (shape,) = shapes(scenario, plan(scenario.config, scenario.calls), per="run")
    except Unsupported as why:
        return None, f"cannot be written: {why}"
    rate = _written(shape)
    if isinstance(rate, str):
        return None, f"cannot be written: {rate}"
    return rate, (
        f"the optimizer's learning_rate={rate!r}, built with the model: one curve over every "
        "fit on it"
    )


def _written(shape: Shape) -> LearningRate | str:
    """The run's curve in Keras's built-in schedules, or why none takes it."""
    peak = float(shape.peak)
    alpha = 1.0 if shape.decay == "constant" else float(shape.floor_ratio)
    if shape.warmup:  # only CosineDecay warms up; alpha 1 holds the peak after it
        if shape.decay == "linear":
            return (
                f"a warmup over {shape.warmup} steps then a linear decay: Keras's built-in "
                "schedules warm up only in CosineDecay (PolynomialDecay has no warmup)"
            )
        return CosineDecay(
            initial_learning_rate=0.0,
            decay_steps=max(shape.steps - shape.warmup, 1),
            alpha=alpha,
            warmup_target=peak,
            warmup_steps=shape.warmup,
        )
    if shape.decay == "linear":
        return PolynomialDecay(
            initial_learning_rate=peak,
            decay_steps=max(shape.steps, 1),
            end_learning_rate=float(shape.floor),
            power=1.0,
        )
    if shape.decay == "cosine":
        return CosineDecay(initial_learning_rate=peak, decay_steps=max(shape.steps, 1), alpha=alpha)
    return peak


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Keras user writes it: one model, one ``fit`` per call with a
    ``BackupAndRestore(save_freq=1)``, the data read in order, and the length as whole
    ``epochs``, or ``epochs=1, steps_per_epoch=n`` for a part of an epoch (steps; samples and
    tokens converted at the call's batch size). ``epochs`` is always an int, since Keras refuses
    a float one (even ``2.0``) with a TypeError. Re-running after a crash is the same script on a
    new model: the backup restores it.

    The scenario's schedule is the optimizer's ``learning_rate``, for a base learning rate of 1,
    built once with the model, so it is one curve over the whole run (its steps counted by
    ``optimizer.iterations``): a warmup then a cosine or a constant is a ``CosineDecay``
    (``alpha=1.0`` for a constant), a linear decay a ``PolynomialDecay``, a cosine a
    ``CosineDecay``, a constant a float; anything else cannot be written, and leaves the
    learning rate out.
    """
    learning_rate, schedule = _learning_rate(scenario)
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
            if steps == 0:  # steps_per_epoch=0 is falsy: Keras would read a whole epoch
                epochs = 0
            elif steps <= per_epoch:
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
                learning_rate=learning_rate,
            )
        )
        extra = "" if steps_per_epoch is None else f", steps_per_epoch={steps_per_epoch}"
        notes.append(f"fit(epochs={epochs}{extra}, callbacks=[BackupAndRestore(save_freq=1)])")
    rerun = tuple(calls)
    return Translation(calls=tuple(calls), rerun=rerun, notes=tuple(notes), schedule=schedule)
