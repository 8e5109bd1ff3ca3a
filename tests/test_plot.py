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


class _Anything:
    """Takes any call, attribute or item, and does nothing."""

    def __call__(self, *args: object, **kwargs: object) -> _Anything:
        return self

    def __getattr__(self, name: str) -> _Anything:
        return self

    def __getitem__(self, key: object) -> _Anything:
        return self


class _Recorder(_Anything):
    """Stands in for a matplotlib axis: records the lines and texts drawn on it."""

    def __init__(self) -> None:
        self.lines: list[tuple[list[int], list[float]]] = []
        self.texts: list[str] = []

    def plot(self, x: list[int], y: list[float], **style: object) -> None:
        self.lines.append((x, y))

    def text(self, x: float, y: float, text: str, **style: object) -> None:
        self.texts.append(text)


def test_a_stretched_extension_is_drawn_from_where_the_script_starts() -> None:
    """Rule S5: a stretched curve is placed from the run clock's origin, but the steps trained
    before the extension kept the rates they had; the plot draws the curve from the
    extension's first step (25) on, and says why the part before it is empty, instead of the
    stretched curve over the past. A plan from scratch is drawn from its start."""
    from durations import ResumeMode
    from durations._plot import _curve
    from durations._timeline import Timeline

    a = Loader(samples=100, batch_size=4, name="a")
    shape = Schedule.warmup("5ba").then_cosine(to=0, until=END)
    done = plan(RunConfig(), [FitCall(loader=a, until="25ba")]).checkpoint_at(25)
    more = plan(RunConfig(resume=ResumeMode.EXTEND), [FitCall(loader=a, until="50ba")], done)
    curve = shape.resolve(more, on_extend="stretch")
    assert (curve.start, Timeline.of(more).start) == (0, 25)  # placed from the origin
    axis = _Recorder()
    _curve(axis, curve, since=Timeline.of(more).start)
    ((steps, values),) = axis.lines
    assert (steps[0], values[0]) == (25, float(curve.factor(25)))
    assert "trained before this script:\nits rates are not in this plan" in axis.texts
    assert "warmup" not in axis.texts  # the warmup lies wholly in the run it extends
    fresh = plan(RunConfig(), [FitCall(loader=a, until="50ba")])
    axis = _Recorder()
    _curve(axis, shape.resolve(fresh), since=Timeline.of(fresh).start)
    assert axis.lines[0][0][0] == 0
    assert "warmup" in axis.texts


def test_the_plot_of_an_extension_leaves_the_past_undrawn(tmp_path: Path) -> None:
    """--plot of a stretched extension (from the two-phase example's end) says the steps before
    it are not in this plan, as the picture leaves them."""
    pytest.importorskip("matplotlib")
    scenario = tmp_path / "more.toml"
    scenario.write_text(
        '[run]\nmax_duration = "2ep"\n[resume]\nmode = "extend"\n'
        "[loaders.c]\nsamples = 50\nbatch_size = 10\n"
        '[[fit]]\nloader = "c"\nduration = "1ep"\nname = "more"\n'
        '[schedule]\non_extend = "stretch"\nwarmup = "4ba"\n'
        '[[schedule.pieces]]\nkind = "cosine"\nto = "0.1"\nuntil = "end"\n'
    )
    out = tmp_path / "more.svg"
    assert (
        main(
            [
                "plan",
                str(scenario),
                "--resume-from",
                "tests/golden/checkpoint-v3.json",
                "--plot",
                str(out),
            ]
        )
        == 0
    )
    assert "trained before this script:" in out.read_text()


# (what --plot is given, made in the folder first; what the refusal says; why)
PLOT_TARGETS = [
    ("fifo", "'{}': a FIFO, not a regular file", "opening a FIFO blocks until a reader comes"),
    ("dir", "'{}': a directory, not a regular file", "savefig's IsADirectoryError said 'read'"),
    ("scenario", "is '{}', which this command reads", "the scenario would be overwritten"),
    ("checkpoint", "is '{}', which this command reads", "the checkpoint would be destroyed"),
    ("missing-folder", "cannot write '{}': No such file or directory", "was 'cannot read None'"),
]


@pytest.mark.parametrize(("kind", "said", "why"), PLOT_TARGETS)
def test_a_plot_target_that_cannot_be_drawn_on_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, said: str, why: str
) -> None:
    """--plot onto a FIFO, a directory, the scenario or the checkpoint read, or into a missing
    folder: refused in one paragraph (exit code 2), every file left as it was."""
    import os
    import shutil

    pytest.importorskip("matplotlib")
    scenario = tmp_path / "own.svg"  # a scenario file whose name ends in .svg
    shutil.copy(EXAMPLE, scenario)
    checkpoint = tmp_path / "ckpt.png"
    shutil.copy(ROOT / "examples" / "checkpoints" / "mid-epoch.json", checkpoint)
    target = {
        "fifo": tmp_path / "fifo.png",
        "dir": tmp_path / "dir.png",
        "scenario": scenario,
        "checkpoint": checkpoint,
        "missing-folder": tmp_path / "missing" / "plan.png",
    }[kind]
    if kind == "fifo":
        os.mkfifo(target)
    if kind == "dir":
        target.mkdir()
    before = {path: path.read_bytes() for path in (scenario, checkpoint)}
    argv = ["plan", str(scenario), "--plot", str(target)]
    if kind == "checkpoint":
        argv += ["--resume-from", str(checkpoint)]
    assert main(argv) == 2, why
    err = capsys.readouterr().err
    assert err.startswith("durations: error: "), why
    assert said.format(target) in err, why
    assert err.count("\n") == 1, why
    assert {path: path.read_bytes() for path in (scenario, checkpoint)} == before, why
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [], why


