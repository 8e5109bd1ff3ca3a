"""``durations.order``: the keyed permutation of an epoch, and the indices each rank reads at a
plan step (docs/semantics.md, rule 19)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import ClassVar

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from durations import FitCall, GeometryError, Loader, Order, Plan, RunConfig, plan
from durations.order import MAX_SAMPLES, Permutation, mix64, step_indices
from durations.scenario import Scenario, ScenarioError
from durations.sharding import sample_at

ORDERS = [Order.sequential(), Order.shuffled(seed=3)]


class TestPermutation:
    @pytest.mark.parametrize("samples", range(130))
    def test_a_bijection_of_every_small_epoch(self, samples: int) -> None:
        """Every place reads a different index, and every index is read: for each size up to
        129, several seeds and epochs."""
        for seed, epoch in ((0, 0), (7, 1), (2**64 - 1, 2**40)):
            assert sorted(Permutation(samples, seed, epoch)) == list(range(samples))

    @settings(max_examples=30)
    @given(
        st.integers(min_value=1, max_value=5_000),
        st.integers(min_value=0, max_value=2**64 - 1),
        st.integers(min_value=0, max_value=2**64 - 1),
    )
    def test_a_bijection_of_any_epoch(self, samples: int, seed: int, epoch: int) -> None:
        assert sorted(Permutation(samples, seed, epoch)) == list(range(samples))

    @pytest.mark.parametrize("samples", [2, 3, 4])
    def test_tiny_epochs_take_every_order(self, samples: int) -> None:
        """Over 300 epochs, an epoch of 2, 3 or 4 samples takes each of its n! orders (a round
        function that ignored its key once made every epoch the identity)."""
        orders = {tuple(Permutation(samples, 7, e)) for e in range(300)}
        assert len(orders) == math.factorial(samples)

    @pytest.mark.parametrize("samples", [10, 16, 17, 100, 1_000, 2**20 + 3])
    def test_epochs_and_seeds_give_other_orders(self, samples: int) -> None:
        """The first 8 places differ between 100 epochs (and 100 seeds), but for chance: at
        most one repeat; an identity at most once."""
        for keyed in (lambda k: Permutation(samples, 7, k), lambda k: Permutation(samples, k, 0)):
            heads = [tuple(keyed(k)[: min(8, samples)]) for k in range(100)]
            assert len(set(heads)) >= 99
            assert heads.count(tuple(range(min(8, samples)))) <= 1

    @pytest.mark.parametrize("samples", [10, 17, 64])
    def test_each_index_is_as_likely_first(self, samples: int) -> None:
        """Over 4,000 epochs each index is first about as often as any other: a chi-square
        statistic below the 99.9% quantile for its degrees of freedom (deterministic keys, so
        the test is exact, not flaky)."""
        counts = Counter(Permutation(samples, 11, e)[0] for e in range(4_000))
        expected = 4_000 / samples
        statistic = sum((counts[i] - expected) ** 2 / expected for i in range(samples))
        bound = {10: 27.9, 17: 39.3, 64: 103.4}[samples]  # chi-square 99.9%, samples - 1 df
        assert statistic < bound

    def test_neighbours_are_not_kept_together(self) -> None:
        """Consecutive places of a shuffled epoch are rarely consecutive indices (about 1 in
        n, as in a random order): not an affine map, which keeps a constant stride."""
        order = list(Permutation(10_000, 3, 0))
        kept = sum(b == a + 1 for a, b in itertools.pairwise(order))
        strides = Counter(b - a for a, b in itertools.pairwise(order))
        assert kept < 20
        assert strides.most_common(1)[0][1] < 20

    def test_random_access_is_iteration(self) -> None:
        p = Permutation(1_000, 5, 9)
        listed = list(p)
        assert [p[i] for i in range(1_000)] == listed
        assert p[-1] == listed[-1]
        assert p[10:20] == listed[10:20]
        assert len(p) == 1_000
        with pytest.raises(IndexError):
            p[1_000]

    def test_a_billion_sample_epoch_is_indexed_without_a_list(self) -> None:
        """One index of a 10**12-sample epoch is found at once; the index is in range, and two
        places read two indices."""
        p = Permutation(10**12, 1, 2)
        assert 0 <= p[123_456_789_012] < 10**12
        assert p[0] != p[1]
        assert p.half == 20

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            # Reason: a negative count of samples.
            ((-1, 0, 0), "invalid loader samples: expected a whole number from 0 to"),
            # Reason: past 2**62 a half no longer fits in 31 bits.
            ((MAX_SAMPLES + 1, 0, 0), "invalid loader samples: expected a whole number"),
            # Reason: seeds are 64-bit.
            ((10, 2**64, 0), "invalid loader seed: expected a whole number from 0 to"),
            # Reason: a bool is not a count, though Python's bool is an int.
            ((10, True, 0), "invalid loader seed: expected a whole number"),
            # Reason: epochs are lifetime counters, never negative.
            ((10, 0, -1), "invalid loader epoch: expected a whole number from 0 to"),
        ],
    )
    def test_refusals(self, args: tuple[int, int, int], message: str) -> None:
        with pytest.raises(GeometryError, match=message):
            Permutation(*args)

    def test_mix64_is_splitmix64(self) -> None:
        """mix64 is SplitMix64's output function: the first outputs of the generator seeded
        with 0 are mix64 of the state after 1, 2, 3 increments (the published sequence
        begins 0xE220A8397B1DCDAF)."""
        assert mix64(0) == 0xE220A8397B1DCDAF
        gamma = 0x9E3779B97F4A7C15
        assert mix64(gamma) == mix64(gamma % 2**64)
        assert mix64(2**64 + 5) == mix64(5)


class TestOrder:
    def test_sequential_reads_in_order_and_wraps(self) -> None:
        order = Order.sequential()
        assert [order.index(samples=5, epoch=3, position=q) for q in range(8)] == [
            0, 1, 2, 3, 4, 0, 1, 2,
        ]  # fmt: skip

    def test_shuffled_wraps_onto_the_epoch_s_first_places(self) -> None:
        """A padded position past the data reads the place it wraps to, in the same epoch's
        permutation (the epoch's first samples again, rule 17)."""
        order = Order.shuffled(seed=4)
        for q in range(20):
            assert (
                order.index(samples=7, epoch=2, position=q) == Permutation(7, 4, 2)[sample_at(q, 7)]
            )

    @pytest.mark.parametrize("order", ORDERS, ids=str)
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            # Reason: a negative position would wrap to the epoch's end (found in review).
            ({"position": -3}, "invalid loader position: expected a whole number from 0 to"),
            # Reason: a position is a count, not a float.
            ({"position": 2.0}, "invalid loader position: expected a whole number"),
            # Reason: the sequential order checks its epoch as the shuffled one does.
            ({"epoch": "x"}, "invalid loader epoch: expected a whole number from 0 to"),
            # Reason: an epoch of no samples has no place to read.
            ({"samples": 0}, "invalid loader samples: an epoch of no samples has no position"),
        ],
    )
    def test_index_refuses_what_is_not_a_position(
        self, order: Order, kwargs: dict[str, object], message: str
    ) -> None:
        arguments: dict[str, object] = {"samples": 10, "epoch": 0, "position": 3, **kwargs}
        with pytest.raises(GeometryError, match=message):
            order.index(**arguments)  # type: ignore[arg-type]

    def test_an_index_past_python_s_digits_is_named_by_size(self) -> None:
        with pytest.raises(IndexError, match=r"place \(an int of [\d,]+ bits\) of an epoch"):
            Permutation(10, 0, 0)[10**5000]

    def test_refusals(self) -> None:
        with pytest.raises(GeometryError, match="invalid loader seed"):
            Order.shuffled(seed=-1)
        with pytest.raises(GeometryError, match="invalid loader shuffle: expected True or"):
            Order(shuffle=1)  # type: ignore[arg-type]


