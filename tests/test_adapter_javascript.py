"""The JavaScript `core` adapter (adapters/javascript/adapter.mjs): an independent planner that
answers the conformance protocol, checked against hand-worked plans, the Python planner on
generated scenarios, the `core` vectors and the conformance runner."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations import plan
from durations.diagnostics import Severity
from durations.errors import DurationsError
from durations.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "adapters" / "javascript" / "adapter.mjs"
CORE_VECTORS = ROOT / "vectors" / "core.json"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node (Node.js 20) is not on PATH: the JavaScript adapter cannot run"
)

PROGRESS_FIELDS = (
    "epoch",
    "batch",
    "sample",
    "token",
    "batch_in_epoch",
    "sample_in_epoch",
    "token_in_epoch",
)

UNKNOWN = {"min": "0", "max": None}  # a count the plan cannot know (the reference adapter's form)

# Loaders of docs/semantics.md: `a` has 10 steps an epoch, `b` 6.
A = {"samples": 100, "batch_size": 10}
B = {"samples": 60, "batch_size": 10}
BIG = {"samples": 10_000, "batch_size": 32}


def ask(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the adapter once on `requests`, one line each; its responses, in order."""
    assert NODE is not None
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run(
        [NODE, str(ADAPTER)], input=text, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in responses] == [r["id"] for r in requests]
    return responses


def request(
    data: dict[str, Any], *, want: tuple[str, ...] = ("plan", "reads"), **extra: Any
) -> dict[str, Any]:
    """A request for the scenario `data`; `extra` sets resume_from or world_size."""
    return {
        "id": "t",
        "scenario": "",
        "scenario_data": data,
        "resume_from": None,
        "world_size": None,
        "want": list(want),
        **extra,
    }


def answer(data: dict[str, Any], **extra: Any) -> dict[str, Any]:
    (response,) = ask([request(data, **extra)])
    return response


def script(*calls: dict[str, Any], run: dict[str, Any] | None = None, **loaders: Any) -> Any:
    """scenario_data of a script: `loaders` by name (default a and b), then the calls."""
    data: dict[str, Any] = {"loaders": loaders or {"a": A, "b": B}, "fit": list(calls)}
    if run is not None:
        data["run"] = run
    return data


