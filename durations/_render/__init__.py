"""Every output of the ``durations`` command, one module per output: pure functions from
the core's values to text or JSON values (the command prints them). ``_text`` holds what the
text outputs share."""

from __future__ import annotations

from ._text import LINE_WIDTH, fitted, number
from .as_json import MAX_JSON_EVENTS, events_json, plan_json, schedule_json
from .checkpoint import checkpoint_text
from .compare import compare_json, compare_text
from .convert import convert_text
from .indices import indices_json, indices_text
from .plan import plan_text, timeline
from .schedule import MAX_COUNTED_EVENTS, boundary_text, clock_at, interval_text, schedule_text

__all__ = [
    "LINE_WIDTH",
    "MAX_COUNTED_EVENTS",
    "MAX_JSON_EVENTS",
    "boundary_text",
    "checkpoint_text",
    "clock_at",
    "compare_json",
    "compare_text",
    "convert_text",
    "events_json",
    "fitted",
    "indices_json",
    "indices_text",
    "interval_text",
    "number",
    "plan_json",
    "plan_text",
    "schedule_json",
    "schedule_text",
    "timeline",
]
