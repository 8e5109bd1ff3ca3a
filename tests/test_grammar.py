"""The time-string grammar (docs/grammar.md): exact values, canonical forms, and errors."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from durations import Time, TimeParseError, Unit
from durations._grammar import MAX_NUMBER_CHARS, MAX_TEXT_CHARS
from durations.errors import SHOWN_CHARS, shown

from .strategies import times

EP, BA, SP, TOK, DUR = Unit.EP, Unit.BA, Unit.SP, Unit.TOK, Unit.DUR

# (text, exact value, unit, canonical form)
VALID = [
    ("10ba", 10, BA, "10ba"),
    ("0ba", 0, BA, "0ba"),  # zero is a valid (empty) duration
    ("00010ba", 10, BA, "10ba"),  # leading zeros are allowed, not kept
    ("1e6tok", 10**6, TOK, "1000000tok"),  # exponent, exact
    ("1E6tok", 10**6, TOK, "1000000tok"),  # either case of the exponent marker
    ("9007199254740993tok", 9007199254740993, TOK, "9007199254740993tok"),  # 2**53 + 1 stays exact
    ("2.1ep", Fraction(21, 10), EP, "2.1ep"),  # decimal read as a decimal, not a float
    ("0.1ep", Fraction(1, 10), EP, "0.1ep"),
    ("2.5e3sp", 2500, SP, "2500sp"),  # a fractional mantissa that the exponent makes whole
    ("25e-1ep", Fraction(5, 2), EP, "2.5ep"),  # negative exponent
    ("1e-1dur", Fraction(1, 10), DUR, "0.1dur"),
    (".5dur", Fraction(1, 2), DUR, "0.5dur"),  # leading point
    ("5.ba", 5, BA, "5ba"),  # trailing point
    ("2.0ep", 2, EP, "2ep"),  # a whole decimal is whole
    ("3.000ba", 3, BA, "3ba"),  # whole, so valid for ba
    ("1/3ep", Fraction(1, 3), EP, "1/3ep"),  # a ratio, for values with no finite decimal
    ("2/4ep", Fraction(1, 2), EP, "0.5ep"),  # a ratio is reduced, finite decimals written out
    ("10/5ba", 2, BA, "2ba"),  # a whole ratio is valid for ba
    ("1_000ba", 1000, BA, "1000ba"),  # '_' between digits, as in Python and TOML
    ("4_00_0tok", 4000, TOK, "4000tok"),
    (" 10ba", 10, BA, "10ba"),  # surrounding ASCII whitespace is ignored
    ("10ba\n", 10, BA, "10ba"),
    ("\t2ep ", 2, EP, "2ep"),
    ("1.0000000000000001ep", Fraction(10000000000000001, 10**16), EP, "1.0000000000000001ep"),
    ("1e199tok", 10**199, TOK, "1" + "0" * 199 + "tok"),  # the longest canonical form: 200 digits
]


@pytest.mark.parametrize(("text", "value", "unit", "canonical"), VALID)
def test_valid(text: str, value: int | Fraction, unit: Unit, canonical: str) -> None:
    """A valid string parses to its exact value, and prints in canonical form."""
    t = Time.parse(text)
    assert (t.value, t.unit) == (value, unit)
    assert type(t.value) is type(value)
    assert str(t) == canonical


# (text, the part of the message that names the reason)
INVALID = [
    ("", "empty string"),  # nothing at all
    ("   ", "empty string"),  # only whitespace
    ("1.5ba", "1.5 is not a whole number; ba counts whole optimizer steps"),
    ("2.1sp", "not a whole number; sp counts whole samples"),
    ("3.4tok", "not a whole number; tok counts whole tokens"),
    ("2.5e-1ba", "not a whole number"),  # the exponent leaves a fraction
    ("1/3ba", "not a whole number"),  # a ratio that is not whole
    ("-1ba", "negative durations are not allowed"),
    ("-0.5ep", "negative durations are not allowed"),
    ("+1ba", "a sign is not allowed"),  # '+' is noise in a duration
    ("nanep", "not a finite number"),
    ("NaNdur", "not a finite number"),
    ("infep", "not a finite number"),
    ("Infinitydur", "not a finite number"),
    ("ba", "missing number before unit 'ba'"),
    (".ep", "malformed number '.'"),  # a point alone is no number
    ("10", "missing unit"),
    ("1e6", "missing unit"),  # the exponent is not a unit
    ("10 ba", "whitespace inside"),  # Composer accepts this; we do not
    ("1 0ba", "whitespace inside"),
    ("\uff11\uff10ba", "non-ASCII character '\uff11'"),  # full-width digits
    ("\u0661\u0660ba", "non-ASCII character"),  # Arabic-Indic digits
    ("10ba\u00a0", "non-ASCII character"),  # a non-breaking space is not ASCII whitespace
    (
        "10epochs",
        "unknown unit 'epochs'; expected one of ba, ep, sp, tok, dur (did you mean 'ep'?)",
    ),
    ("10batches", "(did you mean 'ba'?)"),
    ("10steps", "(did you mean 'ba'?)"),
    ("10samples", "(did you mean 'sp'?)"),
    ("10tokens", "(did you mean 'tok'?)"),
    ("10e", "unknown unit 'e'"),
    ("10xyz", "unknown unit 'xyz'"),
    ("10BA", "unit 'BA' must be written in lower case: 'ba'"),  # Composer accepts any case
    ("10Ep", "must be written in lower case: 'ep'"),
    ("10iter", "unit 'iter' (Composer's iterations"),  # Composer's unit, not ours
    ("30sec", "unit 'sec' (wall-clock seconds) is not a training duration"),
    ("1h20m40s", "unknown unit 's'"),  # Composer's wall-clock form
    ("1__0ba", "'_' may only stand between two digits"),
    ("_1ba", "malformed number '_1'"),
    ("1_ba", "malformed number '1_'"),
    ("1._5ep", "malformed number"),
    ("1..2ep", "malformed number '1..2'"),
    ("1e5.5tok", "malformed number"),  # the exponent must be whole
    ("0x10ba", "malformed number '0x10'"),  # no hexadecimal
    ("1/0ep", "zero denominator in '1/0'"),
    ("1/2/3ep", "malformed number"),
    ("1.5/2ep", "malformed number"),  # a ratio of whole numbers only
    ("1e1001tok", "exponent 1001 is out of range; at most 1000 in magnitude"),
    ("1e200tok", "too large or too precise to write back in at most 200 characters"),
    ("1e-250ep", "too large or too precise to write back"),  # 250 decimals
    ("10ba!", "unexpected character '!' at the end"),
    ("10ba\x00", "unexpected character '\\x00' at the end"),
    ("1" * 201 + "ba", "number part is 201 characters long; at most 200"),
    (" " * 254 + "1ba", "too long; a time string is at most 256 characters"),  # padding counts
    ("10ba10ba", "malformed number '10ba10'"),
]


@pytest.mark.parametrize(("text", "reason"), INVALID)
def test_invalid(text: str, reason: str) -> None:
    """An invalid string raises TimeParseError, a ValueError naming the text and the reason."""
    with pytest.raises(TimeParseError) as info:
        Time.parse(text)
    assert isinstance(info.value, ValueError)
    assert info.value.text == text
    assert str(info.value).startswith(f"invalid time {shown(text)}: ")
    assert reason in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "10epochs",
            "invalid time '10epochs': unknown unit 'epochs'; "
            "expected one of ba, ep, sp, tok, dur (did you mean 'ep'?)",
        ),
        (
            "1.5ba",
            "invalid time '1.5ba': 1.5 is not a whole number; ba counts whole optimizer steps",
        ),
        ("-1ba", "invalid time '-1ba': negative durations are not allowed; expected a number >= 0"),
    ],
)
def test_whole_messages(text: str, message: str) -> None:
    """The most common mistakes get exactly these messages."""
    with pytest.raises(TimeParseError, match=f"^{re.escape(message)}$"):
        Time.parse(text)


def test_over_long_message() -> None:
    """Text past the length limit is refused with its start, its length and the limit."""
    with pytest.raises(TimeParseError) as info:
        Time.parse("1" * 10**6 + "ba")
    assert str(info.value) == (
        "invalid time '1111111111111111111111111111111111111111'... (1,000,002 characters): "
        "too long; a time string is at most 256 characters, whitespace included (a number part "
        "of at most 200, then the unit)"
    )
    assert info.value.text == "1" * 10**6 + "ba"


def test_length_limit_leaves_room_for_every_valid_time() -> None:
    """The longest number part, the longest unit and some padding fit in the limit, and every
    text within the limit is shown whole in a message."""
    longest = "1" * MAX_NUMBER_CHARS + "tok"
    padded = " " * (MAX_TEXT_CHARS - len(longest)) + longest
    assert Time.parse(padded) == Time(int("1" * MAX_NUMBER_CHARS), TOK)
    assert MAX_TEXT_CHARS - len(longest) >= 50
    assert MAX_TEXT_CHARS <= SHOWN_CHARS


def _spy(text: str, touched: list[str]) -> str:
    """``text`` as a string that records in ``touched`` every method looked up on it (taking
    its length or a slice is not a lookup)."""

    class Touched(str):
        def __getattribute__(self, name: str) -> object:
            touched.append(name)
            return str.__getattribute__(self, name)

    return Touched(text)


@pytest.mark.parametrize(
    "text",
    [
        "1" * (MAX_TEXT_CHARS + 1),
        "1" * 10**6 + "ba",  # a megabyte shaped like a time
        " " * 10**6 + "10ba",  # valid but for its padding
        "\u0661" * 10**6,  # non-ASCII: would be scanned character by character
    ],
)
def test_over_long_text_is_refused_before_it_is_read(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text longer than the limit costs the same as text one past it: no pattern runs on it
    and no method reads it; only its length and first characters are taken."""
    import durations._grammar as grammar
    import durations.time as time_module

    matched: list[str] = []

    class Counting:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def fullmatch(self, subject: str) -> re.Match[str] | None:
            matched.append(self.pattern.pattern)
            return self.pattern.fullmatch(subject)

    for module, name in [(grammar, "_SHAPE"), (grammar, "_NUMBER"), (time_module, "_SIMPLE")]:
        monkeypatch.setattr(module, name, Counting(getattr(module, name)))
    touched: list[str] = []
    with pytest.raises(TimeParseError, match="too long"):
        Time.parse(_spy(text, touched))
    assert (matched, touched) == ([], [])
    # The same instruments see the work done on a short text.
    time_module._parse_cached.cache_clear()
    assert Time.parse(_spy(" 1_0ba", touched)) == Time(10, BA)
    assert matched
    assert "strip" in touched


