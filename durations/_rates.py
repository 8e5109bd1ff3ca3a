"""The factor and the learning rate at a step inside one placed piece: the formulas of
``docs/semantics.md`` S4, and the rates ``ResolvedSchedule.lr`` works out once per piece so
that each step costs a few float operations, bit for bit the formulas' result.

Kept beside ``schedules.py``, which places pieces on a plan; this module only evaluates them.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for annotations: schedules.py imports this module
    from .schedules import ResolvedPiece

#: A factor: exact (``Fraction``) wherever the math allows, a ``float`` only inside a cosine,
#: exponential or inverse-square-root piece.
Value = Fraction | float

__all__ = ["PLAIN_NUMBERS", "Rate", "Value", "factor_at", "level", "lr_of", "rate", "sqrt_ratio"]


def factor_at(piece: ResolvedPiece, step: int, origin: int) -> Value:
    """The factor at ``step`` inside ``piece`` (``piece.start <= step < piece.stop``)."""
    kind, start, v0, v1 = piece.piece.kind, piece.start, piece.start_value, piece.stop_value
    if kind == "constant":
        return v0
    if kind == "drops":
        gamma = piece.piece.gamma
        assert gamma is not None
        return v0 * gamma ** bisect.bisect_right(piece.drops, step)
    if step == start:
        return v0  # exactly where the previous piece ended, even when that is a float
    if kind == "inverse_sqrt":
        scale = start - origin
        return v0 * sqrt_ratio(scale, scale + step - start)
    progress = Fraction(step - start, piece.stop - start)
    if kind == "cosine":
        return v1 + (v0 - v1) * (1 + _cos_pi(progress)) / 2
    if kind == "exponential":
        return float(v0) * math.pow(float(v1 / v0), float(progress))
    return v0 + (v1 - v0) * progress  # warmup, linear


#: cos(pi * p) where it is rational.
_EXACT_COS = {
    Fraction(0): Fraction(1),
    Fraction(1, 3): Fraction(1, 2),
    Fraction(1, 2): Fraction(0),
    Fraction(2, 3): Fraction(-1, 2),
    Fraction(1): Fraction(-1),
}


def _cos_pi(progress: Fraction) -> Value:
    exact = _EXACT_COS.get(progress)
    return exact if exact is not None else math.cos(math.pi * float(progress))


def sqrt_ratio(numerator: int, denominator: int) -> Value:
    """sqrt(numerator / denominator), exact when it is rational."""
    ratio = Fraction(numerator, denominator)
    top, bottom = math.isqrt(ratio.numerator), math.isqrt(ratio.denominator)
    if top * top == ratio.numerator and bottom * bottom == ratio.denominator:
        return Fraction(top, bottom)
    return math.sqrt(ratio)


# -- the learning rate at a step ----------------------------------------------------------------
#
# ``lr(k, base)`` is ``lr_of(factor(k), base)``. The rates below give the same float, bit for bit,
# with what each piece needs worked out once:
# - an exact factor a/b times the exact base p/q is the int quotient (a*p) / (b*q), which CPython
#   rounds correctly, as float(Fraction) does (it divides its numerator by its denominator), so
#   both are the one float nearest the same rational; a linear piece's factor at j steps in is
#   (offset + slope*j) / denominator with ints worked out once;
# - a float factor is factor_at's own expression, its constant parts (float(v1), float(v0 - v1),
#   ...) computed once by the very operations factor_at applies to them, and float(Fraction(j, n))
#   written j / n (the same correctly rounded quotient);
# - the steps where factor_at is exact inside a float piece (cos(pi j/n) rational, a rational square
#   root) and a piece whose parts cannot be worked out take factor_at itself.
# tests/test_schedule_lr.py checks all of it against the formulas as first written.

#: The types of ``base`` the rates take as they are (a subclass goes through ``lr_of``).
PLAIN_NUMBERS = frozenset({float, int, Fraction})

#: A piece of more drops than this has its factors worked out at each step.
_MAX_DROP_LEVELS = 64


def lr_of(factor: Value, base: float | Fraction | int) -> float:
    """``base`` times ``factor``: the exact product rounded once, or a float product."""
    if isinstance(factor, Fraction):
        return float(factor * Fraction(base))  # the exact product, rounded once
    return factor * float(base)


class Rate:
    """The learning rate at the steps of one piece, or past the last one."""

    __slots__ = ()

    def lr(self, step: int, base: float | Fraction | int) -> float:
        raise NotImplementedError


class _Formulas(Rate):
    """The rate from the formulas themselves: ``factor_at``, then ``lr_of``."""

    __slots__ = ("origin", "piece")

    def __init__(self, piece: ResolvedPiece, origin: int) -> None:
        self.piece = piece
        self.origin = origin

    def lr(self, step: int, base: float | Fraction | int) -> float:
        return lr_of(factor_at(self.piece, step, self.origin), base)


class _ExactLevel(Rate):
    """A constant exact factor ``numerator / denominator``."""

    __slots__ = ("denominator", "numerator")

    def __init__(self, value: Fraction) -> None:
        self.numerator, self.denominator = value.numerator, value.denominator

    def lr(self, step: int, base: float | Fraction | int) -> float:
        top, bottom = base.as_integer_ratio()
        return self.numerator * top / (self.denominator * bottom)


class _FloatLevel(Rate):
    """A constant float factor."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value

    def lr(self, step: int, base: float | Fraction | int) -> float:
        return self.value * float(base)


