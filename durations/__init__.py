"""durations: exact training durations, resumes and multi-phase plans.

The public names are listed in ``__all__`` and documented in ``docs/reference.md``. They are
loaded on first use, so ``import durations`` stays cheap for a trainer that imports it at start.
"""

from __future__ import annotations

import importlib

# typing.TYPE_CHECKING without importing typing (mypy reads any TYPE_CHECKING as True): the
# command line's `--help` imports nothing it does not use.
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "Action": "plans",
    "At": "intervals",
    "AtCallEnds": "intervals",
    "Checkpoint": "checkpoint",
    "CheckpointFormatError": "errors",
    "CompareError": "errors",
    "ConversionError": "errors",
    "DataPolicy": "fit",
    "Diagnostic": "diagnostics",
    "EpochTail": "sharding",
    "DurationsError": "errors",
    "END": "schedules",
    "Events": "intervals",
    "Every": "intervals",
    "FitCall": "fit",
    "FitCallError": "errors",
    "GeometryError": "errors",
    "Interleave": "interleave",
    "InvalidTimeError": "errors",
    "Landmark": "schedules",
    "LedgerEntry": "checkpoint",
    "Loader": "loader",
    "Mixture": "mixture",
    "MixtureError": "errors",
    "NegativeTimeError": "errors",
    "OnExtend": "schedules",
    "Order": "order",
    "Padding": "sharding",
    "Plan": "plans",
    "Progress": "progress",
    "ProgressError": "errors",
    "ResolvedSchedule": "schedules",
    "ResumeMode": "fit",
    "RunConfig": "fit",
    "SampleRange": "plans",
    "Schedule": "schedules",
    "ScheduleError": "errors",
    "Segment": "plans",
    "Severity": "diagnostics",
    "Sharding": "sharding",
    "Source": "mixture",
    "SourceReads": "mixture",
    "StopRule": "mixture",
    "TakenUp": "checkpoint",
    "Time": "time",
    "TailRange": "sharding",
    "TimeParseError": "errors",
    "Unit": "units",
    "UnitMismatchError": "errors",
    "Wrap": "mixture",
    "plan": "planner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'durations' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from typing import Any

    from .checkpoint import (
        Checkpoint as Checkpoint,
        LedgerEntry as LedgerEntry,
        TakenUp as TakenUp,
    )
    from .diagnostics import Diagnostic as Diagnostic, Severity as Severity
    from .errors import (
        CheckpointFormatError as CheckpointFormatError,
        CompareError as CompareError,
        ConversionError as ConversionError,
        DurationsError as DurationsError,
        FitCallError as FitCallError,
        GeometryError as GeometryError,
        InvalidTimeError as InvalidTimeError,
        MixtureError as MixtureError,
        NegativeTimeError as NegativeTimeError,
        ProgressError as ProgressError,
        ScheduleError as ScheduleError,
        TimeParseError as TimeParseError,
        UnitMismatchError as UnitMismatchError,
    )
    from .fit import (
        DataPolicy as DataPolicy,
        FitCall as FitCall,
        ResumeMode as ResumeMode,
        RunConfig as RunConfig,
    )
    from .interleave import Interleave as Interleave
    from .intervals import (
        At as At,
        AtCallEnds as AtCallEnds,
        Events as Events,
        Every as Every,
    )
    from .loader import Loader as Loader
    from .mixture import (
        Mixture as Mixture,
        Source as Source,
        SourceReads as SourceReads,
        StopRule as StopRule,
        Wrap as Wrap,
    )
    from .planner import plan as plan
    from .plans import (
        Action as Action,
        Plan as Plan,
        SampleRange as SampleRange,
        Segment as Segment,
    )
    from .progress import Progress as Progress
    from .schedules import (
        END as END,
        Landmark as Landmark,
        OnExtend as OnExtend,
        ResolvedSchedule as ResolvedSchedule,
        Schedule as Schedule,
    )
    from .sharding import (
        EpochTail as EpochTail,
        Padding as Padding,
        Sharding as Sharding,
        TailRange as TailRange,
    )
    from .time import Time as Time
    from .units import Unit as Unit
