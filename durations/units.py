"""The units a duration is measured in."""

from __future__ import annotations

import enum

__all__ = ["Unit"]


class Unit(enum.Enum):
    """A unit of training time.

    ``BA``, ``SP`` and ``TOK`` count whole things and take whole numbers; ``EP`` and ``DUR``
    are ratios and take any non-negative rational number.
    """

    #: One optimizer step over one global batch (gradient accumulation happens inside it).
    BA = "ba"
    #: One pass over a loader's samples.
    EP = "ep"
    #: One sample (global: summed over every device).
    SP = "sp"
    #: One token.
    TOK = "tok"
    #: A fraction of the run's ``max_duration``, resolved by the planner.
    DUR = "dur"

    @property
    def is_whole(self) -> bool:
        """Whether values in this unit must be whole numbers."""
        return self in _WHOLE

    def __str__(self) -> str:
        return self.value


_WHOLE = frozenset({Unit.BA, Unit.SP, Unit.TOK})
