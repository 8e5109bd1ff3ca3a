"""The ``durations`` command, run as a real subprocess: examples, errors, JSON, --resume-from."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from durations import FitCall, Loader, RunConfig, plan
from durations.scenario import Scenario
from durations.testing import scenarios

from .strategies import scripts

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(
    *args: str, cwd: Path = ROOT, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "durations", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=timeout,
    )


def _scenario(name: str) -> Scenario:
    path = EXAMPLES / name
    return Scenario.from_toml(path.read_text(), source=str(path))


# (example, exit code, steps to train, a line the output must have)
EXAMPLE_RUNS = [
    ("two-phase.toml", 0, 3940, "anneal    run     curated   3,908ba  3,940ba     32"),
    ("two-phase.toml", 0, 3940, "  cosine  stop:pretrain    200ba  3,908ba  2ep"),
    ("override-more.toml", 0, 12, "total: 12 steps · ends at step 22"),
    ("override-until.toml", 0, 2, "total: 2 steps · ends at step 12"),
    ("mid-epoch-exact.toml", 0, 170, "warning mid-epoch-no-loader-state"),
    ("mid-epoch-replay.toml", 0, 200, "samples 0-2999 of epoch 1 are trained twice"),
    ("mid-epoch-next.toml", 0, 100, "samples 3000-9999 of epoch 1 are never read"),
    ("elastic.toml", 0, 85, "batch size 100 -> 200"),
    ("finished.toml", 0, 0, "info    run-complete"),
    # 101 samples on 2 ranks: 6 steps an epoch of 102 positions, sample 0 read twice each.
    ("elastic-ddp.toml", 0, 12, "samples 0-0 read again in each of epochs 0-1"),
    # Annealing reads code and math 1:1 for 8,000 samples: 4,000 of math, whose cursor goes
    # on from 5,000 (pretraining's epoch ends as math, the smallest, is read once) to 9,000.
    ("mixture.toml", 0, 907, "anneal    math      4,000  0.500  0.500     0.8   9,000"),
]


# (--world-size, steps after the crash at step 3, the final sample count) and why
WORLD_SIZES = [
    (2, 9, 204),  # the same devices: the rest of the uninterrupted plan
    (3, 6, 204),  # 41 samples left -> 42 for 3 ranks: 2 steps, then 102 a whole epoch
    (4, 5, 208),  # 41 -> 44 for 4 ranks (samples 0-2 again), and 104 a whole epoch
    (1, 16, 202),  # one process pads nothing: 41 + 101 samples
]


@pytest.mark.parametrize(("world", "steps", "samples"), WORLD_SIZES)
def test_world_size_what_if(world: int, steps: int, samples: int) -> None:
    """--world-size N re-plans the crash on N devices from the checkpoint of the original."""
    args = ("plan", "examples/elastic-ddp.toml", "--resume-from", "3ba", "--json")
    data = json.loads(run(*args, "--world-size", str(world)).stdout)
    assert (data["total_steps"], data["stop"]["sample"]) == (steps, samples)
    assert data["segments"][0]["world_size"] == world


def test_world_size_needs_per_device_geometry() -> None:
    """A loader with only a global batch cannot be moved to other devices: exit 2, and why."""
    result = run("plan", "examples/two-phase.toml", "--world-size", "2")
    assert result.returncode == 2
    assert "loader 'pretrain' of call 'pretrain' gives no per-device geometry" in result.stderr


@pytest.mark.parametrize(("example", "code", "steps", "line"), EXAMPLE_RUNS)
def test_examples(example: str, code: int, steps: int, line: str) -> None:
    """Each shipped example plans what its comment says, as text and as JSON."""
    text = run("plan", f"examples/{example}")
    assert (text.returncode, text.stderr) == (code, "")
    assert line in text.stdout
    as_json = json.loads(run("plan", f"examples/{example}", "--json").stdout)
    assert as_json["total_steps"] == steps


def test_every_example_is_tested() -> None:
    """No example ships without a row above."""
    assert {p.name for p in EXAMPLES.glob("*.toml")} == {row[0] for row in EXAMPLE_RUNS}


def test_example_checkpoints_are_current() -> None:
    """The shipped checkpoints are exactly what the library writes for those runs."""
    sys.path.insert(0, str(EXAMPLES / "checkpoints"))
    try:
        import generate  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    for name, checkpoint in generate.checkpoints().items():
        shipped = json.loads((EXAMPLES / "checkpoints" / name).read_text())
        assert shipped == checkpoint.to_dict(), name


def test_json_matches_the_api() -> None:
    """--json reports the numbers the Python API computes."""
    scenario = _scenario("two-phase.toml")
    expected = plan(scenario.config, scenario.calls)
    data = json.loads(run("plan", "examples/two-phase.toml", "--json").stdout)
    assert data["total_steps"] == expected.total_steps
    assert data["stop"]["sample"] == expected.stop.sample
    assert [s["steps"] for s in data["segments"]] == [s.steps for s in expected.segments]
    assert [s["action"] for s in data["segments"]] == ["run", "run"]
    for key in ("epoch", "batch", "sample", "token", "batch_in_epoch", "sample_in_epoch"):
        assert data["segments"][1]["stop"][key] == getattr(expected.segments[1].stop, key)
    assert data["diagnostics"] == [
        {"code": d.code, "severity": d.severity.value, "message": d.message, "call": d.call}
        for d in expected.diagnostics
    ]


def _without_schedule() -> str:
    """examples/two-phase.toml without its [schedule] and [events] tables."""
    text = (EXAMPLES / "two-phase.toml").read_text()
    return text[: text.index("\n[schedule]")]


def test_json_schedule_and_events_match_the_api(tmp_path: Path) -> None:
    """--json gives every piece's steps and factors and every event's steps, as the API does;
    a scenario without them has "schedule": null and "events": []."""
    scenario = _scenario("two-phase.toml")
    assert scenario.schedule is not None
    full = plan(scenario.config, scenario.calls)
    curve = scenario.schedule.resolve(full)
    data = json.loads(run("plan", "examples/two-phase.toml", "--json").stdout)
    pieces = data["schedule"]["pieces"]
    assert [(p["kind"], p["until"], p["start"], p["stop"]) for p in pieces] == [
        ("warmup", "200ba", 0, 200),
        ("cosine", "stop:pretrain", 200, 3908),
        ("linear", "end", 3908, 3940),
    ]
    assert [p["clock_at_stop"] for p in pieces] == ["0.1024ep", "2ep", "2.1024ep"]
    assert [p["stop_factor"] for p in pieces] == [
        {"value": 1.0, "exact": "1"},
        {"value": 0.1, "exact": "0.1"},
        {"value": 0.0, "exact": "0"},
    ]
    assert [(p.start, p.stop) for p in curve.pieces] == [(p["start"], p["stop"]) for p in pieces]
    events = {e["name"]: e for e in data["events"]}
    assert list(events) == ["checkpoint", "eval", "log"]
    for name, interval in scenario.events.items():
        assert events[name]["steps"] == list(interval.resolve(full).steps())
    assert events["eval"] == {
        "name": "eval",
        "interval": "at call ends",
        "steps": [3908, 3940],
        "complete": True,
    }
    path = tmp_path / "plain.toml"
    path.write_text(_without_schedule())
    plain = json.loads(run("plan", str(path), "--json").stdout)
    assert (plain["schedule"], plain["events"]) == (None, [])


def test_schedule_after_a_crash_is_the_same() -> None:
    """The schedule and events printed for the re-run after a crash are the uninterrupted
    run's: lifetime steps, not steps of the re-run."""
    full = json.loads(run("plan", "examples/two-phase.toml", "--json").stdout)
    args = ("plan", "examples/two-phase.toml", "--json", "--resume-from", "3000ba")
    resumed = json.loads(run(*args).stdout)
    assert (resumed["schedule"], resumed["events"]) == (full["schedule"], full["events"])


