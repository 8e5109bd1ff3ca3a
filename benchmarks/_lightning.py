"""Lightning's progress trackers, when ``pytorch_lightning`` (and so torch) is installed."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LightningProgress:
    """The classes and the stop predicate Lightning's fit and training epoch loops use."""

    batch_progress: Any  # pytorch_lightning.loops.progress._BatchProgress
    optimization_progress: Any  # ..._OptimizationProgress
    progress: Any  # ..._Progress (the fit loop's epoch_progress)
    is_max_limit_reached: Any  # pytorch_lightning.loops.utilities._is_max_limit_reached
    version: str


def lightning_progress() -> tuple[LightningProgress | None, str]:
    """Lightning's trackers, or ``None`` and why they are unavailable."""
    try:  # import_module: no stubs are needed to type-check this without torch installed
        package = importlib.import_module("pytorch_lightning")
        progress = importlib.import_module("pytorch_lightning.loops.progress")
        utilities = importlib.import_module("pytorch_lightning.loops.utilities")
    except ImportError as error:
        return None, (
            f"pytorch_lightning is not importable ({error}); run with a Python that has torch "
            "and pytorch-lightning (pip install 'training-durations[frameworks]')"
        )
    return (
        LightningProgress(
            batch_progress=progress._BatchProgress,
            optimization_progress=progress._OptimizationProgress,
            progress=progress._Progress,
            is_max_limit_reached=utilities._is_max_limit_reached,
            version=package.__version__,
        ),
        "",
    )
