"""Scenario files: the ``[schedule]`` and ``[events.NAME]`` tables, one to one with the API."""

from __future__ import annotations

from fractions import Fraction

import pytest

from durations import END, At, AtCallEnds, Every, Landmark, Schedule
from durations.scenario import Scenario, ScenarioError
from durations.schedules import OnExtend

HEAD = """
[run]
max_duration = "2ep"
[loaders.data]
samples = 1_000
batch_size = 10
[[fit]]
loader = "data"
name = "pretrain"
[[fit]]
loader = "data"
duration = "1ep"
"""


def _parse(tail: str) -> Scenario:
    return Scenario.from_toml(HEAD + tail, source="run.toml")


# (TOML after HEAD, the schedule the API builds for it)
VALID_SCHEDULES = [
    (
        '[schedule]\nwarmup = "2000ba"\n'
        '[[schedule.pieces]]\nkind = "cosine"\nto = "0.1"\nuntil = "end"\n',
        Schedule.warmup("2000ba").then_cosine(to=Fraction(1, 10), until=END),
    ),
    (
        '[schedule]\n[[schedule.pieces]]\nkind = "constant"\nuntil = "stop:pretrain"\n'
        '[[schedule.pieces]]\nkind = "linear"\nto = 0\nuntil = "end"\n',
        Schedule.constant(until=Landmark.call_stop("pretrain")).then_linear(to=0, until=END),
    ),
    (
        '[schedule]\ninitial = "0.5"\nwarmup = "start:#1"\n',
        Schedule.warmup(Landmark.call_start("#1"), initial=Fraction(1, 2)),
    ),
    (
        '[schedule]\ninitial = 2\n[[schedule.pieces]]\nkind = "drops"\nat = ["0.5ep", "1ep"]\n'
        'gamma = "0.1"\nuntil = "end"\n',
        Schedule(2).then_drops(at=["0.5ep", "1ep"], gamma=Fraction(1, 10), until=END),
    ),
    (
        '[schedule]\nwarmup = "10ba"\n'
        '[[schedule.pieces]]\nkind = "inverse_sqrt"\nuntil = "0.9dur"\n'
        '[[schedule.pieces]]\nkind = "exponential"\nto = "0.01"\nuntil = "end"\n'
        '[[schedule.pieces]]\nkind = "constant"\nvalue = "0.5"\nuntil = "end"\n',
        Schedule.warmup("10ba")
        .then_inverse_sqrt(until="0.9dur")
        .then_exponential(to="0.01", until=END)
        .then_constant(value="0.5", until=END),
    ),
]


@pytest.mark.parametrize(("toml", "expected"), VALID_SCHEDULES)
def test_schedule_table_is_the_api(toml: str, expected: Schedule) -> None:
    """A [schedule] table builds exactly the Schedule the API calls build."""
    assert _parse(toml).schedule == expected


def test_without_schedule_or_events() -> None:
    """A scenario without the tables has no schedule, no on_extend and no events."""
    scenario = _parse("")
    assert (scenario.schedule, scenario.on_extend, dict(scenario.events)) == (None, None, {})


def test_on_extend() -> None:
    """[schedule] on_extend is the option resolve() takes."""
    scenario = _parse('[schedule]\nwarmup = "10ba"\non_extend = "rewarm"\n')
    assert scenario.on_extend is OnExtend.REWARM


def test_events_tables_are_the_api() -> None:
    """Each [events.NAME] is one Every, At or AtCallEnds, in the file's order."""
    scenario = _parse(
        '[events.checkpoint]\nevery = "0.25ep"\n'
        '[events.eval]\nat = ["0.5dur", "stop:pretrain"]\n'
        '[events.final]\nat = "end"\n'
        "[events.phases]\nat_call_ends = true\n"
    )
    assert dict(scenario.events) == {
        "checkpoint": Every("0.25ep"),
        "eval": At(["0.5dur", Landmark.call_stop("pretrain")]),
        "final": At([END]),
        "phases": AtCallEnds(),
    }
    assert list(scenario.events) == ["checkpoint", "eval", "final", "phases"]


