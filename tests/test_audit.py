"""Run audits (``durations.audit``, ``durations audit``): a step log equal to the plan passes, and
each kind of break is flagged at exactly its step.

The script is the two-phase run at toy size, both loaders read in order: 2 epochs of ``a`` (100
samples, batch 10), then 0.1 epoch of ``b`` (300 samples, batch 10): 23 steps. The expected
values are written from that geometry, not from the planner: step ``k <= 20`` reads indices
``10 * ((k - 1) % 10)`` to ``+ 9`` of ``a``, step ``k > 20`` indices ``10 * (k - 21)`` to ``+ 9``
of ``b``; the lifetime sample counter goes ``10 (k - 1)`` to ``10 k``; the schedule warms up over
4 steps, so step ``k`` (which uses factor ``k - 1``) runs at ``BASE * min(k - 1, 4) / 4``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from durations import FitCall, Loader, Order, RunConfig, Schedule, plan
from durations.audit import LOG_FORMAT, LoaderState, StepLog, StepLogError, StepRecord, audit
from durations.cli import main

A = Loader(samples=100, batch_size=10, name="a", order=Order.sequential())
B = Loader(samples=300, batch_size=10, name="b", order=Order.sequential())
CALLS = [FitCall(loader=A, name="pretrain"), FitCall(loader=B, duration="0.1ep", name="curated")]
PLAN = plan(RunConfig(max_duration="2ep"), CALLS)
CURVE = Schedule.warmup("4ba").resolve(PLAN)
BASE = 0.25
STEPS = 23
#: Checkpoints are saved after every third step.
SAVE_EVERY = 3

Line = dict[str, Any]


def indices(k: int) -> list[int]:
    """The indices step ``k`` reads (module docstring)."""
    first = 10 * ((k - 1) % 10) if k <= 20 else 10 * (k - 21)
    return list(range(first, first + 10))


def lr(k: int) -> float:
    return BASE * min(k - 1, 4) / 4


def loader_state(k: int) -> dict[str, Any]:
    """A torchdata 0.11 single-process ``StatefulDataLoader.state_dict()`` after step ``k`` of
    loader ``a`` (the iterator of the epoch under way; at the epoch's end, the ended one)."""
    done = k % 10 or (10 if k % 10 == 0 and k <= 20 else 0)
    return {
        "_index_sampler_state": None,
        "_sampler_iter_state": {"samples_yielded": 10 * done},
        "_sampler_iter_yielded": done,
        "_num_yielded": done,
        "_iterator_finished": done == 10,
    }


def line(k: int) -> Line:
    """Step ``k`` as a run that follows the plan logs it."""
    checkpoint: dict[str, Any] | None = None
    if k % SAVE_EVERY == 0:
        checkpoint = {"path": f"ckpt-{k}"}
        if k <= 20:
            checkpoint["loader_state"] = loader_state(k)
    return {
        "step": k,
        "loader": "a" if k <= 20 else "b",
        "indices": indices(k),
        "lr": lr(k),
        "checkpoint": checkpoint,
    }


def clean() -> list[Line]:
    return [line(k) for k in range(1, STEPS + 1)]


#: The header line each process of a job writes first: after records, it marks a re-run.
HEADER: Line = {"log": LOG_FORMAT}


def records(lines: list[Line]) -> list[StepRecord]:
    """The records of a log of ``lines`` (header lines among them), as :meth:`StepLog.parse`
    reads them."""
    return list(StepLog.parse(json.dumps(item) for item in lines).records)


def run_audit(lines: list[Line], base: float | None = BASE) -> Any:
    return audit(PLAN, records(lines), schedule=CURVE, base_lr=base)


def test_the_geometry_is_the_plan_s() -> None:
    """The toy script has the 23 steps the module docstring counts."""
    assert (PLAN.total_steps, PLAN.start.batch) == (STEPS, 0)


def test_a_log_equal_to_the_plan_passes() -> None:
    """Every step's data, rate and saved state are the plan's: no divergence, every step ok."""
    result = run_audit(clean())
    assert result.ok, result.divergences
    assert [s.step for s in result.steps] == list(range(1, STEPS + 1))
    assert {(s.data, s.lr) for s in result.steps} == {("ok", "ok")}
    saved = [s.step for s in result.steps if s.checkpoint == "ok"]
    assert saved == [3, 6, 9, 12, 15, 18]  # 21's loader state is not logged: b has none here


def test_the_base_rate_is_found_from_the_log_when_not_given() -> None:
    """Without a base, the first rate over its factor is the base, and the log still passes."""
    result = run_audit(clean(), base=None)
    assert result.ok
    assert result.base_lr == BASE


def _shift(by: int, at: int) -> Callable[[list[Line]], list[Line]]:
    """From step ``at`` on, every step reads what step ``k + by`` reads (a batch skipped, or
    read again), as far as the plan goes."""

    def change(lines: list[Line]) -> list[Line]:
        for item in lines:
            k = item["step"]
            if k >= at and 1 <= k + by <= STEPS:
                item["indices"] = indices(k + by)
        return lines

    return change


def _set(step: int, **fields: Any) -> Callable[[list[Line]], list[Line]]:
    def change(lines: list[Line]) -> list[Line]:
        for item in lines:
            if item["step"] == step:
                item.update(fields)
        return lines

    return change


def _saved_state(step: int, state: dict[str, Any]) -> Callable[[list[Line]], list[Line]]:
    def change(lines: list[Line]) -> list[Line]:
        lines[step - 1]["checkpoint"]["loader_state"] = state
        return lines

    return change


def _rerun(kill_after: int, resume_at: int, reread: int | None = None) -> Callable[..., Any]:
    """A run killed after logging step ``kill_after``, run again from step ``resume_at`` to the
    end; with ``reread``, the re-run's first step reads step ``reread``'s data."""

    def change(lines: list[Line]) -> list[Line]:
        again = [line(k) for k in range(resume_at, STEPS + 1)]
        if reread is not None:
            again[0]["indices"] = indices(reread)
        return [*lines[:kill_after], HEADER, *again]

    return change


#: A state gone back to its epoch's start: nothing yielded.
RESTARTED = {"_num_yielded": 0, "_sampler_iter_state": {"samples_yielded": 0}}

BREAKS = [
    # (change, step, kind, why)
    (_shift(+1, 7), 7, "indices", "a batch skipped at step 7: step 7 reads step 8's batch"),
    (_shift(-1, 7), 7, "indices", "a batch read again at step 7: step 7 reads step 6's batch"),
    (_set(9, lr=lr(9) * 2), 9, "lr", "step 9 ran at twice the schedule's rate"),
    (_set(5, lr=lr(5) * (1 + 1e-6)), 5, "lr", "a rate off by 1e-6 relative is past 1e-9"),
    (_saved_state(6, loader_state(3)), 6, "loader-state", "frozen: step 3's state saved again"),
    (_saved_state(12, loader_state(10 + 10)), 12, "loader-state", "a state past its epoch's end"),
    (_saved_state(12, RESTARTED), 12, "loader-state", "restarted: the state says none read"),
    (lambda ls: [x for x in ls if x["step"] != 14], 14, "missing", "step 14 never logged"),
    (lambda ls: ls[:-2], 22, "missing", "the log ends before the plan's stop"),
    (lambda ls: [*ls, line(21) | {"step": 24}], 24, "past-plan", "a step past the plan's 23"),
    (_set(21, loader="a"), 21, "loader", "step 21 reads a, the plan's call reads b"),
    (_rerun(8, 5), 5, "resume", "re-run from step 5, the newest checkpoint logged was step 6"),
    (_rerun(8, 7, reread=1), 7, "indices", "the re-run resumes right, but reads other data"),
]


@pytest.mark.parametrize(("change", "step", "kind", "why"), BREAKS, ids=[b[3] for b in BREAKS])
def test_each_break_is_flagged_at_its_step(
    change: Callable[[list[Line]], list[Line]], step: int, kind: str, why: str
) -> None:
    """The first divergence is the break, at exactly its step, of its kind."""
    result = run_audit(change(clean()))
    assert not result.ok, why
    assert result.first is not None
    assert (result.first.step, result.first.kind) == (step, kind), (why, result.first)
    verdict = {s.step: s for s in result.steps}.get(step)
    if kind in ("indices", "loader"):
        assert verdict is not None
        assert verdict.data == "diverged"
    if kind == "lr":
        assert verdict is not None
        assert verdict.lr == "diverged"
    if kind == "loader-state":
        assert verdict is not None
        assert verdict.checkpoint == "diverged"
    if kind == "missing":
        assert verdict is not None
        assert verdict.data == "missing"


@pytest.mark.parametrize(
    ("kill_after", "why"),
    [
        (6, "killed right after the checkpoint at step 6: nothing is lost"),
        (8, "killed two steps after the checkpoint at step 6: steps 7 and 8 are logged again"),
        (2, "killed before any checkpoint: the re-run starts from step 1"),
    ],
)
def test_a_rerun_from_the_newest_checkpoint_passes(kill_after: int, why: str) -> None:
    """Steps repeated by a re-run that resumes where the plan does are accepted; the last
    record of a step is the one checked."""
    newest = kill_after // SAVE_EVERY * SAVE_EVERY
    lines = [*clean()[:kill_after], HEADER, *(line(k) for k in range(newest + 1, STEPS + 1))]
    if kill_after > newest:
        lines[kill_after - 1]["indices"] = indices(1)  # a lost step: the re-run's record wins
    result = run_audit(lines)
    assert result.ok, (why, result.divergences)
    restarts = [(r.step, r.checkpoint) for r in result.restarts]
    assert restarts == [(newest + 1, newest)], why


def test_samples_instead_of_indices() -> None:
    """A loader with no order logged by its lifetime sample counter: the plan's passes, a
    batch read again is flagged at its step."""
    lines = [{"step": k, "samples": {"start": 10 * (k - 1), "stop": 10 * k}} for k in range(1, 24)]
    assert audit(PLAN, records(lines)).ok
    lines[9]["samples"] = {"start": 80, "stop": 90}  # step 10 reads step 9's samples
    first = audit(PLAN, records(lines)).first
    assert first is not None
    assert (first.step, first.kind) == (10, "samples")


def test_the_trainer_s_step_counter_is_checked() -> None:
    """Hugging Face's ``global_step`` counts each train() call's steps: step 22 is step 2 of
    call 'curated'; a checkpoint recording another count is flagged."""
    lines = clean()
    lines[21]["checkpoint"] = {"path": "c", "trainer_state": {"global_step": 2, "epoch": 0.01}}
    assert run_audit(lines).ok
    lines[21]["checkpoint"]["trainer_state"]["global_step"] = 22
    first = run_audit(lines).first
    assert first is not None
    assert (first.step, first.kind) == (22, "trainer-state")


def test_the_end_of_an_epoch_accepts_either_state() -> None:
    """After an epoch's last step the saved state says the whole epoch (saved before the next
    iterator began) or nothing of the next (after): both resume at the next epoch's start."""
    lines = clean()
    lines[9]["checkpoint"] = {"path": "c", "loader_state": loader_state(10)}  # 100 yielded
    assert run_audit(lines).ok
    lines[9]["checkpoint"]["loader_state"] = loader_state(20 + 1) | {
        "_num_yielded": 0,
        "_sampler_iter_state": {"samples_yielded": 0},
    }
    assert run_audit(lines).ok


@pytest.mark.parametrize(
    ("state", "expected", "why"),
    [
        ({"_num_yielded": 2, "_sampler_iter_state": {"samples_yielded": 20}}, (20, 2, False),
         "one process"),
        ({"_snapshot": {"_snapshot_step": 2, "_main_snapshot": {"_sampler_iter_state": {
            "samples_yielded": 20}}}, "_steps_since_snapshot": 1, "_iterator_finished": False},
         (20, 3, False), "workers: the snapshot's step and the steps since"),
        ({"_num_yielded": 4, "_sampler_iter_state": None, "_iterator_finished": True},
         (None, 4, True), "torch's own batch sampler: batches only"),
    ],
)  # fmt: skip
def test_loader_states_are_read(state: dict[str, Any], expected: tuple[Any, ...], why: str) -> None:
    """A torchdata 0.11 state_dict's yielded samples and batches."""
    found = LoaderState.from_state_dict(state)
    assert (found.samples, found.batches, found.finished) == expected, why


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"step": 1}\nnot json\n{"step": 2}\n', "step log line 2: not JSON: 'not json'"),
        ('{"step": 0}\n', "step log line 1: step: expected the lifetime step a step ends at, "
         ">= 1, got 0"),
        ('{"step": 1.5}\n', "step log line 1: step: expected a whole number >= 0, got 1.5"),
        ('{"log": "other/9"}\n', "step log line 1: log format 'other/9': expected "
         "'durations-step-log/1'"),
        ('[1]\n', "step log line 1: expected a JSON object, got [1]"),
        ('{"step": 1, "checkpoint": {"loader_state": {"x": 1}}}\n',
         "step log line 1: loader_state: no count of what the loader yielded (expected a "
         "torchdata StatefulDataLoader state_dict, with _num_yielded or _snapshot)"),
    ],
)  # fmt: skip
def test_unreadable_logs_are_refused(text: str, message: str) -> None:
    """A line that is not a record says which line and what is wrong with it."""
    with pytest.raises(StepLogError) as error:
        StepLog.parse(text.splitlines())
    assert str(error.value) == message


