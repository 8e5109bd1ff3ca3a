"""Plain PyTorch: a learning-rate scheduler that follows a schedule resolved on the plan.

:func:`scheduler` builds a ``torch.optim.lr_scheduler.LambdaLR`` whose count
(``last_epoch``) is the run's lifetime step, and whose rate at step ``k`` is exactly
``resolved.lr(k, base)``::

    curve = schedule.resolve(run)                       # run = plan(config, script, checkpoint)
    sched = scheduler(optimizer, curve, step=run.start.batch)
    ...
    optimizer.step(); sched.step()                      # one per optimizer step

After a resume, build it the same way (``run.start.batch`` is then the checkpoint's step); its
state need not be saved, and loading a state it saved itself gives the same count. Torch is
imported when :func:`scheduler` is called. :func:`lr_lambda` is the bare function for a
``LambdaLR`` of your own (``base * float(factor)``: within one rounding of ``resolved.lr``). See
``docs/schedules.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..schedules import ResolvedSchedule
from . import INSTALL_HINT
from ._session import IntegrationError

__all__ = ["IntegrationError", "lr_lambda", "scheduler"]


def _check(resolved: object) -> ResolvedSchedule:
    if not isinstance(resolved, ResolvedSchedule):
        raise TypeError(
            f"resolved={resolved!r}: expected a durations.ResolvedSchedule, from "
            "Schedule.resolve(plan)"
        )
    return resolved


def lr_lambda(resolved: ResolvedSchedule, *, offset: int = 0) -> Callable[[int], float]:
    """``k -> float(resolved.factor(k + offset))``: the ``lr_lambda`` of a ``LambdaLR`` whose
    count ``k`` is ``offset`` steps behind the lifetime step (0 when it counts lifetime steps).

    A plain function, so ``LambdaLR.state_dict()`` does not try to save it.
    """
    curve = _check(resolved)

    def factor(k: int) -> float:
        return float(curve.factor(k + offset))

    return factor


def scheduler(optimizer: Any, resolved: ResolvedSchedule, *, step: int) -> Any:
    """A ``LambdaLR`` on ``optimizer`` whose count is the lifetime step, set to ``step`` (the
    optimizer steps the run has taken: ``plan.start.batch`` of this process's plan).

    Its rate for the optimizer step from ``k`` to ``k + 1`` is ``resolved.lr(k, base)``
    exactly, where ``base`` is each parameter group's ``initial_lr`` (its ``lr`` when the
    group has none yet). ``load_state_dict`` also puts the rate of the restored count into the
    optimizer, so the order of loading the optimizer's and the scheduler's states does not
    matter.
    """
    curve = _check(resolved)
    if isinstance(step, bool) or not isinstance(step, int) or step < curve.start:
        raise IntegrationError(
            f"invalid step={step!r}: expected the lifetime step the optimizer is at, a whole "
            f"number >= {curve.start} (where the schedule starts), such as plan.start.batch"
        )
    return _scheduler_class()(optimizer, curve, step)


_CLASS: list[type[Any]] = []


def _scheduler_class() -> type[Any]:
    if _CLASS:
        return _CLASS[0]
    try:
        from torch.optim.lr_scheduler import LambdaLR
    except ImportError as error:
        raise ImportError(f"durations.integrations.torch needs torch: {INSTALL_HINT}") from error

    class PlanLR(LambdaLR):  # type: ignore[misc, unused-ignore]
        """A ``LambdaLR`` on lifetime steps whose rate is ``resolved.lr(k, base)`` exactly."""

        def __init__(self, optimizer: Any, resolved: ResolvedSchedule, step: int) -> None:
            self._durations_lr: Callable[[int, float], float] = resolved.lr
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
            super().__init__(optimizer, lr_lambda(resolved), last_epoch=step - 1)

        def get_lr(self) -> list[float]:
            return [self._durations_lr(self.last_epoch, float(b)) for b in self.base_lrs]

        def state_dict(self) -> dict[str, Any]:
            state: dict[str, Any] = super().state_dict()
            state.pop("_durations_lr", None)
            return state

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            state = dict(state_dict)
            state.pop("_durations_lr", None)
            super().load_state_dict(state)
            rates = self.get_lr()
            for group, rate in zip(self.optimizer.param_groups, rates, strict=True):
                group["lr"] = rate
            self._last_lr = rates

    PlanLR.__module__ = __name__
    _CLASS.append(PlanLR)
    return PlanLR
