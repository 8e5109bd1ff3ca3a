"""Figure 5: ``import durations`` in a fresh interpreter, and what it drags in."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable

from ._context import Context
from ._harness import Contender, Figure, Goal, fmt_seconds, measure

#: Top-level modules that the pure core must never import.
FORBIDDEN = (
    "torch",
    "pytorch_lightning",
    "lightning",
    "lightning_utilities",
    "composer",
    "transformers",
    "keras",
    "tensorflow",
    "jax",
    "hypothesis",
    "numpy",
)

_PROBE = "import sys, json, durations; print(json.dumps(sorted(sys.modules)))"


def _interpreter(code: str) -> Callable[[int], object]:
    command = [sys.executable, "-c", code]

    def run(repeat: int) -> object:
        for _ in range(repeat):
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        return None

    return run


def imported_modules() -> list[str]:
    """Every module in ``sys.modules`` of a fresh interpreter after ``import durations``."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True
    )
    modules: list[str] = json.loads(done.stdout)
    return modules


def importtime() -> int | None:
    """``-X importtime``'s cumulative microseconds for the ``durations`` package."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import durations"],
        check=True,
        capture_output=True,
        text=True,
    )
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s?durations$", line)
        if match:
            return int(match.group(1))
    return None


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="import",
        title="Figure 5: `import durations` in a fresh subprocess",
        unit="per interpreter",
        baseline="bare",
    )
    contenders = [
        Contender("bare", "python -c pass", _interpreter("pass"), 1),
        Contender(
            "attrs",
            "python -c 'import attrs' (its one dependency)",
            _interpreter("import attrs"),
            1,
        ),
        Contender("durations", "python -c 'import durations'", _interpreter("import durations"), 1),
        Contender(
            "core",
            "python -c 'from durations import plan, Time' (the whole core)",
            _interpreter("from durations import plan, Time"),
            1,
        ),
    ]
    rounds = ctx.settings.pick(15, 2)
    measure(figure, contenders, rounds=rounds, warmup=1)
    bare, ours, attrs_row = figure.get("bare"), figure.get("durations"), figure.get("attrs")
    cost = ours.median_s - bare.median_s
    cumulative = importtime()
    figure.extra["import_cost_s"] = cost
    figure.extra["importtime_us"] = cumulative
    core = figure.get("core")
    figure.notes.append(
        "durations loads its modules on first use (PEP 562): `import durations` is the package "
        "alone; loading the whole core costs "
        f"{fmt_seconds(core.median_s - bare.median_s)} over a bare interpreter, most of it attrs."
    )
    figure.notes.append(
        f"{rounds} rounds, interleaved; import cost = durations - bare = {fmt_seconds(cost)} "
        f"(attrs alone: {fmt_seconds(attrs_row.median_s - bare.median_s)}); "
        f"-X importtime cumulative for durations: "
        f"{'n/a' if cumulative is None else fmt_seconds(cumulative / 1e6)}."
    )
    modules = imported_modules()
    bad = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    figure.extra["modules_imported"] = len(modules)
    figure.extra["forbidden_imported"] = bad
    core_cost = core.median_s - bare.median_s
    attrs_cost = attrs_row.median_s - bare.median_s
    assessed = not ctx.settings.quick
    figure.goals.append(
        Goal(
            "`import durations` in under 30 ms",
            cost < 0.030 if assessed else None,
            f"{fmt_seconds(cost)} over a bare interpreter",
        )
    )
    figure.goals.append(
        Goal(
            "the whole core (`from durations import plan, Time`) in under 30 ms",
            core_cost < 0.030 if assessed else None,
            f"{fmt_seconds(core_cost)}; attrs alone, the one dependency, costs "
            f"{fmt_seconds(attrs_cost)} and the core's attrs classes most of the rest",
        )
    )
    figure.goals.append(
        Goal(
            "import durations loads no framework, hypothesis or numpy module",
            not bad,
            f"{len(modules)} modules in sys.modules; forbidden: {', '.join(bad) or 'none'} "
            f"(checked: {', '.join(FORBIDDEN)})",
        )
    )
    return figure
