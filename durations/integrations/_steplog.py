"""The step log the callbacks write with ``step_log=PATH`` (``docs/audits.md``): one JSON line per
optimizer step, appended by rank 0, flushed and synced, so that a killed job loses at most the
line it was writing and its re-run appends to the same file; ``durations audit`` reads it.

A step's line is written when the step ends; a checkpoint saved after it is a line of its own
(``{"step": k, "checkpoint": {...}}``), written once the checkpoint is complete, which the audit
joins to the step's record.
"""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

from ..audit import LOG_FORMAT

__all__ = ["IndexTap", "StepLogWriter", "loader_state_counts"]


class StepLogWriter:
    """Appends a step log's lines to ``path`` (created on the first line)."""

    def __init__(self, path: str | os.PathLike[str], *, scenario: str | None = None) -> None:
        self.path = os.fspath(path)
        self.scenario = scenario
        self._headed = False
        self._started = False

    def _append(self, item: Mapping[str, Any]) -> None:
        with open(self.path, "a+b") as handle:
            text = json.dumps(item) + "\n"
            if not self._started:
                # A line an earlier process was killed while writing has no newline: this
                # process's lines begin on a line of their own, and the cut one stays broken.
                self._started = True
                if handle.seek(0, os.SEEK_END) > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        text = "\n" + text
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def header(self, base_lr: float | None) -> None:
        """The header line, once per process (a re-run writes its own)."""
        if self._headed:
            return
        self._headed = True
        item: dict[str, Any] = {"log": LOG_FORMAT}
        if self.scenario is not None:
            item["scenario"] = self.scenario
        if base_lr is not None:
            item["base_lr"] = float(base_lr)
        self._append(item)

    def step(
        self,
        step: int,
        *,
        loader: str | None,
        indices: list[int] | dict[str, list[int]] | None = None,
        lr: float | None = None,
    ) -> None:
        item: dict[str, Any] = {"step": step, "loader": loader}
        if indices is not None:
            item["indices"] = indices
        item["lr"] = lr
        item["checkpoint"] = None
        self._append(item)

    def checkpoint(
        self,
        step: int,
        *,
        path: str,
        loader_state: Mapping[str, Any] | None = None,
        trainer_state: Mapping[str, Any] | None = None,
    ) -> None:
        saved: dict[str, Any] = {"path": path, "loader_state": loader_state}
        if trainer_state is not None:
            saved["trainer_state"] = dict(trainer_state)
        self._append({"step": step, "checkpoint": saved})


def loader_state_counts(state: object) -> dict[str, Any] | None:
    """What the audit reads of a torchdata ``StatefulDataLoader.state_dict()`` (the counts of
    what it yielded, in the same keys), JSON-safe; ``None`` for anything else."""
    if isinstance(state, list):
        state = state[0] if len(state) == 1 else None
    if not isinstance(state, Mapping):
        return None

    def sampler_iter(main: Mapping[str, Any]) -> dict[str, Any] | None:
        found = main.get("_sampler_iter_state")
        if isinstance(found, Mapping) and isinstance(found.get("samples_yielded"), int):
            return {"samples_yielded": int(found["samples_yielded"])}
        return None

    counts: dict[str, Any] = {"_iterator_finished": bool(state.get("_iterator_finished", False))}
    snapshot = state.get("_snapshot")
    if isinstance(snapshot, Mapping):
        main = snapshot.get("_main_snapshot") or {}
        counts["_snapshot"] = {
            "_snapshot_step": snapshot.get("_snapshot_step"),
            "_main_snapshot": {"_sampler_iter_state": sampler_iter(main)},
        }
        counts["_steps_since_snapshot"] = state.get("_steps_since_snapshot", 0)
        return counts
    if "_num_yielded" not in state:
        return None
    counts["_num_yielded"] = state["_num_yielded"]
    counts["_sampler_iter_state"] = sampler_iter(state)
    return counts


class IndexTap:
    """A sampler that yields what ``sampler`` yields and keeps it, so that the step log can say
    which indices each step read: :meth:`take` gives the next step's, in the order yielded,
    however far ahead the data loader has fetched. Every other attribute is ``sampler``'s."""

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler
        # One entry per pass over the sampler: [positions left to take, indices yielded].
        self._passes: collections.deque[list[Any]] = collections.deque()

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator[int]:
        yielded: collections.deque[int] = collections.deque()
        self._passes.append([len(self.sampler), yielded])
        for index in self.sampler:
            yielded.append(int(index))
            yield index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["sampler"], name)

    def take(self, count: int) -> list[int]:
        """The indices of the next step: ``count`` positions, or the rest of the pass."""
        while self._passes and self._passes[0][0] == 0:
            self._passes.popleft()
        if not self._passes:
            return []
        current = self._passes[0]
        size = min(count, current[0])
        taken = [current[1].popleft() for _ in range(min(size, len(current[1])))]
        current[0] -= size
        return taken
