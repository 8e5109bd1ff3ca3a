"""``durations.integrations.torch.OrderSampler``: the plan's data order as a torch sampler, on
any world size, and resumed from a state saved on another (semantics.md, rule 19). Needs
torch (the frameworks environment)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from durations import FitCall, Loader, Order, RunConfig, plan
from durations.integrations.torch import (
    DealtOrderSampler,
    IntegrationError,
    OrderSampler,
    _permuted,
)
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


@pytest.mark.parametrize("data", ["exact", "replay_epoch", "next_epoch"])
def test_start_at_the_plan_reads_what_it_names(data: str) -> None:
    """start_at(run) of a plan resumed on another world size under each data policy reads
    what the plan's steps name for its rank (the policy decides where the call starts: the
    saved position, the epoch's start, or the next epoch), then goes on with the next epoch."""
    order = Order.shuffled(seed=2)
    first = plan(RunConfig(max_duration="2ep"), [FitCall(loader=_job(2, 2))])
    config = RunConfig(max_duration="2ep", data=data)
    resumed = plan(config, [FitCall(loader=_job(3, 2))], first.checkpoint_at(4))
    segment = resumed.segments[0]
    begun = segment.start.normalized(segment.loader)
    for rank in range(3):
        sampler = OrderSampler(order, _job(3, 2), rank=rank)
        sampler.start_at(resumed)
        steps = [
            k
            for k in range(1, resumed.total_steps + 1)
            if segment.start.advance(segment.loader, k - 1).normalized(segment.loader).epoch
            == begun.epoch
        ]
        assert sampler.epoch == begun.epoch
        assert list(sampler) == [
            i for k in steps for i in step_indices(resumed, k, order=order, rank=rank)
        ]
        assert sampler.epoch == begun.epoch + 1


def test_start_at_a_plan_on_another_stream_starts_its_epoch() -> None:
    """A plan whose call moves to another stream (the checkpoint's epoch of the first loader
    abandoned) starts the sampler of the new stream at the new epoch the plan names, not at
    the checkpoint's position in the old one."""
    order = Order.sequential()
    a, b = _job(2, 2), Loader.sharded(samples=9, world_size=2, device_batch_size=2, name="b")
    first = plan(RunConfig(), [FitCall(loader=a, duration="3ba")])
    moved = plan(
        RunConfig(),
        [FitCall(loader=a, duration="3ba"), FitCall(loader=b, duration="2ba")],
        first.checkpoint_at(2),
    )
    sampler = OrderSampler(order, b, rank=1)
    sampler.start_at(moved)
    start = moved.segments[1].start.normalized(b)
    assert (sampler.epoch, sampler.position) == (start.epoch, 0)
    assert [next(iter(sampler))] == step_indices(moved, 2, order=order, rank=1)[:1]


def test_a_loop_that_takes_exactly_an_epoch_goes_on_with_the_next() -> None:
    """A loop that takes exactly each epoch's batches, never running the sampler's iterator
    to its end, still gets every epoch (it got an empty one before: found in review), and
    len() says what the next iteration yields."""
    from torch.utils.data import DataLoader

    job = _job(2, 2, samples=8)
    order = Order.shuffled(seed=1)
    run = plan(RunConfig(max_duration="3ep"), [FitCall(loader=job)])
    sampler = OrderSampler(order, job, rank=0)
    data = DataLoader(range(8), batch_size=2, sampler=sampler)
    got = []
    for _ in range(3):
        assert len(sampler) == 4
        batches = iter(data)
        got += [next(batches).tolist() for _ in range(job.steps_per_epoch or 0)]
    assert got == [step_indices(run, k, order=order, rank=0) for k in range(1, 7)]


