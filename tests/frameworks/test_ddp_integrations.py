"""The integrations on real 2-process data-parallel jobs (gloo, CPU), launched with torchrun.

One job per framework (``tests/frameworks/_ddp_integration_worker.py``), each rank running three
scripts in turn: 2 epochs of loader ``a`` (21 samples, 5 per device), then 1.5 epochs of ``b``
(7 samples, 2 per device), through the framework's ``DurationsCallback``:

- ``good``: the loaders described as the job reads them, ``Loader.sharded(...)`` with the
  framework's padding (Hugging Face: accelerate's ``even_batches``, ``cycle``; Lightning:
  ``DistributedSampler(drop_last=False)``, ``repeat``). Every rank records the sample ids of each
  optimizer step; over both ranks, each step must read exactly the samples
  ``durations.testing.expected_steps`` lists for it, repeats included.
- ``variant``: Hugging Face with gradient accumulation 2; Lightning with the script's own
  ``DistributedSampler(drop_last=True)`` (``padding="drop"``), then accumulation 2. Checked as
  ``good`` is.
- ``bad``: loader ``a`` given as one global stream, ``Loader(samples=21, batch_size=10)``. Every
  rank must stop before its first optimizer step, with the error naming the
  ``Loader.sharded(...)`` of the job; the job then fails.

Hugging Face samples sequentially. Lightning's first call uses the ``DistributedSampler`` it
injects, which shuffles the training data although the ``DataLoader`` says ``shuffle=False``:
ids are mapped to places in the epoch's order, which each rank records (and checks against what
its sampler yields). The second call brings its own ``DistributedSampler(shuffle=False)``.

Skipped where torch or the framework does not import.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations import plan
from durations.integrations.checkpoints import LIGHTNING, TRANSFORMERS, latest_checkpoint
from durations.testing import expected_steps
from tests.frameworks._ddp_integration_worker import OFFSETS, WORLD, script

REPO = Path(__file__).resolve().parents[2]
JOB_TIMEOUT = 300.0
NEEDS = {
    "transformers": ("torch", "transformers", "accelerate"),
    "lightning": ("torch", "pytorch_lightning", "torchdata"),
}
MESSAGES = {
    "transformers": "padding='cycle'",
    "lightning": "padding='repeat'",
}
WANTED = "describe the job's loader as Loader.sharded(samples=21, world_size=2, device_batch_size=5"

Job = dict[str, Any]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _launch(framework: str, root: Path) -> Job:
    """Run the framework's job under torchrun; return its exit code, time and rank records."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in NEEDS[framework]:
            pytest.importorskip(module)
    root.mkdir(parents=True, exist_ok=True)
    job = root / "job.json"
    job.write_text(json.dumps({"framework": framework, "root": str(root)}))
    command = [
        sys.executable, "-m", "torch.distributed.run",
        f"--nproc_per_node={WORLD}", "--nnodes=1",
        "--master_addr=127.0.0.1", f"--master_port={_free_port()}",
        "--module", "tests.frameworks._ddp_integration_worker", str(job),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    env.pop("MASTER_PORT", None)
    log = root / "launcher.log"
    start = time.perf_counter()
    with log.open("wb") as handle:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            returncode = process.wait(timeout=JOB_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            returncode = process.wait()
    out: Job = {
        "returncode": returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "log": log.read_text(errors="replace").splitlines()[-40:],
        "root": root,
    }
    for which in ("good", "variant", "bad"):
        out[which] = []
        for rank in range(WORLD):
            path = root / which / f"rank{rank}.json"
            out[which].append(json.loads(path.read_text()) if path.exists() else None)
    return out


@pytest.fixture(scope="module")
def hf_job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    return _launch("transformers", tmp_path_factory.mktemp("ddp-hf"))


@pytest.fixture(scope="module")
def pl_job(tmp_path_factory: pytest.TempPathFactory) -> Job:
    return _launch("lightning", tmp_path_factory.mktemp("ddp-pl"))


def _ranks(job: Job, which: str) -> list[dict[str, Any]]:
    ranks = job[which]
    assert all(rank is not None for rank in ranks), "\n".join(job["log"])
    return list(ranks)


def _orders(rank: dict[str, Any]) -> dict[tuple[str, int], list[int]]:
    """(call, epoch of the call) -> the epoch's order of data set indices, as recorded."""
    return {(s["call"], s["epoch"]): s["order"] for s in rank["starts"] if "order" in s}


def _trained(job: Job, which: str = "good") -> list[tuple[str, str, tuple[int, ...]]]:
    """Each optimizer step over both ranks: call, loader, and the sorted places (in the
    epoch's order, repeats included) of the samples read."""
    ranks = _ranks(job, which)
    for rank in ranks:
        assert rank["error"] is None, rank["error"]
    counts = [len(rank["steps"]) for rank in ranks]
    assert len(set(counts)) == 1, f"the ranks took {counts} optimizer steps"
    orders = _orders(ranks[0])
    assert all(_orders(rank) == orders for rank in ranks), "the ranks disagree on the order"
    out = []
    for index, steps in enumerate(zip(*(rank["steps"] for rank in ranks), strict=True)):
        assert [s["lifetime"] for s in steps] == [index + 1] * WORLD
        assert len({(s["call"], s["epoch"]) for s in steps}) == 1
        ids = [i for s in steps for i in s["ids"]]
        loader = "b" if ids[0] >= OFFSETS["b"] else "a"
        indices = [i - OFFSETS[loader] for i in ids]
        order = orders.get((steps[0]["call"], steps[0]["epoch"]))
        places = indices if order is None else [order.index(i) for i in indices]
        out.append((steps[0]["call"], loader, tuple(sorted(places))))
    return out


def _expected(framework: str, which: str = "good") -> list[tuple[str, str | None, tuple[int, ...]]]:
    config, calls = script(framework, which)
    return [(r.call, r.loader, r.samples) for r in expected_steps(plan(config, calls))]


def _check_refused(job: Job, framework: str) -> None:
    assert job["returncode"] != 0, "the job with a one-stream plan did not fail"
    for rank in _ranks(job, "bad"):
        error = rank["error"]
        assert error is not None, f"rank {rank['rank']} trained {rank['steps']}"
        assert error["type"] == "IntegrationError", error
        assert WANTED in error["message"], error["message"]
        assert MESSAGES[framework] in error["message"], error["message"]
        assert rank["steps"] == [], rank
        assert rank["forwards"] == 0, rank


# -- Hugging Face ---------------------------------------------------------------------------------


def test_hf_one_stream_plan_is_refused_on_every_rank_before_the_first_step(hf_job: Job) -> None:
    """Under torchrun with 2 processes, a plan whose loader is one global stream stops every
    rank before its first forward, naming Loader.sharded(..., padding='cycle')."""
    _check_refused(hf_job, "transformers")


def test_hf_sharded_plan_is_what_the_ranks_read(hf_job: Job) -> None:
    """With Loader.sharded(..., padding='cycle'), the ranks together read, step by step, the
    samples expected_steps lists (a's epoch cycled from 21 to 30, b's 7 to 8), and each call
    stops at the plan's step (6, then 3 inside b's second epoch)."""
    assert _trained(hf_job) == _expected("transformers")
    starts = _ranks(hf_job, "good")[0]["starts"]
    assert [(s["world_size"], s["train_batch_size"]) for s in starts] == [(2, 5), (2, 2)]


def test_hf_gradient_accumulation_is_what_the_ranks_read(hf_job: Job) -> None:
    """With gradient_accumulation_steps=2 and Loader.sharded(..., accumulation=2), each
    optimizer step reads over both ranks the samples expected_steps lists: two micro-batches
    per rank, fewer where an epoch ends, and each call stops at the plan's step."""
    trained, expected = _trained(hf_job, "variant"), _expected("transformers", "variant")
    assert trained == expected
    assert len(trained) < len(_expected("transformers")), "accumulation takes fewer steps"


def test_hf_ddp_checkpoints_carry_the_ledger(hf_job: Job) -> None:
    """The end-of-call checkpoints written under DDP read back at lifetime step 9, both calls
    finished."""
    found = latest_checkpoint(hf_job["root"] / "good" / "checkpoints", reader=TRANSFORMERS)
    assert found is not None
    assert found.checkpoint.progress.batch == 9
    assert [e.finished for e in found.checkpoint.ledger or ()] == [True, True]


# -- Lightning ------------------------------------------------------------------------------------


def test_lightning_one_stream_plan_is_refused_on_every_rank_before_the_first_step(
    pl_job: Job,
) -> None:
    """Trainer(strategy='ddp', devices=2) under torchrun, a plan whose loader is one global
    stream: every rank stops before its first training_step, naming
    Loader.sharded(..., device_batch_size=5, ..., padding='repeat') (the per-device batch read
    from the StatefulDataLoader Lightning re-made around its DistributedSampler)."""
    _check_refused(pl_job, "lightning")


def test_lightning_sharded_plan_is_what_the_ranks_read(pl_job: Job) -> None:
    """With Loader.sharded(..., padding='repeat'), the ranks together read, step by step, the
    samples expected_steps lists (a's epoch padded from 21 to 22: its last step reads 2
    samples), in the order of Lightning's shuffling sampler for a and sequentially for b."""
    assert _trained(pl_job) == _expected("lightning")
    starts = _ranks(pl_job, "good")[0]["starts"]
    samplers = Counter((s["call"], s["sampler"], s["shuffle"]) for s in starts)
    assert samplers == {
        ("first", "DistributedSampler", True): 2,  # injected; shuffles despite shuffle=False
        ("second", "DistributedSampler", False): 2,  # the script's own
    }


def test_lightning_own_drop_last_sampler_and_accumulation_are_what_the_ranks_read(
    pl_job: Job,
) -> None:
    """The script's own DistributedSampler(shuffle=True, drop_last=True) with
    Loader.sharded(..., padding='drop') (21 samples read as 20 an epoch, one never), then
    accumulate_grad_batches=2 with accumulation=2: every optimizer step reads over both ranks
    the samples expected_steps lists."""
    trained = _trained(pl_job, "variant")
    assert trained == _expected("lightning", "variant")
    first = [places for call, _, places in trained if call == "first"]
    assert max(max(places) for places in first) == 19, "place 20 of each epoch is dropped"
    starts = _ranks(pl_job, "variant")[0]["starts"]
    assert {(s["call"], s["sampler"], s["shuffle"]) for s in starts} == {
        ("first", "DistributedSampler", True),
        ("second", "DistributedSampler", False),
    }


def test_lightning_ddp_checkpoints_carry_the_ledger(pl_job: Job) -> None:
    """The callback's end-of-call .ckpt written under DDP reads back at lifetime step 9."""
    found = latest_checkpoint(pl_job["root"] / "good" / "checkpoints", reader=LIGHTNING)
    assert found is not None
    assert found.checkpoint.progress.batch == 9
    assert [e.finished for e in found.checkpoint.ledger or ()] == [True, True]
