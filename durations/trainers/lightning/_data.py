"""What a Lightning fit reads: a ``DataLoader`` or a torchdata ``StatefulDataLoader`` over one
rank's share of the data set as torch's ``DistributedSampler`` deals it, and Lightning's
prefetching fetcher over it (the Lightning profile's data; private)."""

from __future__ import annotations

from typing import Literal

import attrs

from .._outcome import Dataset, Ids

LoaderKind = Literal["plain", "stateful"]


class _ExhaustedError(Exception):
    """The loader or the fetcher is exhausted (internal control flow)."""


@attrs.frozen
class _LoaderState:
    """A ``StatefulDataLoader`` state: samples yielded by its iterator, and whether it ended."""

    position: int
    finished: bool


@attrs.define
class _Iterator:
    """A loader iterator over positions ``position ..`` of one rank's share of the data set."""

    samples: int
    batch_size: int
    drop_last: bool = False
    position: int = 0
    finished: bool = False

    def next(self) -> tuple[int, int]:
        left = self.samples - self.position
        if left <= 0 or (self.drop_last and left < self.batch_size):
            self.finished = True
            raise _ExhaustedError
        start = self.position
        self.position = min(start + self.batch_size, self.samples)
        return start, self.position


@attrs.define
class _Loader:
    """A ``DataLoader`` or ``StatefulDataLoader`` built for one call, as every rank has it:
    each of ``world_size`` ranks reads ``per_rank`` positions (one process: all of them)."""

    kind: LoaderKind
    data: Dataset
    batch_size: int
    drop_last: bool = False
    world_size: int = 1
    shuffled: bool = False
    pending: _LoaderState | None = None
    iterator: _Iterator | None = None

    @property
    def class_name(self) -> str:
        return "StatefulDataLoader" if self.kind == "stateful" else "DataLoader"

    @property
    def per_rank(self) -> int:
        """``DistributedSampler.num_samples``: the epoch padded to a multiple of the ranks."""
        return -(-self.data.samples // self.world_size)

    def __len__(self) -> int:
        if self.drop_last:
            return self.per_rank // self.batch_size
        return -(-self.per_rank // self.batch_size)

    def ids(self, start: int, stop: int, epoch: int) -> Ids:
        """The ids every rank reads at its positions ``[start, stop)`` of sampler epoch
        ``epoch``: rank r's position i is the padded sequence's ``i * world_size + r``."""
        read = range(start * self.world_size, stop * self.world_size)
        return self.data.read(read, epoch=epoch, shuffled=self.shuffled)

    def fresh_iterator(self, state: _LoaderState | None = None) -> _Iterator:
        iterator = _Iterator(self.per_rank, self.batch_size, self.drop_last)
        if state is not None:
            iterator.position = min(state.position, self.per_rank)
            iterator.finished = state.finished
        return iterator

    def iter(self) -> _Iterator:
        """``iter(loader)``: a stateful loader resumes a loaded state unless it had ended."""
        state, self.pending = self.pending, None
        iterator = self.fresh_iterator(state)
        if iterator.finished:
            iterator = self.fresh_iterator()
        self.iterator = iterator
        return iterator

    def state(self) -> _LoaderState:
        """``StatefulDataLoader.state_dict()``."""
        if self.iterator is None:
            return self.pending if self.pending is not None else _LoaderState(0, False)
        return _LoaderState(self.iterator.position, self.iterator.finished)


@attrs.define
class _Fetcher:
    """``_PrefetchDataFetcher`` over a sized loader: counts fetches against its length."""

    loader: _Loader
    length: int
    iterator: _Iterator
    fetched: int = 0
    done: bool = False

    @classmethod
    def start(cls, loader: _Loader, length: int) -> _Fetcher:
        return cls(loader=loader, length=length, iterator=loader.iter(), done=length == 0)

    def restart(self) -> None:
        self.iterator = self.loader.iter()
        self.fetched = 0
        self.done = self.length == 0

    def next(self) -> tuple[int, int]:
        if self.done:
            raise _ExhaustedError
        try:
            batch = self.iterator.next()
        except _ExhaustedError:
            self.done = True
            raise
        self.fetched += 1
        self.done = self.fetched >= self.length
        return batch
