"""``Time``: an exact, immutable amount of training time in one unit."""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from fractions import Fraction
from numbers import Rational
from typing import Self

import attrs

from ._grammar import MAX_TEXT_CHARS, format_number, parse_time
from .errors import InvalidTimeError, NegativeTimeError, TimeParseError, UnitMismatchError
from .units import Unit

__all__ = ["Time", "TimeValue"]

#: The exact values a ``Time`` holds: ``int`` when whole, otherwise ``Fraction``.
TimeValue = int | Fraction


def _to_value(value: object) -> TimeValue:
    """Normalize a number to ``int`` when whole, else ``Fraction``; refuse inexact input."""
    if type(value) is int and value >= 0:  # the common case, first
        return value
    if type(value) is Fraction and value >= 0:
        return value.numerator if value.denominator == 1 else value
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, Decimal, Rational)):
        if isinstance(value, float):
            raise InvalidTimeError(
                f"invalid time value {value!r}: a float is inexact; pass an int, a Fraction, "
                f"or parse a string, such as Time.parse('2.1ep')"
            )
        raise InvalidTimeError(
            f"invalid time value {value!r}: expected an int or a Fraction, "
            f"not {type(value).__name__}"
        )
    if isinstance(value, Decimal) and not value.is_finite():
        raise InvalidTimeError(f"invalid time value {value!r}: expected a finite number")
    exact = Fraction(value)  # every accepted type converts exactly
    if exact < 0:
        raise InvalidTimeError(f"invalid time value {value!r}: expected a number >= 0")
    return exact.numerator if exact.denominator == 1 else exact


def _to_unit(unit: object) -> Unit:
    if isinstance(unit, Unit):
        return unit
    if isinstance(unit, str):
        try:
            return Unit(unit)
        except ValueError:
            pass
    expected = ", ".join(repr(u.value) for u in Unit)
    raise InvalidTimeError(f"invalid time unit {unit!r}: expected a Unit or one of {expected}")


@attrs.frozen(repr=False, order=False)
class Time:
    """An exact, non-negative amount of training time in one :class:`Unit`.

    ``ba``, ``sp`` and ``tok`` hold whole numbers; ``ep`` and ``dur`` hold any rational.
    Equality is by value and type: a ``Time`` never equals a number or a string, and
    ``hash`` agrees with ``==``. Times of different units neither compare nor combine.

    >>> Time.parse("2.1ep")
    Time.parse('2.1ep')
    >>> Time.parse("2.1ep").value
    Fraction(21, 10)
    >>> str(Time(10, "ba") + Time.parse("5ba"))
    '15ba'
    """

    value: TimeValue = attrs.field(converter=_to_value)
    unit: Unit = attrs.field(converter=_to_unit)

    def __attrs_post_init__(self) -> None:
        _check_writable(self.value)
        if self.unit.is_whole and isinstance(self.value, Fraction):
            raise InvalidTimeError(
                f"invalid time {format_number(self.value)}{self.unit}: {self.unit} counts whole "
                f"{_WHOLE_NAMES[self.unit]}, so its value must be a whole number"
            )

    @classmethod
    def parse(cls, text: str) -> Self:
        """Parse a time string exactly (see ``docs/grammar.md``).

        >>> Time.parse("1e6tok").value
        1000000
        >>> Time.parse("1.5ba")
        Traceback (most recent call last):
          ...
        durations.errors.TimeParseError: invalid time '1.5ba': 1.5 is not a whole number; ...
        """
        if cls is Time and isinstance(text, str) and len(text) <= MAX_TEXT_CHARS:
            return _parse_cached(text)  # type: ignore[return-value]  # cls is Time here
        return cls(*_parse_checked(text))

    def __str__(self) -> str:
        return f"{format_number(self.value)}{self.unit.value}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}.parse({str(self)!r})"

    # Ordering: only within one unit. attrs' order=True would order tuples across units.

    def _check_unit(self, other: Time, operation: str) -> None:
        if other.unit is not self.unit:
            raise UnitMismatchError(operation, self.unit, other.unit)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "compare")
        return self.value < other.value

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "compare")
        return self.value <= other.value

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "compare")
        return self.value > other.value

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "compare")
        return self.value >= other.value

    # Arithmetic within one unit.

    def __add__(self, other: object) -> Time:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "add")
        return Time(self.value + other.value, self.unit)

    def __sub__(self, other: object) -> Time:
        if not isinstance(other, Time):
            return NotImplemented
        self._check_unit(other, "subtract")
        if other.value > self.value:
            raise NegativeTimeError(
                f"cannot subtract {other} from {self}: the result would be negative"
            )
        return Time(self.value - other.value, self.unit)

    def __mul__(self, factor: object) -> Time:
        if isinstance(factor, bool) or not isinstance(factor, (int, Fraction)):
            return NotImplemented
        if factor < 0:
            raise NegativeTimeError(
                f"cannot multiply {self} by {factor}: the result would be negative"
            )
        return Time(self.value * factor, self.unit)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Fraction | Time:
        """``Time / Time`` (same unit) is their exact ratio; ``Time / number`` scales."""
        if isinstance(other, Time):
            self._check_unit(other, "divide")
            if other.value == 0:
                raise ZeroDivisionError(f"cannot divide {self} by {other}")
            return Fraction(self.value) / other.value
        if isinstance(other, bool) or not isinstance(other, (int, Fraction)):
            return NotImplemented
        if other == 0:
            raise ZeroDivisionError(f"cannot divide {self} by zero")
        if other < 0:
            raise NegativeTimeError(
                f"cannot divide {self} by {other}: the result would be negative"
            )
        return Time(Fraction(self.value) / other, self.unit)


