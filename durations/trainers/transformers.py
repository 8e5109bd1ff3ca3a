"""The Hugging Face transformers profile: what ``Trainer.train`` does with durations and resumes.

A pure emulation of ``transformers.Trainer.train`` at version :data:`VERSION` (no framework is
imported), verified against real runs in ``tests/frameworks/``. A :class:`Call` is one
``train()`` call in HF's own vocabulary (``TrainingArguments`` fields plus how the call is made);
:func:`simulate` runs a sequence of them as HF would and reports, per call, the sample ids and
the learning rate of every optimizer step, HF's ``TrainerState`` counters afterwards, the log
lines HF prints about durations and resumes, and the exception it raises.

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
- Each ``train()`` builds its learning-rate scheduler over its own ``max_steps``. A resume
  restores the optimizer's rate (used by its first step) and the scheduler's base and step,
  not its lambda: the new call's length, warmup and type apply from its second step on.

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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import attrs

from ..planner import plan as make_plan
from ..scenario import Scenario
from ..units import Unit
from ._outcome import CallOutcome, Dataset, Ids, TrainerError, Translation, Unsupported, joined
from ._script import Shape, shapes, steps_of

__all__ = ["RULES", "VERSION", "Call", "Overrides", "simulate"]

VERSION = "5.24.0"
"""The transformers version this profile emulates and was verified against."""

_TRAINER = "transformers/trainer.py"
_ACCELERATE = "accelerate/data_loader.py"
_CALLBACK = "transformers/trainer_callback.py"
_UTILS = "transformers/trainer_utils.py"
_OPTIMIZATION = "transformers/optimization.py"
_ARGS = "transformers/training_args.py"
_TORCH_SCHEDULER = "torch/optim/lr_scheduler.py"

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
        "With save_strategy 'epoch', a checkpoint-<global_step> is saved at the end of every "
        "epoch the loop runs, also of an epoch that a max_steps stop cuts short.",
        f"{_CALLBACK}:618 (DefaultFlowCallback.on_epoch_end), {_TRAINER}:1989 (_run_epoch)",
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
    (
        "crash_at = k kills the call in on_step_begin while global_step >= k: it fires once per "
        "optimizer step, at the first micro-batch of its accumulation group (step % "
        "gradient_accumulation_steps == 0), after the group's batches are fetched and after the "
        "previous step's saves and epoch end. A call that starts no further step is not killed.",
        f"{_TRAINER}:1901 (_run_epoch), {_TRAINER}:1881 (_run_epoch)",
    ),
    (
        "Every train() builds a new scheduler over num_training_steps = that call's computed "
        "max_steps, so a second train() on the same Trainer warms up and decays again over "
        "its own length; the optimizer is built once per Trainer and kept.",
        f"{_TRAINER}:1724 (_prepare_for_training), {_TRAINER}:1778 (_prepare_for_training), "
        f"{_TRAINER}:1271 (create_optimizer)",
    ),
    (
        "The scheduler is a LambdaLR whose base is the optimizer's initial_lr (learning_rate "
        "when the optimizer was built); building it sets the rate to base * lr_lambda(0), and "
        "after each optimizer step it moves on to base * lr_lambda(global_step), so the step "
        "from global_step k to k + 1 (all its accumulated micro-batches) uses lr_lambda(k).",
        f"{_TORCH_SCHEDULER}:135 (LRScheduler.__init__), {_TORCH_SCHEDULER}:465 "
        f"(LambdaLR.get_lr), {_TRAINER}:1952 (_run_epoch)",
    ),
    (
        "The warmup W is int(warmup_steps) steps when warmup_steps >= 1, else ceil(N * "
        "warmup_steps) (a ratio of the call's max_steps N). In the rules below k is the "
        "scheduler's step (the lambda's argument).",
        f"{_ARGS}:2158 (get_warmup_steps)",
    ),
    (
        "'linear' is k / max(1, W) for k < W, then max(0, (N - k) / max(1, N - W)); "
        "'constant_with_warmup' is k / max(1, W) for k < W, then 1; 'constant' is 1 at every "
        "step and ignores warmup_steps.",
        f"{_OPTIMIZATION}:101 (_get_linear_schedule_with_warmup_lr_lambda), {_OPTIMIZATION}:74 "
        f"(_get_constant_schedule_with_warmup_lr_lambda), {_OPTIMIZATION}:1014 (get_scheduler)",
    ),
    (
        "'cosine' and 'cosine_with_min_lr' are k / max(1, W) for k < W, then with p = (k - W) "
        "/ max(1, N - W) the factor 0.5 * (1 + cos(pi * num_cycles * 2 * p)) scaled to "
        "[min_lr_rate, 1] (min_lr_rate 0 for 'cosine', min_lr / learning_rate when min_lr is "
        "given).",
        f"{_OPTIMIZATION}:326 (the later of two _get_cosine_schedule_with_warmup_lr_lambda), "
        f"{_OPTIMIZATION}:375 (get_cosine_with_min_lr_schedule_with_warmup)",
    ),
    (
        "'polynomial' is k / max(1, W) for k < W, then ((lr - lr_end) * (1 - (k - W) / (N - W)) "
        "** power + lr_end) / lr with lr the optimizer's learning_rate, and lr_end / lr past N.",
        f"{_OPTIMIZATION}:221 (_get_polynomial_decay_schedule_with_warmup_lr_lambda), "
        f"{_OPTIMIZATION}:273 (get_polynomial_decay_schedule_with_warmup)",
    ),
    (
        "'warmup_stable_decay' rises from min_lr_ratio to 1 over W steps (warmup_type), holds "
        "1 for N - W - num_decay_steps steps, decays to min_lr_ratio over num_decay_steps "
        "(decay_type) and holds min_lr_ratio after.",
        f"{_OPTIMIZATION}:470 (_get_wsd_scheduler_lambda), {_OPTIMIZATION}:1037 (get_scheduler)",
    ),
    (
        "A checkpoint saves the optimizer's current rate (the next step's) in optimizer.pt and "
        "the scheduler's base and step in scheduler.pt; a resume restores both, so its first "
        "step uses the rate the checkpoint's scheduler had set and every later step base * the "
        "new call's lr_lambda(global_step).",
        f"{_TRAINER}:3989 (_load_optimizer_and_scheduler), torch/optim/optimizer.py:881 "
        "(Optimizer.load_state_dict)",
    ),
    (
        "scheduler.pt does not hold the lr_lambda (a functools.partial, whose __dict__ is "
        "empty): a resume keeps the new call's lambda, with its own max_steps, warmup and "
        "type, and only its base and step come from the checkpoint, as does the optimizer's "
        "initial_lr for schedulers built later on that Trainer.",
        f"{_TORCH_SCHEDULER}:421 (LambdaLR.load_state_dict)",
    ),
)
"""Every rule the emulation applies: (the rule in plain words, where transformers does it)."""

_Strategy = Literal["no", "steps", "epoch"]
_Sampling = Literal["random", "sequential"]
_SchedulerType = Literal[
    "linear",
    "cosine",
    "cosine_with_min_lr",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "warmup_stable_decay",
]
_SchedulerKwargs = Mapping[str, float | str]

#: The ``lr_scheduler_kwargs`` each modelled ``lr_scheduler_type`` takes (HF passes them on to
#: the schedule function; ``num_stable_steps`` of ``warmup_stable_decay`` is left out: HF always
#: passes ``num_training_steps`` too, and torch warns about the pair).
_KWARGS: dict[str, frozenset[str]] = {
    "linear": frozenset(),
    "cosine": frozenset({"num_cycles"}),
    "cosine_with_min_lr": frozenset({"num_cycles", "min_lr", "min_lr_rate"}),
    "polynomial": frozenset({"lr_end", "power"}),
    "constant": frozenset(),
    "constant_with_warmup": frozenset(),
    "warmup_stable_decay": frozenset(
        {"num_decay_steps", "warmup_type", "decay_type", "min_lr_ratio", "num_cycles"}
    ),
}


def _copied_kwargs(value: _SchedulerKwargs | None) -> _SchedulerKwargs:
    """``lr_scheduler_kwargs`` as the call's own copy, read through ``Mapping`` (``None`` is
    HF's default: none)."""
    return dict(value or {})


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
    ``get_last_checkpoint`` (highest step number).

    ``crash_at = k`` (an int >= 0) kills the process, as SIGKILL would, at the moment the Trainer
    is about to start an optimizer step while ``state.global_step >= k``: at ``on_step_begin``,
    which ``_run_epoch`` calls once per optimizer step, at the first micro-batch of its
    accumulation group (the group's batches are already fetched then, none has been forwarded).
    So everything HF does after step k and before the next step has happened: the checkpoints
    its own ``save_strategy``/``save_steps`` write (every ``save_steps``, at the run's last step,
    at an epoch's end), the epoch's end, and the end of ``train()``; nothing of the next step has.
    The checkpoints are wherever those settings put them, not necessarily at step k: a re-run
    with ``resume_latest`` resumes from the newest, so the steps after it are lost and trained
    again. A call that ends without starting another step (``k`` at or past its last step) does
    not crash; a call that starts at ``global_step >= k`` (a resume) is killed before its first
    step, if it has one. The outcome of the killed call has ``crashed`` set.

    ``world_size`` is the number of processes the job runs on (``torchrun --nproc_per_node``),
    each with its own Trainer built from the same call; a resume may run on another number.
    A reused Trainer (``fresh`` false) is the same processes, so the same world size.

    The learning rate is the Trainer's own scheduler, as ``TrainingArguments`` takes it:
    ``learning_rate``, ``lr_scheduler_type`` (the modelled types: ``linear``, ``cosine``,
    ``cosine_with_min_lr``, ``polynomial``, ``constant``, ``constant_with_warmup``,
    ``warmup_stable_decay``), ``warmup_steps`` (steps, or a ratio of ``max_steps`` below 1) and
    ``lr_scheduler_kwargs`` (the keys of :data:`_KWARGS`; ``simulate`` raises ``ValueError`` for
    others). The outcome's ``rates`` are the learning rate of every optimizer step, as the
    optimizer has it (``learning_rate`` times the scheduler's factor, or what a checkpoint
    restored).
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
    learning_rate: float = 5e-5
    lr_scheduler_type: _SchedulerType = "linear"
    warmup_steps: float = 0
    lr_scheduler_kwargs: _SchedulerKwargs = attrs.field(
        factory=dict, converter=_copied_kwargs, hash=False
    )


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
    learning_rate: float
    lr_scheduler_type: _SchedulerType
    warmup_steps: float
    lr_scheduler_kwargs: _SchedulerKwargs

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
class _Optimizer:
    """What the learning rate needs of a Trainer's optimizer (built once per Trainer)."""

    lr: float  # param_groups[0]["lr"]: the rate the next optimizer step uses
    initial_lr: float  # param_groups[0]["initial_lr"]: the base of every scheduler built on it
    defaults_lr: float  # defaults["lr"]: learning_rate when the optimizer was built


@attrs.define(kw_only=True)
class _Scheduler:
    """The ``LambdaLR`` of one ``train()``: its base, its step (``last_epoch``), its lambda."""

    base: float
    last_epoch: int
    factor: Callable[[int], float]

    def step(self, optimizer: _Optimizer) -> None:
        """``lr_scheduler.step()``: the next step's rate, ``base * lr_lambda(last_epoch)``."""
        self.last_epoch += 1
        optimizer.lr = self.base * self.factor(self.last_epoch)


@attrs.define(kw_only=True)
class _Trainer:
    built_with: Call
    args: _Args
    train_batch_size: int
    state: _State = attrs.Factory(_State)
    optimizer: _Optimizer | None = None
    scheduler: _Scheduler | None = None


@attrs.frozen(kw_only=True)
class _Checkpoint:
    """A ``checkpoint-N`` folder: ``trainer_state.json``, and of ``optimizer.pt`` and
    ``scheduler.pt`` what the learning rate needs."""

    state: _State
    lr: float  # the optimizer's rate: the one the step after the checkpoint uses
    base: float  # the scheduler's base_lrs (and the optimizer's initial_lr)
    last_epoch: int  # the scheduler's step


@attrs.define(kw_only=True)
class _Disk:
    """The checkpoints written so far: ``(output_dir, step) -> checkpoint``, and the write order."""

    saved: dict[tuple[str, int], _Checkpoint] = attrs.Factory(dict)
    #: Each folder's checkpoints in the order they were (last) written: O(1) a save.
    order: dict[str, dict[int, None]] = attrs.Factory(dict)

    def save(self, output_dir: str, trainer: _Trainer) -> None:
        state, optimizer, scheduler = trainer.state, trainer.optimizer, trainer.scheduler
        assert optimizer is not None  # built before the first step
        assert scheduler is not None
        key = (output_dir, state.global_step)
        self.saved[key] = _Checkpoint(
            state=attrs.evolve(state),
            lr=optimizer.lr,
            base=scheduler.base,
            last_epoch=scheduler.last_epoch,
        )
        written = self.order.setdefault(output_dir, {})
        written.pop(state.global_step, None)
        written[state.global_step] = None

    def latest(self, output_dir: str) -> _Checkpoint | None:
        written = self.order.get(output_dir)
        return self.saved[(output_dir, next(reversed(written)))] if written else None

    def highest(self, output_dir: str) -> _Checkpoint | None:
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
            _check_scheduler(call)
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
            how = f" and change it with set=Overrides({name}=...)"
            raise ValueError(
                f"Call(fresh=False, {name}={given!r}) reuses a Trainer built with "
                f"{name}={kept!r}; a reused Trainer keeps its TrainingArguments: repeat "
                f"{name}={kept!r}" + (how if name in attrs.fields_dict(Overrides) else "")
            )


def _check_scheduler(call: Call) -> None:
    """``ValueError`` for scheduler arguments the profile does not model (or HF refuses)."""
    kind, kwargs = call.lr_scheduler_type, call.lr_scheduler_kwargs
    if kind not in _KWARGS:
        raise ValueError(
            f"lr_scheduler_type={kind!r} is not modelled; expected one of {', '.join(_KWARGS)}"
        )
    unknown = sorted(set(kwargs) - _KWARGS[kind])
    if unknown:
        raise ValueError(
            f"lr_scheduler_kwargs {unknown} are not modelled for lr_scheduler_type={kind!r}; "
            f"expected some of {sorted(_KWARGS[kind])}"
        )
    if call.warmup_steps < 0:
        raise ValueError(f"warmup_steps must be >= 0, got {call.warmup_steps!r}")
    if kind == "cosine_with_min_lr" and ("min_lr" in kwargs) == ("min_lr_rate" in kwargs):
        raise ValueError("lr_scheduler_type='cosine_with_min_lr' takes min_lr or min_lr_rate")
    if kind == "warmup_stable_decay" and not isinstance(kwargs.get("num_decay_steps"), int):
        raise ValueError("lr_scheduler_type='warmup_stable_decay' needs an int num_decay_steps")
    for key in ("warmup_type", "decay_type"):
        if kwargs.get(key, "linear") not in ("linear", "cosine", "1-sqrt"):
            raise ValueError(f"{key}={kwargs[key]!r}: expected 'linear', 'cosine' or '1-sqrt'")
    if kind == "polynomial" and not call.learning_rate > _number(kwargs, "lr_end", 1e-7):
        raise ValueError(
            f"lr_end ({kwargs['lr_end']}) must be smaller than initial lr ({call.learning_rate})"
        )


def _number(kwargs: _SchedulerKwargs, key: str, default: float) -> float:
    value = kwargs.get(key, default)
    if isinstance(value, str):
        raise ValueError(f"lr_scheduler_kwargs[{key!r}] must be a number, got {value!r}")
    return float(value)


def _lr_lambda(args: _Args, steps: int, lr: float) -> Callable[[int], float]:
    """The scheduler's ``lr_lambda`` as ``get_scheduler`` builds it for ``num_training_steps =
    steps`` on an optimizer built with learning rate ``lr``: the same float operations."""
    kind, kwargs = args.lr_scheduler_type, args.lr_scheduler_kwargs
    warmup = (
        int(args.warmup_steps) if args.warmup_steps >= 1 else math.ceil(steps * args.warmup_steps)
    )
    cycles = _number(kwargs, "num_cycles", 0.5)

    def warming(k: int) -> float:
        return float(k) / float(max(1, warmup))

    def linear(k: int) -> float:
        if k < warmup:
            return warming(k)
        return max(0.0, float(steps - k) / float(max(1, steps - warmup)))

    def constant_with_warmup(k: int) -> float:
        return float(k) / float(max(1.0, warmup)) if k < warmup else 1.0

    floor = 0.0
    if kind == "cosine_with_min_lr":
        floor = (
            _number(kwargs, "min_lr", 0.0) / lr
            if "min_lr" in kwargs
            else _number(kwargs, "min_lr_rate", 0.0)
        )

    def cosine(k: int) -> float:
        if k < warmup:
            return warming(k)
        progress = float(k - warmup) / float(max(1, steps - warmup))
        factor = 0.5 * (1.0 + math.cos(math.pi * float(cycles) * 2.0 * progress))
        factor = factor * (1 - floor) + floor
        return max(0, factor)

    lr_end, power = _number(kwargs, "lr_end", 1e-7), _number(kwargs, "power", 1.0)

    def polynomial(k: int) -> float:
        if k < warmup:
            return warming(k)
        if k > steps:
            return lr_end / lr
        pct_remaining = 1 - (k - warmup) / (steps - warmup)
        powered: float = pct_remaining**power
        return ((lr - lr_end) * powered + lr_end) / lr

    decay_steps = int(_number(kwargs, "num_decay_steps", 0))
    stable = steps - warmup - decay_steps
    ratio = _number(kwargs, "min_lr_ratio", 0.0)
    rise, fall = str(kwargs.get("warmup_type", "linear")), str(kwargs.get("decay_type", "cosine"))

    def warmup_stable_decay(k: int) -> float:
        if k < warmup:
            progress = float(k) / float(max(1, warmup))
            if rise == "linear":
                factor = progress
            elif rise == "cosine":
                factor = 0.5 * (1.0 - math.cos(math.pi * progress))
            else:
                factor = 1.0 - math.sqrt(1.0 - progress)
            return max(0.0, factor * (1.0 - ratio) + ratio)
        if k < warmup + stable:
            return 1.0
        if k < warmup + stable + decay_steps:
            progress = float(k - warmup - stable) / float(max(1, decay_steps))
            if fall == "linear":
                factor = 1.0 - progress
            elif fall == "cosine":
                factor = 0.5 * (1.0 + math.cos(math.pi * float(cycles) * 2.0 * progress))
            else:
                factor = 1.0 - math.sqrt(progress)
            return max(0.0, factor * (1.0 - ratio) + ratio)
        return ratio

    if kind == "polynomial" and steps == warmup:
        raise ValueError(
            "lr_scheduler_type='polynomial' over as many steps as its warmup divides by zero "
            f"in HF (max_steps = warmup = {steps}); not modelled"
        )
    lambdas: dict[str, Callable[[int], float]] = {
        "linear": linear,
        "cosine": cosine,
        "cosine_with_min_lr": cosine,
        "polynomial": polynomial,
        "constant": lambda k: 1.0,
        "constant_with_warmup": constant_with_warmup,
        "warmup_stable_decay": warmup_stable_decay,
    }
    return lambdas[kind]


def _apply(overrides: Overrides, args: _Args) -> None:
    for name in attrs.fields_dict(Overrides):
        value = getattr(overrides, name)
        if value is not None:
            setattr(args, name, value)


def _train(trainer: _Trainer, call: Call, disk: _Disk, messages: list[str]) -> CallOutcome:
    batches: list[Ids] = []
    rates: list[float] = []
    try:
        _run(trainer, call, disk, messages, batches, rates)
    except _RaisedError as raised:
        return CallOutcome(
            steps=len(batches),
            batches=tuple(batches),
            counters=trainer.state.counters(),
            messages=tuple(messages),
            error=raised.error,
            rates=tuple(rates),
        )
    except _CrashedError:
        return CallOutcome(
            steps=len(batches),
            batches=tuple(batches),
            counters=trainer.state.counters(),
            messages=tuple(messages),
            crashed=True,
            rates=tuple(rates),
        )
    return CallOutcome(
        steps=len(batches),
        batches=tuple(batches),
        counters=trainer.state.counters(),
        messages=tuple(messages),
        rates=tuple(rates),
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
    batches: list[Ids],
    rates: list[float],
) -> None:
    """``Trainer.train``: resolve the checkpoint, size the epochs, set up the state, build the
    optimizer and the scheduler, run."""
    if call.resume_latest and call.resume_from_checkpoint:
        raise ValueError("give resume_latest or resume_from_checkpoint, not both")
    if call.world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {call.world_size!r}")
    if call.crash_at is not None and call.crash_at < 0:
        raise ValueError(f"crash_at must be an int >= 0 or None, got {call.crash_at!r}")
    resume = _resume_from(trainer.args, call, disk)
    epochs = _epochs(trainer, call)
    epochs_trained, skip = _init_training_state(trainer, epochs, resume, messages)
    _prepare_for_training(trainer, epochs.max_steps, resume)
    _epoch_loop(trainer, call, disk, messages, batches, rates, epochs, epochs_trained, skip, resume)


def _prepare_for_training(trainer: _Trainer, max_steps: int, resume: _Checkpoint | None) -> None:
    """``create_optimizer`` (once per Trainer), ``create_scheduler(max_steps)`` (every call),
    then on resume ``_load_optimizer_and_scheduler``: the optimizer's rate and initial_lr and
    the scheduler's base and step come from the checkpoint, the lambda stays the new one."""
    args = trainer.args
    if trainer.optimizer is None:
        rate = args.learning_rate
        trainer.optimizer = _Optimizer(lr=rate, initial_lr=rate, defaults_lr=rate)
    optimizer = trainer.optimizer
    factor = _lr_lambda(args, max_steps, optimizer.defaults_lr)
    scheduler = _Scheduler(base=optimizer.initial_lr, last_epoch=-1, factor=factor)
    scheduler.step(optimizer)  # LambdaLR's initial step: last_epoch 0
    if resume is not None:
        optimizer.lr, optimizer.initial_lr = resume.lr, resume.base
        scheduler.base, scheduler.last_epoch = resume.base, resume.last_epoch
    trainer.scheduler = scheduler


def _resume_from(args: _Args, call: Call, disk: _Disk) -> _Checkpoint | None:
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
    trainer: _Trainer, epochs: _Epochs, resume: _Checkpoint | None, messages: list[str]
) -> tuple[int, int]:
    """``_init_training_state()``: the state (restored from ``resume``), the epochs trained and
    the batches to skip, and what ``train()`` logs. Returns the last two."""
    args = trainer.args
    state = _State(save_steps=args.save_steps, train_batch_size=epochs.batch_size)
    epochs_trained = 0
    skip = 0
    if resume is not None:
        state = attrs.evolve(resume.state)
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
    batches: list[Ids],
    rates: list[float],
    epochs: _Epochs,
    epochs_trained: int,
    skip: int,
    resume: _Checkpoint | None,
) -> None:
    """The epoch loop of ``_inner_training_loop()`` and ``_run_epoch()``."""
    args, state, data = trainer.args, trainer.state, call.data
    optimizer, scheduler = trainer.optimizer, trainer.scheduler
    assert optimizer is not None
    assert scheduler is not None
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
        pending: list[Ids] = []
        stop = False
        for update in range(updates_done, epochs.updates_per_epoch):
            wanted = accumulation if update != epochs.updates_per_epoch - 1 else remainder
            fetched = range(position, min(position + wanted, epochs.len_dataloader))
            position = fetched.stop if fetched else position
            for batch in fetched:
                step += 1
                start = batch * epochs.round_size
                read = range(start, min(start + epochs.round_size, epochs.epoch_length))
                if step % accumulation == 0 and _killed(call, state):
                    raise _CrashedError  # on_step_begin of the next optimizer step
                pending.append(data.read(read, epoch=epoch, shuffled=epochs.shuffled))
                if (step + 1) % accumulation != 0 and step + 1 != steps_in_epoch:
                    continue
                rates.append(optimizer.lr)  # optimizer.step(), then lr_scheduler.step()
                scheduler.step(optimizer)
                state.global_step += 1
                state.epoch = epoch + (step + 1) / steps_in_epoch
                batches.append(joined(pending))
                pending = []
                stop = state.global_step >= state.max_steps
                if args.save_strategy == "steps" and (
                    (state.save_steps > 0 and state.global_step % state.save_steps == 0) or stop
                ):
                    disk.save(args.output_dir, trainer)
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
        if args.save_strategy == "epoch":  # on_epoch_end, also after a stop inside the epoch
            disk.save(args.output_dir, trainer)
        if stop:
            break


