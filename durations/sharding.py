"""``Sharding``: how a data-parallel job splits each epoch of a loader over its ranks.

A data-parallel job of ``world_size`` ranks reads one epoch as one global sequence of
*positions*: the loader's order (a seeded permutation, which does not depend on the world size)
lengthened or shortened so that every rank gets the same number of samples. Each rank reads it
in micro-batches of ``device_batch_size``, and one round of micro-batches over all ranks is a
contiguous block of ``W * device_batch_size`` positions: torch's ``DistributedSampler`` deals
rank ``r`` the positions ``r, r + W, r + 2W, ...``, accelerate's ``BatchSamplerShard`` (Hugging
Face's ``Trainer``) deals rank ``r`` the ``r``-th block of ``device_batch_size`` positions of
each round; which rank reads which position of the round is the sampler's. One optimizer step
(``accumulation`` rounds) is a contiguous block of the global batch. The three ways of evening
the ranks, :class:`Padding`:

- ``repeat``: torch's ``DistributedSampler(drop_last=False)`` (Lightning's default under DDP):
  the sequence is padded to a multiple of ``W`` by reading positions from its start again.
- ``drop``: ``DistributedSampler(drop_last=True)``: the tail is cut to a multiple of ``W``.
- ``cycle``: accelerate's ``even_batches`` (Hugging Face's ``Trainer``): padded by reading from
  the start again up to a multiple of ``W * device_batch_size``, so every rank's last
  micro-batch is full; under ``drop_last`` the incomplete round is dropped instead.

A loader's ``drop_last`` is then each rank's ``DataLoader(drop_last=...)``: an incomplete last
micro-batch is not read, on every rank at once. At the end of an epoch an incomplete group of
``accumulation`` micro-batches is still one optimizer step.

The data position (``Progress.sample_in_epoch``) counts positions read. Positions before the
data set's end are the same data at any world size, which is what makes an elastic resume
exact: the rest of an epoch resumed at position ``p`` on ``W'`` ranks is the rest of the
data, ``[p, samples)``, evened for ``W'`` (rule 17 of ``docs/semantics.md``).

>>> from durations import Loader
>>> job = Loader.sharded(samples=101, world_size=2, device_batch_size=10)
>>> job.batch_size, job.steps_per_epoch, job.samples_per_epoch     # 51 per rank
(20, 6, 102)
>>> job.sharding.tail(samples=101, position=0, drop_last=False)   # position 101 is sample 0
EpochTail(repeated=1, dropped=0)
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import attrs

from .errors import GeometryError, shown_value

if TYPE_CHECKING:
    from .loader import Loader
    from .progress import Progress

__all__ = ["EpochTail", "Padding", "Sharding", "TailRange", "sample_at", "tails"]


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


class Padding(enum.Enum):
    """How the ranks of a data-parallel job are kept even at the end of an epoch."""

    #: Read positions from the start again, up to a multiple of the world size (torch's
    #: ``DistributedSampler(drop_last=False)``).
    REPEAT = "repeat"
    #: Cut the tail down to a multiple of the world size (``DistributedSampler(drop_last=True)``).
    DROP = "drop"
    #: Read positions from the start again, up to a multiple of ``world_size *
    #: device_batch_size`` (accelerate's ``even_batches``, used by Hugging Face's ``Trainer``).
    CYCLE = "cycle"

    @classmethod
    def parse(cls, value: Padding | str) -> Padding:
        """``value`` as a ``Padding``: a member, or its name as a string."""
        if isinstance(value, Padding):
            return value
        for member in cls:
            if value == member.value:
                return member
        names = ", ".join(repr(m.value) for m in cls)
        raise GeometryError("padding", f"expected one of {names}, got {shown_value(value)}")


def _padding(value: Padding | str) -> Padding:
    return Padding.parse(value)


def _whole(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise GeometryError(field, f"expected a whole number > 0, got {shown_value(value)}")


@attrs.frozen
class EpochTail:
    """What evening the ranks does to the end of one epoch read from a given position.

    ``repeated`` positions past the data set's end read the epoch's first samples again
    (``repeated`` may exceed the data set when it is smaller than one round); ``dropped``
    samples at the end of the epoch's order are never read.
    """

    repeated: int
    dropped: int


@attrs.frozen(kw_only=True)
class Sharding:
    """The per-device geometry of a data-parallel loader.

    ``world_size`` data-parallel ranks each read ``device_batch_size`` samples per
    micro-batch, and ``accumulation`` micro-batches make one optimizer step, so the global
    batch is their product. ``padding`` says how the ranks are kept even.

    >>> Sharding(world_size=4, device_batch_size=8, accumulation=2).batch_size
    64
    """

    world_size: int
    device_batch_size: int
    accumulation: int = 1
    padding: Padding = attrs.field(default=Padding.REPEAT, converter=_padding)

    def __attrs_post_init__(self) -> None:
        _whole("world_size", self.world_size)
        _whole("device_batch_size", self.device_batch_size)
        _whole("accumulation", self.accumulation)

    @property
    def batch_size(self) -> int:
        """Samples of one optimizer step over all ranks: the global batch."""
        return self.world_size * self.device_batch_size * self.accumulation

    @property
    def round_size(self) -> int:
        """Samples of one micro-batch on every rank: a contiguous block of positions."""
        return self.world_size * self.device_batch_size

    def evened(self, remaining: int) -> int:
        """Positions the ranks read for ``remaining`` samples of data, before any rank drops
        its incomplete last micro-batch.

        >>> s = Sharding(world_size=3, device_batch_size=2)
        >>> [attrs.evolve(s, padding=p).evened(7) for p in ("repeat", "drop", "cycle")]
        [9, 6, 12]
        >>> attrs.evolve(s, world_size=1, padding="cycle").evened(7)
        7
        """
        if remaining <= 0:
            return 0
        if self.world_size == 1:  # one rank has no other to keep even with
            return remaining
        if self.padding is Padding.REPEAT:
            return _ceil_div(remaining, self.world_size) * self.world_size
        if self.padding is Padding.DROP:
            return remaining // self.world_size * self.world_size
        return _ceil_div(remaining, self.round_size) * self.round_size

    def read(self, remaining: int, *, drop_last: bool) -> int:
        """Positions trained for ``remaining`` samples of data: evened, then, under
        ``drop_last``, cut to whole micro-batches on every rank.

        ``cycle`` with ``drop_last`` pads nothing: accelerate drops the incomplete batch before
        dealing batches to the ranks, then the incomplete round, so only whole rounds are read.

        >>> s = Sharding(world_size=2, device_batch_size=2, padding="cycle")
        >>> s.read(7, drop_last=False), s.read(7, drop_last=True)
        (8, 4)
        """
        if drop_last and self.padding is Padding.CYCLE:
            return max(0, remaining) // self.round_size * self.round_size
        evened = self.evened(remaining)
        if drop_last:
            return evened // self.round_size * self.round_size
        return evened

    def tail(self, *, samples: int, position: int, drop_last: bool) -> EpochTail:
        """What the end of an epoch of ``samples`` read from ``position`` repeats or drops."""
        end = position + self.read(max(0, samples - position), drop_last=drop_last)
        if end <= position:
            return EpochTail(repeated=0, dropped=max(0, samples - position))
        return EpochTail(repeated=max(0, end - samples), dropped=max(0, samples - end))


@attrs.frozen
class TailRange:
    """Epochs ``first`` to ``last`` (lifetime epoch counters) whose ends the ranks evened
    alike: each read its first ``repeated`` positions again, or never read its last
    ``dropped`` samples, of ``samples``."""

    first: int
    last: int
    samples: int
    repeated: int
    dropped: int

    @property
    def epochs(self) -> int:
        """How many epochs the range covers."""
        return self.last - self.first + 1

    def __str__(self) -> str:
        where = (
            f"epoch {self.first}"
            if self.first == self.last
            else (f"each of epochs {self.first}-{self.last}")
        )
        parts = []
        if self.repeated:
            times = ""
            if self.repeated > self.samples:
                times = f" ({self.repeated} positions: the data is shorter than one round)"
            stop = min(self.repeated, self.samples)
            parts.append(f"samples 0-{stop - 1} read again{times}")
        if self.dropped:
            parts.append(f"samples {self.samples - self.dropped}-{self.samples - 1} never read")
        return f"{' and '.join(parts)} in {where}"


def sample_at(position: int, samples: int) -> int:
    """The place in the epoch's order that ``position`` reads: positions past the data set's
    end read its start again.

    >>> [sample_at(p, 7) for p in (0, 6, 7, 8, 15)]
    [0, 6, 0, 1, 1]
    """
    return position if position < samples else (position - samples) % samples


def tails(loader: Loader, start: Progress, stop: Progress) -> tuple[TailRange, ...]:
    """The epochs whose ends a data-parallel ``loader`` evened between ``start`` and ``stop``
    (a call's start, before its epoch is closed for want of data, and its stop): at most two
    ranges, the epoch it started inside and the whole epochs after it, whatever their number.

    >>> from durations import Loader, Progress
    >>> job = Loader.sharded(samples=101, world_size=2, device_batch_size=10)
    >>> [str(t) for t in tails(job, Progress(), Progress().advance(job, 18))]
    ['samples 0-0 read again in each of epochs 0-2']
    """
    sharding, samples = loader.sharding, loader.samples
    if sharding is None or samples is None or stop.epoch == start.epoch:
        return ()
    found: list[TailRange] = []
    first = sharding.tail(
        samples=samples, position=start.sample_in_epoch, drop_last=loader.drop_last
    )
    whole = sharding.tail(samples=samples, position=0, drop_last=loader.drop_last)
    ranges = [(start.epoch, start.epoch, first)]
    if stop.epoch - start.epoch > 1:
        ranges.append((start.epoch + 1, stop.epoch - 1, whole))
    for low, high, tail in ranges:
        if not (tail.repeated or tail.dropped):
            continue
        if found and (found[-1].repeated, found[-1].dropped) == (tail.repeated, tail.dropped):
            found[-1] = attrs.evolve(found[-1], last=high)
            continue
        found.append(TailRange(low, high, samples, tail.repeated, tail.dropped))
    return tuple(found)