def _job(world: int, device: int, samples: int = 23, padding: str = "repeat") -> Loader:
    return Loader.sharded(
        samples=samples, world_size=world, device_batch_size=device, padding=padding, name="a"
    )


def _epoch_reads(run: Plan, order: Order, epoch: int, steps: range) -> Counter[int]:
    """Every index read in ``epoch`` over ``steps`` of ``run``, by all ranks."""
    read: Counter[int] = Counter()
    for k in steps:
        if run.progress_at(k - 1).normalized(run.segment_at(k).loader).epoch != epoch:  # type: ignore[union-attr]
            continue
        world = run.segment_at(k).loader.sharding.world_size  # type: ignore[union-attr]
        for rank in range(world):
            read.update(step_indices(run, k, order=order, rank=rank))
    return read


class TestStepIndices:
    @pytest.mark.parametrize("order", ORDERS, ids=str)
    @pytest.mark.parametrize(
        ("world", "device", "padding"),
        [(1, 4, "repeat"), (2, 2, "repeat"), (3, 2, "repeat"), (3, 2, "drop"), (2, 3, "cycle")],
    )
    def test_each_step_reads_its_positions_and_the_ranks_share_them(
        self, order: Order, world: int, device: int, padding: str
    ) -> None:
        """The indices the ranks read at a step are, together, the step's positions
        (``Segment.reads()``) through the order, each rank the same number of them, and rank r
        the positions r, r + W, ... of the step."""
        run = plan(
            RunConfig(max_duration="2ep"), [FitCall(loader=_job(world, device, 23, padding))]
        )
        (segment,) = run.segments
        for k, positions in enumerate(segment.reads(), start=1):
            expected = [
                order.index(samples=23, epoch=positions.epoch, position=q)
                for q in range(positions.start, positions.stop)
            ]
            ranks = [step_indices(run, k, order=order, rank=r) for r in range(world)]
            assert len({len(r) for r in ranks}) == 1
            assert [ranks[(q - positions.start) % world][(q - positions.start) // world]
                    for q in range(positions.start, positions.stop)] == expected  # fmt: skip

    @pytest.mark.parametrize("order", ORDERS, ids=str)
    @pytest.mark.parametrize("before", [(2, 2), (1, 4), (3, 1)])
    @pytest.mark.parametrize("after", [(3, 2), (1, 3), (2, 2), (4, 1)])
    def test_an_elastic_resume_reads_each_sample_of_the_epoch_once(
        self, order: Order, before: tuple[int, int], after: tuple[int, int]
    ) -> None:
        """Killed after any step of the first epoch on one geometry and resumed on another
        (the same stream), the epoch's indices over both runs are every sample once, plus the
        positions the resumed run pads, which read the epoch's first places again, as its
        tails say; the same holds uninterrupted."""
        config = RunConfig(max_duration="1ep")
        first = plan(config, [FitCall(loader=_job(*before))])
        steps = first.segments[0].steps
        for k in range(1, steps):
            resumed = plan(config, [FitCall(loader=_job(*after))], first.checkpoint_at(k))
            read = _epoch_reads(first, order, 0, range(1, k + 1))
            read += _epoch_reads(resumed, order, 0, range(1, resumed.total_steps + 1))
            repeated = sum(t.repeated for t in resumed.segments[0].tails)
            again = Counter(
                order.index(samples=23, epoch=0, position=23 + q) for q in range(repeated)
            )
            assert read == Counter(range(23)) + again, (k, read)

    def test_a_call_continuing_an_epoch_deals_from_its_own_start(self) -> None:
        """A second call on the same stream, inside the epoch the first left, starts its
        sampler at its first position: rank r reads that position + r, + r + W, ..."""
        a2 = _job(2, 2)
        a3 = _job(3, 2)
        run = plan(
            RunConfig(), [FitCall(loader=a2, duration="2ba"), FitCall(loader=a3, duration="1ba")]
        )
        start = run.segments[1].start.sample_in_epoch
        assert start == 8
        order = Order.sequential()
        assert [step_indices(run, 3, order=order, rank=r) for r in range(3)] == [
            [8, 11], [9, 12], [10, 13],
        ]  # fmt: skip

    def test_refusals(self) -> None:
        run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=_job(2, 2))])
        with pytest.raises(
            GeometryError,
            match="invalid loader rank: expected a whole number from 0 to 1, got 2",
        ):
            step_indices(run, 1, order=Order.sequential(), rank=2)
        stream = plan(
            RunConfig(), [FitCall(loader=Loader(samples=None, batch_size=2), duration="3ba")]
        )
        with pytest.raises(GeometryError, match="a stream of unknown length has no epoch"):
            step_indices(stream, 1, order=Order.sequential())


