"""``Time`` values: construction, equality and hashing, ordering, and arithmetic within a unit."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from durations import (
    DurationsError,
    InvalidTimeError,
    NegativeTimeError,
    Time,
    Unit,
    UnitMismatchError,
)

from .strategies import times, values_for

EP, BA, SP = Unit.EP, Unit.BA, Unit.SP


class TestConstruction:
    """``Time(value, unit)`` holds an exact non-negative value; whole units hold whole numbers."""

    def test_unit_from_string(self) -> None:
        """The unit may be given by its text."""
        assert Time(3, "ep") == Time(3, EP)

    def test_whole_fraction_becomes_int(self) -> None:
        """A whole Fraction is stored as int, so the stored type depends only on the value."""
        t = Time(Fraction(4, 2), BA)
        assert t.value == 2
        assert type(t.value) is int

    def test_decimal_is_exact(self) -> None:
        """A Decimal converts exactly."""
        assert Time(Decimal("2.1"), EP).value == Fraction(21, 10)

    @pytest.mark.parametrize(
        ("value", "unit", "expected"),
        [
            (Decimal("2"), BA, 2),  # a whole Decimal is a whole count
            (Decimal("2.000"), BA, 2),  # however it is written
            (Decimal("0.5"), EP, Fraction(1, 2)),  # a half stays a half
            (Decimal("0"), BA, 0),
            (Fraction(0), EP, 0),  # zero is a value like any other
            (0, BA, 0),
        ],
    )
    def test_stored_exactly(self, value: object, unit: Unit, expected: int | Fraction) -> None:
        """Every accepted number is stored exactly: as int when whole, else as Fraction, so the
        stored type depends only on the value, not on the type passed."""
        t = Time(value, unit)
        assert t.value == expected
        assert type(t.value) is type(expected)

    @pytest.mark.parametrize(
        ("value", "unit", "message"),
        [
            (1.5, EP, "a float is inexact; pass an int, a Fraction, or parse a string"),  # float
            (True, BA, "expected an int or a Fraction, not bool"),  # bool is not a count
            ("10", BA, "expected an int or a Fraction, not str"),  # use Time.parse for text
            (-1, BA, "expected a number >= 0"),  # negative
            (Fraction(-1, 2), EP, "expected a number >= 0"),
            (Decimal("NaN"), EP, "expected a finite number"),
            (Fraction(3, 2), BA, "ba counts whole optimizer steps"),  # whole unit
            (Fraction(3, 2), SP, "sp counts whole samples"),
            (  # every unit's text, in Unit's order
                1,
                "epochs",
                "invalid time unit 'epochs': expected a Unit or one of 'ba', 'ep', 'sp', 'tok', "
                "'dur'",
            ),
            (  # 10**250: 251 digits cannot be written back within the grammar's 200
                Decimal("1e250"),
                BA,
                "invalid time value: its canonical form has 251 digits; at most 200, so that "
                "every time can be written and read back",
            ),
            (1, 3, "invalid time unit 3"),
        ],
    )
    def test_invalid(self, value: object, unit: object, message: str) -> None:
        """Bad values raise InvalidTimeError, a ValueError that says what to pass instead."""
        with pytest.raises(InvalidTimeError, match=re.escape(message)) as info:
            Time(value, unit)  # type: ignore[arg-type]
        assert isinstance(info.value, ValueError)
        assert isinstance(info.value, DurationsError)

    def test_frozen(self) -> None:
        """A Time cannot be changed after construction."""
        t = Time(1, EP)
        with pytest.raises(AttributeError):
            t.value = 2  # type: ignore[misc]


class TestEquality:
    """Equality is by value and type; ``hash`` agrees with ``==``."""

    def test_not_equal_to_number_or_string(self) -> None:
        """A Time never equals a bare number or a string (Composer's Time does)."""
        assert Time(5, EP) != 5
        assert Time(5, EP) != "5ep"
        assert Time(0, BA) != 0

    def test_units_distinguish(self) -> None:
        """The same number in two units is two different times."""
        assert Time(5, EP) != Time(5, BA)

    @given(st.sampled_from(list(Unit)), st.data())
    def test_hash_agrees_with_eq(self, unit: Unit, data: st.DataObject) -> None:
        """Equal times hash equally, however the value was written."""
        value = data.draw(values_for(unit))
        a, b = Time(value, unit), Time(Fraction(value), unit)
        assert a == b
        assert hash(a) == hash(b)


class TestOrdering:
    """Ordering is total within one unit and refused across units."""

    @given(st.sampled_from(list(Unit)), st.data())
    def test_total_order_within_unit(self, unit: Unit, data: st.DataObject) -> None:
        """Exactly one of <, ==, > holds, and <= / >= agree with them."""
        a = Time(data.draw(values_for(unit)), unit)
        b = Time(data.draw(values_for(unit)), unit)
        assert [a < b, a == b, a > b].count(True) == 1
        assert (a <= b) == (a < b or a == b)
        assert (a >= b) == (a > b or a == b)
        assert (a < b) == (a.value < b.value)

    @pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
    def test_mixed_units_refused(self, op: str) -> None:
        """Comparing 2ep with 10ba raises a typed error instead of guessing."""
        with pytest.raises(
            UnitMismatchError, match="cannot compare times in different units: ep and ba"
        ):
            eval(f"a {op} b", {"a": Time(2, EP), "b": Time(10, BA)})

    @pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
    def test_foreign_type_refused(self, op: str) -> None:
        """Ordering against a number is the ordinary TypeError of unorderable types."""
        with pytest.raises(TypeError, match="not supported"):
            eval(f"a {op} 3", {"a": Time(2, EP)})

    def test_mismatch_is_a_type_error(self) -> None:
        """UnitMismatchError is also a TypeError, and carries both units."""
        with pytest.raises(TypeError) as info:
            _ = Time(1, EP) + Time(1, BA)
        assert isinstance(info.value, UnitMismatchError)
        assert (info.value.left, info.value.right) == (EP, BA)


class TestArithmetic:
    """``+``, ``-``, ``*``, ``/`` within one unit, exact, never below zero."""

    @given(times(), st.data())
    def test_add_then_subtract(self, a: Time, data: st.DataObject) -> None:
        """(a + b) - b == a."""
        b = Time(data.draw(values_for(a.unit)), a.unit)
        assert (a + b) - b == a

    @given(times(), st.data())
    def test_add_commutes_and_is_monotone(self, a: Time, data: st.DataObject) -> None:
        """a + b == b + a, and a + b >= a."""
        b = Time(data.draw(values_for(a.unit)), a.unit)
        assert a + b == b + a
        assert a + b >= a

    def test_exact_decimal_sum(self) -> None:
        """0.1ep + 0.2ep is exactly 0.3ep (no float rounding)."""
        assert Time.parse("0.1ep") + Time.parse("0.2ep") == Time.parse("0.3ep")

    def test_subtract_below_zero(self) -> None:
        """A negative result is an error, not a negative time."""
        with pytest.raises(NegativeTimeError, match="cannot subtract 2ep from 1ep"):
            _ = Time(1, EP) - Time(2, EP)

    def test_multiply(self) -> None:
        """Scaling by a whole or rational number, on either side."""
        assert Time(10, BA) * 3 == Time(30, BA)
        assert Fraction(1, 2) * Time(10, BA) == Time(5, BA)
        assert Time.parse("2.1ep") * 10 == Time(21, EP)

    def test_multiply_to_a_fraction_of_a_whole_unit(self) -> None:
        """Half of 3ba is not a whole number of steps."""
        with pytest.raises(InvalidTimeError, match="ba counts whole optimizer steps"):
            _ = Time(3, BA) * Fraction(1, 2)

    def test_multiply_by_float_refused(self) -> None:
        """Floats are refused by the NotImplemented protocol."""
        with pytest.raises(TypeError):
            _ = Time(3, BA) * 1.5  # type: ignore[operator]

    def test_multiply_negative(self) -> None:
        """A negative factor would give a negative time."""
        with pytest.raises(NegativeTimeError):
            _ = Time(3, BA) * -1

    def test_divide(self) -> None:
        """Time / Time is the exact ratio; Time / number scales."""
        assert Time(3, EP) / Time(2, EP) == Fraction(3, 2)
        assert Time(3, EP) / 2 == Time(Fraction(3, 2), EP)
        with pytest.raises(ZeroDivisionError):
            _ = Time(3, EP) / 0
        with pytest.raises(ZeroDivisionError):
            _ = Time(3, EP) / Time(0, EP)
        with pytest.raises(UnitMismatchError, match="cannot divide"):
            _ = Time(3, EP) / Time(2, BA)

    @pytest.mark.parametrize("op", ["+", "-"])
    def test_add_foreign_type(self, op: str) -> None:
        """Adding a bare number is refused: the unit would be a guess."""
        with pytest.raises(TypeError):
            eval(f"a {op} 1", {"a": Time(2, EP)})


class TestArithmeticEdges:
    """The edges of ``*`` and ``/``: zero and one are ordinary factors, and each refusal says
    which operation it refuses, on which values."""

    @pytest.mark.parametrize(
        ("expression", "expected"),
        [
            ("Time(3, BA) * 0", Time(0, BA)),  # zero is a factor, not a negative one
            ("0 * Time(Fraction(1, 2), EP)", Time(0, EP)),  # on either side
            ("Time(3, BA) * 1", Time(3, BA)),  # the identity
            ("Time(3, EP) / 1", Time(3, EP)),  # one is a divisor, not zero
            ("Time(3, EP) / Fraction(1, 2)", Time(6, EP)),  # below one is not negative
            ("Time(0, EP) / 3", Time(0, EP)),  # a zero time divides
            ("Time(3, EP) / Time(1, EP)", Fraction(3)),  # a ratio of one time unit
            ("Time(0, EP) / Time(3, EP)", Fraction(0)),  # a zero ratio
        ],
    )
    def test_factor_table(self, expression: str, expected: object) -> None:
        """Each row: a product or quotient at an edge, and its exact value."""
        assert (
            eval(expression, {"Time": Time, "EP": EP, "BA": BA, "Fraction": Fraction}) == expected
        )

    @pytest.mark.parametrize(
        ("expression", "error", "message"),
        [
            ("Time(3, EP) - Time(1, BA)", UnitMismatchError, "cannot subtract times in"),
            ("Time(3, EP) + Time(1, BA)", UnitMismatchError, "cannot add times in"),
            ("Time(3, EP) / Time(1, BA)", UnitMismatchError, "cannot divide times in"),
            ("Time(3, BA) * -1", NegativeTimeError, "cannot multiply 3ba by -1: the result"),
            ("Time(3, EP) / -2", NegativeTimeError, "cannot divide 3ep by -2: the result"),
            ("Time(3, EP) / 0", ZeroDivisionError, "cannot divide 3ep by zero"),
            ("Time(3, EP) / Time(0, EP)", ZeroDivisionError, "cannot divide 3ep by 0ep"),
        ],
    )
    def test_refusal_messages(self, expression: str, error: type[Exception], message: str) -> None:
        """A refused operation names itself and its operands (not Fraction's own message)."""
        with pytest.raises(error) as info:
            eval(expression, {"Time": Time, "EP": EP, "BA": BA})
        assert str(info.value).startswith(message)

    @pytest.mark.parametrize("divisor", [1.5, True, "2", None])
    def test_divide_by_a_foreign_number(self, divisor: object) -> None:
        """A float, a bool or text is not a divisor: the TypeError of the operator protocol."""
        with pytest.raises(TypeError, match="unsupported operand"):
            _ = Time(3, EP) / divisor


def test_parse_on_a_subclass_builds_the_subclass() -> None:
    """The cache of parsed strings holds plain ``Time`` values, so only ``Time.parse`` may use
    it (the guard ``cls is Time``): a subclass's ``parse`` builds its own class, whether or not
    ``Time`` parsed the same text first, and does not fill the cache with it."""

    class Steps(Time):
        pass

    assert type(Time.parse("3ba")) is Time  # now in the cache
    assert type(Steps.parse("3ba")) is Steps
    assert type(Steps.parse("4ba")) is Steps  # not in the cache before
    assert type(Time.parse("4ba")) is Time
