"""Diagnostics: what a plan has to say about a run, as values with stable codes."""

from __future__ import annotations

import enum

import attrs

__all__ = ["CODES", "Diagnostic", "Severity"]


class Severity(enum.Enum):
    """How much a diagnostic matters: an ``error`` means the plan is not what was asked."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: Every code a plan may carry, with its severity. The catalogue is ``docs/semantics.md``.
CODES: dict[str, Severity] = {
    "no-duration": Severity.ERROR,
    "cannot-convert": Severity.ERROR,
    "tokens-unknown": Severity.ERROR,
    "script-changed": Severity.WARNING,
    "loader-changed": Severity.WARNING,
    "ba-target-batch-size-changed": Severity.WARNING,
    "target-already-reached": Severity.WARNING,
    "mid-epoch-no-loader-state": Severity.WARNING,
    "data-replayed": Severity.WARNING,
    "data-skipped": Severity.WARNING,
    "token-stop-at-runtime": Severity.WARNING,
    "data-repeated": Severity.WARNING,
    "batch-size-changed": Severity.INFO,
    "world-size-changed": Severity.INFO,
    "data-dropped": Severity.INFO,
    "epoch-abandoned": Severity.INFO,
    "target-rounded": Severity.INFO,
    "clock-reset": Severity.INFO,
    "checkpoint-mislocated": Severity.ERROR,
    "checkpoint-located": Severity.INFO,
    "ledger-continued": Severity.INFO,
    "fresh-clock": Severity.INFO,
    "run-complete": Severity.INFO,
    "mixture-changed": Severity.WARNING,
    "mixture-edit": Severity.WARNING,
    "source-changed": Severity.WARNING,
    "source-restarted": Severity.INFO,
    "source-budget-exceeded": Severity.ERROR,
    "source-unfinished": Severity.INFO,
}


@attrs.frozen(kw_only=True)
class Diagnostic:
    """One finding about a plan: a stable ``code``, its ``severity``, and a message for people.

    ``call`` names the fit call it is about, or is ``None`` for the plan as a whole.
    """

    code: str
    message: str
    call: str | None = None
    severity: Severity = attrs.field()

    @severity.default
    def _severity_of_code(self) -> Severity:
        return CODES.get(self.code, Severity.ERROR)

    def __attrs_post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(
                f"unknown diagnostic code {self.code!r}; the codes are listed in CODES"
            )

    def __str__(self) -> str:
        where = f" [{self.call}]" if self.call is not None else ""
        return f"{self.severity.value}: {self.code}{where}: {self.message}"
