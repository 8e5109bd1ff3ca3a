"""Figure 11: the interleave of weighted sources, per prefix count and per sample of a period.

``Interleave.counts(n)`` at ``n = 10`` and at ``n = 10**30``: the count of a prefix is a number
of periods' shares plus a lookup in the table of one period, so it costs the same at any
distance. Building the table of one period (Tijdeman's rule, ``O(k A)``) is timed apart, per
sample of the period, at periods of 1,000 and 100,000 (6 sources): a constant cost per sample.
And a whole plan of a two-phase mixture script (three sources, then two, each source's reads
reported) is timed at 10**3 and at 10**15 samples a phase: the planner's cost does not grow with
the steps.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from fractions import Fraction

from ._context import Context
from ._harness import Contender, Figure, Goal, measure


def _weights(period: int) -> list[Fraction]:
    """Six weights whose common denominator is ``period``."""
    first = Fraction(1, period)
    rest = [Fraction(35, 100), Fraction(25, 100), Fraction(2, 10), Fraction(1, 10)]
    return [first, *rest, 1 - first - sum(rest)]


def run(ctx: Context) -> Figure:
    from durations.interleave import Interleave, _table

    figure = Figure(
        key="mixing",
        title="Figure 11: the interleave of weighted sources, a prefix count at any distance",
        unit="per count",
        baseline="near",
    )
    mix = Interleave.of(*_weights(1_000))

    def count(n: int) -> Callable[[int], object]:
        def go(repeat: int) -> object:
            for _ in range(repeat):
                mix.counts(n)
            return None

        return go

    contenders = [
        Contender("near", "Interleave.counts(10), 6 sources, period 1,000", count(10), 2_000),
        Contender("far", "Interleave.counts(10**30 + 7), the same", count(10**30 + 7), 2_000),
    ]
    rounds = ctx.settings.pick(7, 2)
    measure(figure, contenders, rounds=rounds)

    def build(period: int) -> Contender:
        shares = Interleave.of(*_weights(period)).shares

        def make(repeat: int) -> object:
            for _ in range(repeat):
                _table.__wrapped__(shares)
            return None

        return Contender(f"build-{period}", f"build one period of {period:,}", make, 1, ops=period)

    small, large = 1_000, ctx.settings.pick(100_000, 10_000)
    built = Figure(key="x", title="", unit="", baseline=f"build-{small}")
    samples = measure(built, [build(small), build(large)], rounds=ctx.settings.pick(5, 2))
    growth = statistics.median(
        big / little
        for big, little in zip(samples[f"build-{large}"], samples[f"build-{small}"], strict=True)
    )
    per_sample = statistics.median(samples[f"build-{large}"]) * 1e6
    planned = _plans(ctx)
    ratio = figure.get("far").ratio
    figure.notes.append(
        f"{rounds} rounds, interleaved; ratio = median over rounds of contender / near. Building "
        f"a period: {per_sample:.3g} us per sample at {large:,}, {growth:.3g}x the cost per "
        f"sample at {small:,}."
    )
    assessed = not ctx.settings.quick
    figure.goals.append(
        Goal(
            "a prefix count costs the same at any distance",
            (ratio is not None and ratio <= 1.5) if assessed else None,
            f"far / near = {ratio:.3g}x" if ratio is not None else "no ratio",
        )
    )
    figure.goals.append(
        Goal(
            "building a period costs the same per sample at any period (O(k A))",
            growth <= 1.5 if assessed else None,
            f"per sample at {large:,} / at {small:,} = {growth:.3g}x",
        )
    )
    figure.goals.append(
        Goal(
            "a mixture plan costs the same at 10**15 samples a phase as at 10**3",
            planned <= 1.5 if assessed else None,
            f"plan at 10**15 / at 10**3 = {planned:.3g}x",
        )
    )
    return figure


def _plans(ctx: Context) -> float:
    """The median ratio of planning a two-phase mixture script of 10**15 samples a phase to
    planning it at 10**3."""
    from durations import FitCall, Loader, Mixture, RunConfig, Source, plan

    web = Source(name="web", samples=60_000, weight=6)
    code = Source(name="code", samples=20_000, weight=3)
    math = Source(name="math", samples=5_000, weight=1)
    pretrain = Loader.mixing(Mixture(sources=(web, code, math), stop="never"), batch_size=64)
    anneal = Loader.mixing(Mixture(sources=(code, math), stop="never"), batch_size=64)

    def script(samples: int) -> Contender:
        calls = [
            FitCall(loader=pretrain, duration=f"{samples}sp", name="pretrain"),
            FitCall(loader=anneal, duration=f"{samples}sp", name="anneal"),
        ]

        def go(repeat: int) -> object:
            for _ in range(repeat):
                plan(RunConfig(), calls)
            return None

        return Contender(f"plan-{samples}", f"plan, {samples:,} samples a phase", go, 50)

    short, long = 10**3, 10**15
    timed = Figure(key="y", title="", unit="", baseline=f"plan-{short}")
    samples = measure(timed, [script(short), script(long)], rounds=ctx.settings.pick(5, 2))
    return statistics.median(
        far / near
        for far, near in zip(samples[f"plan-{long}"], samples[f"plan-{short}"], strict=True)
    )
