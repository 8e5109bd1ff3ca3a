"""Hugging Face ``transformers``: a ``TrainerCallback`` that makes each ``train()`` follow the plan.

One ``trainer.train()`` per ``FitCall``, in order, through :meth:`DurationsCallback.train`::

    callback = DurationsCallback(config, calls, checkpoints="out")
    for call, dataset in zip(calls, datasets):
        args = TrainingArguments(output_dir=f"out/{call.name}", max_steps=10**9, ...)
        callback.train(Trainer(model=model, args=args, train_dataset=dataset, callbacks=[callback]))

The callback stops each ``train()`` at its segment's exact step, saves at the end of every call,
writes the durations checkpoint (``durations.json``, with the ledger) into every ``checkpoint-N``
directory, and at the first ``train()`` of a process plans from the newest of those checkpoints
(chosen by recorded progress). ``callback.train`` then skips finished calls, loading each one's
final checkpoint into the trainer (the weights, and the optimizer's state, which a reused
trainer carries to the next ``train()``), resumes the started one with Hugging Face's own
``resume_from_checkpoint`` (whose batch skip puts the data exactly where the plan says, which the
callback checks), and gives a call that starts after a restart the previous call's final weights.

Hugging Face counts ``global_step`` from 0 in every ``train()``, and names checkpoints after it,
so each call needs its own ``output_dir`` under ``checkpoints`` (checked).

With ``schedule=`` (a :class:`~durations.Schedule`), the callback also supplies each
``train()``'s learning-rate scheduler: a ``LambdaLR`` on the run's lifetime steps, resolved on
the plan (:func:`durations.integrations.torch.scheduler`), in place of the one Hugging Face
would build from ``max_steps``; Hugging Face's resume restores its state, and the rate at every
step is the schedule's. See ``docs/integrations.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from .._files import checkpoint_json, ledger_checkpoint, read_bytes
from ..errors import shown_value
from ..fit import FitCall, RunConfig
from ..intervals import At, AtCallEnds, Every
from ..loader import Loader
from ..plans import Segment
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
from ._steplog import IndexTap, StepLogWriter
from .checkpoints import LEDGER_FILE, TRANSFORMERS

__all__ = ["DurationsCallback", "IntegrationError"]

#: Created on first use by the module ``__getattr__`` below (the framework is imported then).
DurationsCallback: Any


def _within(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Callback:
    """Enforce a durations plan on Hugging Face ``Trainer.train`` calls, one per ``FitCall``.

    ``config`` and ``calls`` are the script's ``RunConfig`` and ``FitCall``s (each loader's
    ``batch_size`` is the global batch: per-device batch x gradient accumulation x processes).
    ``checkpoints`` is the folder under which every call's ``output_dir`` lies; the newest
    checkpoint there, by recorded progress, is where a re-run of the script resumes.

    Train with :meth:`train`, not ``trainer.train()``: a finished call must not train at all,
    which a callback cannot arrange, and a resumed call needs ``resume_from_checkpoint``.

    With ``schedule``, every ``train()`` gets its learning-rate scheduler from the schedule
    resolved on the plan (``on_extend`` as in :meth:`~durations.Schedule.resolve`), and the
    trainer's own is not used: ``lr_scheduler_type``, ``warmup_steps`` and
    ``lr_scheduler_kwargs`` other than the defaults, and a scheduler passed in ``optimizers=``,
    are refused.

    With ``save_on`` (an :class:`~durations.Every`, :class:`~durations.At` or
    :class:`~durations.AtCallEnds`, or a time string meaning ``Every``), the callback has Hugging
    Face save a checkpoint at each step of that interval resolved on the plan, and at each
    call's stop: one grid on lifetime steps across calls and restarts. Set
    ``save_strategy="no"`` to have only those checkpoints.

    With ``step_log`` (a file path), rank 0 appends a line per optimizer step to it: the
    lifetime step, the indices the step read (every rank's, when the loader has an order), the
    learning rate, and each checkpoint saved with its ``trainer_state.json`` step; ``durations
    audit`` checks it against the plan (``docs/audits.md``).
    """

    def __init__(
        self,
        config: RunConfig,
        calls: Sequence[FitCall],
        *,
        checkpoints: str | os.PathLike[str],
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
        self.session = Session(
            config,
            calls,
            checkpoints,
            TRANSFORMERS,
            save_on=save_on,
            keep_final="it is the last checkpoint-N of the call's output_dir (save_total_limit "
            "keeps it); do not delete it",
        )
        self.schedule = schedule
        self.on_extend = on_extend
        self._curve: ResolvedSchedule | None = None
        self._active = False
        self._step = 0
        self._sampler: Any = None

    # -- the script's side ---------------------------------------------------------------------

    @property
    def lifetime_step(self) -> int:
        """The run's lifetime step count (``Progress.batch``) where training is now."""
        return self.session.lifetime(self._step)

    @property
    def resolved_schedule(self) -> ResolvedSchedule | None:
        """The schedule resolved on this process's plan (``None`` without ``schedule`` or
        before the first ``train()``): the rate at lifetime step ``k`` is ``.lr(k, base)``."""
        if self._curve is None and self.schedule is not None and self.session.plan is not None:
            self._curve = self.schedule.resolve(self.session.plan, on_extend=self.on_extend)
        return self._curve

    def train(self, trainer: Any, **kwargs: Any) -> Any:
        """Run the script's next fit call on ``trainer`` as the plan says.

        Returns what ``trainer.train`` returns, or ``None`` for a call the ledger records as
        finished (nothing is trained). ``kwargs`` go to ``trainer.train`` (not
        ``resume_from_checkpoint``, which the callback decides).
        """
        if "resume_from_checkpoint" in kwargs:
            raise TypeError(
                "callback.train(trainer, resume_from_checkpoint=...): the callback chooses the "
                "checkpoint from the ledger; drop the argument"
            )
        require_registered(self, trainer.callback_handler.callbacks, "Trainer")
        start = self.session.begin()
        if start.kind is StartKind.SKIP:
            if start.restore_from is not None:
                # The state an uninterrupted run holds when this call returns: its final
                # checkpoint's weights, and its optimizer's state in the trainer, which carries
                # it to the next train() when the script reuses the trainer or its optimizer.
                trainer._load_from_checkpoint(start.restore_from)
                _restore_optimizer(trainer, start.restore_from)
            return None
        output_dir = str(trainer.args.output_dir)
        if not _within(output_dir, self.session.checkpoints):
            raise IntegrationError(
                f"call {start.segment.name!r} saves to output_dir={output_dir!r}, outside the "
                f"callback's checkpoints={self.session.checkpoints!r}: a re-run would not find "
                "its checkpoints; put every call's output_dir under checkpoints"
            )
        if start.kind is StartKind.RUN:
            self._check_output_dir(output_dir, start.segment.name)
        if start.weights_from is not None:
            # The call starts after a restart: the previous call's final weights, as an
            # uninterrupted script would hand them over in memory.
            trainer._load_from_checkpoint(start.weights_from)
        if self.schedule is not None:
            _check_unused_scheduler_arguments(trainer.args, start.segment.name)
            self._supply_scheduler(trainer, start.segment.start.batch)
        loader = start.segment.loader
        if loader.order is not None or loader.mixture is not None:
            self._supply_sampler(trainer, start.segment)
        self._active = True
        try:
            return trainer.train(resume_from_checkpoint=start.resume_from, **kwargs)
        finally:
            self._active = False
            self._sampler = None
            vars(trainer).pop("create_scheduler", None)
            vars(trainer).pop("_get_train_sampler", None)

    def _supply_sampler(self, trainer: Any, segment: Segment) -> None:
        """Have ``trainer`` read the call's loader in its order, from the call's start: a
        :class:`~durations.integrations.torch.DealtOrderSampler` (accelerate deals its
        micro-batches to the ranks), in place of the sampler Hugging Face would build."""
        from .torch import DealtOrderSampler

        loader, order = segment.loader, segment.loader.order
        read = f"the order {order}" if loader.mixture is None else f"the mixture {loader.mixture}"
        if not trainer.args.ignore_data_skip:
            raise IntegrationError(
                f"call {segment.name!r} reads its loader in {read}, from the plan's "
                "position, at any world size; Hugging Face would also skip the batches it "
                "counts as read: set TrainingArguments(ignore_data_skip=True)"
            )
        config = getattr(trainer.accelerator, "dataloader_config", None)
        for option in ("split_batches", "dispatch_batches"):
            if getattr(config, option, None):
                raise IntegrationError(
                    f"call {segment.name!r} reads its loader in {read}, which each "
                    f"rank reads a micro-batch at a time; accelerate's {option}=True hands the "
                    "ranks other slices of it: leave it False (accelerator_config)"
                )
        _check_rest_of_epoch(segment, int(trainer.args.gradient_accumulation_steps))
        sampler: Any = DealtOrderSampler(order, loader)
        sampler.start_at(segment)
        if self.step_log is not None:
            sampler = IndexTap(sampler)  # every rank's indices: accelerate deals them
        self._sampler = sampler

        def get_train_sampler(train_dataset: Any = None) -> Any:
            return sampler

        trainer._get_train_sampler = get_train_sampler

    def _supply_scheduler(self, trainer: Any, step: int) -> None:
        """Have ``trainer`` build this call's scheduler from the plan, at lifetime ``step``.

        Hugging Face creates the scheduler in ``train()``, once the optimizer exists, through
        ``create_scheduler``, then (resuming) loads its state from the checkpoint: the count
        saved there is a lifetime step too.
        """
        from .torch import _scheduler_class, scheduler

        curve = self.resolved_schedule
        assert curve is not None
        existing = trainer.lr_scheduler
        if existing is not None and not isinstance(existing, _scheduler_class()):
            raise IntegrationError(
                f"the trainer has its own scheduler ({type(existing).__name__}, from "
                "Trainer(optimizers=...)) and the callback a schedule: drop one of them (pass "
                "optimizers=(optimizer, None) to keep your optimizer)"
            )
        trainer.lr_scheduler = None

        def create_scheduler(num_training_steps: int, optimizer: Any = None) -> Any:
            chosen = trainer.optimizer if optimizer is None else optimizer
            trainer.lr_scheduler = scheduler(chosen, curve, step=step)
            return trainer.lr_scheduler

        trainer.create_scheduler = create_scheduler

    def _check_output_dir(self, output_dir: str, name: str) -> None:
        """A new call must not write ``checkpoint-N`` where another call wrote them: Hugging
        Face numbers them by its per-``train()`` step, so they would overwrite each other."""
        if not os.path.isdir(output_dir):
            return
        for entry in sorted(os.listdir(output_dir)):
            ledger = os.path.join(output_dir, entry, LEDGER_FILE)
            if not (entry.startswith("checkpoint-") and os.path.isfile(ledger)):
                continue
            saved = ledger_checkpoint(checkpoint_json(read_bytes(ledger), ledger), ledger)
            other = saved.ledger[-1].name if saved.ledger else None
            if other != name:
                raise IntegrationError(
                    f"call {name!r} would write its checkpoints to {output_dir!r}, which holds "
                    f"{entry} of call {shown_value(other)}; Hugging Face names checkpoints by "
                    "the step count of each train(), so they would overwrite each other: give "
                    "each call "
                    f"its own output_dir (e.g. {os.path.join(self.session.checkpoints, name)!r})"
                )

    # -- Hugging Face's side ----------------------------------------------------------------

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not self._active:
            raise IntegrationError(
                "trainer.train() was called directly: run each fit call with "
                "callback.train(trainer) so finished calls are skipped and a started one resumes"
            )
        segment = self.session.current()
        loader = segment.loader
        self._step = state.global_step
        self.session.attach(state.global_step)
        world = getattr(args, "world_size", 1) or 1
        if world > 1 or loader.sharding is not None:
            # accelerate shards the loader with even_batches: whole rounds, cycled (rule 17).
            check_data_parallel(
                segment,
                framework="Hugging Face",
                world_size=world,
                device_batch_size=state.train_batch_size,
                accumulation=args.gradient_accumulation_steps,
                # One process evens nothing: every padding reads the data as it is.
                padding=Padding.CYCLE
                if world > 1 or loader.sharding is None
                else loader.sharding.padding,
                drop_last=bool(args.dataloader_drop_last),
            )
        batch = state.train_batch_size * args.gradient_accumulation_steps * world
        if batch != loader.batch_size:
            raise IntegrationError(
                f"call {segment.name!r}: the trainer's global batch is {batch} (per-device "
                f"{state.train_batch_size} x gradient_accumulation_steps "
                f"{args.gradient_accumulation_steps} x {world} processes), the plan's loader has "
                f"batch_size={loader.batch_size}; make them agree"
            )
        if bool(args.dataloader_drop_last) != loader.drop_last:
            raise IntegrationError(
                f"call {segment.name!r}: dataloader_drop_last={args.dataloader_drop_last}, the "
                f"plan's loader has drop_last={loader.drop_last}; make them agree"
            )
        dataloader = kwargs.get("train_dataloader")
        dataset = getattr(dataloader, "dataset", None)
        size = len(dataset) if dataset is not None and hasattr(dataset, "__len__") else None
        wanted = loader.samples if loader.mixture is None else loader.mixture.size
        if wanted is not None and size is not None and size != wanted:
            what = (
                f"loader {loader.samples}"
                if loader.mixture is None
                else f"mixture's sources {wanted} together (a ConcatDataset of them, in the "
                "mixture's order)"
            )
            raise IntegrationError(
                f"call {segment.name!r}: the training dataset has {size} samples, "
                f"the plan's {what}; make them agree"
            )
        needed = segment.stop.batch - self.session.offset
        if state.max_steps < needed:
            raise IntegrationError(
                f"call {segment.name!r} needs Hugging Face to allow {needed} steps in this "
                f"train() but its max_steps is {state.max_steps} (from max_steps / "
                "num_train_epochs): set TrainingArguments(max_steps=...) to at least that, or "
                "larger; the callback stops the call at the plan's step"
            )
        if self._sampler is not None:
            self._check_sampler(dataloader, segment.name)
        elif args.ignore_data_skip:
            raise IntegrationError(
                "ignore_data_skip=True restarts the interrupted epoch; the plan resumes the "
                "data exactly: leave ignore_data_skip=False (or give the loader an order, "
                "Loader(order=...), which the callback reads from the plan's position)"
            )
        else:
            self._check_data_position(state.global_step)
        self._check_scheduler(kwargs.get("lr_scheduler"), state.global_step)

    def _check_sampler(self, dataloader: Any, name: str) -> None:
        """The training dataloader must read the order's sampler: a ``Trainer`` that builds its
        dataloader another way (an overridden ``get_train_dataloader``, an iterable data set)
        would read something else."""
        if reads_sampler(dataloader, self._sampler):
            return
        raise IntegrationError(
            f"call {name!r}: the trainer's training dataloader does not read the sampler of "
            "the loader's order (a Trainer whose get_train_dataloader or _get_train_sampler is "
            "overridden, or an IterableDataset): it would read another order than the plan's; "
            "let the Trainer build its dataloader from a map-style dataset"
        )

    def _check_scheduler(self, scheduler: Any, global_step: int) -> None:
        """The scheduler restored from a checkpoint must count lifetime steps: one saved by a
        run without ``schedule=`` counts this call's steps, and would put the curve elsewhere."""
        if self.schedule is None or scheduler is None:
            return
        here = self.session.lifetime(global_step)
        if getattr(scheduler, "last_epoch", here) != here:
            raise IntegrationError(
                f"call {self.session.current().name!r} resumes at lifetime step {here}, but the "
                f"scheduler state restored from the checkpoint counts {scheduler.last_epoch} "
                "steps: the checkpoint was written by a run without schedule= (whose scheduler "
                "counted each train()'s steps). Resume with the scheduler that run used, or "
                "start the run again with the schedule"
            )

    def _check_data_position(self, global_step: int) -> None:
        """Hugging Face's resume skips ``global_step % steps_per_epoch`` batches of an epoch
        counted from the call's start, at the batch size it resumes at; check that this is the
        plan's sample position, and name the samples it would train again or skip if not."""
        segment = self.session.current()
        loader = segment.loader
        if loader.samples is None or loader.steps_per_epoch is None:
            return
        per_epoch = loader.samples_per_epoch or 0
        epochs, steps = divmod(global_step, loader.steps_per_epoch)
        framework = epochs * per_epoch + min(steps * loader.batch_size, per_epoch)
        begin, here = segment.entry.start, segment.start
        planned = (here.epoch - begin.epoch) * per_epoch + here.sample_in_epoch
        if framework == planned:
            return
        resumes = (begin.epoch + epochs, min(steps * loader.batch_size, per_epoch))
        plans = (here.epoch, here.sample_in_epoch)
        if framework < planned:
            what = f"{samples_between(resumes, plans, loader.samples)} would be trained again"
        else:
            what = f"{samples_between(plans, resumes, loader.samples)} would never be trained"
        saved = self.session.saved_loader(segment.name) or segment.entry.loader
        at = _geometry(saved)
        raise IntegrationError(
            f"call {segment.name!r}: Hugging Face would resume at sample {resumes[1]} of epoch "
            f"{resumes[0]} (global_step {global_step}: it skips {steps} steps of "
            f"{loader.batch_size} samples{_geometry(loader)} into the call's epoch {epochs}), "
            f"the plan at sample {plans[1]} of epoch {plans[0]}: {what}. Its batch skip is "
            f"only exact at the batch size the call was saved at: resume at batch size "
            f"{saved.batch_size}{at}"
        )

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        optimizer = kwargs.get("optimizer")
        if self.step_log is not None and optimizer is not None:
            self._rate = float(optimizer.param_groups[0]["lr"])  # the rate this step uses
            scheduler = kwargs.get("lr_scheduler")
            bases = getattr(scheduler, "base_lrs", None) if self.schedule is not None else None
            if state.is_world_process_zero:
                self.step_log.header(float(bases[0]) if bases else None)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._step = state.global_step
        if self.step_log is not None and state.is_world_process_zero:
            segment = self.session.current()
            tap = self._sampler if isinstance(self._sampler, IndexTap) else None
            self.step_log.step(
                self.session.lifetime(state.global_step),
                loader=segment.loader.name,
                indices=None if tap is None else tap.take(segment.loader.batch_size),
                lr=self._rate,
            )
        if self.session.save_due(state.global_step):
            control.should_save = True  # on the plan's grid (every rank decides the same)
        if self.session.should_stop(state.global_step):
            control.should_training_stop = True
            if str(getattr(args.save_strategy, "value", args.save_strategy)) != "no":
                control.should_save = True  # the call's final checkpoint: finished in the ledger

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        directory = os.path.join(str(args.output_dir), f"checkpoint-{state.global_step}")
        data = self.session.checkpoint_dict(state.global_step)
        # Written whole or not at all (a temporary file renamed): its presence marks the
        # checkpoint finished, since Hugging Face has written its own files before on_save.
        temporary = os.path.join(directory, f".{LEDGER_FILE}.partial")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        os.replace(temporary, os.path.join(directory, LEDGER_FILE))
        if self.step_log is not None:
            with open(os.path.join(directory, "trainer_state.json"), encoding="utf-8") as handle:
                saved = json.load(handle)  # Hugging Face's own record of where it is
            self.step_log.checkpoint(
                self.session.lifetime(state.global_step),
                path=directory,
                trainer_state={key: saved.get(key) for key in ("global_step", "epoch")},
            )

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.session.check_reached_stop(
            "Hugging Face",
            state.global_step,
            "raise max_steps / num_train_epochs, or remove what stopped it (an "
            "EarlyStoppingCallback, an iterable dataset that ran out)",
        )


def _check_rest_of_epoch(segment: Segment, accumulation: int) -> None:
    """Refuse a call that starts inside an epoch and reads its rest to the end in a number of
    micro-batches per rank that is not a whole number of accumulation groups.

    Hugging Face counts an epoch's micro-batches once per ``train()``, from ``len()`` of its
    dataloader, a whole epoch's; it steps an incomplete group only at that count. The rest of
    an epoch ends earlier, and its incomplete last group would not be stepped: its gradients
    would be added to the next epoch's first step (found on a real run). A whole number of
    groups, or a call that stops before the epoch's end, is read exactly.
    """
    loader = segment.loader
    first = segment.start.normalized(loader)
    if accumulation <= 1 or first.sample_in_epoch == 0 or loader.samples is None:
        return
    rest = loader.samples_left_in_epoch(first.sample_in_epoch)
    sharding = loader.sharding
    if sharding is None:  # one process: the global batch is its micro-batches of a step
        world, device = 1, max(1, loader.batch_size // accumulation)
    else:
        world, device = sharding.world_size, sharding.device_batch_size
    micro = -(-rest // (world * device))
    if micro % accumulation == 0 or segment.steps < -(-rest // loader.batch_size):
        return
    raise IntegrationError(
        f"call {segment.name!r} starts at sample {first.sample_in_epoch} of epoch {first.epoch} "
        f"and reads the rest of it in {micro} micro-batches per rank, with "
        f"gradient_accumulation_steps={accumulation}: its last step would be an incomplete "
        f"group of {micro % accumulation}, which Hugging Face steps only at the end of a whole "
        "epoch (it counts an epoch's micro-batches once, from a whole epoch), so its "
        "gradients would go into the next epoch's first step. Resume with "
        f"gradient_accumulation_steps dividing {micro} (1 always does), at another world size "
        "or device batch size, or from a checkpoint at the epoch's end"
    )


def _restore_optimizer(trainer: Any, checkpoint: str) -> None:
    """Load the optimizer state of ``checkpoint`` (``optimizer.pt``) into the trainer's
    optimizer, created first if the trainer has none yet (Hugging Face creates one only when
    it has none: a reused trainer, or one given ``optimizers=``, keeps its optimizer from one
    ``train()`` to the next)."""
    import torch

    path = os.path.join(checkpoint, "optimizer.pt")
    if not os.path.isfile(path):
        return
    if trainer.optimizer is None:
        trainer.create_optimizer()
    state = torch.load(path, map_location="cpu", weights_only=True)
    trainer.optimizer.load_state_dict(state)


def _check_unused_scheduler_arguments(args: Any, name: str) -> None:
    """With ``schedule=`` the plan's curve replaces Hugging Face's: arguments that would shape
    Hugging Face's own scheduler are refused, not silently ignored."""
    kind = str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type))
    unused = [
        f"{field}={value!r}"
        for field, value, default in (
            ("lr_scheduler_type", kind, "linear"),
            ("warmup_steps", getattr(args, "warmup_steps", 0), 0),
            ("warmup_ratio", getattr(args, "warmup_ratio", None), None),
            ("lr_scheduler_kwargs", getattr(args, "lr_scheduler_kwargs", None), None),
        )
        if value not in (default, {}, 0)
    ]
    if unused:
        raise IntegrationError(
            f"call {name!r}: TrainingArguments({', '.join(unused)}) shape Hugging Face's own "
            "learning-rate scheduler, which the callback's schedule= replaces: leave them at "
            "their defaults and state the warmup and decay in the durations Schedule"
        )


def _geometry(loader: Loader) -> str:
    sharding = loader.sharding
    if sharding is None:
        return ""
    processes = "process" if sharding.world_size == 1 else "processes"
    return f" ({sharding.world_size} {processes} of {sharding.device_batch_size} per device)"


def _make_class() -> type[Any]:
    try:
        from transformers import TrainerCallback
    except ImportError as error:
        raise ImportError(
            f"durations.integrations.transformers needs transformers: {INSTALL_HINT}"
        ) from error

    class DurationsCallback(_Callback, TrainerCallback):  # type: ignore[misc, unused-ignore]
        __doc__ = _Callback.__doc__

    DurationsCallback.__module__ = __name__
    return DurationsCallback


#: ``DurationsCallback`` is created on first use, so importing this module (say, by a doctest
#: collector) imports no framework.
__getattr__ = created_on_first_use(__name__, globals(), "DurationsCallback", _make_class)
