"""``durations.integrations.torch.OrderSampler``: the plan's data order as a torch sampler, on
any world size, and resumed from a state saved on another (semantics.md, rule 19). Needs
torch (the frameworks environment)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from durations import FitCall, Loader, Order, RunConfig, plan
from durations.integrations.torch import IntegrationError, OrderSampler, _permuted
from durations.order import Permutation, step_indices

torch = pytest.importorskip("torch")

ORDERS = [Order.sequential(), Order.shuffled(seed=5)]


def _job(world: int, device: int, samples: int = 23, **kwargs: object) -> Loader:
    return Loader.sharded(
        samples=samples, world_size=world, device_batch_size=device, name="a", **kwargs
    )


@pytest.mark.parametrize("samples", [1, 2, 3, 7, 16, 17, 100, 1_000, 4_097, 65_536, 99_991])
def test_the_tensor_permutation_is_the_core_s(samples: int) -> None:
    """The int64 tensor arithmetic gives the core's indices exactly, whole epochs of small
    sizes for several keys (cycle walking included)."""
    for seed, epoch in ((0, 0), (5, 3), (2**64 - 1, 2**63)):
        core = Permutation(samples, seed, epoch)
        places = torch.arange(samples, dtype=torch.int64)
        assert _permuted(core, places).tolist() == list(core)


def test_the_tensor_permutation_of_a_huge_epoch_is_the_core_s() -> None:
    """Places drawn from epochs of up to 2**62 samples: the same index on a tensor as in
    Python's ints (every intermediate stays under 2**62, so int64 is exact)."""
    rng = random.Random(0)
    for samples in (10**9, 10**12 + 7, 2**61 + 1, 2**62):
        core = Permutation(samples, rng.getrandbits(64), rng.getrandbits(20))
        places = [rng.randrange(samples) for _ in range(300)]
        tensor = _permuted(core, torch.tensor(places, dtype=torch.int64)).tolist()
        assert tensor == [core[p] for p in places]


@pytest.mark.parametrize("order", ORDERS, ids=str)
@pytest.mark.parametrize(
    ("world", "device", "kwargs"),
    [
        (1, 4, {}),
        (2, 2, {}),
        (3, 2, {}),
        (3, 2, {"padding": "drop"}),
        (2, 3, {"padding": "cycle"}),
        (2, 2, {"accumulation": 2, "drop_last": True}),
    ],
)
def test_each_rank_reads_what_the_plan_names(
    order: Order, world: int, device: int, kwargs: dict[str, object]
) -> None:
    """Over two epochs, each rank's sampler yields, in order, the indices step_indices names
    for it at every step of the plan (set_epoch between epochs, as frameworks call it)."""
    job = _job(world, device, **kwargs)
    run = plan(RunConfig(max_duration="2ep"), [FitCall(loader=job)])
    per_epoch = run.total_steps // 2
    for rank in range(world):
        sampler = OrderSampler(order, job, rank=rank)
        for epoch in (0, 1):
            sampler.set_epoch(epoch)
            expected = [
                i
                for k in range(epoch * per_epoch + 1, (epoch + 1) * per_epoch + 1)
                for i in step_indices(run, k, order=order, rank=rank)
            ]
            assert len(sampler) == len(expected)
            assert list(sampler) == expected


