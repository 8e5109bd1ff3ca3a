"""The PyTorch Lightning profile: what ``Trainer.fit`` (2.6.6) does with durations and resumes.

A pure emulation: nothing here imports Lightning, torch or torchdata. :func:`simulate` runs a
sequence of :class:`Call` s the way a script would call ``Trainer(...)`` and ``trainer.fit(model,
loader, ckpt_path=...)``, and reports for each call what it trains (the sample ids of every
optimizer step), the trainer's counters afterwards, the messages Lightning prints about durations
and resumes, and the exception it raises.

What is modelled, and how:

- **The loop state on the Trainer object.** Lightning keeps its progress in counters
  (``epoch_progress``, ``epoch_loop.batch_progress``, the optimizer step count that is
  ``global_step``), each with ``ready``/``started``/``processed``/``completed`` fields that hooks
  increment in a fixed order. The emulation keeps the same counters and increments them in the same
  order as ``_FitLoop`` and ``_TrainingEpochLoop``, including the restart bookkeeping
  (``restarting``, the restart stages, ``reset_on_restart``/``reset_on_run``). A second ``fit`` on
  the same Trainer starts from whatever the first left behind.
- **Checkpoints.** A ``ModelCheckpoint(every_n_train_steps=k)`` saves in ``on_train_batch_end``,
  after ``processed`` and before ``completed`` is incremented; ``trainer.save_checkpoint`` after
  ``fit`` saves the final counters. A checkpoint stores ``epoch`` (= ``current_epoch``),
  ``global_step``, both progress trackers and, for a ``StatefulDataLoader``, the loader's sample
  position. A fresh Trainer given ``ckpt_path`` restores exactly these.
- **Data.** A map-style data set read in order by a ``DataLoader`` (``drop_last=False``) or a
  torchdata ``StatefulDataLoader``. A plain loader always starts an iterator at sample 0; a
  stateful one restored from a checkpoint continues at the saved *sample* position, whatever the
  new batch size. Lightning counts the epoch in batches (``batch_progress``), the loader in
  samples; the emulation keeps both, so it reproduces where they disagree.
- **Data parallelism.** ``strategy="ddp"`` on ``world_size`` processes: Lightning replaces the
  loader's sampler by a ``DistributedSampler`` that always shuffles (seed ``PL_GLOBAL_SEED +
  epoch``, through the :class:`Dataset`'s ``orders``), or keeps the user's own
  ``DistributedSampler(shuffle=False)`` under ``use_distributed_sampler=False``. Either pads
  the epoch to a multiple of ``world_size`` samples by reading its start again and deals it to
  the ranks sample by sample. A step's ids in :class:`CallOutcome` are the union over the
  ranks, in the order of the padded sequence: rank ``r``'s ids are every ``world_size``-th id
  from the ``r``-th. Every rank runs the same loops on batches of the same count, so the
  counters are every rank's.
- **Not modelled:** validation, early stopping and ``min_epochs``/``min_steps``, ``max_time``,
  iterable data sets, several loaders, a ``StatefulDataLoader`` under DDP,
  ``reload_dataloaders_every_n_epochs``, ``fast_dev_run``/``overfit_batches``, and shuffling on
  one process without DDP (a shuffled loader reads the same positions of a permutation).

:data:`RULES` lists every rule the emulation applies, each with the Lightning source it follows;
the profile is checked against real runs in ``tests/frameworks/test_profile_lightning.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, Literal

import attrs

from ..planner import plan as make_plan
from ..scenario import Scenario
from ..units import Unit
from ._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported
from ._script import steps_of

__all__ = ["RULES", "VERSION", "Call", "simulate"]

VERSION = "2.6.6"
"""The ``pytorch_lightning`` version this profile was written from and checked against."""

LoaderKind = Literal["plain", "stateful"]
Strategy = Literal["auto", "ddp"]

_PL = "pytorch_lightning"

RULES: tuple[tuple[str, str], ...] = (
    (
        "Values of `max_epochs` and `max_steps` below -1 raise MisconfigurationException when "
        "the Trainer is built; `max_epochs=0` is allowed and trains nothing.",
        f"{_PL}/loops/fit_loop.py:94 (_FitLoop.__init__), "
        f"{_PL}/loops/training_epoch_loop.py:75 (_TrainingEpochLoop.__init__)",
    ),
    (
        "A `limit_train_batches` of None means 1.0; an int 1 and a float 1.0 each log which "
        "meaning was chosen; a value in [0, 1] is kept, an integral value above 1 becomes an int, "
        "anything else raises MisconfigurationException.",
        f"{_PL}/trainer/setup.py:100 (_determine_batch_limits)",
    ),
    (
        "At every fit, an unset `max_epochs` becomes 1000 with a PossibleUserWarning when "
        "`max_steps == -1`, and -1 (no epoch limit) otherwise. Once resolved it stays on the "
        "Trainer, so a second fit does not warn again.",
        f"{_PL}/loops/utilities.py:50 (_parse_loop_limits), {_PL}/trainer/trainer.py:1004 "
        "(Trainer._run)",
    ),
    (
        "Batches per epoch are `min(len(loader), limit)` for an int limit and "
        "`int(len(loader) * limit)` (float arithmetic, floored) for a float one; a float that "
        "yields 0 batches raises MisconfigurationException. They are computed when fit sets up the "
        "data, so `num_training_batches` is inf before that.",
        f"{_PL}/trainer/connectors/data_connector.py:449 (_parse_num_batches), "
        f"{_PL}/loops/fit_loop.py:226 (_FitLoop.setup_data)",
    ),
    (
        "A `limit_train_batches` of 0 skips training without setting up the data; a loader of "
        "length 0 stops the fit with '`Trainer.fit` stopped: No training batches.'.",
        f"{_PL}/loops/fit_loop.py:201 (_FitLoop.skip), {_PL}/loops/fit_loop.py:173 (_FitLoop.done)",
    ),
    (
        "The fit stops when `global_step >= max_steps` (max_steps != -1), else when "
        "`epoch_progress.current.processed >= max_epochs` (max_epochs != -1), which sets "
        "`current_epoch` to `processed` and logs '`Trainer.fit` stopped: `max_epochs=N` reached.'. "
        "It is checked before the first epoch too, so a reached limit trains 0 steps.",
        f"{_PL}/loops/fit_loop.py:173 (_FitLoop.done), {_PL}/loops/fit_loop.py:208 (_FitLoop.run)",
    ),
    (
        "An epoch ends when `global_step >= max_steps`, when `batch_progress.current.ready` "
        "equals the batches per epoch, when the fetcher has fetched that many (counting the "
        "restored `ready`), or when the loader runs out. While the epoch loop is restarting it "
        "does not stop on the first two before running one batch.",
        f"{_PL}/loops/training_epoch_loop.py:130 (_TrainingEpochLoop.done), "
        f"{_PL}/loops/training_epoch_loop.py:442 (_num_ready_batches_reached), "
        f"{_PL}/loops/fetchers.py (_DataFetcher.__next__)",
    ),
    (
        "Every epoch that ran, even one cut short by `max_steps` or an empty loader, increments "
        "`epoch_progress.processed` and `completed`, so `current_epoch` counts it as completed.",
        f"{_PL}/loops/fit_loop.py:471 (_FitLoop.on_advance_end)",
    ),
    (
        "The `global_step` counts optimizer steps. With `accumulate_grad_batches=k` the optimizer "
        "steps when `batch_progress.current.ready % k == 0` or on the epoch's last batch; "
        "micro-batches left when a loader runs dry are carried into the next step.",
        f"{_PL}/loops/training_epoch_loop.py:447 (_should_accumulate), "
        f"{_PL}/loops/training_epoch_loop.py:113 (global_step)",
    ),
    (
        "The `batch_idx` is `batch_progress.current.ready` before the batch; `current_epoch` is "
        "`epoch_progress.current.completed`.",
        f"{_PL}/loops/training_epoch_loop.py:314 (advance), {_PL}/trainer/trainer.py:1562 "
        "(Trainer.current_epoch)",
    ),
    (
        "ModelCheckpoint(every_n_train_steps=k) saves in on_train_batch_end when "
        "`global_step % k == 0` and that step was not saved yet (never at step 0): the "
        "checkpoint's batch `completed` lags `ready` by one and its epoch is not yet processed.",
        f"{_PL}/callbacks/model_checkpoint.py:340 (on_train_batch_end), "
        f"{_PL}/callbacks/model_checkpoint.py:624 (_should_skip_saving_checkpoint)",
    ),
    (
        "A checkpoint stores `epoch` = current_epoch, `global_step` and the loop progress; for a "
        "stateful loader also its state (its sample position). After fit the loader's iterator is "
        "reset, so a checkpoint saved after fit stores position 0.",
        f"{_PL}/trainer/connectors/checkpoint_connector.py:436 (dump_checkpoint), "
        f"{_PL}/loops/fit_loop.py:521 (_FitLoop.on_save_checkpoint), "
        f"{_PL}/utilities/combined_loader.py:361 (CombinedLoader.reset)",
    ),
    (
        "Restoring loads every progress counter. The loops are 'restarting' when the saved epoch "
        "was unfinished (ready or started != processed), and always when `max_steps != -1`.",
        f"{_PL}/loops/loop.py:84 (_Loop.load_state_dict), {_PL}/loops/fit_loop.py:133 "
        "(_FitLoop.restarting)",
    ),
    (
        "After restoring, `current_epoch > max_epochs` (max_epochs != -1) raises "
        "MisconfigurationException 'You restored a checkpoint with current_epoch=…'; "
        "`current_epoch == max_epochs` trains 0 steps. `max_epochs` and `max_steps` come from the "
        "new Trainer, not the checkpoint.",
        f"{_PL}/trainer/connectors/checkpoint_connector.py:331 (restore_loops)",
    ),
    (
        "A checkpoint from on_train_batch_end gets its batch `completed` incremented on restore; "
        "if that reaches the batches per epoch of the new loader, the epoch's batch counters are "
        "reset, and if the saved batch was the last one the epoch counts as processed and "
        "completed.",
        f"{_PL}/loops/fit_loop.py:346 (update_restart_stage), {_PL}/loops/fit_loop.py:383 "
        "(_FitLoop.reset), {_PL}/loops/training_epoch_loop.py:191 (_TrainingEpochLoop.reset)",
    ),
    (
        "A restarting epoch continues counting at `batch_progress.current.completed`: batch_idx "
        "and the epoch's remaining length come from the counter, not from the loader.",
        f"{_PL}/loops/training_epoch_loop.py:212 (_TrainingEpochLoop.reset), "
        f"{_PL}/loops/training_epoch_loop.py:239 (on_run_start)",
    ),
    (
        "When restarting, unless `global_step % ceil(batches_per_epoch / accumulate_grad_batches) "
        "== 0` or the loader is stateful, Lightning warns 'You're resuming from a checkpoint that "
        "ended before the epoch ended…' — arithmetic on the counters, also for an end-of-fit "
        "checkpoint resumed with `max_steps`.",
        f"{_PL}/loops/training_epoch_loop.py:218 (_TrainingEpochLoop.reset)",
    ),
    (
        "A plain DataLoader resumes from sample 0 of the epoch (the samples are replayed under "
        "the restored batch_idx); a StatefulDataLoader's state is loaded only when restarting and "
        "resumes at the saved sample position, so with a new batch size its batches no longer "
        "match Lightning's batch counter. An iterator saved after the epoch's last batch yields "
        "nothing more.",
        f"{_PL}/loops/fit_loop.py:552 (_load_combined_loader_states), "
        "torchdata/stateful_dataloader/stateful_dataloader.py:391 (StatefulDataLoader.__iter__)",
    ),
    (
        "Each epoch after the first starts a new loader iterator, except the first epoch of a "
        "resumed or restarting fit, which uses the iterator set up with the data.",
        f"{_PL}/loops/training_epoch_loop.py:239 (_TrainingEpochLoop.on_run_start)",
    ),
    (
        "A `fit` on an existing Trainer keeps its counters and callbacks and only replaces the "
        "data; assigning `fit_loop.max_epochs`, `fit_loop.epoch_loop.max_steps` or "
        "`limit_train_batches` changes the limits without validation or messages.",
        f"{_PL}/trainer/connectors/data_connector.py:136 (attach_data)",
    ),
    (
        "Under strategy='ddp' (on any number of devices, one included) the training loader's "
        "sampler is replaced by a DistributedSampler(num_replicas=world_size, rank, seed="
        "PL_GLOBAL_SEED) that shuffles whatever the DataLoader says, because a training "
        "loader counts as shuffled; use_distributed_sampler=False keeps the user's sampler.",
        f"{_PL}/trainer/connectors/data_connector.py:230 (_get_distributed_sampler), "
        f"{_PL}/trainer/connectors/data_connector.py:489 (_process_dataloader)",
    ),
    (
        "The DistributedSampler reads randperm(samples) seeded seed + epoch (or 0..samples-1 "
        "unshuffled) padded from its start to ceil(samples / world_size) * world_size "
        "positions, and rank r takes every world_size-th position from r; each epoch gets "
        "epoch_progress.current.processed as its sampler epoch.",
        f"{_PL}/loops/fit_loop.py:445 (_FitLoop.on_advance_start), "
        "torch/utils/data/distributed.py:108 (DistributedSampler.__iter__)",
    ),
    (
        "Each rank's DataLoader batches its ceil(samples / world_size) positions by batch_size, "
        "so it has ceil or, with drop_last, floor of that over batch_size batches, the same on "
        "every rank: num_training_batches and every counter are computed at the current "
        "world size, also after a resume on another one.",
        f"{_PL}/trainer/connectors/data_connector.py:449 (_parse_num_batches), "
        "torch/utils/data/distributed.py:102 (DistributedSampler.__init__), "
        "torch/utils/data/sampler.py:346 (BatchSampler.__len__)",
    ),
)


class _LightningError(Exception):
    """Lightning raised ``type`` with ``message`` (internal control flow)."""

    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.error = TrainerError(type=type_, message=message)


class _CrashError(Exception):
    """The simulated process died at a batch start (internal control flow)."""


class _ExhaustedError(Exception):
    """The loader or the fetcher is exhausted (internal control flow)."""


def _misconfiguration(message: str) -> _LightningError:
    return _LightningError("MisconfigurationException", message)


def _is_limit(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_limit(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not _is_limit(value):
        raise TypeError(f"{attribute.name} must be an int, a float or None, got {value!r}")


def _check_optional_int(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise TypeError(f"{attribute.name} must be an int or None, got {value!r}")


def _check_int(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{attribute.name} must be an int, got {value!r}")


def _check_positive(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{attribute.name} must be an int >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class Call:
    """One ``trainer.fit(model, loader, ckpt_path=...)`` call, in Lightning's vocabulary.

    ``fresh=True`` builds a new ``Trainer(max_epochs=..., max_steps=..., limit_train_batches=...,
    accumulate_grad_batches=...)`` with the callbacks ``ModelCheckpoint(every_n_train_steps=
    save_every, save_top_k=-1)`` and a crash at the first batch that starts with ``global_step >=
    crash_at`` (the process dies right after that checkpoint). ``fresh=False`` calls ``fit``
    again on the previous Trainer, which keeps its counters and callbacks; its limits can only be
    changed by assignment (``set_max_epochs`` is ``trainer.fit_loop.max_epochs = ...``,
    ``set_max_steps`` is ``trainer.fit_loop.epoch_loop.max_steps = ...``,
    ``set_limit_train_batches`` is ``trainer.limit_train_batches = ...``).

    ``resume_latest`` passes the newest checkpoint written by earlier calls as ``ckpt_path``
    (none yet: nothing is restored). ``save_at_end`` calls ``trainer.save_checkpoint`` after a
    ``fit`` that returned. ``loader`` is a torch ``DataLoader`` (``"plain"``) or a torchdata
    ``StatefulDataLoader`` (``"stateful"``) over ``data`` with ``batch_size`` and ``drop_last``,
    built anew for every call.

    ``strategy="ddp"`` runs the Trainer on ``world_size`` processes (``Trainer(strategy="ddp",
    devices=world_size)``, one node); a resume may build it on another number. With
    ``use_distributed_sampler=False`` the loader brings its own ``DistributedSampler(
    shuffle=False)``, which Lightning keeps.
    """

    data: Dataset
    batch_size: int = attrs.field(default=10, validator=_check_positive)
    max_epochs: int | None = attrs.field(default=None, validator=_check_optional_int)
    max_steps: int = attrs.field(default=-1, validator=_check_int)
    limit_train_batches: int | float | None = attrs.field(default=None, validator=_check_limit)
    accumulate_grad_batches: int = attrs.field(default=1, validator=_check_positive)
    loader: LoaderKind = attrs.field(
        default="plain", validator=attrs.validators.in_(("plain", "stateful"))
    )
    drop_last: bool = False
    strategy: Strategy = attrs.field(
        default="auto", validator=attrs.validators.in_(("auto", "ddp"))
    )
    world_size: int = attrs.field(default=1, validator=_check_positive)
    use_distributed_sampler: bool = True
    fresh: bool = True
    resume_latest: bool = False
    save_every: int | None = attrs.field(default=None, validator=_check_optional_int)
    save_at_end: bool = False
    crash_at: int | None = attrs.field(default=None, validator=_check_optional_int)
    set_max_epochs: int | None = attrs.field(default=None, validator=_check_optional_int)
    set_max_steps: int | None = attrs.field(default=None, validator=_check_optional_int)
    set_limit_train_batches: int | float | None = attrs.field(default=None, validator=_check_limit)

    def __attrs_post_init__(self) -> None:
        constructor = {
            "max_epochs": (self.max_epochs, None),
            "max_steps": (self.max_steps, -1),
            "limit_train_batches": (self.limit_train_batches, None),
            "accumulate_grad_batches": (self.accumulate_grad_batches, 1),
            "strategy": (self.strategy, "auto"),
            "world_size": (self.world_size, 1),
            "use_distributed_sampler": (self.use_distributed_sampler, True),
            "save_every": (self.save_every, None),
            "crash_at": (self.crash_at, None),
        }
        assignments = {
            "set_max_epochs": self.set_max_epochs,
            "set_max_steps": self.set_max_steps,
            "set_limit_train_batches": self.set_limit_train_batches,
        }
        if self.world_size > 1 and self.strategy != "ddp":
            raise ValueError(
                f"world_size={self.world_size} runs on several processes: pass strategy='ddp'"
            )
        if self.strategy == "ddp" and self.loader == "stateful":
            raise ValueError(
                "a StatefulDataLoader under strategy='ddp' is not modelled (no run was recorded); "
                "use loader='plain'"
            )
        if not self.fresh:
            given = [name for name, (value, default) in constructor.items() if value != default]
            if given:
                raise ValueError(
                    f"fresh=False reuses the existing Trainer, so its constructor arguments "
                    f"cannot change; got {', '.join(given)}. Use set_max_epochs, set_max_steps "
                    f"or set_limit_train_batches to assign new limits, or fresh=True"
                )
        else:
            given = [name for name, value in assignments.items() if value is not None]
            if given:
                raise ValueError(
                    f"{', '.join(given)} assign attributes of an existing Trainer and need "
                    f"fresh=False; for a new Trainer pass max_epochs, max_steps or "
                    f"limit_train_batches instead"
                )


# --- Lightning's progress trackers -------------------------------------------------------------


@attrs.define
class _Tracker:
    """``_ProcessedTracker``: ready, started, processed, completed (``loops/progress.py``)."""

    ready: int = 0
    started: int = 0
    processed: int = 0
    completed: int = 0

    def reset(self) -> None:
        self.ready = self.started = self.processed = self.completed = 0

    def reset_on_restart(self) -> None:
        self.ready = self.started = self.processed = self.completed


@attrs.define
class _Progress:
    """``_Progress``/``_BatchProgress``: a total and a current tracker."""

    total: _Tracker = attrs.field(factory=_Tracker)
    current: _Tracker = attrs.field(factory=_Tracker)
    is_last_batch: bool = False

    def increment_ready(self) -> None:
        self.total.ready += 1
        self.current.ready += 1

    def increment_started(self) -> None:
        self.total.started += 1
        self.current.started += 1

    def increment_processed(self) -> None:
        self.total.processed += 1
        self.current.processed += 1

    def increment_completed(self) -> None:
        self.total.completed += 1
        self.current.completed += 1

    def reset_on_run(self) -> None:
        self.current.reset()
        self.is_last_batch = False

    def reset_on_restart(self) -> None:
        self.current.reset_on_restart()

    def copy(self) -> _Progress:
        return _Progress(
            total=attrs.evolve(self.total),
            current=attrs.evolve(self.current),
            is_last_batch=self.is_last_batch,
        )


class _Stage(Enum):
    """``RestartStage`` (``loops/utilities.py``)."""

    NONE = "none"
    ON_EPOCH_START = "restarted_on_epoch_start"
    MID_EPOCH = "restarted_mid_epoch"
    ON_EPOCH_END = "restarted_on_epoch_end"
    RESUMED_ON_EPOCH_END = "resumed_on_epoch_end"
    ON_TRAIN_BATCH_END = "restarted_on_train_batch_end"
    ON_LAST = "restarted_on_last"


# --- data ---------------------------------------------------------------------------------------


@attrs.frozen
class _LoaderState:
    """A ``StatefulDataLoader`` state: samples yielded by its iterator, and whether it ended."""

    position: int
    finished: bool


@attrs.define
class _Iterator:
    """A loader iterator over positions ``position ..`` of one rank's share of the data set."""

    samples: int
    batch_size: int
    drop_last: bool = False
    position: int = 0
    finished: bool = False

    def next(self) -> tuple[int, int]:
        left = self.samples - self.position
        if left <= 0 or (self.drop_last and left < self.batch_size):
            self.finished = True
            raise _ExhaustedError
        start = self.position
        self.position = min(start + self.batch_size, self.samples)
        return start, self.position


