"""Determinism: every rank of a job must compute the same plan. The same scenario gives
byte-identical ``durations plan --json`` output and checkpoint JSON in separate processes,
whatever their string hashing (``PYTHONHASHSEED``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*.toml"))

#: What-if runs beside each example's own plan: (example, extra arguments).
VARIANTS = [
    ("elastic-ddp.toml", ["--resume-from", "3ba", "--world-size", "3"]),
    ("elastic-ddp.toml", ["--resume-from", "3ba", "--world-size", "1"]),
    ("mid-epoch-exact.toml", ["--data", "replay_epoch"]),
    ("two-phase.toml", ["--resume-from", "3000ba"]),
]


def _plan_json(args: list[str]) -> str:
    """What ``durations plan ... --json`` prints, with its exit code."""
    from durations.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["plan", *args, "--json"])
    return f"exit {code}\n{out.getvalue()}"


def _checkpoints(path: Path) -> list[str]:
    """The checkpoint JSON the example's plan from scratch writes at a few steps."""
    from durations import plan
    from durations.readers import read_text
    from durations.scenario import Scenario

    scenario = Scenario.from_toml(read_text(path), source=str(path))
    full = plan(scenario.config, scenario.calls)
    total = full.total_steps
    steps = sorted({0, 1, total // 3, total // 2, total - 1, total} & set(range(total + 1)))
    return [json.dumps(full.checkpoint_at(k).to_dict(), sort_keys=True) for k in steps]


def report() -> str:
    """Everything compared across processes, as one text (run in the child processes)."""
    parts = []
    for path in EXAMPLES:
        relative = str(path.relative_to(ROOT))
        parts.append(f"== {relative}\n{_plan_json([relative])}")
        parts += [f"-- checkpoint\n{text}" for text in _checkpoints(path)]
    for name, extra in VARIANTS:
        parts.append(f"== {name} {' '.join(extra)}\n{_plan_json([f'examples/{name}', *extra])}")
    return "\n".join(parts) + "\n"


CHILD = "import sys, tests.test_determinism as t; sys.stdout.write(t.report())"


def _in_process(seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return result.stdout


def test_examples_are_shipped() -> None:
    """The examples compared include the data-parallel one."""
    assert "elastic-ddp.toml" in [path.name for path in EXAMPLES]
    assert {name for name, _ in VARIANTS} <= {path.name for path in EXAMPLES}


@pytest.mark.parametrize("seeds", [("0", "1", "random")])
def test_same_bytes_under_every_hash_seed(seeds: tuple[str, ...]) -> None:
    """Plan JSON (from scratch, resumed, elastic, another data policy) and checkpoint JSON are
    the same bytes in processes with different string hashing."""
    outputs = [_in_process(seed) for seed in seeds]
    assert outputs[0].count(b"\n== ") + 1 == len(EXAMPLES) + len(VARIANTS)
    assert b"\n-- checkpoint\n{" in outputs[0]
    for seed, output in zip(seeds[1:], outputs[1:], strict=True):
        assert output == outputs[0], f"PYTHONHASHSEED={seed} differs from PYTHONHASHSEED=0"
