"""durations: exact training durations, resumes and multi-phase plans.

The public names are listed in ``__all__`` and documented in ``docs/reference.md``.
"""

from __future__ import annotations

from .checkpoint import Checkpoint, LedgerEntry
from .diagnostics import Diagnostic, Severity
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
from .fit import DataPolicy, FitCall, ResumeMode, RunConfig
from .loader import Loader
from .plan import Action, Plan, SampleRange, Segment
from .planner import plan
from .progress import Progress
from .time import Time
from .units import Unit

__all__ = [
    "Action",
    "Checkpoint",
    "CheckpointFormatError",
    "ConversionError",
    "DataPolicy",
    "Diagnostic",
    "DurationsError",
    "FitCall",
    "FitCallError",
    "GeometryError",
    "InvalidTimeError",
    "LedgerEntry",
    "Loader",
    "NegativeTimeError",
    "Plan",
    "Progress",
    "ProgressError",
    "ResumeMode",
    "RunConfig",
    "SampleRange",
    "Segment",
    "Severity",
    "Time",
    "TimeParseError",
    "Unit",
    "UnitMismatchError",
    "plan",
]

__version__ = "0.1.0"
