"""The Hugging Face and Lightning profiles against real multi-process runs (``observed_ddp.json``).

Every run that ``record_ddp.py`` recorded is replayed through the profile of its framework
(:mod:`durations.trainers.transformers`, :mod:`durations.trainers.lightning`) with the run's world
size: uninterrupted runs, the runs killed after a checkpoint, every resume of such a kill at the
same and at another world size (each replayed as the killed call followed by the resume), and the
runs whose launcher alone was killed (their orphaned workers trained to the end). For each, the
profile's ids of every optimizer step, dealt to the ranks by the framework's rule, must equal what
every rank recorded, micro-batch by micro-batch; the end counters every rank reported and the
resume messages of rank 0 must equal the profile's.

A profile reports a step's ids as the union over the ranks, in the order of the epoch's padded
sequence; the deal is the framework's (FINDINGS.md, "Multi-process (DDP) runs", H4 and L3):
accelerate deals whole micro-batches round-robin, torch's ``DistributedSampler`` deals samples.

The shuffled orders are torch's ``randperm(n)`` with a generator seeded ``0 + epoch`` (both
frameworks, seed 0), listed in :data:`PERMUTATIONS` so that this module reads JSON only and runs
in the main suite; :func:`test_the_permutations_are_torchs` checks the table against torch where
torch is installed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations.trainers import CallOutcome, Dataset, lightning as pl, transformers as hf

OBSERVED = Path(__file__).with_name("observed_ddp.json")

#: ``torch.randperm(n, generator=torch.Generator().manual_seed(seed))`` (torch 2.13), for the
#: data set sizes ``n`` of the recording and the seeds ``0 + epoch`` of its two epochs.
PERMUTATIONS: dict[tuple[int, int], tuple[int, ...]] = {
    (7, 0): (4, 0, 5, 3, 2, 6, 1),
    (7, 1): (0, 6, 1, 3, 5, 2, 4),
    (20, 0): (4, 5, 13, 19, 7, 14, 3, 6, 9, 17, 11, 2, 16, 18, 10, 12, 15, 8, 1, 0),
    (20, 1): (5, 13, 2, 11, 19, 18, 1, 9, 4, 7, 0, 14, 16, 10, 15, 3, 6, 17, 12, 8),
    (101, 0): (
        64, 40, 58, 75, 59, 32, 68, 98, 96, 8, 61, 67, 11, 84, 42, 97, 87, 89, 76, 20, 91, 60,
        31, 15, 19, 26, 45, 1, 63, 29, 83, 73, 12, 49, 78, 6, 34, 52, 46, 81, 66, 44, 69, 72,
        25, 7, 17, 43, 18, 56, 28, 70, 30, 36, 71, 14, 79, 95, 35, 82, 77, 5, 62, 39, 99, 23,
        94, 57, 51, 22, 65, 48, 41, 2, 37, 54, 10, 50, 33, 38, 55, 100, 9, 90, 27, 92, 74, 85,
        53, 24, 93, 13, 86, 3, 0, 80, 16, 21, 4, 88, 47,
    ),
    (101, 1): (
        23, 40, 29, 55, 59, 78, 47, 54, 82, 65, 63, 50, 44, 84, 51, 67, 28, 62, 70, 21, 80, 74,
        73, 93, 6, 69, 75, 10, 88, 14, 85, 57, 53, 20, 89, 56, 49, 15, 36, 99, 61, 18, 41, 19,
        68, 43, 94, 33, 66, 1, 45, 48, 12, 77, 42, 24, 97, 95, 39, 83, 11, 100, 60, 79, 92, 86,
        8, 7, 96, 0, 3, 46, 72, 26, 81, 58, 91, 37, 38, 17, 31, 25, 5, 64, 34, 87, 90, 4, 52,
        98, 2, 22, 27, 16, 13, 32, 71, 30, 9, 35, 76,
    ),
}  # fmt: skip

#: The messages about resumes and stops the profiles emit and the harness kept: Hugging Face
#: logs them on every rank (rank 0 is compared), Lightning on rank 0 only.
RESUME_MESSAGES = {
    "transformers": ("Resuming training from checkpoint", "Fast-forwarding the dataloader"),
    "lightning": (
        "`Trainer.fit` stopped: ",
        "PossibleUserWarning: You're resuming from a checkpoint that ended before",
    ),
}


def _entries() -> dict[str, dict[str, Any]]:
    if not OBSERVED.exists():
        return {}
    observations: dict[str, dict[str, Any]] = json.loads(OBSERVED.read_text())["observations"]
    return observations


def _runs() -> list[tuple[str, int]]:
    return [(key, index) for key, entry in sorted(_entries().items()) for index in
            range(len(entry["runs"]))]  # fmt: skip


def _params() -> list[Any]:
    """One case per run, named ``<scenario>:<role>@W<world size>``."""
    entries = _entries()
    return [
        pytest.param(key, index, id=f"{key}:{run['role']}@W{run['world_size']}")
        for key, index in _runs()
        for run in [entries[key]["runs"][index]]
    ]


def _dataset(spec: dict[str, Any]) -> Dataset:
    samples = spec["n"]
    return Dataset(samples=samples, orders=[PERMUTATIONS[samples, epoch] for epoch in (0, 1)])


def _hf_call(spec: dict[str, Any], world: int, *, save: bool, **more: Any) -> hf.Call:
    return hf.Call(
        data=_dataset(spec),
        world_size=world,
        per_device_train_batch_size=spec["batch"],
        num_train_epochs=float(spec.get("epochs", 1)),
        max_steps=spec.get("max_steps", -1),
        gradient_accumulation_steps=spec.get("accum", 1),
        train_sampling_strategy="random" if spec.get("shuffle") else "sequential",
        dataloader_drop_last=bool(spec.get("drop_last")),
        save_strategy="steps" if save else "no",
        save_steps=1,
        output_dir="out",
        **more,
    )


def _pl_call(spec: dict[str, Any], world: int, *, save: bool, **more: Any) -> pl.Call:
    epochs = spec.get("epochs", 1)
    assert epochs == int(epochs)
    return pl.Call(
        data=_dataset(spec),
        batch_size=spec["batch"],
        max_epochs=int(epochs),
        max_steps=spec.get("max_steps", -1),
        accumulate_grad_batches=spec.get("accum", 1),
        drop_last=bool(spec.get("drop_last")),
        strategy="ddp",
        world_size=world,
        use_distributed_sampler=not spec.get("own_sampler"),
        save_every=1 if save else None,
        **more,
    )


def replay(key: str, index: int) -> CallOutcome:
    """The profile's outcome for run ``index`` of ``key``: a resume is replayed after the
    killed call it resumes (the job's first run, at its own world size)."""
    entry = _entries()[key]
    spec, run = entry["spec"], entry["runs"][index]
    framework, world, role = entry["framework"], run["world_size"], run["role"]
    if framework == "transformers":
        make: Any = _hf_call
        resume = {"resume_from_checkpoint": True}
        simulate: Any = hf.simulate
    else:
        make, resume, simulate = _pl_call, {"resume_latest": True}, pl.simulate
    calls = [make(spec, world, save=False)]
    if role == "kill_launcher_only":  # the orphaned workers trained on to the end
        calls = [make(spec, world, save=True)]
    elif role != "train":
        crash = entry["runs"][0]
        assert crash["role"] == "crash"
        calls = [make(spec, crash["world_size"], save=True, crash_at=entry["crash_after_step"])]
        if role == "resume":
            calls.append(make(spec, world, save=True, **resume))
    outcomes: tuple[CallOutcome, ...] = simulate(calls)
    return outcomes[-1]


def deal(framework: str, ids: tuple[int, ...], world: int, batch: int) -> list[list[list[int]]]:
    """A step's ids as ``[rank][micro-batch]``: accelerate deals runs of ``batch`` ids
    round-robin (micro-batch m of rank r is run ``m * world + r``); torch's DistributedSampler
    deals ids round-robin (rank r has every ``world``-th id from the r-th), which each rank's
    DataLoader batches by ``batch``."""
    if framework == "transformers":
        runs = [list(ids[i : i + batch]) for i in range(0, len(ids), batch)]
        return [runs[r::world] for r in range(world)]
    mine = [list(ids[r::world]) for r in range(world)]
    return [[stream[i : i + batch] for i in range(0, len(stream), batch)] for stream in mine]


def _recorded_micro(rank: dict[str, Any]) -> list[list[list[int]]]:
    if "micro_batches" in rank:
        return list(rank["micro_batches"])
    return [[batch] for batch in rank["batches"]]


@pytest.mark.parametrize(("key", "index"), _params())
def test_profile_reproduces_the_run(key: str, index: int) -> None:
    """Every rank's ids of every step and micro-batch, the step count, whether the run was
    killed, the end counters and the resume messages are the profile's."""
    entry = _entries()[key]
    spec, run, framework = entry["spec"], entry["runs"][index], entry["framework"]
    world = run["world_size"]
    outcome = replay(key, index)
    ranks = run["ranks"]
    assert outcome.error is None
    assert outcome.crashed == (run["role"] == "crash")
    assert [len(rank["batches"]) for rank in ranks] == [outcome.steps] * world
    dealt = [deal(framework, step, world, spec["batch"]) for step in outcome.batches]
    for r, rank in enumerate(ranks):
        assert _recorded_micro(rank) == [step[r] for step in dealt], (key, run["role"], r)
        assert not rank.get("pending_micro_batches")
    for rank in ranks:
        if rank["end"] is not None:
            assert _counters(framework, rank["end"]) == _profile_counters(framework, outcome)
    wanted = RESUME_MESSAGES[framework]
    recorded = [m for m in ranks[0].get("logs", []) + ranks[0].get("warnings", [])
                if m.startswith(wanted)]  # fmt: skip
    emitted = [m for m in outcome.messages if m.startswith(wanted)]
    if run["role"] != "crash":
        assert Counter(recorded) == Counter(emitted), key


def _counters(framework: str, end: dict[str, Any]) -> dict[str, Any]:
    if framework == "transformers":
        return {name: end[name] for name in ("global_step", "epoch", "max_steps",
                                             "num_train_epochs")}  # fmt: skip
    return {
        "global_step": end["global_step"],
        "current_epoch": end["current_epoch"],
        "batch_progress_current_completed": end["batch_progress"]["completed"],
        "num_training_batches": end["num_training_batches"],
    }


def _profile_counters(framework: str, outcome: CallOutcome) -> dict[str, Any]:
    counters = dict(outcome.counters)
    if framework == "transformers":
        epoch = counters["epoch"]
        assert isinstance(epoch, float | int)
        return {**counters, "epoch": round(epoch, 6)}
    return {name: counters[name] for name in ("global_step", "current_epoch",
            "batch_progress_current_completed", "num_training_batches")}  # fmt: skip


def test_every_run_is_replayed() -> None:
    """All runs of the recording are replayed: fresh, killed, resumed at the same and at
    another world size, and a launcher killed alone; both frameworks, 1 to 3 processes."""
    runs = _runs()
    if not runs:
        pytest.skip("no recording: run python -m tests.frameworks.record_ddp")
    entries = _entries()
    assert len(runs) == sum(len(entry["runs"]) for entry in entries.values())
    roles = Counter(entries[key]["runs"][index]["role"] for key, index in runs)
    assert set(roles) == {"train", "crash", "resume", "kill_launcher_only"}
    elastic = {
        (entries[key]["framework"], entries[key]["runs"][0]["world_size"], run["world_size"])
        for key, index in runs
        for run in [entries[key]["runs"][index]]
        if run["role"] == "resume"
    }
    for framework in ("transformers", "lightning"):
        assert {(framework, 2, 2), (framework, 2, 3), (framework, 2, 1), (framework, 3, 2)} <= (
            elastic
        )


def test_the_permutations_are_torchs() -> None:
    """The table of shuffled orders is what torch draws (where torch is installed)."""
    torch = pytest.importorskip("torch")
    for (samples, seed), order in PERMUTATIONS.items():
        generator = torch.Generator()
        generator.manual_seed(seed)
        assert tuple(torch.randperm(samples, generator=generator).tolist()) == order


def test_shuffled_orders_do_not_depend_on_the_world_size() -> None:
    """One process reads the epoch's order as it is: the recorded one-process runs of both
    frameworks read PERMUTATIONS[101, 0] then PERMUTATIONS[101, 1] (so the table is the order
    the recorded jobs drew, not only torch's)."""
    entries = _entries()
    if not entries:
        pytest.skip("no recording")
    for key in ("hf/w1_n101_b10_shuf_e2", "pl/w1_n101_b10_shuf_e2"):
        (rank,) = entries[key]["runs"][0]["ranks"]
        read = [i for batch in rank["batches"] for i in batch]
        assert read == [*PERMUTATIONS[101, 0], *PERMUTATIONS[101, 1]], key
