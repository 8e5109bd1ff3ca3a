"""The plan of a data-parallel loader against real multi-process runs (``observed_ddp.json``,
recorded by ``record_ddp.py``): for every uninterrupted run of Hugging Face (torchrun) and
Lightning (``strategy="ddp"``) on 1 to 3 processes, the plan trains as many steps, reads as many
samples, and each step reads exactly the samples the ranks read (semantics.md rule 17).

Reads the recording only: no framework is imported, so this runs in the main suite too.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from durations import FitCall, Loader, RunConfig, Time, Unit, plan

OBSERVED = Path(__file__).with_name("observed_ddp.json")

#: How each framework evens its ranks (docs/multi-device.md): accelerate's even_batches for
#: Hugging Face's Trainer, torch's DistributedSampler(drop_last=False) for Lightning.
PADDING = {"transformers": "cycle", "lightning": "repeat"}


def _fresh_runs() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    if not OBSERVED.exists():
        return []
    observations = json.loads(OBSERVED.read_text())["observations"]
    return [
        (key, entry, run)
        for key, entry in sorted(observations.items())
        for run in entry["runs"]
        if run["role"] == "train"
    ]


def _order(framework: str, ranks: list[dict[str, Any]], world: int) -> list[int]:
    """The epoch's sequence of places, rebuilt from what the ranks read: Lightning's
    DistributedSampler deals samples round-robin (rank r has positions r, r + W, ...);
    accelerate deals whole micro-batches round-robin (rank r has batches r, r + W, ...)."""
    micro = [_micro_batches(rank) for rank in ranks]
    if framework == "transformers":
        rounds = zip(*micro, strict=False)
        return [place for batches in rounds for batch in batches for place in batch]
    streams = [[place for batch in batches for place in batch] for batches in micro]
    length = max(len(s) for s in streams)
    return [s[i] for i in range(length) for s in streams if i < len(s)]


def _micro_batches(rank: dict[str, Any]) -> list[list[int]]:
    if "micro_batches" in rank:
        return [batch for step in rank["micro_batches"] for batch in step]
    return list(rank["batches"])


@pytest.mark.parametrize(
    ("key", "entry", "run"), _fresh_runs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_plan_reads_what_the_ranks_read(
    key: str, entry: dict[str, Any], run: dict[str, Any]
) -> None:
    """Steps, samples and the samples of every step equal the recorded run's, over all ranks."""
    spec, world, framework = entry["spec"], run["world_size"], entry["framework"]
    loader = Loader.sharded(
        samples=spec["n"],
        world_size=world,
        device_batch_size=spec["batch"],
        accumulation=spec.get("accum", 1),
        padding=PADDING[framework],
        drop_last=spec.get("drop_last", False),
        name="data",
    )
    epochs = Fraction(str(spec.get("epochs", 1)))
    p = plan(RunConfig(), [FitCall(loader=loader, until=Time(epochs, Unit.EP))])
    ranks = run["ranks"]
    steps = [len(rank["batches"]) for rank in ranks]
    assert steps == [p.total_steps] * world, key
    read = sum(len(ids) for rank in ranks for step in rank["batches"] for ids in [step])
    assert read == p.stop.sample, key

    # Rebuild each epoch's order from the ranks, then compare every step's block with it.
    reads = list(p.segments[0].reads())
    by_epoch: dict[int, list[int]] = {}
    for index, block in enumerate(reads):
        by_epoch.setdefault(block.epoch, []).append(index)
    for epoch, indices in by_epoch.items():
        epoch_ranks = [
            {"batches": [rank["batches"][i] for i in indices]}
            | ({"micro_batches": [rank["micro_batches"][i] for i in indices]}
               if "micro_batches" in rank else {})
            for rank in ranks
        ]  # fmt: skip
        order = _order(framework, epoch_ranks, world)
        samples = spec["n"]
        # Past the data's end the sequence reads its start again (rule 17).
        assert all(order[q] == order[q - samples] for q in range(samples, len(order))), key
        if not spec.get("drop_last") and epochs >= epoch + 1:
            assert sorted(set(order)) == list(range(samples)), key  # every sample read
        for index in indices:
            block = reads[index]
            want = Counter(order[q] for q in range(block.start, block.stop))
            got = Counter(place for rank in ranks for place in rank["batches"][index])
            assert got == want, (key, index)


def test_the_recording_covers_the_grid() -> None:
    """Both frameworks, 2 and 3 processes, 7 and 101 samples, drop_last and accumulation."""
    runs = _fresh_runs()
    if not runs:
        pytest.skip("no recording: run python -m tests.frameworks.record_ddp")
    seen = {(e["framework"], r["world_size"], e["spec"]["n"]) for _, e, r in runs}
    for framework in PADDING:
        for world in (2, 3):
            for samples in (7, 101):
                assert (framework, world, samples) in seen
    assert any(e["spec"].get("drop_last") and e["spec"].get("accum") for _, e, _ in runs)
