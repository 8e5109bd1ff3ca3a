"""What every trainer profile reports: the shared value types."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = ["CallOutcome", "Dataset", "TrainerError"]


@attrs.frozen(kw_only=True)
class Dataset:
    """A map-style data set of ``samples`` items whose ids are ``offset .. offset + samples - 1``,
    read in order (the profiles model unshuffled reads; a shuffled read visits the same
    positions of a permutation)."""

    samples: int
    offset: int = 0

    def ids(self, start: int, stop: int) -> tuple[int, ...]:
        """The ids at positions ``[start, stop)`` of an epoch."""
        return tuple(range(self.offset + start, self.offset + stop))


@attrs.frozen(kw_only=True)
class TrainerError:
    """An exception the trainer raises: its class name and its message, verbatim."""

    type: str
    message: str


@attrs.frozen(kw_only=True, hash=False)
class CallOutcome:
    """What one fit/train call does.

    ``batches`` holds, for each optimizer step, the ids of every sample it read (all its
    micro-batches, in order). ``counters`` are the trainer's own counters after the call, named
    as the trainer names them. ``messages`` are the warnings and log lines it emits about
    durations and resumes, verbatim. ``crashed`` is set when the call was killed after a
    checkpoint (``crash_at``).
    """

    steps: int
    batches: tuple[tuple[int, ...], ...]
    counters: Mapping[str, int | float | None]
    messages: tuple[str, ...] = ()
    error: TrainerError | None = None
    crashed: bool = False
