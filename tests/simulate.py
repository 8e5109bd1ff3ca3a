"""A deliberately naive, step-by-step model of a training loop, written independently of the
closed-form code in ``durations``: the tests check the library against it on small loaders."""

from __future__ import annotations

from fractions import Fraction

from durations import Loader, Progress, Time, Unit


def rank_reads(sample_in_epoch: int, loader: Loader) -> list[list[int]]:
    """What each rank of a sharded loader reads in the next optimizer step, from data position
    ``sample_in_epoch``: lists of places in the epoch's order, modelled literally on torch's
    ``DistributedSampler`` (pad or cut the rest, then ``rest[rank::world_size]``) or on
    accelerate's even batches (cycle to whole rounds), each rank's ``DataLoader`` batching its
    share (dropping an incomplete micro-batch under ``drop_last``), and ``accumulation``
    micro-batches per step. An empty list per rank: the epoch is over."""
    sharding = loader.sharding
    assert sharding is not None
    assert loader.samples is not None
    rest = list(range(sample_in_epoch, loader.samples))
    world, micro = sharding.world_size, sharding.device_batch_size
    if rest and sharding.padding.value == "cycle" and loader.drop_last:
        # accelerate: the batch sampler drops the short batch, the shard the short round.
        rest = rest[: len(rest) - len(rest) % (world * micro)]
    elif rest and world > 1:  # one process is not sharded (accelerate leaves it alone)
        if sharding.padding.value == "drop":
            rest = rest[: len(rest) - len(rest) % world]
        else:
            multiple = world if sharding.padding.value == "repeat" else world * micro
            order = list(range(loader.samples))
            while len(rest) % multiple:
                rest.append(order[(len(rest) + sample_in_epoch - loader.samples) % len(order)])
    reads = []
    for rank in range(world):
        share = rest[rank::world]
        batches = [share[i : i + micro] for i in range(0, len(share), micro)]
        if loader.drop_last and batches and len(batches[-1]) < micro:
            batches.pop()
        reads.append([place for batch in batches[: sharding.accumulation] for place in batch])
    return reads


def _next_step_size(sample_in_epoch: int, loader: Loader) -> int:
    """Samples the next step reads in the current epoch (0: the epoch is over)."""
    assert loader.samples is not None
    if loader.sharding is not None:
        return sum(len(read) for read in rank_reads(sample_in_epoch, loader))
    left = loader.samples - sample_in_epoch
    if left <= 0 or (loader.drop_last and left < loader.batch_size):
        return 0
    return min(loader.batch_size, left)


def _epoch_is_exhausted(sample_in_epoch: int, loader: Loader) -> bool:
    if loader.samples is None:
        return False
    return _next_step_size(sample_in_epoch, loader) == 0


def _close(p: Progress) -> Progress:
    return Progress(
        epoch=p.epoch + 1,
        batch=p.batch,
        sample=p.sample,
        token=p.token,
        batch_in_epoch=0,
        sample_in_epoch=0,
        token_in_epoch=None if p.token is None else 0,
    )


def normalize(p: Progress, loader: Loader) -> Progress:
    if p.sample_in_epoch > 0 and _epoch_is_exhausted(p.sample_in_epoch, loader):
        return _close(p)
    return p


def one_step(p: Progress, loader: Loader) -> Progress:
    """Train one batch: read up to ``batch_size`` samples; close the epoch when it runs out."""
    p = normalize(p, loader)
    size = loader.batch_size
    if loader.samples is not None:
        size = _next_step_size(p.sample_in_epoch, loader)
    tokens = None
    if p.token is not None and loader.tokens_per_sample is not None:
        tokens = size * loader.tokens_per_sample
    after = Progress(
        epoch=p.epoch,
        batch=p.batch + 1,
        sample=p.sample + size,
        token=None if tokens is None or p.token is None else p.token + tokens,
        batch_in_epoch=p.batch_in_epoch + 1,
        sample_in_epoch=p.sample_in_epoch + size,
        token_in_epoch=(
            None if tokens is None or p.token_in_epoch is None else p.token_in_epoch + tokens
        ),
    )
    if _epoch_is_exhausted(after.sample_in_epoch, loader):
        after = _close(after)
    return after


def run(p: Progress, loader: Loader, steps: int) -> Progress:
    for _ in range(steps):
        p = one_step(p, loader)
    return p


def reached(p: Progress, target: Time, loader: Loader, since: Progress) -> bool:
    """Whether the counters are at or past ``target`` on the clock that started at ``since``."""
    if target.unit is Unit.BA:
        return p.batch - since.batch >= target.value
    if target.unit is Unit.SP:
        return p.sample - since.sample >= target.value
    if target.unit is Unit.TOK:
        assert p.token is not None
        assert since.token is not None
        return p.token - since.token >= target.value
    assert target.unit is Unit.EP
    assert loader.samples is not None
    inside = min(p.sample_in_epoch, loader.samples)  # padding reads no further into the data
    return p.epoch - since.epoch + Fraction(inside, loader.samples) >= target.value


def steps_until(p: Progress, target: Time, loader: Loader, since: Progress, limit: int) -> int:
    """Count steps one at a time until ``target`` is reached (at most ``limit``)."""
    p = normalize(p, loader)
    steps = 0
    while not reached(p, target, loader, since):
        assert steps < limit, "brute force did not reach the target"
        p = one_step(p, loader)
        steps += 1
    return steps
