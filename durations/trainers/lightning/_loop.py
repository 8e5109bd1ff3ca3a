"""``Trainer.fit``'s loops as Lightning 2.6.6 runs them: the fit loop and the training epoch
loop with their restart bookkeeping, ``ModelCheckpoint``'s saves and ``ckpt_path``'s restore
(the Lightning profile's loops and checkpointing; private)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import attrs

from .._outcome import Ids, TrainerError, joined
from ._data import _ExhaustedError, _Fetcher, _Loader, _LoaderState
from ._progress import _Progress, _Stage
from ._schedule import Scheduler, _LambdaLR, _SchedulerState

if TYPE_CHECKING:
    from . import Call

Strategy = Literal["auto", "ddp"]


class _LightningError(Exception):
    """Lightning raised ``type`` with ``message`` (internal control flow)."""

    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.error = TrainerError(type=type_, message=message)


class _CrashError(Exception):
    """The simulated process died at a batch start (internal control flow)."""


def _misconfiguration(message: str) -> _LightningError:
    return _LightningError("MisconfigurationException", message)


# --- checkpoints --------------------------------------------------------------------------------


@attrs.frozen
class _Checkpoint:
    """What a Lightning ``.ckpt`` file carries that matters for durations."""

    epoch: int
    global_step: int
    epoch_progress: _Progress
    batch_progress: _Progress
    loader_state: _LoaderState | None
    #: The ``state_key`` of every callback whose state the checkpoint holds (``"callbacks"``).
    callbacks: tuple[str, ...] = ()
    #: The optimizer's learning rate and the ``LambdaLR`` state (``"lr_schedulers"``), when the
    #: fit that saved it had a scheduler the profile models.
    scheduler: _SchedulerState | None = None


def _model_checkpoint_key(every_n_train_steps: int) -> str:
    """``ModelCheckpoint(every_n_train_steps=k, save_top_k=-1).state_key``
    (``callbacks/model_checkpoint.py:313``): its class name and trigger settings; with
    ``every_n_train_steps`` given, ``every_n_epochs`` is 0."""
    settings = {
        "monitor": None,
        "mode": "min",
        "every_n_train_steps": every_n_train_steps,
        "every_n_epochs": 0,
        "train_time_interval": None,
    }
    return f"ModelCheckpoint{settings!r}"


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


def _estimated_stepping_batches(
    max_epochs: int | float, max_steps: int, batches: int | float, accumulate_grad_batches: int
) -> int | float:
    """``Trainer.estimated_stepping_batches`` (``trainer/trainer.py:1748``) once the data is set
    up with ``batches`` per epoch: the whole fit's optimizer steps."""
    if max_epochs == -1:
        return math.inf if max_steps == -1 else max_steps
    if batches == math.inf:
        return max_steps
    estimated = math.ceil(batches / accumulate_grad_batches) * max(max_epochs, 1)
    return min(estimated, max_steps) if max_steps != -1 else estimated


@attrs.define
class _Trainer:
    """The state a ``pl.Trainer`` object keeps between ``fit`` calls."""

    max_epochs: int | float | None
    max_steps: int
    limit_train_batches: int | float
    accumulate_grad_batches: int
    save_every: int | None
    crash_at: int | None
    strategy: Strategy = "auto"
    world_size: int = 1
    use_distributed_sampler: bool = True
    #: The ``state_key`` of each callback with a state (only a ``ModelCheckpoint`` has one).
    callbacks: tuple[str, ...] = ()
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
    #: The optimizer and scheduler the current fit's ``configure_optimizers`` built (None
    #: without a scheduler the profile models).
    lr_scheduler: _LambdaLR | None = None

    @classmethod
    def build(cls, call: Call, messages: list[str]) -> _Trainer:
        """``Trainer.__init__``: the validation and messages it emits."""
        if isinstance(call.max_epochs, int) and call.max_epochs < -1:  # not a float
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
            callbacks=() if call.save_every is None else (_model_checkpoint_key(call.save_every),),
        )

    @property
    def current_epoch(self) -> int:
        return self.epoch_progress.current.completed

    def counters(self) -> dict[str, int | float | None]:
        return {
            "global_step": self.global_step,
            "current_epoch": self.current_epoch,
            **self.epoch_progress.counters("epoch_progress"),
            **self.batch_progress.counters("batch_progress"),
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
            callbacks=self.callbacks,
            scheduler=None if self.lr_scheduler is None else self.lr_scheduler.state(),
        )


