"""The exception hierarchy of ``durations``.

Every error the library raises derives from :class:`DurationsError`. Each concrete error
also derives from the builtin exception it resembles (``ValueError`` for a bad value,
``TypeError`` for a bad combination of types), so code that already catches the builtin keeps
working. Errors carry their data as attributes; their messages say what was received, what
was expected, and how to fix it. ``docs/errors.md`` is the catalogue.
"""

from __future__ import annotations

__all__ = [
    "CheckpointFormatError",
    "CompareError",
    "ConversionError",
    "DurationsError",
    "FitCallError",
    "GeometryError",
    "InvalidTimeError",
    "MixtureError",
    "NegativeTimeError",
    "ProgressError",
    "ScheduleError",
    "TimeParseError",
    "UnitMismatchError",
]


#: The longest text a message shows whole; longer text is shown by its start and its length, so
#: that a hostile megabyte does not become a megabyte of message.
SHOWN_CHARS = 256


def shown(text: str) -> str:
    """``repr(text)``, or its first 40 characters and its length when it is longer than
    ``SHOWN_CHARS``: ``'1111...'... (1,000,000 characters)``."""
    if len(text) <= SHOWN_CHARS:
        return repr(text)
    return f"{text[:40]!r}... ({len(text):,} characters)"


def shown_value(value: object) -> str:
    """:func:`shown` for any value: a string as :func:`shown` shows it; another value by its
    ``repr``, or the first 40 characters of that and the length of the ``repr`` when it is
    longer than ``SHOWN_CHARS``, so that a hostile value does not become a huge message."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, int) and value.bit_length() > 4 * SHOWN_CHARS:  # repr may refuse it
        return f"(an int of {value.bit_length():,} bits)"
    numerator = getattr(value, "numerator", None)  # a Fraction (fractions is not imported)
    denominator = getattr(value, "denominator", None)
    if (
        isinstance(numerator, int)
        and isinstance(denominator, int)
        and max(abs(numerator).bit_length(), denominator.bit_length()) > 4 * SHOWN_CHARS
    ):
        return (
            f"(a {type(value).__name__} of a {abs(numerator).bit_length():,}-bit numerator "
            f"and a {denominator.bit_length():,}-bit denominator)"
        )
    try:
        text = repr(value)
    except RecursionError:  # a container nested past the interpreter's recursion limit
        return f"(a {type(value).__name__} nested too deeply to show)"
    except ValueError:  # a container holding an int past the digits Python converts
        return f"(a {type(value).__name__} holding an int too long to show)"
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:40]}... (a {type(value).__name__} of {len(text):,} characters as repr)"


def counted(number: int) -> str:
    """``number`` with thousands separators, or, past ``4 * SHOWN_CHARS`` bits, by its size
    (:func:`shown_value`): a bound that comes from the input stays a short message."""
    if abs(number).bit_length() > 4 * SHOWN_CHARS:
        return shown_value(number)
    return f"{number:,}"


def elided(text: str) -> str:
    """``text`` (another library's message) with every run of more than 80 non-space
    characters shown by its first 40 and its length: a hostile key quoted in the message
    does not make it a megabyte long."""
    import re

    return re.sub(r"\S{81,}", lambda long: f"{long[0][:40]}... ({len(long[0]):,} characters)", text)


class DurationsError(Exception):
    """Root of every error raised by ``durations``."""


class TimeParseError(DurationsError, ValueError):
    """A time string does not match the grammar.

    ``text`` is the string received (the message shows the start of a very long one);
    ``reason`` is the rule it breaks.
    """

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"invalid time {shown(text)}: {reason}")


class InvalidTimeError(DurationsError, ValueError):
    """A ``Time`` was constructed with a value its unit does not allow."""


class NegativeTimeError(DurationsError, ValueError):
    """An arithmetic result would be a negative amount of time."""


class UnitMismatchError(DurationsError, TypeError):
    """Two times of different units were combined or compared.

    ``left`` and ``right`` are the two units.
    """

    def __init__(self, operation: str, left: object, right: object) -> None:
        self.operation = operation
        self.left = left
        self.right = right
        super().__init__(
            f"cannot {operation} times in different units: {left} and {right}; "
            "convert one of them first (Progress.steps_until and Progress.advance "
            "convert at a position of a Loader)"
        )


class GeometryError(DurationsError, ValueError):
    """A ``Loader`` was given an impossible geometry. ``field`` names the bad field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"invalid loader {field}: {message}")


class MixtureError(DurationsError, ValueError):
    """An interleave of sources was given impossible weights. ``field`` names the bad one."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"invalid mixture {field}: {message}")


class ProgressError(DurationsError, ValueError):
    """``Progress`` counters that cannot describe a real run. ``field`` names the bad counter."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"inconsistent progress {field}: {message}")


class ConversionError(DurationsError, ValueError):
    """A conversion between units needs information that was not given.

    ``missing`` names what is needed (for example ``'loader.samples'``).
    """

    def __init__(self, missing: str, message: str) -> None:
        self.missing = missing
        super().__init__(message)


class FitCallError(DurationsError, ValueError):
    """A fit call or run configuration that cannot be planned as written."""


class CheckpointFormatError(DurationsError, ValueError):
    """Serialized checkpoint data that is malformed or from a newer format.

    ``path`` is the location inside the data (for example ``'ledger[0].target'``).
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.reason = message
        where = f" at {path}" if path else ""
        super().__init__(f"invalid checkpoint data{where}: {message}")


class CompareError(DurationsError, ValueError):
    """A comparison of trainers (``durations.compare``) that cannot be made as asked: a crash
    step outside the run, a world size without a crash or on a loader with no per-device
    geometry, a plan of more steps than the emulations step through."""


class ScheduleError(DurationsError, ValueError):
    """A learning-rate schedule or event interval that is invalid, or that cannot be placed on a
    plan. ``piece`` names the piece of the schedule at fault (``None`` when there is none)."""

    def __init__(self, message: str, *, piece: str | None = None) -> None:
        self.piece = piece
        super().__init__(message)
