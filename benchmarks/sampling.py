"""Figure 10: the data order's sampler against torch's ``DistributedSampler``, per index.

One rank of two iterates a whole epoch of a million samples: torch's ``DistributedSampler``
(``set_epoch``, then its ``torch.randperm`` order dealt ``rank::2``), and
``durations.integrations.torch.OrderSampler`` with a shuffled and a sequential order (the
keyed permutation worked out a chunk at a time on int64 tensors), and ``DealtOrderSampler``,
every rank's micro-batches in turn (what each rank of a Hugging Face job iterates, accelerate
keeping its own; timed per index it yields). Building each sampler is
timed apart, on a 1,000-sample and a 10**12-sample data set: the order is a function, so
building it does not grow with the epoch.
"""

from __future__ import annotations

import importlib
import statistics
from typing import Any

from ._context import Context
from ._harness import Contender, Figure, Goal, measure

SAMPLES = 1_000_000
WORLD = 2


def _iterate(sampler: Any, epoch: int = 3) -> Any:
    def run(repeat: int) -> object:
        for _ in range(repeat):
            sampler.set_epoch(epoch)
            for _ in sampler:
                pass
        return None

    return run


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="sampling",
        title="Figure 10: the data order's sampler against torch's DistributedSampler",
        unit="per index",
        baseline="torch",
    )
    try:
        data = importlib.import_module("torch.utils.data")
        adapter = importlib.import_module("durations.integrations.torch")
    except ImportError as error:
        figure.skipped.append(f"torch is not importable ({error}): run with the frameworks' Python")
        figure.goals.append(
            Goal("no more than 2x torch's DistributedSampler per index", None, "skipped")
        )
        return figure
    from durations import Loader, Order

    samples = ctx.settings.pick(SAMPLES, 20_000)
    per_rank = samples // WORLD
    job = Loader.sharded(samples=samples, world_size=WORLD, device_batch_size=8, name="a")
    torch_sampler = data.DistributedSampler(
        range(samples), num_replicas=WORLD, rank=0, shuffle=True, seed=1
    )
    shuffled = adapter.OrderSampler(Order.shuffled(seed=1), job, rank=0)
    sequential = adapter.OrderSampler(Order.sequential(), job, rank=0)
    cycled = Loader.sharded(
        samples=samples, world_size=WORLD, device_batch_size=8, padding="cycle", name="a"
    )
    dealt = adapter.DealtOrderSampler(Order.shuffled(seed=1), cycled)
    contenders = [
        Contender(
            "torch",
            f"torch: DistributedSampler(shuffle=True), one rank of {WORLD}, an epoch of "
            f"{samples:,}",
            _iterate(torch_sampler),
            1,
            ops=per_rank,
        ),
        Contender(
            "shuffled",
            "durations: OrderSampler(Order.shuffled(seed)), the same rank and epoch",
            _iterate(shuffled),
            1,
            ops=per_rank,
        ),
        Contender(
            "sequential",
            "durations: OrderSampler(Order.sequential()), the same rank and epoch",
            _iterate(sequential),
            1,
            ops=per_rank,
        ),
        Contender(
            "dealt",
            "durations: DealtOrderSampler(Order.shuffled(seed)), every rank's indices of the "
            "same epoch",
            _iterate(dealt),
            1,
            ops=len(dealt),
        ),
    ]
    rounds = ctx.settings.pick(7, 2)
    measure(figure, contenders, rounds=rounds)

    def build(size: int) -> Contender:
        def make(repeat: int) -> object:
            loader = Loader.sharded(samples=size, world_size=WORLD, device_batch_size=8)
            for _ in range(repeat):
                adapter.OrderSampler(Order.shuffled(seed=1), loader, rank=0).set_epoch(5)
            return None

        return Contender(
            f"build-{size}", f"build OrderSampler + set_epoch, {size:,} samples", make, 200
        )

    built = Figure(key="x", title="", unit="", baseline="build-1000")
    build_samples = measure(built, [build(1_000), build(10**12)], rounds=ctx.settings.pick(9, 2))
    growth = statistics.median(
        big / small
        for big, small in zip(
            build_samples[f"build-{10**12}"], build_samples["build-1000"], strict=True
        )
    )
    ratio = figure.get("shuffled").ratio
    small = statistics.median(build_samples["build-1000"]) * 1e6
    figure.notes.append(
        f"{rounds} rounds, interleaved; ratio = median over rounds of contender / torch. "
        f"Building a sampler and setting its epoch: {small:.3g} us "
        f"for 1,000 samples, {growth:.3g}x that for 10**12 (torch's draws the whole permutation "
        "at every epoch's start)."
    )
    assessed = not ctx.settings.quick
    figure.goals.append(
        Goal(
            "iterating the sampler costs no more than 2x torch's DistributedSampler per index",
            (ratio is not None and ratio <= 2) if assessed else None,
            f"shuffled / torch = {ratio:.3g}x" if ratio is not None else "no ratio",
        )
    )
    dealt_ratio = figure.get("dealt").ratio
    figure.goals.append(
        Goal(
            "the dealt sampler (Hugging Face's) costs no more than 2x torch's per index",
            (dealt_ratio is not None and dealt_ratio <= 2) if assessed else None,
            f"dealt / torch = {dealt_ratio:.3g}x" if dealt_ratio is not None else "no ratio",
        )
    )
    figure.goals.append(
        Goal(
            "building it is O(1) in the epoch length",
            growth <= 1.5 if assessed else None,
            f"building for 10**12 samples / for 1,000 = {growth:.3g}x",
        )
    )
    figure.extra["build_growth"] = growth
    return figure