class TestLoaderOrder:
    """``Loader.order``: a loader's order is part of its stream (rule 19)."""

    def test_the_order_is_part_of_the_stream(self) -> None:
        """Two loaders that differ only in their order are two streams: a position of one is
        another sample of the other. The world size and batch size stay free."""
        job = Loader.sharded(samples=101, world_size=2, device_batch_size=10, name="a")
        shuffled = Loader.sharded(
            samples=101, world_size=2, device_batch_size=10, name="a", order=Order.shuffled(1)
        )
        assert not job.same_stream(shuffled)
        assert shuffled.same_stream(shuffled.with_world_size(3))
        assert shuffled.with_world_size(3).order == Order.shuffled(1)
        assert not shuffled.same_stream(
            Loader.sharded(
                samples=101, world_size=2, device_batch_size=10, name="a", order=Order.shuffled(2)
            )
        )

    def test_step_indices_reads_the_loaders_order(self) -> None:
        """Without ``order=``, the step's loader's order; a loader without one is refused,
        naming the call and the fix."""
        job = Loader(samples=10, batch_size=4, name="a")
        for order in ORDERS:
            ordered = plan(
                RunConfig(max_duration="1ep"), [FitCall(loader=attrs.evolve(job, order=order))]
            )
            assert step_indices(ordered, 2) == step_indices(ordered, 2, order=order)
        bare = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)])
        with pytest.raises(
            GeometryError, match=r"the loader of call '#0' has no order .*pass order="
        ):
            step_indices(bare, 1)

    # (loader keyword arguments, the message)
    INVALID: ClassVar[list[tuple[dict[str, object], str]]] = [
        (
            {"samples": None, "order": Order.sequential()},
            "a stream of unknown length has no epochs",
        ),
        ({"samples": 10, "order": "shuffled"}, "expected a durations.Order"),
        (
            {"samples": MAX_SAMPLES + 1, "order": Order.shuffled(0)},
            "expected a whole number from 0 to",
        ),
    ]

    @pytest.mark.parametrize(("kwargs", "message"), INVALID)
    def test_invalid_orders(self, kwargs: dict[str, object], message: str) -> None:
        with pytest.raises(GeometryError, match="invalid loader") as error:
            Loader(batch_size=2, **kwargs)  # type: ignore[arg-type]
        assert message in str(error.value)


