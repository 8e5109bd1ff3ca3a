"""The learning-rate scheduler a Lightning user returns from ``configure_optimizers``, and the
``LambdaLR`` state a fit steps, saves and restores (the Lightning profile's learning rates)."""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

Decay = Literal["constant", "linear", "cosine"]


def _check_warmup(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{attribute.name} must be an int >= 0, got {value!r}")


def _check_number(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise TypeError(f"{attribute.name} must be a finite number, got {value!r}")
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, got {value!r}")


def _check_total(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ValueError(f"{attribute.name} must be an int >= 0 or None, got {value!r}")


@attrs.frozen(kw_only=True)
class Scheduler:
    """What ``configure_optimizers`` returns, as Lightning's "Finetune Transformers Models"
    tutorial writes it: ``{"optimizer": SGD(params, lr=lr * base), "lr_scheduler":
    {"scheduler": scheduler, "interval": "step"}}`` with one of transformers' warmup schedules,
    each a ``torch.optim.lr_scheduler.LambdaLR`` over ``num_training_steps = total``, which is
    ``self.trainer.estimated_stepping_batches`` when ``total`` is None:

    - ``decay="constant"``: ``get_constant_schedule_with_warmup(opt, num_warmup_steps=warmup)``;
    - ``decay="linear"``: ``get_linear_schedule_with_warmup(opt, warmup, total)`` for a
      ``floor`` of 0, else ``get_polynomial_decay_schedule_with_warmup(opt, warmup, total,
      lr_end=floor * lr * base, power=1.0)``;
    - ``decay="cosine"``: ``get_cosine_with_min_lr_schedule_with_warmup(opt, warmup, total,
      min_lr_rate=floor)``.

    Each warms up linearly from 0 over ``warmup`` steps to the optimizer's learning rate, then
    decays to ``floor`` times it at step ``total``. ``lr`` is the optimizer's learning rate as a
    factor of the script's base; every rate the profile reports is such a factor.

    >>> cosine = Scheduler(decay="cosine", warmup=2, floor=0.1)
    >>> [round(cosine.factor(step, 10), 4) for step in (0, 1, 2, 6, 10)]
    [0.0, 0.5, 1.0, 0.55, 0.1]
    """

    decay: Decay = attrs.field(validator=attrs.validators.in_(("constant", "linear", "cosine")))
    warmup: int = attrs.field(default=0, validator=_check_warmup)
    floor: float = attrs.field(default=0.0, validator=_check_number)
    lr: float = attrs.field(default=1.0, validator=_check_number)
    total: int | None = attrs.field(default=None, validator=_check_total)

    def __attrs_post_init__(self) -> None:
        if self.decay == "linear" and self.floor and not self.floor < 1:
            raise ValueError(
                f"a linear decay to floor={self.floor} is get_polynomial_decay_schedule_with_"
                "warmup, which needs lr_end below the optimizer's learning rate: floor < 1"
            )

    def factor(self, step: int, total: float) -> float:
        """The schedule's ``lr_lambda(step)`` for ``num_training_steps=total``: what the
        optimizer's learning rate is multiplied by after ``step`` scheduler steps
        (``transformers/optimization.py``, the ``_get_..._lr_lambda`` functions)."""
        warmup = self.warmup
        if self.decay == "constant":  # _get_constant_schedule_with_warmup_lr_lambda
            if step < warmup:
                return float(step) / float(max(1.0, warmup))
            return 1.0
        if step < warmup:
            return float(step) / float(max(1, warmup))
        if self.decay == "cosine":  # _get_cosine_schedule_with_warmup_lr_lambda, min_lr_rate
            progress = float(step - warmup) / float(max(1, total - warmup))
            cosine = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))  # num_cycles 0.5
            return float(max(0, cosine * (1 - self.floor) + self.floor))
        if not self.floor:  # _get_linear_schedule_with_warmup_lr_lambda
            return max(0.0, float(total - step) / float(max(1, total - warmup)))
        # _get_polynomial_decay_schedule_with_warmup_lr_lambda, power 1: lr_init is the
        # optimizer's learning rate when the scheduler was built (``optimizer.defaults``)
        lr_init, lr_end = self.lr, self.floor * self.lr
        if step > total:
            return lr_end / lr_init
        remaining = 1 - (step - warmup) / (total - warmup)
        decay: float = (lr_init - lr_end) * remaining**1.0 + lr_end
        return decay / lr_init

    def written(self) -> str:
        """The scheduler as ``configure_optimizers`` builds it."""
        total = "self.trainer.estimated_stepping_batches" if self.total is None else self.total
        optimizer = f"SGD(lr={self.lr:g} * base)"
        if self.decay == "constant":
            call = f"get_constant_schedule_with_warmup({optimizer}, num_warmup_steps={self.warmup}"
        elif self.decay == "cosine":
            call = (
                f"get_cosine_with_min_lr_schedule_with_warmup({optimizer}, num_warmup_steps="
                f"{self.warmup}, num_training_steps={total}, min_lr_rate={self.floor:g}"
            )
        elif not self.floor:
            call = (
                f"get_linear_schedule_with_warmup({optimizer}, num_warmup_steps={self.warmup}, "
                f"num_training_steps={total}"
            )
        else:
            call = (
                f"get_polynomial_decay_schedule_with_warmup({optimizer}, num_warmup_steps="
                f"{self.warmup}, num_training_steps={total}, lr_end={self.floor * self.lr:g} "
                "* base, power=1.0"
            )
        return call + ")"


@attrs.frozen
class _SchedulerState:
    """What a checkpoint holds of the optimizer and its ``LambdaLR`` (factors of the base):
    ``optimizer_states[0]["param_groups"][0]["lr"]`` (None where the profile does not know it)
    and the scheduler's ``last_epoch`` and ``base_lrs[0]``."""

    lr: float | None
    last_epoch: int
    base: float


@attrs.define
class _LambdaLR:
    """The optimizer and ``LambdaLR`` one fit's ``configure_optimizers`` built: ``lr`` is the
    optimizer's current learning rate (what its next step uses), ``base`` the scheduler's
    ``base_lrs[0]``, ``last_epoch`` its steps; the lambda is ``scheduler`` over ``total``."""

    scheduler: Scheduler
    total: float
    base: float
    last_epoch: int
    lr: float | None

    @classmethod
    def build(cls, scheduler: Scheduler, total: float) -> _LambdaLR:
        """``LambdaLR(optimizer, lr_lambda)``: its initial step sets ``last_epoch`` to 0 and the
        learning rate to ``base * lr_lambda(0)``."""
        return cls(scheduler, total, scheduler.lr, 0, scheduler.lr * scheduler.factor(0, total))

    def step(self) -> None:
        """``scheduler.step()``: ``lr = base_lr * lr_lambda(last_epoch + 1)``."""
        self.last_epoch += 1
        self.lr = self.base * self.scheduler.factor(self.last_epoch, self.total)

    def state(self) -> _SchedulerState:
        return _SchedulerState(self.lr, self.last_epoch, self.base)

    def load(self, state: _SchedulerState | None) -> None:
        """``optimizer.load_state_dict`` then ``scheduler.load_state_dict``: the optimizer's
        learning rate, ``last_epoch`` and ``base_lrs`` come from the checkpoint, the lambda (its
        formula and total) stays the one just built. A checkpoint without a scheduler state
        still sets the optimizer's learning rate, which the profile does not know then."""
        if state is None:
            self.lr = None
            return
        self.lr, self.last_epoch, self.base = state.lr, state.last_epoch, state.base
