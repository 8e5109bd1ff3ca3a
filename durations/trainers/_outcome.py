"""What every trainer profile reports: the shared value types."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Generic, TypeVar, overload

import attrs

__all__ = [
    "CallOutcome",
    "Dataset",
    "Runs",
    "TrainerError",
    "Translation",
    "Unsupported",
    "joined",
]

#: The sample ids one step or micro-batch reads: a ``range`` when they are contiguous, a
#: :class:`Runs` of ranges when they are runs of contiguous ids (so that a profile's cost grows
#: with the steps it emulates, never with the samples they read), a tuple for a shuffled read.
#: Compare them as ``tuple(ids)``.
Ids = Sequence[int]


@attrs.frozen
class Runs(Sequence[int]):
    """Sample ids as runs of consecutive ids, in reading order: a sequence of ints that costs
    what its runs cost.

    >>> ids = Runs((range(8, 10), range(0, 3)))
    >>> len(ids), tuple(ids), ids[2], ids[-1], ids[1:3]
    (5, (8, 9, 0, 1, 2), 0, 2, (9, 0))
    """

    ranges: tuple[range, ...]

    def __len__(self) -> int:
        return sum(len(run) for run in self.ranges)

    def __iter__(self) -> Iterator[int]:
        return itertools.chain.from_iterable(self.ranges)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...
    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += len(self)
        for run in self.ranges:
            if 0 <= index < len(run):
                return run[index]
            index -= len(run)
        raise IndexError("Runs index out of range")


_Call = TypeVar("_Call")


def _orders(value: Iterable[Iterable[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(order) for order in value)


@attrs.frozen(kw_only=True)
class Dataset:
    """A map-style data set of ``samples`` items whose ids are ``offset .. offset + samples - 1``,
    read in order (the profiles model unshuffled reads; a shuffled read visits the same
    positions of a permutation).

    ``orders`` is what a seeded shuffling sampler draws: epoch ``e`` reads the data in the order
    ``orders[e]`` (a permutation of ``0 .. samples - 1``; torch's ``randperm(samples)`` seeded
    ``seed + e``, which both Hugging Face and Lightning use under DDP). Without it a shuffled
    read reports the positions it reads, as an unshuffled one does.
    """

    samples: int
    offset: int = 0
    orders: tuple[tuple[int, ...], ...] = attrs.field(default=(), converter=_orders)

    def __attrs_post_init__(self) -> None:
        for epoch, order in enumerate(self.orders):
            if sorted(order) != list(range(self.samples)):
                raise ValueError(
                    f"orders[{epoch}] must be a permutation of 0..{self.samples - 1}, got "
                    f"{len(order)} values"
                )

    def ids(self, start: int, stop: int) -> range:
        """The ids at positions ``[start, stop)`` of an epoch.

        >>> Dataset(samples=100, offset=1000).ids(10, 20)
        range(1010, 1020)
        """
        return range(self.offset + start, self.offset + stop)

    def _wrapped(self, positions: range) -> Iterator[range]:
        """``positions`` (step 1) as runs of ids, those past the data's end reading its start
        again."""
        position = positions.start
        while position < positions.stop:
            place = position % self.samples
            length = min(positions.stop - position, self.samples - place)
            yield self.ids(place, place + length)
            position += length

    def read(self, positions: range, *, epoch: int, shuffled: bool) -> Ids:
        """The ids that ``positions`` of epoch ``epoch``'s sequence read: a data-parallel
        sampler's positions past the data's end read its start again, and a ``shuffled`` read
        goes through ``orders[epoch]`` when there are orders.

        >>> Dataset(samples=3, orders=[(2, 0, 1)]).read(range(2, 5), epoch=0, shuffled=True)
        (1, 2, 0)
        >>> Dataset(samples=3).read(range(0, 2), epoch=0, shuffled=False)
        range(0, 2)
        """
        if positions.step == 1 and not (shuffled and self.orders):
            if positions.stop <= self.samples:
                return self.ids(positions.start, positions.stop)
            return joined(self._wrapped(positions))
        places = [position % self.samples for position in positions]
        if shuffled and self.orders:
            if epoch >= len(self.orders):
                raise ValueError(
                    f"a shuffled read of epoch {epoch} needs orders[{epoch}]; the Dataset has "
                    f"orders for {len(self.orders)} epochs"
                )
            places = [self.orders[epoch][place] for place in places]
        return tuple(self.offset + place for place in places)


@attrs.frozen(kw_only=True)
class TrainerError:
    """An exception the trainer raises: its class name and its message, verbatim."""

    type: str
    message: str


@attrs.frozen(kw_only=True, hash=False)
class CallOutcome:
    """What one fit/train call does.

    ``batches`` holds, for each optimizer step, the ids of every sample it read (all its
    micro-batches, in order; a ``range`` when they are contiguous, so compare ``tuple(ids)``).
    ``counters`` are the trainer's own counters after the call, named as the trainer names them.
    ``messages`` are the warnings and log lines it emits about durations and resumes, verbatim.
    ``crashed`` is set when the call was killed (``crash_at``). ``rates`` are the learning
    rates of the steps, when the call has a scheduler the profile models.
    """

    steps: int
    batches: tuple[Ids, ...]
    counters: Mapping[str, int | float | None]
    messages: tuple[str, ...] = ()
    error: TrainerError | None = None
    crashed: bool = False
    #: The learning rate each optimizer step uses, as a factor of the base learning rate the
    #: script gives the trainer (empty when the call has no scheduler the profile models).
    rates: tuple[float, ...] = ()


def joined(parts: Iterable[Ids]) -> Ids:
    """One step's ids from its micro-batches' ids, in order: a ``range`` when they follow each
    other, :class:`Runs` when they are runs of consecutive ids, a tuple when a part is one.

    >>> joined([range(0, 5), range(5, 10)])
    range(0, 10)
    >>> joined([range(8, 10), range(0, 3)])
    Runs(ranges=(range(8, 10), range(0, 3)))
    >>> joined([range(0, 2), (7, 3)])
    (0, 1, 7, 3)
    """
    runs: list[range] = []
    flat: list[int] | None = None
    for part in parts:
        pieces: tuple[range, ...] | None = None
        if isinstance(part, Runs):
            pieces = part.ranges
        elif isinstance(part, range) and part.step == 1:
            pieces = (part,)
        if flat is None and pieces is not None:
            for run in pieces:
                if not run:
                    continue
                if runs and runs[-1].stop == run.start:
                    runs[-1] = range(runs[-1].start, run.stop)
                else:
                    runs.append(run)
            continue
        if flat is None:
            flat = list(itertools.chain.from_iterable(runs))
        flat.extend(part)
    if flat is not None:
        return tuple(flat)
    if not runs:
        return ()
    return runs[0] if len(runs) == 1 else Runs(tuple(runs))


class Unsupported(Exception):  # noqa: N818 - an answer about a trainer, not a failure
    """A script the trainer's vocabulary cannot express; the message says why."""


@attrs.frozen(kw_only=True)
class Translation(Generic[_Call]):
    """A ``durations`` script written in a trainer's own vocabulary.

    ``calls`` is the script run once; ``rerun`` is the same script run again after a crash, as a
    user of that trainer resumes it; ``notes`` say how each call was written, and what had no
    exact equivalent.
    """

    calls: tuple[_Call, ...]
    rerun: tuple[_Call, ...]
    notes: tuple[str, ...] = ()
    #: Where a crash is set up: on every call, or only where a trainer is built (``fresh``),
    #: for trainers whose crash (checkpoint) callback belongs to the trainer object.
    crash_on: str = attrs.field(default="all", validator=attrs.validators.in_(("all", "fresh")))
    #: What a call's ``crash_at`` counts: the trainer's steps over the whole run (``run``), or
    #: the steps of that call's own trainer, which starts from 0 (``call``).
    crash_counter: str = attrs.field(default="run", validator=attrs.validators.in_(("run", "call")))
    #: How the scenario's learning-rate schedule was written in the trainer's own schedulers,
    #: or why it could not be (empty without a schedule).
    schedule: str = ""