# (TOML after HEAD, the whole message after "run.toml: ") and why it is invalid
INVALID = [
    # an unknown key of [schedule]
    (
        '[schedule]\nwarmpu = "10ba"\n',
        "schedule.warmpu: unknown key 'warmpu' (did you mean 'warmup'?); valid keys here: "
        "initial, on_extend, pieces, warmup",
    ),
    # a TOML float is inexact
    (
        "[schedule]\ninitial = 0.1\n",
        'schedule.initial: expected a factor: an integer or a decimal string such as "0.1" '
        "(a TOML float is inexact: write it as a string), got a float 0.1",
    ),
    # a piece without a kind
    (
        '[schedule]\n[[schedule.pieces]]\nuntil = "end"\n',
        "schedule.pieces[0].kind: missing: one of constant, linear, cosine, exponential, "
        "inverse_sqrt, drops",
    ),
    # a warmup is not a piece
    (
        '[schedule]\n[[schedule.pieces]]\nkind = "warmup"\nuntil = "end"\n',
        "schedule.pieces[0].kind: unknown kind 'warmup' (a warmup is [schedule] warmup); "
        "expected one of constant, linear, cosine, exponential, inverse_sqrt, drops",
    ),
    # a key of another kind of piece
    (
        '[schedule]\n[[schedule.pieces]]\nkind = "constant"\nto = 0\nuntil = "end"\n',
        "schedule.pieces[0].to: unknown key 'to'; valid keys here: kind, until, value",
    ),
    # a linear piece needs its target
    (
        '[schedule]\n[[schedule.pieces]]\nkind = "linear"\nuntil = "end"\n',
        "schedule.pieces[0].to: missing: a linear piece needs to",
    ),
    # a landmark naming no call of the script
    (
        '[schedule]\nwarmup = "stop:pretrian"\n',
        "schedule.warmup: no call 'pretrian' in [[fit]] (did you mean 'pretrain'?); calls: "
        "pretrain, #1 (a call without a name is '#' and its position)",
    ),
    # neither a time nor a landmark
    (
        '[schedule]\nwarmup = "finish"\n',
        "schedule.warmup: invalid time 'finish': unknown unit 'finish'; expected one of ba, ep, "
        "sp, tok, dur; a boundary is a time string such as '2000ba' or '0.9dur', "
        "'end', 'start:CALL' or 'stop:CALL'",
    ),
    # the API refuses it: an exponential piece cannot reach 0
    (
        '[schedule]\nwarmup = "10ba"\n[[schedule.pieces]]\nkind = "exponential"\nto = 0\n'
        'until = "end"\n',
        "schedule.pieces[0]: invalid exponential piece to 0: a geometric curve runs between two "
        "factors > 0; use then_linear or then_cosine to reach 0 or leave it",
    ),
    # [schedule.pieces] is one table, not an array of them
    (
        '[schedule]\n[schedule.pieces]\nkind = "linear"\n',
        "schedule.pieces: expected an array of tables: write [[schedule.pieces]], not "
        "[schedule.pieces]",
    ),
    (
        '[schedule]\non_extend = "restart"\n',
        "schedule.on_extend: expected 'stretch' or 'rewarm', got 'restart'",
    ),
    # an event is one of every, at, at_call_ends
    (
        '[events.eval]\nevery = "1ep"\nat = "end"\n',
        "events.eval: give exactly one of every (a time such as '500ba'), at (a boundary or an "
        "array of them) or at_call_ends = true; got every and at",
    ),
    # every takes a time, not a landmark
    (
        '[events.eval]\nevery = "end"\n',
        "events.eval.every: invalid interval end: expected a time such as '500ba', not a landmark",
    ),
    # an interval of 0 would be every step at once
    (
        '[events.eval]\nevery = "0ba"\n',
        "events.eval.every: invalid interval 0ba: an interval must be > 0 (every 0 would be "
        "every step at once)",
    ),
    (
        "[events.eval]\nat_call_ends = false\n",
        "events.eval.at_call_ends: expected true (leave the key out otherwise), got a boolean "
        "False",
    ),
    ('[events]\neval = "1ep"\n', "events.eval: expected a table, got a string"),
]


@pytest.mark.parametrize(("toml", "message"), INVALID)
def test_invalid_tables(toml: str, message: str) -> None:
    """Each invalid table is an error naming the file, the key and what is valid."""
    with pytest.raises(ScenarioError) as error:
        _parse(toml)
    assert str(error.value) == f"run.toml: {message}"