def test_not_a_string() -> None:
    """Parsing a non-string is a TypeError, not a parse error."""
    with pytest.raises(TypeError, match="must be str, not int"):
        Time.parse(10)  # type: ignore[arg-type]


# Composer 0.32.1's own time-string tests (tests/test_time.py) for the units we share, and
# what each becomes here. Composer parses the number with float(); we parse it exactly.
COMPOSER_CASES = [
    # test_time_parse
    ("1ep", "1ep"),
    ("2ba", "2ba"),
    ("3e10sp", "30000000000sp"),
    ("3_0e10sp", "300000000000sp"),
    ("4tok", "4tok"),
    ("4_000tok", "4000tok"),
    ("4_00_0tok", "4000tok"),
    ("0.5dur", "0.5dur"),
    # test_timestep_valid_strings
    ("2.0ep", "2ep"),
    ("3.000ba", "3ba"),
    ("030.0sp", "30sp"),
    # test_timestep_bad_strings: Composer raises TypeError for each; ep may be fractional here.
    ("1.5ep", "1.5ep"),  # deliberate difference: fractional epochs are the point of this library
    ("2.1ba", None),
    ("3.2sp", None),
    ("3.4tok", None),
    # test_time_math and test_state
    ("0ep", "0ep"),
    ("3ep", "3ep"),
    ("1dur", "1dur"),
    ("10ep", "10ep"),
    ("10ba", "10ba"),
    ("10sp", "10sp"),
    ("10tok", "10tok"),
]