class TestScenarioOrder:
    """A scenario file's ``order`` and ``seed`` keys are ``Loader.order``."""

    HEAD = '[run]\nmax_duration = "1ep"\n[[fit]]\nloader = "a"\n[loaders.a]\nsamples = 100\n'

    @pytest.mark.parametrize(
        ("keys", "order"),
        [
            ("batch_size = 10\n", None),
            ('batch_size = 10\norder = "sequential"\n', Order.sequential()),
            ('batch_size = 10\norder = "shuffled"\nseed = 7\n', Order.shuffled(7)),
            (  # a data-parallel loader keeps its sharding and takes the order
                'world_size = 2\ndevice_batch_size = 5\norder = "shuffled"\nseed = 0\n',
                Order.shuffled(0),
            ),
        ],
    )
    def test_keys_are_the_api(self, keys: str, order: Order | None) -> None:
        loader = Scenario.from_toml(self.HEAD + keys, source="run.toml").loaders["a"]
        assert loader.order == order
        assert loader.batch_size == 10

    # (keys, the message after "run.toml: loaders.a.")
    INVALID: ClassVar[list[tuple[str, str]]] = [
        ("seed = 7\n", 'seed: a seed is for a shuffled order: add order = "shuffled"'),
        (
            'order = "sequential"\nseed = 7\n',
            'seed: order = "sequential" reads the data set in order and takes no seed',
        ),
        ('order = "shuffled"\n', 'seed: missing: order = "shuffled" needs the seed'),
        (
            'order = "shuffled"\nseed = -1\n',
            "seed: invalid loader seed: expected a whole number from 0 to",
        ),
        (
            'order = "random"\n',
            "order: unknown order 'random'; expected 'sequential' or 'shuffled'",
        ),
        ("order = 1\n", "order: expected 'sequential' or 'shuffled', got an integer 1"),
    ]

    @pytest.mark.parametrize(("keys", "message"), INVALID)
    def test_invalid_keys(self, keys: str, message: str) -> None:
        with pytest.raises(ScenarioError) as error:
            Scenario.from_toml(self.HEAD + "batch_size = 10\n" + keys, source="run.toml")
        assert str(error.value).startswith(f"run.toml: loaders.a.{message}")


