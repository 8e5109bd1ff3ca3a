"""``durations inspect``'s text: what a durations checkpoint records."""

from __future__ import annotations

from ..checkpoint import Checkpoint, LedgerEntry
from ._text import aligned, clip, edges, elide, number, position


def checkpoint_text(checkpoint: Checkpoint, source: str, version: object) -> str:
    state = "loader state saved" if checkpoint.loader_state else "no loader state"
    lines = [
        f"{source}: durations checkpoint, format {version}, {state}",
        f"progress: {position(checkpoint.progress)}",
    ]
    if checkpoint.taken_up is not None:
        lines.append(f"{checkpoint.taken_up}; the same script run again continues this ledger")
    if checkpoint.ledger is None:
        lines.append("ledger: none (a checkpoint without a ledger is located in the script's plan)")
    else:
        lines.append(f"ledger: {len(checkpoint.ledger)} call(s)")
        shown, left_out = edges(checkpoint.ledger)
        rows = [["call", "state", "loader", "asked", "start", "target", "stop", "fingerprint"]]
        rows.extend(_entry_row(e) for e in shown)
        table = elide(aligned(rows, frozenset({4, 6})), left_out, "calls")
        lines.extend("  " + line for line in table)
    return "\n".join(lines) + "\n"


def _entry_row(e: LedgerEntry) -> list[str]:
    if e.duration is not None:
        asked = f"duration {e.duration}"
    elif e.until is not None:
        asked = f"until {e.until}"
    else:
        asked = "max_duration"
    if e.reset_time:
        asked += ", reset_time"
    return [
        clip(e.name),
        "finished" if e.finished else "started",
        clip(e.loader.name or "-"),
        asked,
        f"{number(e.start.batch)}ba",
        str(e.target),
        "-" if e.stop is None else f"{number(e.stop.batch)}ba",
        e.fingerprint,
    ]
