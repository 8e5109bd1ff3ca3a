"""What the ``durations`` command imports: each command imports what it uses, when it uses it, so
``--help`` starts as fast as argparse and ``plan`` does not load the trainer profiles. A
relation, not a timing (the timings are in docs/performance.md): a module imported for nothing
breaks it on any machine."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from durations import cli
from durations.compare import TRAINERS
from durations.fit import DataPolicy, ResumeMode

ROOT = Path(__file__).resolve().parent.parent

#: Runs the command in a fresh interpreter and writes, at exit, every module it imported.
PROBE = """
import atexit, sys

def report():
    sys.__stderr__.write("\\nmodules: " + " ".join(sorted(sys.modules)) + "\\n")

atexit.register(report)
from durations.cli import main
sys.exit(main(sys.argv[1:]))
"""

#: Never imported by the command line: the test helpers (and hypothesis), the integrations
#: and the frameworks, and matplotlib unless --plot asks for it.
NEVER = ("durations.testing", "durations._hypothesis", "hypothesis", "durations.integrations",
         "torch", "matplotlib", "durations._plot")  # fmt: skip

#: What `compare` alone uses: the comparison and the trainer profiles.
COMPARE = ("durations.compare", "durations.trainers")

#: What `conformance` and `audit` alone use.
CONFORMANCE = ("durations.conformance", "durations._conformance_run", "durations.adapter")
AUDIT = ("durations.audit", "durations._render.audit")


def imported(*args: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``durations *args``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("modules: ")]
    assert lines, done.stderr
    return set(lines[-1].removeprefix("modules: ").split())


def under(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    """The modules of ``modules`` that are one of ``packages`` or inside one."""
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),  # the command's own help
        ("plan", "--help"),  # a command's help
        ("compare", "--help"),  # even the command that loads the profiles when it runs
        ("convert", "2ep"),  # an argument error (--batch-size missing)
    ],
)
def test_help_imports_no_core(args: tuple[str, ...]) -> None:
    """Help and argument errors import argparse and the errors module, not attrs or the core."""
    modules = imported(*args)
    assert under(modules, ("durations",)) == {"durations", "durations.cli", "durations.errors"}
    assert not under(modules, ("attr", "attrs", "fractions", "tomllib", "shutil"))


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "examples/two-phase.toml"),  # a plan with a schedule and events
        ("plan", "examples/two-phase.toml", "--json"),  # as JSON
        ("plan", "examples/two-phase.toml", "--resume-from", "13ba"),  # a resume
        ("convert", "2.1ep", "--samples", "1000000", "--batch-size", "512"),
        ("inspect", "examples/checkpoints/mid-epoch.json"),
    ],
)
def test_commands_import_no_profiles(args: tuple[str, ...]) -> None:
    """Every command but compare runs without the comparison and the trainer profiles, and
    without the conformance runner and the audit."""
    modules = imported(*args)
    assert "durations.cli" in modules
    assert not under(modules, COMPARE + CONFORMANCE + AUDIT + NEVER)


def test_audit_and_conformance_import_only_their_own() -> None:
    """audit loads the audit and not the runner; conformance (on a missing suite: a usage
    error) loads no audit; neither loads the test helpers or a framework."""
    audit = imported("audit", "examples/two-phase.toml", "no-such-log.jsonl")
    assert "durations.audit" in audit
    assert not under(audit, CONFORMANCE + COMPARE + NEVER)
    runner = imported("conformance", "--suite", "no-such-suite")
    assert not under(runner, AUDIT + NEVER)


def test_compare_imports_the_profiles() -> None:
    """compare loads the comparison and the profile it runs (the probe sees lazy imports), and
    still nothing of the test helpers."""
    modules = imported("compare", "examples/two-phase.toml", "--trainer", "keras")
    assert {"durations.compare", "durations.trainers.keras"} <= modules
    assert not under(modules, NEVER)


@pytest.mark.parametrize("columns", [None, "120", "37", "0", "-5", "wide"])
def test_help_is_as_wide_as_argparse_makes_it(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The help's width, found without shutil, is shutil's: $COLUMNS when it is a width > 0,
    else the terminal's, else 80."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert shutil.get_terminal_size().columns == cli.terminal_columns()


def test_choices_are_the_values() -> None:
    """The choices the parser offers, written out in the command, are the values it parses."""
    assert tuple(m.value for m in ResumeMode) == cli.RESUME_MODES
    assert tuple(d.value for d in DataPolicy) == cli.DATA_POLICIES
    assert cli.TRAINERS == TRAINERS
