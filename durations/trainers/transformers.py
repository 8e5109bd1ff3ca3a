"""The Hugging Face transformers profile: what ``Trainer.train`` does with durations and resumes.

A pure emulation of ``transformers.Trainer.train`` at version :data:`VERSION` (no framework is
imported), verified against real runs in ``tests/frameworks/``. A :class:`Call` is one
``train()`` call in HF's own vocabulary (``TrainingArguments`` fields plus how the call is made);
:func:`simulate` runs a sequence of them as HF would and reports, per call, the sample ids of
every optimizer step, HF's ``TrainerState`` counters afterwards, the log lines HF prints about
durations and resumes, and the exception it raises.

What the emulation captures, in short (the full list, with sources, is :data:`RULES`):

- The length of a run is ``max_steps`` optimizer steps: ``args.max_steps`` if it is not
  negative, else ``ceil(num_train_epochs * num_update_steps_per_epoch)``, where an epoch has
  ``ceil(batches / gradient_accumulation_steps)`` updates. Accumulation never crosses an epoch
  end; the short last group is its own step. So fractional epochs and GA end past the fraction.
- ``state.epoch`` is the float ``epoch + (micro_batch + 1) / batches_per_epoch``, bit for bit.
- A resume reinterprets the checkpoint's ``global_step`` in the *new* configuration: the
  epochs already trained are ``global_step // num_update_steps_per_epoch`` and the position in
  the current epoch is ``global_step % num_update_steps_per_epoch`` updates. A changed batch
  size, gradient accumulation or data set therefore moves the position (and ``state.epoch`` can
  go backwards), and a shorter new duration trains nothing, with no error. The stop check
  comes only after an optimizer step, so a resume whose epoch loop still runs trains one
  step past a ``max_steps`` it already reached.
- ``max_steps=0`` is not "no steps": it is "not set" for the epoch count and still trains one
  step. A second ``train()`` on the same Trainer starts a fresh state from step 0.
- The checkpoint's ``save_steps`` and ``train_batch_size`` survive a resume: saving keeps the
  old interval although the arguments say otherwise, and the only sign is a warning.

Each call is treated as its own process for ``logger.warning_once`` (the recording harness
clears that cache before every call), and log lines are reported with surrounding whitespace
stripped, as the harness records them. Map-style data is modelled; under
``train_sampling_strategy="random"`` the reported ids are the positions read in the sampler's
permutation (``offset + position``), or the ids themselves when the :class:`Dataset` carries the
seeded ``orders``.

Data parallelism (``world_size`` processes under torchrun, accelerate's defaults
``split_batches=False``, ``even_batches=True``): each rank's loader yields the epoch's batches
of ``per_device_train_batch_size`` dealt round-robin, the order cycled from its start to a
multiple of ``world_size`` batches (with ``dataloader_drop_last``: cut to whole rounds of full
batches). A step's ids in :class:`CallOutcome` are the union over the ranks, in the order of the
epoch's padded sequence: micro-batch ``m`` of rank ``r`` is the ``(m * world_size + r)``-th run
of ``per_device_train_batch_size`` ids of the step. The counters are every rank's (they agree).
``even_batches=False``, ``split_batches`` and ``dispatch_batches`` are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from ..scenario import Scenario
from ..units import Unit
from ._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported
from ._script import steps_of

__all__ = ["RULES", "VERSION", "Call", "Overrides", "simulate"]

VERSION = "5.24.0"
"""The transformers version this profile emulates and was verified against."""

_TRAINER = "transformers/trainer.py"
_ACCELERATE = "accelerate/data_loader.py"
_CALLBACK = "transformers/trainer_callback.py"
_UTILS = "transformers/trainer_utils.py"

RULES: tuple[tuple[str, str], ...] = (
    (
        "When max_steps > 0 and num_train_epochs > 0, the Trainer logs that max_steps overrides "
        "num_train_epochs; it does so once, when it is built, not on later train() calls.",
        f"{_TRAINER}:726 (_validate_args)",
    ),
    (
        "The data loader's batch size is fixed when the Trainer is built "
        "(per_device_train_batch_size times max(1, n_gpu)); assigning "
        "args.per_device_train_batch_size on a built Trainer changes only the resume warning.",
        f"{_TRAINER}:627 (Trainer.__init__), {_TRAINER}:931 (get_train_dataloader)",
    ),
    (
        "resume_from_checkpoint=True resumes from the checkpoint-N with the highest N in "
        "output_dir, and raises ValueError 'No valid checkpoint found in output directory "
        "(<output_dir>)' when there is none.",
        f"{_TRAINER}:1554 (train), {_UTILS}:270 (get_last_checkpoint)",
    ),
    (
        "A random sampler over an empty data set raises torch's ValueError 'num_samples should "
        "be a positive integer value, but got num_samples=0' when the loader is built.",
        f"{_TRAINER}:1145 (_get_train_sampler), torch/utils/data/sampler.py:148 (RandomSampler)",
    ),
    (
        "An epoch has ceil(samples / batch_size) batches, and num_update_steps_per_epoch is "
        "max(ceil(batches / gradient_accumulation_steps), 1).",
        f"{_TRAINER}:2522 (set_initial_training_values)",
    ),
    (
        "dataloader_drop_last is the DataLoader's drop_last: on one process an epoch then has "
        "floor(samples / batch_size) batches and the short last batch is not read.",
        f"{_TRAINER}:1045 (_get_dataloader)",
    ),
    (
        "train_sampling_strategy='random' reads the epoch in the order torch.randperm(samples) "
        "draws with a generator seeded seed + epoch: accelerate replaces the RandomSampler by "
        "its SeedableRandomSampler (also on one process), the Trainer sets its epoch every epoch "
        "and again on resume, so the order depends neither on the world size nor on a resume.",
        f"{_TRAINER}:1859 (_run_epoch), {_ACCELERATE}:1184 (prepare_data_loader), "
        f"{_ACCELERATE}:81 (SeedableRandomSampler.__iter__)",
    ),
    (
        "On one process accelerate leaves the batch sampler as it is; on world_size >= 2 it "
        "wraps it in a BatchSamplerShard that deals the batches round-robin (rank r's local "
        "batch i is batch i * world_size + r) and, with even_batches, tops a short last batch "
        "up and adds whole batches from the epoch's start until every rank has as many: the "
        "epoch reads the order cycled to world_size * batch_size * ceil(samples / "
        "(world_size * batch_size)) positions, and each rank has that many / (world_size * "
        "batch_size) batches.",
        f"{_TRAINER}:1051 (_get_dataloader), {_ACCELERATE}:1209 (prepare_data_loader), "
        f"{_ACCELERATE}:204 (BatchSamplerShard._iter_with_no_split), {_ACCELERATE}:161 "
        "(BatchSamplerShard.__len__)",
    ),
    (
        "With dataloader_drop_last on world_size >= 2 only whole rounds of world_size full "
        "batches are read: floor(samples / (world_size * batch_size)) batches per rank, and a "
        "tail that still holds full batches is dropped with the short one.",
        f"{_TRAINER}:1045 (_get_dataloader), {_ACCELERATE}:217 "
        "(BatchSamplerShard._iter_with_no_split)",
    ),
    (
        "The batches per epoch, num_update_steps_per_epoch, max_steps and the resume's skip are "
        "all computed from the loader of the current world size, so a resume on another number "
        "of processes reads the checkpoint's global_step in steps of the new world size.",
        f"{_TRAINER}:2522 (set_initial_training_values), {_TRAINER}:1706 (_init_training_state)",
    ),
    (
        "max_steps is args.max_steps unless that is negative; then it is "
        "ceil(num_train_epochs * num_update_steps_per_epoch) in float arithmetic, so any "
        "positive fraction of an epoch trains at least one step.",
        f"{_TRAINER}:2529 (set_initial_training_values)",
    ),
    (
        "The epoch loop count (state.num_train_epochs, 'Num Epochs') is ceil(max_steps / "
        "num_update_steps_per_epoch) when args.max_steps > 0, else ceil(num_train_epochs); so "
        "max_steps=0 counts as unset here yet still caps the run.",
        f"{_TRAINER}:2533 (set_initial_training_values)",
    ),
    (
        "With an empty data set the loader has no usable length: args.max_steps > 0 gives "
        "sys.maxsize epochs of max_steps updates, otherwise ValueError 'args.max_steps must be "
        "set to a positive value if dataloader does not have a length, was <max_steps>'.",
        f"{_TRAINER}:2543 (set_initial_training_values)",
    ),
    (
        "Every train() builds a fresh TrainerState from step 0 (global_step 0, epoch 0), with "
        "save_steps and train_batch_size from the current arguments, unless it resumes.",
        f"{_TRAINER}:1682 (_init_training_state), {_CALLBACK}:156 (compute_steps)",
    ),
    (
        "A resume replaces the state by the checkpoint's trainer_state.json, including its "
        "save_steps and train_batch_size, which later saves keep using; only max_steps and "
        "num_train_epochs are overwritten with the new run's values.",
        f"{_TRAINER}:1697 (_init_training_state), {_CALLBACK}:169 (init_training_references)",
    ),
    (
        "On resume, a save_steps or per_device_train_batch_size that differs from the "
        "checkpoint's only logs 'Warning: The following arguments do not match the ones in the "
        "`trainer_state.json` within the checkpoint directory: ' with one line per difference; "
        "it is a warning_once, printed once per process.",
        f"{_UTILS}:1133 (compare_trainer_and_checkpoint_args)",
    ),
    (
        "On resume, epochs_trained is global_step // num_update_steps_per_epoch and the skip "
        "in the current epoch is (global_step % num_update_steps_per_epoch) * "
        "gradient_accumulation_steps batches, both in the new configuration and data; with "
        "ignore_data_skip the skip is 0.",
        f"{_TRAINER}:1706 (_init_training_state)",
    ),
    (
        "The Trainer logs Num examples, Num Epochs, Num update steps per epoch, Gradient "
        "Accumulation steps and Total optimization steps, then on resume 'Resuming training "
        "from checkpoint with epoch E and global step G' and, unless ignore_data_skip, "
        "'Fast-forwarding the dataloader past E epochs and N batches ...'.",
        f"{_TRAINER}:1618 (_inner_training_loop)",
    ),
    (
        "Epochs run for epoch in range(epochs_trained, num_train_epochs); nothing runs when "
        "epochs_trained already reaches the loop count, and the state keeps the checkpoint's "
        "global_step and epoch.",
        f"{_TRAINER}:1658 (_inner_training_loop)",
    ),
    (
        "In the first resumed epoch skip_first_batches drops the skipped batches and training "
        "continues at the next position of the same sampler order; with ignore_data_skip the "
        "epoch restarts at batch 0.",
        f"{_TRAINER}:1850 (_run_epoch)",
    ),
    (
        "An epoch is cut into groups of gradient_accumulation_steps batches; the last group "
        "holds the remaining steps_in_epoch % gradient_accumulation_steps (or a full group), so "
        "accumulation never crosses an epoch end.",
        f"{_TRAINER}:1870 (_run_epoch), {_TRAINER}:2289 (get_batch_samples)",
    ),
    (
        "After each optimizer step global_step grows by 1 and state.epoch becomes the float "
        "epoch + (step + 1) / steps_in_epoch, step being the micro-batch index in the epoch; "
        "after ignore_data_skip or a batch size change it can go backwards.",
        f"{_TRAINER}:1955 (_run_epoch)",
    ),
    (
        "With save_strategy 'steps', a checkpoint-<global_step> is saved when global_step % "
        "state.save_steps == 0 and at the step that reaches max_steps.",
        f"{_CALLBACK}:584 (DefaultFlowCallback.on_step_end)",
    ),
    (
        "Training stops after the optimizer step at which global_step >= state.max_steps; "
        "the check follows a step, so a resumed epoch that runs at all trains at least one.",
        f"{_CALLBACK}:592 (DefaultFlowCallback.on_step_end)",
    ),
    (
        "An epoch that reads no batch at all logs 'There seems not to be a single sample in "
        "your epoch_iterator, stopping training at step G! ...' and stops training.",
        f"{_TRAINER}:1981 (_run_epoch)",
    ),
)
"""Every rule the emulation applies: (the rule in plain words, where transformers does it)."""

_Strategy = Literal["no", "steps"]
_Sampling = Literal["random", "sequential"]


@attrs.frozen(kw_only=True)
class Overrides:
    """Attributes assigned on a reused Trainer before ``train()`` (``trainer.args.X = value``).

    ``None`` leaves an attribute as it is. Assignments persist on that Trainer for later calls.
    """

    num_train_epochs: float | None = None
    max_steps: int | None = None
    per_device_train_batch_size: int | None = None
    gradient_accumulation_steps: int | None = None
    ignore_data_skip: bool | None = None
    save_steps: int | None = None


@attrs.frozen(kw_only=True)
class Call:
    """One ``Trainer.train`` call, in HF's vocabulary.

    The ``TrainingArguments`` fields (``per_device_train_batch_size`` to ``output_dir``, with
    HF's defaults) build the Trainer when ``fresh`` is true. With ``fresh`` false the call is
    ``train()`` again on the previous Trainer: that Trainer keeps the arguments it was built with,
    so the call must repeat them (``simulate`` raises ``ValueError`` otherwise) and changes them
    with ``set``; ``data`` replaces ``trainer.train_dataset``.

    ``resume_latest`` passes ``resume_from_checkpoint`` = the checkpoint written last by earlier
    calls (none written: no resume); ``resume_from_checkpoint=True`` is HF's own
    ``get_last_checkpoint`` (highest step number). ``crash_at`` kills the call right after the
    first checkpoint saved at a global step ``>= crash_at``.

    ``world_size`` is the number of processes the job runs on (``torchrun --nproc_per_node``),
    each with its own Trainer built from the same call; a resume may run on another number.
    A reused Trainer (``fresh`` false) is the same processes, so the same world size.
    """

    data: Dataset
    world_size: int = 1
    per_device_train_batch_size: int = 8
    num_train_epochs: float = 3.0
    max_steps: int = -1
    gradient_accumulation_steps: int = 1
    ignore_data_skip: bool = False
    train_sampling_strategy: _Sampling = "random"
    dataloader_drop_last: bool = False
    save_strategy: _Strategy = "steps"
    save_steps: int = 500
    output_dir: str = "trainer_output"
    fresh: bool = True
    resume_latest: bool = False
    resume_from_checkpoint: bool = False
    crash_at: int | None = None
    set: Overrides = Overrides()


@attrs.define(kw_only=True)
class _Args:
    """The mutable ``TrainingArguments`` of one Trainer."""

    per_device_train_batch_size: int
    num_train_epochs: float
    max_steps: int
    gradient_accumulation_steps: int
    ignore_data_skip: bool
    train_sampling_strategy: _Sampling
    dataloader_drop_last: bool
    save_strategy: _Strategy
    save_steps: int
    output_dir: str

    @classmethod
    def of(cls, call: Call) -> _Args:
        return cls(**{name: getattr(call, name) for name in _ARG_NAMES})


_ARG_NAMES = tuple(field.name for field in attrs.fields(_Args))


@attrs.define(kw_only=True)
class _State:
    """The parts of ``TrainerState`` the emulation uses; also what a checkpoint stores."""

    global_step: int = 0
    epoch: float = 0
    max_steps: int = 0
    num_train_epochs: int = 0
    save_steps: int = 500
    train_batch_size: int | None = None

    def counters(self) -> dict[str, int | float | None]:
        return {
            "global_step": self.global_step,
            "epoch": self.epoch,
            "max_steps": self.max_steps,
            "num_train_epochs": self.num_train_epochs,
        }


@attrs.define(kw_only=True)
class _Trainer:
    built_with: Call
    args: _Args
    train_batch_size: int
    state: _State = attrs.Factory(_State)


@attrs.define(kw_only=True)
class _Disk:
    """The checkpoints written so far: ``(output_dir, step) -> state``, and the write order."""

    saved: dict[tuple[str, int], _State] = attrs.Factory(dict)
    order: list[tuple[str, int]] = attrs.Factory(list)

    def save(self, output_dir: str, state: _State) -> None:
        key = (output_dir, state.global_step)
        self.saved[key] = attrs.evolve(state)
        if key in self.order:
            self.order.remove(key)
        self.order.append(key)

    def latest(self, output_dir: str) -> _State | None:
        written = [key for key in self.order if key[0] == output_dir]
        return self.saved[written[-1]] if written else None

    def highest(self, output_dir: str) -> _State | None:
        steps = [step for directory, step in self.saved if directory == output_dir]
        return self.saved[(output_dir, max(steps))] if steps else None


class _RaisedError(Exception):
    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.error = TrainerError(type=type_, message=message)


class _CrashedError(Exception):
    pass


_MAXSIZE = 2**63 - 1
"""``sys.maxsize`` on 64-bit platforms: the epoch count of a loader without a length."""


def _ceil(value: float) -> int:
    """``math.ceil`` of an int or float, exactly (float floor division is exact)."""
    return -int(-value // 1)


_MISMATCH = (
    "Warning: The following arguments do not match the ones in the `trainer_state.json` within "
    "the checkpoint directory: "
)


def simulate(calls: Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as ``transformers.Trainer.train`` would; one outcome per call.

    All calls share one file system: a checkpoint saved by one call can be resumed by a later
    one. Pure: the same calls always give the same outcomes.
    """
    disk = _Disk()
    trainer: _Trainer | None = None
    outcomes: list[CallOutcome] = []
    for call in calls:
        messages: list[str] = []
        if call.fresh or trainer is None:
            trainer = _Trainer(
                built_with=call,
                args=_Args.of(call),
                train_batch_size=call.per_device_train_batch_size,
            )
            if call.max_steps > 0 and call.num_train_epochs > 0:
                messages.append(
                    "max_steps is given, it will override any value given in num_train_epochs"
                )
        else:
            _check_reused(call, trainer.built_with)
        _apply(call.set, trainer.args)
        outcomes.append(_train(trainer, call, disk, messages))
    return tuple(outcomes)


def _check_reused(call: Call, built_with: Call) -> None:
    for name in ("world_size", *_ARG_NAMES):
        given, kept = getattr(call, name), getattr(built_with, name)
        if given != kept:
            raise ValueError(
                f"Call(fresh=False, {name}={given!r}) reuses a Trainer built with "
                f"{name}={kept!r}; a reused Trainer keeps its TrainingArguments: repeat "
                f"{name}={kept!r} and change it with set=Overrides({name}=...)"
            )


def _apply(overrides: Overrides, args: _Args) -> None:
    for name in attrs.fields_dict(Overrides):
        value = getattr(overrides, name)
        if value is not None:
            setattr(args, name, value)


def _train(trainer: _Trainer, call: Call, disk: _Disk, messages: list[str]) -> CallOutcome:
    batches: list[tuple[int, ...]] = []
    try:
        _run(trainer, call, disk, messages, batches)
    except _RaisedError as raised:
        return CallOutcome(
            steps=len(batches),
            batches=tuple(batches),
            counters=trainer.state.counters(),
            messages=tuple(messages),
            error=raised.error,
        )
    except _CrashedError:
        return CallOutcome(
            steps=len(batches),
            batches=tuple(batches),
            counters=trainer.state.counters(),
            messages=tuple(messages),
            crashed=True,
        )
    return CallOutcome(
        steps=len(batches),
        batches=tuple(batches),
        counters=trainer.state.counters(),
        messages=tuple(messages),
    )


@attrs.frozen
class _Epochs:
    """What ``set_initial_training_values`` computes of the epochs of a ``train()``."""

    batch_size: int
    round_size: int  # one local batch on every rank
    len_dataloader: int
    epoch_length: int  # the positions an epoch reads
    shuffled: bool
    accumulation: int
    max_steps: int
    updates_per_epoch: int
    num_train_epochs: int
    num_examples: int


def _run(
    trainer: _Trainer,
    call: Call,
    disk: _Disk,
    messages: list[str],
    batches: list[tuple[int, ...]],
) -> None:
    """``Trainer.train``: resolve the checkpoint, size the epochs, set up the state, run."""
    if call.resume_latest and call.resume_from_checkpoint:
        raise ValueError("give resume_latest or resume_from_checkpoint, not both")
    if call.world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {call.world_size!r}")
    resume = _resume_from(trainer.args, call, disk)
    epochs = _epochs(trainer, call)
    epochs_trained, skip = _init_training_state(trainer, epochs, resume, messages)
    _epoch_loop(trainer, call, disk, messages, batches, epochs, epochs_trained, skip, resume)


def _resume_from(args: _Args, call: Call, disk: _Disk) -> _State | None:
    """``train(resume_from_checkpoint=...)``: which checkpoint, if any."""
    if call.resume_from_checkpoint:
        resume = disk.highest(args.output_dir)
        if resume is None:
            raise _RaisedError(
                "ValueError", f"No valid checkpoint found in output directory ({args.output_dir})"
            )
        return resume
    if call.resume_latest:
        return disk.latest(args.output_dir)
    return None


def _epochs(trainer: _Trainer, call: Call) -> _Epochs:
    """``get_train_dataloader()``, then ``set_initial_training_values()``."""
    args, data = trainer.args, call.data
    batch_size = trainer.train_batch_size
    if data.samples == 0 and args.train_sampling_strategy == "random":
        raise _RaisedError(
            "ValueError", "num_samples should be a positive integer value, but got num_samples=0"
        )
    world = trainer.built_with.world_size
    round_size = world * batch_size
    if args.dataloader_drop_last:
        len_dataloader = data.samples // round_size
    else:
        len_dataloader = -(-data.samples // round_size)
    # The positions the epoch reads: one process reads the data once (its last batch may be
    # short); accelerate's BatchSamplerShard cycles to whole rounds of full batches.
    epoch_length = data.samples if world == 1 else len_dataloader * round_size
    if args.dataloader_drop_last:
        epoch_length = len_dataloader * round_size
    accumulation = args.gradient_accumulation_steps
    max_steps = args.max_steps
    updates_per_epoch = max(
        len_dataloader // accumulation + int(len_dataloader % accumulation > 0), 1
    )
    if max_steps < 0:
        max_steps = _ceil(args.num_train_epochs * updates_per_epoch)
    if len_dataloader:
        num_examples = data.samples
        if args.max_steps > 0:
            num_train_epochs = max_steps // updates_per_epoch + int(
                max_steps % updates_per_epoch > 0
            )
        else:
            num_train_epochs = _ceil(args.num_train_epochs)
    elif args.max_steps > 0:
        num_train_epochs = _MAXSIZE
        updates_per_epoch = max_steps
        num_examples = batch_size * accumulation * world * args.max_steps
    else:
        raise _RaisedError(
            "ValueError",
            "args.max_steps must be set to a positive value if dataloader does not have a "
            f"length, was {args.max_steps}",
        )
    return _Epochs(
        batch_size=batch_size,
        round_size=round_size,
        len_dataloader=len_dataloader,
        epoch_length=epoch_length,
        shuffled=args.train_sampling_strategy == "random",
        accumulation=accumulation,
        max_steps=max_steps,
        updates_per_epoch=updates_per_epoch,
        num_train_epochs=num_train_epochs,
        num_examples=num_examples,
    )


def _init_training_state(
    trainer: _Trainer, epochs: _Epochs, resume: _State | None, messages: list[str]
) -> tuple[int, int]:
    """``_init_training_state()``: the state (restored from ``resume``), the epochs trained and
    the batches to skip, and what ``train()`` logs. Returns the last two."""
    args = trainer.args
    state = _State(save_steps=args.save_steps, train_batch_size=epochs.batch_size)
    epochs_trained = 0
    skip = 0
    if resume is not None:
        state = attrs.evolve(resume)
        mismatch = ""
        if args.save_steps != state.save_steps:
            mismatch += (
                f"\n\tsave_steps: {args.save_steps} (from args) != {state.save_steps} "
                "(from trainer_state.json)"
            )
        if args.per_device_train_batch_size != state.train_batch_size:
            mismatch += (
                f"\n\tper_device_train_batch_size: {args.per_device_train_batch_size} (from args)"
                f" != {state.train_batch_size} (from trainer_state.json)"
            )
        if mismatch:
            messages.append(_MISMATCH + mismatch)
        epochs_trained = state.global_step // epochs.updates_per_epoch
        if not args.ignore_data_skip:
            skip = state.global_step % epochs.updates_per_epoch * epochs.accumulation
    state.max_steps = epochs.max_steps
    state.num_train_epochs = epochs.num_train_epochs
    trainer.state = state
    messages += [
        f"Num examples = {epochs.num_examples:,}",
        f"Num Epochs = {epochs.num_train_epochs:,}",
        f"Num update steps per epoch = {epochs.updates_per_epoch:,}",
        f"Gradient Accumulation steps = {epochs.accumulation}",
        f"Total optimization steps = {epochs.max_steps:,}",
    ]
    if resume is not None:
        messages.append(
            f"Resuming training from checkpoint with epoch {epochs_trained} and global step "
            f"{state.global_step}"
        )
        if not args.ignore_data_skip:
            messages.append(
                f"Fast-forwarding the dataloader past {epochs_trained} epochs and {skip} batches "
                "to resume from the exact training state."
            )
    return epochs_trained, skip


def _epoch_loop(
    trainer: _Trainer,
    call: Call,
    disk: _Disk,
    messages: list[str],
    batches: list[tuple[int, ...]],
    epochs: _Epochs,
    epochs_trained: int,
    skip: int,
    resume: _State | None,
) -> None:
    """The epoch loop of ``_inner_training_loop()`` and ``_run_epoch()``."""
    args, state, data = trainer.args, trainer.state, call.data
    accumulation, steps_in_epoch = epochs.accumulation, epochs.len_dataloader
    remainder = steps_in_epoch % accumulation or accumulation
    for epoch in range(epochs_trained, epochs.num_train_epochs):
        step = -1
        updates_done = 0
        position = 0  # the next batch of the epoch the loader yields
        if epoch == epochs_trained and resume is not None and skip > 0:
            step = skip - 1
            updates_done = skip // accumulation
            position = skip
        pending: list[int] = []
        stop = False
        for update in range(updates_done, epochs.updates_per_epoch):
            wanted = accumulation if update != epochs.updates_per_epoch - 1 else remainder
            fetched = range(position, min(position + wanted, epochs.len_dataloader))
            position = fetched.stop if fetched else position
            for batch in fetched:
                step += 1
                start = batch * epochs.round_size
                read = range(start, min(start + epochs.round_size, epochs.epoch_length))
                pending += data.read(read, epoch=epoch, shuffled=epochs.shuffled)
                if (step + 1) % accumulation != 0 and step + 1 != steps_in_epoch:
                    continue
                state.global_step += 1
                state.epoch = epoch + (step + 1) / steps_in_epoch
                batches.append(tuple(pending))
                pending = []
                stop = state.global_step >= state.max_steps
                if args.save_strategy == "steps" and (
                    (state.save_steps > 0 and state.global_step % state.save_steps == 0) or stop
                ):
                    disk.save(args.output_dir, state)
                    if call.crash_at is not None and state.global_step >= call.crash_at:
                        raise _CrashedError
                if stop:
                    break
            if stop:
                break
        if step < 0:
            messages.append(
                "There seems not to be a single sample in your epoch_iterator, stopping training "
                f"at step {state.global_step}! This is expected if you're using an "
                f"IterableDataset and set num_steps ({state.max_steps}) higher than the number "
                "of available samples."
            )
            stop = True
        if stop:
            break


# -- writing a durations scenario in Hugging Face's idiom -----------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Hugging Face user writes it: one ``Trainer`` per call (its counters start
    at 0, the only way to train a second data set for a while: trainers.md B.4), each with its
    own ``output_dir`` and ``save_steps=1``, and the length as ``num_train_epochs`` (epochs,
    fractions allowed) or ``max_steps`` (steps; samples and tokens converted at the call's batch
    size). Re-running after a crash resumes each call from the last checkpoint in its
    ``output_dir``, when there is one. A data-parallel loader runs on its ``world_size``
    processes under torchrun with its per-device batch as ``per_device_train_batch_size`` and
    its accumulation as ``gradient_accumulation_steps``; the ranks are evened as accelerate
    does (``even_batches``: cycling from the epoch's start), whatever the loader's padding.
    """
    calls: list[Call] = []
    notes: list[str] = []
    for step in steps_of(scenario, data, "Hugging Face"):
        sharding = step.call.loader.sharding
        world, per_device, accumulation = 1, step.batch_size, 1
        if sharding is not None:
            world, per_device = sharding.world_size, sharding.device_batch_size
            accumulation = sharding.accumulation
        if step.kind == "until" and step.index > 0:
            raise Unsupported(
                "Hugging Face counts every train() of a new Trainer from step 0; an absolute "
                f"until= has no equivalent after the first call (call #{step.index})"
            )
        length: dict[str, int | float]
        if step.request.unit is Unit.EP:
            length = {"num_train_epochs": float(step.request.value)}
        else:
            length = {"max_steps": step.steps()}
        calls.append(
            Call(
                data=step.data,
                train_sampling_strategy="sequential",
                save_steps=1,
                output_dir=f"phase{step.index}",
                world_size=world,
                per_device_train_batch_size=per_device,
                gradient_accumulation_steps=accumulation,
                **length,  # type: ignore[arg-type]
            )
        )
        written = ", ".join(f"{key}={value!r}" for key, value in length.items())
        if step.request.unit in (Unit.SP, Unit.TOK):
            written += f" (HF has no {step.request.unit} limit: {step.request} as steps)"
        arguments = f"{written}, output_dir='phase{step.index}'"
        note = f"Trainer(TrainingArguments({arguments})).train()"
        if sharding is not None:
            geometry = f"per_device_train_batch_size={per_device}, "
            if accumulation != 1:
                geometry += f"gradient_accumulation_steps={accumulation}, "
            note = f"torchrun --nproc_per_node={world}: " + note.replace(
                "TrainingArguments(", f"TrainingArguments({geometry}", 1
            )
            if sharding.padding.value != "cycle":
                note += f" (accelerate evens the ranks by cycling, not by {sharding.padding.value})"
        notes.append(note)
    rerun = tuple(attrs.evolve(call, resume_latest=True) for call in calls)
    return Translation(calls=tuple(calls), rerun=rerun, notes=tuple(notes), crash_counter="call")
