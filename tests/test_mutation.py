"""The mutation run's figures in ``docs/reliability.md`` and its list of explained survivors
(``tests/mutation/``): well-formed, and written by the command. The run itself is not part of
the test suite (it takes tens of minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import mutation
from .mutation import FIGURES, Module, figures, parse_results, parse_survivors, tally, write_docs


def test_doc_shows_the_figures_the_command_writes() -> None:
    """docs/reliability.md has one mutation block, in the format ``--write-docs`` writes."""
    text = mutation.DOC.read_text(encoding="utf-8")
    assert text.count(mutation.BEGIN) == text.count(mutation.END) == 1
    block = text.partition(mutation.BEGIN)[2].partition(mutation.END)[0].strip()
    assert FIGURES.fullmatch(block) is not None, block


def test_every_explained_survivor_is_in_the_core_and_says_why() -> None:
    """Each row of survivors.md names a mutant of a core module, once, with a reason."""
    text = mutation.SURVIVORS.read_text(encoding="utf-8")
    explained = parse_survivors(text)
    rows = [line for line in text.splitlines() if line.startswith("| `durations.")]
    assert len(rows) == len(explained)
    for name, (kind, why) in explained.items():
        assert name.split(".")[1] in mutation.CORE, name
        assert kind in ("equivalent", "gap"), name
        assert len(why.split()) >= 4, name


def test_tally_counts_and_scores() -> None:
    """Killed and timed-out mutants count as detected; explained survivors leave the score's
    denominator, unexplained ones stay in it; a mutant not checked counts in neither."""
    statuses = parse_results(
        "    durations.time.x_f__mutmut_1: killed\n"
        "    durations.time.x_f__mutmut_2: timeout\n"
        "    durations.time.x_f__mutmut_3: survived\n"
        "    durations.time.x_f__mutmut_4: survived\n"
        "    durations.time.x_f__mutmut_5: not checked\n"
        "    durations.progress.x_g__mutmut_1: no tests\n"
        "    durations.cli.x_h__mutmut_1: survived\n"
    )
    modules = {m.name: m for m in tally(statuses, ["durations.time.x_f__mutmut_3"])}
    assert modules["time"] == Module("time", 5, 1, 1, 2, 1, 1)
    assert modules["time"].score == 100 * 2 / 3
    assert modules["progress"].score == 0.0  # a mutant no test reaches is not killed
    assert modules["checkpoint"].score == 100.0  # nothing to kill
    assert FIGURES.fullmatch(figures(list(modules.values()), 61.0)) is not None


def test_write_docs_replaces_only_its_block(tmp_path: Path) -> None:
    """--write-docs rewrites the marked block and leaves the rest as it was."""
    doc = tmp_path / "reliability.md"
    doc.write_text(f"before\n{mutation.BEGIN}\nold\n{mutation.END}\nafter\n", encoding="utf-8")
    write_docs("new", doc)
    expected = f"before\n{mutation.BEGIN}\nnew\n{mutation.END}\nafter\n"
    assert doc.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize(
    ("killed", "relevant", "shown"),
    [
        (2338, 2339, "99.9%"),  # one survivor not equivalent: never shown as 100.0%
        (1, 1, "100.0%"),  # every relevant mutant killed
        (2, 3, "66.6%"),  # rounded down, not to 66.7%
        (0, 1, "0.0%"),
    ],
)
def test_a_score_is_rounded_down(killed: int, relevant: int, shown: str) -> None:
    """The figures round a score down to one decimal, so 100.0% says no mutant counts against
    it."""
    module = Module("time", mutants=relevant, killed=killed, survived=relevant - killed)
    row = figures([module], None).splitlines()[2]
    assert row.endswith(f" | {shown} |")
