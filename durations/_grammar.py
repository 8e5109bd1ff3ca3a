"""The grammar of time strings: parsing to an exact rational, and the canonical form.

The grammar is published in ``docs/grammar.md``; keep the two in step.
"""

from __future__ import annotations

import difflib
import re
from fractions import Fraction

from .errors import TimeParseError
from .units import Unit

__all__ = ["NumberError", "format_number", "parse_factor", "parse_time"]

#: The longest number part accepted, in characters, and the largest exponent magnitude.
#: Both bound the work a hostile string can cause; 1e1000 tokens is far past any real run.
MAX_NUMBER_CHARS = 200
MAX_EXPONENT = 1000
#: The longest text read at all, surrounding whitespace included: room for the longest number
#: part and unit with some padding. Longer text is refused before any other work is done on
#: it, so a hostile string costs no more than a short one.
MAX_TEXT_CHARS = 256

_DIGITS = r"[0-9](?:_?[0-9])*"  # ASCII digits, single underscores between digits only

_NUMBER = re.compile(
    rf"""
    (?:
        (?P<numerator>{_DIGITS}) / (?P<denominator>{_DIGITS})      # a ratio: 1/3
    |
        (?P<mantissa>
            {_DIGITS} (?: \. (?:{_DIGITS})? )?                     # 12, 12., 12.5
          | \. {_DIGITS}                                           # .5
        )
        (?: [eE] (?P<exponent> [+-]? {_DIGITS} ) )?                # an exponent: e6, E-3
    )
    """,
    re.VERBOSE,
)

#: The number part, then the unit: the unit is the trailing run of ASCII letters.
_SHAPE = re.compile(r"(?P<number>.*?)(?P<unit>[A-Za-z]*)", re.DOTALL)

_UNITS = {unit.value: unit for unit in Unit}
_EXPECTED_UNITS = ", ".join(unit.value for unit in Unit)

#: Spellings people write for our units, and what to write instead.
_ALIASES = {
    "batch": "ba",
    "batches": "ba",
    "step": "ba",
    "steps": "ba",
    "epoch": "ep",
    "epochs": "ep",
    "sample": "sp",
    "samples": "sp",
    "token": "tok",
    "tokens": "tok",
    "duration": "dur",
}

#: Units of Composer's grammar that are deliberately not units here, and why.
_FOREIGN_UNITS = {
    "iter": (
        "unit 'iter' (Composer's iterations, a group of epochs) is not supported; "
        "express the duration in ep, ba, sp or tok"
    ),
    "sec": (
        "unit 'sec' (wall-clock seconds) is not a training duration: it cannot be planned "
        "exactly; use the trainer's own time limit for wall-clock budgets"
    ),
}

_ASCII_WHITESPACE = " \t\n\r\f\v"


def parse_time(text: str) -> tuple[Fraction, Unit]:
    """Parse ``text`` into an exact value and a unit, or raise :class:`TimeParseError`.

    Whole-number checks per unit are left to the caller (``Time``), which owns that rule.
    """
    if not isinstance(text, str):
        raise TypeError(f"a time string must be str, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise TimeParseError(
            text,
            f"too long; a time string is at most {MAX_TEXT_CHARS} characters, whitespace "
            f"included (a number part of at most {MAX_NUMBER_CHARS}, then the unit)",
        )
    stripped = text.strip(_ASCII_WHITESPACE)
    if not stripped:
        raise TimeParseError(
            text, "empty string; expected a number followed by a unit, such as '10ba' or '2.5ep'"
        )
    for char in stripped:
        if not char.isascii():
            raise TimeParseError(
                text,
                f"non-ASCII character {char!r}; write the number with ASCII digits 0-9, "
                "such as '10ba'",
            )
    if any(char in _ASCII_WHITESPACE for char in stripped):
        raise TimeParseError(
            text, "whitespace inside the time; write the number and unit together, such as '10ba'"
        )
    lowered = stripped.lower()
    if lowered.startswith("-"):
        raise TimeParseError(text, "negative durations are not allowed; expected a number >= 0")
    if lowered.startswith("+"):
        raise TimeParseError(text, "a sign is not allowed; write the number alone, such as '10ba'")
    if lowered.startswith(("nan", "inf")):
        raise TimeParseError(
            text, "not a finite number; expected a number >= 0 followed by a unit, such as '10ba'"
        )

    shape = _SHAPE.fullmatch(stripped)
    assert shape is not None  # the shape pattern matches every string
    number, unit_text = shape.group("number"), shape.group("unit")
    unit = _parse_unit(text, unit_text)
    if not number:
        raise TimeParseError(text, f"missing number before unit {unit_text!r}, such as '10{unit}'")
    return _parse_number(text, number), unit