# Plans worked out by hand from docs/semantics.md and docs/units.md, one reason a row.
# Each row: scenario_data, expected total_steps, [(steps, start_step)], some stop fields, codes.
PLANS = [
    pytest.param(
        script({"loader": "a"}, {"loader": "b", "duration": "0.1ep"}, run={"max_duration": "2ep"}),
        "21",
        [("20", "0"), ("1", "20")],
        {"epoch": "2", "sample_in_epoch": "10"},
        {"target-rounded"},
        id="rule5-2.1-epochs",  # 0.1ep of b is 6 samples: one step of 10, past 2.1ep
    ),
    pytest.param(
        script({"loader": "d", "until": "1000sp"}, d=BIG),
        "32",
        [("32", "0")],
        {"sample": "1024"},
        {"target-rounded"},
        id="rule2-sp-overshoot",  # 1000 samples at 32 a step: 32 steps, 1024 samples
    ),
    pytest.param(
        script({"loader": "d", "duration": "1000sp"}, {"loader": "d", "duration": "1000sp"}, d=BIG),
        "63",
        [("32", "0"), ("31", "32")],
        {"sample": "2016"},
        {"target-rounded"},
        id="rule3-anchored",  # 2000sp from 0, as one call: ceil(2000 / 32) = 63 steps
    ),
    pytest.param(
        script({"loader": "d", "duration": "1000sp"}, {"loader": "d", "duration": "20ba"}, d=BIG),
        "52",
        [("32", "0"), ("20", "32")],
        {"sample": "1664"},
        {"target-rounded"},
        id="rule3-across-units",  # another unit: 20 steps after the 32nd
    ),
    pytest.param(
        script(
            {"loader": "d", "duration": "620sp"},
            {"loader": "d"},
            {"loader": "d", "duration": "100sp"},
            run={"max_duration": "630sp"},
            d=BIG,
        ),
        "23",
        [("20", "0"), ("0", "20"), ("3", "20")],
        {"sample": "736"},
        {"target-rounded", "target-already-reached"},
        id="rule3-zero-step-anchor",  # 630sp lies past the 620sp anchor: 730sp, 23 steps of 32
    ),
    pytest.param(
        script(
            {"loader": "d", "duration": "20ba"},
            {"loader": "d"},
            {"loader": "d", "duration": "100sp"},
            run={"max_duration": "630sp"},
            d=BIG,
        ),
        "24",
        [("20", "0"), ("0", "20"), ("4", "20")],
        {"sample": "768"},
        {"target-already-reached", "target-rounded"},
        id="rule3-stale-target",  # 630sp anchors nothing after a ba call: 640 + 100 = 740sp
    ),
    pytest.param(
        script({"loader": "a", "until": "13ba"}, {"loader": "b", "duration": "1ep"}),
        "19",
        [("13", "0"), ("6", "13")],
        {"epoch": "3", "batch_in_epoch": "0", "sample_in_epoch": "0"},
        {"epoch-abandoned"},
        id="rule4-new-stream",  # a's epoch 1 abandoned at 30 samples and counted; b's epoch 2
    ),
    pytest.param(
        script({"loader": "a", "duration": "0.3dur"}, run={"max_duration": "15ba"}),
        "5",
        [("5", "0")],
        {"batch": "5"},
        set(),
        id="rule6-dur-rounds-up",  # 0.3 x 15 = 4.5ba, rounded up to 5ba: reached exactly
    ),
    pytest.param(
        script(
            {"loader": "a", "duration": "0.5dur"},
            {"loader": "a", "duration": "0.5dur"},
            run={"max_duration": "15ba"},
        ),
        "16",
        [("8", "0"), ("8", "8")],
        {"batch": "16"},
        set(),
        id="rule6-each-dur-alone",  # each 0.5dur is 8ba: 16 in all
    ),
    pytest.param(
        script(
            {"loader": "a", "until": "10ba"}, {"loader": "b", "until": "5ba", "reset_time": True}
        ),
        "15",
        [("10", "0"), ("5", "10")],
        {"batch": "15", "epoch": "1"},
        {"clock-reset"},
        id="rule7-reset-time",  # the clock restarts at 10: 5ba more, lifetime 15
    ),
    pytest.param(
        script(
            {"loader": "t", "until": "13ba"},
            {"loader": "t", "until": "1000tok"},
            t={"samples": 100, "batch_size": 10, "tokens_per_sample": 4},
        ),
        "25",
        [("13", "0"), ("12", "13")],
        {"token": "1000", "token_in_epoch": "200", "sample": "250", "epoch": "2"},
        set(),
        id="units-tokens",  # 1000 tokens are 250 samples of 4: 12 steps after 13
    ),
    pytest.param(
        script(
            {"loader": "d", "until": "0.9ep"},
            d={"samples": 25, "batch_size": 10, "drop_last": True},
        ),
        "2",
        [("2", "0")],
        {"epoch": "1", "sample": "20", "sample_in_epoch": "0"},
        {"target-rounded"},
        id="units-target-in-dropped-tail",  # 22.5 samples: in the tail, reached as the epoch closes
    ),
    pytest.param(
        script({"loader": "d", "until": "9007199254740993sp"}, d={"samples": 10, "batch_size": 1}),
        "9007199254740993",
        [("9007199254740993", "0")],
        {"epoch": "900719925474099", "sample_in_epoch": "3"},
        set(),
        id="exact-past-2**53",  # a float would make it 9007199254740992
    ),
    pytest.param(
        script({"loader": "s", "until": "100sp"}, s={"batch_size": 8}),
        "13",
        [("13", "0")],
        {"epoch": "0", "sample": "104", "sample_in_epoch": "104"},
        {"target-rounded"},
        id="stream-without-epochs",  # no samples: no epoch ever closes
    ),
    pytest.param(
        script({"loader": "a", "until": "105tok"}),
        "11",
        [("11", "0")],
        {"sample": "110", "token": UNKNOWN, "token_in_epoch": UNKNOWN},
        {"token-stop-at-runtime"},
        id="rule13-tokens-at-run-time",  # at least a token a sample: at most 105 samples, 11 steps
    ),
]


