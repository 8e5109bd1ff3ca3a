"""Mutation testing of the core: mutmut mutates ``durations/time.py``, ``progress.py``,
``planner.py`` and ``checkpoint.py`` one change at a time and runs the fast test selection of
``[tool.mutmut]`` in ``pyproject.toml`` on each mutant, with the ``mutation`` hypothesis
profile of ``tests/conftest.py`` (few examples, the same ones for every mutant).

Run it with ``python -m tests.mutation`` (``pip install -e '.[test,mutation]'``); ``--write-docs``
rewrites the figures block of ``docs/reliability.md``. A mutant the tests do not kill must be
listed in ``tests/mutation/survivors.md`` with the reason (equivalent, or a known gap); the
command exits 1 when a survivor is not listed there, or a listed one was killed. mutmut works in
``mutants/`` (git-ignored) and reuses the results of the functions that did not change since
its last run; ``--fresh`` starts again from nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent.parent
DOC = ROOT / "docs" / "reliability.md"
SURVIVORS = Path(__file__).resolve().parent / "survivors.md"

#: The modules mutated, in the order the figures show them.
CORE = ("time", "progress", "planner", "checkpoint")

BEGIN = "<!-- figures: begin (python -m tests.mutation --write-docs) -->"
END = "<!-- figures: end (mutation) -->"

#: A line of ``mutmut results --all true``: ``    durations.time.x_f__mutmut_3: killed``.
RESULT = re.compile(r"\s*(?P<name>durations\.(?P<module>\w+)\.\S+__mutmut_[0-9]+): (?P<status>.+)")
#: A row of the survivors table: ``| `durations.time.x_f__mutmut_3` | equivalent | why |``.
EXPLAINED = re.compile(
    r"\| `(?P<name>durations\.\w+\.\S+__mutmut_[0-9]+)` "
    r"\| (?P<kind>equivalent|gap) \| (?P<why>.*\S) \|"
)


@attrs.frozen
class Module:
    """The outcome of the mutants of one module."""

    name: str
    mutants: int = 0
    killed: int = 0
    timeout: int = 0
    survived: int = 0
    equivalent: int = 0
    unchecked: int = 0

    @property
    def score(self) -> float:
        """Killed (or timed out) over the mutants checked, less those explained as equivalent."""
        relevant = self.mutants - self.unchecked - self.equivalent
        return 100.0 * (self.killed + self.timeout) / relevant if relevant else 100.0


#: What mutmut says of a mutant, by how it counts here; any other status (``no tests``,
#: ``suspicious``, ``segfault``, ...) is a mutant checked and not killed.
KILLED, TIMEOUT, SURVIVED, UNCHECKED = "killed", "timeout", "survived", "not checked"


def parse_results(text: str) -> dict[str, str]:
    """The status of each mutant, from the output of ``mutmut results --all true``."""
    found = {}
    for line in text.splitlines():
        match = RESULT.fullmatch(line)
        if match is not None:
            found[match["name"]] = match["status"]
    return found


def parse_survivors(text: str) -> dict[str, tuple[str, str]]:
    """The kind (``equivalent`` or ``gap``) and the reason of each survivor of
    ``survivors.md``."""
    return {match["name"]: (match["kind"], match["why"]) for match in EXPLAINED.finditer(text)}


def tally(statuses: Mapping[str, str], equivalent: Iterable[str]) -> list[Module]:
    """One :class:`Module` per core module; ``equivalent`` names the survivors explained as
    equivalent."""
    explained = set(equivalent)
    counts: dict[str, Counter[str]] = {module: Counter() for module in CORE}
    for name, status in statuses.items():
        module = name.split(".")[1]
        if module not in counts:
            continue
        counts[module]["mutants"] += 1
        counts[module][status] += 1
        if status == SURVIVED and name in explained:
            counts[module]["equivalent"] += 1
    return [
        Module(
            name=module,
            mutants=c["mutants"],
            killed=c[KILLED],
            timeout=c[TIMEOUT],
            survived=c["mutants"] - c[KILLED] - c[TIMEOUT] - c[UNCHECKED],
            equivalent=c["equivalent"],
            unchecked=c[UNCHECKED],
        )
        for module, c in counts.items()
    ]


FIELDS = ("mutants", "killed", "timeout", "survived", "equivalent", "unchecked")


def _pinned() -> str:
    """The mutmut version the ``mutation`` extra of ``pyproject.toml`` pins."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (requirement,) = project["project"]["optional-dependencies"]["mutation"]
    return str(requirement.partition("==")[2])


