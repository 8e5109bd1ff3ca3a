"""Figure 2: planning cost against run length, and against the number of fit calls."""

from __future__ import annotations

from collections.abc import Callable

from durations import FitCall, RunConfig, plan

from . import scenario
from ._context import Context
from ._harness import Contender, Figure, Goal, fmt_seconds, measure

TARGETS = ("10ba", "1e6ba", "1e12tok", "1e15tok")
CALLS = (1, 10, 100, 1000)


def _plan_to(target: str) -> Callable[[int], object]:
    config, calls = scenario.config(target), scenario.script()

    def run(repeat: int) -> object:
        result = None
        for _ in range(repeat):
            result = plan(config, calls)
        return result

    return run


def calls_script(count: int) -> list[FitCall]:
    """``count`` fit calls alternating the scenario's two phases: 100ba of pretraining, then
    0.1ep of curated data, and again."""
    return [
        FitCall(loader=scenario.PRETRAIN, duration="100ba")
        if i % 2 == 0
        else FitCall(loader=scenario.CURATED, duration="0.1ep")
        for i in range(count)
    ]


def _plan_calls(count: int) -> Callable[[int], object]:
    config, calls = RunConfig(), calls_script(count)

    def run(repeat: int) -> object:
        result = None
        for _ in range(repeat):
            result = plan(config, calls)
        return result

    return run


def run_length(ctx: Context) -> Figure:
    figure = Figure(
        key="plan_length",
        title="Figure 2a: plan() of the two-phase scenario against run length (max_duration)",
        unit="per plan() call",
        baseline="10ba",
    )
    repeat = ctx.settings.pick(20, 2)
    contenders = []
    for target in TARGETS:
        steps = scenario.two_phase(target).total_steps
        label = f"max_duration={target} ({steps:,} steps)"
        contenders.append(Contender(target, label, _plan_to(target), repeat))
    rounds = ctx.settings.pick(15, 3)
    measure(figure, contenders, rounds=rounds)
    figure.notes.append(f"{repeat} plans per round, {rounds} rounds; ratio to max_duration=10ba.")
    worst = max((r.ratio or 0.0) for r in figure.rows)
    longest = figure.get("1e15tok")
    assert longest.ratio is not None
    figure.goals.append(
        Goal(
            "planning cost independent of run length: longest / shortest <= 1.5",
            longest.ratio <= 1.5 if not ctx.settings.quick else None,
            f"1e15tok / 10ba = {longest.ratio:.3g}x; worst of all targets {worst:.3g}x",
        )
    )
    return figure


def fit_calls(ctx: Context) -> Figure:
    figure = Figure(
        key="plan_calls",
        title="Figure 2b: plan() against the number of fit calls (time per fit call)",
        unit="per fit call",
        baseline="1",
    )
    contenders = []
    for count in CALLS:
        repeat = max(1, ctx.settings.pick(2000, 20) // count)
        label = f"{count} fit call{'s' if count > 1 else ''}"
        contenders.append(Contender(str(count), label, _plan_calls(count), repeat, ops=count))
    rounds = ctx.settings.pick(7, 1)
    measure(figure, contenders, rounds=rounds)
    figure.notes.append(
        "Calls alternate 100ba of pretraining and 0.1ep of curated data; each round plans "
        f"about {ctx.settings.pick(2000, 20)} fit calls in all per size, {rounds} rounds; "
        "ratio = time per call relative to a 1-call script."
    )
    ten, thousand = figure.get("10"), figure.get("1000")
    growth = thousand.median_s / ten.median_s
    figure.goals.append(
        Goal(
            "linear in fit calls: time per call at 1000 calls <= 1.5x that at 10 calls",
            growth <= 1.5 if not ctx.settings.quick else None,
            f"per call: {fmt_seconds(thousand.median_s)} at 1000 vs "
            f"{fmt_seconds(ten.median_s)} at 10 ({growth:.3g}x)",
        )
    )
    return figure
