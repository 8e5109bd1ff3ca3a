"""Figure 7: ``durations plan FILE --plot OUT.png`` of a 1,000,000-step plan.

The command runs in this process (``durations.cli.main``), its text going nowhere, so the
figure measures drawing, not the interpreter's startup (Figure 8). The floor is matplotlib
alone drawing a picture of the same size and kind.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import itertools
import math
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from durations import plan
from durations._plot import MAX_TICKS
from durations._render import MAX_COUNTED_EVENTS
from durations.cli import main
from durations.scenario import Scenario

from ._context import Context
from ._harness import Contender, Figure, fmt_seconds, measure

#: The two-phase example's shape (examples/two-phase.toml) for ``max_duration`` steps of
#: pretraining: a warmup, a cosine and a linear decay, and three event intervals.
SCENARIO = """\
[run]
max_duration = "{steps}ba"

[loaders.pretrain]
samples = 1_000_000
batch_size = 512
tokens_per_sample = 2048

[loaders.curated]
samples = 20_000
batch_size = 64
tokens_per_sample = 2048

[[fit]]
loader = "pretrain"
name = "pretrain"

[[fit]]
loader = "curated"
duration = "0.1ep"
name = "anneal"

[schedule]
warmup = "200ba"

[[schedule.pieces]]
kind = "cosine"
to = "0.1"
until = "stop:pretrain"

[[schedule.pieces]]
kind = "linear"
to = 0
until = "end"

[events.checkpoint]
every = "0.25ep"

[events.eval]
at_call_ends = true

[events.log]
every = "100ba"
"""

#: The plans drawn: their steps of pretraining (then 32 curated steps).
LENGTHS = {"short": 1_000, "long": 1_000_000, "huge": 1_000_000_000}
#: The events the text counts per interval before it says "more than".
COUNTED = MAX_COUNTED_EVENTS
LONG = LENGTHS["long"]


def _command(argv: list[str]) -> Callable[[int], object]:
    def run(repeat: int) -> object:
        code = 0
        for _ in range(repeat):
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(argv)
        return code

    return run


def _matplotlib(path: Path) -> Callable[[int], object]:
    """The floor: a figure of the plot's size, two axes, spans above and a 1,000-point line
    below, laid out and saved as a PNG at the plot's resolution."""
    figure_module = importlib.import_module("matplotlib.figure")
    agg = importlib.import_module("matplotlib.backends.backend_agg")
    xs = list(range(0, LONG + 1, LONG // 1000))
    ys = [0.5 * (1 + math.cos(math.pi * x / LONG)) for x in xs]

    def run(repeat: int) -> object:
        for _ in range(repeat):
            figure = figure_module.Figure(figsize=(11, 6.2))
            agg.FigureCanvasAgg(figure)
            spans, factor = figure.subplots(2, 1, sharex=True)
            spans.broken_barh([(0, LONG), (LONG, 32)], (-0.35, 0.7))
            factor.plot(xs, ys)
            figure.tight_layout()
            figure.savefig(path, dpi=120)
        return path

    return run


def _events(path: Path) -> Callable[[int], object]:
    """The long plan's log events found as the text counts them: up to 10,000 of them."""
    found = Scenario.from_toml(path.read_text(encoding="utf-8"), source=str(path))
    events = found.events["log"].resolve(plan(found.config, found.calls))

    def run(repeat: int) -> object:
        steps: list[int] = []
        for _ in range(repeat):
            steps = list(itertools.islice(events.steps(), COUNTED))
        return steps

    return run


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="plot",
        title="Figure 7: `durations plan FILE --plot OUT.png` of a 1,000,000-step plan",
        unit="per command",
        baseline="matplotlib",
    )
    folder = Path(tempfile.mkdtemp(prefix="durations-bench-"))
    try:
        files = {}
        for key, steps in LENGTHS.items():
            files[key] = folder / f"{key}.toml"
            files[key].write_text(SCENARIO.format(steps=steps), encoding="utf-8")
        picture = str(folder / "plan.png")
        contenders = [
            Contender(
                "text",
                f"durations plan FILE (text only), {LENGTHS['long'] + 32:,} steps",
                _command(["plan", str(files["long"])]),
                1,
            ),
            Contender(
                "events",
                f"the first {COUNTED:,} log events of that plan, from Events.steps()",
                _events(files["long"]),
                1,
            ),
        ]
        try:
            importlib.import_module("matplotlib")
        except ImportError as error:
            figure.baseline = "text"
            figure.skipped.append(
                f"the pictures: matplotlib is not importable ({error}); pip install "
                "'training-durations[plot]'"
            )
        else:
            pictures = [
                Contender(
                    key,
                    f"durations plan FILE --plot plan.png, {steps + 32:,} steps",
                    _command(["plan", str(files[key]), "--plot", picture]),
                    1,
                )
                for key, steps in LENGTHS.items()
            ]
            floor = Contender(
                "matplotlib",
                "matplotlib alone: a picture of the same size and kind, saved as a PNG",
                _matplotlib(folder / "floor.png"),
                1,
            )
            contenders = [floor, *pictures, *contenders]
        rounds = ctx.settings.pick(5, 1)
        samples = measure(figure, contenders, rounds=rounds, warmup=1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figure.notes.append(
        "The scenario is examples/two-phase.toml run for max_duration steps of pretraining "
        "(warmup, cosine, linear decay; checkpoint every 0.25ep, eval at call ends, log every "
        f"100ba: {LENGTHS['long'] // 100:,} log events in the 1,000,032-step plan); {rounds} "
        "rounds, interleaved, in this process (matplotlib imported before timing)."
    )
    if "long" in samples:
        growth = _paired(samples, "long", "short")
        beyond = _paired(samples, "huge", "long")
        figure.extra["long_to_short"] = growth
        figure.extra["huge_to_long"] = beyond
        events = figure.get("events").median_s
        figure.notes.append(
            f"Paired by round, the 1,000,032-step picture takes {growth:.3g}x the 1,032-step "
            f"one, and the 1,000,000,032-step one {beyond:.3g}x the 1,000,032-step one. The "
            "curve is sampled at about 1,000 steps; the events are found one by one "
            f"(Events.steps(), {fmt_seconds(events / COUNTED)} an event here), up to "
            f"{COUNTED:,} per interval for the text and {MAX_TICKS:,} for the picture: the cost "
            "grows with a run's events until both counts are reached, then no further."
        )
    return figure


def _paired(samples: dict[str, list[float]], key: str, reference: str) -> float:
    """The median over rounds of ``key`` / ``reference``, both timed in the same round."""
    return statistics.median(a / b for a, b in zip(samples[key], samples[reference], strict=True))
