"""``durations plan FILE --plot OUT``: the picture renders, and says how to get matplotlib.

The rendering tests need the optional extra (``pip install 'training-durations[plot]'``) and
are skipped without it; .ci/run installs it and runs this file on its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from durations import END, FitCall, Loader, RunConfig, Schedule, plan
from durations._plot import CURVE_SAMPLES, curve_steps
from durations.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "two-phase.toml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_png_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--plot out.png writes a PNG and still prints the plan, then where the picture is."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "plan.png"
    assert main(["plan", EXAMPLE, "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert out.stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "schedule:" in printed
    assert printed.endswith(f"plot: {out}\n")


def test_svg_renders_with_the_names(tmp_path: Path) -> None:
    """--plot out.svg writes an SVG whose text names the calls, the events and the pieces;
    --json with --plot prints only the JSON."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "plan.svg"
    assert main(["plan", EXAMPLE, "--resume-from", "3000ba", "--json", "--plot", str(out)]) == 0
    svg = out.read_text()
    assert svg.lstrip().startswith(("<?xml", "<svg"))
    for name in ("pretrain", "anneal", "checkpoint", "eval", "log", "cosine", "resume"):
        assert f">{name}<" in svg or f"> {name}<" in svg, name


def test_a_huge_plan_draws_quickly(tmp_path: Path) -> None:
    """A plan of 10^12 steps with events every step draws a bounded number of points, ticks
    and epoch boundaries."""
    pytest.importorskip("matplotlib")
    scenario = tmp_path / "huge.toml"
    scenario.write_text(
        '[run]\nmax_duration = "1000000000000ba"\n[loaders.a]\nsamples = 1000\nbatch_size = 1\n'
        '[[fit]]\nloader = "a"\n[schedule]\nwarmup = "0.01dur"\n[[schedule.pieces]]\n'
        'kind = "cosine"\nto = 0\nuntil = "end"\n[events.log]\nevery = "1ba"\n'
    )
    out = tmp_path / "huge.png"
    assert main(["plan", str(scenario), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_curve_is_sampled_at_a_bounded_number_of_steps() -> None:
    """The curve of a 10^12-step plan is sampled at about CURVE_SAMPLES steps, every piece
    boundary and its step before included (so a jump is drawn where it is)."""
    loader = Loader(samples=1000, batch_size=1)
    p = plan(RunConfig(max_duration="1000000000000ba"), [FitCall(loader=loader)])
    curve = Schedule.warmup("7ba").then_cosine(to=0, until=END).resolve(p)
    steps = curve_steps(curve)
    assert len(steps) <= CURVE_SAMPLES + 10
    assert {0, 6, 7, 10**12} <= set(steps)
    assert steps == sorted(set(steps))


def test_without_matplotlib_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without matplotlib, --plot is bad input (exit 2) naming the extra to install."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    assert main(["plan", EXAMPLE, "--plot", str(tmp_path / "plan.png")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "durations: error: --plot needs matplotlib, which is not installed: "
        "pip install 'training-durations[plot]'\n"
    )


def test_only_png_or_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another suffix is refused before anything is drawn."""
    assert main(["plan", EXAMPLE, "--plot", str(tmp_path / "plan.pdf")]) == 2
    assert "expected a file name ending in .png or .svg" in capsys.readouterr().err
    assert not (tmp_path / "plan.pdf").exists()
