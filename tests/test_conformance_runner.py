"""``durations conformance``: the runner, the adapter protocol, the reference and trainer adapters
(docs/conformance.md). Relations: the reference passes the whole suite; an adapter broken in one
known way gives exactly that failure; known failures, features and the levels follow the rules;
the trainer table is what the profiles give."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from durations import cli, conformance
from durations._conformance_run import (
    find_suite,
    load_known_failures,
    load_suite,
    page_table,
    table_for,
)
from durations.conformance import (
    Generator,
    Status,
    SuiteError,
    Vector,
    answer,
    check,
    evaluate,
    generate,
    request,
)

from .test_cli_imports import imported

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "vectors"

#: 2 epochs of a (100 samples, batches of 10: 20 steps), then half an epoch of b (60 samples:
#: 3 steps): 23 steps; killed after step 13 (30 samples into epoch 1), 10 steps are left.
TWO_PHASES = textwrap.dedent(
    """\
    [run]
    max_duration = "2ep"
    [loaders.a]
    samples = 100
    batch_size = 10
    [loaders.b]
    samples = 60
    batch_size = 10
    [[fit]]
    loader = "a"
    [[fit]]
    loader = "b"
    duration = "0.5ep"
    """
)
#: No duration and no max_duration: the error diagnostic no-duration (rule 1).
NO_DURATION = '[loaders.a]\nsamples = 10\nbatch_size = 1\n[[fit]]\nloader = "a"\n'
REFUSED = {"code": "no-duration", "phase": "plan"}


def _vector(vid: str, scenario: str, expect: dict[str, Any], **given: Any) -> dict[str, Any]:
    return {
        "id": vid,
        "description": "",
        "features": given.pop("features", [vid.split("/")[0]]),
        "rules": [],
        "input": {"scenario": scenario, "scenario_data": {}, "resume_from": None,
                  "world_size": None, **given},
        "expect": expect,
    }  # fmt: skip


def _value(value: Any) -> dict[str, Any]:
    return {"value": value, "rules": []}


#: A small suite whose values are worked out by hand (see TWO_PHASES).
SMALL = {
    "core": [
        _vector("core/two-phases", TWO_PHASES, {"total_steps": _value("23")}),
        _vector(
            "core/two-phases-reads",
            TWO_PHASES,
            {
                "reads": _value(
                    [
                        {"loader": "a", "start": "0", "stop": "100", "times": "2"},
                        {"loader": "b", "start": "0", "stop": "30", "times": "1"},
                    ]
                )
            },
        ),
        _vector("core/no-duration", NO_DURATION, {"error": REFUSED}),
    ],
    "resume": [
        _vector(
            "resume/crash-13",
            TWO_PHASES,
            {"total_steps": _value("10"), "stop": _value({"batch": "23", "epoch": "2"})},
            resume_from="13ba",
            features=["resume", "core"],
        ),
        _vector(
            "resume/crash-21",
            TWO_PHASES,
            {"total_steps": _value("2")},
            resume_from="21ba",
            features=["resume"],
        ),
    ],
}


def write_suite(where: Path, files: dict[str, list[dict[str, Any]]]) -> Path:
    """A suite directory: each feature's vector file and a manifest with their hashes."""
    where.mkdir(parents=True, exist_ok=True)
    listed = []
    for feature, vectors in files.items():
        data = json.dumps({"feature": feature, "description": "", "vectors": vectors}).encode()
        (where / f"{feature}.json").write_bytes(data)
        listed.append({"path": f"{feature}.json", "sha256": hashlib.sha256(data).hexdigest(),
                       "features": [feature], "vectors": len(vectors)})  # fmt: skip
    manifest = {"suite": "durations-conformance", "protocol": conformance.PROTOCOL,
                "version": "1.0.0", "semantics": "1.0",
                "features": dict.fromkeys(files, ""), "files": listed}  # fmt: skip
    (where / "manifest.json").write_text(json.dumps(manifest))
    return where


