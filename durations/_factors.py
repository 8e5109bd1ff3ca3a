"""The factors of a learning-rate schedule: what is accepted as one, and the bounds that keep
every exact factor a schedule reaches printable and convertible to a float.

The rules are published in ``docs/schedules.md`` (section "Factors"); keep the two in step.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ._grammar import NumberError, format_number, parse_factor
from .errors import ScheduleError, shown_value

__all__ = ["MAX_DIGITS", "MAX_FACTOR", "MAX_REACHED_DIGITS", "factor", "power"]

#: The largest factor: a learning rate a million times its base is a mistake, not a schedule.
MAX_FACTOR = 10**6
#: A factor given is a ratio of whole numbers of at most this many digits each: far finer than
#: a float's 17 significant digits, and small enough that products stay cheap.
MAX_DIGITS = 100
#: A factor a schedule reaches (drops multiply their ``gamma`` in, exactly) is a ratio of whole
#: numbers of at most this many digits each, so that an interpolation between two of them
#: stays well below Python's 4,300-digit limit on printing an int.
MAX_REACHED_DIGITS = 1000

_DIGITS_BOUND = 10**MAX_DIGITS
_REACHED_BOUND = 10**MAX_REACHED_DIGITS


def factor(value: object, what: str) -> Fraction:
    """An exact factor >= 0 from an int, a Fraction, a finite Decimal or a number string
    (the number grammar of time strings, without a unit), within the bounds above."""
    if isinstance(value, float):
        raise ScheduleError(
            f"invalid {what} {value!r}: a float is inexact; pass an int, a Fraction such as "
            "Fraction(1, 10), or the text '0.1'"
        )
    if isinstance(value, str):
        try:
            exact = parse_factor(value)
        except NumberError as error:
            raise ScheduleError(f"invalid {what} {shown_value(value)}: {error.reason}") from None
    elif isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        exact = Fraction(value)
    elif isinstance(value, Decimal) and value.is_finite():
        exact = _decimal(value, what)
    else:
        raise ScheduleError(
            f"invalid {what} {shown_value(value)}: expected an int, a Fraction or a number "
            "string such as '0.1'"
        )
    if exact < 0:
        raise ScheduleError(
            f"invalid {what} {shown_value(value)}: a factor of the learning rate is >= 0"
        )
    if exact > MAX_FACTOR:
        raise ScheduleError(
            f"invalid {what} {shown_value(value)}: at most {MAX_FACTOR:,} (a factor multiplies "
            "the base learning rate)"
        )
    if exact.denominator >= _DIGITS_BOUND or exact.numerator >= _DIGITS_BOUND:
        raise ScheduleError(
            f"invalid {what} {shown_value(value)}: too fine; an exact factor is a ratio of whole "
            f"numbers of at most {MAX_DIGITS} digits each (this one's are "
            f"{_digits(exact.numerator)} and {_digits(exact.denominator)})"
        )
    return exact


def _decimal(value: Decimal, what: str) -> Fraction:
    """A finite Decimal as a Fraction; one whose digits or exponent alone are far past the
    bounds is refused before the conversion would cost its size (``Decimal('1e100000000')``
    is 25 bytes)."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite
    if len(digits) > 4 * MAX_DIGITS or abs(exponent) > 4 * MAX_DIGITS:
        raise ScheduleError(
            f"invalid {what} {shown_value(value)}: out of range; a factor is at most "
            f"{MAX_FACTOR:,}, a ratio of whole numbers of at most {MAX_DIGITS} digits each"
        )
    return Fraction(value)


def power(start: Fraction, gamma: Fraction, drops: int, label: str) -> Fraction:
    """``start * gamma ** drops``, exactly: the factor after ``drops`` drops by ``gamma``.

    Refused (naming ``label``) when it would be above :data:`MAX_FACTOR` or a ratio of more
    than :data:`MAX_REACHED_DIGITS` digits: the power is only worked out once its size is
    known to be within twice the bound, so 100,000 drops cost no more than a few.
    """
    how = f"{drops:,} drops by {format_number(gamma)}"
    if start == 0 or gamma in (0, 1) or drops == 0:
        return start * gamma**drops
    # gamma ** drops has about drops * log10(part) digits in each part: over twice the bound,
    # refused without working it out.
    largest = max(gamma.numerator, gamma.denominator)
    if (largest.bit_length() - 1) * drops > 2 * 3.33 * MAX_REACHED_DIGITS:
        raise ScheduleError(_too_many_digits(label, how), piece=label)
    value = start * gamma**drops
    if value > MAX_FACTOR:
        raise ScheduleError(
            f"{label}: {how} take the factor above {MAX_FACTOR:,}; use fewer drops or a "
            "smaller gamma",
            piece=label,
        )
    if value.numerator >= _REACHED_BOUND or value.denominator >= _REACHED_BOUND:
        raise ScheduleError(_too_many_digits(label, how), piece=label)
    return value


def _too_many_digits(label: str, how: str) -> str:
    return (
        f"{label}: {how} make the exact factor a ratio of whole numbers of more than "
        f"{MAX_REACHED_DIGITS:,} digits; a factor a schedule reaches has at most that many in "
        "each: use fewer drops, or a gamma of fewer digits"
    )


def _digits(number: int) -> int:
    """The decimal digits of ``number`` >= 0, without printing it (it may be too long to)."""
    if number < 10**18:
        return len(str(number))
    estimate = int(number.bit_length() * 0.30102999566398120)
    return estimate + 1 if number >= 10**estimate else estimate