def test_many_events_are_summarised(tmp_path: Path) -> None:
    """An event every step of a 1,000,000-step plan is counted up to a bound and shown by its
    first steps, on one line that fits a terminal; --json lists them all."""
    path = tmp_path / "many.toml"
    path.write_text(
        '[run]\nmax_duration = "1000000ba"\n[loaders.a]\nbatch_size = 1\n[[fit]]\nloader = "a"\n'
        '[schedule]\nwarmup = "0.1dur"\n[events.log]\nevery = "1ba"\n'
        '[events.some]\nevery = "7ba"\n'
    )
    lines = _check_widths(run("plan", str(path)).stdout)
    assert "  log   every 1ba: more than 10,000 steps: 1, 2, 3, 4, 5, 6, 7, 8, ..." in lines
    assert "  some  every 7ba: more than 10,000 steps: 7, 14, 21, 28, 35, 42, 49, 56, ..." in lines
    assert "  warmup  0.1dur    0ba  100,000ba  100000sp       0 -> 1" in lines


# (scenario tail after examples/two-phase.toml's calls, what the message must name)
BAD_SCHEDULES = [
    (
        '[schedule]\nwarmup = "3ep"\n',
        "[schedule]: pieces[0] (warmup until 3ep): 3ep is never reached in this plan",
    ),
    (
        '[events.eval]\nat = "5ep"\n',
        "[events.eval]: At(5ep): 5ep is never reached in this plan",
    ),
]


@pytest.mark.parametrize(("tail", "message"), BAD_SCHEDULES)
def test_a_schedule_the_plan_cannot_place(tmp_path: Path, tail: str, message: str) -> None:
    """A schedule or an event the plan cannot place is bad input: the file, the table, why."""
    path = tmp_path / "bad.toml"
    path.write_text(_without_schedule() + "\n" + tail)
    _one_line_error(run("plan", str(path)), f"{path}: {message}")


def test_extend_asks_for_on_extend(tmp_path: Path) -> None:
    """A plan that extends a finished run asks the file for [schedule] on_extend."""
    path = tmp_path / "extend.toml"
    path.write_text((EXAMPLES / "two-phase.toml").read_text())
    result = run("plan", str(path), "--resume-from", "3940ba", "--mode", "extend")
    _one_line_error(result, f"{path}: [schedule]: this plan goes on from lifetime step 3940")
    assert 'set on_extend = "stretch" to re-resolve' in result.stderr
    assert 'or on_extend = "rewarm" for a fresh curve from step 3940' in result.stderr
    stretch = path.read_text().replace(
        'warmup = "200ba"', 'warmup = "200ba"\non_extend = "stretch"'
    )
    path.write_text(stretch)
    result = run("plan", str(path), "--resume-from", "3940ba", "--mode", "extend")
    assert "  cosine  stop:pretrain    200ba  3,940ba  3ep" in result.stdout


def _mixture_toml(name: str, loader: Loader) -> list[str]:
    """A mixture loader's tables, as docs/scenario-files.md writes them."""
    mixture = loader.mixture
    assert mixture is not None
    lines = [f"[loaders.{name}]", f"drop_last = {str(loader.drop_last).lower()}"]
    lines.append(f'unit = "{mixture.unit.value}"')
    lines.append(f"restart = {sorted(mixture.restart)!r}".replace("'", '"'))
    if mixture.stop is not None:
        lines.append(f'stop = "{mixture.stop.value}"')
    if loader.sharding is None:
        lines.append(f"batch_size = {loader.batch_size}")
    else:
        sharding = loader.sharding
        lines += [
            f"world_size = {sharding.world_size}",
            f"device_batch_size = {sharding.device_batch_size}",
            f"accumulation = {sharding.accumulation}",
            f'padding = "{sharding.padding.value}"',
        ]
    for source in mixture.sources:
        lines += [f"[loaders.{name}.sources.{source.name}]", f"samples = {source.samples}"]
        lines.append(
            f'{source.kind} = "{source.part}"'
            if source.kind != "count"
            else f"count = {source.count}"
        )
        if source.tokens_per_sample is not None:
            lines.append(f"tokens_per_sample = {source.tokens_per_sample}")
        if source.order is not None:
            lines.append(f'order = "{"shuffled" if source.order.shuffle else "sequential"}"')
            if source.order.shuffle:
                lines.append(f"seed = {source.order.seed}")
        lines.append(f'wrap = "{source.wrap.value}"')
        if source.max_passes is not None:
            lines.append(f'max_passes = "{source.max_passes}"')
    return lines


