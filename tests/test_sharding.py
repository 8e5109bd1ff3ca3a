"""Data-parallel loaders (semantics.md rules 17 and 18): the geometry of an evened epoch, the
plan's reads against a literal model of the ranks, and elastic resume across world sizes."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, strategies as st

from durations import FitCall, GeometryError, Loader, Progress, RunConfig, Sharding, plan
from durations.sharding import Padding, sample_at
from durations.testing import expected_steps

from . import simulate
from .strategies import sharded_loaders

# (samples, world_size, device_batch_size, accumulation, padding, drop_last,
#  steps_per_epoch, positions read per epoch, repeated, dropped) and why
GEOMETRIES = [
    # torch pads 101 to 102 for 2 ranks: 51 each, micro-batches 10,10,10,10,10,1.
    (101, 2, 10, 1, "repeat", False, 6, 102, 1, 0),
    # 3 ranks: 101 -> 102 (34 each): 10,10,10,4 per rank; the last step reads 12.
    (101, 3, 10, 1, "repeat", False, 4, 102, 1, 0),
    # each rank drops its short micro-batch of 4: 3 rounds of 30 are read.
    (101, 3, 10, 1, "repeat", True, 3, 90, 0, 11),
    # DistributedSampler(drop_last=True): 101 -> 99 (33 each), short micro-batches kept.
    (101, 3, 10, 1, "drop", False, 4, 99, 0, 2),
    # accelerate's even batches: whole rounds of 20, so 120 positions, samples 0-18 twice.
    (101, 2, 10, 1, "cycle", False, 6, 120, 19, 0),
    # accelerate with drop_last: batch [100] dropped, then no incomplete round: 5 rounds.
    (101, 2, 10, 1, "cycle", True, 5, 100, 0, 1),
    # 7 samples, batches of 2 on 2 ranks with drop_last: [6] dropped, then the round [4,5].
    (7, 2, 2, 1, "cycle", True, 1, 4, 0, 3),
    # 7 samples on 3 ranks of 2, cycled to 12: more than half of the data read twice.
    (7, 3, 2, 1, "cycle", False, 2, 12, 5, 0),
    # 7 samples on 3 ranks padded to 9 (3 each): micro-batches 2,1; 2 steps of 6 and 3.
    (7, 3, 2, 1, "repeat", False, 2, 9, 2, 0),
    # 3 samples on 4 ranks: padding longer than the data reads it again (0,1,2,0... -> 4).
    (3, 4, 1, 1, "repeat", False, 1, 4, 1, 0),
    # gradient accumulation: 6 micro-batches of 20 positions per rank pair, 2 per step; the
    # last group holds one micro-batch of 2 (51 per rank = 10*5 + 1): 3 steps.
    (101, 2, 10, 2, "repeat", False, 3, 102, 1, 0),
    # a divisible data set: nothing evened.
    (20, 2, 10, 1, "repeat", False, 1, 20, 0, 0),
    # one process: nothing to even, whatever the padding (accelerate shards no single process).
    (101, 1, 10, 1, "cycle", False, 11, 101, 0, 0),
    (101, 1, 10, 1, "drop", True, 10, 100, 0, 1),
]


@pytest.mark.parametrize(
    ("samples", "world", "micro", "acc", "padding", "drop", "steps", "read", "rep", "dropped"),
    GEOMETRIES,
)
def test_geometry_table(
    samples: int,
    world: int,
    micro: int,
    acc: int,
    padding: str,
    drop: bool,
    steps: int,
    read: int,
    rep: int,
    dropped: int,
) -> None:
    """Each row: steps and positions of one epoch, and what evening repeats or drops."""
    loader = Loader.sharded(
        samples=samples,
        world_size=world,
        device_batch_size=micro,
        accumulation=acc,
        padding=padding,
        drop_last=drop,
    )
    assert (loader.steps_per_epoch, loader.samples_per_epoch) == (steps, read)
    assert loader.batch_size == world * micro * acc
    sharding = loader.sharding
    assert sharding is not None
    tail = sharding.tail(samples=samples, position=0, drop_last=drop)
    assert (tail.repeated, tail.dropped) == (rep, dropped)
    assert read == samples + rep - dropped


@given(st.integers(1, 40).flatmap(lambda n: sharded_loaders(samples=n)), st.integers(0, 30))
def test_plan_reads_what_the_ranks_read(loader: Loader, steps: int) -> None:
    """Every step of a plan reads one contiguous block of positions, and the places it names
    are exactly what a literal model of the ranks (sampler, per-rank loader) reads."""
    p = plan(RunConfig(), [FitCall(loader=loader, until=f"{steps}ba")])
    assert loader.samples is not None
    position = Progress()
    for read, record in zip(p.segments[0].reads(), expected_steps(p), strict=True):
        position = simulate.normalize(position, loader)
        assert read.start == position.sample_in_epoch
        ranks = simulate.rank_reads(position.sample_in_epoch, loader)
        assert record.samples == tuple(sorted(place for rank in ranks for place in rank))
        assert len({len(rank) for rank in ranks} - {0}) <= 1 or loader.drop_last is False
        position = simulate.one_step(position, loader)


@given(
    st.integers(1, 40).flatmap(lambda n: sharded_loaders(samples=n)),
    st.integers(1, 4),
    st.data(),
)
def test_elastic_resume_reads_each_sample_as_tails_say(
    loader: Loader, new_world: int, data: st.DataObject
) -> None:
    """Rule 18: crash inside an epoch on W ranks, resume on W': over that epoch every sample
    is read once, plus the repeats and less the drops that ``Segment.tails`` names."""
    try:
        resumed_loader = loader.with_world_size(new_world)
    except GeometryError:
        return
    config = RunConfig(max_duration="1ep")
    original = plan(config, [FitCall(loader=loader)])
    k = data.draw(st.integers(0, original.total_steps))
    resumed = plan(config, [FitCall(loader=resumed_loader)], original.checkpoint_at(k))
    assert loader.samples is not None
    places: Counter[int] = Counter()
    for record in expected_steps(original)[:k]:
        places.update(record.samples)
    segment = resumed.segments[0]
    for read in segment.reads():
        places.update(sample_at(q, loader.samples) for q in range(read.start, read.stop))
    # The call that read the epoch's end is the one whose tails say how it was evened.
    closer = original.segments[0] if k == original.total_steps else segment
    repeated = sum(t.repeated for t in closer.tails if t.first == 0)
    dropped = sum(t.dropped for t in closer.tails if t.first == 0)
    assert sum(places.values()) == loader.samples + repeated - dropped
    assert resumed.stop.epoch == 1
    if not dropped:
        assert set(places) == set(range(loader.samples))  # nothing skipped
    assert max(places.values()) <= 1 + -(-repeated // loader.samples)


@given(st.integers(1, 40).flatmap(lambda n: sharded_loaders(samples=n)), st.integers(1, 4))
def test_fractional_epoch_is_a_fraction_of_the_data(loader: Loader, world: int) -> None:
    """Rule 17: ``0.5ep`` stops at the first step boundary where half the data is read, at
    any world size: the step before it had read less than half."""
    try:
        loader = loader.with_world_size(world)
    except GeometryError:
        return
    assert loader.samples is not None
    p = plan(RunConfig(), [FitCall(loader=loader, until="0.5ep")])
    stop = p.stop
    assert stop.epoch >= 1 or 2 * min(stop.sample_in_epoch, loader.samples) >= loader.samples
    if p.total_steps:
        before = p.progress_at(p.total_steps - 1)
        assert before.epoch == 0
        assert 2 * min(before.sample_in_epoch, loader.samples) < loader.samples


def test_world_size_change_is_said_before_the_first_step() -> None:
    """An elastic resume names the world-size change and the samples its padding repeats."""
    job = Loader.sharded(samples=101, world_size=2, device_batch_size=10, name="a")
    at3 = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)]).checkpoint_at(3)
    resumed = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job.with_world_size(4))], at3)
    messages = {d.code: d.message for d in resumed.diagnostics}
    assert messages["world-size-changed"] == (
        "2 -> 4 data-parallel ranks: the rest of epoch 0 from sample 60 is evened for 4 ranks"
    )
    assert messages["data-repeated"] == (
        "4 data-parallel ranks are kept even (repeat padding, 10 per device): "
        "samples 0-2 read again in epoch 0 (positions in the epoch's order)"
    )


def test_world_size_change_is_said_when_the_global_batch_stays() -> None:
    """2 ranks of 10 -> 4 ranks of 5: the same global batch, but the evening moves (101 pads to
    102 on 2 ranks, to 104 on 4): world-size-changed is said, batch-size-changed is not."""
    job = Loader.sharded(samples=101, world_size=2, device_batch_size=10, name="a")
    other = Loader.sharded(samples=101, world_size=4, device_batch_size=5, name="a")
    at3 = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)]).checkpoint_at(3)
    resumed = plan(RunConfig(max_duration="1ep"), [FitCall(loader=other)], at3)
    codes = [d.code for d in resumed.diagnostics]
    assert codes == ["world-size-changed", "data-repeated"]
    assert resumed.stop.sample == 104


# (arguments, the field named, the reason) for loaders Loader.sharded refuses
INVALID = [
    ({"world_size": 0}, "world_size", "expected a whole number > 0, got 0"),
    ({"world_size": True}, "world_size", "expected a whole number > 0, got True"),  # not 1
    ({"device_batch_size": 2.0}, "device_batch_size", "expected a whole number > 0, got 2.0"),
    ({"accumulation": -1}, "accumulation", "expected a whole number > 0, got -1"),
    (
        {"padding": "pad"},
        "padding",
        "expected one of 'repeat', 'drop', 'cycle', got 'pad'",
    ),
    (
        # 3 samples on 4 ranks of 2 with drop_last: every rank's only micro-batch is short.
        {"samples": 3, "world_size": 4, "device_batch_size": 2, "drop_last": True},
        "samples",
        "3 samples on 4 ranks of 2 (repeat padding, drop_last=True) train nothing in an epoch",
    ),
    (
        # fewer samples than ranks under DistributedSampler(drop_last=True): nothing is left.
        {"samples": 3, "world_size": 4, "padding": "drop"},
        "samples",
        "3 samples on 4 ranks of 10 (drop padding, drop_last=False) train nothing",
    ),
]


@pytest.mark.parametrize(("changes", "field", "reason"), INVALID)
def test_invalid_geometry(changes: dict[str, object], field: str, reason: str) -> None:
    """Each impossible data-parallel geometry is refused, naming the field and the fix."""
    arguments: dict[str, object] = {"samples": 101, "world_size": 2, "device_batch_size": 10}
    with pytest.raises(GeometryError) as info:
        Loader.sharded(**{**arguments, **changes})  # type: ignore[arg-type]
    assert info.value.field == field
    assert reason in str(info.value)


def test_batch_size_must_match_the_sharding() -> None:
    """A hand-built loader whose global batch contradicts its sharding is refused."""
    sharding = Sharding(world_size=2, device_batch_size=10)
    with pytest.raises(GeometryError, match=r"batch_size is world_size x .* = 20, got 16"):
        Loader(samples=101, batch_size=16, sharding=sharding)


def test_a_sharded_loader_changes_its_batch_through_its_geometry() -> None:
    """with_batch_size would hide which per-device number changed: it is refused."""
    job = Loader.sharded(samples=101, world_size=2, device_batch_size=10)
    with pytest.raises(GeometryError, match="change one of them"):
        job.with_batch_size(40)
    with pytest.raises(GeometryError, match="no per-device geometry"):
        Loader(samples=101, batch_size=20).with_world_size(2)


def test_same_stream_ignores_the_devices() -> None:
    """The data is the same on any number of devices: one stream, so the position carries."""
    job = Loader.sharded(samples=101, world_size=2, device_batch_size=10, name="a")
    assert job.same_stream(job.with_world_size(3))
    assert job.same_stream(Loader(samples=101, batch_size=7, name="a"))
    assert Padding.parse("cycle") is Padding.CYCLE