def level(value: Value) -> Rate:
    return _ExactLevel(value) if isinstance(value, Fraction) else _FloatLevel(value)


class _ExactLine(Rate):
    """An exact linear piece: ``(offset + slope * j) / denominator``, ``j`` steps in."""

    __slots__ = ("denominator", "offset", "slope", "start")

    def __init__(self, piece: ResolvedPiece, v0: Fraction, v1: Fraction) -> None:
        # v0 + (v1 - v0) * j / n, with v0 = a/b and v1 - v0 = c/e: (a*e*n + c*b*j) / (b*e*n).
        length, slope = piece.stop - piece.start, v1 - v0
        self.start = piece.start
        self.offset = v0.numerator * slope.denominator * length
        self.slope = slope.numerator * v0.denominator
        self.denominator = v0.denominator * slope.denominator * length

    def lr(self, step: int, base: float | Fraction | int) -> float:
        top, bottom = base.as_integer_ratio()
        return (self.offset + self.slope * (step - self.start)) * top / (self.denominator * bottom)


class _FloatPiece(_Formulas):
    """A piece whose factor is a float inside it, but for its first step (the factor it starts
    from) and where ``factor_at`` finds it exact: each subclass writes its float formula in
    ``lr``, and leaves those steps to ``exactly``."""

    __slots__ = ("at_start", "length", "start")

    def __init__(self, piece: ResolvedPiece, origin: int) -> None:
        super().__init__(piece, origin)
        self.start, self.length = piece.start, piece.stop - piece.start
        self.at_start = level(piece.start_value)

    def exactly(self, step: int, base: float | Fraction | int) -> float:
        if step == self.start:
            return self.at_start.lr(step, base)
        return lr_of(factor_at(self.piece, step, self.origin), base)


class _FloatLine(_FloatPiece):
    """A linear piece from a float: ``v0 + (v1 - v0) * (j / n)``."""

    __slots__ = ("slope", "v0")

    def __init__(self, piece: ResolvedPiece, origin: int, v0: float) -> None:
        super().__init__(piece, origin)
        self.v0 = v0
        self.slope = float(piece.stop_value - v0)

    def lr(self, step: int, base: float | Fraction | int) -> float:
        if step == self.start:
            return self.exactly(step, base)
        return (self.v0 + self.slope * ((step - self.start) / self.length)) * float(base)