@settings(max_examples=15, deadline=None)
@given(
    scenarios(max_calls=3, units=("ba", "sp", "ep", "tok", "dur"), max_world_size=3, mixed=True),
    st.data(),
)
def test_json_matches_the_api_on_generated_mixtures(
    tmp_path_factory: pytest.TempPathFactory, scenario: Scenario, data: st.DataObject
) -> None:
    """Mixture loaders written as scenario tables plan as the API does, source by source."""
    config, calls = scenario.config, scenario.calls
    _json_matches_the_api(tmp_path_factory, config, calls)
    text = "\n".join(
        ["[run]", f'max_duration = "{config.max_duration}"']
        + [
            line
            for c in {c.loader.name: c for c in calls}.values()
            for line in _mixture_toml(str(c.loader.name), c.loader)
        ]
    )
    parsed = Scenario.from_toml(text + "\n" + "\n".join(_fit_toml(c) for c in calls))
    assert parsed.calls == calls


def _fit_toml(call: FitCall) -> str:
    lines = ["[[fit]]", f'loader = "{call.loader.name}"']
    if call.duration is not None:
        lines.append(f'duration = "{call.duration}"')
    if call.until is not None:
        lines.append(f'until = "{call.until}"')
    lines.append(f"reset_time = {str(call.reset_time).lower()}")
    return "\n".join(lines)


@settings(max_examples=15, deadline=None)
@given(scripts(max_calls=3), st.data())
def test_json_matches_the_api_on_generated_scenarios(
    tmp_path_factory: pytest.TempPathFactory,
    script: tuple[RunConfig, tuple[FitCall, ...]],
    data: st.DataObject,
) -> None:
    """For generated scripts written as TOML, --json agrees with plan() step for step."""
    config, calls = script
    _json_matches_the_api(tmp_path_factory, config, calls)


def _json_matches_the_api(
    tmp_path_factory: pytest.TempPathFactory, config: RunConfig, calls: tuple[FitCall, ...]
) -> None:
    loaders = {c.loader.name: c.loader for c in calls}
    lines = ["[run]", f'max_duration = "{config.max_duration}"']
    for name, loader in loaders.items():
        if loader.mixture is not None:
            lines += _mixture_toml(str(name), loader)
            continue
        lines += [f"[loaders.{name}]", f"samples = {loader.samples}"]
        lines += [f"drop_last = {str(loader.drop_last).lower()}"]
        lines += [f"tokens_per_sample = {loader.tokens_per_sample}"]
        if loader.sharding is None:
            lines += [f"batch_size = {loader.batch_size}"]
        else:
            sharding = loader.sharding
            lines += [
                f"world_size = {sharding.world_size}",
                f"device_batch_size = {sharding.device_batch_size}",
                f"accumulation = {sharding.accumulation}",
                f'padding = "{sharding.padding.value}"',
            ]
    for call in calls:
        lines += ["[[fit]]", f'loader = "{call.loader.name}"']
        if call.duration is not None:
            lines.append(f'duration = "{call.duration}"')
        if call.until is not None:
            lines.append(f'until = "{call.until}"')
        lines.append(f"reset_time = {str(call.reset_time).lower()}")
    path = tmp_path_factory.mktemp("scenario") / "generated.toml"
    path.write_text("\n".join(lines) + "\n")
    result = run("plan", str(path), "--json")
    expected = plan(config, calls)
    assert result.returncode == (0 if expected.ok else 1)
    out = json.loads(result.stdout)
    assert out["total_steps"] == expected.total_steps
    assert [s["stop"]["batch"] for s in out["segments"]] == [
        s.stop.batch for s in expected.segments
    ]
    assert [d["code"] for d in out["diagnostics"]] == [d.code for d in expected.diagnostics]
    assert [[r["stop"] for r in s["sources"]] for s in out["segments"]] == [
        [r.stop for r in s.sources] for s in expected.segments
    ]
    assert out["cursors"] == expected.cursors_at(expected.total_steps)


def test_resume_from_every_step() -> None:
    """--resume-from k, for every k of a small example, ends where the plan without it ends."""
    path = ROOT / "tests" / "golden" / "small.toml"
    full = json.loads(run("plan", str(path), "--json").stdout)
    for k in range(full["total_steps"] + 1):
        resumed = json.loads(run("plan", str(path), "--json", "--resume-from", f"{k}ba").stdout)
        assert resumed["stop"] == full["stop"], k
        assert resumed["total_steps"] == full["total_steps"] - k


def test_resume_from_fraction_of_epoch() -> None:
    """--resume-from 0.5ep resumes from the first step boundary at or past half an epoch."""
    out = run("plan", "examples/two-phase.toml", "--resume-from", "0.5ep").stdout
    assert out.startswith("resuming from the checkpoint this script writes at 0.5ep: step 977\n")


