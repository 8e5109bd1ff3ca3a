"""``Order``: which data-set index each position of an epoch reads, and which positions of a
plan step each rank reads (``docs/semantics.md``, rule 19).

An epoch of ``samples`` is read as a sequence of *positions* (rule 17): position ``q`` reads
place ``sample_at(q, samples)`` of the epoch's order, and the order maps a place to a data-set
index, either as it is (``Order.sequential()``) or through a keyed permutation of the epoch
(``Order.shuffled(seed)``). The permutation is a function, not a list: any index of a
billion-sample epoch is found in O(1), without iterating or building the permutation, so a
job resumed at any position, on any number of ranks, can start the rest of the epoch at once.

The permutation is a balanced Feistel network on ``2h`` bits (the fewest with ``2**(2h) >=
samples``, and at least 2), with cycle walking down to ``[0, samples)``. Place ``x`` is split
into ``L = x >> h`` and ``R = x & (2**h - 1)``; each of :data:`ROUNDS` rounds sets ``L, R =
R, L ^ F(R, k_i)``; the result is ``(L << h) | R``, and while it is ``samples`` or more the
network is applied to it again. The round function, with ``P = 2**31 - 1`` and the
constants :data:`MULTIPLIERS` ``(A, B)``::

    y = ((x ^ k) * A) % P;  y ^= y >> 13;  y = (y * B) % P;  y ^= y >> 16;  F = y & (2**h - 1)

and the round keys are ``k_i = mix64(mix64(mix64(seed) ^ epoch) + i) & P``, with SplitMix64's
finaliser :func:`mix64` (64-bit unsigned arithmetic). Every value of ``F`` stays under
``2**62``, so the same arithmetic runs exactly in Python's ints, in 64-bit integers of any
language, and on a tensor of int64 (the torch adapter evaluates it a batch at a time). It is a
bijection for every key (a Feistel network is one whatever ``F``, and cycle walking keeps a
bijection of the larger domain one on the smaller), and walks fewer than four times per index
on average (for two samples or more).

>>> from durations import Order
>>> order = Order.shuffled(seed=7)
>>> epoch = order.epoch(samples=10, epoch=0)
>>> sorted(epoch) == list(range(10)), list(epoch) != list(order.epoch(samples=10, epoch=1))
(True, True)
>>> big = order.epoch(samples=10**12, epoch=3)
>>> 0 <= big[123_456_789_012] < 10**12                      # one index, no list built
True
>>> Order.sequential().index(samples=10, epoch=0, position=12)   # past the end: place 2
2
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

import attrs

from .errors import GeometryError, counted, shown_value
from .sharding import sample_at

if TYPE_CHECKING:
    from .plans import Plan, Segment

__all__ = ["MAX_SAMPLES", "MULTIPLIERS", "ROUNDS", "Order", "Permutation", "mix64", "step_indices"]

#: The largest epoch a permutation orders: each half of ``2h <= 62`` bits stays under ``2**31``.
MAX_SAMPLES = 2**62
#: Rounds of the Feistel network.
ROUNDS = 6
#: The round function's modulus, the Mersenne prime ``2**31 - 1``, and its mask for the keys.
PRIME = 2**31 - 1
#: The round function's multipliers ``(A, B)``: under ``2**31``, so that a product with a
#: value under ``2**31`` stays under ``2**62``, exact in a signed 64-bit integer.
MULTIPLIERS = (0x5BD1E995, 0x2C1B3C6D)

_MASK64 = 2**64 - 1


def mix64(value: int) -> int:
    """SplitMix64's finaliser of ``value`` modulo ``2**64``: a 64-bit integer hash.

    >>> mix64(0), mix64(1)
    (16294208416658607535, 10451216379200822465)
    """
    z = (value + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _whole(field: str, value: object, *, below: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < below:
        raise GeometryError(
            field,
            f"expected a whole number from 0 to {counted(below - 1)}, got {shown_value(value)}",
        )
    return value


@attrs.frozen
class Permutation(Sequence[int]):
    """The order of one epoch of ``samples`` under a key (``seed``, ``epoch``): place ``i`` of
    the epoch reads data-set index ``self[i]``. A bijection of ``range(samples)``; indexing is
    O(1), iterating yields the whole order.

    ``half`` is ``h``, the bits of each half of the network, and ``keys`` its round keys
    (module docstring).
    """

    samples: int
    seed: int
    epoch: int
    half: int = attrs.field(init=False)
    keys: tuple[int, ...] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        _whole("samples", self.samples, below=MAX_SAMPLES + 1)
        _whole("seed", self.seed, below=2**64)
        _whole("epoch", self.epoch, below=2**64)
        half = max(1, ((self.samples - 1).bit_length() + 1) // 2)
        base = mix64(mix64(self.seed) ^ self.epoch)
        keys = tuple(mix64(base + i) & PRIME for i in range(ROUNDS))
        object.__setattr__(self, "half", half)
        object.__setattr__(self, "keys", keys)

    def _network(self, value: int) -> int:
        half, mask = self.half, (1 << self.half) - 1
        first, second = MULTIPLIERS
        left, right = value >> half, value & mask
        for key in self.keys:
            y = ((right ^ key) * first) % PRIME
            y ^= y >> 13
            y = (y * second) % PRIME
            y ^= y >> 16
            left, right = right, left ^ (y & mask)
        return (left << half) | right

    def __len__(self) -> int:
        return self.samples

    @overload
    def __getitem__(self, place: int) -> int: ...
    @overload
    def __getitem__(self, place: slice) -> Sequence[int]: ...
    def __getitem__(self, place: int | slice) -> int | Sequence[int]:
        if isinstance(place, slice):
            return [self[i] for i in range(*place.indices(self.samples))]
        if place < 0:
            place += self.samples
        if not 0 <= place < self.samples:
            raise IndexError(f"place {shown_value(place)} of an epoch of {self.samples} samples")
        value = self._network(place)
        while value >= self.samples:  # cycle walking: at most 2**(2h) / samples < 4 on average
            value = self._network(value)
        return value

    def __iter__(self) -> Iterator[int]:
        return (self[i] for i in range(self.samples))


@attrs.frozen
class Order:
    """How a loader orders each epoch: ``shuffle=False`` reads the data set in order;
    ``shuffle=True`` reads epoch ``e`` in the :class:`Permutation` keyed by (``seed``, ``e``),
    where ``e`` is the lifetime epoch counter (``Progress.epoch``), which the plan and every
    checkpoint record. Made with :meth:`sequential` or :meth:`shuffled`.

    >>> str(Order.sequential()), str(Order.shuffled(seed=7))
    ('in order', 'shuffled, seed 7')
    """

    shuffle: bool = False
    seed: int = 0

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.shuffle, bool):
            raise GeometryError(
                "shuffle", f"expected True or False, got {shown_value(self.shuffle)}"
            )
        _whole("seed", self.seed, below=2**64)

    @classmethod
    def sequential(cls) -> Order:
        """The data set in order, every epoch."""
        return cls(shuffle=False)

    @classmethod
    def shuffled(cls, seed: int) -> Order:
        """A keyed permutation per epoch, from ``seed`` (a whole number below ``2**64``)."""
        return cls(shuffle=True, seed=seed)

    def epoch(self, *, samples: int, epoch: int) -> Sequence[int]:
        """The order of epoch ``epoch`` of ``samples``: place ``i`` reads index ``[i]``."""
        if not self.shuffle:
            _whole("samples", samples, below=MAX_SAMPLES + 1)
            _whole("epoch", epoch, below=2**64)
            return range(samples)
        return Permutation(samples, self.seed, epoch)

    def index(self, *, samples: int, epoch: int, position: int) -> int:
        """The data-set index that ``position`` (a whole number) of epoch ``epoch`` reads: past
        the data's end, a position reads the epoch's first places again (rule 17)."""
        order = self.epoch(samples=samples, epoch=epoch)
        _whole("position", position, below=2**64)
        if samples == 0:
            raise GeometryError("samples", "an epoch of no samples has no position to read")
        return order[sample_at(position, samples)]

    def __str__(self) -> str:
        return f"shuffled, seed {self.seed}" if self.shuffle else "in order"


def step_indices(plan: Plan, step: int, *, order: Order | None = None, rank: int = 0) -> list[int]:
    """The data-set indices rank ``rank`` reads in plan step ``step`` (the step that brings
    the plan to ``step``; ``1 <= step <= plan.total_steps``), in the order it reads them,
    through ``order``, or, by default, the order of the step's loader (``Loader.order``).

    The step reads a contiguous block of positions of its epoch (rule 17). A sampler starts
    reading an epoch at its first position, or, in a call that begins inside the epoch (a
    resume, or a call continuing the previous call's epoch), at the call's start; rank ``r``
    of ``W`` reads the positions ``r, r + W, r + 2W, ...`` from there, as torch's
    ``DistributedSampler`` deals them (rule 19). Each rank's micro-batches are its positions in
    that order, ``device_batch_size`` at a time.

    >>> from durations import FitCall, Loader, RunConfig, plan
    >>> job = Loader.sharded(samples=11, world_size=2, device_batch_size=2)   # 12 positions
    >>> run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)])
    >>> [step_indices(run, 3, order=Order.sequential(), rank=r) for r in (0, 1)]
    [[8, 10], [9, 0]]

    A loader that reads a :class:`~durations.Mixture` (``order`` not given) names indices of
    the concatenation of its sources in the mixture's order (``Mixture.offsets``): position
    ``p`` of a mixture epoch reads ``Mixture.index_at(base, p)``, ``base`` the sources'
    cursors when the epoch began (rule 20).
    """
    segment = plan.segment_at(step)
    if segment is None:
        raise GeometryError(
            "step", f"expected a step from 1 to {plan.total_steps}, got {shown_value(step)}"
        )
    loader = segment.loader
    if loader.mixture is not None and order is None:
        return _mixture_step(plan, segment, step, rank)
    if loader.samples is None:
        raise GeometryError("samples", "a stream of unknown length has no epoch to order")
    if order is None:
        order = loader.order
    if order is None:
        raise GeometryError(
            "order",
            f"the loader of call {segment.name!r} has no order (Loader.order is None: its "
            "job's sampler orders the data); pass order=, or give the loader its order",
        )
    world = loader.sharding.world_size if loader.sharding is not None else 1
    _whole("rank", rank, below=world)
    here = segment.start.advance(loader, step - 1 - segment.start_step).normalized(loader)
    begun = segment.start.normalized(loader)
    first = begun.sample_in_epoch if begun.epoch == here.epoch else 0
    position = here.sample_in_epoch
    size = min(loader.batch_size, loader.samples_left_in_epoch(position))
    offset = (rank - (position - first)) % world  # the first position of rank r's turn
    places = order.epoch(samples=loader.samples, epoch=here.epoch)  # keyed once, not per index
    return [
        places[sample_at(q, loader.samples)]
        for q in range(position + offset, position + size, world)
    ]


def _mixture_step(plan: Plan, segment: Segment, step: int, rank: int) -> list[int]:
    """``step_indices`` of a step reading a mixture: positions dealt as any loader's, each
    read through the mixture from the cursors its epoch began with."""
    from ._mixing import advance, epoch_start  # the accounting imports the loader, which this

    loader = segment.loader
    mixture = loader.mixture
    assert mixture is not None
    _whole("rank", rank, below=loader.world_size)
    at = segment.start.advance(loader, step - 1 - segment.start_step)
    cursors = advance(loader, dict(segment.cursors), segment.start, at)[0]
    here = at.normalized(loader)
    base = epoch_start(loader, cursors, here)
    begun = segment.start.normalized(loader)
    first = begun.sample_in_epoch if begun.epoch == here.epoch else 0
    position = here.sample_in_epoch
    size = loader.batch_size
    if loader.samples is not None:
        size = min(size, loader.samples_left_in_epoch(position))
    world = loader.world_size
    offset = (rank - (position - first)) % world
    return [mixture.index_at(base, q) for q in range(position + offset, position + size, world)]