@pytest.mark.parametrize(("text", "canonical"), COMPOSER_CASES)
def test_composer_cases(text: str, canonical: str | None) -> None:
    """Composer's own test strings parse to the same value here, or are rejected clearly."""
    if canonical is None:
        with pytest.raises(TimeParseError, match="is not a whole number"):
            Time.parse(text)
    else:
        assert str(Time.parse(text)) == canonical


# Strings Composer accepts that are deliberately rejected or read differently here.
COMPOSER_DIFFERENCES = [
    ("10 ba", "whitespace inside"),  # Composer: 10ba (float() strips the space)
    ("10BA", "lower case"),  # Composer: 10ba (case-insensitive unit)
    ("+1ba", "sign"),  # Composer: 1ba
    ("-1dur", "negative"),  # Composer: -1.0dur
    ("nandur", "not a finite number"),  # Composer: nan dur
    ("\uff11\uff10ba", "non-ASCII"),  # Composer: 10ba (float() reads any Unicode digit)
    ("30sec", "wall-clock"),  # Composer: 30 seconds
    ("2iter", "iterations"),  # Composer: 2 iterations
    ("1h20m40s", "unknown unit"),  # Composer: 4840 seconds
    ("2.9999999999999999ba", "not a whole number"),  # Composer: 3ba (rounded through float)
]