def test_a_started_call_with_nothing_left_is_a_skip(tmp_path: Path) -> None:
    """A call stopped at 15 of its 16 steps to 1.55ep, resumed under next_epoch, is past its
    target where it resumes: it trains nothing, and the table says skip, as the integrations
    do, where it said "resume" with 0 steps; the JSON keeps the plan's action."""
    path = tmp_path / "s.toml"
    path.write_text(
        '[loaders.a]\nsamples = 100\nbatch_size = 10\n[[fit]]\nloader = "a"\nuntil = "1.55ep"\n'
    )
    scenario = Scenario.from_toml(path.read_text(), source=str(path))
    checkpoint = tmp_path / "at-15.json"
    written = plan(scenario.config, scenario.calls).checkpoint_at(15)
    checkpoint.write_text(json.dumps(written.to_dict()))
    args = ("plan", str(path), "--resume-from", str(checkpoint), "--data", "next_epoch")
    text = run(*args).stdout
    assert re.search(r"^#0\s+skip\s+a\s+15ba\s+15ba\s+0\s", text, re.MULTILINE), text
    segment = json.loads(run(*args, "--json").stdout)["segments"][0]
    assert (segment["action"], segment["steps"]) == ("resume", 0)


def test_resume_from_hugging_face(tmp_path: Path) -> None:
    """A Hugging Face trainer_state.json is located in the script's plan by global_step."""
    folder = tmp_path / "checkpoint-1000"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(
        json.dumps({"global_step": 1000, "epoch": 0.512, "max_steps": 3940, "train_batch_size": 64})
    )
    result = run("plan", "examples/two-phase.toml", "--resume-from", str(folder))
    assert result.returncode == 0
    assert "read transformers checkpoint" in result.stdout
    assert "global_step=1000, epoch=0.512" in result.stdout
    assert "total: 2,940 steps" in result.stdout
    assert "checkpoint-located" in result.stdout
    inspect = run("inspect", str(folder))
    assert "global_step: 1,000" in inspect.stdout


_SHARDED = """
[run]
max_duration = "2ep"
[loaders.a]
samples = 100
world_size = 2
device_batch_size = {device}
padding = "cycle"
[loaders.b]
samples = 60
world_size = 2
device_batch_size = 5
padding = "cycle"
[[fit]]
loader = "a"
name = "pretrain"
[[fit]]
loader = "b"
duration = "1ep"
name = "anneal"
"""
_EXTENSION = """
[run]
max_duration = "2ep"
[resume]
mode = "extend"
[loaders.c]
samples = 50
batch_size = 10
[[fit]]
loader = "c"
duration = "1ep"
name = "more"
[schedule]
on_extend = "stretch"
warmup = "4ba"
pieces = [{ kind = "cosine", to = "0.1", until = "end" }]
[events.checkpoint]
every = "3ba"
"""


# (scenario, flags, step of the folder's checkpoint) and why the ledger decides the outcome
FOLDER_LEDGERS = [
    # the same job: the ledger says the loader state was saved (no false warning)
    (_SHARDED.format(device=10), (), 8),
    # on 3 ranks: the ledger holds the position (epoch 1, 60 samples in), the step does not
    (_SHARDED.format(device=10), ("--world-size", "3"), 8),
    (_SHARDED.format(device=10), ("--world-size", "3"), 12),
    # twice the batch: located by its step, the folder would be past the script's end
    (_SHARDED.format(device=20), (), 8),
    # an extension from the run's end: its schedule and events sit on lifetime steps
    (_EXTENSION, (), 16),
]


@pytest.mark.parametrize(("scenario", "flags", "step"), FOLDER_LEDGERS)
def test_a_checkpoint_folder_is_read_by_its_ledger(
    tmp_path: Path, scenario: str, flags: tuple[str, ...], step: int
) -> None:
    """A Hugging Face checkpoint-N folder holding the integration's durations.json is planned
    from that ledger, exactly as the durations.json file itself, by plan and by inspect; its
    trainer_state.json (whose global_step counts one train() call) is not used."""
    base = Scenario.from_toml(_SHARDED.format(device=10), source="job.toml")
    written = plan(base.config, base.calls).checkpoint_at(step)
    folder = tmp_path / f"checkpoint-{step}"
    folder.mkdir()
    (folder / "durations.json").write_text(json.dumps(written.to_dict()))
    (folder / "trainer_state.json").write_text(
        json.dumps({"global_step": step, "epoch": step / 5, "train_batch_size": 10})
    )
    path = tmp_path / "job.toml"
    path.write_text(scenario)
    results = [
        run("plan", str(path), "--json", "--resume-from", str(where), *flags)
        for where in (folder, folder / "durations.json", folder / "trainer_state.json")
    ]
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
    by_folder, by_ledger, by_state = (json.loads(r.stdout) for r in results)
    assert by_folder == by_ledger == by_state
    assert "mid-epoch-no-loader-state" not in results[0].stdout
    text = run("plan", str(path), "--resume-from", str(folder), *flags).stdout
    said = " ".join(text.split())  # a long path may wrap the note (100 columns)
    assert f"read the ledger the durations integration saved with {folder}" in said
    # Relative paths, short enough to be shown whole; the same words (the header line wraps
    # at another place for another path: 100 columns).
    inspected = run("inspect", folder.name, cwd=tmp_path).stdout
    by_file = run("inspect", f"{folder.name}/durations.json", cwd=tmp_path).stdout
    assert (
        inspected.split() == by_file.replace(f"{folder.name}/durations.json", folder.name).split()
    )


@pytest.mark.parametrize(
    ("epoch", "flags", "code"),
    [
        (1.6, (), 0),  # step 8 of 5 a step on 2 ranks: epoch 1, 3 of its 5 steps in
        (1.6, ("--world-size", "3"), 1),  # on 3 ranks step 8 is the start of epoch 2
        (2.0, ("--world-size", "3"), 0),  # a checkpoint at the end of epoch 1 fits there
    ],
)
def test_a_trainer_state_without_a_ledger_is_checked_by_its_epoch(
    tmp_path: Path, epoch: float, flags: tuple[str, ...], code: int
) -> None:
    """Rule 10: a trainer_state.json alone is located by its global_step; at another world
    size, a step that falls outside the epoch it records is refused (exit code 1,
    checkpoint-mislocated) instead of being planned as if it were there."""
    folder = tmp_path / "checkpoint-8"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 8, "epoch": epoch}))
    path = tmp_path / "job.toml"
    path.write_text(_SHARDED.format(device=10))
    result = run("plan", str(path), "--resume-from", str(folder), *flags)
    assert result.returncode == code, result.stdout + result.stderr
    assert ("checkpoint-mislocated" in result.stdout) is (code == 1)