@pytest.mark.parametrize(("data", "total", "segments", "stop", "codes"), PLANS)
def test_plans_worked_by_hand(
    data: dict[str, Any],
    total: str,
    segments: list[tuple[str, str]],
    stop: dict[str, str],
    codes: set[str],
) -> None:
    """The adapter's plan is the one the rules give, every number a string."""
    got = answer(data)["plan"]
    assert got["total_steps"] == total
    assert [(s["steps"], s["start_step"]) for s in got["segments"]] == segments
    assert {k: got["stop"][k] for k in stop} == stop
    assert set(got["diagnostics"]) == codes
    assert set(got["stop"]) == set(PROGRESS_FIELDS)


def test_segments_are_named_by_name_or_position() -> None:
    """A call is its `name`, or `#` and its position (rule 8); every segment in core runs."""
    got = answer(
        script({"loader": "a", "until": "1ba"}, {"loader": "a", "until": "2ba", "name": "x"})
    )
    assert [(s["name"], s["action"]) for s in got["plan"]["segments"]] == [
        ("#0", "run"),
        ("x", "run"),
    ]


SEGMENTS = [
    pytest.param(
        script({"loader": "a", "until": "13ba"}, {"loader": "b", "duration": "1ep"}),
        [
            {"loader": "a", "target": "13ba", "abandoned": None, "stop_at_runtime": False},
            {
                "loader": "b",
                "target": "3ep",
                "abandoned": {"epoch": "1", "start": "30", "stop": "100"},
            },
        ],
        id="rule4-abandoned-range",  # a's epoch 1 left at 30 of 100; 1ep of b after epoch 2: 3ep
    ),
    pytest.param(
        script({"loader": "b", "until": "1/3ep"}, {"loader": "b", "duration": "0.125ep"}),
        [{"target": "1/3ep"}, {"target": "11/24ep"}],
        id="ratio-target",  # 1/3 + 1/8 = 11/24: not a finite decimal, so a reduced ratio
    ),
    pytest.param(
        script({"loader": "b", "until": "0.125ep"}, {"loader": "b", "duration": "2.5ep"}),
        [{"target": "0.125ep"}, {"target": "2.625ep"}],
        id="decimal-targets",  # a finite decimal is written out, without trailing zeros
    ),
    pytest.param(
        script({"loader": "a", "until": "0tok"}),
        [{"steps": "0", "target": "0tok", "stop_at_runtime": True}],
        id="rule13-flag",  # a tok target on samples of unknown length is decided at run time
    ),
]


