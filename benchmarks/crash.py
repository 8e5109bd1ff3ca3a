"""Figure 3: crash simulation. A two-phase plan of 1e6 steps resumed from random checkpoints.

Each crash takes ``plan.checkpoint_at(k)``, plans the same script from it and checks the
resumed plan against the original: the same stop, and ``total - k`` steps.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import random
import statistics
import time
from collections.abc import Callable

from durations import Checkpoint, FitCall, Plan, RunConfig, plan

from . import scenario
from ._context import Context
from ._harness import Contender, Figure, Goal, fmt_seconds, measure

TOTAL_STEPS = 1_000_000
SEED = 20240601
#: "Well under a second" for 10,000 crashes, read as at most half a second.
WELL_UNDER_S = 0.5


def script() -> tuple[RunConfig, list[FitCall]]:
    """Pretrain until step 999,968, then the curated phase up to max_duration=1e6ba."""
    config = RunConfig(max_duration="1e6ba")
    calls = [
        FitCall(loader=scenario.PRETRAIN, until=f"{TOTAL_STEPS - 32}ba"),
        FitCall(loader=scenario.CURATED),
    ]
    return config, calls


def crash_points(count: int) -> list[int]:
    return [random.Random(SEED + i).randrange(TOTAL_STEPS + 1) for i in range(count)]


def simulate(full: Plan, config: RunConfig, calls: list[FitCall], points: list[int]) -> int:
    """Resume ``full`` from every point; return how many resumed plans disagree with it."""
    wrong = 0
    for k in points:
        resumed = plan(config, calls, full.checkpoint_at(k))
        if resumed.stop != full.stop or resumed.total_steps != full.total_steps - k:
            wrong += 1
    return wrong


def _cycle(points: list[int], action: Callable[[int], object]) -> Callable[[int], object]:
    def run(repeat: int) -> object:
        result = None
        for i in range(repeat):
            result = action(points[i % len(points)])
        return result

    return run


def profile(full: Plan, config: RunConfig, calls: list[FitCall], points: list[int]) -> str:
    """Where the simulation's time goes: cProfile's top functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    simulate(full, config, calls, points)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(14)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    header = [line.strip() for line in lines[:start] if "function calls" in line]
    body = [line for line in lines[start:] if line.strip()]
    return "\n".join(header + body)


def run(ctx: Context) -> Figure:
    config, calls = script()
    full = plan(config, calls)
    assert full.total_steps == TOTAL_STEPS, full.total_steps
    count = ctx.settings.pick(10_000, 50)
    points = crash_points(count)
    figure = Figure(
        key="crash",
        title=f"Figure 3: crash simulation, {full.total_steps:,}-step plan, {count:,} resumes",
        unit="per crash",
        baseline="fresh",
    )
    checkpoints: list[Checkpoint] = [full.checkpoint_at(k) for k in points[:200]]

    def check(k: int) -> object:
        resumed = plan(config, calls, full.checkpoint_at(k))
        return resumed.stop == full.stop and resumed.total_steps == full.total_steps - k

    repeat = ctx.settings.pick(200, 5)
    contenders = [
        Contender(
            "fresh",
            "plan(config, calls): a fresh plan",
            _cycle(points, lambda k: plan(config, calls)),
            repeat,
        ),
        Contender(
            "checkpoint_at", "plan.checkpoint_at(k)", _cycle(points, full.checkpoint_at), repeat
        ),
        Contender(
            "resume",
            "plan(config, calls, checkpoint)",
            _cycle(list(range(len(checkpoints))), lambda i: plan(config, calls, checkpoints[i])),
            repeat,
        ),
        Contender(
            "crash", "one crash: checkpoint_at + resume + check", _cycle(points, check), repeat
        ),
    ]
    measure(figure, contenders, rounds=ctx.settings.pick(9, 2))

    runs = ctx.settings.pick(3, 1)
    totals, wrong = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        wrong = simulate(full, config, calls, points)
        totals.append(time.perf_counter() - start)
    total = statistics.median(totals)
    fresh = figure.get("fresh")
    figure.extra["total_s"] = total
    figure.extra["total_runs_s"] = totals
    figure.extra["crashes"] = count
    figure.extra["wrong"] = wrong
    figure.extra["total_in_fresh_plans"] = total / fresh.median_s
    figure.notes.append(
        f"The whole simulation of {count:,} crashes took {fmt_seconds(total)} (median of "
        f"{runs}), as long as {total / fresh.median_s:,.0f} fresh plans measured in this run; "
        f"{wrong} resumed plans disagreed with the original."
    )
    assessed = not ctx.settings.quick
    figure.goals.append(
        Goal(
            "every resumed plan agrees with the original (same stop, total - k steps)",
            wrong == 0,
            f"{wrong} of {count:,} disagree",
        )
    )
    figure.goals.append(
        Goal(
            f"10,000 crash-resume-checks well under a second (<= {WELL_UNDER_S} s)",
            total <= WELL_UNDER_S if assessed else None,
            f"{fmt_seconds(total)} for {count:,} (per crash {fmt_seconds(total / count)})",
        )
    )
    if not assessed or total > WELL_UNDER_S:
        sample = points[: ctx.settings.pick(2000, 20)]
        figure.extra["profile"] = profile(full, config, calls, sample)
        figure.notes.append(f"cProfile of {len(sample):,} crashes follows (top by own time).")
    return figure
