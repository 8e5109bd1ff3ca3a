"""``durations.integrations.torch``: a real ``LambdaLR`` on a real optimizer follows the
resolved schedule at every lifetime step, also rebuilt from a checkpoint mid-run.

The run is two calls (20 steps on one loader, then 10 on another) and a schedule that warms up,
holds through the first call and decays along a cosine over the second; every rate is compared
with ``ResolvedSchedule.lr(k, base)``, never with numbers written here.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from durations import END, FitCall, Landmark, Loader, RunConfig, Schedule, plan

torch = pytest.importorskip("torch")

from durations.integrations.torch import lr_lambda, scheduler  # noqa: E402

BASE = 3e-4
CONFIG = RunConfig()
SCRIPT = [
    FitCall(loader=Loader(samples=100, batch_size=10, name="a"), until="2ep", name="pretrain"),
    FitCall(loader=Loader(samples=50, batch_size=5, name="b"), duration="1ep", name="anneal"),
]
SCHEDULE = (
    Schedule.warmup("0.3ep")
    .then_constant(until=Landmark.call_start("anneal"))
    .then_cosine(to=Fraction(1, 10), until=END)
)


def _optimizer() -> Any:
    torch.manual_seed(0)
    layer = torch.nn.Linear(2, 1)
    return torch.optim.SGD(layer.parameters(), lr=BASE, momentum=0.9)


def _train(optimizer: Any, sched: Any, steps: int) -> list[float]:
    """The rate each optimizer step used, stepping the scheduler after each one."""
    rates = []
    params = optimizer.param_groups[0]["params"]
    for _ in range(steps):
        rates.append(optimizer.param_groups[0]["lr"])
        loss = sum((p**2).sum() for p in params)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        sched.step()
    return rates


def test_scheduler_follows_the_resolved_schedule_at_every_step() -> None:
    """Over the whole two-call plan, step k + 1 trains at exactly resolved.lr(k, base), and the
    scheduler's count is the lifetime step."""
    run = plan(CONFIG, SCRIPT)
    curve = SCHEDULE.resolve(run)
    assert run.total_steps == 30
    optimizer = _optimizer()
    sched = scheduler(optimizer, curve, step=run.start.batch)
    rates = _train(optimizer, sched, run.total_steps)
    assert rates == [curve.lr(k, BASE) for k in range(30)]
    assert sched.last_epoch == 30
    assert len(set(rates)) > 10  # warmup, hold and cosine all show


@pytest.mark.parametrize("crash", [2, 3, 19, 20, 21, 27])
@pytest.mark.parametrize("restore", ["state", "fresh"])
def test_scheduler_rebuilt_from_a_checkpoint_goes_on_with_the_same_rates(
    crash: int, restore: str
) -> None:
    """Killed after step ``crash`` and rebuilt in a new process from the saved optimizer (and,
    with "state", the saved scheduler state too, loaded after or before the optimizer's), the
    scheduler trains every later step at the uninterrupted run's rate."""
    run = plan(CONFIG, SCRIPT)
    curve = SCHEDULE.resolve(run)
    optimizer = _optimizer()
    sched = scheduler(optimizer, curve, step=0)
    before = _train(optimizer, sched, crash)
    saved = {"optimizer": optimizer.state_dict(), "scheduler": sched.state_dict()}
    checkpoint = run.checkpoint_at(crash)

    resumed = plan(CONFIG, SCRIPT, checkpoint)
    again = SCHEDULE.resolve(resumed)
    assert again == curve
    optimizer = _optimizer()
    if restore == "state":
        # Scheduler state first, optimizer second: the order the torch docs do not fix.
        sched = scheduler(optimizer, again, step=0)
        sched.load_state_dict(saved["scheduler"])
        optimizer.load_state_dict(saved["optimizer"])
    else:
        optimizer.load_state_dict(saved["optimizer"])
        sched = scheduler(optimizer, again, step=resumed.start.batch)
    assert sched.last_epoch == crash
    after = _train(optimizer, sched, resumed.total_steps)
    assert before + after == [curve.lr(k, BASE) for k in range(30)]


def test_lr_lambda_in_a_plain_lambdalr_is_within_one_rounding() -> None:
    """A LambdaLR of one's own with lr_lambda(curve, offset=...) gives base * float(factor):
    the resolved rate to one rounding, here counted from the second call's start."""
    run = plan(CONFIG, SCRIPT)
    curve = SCHEDULE.resolve(run)
    start = run.segments[1].start.batch
    optimizer = _optimizer()
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(curve, offset=start))
    rates = _train(optimizer, sched, run.stop.batch - start)
    expected = [curve.lr(k, BASE) for k in range(start, run.stop.batch)]
    assert rates == pytest.approx(expected, rel=1e-15, abs=0)
    assert sched.state_dict()["lr_lambdas"] == [None]  # a plain function: nothing to save


def test_scheduler_refuses_a_step_before_the_schedule() -> None:
    """A step that is not a lifetime step of the schedule is refused, naming plan.start.batch."""
    from durations.integrations.torch import IntegrationError

    curve = SCHEDULE.resolve(plan(CONFIG, SCRIPT))
    with pytest.raises(IntegrationError, match=r"plan\.start\.batch"):
        scheduler(_optimizer(), curve, step=-1)
    with pytest.raises(TypeError, match="ResolvedSchedule"):
        lr_lambda(SCHEDULE, offset=0)  # type: ignore[arg-type]