@pytest.mark.parametrize(("data", "expected"), SEGMENTS)
def test_segment_fields(data: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    """Each segment's loader, resolved target, abandoned range and run-time flag."""
    got = answer(data)["plan"]["segments"]
    assert [{k: s[k] for k in e} for s, e in zip(got, expected, strict=True)] == expected


def test_reads_count_every_pass() -> None:
    """13 steps of a read samples 0-29 twice and 30-99 once; b's epoch once, after a's."""
    got = answer(script({"loader": "a", "until": "13ba"}, {"loader": "b", "duration": "1ep"}))
    assert got["reads"] == [
        {"loader": "a", "start": "0", "stop": "30", "times": "2"},
        {"loader": "a", "start": "30", "stop": "100", "times": "1"},
        {"loader": "b", "start": "0", "stop": "60", "times": "1"},
    ]


def test_reads_past_2_53() -> None:
    """9007199254740993 steps of 1 over 10 samples: 900719925474099 whole epochs, then 0-2."""
    data = script(
        {"loader": "d", "until": "9007199254740993ba"}, d={"samples": 10, "batch_size": 1}
    )
    assert answer(data)["reads"] == [
        {"loader": "d", "start": "0", "stop": "3", "times": "900719925474100"},
        {"loader": "d", "start": "3", "stop": "10", "times": "900719925474099"},
    ]


def test_want_selects_the_answer() -> None:
    """Only what `want` asks is answered."""
    got = answer(script({"loader": "a", "until": "1ba"}), want=("reads",))
    assert set(got) == {"id", "reads"}


PLAN_ERRORS = [
    pytest.param(script({"loader": "a"}), "no-duration", id="no-duration-anywhere"),
    pytest.param(
        script({"loader": "a", "duration": "0.5dur"}), "no-duration", id="dur-without-max"
    ),
    pytest.param(
        script({"loader": "s", "until": "1ep"}, s={"batch_size": 8}),
        "cannot-convert",
        id="epochs-of-a-stream",
    ),
    pytest.param(
        script(
            {"loader": "a", "until": "1ba"},
            {"loader": "t", "duration": "10tok"},
            a=A,
            t={"samples": 10, "batch_size": 5, "tokens_per_sample": 2},
        ),
        "tokens-unknown",
        id="tokens-after-a-loader-without-them",
    ),
]


@pytest.mark.parametrize(("data", "code"), PLAN_ERRORS)
def test_plan_errors(data: dict[str, Any], code: str) -> None:
    """An error diagnostic is answered as an error of phase plan."""
    assert answer(data) == {"id": "t", "error": {"code": code, "phase": "plan"}}


SCENARIO_ERRORS = [
    pytest.param(
        script({"loader": "a", "until": "1ba", "duration": "1ba"}), id="duration-and-until"
    ),
    pytest.param(script({"loader": "a", "until": "1.5ba"}), id="fractional-ba"),
    pytest.param(script({"loader": "a", "until": "10BA"}), id="upper-case-unit"),
    pytest.param(script({"loader": "a", "until": "\uff11\uff10ba"}), id="non-ascii-digits"),
    pytest.param(script({"loader": "a", "until": "-1ba"}), id="signed"),
    pytest.param(script({"loader": "a", "until": "1/0ep"}), id="zero-denominator"),
    pytest.param(script({"loader": "a", "until": "10 ba"}), id="space-inside"),
    pytest.param(script({"loader": "a", "until": 5}), id="until-not-a-string"),
    pytest.param(script({"loader": "x", "until": "1ba"}), id="undefined-loader"),
    pytest.param(script({"loader": "a"}, run={"max_duration": "0.5dur"}), id="max-duration-in-dur"),
    pytest.param(script({"loader": "a", "until": "1ba", "name": "#1"}), id="positional-name"),
    pytest.param(script({"loader": "a", "until": "1ba", "name": "  "}), id="blank-name"),
    pytest.param(script({"loader": "a", "until": "1ba", "epochs": 1}), id="unknown-fit-key"),
    pytest.param(
        script({"loader": "d", "until": "1ba"}, d={"samples": 0, "batch_size": 1}), id="no-samples"
    ),
    pytest.param(script({"loader": "d", "until": "1ba"}, d={"samples": 5}), id="no-batch-size"),
    pytest.param(
        script(
            {"loader": "d", "until": "1ba"}, d={"samples": 5, "batch_size": 10, "drop_last": True}
        ),
        id="drop-last-trains-nothing",
    ),
    pytest.param(
        script({"loader": "d", "until": "1ba"}, d={"samples": True, "batch_size": 1}),
        id="boolean-samples",
    ),
    pytest.param({"loaders": {"a": A}, "fit": []}, id="no-fit-call"),
    pytest.param(
        script({"loader": "d", "until": "1ba"}, d={"samples": "5", "batch_size": 1}),
        id="samples-as-a-string",  # the TOML has a string where an integer belongs
    ),
]


@pytest.mark.parametrize("data", SCENARIO_ERRORS)
def test_scenario_errors(data: dict[str, Any]) -> None:
    """A scenario the file format refuses is an error of phase parse."""
    assert answer(data) == {"id": "t", "error": {"code": "ScenarioError", "phase": "parse"}}


#: Scenario texts that write a whole-number key with a TOML float: JSON cannot tell 100.0 from 100.
FLOAT_TEXTS = [
    "[loaders.a]\nsamples = 100.0\nbatch_size = 10\n",  # a decimal point
    "[loaders.a]\nsamples = 100\nbatch_size = 1e1\n",  # an exponent: a float in TOML
    "[loaders.a]\nsamples = 100\nbatch_size = 10\ntokens_per_sample = 8.0  # tokens\n",
    "loaders.a = { samples = 1_0_0.0, batch_size = 10 }\n",  # in an inline table
]
#: Texts whose whole numbers are whole: a comment, an underscore, a hex integer, a string.
WHOLE_TEXTS = [
    "[loaders.a]\nsamples = 100  # samples = 100.0 is not this\nbatch_size = 10\n",
    "[loaders.a]\nsamples = 1_00\nbatch_size = 0xa\n",
    '[loaders.a]\nsamples = 100\nbatch_size = 10\n[[fit]]\nloader = "a"\nuntil = "10ba"\n'
    'name = "samples = 1.5"\n',
]


def test_floats_in_the_text_are_refused() -> None:
    """A whole-number key written as a float is a parse error, as Python's reader says, though
    its JSON is the integer's; the same values written as integers plan."""
    fit = '[[fit]]\nloader = "a"\nuntil = "10ba"\n'
    floats = [text + fit for text in FLOAT_TEXTS]
    wholes = [text if "[[fit]]" in text else text + fit for text in WHOLE_TEXTS]
    for text in floats:  # the reference refuses them all
        with pytest.raises(DurationsError):
            Scenario.from_toml(text)
    for text in wholes:
        Scenario.from_toml(text)

    def whole(value: Any) -> Any:  # the JSON the runner sends: 100.0 written as 100
        if isinstance(value, dict):
            return {k: whole(v) for k, v in value.items()}
        if isinstance(value, list):
            return [whole(v) for v in value]
        return int(value) if isinstance(value, float) else value

    asked = [
        {**request(whole(tomllib.loads(text))), "scenario": text, "id": f"t{i}"}
        for i, text in enumerate(floats + wholes)
    ]
    found = [r.get("error") for r in ask(asked)]
    refused = {"code": "ScenarioError", "phase": "parse"}
    assert found == [refused] * len(floats) + [None] * len(wholes)


def test_repeated_name_is_refused_by_the_plan() -> None:
    """Two calls named x are one identity (rule 8): the file reads, the planner refuses the
    script (FitCallError in phase plan); a file error in a later call still comes first."""
    twice = script(
        {"loader": "a", "until": "1ba", "name": "x"}, {"loader": "a", "until": "2ba", "name": "x"}
    )
    later = {**twice, "fit": [*twice["fit"], {"loader": "a", "until": "1.5ba"}]}
    assert [r.get("error") for r in ask([request(twice), request(later)])] == [
        {"code": "FitCallError", "phase": "plan"},
        {"code": "ScenarioError", "phase": "parse"},
    ]


UNSUPPORTED = [
    pytest.param(script({"loader": "a", "until": "20ba"}), {"resume_from": "13ba"}, id="resume"),
    pytest.param(script({"loader": "a", "until": "20ba"}), {"world_size": 3}, id="world-size"),
    pytest.param(
        script({"loader": "a", "until": "20ba"}),
        {"checkpoint": {"format": 4, "ledger": None}},
        id="checkpoint",
    ),
    pytest.param(
        script({"loader": "d", "until": "1ba"}, d={"samples": 2**60, "batch_size": 1}),
        {},
        id="integer-past-2**53",  # JSON.parse would round it: not read inexactly
    ),
    pytest.param(script({"loader": "a", "until": "20ba"}), {"want": ["plan", "rates"]}, id="rates"),
    pytest.param(
        {**script({"loader": "a", "until": "20ba"}), "schedule": {"warmup": "2ba"}},
        {},
        id="schedule",
    ),
    pytest.param(
        script(
            {"loader": "d", "until": "1ep"},
            d={"samples": 101, "world_size": 2, "device_batch_size": 10},
        ),
        {},
        id="sharded-loader",
    ),
]


@pytest.mark.parametrize(("data", "extra"), UNSUPPORTED)
def test_outside_core_is_unsupported(data: dict[str, Any], extra: dict[str, Any]) -> None:
    """What core does not cover is answered as unsupported, with the reason."""
    got = answer(data, **extra)
    assert set(got) == {"id", "unsupported"}
    assert got["unsupported"]


def test_many_requests_in_order_then_exit_0() -> None:
    """One response a request, in order, each with its request's id; EOF ends the adapter with 0."""
    requests = [
        {**request(script({"loader": "a", "until": f"{k}ba"})), "id": f"r{k}"} for k in range(1, 6)
    ]
    assert [r["plan"]["total_steps"] for r in ask(requests)] == ["1", "2", "3", "4", "5"]


# ---- the adapter against the Python planner, on generated core scenarios -----------------------


def _time(rng: random.Random, units: tuple[str, ...]) -> str:
    unit = rng.choice(units)
    if unit == "ba":
        return f"{rng.randint(0, 25)}ba"
    if unit in ("sp", "tok"):
        return f"{rng.randint(0, 250)}{unit}"
    return f"{rng.randint(0, 12)}/{rng.choice([1, 2, 3, 4, 10])}{unit}"


def _scenario(rng: random.Random) -> str:
    lines = []
    if rng.random() < 0.7:
        lines += ["[run]", f'max_duration = "{_time(rng, ("ba", "sp", "ep", "tok"))}"']
    names = ["a", "b", "c"][: rng.randint(1, 3)]
    for name in names:
        samples = None if rng.random() < 0.1 else rng.randint(1, 40)
        batch = rng.randint(1, 12)
        lines += [f"[loaders.{name}]", f"batch_size = {batch}"]
        if samples is not None:
            lines.append(f"samples = {samples}")
            if samples >= batch and rng.random() < 0.3:
                lines.append("drop_last = true")
        if rng.random() < 0.5:
            lines.append(f"tokens_per_sample = {rng.randint(1, 5)}")
    for i in range(rng.randint(1, 5)):
        lines += ["[[fit]]", f'loader = "{rng.choice(names)}"']
        kind = rng.random()
        if kind < 0.4:
            lines.append(f'duration = "{_time(rng, ("ba", "sp", "ep", "tok", "dur"))}"')
        elif kind < 0.8:
            lines.append(f'until = "{_time(rng, ("ba", "sp", "ep", "tok", "dur"))}"')
        if rng.random() < 0.2:
            lines.append("reset_time = true")
        if rng.random() < 0.2:
            lines.append(f'name = "n{i}"')
    return "\n".join(lines) + "\n"


def _progress(progress: Any) -> dict[str, Any]:
    values = {f: getattr(progress, f) for f in PROGRESS_FIELDS}
    return {f: UNKNOWN if v is None else str(v) for f, v in values.items()}


def _python_answer(text: str) -> dict[str, Any]:
    """The Python planner's answer in the protocol's form."""
    try:
        scenario = Scenario.from_toml(text)
        p = plan(scenario.config, scenario.calls)
    except DurationsError as e:
        return {"error": {"code": type(e).__name__, "phase": "parse"}}
    codes = [d.code for d in p.diagnostics]
    errors = [d.code for d in p.diagnostics if d.severity is Severity.ERROR]
    if errors:
        return {"error": {"code": errors[0], "phase": "plan"}}
    counts: dict[str, Counter[int]] = {}
    for segment in p.segments:
        counter = counts.setdefault(segment.loader.name or "", Counter())
        for r in segment.reads():
            counter.update(range(r.start, r.stop))
    reads: list[dict[str, str]] = []
    for name in sorted(counts):
        for q, times in sorted(counts[name].items()):
            last = reads[-1] if reads else None
            if last and (last["loader"], last["stop"], last["times"]) == (name, str(q), str(times)):
                last["stop"] = str(q + 1)
            else:
                reads.append(
                    {"loader": name, "start": str(q), "stop": str(q + 1), "times": str(times)}
                )
    segments = [
        {
            "name": s.name,
            "action": s.action.value,
            "loader": s.loader.name,
            "steps": str(s.steps),
            "start_step": str(s.start_step),
            "start": _progress(s.start),
            "stop": _progress(s.stop),
            "target": str(s.target),
            "abandoned": None
            if s.abandoned is None
            else {k: str(getattr(s.abandoned, k)) for k in ("epoch", "start", "stop")},
            "stop_at_runtime": s.stop_at_runtime,
        }
        for s in p.segments
    ]
    return {
        "plan": {
            "total_steps": str(p.total_steps),
            "stop": _progress(p.stop),
            "segments": segments,
            "diagnostics": sorted(set(codes)),
        },
        "reads": reads,
    }


def test_agrees_with_the_python_planner() -> None:
    """Two implementations written apart give the same plans, reads and refusals on 400 generated
    core scripts (stream loaders, drop_last, tokens, dur, reset_time, anchors, errors)."""
    rng = random.Random(23)
    texts = [_scenario(rng) for _ in range(400)]
    requests = [{**request(tomllib.loads(t)), "id": f"g{i}"} for i, t in enumerate(texts)]
    runtime = 0
    for text, response in zip(texts, ask(requests), strict=True):
        expected = _python_answer(text)
        del response["id"]
        if "plan" in response:
            response["plan"]["diagnostics"] = sorted(response["plan"]["diagnostics"])
            runtime += "token-stop-at-runtime" in response["plan"]["diagnostics"]
        assert response == expected, text
    assert runtime > 20  # rule 13 is among them


# ---- the core vectors and the conformance runner -----------------------------------------------


def _core_vectors() -> list[Any]:
    if not CORE_VECTORS.exists():
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason="vectors/core.json is not in this tree")
            )
        ]
    vectors = json.loads(CORE_VECTORS.read_text(encoding="utf-8"))["vectors"]
    return [pytest.param(v, id=v["id"]) for v in vectors]


