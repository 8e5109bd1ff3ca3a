"""PyTorch Lightning: a ``Callback`` that makes each ``fit()`` follow the plan.

One ``fit()`` per ``FitCall``, in order, through :meth:`DurationsCallback.fit`::

    callback = DurationsCallback(config, calls, checkpoints="ckpts")
    for call, loader in zip(calls, loaders):
        trainer = pl.Trainer(max_epochs=-1, callbacks=[callback, ModelCheckpoint(...)])
        callback.fit(trainer, model, loader)

The callback stores the durations checkpoint (with the ledger) under the ``"durations"`` key of
every Lightning checkpoint (``on_save_checkpoint``), stops each ``fit()`` at its segment's exact
step (``trainer.should_stop``), saves a checkpoint at the end of every call, and at the first
``fit()`` of a process plans from the newest ``.ckpt`` under ``checkpoints`` (a folder or an
fsspec URL), chosen by recorded progress. ``callback.fit`` then skips finished calls, loading
each one's final weights into the model, resumes the started one with ``ckpt_path`` and gives a
call that starts after a restart the previous call's final weights.

An exact mid-epoch resume needs a loader with ``state_dict``/``load_state_dict``, such as
torchdata's ``StatefulDataLoader``: a plain ``DataLoader`` replays the epoch (checked). The
loader resumes by samples while Lightning counts batches, so a mid-epoch resume at another batch
size is refused (``tests/frameworks/FINDINGS.md`` D4). Unless the call's loader has an order
(``Loader(order=...)``): ``fit`` then rebuilds the ``DataLoader`` it is given around this rank's
:class:`~durations.integrations.torch.OrderSampler`, started at the plan's position, and a
resume is exact at any world size, device batch size or accumulation
(``use_distributed_sampler=False`` required; see ``docs/integrations.md``).

With ``schedule=`` (a :class:`~durations.Schedule`), the callback also supplies each ``fit()``'s
learning-rate scheduler: a ``LambdaLR`` on the run's lifetime steps, resolved on the plan
(:func:`durations.integrations.torch.scheduler`), stepped after every optimizer step, in place
of one from ``configure_optimizers`` (which must then return only the optimizer).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from typing import Any

from ..fit import FitCall, RunConfig
from ..intervals import At, AtCallEnds, Every
from ..loader import Loader
from ..plans import Action, Segment
from ..schedules import OnExtend, ResolvedSchedule, Schedule
from ..sharding import Padding
from . import INSTALL_HINT
from ._session import (
    IntegrationError,
    Session,
    StartKind,
    check_data_parallel,
    created_on_first_use,
    reads_sampler,
    require_registered,
    samples_between,
)
from ._steplog import IndexTap, StepLogWriter, loader_state_counts
from .checkpoints import DURATIONS_KEY, LIGHTNING, _is_url, _torch_load

__all__ = ["DurationsCallback", "IntegrationError"]

#: Created on first use by the module ``__getattr__`` below (the framework is imported then).
DurationsCallback: Any


def _file_name(identity: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", identity.replace("#", "call")).strip("_") or "call"


class _Callback:
    """Enforce a durations plan on Lightning ``Trainer.fit`` calls, one per ``FitCall``.

    ``config`` and ``calls`` are the script's ``RunConfig`` and ``FitCall``s (a loader's
    ``batch_size`` is the global batch per optimizer step). ``checkpoints`` is where the run's
    ``.ckpt`` files are (searched recursively: give ``ModelCheckpoint`` a ``dirpath`` under it);
    the newest by recorded progress is where a re-run of the script resumes. With
    ``save_at_end`` the callback saves ``<checkpoints>/<call>-end.ckpt`` when a call ends, so
    the ledger records it finished.

    Fit with :meth:`fit`, not ``trainer.fit()``: it decides ``ckpt_path`` and skips calls that
    are finished.

    With ``schedule``, every ``fit()`` gets its learning-rate scheduler from the schedule
    resolved on the plan (``on_extend`` as in :meth:`~durations.Schedule.resolve`);
    ``configure_optimizers`` must return one optimizer and no scheduler.

    With ``save_on`` (an :class:`~durations.Every`, :class:`~durations.At` or
    :class:`~durations.AtCallEnds`, or a time string meaning ``Every``), the callback saves
    ``<checkpoints>/<call>-step<k>.ckpt`` after each lifetime step ``k`` of that interval resolved
    on the plan: one grid across calls and restarts, in place of ``ModelCheckpoint``'s count,
    which restarts with every ``fit()``.

    With ``step_log`` (a file path), rank 0 appends a line per optimizer step to it: the
    lifetime step, rank 0's indices (when the loader has an order), the learning rate, and
    each checkpoint the callback saves with its saved loader state; ``durations audit`` checks
    it against the plan (``docs/audits.md``). ``ModelCheckpoint``'s saves are not logged.
    """

    def __init__(
        self,
        config: RunConfig,
        calls: Sequence[FitCall],
        *,
        checkpoints: str | os.PathLike[str],
        save_at_end: bool = True,
        schedule: Schedule | None = None,
        on_extend: OnExtend | str | None = None,
        save_on: Every | At | AtCallEnds | str | None = None,
        step_log: str | os.PathLike[str] | None = None,
    ) -> None:
        if schedule is not None and not isinstance(schedule, Schedule):
            raise TypeError(f"schedule={schedule!r}: expected a durations.Schedule or None")
        #: With ``step_log``, rank 0 appends a line per optimizer step (docs/audits.md).
        self.step_log = None if step_log is None else StepLogWriter(step_log)
        self._rate: float | None = None
        self._saved_state: Any = None  # the loader state of the checkpoint being saved
        self.session = Session(
            config,
            calls,
            checkpoints,
            LIGHTNING,
            save_on=save_on,
            keep_final="save_at_end=True (the default) writes <call>-end.ckpt; do not delete it",
        )
        self.save_at_end = save_at_end
        self.schedule = schedule
        self.on_extend = on_extend
        self._curve: ResolvedSchedule | None = None
        self._active = False
        self._resume_from: str | None = None
        self._sampler: Any = None  # the order's sampler this fit() reads, if any
        self._fresh_count = False
        self._behind = 0

    @property
    def state_key(self) -> str:
        return "DurationsCallback"

    @property
    def lifetime_step(self) -> int:
        """The run's lifetime step count (``Progress.batch``) where training is now."""
        return self.session.lifetime(self._step)

    @property
    def resolved_schedule(self) -> ResolvedSchedule | None:
        """The schedule resolved on this process's plan (``None`` without ``schedule`` or
        before the first ``fit()``): the rate at lifetime step ``k`` is ``.lr(k, base)``."""
        if self._curve is None and self.schedule is not None and self.session.plan is not None:
            self._curve = self.schedule.resolve(self.session.plan, on_extend=self.on_extend)
        return self._curve

    # -- the script's side ---------------------------------------------------------------------

    def fit(self, trainer: Any, model: Any, *args: Any, **kwargs: Any) -> None:
        """Run the script's next fit call: ``trainer.fit(model, *args, **kwargs)`` as the plan
        says, with the ``ckpt_path`` it chooses; nothing for a call that is finished."""
        if "ckpt_path" in kwargs:
            raise TypeError(
                "callback.fit(..., ckpt_path=...): the callback chooses the checkpoint from the "
                "ledger; drop the argument"
            )
        require_registered(self, trainer.callbacks, "pl.Trainer")
        start = self.session.begin()
        if start.kind is StartKind.SKIP:
            if start.restore_from is not None:
                # The weights an uninterrupted run holds when this call returns.
                _load_weights(model, start.restore_from)
            return
        if start.weights_from is not None:
            # The call starts after a restart: the previous call's final weights, as an
            # uninterrupted script would hand them over in memory.
            _load_weights(model, start.weights_from)
        self._sampler = None
        loader = start.segment.loader
        if loader.order is not None or loader.mixture is not None:
            args, kwargs = self._read_order(trainer, start.segment, args, kwargs)
        self._active = True
        self._resume_from = start.resume_from
        self._loader_states = None  # set by on_load_checkpoint when Lightning resumes
        try:
            trainer.fit(model, *args, ckpt_path=start.resume_from, **kwargs)
        finally:
            self._active = False
            self._sampler = None

    def _read_order(
        self, trainer: Any, segment: Segment, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The ``fit`` arguments with the training ``DataLoader`` rebuilt around this rank's
        :class:`~durations.integrations.torch.OrderSampler`, started at the call's first
        position in the plan (Lightning's own ``_update_dataloader``, as it injects its
        ``DistributedSampler``)."""
        from torch.utils.data import DataLoader

        from .torch import OrderSampler

        try:
            from pytorch_lightning.utilities.data import _update_dataloader
        except ImportError:  # the unified package
            from lightning.pytorch.utilities.data import (  # type: ignore[no-redef, unused-ignore]
                _update_dataloader,
            )

        loader, order = segment.loader, segment.loader.order
        read = f"the order {order}" if loader.mixture is None else f"the mixture {loader.mixture}"
        if trainer._accelerator_connector.use_distributed_sampler:
            raise IntegrationError(
                f"call {segment.name!r} reads its loader in {read}, which gives each "
                "rank its part; Lightning would shard it again with a DistributedSampler: use "
                "pl.Trainer(use_distributed_sampler=False)"
            )
        given = args[0] if args else kwargs.get("train_dataloaders")
        if not isinstance(given, DataLoader):
            raise IntegrationError(
                f"call {segment.name!r} reads its loader in {read}: pass its training "
                "DataLoader to callback.fit(trainer, model, loader), not "
                f"{type(given).__name__}, so the callback can give it the order's sampler"
            )
        size = len(given.dataset) if hasattr(given.dataset, "__len__") else None  # type: ignore[arg-type, unused-ignore]
        wanted = loader.samples if loader.mixture is None else loader.mixture.size
        if size != wanted:
            what = (
                f"loader {loader.samples}"
                if loader.mixture is None
                else f"mixture's sources {wanted} together (a ConcatDataset of them, in the "
                "mixture's order)"
            )
            raise IntegrationError(
                f"call {segment.name!r}: the training dataset has {size} samples, the plan's "
                f"{what}; make them agree"
            )
        sampler: Any = OrderSampler(order, loader, rank=trainer.global_rank, for_framework=True)
        sampler.start_at(segment)
        if self.step_log is not None:
            sampler = IndexTap(sampler)  # this rank's indices
        rebuilt = _update_dataloader(given, sampler)
        self._sampler = sampler
        if args:
            return (rebuilt, *args[1:]), kwargs
        return args, {**kwargs, "train_dataloaders": rebuilt}

    # -- Lightning's side ---------------------------------------------------------------------

    _step = 0
    _loader_states: Any = None

    def on_load_checkpoint(self, trainer: Any, pl_module: Any, checkpoint: dict[str, Any]) -> None:
        if not self._active:
            return
        loops = checkpoint.get("loops", {}).get("fit_loop", {}).get("state_dict", {})
        self._loader_states = loops.get("combined_loader") if isinstance(loops, dict) else None
        if self._sampler is not None and isinstance(loops, dict):
            # The order's sampler starts where the plan does: no saved loader position applies.
            loops["combined_loader"] = []
            self._loader_states = None
        segment = self.session.segment
        saved = None if segment is None else self.session.saved_loader(segment.name)
        if (
            segment is not None
            and segment.action is Action.RESUME
            and not segment.start.at_epoch_start
            and saved is not None
            and saved.batch_size != segment.loader.batch_size
            and self._sampler is None
        ):
            # Refused here, before Lightning restores the loader state (FitLoop.setup_data),
            # which at more processes can overrun a rank's share and fail inside torchdata.
            _check_resumed_epoch(segment, saved, None, trainer.accumulate_grad_batches)
        if segment is not None and segment.start.at_epoch_start and _positions_only(loops):
            # The saved state is the ended epoch's, all read (FINDINGS LR6): restored, it yields
            # nothing of the next epoch, or at more processes overruns the shorter rank share
            # (StopIteration inside torchdata). It holds no sampler or data set state, so the
            # next epoch starts fresh, from the sampler's order for that epoch.
            loops["combined_loader"] = []
        found = self.session.found
        stored = checkpoint.get(DURATIONS_KEY)
        if found is not None and self._resume_from == found.path and isinstance(stored, dict):
            progress = stored.get("progress", {}).get("batch")
            if progress != found.checkpoint.progress.batch:
                raise IntegrationError(
                    f"Lightning loaded a checkpoint at lifetime step {progress}, the plan "
                    f"resumes at {found.checkpoint.progress.batch} ({found.path})"
                )

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        """Supply the call's scheduler: after Lightning has run ``configure_optimizers`` and
        before it restores a checkpoint's scheduler state (whose count is a lifetime step)."""
        if not self._active or self.schedule is None:
            return
        from pytorch_lightning.utilities.types import LRSchedulerConfig

        from .torch import _scheduler_class, scheduler

        segment = self.session.current()
        strategy = trainer.strategy
        ours = _scheduler_class()
        if any(not isinstance(c.scheduler, ours) for c in strategy.lr_scheduler_configs):
            raise IntegrationError(
                f"call {segment.name!r}: configure_optimizers returned a scheduler and the "
                "callback has a schedule: return only the optimizer"
            )
        if len(strategy.optimizers) != 1:
            raise IntegrationError(
                f"call {segment.name!r}: the schedule drives one optimizer, configure_optimizers "
                f"returned {len(strategy.optimizers)}"
            )
        curve = self.resolved_schedule
        assert curve is not None
        made = scheduler(strategy.optimizers[0], curve, step=segment.start.batch)
        strategy.lr_scheduler_configs = [LRSchedulerConfig(made, interval="step")]

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if not self._active:
            raise IntegrationError(
                "trainer.fit() was called directly: run each fit call with "
                "callback.fit(trainer, model, loader) so finished calls are skipped and a "
                "started one resumes"
            )
        segment = self.session.current()
        loader = segment.loader
        self._step = trainer.global_step
        self.session.attach(trainer.global_step)
        needed = segment.stop.batch - self.session.offset
        max_steps = trainer.max_steps
        if max_steps not in (-1, None) and max_steps < needed:
            raise IntegrationError(
                f"call {segment.name!r} needs Lightning to allow {needed} steps but "
                f"max_steps={max_steps}: use max_steps=-1 (the callback stops the call)"
            )
        max_epochs = trainer.max_epochs
        if max_epochs not in (-1, None):
            raise IntegrationError(
                f"call {segment.name!r}: max_epochs={max_epochs} would fight the plan "
                "(Lightning counts epochs of each fit's own loader): use "
                "pl.Trainer(max_epochs=-1); the callback stops the call at the plan's step"
            )
        accumulate = trainer.accumulate_grad_batches
        world = int(getattr(trainer, "world_size", 1) or 1)
        if world > 1 or loader.sharding is not None:
            # Lightning wraps the loader's sampler in DistributedSampler(drop_last=False).
            dataloader = trainer.train_dataloader
            device_batch = getattr(dataloader, "batch_size", None)
            drop_last = getattr(dataloader, "drop_last", loader.drop_last)
            batch_sampler = getattr(dataloader, "batch_sampler", None)
            if device_batch is None and batch_sampler is not None:
                # A StatefulDataLoader comes back from Lightning built around a batch sampler
                # (torchdata's BatchSampler is not torch's), so the loader itself says
                # batch_size=None, drop_last=False; the batch sampler holds both.
                device_batch = getattr(batch_sampler, "batch_size", None)
                drop_last = getattr(batch_sampler, "drop_last", drop_last)
            sharding = loader.sharding
            if device_batch is None and sharding is not None:
                device_batch = sharding.device_batch_size
            # The sampler that shards: Lightning's own DistributedSampler(drop_last=False), or
            # the script's (use_distributed_sampler=False), whose drop_last cuts the tail.
            sampler = getattr(batch_sampler, "sampler", None) or getattr(
                dataloader, "sampler", None
            )
            cuts = bool(getattr(sampler, "drop_last", False)) and hasattr(sampler, "num_replicas")
            padding = Padding.DROP if cuts else Padding.REPEAT
            if self._sampler is not None and sharding is not None:
                padding = sharding.padding  # the order's sampler evens as the loader says
            check_data_parallel(
                segment,
                framework="Lightning",
                world_size=world,
                device_batch_size=int(device_batch or loader.batch_size),
                accumulation=accumulate,
                padding=padding,
                drop_last=bool(drop_last),
            )
        batches = trainer.num_training_batches
        if isinstance(batches, int) and loader.steps_per_epoch is not None:
            steps = -(-batches // accumulate)
            if steps != loader.steps_per_epoch:
                raise IntegrationError(
                    f"call {segment.name!r}: Lightning has {batches} batches per epoch "
                    f"(accumulate_grad_batches={accumulate}), {steps} optimizer steps; the "
                    f"plan's loader has {loader.steps_per_epoch} "
                    f"(samples={loader.samples}, batch_size={loader.batch_size}); make them agree"
                )
        if self._sampler is not None:
            self._check_sampler(trainer.train_dataloader, segment.name)
            # Batches of a whole epoch's share before the call's first: the sampler yields the
            # rest, and Lightning counts toward the whole share (on_train_batch_start).
            first = segment.start.normalized(loader)
            rest = loader.samples_left_in_epoch(first.sample_in_epoch)
            world, device = _world(loader)
            if loader.sharding is None:  # one process: a step is its accumulated micro-batches
                device = max(1, loader.batch_size // accumulate)
            self._behind = (
                int(batches) - -(-rest // (world * device)) if isinstance(batches, int) else 0
            )
            self._fresh_count = True
            self._check_schedule(trainer, segment)
            return
        mid_epoch = not segment.start.at_epoch_start
        if mid_epoch:
            loaders = trainer.fit_loop._combined_loader
            flattened = [] if loaders is None else loaders.flattened
            if not all(hasattr(item, "state_dict") for item in flattened):
                raise IntegrationError(
                    f"call {segment.name!r} resumes {segment.start.sample_in_epoch} samples into "
                    "an epoch, but its DataLoader has no state_dict(): Lightning would replay the "
                    "epoch from its start. Use torchdata.stateful_dataloader.StatefulDataLoader"
                )
        saved = self.session.saved_loader(segment.name)
        if (
            segment.action is Action.RESUME
            and saved is not None
            and saved.batch_size != loader.batch_size
        ):
            _check_resumed_epoch(segment, saved, batches, accumulate)
        if segment.action is Action.RESUME and segment.start.epoch > segment.entry.start.epoch:
            _resume_sampler_epoch(trainer, segment, self._loader_states)
        self._check_schedule(trainer, segment)

    def _check_sampler(self, dataloader: Any, name: str) -> None:
        """The training dataloader must read the order's sampler (Lightning could have built
        another one, from a datamodule or a ``train_dataloader`` hook)."""
        if reads_sampler(dataloader, self._sampler):
            return
        raise IntegrationError(
            f"call {name!r}: Lightning's training dataloader does not read the sampler of the "
            "loader's order (a datamodule's or the model's train_dataloader): it would read "
            "another order than the plan's; pass the DataLoader to callback.fit"
        )

    def on_train_batch_start(self, trainer: Any, pl_module: Any, *args: Any) -> None:
        """With the order's sampler, count the call's first epoch from where it starts.

        The sampler yields the rest of the epoch from the plan's position, at this geometry;
        Lightning restored the batch count the checkpoint's run had read of it, at that run's
        geometry, and would group the accumulated micro-batches and end the epoch by it
        (FINDINGS D4, LR3). Lightning 2.6.6 knows an epoch's last batch by the batches fetched
        reaching the length it took once (a whole epoch's share), not by the data running out
        (fetchers.py 67-69), and steps an incomplete group only there. So at the first batch:
        the batch count restarts at 1 (groups from the call's start, as the plan's steps), and
        the fetched count is the share's batches before the call's first plus 1 (the last
        batch of the rest is the epoch's last).
        """
        if self.step_log is not None and trainer.optimizers:
            self._rate = float(trainer.optimizers[0].param_groups[0]["lr"])  # this step's rate
        if not self._fresh_count:
            return
        self._fresh_count = False
        progress = trainer.fit_loop.epoch_loop.batch_progress
        current = progress.current
        current.ready, current.started, current.processed, current.completed = 1, 0, 0, 0
        fetcher = trainer.fit_loop._data_fetcher
        length = getattr(fetcher, "length", None)
        if fetcher is not None and isinstance(length, int):
            # Lightning knows an epoch's last batch by the count fetched reaching the length it
            # took (a whole share), not by the data running out: count the share's batches
            # before the call's first as fetched, so the rest's last batch is the last.
            fetcher.fetched = self._behind + 1
            fetcher.done = fetcher.fetched >= length
            progress.is_last_batch = fetcher.done

    def _check_schedule(self, trainer: Any, segment: Segment) -> None:
        if self.schedule is not None:
            configs = trainer.lr_scheduler_configs
            count = configs[0].scheduler.last_epoch if configs else segment.start.batch
            if count != segment.start.batch:
                raise IntegrationError(
                    f"call {segment.name!r} resumes at lifetime step {segment.start.batch}, but "
                    f"the scheduler state restored from the checkpoint counts {count} steps: "
                    "the checkpoint was written by a run with another scheduler. Resume with "
                    "the scheduler that run used, or start the run again with the schedule"
                )

    def on_train_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
        stepped = trainer.global_step != self._step  # an optimizer step ended with this batch
        self._step = trainer.global_step
        stop = self.session.should_stop(trainer.global_step)
        if stepped:
            self._log_step(trainer)
        if (
            stepped
            and self.session.save_due(trainer.global_step)
            and not (stop and self.save_at_end)
        ):
            segment = self.session.current()
            lifetime = self.session.lifetime(trainer.global_step)
            path = self._path(f"{_file_name(segment.name)}-step{lifetime}.ckpt")
            trainer.save_checkpoint(path)
            self._log_checkpoint(trainer, path)
        if stop:
            trainer.should_stop = True

    def _log_step(self, trainer: Any) -> None:
        """The step log's line of the step that just ended (rank 0)."""
        if self.step_log is None or not trainer.is_global_zero:
            return
        configs = trainer.lr_scheduler_configs if self.schedule is not None else []
        bases = getattr(configs[0].scheduler, "base_lrs", None) if configs else None
        self.step_log.header(float(bases[0]) if bases else None)
        segment = self.session.current()
        loader = segment.loader
        indices = None
        if isinstance(self._sampler, IndexTap):
            sharding = loader.sharding
            share = loader.batch_size if sharding is None else sharding.device_batch_size
            share *= 1 if sharding is None else sharding.accumulation
            indices = {"0": self._sampler.take(share)}
        self.step_log.step(
            self.session.lifetime(trainer.global_step),
            loader=loader.name,
            indices=indices,
            lr=self._rate,
        )

    def _log_checkpoint(self, trainer: Any, path: str) -> None:
        """The step log's line of the checkpoint just saved at ``path`` (rank 0)."""
        if self.step_log is not None and trainer.is_global_zero:
            self.step_log.checkpoint(
                self.session.lifetime(trainer.global_step),
                path=path,
                loader_state=self._saved_state,
            )

    def _path(self, name: str) -> str:
        root = self.session.checkpoints
        return posixpath.join(root, name) if _is_url(root) else os.path.join(root, name)

    def on_save_checkpoint(self, trainer: Any, pl_module: Any, checkpoint: dict[str, Any]) -> None:
        if self.session.segment is None:
            return
        data = self.session.checkpoint_dict(trainer.global_step)
        loops = checkpoint.get("loops", {}).get("fit_loop", {}).get("state_dict", {})
        if isinstance(loops, dict) and not loops.get("combined_loader") and self._sampler is None:
            # A plain DataLoader: its position is not saved (the order's sampler starts at the
            # checkpoint's position: the position is the loader's state).
            data["loader_state"] = False
        if self.step_log is not None:
            self._saved_state = loader_state_counts(loops.get("combined_loader"))
        if data["progress"]["sample_in_epoch"] > 0:
            _repair_epoch_progress(checkpoint)
        checkpoint[DURATIONS_KEY] = data

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self.session.check_reached_stop(
            "Lightning",
            trainer.global_step,
            "remove what stopped it (max_epochs, max_steps, limit_train_batches, EarlyStopping, "
            "a loader that ran out)",
        )
        segment = self.session.current()
        if self.save_at_end:
            path = self._path(f"{_file_name(segment.name)}-end.ckpt")
            trainer.save_checkpoint(path)
            self._log_checkpoint(trainer, path)


def _load_weights(model: Any, path: str) -> None:
    """Load the weights of the ``.ckpt`` at ``path`` into ``model``. Lightning creates the
    optimizers afresh at every ``fit()`` (``configure_optimizers``), so the weights are all an
    uninterrupted script carries from one call to the next."""
    model.load_state_dict(_torch_load(path)["state_dict"])


def _world(loader: Loader) -> tuple[int, int]:
    """Processes and per-device batch of ``loader`` (one process for a global stream)."""
    if loader.sharding is None:
        return 1, loader.batch_size
    return loader.sharding.world_size, loader.sharding.device_batch_size


def _check_resumed_epoch(segment: Segment, saved: Loader, batches: Any, accumulate: int) -> None:
    """Refuse a resume at another batch size (another world size) where Lightning would read
    other samples than the plan, naming them.

    Mid-epoch, every rank takes up the ``StatefulDataLoader`` state rank 0 saved: it skips
    the samples one rank had read, ``p / W`` of position ``p``, which at ``W'`` ranks is
    position ``p * W' / W``; and Lightning counts the epoch in batches (FINDINGS D4). At an
    epoch boundary, Lightning takes the saved batch count ``c`` of the epoch that ended as
    the new epoch's and, when ``c`` is below the new count ``L'``, reads only its first
    ``L' - c`` batches (FINDINGS LR1, LR3).
    """
    loader, here = segment.loader, segment.start
    world, device = _world(loader)
    old_world, old_device = _world(saved)
    if saved.sharding is None:
        old_device = max(1, saved.batch_size // accumulate)
    samples = loader.samples
    fix = (
        f"resume at batch size {saved.batch_size}"
        + (f" ({old_world} processes of {old_device} per device)" if saved.sharding else "")
        + ", the one the call was saved at"
    )
    if not here.at_epoch_start:
        per_rank = here.sample_in_epoch // old_world
        resumes, planned = (here.epoch, per_rank * world), (here.epoch, here.sample_in_epoch)
        share = None if samples is None else -(-samples // world)
        if share is not None and per_rank > share:
            raise IntegrationError(
                f"call {segment.name!r} resumes mid-epoch at batch size {loader.batch_size} "
                f"({world} of {device} per device), saved at {saved.batch_size} ({old_world} "
                f"of {old_device}): every rank's StatefulDataLoader would take up the "
                f"{per_rank} samples rank 0 had read, more than a rank's {share} at {world} "
                "processes, and the resume would stop inside torchdata (StopIteration), "
                f"before sample {here.sample_in_epoch} of epoch {here.epoch} where the plan "
                f"resumes (FINDINGS D4). Either {fix}, or resume from an epoch boundary"
            )
        if samples is None or resumes == planned:
            what = "Lightning counts the epoch in the saved batches and would end it elsewhere"
        elif resumes < planned:
            what = f"{samples_between(resumes, planned, samples)} would be trained again"
        else:
            what = f"{samples_between(planned, resumes, samples)} would never be trained"
        raise IntegrationError(
            f"call {segment.name!r} resumes mid-epoch at batch size {loader.batch_size} "
            f"({world} of {device} per device), saved at {saved.batch_size} ({old_world} of "
            f"{old_device}): every rank's StatefulDataLoader takes up the {per_rank} samples "
            f"rank 0 had read, so Lightning would resume at sample {resumes[1]} of epoch "
            f"{here.epoch}, the plan at sample {here.sample_in_epoch}: {what} (FINDINGS D4). "
            f"Either {fix}, or resume from an epoch boundary"
        )
    if not isinstance(batches, int) or saved.samples_per_epoch is None or samples is None:
        return
    per_rank_epoch = -(-saved.samples_per_epoch // old_world)
    counted = -(-per_rank_epoch // old_device)
    if counted >= batches:
        return  # Lightning starts the new epoch's batch count at 0: exact
    read = min((batches - counted) * world * device, samples)
    raise IntegrationError(
        f"call {segment.name!r} resumes at the start of epoch {here.epoch} at batch size "
        f"{loader.batch_size} ({world} of {device} per device), saved at {saved.batch_size} "
        f"({old_world} of {old_device}): Lightning would count {counted} of the epoch's "
        f"{batches} batches as read (the saved epoch's count) and end it after "
        f"{batches - counted}: "
        f"{samples_between((here.epoch, read), (here.epoch + 1, 0), samples)} would never be "
        f"trained (FINDINGS LR3). Either {fix}, or resume at a world size with at most "
        f"{counted} batches per epoch"
    )


def _resume_sampler_epoch(trainer: Any, segment: Segment, states: Any) -> None:
    """Resume past the call's first epoch through a ``DistributedSampler`` on that epoch's order.

    Lightning 2.6.6 builds the resumed epoch's iterator in ``FitLoop.setup_data`` (fit_loop.py
    270-276: the loader states are loaded, then ``iter(self._data_fetcher)``), before it sets
    the sampler's epoch (``on_advance_start``, fit_loop.py 443-445). A ``StatefulDataLoader``
    restored there fast-forwards a ``DistributedSampler``, whose ``__iter__`` draws its order
    at once, still at epoch 0: the resumed epoch reads the call's first epoch's order
    (FINDINGS LR5). At an epoch boundary the restored state is the ended epoch's, all read, and
    the next epoch yields nothing. So, before the first batch: set every such sampler to the
    epoch Lightning counts, load the saved loader state again (mid-epoch) or none (at the
    boundary: a fresh epoch), and build the iterator again.
    """
    loop = trainer.fit_loop
    combined = getattr(loop, "_combined_loader", None)
    fetcher = getattr(loop, "_data_fetcher", None)
    samplers = [
        sampler
        for dataloader in ([] if combined is None else combined.flattened)
        for sampler in _samplers(dataloader)
        if callable(getattr(sampler, "set_epoch", None))
    ]
    if not samplers:
        return
    epoch = loop.epoch_progress.current.processed
    planned = segment.start.epoch - segment.entry.start.epoch
    mid_epoch = not segment.start.at_epoch_start
    if combined is None or fetcher is None or epoch != planned or (mid_epoch and not states):
        raise IntegrationError(
            f"call {segment.name!r} resumes at sample {segment.start.sample_in_epoch} of its "
            f"epoch {planned} through a DistributedSampler, and Lightning is at epoch {epoch}"
            + (" without a saved loader state" if mid_epoch and not states else "")
            + ": it would read another epoch's order than the plan. Resume from a checkpoint "
            "the callback wrote, with the StatefulDataLoader the call was saved with"
        )
    for sampler in samplers:
        sampler.set_epoch(epoch)
    if mid_epoch:
        combined._load_state_dicts(states)
    iter(fetcher)


def _positions_only(loops: Any) -> bool:
    """Whether the saved loader states hold nothing but read positions: no sampler, data set
    or fetcher state (a ``StatefulDataLoader`` over a ``DistributedSampler``, whose order
    comes from its seed and epoch)."""
    states = loops.get("combined_loader") if isinstance(loops, dict) else None
    if not isinstance(states, list) or not states:
        return False
    keys = ("_index_sampler_state", "dataset_state", "fetcher_state")
    return all(
        isinstance(state, dict) and all(state.get(k) is None for k in keys) for state in states
    )


def _samplers(dataloader: Any) -> list[Any]:
    """The samplers of ``dataloader`` whose order Lightning sets with ``set_epoch``."""
    found = [getattr(dataloader, "sampler", None)]
    found.append(getattr(getattr(dataloader, "batch_sampler", None), "sampler", None))
    unique = {id(item): item for item in found if item is not None}
    return list(unique.values())


def _repair_epoch_progress(checkpoint: dict[str, Any]) -> None:
    """Count a mid-epoch checkpoint's running epoch as started and not ended.

    Lightning 2.6.6, resumed from a checkpoint at an epoch's last step, counts the epoch that
    ended as processed and completed (``FitLoop.reset``, fit_loop.py 398-404) but skips
    ``increment_ready``/``increment_started`` for the next one (``on_advance_start`` sees a
    restart, fit_loop.py 447-453). Its later mid-epoch checkpoints then say ``ready ==
    completed``: no epoch running (FINDINGS D13). Resumed from one of those, Lightning starts a
    new epoch and drops a ``StatefulDataLoader``'s position. The plan knows the run is inside
    an epoch, so that epoch is counted ready and started: ``completed`` (the epoch index, and
    the epoch a ``DistributedSampler`` is set to) stays what it is.
    """
    progress = checkpoint.get("loops", {}).get("fit_loop", {}).get("epoch_progress")
    if not isinstance(progress, dict):
        return
    current = progress.get("current")
    if not isinstance(current, dict) or current.get("completed") != current.get("ready"):
        return
    for part in ("current", "total"):
        counts = progress.get(part)
        if isinstance(counts, dict) and counts.get("completed") == counts.get("ready"):
            counts["ready"] = counts["started"] = counts["completed"] + 1


def _make_class() -> type[Any]:
    try:
        import pytorch_lightning as pl
    except ImportError:
        try:
            import lightning.pytorch as pl  # type: ignore[no-redef, unused-ignore]
        except ImportError as error:
            raise ImportError(
                f"durations.integrations.lightning needs pytorch-lightning: {INSTALL_HINT}"
            ) from error

    class DurationsCallback(_Callback, pl.Callback):  # type: ignore[misc, unused-ignore]
        __doc__ = _Callback.__doc__

    DurationsCallback.__module__ = __name__
    return DurationsCallback


#: ``DurationsCallback`` is created on first use, so importing this module (say, by a doctest
#: collector) imports no framework.
__getattr__ = created_on_first_use(__name__, globals(), "DurationsCallback", _make_class)