def test_a_last_line_cut_by_a_kill_is_dropped() -> None:
    """The line a SIGKILL cut short is the last one; it is dropped, the header read."""
    text = f'{{"log": "{LOG_FORMAT}", "scenario": "s", "base_lr": 0.5}}\n{{"step": 1}}\n{{"ste'
    log = StepLog.parse(text.splitlines())
    assert ([r.step for r in log.records], log.scenario, log.base_lr) == ([1], "s", 0.5)


SCENARIO = """
[run]
max_duration = "2ep"

[loaders.a]
samples = 100
batch_size = 10
order = "sequential"

[loaders.b]
samples = 300
batch_size = 10
order = "sequential"

[[fit]]
loader = "a"
name = "pretrain"

[[fit]]
loader = "b"
duration = "0.1ep"
name = "curated"

[schedule]
warmup = "4ba"
"""


def _files(tmp_path: Path, lines: list[Line]) -> tuple[str, str]:
    scenario, log = tmp_path / "s.toml", tmp_path / "steps.jsonl"
    scenario.write_text(SCENARIO)
    header = {"log": LOG_FORMAT, "scenario": "s", "base_lr": BASE}
    log.write_text("".join(json.dumps(item) + "\n" for item in [header, *lines]))
    return str(scenario), str(log)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 for a run that followed the plan, 1 (the first divergence said) when not, 2 for a log
    that cannot be read."""
    scenario, log = _files(tmp_path, clean())
    assert main(["audit", scenario, log]) == 0
    assert capsys.readouterr().out.endswith("the run followed the plan\n")
    scenario, log = _files(tmp_path, _shift(+1, 7)(clean()))
    assert main(["audit", scenario, log]) == 1
    out = capsys.readouterr().out
    assert "first divergence at step 7" in out
    assert "  plan:  the step reads [60, 61, 62, 63, 64, 65, 66, 67, 68, 69] (10)" in out
    Path(log).write_text('{"step": 1}\n{oops\n{"step": 2}\n')
    assert main(["audit", scenario, log]) == 2
    assert "step log line 2: not JSON" in capsys.readouterr().err


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json: the verdict, the first divergence and every step."""
    scenario, log = _files(tmp_path, _set(9, lr=1.0)(clean()))
    assert main(["audit", scenario, log, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["ok"], data["first"]["step"], data["first"]["kind"]) == (False, 9, "lr")
    assert data["first"]["rule"] == "S1"
    assert len(data["steps"]) == STEPS


# -- logs of a killed and re-run job -----------------------------------------------------------
#
# A one-epoch script: loader ``a`` (50 samples, batch 10, in order), 5 steps; step ``k`` reads
# indices ``10 (k - 1)`` to ``+ 9``. A log's lines are written as a writer writes them: each
# process starts with the header line; a line a kill cut short has no newline.

SMALL = """
[run]
max_duration = "1ep"
[loaders.a]
samples = 50
batch_size = 10
order = "sequential"
[[fit]]
loader = "a"
"""
H = json.dumps(HEADER)


def step(k: int) -> str:
    """The record of step ``k`` as the plan has it."""
    return json.dumps({"step": k, "loader": "a", "indices": list(range(10 * (k - 1), 10 * k))})


def saved(k: int, samples: int) -> str:
    """The checkpoint after step ``k``, its loader state having yielded ``samples``."""
    state = {"_num_yielded": samples // 10, "_sampler_iter_state": {"samples_yielded": samples}}
    return json.dumps({"step": k, "checkpoint": {"path": f"c{k}", "loader_state": state}})


#: The checkpoint line after step 4, cut by a kill just before its last ``}``: it ends in ``}``.
CUT = saved(4, 40)[:-1]
assert CUT.endswith("}")


def _audit_log(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """``durations audit --json`` of the log ``text`` against the small script."""
    scenario, log = tmp_path / "s.toml", tmp_path / "steps.jsonl"
    scenario.write_text(SMALL)
    log.write_text(text)
    code = main(["audit", str(scenario), str(log), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else None


GOING_BACK = [
    # (log, exit code, first divergence (step, line, kind) or None, restarts, why)
    ([H, step(1), step(2), step(3), saved(3, 30), step(4), H, step(4), step(5)], 0, None,
     [(4, 3)], "killed after step 4; the re-run (its header first) goes back to the step after "
     "the checkpoint at 3: a re-run, not a divergence"),
    ([H, step(1), step(2), step(3), saved(3, 30), step(4), step(4), step(5)], 1,
     (4, 7, "duplicate"), [], "step 4 logged twice by one process (no header between): the "
     "process trained it twice"),
    ([H, step(1), step(2), saved(2, 20), step(4), step(3), step(5)], 1, (3, 6, "out-of-order"),
     [], "steps 4 then 3 in one process: out of order, though every step is logged"),
    ([H, step(1), step(2), step(3), saved(3, 30), step(4), H, step(2), step(3), step(4), step(5)],
     1, (2, 8, "resume"), [(2, 3)], "a re-run going back past the newest checkpoint (3)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("lines", "code", "first", "restarts", "why"), GOING_BACK, ids=[g[4] for g in GOING_BACK]
)
def test_only_a_header_line_makes_a_step_going_back_a_rerun(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    lines: list[str],
    code: int,
    first: tuple[int, int, str] | None,
    restarts: list[tuple[int, int]],
    why: str,
) -> None:
    """A step at or before the one logged last begins a re-run after a header line; without
    one it is a step the same process took twice (``duplicate``) or out of order."""
    found, data = _audit_log(tmp_path, "".join(text + "\n" for text in lines), capsys)
    assert found == code, why
    got = data["first"] and (data["first"]["step"], data["first"]["line"], data["first"]["kind"])
    assert got == first, why
    assert [(r["step"], r["checkpoint"]) for r in data["restarts"]] == restarts, why


CUTS = [
    # (text, exit code, first divergence (step, kind) or None, records (a checkpoint line is
    # part of its step's record), why)
    ("".join(t + "\n" for t in [H, step(1), step(2), step(3), saved(3, 30), step(4)]) + CUT,
     1, (5, "missing"), 4, "the last line cut by the kill (ending in '}') is dropped; the run "
     "was killed, so step 5 is missing"),
    ("".join(t + "\n" for t in [H, step(1), step(2), step(3), saved(3, 30), step(4)]) + CUT
     + "".join(t + "\n" for t in [H, step(4), step(5)]), 0, None, 6,
     "the re-run's header appended to the cut line (a writer that did not start a new line): "
     "the cut part is dropped, the header read"),
    ("".join(t + "\n" for t in [H, step(1), step(2), step(3), saved(3, 30), step(4), CUT, H,
                                step(4), step(5)]), 0, None, 6,
     "the cut line, then the re-run's header on a line of its own"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code", "first", "count", "why"), CUTS, ids=[c[4] for c in CUTS])
def test_a_line_cut_by_a_kill_is_dropped(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    code: int,
    first: tuple[int, str] | None,
    count: int,
    why: str,
) -> None:
    """A line a kill cut short is dropped (it is the last, or a re-run's header follows it),
    however it ends; the log is read, not refused."""
    found, data = _audit_log(tmp_path, text, capsys)
    assert found == code, why
    assert (data["first"] and (data["first"]["step"], data["first"]["kind"])) == first, why
    assert data["records"] == count, why


def test_a_broken_line_followed_by_a_record_is_refused() -> None:
    """A line cut short is only a kill's when nothing but a header follows it."""
    with pytest.raises(StepLogError) as error:
        StepLog.parse([H, step(1), CUT, step(5)])
    assert error.value.line == 3
    assert str(error.value).startswith('step log line 3: not JSON: \'{"step": 4, ')


def test_a_rerun_s_writer_starts_a_new_line(tmp_path: Path) -> None:
    """A writer appending to a log whose last line a kill cut short begins a line of its own;
    the cut line is dropped and the re-run read."""
    from durations.integrations._steplog import StepLogWriter

    path = tmp_path / "steps.jsonl"
    path.write_text("".join(t + "\n" for t in [H, step(1), step(2), step(3), saved(3, 30)]) + CUT)
    writer = StepLogWriter(path)
    writer.header(None)
    writer.step(4, loader="a", indices=list(range(30, 40)))
    lines = path.read_text().splitlines()
    assert lines[5:7] == [CUT, H], "the header on a line of its own, after the cut one"
    log = StepLog.parse(lines)
    assert [(r.step, r.process) for r in log.records] == [(1, 1), (2, 1), (3, 1), (4, 2)]


def test_a_step_never_logged_is_said_so() -> None:
    """A missing step's divergence says there is no record of it."""
    found = audit(plan_small(), StepLog.parse([step(1), step(2), step(4), step(5)]).records)
    assert str(found.first) == (
        "step 3: missing: the log says no record of step 3; the plan says the run takes step 3 "
        "(rule 16)"
    )


def plan_small() -> Any:
    a = Loader(samples=50, batch_size=10, name="a", order=Order.sequential())
    return plan(RunConfig(max_duration="1ep"), [FitCall(loader=a)])


def test_a_frozen_loader_state_is_named_frozen() -> None:
    """A loader state saved after step 4 equal to the one saved after step 2 (the loader's
    count did not move) is flagged at step 4 as that checkpoint's state saved again."""
    lines = [H, step(1), step(2), saved(2, 20), step(3), step(4), saved(4, 20), H, step(5)]
    found = audit(plan_small(), StepLog.parse(lines).records)
    assert found.first is not None
    assert (found.first.step, found.first.kind) == (4, "loader-state")
    assert found.first.planned == (
        "40 samples of epoch 0 read: resumed from it, the run would read from where the "
        "checkpoint after step 2 does: the state is frozen, saved then and again now"
    )


def test_a_log_that_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO given as the log is refused (exit 2) before it is opened for reading, which would
    wait for a writer forever."""
    import os
    import threading

    scenario, fifo = tmp_path / "s.toml", tmp_path / "steps.jsonl"
    scenario.write_text(SMALL)
    os.mkfifo(fifo)
    codes: list[int] = []
    worker = threading.Thread(
        target=lambda: codes.append(main(["audit", str(scenario), str(fifo)])), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # unblock it: a writer opens, closes
        with open(fifo, "w"):
            pass
        worker.join(timeout=10)
        pytest.fail("durations audit waited on the FIFO")
    assert codes == [2]
    assert "a FIFO (named pipe), not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize(
    "header",
    [
        # an int past a float's range (found by fuzzing: an OverflowError escaped)
        '{"log": "durations-step-log/1", "base_lr": ' + "9" * 4300 + "}",
        # a number JSON reads as infinite
        '{"log": "durations-step-log/1", "base_lr": 1e999}',
    ],
)
def test_a_base_rate_past_a_float_is_refused(header: str) -> None:
    with pytest.raises(StepLogError, match="base_lr: expected a finite number") as refused:
        StepLog.parse([header + "\n"])
    assert len(str(refused.value)) < 300
