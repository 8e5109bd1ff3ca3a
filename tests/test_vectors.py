"""The conformance suite (``vectors/``) checks itself: its format, its manifest, that it covers
every rule of docs/semantics.md, and that every expectation is what the planner computes now,
with a value derived by hand for each rule."""

from __future__ import annotations

import hashlib
import json
import random
import re
import tomllib
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations import plan
from durations.fit import ResumeMode
from durations.plans import Plan
from durations.scenario import Scenario
from tests import vectors
from tests.vectors import SUITE, plan_reads

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p.name for p in SUITE.glob("*.json") if p.name != "manifest.json")
MANIFEST = json.loads((SUITE / "manifest.json").read_text())


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SUITE / name).read_text())
    return data


ALL = [(name, v) for name in FILES for v in load(name)["vectors"]]
BY_ID = {v["id"]: v for _, v in ALL}
EXPECTING = [v for _, v in ALL if "expect" in v]

#: The rules no vector can exercise through the protocol's input, and why (none: rule 10's
#: checkpoint without a ledger is given as ``input.checkpoint``).
NOT_EXPRESSIBLE: dict[str, str] = {}


def semantics_rules() -> list[str]:
    """The rules of docs/semantics.md: its ``## N.`` and ``### SN.`` headings."""
    text = (ROOT / "docs" / "semantics.md").read_text()
    headings = re.findall(r"^(?:## ([0-9]+)\.|### (S[0-9]+[a-z]?)\.) ", text, re.M)
    return [number or name for number, name in headings]