def test_a_keras_folder_is_read_by_its_ledger(tmp_path: Path) -> None:
    """A Keras step-N folder (the weights and the integration's durations.json, no
    trainer_state.json) is a checkpoint for plan and inspect, read by its ledger."""
    path = EXAMPLES / "two-phase.toml"
    scenario = _scenario("two-phase.toml")
    written = plan(scenario.config, scenario.calls).checkpoint_at(3000)
    folder = tmp_path / "step-3000"
    folder.mkdir()
    (folder / "model.weights.h5").write_bytes(b"")
    (folder / "durations.json").write_text(json.dumps(written.to_dict()))
    by_folder = run("plan", str(path), "--json", "--resume-from", str(folder))
    assert by_folder.returncode == 0, by_folder.stderr
    assert json.loads(by_folder.stdout)["total_steps"] == 940
    header = " ".join(run("inspect", str(folder)).stdout.split())
    assert header.startswith(f"{folder}: durations checkpoint, format")


def test_mode_and_data_override_the_file() -> None:
    """--data and --mode replace the [resume] values."""
    out = run("plan", "examples/mid-epoch-exact.toml", "--data", "replay_epoch").stdout
    assert "data replay_epoch" in out
    assert "trained twice" in out


def test_convert() -> None:
    """convert prints every unit it can, and says what it cannot convert without."""
    out = run("convert", "1000sp", "--samples", "10000", "--batch-size", "32").stdout
    assert out.splitlines() == [
        "1000sp on 10,000 samples an epoch, batch 32:",
        "  ba  32   (optimizer steps to reach it)",
        "  sp  1,024   (the first step boundary at or past 1000sp)",
        "  ep  0.1024",
        "  tok unknown: give --tokens-per-sample",
    ]


def test_inspect_of_an_extension_says_how_it_took_the_run_up() -> None:
    """inspect names the taking up a checkpoint records (rule 9)."""
    out = run("inspect", "tests/golden/checkpoint-v4.json").stdout
    assert out.splitlines()[2] == (
        "taken up under extend at lifetime step 67; the same script run again continues this ledger"
    )


def test_inspect() -> None:
    """inspect prints the format, the progress and the ledger."""
    out = run("inspect", "examples/checkpoints/mid-epoch.json").stdout
    assert "format 4, no loader state" in out
    assert "progress: step 130 · epoch 1, 3,000 samples in · sample 13,000" in out
    assert re.search(r"#0\s+started\s+data\s+max_duration\s+0ba\s+3ep", out)