_WHOLE_NAMES = {Unit.BA: "optimizer steps", Unit.SP: "samples", Unit.TOK: "tokens"}


#: The longest canonical number part a Time may have: every Time can be written and read back.
MAX_CANONICAL_CHARS = 200


def _check_writable(value: TimeValue) -> None:
    """Refuse a value whose canonical text is longer than the grammar reads back."""
    if isinstance(value, int):
        if value.bit_length() < 600:
            return  # at most about 180 digits: no need to write it out
        fraction = Fraction(value)
    else:
        fraction = value
        if fraction.numerator.bit_length() + 4 * fraction.denominator.bit_length() < 600:
            return
    length = len(format_number(fraction))
    if length > MAX_CANONICAL_CHARS:
        raise InvalidTimeError(
            f"invalid time value: its canonical form has {length} digits; at most "
            f"{MAX_CANONICAL_CHARS}, so that every time can be written and read back"
        )


def _parse_checked(text: str) -> tuple[Fraction, Unit]:
    value, unit = parse_time(text)
    try:
        _check_writable(value)
    except InvalidTimeError:
        raise TimeParseError(
            text,
            f"the value is too large or too precise to write back in at most "
            f"{MAX_CANONICAL_CHARS} characters",
        ) from None
    if unit.is_whole and value.denominator != 1:
        raise TimeParseError(
            text,
            f"{format_number(value)} is not a whole number; "
            f"{unit} counts whole {_WHOLE_NAMES[unit]}",
        )
    return value, unit


#: The common shapes, already canonical: digits then a unit (``10ba``), or a decimal ratio unit
#: (``2.1ep``). Anything else takes the full grammar in ``_grammar``.
_SIMPLE = re.compile(r"([1-9][0-9]{0,17}|0)(ba|ep|sp|tok|dur)")
_UNITS = {unit.value: unit for unit in Unit}


@functools.lru_cache(maxsize=1024)
def _parse_cached(text: str) -> Time:
    """Times are immutable, so the same text may share one value (config strings repeat)."""
    simple = _SIMPLE.fullmatch(text)
    if simple is not None:
        # A whole number within 18 digits in a known unit: valid by construction.
        time: Time = object.__new__(Time)
        object.__setattr__(time, "value", int(simple.group(1)))
        object.__setattr__(time, "unit", _UNITS[simple.group(2)])
        return time
    return Time(*_parse_checked(text))