#: An adapter broken in one way for one vector id, the reference for every other request.
BROKEN = textwrap.dedent(
    """\
    import json, sys, time
    from durations.conformance import answer

    how, target = sys.argv[1], sys.argv[2]
    for line in sys.stdin:
        message = json.loads(line)
        reply = answer(message)
        rid = message["id"]
        if rid == target or (how == "resume-off-by-one" and message["resume_from"]):
            if how == "wrong" and "error" in reply:
                reply["error"]["code"] = "another-code"
            elif how == "wrong":
                reply["plan"]["total_steps"] = str(int(reply["plan"]["total_steps"]) + 1)
            elif how == "hang":
                time.sleep(600)
            elif how == "garbage":
                print("this is not JSON", flush=True)
                continue
            elif how == "dies":
                sys.exit(3)
            elif how == "number":
                reply["plan"]["total_steps"] = int(reply["plan"]["total_steps"])
            elif how == "resume-off-by-one":
                steps = int(message["resume_from"].removesuffix("ba"))
                reply = answer({**message, "resume_from": f"{max(steps - 1, 0)}ba"})
        print(json.dumps(reply), flush=True)
    """
)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["conformance", *args])
    out, err = capsys.readouterr()
    return code, out, err


def results(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run_cli(capsys, *args, "--json")
    return code, json.loads(out)


def broken(tmp_path: Path, how: str, target: str = "") -> str:
    script = tmp_path / "broken.py"
    script.write_text(BROKEN)
    return f"{sys.executable} {script} {how} {target or '-'}"


# -- the reference adapter ------------------------------------------------------------------


def test_the_reference_passes_the_whole_suite(capsys: pytest.CaptureFixture[str]) -> None:
    """The default run (the reference adapter on the shipped suite) passes every vector the
    manifest counts, conforms to every feature, and exits 0."""
    manifest = json.loads((SUITE / "manifest.json").read_text())
    code, report = results(capsys)
    statuses = {r["id"]: r["status"] for r in report["results"]}
    assert len(statuses) == sum(entry["vectors"] for entry in manifest["files"])
    assert set(statuses.values()) == {"pass"}
    assert report["conforms_to"] == list(manifest["features"])
    assert (code, report["ok"], report["restarts"]) == (0, True, 0)


def test_the_reference_passes_the_small_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hand-worked values of the small suite are the reference's; core counts the 3 core
    vectors and resume/crash-13, which lists core too."""
    suite = write_suite(tmp_path / "suite", SMALL)
    code, out, _ = run_cli(capsys, "--suite", str(suite))
    assert code == 0
    assert "core           4/4    passed" in out
    assert "conforms to: core, resume" in out
    assert out.rstrip().endswith("ok: 5 of 5 passed")


# -- broken adapters --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("how", "status", "field", "expected", "received", "restarts"),
    [
        # One field wrong: the vector fails on that field, both values shown; the stream is
        # in step, so nothing restarts.
        ("wrong", "fail", "total_steps", "23", "24", 0),
        # An exact number as a JSON number: JavaScript loses integers past 2**53.
        ("number", "fail", "total_steps", "23", 23, 0),
        # A line that is not JSON fails the vector; the adapter is restarted to get back in step.
        ("garbage", "fail", None, None, None, 1),
        # The adapter dies: the vector fails, the next request starts it again.
        ("dies", "fail", None, None, None, 1),
        # No answer in time: the vector times out, the adapter is killed and started again.
        ("hang", "timeout", None, None, None, 1),
    ],
)
def test_a_broken_adapter_fails_exactly_there(
    how: str,
    status: str,
    field: str | None,
    expected: Any,
    received: Any,
    restarts: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An adapter broken on one vector gives that vector's failure and no other: every later
    vector passes (after a restart where the stream broke)."""
    suite = write_suite(tmp_path / "suite", SMALL)
    adapter = broken(tmp_path, how, "core/two-phases")
    code, report = results(capsys, "--suite", str(suite), "--adapter", adapter, "--timeout", "2")
    bad = [r for r in report["results"] if r["status"] != "pass"]
    assert [(r["id"], r["status"], r["field"]) for r in bad] == [("core/two-phases", status, field)]
    assert (bad[0]["expected"], bad[0]["received"]) == (expected, received)
    assert (code, report["restarts"]) == (1, restarts)
    assert report["conforms_to"] == ["resume"]  # core failed; resume's vectors passed


def test_the_text_names_the_field_and_both_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The text output shows the failing vector, its field and both values, the per-feature
    counts and the verdict."""
    suite = write_suite(tmp_path / "suite", SMALL)
    adapter = broken(tmp_path, "wrong", "resume/crash-21")
    code, out, _ = run_cli(capsys, "--suite", str(suite), "--adapter", adapter)
    assert code == 1
    assert 'fail        resume/crash-21  total_steps: expected "2", received "3"' in out
    assert "resume         1/2    passed" in out
    assert "conforms to: core\n" in out
    assert out.rstrip().endswith("FAILED: 1 fail")


def test_the_dead_adapters_exit_code_and_stderr_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An adapter that dies is said with its exit code."""
    suite = write_suite(tmp_path / "suite", SMALL)
    adapter = broken(tmp_path, "dies", "core/no-duration")
    _, report = results(capsys, "--suite", str(suite), "--adapter", adapter)
    (dead,) = [r for r in report["results"] if r["status"] != "pass"]
    assert "ended without a response; it exited with code 3" in dead["detail"]


def test_a_broken_resume_breaks_the_property(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An adapter that resumes one step early reads a step twice: resume invariance fails
    on the suite's own property vector at the first crash step (sample 0 of a, read once in
    each of 2 epochs, is read a third time), and idempotence fails too."""
    adapter = broken(tmp_path, "resume-off-by-one")
    code, report = results(capsys, "--adapter", adapter, "--features", "properties")
    status = {r["id"]: r for r in report["results"]}
    two = status["properties/two-phases"]
    where = "resumed at 1: reads + the first 1 steps' reads: loader 'a' sample 0"
    assert (two["status"], two["field"]) == ("fail", where)
    assert (two["expected"], two["received"]) == ("2", "3")
    assert status["properties/rerun-two-phases"]["status"] == "fail"
    assert code == 1


# -- known failures, features, levels -----------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "code", "stale", "unknown"),
    [
        ("core/two-phases", 0, [], []),  # the failing vector: known, the run passes
        ("core/two-phases-reads", 1, ["core/two-phases-reads"], []),  # it passes: stale
        ("core/never-written", 1, [], ["core/never-written"]),  # no such vector
    ],
)
def test_known_failures(
    entry: str,
    code: int,
    stale: list[str],
    unknown: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A known failure lets its vector fail; the same entry for a passing vector, or for no
    vector, fails the run (the other vector still failing fails it too, but for its own sake)."""
    suite = write_suite(tmp_path / "suite", SMALL)
    adapter = broken(tmp_path, "wrong", "core/two-phases")
    known = tmp_path / "known.json"
    entries = {entry: "counts one step too many"}
    if entry != "core/two-phases":
        entries["core/two-phases"] = "counts one step too many"
    known.write_text(json.dumps(entries))
    got, report = results(
        capsys, "--suite", str(suite), "--adapter", adapter, "--known-failures", str(known)
    )
    failing = next(r for r in report["results"] if r["id"] == "core/two-phases")
    assert (failing["status"], failing["known"]) == ("fail", "counts one step too many")
    assert (got, report["stale"], report["unknown"]) == (code, stale, unknown)


def test_a_known_failure_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text shows the known failure's reason, and the stale entry's fix."""
    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path / "suite", SMALL)
    Path("known.json").write_text(json.dumps({"core/two-phases": "off by one"}))
    adapter = broken(tmp_path, "wrong", "core/no-duration")
    Path("stale.json").write_text(json.dumps({"core/no-duration": "not yet"}))
    code, out, _ = run_cli(capsys, "--suite", "suite", "--known-failures", "known.json")
    assert code == 1
    assert "stale known failure: core/two-phases passes; remove it from known.json" in out
    code, out, _ = run_cli(
        capsys, "--suite", "suite", "--adapter", adapter, "--known-failures", "stale.json"
    )
    assert code == 0
    assert "            known failure: not yet" in out
    assert out.rstrip().endswith("ok: 4 of 5 passed, 1 known to fail")


def test_features_core_runs_only_the_core_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    """--features core runs exactly the vectors that need nothing but the core (from the
    files as written), and conforms to the core."""
    wanted = {
        vector["id"]
        for path in SUITE.glob("*.json")
        if path.name != "manifest.json"
        for vector in json.loads(path.read_text())["vectors"]
        if vector["features"] == ["core"]
    }
    code, report = results(capsys, "--features", "core")
    assert {r["id"] for r in report["results"]} == wanted
    assert all(vid.startswith("core/") for vid in wanted)
    assert (code, report["conforms_to"], list(report["summary"])) == (0, ["core"], ["core"])


def test_a_vector_runs_when_all_its_features_are_selected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """resume/crash-13 lists resume and core: it runs under core,resume, not under resume
    alone; a level counts the vectors that list it."""
    suite = write_suite(tmp_path / "suite", SMALL)
    _, alone = results(capsys, "--suite", str(suite), "--features", "resume")
    _, both = results(capsys, "--suite", str(suite), "--features", "core,resume")
    assert [r["id"] for r in alone["results"]] == ["resume/crash-21"]
    assert both["summary"] == {"core": {"passed": 4, "total": 4},
                               "resume": {"passed": 2, "total": 2}}  # fmt: skip


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as-trainer"], "--as-trainer needs --trainer NAME"),
        (["--features", "core,nope"], "--features nope: not a feature of the suite"),
        (["--timeout", "0"], "--timeout 0: expected a number of seconds > 0"),
        (["--adapter", "/nonexistent/adapter"], "cannot start the adapter /nonexistent/adapter"),
    ],
)
def test_usage_errors_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Input the runner cannot act on is said in one paragraph, exit 2."""
    suite = write_suite(tmp_path / "suite", SMALL)
    code, _, err = run_cli(capsys, "--suite", str(suite), *args)
    assert code == 2
    assert message in err


def test_a_changed_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A vector file whose bytes are not the manifest's is refused before anything runs."""
    suite = write_suite(tmp_path / "suite", SMALL)
    with (suite / "core.json").open("a") as handle:
        handle.write(" ")
    code, _, err = run_cli(capsys, "--suite", str(suite))
    assert code == 2
    assert "sha256" in err
    assert "is not the manifest's" in err


def test_another_protocol_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A suite of another protocol version is refused, naming both."""
    suite = write_suite(tmp_path / "suite", SMALL)
    manifest = json.loads((suite / "manifest.json").read_text())
    (suite / "manifest.json").write_text(
        json.dumps({**manifest, "protocol": "durations-conformance/2"})
    )
    code, _, err = run_cli(capsys, "--suite", str(suite))
    assert code == 2
    assert "protocol 'durations-conformance/2'; this runner speaks 'durations-conformance/1'" in err


# -- the checks -----------------------------------------------------------------------------

PLAN = {"total_steps": "23", "stop": {"epoch": "2", "batch": "23"}, "diagnostics": ["a", "b"]}
EXPECT = {
    "total_steps": _value("23"),
    "stop": _value({"batch": "23"}),
    "diagnostics": _value(["b", "a"]),
    "rates": _value(["0", "1/2", {"float": "0.9330127018922194"}]),
}


@pytest.mark.parametrize(
    ("response", "status", "field"),
    [
        # Every expected field agrees; the stop's other keys are not compared.
        ({"plan": PLAN, "rates": ["0", "1/2", {"float": "0.9330127018922194"}]}, "pass", None),
        # A float within 1e-12 relative of the expected one.
        ({"plan": PLAN, "rates": ["0", "1/2", {"float": "0.93301270189222"}]}, "pass", None),
        # The same fraction not in lowest terms: exact numbers are written canonically.
        ({"plan": PLAN, "rates": ["0", "2/4", {"float": "0.93301270189222"}]}, "fail", "rates[1]"),
        # A float a millionth off differs.
        ({"plan": PLAN, "rates": ["0", "1/2", {"float": "0.9330136"}]}, "fail", "rates[2]"),
        # A list of another length.
        ({"plan": PLAN, "rates": ["0", "1/2"]}, "fail", "rates.length"),
        # Diagnostics are a set: a missing code differs.
        ({"plan": {**PLAN, "diagnostics": ["a"]}, "rates": []}, "fail", "diagnostics"),
        # A stop key the response leaves out.
        ({"plan": {**PLAN, "stop": {"epoch": "2"}}, "rates": []}, "fail", "stop.batch"),
        # No rates at all, the rest agreeing: the adapter does not give them.
        ({"plan": PLAN}, "unsupported", None),
        # A refusal where values were expected.
        ({"error": {"code": "no-duration", "phase": "plan"}}, "error", "error"),
        # The adapter says it cannot.
        ({"unsupported": "no schedules"}, "unsupported", None),
    ],
)
def test_check(response: dict[str, Any], status: str, field: str | None) -> None:
    """Only the expected fields are compared, exact numbers by value, floats to 1e-12."""
    vector = Vector.from_dict(_vector("core/x", TWO_PHASES, EXPECT))
    result = check(vector, {"id": "core/x", **response})
    assert (result.status.value, result.field) == (status, field)


@pytest.mark.parametrize(
    ("response", "status", "field"),
    [
        ({"error": {"code": "no-duration", "phase": "plan"}}, "pass", None),  # the refusal
        ({"error": {"code": "no-duration", "phase": "resume"}}, "fail", "error.phase"),
        ({"error": {"code": "cannot-convert", "phase": "plan"}}, "fail", "error.code"),
        ({"plan": {"total_steps": "0"}}, "error", "error"),  # an answer where none is
    ],
)
def test_check_a_refusal(response: dict[str, Any], status: str, field: str | None) -> None:
    """An error vector passes on its code and phase, and on nothing else."""
    expect = {"error": {"code": "no-duration", "phase": "plan"}}
    vector = Vector.from_dict(_vector("core/x", NO_DURATION, expect))
    result = check(vector, {"id": "core/x", **response})
    assert (result.status.value, result.field) == (status, field)


def test_another_id_fails() -> None:
    """A response to another request fails the vector."""
    vector = Vector.from_dict(_vector("core/x", TWO_PHASES, EXPECT))
    assert check(vector, {"id": "core/y", "plan": PLAN}).status is Status.FAIL


def test_a_given_checkpoint_is_requested_alone() -> None:
    """A vector's checkpoint goes into its request as given (an adapter reads it); with
    resume_from, or as something other than a JSON object, the suite is refused."""
    given = {"format": 4, "ledger": None}  # does not read: that is the adapter's to say
    vector = Vector.from_dict(_vector("resume/x", TWO_PHASES, EXPECT, checkpoint=given))
    assert request(vector)["checkpoint"] == given
    assert request(vector, id="resume/x#0", resume_from="1ba")["checkpoint"] is None
    for wrong in ({"checkpoint": given, "resume_from": "13ba"}, {"checkpoint": "at-10ba.json"}):
        with pytest.raises(SuiteError, match=r"input\.checkpoint"):
            Vector.from_dict(_vector("resume/x", TWO_PHASES, EXPECT, **wrong))


def test_every_line_follows_the_protocol_schema() -> None:
    """Every request the runner makes for the whole suite, and every response of the
    reference adapter, is a line of vectors/schema/protocol.schema.json."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SUITE / "schema" / "protocol.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    lines = []

    def ask(message: dict[str, Any]) -> Any:
        reply = answer(json.loads(json.dumps(message)))
        lines.extend([message, reply])
        return json.loads(json.dumps(reply))

    for vector in load_suite(SUITE).vectors:
        assert evaluate(vector, ask).passed
    assert len(lines) > 2 * len(load_suite(SUITE).vectors)  # the properties ask many
    for line in lines:
        errors = [error.message for error in validator.iter_errors(line)]
        assert errors == [], (line.get("id"), errors)


# -- the generator ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["resume-invariance", "idempotent-rerun", "world-size-invariance"])
def test_the_generator_draws_what_the_suites_own_test_draws(kind: str) -> None:
    """The documented draw, implemented twice (the runner's and tests/test_vectors.py's own),
    gives the same scenarios for every generator of the suite."""
    from durations.scenario import Scenario

    from .test_vectors import generated

    for path in SUITE.glob("properties.json"):
        for vector in json.loads(path.read_text())["vectors"]:
            drawn = vector["property"]["generator"]
            if drawn is None or vector["property"]["kind"] != kind:
                continue
            mine = generate(Generator(seed=drawn["seed"], count=drawn["count"],
                                      params=drawn["params"]), kind)  # fmt: skip
            assert [Scenario.from_toml(text) for text, _ in mine] == generated(drawn, kind)


def test_drawn_scenarios_are_their_data() -> None:
    """Each drawn scenario's data is its TOML text parsed."""
    import tomllib

    for text, data in generate(Generator(seed=5, count=30)):
        assert tomllib.loads(text) == data


def test_a_property_checks_every_drawn_scenario() -> None:
    """A generator of 4 scenarios asks two requests about each (its uninterrupted plan, then
    the re-run from its end), numbered over the vector."""
    asked: list[str] = []

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        asked.append(message["id"])
        return answer(message)

    prop = {"kind": "idempotent-rerun", "over": {"crash_steps": "all"},
            "generator": {"seed": 1, "count": 4, "params": {"units": ["ba"]}}}  # fmt: skip
    body = {**_vector("properties/x", TWO_PHASES, {}), "property": prop}
    del body["expect"]
    assert evaluate(Vector.from_dict(body), ask).passed
    assert asked == [f"properties/x#{n}" for n in range(8)]


# -- the trainer profiles --------------------------------------------------------------------


def test_the_profiles_give_their_recorded_outcomes(capsys: pytest.CaptureFixture[str]) -> None:
    """trainers.json records each trainer's outcome (from the profiles and the recordings);
    each profile as an adapter gives exactly that outcome wherever it can answer."""
    for trainer in ("composer", "lightning", "transformers", "keras"):
        _, report = results(capsys, "--trainer", trainer, "--as-trainer", "--features",
                            "trainers,resume,sharding")  # fmt: skip
        mine = [r for r in report["results"] if r["id"].startswith("trainers/")]
        assert mine
        for r in mine:
            assert r["status"] in ("pass", "unsupported"), (trainer, r)
            assert r["status"] == "pass" or r["detail"].startswith("recorded as unsupported")


def test_a_trainer_differs_from_the_plan_where_the_suite_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --as-trainer a profile is held to the plan: Lightning restarts the interrupted
    epoch, so the mid-epoch crash vector fails on its reads (it reads samples 0-69, the plan
    30-99)."""
    code, report = results(capsys, "--trainer", "lightning", "--features", "trainers,resume")
    crash = next(r for r in report["results"] if r["id"] == "trainers/mid-epoch-crash-13")
    assert (crash["status"], crash["field"]) == ("fail", "reads[0].start")
    assert (crash["expected"], crash["received"]) == ("30", "0")
    assert code == 1


def test_the_trainer_table_is_current() -> None:
    """docs/conformance.md's table is what the profiles give on the suite now (regenerate:
    python -c 'from durations._conformance_run import update_page; update_page()')."""
    page = (ROOT / "docs" / "conformance.md").read_text()
    assert page_table(page) == table_for(load_suite(find_suite()))


# -- imports ------------------------------------------------------------------------------------


def test_plan_does_not_import_the_runner() -> None:
    """durations plan loads neither the runner, the checks nor the adapter; conformance
    loads the runner but not the trainer profiles (its adapter does, in its own process)."""
    runner = ("durations.conformance", "durations._conformance_run", "durations.adapter")
    assert not set(runner) & imported("plan", "examples/two-phase.toml")
    modules = imported("conformance", "--features", "core")
    assert {"durations.conformance", "durations._conformance_run"} <= modules
    assert "durations.trainers" not in modules


@pytest.mark.parametrize(
    "vector",
    [
        # a hostile id: shown by its start and its length (found by fuzzing: 699,291 characters)
        {"id": "x" * 100_000},
        # a hostile resume time in an otherwise valid vector
        {"id": "core/x", "input": {"scenario": "", "resume_from": ["9" * 100_000]}},
        # a hostile rule list
        {"id": "core/x", "input": {"scenario": ""}, "expect": {}, "features": [[0] * 50_000]},
    ],
)
def test_a_hostile_vector_is_refused_in_a_bounded_message(vector: dict[str, object]) -> None:
    with pytest.raises(SuiteError) as refused:
        Vector.from_dict(vector)
    assert len(str(refused.value)) < 1_000


_CORE = (SUITE / "core.json").read_bytes()
_V1 = "durations-conformance/1"
_CORE_ENTRY = {
    "path": "core.json",
    "sha256": hashlib.sha256(_CORE).hexdigest(),
    "features": ["core"],
    "vectors": len(json.loads(_CORE)["vectors"]),
}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        # the manifest of another protocol version
        ({"protocol": "durations-conformance/2", "files": []}, "this runner speaks"),
        # files that are not a list of objects
        ({"protocol": "durations-conformance/1", "files": ["core.json"]}, "an array of objects"),
        # a path out of the suite's directory
        (
            {
                "protocol": "durations-conformance/1",
                "files": [{**_CORE_ENTRY, "path": "../x.json"}],
            },
            "the name of a vector file",
        ),
        # a file the manifest names that is not there
        (
            {
                "protocol": "durations-conformance/1",
                "files": [{**_CORE_ENTRY, "path": "gone.json"}],
            },
            "cannot read the vector file",
        ),
        # a count that is not the file's
        (
            {"protocol": "durations-conformance/1", "files": [{**_CORE_ENTRY, "vectors": "many"}]},
            "the manifest says 'many'",
        ),
        # a hostile protocol value, shown by its start and its length
        ({"protocol": "x" * 100_000}, "(100,000 characters)"),
    ],
)
def test_a_broken_suite_is_refused_by_name(
    tmp_path: Path, manifest: dict[str, object], message: str
) -> None:
    """Whatever a manifest holds, reading the suite is a SuiteError that names the file and is
    a bounded paragraph, never another exception."""
    (tmp_path / "core.json").write_bytes(_CORE)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match=re.escape(message)) as refused:
        load_suite(tmp_path)
    assert len(str(refused.value)) < 1_000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected a JSON object"),  # not an object
        ('{"core/x": 3}', "expected a JSON object"),  # a reason that is not text
        ("{", "the known-failures file is not JSON"),  # cut short
        ("[" * 100_000, "the known-failures file is not JSON: nested too deeply"),
    ],
)
def test_a_broken_known_failures_file_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "known.json"
    path.write_text(text)
    with pytest.raises(SuiteError, match=re.escape(message)):
        load_known_failures(path)


def test_a_known_failures_fifo_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A FIFO would wait for a writer forever: it is refused before anything is read."""
    fifo = tmp_path / "known.json"
    os.mkfifo(fifo)
    with pytest.raises(SuiteError, match="cannot read the known-failures file"):
        load_known_failures(fifo)


