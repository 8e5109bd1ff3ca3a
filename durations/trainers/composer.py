"""Composer (``mosaicml`` 0.32.1) ``Trainer.fit``, emulated.

A pure emulation: nothing of Composer or torch is imported. It predicts what a sequence of
``Trainer(...)`` / ``Trainer.fit(...)`` calls trains, sample id by sample id, and the
``Timestamp`` counters (``epoch``, ``batch``, ``sample``, ``token``, ``batch_in_epoch``,
``sample_in_epoch``, ``token_in_epoch``) afterwards, and the learning rate of every optimizer
step under one of Composer's own schedulers (:class:`Scheduler`).

How it was verified: against real runs of Composer 0.32.1's ``Trainer`` on torch 2.13.0+cpu
(a separate venv, with torchvision's two ``register_fake`` decorators made conditional; see
``tests/frameworks/_composer_runner.py``). The runner trains a one-parameter model with SGD
(learning rate 0.1 times the call's ``lr``) on a map-style data set whose items carry their ids,
and records the ids of every optimizer step (``BATCH_END``; all its micro-batches' forward
passes, in order), the optimizer's learning rate at each step's ``BATCH_START`` (divided by
0.1), the timestamp after each call, the warnings and the exact error texts. The recorded
observations are ``tests/frameworks/observed_composer.json`` and
``tests/frameworks/test_profile_composer.py`` compares this module with every one of them.
Each rule below also names the source line it comes from (``composer/trainer/trainer.py``,
``composer/core/time.py``, ``composer/utils/misc.py``, ``composer/core/data_spec.py``,
``composer/callbacks/checkpoint_saver.py``, ``composer/optim/scheduler.py`` of the 0.32.1
wheel, and torch's ``lr_scheduler.py``).

Tokens are counted as Composer's default ``DataSpec`` counts them for a data set with a
``max_seq_len`` attribute: ``tokens_per_sample`` tokens a sample (:class:`Call`).

Not modelled: shuffled samplers, ``drop_last``, iterations, wall-clock (``sec``) and ``dur``
durations in ``fit`` (refused with :class:`NotImplementedError`), a token duration on data
without tokens (Composer counts 0 tokens a batch and never stops; refused likewise), other
token counters (a ``DataSpec`` with its own ``get_num_tokens_in_batch``), float micro-batch
sizes and ``fit(device_train_microbatch_size=...)`` (micro-batches never change which samples a
step reads), scale-schedule ratios, Composer's other schedulers, several schedulers, PyTorch
schedulers, a scheduler time in ``sec`` or ``iter``, a Trainer with a scheduler resuming a
checkpoint saved without one (refused with :class:`NotImplementedError`), and the checkpoint
saver's file-conflict check
(``FileExistsError`` when ``save_overwrite=False`` finds checkpoints "from the future" in
``save_folder``). A trainer that is not built with ``autoresume`` is assumed to have
``save_overwrite=True``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import attrs

from ..loader import Loader
from ..planner import plan as make_plan
from ..scenario import Scenario
from ..time import Time as DurationsTime
from ._outcome import CallOutcome, Dataset, Ids, TrainerError, Translation, Unsupported
from ._script import Shape, shapes, steps_of

__all__ = ["RULES", "VERSION", "Call", "Scheduler", "simulate", "translate"]

VERSION = "0.32.1"

RULES: tuple[tuple[str, str], ...] = (
    (
        "A time string is `<number><unit>`, the number read with `float()`; for every unit but "
        "`dur` a non-integral number raises TypeError 'value 0.1 is not an integer. Units "
        "TimeUnit.EPOCH require integer values.'",
        "composer/core/time.py:391 (Time.from_timestring)",
    ),
    (
        "A wall-clock (`sec`) max_duration or duration is refused with ValueError 'Wall clock "
        "time not an allowed time unit.'",
        "composer/trainer/trainer.py:1563 (Trainer.__init__), 2105 (fit)",
    ),
    (
        "A `dur` max_duration is refused by the State setter: ValueError 'TimeUnit.DURATION is "
        "not allowed as a unit for max_duration'.",
        "composer/core/state.py (State.max_duration setter)",
    ),
    (
        "fit(reset_time=True) replaces the timestamp by a zero Timestamp before anything else "
        "about durations is checked.",
        "composer/trainer/trainer.py:2100 (fit)",
    ),
    (
        "fit(duration=d) sets max_duration = d + timestamp.get(d.unit): the duration is added to "
        "the elapsed time counted in d's unit, so it is additive across fits and resumes.",
        "composer/trainer/trainer.py:2112 (fit)",
    ),
    (
        "Without max_duration from the Trainer or fit, fit raises ValueError 'max_duration is a "
        "required argument ...'.",
        "composer/trainer/trainer.py:2114 (fit), 141 (_raise_missing_argument_exception)",
    ),
    (
        "Unless reset_time, fit raises ValueError 'The max_duration (X) is less than or equal to "
        "the elapsed training duration (Y). No training would occur. ...' when max_duration <= "
        "the elapsed count in max_duration's unit.",
        "composer/trainer/trainer.py:2125 (fit)",
    ),
    (
        "max_duration is not saved in checkpoints; a resumed Trainer uses its own max_duration "
        "(or the one its fit computes from the restored timestamp).",
        "composer/core/state.py (State.serialized_attributes)",
    ),
    (
        "load_path and autoresume restore the whole Timestamp; autoresume loads the latest "
        "checkpoint in save_folder and otherwise starts fresh. The PR #3358 validation "
        "(autoresume forbids fit(duration) and reset_time) is not in 0.32.1: it was reverted "
        "(#3364), so fit(duration) re-adds the duration on every autoresumed restart (#3357).",
        "composer/trainer/trainer.py:1617 (Trainer.__init__ autoresume)",
    ),
    (
        "Training runs while timestamp < max_duration; each epoch pass iterates the loader from "
        "its first batch, and with spin_dataloaders=True skips (iterates without training) the "
        "first batch_in_epoch batches; with spin_dataloaders=False it trains them again.",
        "composer/trainer/trainer.py:2416 and 2431 (_train_loop)",
    ),
    (
        "After each batch: batch += 1, batch_in_epoch += 1, sample and sample_in_epoch += the "
        "batch's samples; the pass breaks as soon as timestamp >= max_duration.",
        "composer/trainer/trainer.py:2514 and 2526 (_train_loop), composer/core/time.py "
        "(Timestamp.to_next_batch)",
    ),
    (
        "The epoch ends (epoch += 1, batch_in_epoch = sample_in_epoch = 0) only if the pass was "
        "not broken early or batch_in_epoch equals the loader length: a mid-epoch stop such as "
        "'15ba' leaves epoch=1, batch_in_epoch=5.",
        "composer/trainer/trainer.py:2543 (_train_loop), composer/core/time.py "
        "(Timestamp.to_next_epoch)",
    ),
    (
        "fit(train_dataloader=...) swaps the loader but keeps the timestamp: batch_in_epoch "
        "batches of the new loader are skipped, all of them if it is that short (0 batches "
        "trained, the epoch still ends).",
        "composer/trainer/trainer.py:2083 (fit), 2431 and 2543 (_train_loop)",
    ),
    (
        "A pass that ends before any batch of this fit was trained warns 'No batches were "
        "trained for global rank 0. ...'.",
        "composer/trainer/trainer.py:2538 (_train_loop)",
    ),
    (
        "save_interval 'Nba'/'Nsp'/'Ntok' asks for a save at BATCH_CHECKPOINT when the count "
        "crosses a multiple of N, 'Nep' at EPOCH_CHECKPOINT; N <= 0 never asks. At the end of "
        "training (elapsed >= 1) both events ask, unless an interval save was asked for at this "
        "batch (the scheduler's last_batch_seen, which only interval saves set).",
        "composer/utils/misc.py:105 (create_interval_scheduler.check_interval)",
    ),
    (
        "The CheckpointSaver saves only if its last save (of this Trainer) was at another batch: "
        "a run that ends at an epoch's last batch saves once, at BATCH_CHECKPOINT, before the "
        "epoch counter advances (epoch=e, batch_in_epoch=len). A resume from it spins that "
        "whole epoch without training: '10ba' saved with '1ep' or '1ba', then fit(duration="
        "'1ep') trains 0 steps and ends at epoch 1, batch 10.",
        "composer/callbacks/checkpoint_saver.py:371 and 379 (batch_checkpoint, epoch_checkpoint), "
        "437 (_save_checkpoint)",
    ),
    (
        "The Timestamp counts whole batches: samples += the batch's samples, tokens += "
        "DataSpec.get_num_tokens_in_batch, which for a data set with max_seq_len is max_seq_len "
        "x the batch's samples (0 without it); an epoch's end zeroes token_in_epoch. A 'tok' "
        "max_duration stops after the batch that reaches it, so '1000tok' at 80 tokens a batch "
        "trains 13 batches (token=1040).",
        "composer/core/data_spec.py:297 (_default_get_num_tokens_in_batch), composer/core/time.py "
        "(Timestamp.to_next_batch, to_next_epoch), composer/trainer/trainer.py:2442",
    ),
    (
        "device_train_microbatch_size=m splits each batch with torch's split: ceil(n / m) "
        "micro-batches of m samples, in order, the last one shorter (3, 3, 3, 1 for 10 in 3s); "
        "a batch shorter than m is one micro-batch (with the warning 'Cannot split tensor of "
        "length ...'). One optimizer step, one BATCH_START and one timestamp step per batch, "
        "whatever m; unset, m is the loader's batch_size.",
        "composer/core/data_spec.py:38 (_split_tensor), composer/trainer/trainer.py:2674 "
        "(_train_batch), 260 (_get_initial_device_train_microbatch_size)",
    ),
    (
        "device_train_microbatch_size='auto' warns that it 'may potentially fail with unexpected "
        "CUDA errors' and, on CPU, Trainer raises ValueError 'Can only use adaptive "
        "device_train_microbatch_size on GPU. Please set device_train_microbatch_size >= 1.'",
        "composer/trainer/trainer.py:241 (_is_auto_microbatching)",
    ),
    (
        "A Composer scheduler is a function of the State, compiled into a torch LambdaLR on the "
        "optimizer: its constructor sets param_groups' initial_lr to the optimizer's current lr "
        "unless a scheduler built earlier set it, and evaluates the function once: lr = "
        "initial_lr * alpha(state).",
        "composer/optim/scheduler.py:202 (compile_composer_scheduler), "
        "torch/optim/lr_scheduler.py:131 (LRScheduler.__init__), 464 (LambdaLR.get_lr)",
    ),
    (
        "Trainer(schedulers=...) is compiled in Trainer.__init__, before a checkpoint is loaded: "
        "without max_duration the scheduler's assertion fails, AssertionError 'max_duration "
        "should be set whenever schedulers are invoked'. fit(schedulers=...) is compiled after "
        "fit has set max_duration and checked it, and replaces the Trainer's scheduler.",
        "composer/trainer/trainer.py:1570 (Trainer.__init__), 2138 (fit), "
        "composer/optim/scheduler.py:848 (CosineAnnealingWithWarmupScheduler.__call__)",
    ),
    (
        "The scheduler steps once a batch, after the batch's optimizer step and before the "
        "timestamp advances: the step at timestamp t (t >= 1) uses alpha of timestamp t - 1, "
        "evaluated with the max_duration of that moment; the first step after a compile uses "
        "alpha of the timestamp the compile saw. Micro-batches share their batch's rate.",
        "composer/trainer/trainer.py:2490 (_train_loop: scheduler.step()), 2501 "
        "(timestamp.to_next_batch)",
    ),
    (
        "A time is converted on every evaluation: 'dur' is that fraction of the current "
        "max_duration (int(), in batches of the current loader's length when max_duration is in "
        "epochs), 'ep' is epochs x the loader's length in batches; without a loader length "
        "either raises RuntimeError 'Cannot convert time, as state.dataloader_len is None.'",
        "composer/optim/scheduler.py:138 (_convert_time)",
    ),
    (
        "t_warmup and t_max, converted, must share a unit (ValueError 'Cannot use warmup "
        "scheduler with t_max ... t_warmup and t_max must use the same units.'), and t_max must "
        "be >= max_duration when they are comparable (same unit, or batches against epochs x "
        "the loader's length): ValueError 't_max X must be greater than or equal to "
        "max_duration Y. ...', raised wherever the scheduler is evaluated, so a fit(duration=) "
        "past a t_max in batches fails at the scheduler step after its first batch, which has "
        "trained. A warmup of 0 warns 'The warmup duration is 0. ...' at every evaluation.",
        "composer/optim/scheduler.py:575 (_raise_if_warmup_and_max_incompatible), 532 "
        "(_raise_if_max_duration_exceeds_t_max), 853",
    ),
    (
        "alpha(t): during the warmup (timestamp < t_warmup) t / t_warmup x the target (1, or "
        "alpha_i, or alpha), clipped at 1; then with f = min(1, (t - t_warmup) / (t_max - "
        "t_warmup)) (0 when t_max <= t_warmup) CosineAnnealingWithWarmupScheduler is alpha_f + "
        "(1 - alpha_f)(1 + cos(pi f)) / 2 (f clipped to [0, 1]), LinearWithWarmupScheduler "
        "alpha_i + f (alpha_f - alpha_i), ConstantWithWarmupScheduler(alpha) the linear one "
        "from alpha to alpha. The decay ends at t_max, not t_warmup + t_max as the docstrings "
        "write.",
        "composer/optim/scheduler.py:348 (LinearScheduler), 389 (_cosine_anneal), 771 "
        "(LinearWithWarmupScheduler), 847 (CosineAnnealingWithWarmupScheduler), 713 "
        "(ConstantWithWarmupScheduler)",
    ),
    (
        "A checkpoint holds the optimizer (its lr and initial_lr) and the LambdaLR's state, not "
        "its function; loading it after the compile in Trainer.__init__ restores the lr the "
        "saved run had set for its next step, so a resumed run's first step uses it (the saved "
        "run's curve, even when the resumed max_duration differs) and every later one alpha of "
        "the restored timestamp. fit(schedulers=...) on the resumed Trainer compiles again and "
        "overwrites that lr with alpha of the restored timestamp.",
        "composer/core/state.py:546 (State.serialized_attributes), 1421 (load_state_dict), "
        "composer/trainer/trainer.py:1715 (Trainer.__init__ load_checkpoint)",
    ),
)

_UNITS = ("iter", "ep", "ba", "sp", "tok", "dur", "sec")
_UNIT_NAMES = {
    "iter": "ITERATION",
    "ep": "EPOCH",
    "ba": "BATCH",
    "sp": "SAMPLE",
    "tok": "TOKEN",
    "dur": "DURATION",
    "sec": "SECOND",
}
_TIME_RE = re.compile(r"^(.+)(" + "|".join(_UNITS) + r")$", flags=re.IGNORECASE)
_MODELLED = ("ep", "ba", "sp", "tok")

_DEFAULT_DATA = Dataset(samples=100)

_NO_BATCHES = (
    "UserWarning: No batches were trained for global rank 0. This may be due to an issue with "
    "the train dataset, dataloader, or sampler. This may cause other issues or crashes down "
    "the line."
)
_AUTO_MICROBATCH = (
    "UserWarning: `device_train_microbatch_size='auto'` may potentially fail with unexpected "
    "CUDA errors. Auto microbatching attempts to catch CUDA Out of Memory errors and adjust the "
    "batch size, but it is possible CUDA will be put into an irrecoverable state due to PyTorch "
    "bugs, e.g. integer overflow. In this case, please manually set "
    "device_train_microbatch_size explicitly to an integer instead."
)
_AUTO_ON_CPU = (
    "Can only use adaptive device_train_microbatch_size on GPU. Please set "
    "device_train_microbatch_size >= 1."
)
_MISSING_MAX_DURATION = (
    "max_duration is a required argument and must be specified when constructing the Trainer "
    "or when calling Trainer.fit(). To fix, please specify `max_duration` via "
    "Trainer(max_duration=...) or Trainer.fit(max_duration=...)."
)
_NO_MAX_DURATION = "max_duration should be set whenever schedulers are invoked"
_NO_LOADER_LENGTH = "Cannot convert time, as state.dataloader_len is None."
_ZERO_WARMUP = (
    "UserWarning: The warmup duration is 0. If you specified warmup as a fraction of total\n"
    "training duration, take note that the warmup duration is calculated in the\n"
    "same unit as the trainer's max_duration parameter."
)

SchedulerKind = Literal[
    "CosineAnnealingWithWarmupScheduler", "LinearWithWarmupScheduler", "ConstantWithWarmupScheduler"
]
#: The keyword arguments each modelled scheduler class takes besides ``t_warmup`` and ``t_max``.
_SCHEDULER_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "CosineAnnealingWithWarmupScheduler": ("alpha_f",),
    "LinearWithWarmupScheduler": ("alpha_i", "alpha_f"),
    "ConstantWithWarmupScheduler": ("alpha",),
}
_SCHEDULER_UNITS = ("ba", "ep", "sp", "tok", "dur")


def _check_scheduler_time(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    found = _TIME_RE.findall(value) if isinstance(value, str) else []
    unit = found[0][1].lower() if len(found) == 1 else None
    if unit not in _SCHEDULER_UNITS:
        raise ValueError(
            f"{attribute.name} must be a Composer time string in ba, ep, sp, tok or dur, got "
            f"{value!r}"
        )
    try:
        number = float(found[0][0])
    except ValueError:
        raise ValueError(f"{attribute.name}={value!r} is not a number of {unit}") from None
    if unit != "dur" and int(number) != number:
        raise ValueError(f"{attribute.name}={value!r}: Composer takes whole {unit} only")


def _check_factor(
    _instance: object, attribute: attrs.Attribute[float | None], value: object
) -> None:
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise TypeError(f"{attribute.name} must be a finite number or None, got {value!r}")


@attrs.frozen(kw_only=True)
class Scheduler:
    """One of Composer's own schedulers (``composer.optim``), as ``Trainer(schedulers=...)`` or
    ``fit(schedulers=...)`` takes it: ``kind`` is its class, the other fields its arguments
    (None: not passed, Composer's default applies):

    - ``CosineAnnealingWithWarmupScheduler(t_warmup, t_max="1dur", alpha_f=0.0)``;
    - ``LinearWithWarmupScheduler(t_warmup, alpha_i=1.0, alpha_f=0.0, t_max="1dur")``;
    - ``ConstantWithWarmupScheduler(t_warmup, alpha=1.0, t_max="1dur")``.

    Each is a factor of the optimizer's learning rate computed from the run's ``State`` (its
    timestamp, ``max_duration`` and loader length; see ``RULES``). Times are Composer time
    strings in ``ba``, ``ep``, ``sp``, ``tok`` or ``dur``.

    >>> print(Scheduler(kind="CosineAnnealingWithWarmupScheduler", t_warmup="2ba", alpha_f=0.1))
    CosineAnnealingWithWarmupScheduler(t_warmup='2ba', alpha_f=0.1)
    """

    kind: SchedulerKind = attrs.field(validator=attrs.validators.in_(tuple(_SCHEDULER_ARGUMENTS)))
    t_warmup: str = attrs.field(validator=_check_scheduler_time)
    t_max: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(_check_scheduler_time)
    )
    alpha_i: float | None = attrs.field(default=None, validator=_check_factor)
    alpha_f: float | None = attrs.field(default=None, validator=_check_factor)
    alpha: float | None = attrs.field(default=None, validator=_check_factor)

    def __attrs_post_init__(self) -> None:
        takes = _SCHEDULER_ARGUMENTS[self.kind]
        for name in ("alpha_i", "alpha_f", "alpha"):
            if getattr(self, name) is not None and name not in takes:
                raise ValueError(f"{self.kind} takes no {name} (it takes {', '.join(takes)})")

    def __str__(self) -> str:
        arguments = [f"t_warmup={self.t_warmup!r}"]
        if self.t_max is not None:
            arguments.append(f"t_max={self.t_max!r}")
        for name in ("alpha_i", "alpha_f", "alpha"):
            value = getattr(self, name)
            if value is not None:
                arguments.append(f"{name}={value!r}")
        return f"{self.kind}({', '.join(arguments)})"

    @property
    def target(self) -> float:
        """The factor the warmup rises to: 1, ``alpha_i`` or ``alpha``."""
        if self.kind == "LinearWithWarmupScheduler":
            return 1.0 if self.alpha_i is None else self.alpha_i
        if self.kind == "ConstantWithWarmupScheduler":
            return 1.0 if self.alpha is None else self.alpha
        return 1.0

    @property
    def final(self) -> float:
        """The factor the decay ends at: ``alpha_f``, or ``alpha`` for the constant one."""
        if self.kind == "ConstantWithWarmupScheduler":
            return self.target
        return 0.0 if self.alpha_f is None else self.alpha_f


@attrs.frozen(kw_only=True)
class Call:
    """One ``fit`` call, on a new ``Trainer`` (``fresh``) or on the previous one.

    Trainer arguments (used only when ``fresh``, or when there is no previous trainer):
    ``max_duration``, ``autoresume`` (``run_name`` and ``save_folder`` set, one folder shared by
    every call), ``resume="latest"`` (``load_path`` = the newest checkpoint saved by earlier
    calls), ``save_interval`` (checkpoints only when set), ``device_train_microbatch_size`` (a
    whole number of samples, or ``"auto"``, which Composer refuses on CPU), ``crash_at`` (below),
    ``lr`` (the optimizer's learning rate, a factor of the script's base) and ``scheduler``
    (``Trainer(schedulers=...)``, a :class:`Scheduler`). A resumed call is stated as a
    ``fresh`` call whose Trainer loads a checkpoint: ``autoresume=True`` (the newest checkpoint
    in the shared ``save_folder``, or a fresh start when there is none) or ``resume="latest"``
    (``load_path`` = the newest checkpoint an earlier call saved).
    ``fit`` arguments: ``duration``, ``reset_time``, ``spin_dataloaders``, ``fit_scheduler``
    (``fit(schedulers=...)``, which replaces the Trainer's scheduler), and ``loader_in_fit``
    (the dataloader over ``data`` is passed to ``fit(train_dataloader=...)``, which on a
    previous trainer switches its loader; otherwise a fresh trainer gets it in
    ``Trainer(train_dataloader=...)`` and a reused one keeps its own). The dataloader reads
    ``data`` in batches of ``batch_size``; with ``tokens_per_sample`` its data set has
    ``max_seq_len = tokens_per_sample``, which Composer's default ``DataSpec`` counts as the
    tokens of each sample (without it Composer counts no tokens).

    ``crash_at=k`` kills the job, as SIGKILL would, at the moment the trainer is about to start
    an optimizer step while ``state.timestamp.batch >= k`` (Composer's ``BATCH_START``, once a
    batch, before its first micro-batch and after any batch spun on a resume). Everything the
    trainer does after step k has happened: the saves its ``save_interval`` makes (every n
    batches, samples or tokens, at an epoch's end, at the end of training), the epoch's end,
    the end of this ``fit`` call. Nothing of the next step has: no batch trained, no counter
    moved. The kill can come in a later ``fit`` on the same trainer (at its first step); a call
    that ends without starting another step is not killed. ``CallOutcome.crashed`` is set on the
    killed call. Checkpoints are where ``save_interval`` put them, not necessarily at step k: a
    re-run resumes from the newest one (``autoresume`` or ``resume="latest"``), and the steps
    after it are trained again.

    ``CallOutcome.rates`` holds the learning rate of each step of a call whose Trainer has a
    scheduler (from ``scheduler``, or a ``fit_scheduler`` of this or an earlier call), as a
    factor of the script's base: ``lr`` times the scheduler's factor, or what a checkpoint
    restored; it is empty without a scheduler.
    """

    data: Dataset = _DEFAULT_DATA
    batch_size: int = 10
    max_duration: str | None = None
    duration: str | None = None
    reset_time: bool = False
    fresh: bool = True
    autoresume: bool = False
    resume: Literal["latest"] | None = None
    save_interval: str | None = None
    crash_at: int | None = None
    spin_dataloaders: bool = True
    loader_in_fit: bool = False
    device_train_microbatch_size: int | Literal["auto"] | None = None
    tokens_per_sample: int | None = None
    lr: float = 1.0
    scheduler: Scheduler | None = None
    fit_scheduler: Scheduler | None = None


@attrs.frozen
class _Time:
    value: int | float
    unit: str

    def __str__(self) -> str:
        return f"{self.value}{self.unit}"


@attrs.define
class _Timestamp:
    epoch: int = 0
    batch: int = 0
    sample: int = 0
    token: int = 0
    batch_in_epoch: int = 0
    sample_in_epoch: int = 0
    token_in_epoch: int = 0

    def get(self, unit: str) -> int:
        return {"ep": self.epoch, "ba": self.batch, "sp": self.sample, "tok": self.token}[unit]

    def counters(self) -> dict[str, int | float | None]:
        return {
            "epoch": self.epoch,
            "batch": self.batch,
            "sample": self.sample,
            "token": self.token,
            "batch_in_epoch": self.batch_in_epoch,
            "sample_in_epoch": self.sample_in_epoch,
            "token_in_epoch": self.token_in_epoch,
        }

    def to_next_batch(self, samples: int, tokens: int) -> None:
        """``Timestamp.to_next_batch``: the whole batch, whatever its micro-batches."""
        self.batch += 1
        self.batch_in_epoch += 1
        self.sample += samples
        self.sample_in_epoch += samples
        self.token += tokens
        self.token_in_epoch += tokens

    def to_next_epoch(self) -> None:
        self.epoch += 1
        self.batch_in_epoch = 0
        self.sample_in_epoch = 0
        self.token_in_epoch = 0


@attrs.define
class _Loader:
    data: Dataset
    batch_size: int
    tokens_per_sample: int | None = None

    def __len__(self) -> int:
        return -(-self.data.samples // self.batch_size)

    def batch(self, index: int) -> Ids:
        start = index * self.batch_size
        return self.data.ids(start, min(start + self.batch_size, self.data.samples))

    def tokens(self, samples: int) -> int:
        """``_default_get_num_tokens_in_batch``: ``max_seq_len`` x samples, or 0."""
        return 0 if self.tokens_per_sample is None else self.tokens_per_sample * samples


@attrs.define
class _Trainer:
    loader: _Loader | None
    max_duration: _Time | None
    timestamp: _Timestamp
    spin: bool
    save_interval: _Time | None
    crash_at: int | None
    #: The interval scheduler's ``last_batch_seen``: the batch of its last interval save.
    last_batch_seen: int = -1
    #: The ``CheckpointSaver``'s ``last_checkpoint_batch``: the batch of its last save.
    last_checkpoint_batch: int | None = None
    #: The optimizer's ``param_groups[0]["lr"]`` (what its next step uses) and ``initial_lr``
    #: (set by the first scheduler built on it), factors of the script's base.
    lr: float = 1.0
    initial_lr: float | None = None
    #: The scheduler in ``state.schedulers`` (compiled into a LambdaLR), if any.
    scheduler: Scheduler | None = None

    def compile(self, scheduler: Scheduler, out: _Outcome) -> None:
        """``compile_composer_scheduler``: a LambdaLR whose constructor sets ``initial_lr``
        (unless set) and evaluates the scheduler once."""
        if self.initial_lr is None:
            self.initial_lr = self.lr
        self.lr = self.initial_lr * _alpha(scheduler, self, out)
        self.scheduler = scheduler

    def step_scheduler(self, out: _Outcome) -> None:
        """``scheduler.step()`` after a batch, before the timestamp advances."""
        if self.scheduler is not None:
            assert self.initial_lr is not None
            self.lr = self.initial_lr * _alpha(self.scheduler, self, out)


@attrs.frozen
class _Saved:
    """A checkpoint: the timestamp, the optimizer's learning rates, whether it has a LambdaLR."""

    timestamp: _Timestamp
    lr: float
    initial_lr: float | None
    scheduled: bool


class _Error(Exception):
    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.error = TrainerError(type=type_, message=message)


class _CrashError(Exception):
    pass


def _parse(text: str) -> _Time:
    """``Time.from_timestring`` (``ensure_time(..., TimeUnit.EPOCH)`` for a str)."""
    found = _TIME_RE.findall(text)
    if len(found) != 1:
        raise _Error("ValueError", f"Invalid time string: {text}")
    number, unit = found[0]
    unit = unit.lower()
    try:
        value = float(number)
    except ValueError as exc:
        raise _Error("ValueError", str(exc)) from None
    if unit == "dur":
        return _Time(value, unit)
    if int(value) != value:
        raise _Error(
            "TypeError",
            f"value {value} is not an integer. Units TimeUnit.{_UNIT_NAMES[unit]} require "
            "integer values.",
        )
    return _Time(int(value), unit)


def _check_modelled(time: _Time) -> None:
    if time.unit not in _MODELLED:
        raise NotImplementedError(
            f"the Composer profile models ep, ba, sp and tok only, not {time}"
        )


def _max_duration(text: str) -> _Time:
    """``Trainer(max_duration=text)``: parse, then the State setter's and the wall-clock checks."""
    time = _parse(text)
    if time.unit == "dur":
        raise _Error("ValueError", "TimeUnit.DURATION is not allowed as a unit for max_duration")
    if time.unit == "sec":
        raise _Error("ValueError", "Wall clock time not an allowed time unit.")
    _check_modelled(time)
    return time


def _scheduler_time(text: str, trainer: _Trainer) -> _Time:
    """``_convert_time`` (no scale-schedule ratio): ``dur`` as that fraction of the current
    max_duration, ``ep`` as batches of the current loader."""
    time = _parse(text)
    max_duration = trainer.max_duration
    assert max_duration is not None
    length = None if trainer.loader is None else len(trainer.loader)
    if time.unit == "dur":
        if max_duration.unit == "ep":
            if length is None:
                raise _Error("RuntimeError", _NO_LOADER_LENGTH)
            return _Time(int(time.value * length * max_duration.value), "ba")
        return _Time(int(time.value * max_duration.value), max_duration.unit)
    if time.unit == "ep":
        if length is None:
            raise _Error("RuntimeError", _NO_LOADER_LENGTH)
        time = _Time(time.value * length, "ba")
    return _Time(int(time.value * 1.0), time.unit)


def _check_t_max(t_max: _Time, trainer: _Trainer) -> None:
    """``_raise_if_max_duration_exceeds_t_max``, on the converted t_max."""
    max_duration = trainer.max_duration
    assert max_duration is not None
    length = None if trainer.loader is None else len(trainer.loader)
    if t_max.unit == max_duration.unit:
        exceeds = t_max.value < max_duration.value
    elif t_max.unit == "ba" and max_duration.unit == "ep" and length is not None:
        exceeds = t_max.value < max_duration.value * length
    else:  # not comparable: Composer only logs at DEBUG
        exceeds = False
    if exceeds:
        raise _Error(
            "ValueError",
            f"t_max {t_max} must be greater than or equal to max_duration {max_duration}. "
            "Otherwise, the LR schedule will not be defined for the entire training duration.",
        )


def _alpha(scheduler: Scheduler, trainer: _Trainer, out: _Outcome) -> float:
    """The scheduler's ``__call__(state)``: the factor of ``initial_lr`` at the trainer's
    current timestamp, max_duration and loader length."""
    if trainer.max_duration is None:
        raise _Error("AssertionError", _NO_MAX_DURATION)
    warmup = _scheduler_time(scheduler.t_warmup, trainer)
    t_max = _scheduler_time(scheduler.t_max or "1dur", trainer)
    if warmup.unit != t_max.unit:
        raise _Error(
            "ValueError",
            f"Cannot use warmup scheduler with t_max {t_max} with units "
            f"TimeUnit.{_UNIT_NAMES[t_max.unit]} and t_warmup {warmup} with units "
            f"TimeUnit.{_UNIT_NAMES[warmup.unit]}. t_warmup and t_max must use the same units.",
        )
    _check_t_max(t_max, trainer)
    if warmup.value == 0:
        out.warn(_ZERO_WARMUP)
    now = trainer.timestamp.get(warmup.unit)
    if now < warmup.value:  # the warmup's LinearScheduler(alpha_i=0.0, alpha_f=target)
        fraction = min(1.0, now / warmup.value)
        return 0.0 + fraction * (scheduler.target - 0.0)
    span = t_max.value - warmup.value
    fraction = min(1.0, (now - warmup.value) / span if t_max.value > warmup.value else 0.0)
    if scheduler.kind == "CosineAnnealingWithWarmupScheduler":  # _cosine_anneal
        x = min(max(fraction, 0.0), 1.0)
        floor = scheduler.final
        return floor + (1.0 - floor) * (1 + math.cos(x * math.pi)) / 2
    start = scheduler.target
    return start + fraction * (scheduler.final - start)


@attrs.define
class _Run:
    """The state shared by all calls: the checkpoints saved so far (one ``save_folder``)."""

    checkpoints: list[_Saved] = attrs.Factory(list)

    def build(self, call: Call, out: _Outcome) -> _Trainer:
        if call.device_train_microbatch_size == "auto":
            out.messages.append(_AUTO_MICROBATCH)
            raise _Error("ValueError", _AUTO_ON_CPU)
        max_duration = None if call.max_duration is None else _max_duration(call.max_duration)
        interval = None if call.save_interval is None else _parse(call.save_interval)
        if interval is not None:
            _check_modelled(interval)
        trainer = _Trainer(
            loader=None if call.loader_in_fit else _loader(call),
            max_duration=max_duration,
            timestamp=_Timestamp(),
            spin=call.spin_dataloaders,
            save_interval=interval,
            crash_at=call.crash_at,
            lr=call.lr,
        )
        if call.scheduler is not None:
            trainer.compile(call.scheduler, out)
        if (call.autoresume or call.resume == "latest") and self.checkpoints:
            saved = self.checkpoints[-1]
            if trainer.scheduler is not None and not saved.scheduled:
                raise NotImplementedError(
                    "a Trainer with a scheduler that loads a checkpoint saved without one is not "
                    "modelled (Composer warns that LambdaLR is not in the state_dict, and the "
                    "optimizer loses the initial_lr its scheduler was built on)"
                )
            trainer.timestamp = attrs.evolve(saved.timestamp)
            trainer.lr, trainer.initial_lr = saved.lr, saved.initial_lr
        return trainer

    def fit(self, trainer: _Trainer, call: Call, out: _Outcome) -> None:
        if call.loader_in_fit:
            trainer.loader = _loader(call)
        if trainer.loader is None:
            message = _MISSING_MAX_DURATION.replace("max_duration", "train_dataloader")
            raise _Error("ValueError", message)
        trainer.spin = call.spin_dataloaders
        if call.reset_time:
            trainer.timestamp = _Timestamp()
        if call.duration is not None:
            duration = _parse(call.duration)
            if duration.unit == "sec":
                raise _Error("ValueError", "Wall clock time not an allowed time unit.")
            _check_modelled(duration)
            trainer.max_duration = _Time(
                int(duration.value) + trainer.timestamp.get(duration.unit), duration.unit
            )
        max_duration = trainer.max_duration
        if max_duration is None:
            raise _Error("ValueError", _MISSING_MAX_DURATION)
        elapsed = trainer.timestamp.get(max_duration.unit)
        if max_duration.value <= elapsed and not call.reset_time:
            raise _Error(
                "ValueError",
                f"The max_duration ({max_duration}) is less than or equal to the elapsed training "
                f"duration ({elapsed}{max_duration.unit}). No training would occur. Please provide "
                "the `duration` or specify `reset_time=True` in Trainer.fit().",
            )
        if max_duration.unit == "tok" and trainer.loader.tokens_per_sample is None:
            raise NotImplementedError(
                f"max_duration {max_duration} on data without tokens_per_sample: Composer counts "
                "0 tokens a batch there (no max_seq_len on the data set) and never stops; give "
                "the Call tokens_per_sample"
            )
        if call.fit_scheduler is not None:
            trainer.compile(call.fit_scheduler, out)
        out.scheduled = trainer.scheduler is not None
        self._train_loop(trainer, max_duration, out)

    def _train_loop(self, trainer: _Trainer, max_duration: _Time, out: _Outcome) -> None:
        loader = trainer.loader
        assert loader is not None
        ts = trainer.timestamp
        trained_any = False
        while ts.get(max_duration.unit) < max_duration.value:
            finished_early = False
            for index in range(len(loader)):
                if trainer.spin and index < ts.batch_in_epoch:
                    continue
                if trainer.crash_at is not None and ts.batch >= trainer.crash_at:
                    raise _CrashError
                # The micro-batches are consecutive slices of the batch, trained in order: the
                # step reads the batch's ids.
                ids = loader.batch(index)
                out.batches.append(ids)
                trained_any = True
                out.rates.append(trainer.lr)
                trainer.step_scheduler(out)
                previous = attrs.evolve(ts)
                ts.to_next_batch(len(ids), loader.tokens(len(ids)))
                self._checkpoint(trainer, max_duration, previous, epoch_event=False)
                if ts.get(max_duration.unit) >= max_duration.value:
                    finished_early = True
                    break
            if not trained_any and _NO_BATCHES not in out.messages:
                out.messages.append(_NO_BATCHES)
            if not finished_early or len(loader) == ts.batch_in_epoch:
                previous = attrs.evolve(ts)
                ts.to_next_epoch()
                self._checkpoint(trainer, max_duration, previous, epoch_event=True)

    def _checkpoint(
        self, trainer: _Trainer, max_duration: _Time, previous: _Timestamp, *, epoch_event: bool
    ) -> None:
        """``CheckpointSaver.batch_checkpoint`` / ``epoch_checkpoint``: the interval scheduler
        asks for a save, and the saver saves unless its last save was at this batch."""
        interval = trainer.save_interval
        if interval is None or interval.value <= 0:
            return
        ts = trainer.timestamp
        at_end = ts.get(max_duration.unit) >= max_duration.value
        unit = interval.unit
        crossed = previous.get(unit) // int(interval.value) != ts.get(unit) // int(interval.value)
        interval_event = (unit == "ep") == epoch_event
        if at_end and ts.batch != trainer.last_batch_seen:
            asked = True
        elif interval_event and crossed:
            trainer.last_batch_seen = ts.batch
            asked = True
        else:
            asked = False
        if asked and trainer.last_checkpoint_batch != ts.batch:
            trainer.last_checkpoint_batch = ts.batch
            scheduled = trainer.scheduler is not None
            self.checkpoints.append(
                _Saved(attrs.evolve(ts), trainer.lr, trainer.initial_lr, scheduled)
            )


def _loader(call: Call) -> _Loader:
    return _Loader(call.data, call.batch_size, call.tokens_per_sample)


@attrs.define
class _Outcome:
    batches: list[Ids] = attrs.Factory(list)
    messages: list[str] = attrs.Factory(list)
    #: The learning rate of each step, reported when the trainer had a scheduler.
    rates: list[float] = attrs.Factory(list)
    scheduled: bool = False

    def warn(self, message: str) -> None:
        """A warning, once a call (the harness folds repeats)."""
        if message not in self.messages:
            self.messages.append(message)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _validate(call: Call) -> None:
    if call.data.samples <= 0 or call.batch_size <= 0:
        raise ValueError(f"need a non-empty data set and a positive batch size, got {call!r}")
    micro = call.device_train_microbatch_size
    if micro is not None and micro != "auto" and not _whole(micro):
        raise ValueError(
            f"device_train_microbatch_size must be a whole number >= 1, 'auto' or None, got "
            f"{micro!r} (the profile does not model float micro-batch sizes)"
        )
    if call.tokens_per_sample is not None and not _whole(call.tokens_per_sample):
        raise ValueError(
            f"tokens_per_sample must be a whole number >= 1 or None, got {call.tokens_per_sample!r}"
        )
    lr = call.lr
    if not isinstance(lr, int | float) or isinstance(lr, bool) or not math.isfinite(lr) or lr < 0:
        raise ValueError(f"lr must be a finite number >= 0, got {lr!r}")
    for name in ("scheduler", "fit_scheduler"):
        value = getattr(call, name)
        if value is not None and not isinstance(value, Scheduler):
            raise TypeError(f"{name} must be a Scheduler or None, got {value!r}")


def simulate(calls: Iterable[Call] | Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as Composer 0.32.1 would; return what each call does."""
    run = _Run()
    trainer: _Trainer | None = None
    outcomes: list[CallOutcome] = []
    for call in calls:
        _validate(call)
        out = _Outcome()
        error: TrainerError | None = None
        crashed = False
        try:
            if call.fresh or trainer is None:
                trainer = None
                trainer = run.build(call, out)
            run.fit(trainer, call, out)
        except _Error as exc:
            error = exc.error
        except _CrashError:
            crashed = True
        counters = {} if trainer is None else trainer.timestamp.counters()
        outcomes.append(
            CallOutcome(
                steps=len(out.batches),
                batches=tuple(out.batches),
                counters=counters,
                messages=tuple(out.messages),
                error=error,
                crashed=crashed,
                rates=tuple(out.rates) if out.scheduled else (),
            )
        )
    return tuple(outcomes)


# -- writing a durations scenario in Composer's idiom ---------------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Composer user writes it: one ``Trainer(max_duration=...,
    autoresume=True, save_interval="1ba")``, then one ``fit`` per call, the later ones with
    ``fit(duration=..., train_dataloader=..., reset_time=...)``. Re-running after a crash is the
    same script: autoresume loads the latest checkpoint. A loader with ``tokens_per_sample``
    reads a data set with that ``max_seq_len``, whose tokens Composer counts, so durations in
    tokens are written as ``"...tok"``. A data-parallel loader on one process with
    ``accumulation`` reads batches of ``device_batch_size x accumulation``, written with
    ``Trainer(device_train_microbatch_size=device_batch_size)``.

    A ``[schedule]`` is written as one of Composer's own schedulers for the whole run
    (``shapes(per="run")``): Composer's schedulers are functions of the run's timestamp, which
    goes on across fits and resumes, so a per-call scheduler (``fit(schedulers=...)``) would not
    start its curve again anyway. The optimizer's learning rate is the curve's peak, the
    scheduler ``CosineAnnealingWithWarmupScheduler``, ``LinearWithWarmupScheduler`` or
    ``ConstantWithWarmupScheduler`` with ``t_warmup`` in batches, ``alpha_f`` the floor over
    the peak, and ``t_max='1dur'`` for a run of one call in batches or epochs, else the plan's
    steps in batches (a later ``fit(duration=...)`` moves ``max_duration``, and ``'1dur'`` with
    it). It goes on the Trainer, or on the first ``fit`` when that fit's ``duration`` sets
    ``max_duration`` (Composer evaluates a Trainer's scheduler at once, on the Trainer's own
    ``max_duration``, or fails without one). Composer steps it
    after each batch, from the timestamp before that batch, so its rates trail the plan's by
    one step.
    """
    calls: list[Call] = []
    notes: list[str] = []
    trainer_micro: int | None = None
    for step in steps_of(scenario, data, "Composer"):
        loader = step.call.loader
        text = _composer_time(step.request)
        _check_tokens(step.request, loader, step.index)
        micro = _micro_batch_size(loader)
        tokens = loader.tokens_per_sample
        if step.index == 0:
            limit = text if step.kind != "duration" else _limit(scenario)
            if scenario.config.max_duration is not None:
                _check_tokens(scenario.config.max_duration, loader, step.index)
            trainer_micro = micro
            calls.append(
                Call(
                    data=step.data,
                    batch_size=step.batch_size,
                    max_duration=limit,
                    duration=text if step.kind == "duration" else None,
                    reset_time=step.call.reset_time,
                    autoresume=True,
                    save_interval="1ba",
                    device_train_microbatch_size=micro,
                    tokens_per_sample=tokens,
                )
            )
            micro_argument = "" if micro is None else f", device_train_microbatch_size={micro}"
            notes.append(
                f"Trainer(max_duration={limit!r}, autoresume=True, save_interval='1ba'"
                f"{micro_argument})"
                + (f"; fit(duration={text!r})" if step.kind == "duration" else "; fit()")
                + _loader_note(loader, micro)
            )
            continue
        if step.kind == "until":
            raise Unsupported(
                "Composer's fit(duration=) is relative to the elapsed time; an absolute until= "
                f"has no equivalent after the first call (call #{step.index})"
            )
        if micro != trainer_micro:
            raise Unsupported(
                "the translation writes device_train_microbatch_size on the Trainer, from call "
                f"#0's loader ({trainer_micro}); call #{step.index}'s loader needs {micro}"
            )
        duration = text if step.kind == "duration" else None
        calls.append(
            Call(
                data=step.data,
                batch_size=step.batch_size,
                duration=duration,
                reset_time=step.call.reset_time,
                fresh=False,
                loader_in_fit=step.new_stream,
                tokens_per_sample=tokens,
            )
        )
        arguments = [f"duration={duration!r}"] if duration else []
        if step.new_stream:
            arguments.append(f"train_dataloader=<{loader.name}>")
        if step.call.reset_time:
            arguments.append("reset_time=True")
        notes.append(
            f"fit({', '.join(arguments)})"
            + (_loader_note(loader, micro) if step.new_stream else "")
        )
    schedule = ""
    if scenario.schedule is not None:
        calls, schedule = _scheduled(scenario, calls)
    return Translation(
        calls=tuple(calls),
        rerun=tuple(calls),
        notes=tuple(notes),
        crash_on="fresh",
        schedule=schedule,
    )


def _scheduled(scenario: Scenario, calls: list[Call]) -> tuple[list[Call], str]:
    """``calls`` with the run's schedule as one Composer scheduler, and how it was written (or
    why it could not be): Composer's schedulers are functions of the run's timestamp, which
    goes on across fits and resumes, so the whole run's curve is one scheduler
    (``shapes(per="run")``), on the Trainer, or on the first fit when that fit sets the
    max_duration (the Trainer would evaluate it on another one, or on none)."""
    try:
        (shape,) = shapes(scenario, make_plan(scenario.config, scenario.calls), per="run")
        lr, scheduler, t_max = _scheduler(shape, calls)
    except Unsupported as why:
        return calls, f"cannot be written: {why}"
    first = calls[0]
    if first.max_duration is not None and first.duration is None:
        calls = [attrs.evolve(first, lr=lr, scheduler=scheduler), *calls[1:]]
        where = f"Trainer(optimizers=SGD(lr={lr:g} * base), schedulers={scheduler})"
    else:
        calls = [attrs.evolve(first, lr=lr, fit_scheduler=scheduler), *calls[1:]]
        where = (
            f"Trainer(optimizers=SGD(lr={lr:g} * base)), then fit(duration=..., schedulers="
            f"{scheduler}) (Trainer(schedulers=...) would be evaluated at once, on the "
            "Trainer's own max_duration, which fit(duration=...) replaces, or without one "
            "fail its assertion)"
        )
    note = (
        f"{where}: one scheduler for the whole run, a function of Composer's timestamp ({t_max}"
        "); a resume recomputes it from the restored timestamp. Composer steps it after each "
        "batch, before the timestamp advances, so each step uses the factor of the step before "
        "(the first two steps both the first's)"
    )
    if any(call.reset_time for call in calls):
        note += "; reset_time=True restarts the timestamp, and the curve with it"
    return calls, note


def _unit(limit: str) -> str | None:
    """The unit of a duration Composer takes, ``None`` for one it refuses (the call then raises
    Composer's own error)."""
    try:
        return _parse(limit).unit
    except _Error:
        return None


def _scheduler(shape: Shape, calls: list[Call]) -> tuple[float, Scheduler, str]:
    """The run's shape as the optimizer's learning rate (its peak), a Composer scheduler over
    the plan's steps, and why t_max is what it is; :class:`Unsupported` when none says it."""
    if shape.peak < 0 or shape.floor < 0:
        raise Unsupported(f"the schedule goes below 0 ({shape.peak} to {shape.floor})")
    if shape.peak == 0 and shape.floor != 0:
        raise Unsupported(
            f"the schedule goes from 0 to {shape.floor}: Composer's schedulers multiply the "
            "optimizer's learning rate, which would be 0"
        )
    first = calls[0]
    limit = first.duration if first.duration is not None else first.max_duration
    if len(calls) == 1 and limit is not None and _unit(limit) in ("ba", "ep"):
        t_max, why = "1dur", f"t_max='1dur' is the run's max_duration, {shape.steps} batches"
    else:
        t_max = f"{shape.steps}ba"
        why = (
            f"t_max='{t_max}', the plan's steps: fit(duration=...) moves max_duration, and "
            "'1dur' with it"
        )
    warmup, ratio = f"{shape.warmup}ba", float(shape.floor_ratio)
    if shape.decay == "cosine":
        scheduler = Scheduler(
            kind="CosineAnnealingWithWarmupScheduler", t_warmup=warmup, t_max=t_max, alpha_f=ratio
        )
    elif shape.decay == "linear":
        scheduler = Scheduler(
            kind="LinearWithWarmupScheduler",
            t_warmup=warmup,
            t_max=t_max,
            alpha_i=1.0,
            alpha_f=ratio,
        )
    else:
        scheduler = Scheduler(
            kind="ConstantWithWarmupScheduler", t_warmup=warmup, t_max=t_max, alpha=1.0
        )
    return float(shape.peak), scheduler, why


def _micro_batch_size(loader: Loader) -> int | None:
    """The micro-batch size that a data-parallel loader on one process asks for (None: the
    batch is one micro-batch); :class:`Unsupported` on several processes."""
    sharding = loader.sharding
    if sharding is None:
        return None
    if sharding.world_size != 1:
        raise Unsupported(
            "the composer profile models one process (no multi-process run of composer was "
            f"recorded), so it cannot say what {sharding.world_size} ranks read"
        )
    return None if sharding.accumulation == 1 else sharding.device_batch_size


def _check_tokens(time: DurationsTime, loader: Loader, index: int) -> None:
    if time.unit.value == "tok" and loader.tokens_per_sample is None:
        raise Unsupported(
            f"call #{index} asks for {time}, and loader {loader.name!r} has no tokens_per_sample: "
            "Composer would count 0 tokens a batch (no max_seq_len on its data set) and never stop"
        )


def _loader_note(loader: Loader, micro: int | None) -> str:
    parts = []
    if loader.tokens_per_sample is not None:
        parts.append(
            f"<{loader.name}>'s data set has max_seq_len={loader.tokens_per_sample} (the tokens "
            "Composer counts a sample)"
        )
    if micro is not None:
        parts.append(
            f"DataLoader(batch_size={loader.batch_size}) split into micro-batches of {micro}"
        )
    return "".join(f"; {part}" for part in parts)


def _limit(scenario: Scenario) -> str | None:
    limit = scenario.config.max_duration
    return None if limit is None else _composer_time(limit)


def _composer_time(time: DurationsTime) -> str:
    """A time as Composer's string (it parses fractional epochs and then rejects them)."""
    if time.unit.value not in _MODELLED:
        raise Unsupported(f"the Composer profile models ep, ba, sp and tok only, not {time}")
    text = str(time)
    if "/" in text:
        raise Unsupported(f"Composer's time strings are decimal; {text} has no decimal form")
    return text
