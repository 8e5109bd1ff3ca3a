"""The bounded-exhaustive check (``tests/exhaustive.py``) on its CI scope, and the figures it
writes into ``docs/reliability.md``. Counts are deterministic and compared; times are not."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from durations import Checkpoint, FitCall, Loader, Plan, ResumeMode, RunConfig, plan

from . import exhaustive
from .exhaustive import FIGURES, Tally, check, figures, run, write_docs


@pytest.fixture(scope="module")
def ci() -> Tally:
    """One run of the CI scope, shared by the tests of this module."""
    return run("ci")


def _block(scope: str, text: str) -> str:
    begin = exhaustive.BEGIN.format(scope=scope)
    end = exhaustive.END.format(scope=scope)
    return text.partition(begin)[2].partition(end)[0].strip()


def test_ci_scope_holds(ci: Tally) -> None:
    """Every script of the CI scope, at every crash point, keeps every relation (a broken one
    fails ``run`` with the script); and the scope is what it says: nothing skipped."""
    assert ci.scripts == 6_562
    assert ci.crash_points > ci.scripts
    assert ci.refused == 0


def test_doc_figures_are_current(ci: Tally) -> None:
    """docs/reliability.md shows the counts this run measured (its time is not compared)."""
    block = _block("ci", exhaustive.DOC.read_text(encoding="utf-8"))
    shown = FIGURES.fullmatch(block)
    assert shown is not None, block
    measured = FIGURES.fullmatch(figures("ci", ci))
    assert measured is not None
    counts = ("scope", "scripts", "crash_points", "plans", "with_errors", "refused", "impossible")
    fix = "rewrite it: python -m tests.exhaustive --scope ci --write-docs"
    assert [shown[name] for name in counts] == [measured[name] for name in counts], fix


def test_doc_shows_the_large_scope() -> None:
    """The large scope's block is in the format the command writes."""
    block = _block("large", exhaustive.DOC.read_text(encoding="utf-8"))
    assert FIGURES.fullmatch(block) is not None, block


def test_write_docs_replaces_only_its_block(tmp_path: Path) -> None:
    """--write-docs rewrites the marked block of its scope and leaves the rest as it was."""
    doc = tmp_path / "reliability.md"
    begin, end = exhaustive.BEGIN.format(scope="ci"), exhaustive.END.format(scope="ci")
    doc.write_text(f"before\n{begin}\nold\n{end}\nafter\n", encoding="utf-8")
    tally = Tally(scripts=3, crash_points=7, plans=9, seconds=0.25)
    write_docs("ci", tally, doc)
    expected = f"before\n{begin}\n{figures('ci', tally)}\n{end}\nafter\n"
    assert doc.read_text(encoding="utf-8") == expected


def test_a_planner_that_adds_durations_again_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The relations are not vacuous: a planner that ignores the ledger on resume (so a relative
    duration is added again, as Composer does) breaks rule 16 on a one-call script."""

    def forgetful(
        config: RunConfig, calls: tuple[FitCall, ...], checkpoint: Checkpoint | None = None
    ) -> Plan:
        if checkpoint is None:
            return plan(config, calls)
        return plan(attrs.evolve(config, resume=ResumeMode.EXTEND), calls, checkpoint)

    monkeypatch.setattr(exhaustive, "plan", forgetful)
    loader = Loader(samples=3, batch_size=2, name="a")
    with pytest.raises(AssertionError):
        check(RunConfig(), (FitCall(loader=loader, duration="2ba"),), Tally())