def _percent(score: float) -> str:
    """A score to one decimal, rounded down: 100.0% only when nothing counts against it."""
    return f"{math.floor(score * 10) / 10:.1f}%"


def figures(modules: Sequence[Module], seconds: float | None, children: int = 1) -> str:
    """The lines the doc shows: one row per module, the total, and how it was measured."""
    total = Module("core", **{field: sum(getattr(m, field) for m in modules) for field in FIELDS})
    rows = [
        "| module | mutants | killed | timed out | not killed | of which equivalent"
        " | not checked | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in [*modules, total]:
        label = "core" if m is total else f"`durations/{m.name}.py`"
        counts = " | ".join(f"{getattr(m, field):,}" for field in FIELDS)
        rows.append(f"| {label} | {counts} | {_percent(m.score)} |")
    rows += [
        "",
        f"mutmut {_pinned()}, {children} worker process{'es' if children > 1 else ''};"
        " score: killed or timed out,"
        " over the mutants checked less those explained as equivalent in"
        " `tests/mutation/survivors.md`; "
        + (
            "results read back from the last runs."
            if seconds is None
            else f"time: {seconds / 60:.0f} min (on this project's 2-core machine, while other"
            " jobs ran)."
        )
        + (
            f" {total.unchecked:,} mutants were not reached by the runs so far: the score is that"
            " of the mutants checked, and the command goes on from where it stopped."
            if total.unchecked
            else ""
        ),
    ]
    return "\n".join(rows)


FIGURES = re.compile(
    r"\| module \| mutants \|.*\|\n"
    r"\|---\|.*\|\n"
    rf"(?:\| `durations/\w+\.py` \|(?: [0-9,]+ \|){{6}} [0-9.]+% \|\n){{{len(CORE)}}}"
    r"\| core \|(?: [0-9,]+ \|){6} [0-9.]+% \|\n"
    r"\n"
    r"mutmut [0-9.]+, .*"
)


def write_docs(text: str, doc: Path = DOC) -> None:
    """Replace the marked figures block in ``doc``."""
    content = doc.read_text(encoding="utf-8")
    head, found, rest = content.partition(BEGIN)
    if not found or END not in rest:
        raise SystemExit(f"{doc}: no block between {BEGIN!r} and {END!r}")
    rest = rest.partition(END)[2]
    doc.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest}", encoding="utf-8")


def _mutmut() -> str:
    found = shutil.which("mutmut", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("mutmut is not installed: pip install -e '.[test,mutation]'")
    return found


def _run(mutmut: str, env: Mapping[str, str], children: int, names: Sequence[str] = ()) -> None:
    command = [mutmut, "run", "--max-children", str(children), *names]
    subprocess.run(command, cwd=ROOT, env=env, check=True)


def _results(mutmut: str, env: Mapping[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [mutmut, "results", "--all", "true"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return parse_results(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__)
    parser.add_argument("--max-children", type=int, default=1, help="mutmut worker processes")
    parser.add_argument("--fresh", action="store_true", help="forget mutmut's earlier results")
    parser.add_argument(
        "--report-only", action="store_true", help="read mutmut's last results, run nothing"
    )
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite the figures block of the doc"
    )
    args = parser.parse_args(argv)
    mutmut = _mutmut()
    if args.fresh:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation"}
    began = time.perf_counter()
    if not args.report_only:
        _run(mutmut, env, args.max_children)
    statuses = _results(mutmut, env)
    # Results are kept for functions that did not change, but tests may have been added since:
    # the mutants that were not killed are tried again.
    again = sorted(n for n, s in statuses.items() if s not in (KILLED, TIMEOUT, UNCHECKED))
    if again and not args.report_only:
        _run(mutmut, env, args.max_children, again)
        statuses = _results(mutmut, env)
    seconds = None if args.report_only else time.perf_counter() - began
    explained = parse_survivors(SURVIVORS.read_text(encoding="utf-8"))
    equivalent = [name for name, (kind, _) in explained.items() if kind == "equivalent"]
    text = figures(tally(statuses, equivalent), seconds, args.max_children)
    print(text)
    unexplained = sorted(n for n, s in statuses.items() if s == SURVIVED and n not in explained)
    stale = sorted(n for n in explained if statuses.get(n, UNCHECKED) not in (SURVIVED, UNCHECKED))
    for name in unexplained:
        print(f"survived, not explained in {SURVIVORS.name}: {name}", file=sys.stderr)
    for name in stale:
        print(f"explained in {SURVIVORS.name} but not a survivor: {name}", file=sys.stderr)
    if args.write_docs:
        write_docs(text)
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main())