def _matches(expected: Any, got: Any) -> bool:
    """A subset match: every field the vector gives is the adapter's; lists item by item."""
    if isinstance(expected, dict):
        return isinstance(got, dict) and all(
            k in got and _matches(v, got[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(got, list)
            and len(got) == len(expected)
            and all(map(_matches, expected, got))
        )
    return bool(expected == got)


@pytest.mark.parametrize("vector", _core_vectors())
def test_core_vector(vector: dict[str, Any]) -> None:
    """Every core vector's request, answered by the adapter, meets the vector's expectation."""
    expect = vector["expect"]
    want = ["reads"] if "reads" in expect else []
    if set(expect) & {"total_steps", "stop", "segments", "diagnostics"}:
        want.insert(0, "plan")
    got = answer(
        vector["input"]["scenario_data"],
        id=vector["id"],
        scenario=vector["input"]["scenario"],
        resume_from=vector["input"].get("resume_from"),
        world_size=vector["input"].get("world_size"),
        want=want or ["plan"],
    )
    assert got["id"] == vector["id"]
    if "error" in expect:
        assert got.get("error") == {
            "code": expect["error"]["code"],
            "phase": expect["error"]["phase"],
        }
        return
    assert "plan" in got or "reads" in got, got
    for field, check in expect.items():
        if field == "reads":
            assert got["reads"] == check["value"], field
        elif field == "diagnostics":
            assert set(got["plan"]["diagnostics"]) == set(check["value"]), field
        else:
            assert _matches(check["value"], got["plan"][field]), (
                field,
                check["value"],
                got["plan"][field],
            )


def test_conformance_runner_passes_core() -> None:
    """`durations conformance` with this adapter passes every core vector (exit 0)."""
    if not CORE_VECTORS.exists():
        pytest.skip("vectors/core.json is not in this tree")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "durations",
            "conformance",
            "--adapter",
            f"{NODE} {ADAPTER}",
            "--features",
            "core",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