@pytest.mark.parametrize(("text", "reason"), COMPOSER_DIFFERENCES)
def test_composer_differences(text: str, reason: str) -> None:
    """Each string Composer reads loosely is rejected here with a message naming why."""
    with pytest.raises(TimeParseError, match=re.escape(reason)):
        Time.parse(text)


def test_composer_float_rounding_is_not_repeated() -> None:
    """Values Composer rounds through float() keep every digit here."""
    assert Time.parse("9007199254740993tok").value == 2**53 + 1
    assert Time.parse("1e23tok").value == 10**23
    assert Time.parse("1.0000000000000001ep").value != 1


class TestRoundTrip:
    """``Time.parse(str(t)) == t`` for every valid ``t``; the canonical form is a fixed point."""

    @given(times())
    def test_parse_str(self, t: Time) -> None:
        """Printing then parsing gives back the same time."""
        assert Time.parse(str(t)) == t

    @given(times())
    def test_canonical_is_idempotent(self, t: Time) -> None:
        """The canonical form of a canonical form is itself."""
        once = str(Time.parse(str(t)))
        assert str(Time.parse(once)) == once

    @given(times())
    def test_repr_round_trips(self, t: Time) -> None:
        """repr is unambiguous: evaluating it gives back an equal time."""
        assert eval(repr(t), {"Time": Time}) == t


def _parse_or_error(text: str) -> Time | TimeParseError:
    """The parsed time, or the parse error; any other exception propagates and fails the test."""
    try:
        return Time.parse(text)
    except TimeParseError as error:
        return error


@given(st.text())
def test_any_text_parses_or_raises_the_parse_error(text: str) -> None:
    """Any string either parses or raises TimeParseError; nothing else escapes."""
    outcome = _parse_or_error(text)
    if isinstance(outcome, TimeParseError):
        assert outcome.text == text
    else:
        assert Time.parse(str(outcome)) == outcome


@given(st.from_regex(r"\s*[0-9_./eE+-]{0,12}[a-zA-Z]{0,6}\s*", fullmatch=True))
def test_near_miss_text_parses_or_raises_the_parse_error(text: str) -> None:
    """Strings shaped like times either parse or raise TimeParseError."""
    outcome = _parse_or_error(text)
    if isinstance(outcome, TimeParseError):
        assert outcome.text == text


@given(st.integers(min_value=0, max_value=10**18 - 1), st.sampled_from(list(Unit)))
def test_fast_path_agrees_with_the_grammar(value: int, unit: Unit) -> None:
    """Plain 'digits then unit' strings, parsed by the fast path, equal the full grammar's
    result and pass full validation."""
    from durations.time import _parse_cached, _parse_checked

    text = f"{value}{unit.value}"
    _parse_cached.cache_clear()
    fast = Time.parse(text)
    assert fast == Time(*_parse_checked(text))
    assert type(fast.value) is int
    assert Time(fast.value, fast.unit) == fast


def test_a_subclass_parses_to_its_own_type() -> None:
    """Time.parse on a subclass returns the subclass, never the plain Time the cache of parsed
    strings holds, also for a text the cache already has; and the cache keeps plain Times."""

    class Budget(Time):
        """A subclass, as an application may make one."""

    Time.parse("10ba")  # the text is in the cache now
    for text in ("10ba", "2.1ep", "1e6tok"):
        parsed = Budget.parse(text)
        assert type(parsed) is Budget
        assert (parsed.value, parsed.unit) == (Time.parse(text).value, Time.parse(text).unit)
        assert type(Time.parse(text)) is Time
