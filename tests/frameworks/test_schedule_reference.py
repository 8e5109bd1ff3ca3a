"""The schedules against the real thing: transformers' ``get_*_schedule_with_warmup`` and torch's
own schedulers, stepped on a real optimizer (tests/test_schedules.py checks the same shapes
against the formulas, without the frameworks). Both follow LambdaLR: the optimizer step from
lifetime step ``k`` uses the rate at ``k``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

from durations import END, FitCall, Loader, Plan, RunConfig, Schedule, plan


def _one_phase(total: int) -> Plan:
    return plan(
        RunConfig(), [FitCall(loader=Loader(samples=10**6, batch_size=1), until=f"{total}ba")]
    )


def _rates(make: Callable[[Any], Any], steps: int) -> list[float]:
    """The learning rate of each optimizer step, from a real optimizer and scheduler."""
    torch = pytest.importorskip("torch")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = make(optimizer)
    rates = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when the scheduler steps first
        for _ in range(steps):
            rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
    return rates


# (total steps, warmup steps)
SHAPES = [(1, 0), (10, 0), (10, 3), (50, 10), (50, 49), (100, 1)]


@pytest.mark.parametrize(("total", "warmup"), SHAPES)
def test_transformers_linear(total: int, warmup: int) -> None:
    """get_linear_schedule_with_warmup equals warmup then linear to 0 at the plan's end."""
    transformers = pytest.importorskip("transformers")
    real = _rates(lambda o: transformers.get_linear_schedule_with_warmup(o, warmup, total), total)
    curve = Schedule.warmup(f"{warmup}ba").then_linear(to=0, until=END).resolve(_one_phase(total))
    assert real == pytest.approx([float(curve.factor(k)) for k in range(total)], abs=1e-12)


@pytest.mark.parametrize(("total", "warmup"), [s for s in SHAPES if s[1] < s[0]])
def test_transformers_cosine(total: int, warmup: int) -> None:
    """get_cosine_schedule_with_warmup equals warmup then cosine to 0 at the plan's end."""
    transformers = pytest.importorskip("transformers")
    real = _rates(lambda o: transformers.get_cosine_schedule_with_warmup(o, warmup, total), total)
    curve = Schedule.warmup(f"{warmup}ba").then_cosine(to=0, until=END).resolve(_one_phase(total))
    assert real == pytest.approx([float(curve.factor(k)) for k in range(total)], abs=1e-12)


@pytest.mark.parametrize(("total", "warmup"), SHAPES)
def test_transformers_constant(total: int, warmup: int) -> None:
    """get_constant_schedule_with_warmup equals a warmup and nothing after it."""
    transformers = pytest.importorskip("transformers")
    real = _rates(lambda o: transformers.get_constant_schedule_with_warmup(o, warmup), total)
    curve = Schedule.warmup(f"{warmup}ba").resolve(_one_phase(total))
    assert real == pytest.approx([float(curve.factor(k)) for k in range(total)], abs=1e-12)


@pytest.mark.parametrize("total", [1, 7, 50])
def test_torch_cosine_annealing(total: int) -> None:
    """torch's CosineAnnealingLR(T_max=total, eta_min=0.1) equals a cosine to 0.1x at the end
    (torch computes it recursively in floats: equal to 1e-9)."""
    torch = pytest.importorskip("torch")
    real = _rates(
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=total, eta_min=0.1), total
    )
    curve = Schedule.constant().then_cosine(to="0.1", until=END).resolve(_one_phase(total))
    assert real == pytest.approx([float(curve.factor(k)) for k in range(total)], abs=1e-9)


@pytest.mark.parametrize(("total", "warmup"), [(10, 3), (50, 10)])
def test_torch_linear_warmup(total: int, warmup: int) -> None:
    """torch's LinearLR(start_factor=1e-9, total_iters=warmup) is the warmup (from ~0)."""
    torch = pytest.importorskip("torch")
    real = _rates(
        lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=1e-9, total_iters=warmup),
        total,
    )
    curve = Schedule.warmup(f"{warmup}ba").resolve(_one_phase(total))
    assert real == pytest.approx([float(curve.factor(k)) for k in range(total)], abs=1e-8)
