"""Figure 8: the command's startup, each run in a fresh interpreter, against a bare one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ._context import Context
from ._harness import Contender, Figure, Goal, fmt_seconds, measure

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-phase.toml"


def command() -> tuple[list[str], str]:
    """How to run ``durations``: the console script beside this Python (what the README runs),
    or ``python -m durations`` where it is not installed."""
    script = Path(sys.executable).with_name("durations")
    if script.is_file():
        return [str(script)], "the durations console script"
    return [sys.executable, "-m", "durations"], "python -m durations (no console script here)"


#: Every process runs with its bytecode cached, as an installed package has it: a session with
#: PYTHONDONTWRITEBYTECODE set would otherwise compile every module from source at every start
#: (a third of the time of `plan`), which no user's installed command does.
_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _process(argv: Sequence[str]) -> Callable[[int], object]:
    command = list(argv)

    def run(repeat: int) -> object:
        for _ in range(repeat):
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=_ENV)
        return None

    return run


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="startup",
        title="Figure 8: the command's startup, in a fresh process each time",
        unit="per process",
        baseline="bare",
    )
    durations, how = command()
    python = sys.executable
    contenders = [
        Contender("bare", "python -c pass", _process([python, "-c", "pass"]), 1),
        Contender(
            "argparse",
            "python -c 'import argparse' (what --help needs)",
            _process([python, "-c", "import argparse"]),
            1,
        ),
        Contender("help", "durations --help", _process([*durations, "--help"]), 1),
        Contender(
            "attrs",
            "python -c 'import attrs' (the one dependency: any command of the core loads it)",
            _process([python, "-c", "import attrs"]),
            1,
        ),
        Contender(
            "plan",
            "durations plan examples/two-phase.toml",
            _process([*durations, "plan", str(EXAMPLE)]),
            1,
        ),
        Contender(
            "convert",
            "durations convert 2.1ep --samples 1000000 --batch-size 512",
            _process(
                [*durations, "convert", "2.1ep", "--samples", "1000000", "--batch-size", "512"]
            ),
            1,
        ),
    ]
    rounds = ctx.settings.pick(21, 2)
    measure(figure, contenders, rounds=rounds, warmup=1)
    figure.notes.append(
        f"{rounds} rounds, interleaved, every module's bytecode cached (the warmup round "
        f"writes it); the command is {how}. Each command imports what it "
        "uses when it runs (durations/cli.py; which modules, tests/test_cli_imports.py): "
        "--help and argument errors argparse alone, plan the core, the scenario reader and the "
        "text output, never compare's trainer profiles."
    )
    help_row, plan_row, attrs_row = figure.get("help"), figure.get("plan"), figure.get("attrs")
    assert help_row.ratio is not None
    assert plan_row.ratio is not None
    assert attrs_row.ratio is not None
    assessed = not ctx.settings.quick
    figure.goals.append(
        Goal(
            "`durations --help` within 3x a bare interpreter's startup",
            help_row.ratio <= 3 if assessed else None,
            f"{help_row.ratio:.3g}x ({fmt_seconds(help_row.median_s)})",
        )
    )
    figure.goals.append(
        Goal(
            "`durations plan examples/two-phase.toml` within 5x a bare interpreter's startup",
            plan_row.ratio <= 5 if assessed else None,
            f"{plan_row.ratio:.3g}x ({fmt_seconds(plan_row.median_s)}); `import attrs` alone "
            f"is {attrs_row.ratio:.3g}x",
        )
    )
    if plan_row.ratio > 5:
        figure.notes.append(
            "Why plan is not within 5x: importing attrs alone, the core's one dependency, costs "
            f"{attrs_row.ratio:.3g}x a bare interpreter here (it imports inspect, typing and "
            "builds its own validators), and plan then builds the core's attrs classes (each "
            "has its methods compiled at import), reads TOML and writes the plan. What was cut: "
            "--help imports none of it; plan no longer imports compare and the trainer "
            "profiles (half the classes); the package no longer imports typing."
        )
    return figure
