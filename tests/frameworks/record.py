"""Run the whole framework grid and write ``tests/frameworks/observed.json``.

Usage, from the repository root, with a Python that has the frameworks installed::

    .venv-frameworks/bin/python -m tests.frameworks.record            # everything
    .venv-frameworks/bin/python tests/frameworks/record.py --framework keras --only crash

Each framework runs in its own child process (so Keras' backend and Lightning's global state do
not meet); ``--jobs 2`` runs two of them at once. Prints a short summary, one line per call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "observed.json"


def _child(framework: str, only: list[str], out: Path) -> None:
    """Run this framework's scenarios in this process and write them to ``out``."""
    from tests.frameworks import runners, scenarios

    start = time.perf_counter()
    observed: dict[str, Any] = {}
    for scenario in scenarios.SCENARIOS:
        if scenario["framework"] != framework:
            continue
        if only and not any(text in scenario["id"] for text in only):
            continue
        observed[scenario["id"]] = runners.run_scenario(scenario)
    result = {
        "versions": runners.versions(framework),
        "seconds": round(time.perf_counter() - start, 2),
        "observations": observed,
    }
    out.write_text(json.dumps(result))


def _spawn(framework: str, only: list[str], out: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.frameworks.record", "--child", framework]
    command += ["--out", str(out)]
    for text in only:
        command += ["--only", text]
    env = {**os.environ, "KERAS_BACKEND": "torch", "PYTHONPATH": str(REPO)}
    return subprocess.Popen(command, cwd=REPO, env=env)


def dumps(document: Any, indent: int = 0) -> str:
    """Indented JSON in which every list or dict of plain values stays on one line.

    >>> print(dumps({"ids": [1, 2], "at": [{"epoch": 0, "batch": 1}], "none": None}))
    {
     "ids": [1, 2],
     "at": [
      {"epoch": 0, "batch": 1}
     ],
     "none": null
    }
    """
    flat = json.dumps(document, ensure_ascii=False)
    children = document.values() if isinstance(document, dict) else document
    if not isinstance(document, dict | list) or not any(
        isinstance(child, dict | list) for child in children
    ):
        return flat
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(document, dict):
        items = [
            f"{inner}{json.dumps(key)}: {dumps(value, indent + 1)}"
            for key, value in document.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{dumps(value, indent + 1)}" for value in document]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


def describe_call(call: dict[str, Any]) -> str:
    """One line for one observed call: steps, the ids per step, final counters, errors."""
    from tests.frameworks._common import id_ranges

    batches: list[list[int]] = call.get("batches", [])
    parts = [f"steps={call.get('steps')}"]
    if batches:
        shown = [id_ranges(ids) for ids in batches]
        if len(shown) > 8:
            shown = [*shown[:4], "...", *shown[-3:]]
        parts.append("ids=[" + " | ".join(shown) + "]")
    parts.append("after=" + json.dumps(call.get("counters_after"), separators=(",", ":")))
    if call.get("crashed"):
        parts.append("CRASHED(simulated)")
    if call.get("error"):
        parts.append(f"ERROR {call['error']['type']}: {call['error']['message'][:120]}")
    if call.get("warnings"):
        parts.append(f"warnings={len(call['warnings'])}")
    return " ".join(parts)


def steps_text(batches: list[list[int]]) -> str:
    """Steps grouped into runs of contiguous, equal-sized batches.

    >>> steps_text([[0, 1], [2, 3], [0, 1, 2], [5]])
    '0-3 (2 steps of 2), 0-2 (1 step of 3), 5 (1 step of 1)'
    """
    from tests.frameworks._common import id_ranges

    runs: list[tuple[int, int, int, int]] = []  # first id, last id, steps, batch size
    parts: list[str] = []
    for ids in batches:
        contiguous = bool(ids) and ids == list(range(ids[0], ids[0] + len(ids)))
        if not contiguous:
            parts.extend(_runs_text(runs))
            runs = []
            parts.append(f"[{id_ranges(ids)}]")
            continue
        if runs and runs[-1][1] + 1 == ids[0] and runs[-1][3] == len(ids):
            first, _, steps, size = runs[-1]
            runs[-1] = (first, ids[-1], steps + 1, size)
        else:
            runs.append((ids[0], ids[-1], 1, len(ids)))
    parts.extend(_runs_text(runs))
    return ", ".join(parts)


def _runs_text(runs: list[tuple[int, int, int, int]]) -> list[str]:
    out = []
    for first, last, steps, size in runs:
        span = str(first) if first == last else f"{first}-{last}"
        out.append(f"{span} ({steps} step{'s' if steps != 1 else ''} of {size})")
    return out


def code(text: str) -> str:
    """A Markdown code span that survives backticks inside ``text``.

    >>> code("`a` b")
    '`` `a` b ``'
    """
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    if longest == 0:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def markdown(observed: dict[str, Any]) -> str:
    """The per-scenario section of FINDINGS.md, generated from an ``observed.json`` document."""
    lines: list[str] = []
    for scenario_id, observation in observed["observations"].items():
        lines.append(f"#### {code(scenario_id)}: {observation['about']}")
        lines.append("")
        for index, call in enumerate(observation["calls"]):
            steps = call["steps"]
            spec = json.dumps(call["call"], separators=(", ", ": "))
            lines.append(
                f"- call {index} {code(spec)}: **{steps} step{'' if steps == 1 else 's'}**"
            )
            if call["batches"]:
                text = steps_text(call["batches"])
                if len(text) > 400:
                    text = text[:400] + " ... (see observed.json)"
                lines.append(f"  - ids: {text}")
                first, last = (
                    code(json.dumps(p)) for p in (call["positions"][0], call["positions"][-1])
                )
                lines.append(f"  - positions: first {first}, last {last}")
            for key in ("micro_batches_per_step", "pending_micro_batches"):
                if key in call:
                    lines.append(f"  - {key}: {code(json.dumps(call[key]))}")
            lines.append(f"  - after: {code(json.dumps(call['counters_after']))}")
            for key in (
                "checkpoint_loaded",
                "checkpoint_saved",
                "checkpoints_saved",
                "backup_after",
            ):
                if call.get(key):
                    lines.append(f"  - {key}: {code(json.dumps(call[key]))}")
            if call["crashed"]:
                lines.append("  - crashed (killed as the next step was about to start)")
            if call["error"]:
                error = call["error"]
                lines.append(f"  - **error** {error['type']}: {code(error['message'])}")
            lines.extend(f"  - warning: {code(warning)}" for warning in call["warnings"])
            lines.extend(
                f"  - log: {code(' '.join(log.split()))}"
                for log in call["logs"]
                if not log.startswith(_ROUTINE_LOGS)
            )
        lines.append("")
    return "\n".join(lines)


# HF prints these on every call; the counters already say the same.
_ROUTINE_LOGS = ("Num examples", "Num Epochs", "Num update steps", "Gradient Accumulation steps")


def summary(observed: dict[str, Any]) -> str:
    """Short text summary of an ``observed.json`` document."""
    lines = []
    for framework, meta in observed["meta"]["frameworks"].items():
        lines.append(f"{framework}: {meta['versions']} {meta['seconds']}s")
    for scenario_id, observation in observed["observations"].items():
        lines.append(f"{scenario_id}  ({observation['about']})")
        for index, call in enumerate(observation["calls"]):
            lines.append(f"    call {index}: {describe_call(call)}")
    lines.append(
        f"total {observed['meta']['seconds']}s for {len(observed['observations'])} scenarios"
    )
    return "\n".join(lines)


def _merged(out: Path, recorded: dict[str, Any]) -> dict[str, Any]:
    """Write ``recorded``'s scenarios into ``out`` in place, keeping every other scenario and
    framework entry (under a lock, so that two recordings at once do not lose each other's)."""
    import fcntl

    with open(out.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        document = json.loads(out.read_text()) if out.exists() else recorded
        document["observations"].update(recorded["observations"])
        document["meta"]["frameworks"].update(recorded["meta"]["frameworks"])
        document["meta"]["recorded"] = recorded["meta"]["recorded"]
        out.write_text(dumps(document) + "\n")
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--framework", action="append", choices=["lightning", "transformers", "keras"]
    )
    parser.add_argument("--only", action="append", default=[], help="substring of scenario ids")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--merge",
        action="store_true",
        help="replace only the recorded scenarios in --out, keeping the others",
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="write the per-scenario report of --out here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    if args.child:
        _child(args.child, args.only, args.out)
        return 0
    if args.markdown:
        args.markdown.write_text(markdown(json.loads(args.out.read_text())))
        return 0

    frameworks = args.framework or ["lightning", "transformers", "keras"]
    start = time.perf_counter()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="durations-record-") as tmp:
        pending = list(frameworks)
        running: list[tuple[str, Path, subprocess.Popen[bytes]]] = []
        while pending or running:
            while pending and len(running) < args.jobs:
                framework = pending.pop(0)
                part = Path(tmp) / f"{framework}.json"
                running.append((framework, part, _spawn(framework, args.only, part)))
            framework, part, process = running.pop(0)
            if process.wait() != 0 or not part.exists():
                print(f"{framework}: child process failed with code {process.returncode}")
                results[framework] = None
            else:
                results[framework] = json.loads(part.read_text())
    observed: dict[str, Any] = {
        "meta": {
            "recorded": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "jobs": args.jobs,
            "seconds": round(time.perf_counter() - start, 2),
            "frameworks": {
                name: {"versions": r["versions"], "seconds": r["seconds"]}
                for name, r in results.items()
                if r is not None
            },
        },
        "observations": {
            sid: obs
            for r in results.values()
            if r is not None
            for sid, obs in r["observations"].items()
        },
    }
    if args.merge:
        observed = _merged(args.out, observed)
    else:
        args.out.write_text(dumps(observed) + "\n")
    print(summary(observed))
    print(f"wrote {args.out}")
    return 0 if all(r is not None for r in results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