def test_set_epoch_after_a_state_that_ended_its_epoch_keeps_the_next() -> None:
    """A state saved right after an epoch's last step (its iterator not yet run out) moves to
    the next epoch when loaded; a framework that then calls set_epoch with the epoch it had
    counted does not make the sampler read that epoch again."""
    job = _job(2, 2, samples=8)
    order = Order.shuffled(seed=1)
    reader = OrderSampler(order, job, rank=0)
    batches = iter(reader)
    first_epoch = [next(batches) for _ in range(4)]
    saved = reader.state_dict()
    assert saved["epoch"] == 0
    assert saved["position"] == 8
    resumed = OrderSampler(order, job, rank=0)
    resumed.load_state_dict(saved)
    resumed.set_epoch(0)
    second = list(resumed)
    assert resumed.epoch == 2
    assert second == list(OrderSampler(order, job, rank=0, epoch=1))
    assert second != first_epoch
    resumed.set_epoch(5)
    resumed.set_epoch(0)  # chosen on purpose after another epoch: read again
    assert list(resumed) == first_epoch


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


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_chunks_are_seamless(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sampler works the order out a chunk at a time; with chunks of 1, 2 or 5 positions
    per rank (not 65,536) it yields the same indices, and a state taken in the middle of a
    chunk resumes at the same place."""
    monkeypatch.setattr(OrderSampler, "CHUNK", chunk)
    order, job = Order.shuffled(seed=3), _job(3, 2)
    run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)])
    for rank in range(3):
        expected = [
            i
            for k in range(1, run.total_steps + 1)
            for i in step_indices(run, k, order=order, rank=rank)
        ]
        sampler = OrderSampler(order, job, rank=rank)
        assert list(sampler) == expected
        partial = OrderSampler(order, job, rank=rank)
        taken = iter(partial)
        head = [next(taken) for _ in range(3)]
        resumed = OrderSampler(order, job, rank=rank)
        resumed.load_state_dict(partial.state_dict())
        assert head + list(resumed) == expected


# -- DealtOrderSampler: for a framework that deals whole micro-batches to its ranks --------------


def _dealt(sampler: DealtOrderSampler, world: int, device: int) -> list[list[int]]:
    """What each rank reads when accelerate deals ``sampler``'s micro-batches: micro-batch
    ``r`` of every round of ``world`` to rank ``r`` (``BatchSamplerShard``)."""
    flat = list(sampler)
    batches = [flat[i : i + device] for i in range(0, len(flat), device)]
    return [[i for b in batches[r::world] for i in b] for r in range(world)]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("world", "device", "accumulation"), [(1, 3, 1), (2, 2, 1), (3, 2, 2)])
def test_dealt_ranks_read_the_plan_s_steps(
    order: Order, world: int, device: int, accumulation: int
) -> None:
    """Dealt as accelerate deals it, every rank reads, epoch after epoch, exactly the indices
    ``step_indices`` names for it, from a start inside an epoch; ``len`` is a whole epoch."""
    job = Loader.sharded(
        samples=23, world_size=world, device_batch_size=device, accumulation=accumulation,
        padding="cycle", name="a", order=order,
    )  # fmt: skip
    whole = plan(RunConfig(max_duration="3ep"), [FitCall(loader=job)])
    resumed = plan(RunConfig(max_duration="3ep"), [FitCall(loader=job)], whole.checkpoint_at(1))
    sampler = DealtOrderSampler(order, job)
    sampler.start_at(resumed)
    sampler.set_epoch(7)  # a framework's own counter: ignored
    read: list[list[int]] = [[] for _ in range(world)]
    for _ in range(3):  # the rest of epoch 0, then epochs 1 and 2
        assert len(sampler) == job.samples_per_epoch
        for rank, indices in enumerate(_dealt(sampler, world, device)):
            read[rank] += indices
    for rank in range(world):
        expected = [
            i
            for k in range(1, resumed.total_steps + 1)
            for i in step_indices(resumed, k, rank=rank)
        ]
        assert read[rank] == expected


def test_dealt_refuses_padding_that_is_not_whole_rounds() -> None:
    """Repeat or drop padding leaves a last round of other micro-batches than the ranks'."""
    with pytest.raises(IntegrationError, match=r"repeat padding; .* padding='cycle'"):
        DealtOrderSampler(Order.sequential(), _job(2, 2))
    DealtOrderSampler(Order.sequential(), _job(1, 2))  # one rank evens nothing


# -- mixtures (semantics.md rule 20) ------------------------------------------------------------


def _mixture_script(world: int) -> list[FitCall]:
    from durations import Mixture, Source

    web = Source(name="web", samples=23, weight=3, order=Order.shuffled(4))
    code = Source(name="code", samples=7, weight=1)
    math = Source(name="math", samples=5, weight=1, order=Order.shuffled(9), wrap="replay")
    anneal = Mixture(
        sources=(code, Source(name="math", samples=5, weight=2, order=Order.shuffled(9))),
        stop="all_exhausted",
        restart={"math"},
    )
    first, second = (
        Loader.mixing(m, world_size=world, device_batch_size=2, padding="cycle", name=n)
        for m, n in ((Mixture(sources=(web, code, math)), "p"), (anneal, "a"))
    )
    return [FitCall(loader=first, duration="2.5ep"), FitCall(loader=second, duration="2ep")]


@pytest.mark.parametrize("world", [1, 2, 3])
def test_a_mixture_s_samplers_read_the_plan_s_indices(world: int) -> None:
    """Started at each call of a two-phase mixture plan (a restart and a replayed source among
    them), every rank's OrderSampler, on int64 tensors, and the DealtOrderSampler read exactly
    what step_indices names, epoch after epoch; and so does a sampler started at the plan
    resumed from a checkpoint inside each call."""
    run = plan(RunConfig(), _mixture_script(world))
    for segment in run.segments:
        steps = range(segment.start_step + 1, segment.stop_step + 1)
        for rank in range(world):
            sampler = OrderSampler(None, segment.loader, rank=rank)
            sampler.start_at(segment)
            expected = [i for k in steps for i in step_indices(run, k, rank=rank)]
            got: list[int] = []
            while len(got) < len(expected):
                got.extend(sampler)
            assert got[: len(expected)] == expected, (segment.name, rank)
        dealt = DealtOrderSampler(None, segment.loader)
        dealt.start_at(segment)
        expected = [i for k in steps for r in range(world) for i in step_indices(run, k, rank=r)]
        got = []
        while len(got) < len(expected):
            got.extend(dealt)
        assert got[: len(expected)] == expected, segment.name
        middle = segment.start_step + segment.steps // 2
        resumed = plan(RunConfig(), _mixture_script(world), run.checkpoint_at(middle))
        sampler = OrderSampler(None, segment.loader, rank=0)
        sampler.start_at(resumed)
        first = resumed.segment_at(1)
        assert first is not None
        rest = range(1, first.stop_step + 1)
        expected = [i for k in rest for i in step_indices(resumed, k, rank=0)]
        got = []
        while len(got) < len(expected):
            got.extend(sampler)
        assert got[: len(expected)] == expected, ("resumed", segment.name)


def test_a_mixture_sampler_refuses_what_it_cannot_read() -> None:
    """An order given with a mixture loader, a position that does not say where each source
    stands, and a saved state of another mixture are refused, naming what to do."""
    from durations import Mixture, Source

    loader = _mixture_script(2)[0].loader
    with pytest.raises(IntegrationError, match="pass order=None"):
        OrderSampler(Order.shuffled(1), loader, rank=0)
    sampler = OrderSampler(None, loader, rank=0)
    from durations import Progress

    with pytest.raises(IntegrationError, match="where each source of the mixture stands"):
        sampler.start_at(Progress())
    other = Loader.mixing(
        Mixture(sources=(Source(name="x", samples=35, weight=1),)),
        world_size=2,
        device_batch_size=2,
        padding="cycle",
    )
    with pytest.raises(IntegrationError, match="another mixture"):
        sampler.load_state_dict(OrderSampler(None, other, rank=0).state_dict())
    restarted = Loader.mixing(
        Mixture(sources=loader.mixture.sources, restart={"web"}),  # type: ignore[union-attr]
        world_size=2,
        device_batch_size=2,
        padding="cycle",
    )
    sampler.load_state_dict(OrderSampler(None, restarted, rank=0).state_dict())  # one stream