class _Cosine(_FloatPiece):
    """``v1 + (v0 - v1) * (1 + cos(pi * j / n)) / 2``; exact where cos(pi * j / n) is rational:
    at the piece's start, a third, half and two thirds of the way."""

    __slots__ = ("exact", "floor", "height")

    def __init__(self, piece: ResolvedPiece, origin: int) -> None:
        super().__init__(piece, origin)
        n, start = self.length, self.start
        thirds = {start + n * k // d for k, d in ((1, 2), (1, 3), (2, 3)) if n * k % d == 0}
        self.exact = frozenset({start, *thirds})
        self.floor = float(piece.stop_value)
        self.height = float(piece.start_value - piece.stop_value)

    def lr(self, step: int, base: float | Fraction | int) -> float:
        if step in self.exact:
            return self.exactly(step, base)
        cos = math.cos(math.pi * ((step - self.start) / self.length))
        return (self.floor + self.height * (1 + cos) / 2) * float(base)


class _Exponential(_FloatPiece):
    """``float(v0) * (v1 / v0) ** (j / n)``."""

    __slots__ = ("ratio", "v0")

    def __init__(self, piece: ResolvedPiece, origin: int) -> None:
        super().__init__(piece, origin)
        self.v0 = float(piece.start_value)
        self.ratio = float(piece.stop_value / piece.start_value)

    def lr(self, step: int, base: float | Fraction | int) -> float:
        if step == self.start:
            return self.exactly(step, base)
        return self.v0 * math.pow(self.ratio, (step - self.start) / self.length) * float(base)


class _InverseSqrt(_FloatPiece):
    """``v0 * sqrt(t / (t + j))``, ``t`` the steps before the piece; exact where that root is
    rational, that is where ``t * (t + j)`` is a square (at the piece's start, for one)."""

    __slots__ = ("scale", "v0")

    def __init__(self, piece: ResolvedPiece, origin: int) -> None:
        super().__init__(piece, origin)
        self.v0 = float(piece.start_value)
        self.scale = piece.start - origin

    def lr(self, step: int, base: float | Fraction | int) -> float:
        scale = self.scale
        after = scale + step - self.start
        square = scale * after
        root = math.isqrt(square)
        if root * root == square:
            return self.exactly(step, base)
        return self.v0 * math.sqrt(scale / after) * float(base)


class _Drops(Rate):
    """The level after the drops up to the step: ``v0 * gamma ** i``, worked out for each ``i``."""

    __slots__ = ("drops", "levels")

    def __init__(self, piece: ResolvedPiece, gamma: Fraction) -> None:
        v0 = piece.start_value
        self.drops = piece.drops
        self.levels = tuple(level(v0 * gamma**i) for i in range(len(piece.drops) + 1))

    def lr(self, step: int, base: float | Fraction | int) -> float:
        return self.levels[bisect.bisect_right(self.drops, step)].lr(step, base)


def rate(piece: ResolvedPiece, origin: int) -> Rate:
    """The rate at the steps of ``piece``; the formulas where no part can be worked out."""
    kind, v0, v1 = piece.piece.kind, piece.start_value, piece.stop_value
    try:
        if kind == "constant":
            return level(v0)
        if kind == "drops":
            gamma = piece.piece.gamma
            assert gamma is not None
            if len(piece.drops) > _MAX_DROP_LEVELS:
                return _Formulas(piece, origin)
            return _Drops(piece, gamma)
        if kind in ("warmup", "linear"):
            if isinstance(v0, Fraction) and isinstance(v1, Fraction):
                return _ExactLine(piece, v0, v1)
            assert isinstance(v0, float)
            return _FloatLine(piece, origin, v0)
        if kind == "cosine":
            return _Cosine(piece, origin)
        if kind == "exponential":
            return _Exponential(piece, origin)
        return _InverseSqrt(piece, origin)
    except (ArithmeticError, ValueError):
        # A factor too large for a float, say: factor_at raises, or not, as it always did.
        return _Formulas(piece, origin)
