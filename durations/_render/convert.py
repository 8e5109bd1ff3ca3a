"""``durations convert``'s text: a time in every unit at the start of a run."""

from __future__ import annotations

from ..errors import ConversionError
from ..loader import Loader
from ..progress import Progress
from ..time import Time
from ..units import Unit
from ._text import number


def convert_text(target: Time, loader: Loader) -> str:
    """``target`` in every unit, at the start of a run on ``loader``."""
    geometry = (
        f"{number(loader.samples)} samples an epoch" if loader.samples is not None else "a stream"
    )
    tokens = (
        f", {number(loader.tokens_per_sample)} tokens a sample"
        if loader.tokens_per_sample is not None
        else ""
    )
    drop = ", drop_last" if loader.drop_last else ""
    lines = [f"{target} on {geometry}, batch {number(loader.batch_size)}{tokens}{drop}:"]
    start = Progress()
    try:
        steps = start.steps_until(target, loader=loader)
    except ConversionError as error:
        lines.append(f"  {error}")
        return "\n".join(lines) + "\n"
    stop = start.advance(loader, steps)
    for unit in (Unit.BA, Unit.SP, Unit.EP, Unit.TOK):
        try:
            reached = stop.time_in(unit, loader=loader)
        except ConversionError as error:
            lines.append(f"  {unit.value:<4}unknown: {_missing_hint(error)}")
            continue
        note = ""
        if unit is target.unit and reached != target:
            note = f"   (the first step boundary at or past {target})"
        elif unit is Unit.BA:
            note = "   (optimizer steps to reach it)"
        lines.append(f"  {unit.value:<4}{number(reached.value)}{note}")
    return "\n".join(lines) + "\n"


def _missing_hint(error: ConversionError) -> str:
    hints = {
        "loader.samples": "give --samples",
        "loader.tokens_per_sample": "give --tokens-per-sample",
        "progress.token": "give --tokens-per-sample",
    }
    return hints.get(error.missing, str(error))