# -- the review's findings: each a way a broken adapter or suite got through ---------------------

#: Every feature but the trainers': the property vectors and the ones they rest on.
NOT_TRAINERS = "properties,core,resume,sharding,mixtures,schedules,intervals"

#: Answers every request with an empty plan of 0 steps that reads nothing.
ZERO_PLAN = textwrap.dedent(
    """\
    import json, sys
    for line in sys.stdin:
        m = json.loads(line)
        plan = {"total_steps": "0", "stop": {}, "segments": [], "diagnostics": []}
        print(json.dumps({"id": m["id"], "plan": plan, "reads": []}), flush=True)
    """
)

#: Answers every request with a total of steps whose denominator is zero.
DIVIDE_BY_ZERO = textwrap.dedent(
    """\
    import json, sys
    for line in sys.stdin:
        m = json.loads(line)
        print(json.dumps({"id": m["id"], "plan": {"total_steps": "1/0"}}), flush=True)
    """
)

#: The reference, but its response to the first request is written twice.
EXTRA_LINE = textwrap.dedent(
    """\
    import json, sys
    from durations.conformance import answer
    first = True
    for line in sys.stdin:
        reply = json.dumps(answer(json.loads(line)))
        print(reply, flush=True)
        if first:
            print(reply, flush=True)
        first = False
    """
)


