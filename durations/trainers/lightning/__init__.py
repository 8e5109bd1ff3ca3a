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
  ``global_step``, both progress trackers, the ``state_key`` of its ``ModelCheckpoint`` and, for
  a ``StatefulDataLoader``, the loader's sample position. A fresh Trainer given ``ckpt_path``
  restores exactly these, and warns when it lacks the checkpoint's ``ModelCheckpoint``.
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
- **Learning rates.** A :class:`Scheduler` is what ``configure_optimizers`` returns: one of
  transformers' warmup schedules (a ``LambdaLR``) with ``interval="step"``, over
  ``trainer.estimated_stepping_batches`` or a given length. Lightning calls
  ``configure_optimizers`` at every ``fit``, so each fit's scheduler starts again at 0 over the
  fit's whole limits; a checkpoint saves it after every optimizer step and ``ckpt_path``
  restores it (and the optimizer's learning rate) into the fit that loads the checkpoint.
  ``CallOutcome.rates`` is the learning rate of every step, a factor of the script's base.
- **Not modelled:** validation, early stopping and ``min_epochs``/``min_steps``, ``max_time``,
  iterable data sets, several loaders, a ``StatefulDataLoader`` under DDP, a scheduler under
  DDP, epoch-interval and plateau schedulers,
  ``reload_dataloaders_every_n_epochs``, ``fast_dev_run``/``overfit_batches``, and shuffling on
  one process without DDP (a shuffled loader reads the same positions of a permutation).

:data:`RULES` lists every rule the emulation applies, each with the Lightning source it follows;
the profile is checked against real runs in ``tests/frameworks/test_profile_lightning.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from ...planner import plan as make_plan
from ...plans import Plan
from ...progress import Progress
from ...scenario import Scenario
from ...units import Unit
from .._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported
from .._script import Shape, Step, shapes, steps_of
from ._data import LoaderKind, _Loader
from ._loop import (
    Strategy,
    _Checkpoint,
    _CrashError,
    _determine_batch_limits,
    _estimated_stepping_batches,
    _Fit,
    _LightningError,
    _parse_num_batches,
    _Trainer,
)
from ._schedule import Scheduler

__all__ = ["RULES", "VERSION", "Call", "Scheduler", "simulate"]

VERSION = "2.6.6"
"""The ``pytorch_lightning`` version this profile was written from and checked against."""


_PL = "pytorch_lightning"

RULES: tuple[tuple[str, str], ...] = (
    (
        "Values of `max_epochs` and `max_steps` below -1 raise MisconfigurationException when "
        "the Trainer is built; `max_epochs=0` is allowed and trains nothing.",
        f"{_PL}/loops/fit_loop.py:94 (_FitLoop.__init__), "
        f"{_PL}/loops/training_epoch_loop.py:75 (_TrainingEpochLoop.__init__)",
    ),
    (
        "A float `max_epochs` (0.5, 1.5, 2.0, -1.0, -2.5) passes the Trainer's check, which "
        "looks at ints only, and fit raises an AssertionError with an empty message, training "
        "nothing, the first time the fit loop asks whether it is done with neither an empty "
        "loader nor `max_steps` stopping it first; a restored checkpoint whose current_epoch "
        "exceeds it is refused before that.",
        f"{_PL}/loops/fit_loop.py:94 (_FitLoop.__init__), {_PL}/loops/fit_loop.py:187 "
        "(_FitLoop.done)",
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
        "A crash at k (`crash_at`) kills the process in on_train_batch_start of the first batch "
        "that starts with `global_step >= k`, after Lightning fetched it and counted it in "
        "`batch_progress.ready`, before `started`. So the killed Trainer counts step k's batch "
        "as `completed` where a checkpoint saved at step k does not, and an epoch that step k "
        "ended has ended and the next one has started.",
        f"{_PL}/loops/training_epoch_loop.py:324 (_TrainingEpochLoop.advance), "
        f"{_PL}/loops/fit_loop.py:445 (_FitLoop.on_advance_start)",
    ),
    (
        "A checkpoint stores `epoch` = current_epoch, `global_step`, the loop progress and the "
        "state of its Trainer's callbacks; for a stateful loader also its state (its sample "
        "position). After fit the loader's iterator is "
        "reset, so a checkpoint saved after fit stores position 0.",
        f"{_PL}/trainer/connectors/checkpoint_connector.py:436 (dump_checkpoint), "
        f"{_PL}/loops/fit_loop.py:521 (_FitLoop.on_save_checkpoint), "
        f"{_PL}/utilities/combined_loader.py:361 (CombinedLoader.reset)",
    ),
    (
        "Restoring a checkpoint that holds the state of a callback the new Trainer lacks (by "
        "`state_key`; of the callbacks modelled only ModelCheckpoint has a state, keyed by its "
        "monitor, mode, every_n_train_steps, every_n_epochs and train_time_interval) warns 'Be "
        "aware that when using `ckpt_path`, callbacks used to create the checkpoint need to be "
        "provided…' with their keys, before the loops are restored.",
        f"{_PL}/trainer/call.py:262 (_call_callbacks_on_load_checkpoint), "
        f"{_PL}/callbacks/model_checkpoint.py:313 (ModelCheckpoint.state_key), "
        f"{_PL}/trainer/connectors/checkpoint_connector.py:459 (dump_checkpoint)",
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
    (
        "The scheduler is what Lightning's 'Finetune Transformers Models' tutorial returns from "
        "configure_optimizers: transformers' get_linear_schedule_with_warmup (or its constant, "
        "cosine_with_min_lr and, for a linear decay to a floor, polynomial power-1 siblings), a "
        "LambdaLR over num_training_steps=trainer.estimated_stepping_batches, with interval "
        "'step'; each step's learning rate is base_lrs[0] * lr_lambda(last_epoch).",
        f"{_PL}/trainer/trainer.py:1748 (estimated_stepping_batches, its OneCycleLR example), "
        "transformers/optimization.py:101 (_get_linear_schedule_with_warmup_lr_lambda), "
        "torch/optim/lr_scheduler.py:441 (LambdaLR.get_lr)",
    ),
    (
        "Every fit calls configure_optimizers (Strategy.setup, after the callbacks are restored "
        "and before the loops are): a second fit on the same Trainer gets a new optimizer and "
        "a new LambdaLR starting at last_epoch 0, base lr times lr_lambda(0).",
        f"{_PL}/trainer/trainer.py:1053 (Trainer._run), {_PL}/strategies/strategy.py:159 "
        "(Strategy.setup)",
    ),
    (
        "The scheduler's length, estimated_stepping_batches, is the fit's whole limits, not "
        "what is left: max_steps when max_epochs is -1 (inf without max_steps); else "
        "ceil(num_training_batches / accumulate_grad_batches) * max(max_epochs, 1), at most "
        "max_steps, for which it first sets up the training data, logging 'Loading "
        "`train_dataloader` to estimate number of stepping batches.'.",
        f"{_PL}/trainer/trainer.py:1748 (Trainer.estimated_stepping_batches)",
    ),
    (
        "That early data setup comes before ckpt_path restores the loops, and the fit's own "
        "setup_data then returns at once: a StatefulDataLoader's saved position is never "
        "loaded, so it resumes at sample 0 of the epoch like a plain loader, without the "
        "mid-epoch warning (it still counts as resumable).",
        f"{_PL}/loops/fit_loop.py:227 (_FitLoop.setup_data), {_PL}/loops/fit_loop.py:552 "
        f"(_load_combined_loader_states), {_PL}/loops/training_epoch_loop.py:222 "
        "(_TrainingEpochLoop.reset)",
    ),
    (
        "A 'step' scheduler steps once after every optimizer step (not after an accumulating "
        "micro-batch), after the batch counts as processed and before on_train_batch_end, so "
        "a ModelCheckpoint saves it already stepped: the checkpoint of step k holds "
        "last_epoch k (counted from its fit's start) and the learning rate of step k + 1.",
        f"{_PL}/loops/training_epoch_loop.py:360 (_TrainingEpochLoop.advance), "
        f"{_PL}/loops/training_epoch_loop.py:456 (update_lr_schedulers)",
    ),
    (
        "A ckpt_path resume restores the optimizer state (its learning rate) and the scheduler's "
        "last_epoch and base_lrs into the scheduler the fit just built, whose lambda (formula "
        "and total) is the new one: the first step after the resume uses the checkpoint's "
        "learning rate, the next ones the checkpoint's base_lrs times the new lambda.",
        f"{_PL}/trainer/connectors/checkpoint_connector.py:367 "
        "(restore_optimizers_and_schedulers), torch/optim/lr_scheduler.py:421 "
        "(LambdaLR.load_state_dict)",
    ),
)


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


def _check_crash_at(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ValueError(f"{attribute.name} must be an int >= 0 or None, got {value!r}")


def _check_positive(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{attribute.name} must be an int >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class Call:
    """One ``trainer.fit(model, loader, ckpt_path=...)`` call, in Lightning's vocabulary.

    ``fresh=True`` builds a new ``Trainer(max_epochs=..., max_steps=..., limit_train_batches=...,
    accumulate_grad_batches=...)``; with ``save_every`` it gets the callback
    ``ModelCheckpoint(every_n_train_steps=save_every, save_top_k=-1)`` (without it, no
    checkpointing callback at all). ``max_epochs`` takes what ``Trainer`` takes, a float
    included: Lightning accepts ``max_epochs=0.5`` when it builds the Trainer and fails inside
    ``fit`` (see :data:`RULES`). ``fresh=False`` calls ``fit`` again on the previous Trainer,
    which keeps its counters and callbacks; its limits can only be changed by assignment
    (``set_max_epochs`` is ``trainer.fit_loop.max_epochs = ...``, ``set_max_steps`` is
    ``trainer.fit_loop.epoch_loop.max_steps = ...``, ``set_limit_train_batches`` is
    ``trainer.limit_train_batches = ...``).

    ``crash_at = k`` kills the process, as SIGKILL would, at the moment the Trainer is about to
    start an optimizer step while ``trainer.global_step >= k``: at ``on_train_batch_start`` of
    the first micro-batch of that step (Lightning calls the hook for every micro-batch; under
    ``accumulate_grad_batches`` the step counter first reads ``>= k`` at the first micro-batch
    of step k + 1). Everything Lightning does after step k has happened: the saves of its
    ``ModelCheckpoint`` (every ``save_every`` steps, so the newest checkpoint may be older than
    step k), the end of an epoch that step k finished and the start of the next one, and the
    fetch of the batch, which ``batch_progress.ready`` already counts. Nothing of the step has
    happened: no training step, no ``started``, no optimizer step. A call that ends without
    starting another step does not crash. The re-run resumes from the newest checkpoint (steps
    after it are lost and trained again); ``CallOutcome.crashed`` is True for the killed call,
    and its counters are the Trainer's at the kill.

    ``resume_latest`` passes the newest checkpoint written by earlier calls as ``ckpt_path``
    (none yet: nothing is restored). ``save_at_end`` calls ``trainer.save_checkpoint`` after a
    ``fit`` that returned. ``loader`` is a torch ``DataLoader`` (``"plain"``) or a torchdata
    ``StatefulDataLoader`` (``"stateful"``) over ``data`` with ``batch_size`` and ``drop_last``,
    built anew for every call.

    ``strategy="ddp"`` runs the Trainer on ``world_size`` processes (``Trainer(strategy="ddp",
    devices=world_size)``, one node); a resume may build it on another number. With
    ``use_distributed_sampler=False`` the loader brings its own ``DistributedSampler(
    shuffle=False)``, which Lightning keeps.

    ``scheduler`` is what the model's ``configure_optimizers`` returns for this fit (see
    :class:`Scheduler`); without one it returns an optimizer alone, whose learning rate the
    profile does not model (``CallOutcome.rates`` is then empty, as it is for a call that
    restores a checkpoint written without a scheduler).
    """

    data: Dataset
    batch_size: int = attrs.field(default=10, validator=_check_positive)
    max_epochs: int | float | None = attrs.field(default=None, validator=_check_limit)
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
    crash_at: int | None = attrs.field(default=None, validator=_check_crash_at)
    set_max_epochs: int | float | None = attrs.field(default=None, validator=_check_limit)
    set_max_steps: int | None = attrs.field(default=None, validator=_check_optional_int)
    set_limit_train_batches: int | float | None = attrs.field(default=None, validator=_check_limit)
    scheduler: Scheduler | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(Scheduler))
    )

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
        if self.strategy == "ddp" and self.scheduler is not None:
            raise ValueError(
                "a scheduler under strategy='ddp' is not modelled (no run was recorded); "
                "use strategy='auto'"
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


def simulate(calls: Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as Lightning 2.6.6 would, and report what each call does.

    A ``fresh`` call builds a new Trainer (a new process); a later call with
    ``resume_latest`` reads the newest checkpoint any earlier call wrote. A call that crashes
    (``crash_at``) leaves its Trainer as it was at the crash.
    """
    return tuple(played.outcome for played in _play(calls))


@attrs.frozen
class _Played:
    """One call as :func:`_play` runs it: what it does, the checkpoint it passed as
    ``ckpt_path``, and the newest checkpoint written by then (the harness's
    ``checkpoint_loaded`` and ``checkpoint_saved``)."""

    outcome: CallOutcome
    loaded: _Checkpoint | None
    newest: _Checkpoint | None
    #: The ``num_training_steps`` the call's scheduler was built with (None without one).
    total: float | None = None


def _play(calls: Sequence[Call]) -> Iterator[_Played]:
    """:func:`simulate`, call by call, with the checkpoints each call read and left."""
    trainer: _Trainer | None = None
    checkpoints: list[_Checkpoint] = []
    for call in calls:
        messages: list[str] = []
        checkpoint = checkpoints[-1] if call.resume_latest and checkpoints else None
        if call.fresh or trainer is None:
            try:
                built = _Trainer.build(call, messages)
            except _LightningError as raised:
                counters = trainer.counters() if trainer is not None else {}
                outcome = CallOutcome(
                    steps=0,
                    batches=(),
                    counters=counters,
                    messages=tuple(messages),
                    error=raised.error,
                )
                yield _Played(outcome, checkpoint, checkpoints[-1] if checkpoints else None)
                continue
            trainer = built
        else:
            if call.set_max_epochs is not None:
                trainer.max_epochs = call.set_max_epochs
            if call.set_max_steps is not None:
                trainer.max_steps = call.set_max_steps
            if call.set_limit_train_batches is not None:
                trainer.limit_train_batches = call.set_limit_train_batches
        loader = _Loader(
            kind=call.loader,
            data=call.data,
            batch_size=call.batch_size,
            drop_last=call.drop_last,
            world_size=trainer.world_size,
            shuffled=trainer.strategy == "ddp" and trainer.use_distributed_sampler,
        )
        trainer.loader = None  # attach_data: the fit loop's combined loader is replaced
        fit = _Fit(
            trainer=trainer,
            loader=loader,
            checkpoints=checkpoints,
            messages=messages,
            scheduler=call.scheduler,
        )
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
        outcome = CallOutcome(
            steps=len(fit.steps),
            batches=tuple(fit.steps),
            counters=trainer.counters(),
            messages=tuple(messages),
            error=error,
            crashed=crashed,
            rates=_known(fit.rates) if call.scheduler is not None else (),
        )
        yield _Played(outcome, checkpoint, checkpoints[-1] if checkpoints else None, fit.total)


def _known(rates: Sequence[float | None]) -> tuple[float, ...]:
    """The rates of a call's steps, or none when the profile does not know one of them."""
    known = tuple(rate for rate in rates if rate is not None)
    return known if len(known) == len(rates) else ()


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
    accumulation (they belong to the Trainer). A ``[schedule]`` is written a fit at a time, as the
    transformers warmup schedule each fit's ``configure_optimizers`` returns (Lightning builds a
    new scheduler at every fit): over ``trainer.estimated_stepping_batches`` where that is the
    fit's length, else over the length written out.
    """
    plan = make_plan(scenario.config, scenario.calls)
    calls: list[Call] = []
    notes: list[str] = []
    limit = None  # the limit_train_batches in force on the trainer
    first_sharding = scenario.calls[0].loader.sharding if scenario.calls else None
    built = (
        (1, 1)
        if first_sharding is None
        else (first_sharding.world_size, first_sharding.accumulation)
    )
    for step in steps_of(scenario, data, "Lightning"):
        sharding = step.call.loader.sharding
        batch_size = step.batch_size if sharding is None else sharding.device_batch_size
        geometry = (1, 1) if sharding is None else (sharding.world_size, sharding.accumulation)
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
        epochs, steps, fraction = _limits(step, plan.segments[step.index].start)
        wanted = fraction if fraction is not None else 1.0
        if step.index == 0:
            first, note = _first_fit(step, batch_size, epochs, steps, fraction)
            calls.append(first)
            notes.append(note)
        else:
            changes = wanted != (limit or 1.0)
            calls.append(
                Call(
                    data=step.data,
                    batch_size=batch_size,
                    fresh=False,
                    set_max_epochs=epochs,
                    set_max_steps=steps,
                    set_limit_train_batches=wanted if changes else None,
                )
            )
            written = [f"fit_loop.max_epochs = {epochs}", f"epoch_loop.max_steps = {steps}"]
            if changes:
                written.append(f"limit_train_batches = {wanted}")
            notes.append("; ".join(written) + f"; fit(model, <{step.call.loader.name}>)")
        limit = wanted
    schedule = ""
    if scenario.schedule is not None:
        calls, schedule = _scheduled(scenario, plan, calls)
    first = attrs.evolve(calls[0], resume_latest=True)
    return Translation(
        calls=tuple(calls),
        rerun=(first, *calls[1:]),
        notes=tuple(notes),
        crash_on="fresh",
        schedule=schedule,
    )


def _scheduled(scenario: Scenario, plan: Plan, calls: list[Call]) -> tuple[list[Call], str]:
    """``calls`` with each fit's part of the scenario's schedule as the scheduler its
    ``configure_optimizers`` returns, and how it was written (or why it could not be).
    Lightning calls ``configure_optimizers`` at every fit, so each fit's scheduler starts at 0:
    the schedule is written a fit at a time (``shapes(per="call")``)."""
    if calls[0].strategy == "ddp":
        return calls, (
            "not modelled: no run of a learning-rate scheduler under strategy='ddp' was recorded"
        )
    try:
        parts = shapes(scenario, plan, per="call")
        schedulers = [
            _scheduler(shape, call, first=index == 0)
            for index, (shape, call) in enumerate(zip(parts, calls, strict=True))
        ]
    except Unsupported as why:
        return calls, f"cannot be written: {why}"
    written = "; ".join(
        f"fit #{index}: {scheduler.written()}" for index, scheduler in enumerate(schedulers)
    )
    note = (
        'configure_optimizers returns {"optimizer": SGD(...), "lr_scheduler": {"scheduler": S, '
        f'"interval": "step"}}}}, S being {written} (Lightning calls configure_optimizers at '
        "every fit, so each fit's scheduler starts again at 0)"
    )
    scheduled = [
        attrs.evolve(call, scheduler=scheduler)
        for call, scheduler in zip(calls, schedulers, strict=True)
    ]
    return scheduled, note


def _scheduler(shape: Shape, call: Call, *, first: bool) -> Scheduler:
    """One fit's part of the schedule as the transformers schedule a user writes: learning rate
    ``peak`` times the base, warmup, decay to ``floor / peak``, over the fit's steps
    (``trainer.estimated_stepping_batches`` where that is the fit's length: only the first fit's
    limits count from 0)."""
    peak, floor = shape.peak, shape.floor
    decay = shape.decay
    if peak < 0 or floor < 0:
        raise Unsupported(f"a fit's part goes below 0 ({peak} to {floor})")
    if peak == 0 and floor != 0:
        raise Unsupported(
            f"a fit's part goes from 0 to {floor}: the schedulers multiply the optimizer's "
            "learning rate, which would be 0"
        )
    if decay != "constant" and floor == peak:
        decay = "constant"
    if decay == "linear" and floor > peak:
        raise Unsupported(
            f"a linear rise from {peak} to {floor}: get_polynomial_decay_schedule_with_warmup "
            "takes an end learning rate below the optimizer's"
        )
    total: int | None = shape.steps
    if first and _first_fit_estimate(call) == shape.steps:
        total = None
    return Scheduler(
        decay=decay,
        warmup=shape.warmup,
        floor=float(shape.floor_ratio),
        lr=float(peak),
        total=total,
    )


def _first_fit_estimate(call: Call) -> int | float | None:
    """``trainer.estimated_stepping_batches`` in the first fit of ``call``'s fresh Trainer (None
    when its limits are refused)."""
    try:
        limit = _determine_batch_limits(call.limit_train_batches, [])
    except _LightningError:
        return None
    if call.max_epochs is None:
        max_epochs: int | float = 1000 if call.max_steps == -1 else -1
    else:
        max_epochs = call.max_epochs
    loader = _Loader(kind=call.loader, data=call.data, batch_size=call.batch_size)
    try:
        batches = _parse_num_batches(len(loader), limit) if limit != 0 else math.inf
    except _LightningError:
        return None
    return _estimated_stepping_batches(
        max_epochs, call.max_steps, batches, call.accumulate_grad_batches
    )


def _limits(step: Step, start: Progress) -> tuple[int | None, int, float | None]:
    """A call's request as the absolute limits Lightning takes (``max_epochs``, ``max_steps``,
    ``limit_train_batches``), from where the plan says the call starts."""
    request = step.request
    if request.unit is not Unit.EP:
        base = start.batch if step.kind == "duration" else 0
        return -1, base + step.steps(), None
    value = request.value
    base = start.epoch if step.kind == "duration" else 0
    if value == int(value):
        return base + int(value), -1, None
    if step.kind == "duration" and value < 1 and start.sample_in_epoch == 0:
        return base + 1, -1, float(value)
    raise Unsupported(
        f"max_epochs is a whole number; {request} can be written only as a part of one new "
        "epoch (limit_train_batches)"
    )


def _first_fit(
    step: Step, batch_size: int, epochs: int | None, steps: int, fraction: float | None
) -> tuple[Call, str]:
    """The first call: the Trainer is built with the limits (and, for a data-parallel loader,
    its devices and accumulation), and how a user writes it."""
    sharding = step.call.loader.sharding
    ddp: dict[str, Any] = {}
    if sharding is not None:
        ddp = {
            "strategy": "ddp",
            "world_size": sharding.world_size,
            "accumulate_grad_batches": sharding.accumulation,
        }
    call = Call(
        data=step.data,
        batch_size=batch_size,
        max_epochs=epochs,
        max_steps=steps,
        limit_train_batches=fraction,
        save_every=1,
        **ddp,
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
    return call, note