class TestFormat:
    """Every file is a valid vector file of durations-conformance/1."""

    @pytest.mark.parametrize("name", FILES)
    def test_schema(self, name: str) -> None:
        """The file validates against vectors/schema/vectors.schema.json."""
        schema = json.loads((SUITE / "schema" / "vectors.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(load(name)))
        assert [e.message for e in errors] == []

    def test_protocol_schema(self) -> None:
        """The protocol schema takes a request and the responses the contract names, and refuses
        a JSON number where an exact number goes."""
        schema = json.loads((SUITE / "schema" / "protocol.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        check = jsonschema.Draft202012Validator(schema)
        request = {
            "id": "core/two-phases-2.1ep#13",
            "scenario": "",
            "scenario_data": {},
            "resume_from": "13ba",
            "world_size": None,
            "want": ["plan", "reads"],
        }
        given = {**request, "resume_from": None, "checkpoint": {"format": 4, "ledger": None}}
        good = [
            request,
            given,  # a checkpoint is read by the adapter: the schema does not check its content
            {**request, "checkpoint": None},
            {"id": "a/b", "plan": {"total_steps": "23", "stop": {"batch": "23"}}},
            {"id": "a/b", "reads": [{"loader": "a", "start": "0", "stop": "10", "times": "2"}]},
            {"id": "a/b", "rates": ["1/2", {"float": "0.93"}]},
            {"id": "a/b", "error": {"code": "no-duration", "phase": "plan"}},
            {"id": "a/b", "unsupported": "no mixtures"},
        ]
        bad = [
            {"id": "a/b", "plan": {"total_steps": 23}},  # a JSON number
            {"id": "a/b", "rates": ["0.5"]},  # a decimal is not an exact fraction
            {"id": "a/b", "error": {"code": "no-duration", "phase": "run"}},  # no such phase
            {**request, "want": ["plan", "plan"]},  # repeated want
            {**request, "resume_from": None, "checkpoint": "ckpt.json"},  # a path, not the JSON
            {**given, "resume_from": "13ba"},  # the checkpoint it writes, or the one given
        ]
        assert [check.is_valid(line) for line in good] == [True] * len(good)
        assert [check.is_valid(line) for line in bad] == [False] * len(bad)

    def test_ids(self) -> None:
        """Ids are unique over the suite and start with their file's feature; a vector's first
        feature is its file's."""
        ids = [v["id"] for _, v in ALL]
        assert [i for i, n in Counter(ids).items() if n > 1] == []
        for name, v in ALL:
            feature = load(name)["feature"]
            assert name == f"{feature}.json"
            assert v["id"].startswith(f"{feature}/"), v["id"]
            assert v["features"][0] == feature, v["id"]

    def test_exact_numbers_are_strings(self) -> None:
        """No JSON number in an expectation or a property's steps, and every fraction is in
        lowest terms with a denominator above 1."""

        def walk(value: Any, where: str) -> None:
            assert not isinstance(value, (int, float)) or isinstance(value, bool), where
            if isinstance(value, dict):
                for key, item in value.items():
                    if key == "float":
                        float(item)
                    else:
                        walk(item, f"{where}.{key}")
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    walk(item, f"{where}[{index}]")
            elif isinstance(value, str) and re.fullmatch(r"[0-9]+/[0-9]+", value):
                assert str(Fraction(value)) == value, where

        for _, v in ALL:
            walk(v.get("expect"), v["id"])
            walk(v.get("property", {}).get("over"), v["id"])
            for trainer in v.get("trainers", []):
                walk(trainer["expect"], v["id"])

    def test_scenario_data_is_the_toml(self) -> None:
        """``scenario_data`` is the scenario's TOML exactly as tomllib reads it."""
        for _, v in ALL:
            assert v["input"]["scenario_data"] == tomllib.loads(v["input"]["scenario"]), v["id"]

    def test_checkpoint_comes_alone(self) -> None:
        """A vector gives ``input.checkpoint`` without ``resume_from`` and ``world_size``, and
        some vectors give one."""
        given = [v for _, v in ALL if v["input"].get("checkpoint") is not None]
        assert given
        for v in given:
            assert (v["input"]["resume_from"], v["input"]["world_size"]) == (None, None), v["id"]
            assert "resume" in v["features"], v["id"]

    def test_every_phase_has_error_vectors(self) -> None:
        """The suite refuses in each phase: parse, plan and resume."""
        phases = {v["expect"]["error"]["phase"] for _, v in ALL if "error" in v.get("expect", {})}
        assert phases == {"parse", "plan", "resume"}


class TestManifest:
    """vectors/manifest.json names every file with its hash, count and features."""

    def test_header(self) -> None:
        """The suite, protocol and semantics version the manifest states."""
        assert MANIFEST["suite"] == "durations-conformance"
        assert MANIFEST["protocol"] == "durations-conformance/1"
        first = (ROOT / "docs" / "semantics.md").read_text().splitlines()[:5]
        assert f"Semantics version: {MANIFEST['semantics']}" in first
        assert set(MANIFEST["features"]) == {load(name)["feature"] for name in FILES}

    def test_files(self) -> None:
        """Each file is listed once, with the sha256 of its bytes, its vectors and features."""
        listed = {f["path"]: f for f in MANIFEST["files"]}
        assert sorted(listed) == FILES
        for name in FILES:
            entry = listed[name]
            assert entry["sha256"] == hashlib.sha256((SUITE / name).read_bytes()).hexdigest()
            assert entry["vectors"] == len(load(name)["vectors"])
            assert entry["features"] == [load(name)["feature"]]


class TestRules:
    """The vectors cover docs/semantics.md: every rule, and only rules that exist."""

    def test_headings_are_found(self) -> None:
        """The page's rules are 1-20 and S1-S7 with S4a (a wrong parse would pass vacuously)."""
        expected = [str(n) for n in range(1, 21)] + ["S1", "S2", "S3", "S4", "S4a", "S5"]
        assert semantics_rules() == [*expected, "S6", "S7"]

    def test_every_rule_is_cited(self) -> None:
        """Each rule is cited by a vector, except the ones the input cannot express."""
        cited = {r for _, v in ALL for r in v["rules"]}
        assert sorted(set(semantics_rules()) - cited - set(NOT_EXPRESSIBLE)) == []
        assert cited.isdisjoint(NOT_EXPRESSIBLE)

    def test_cited_rules_exist(self) -> None:
        """A vector cites only rules of the page, and its ``rules`` are its fields' rules."""
        rules = set(semantics_rules())
        for _, v in ALL:
            assert set(v["rules"]) <= rules, v["id"]
            fields = v.get("expect", {})
            named = {r for f in fields.values() for r in f["rules"]}
            if "property" not in v:
                assert set(v["rules"]) == named, v["id"]


class TestExpectations:
    """Every expectation is what the planner computes now."""

    @pytest.mark.parametrize("vector", EXPECTING, ids=[v["id"] for v in EXPECTING])
    def test_recomputed(self, vector: dict[str, Any]) -> None:
        """The vector's fields, recomputed from its input with the planner (and the trainer
        profiles), equal the file's."""
        inp = vector["input"]
        fields = vector["expect"]
        rules = {k: f["rules"] for k, f in fields.items()}
        first = fields.get("segments", {}).get("value") or [{}]
        stop = tuple(fields.get("stop", {}).get("value", {})) or vectors.STOP
        found = vectors.expectations(
            inp["scenario"],
            inp["resume_from"],
            inp["world_size"],
            rules,
            tuple(first[0]),
            stop,
            checkpoint=inp.get("checkpoint"),
        )
        assert found == fields
        if "trainers" in vector:
            defined = next(t for t in vectors.TRAINERS if t.id == vector["id"])
            assert vectors.trainer_outcomes(defined, rules) == vector["trainers"]

    def test_nothing_is_stale(self) -> None:
        """``python -m tests.vectors --check`` finds every file as --write would write it."""
        assert vectors.stale() == []


class TestCheckpoints:
    """The checkpoints given as input are the ones docs/semantics.md's examples build."""

    def test_rule_10_examples(self) -> None:
        """The located and mislocated vectors' checkpoints are rule 10's two examples, written by
        ``Checkpoint.to_dict`` (the vectors spell the counters out by hand)."""
        from durations import Checkpoint, Loader
        from durations.progress import Progress

        a = Loader(samples=100, batch_size=10)
        b = Loader(samples=60, batch_size=10)
        foreign = Checkpoint(progress=Progress().advance(a, 10).advance(b, 2), loader_state=True)
        ddp = Loader.sharded(samples=100, world_size=2, device_batch_size=10)
        written = Checkpoint(progress=Progress().advance(ddp, 8))
        located = BY_ID["resume/ledgerless-located"]["input"]["checkpoint"]
        mislocated = BY_ID["resume/ledgerless-mislocated"]["input"]["checkpoint"]
        assert (located, mislocated) == (foreign.to_dict(), written.to_dict())

    def test_malformed_does_not_read(self) -> None:
        """Of the given checkpoints, exactly the malformed one is refused by the reader."""
        from durations import Checkpoint, CheckpointFormatError

        refused = []
        for _, v in ALL:
            given = v["input"].get("checkpoint")
            if given is None:
                continue
            try:
                Checkpoint.from_dict(given)
            except CheckpointFormatError:
                refused.append(v["id"])
        assert refused == ["resume/checkpoint-malformed"]


def at(vector: dict[str, Any], path: str) -> Any:
    """The value at ``path`` of a vector's expectations: ``stop.sample``, ``rates[1]``,
    ``segments[1].abandoned``, ``error.code``."""
    field, _, rest = path.partition(".")
    name, _, index = field.partition("[")
    value = vector["expect"][name]
    value = value if name == "error" else value["value"]
    if index:
        value = value[int(index.rstrip("]"))]
    for key in rest.split(".") if rest else []:
        value = value[key]
    return value


def diagnostics_table() -> dict[str, list[str]]:
    """docs/semantics.md's Diagnostics table: each code's rules (``units.md`` for another page)."""
    text = (ROOT / "docs" / "semantics.md").read_text()
    section = text.split("\n## Diagnostics\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| [a-z]+ \| ([^|]+) \|", section, re.M)
    return {code: [r.strip() for r in rules.split(",")] for code, rules in rows}


#: Diagnostic codes no vector can expect, and why (none: each is reached through the input,
#: the ledger-dependent ones through ``input.checkpoint``).
NOT_EXPECTED: dict[str, str] = {}


def expected_codes(v: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The diagnostic codes a vector expects, each with the rules its field cites."""
    fields = v.get("expect", {})
    found = [
        (c, fields["diagnostics"]["rules"]) for c in fields.get("diagnostics", {}).get("value", [])
    ]
    if "error" in fields:
        found.append((fields["error"]["code"], fields["error"]["rules"]))
    return found


class TestDiagnostics:
    """The vectors expect every diagnostic code, each cited with the rule that decides it."""

    def test_table_is_the_codes(self) -> None:
        """The Diagnostics table lists exactly the codes of durations.diagnostics (a wrong parse
        would pass the checks below vacuously)."""
        from durations.diagnostics import CODES

        assert sorted(diagnostics_table()) == sorted(CODES)

    def test_every_code_is_expected(self) -> None:
        """Each code is expected by a vector, or listed with the reason none can expect it."""
        from durations.diagnostics import CODES

        expected = {code for _, v in ALL for code, _ in expected_codes(v)}
        assert sorted(set(CODES) - expected - set(NOT_EXPECTED)) == []
        assert expected.isdisjoint(NOT_EXPECTED)

    def test_each_code_cites_its_rule(self) -> None:
        """A field expecting a code cites one of the rules the table gives that code (a code of
        another page, units.md, excepted)."""
        table = diagnostics_table()
        uncited = [
            (v["id"], code)
            for _, v in ALL
            for code, rules in expected_codes(v)
            if code in table and table[code] != ["units.md"] and not set(table[code]) & set(rules)
        ]
        assert uncited == []


#: One value per rule, derived by hand from the rule's text (and its examples), not from the
#: planner: (vector id, where, value, how).
HAND = [
    ("core/duration-is-relative", "total_steps", "17", "rule 1: until 5ba stops at 5, +12 more"),
    ("core/sample-target-rounded", "stop.sample", "1024", "rule 2: 1000/32 = 31.25, step 32"),
    ("core/relative-samples-anchor", "stop.sample", "2016", "rule 3: as one 2000sp: 63 x 32"),
    (
        "core/new-stream-abandons-epoch",
        "segments[1].abandoned",
        {"epoch": "1", "start": "30", "stop": "100"},
        "rule 4: 13 steps of 10 leave epoch 1 at sample 30; b starts a new epoch",
    ),
    ("core/two-phases-2.1ep", "total_steps", "23", "rules 4, 5: 2 x 10 steps, 0.1 x 300 / 10"),
    ("core/dur-rounds-up", "total_steps", "5", "rule 6: 0.3 x 15 = 4.5, reached at step 5"),
    ("resume/reset-time-crash-12", "stop.batch", "15", "rule 7: 10 + 5 on the new clock"),
    ("resume/stored-target", "total_steps", "10", "rule 8: the stored target 15ba, from 5"),
    ("resume/extend-12-more", "stop.batch", "22", "rule 9: 12 more from 10, not until 15"),
    (
        "resume/ledgerless-weights",
        "segments[0].abandoned",
        {"epoch": "1", "start": "70", "stop": "200"},
        "rule 9: no ledger names the loader that read it: 70 samples into epoch 1 are measured "
        "on the first call's loader c, whose epoch has 200",
    ),
    (
        "resume/ledgerless-located",
        "total_steps",
        "4",
        "rule 10: step 12 is a's 10 steps and 2 of b's 6 (60 at 10 a step): 4 more",
    ),
    (
        "resume/ledgerless-mislocated",
        "error.code",
        "checkpoint-mislocated",
        "rule 10: on 3 ranks of 10 an epoch of 100 is 4 steps, so step 8 starts epoch 2; the "
        "checkpoint records epoch 1, 60 samples in (8 steps of 20 on 2 ranks)",
    ),
    (
        "core/repeated-call-name",
        "error.code",
        "FitCallError",
        "rule 8: a call is identified by its name; two calls named warmup are one identity",
    ),
    ("resume/next-epoch", "total_steps", "10", "rule 11: epoch 1 closed, epoch 2 is 10 steps"),
    ("resume/elastic-batch-doubled", "total_steps", "4", "rule 12: 70 left at 20: 20+20+20+10"),
    ("core/tokens-stop-at-runtime", "total_steps", "50", "rule 13: >= 1 token a sample: 500 sp"),
    (
        "core/stream-epochs-cannot-convert",
        "error.code",
        "cannot-convert",
        "rule 5 (units.md): an epoch is measured in samples, and a stream has no count of them",
    ),
    (
        "resume/script-changed",
        "total_steps",
        "10",
        "rule 14: pretrain started at 0 with until=15ba keeps that stored target: 15 - 5 steps",
    ),
    (
        "resume/ledger-continued",
        "total_steps",
        "4",
        "rule 9: the extension stored 1ep of b (6 steps of 10) from step 10; killed after 2, "
        "the same script continues it: 4 more, not a new 6",
    ),
    (
        "mixtures/weights-edited-at-resume",
        "segments[0].sources",
        [
            {"name": "web", "start": "300", "stop": "500"},
            {"name": "code", "start": "100", "stop": "300"},
        ],
        "rule 20: 400 samples at 3:1 leave web at 300, code at 100; the 400 left at 1:1 go on "
        "from those cursors, 200 each",
    ),
    ("resume/complete", "total_steps", "0", "rule 15: every call finished"),
    ("resume/two-phases-crash-13", "total_steps", "10", "rule 16: 23 - 13 more steps"),
    ("sharding/repeat-101-on-2", "stop.sample", "102", "rule 17: 101 padded to a multiple of 2"),
    (
        "sharding/resume-on-3",
        "stop.sample",
        "204",
        "rule 18: 60 + 41 padded to 42 on 3 ranks, then 101 padded to 102",
    ),
    (
        "sharding/shuffled-resume-on-3",
        "reads",
        [
            {"loader": "a", "start": "0", "stop": "2", "times": "1"},
            {"loader": "a", "start": "4", "stop": "11", "times": "1"},
        ],
        "rule 19: positions 4-10, then 11 and 12 padded on 3 ranks read places 0 and 1",
    ),
    (
        "mixtures/phase-cursors",
        "segments[1].sources",
        [
            {"name": "code", "start": "200", "stop": "300"},
            {"name": "math", "start": "0", "stop": "100"},
        ],
        "rule 20: 800sp at 3:1 read 200 of code; 200sp at 1:1 go on from there",
    ),
    ("schedules/warmup-cosine", "rates[1]", "1/4", "S1: step 0 to 1 of a 4-step warmup"),
    ("schedules/warmup-in-samples", "rates[3]", "1", "S2: 25sp is reached at step 3 (30sp)"),
    ("schedules/never-reached", "error.code", "ScheduleError", "S3: 30ba past a 26-step plan"),
    ("schedules/cosine-thirds", "rates[2]", "3/4", "S4: (1 + cos(pi/3)) / 2"),
    ("schedules/float-factor", "error.code", "ScenarioError", "S4a: a float is not exact"),
    ("schedules/extend-rewarm", "rates[4]", "1", "S5: a 4-step warmup from the new start"),
    ("schedules/extend-stretch", "rates[0]", "2/3", "S5: 1 - (10 - 4) / (22 - 4)"),
    (
        "intervals/every-tenth-dur",
        "events",
        {"log": [str(-(-3 * n // 2)) for n in range(1, 11)]},
        "S6: every 1.5ba: ceil(1.5 n)",
    ),
    (
        "schedules/continue-same-curve",
        "rates",
        [str(1 - Fraction(k, 20)) for k in range(13, 21)],
        "S7: 1 - k/20 from step 13, as without the crash",
    ),
]


class TestHand:
    """The vectors agree with values derived by hand, one rule at least each."""

    @pytest.mark.parametrize(("vector", "path", "value", "why"), HAND, ids=[r[0] for r in HAND])
    def test_value(self, vector: str, path: str, value: Any, why: str) -> None:
        """The hand-derived value is the file's."""
        assert value == at(BY_ID[vector], path), why

    def test_every_rule_has_a_row(self) -> None:
        """Every expressible rule has a hand-derived row, citing a vector that cites it."""
        covered = set()
        for vector, path, _, _ in HAND:
            name = path.split(".")[0].split("[")[0]
            entry = BY_ID[vector]["expect"][name]
            covered |= set(entry["rules"])
        assert sorted(set(semantics_rules()) - covered - set(NOT_EXPRESSIBLE)) == []


# -- properties ------------------------------------------------------------------------------


def _fresh(scenario: Scenario) -> Plan:
    return plan(attrs.evolve(scenario.config, resume=ResumeMode.CONTINUE), scenario.calls)


def _in_data(segments: Any, steps: int | None = None) -> Counter[tuple[Any, ...]]:
    """Reads of places inside the data (a padded position excluded)."""
    counts: Counter[tuple[Any, ...]] = Counter()
    left = steps
    for segment in segments:
        for read in segment.reads():
            if left is not None:
                if left == 0:
                    return counts
                left -= 1
            samples = segment.loader.samples
            for q in range(read.start, min(read.stop, samples)):
                counts[(segment.loader.name, read.epoch, q)] += 1
    return counts


def check(kind: str, scenario: Scenario, crash_steps: Any, params: dict[str, Any]) -> None:
    """The property ``kind`` of ``scenario``, as docs/conformance.md states it."""
    fresh = _fresh(scenario)
    assert fresh.ok
    ks = range(1, fresh.total_steps) if crash_steps == "all" else [int(k) for k in crash_steps]
    if kind == "idempotent-rerun":
        again = plan(scenario.config, scenario.calls, fresh.checkpoint_at(fresh.total_steps))
        assert again.total_steps == 0
        return
    mixed = any(c.loader.mixture is not None for c in scenario.calls)
    for k in ks:
        if kind == "resume-invariance":
            resumed = plan(scenario.config, scenario.calls, fresh.checkpoint_at(k))
            assert resumed.stop == fresh.stop, k
            if mixed:
                ends = resumed.cursors_at(resumed.total_steps)
                assert ends == fresh.cursors_at(fresh.total_steps), k
            else:
                both = plan_reads(fresh.segments, k) + plan_reads(resumed.segments)
                assert both == plan_reads(fresh.segments), k
        else:
            for world in params["world_sizes"]:
                moved = vectors.on_world_size(scenario, world)
                resumed = plan(scenario.config, moved, fresh.checkpoint_at(k))
                after = _in_data(fresh.segments) - _in_data(fresh.segments, k)
                assert _in_data(resumed.segments) == after, (k, world)


def generated(generator: dict[str, Any], kind: str) -> list[Scenario]:
    """Small scenarios drawn within ``params`` (this test's own draw)."""
    draw = random.Random(generator["seed"])
    params = generator["params"]
    found = []
    for _ in range(generator["count"]):
        if kind == "world-size-invariance":
            text = (
                f'[run]\nmax_duration = "{draw.randint(*params["epochs"])}ep"\n'
                f"[loaders.a]\nsamples = {draw.randint(*params['samples'])}\n"
                f"world_size = {draw.randint(*params['world_size'])}\n"
                f"device_batch_size = {draw.randint(*params['device_batch_size'])}\n"
                '[[fit]]\nloader = "a"\n'
            )
        else:
            names = [f"l{i}" for i in range(draw.randint(*params["loaders"]))]
            text = "".join(
                f"[loaders.{n}]\nsamples = {draw.randint(*params['samples'])}\n"
                f"batch_size = {draw.randint(*params['batch_size'])}\n"
                for n in names
            )
            for _ in range(draw.randint(*params["calls"])):
                unit = draw.choice(params["units"])
                key = draw.choice(["duration", "until"])
                amount = draw.randint(*params["amount"])
                amount_text = f"0.{amount}" if unit == "ep" and amount > 9 else str(amount)
                text += f'[[fit]]\nloader = "{draw.choice(names)}"\n{key} = "{amount_text}{unit}"\n'
        found.append(Scenario.from_toml(text))
    return found


PROPERTIES = [v for _, v in ALL if "property" in v]


class TestProperties:
    """The property vectors hold on the planner."""

    @pytest.mark.parametrize("vector", PROPERTIES, ids=[v["id"] for v in PROPERTIES])
    def test_holds(self, vector: dict[str, Any]) -> None:
        """The property holds on the vector's scenario, or on each generated one."""
        prop = vector["property"]
        generator = prop["generator"]
        params = {} if generator is None else generator["params"]
        params = {"world_sizes": [1, 2, 3, 4], **params}
        if generator is None:
            scenarios = [Scenario.from_toml(vector["input"]["scenario"])]
        else:
            scenarios = [s for s in generated(generator, prop["kind"]) if _fresh(s).ok]
            assert scenarios
        for scenario in scenarios:
            check(prop["kind"], scenario, prop["over"]["crash_steps"], params)

    def test_a_broken_resume_is_caught(self) -> None:
        """The resume check fails for a plan that resumes from the wrong step."""
        scenario = Scenario.from_toml(vectors.TWO_PHASE)
        fresh = _fresh(scenario)
        wrong = plan(scenario.config, scenario.calls, fresh.checkpoint_at(12))
        both = plan_reads(fresh.segments, 13) + plan_reads(wrong.segments)
        assert both != plan_reads(fresh.segments)


# -- trainers --------------------------------------------------------------------------------


def recording(evidence: str) -> dict[str, Any]:
    path, _, key = evidence.partition("#")
    observations: dict[str, Any] = json.loads((ROOT / path).read_text())["observations"]
    return dict(observations[key])


TRAINER_ROWS = [
    (v["id"], t) for _, v in ALL for t in v.get("trainers", []) if t["provenance"] == "measured"
]


class TestTrainers:
    """What trainers.json says each trainer does."""

    @pytest.mark.parametrize(("vector", "trainer"), TRAINER_ROWS, ids=[r[0] for r in TRAINER_ROWS])
    def test_measured_matches_the_recording(self, vector: str, trainer: dict[str, Any]) -> None:
        """A measured outcome is the recording's: the re-run's steps and what they read."""
        recorded = recording(trainer["evidence"])
        assert recorded["framework"] == trainer["trainer"]
        rerun = recorded["calls"][1:]
        counts: Counter[tuple[Any, ...]] = Counter()
        for call in rerun:
            for batch in call["batches"]:
                counts.update(("a", sample) for sample in batch)
        assert trainer["expect"]["total_steps"]["value"] == str(sum(c["steps"] for c in rerun))
        assert trainer["expect"]["reads"]["value"] == vectors.reads_json(counts)

    def test_versions(self) -> None:
        """Each trainer's version is its profile's VERSION."""
        import importlib

        for _, v in ALL:
            for t in v.get("trainers", []):
                profile = importlib.import_module(f"durations.trainers.{t['trainer']}")
                assert t["version"] == profile.VERSION

    def test_differences_are_present(self) -> None:
        """Every trainer vector has a trainer whose outcome differs from the plan's."""
        for _, v in ALL:
            if "trainers" not in v:
                continue
            plan_side = {k: v["expect"][k]["value"] for k in ("total_steps", "reads")}
            outcomes = [
                {k: t["expect"][k]["value"] for k in ("total_steps", "reads")}
                if "total_steps" in t["expect"]
                else None
                for t in v["trainers"]
            ]
            assert any(o != plan_side for o in outcomes), v["id"]