class TestAdaptersWithoutTorch:
    """The torch adapters' arithmetic when torch is missing (the main suite's environment):
    the same indices as the plan, one at a time (with torch: a chunk at a time, checked in
    tests/frameworks/test_order_sampler.py)."""

    @pytest.mark.parametrize("order", ORDERS)
    @pytest.mark.parametrize(("world", "padding"), [(1, "repeat"), (3, "cycle")])
    def test_the_samplers_read_the_plan_s_steps(
        self, order: Order, world: int, padding: str
    ) -> None:
        from durations.integrations.torch import DealtOrderSampler, OrderSampler

        job = Loader.sharded(
            samples=23, world_size=world, device_batch_size=2, padding=padding, order=order
        )
        whole = plan(RunConfig(max_duration="2ep"), [FitCall(loader=job)])
        run = plan(RunConfig(max_duration="2ep"), [FitCall(loader=job)], whole.checkpoint_at(1))
        steps = range(1, run.total_steps + 1)
        for rank in range(world):
            sampler = OrderSampler(order, job, rank=rank)
            sampler.start_at(run)
            expected = [i for k in steps for i in step_indices(run, k, rank=rank)]
            assert list(sampler) + list(sampler) == expected
        dealt = DealtOrderSampler(order, job)
        dealt.start_at(run)
        flat = list(dealt) + list(dealt)
        batches = [flat[i : i + 2] for i in range(0, len(flat), 2)]
        for rank in range(world):
            mine = [i for batch in batches[rank::world] for i in batch]
            assert mine == [i for k in steps for i in step_indices(run, k, rank=rank)]

    def test_dealt_iteration_left_early_goes_on_at_its_round(self) -> None:
        """Left after 8 indices of rounds of 6 (3 ranks of 2), the next iteration starts at the
        second round: the round left unfinished is read whole again, none is skipped."""
        from durations.integrations.torch import DealtOrderSampler

        job = Loader.sharded(
            samples=23, world_size=3, device_batch_size=2, padding="cycle", order=ORDERS[1]
        )
        whole = list(DealtOrderSampler(ORDERS[1], job))
        dealt = DealtOrderSampler(ORDERS[1], job)
        assert list(itertools.islice(iter(dealt), 8)) == whole[:8]
        assert list(dealt) == whole[6:]

    def test_a_sampler_of_another_order_than_its_loader_s_is_refused(self) -> None:
        """The ledger records the loader's order: a sampler reading another would read other
        samples than the plan and the checkpoints say."""
        from durations.integrations.torch import IntegrationError, OrderSampler

        job = Loader.sharded(
            samples=23, world_size=2, device_batch_size=2, name="a", order=ORDERS[1]
        )
        with pytest.raises(IntegrationError) as error:
            OrderSampler(Order.shuffled(seed=4), job, rank=0)
        assert str(error.value) == (
            "order=shuffled, seed 4 but the loader 'a' is read shuffled, seed 3 (Loader.order, "
            "which the ledger records): give the sampler the loader's order"
        )
        OrderSampler(ORDERS[1], job, rank=0)  # the loader's own order
        OrderSampler(Order.shuffled(seed=4), attrs.evolve(job, order=None), rank=0)  # none said