@pytest.mark.parametrize("order", ORDERS, ids=str)
@pytest.mark.parametrize("before", [(2, 2), (3, 1), (1, 4)])
@pytest.mark.parametrize("after", [(3, 2), (1, 3), (2, 2), (4, 1)])
def test_a_state_saved_on_one_world_size_resumes_on_another(
    order: Order, before: tuple[int, int], after: tuple[int, int]
) -> None:
    """Every rank reads its share of the first k steps on one geometry; the state of any rank
    (the same global position on each) is loaded into the samplers of another geometry: their
    reads are the resumed plan's, and the epoch, over both, reads every sample once plus the
    resumed ranks' padding."""
    config = RunConfig(max_duration="1ep")
    first = plan(config, [FitCall(loader=_job(*before))])
    for k in range(1, first.total_steps):
        states, read = [], Counter[int]()
        for rank in range(before[0]):
            sampler = OrderSampler(order, _job(*before), rank=rank)
            batches = iter(sampler)
            for _ in range(k * before[1]):  # k steps of device_batch_size each
                read[next(batches)] += 1
            states.append(sampler.state_dict())
        assert all(state == states[0] for state in states)
        resumed = plan(config, [FitCall(loader=_job(*after))], first.checkpoint_at(k))
        for rank in range(after[0]):
            sampler = OrderSampler(order, _job(*after), rank=rank)
            sampler.load_state_dict(states[0])
            got = list(sampler)
            expected = [
                i
                for step in range(1, resumed.total_steps + 1)
                for i in step_indices(resumed, step, order=order, rank=rank)
            ]
            assert got == expected
            read.update(got)
        repeated = sum(t.repeated for t in resumed.segments[0].tails)
        padded = [order.index(samples=23, epoch=0, position=23 + q) for q in range(repeated)]
        assert read == Counter(range(23)) + Counter(padded)


def test_start_at_the_plan_s_position() -> None:
    """start_at(plan.start) of a resumed plan reads what the plan's steps name."""
    order = Order.shuffled(seed=2)
    config = RunConfig(max_duration="2ep")
    first = plan(config, [FitCall(loader=_job(2, 2))])
    resumed = plan(config, [FitCall(loader=_job(3, 2))], first.checkpoint_at(4))
    sampler = OrderSampler(order, _job(3, 2), rank=1)
    sampler.start_at(resumed.start)
    steps = [k for k in range(1, resumed.total_steps + 1) if resumed.progress_at(k - 1).epoch == 0]
    assert list(sampler) == [
        i for k in steps for i in step_indices(resumed, k, order=order, rank=1)
    ]
    assert sampler.epoch == 1  # it goes on with the next epoch


def test_it_is_a_data_loader_s_sampler() -> None:
    """In a torch DataLoader of a map-style data set, batches of device_batch_size are the
    rank's micro-batches, in the plan's order."""
    from torch.utils.data import DataLoader

    job = _job(2, 3)
    order = Order.shuffled(seed=9)
    run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)])
    loader = DataLoader(list(range(23)), batch_size=3, sampler=OrderSampler(order, job, rank=1))
    got = [batch.tolist() for batch in loader]
    expected = [step_indices(run, k, order=order, rank=1) for k in range(1, run.total_steps + 1)]
    assert [i for b in got for i in b] == [i for s in expected for i in s]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        # Reason: another seed orders the epoch otherwise: the position would read other samples.
        (
            {"epoch": 0, "position": 4, "order": {"shuffle": True, "seed": 6}, "samples": 23},
            "the saved sampler state is of order {'shuffle': True, 'seed': 6} (this sampler's: "
            "{'shuffle': True, 'seed': 5})",
        ),
        # Reason: a data set that changed length is another epoch.
        (
            {"epoch": 0, "position": 4, "order": {"shuffle": True, "seed": 5}, "samples": 24},
            "the saved sampler state is of a data set of 24 samples (this one has 23)",
        ),
        # Reason: a position is a whole number.
        (
            {"epoch": 0, "position": -4, "order": {"shuffle": True, "seed": 5}, "samples": 23},
            "the saved sampler state's position is -4: expected a whole number from 0 to",
        ),
    ],
)
def test_a_state_of_another_order_is_refused(state: dict[str, object], message: str) -> None:
    sampler = OrderSampler(Order.shuffled(seed=5), _job(2, 2), rank=0)
    with pytest.raises(IntegrationError) as raised:
        sampler.load_state_dict(state)
    assert str(raised.value).startswith(message)


def test_constructor_refusals() -> None:
    with pytest.raises(IntegrationError, match="rank=2: expected a rank from 0 to 1"):
        OrderSampler(Order.sequential(), _job(2, 2), rank=2)
    with pytest.raises(IntegrationError, match=r"expected a sized durations\.Loader"):
        OrderSampler(Order.sequential(), Loader(samples=None, batch_size=2), rank=0)
    with pytest.raises(IntegrationError, match=r"expected a durations\.Order"):
        OrderSampler("shuffled", _job(2, 2), rank=0)  # type: ignore[arg-type]
