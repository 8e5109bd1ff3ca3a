"""What every text output shares: numbers with thousands separators, tables, the rows a long table
shows, and lines that fit in 100 columns.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

from .._grammar import format_number
from ..progress import Progress

_T = TypeVar("_T")


#: Text output fits a terminal: the timeline and table lines stay within this many characters.
LINE_WIDTH = 100


#: A table of more rows than this shows the first and last ``EDGE_ROWS`` and says how many are left
#: out; ``--json`` lists them all.
MAX_ROWS = 40


EDGE_ROWS = 10


#: The longest call or loader name shown whole in a table or timeline.
MAX_NAME = 24


def number(value: int | Fraction | None) -> str:
    """A count grouped by thousands (``3,908``); a ratio exactly (``2.1``, ``1/3``)."""
    if value is None:
        return "?"
    if isinstance(value, Fraction) and value.denominator != 1:
        return format_number(value)
    return f"{int(value):,}"


#: A run of non-space characters longer than this (too long for a line of its own, indented)
#: is shown by its start and its length.
LONG_TOKEN = 90


#: A line longer than this many lines of ``LINE_WIDTH`` is cut there, with a count of the rest.
MAX_WRAPPED_LINES = 8


_LONG = re.compile(rf"\S{{{LONG_TOKEN + 1},}}")


def fitted(text: str) -> str:
    """``text`` with every line in ``LINE_WIDTH`` columns: a longer line has its long runs of
    non-space characters (a fingerprint, a hostile name) shown by their first 40 characters and
    their length, then is wrapped, indented under itself, to at most ``MAX_WRAPPED_LINES``
    lines and a count of what is left out. What fits is left as it is.

    >>> print(fitted("note: " + "x" * 200))
    note: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (200 characters)
    """
    out = []
    for line in text.split("\n"):
        if len(line) > LINE_WIDTH:
            line = _LONG.sub(lambda run: f"{run[0][:40]}... ({len(run[0]):,} characters)", line)
        if len(line) <= LINE_WIDTH:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
        room = MAX_WRAPPED_LINES * LINE_WIDTH
        wrapped = textwrap.wrap(
            line[:room], width=LINE_WIDTH, subsequent_indent=indent, break_on_hyphens=False
        )
        out.extend(wrapped)
        if len(line) > room:
            out.append(f"{indent}... ({len(line) - room:,} more characters)")
    return "\n".join(out)


def edges(items: Sequence[_T]) -> tuple[list[_T], int]:
    """The rows a table shows: all of them, or the first and last ``EDGE_ROWS`` when there are
    more than ``MAX_ROWS``; and how many are left out."""
    if len(items) <= MAX_ROWS:
        return list(items), 0
    return [*items[:EDGE_ROWS], *items[-EDGE_ROWS:]], len(items) - 2 * EDGE_ROWS


def elide(table: list[str], left_out: int, what: str) -> list[str]:
    """``table`` (a header and the rows of ``edges``) with a line in place of the rows left out."""
    if not left_out:
        return table
    gap = f"... {number(left_out)} more {what} (--json lists every one) ..."
    return [*table[: 1 + EDGE_ROWS], gap, *table[1 + EDGE_ROWS :]]


def clip(name: str) -> str:
    """A name as a table shows it: whole, or its start and end when it is longer than
    ``MAX_NAME`` (names of phases often differ at the end)."""
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 11]}...{name[-8:]}"


def position(p: Progress) -> str:
    tokens = "" if p.token is None else f", token {number(p.token)}"
    return (
        f"step {number(p.batch)} · epoch {number(p.epoch)}, {number(p.sample_in_epoch)} samples "
        f"in · sample {number(p.sample)}{tokens}"
    )


def aligned(rows: list[list[str]], numeric: frozenset[int] = frozenset()) -> list[str]:
    """Columns padded to their widest cell; ``numeric`` columns aligned right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines
