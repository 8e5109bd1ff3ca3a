"""Figure 9: ``durations compare`` (all four trainer profiles) against run length."""

from __future__ import annotations

from collections.abc import Callable

from durations import plan
from durations.compare import compare
from durations.scenario import Scenario

from ._context import Context
from ._harness import Contender, Figure, fmt_seconds, measure
from .startup import EXAMPLE


def scenario(max_duration: str, scale: int = 1) -> Scenario:
    """examples/two-phase.toml with another ``max_duration`` for its pretraining call, and its
    data sets and batches ``scale`` times as large (the same steps, ``scale`` times the
    samples)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    replaced = {
        'max_duration = "2ep"': f'max_duration = "{max_duration}"',
        "samples = 1_000_000": f"samples = {1_000_000 * scale}",
        "samples = 20_000": f"samples = {20_000 * scale}",
        "batch_size = 512": f"batch_size = {512 * scale}",
        "batch_size = 64": f"batch_size = {64 * scale}",
    }
    for old, new in replaced.items():
        if old not in text:
            raise RuntimeError(f"{EXAMPLE} no longer has {old!r}; update this figure")
        text = text.replace(old, new)
    return Scenario.from_toml(text, source="")


def _compare(of: Scenario) -> Callable[[int], object]:
    def run(repeat: int) -> object:
        result = None
        for _ in range(repeat):
            result = compare(of)
        return result

    return run


def run(ctx: Context) -> Figure:
    lengths = ("100ba", "1000ba", "2ep") if not ctx.settings.quick else ("10ba", "100ba")
    figure = Figure(
        key="compare",
        title="Figure 9: `durations compare` of the two-phase scenario against run length",
        unit="per compare() call",
        baseline=lengths[0],
    )
    compare(scenario(lengths[0]))  # imports the four profiles before timing
    contenders = []
    steps: dict[str, int] = {}
    for length in lengths:
        found = scenario(length)
        total = plan(found.config, found.calls).total_steps
        steps[length] = total
        label = f"max_duration={length} ({total:,} steps, the last 32 on the curated data)"
        contenders.append(Contender(length, label, _compare(found), 1))
    scale = 1000
    larger = scenario(lengths[-1], scale)
    contenders.append(
        Contender(
            f"{lengths[-1]} x{scale}",
            f"max_duration={lengths[-1]}, every data set and batch {scale:,} times as large "
            f"(the same {steps[lengths[-1]]:,} steps, {scale:,} times the samples)",
            _compare(larger),
            1,
        )
    )
    rounds = ctx.settings.pick(3, 1)
    measure(figure, contenders, rounds=rounds, warmup=0)
    longest = figure.get(lengths[-1])
    per_step = longest.median_s / steps[lengths[-1]]
    figure.extra["per_step_s"] = per_step
    figure.notes.append(
        "compare plans the scenario and emulates it on Composer, Lightning, Hugging Face and "
        "Keras step by step, following the runs of sample ids each trainer reads to tell "
        "samples read twice or never: its cost grows with the steps, "
        f"{fmt_seconds(per_step)} per step at the longest ({steps[lengths[-1]]:,} steps), and "
        f"not with the samples they read (the x{scale} row: the same steps, {scale:,} times the "
        "samples). plan() itself does not grow with the run (Figure 2a)."
    )
    figure.notes.append(f"{rounds} rounds, interleaved; ratio to max_duration={lengths[0]}.")
    return figure