@attrs.define
class _Loader:
    """A ``DataLoader`` or ``StatefulDataLoader`` built for one call, as every rank has it:
    each of ``world_size`` ranks reads ``per_rank`` positions (one process: all of them)."""

    kind: LoaderKind
    data: Dataset
    batch_size: int
    drop_last: bool = False
    world_size: int = 1
    shuffled: bool = False
    pending: _LoaderState | None = None
    iterator: _Iterator | None = None

    @property
    def class_name(self) -> str:
        return "StatefulDataLoader" if self.kind == "stateful" else "DataLoader"

    @property
    def per_rank(self) -> int:
        """``DistributedSampler.num_samples``: the epoch padded to a multiple of the ranks."""
        return -(-self.data.samples // self.world_size)

    def __len__(self) -> int:
        if self.drop_last:
            return self.per_rank // self.batch_size
        return -(-self.per_rank // self.batch_size)

    def ids(self, start: int, stop: int, epoch: int) -> tuple[int, ...]:
        """The ids every rank reads at its positions ``[start, stop)`` of sampler epoch
        ``epoch``: rank r's position i is the padded sequence's ``i * world_size + r``."""
        read = range(start * self.world_size, stop * self.world_size)
        return self.data.read(read, epoch=epoch, shuffled=self.shuffled)

    def fresh_iterator(self, state: _LoaderState | None = None) -> _Iterator:
        iterator = _Iterator(self.per_rank, self.batch_size, self.drop_last)
        if state is not None:
            iterator.position = min(state.position, self.per_rank)
            iterator.finished = state.finished
        return iterator

    def iter(self) -> _Iterator:
        """``iter(loader)``: a stateful loader resumes a loaded state unless it had ended."""
        state, self.pending = self.pending, None
        iterator = self.fresh_iterator(state)
        if iterator.finished:
            iterator = self.fresh_iterator()
        self.iterator = iterator
        return iterator

    def state(self) -> _LoaderState:
        """``StatefulDataLoader.state_dict()``."""
        if self.iterator is None:
            return self.pending if self.pending is not None else _LoaderState(0, False)
        return _LoaderState(self.iterator.position, self.iterator.finished)


@attrs.define
class _Fetcher:
    """``_PrefetchDataFetcher`` over a sized loader: counts fetches against its length."""

    loader: _Loader
    length: int
    iterator: _Iterator
    fetched: int = 0
    done: bool = False

    @classmethod
    def start(cls, loader: _Loader, length: int) -> _Fetcher:
        return cls(loader=loader, length=length, iterator=loader.iter(), done=length == 0)

    def restart(self) -> None:
        self.iterator = self.loader.iter()
        self.fetched = 0
        self.done = self.length == 0

    def next(self) -> tuple[int, int]:
        if self.done:
            raise _ExhaustedError
        try:
            batch = self.iterator.next()
        except _ExhaustedError:
            self.done = True
            raise
        self.fetched += 1
        self.done = self.fetched >= self.length
        return batch


# --- checkpoints --------------------------------------------------------------------------------


@attrs.frozen
class _Checkpoint:
    """What a Lightning ``.ckpt`` file carries that matters for durations."""

    epoch: int
    global_step: int
    epoch_progress: _Progress
    batch_progress: _Progress
    loader_state: _LoaderState | None


# --- the trainer --------------------------------------------------------------------------------


def _determine_batch_limits(value: int | float | None, messages: list[str]) -> int | float:
    """``trainer/setup.py:100``."""
    if value is None:
        return 1.0
    if isinstance(value, int) and value == 1:
        messages.append(
            "`Trainer(limit_train_batches=1)` was configured so 1 batch per epoch will be used."
        )
    elif isinstance(value, float) and value == 1.0:
        messages.append(
            "`Trainer(limit_train_batches=1.0)` was configured so 100% of the batches per epoch "
            "will be used.."
        )
    if 0 <= value <= 1:
        return value
    if value > 1 and value % 1.0 == 0:
        return int(value)
    raise _misconfiguration(
        f"You have passed invalid value {value} for limit_train_batches, it has to be in "
        f"[0.0, 1.0] or an int."
    )


def _parse_num_batches(length: int, limit: int | float) -> int:
    """``trainer/connectors/data_connector.py:449`` for a sized training loader."""
    if length == 0:
        return 0
    num_batches = min(length, limit) if isinstance(limit, int) else int(length * limit)
    if num_batches == 0 and isinstance(limit, float) and limit > 0.0:
        raise _misconfiguration(
            f"You requested to check {limit} of the `train_dataloader` but {limit} * {length} < 1. "
            f"Please increase the `limit_train_batches` argument. Try at least "
            f"`limit_train_batches={1.0 / length}`"
        )
    return num_batches


@attrs.define
class _Trainer:
    """The state a ``pl.Trainer`` object keeps between ``fit`` calls."""

    max_epochs: int | None
    max_steps: int
    limit_train_batches: int | float
    accumulate_grad_batches: int
    save_every: int | None
    crash_at: int | None
    strategy: Strategy = "auto"
    world_size: int = 1
    use_distributed_sampler: bool = True
    last_saved_step: int = 0
    epoch_progress: _Progress = attrs.field(factory=_Progress)
    batch_progress: _Progress = attrs.field(factory=_Progress)
    global_step: int = 0
    max_batches: int | float = math.inf
    fit_restarting: bool = False
    epoch_restarting: bool = False
    loaded_from_state_dict: bool = False
    resuming: bool = False
    fit_stage: _Stage = _Stage.NONE
    epoch_stage: _Stage = _Stage.NONE
    loader_state_to_load: _LoaderState | None = None
    loader: _Loader | None = None

    @classmethod
    def build(cls, call: Call, messages: list[str]) -> _Trainer:
        """``Trainer.__init__``: the validation and messages it emits."""
        if call.max_epochs is not None and call.max_epochs < -1:
            raise _misconfiguration(
                "`max_epochs` must be a non-negative integer or -1. You passed in "
                f"{call.max_epochs}."
            )
        if call.max_steps < -1:
            raise _misconfiguration(
                "`max_steps` must be a non-negative integer or -1 (infinite steps). You passed in "
                f"{call.max_steps}."
            )
        limit = _determine_batch_limits(call.limit_train_batches, messages)
        return cls(
            max_epochs=call.max_epochs,
            max_steps=call.max_steps,
            limit_train_batches=limit,
            accumulate_grad_batches=call.accumulate_grad_batches,
            save_every=call.save_every,
            crash_at=call.crash_at,
            strategy=call.strategy,
            world_size=call.world_size,
            use_distributed_sampler=call.use_distributed_sampler,
        )

    @property
    def current_epoch(self) -> int:
        return self.epoch_progress.current.completed

    def counters(self) -> dict[str, int | float | None]:
        return {
            "global_step": self.global_step,
            "current_epoch": self.current_epoch,
            "batch_progress_current_completed": self.batch_progress.current.completed,
            "num_training_batches": self.max_batches,
            "max_epochs": self.max_epochs,
            "max_steps": self.max_steps,
        }

    def checkpoint(self) -> _Checkpoint:
        loader_state = None
        if self.loader is not None and self.loader.kind == "stateful":
            loader_state = self.loader.state()
        return _Checkpoint(
            epoch=self.current_epoch,
            global_step=self.global_step,
            epoch_progress=self.epoch_progress.copy(),
            batch_progress=self.batch_progress.copy(),
            loader_state=loader_state,
        )


@attrs.define
class _Fit:
    """One ``trainer.fit`` call on ``trainer``: the loops of ``fit_loop.py`` and
    ``training_epoch_loop.py``, with what it records."""

    trainer: _Trainer
    loader: _Loader
    checkpoints: list[_Checkpoint]
    messages: list[str]
    steps: list[tuple[int, ...]] = attrs.field(factory=list)
    pending: list[int] = attrs.field(factory=list)
    fetcher: _Fetcher | None = None

    # _FitLoop -----------------------------------------------------------------------------------

    def run(self, checkpoint: _Checkpoint | None) -> None:
        t = self.trainer
        if t.max_epochs is None:  # Trainer._run -> _parse_loop_limits
            if t.max_steps == -1:
                self.messages.append(
                    "PossibleUserWarning: `max_epochs` was not set. Setting it to 1000 epochs. To "
                    "train without an epoch limit, set `max_epochs=-1`."
                )
                t.max_epochs = 1000
            else:
                t.max_epochs = -1
        if checkpoint is not None:
            self.restore(checkpoint)
        try:
            self.fit_loop_run()
        finally:  # Trainer._teardown -> CombinedLoader.reset drops the loader's iterator
            self.loader.iterator = None

    def restore(self, checkpoint: _Checkpoint) -> None:
        """``restore_loops``: load the progress, set ``restarting``, guard the epoch."""
        t = self.trainer
        t.epoch_progress = checkpoint.epoch_progress.copy()
        t.batch_progress = checkpoint.batch_progress.copy()
        t.global_step = checkpoint.global_step
        t.loader_state_to_load = checkpoint.loader_state
        current = t.epoch_progress.current
        unfinished = current.ready != current.processed or current.started != current.processed
        restarting = unfinished or t.max_steps != -1
        t.fit_restarting = t.epoch_restarting = restarting
        t.loaded_from_state_dict = t.resuming = True
        assert t.max_epochs is not None
        if t.max_epochs != -1 and t.current_epoch > t.max_epochs:
            raise _misconfiguration(
                f"You restored a checkpoint with current_epoch={t.current_epoch}, but you have set "
                f"Trainer(max_epochs={t.max_epochs})."
            )

    def setup_data(self) -> None:
        t = self.trainer
        if t.limit_train_batches == 0:
            return
        t.loader = self.loader
        length = len(self.loader)
        if length == 0:
            for name in (self.loader.class_name, "CombinedLoader"):
                self.messages.append(
                    f"UserWarning: Total length of `{name}` across ranks is zero. Please make sure "
                    "this was your intention."
                )
        num_batches = _parse_num_batches(length, t.limit_train_batches)
        if t.fit_restarting and t.loader_state_to_load is not None:
            if self.loader.kind == "stateful":
                self.loader.pending = t.loader_state_to_load
            t.loader_state_to_load = None
        max_batches = min(length, num_batches)
        self.fetcher = _Fetcher.start(self.loader, max_batches)
        t.max_batches = max_batches

    def done(self) -> bool:
        t = self.trainer
        if t.max_batches == 0:
            self.messages.append("`Trainer.fit` stopped: No training batches.")
            return True
        if t.max_steps != -1 and t.global_step >= t.max_steps:
            self.messages.append(f"`Trainer.fit` stopped: `max_steps={t.max_steps}` reached.")
            return True
        assert t.max_epochs is not None
        current = t.epoch_progress.current
        if t.max_epochs != -1 and current.processed >= t.max_epochs:
            current.completed = current.processed
            self.messages.append(f"`Trainer.fit` stopped: `max_epochs={t.max_epochs}` reached.")
            return True
        return False

    def fit_loop_run(self) -> None:
        t = self.trainer
        self.setup_data()
        if self.done() or t.limit_train_batches == 0:
            return
        self.fit_loop_reset()
        if t.max_steps == -1:  # on_run_start: current_epoch after a checkpoint reload
            t.epoch_progress.current.completed = t.epoch_progress.current.processed
        while not self.done():
            try:
                if t.fit_stage not in (_Stage.MID_EPOCH, _Stage.ON_EPOCH_END):
                    if t.fit_stage is not _Stage.ON_EPOCH_START:
                        t.epoch_progress.increment_ready()
                    t.epoch_progress.increment_started()
                self.epoch_loop_run()
                t.epoch_progress.increment_processed()
                t.epoch_progress.increment_completed()
            finally:
                t.fit_restarting = t.loaded_from_state_dict = t.resuming = False
                t.fit_stage = _Stage.NONE
        t.fit_restarting = False

    def update_restart_stage(self) -> None:
        t = self.trainer
        total = t.epoch_progress.total
        if (
            t.fit_restarting
            and total.started == total.ready - 1
            and total.processed == total.started
            and total.completed == total.processed
        ):
            t.fit_stage = _Stage.ON_EPOCH_START
        elif (
            t.fit_restarting
            and total.started == total.ready
            and total.processed == total.started - 1
            and total.completed == total.processed
        ):
            t.fit_stage = _Stage.MID_EPOCH
        elif (
            total.started == total.ready
            and total.processed == total.started
            and total.completed == total.processed - 1
        ):
            if t.fit_restarting:
                t.fit_stage = _Stage.ON_EPOCH_END
            elif t.loaded_from_state_dict:
                t.fit_stage = _Stage.RESUMED_ON_EPOCH_END
            else:
                t.fit_stage = _Stage.NONE
        else:
            t.fit_stage = _Stage.NONE
        batch = t.batch_progress.total
        if t.epoch_restarting and batch.started == batch.ready and batch.processed == batch.started:
            if batch.completed == batch.processed - 1:
                t.epoch_stage = _Stage.ON_TRAIN_BATCH_END
            elif batch.completed == batch.processed:
                t.epoch_stage = _Stage.ON_LAST
            else:
                t.epoch_stage = _Stage.NONE
        else:
            t.epoch_stage = _Stage.NONE

    def fit_loop_reset(self) -> None:
        t = self.trainer
        self.update_restart_stage()
        if t.fit_stage is _Stage.ON_EPOCH_START:
            t.epoch_progress.reset_on_restart()
        if t.fit_stage is _Stage.RESUMED_ON_EPOCH_END:
            t.epoch_progress.increment_completed()
        on_batch_end = t.epoch_stage is _Stage.ON_TRAIN_BATCH_END
        if on_batch_end and t.fit_stage is _Stage.MID_EPOCH and t.batch_progress.is_last_batch:
            t.epoch_progress.increment_processed()
            t.epoch_progress.increment_completed()
        # (the validation loop never ran, so its is_last_batch is False)
        if on_batch_end and t.batch_progress.is_last_batch and t.fit_stage is not _Stage.MID_EPOCH:
            t.epoch_progress.increment_completed()

    # _TrainingEpochLoop ------------------------------------------------------------------------

    def epoch_loop_reset(self) -> None:
        t = self.trainer
        if t.epoch_stage is _Stage.ON_TRAIN_BATCH_END:
            t.batch_progress.increment_completed()
            if t.batch_progress.current.completed >= t.max_batches:
                t.batch_progress.reset_on_run()
        if t.epoch_restarting:
            t.batch_progress.reset_on_restart()
            if t.max_batches != math.inf:
                expected_steps = -(-int(t.max_batches) // t.accumulate_grad_batches)
                if t.global_step % expected_steps != 0 and self.loader.kind != "stateful":
                    self.messages.append(
                        "PossibleUserWarning: You're resuming from a checkpoint that ended before "
                        "the epoch ended and your dataloader is not resumable. This can cause "
                        "unreliable results if further training is done. Consider using an "
                        "end-of-epoch checkpoint or make your dataloader resumable by implementing "
                        "the `state_dict` / `load_state_dict` interface."
                    )
        else:
            t.batch_progress.reset_on_run()

    def num_ready_batches_reached(self) -> bool:
        t = self.trainer
        progress = t.batch_progress
        return progress.current.ready == t.max_batches or progress.is_last_batch

    def epoch_done(self) -> bool:
        t = self.trainer
        max_steps_reached = t.max_steps != -1 and t.global_step >= t.max_steps
        training_done = max_steps_reached or self.num_ready_batches_reached()
        # _is_validation_done: not restarting, or the validation loop has run (it never does)
        return training_done and not t.epoch_restarting

    def epoch_loop_run(self) -> None:
        t = self.trainer
        fetcher = self.fetcher
        assert fetcher is not None
        self.epoch_loop_reset()
        if t.current_epoch > 0 and not t.resuming and not t.epoch_restarting:
            fetcher.restart()
        fetcher.fetched += t.batch_progress.current.ready
        while not self.epoch_done():
            try:
                self.advance(fetcher)
            except _ExhaustedError:
                break
            finally:
                t.epoch_restarting = False
                t.epoch_stage = _Stage.NONE

    def advance(self, fetcher: _Fetcher) -> None:
        t = self.trainer
        progress = t.batch_progress
        start, stop = fetcher.next()
        progress.is_last_batch = fetcher.done
        progress.increment_ready()
        if t.crash_at is not None and t.global_step >= t.crash_at:  # on_train_batch_start
            raise _CrashError
        progress.increment_started()
        epoch = t.epoch_progress.current.processed  # the sampler's set_epoch
        self.pending.extend(self.loader.ids(start, stop, epoch))  # training_step
        accumulation_done = progress.current.ready % t.accumulate_grad_batches == 0
        if accumulation_done or self.num_ready_batches_reached():  # optimizer.step()
            t.global_step += 1
            self.steps.append(tuple(self.pending))
            self.pending.clear()
        progress.increment_processed()
        every = t.save_every  # ModelCheckpoint.on_train_batch_end
        if (
            every is not None
            and every >= 1
            and t.global_step % every == 0
            and t.last_saved_step != t.global_step
        ):
            self.checkpoints.append(t.checkpoint())
            t.last_saved_step = t.global_step
        progress.increment_completed()


def simulate(calls: Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as Lightning 2.6.6 would, and report what each call does.

    A ``fresh`` call builds a new Trainer (a new process); a later call with
    ``resume_latest`` reads the newest checkpoint any earlier call wrote. A call that crashes
    (``crash_at``) leaves its Trainer as it was at the crash.
    """
    trainer: _Trainer | None = None
    checkpoints: list[_Checkpoint] = []
    outcomes: list[CallOutcome] = []
    for call in calls:
        messages: list[str] = []
        if call.fresh or trainer is None:
            try:
                built = _Trainer.build(call, messages)
            except _LightningError as raised:
                counters = trainer.counters() if trainer is not None else {}
                outcomes.append(
                    CallOutcome(
                        steps=0,
                        batches=(),
                        counters=counters,
                        messages=tuple(messages),
                        error=raised.error,
                    )
                )
                continue
            trainer = built
        else:
            if call.set_max_epochs is not None:
                trainer.max_epochs = call.set_max_epochs
            if call.set_max_steps is not None:
                trainer.max_steps = call.set_max_steps
            if call.set_limit_train_batches is not None:
                trainer.limit_train_batches = call.set_limit_train_batches
        checkpoint = checkpoints[-1] if call.resume_latest and checkpoints else None
        loader = _Loader(
            kind=call.loader,
            data=call.data,
            batch_size=call.batch_size,
            drop_last=call.drop_last,
            world_size=trainer.world_size,
            shuffled=trainer.strategy == "ddp" and trainer.use_distributed_sampler,
        )
        trainer.loader = None  # attach_data: the fit loop's combined loader is replaced
        fit = _Fit(trainer=trainer, loader=loader, checkpoints=checkpoints, messages=messages)
        error: TrainerError | None = None
        crashed = False
        try:
            fit.run(checkpoint)
        except _LightningError as raised:
            error = raised.error
        except _CrashError:
            crashed = True
        if call.save_at_end and error is None and not crashed:
            checkpoints.append(trainer.checkpoint())
        outcomes.append(
            CallOutcome(
                steps=len(fit.steps),
                batches=tuple(fit.steps),
                counters=trainer.counters(),
                messages=tuple(messages),
                error=error,
                crashed=crashed,
            )
        )
    return tuple(outcomes)


# -- writing a durations scenario in Lightning's idiom --------------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Lightning user writes it (trainers.md A.7): one ``Trainer`` with a
    ``ModelCheckpoint(every_n_train_steps=1)`` and a plain ``DataLoader`` per call; every later
    call assigns new absolute limits (``fit_loop.max_epochs``, ``fit_loop.epoch_loop.max_steps``,
    ``limit_train_batches``) before ``fit``. Epochs become ``max_epochs`` (a part of an epoch of
    a new data set is one more epoch with ``limit_train_batches``); steps, samples and tokens
    become ``max_steps``. Absolute limits are computed from where the plan says each call starts.
    Re-running after a crash is the same script with ``ckpt_path`` = the newest checkpoint on the
    first fit. A data-parallel loader runs as ``Trainer(strategy="ddp", devices=world_size,
    accumulate_grad_batches=accumulation)`` with a ``DataLoader`` of the per-device batch: its
    injected ``DistributedSampler`` shuffles and evens the ranks by repeating samples, whatever
    the loader's padding; every call must then keep the first call's world size and
    accumulation (they belong to the Trainer).
    """
    plan = make_plan(scenario.config, scenario.calls)
    calls: list[Call] = []
    notes: list[str] = []
    limit = None  # the limit_train_batches in force on the trainer
    first_sharding = scenario.calls[0].loader.sharding if scenario.calls else None
    for step in steps_of(scenario, data, "Lightning"):
        sharding = step.call.loader.sharding
        batch_size = step.batch_size if sharding is None else sharding.device_batch_size
        geometry = (1, 1) if sharding is None else (sharding.world_size, sharding.accumulation)
        built = (
            (1, 1)
            if first_sharding is None
            else (first_sharding.world_size, first_sharding.accumulation)
        )
        if geometry != built:
            raise Unsupported(
                "a Trainer keeps its devices and accumulate_grad_batches: call #"
                f"{step.index} runs {geometry[0]} ranks accumulating {geometry[1]}, the Trainer "
                f"was built for {built[0]} accumulating {built[1]}"
            )
        if step.call.reset_time:
            raise Unsupported(
                "Lightning has no way to restart the clock: a new Trainer that loads only the "
                f"weights loses every counter (call #{step.index} has reset_time)"
            )
        start = plan.segments[step.index].start
        request = step.request
        epochs: int | None = None
        steps: int = -1
        fraction: float | None = None
        if request.unit is Unit.EP:
            value = request.value
            base = start.epoch if step.kind == "duration" else 0
            if value == int(value):
                epochs = base + int(value)
            elif step.kind == "duration" and value < 1 and start.sample_in_epoch == 0:
                epochs, fraction = base + 1, float(value)
            else:
                raise Unsupported(
                    f"max_epochs is a whole number; {request} can be written only as a part of "
                    "one new epoch (limit_train_batches)"
                )
        else:
            base = start.batch if step.kind == "duration" else 0
            steps = base + step.steps()
            epochs = -1
        wanted = fraction if fraction is not None else 1.0
        if step.index == 0:
            ddp: dict[str, Any] = {}
            if sharding is not None:
                ddp = {
                    "strategy": "ddp",
                    "world_size": sharding.world_size,
                    "accumulate_grad_batches": sharding.accumulation,
                }
            calls.append(
                Call(
                    data=step.data,
                    batch_size=batch_size,
                    max_epochs=epochs,
                    max_steps=steps,
                    limit_train_batches=fraction,
                    save_every=1,
                    **ddp,
                )
            )
            written = [f"max_epochs={epochs}"] if epochs != -1 else []
            written += [f"max_steps={steps}"] if steps != -1 else []
            written += [f"limit_train_batches={fraction}"] if fraction is not None else []
            if sharding is not None:
                written += ['strategy="ddp"', f"devices={sharding.world_size}"]
                if sharding.accumulation != 1:
                    written.append(f"accumulate_grad_batches={sharding.accumulation}")
            note = f"Trainer({', '.join(written)}).fit(model, <{step.call.loader.name}>)"
            if sharding is not None:
                note += (
                    f" with DataLoader(batch_size={batch_size}); the injected DistributedSampler "
                    "shuffles and evens the ranks by repeating samples"
                )
            notes.append(note)
        else:
            calls.append(
                Call(
                    data=step.data,
                    batch_size=batch_size,
                    fresh=False,
                    set_max_epochs=epochs,
                    set_max_steps=steps,
                    set_limit_train_batches=wanted if wanted != (limit or 1.0) else None,
                )
            )
            written = [f"fit_loop.max_epochs = {epochs}", f"epoch_loop.max_steps = {steps}"]
            if wanted != (limit or 1.0):
                written.append(f"limit_train_batches = {wanted}")
            notes.append("; ".join(written) + f"; fit(model, <{step.call.loader.name}>)")
        limit = wanted
    first = attrs.evolve(calls[0], resume_latest=True)
    return Translation(
        calls=tuple(calls), rerun=(first, *calls[1:]), notes=tuple(notes), crash_on="fresh"
    )