def _script(tmp_path: Path, text: str) -> str:
    script = tmp_path / "adapter.py"
    script.write_text(text)
    return f"{sys.executable} {script}"


def test_a_property_is_not_passed_by_an_empty_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An adapter whose every plan has 0 steps and no reads has no crash step to resume, yet
    its uninterrupted plan is not the planner's: every property vector fails."""
    code, report = results(
        capsys, "--adapter", _script(tmp_path, ZERO_PLAN), "--features", NOT_TRAINERS
    )
    props = [r for r in report["results"] if "properties" in r["features"]]
    assert props
    assert {r["status"] for r in props} == {"fail"}
    assert code == 1


def test_a_zero_denominator_fails_its_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'1/0' is no number: the vector fails (the runner does not crash) and the run goes on."""
    suite = write_suite(tmp_path / "suite", {"core": SMALL["core"][:1]})
    adapter = _script(tmp_path, DIVIDE_BY_ZERO)
    code, report = results(capsys, "--adapter", adapter, "--suite", str(suite))
    [result] = report["results"]
    assert (result["status"], result["field"], code) == ("fail", "total_steps", 1)


#: A vector expecting 12 steps and a segment that stops at run time.
CANONICAL = Vector.from_dict(
    _vector(
        "core/canonical",
        TWO_PHASES,
        {"total_steps": _value("12"), "segments": _value([{"stop_at_runtime": True}])},
    )
)


@pytest.mark.parametrize(
    ("total", "runtime", "status"),
    [
        ("12", True, Status.PASS),  # the canonical forms: the control row
        ("012", True, Status.FAIL),  # a leading zero: not the canonical integer
        ("24/2", True, Status.FAIL),  # a fraction not in lowest terms
        ("12/1", True, Status.FAIL),  # a denominator of 1 is written as an integer
        ("-12/-1", True, Status.FAIL),  # not the grammar of an exact number
        ("12", 1, Status.FAIL),  # a number where a boolean is expected (True == 1 in Python)
        ("12", "true", Status.FAIL),  # a string where a boolean is expected
    ],
)
def test_exact_values_must_be_canonical(total: str, runtime: object, status: Status) -> None:
    """Exact numbers are compared as the suite writes them (lowest terms, no leading zero),
    and booleans are booleans."""
    response = {
        "id": "core/canonical",
        "plan": {"total_steps": total, "segments": [{"stop_at_runtime": runtime}]},
    }
    assert check(CANONICAL, response).status is status


def test_an_empty_feature_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--features with no feature in it selects nothing to run: exit 2, not a run of 0 vectors
    that passes."""
    code, _out, err = run_cli(capsys, "--features", ",")
    assert code == 2
    assert "no feature given" in err