class NumberError(ValueError):
    """A number (a factor of the learning rate, without a unit) that breaks the grammar of a
    time's number part: ``text`` as received, ``reason`` the rule it breaks."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(reason)


def parse_factor(text: str) -> Fraction:
    """Parse a number with no unit, such as a schedule's factor ``'0.1'`` or ``'1/3'``, by the
    grammar of a time's number part and its bounds (``docs/grammar.md``), or raise
    :class:`NumberError`.

    Surrounding ASCII whitespace is ignored, as in a time string; a sign, a non-ASCII digit,
    whitespace inside, ``nan`` and ``inf`` are refused, and so are a zero denominator, a
    number part longer than :data:`MAX_NUMBER_CHARS` and an exponent beyond
    :data:`MAX_EXPONENT`, so a short hostile string costs no more than a short number.
    """
    if not isinstance(text, str):
        raise TypeError(f"a number must be str, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise NumberError(
            text, f"too long; a number is at most {MAX_TEXT_CHARS} characters, whitespace included"
        )
    stripped = text.strip(_ASCII_WHITESPACE)
    if not stripped:
        raise NumberError(text, "empty string; expected a number such as '0.1' or '1/3'")
    for char in stripped:
        if not char.isascii():
            raise NumberError(
                text,
                f"non-ASCII character {char!r}; write the number with ASCII digits 0-9, "
                "such as '0.1'",
            )
    if any(char in _ASCII_WHITESPACE for char in stripped):
        raise NumberError(text, "whitespace inside the number")
    if stripped.startswith("-"):
        raise NumberError(text, "negative; expected a number >= 0")
    if stripped.startswith("+"):
        raise NumberError(text, "a sign is not allowed; write the number alone, such as '0.1'")
    if stripped.lower().startswith(("nan", "inf")):
        raise NumberError(text, "not a finite number; expected a number >= 0, such as '0.1'")
    return _parse_number(text, stripped, NumberError)


def _parse_unit(text: str, unit_text: str) -> Unit:
    unit = _UNITS.get(unit_text)
    if unit is not None:
        return unit
    if not unit_text:
        last = text.strip(_ASCII_WHITESPACE)[-1:]
        if last and not last.isalnum() and last not in "._":
            raise TimeParseError(
                text, f"unexpected character {last!r} at the end; a time ends with its unit"
            )
        raise TimeParseError(text, f"missing unit; expected one of {_EXPECTED_UNITS}")
    lowered = unit_text.lower()
    if lowered in _UNITS:
        raise TimeParseError(text, f"unit {unit_text!r} must be written in lower case: {lowered!r}")
    if lowered in _FOREIGN_UNITS:
        raise TimeParseError(text, _FOREIGN_UNITS[lowered])
    hint = _ALIASES.get(lowered)
    if hint is None:
        close = difflib.get_close_matches(lowered, list(_UNITS), n=1)
        hint = close[0] if close else None
    suggestion = f" (did you mean {hint!r}?)" if hint else ""
    raise TimeParseError(
        text, f"unknown unit {unit_text!r}; expected one of {_EXPECTED_UNITS}{suggestion}"
    )


def _parse_number(
    text: str,
    number: str,
    error: type[TimeParseError] | type[NumberError] = TimeParseError,
) -> Fraction:
    if len(number) > MAX_NUMBER_CHARS:
        raise error(
            text, f"number part is {len(number)} characters long; at most {MAX_NUMBER_CHARS}"
        )
    match = _NUMBER.fullmatch(number)
    if match is None:
        raise error(
            text,
            f"malformed number {number!r}; expected digits with an optional decimal point and "
            "exponent (such as '2.5' or '1e6'), or a ratio of whole numbers (such as '1/3'); "
            "'_' may only stand between two digits",
        )
    if match.group("numerator") is not None:
        denominator = int(match.group("denominator"))
        if denominator == 0:
            raise error(text, f"zero denominator in {number!r}")
        return Fraction(int(match.group("numerator")), denominator)
    mantissa = match.group("mantissa").replace("_", "")
    whole, _, decimals = mantissa.partition(".")
    places: int = 10 ** len(decimals)
    value = Fraction(int(whole or "0") * places + int(decimals or "0"), places)
    exponent_text = match.group("exponent")
    if exponent_text is not None:
        exponent = int(exponent_text)
        if abs(exponent) > MAX_EXPONENT:
            raise error(
                text, f"exponent {exponent} is out of range; at most {MAX_EXPONENT} in magnitude"
            )
        scale: int = 10 ** abs(exponent)
        value = value * scale if exponent >= 0 else value / scale
    return value


def format_number(value: Fraction | int) -> str:
    """The canonical text of a non-negative rational: ``10``, ``2.1``, or ``1/3``.

    A whole number is written without a point; a value with a finite decimal expansion is
    written in full with no trailing zeros; any other value is written as a reduced ratio.
    """
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    twos = fives = 0
    rest = value.denominator
    while rest % 2 == 0:
        rest //= 2
        twos += 1
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    scaled = str(value.numerator * 10**places // value.denominator).rjust(places + 1, "0")
    return f"{scaled[:-places]}.{scaled[-places:]}".rstrip("0")
