"""Fit calls and run configurations: validation with clear errors."""

from __future__ import annotations

import re

import pytest

from durations import (
    DataPolicy,
    FitCall,
    FitCallError,
    Loader,
    ResumeMode,
    RunConfig,
    Time,
    TimeParseError,
    plan,
)

LOADER = Loader(samples=100, batch_size=10)


def test_times_from_strings() -> None:
    """duration=, until= and max_duration= accept time strings."""
    assert FitCall(loader=LOADER, duration="2.1ep").duration == Time.parse("2.1ep")
    assert RunConfig(max_duration="15ba").max_duration == Time.parse("15ba")


def test_enums_from_strings() -> None:
    """resume= and data= accept their documented spellings."""
    config = RunConfig(resume="extend", data="replay_epoch")
    assert (config.resume, config.data) == (ResumeMode.EXTEND, DataPolicy.REPLAY_EPOCH)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: FitCall(loader=LOADER, duration="1ep", until="2ep"),
            FitCallError,
            "fit call has both duration=1ep and until=2ep; pass duration= for 'this much more' "
            "or until= for 'up to this point on the run clock', not both",
        ),
        (lambda: FitCall(loader=LOADER, duration="1 ep"), TimeParseError, "whitespace inside"),
        (
            lambda: FitCall(loader=LOADER, duration=1.5),
            FitCallError,
            "expected a Time or a time string",
        ),
        (lambda: FitCall(loader="big"), FitCallError, "expected a Loader"),
        (lambda: FitCall(loader=LOADER, reset_time="yes"), FitCallError, "expected True or False"),
        (lambda: FitCall(loader=LOADER, name=""), FitCallError, "expected a non-empty string"),
        (lambda: FitCall(loader=LOADER, name="#1"), FitCallError, "names starting with '#'"),
        (
            lambda: RunConfig(max_duration="0.5dur"),
            FitCallError,
            "dur is a fraction of max_duration itself",
        ),
        (
            lambda: RunConfig(resume="autoresume"),
            FitCallError,
            "invalid resume mode 'autoresume': expected one of 'continue', 'extend', 'weights'",
        ),
        (
            lambda: RunConfig(data="skip"),
            FitCallError,
            "expected one of 'exact', 'replay_epoch', 'next_epoch'",
        ),
    ],
)
def test_invalid(make: object, error: type[Exception], message: str) -> None:
    """Each bad call or configuration names the bad input and what would be valid."""
    with pytest.raises(error, match=re.escape(message)):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: FitCall(loader=LOADER, duration=b"\0" * 1_000_000),
            "expected a Time or a time string such as '10ba', got "
            "b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x... "
            "(a bytes of 4,000,003 characters as repr)",
        ),
        (
            lambda: RunConfig(max_duration=[1] * 100_000),
            "expected a Time or a time string such as '10ba', got "
            "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ... (a list of 300,000 characters as repr)",
        ),
        (
            lambda: RunConfig(resume="x" * 1_000),
            "invalid resume mode 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (1,000 characters): "
            "expected one of 'continue', 'extend', 'weights'",
        ),
        (
            lambda: FitCall(loader=LOADER, name="#" * 1_000),
            "invalid fit call name '########################################'... "
            "(1,000 characters): names starting with '#' are the default positional identities",
        ),
        (
            lambda: FitCall(loader=LOADER, reset_time=b"y" * 1_000),
            "invalid reset_time b'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy... "
            "(a bytes of 1,003 characters as repr): expected True or False",
        ),
    ],
)
def test_a_huge_bad_value_is_shown_by_its_start(make: object, message: str) -> None:
    """A bad value however large gives a message of bounded size: its start and its length
    (found by fuzzing: the whole repr of a megabyte was the message)."""
    with pytest.raises(FitCallError) as raised:
        make()  # type: ignore[operator]
    assert str(raised.value) == message


def test_identity() -> None:
    """A call is known by its name, or by its position."""
    assert FitCall(loader=LOADER).identity(3) == "#3"
    assert FitCall(loader=LOADER, name="anneal").identity(3) == "anneal"


def test_fingerprint_follows_request_and_geometry() -> None:
    """The fingerprint changes with what the call asks for or reads, and only then."""
    base = FitCall(loader=LOADER, duration="1ep")
    assert base.fingerprint() == FitCall(loader=LOADER, duration="1ep", name="x").fingerprint()
    assert base.fingerprint() != FitCall(loader=LOADER, duration="2ep").fingerprint()
    assert (
        base.fingerprint()
        != FitCall(loader=LOADER.with_batch_size(20), duration="1ep").fingerprint()
    )


def test_duplicate_names() -> None:
    """Two calls cannot share an identity."""
    calls = [FitCall(loader=LOADER, name="a"), FitCall(loader=LOADER, name="a")]
    with pytest.raises(FitCallError, match="fit call names must be unique; repeated: a"):
        plan(RunConfig(max_duration="1ep"), calls)


def test_single_call_not_a_list() -> None:
    """plan() takes a sequence; a lone call gets a clear error."""
    with pytest.raises(FitCallError, match="wrap a single call in a list"):
        plan(RunConfig(), FitCall(loader=LOADER))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: plan(None, [FitCall(loader=LOADER)]), "plan() takes a RunConfig first"),  # type: ignore[arg-type]
        (lambda: plan(RunConfig(), ["10ba"]), "calls[0] is '10ba': expected a FitCall"),  # type: ignore[list-item]
        (lambda: plan(RunConfig(), [], {"progress": {}}), "checkpoint must be a Checkpoint"),  # type: ignore[arg-type]
    ],
)
def test_plan_arguments(make: object, message: str) -> None:
    """plan() names a wrong argument instead of failing deep inside."""
    with pytest.raises(FitCallError, match=re.escape(message)):
        make()  # type: ignore[operator]