def test_a_picture_is_replaced_whole(tmp_path: Path) -> None:
    """An existing picture is replaced by the new one (renamed into place, so a reader sees
    the old or the new, never half of one), with a file mode as any new file would have."""
    import os
    import stat

    pytest.importorskip("matplotlib")
    out = tmp_path / "plan.png"
    out.write_bytes(b"old")
    assert main(["plan", EXAMPLE, "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["plan.png"]


def test_names_are_drawn_as_written(tmp_path: Path) -> None:
    """A call or event named like mathtext ('$\\bogus{x}$', '$x$') is drawn as written: it
    crashed matplotlib's parser, and '$x$' was drawn as math."""
    pytest.importorskip("matplotlib")
    text = Path(EXAMPLE).read_text().replace('name = "anneal"', 'name = "$\\\\bogus{x}$ $x$"')
    scenario = tmp_path / "math.toml"
    scenario.write_text(text)
    out = tmp_path / "plan.svg"
    assert main(["plan", str(scenario), "--plot", str(out)]) == 0
    assert "$\\bogus{x}$ $x$" in out.read_text()


def test_matplotlib_s_warnings_stay_out_of_the_command_s_output(tmp_path: Path) -> None:
    """A name with a letter the font lacks makes matplotlib warn ('Glyph 2325 ... missing from
    font(s) DejaVu Sans'); the command draws it (a box) and says nothing of it: the warning
    was printed before the command's own output."""
    import warnings

    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    with warnings.catch_warnings(record=True) as direct:  # what matplotlib says of it
        warnings.simplefilter("always")
        figure = Figure()
        figure.text(0, 0, "\u0915")
        figure.savefig(tmp_path / "direct.png")
    assert any("missing from font" in str(w.message) for w in direct)
    text = Path(EXAMPLE).read_text().replace('name = "anneal"', 'name = "anneal \u0915"')
    scenario = tmp_path / "glyph.toml"
    scenario.write_text(text)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["plan", str(scenario), "--plot", str(tmp_path / "plan.png")]) == 0
    assert [str(w.message) for w in seen] == []


def test_a_plan_past_a_float_s_range_is_refused_in_one_paragraph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A loader of 10^500 samples makes a plan of about 10^498 steps, which matplotlib's float
    axis cannot hold (found by the plot target: OverflowError from broken_barh): refused,
    naming the bound, with no file left behind."""
    pytest.importorskip("matplotlib")
    text = f'[run]\nmax_duration = "2ep"\n[loaders.a]\nsamples = {10**500}\nbatch_size = 10\n'
    text += '[[fit]]\nloader = "a"\n'
    scenario = tmp_path / "huge.toml"
    scenario.write_text(text)
    out = tmp_path / "plan.svg"
    assert main(["plan", str(scenario), "--plot", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"durations: error: --plot '{out}': the plan ends at lifetime step 10^")
    assert "past 10^300: a picture's axis is drawn in floats" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.toml"]


def test_the_plot_fuzz_target_finds_no_escape_and_no_hang() -> None:
    """The ``plot`` fuzz target (hostile names, schedules and events drawn to an SVG) tries its
    CI budget with no escape and no hang, and docs/reliability.md shows the counts it measured
    (rewrite them with ``python -m tests.fuzz --budget ci --targets plot --write-docs``)."""
    pytest.importorskip("matplotlib")
    from . import fuzz

    (tally,) = fuzz.run("ci", ["plot"])
    assert tally.inputs == fuzz.BUDGETS["ci"][0]
    assert (tally.escapes, tally.hangs) == ([], 0)
    begin, end = fuzz.marks("ci", ["plot"])
    shown = fuzz.DOC.read_text(encoding="utf-8").partition(begin)[2].partition(end)[0]
    counts = [m["counts"] for m in map(fuzz.COUNTS.fullmatch, shown.strip().splitlines()) if m]
    measured = fuzz.figures("ci", [tally]).splitlines()
    assert counts == [m["counts"] for m in map(fuzz.COUNTS.fullmatch, measured) if m]


def test_a_mixture_s_sources_are_drawn_with_their_shares(tmp_path: Path) -> None:
    """The sources panel draws, call by call, the share of each source in what the call reads
    (pretraining's web, code and math 6:3:1 of 50,006 samples, annealing's code and math 1:1),
    and names every source."""
    from fractions import Fraction

    from durations._plot import source_shares
    from durations.scenario import Scenario

    path = ROOT / "examples" / "mixture.toml"
    scenario = Scenario.from_toml(path.read_text())
    shares = source_shares(plan(scenario.config, scenario.calls))
    assert [(first, last) for first, last, _ in shares] == [(0, 782), (782, 907)]
    pretrain, anneal = (parts for _, _, parts in shares)
    assert pretrain == {
        "web": Fraction(30_004, 50_006),
        "code": Fraction(15_002, 50_006),
        "math": Fraction(5_000, 50_006),
    }
    assert anneal == {"code": Fraction(1, 2), "math": Fraction(1, 2)}
    pytest.importorskip("matplotlib")
    out = tmp_path / "mixture.svg"
    assert main(["plan", str(path), "--plot", str(out)]) == 0
    svg = out.read_text()
    for name in ("web", "code", "math", "source share"):
        assert f">{name}<" in svg or f"> {name}<" in svg, name
