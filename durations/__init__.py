"""durations: exact training durations, resumes and multi-phase plans.

The public names are listed in ``__all__`` and documented in ``docs/reference.md``.
"""

from __future__ import annotations

from .errors import (
    CheckpointFormatError,
    ConversionError,
    DurationsError,
    FitCallError,
    GeometryError,
    InvalidTimeError,
    NegativeTimeError,
    ProgressError,
    TimeParseError,
    UnitMismatchError,
)
from .loader import Loader
from .progress import Progress
from .time import Time
from .units import Unit

__all__ = [
    "CheckpointFormatError",
    "ConversionError",
    "DurationsError",
    "FitCallError",
    "GeometryError",
    "InvalidTimeError",
    "Loader",
    "NegativeTimeError",
    "Progress",
    "ProgressError",
    "Time",
    "TimeParseError",
    "Unit",
    "UnitMismatchError",
]

__version__ = "0.1.0"