@attrs.define
class _Fit:
    """One ``trainer.fit`` call on ``trainer``: the loops of ``fit_loop.py`` and
    ``training_epoch_loop.py``, with what it records."""

    trainer: _Trainer
    loader: _Loader
    checkpoints: list[_Checkpoint]
    messages: list[str]
    #: What ``configure_optimizers`` returns this fit (None: an optimizer alone).
    scheduler: Scheduler | None = None
    steps: list[Ids] = attrs.field(factory=list)
    #: The learning rate of each step (None where the profile does not know it).
    rates: list[float | None] = attrs.field(factory=list)
    #: The ``num_training_steps`` the scheduler was built with.
    total: float | None = None
    pending: list[Ids] = attrs.field(factory=list)
    fetcher: _Fetcher | None = None
    #: Whether ``setup_data`` has set up this fit's loader (``_combined_loader`` is not None).
    data_ready: bool = False

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
        try:
            if checkpoint is not None:
                self.restore_callbacks(checkpoint)
            self.configure_optimizers()
            if checkpoint is not None:
                self.restore(checkpoint)
                if t.lr_scheduler is not None:  # restore_optimizers_and_schedulers
                    t.lr_scheduler.load(checkpoint.scheduler)
            self.fit_loop_run()
        finally:  # Trainer._teardown -> CombinedLoader.reset drops the loader's iterator
            self.loader.iterator = None

    def restore_callbacks(self, checkpoint: _Checkpoint) -> None:
        """``_restore_modules_and_callbacks``: warn about callbacks the checkpoint has a state
        for and the Trainer lacks."""
        t = self.trainer
        missing = [key for key in checkpoint.callbacks if key not in t.callbacks]
        if missing:
            self.messages.append(
                "UserWarning: Be aware that when using `ckpt_path`, callbacks used to create the "
                "checkpoint need to be provided during `Trainer` instantiation. Please add the "
                f"following callbacks: {missing}."
            )

    def configure_optimizers(self) -> None:
        """``Strategy.setup`` -> ``configure_optimizers``, at every fit: a new optimizer and,
        with a scheduler, a new ``LambdaLR`` over ``total`` or the estimated stepping batches."""
        t = self.trainer
        t.lr_scheduler = None
        if self.scheduler is None:
            return
        total = self.scheduler.total
        self.total = total if total is not None else self.estimated_stepping_batches()
        try:
            t.lr_scheduler = _LambdaLR.build(self.scheduler, self.total)
        except ZeroDivisionError as raised:
            raise _LightningError("ZeroDivisionError", str(raised)) from None

    def estimated_stepping_batches(self) -> int | float:
        """``Trainer.estimated_stepping_batches``: the whole fit's optimizer steps from its
        limits, setting up the training data first when ``max_epochs`` is not -1."""
        t = self.trainer
        assert t.max_epochs is not None
        if t.max_epochs != -1:
            self.messages.append(
                "Loading `train_dataloader` to estimate number of stepping batches."
            )
            self.setup_data()
        return _estimated_stepping_batches(
            t.max_epochs, t.max_steps, t.max_batches, t.accumulate_grad_batches
        )

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
        if self.data_ready or t.limit_train_batches == 0:
            return
        self.data_ready = True
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
        max_epochs = t.max_epochs
        if not isinstance(max_epochs, int):  # `assert isinstance(self.max_epochs, int)`
            raise _LightningError("AssertionError", "")
        current = t.epoch_progress.current
        if max_epochs != -1 and current.processed >= max_epochs:
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
        self.pending.append(self.loader.ids(start, stop, epoch))  # training_step
        accumulation_done = progress.current.ready % t.accumulate_grad_batches == 0
        stepped = accumulation_done or self.num_ready_batches_reached()
        scheduler = t.lr_scheduler
        if stepped:  # optimizer.step(), at the optimizer's current learning rate
            t.global_step += 1
            self.steps.append(joined(self.pending))
            self.pending.clear()
            self.rates.append(None if scheduler is None else scheduler.lr)
        progress.increment_processed()
        if stepped and scheduler is not None:  # update_lr_schedulers("step")
            try:
                scheduler.step()
            except ZeroDivisionError as raised:
                raise _LightningError("ZeroDivisionError", str(raised)) from None
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
