"""Real data-parallel jobs killed with SIGKILL and run again, unchanged, through the integrations.

The job (``tests/frameworks/_ddp_resume_worker.py``) runs one script through the framework's
``DurationsCallback`` on 2 processes (gloo, CPU, torchrun): 2 epochs of loader ``a`` (21
samples, 5 per device), then 0.5 epoch of ``b`` (7 samples, 2 per device), 7 optimizer steps,
checkpointing after every step. Per framework, one run:

1. attempt 1 on 2 processes, killed after a random step ``k1`` (1-5) once its checkpoint is
   complete: every rank holds, then SIGKILL goes to torchrun's process group and to every
   worker's (``record_ddp.kill_job``: torchrun starts each worker in its own session);
2. a copy of the folder as the kill left it is put aside for the last attempt;
3. attempt 2 on 2 processes, killed after a random step ``k2`` (``k1 < k2 <= 6``);
4. the last attempt on 2 processes, to the end;
5. attempt 1's copy run on **1** process, and another copy on **3**: the script reads its world
   size from the job, so the same script describes its loaders at 1 and at 3 processes.

Over the attempts on 2 processes and both ranks, every lifetime step is trained once, and its
multiset of samples is the one ``durations.testing.expected_steps`` lists for the plan's step:
the resume at the same world size is exact; or an attempt is refused on every rank before its
first step, with the message the test expects. At 1 process, the run either resumes exactly
(the expected steps of the plan from the checkpoint) or stops before its first step with an
``IntegrationError`` naming the samples the framework would train again or skip; at 3 the same
holds, checked as that relation (the message names samples and the batch size to resume at).

The kill steps are drawn at random; ``DURATIONS_DDP_RESUME_KILLS="k1,k2"`` fixes them. The
module takes about 4 minutes, almost all of it start-up: 12 jobs of 15-25 s.
Skipped where torch or the framework does not import.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from durations import plan
from durations.integrations.checkpoints import LIGHTNING, TRANSFORMERS, latest_checkpoint
from durations.testing import expected_steps
from tests.frameworks._ddp_resume_worker import OFFSETS, script
from tests.frameworks.record_ddp import _hold_lines, kill_job
from tests.frameworks.test_ddp_integrations import NEEDS, REPO, _free_port

WORLD = 2
STEPS = 7
JOB_TIMEOUT = 240.0
READERS = {"transformers": TRANSFORMERS, "lightning": LIGHTNING}

Run = dict[str, Any]


def _kills(count: int) -> tuple[int, ...]:
    """``count`` increasing steps to kill after: the first in 1-5 (inside call "first"), the
    next up to 6 (its last step)."""
    fixed = os.environ.get("DURATIONS_DDP_RESUME_KILLS")
    if fixed:
        return tuple(int(k) for k in fixed.split(","))[:count]
    first = random.randint(1, STEPS - 2)
    return (first, random.randint(first + 1, STEPS - 1))[:count]


def _attempt(
    framework: str, root: Path, attempt: int, world: int, hold_at: int | None
) -> dict[str, Any]:
    """Run one attempt of the job under torchrun; with ``hold_at``, SIGKILL the whole job once
    every rank holds after that step's checkpoint."""
    job = root / f"job{attempt}.json"
    job.write_text(
        json.dumps(
            {"framework": framework, "root": str(root), "attempt": attempt, "hold_at": hold_at}
        )
    )
    command = [
        sys.executable, "-m", "torch.distributed.run",
        f"--nproc_per_node={world}", "--nnodes=1",
        "--master_addr=127.0.0.1", f"--master_port={_free_port()}",
        "--module", "tests.frameworks._ddp_resume_worker", str(job),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    env.pop("MASTER_PORT", None)
    log = root / f"launcher{attempt}.log"
    records = root / "records" / f"attempt{attempt}"
    start = time.perf_counter()
    killed: dict[str, Any] | None = None
    with log.open("wb") as handle:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + JOB_TIMEOUT
        if hold_at is not None:
            while process.poll() is None and time.monotonic() < deadline:
                if len(_hold_lines(records, world)) == world:
                    killed = kill_job(process.pid)
                    break
                time.sleep(0.05)
        try:
            returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_job(process.pid)
            returncode = process.wait()
    return {
        "attempt": attempt,
        "world": world,
        "hold_at": hold_at,
        "returncode": returncode,
        "killed": killed,
        "seconds": round(time.perf_counter() - start, 1),
        "log": log.read_text(errors="replace").splitlines()[-30:],
        "ranks": [_read(records / f"rank{rank}.jsonl") for rank in range(world)],
    }


def _read(path: Path) -> dict[str, Any]:
    """One rank's lines of one attempt: starts, steps, hold, error, end."""
    out: dict[str, Any] = {"starts": [], "steps": [], "hold": None, "error": None, "end": False}
    text = path.read_text() if path.exists() else ""
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:  # a line cut by the kill
            continue
        if "start" in item:
            out["starts"].append(item["start"])
        elif "step" in item:
            out["steps"].append(item["step"])
        else:
            out.update(item)
    return out


def _run(framework: str, root: Path, kills: int) -> Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in NEEDS[framework]:
            pytest.importorskip(module)
    first, *later = _kills(kills)
    same, other, three = root / "same", root / "other", root / "three"
    same.mkdir(parents=True)
    attempts = [_attempt(framework, same, 1, WORLD, first)]
    shutil.copytree(same / "checkpoints", other / "checkpoints")
    shutil.copytree(same / "checkpoints", three / "checkpoints")
    left = latest_checkpoint(other / "checkpoints", reader=READERS[framework])
    for hold_at in later:
        attempts.append(_attempt(framework, same, len(attempts) + 1, WORLD, hold_at))
    attempts.append(_attempt(framework, same, len(attempts) + 1, WORLD, None))
    return {
        "framework": framework,
        "kills": (first, *later),
        "root": root,
        "attempts": attempts,
        "left": None if left is None else left.checkpoint,
        "other": _attempt(framework, other, 1, 1, None),
        "three": _attempt(framework, three, 1, 3, None),
    }


@pytest.fixture(scope="module")
def hf_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _run("transformers", tmp_path_factory.mktemp("resume-hf"), kills=2)


@pytest.fixture(scope="module")
def pl_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _run("lightning", tmp_path_factory.mktemp("resume-pl"), kills=2)


def _about(run: Run) -> str:
    kills = ",".join(map(str, run["kills"]))
    return f"killed after steps {kills} (DURATIONS_DDP_RESUME_KILLS={kills})"


def _orders(attempts: list[dict[str, Any]]) -> dict[tuple[str, int], list[int]]:
    """(call, epoch of the call) -> the epoch's order of data set indices, as the ranks of every
    attempt recorded it (Lightning; Hugging Face samples sequentially and records none)."""
    orders: dict[tuple[str, int], list[int]] = {}
    for attempt in attempts:
        for rank in attempt["ranks"]:
            for start in rank["starts"]:
                if "order" in start:
                    key = (start["call"], start["epoch"])
                    assert orders.setdefault(key, start["order"]) == start["order"], key
    return orders


def _trained(attempts: list[dict[str, Any]], world: int) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every lifetime step the attempts trained, over all ranks: call, loader, and the sorted
    places (in the epoch's order, repeats included) of the samples read. Each rank must have
    trained every step once, in order, over the attempts."""
    orders = _orders(attempts)
    per_rank = []
    for rank in range(world):
        steps = [step for attempt in attempts for step in attempt["ranks"][rank]["steps"]]
        lifetimes = [step["lifetime"] for step in steps]
        first = lifetimes[0] if lifetimes else 1
        assert lifetimes == list(range(first, first + len(steps))), f"rank {rank}: {lifetimes}"
        per_rank.append(steps)
    out = []
    for together in zip(*per_rank, strict=True):
        assert len({(s["lifetime"], s["call"], s["epoch"]) for s in together}) == 1, together
        ids = [i for s in together for i in s["ids"]]
        loader = "b" if ids[0] >= OFFSETS["b"] else "a"
        indices = [i - OFFSETS[loader] for i in ids]
        order = orders.get((together[0]["call"], together[0]["epoch"]))
        places = indices if order is None else [order.index(i) for i in indices]
        out.append((together[0]["call"], loader, tuple(sorted(places))))
    return out


def _check_same_world_size(run: Run) -> str | None:
    """Check the attempts on 2 processes; return the refusal that stopped them, if any (every
    rank, before its first step; what was trained until then is the plan's start)."""
    attempts = run["attempts"]
    config, calls = script(run["framework"], WORLD)
    expected = [(r.call, r.loader, r.samples) for r in expected_steps(plan(config, calls))]
    assert len(expected) == STEPS
    for index, attempt in enumerate(attempts):
        errors = [rank["error"] for rank in attempt["ranks"]]
        if any(error is not None for error in errors):
            assert attempt["returncode"] != 0
            assert all(e is not None and e["type"] == "IntegrationError" for e in errors), errors
            assert all(rank["steps"] == [] for rank in attempt["ranks"]), _about(run)
            trained = _trained(attempts[:index], WORLD)
            assert trained == expected[: len(trained)], _about(run)
            return str(errors[0]["message"])
        if attempt["hold_at"] is None:
            break
        killed = attempt["killed"]
        assert killed is not None, (_about(run), attempt["log"], attempt["ranks"])
        assert killed["survivors"] == [], killed
        assert [rank["hold"] for rank in attempt["ranks"]] == [attempt["hold_at"]] * WORLD
    last = attempts[-1]
    assert last["returncode"] == 0, (_about(run), last["log"], last["ranks"])
    assert all(rank["end"] and rank["error"] is None for rank in last["ranks"]), last["ranks"]
    assert _trained(attempts, WORLD) == expected, _about(run)
    reader = READERS[run["framework"]]
    found = latest_checkpoint(run["root"] / "same" / "checkpoints", reader=reader)
    assert found is not None
    assert found.checkpoint.progress.batch == STEPS
    assert [e.finished for e in found.checkpoint.ledger or ()] == [True, True]
    return None


def _other_world_size(run: Run, world: int = 1) -> tuple[dict[str, Any], str | None]:
    """The attempt on ``world`` processes from the first kill's checkpoint: the refusal's
    message (the same on every rank, before any step), or ``None`` when it trained; a run
    that trained must have trained the plan from the checkpoint exactly."""
    attempt = run["other" if world == 1 else "three"]
    ranks = attempt["ranks"]
    if any(rank["error"] is not None for rank in ranks):
        assert attempt["returncode"] != 0
        errors = [rank["error"] for rank in ranks]
        assert all(e is not None and e["type"] == "IntegrationError" for e in errors), errors
        assert len({e["message"] for e in errors}) == 1, (_about(run), errors)
        assert all(rank["steps"] == [] for rank in ranks), (_about(run), ranks)
        return attempt, str(errors[0]["message"])
    assert attempt["returncode"] == 0, (_about(run), attempt["log"])
    config, calls = script(run["framework"], world)
    resumed = plan(config, calls, run["left"])
    expected = [(r.call, r.loader, r.samples) for r in expected_steps(resumed)]
    assert _trained([attempt], world) == expected, _about(run)
    return attempt, None


@pytest.mark.parametrize("framework", ["transformers", "lightning"])
def test_killed_job_rerun_on_three_processes_is_exact_or_names_the_samples(
    framework: str, request: pytest.FixtureRequest
) -> None:
    """Killed on 2 processes and run again on 3 (15 samples a step instead of 10), the job
    either trains exactly the plan from the checkpoint at 3 processes, or every rank stops
    before its first step with one message that names the samples trained again or never (or
    that the saved position is past a rank's share, so the framework would not start) and the
    batch size the call was saved at."""
    run = request.getfixturevalue({"transformers": "hf_run", "lightning": "pl_run"}[framework])
    _, message = _other_world_size(run, 3)
    if message is None:
        return
    # Either the samples the framework would train again or never, or (Lightning, mid-epoch)
    # that the saved position is past a rank's share at 3 processes: it would not start.
    named = r"samples? [0-9-]+ of epoch \d+ .*would (be trained again|never be trained)"
    overrun = r"more than a rank's \d+ at 3 processes, and the resume would stop inside torchdata"
    assert re.search(named, message) or re.search(overrun, message), (_about(run), message)
    assert "batch size 10 (2 processes of 5 per device)" in message, (_about(run), message)


# -- Hugging Face ---------------------------------------------------------------------------------


def test_hf_killed_job_resumes_exactly_at_the_same_world_size(hf_run: Run) -> None:
    """Killed twice with SIGKILL after random steps and run again on 2 processes, the job trains
    every step once, each reading over both ranks the samples expected_steps lists, and ends
    at the plan's step 7 with both calls finished."""
    assert _check_same_world_size(hf_run) is None, _about(hf_run)


#: Hugging Face at 1 process resumes global_step k of call "first" at k // 5 epochs and
#: (k % 5) steps of 5 samples (FINDINGS HR1); the plan, saved on 2 processes with 10 a step, at
#: k // 3 epochs and (k % 3) * 10 samples.
HF_AT_ONE_PROCESS = {
    1: "resume at sample 5 of epoch 0 (global_step 1: it skips 1 steps of 5 samples (1 process "
    "of 5 per device) into the call's epoch 0), the plan at sample 10 of epoch 0: samples 5-9 of "
    "epoch 0 would be trained again",
    2: "resume at sample 10 of epoch 0 (global_step 2: it skips 2 steps of 5 samples (1 process "
    "of 5 per device) into the call's epoch 0), the plan at sample 20 of epoch 0: samples 10-19 "
    "of epoch 0 would be trained again",
    # the plan is at the epoch boundary (epoch 0 read with its 9 cycled places): HF is not
    3: "resume at sample 15 of epoch 0 (global_step 3: it skips 3 steps of 5 samples (1 process "
    "of 5 per device) into the call's epoch 0), the plan at sample 0 of epoch 1: samples 15-20 "
    "of epoch 0 would be trained again",
    # across the boundary: the end of epoch 0 and the start of epoch 1
    4: "resume at sample 20 of epoch 0 (global_step 4: it skips 4 steps of 5 samples (1 process "
    "of 5 per device) into the call's epoch 0), the plan at sample 10 of epoch 1: sample 20 of "
    "epoch 0 and samples 0-9 of epoch 1 would be trained again",
    5: "resume at sample 0 of epoch 1 (global_step 5: it skips 0 steps of 5 samples (1 process "
    "of 5 per device) into the call's epoch 1), the plan at sample 20 of epoch 1: samples 0-19 "
    "of epoch 1 would be trained again",
}


def test_hf_killed_job_rerun_on_one_process_is_refused_naming_the_replayed_samples(
    hf_run: Run,
) -> None:
    """Killed on 2 processes and run again on 1, Hugging Face would skip global_step % 5 steps
    of 5 samples, not the 10 a step the call was saved at: the callback stops before the first
    step, naming the samples that would be trained again and the batch size to resume at."""
    attempt, message = _other_world_size(hf_run)
    assert message is not None, (_about(hf_run), attempt["ranks"])
    first = hf_run["kills"][0]
    assert message == (
        f"call 'first': Hugging Face would {HF_AT_ONE_PROCESS[first]}. Its batch skip is only "
        "exact at the batch size the call was saved at: resume at batch size 10 (2 processes "
        "of 5 per device)"
    ), _about(hf_run)


# -- Lightning ------------------------------------------------------------------------------------


def test_lightning_killed_job_resumes_exactly_at_the_same_world_size(pl_run: Run) -> None:
    """Killed twice with SIGKILL after random steps and run again on 2 processes, Lightning with
    a StatefulDataLoader under DDP trains every step once, each reading over both ranks the
    samples expected_steps lists (the places in each epoch's order, which the sampler Lightning
    injects shuffles by epoch), and ends at the plan's step 7 with both calls finished. Past
    the call's first epoch (kills after steps 3-5) this holds because the callback puts the
    restored loader on the resumed epoch's order before the first batch (FINDINGS LR5):
    without it the resumed run reads epoch 0's order again, and from the boundary (step 3)
    nothing at all of epoch 1."""
    assert _check_same_world_size(pl_run) is None, _about(pl_run)


#: Lightning at 1 process from the kill after step k. Mid-epoch (k = 1, 2, 4, 5: position
#: p = (k % 3) * 10 of epoch k // 3), each rank takes up the loader state rank 0 saved, p / 2
#: samples read, so the one rank resumes at position p / 2. At the epoch boundary (k = 3),
#: Lightning counts the 3 batches per rank of the epoch that ended (11 samples of 22 at 5 per
#: device) as read of the new epoch's 5 and reads only 2 batches, 10 samples.
PL_AT_ONE_PROCESS = {
    1: "resumes mid-epoch at batch size 5 (1 of 5 per device), saved at 10 (2 of 5): every "
    "rank's StatefulDataLoader takes up the 5 samples rank 0 had read, so Lightning would "
    "resume at sample 5 of epoch 0, the plan at sample 10: samples 5-9 of epoch 0 would be "
    "trained again (FINDINGS D4)",
    2: "resumes mid-epoch at batch size 5 (1 of 5 per device), saved at 10 (2 of 5): every "
    "rank's StatefulDataLoader takes up the 10 samples rank 0 had read, so Lightning would "
    "resume at sample 10 of epoch 0, the plan at sample 20: samples 10-19 of epoch 0 would be "
    "trained again (FINDINGS D4)",
    3: "resumes at the start of epoch 1 at batch size 5 (1 of 5 per device), saved at 10 (2 "
    "of 5): Lightning would count 3 of the epoch's 5 batches as read (the saved epoch's count) "
    "and end it after 2: samples 10-20 of epoch 1 would never be trained (FINDINGS LR3)",
    4: "resumes mid-epoch at batch size 5 (1 of 5 per device), saved at 10 (2 of 5): every "
    "rank's StatefulDataLoader takes up the 5 samples rank 0 had read, so Lightning would "
    "resume at sample 5 of epoch 1, the plan at sample 10: samples 5-9 of epoch 1 would be "
    "trained again (FINDINGS D4)",
    5: "resumes mid-epoch at batch size 5 (1 of 5 per device), saved at 10 (2 of 5): every "
    "rank's StatefulDataLoader takes up the 10 samples rank 0 had read, so Lightning would "
    "resume at sample 10 of epoch 1, the plan at sample 20: samples 10-19 of epoch 1 would be "
    "trained again (FINDINGS D4)",
}


def test_lightning_killed_job_rerun_on_one_process_is_refused_naming_the_samples(
    pl_run: Run,
) -> None:
    """Killed on 2 processes and run again on 1, Lightning would take up rank 0's loader state
    (mid-epoch) or the ended epoch's batch count (at a boundary), and train other samples than
    the plan: the callback stops before the first step, naming them and the batch size to
    resume at."""
    attempt, message = _other_world_size(pl_run)
    assert message is not None, (_about(pl_run), attempt["ranks"])
    first = pl_run["kills"][0]
    assert message.startswith(f"call 'first' {PL_AT_ONE_PROCESS[first]}"), (_about(pl_run), message)
    assert message.endswith(
        "resume at batch size 10 (2 processes of 5 per device), the one the call was saved at"
        + ("" if first == 3 else ", or resume from an epoch boundary")
        + ("" if first != 3 else ", or resume at a world size with at most 3 batches per epoch")
    ), message