def _killed(call: Call, state: _State) -> bool:
    """Whether the process is killed as an optimizer step is about to start."""
    return call.crash_at is not None and state.global_step >= call.crash_at


# -- writing a durations scenario in Hugging Face's idiom -----------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Hugging Face user writes it: one ``Trainer`` per call (its counters start
    at 0, the only way to train a second data set for a while: trainers.md B.4), each with its
    own ``output_dir`` and ``save_steps=1``, and the length as ``num_train_epochs`` (epochs,
    fractions allowed) or ``max_steps`` (steps; samples and tokens converted at the call's batch
    size). Re-running after a crash resumes each call from the last checkpoint in its
    ``output_dir``, when there is one; with ``save_steps=1`` that is the step the crash came
    after, so the comparison shows how HF resumes rather than how many steps a sparser
    ``save_steps`` loses and trains again. A data-parallel loader runs on its ``world_size``
    processes under torchrun with its per-device batch as ``per_device_train_batch_size`` and
    its accumulation as ``gradient_accumulation_steps``; the ranks are evened as accelerate
    does (``even_batches``: cycling from the epoch's start), whatever the loader's padding.

    A ``[schedule]`` is written in each call's own ``TrainingArguments``, since each call's
    Trainer builds its scheduler over its own ``max_steps``: the call's part of the schedule
    (``shapes(scenario, plan, per="call")``) as ``learning_rate`` = its
    peak, ``warmup_steps`` and the ``lr_scheduler_type`` of its decay (``constant`` or
    ``constant_with_warmup``, ``linear``, ``cosine``, and to a floor ``cosine_with_min_lr`` or
    a linear ``polynomial`` with ``lr_end``). A schedule that cannot be written so leaves every
    Trainer at ``learning_rate=1.0``, constant, and ``Translation.schedule`` says why.
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
        elif step.steps() == 0:  # max_steps=0 would still train a step; no epoch trains none
            length = {"num_train_epochs": 0.0}
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
    schedule = ""
    if scenario.schedule is not None:
        try:
            found = shapes(scenario, make_plan(scenario.config, scenario.calls), per="call")
            schedulers = [_scheduler(shape, index) for index, shape in enumerate(found)]
        except Unsupported as why:
            calls = [
                attrs.evolve(call, learning_rate=1.0, lr_scheduler_type="constant")
                for call in calls
            ]
            schedule = (
                f"cannot be written: {why}; each Trainer runs at learning_rate=1.0, "
                'lr_scheduler_type="constant"'
            )
        else:
            calls = [
                attrs.evolve(
                    call,
                    learning_rate=written.learning_rate,
                    lr_scheduler_type=written.lr_scheduler_type,
                    warmup_steps=written.warmup_steps,
                    lr_scheduler_kwargs=written.lr_scheduler_kwargs,
                )
                for call, written in zip(calls, schedulers, strict=True)
            ]
            schedule = "one Trainer per call, its scheduler over its own max_steps: " + "; ".join(
                f"call #{index}: TrainingArguments({written})"
                for index, written in enumerate(schedulers)
            )
    rerun = tuple(attrs.evolve(call, resume_latest=True) for call in calls)
    return Translation(
        calls=tuple(calls),
        rerun=rerun,
        notes=tuple(notes),
        crash_counter="call",
        schedule=schedule,
    )


@attrs.frozen(kw_only=True)
class _Written:
    """A call's part of the schedule in ``TrainingArguments``; ``str`` is how a user writes it."""

    learning_rate: float
    lr_scheduler_type: _SchedulerType
    warmup_steps: int
    lr_scheduler_kwargs: dict[str, float] = attrs.field(hash=False)

    def __str__(self) -> str:
        text = f'learning_rate={self.learning_rate!r}, lr_scheduler_type="{self.lr_scheduler_type}"'
        if self.warmup_steps and self.lr_scheduler_type != "constant":
            text += f", warmup_steps={self.warmup_steps}"
        if self.lr_scheduler_kwargs:
            pairs = ", ".join(f'"{k}": {v!r}' for k, v in self.lr_scheduler_kwargs.items())
            text += f", lr_scheduler_kwargs={{{pairs}}}"
        return text


def _scheduler(shape: Shape, index: int) -> _Written:
    """A call's part of the schedule as ``TrainingArguments``, or :class:`Unsupported` when
    HF's scheduler types cannot say it."""
    kind: _SchedulerType
    kwargs: dict[str, float] = {}
    if shape.peak == 0 and shape.floor != 0:
        raise Unsupported(
            f"call #{index}'s part of the schedule leaves factor {shape.floor} from a peak of 0: "
            "HF's schedulers scale learning_rate, which would be 0"
        )
    if shape.decay == "constant" or shape.floor == shape.peak:
        kind = "constant_with_warmup" if shape.warmup else "constant"
    elif shape.decay == "cosine":
        kind = "cosine" if shape.floor == 0 else "cosine_with_min_lr"
        if shape.floor:
            kwargs["min_lr_rate"] = float(shape.floor_ratio)
    elif shape.floor == 0:
        kind = "linear"
    elif shape.floor < shape.peak:
        kind = "polynomial"  # power 1: linear from learning_rate to lr_end
        kwargs.update(lr_end=float(shape.floor), power=1.0)
    else:
        raise Unsupported(
            f"call #{index}'s part of the schedule rises linearly from {shape.peak} to "
            f"{shape.floor}: no HF scheduler type warms up from 0 and then rises linearly"
        )
    return _Written(
        learning_rate=float(shape.peak),
        lr_scheduler_type=kind,
        warmup_steps=shape.warmup,
        lr_scheduler_kwargs=kwargs,
    )