def test_an_extra_line_fails_its_own_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A response written twice is a failure of the request it answers, not of the next
    vector (which the adapter answers right)."""
    suite = write_suite(tmp_path / "suite", {"core": SMALL["core"]})
    adapter = _script(tmp_path, EXTRA_LINE)
    code, report = results(capsys, "--adapter", adapter, "--suite", str(suite))
    statuses = [(r["id"], r["status"]) for r in report["results"]]
    assert statuses == [
        ("core/two-phases", "fail"),
        ("core/two-phases-reads", "pass"),
        ("core/no-duration", "pass"),
    ]
    assert code == 1


def test_a_manifest_entry_must_count_its_vectors(tmp_path: Path) -> None:
    """A file entry without "vectors" cannot be checked against its file: refused."""
    suite = write_suite(tmp_path / "suite", {"core": SMALL["core"]})
    manifest = json.loads((suite / "manifest.json").read_text())
    del manifest["files"][0]["vectors"]
    (suite / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match="gives no count"):
        load_suite(suite)


def test_a_given_checkpoint_refuses_the_script_in_phase_plan() -> None:
    """A script with an error diagnostic is refused in phase plan whether it is resumed from a
    time or from a given checkpoint: the script is planned before the checkpoint is taken up."""
    checkpoint = {
        "format": 4,
        "progress": {"epoch": 0, "batch": 3, "sample": 3, "token": None, "batch_in_epoch": 3,
                     "sample_in_epoch": 3, "token_in_epoch": None},
        "loader_state": True,
        "ledger": None,
        "taken_up": None,
    }  # fmt: skip
    given = answer({"id": "a", "scenario": NO_DURATION, "checkpoint": checkpoint})
    timed = answer({"id": "a", "scenario": NO_DURATION, "resume_from": "3ba"})
    assert given == timed == {"id": "a", "error": {"code": "no-duration", "phase": "plan"}}
