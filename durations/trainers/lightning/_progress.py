"""Lightning's progress trackers and restart stages, as ``loops/progress.py`` and
``loops/utilities.py`` keep them (the Lightning profile's bookkeeping; private)."""

from __future__ import annotations

from enum import Enum

import attrs


@attrs.define
class _Tracker:
    """``_ProcessedTracker``: ready, started, processed, completed (``loops/progress.py``)."""

    ready: int = 0
    started: int = 0
    processed: int = 0
    completed: int = 0

    def reset(self) -> None:
        self.ready = self.started = self.processed = self.completed = 0

    def reset_on_restart(self) -> None:
        self.ready = self.started = self.processed = self.completed


@attrs.define
class _Progress:
    """``_Progress``/``_BatchProgress``: a total and a current tracker."""

    total: _Tracker = attrs.field(factory=_Tracker)
    current: _Tracker = attrs.field(factory=_Tracker)
    is_last_batch: bool = False

    def increment_ready(self) -> None:
        self.total.ready += 1
        self.current.ready += 1

    def increment_started(self) -> None:
        self.total.started += 1
        self.current.started += 1

    def increment_processed(self) -> None:
        self.total.processed += 1
        self.current.processed += 1

    def increment_completed(self) -> None:
        self.total.completed += 1
        self.current.completed += 1

    def reset_on_run(self) -> None:
        self.current.reset()
        self.is_last_batch = False

    def reset_on_restart(self) -> None:
        self.current.reset_on_restart()

    def counters(self, name: str) -> dict[str, int | float | None]:
        """The trackers as flat counters, ``{name}_{total|current}_{field}``."""
        return {
            f"{name}_{label}_{field}": getattr(tracker, field)
            for label, tracker in (("total", self.total), ("current", self.current))
            for field in ("ready", "started", "processed", "completed")
        }

    def copy(self) -> _Progress:
        return _Progress(
            total=attrs.evolve(self.total),
            current=attrs.evolve(self.current),
            is_last_batch=self.is_last_batch,
        )


class _Stage(Enum):
    """``RestartStage`` (``loops/utilities.py``)."""

    NONE = "none"
    ON_EPOCH_START = "restarted_on_epoch_start"
    MID_EPOCH = "restarted_mid_epoch"
    ON_EPOCH_END = "restarted_on_epoch_end"
    RESUMED_ON_EPOCH_END = "resumed_on_epoch_end"
    ON_TRAIN_BATCH_END = "restarted_on_train_batch_end"
    ON_LAST = "restarted_on_last"