# (arguments, what the message must name)
BAD_INPUT = [
    (["plan", "tests/golden/bad-toml.toml"], "invalid TOML"),
    (["plan", "tests/golden/unknown-key.toml"], "fit[0].epochs: unknown key 'epochs'"),
    (
        ["plan", "tests/golden/undefined-loader.toml"],
        "undefined loader 'curatd' (did you mean 'curated'?)",
    ),
    (["plan", "tests/golden/bad-time.toml"], "run.max_duration: invalid time '2 ep'"),
    (["plan", "no-such-file.toml"], "cannot read no-such-file.toml: No such file or directory"),
    (
        ["plan", "examples/two-phase.toml", "--resume-from", "tests/golden/not-json.json"],
        "is not JSON",
    ),
    (
        ["plan", "examples/two-phase.toml", "--resume-from", "tests/golden/future-format.json"],
        "format 99 is newer",
    ),
    (["plan", "examples/two-phase.toml", "--resume-from", "10 ba"], "neither a time"),
    (
        ["plan", "examples/two-phase.toml", "--resume-from", "9ep"],
        "this script's plan ends before 9ep",
    ),
    (["convert", "2.1", "--batch-size", "4"], "invalid time '2.1': missing unit"),
    (["inspect", "tests/golden/future-format.json"], "format 99 is newer"),
    (["inspect", "tests"], "is a directory without durations.json or trainer_state.json"),
    (["plan", "tests/golden/not-utf8.toml"], "cannot read tests/golden/not-utf8.toml: not UTF-8"),
    (["inspect", "tests/golden/nan-epoch/trainer_state.json"], "expected a finite number, got nan"),
    (["plan", "tests/golden/dur-max-duration.toml"], "run.max_duration: 1dur is a fraction"),
    (["plan", "tests/golden/no-fit.toml"], "fit: empty: add at least one [[fit]] table"),
    (["convert", "2ep", "--batch-size", "\u0661\u0660"], "expected a whole number > 0"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_bad_input(args: list[str], message: str) -> None:
    """Bad input exits 2 with a one-paragraph message naming the problem, and no traceback."""
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("durations: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def _one_line_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("durations: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


NESTED = [
    # (file name, content, arguments with FILE for its path, what the message must name)
    ("deep.json", "[" * 100_000, ["inspect", "FILE"], "nests JSON arrays or objects too deeply"),
    (
        "deep.json",
        '{"a":' * 100_000,
        ["plan", "examples/two-phase.toml", "--resume-from", "FILE"],
        "nests JSON arrays or objects too deeply",
    ),
    (
        "trainer_state.json",
        '{"global_step": 1, "log_history": ' + "[" * 100_000,
        ["inspect", "FILE"],
        "nests JSON arrays or objects too deeply",
    ),
    ("deep.toml", "x = " + "[" * 100_000, ["plan", "FILE"], "nested too deeply to read"),
    ("deep.toml", "x = " + "{a = " * 100_000, ["compare", "FILE"], "nested too deeply to read"),
]


@pytest.mark.parametrize(("name", "content", "args", "message"), NESTED)
def test_deeply_nested_input(
    tmp_path: Path, name: str, content: str, args: list[str], message: str
) -> None:
    """JSON or TOML nested past Python's recursion limit is bad input: the one-line error and
    exit 2, not a RecursionError traceback."""
    path = tmp_path / name
    path.write_text(content)
    result = run(*[str(path) if arg == "FILE" else arg for arg in args])
    _one_line_error(result, message)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize(
    "args",
    [
        ["plan", "FIFO"],
        ["compare", "FIFO"],
        ["inspect", "FIFO"],
        ["plan", "examples/two-phase.toml", "--resume-from", "FIFO"],
        ["plan", "NAMING_FIFO"],  # a scenario whose [resume] checkpoint is the FIFO
    ],
)
def test_a_fifo_is_refused_at_once(tmp_path: Path, args: list[str]) -> None:
    """A named pipe with no writer is refused without waiting for one (a read would block
    forever): the one-line error naming what the path is, and exit 2."""
    fifo = tmp_path / "checkpoint.json"
    os.mkfifo(fifo)
    naming = tmp_path / "resume.toml"
    scenario = (EXAMPLES / "two-phase.toml").read_text()
    naming.write_text(f'{scenario}\n[resume]\ncheckpoint = "{fifo.name}"\n')
    paths = {"FIFO": str(fifo), "NAMING_FIFO": str(naming)}
    result = run(*[paths.get(arg, arg) for arg in args], timeout=60)
    _one_line_error(
        result, f"cannot read {fifo}: a FIFO (named pipe), not a regular file; expected a file"
    )


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_is_refused_at_once() -> None:
    """A device that never ends is refused before anything is read from it."""
    result = run("plan", "/dev/zero", timeout=60)
    _one_line_error(
        result, "cannot read /dev/zero: a character device, not a regular file; expected a file"
    )


def test_a_directory_is_not_a_scenario() -> None:
    """A directory where a scenario file is expected says so."""
    _one_line_error(
        run("plan", "tests"), "cannot read tests: a directory, not a regular file; expected a file"
    )


def test_a_file_past_the_size_bound_is_refused(tmp_path: Path) -> None:
    """A text file larger than the bound (64 MiB) is refused before it is read."""
    from durations.readers import MAX_FILE_BYTES

    big = tmp_path / "big.toml"
    with big.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    _one_line_error(
        run("plan", str(big)),
        f"cannot read {big}: larger than 67,108,864 bytes (64 MiB), the most durations reads",
    )
    assert MAX_FILE_BYTES == 64 * 2**20


def test_an_over_long_argument_is_shown_by_its_start() -> None:
    """A --resume-from too long to be a time or a path is shown by its start and length."""
    result = run("plan", "examples/two-phase.toml", "--resume-from", "a" * 100_000)
    _one_line_error(result, "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'... (100,000 characters)")
    assert len(result.stderr) < 200


def _many_calls(count: int, *, name: str = "") -> str:
    """A scenario of ``count`` fit calls that take turns on two loaders, every seventh resetting
    the clock; with ``name``, each call is named after it (``name`` then its index)."""
    lines = [
        "[loaders.a]",
        "samples = 100",
        "batch_size = 32",
        "[loaders.b]",
        "samples = 1000",
        "batch_size = 10",
    ]
    for i in range(count):
        lines += ["[[fit]]", f'loader = "{"ab"[i % 2]}"', f'duration = "{50 + i % 7}sp"']
        lines += ["reset_time = true"] if i % 7 == 0 else []
        lines += [f'name = "{name}{i}"'] if name else []
    return "\n".join(lines) + "\n"


def _check_widths(text: str) -> list[str]:
    """Every line fits a terminal: at most LINE_WIDTH, or a diagnostic's one sentence."""
    from durations._render import LINE_WIDTH

    lines = text.splitlines()
    for line in lines:
        sentence = line.lstrip().startswith(("info", "warning", "error"))
        assert len(line) <= (200 if sentence else LINE_WIDTH), line
    return lines


def test_text_output_of_many_calls_fits_a_terminal(tmp_path: Path) -> None:
    """The plan of 1,000 calls (the most a scenario file holds) shows the first and last ten in
    its table, one timeline span of bounded width, and its diagnostics by code, and says so;
    every line fits a terminal."""
    path = tmp_path / "many.toml"
    path.write_text(_many_calls(1_000))
    scenario = Scenario.from_toml(path.read_text())
    planned = plan(scenario.config, scenario.calls)
    result = run("plan", str(path))
    assert result.returncode == 0
    lines = _check_widths(result.stdout)
    assert len(lines) < 60
    assert "... 980 more calls (--json lists every one) ..." in lines
    assert [line.split()[0] for line in lines if line.startswith("#")] == [
        f"#{i}" for i in [*range(10), *range(990, 1_000)]
    ]
    assert (
        "          1,000 calls in one span, proportional to steps "
        "(one each would not fit in 100 columns)"
    ) in lines
    timeline = next(line for line in lines if line.startswith("timeline: "))
    assert len(timeline) == len("timeline: |") + 60 + len("|")
    count = len(planned.diagnostics)
    assert count > 1_000
    assert f"  {count:,} diagnostics, by code (--json lists every one):" in lines
    listed = lines[lines.index("diagnostics:") + 2 :]
    by_code = [line.split()[1] for line in listed if not line.startswith("      ")]
    assert by_code == ["clock-reset", "target-rounded", "epoch-abandoned"]


def test_inspect_of_a_long_ledger_fits_a_terminal(tmp_path: Path) -> None:
    """A checkpoint of 10,000 started calls (a script given to plan() as Python: a scenario
    file holds at most 1,000) shows the first and last ten of its ledger."""
    scenario = Scenario.from_toml(_many_calls(1_000))
    calls = [attrs.evolve(call) for _ in range(10) for call in scenario.calls]
    full = plan(scenario.config, calls)
    assert len(full.segments) == 10_000
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(full.checkpoint_at(full.total_steps).to_dict()))
    result = run("inspect", path.name, cwd=tmp_path)
    assert result.returncode == 0
    lines = _check_widths(result.stdout)
    assert "  ... 9,980 more calls (--json lists every one) ..." in lines
    assert len(lines) < 30


def test_long_names_are_shown_by_their_start(tmp_path: Path) -> None:
    """Names too long for a table cell are cut, and a timeline whose labels would not fit is
    drawn as one span: a few calls with long names still fit a terminal."""
    path = tmp_path / "named.toml"
    path.write_text(_many_calls(3, name="pretraining-on-the-whole-corpus-phase-"))
    result = run("plan", str(path))
    lines = _check_widths(result.stdout.partition("diagnostics:")[0])  # they quote the names
    names = [line.split()[0] for line in lines if line.startswith("pretraining")]
    assert names == [f"pretraining-o...-phase-{i}" for i in range(3)]
    assert "3 calls in one span, proportional to steps" in result.stdout


def test_compare_names_the_first_and_last_calls_of_many() -> None:
    """The steps line of a comparison of many calls names the first and last three."""
    from durations._render import compare_text
    from durations.compare import Comparison

    scenario = Scenario.from_toml(_many_calls(50))
    comparison = Comparison(
        scenario=scenario, plan=plan(scenario.config, scenario.calls), crash_at=None, trainers=()
    )
    lines = _check_widths(compare_text(comparison, "many.toml"))
    assert lines[1] == (
        "durations plans 196 steps "
        "(#0 2 · #1 6 · #2 2 · ... 44 more calls ... · #47 6 · #48 2 · #49 5)"
    )


def test_error_diagnostic_exits_1() -> None:
    """A plan with an error diagnostic exits 1."""
    result = run("plan", "tests/golden/no-duration.toml")
    assert result.returncode == 1
    assert "error   no-duration" in result.stdout


@pytest.mark.parametrize("command", [[], ["plan"], ["convert"], ["inspect"]])
def test_help(command: list[str]) -> None:
    """Every command has --help with an example."""
    result = run(*command, "--help")
    assert result.returncode == 0
    assert "example" in result.stdout


def test_readme_shows_the_real_output() -> None:
    """The README's first command's output is what the command prints today."""
    readme = (ROOT / "README.md").read_text()
    shown = re.search(
        r"```text\n(\$ durations plan examples/two-phase.toml\n.*?)```", readme, re.DOTALL
    )
    assert shown is not None
    expected = shown.group(1).split("\n", 1)[1]
    assert run("plan", "examples/two-phase.toml").stdout == expected


def test_readme_crash_answer() -> None:
    """The README's answer to "what if we crash at step 3,000" is what the command says."""
    out = json.loads(
        run("plan", "examples/two-phase.toml", "--json", "--resume-from", "3000ba").stdout
    )
    assert [(s["action"], s["steps"]) for s in out["segments"]] == [("resume", 908), ("run", 32)]
    full = json.loads(run("plan", "examples/two-phase.toml", "--json").stdout)
    assert out["stop"] == full["stop"]


def _shell_examples() -> list[tuple[str, str, str]]:
    """Every `$ durations ...` block in docs/, with the output shown under it."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```\n(\$ durations .*?)```", page.read_text(), re.DOTALL):
            command, _, output = block.partition("\n")
            found.append((page.name, command[2:], output))
    return found


@pytest.mark.parametrize(("page", "command", "output"), _shell_examples())
def test_docs_shell_examples(page: str, command: str, output: str) -> None:
    """The commands shown in the docs print exactly what the docs show (an error shown is
    what the command prints on standard error, with exit code 2)."""
    result = run(*command.split()[1:])
    if output.startswith("durations: error: "):
        assert (result.returncode, result.stdout, result.stderr) == (2, "", output)
        return
    assert result.returncode == 0
    assert result.stdout == output


def test_output_that_cannot_be_written_is_said_in_one_paragraph(tmp_path: Path) -> None:
    """Standard output on a full device: 'cannot write the output: No space left on device',
    exit code 2 (it said 'cannot read None'); a pipe the reader closed (`| head`) ends
    quietly, no traceback at exit."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "durations", "plan", "examples/two-phase.toml"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            check=False,
        )
    assert result.returncode == 2
    assert result.stderr == "durations: error: cannot write the output: No space left on device\n"
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first write
    result = subprocess.run(
        [sys.executable, "-m", "durations", "plan", "examples/two-phase.toml"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        check=False,
    )
    os.close(write)
    assert (result.returncode, result.stderr) == (2, "")


def test_an_ascii_terminal_gets_escapes_not_a_traceback(tmp_path: Path) -> None:
    """PYTHONIOENCODING=ascii: what ASCII cannot show ('·', a name in another script) is
    written as a backslash escape; the plan is printed whole (it was a UnicodeEncodeError)."""
    text = (EXAMPLES / "two-phase.toml").read_text().replace('name = "anneal"', 'name = "ré"')
    scenario = tmp_path / "accents.toml"
    scenario.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = subprocess.run(
        [sys.executable, "-m", "durations", "plan", str(scenario)],
        capture_output=True,
        cwd=ROOT,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    out = result.stdout.decode("ascii")
    assert "r\\xe9" in out
    assert "max_duration 2ep \\xb7 resume continue" in out


def test_json_bounds_the_events_of_the_whole_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three `every = "1ba"` tables on a 10^15-token run: 100,000 steps in all, the first
    table whole up to the bound, then nothing; each says it is not complete (each table had
    its own bound of 1,000,000: 32 s and 48 MB)."""
    from durations import cli
    from durations._render import MAX_JSON_EVENTS

    text = (
        '[run]\nmax_duration = "1e15tok"\n[loaders.a]\nsamples = 1000000000\nbatch_size = 512\n'
        'tokens_per_sample = 2048\n[[fit]]\nloader = "a"\n'
        + "".join(f'[events.{n}]\nevery = "1ba"\n' for n in "abc")
    )
    scenario = tmp_path / "big.toml"
    scenario.write_text(text)
    assert cli.main(["plan", str(scenario), "--json"]) == 0
    events = json.loads(capsys.readouterr().out)["events"]
    assert [(e["name"], len(e["steps"]), e["complete"]) for e in events] == [
        ("a", MAX_JSON_EVENTS, False),
        ("b", 0, False),
        ("c", 0, False),
    ]
    assert events[0]["steps"] == list(range(1, MAX_JSON_EVENTS + 1))


def test_a_long_schedule_is_elided_like_the_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """999 pieces: the text shows the first and last 10 and how many it leaves out, within
    100 columns; --json lists every one."""
    from durations import cli

    pieces = "".join(
        f'[[schedule.pieces]]\nkind = "linear"\nto = "{k % 10}/10"\nuntil = "{2 + k}ba"\n'
        for k in range(999)
    )
    text = (
        '[run]\nmax_duration = "2000ba"\n[loaders.a]\nsamples = 100\nbatch_size = 10\n'
        '[[fit]]\nloader = "a"\n[schedule]\nwarmup = "1ba"\n' + pieces
    )
    scenario = tmp_path / "long.toml"
    scenario.write_text(text)
    assert cli.main(["plan", str(scenario)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  ... 980 more pieces (--json lists every one) ..." in out
    assert sum(line.startswith("  linear ") for line in out) == 19  # 20 shown, 1 is the warmup
    assert max(map(len, out)) <= 100
    assert cli.main(["plan", str(scenario), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["schedule"]["pieces"]) == 1000


# -- indices: what each rank reads in a step, through the loader's order ----------------------


def test_indices_are_the_api_s_and_each_position_once() -> None:
    """The first step after a crash at step 3, re-planned on 3 devices, prints (text) and lists
    (JSON) for each rank exactly ``step_indices`` of the same plan made through the API; the
    ranks together read each position of the step once, through the order."""
    from durations.order import step_indices

    scenario = _scenario("elastic-ddp.toml")
    crashed = plan(scenario.config, scenario.calls).checkpoint_at(3)
    on3 = [attrs.evolve(c, loader=c.loader.with_world_size(3)) for c in scenario.calls]
    expected = plan(scenario.config, on3, crashed)
    args = ("plan", "examples/elastic-ddp.toml", "--resume-from", "3ba", "--world-size", "3")
    data = json.loads(run(*args, "--json").stdout)["indices"]
    ranks = [step_indices(expected, 1, rank=r) for r in range(3)]
    assert data["ranks"] == ranks
    assert (data["step"], data["epoch"], data["complete"]) == (4, 0, True)
    first, count = data["positions"]["first"], data["positions"]["count"]
    order = scenario.loaders["train"].order
    assert order is not None
    reads = [order.index(samples=101, epoch=0, position=q) for q in range(first, first + count)]
    assert sorted(i for rank in ranks for i in rank) == sorted(reads)
    text = run(*args).stdout
    for r, indices in enumerate(ranks):
        assert f"  rank {r}: {', '.join(map(str, indices))}\n" in text


def test_indices_of_a_chosen_step() -> None:
    """``--indices K`` names the step that ends at lifetime step K: the last one of the run
    reads the epoch's last positions (101 samples, padded to 102: position 101 reads place 0
    again)."""
    data = json.loads(run("plan", "examples/elastic-ddp.toml", "--indices", "12", "--json").stdout)
    assert data["indices"]["step"] == 12
    assert data["indices"]["positions"] == {"first": 100, "count": 2}
    order = _scenario("elastic-ddp.toml").loaders["train"].order
    assert order is not None
    assert data["indices"]["ranks"] == [
        [order.index(samples=101, epoch=1, position=100)],
        [order.index(samples=101, epoch=1, position=0)],
    ]


# (arguments after "plan", the message, the reason)
INDICES_REFUSED = [
    (
        ("examples/elastic-ddp.toml", "--indices", "13"),
        "--indices 13: not a step of this plan; its steps end at lifetime steps from 1 to 12",
        "past the plan's last step",
    ),
    (
        ("examples/elastic-ddp.toml", "--resume-from", "12ba", "--indices", "12"),
        "--indices 12: the plan trains nothing: no step reads data",
        "a finished run has no step to read",
    ),
    (
        ("examples/two-phase.toml", "--indices", "3"),
        "--indices 3: loader 'pretrain' of call 'pretrain' has no order to name indices by",
        "the job's own sampler orders its data: durations does not know it",
    ),
]


@pytest.mark.parametrize(("args", "message", "reason"), INDICES_REFUSED)
def test_indices_refused(args: tuple[str, ...], message: str, reason: str) -> None:
    result = run("plan", *args)
    assert result.returncode == 2, reason
    assert message in result.stderr, reason


def test_no_indices_without_an_order() -> None:
    """A plan whose first step's loader has no order lists no indices (null in JSON)."""
    data = json.loads(run("plan", "examples/two-phase.toml", "--json").stdout)
    assert data["indices"] is None


def test_indices_of_a_mixture_step() -> None:
    """``--indices`` names a mixture step's indices in its sources' concatenation: step 800 of
    examples/mixture.toml is annealing's 18th (positions 1,088-1,151, 1:1), so code reads on
    from 15,002 + 544 and math, in order, from position 5,000 + 544 - 5,000 of its second
    pass, offset by code's 20,000 samples."""
    text = run("plan", "examples/mixture.toml", "--indices", "800").stdout
    assert "code from 0, math from\n    20,000" in text or "code from 0, math from 20,000" in text
    assert "rank 0: 15546, 20544, 15547, 20545," in text
    data = json.loads(run("plan", "examples/mixture.toml", "--indices", "800", "--json").stdout)
    indices = data["indices"]
    assert indices["order"] is None
    assert indices["sources"] == [{"name": "code", "offset": 0}, {"name": "math", "offset": 20000}]
    assert indices["ranks"][0][:4] == [15546, 20544, 15547, 20545]
