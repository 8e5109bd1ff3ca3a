"""What every trainer profile reports: the shared value types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

import attrs

__all__ = ["CallOutcome", "Dataset", "TrainerError", "Translation", "Unsupported"]

_Call = TypeVar("_Call")


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
