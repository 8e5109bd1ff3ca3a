"""The conformance suite's logic (``docs/conformance.md``): vectors, their checks, the requests
of the adapter protocol, the property checks, the seeded generator of property scenarios, and
the reference answers (the planner's, and each trainer profile's).

Pure: no I/O. The runner (``durations conformance``, ``durations/_conformance_run.py``) reads
the suite and talks to an adapter; the reference adapter (``python -m durations.adapter``) is
a loop around :func:`answer`.

>>> vector = Vector.from_dict({
...     "id": "core/one-epoch", "description": "one epoch of 10 batches", "features": ["core"],
...     "rules": ["1"],
...     "input": {"scenario": '[run]\\nmax_duration = "1ep"\\n[loaders.a]\\nsamples = 100\\n'
...               'batch_size = 10\\n[[fit]]\\nloader = "a"\\n', "scenario_data": {},
...               "resume_from": None, "world_size": None},
...     "expect": {"total_steps": {"value": "10", "rules": ["1"]}}})
>>> check(vector, answer(request(vector))).status
<Status.PASS: 'pass'>
>>> result = check(vector, {"id": "core/one-epoch", "plan": {"total_steps": "11"}})
>>> result.status, result.field, result.expected, result.received
(<Status.FAIL: 'fail'>, 'total_steps', '10', '11')
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import random
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from .errors import DurationsError, shown_value

__all__ = [
    "FEATURES",
    "FLOAT_TOLERANCE",
    "PHASES",
    "PROTOCOL",
    "TRAINER_FIELDS",
    "AdapterError",
    "ErrorExpectation",
    "Expectation",
    "Generator",
    "Property",
    "Result",
    "Status",
    "SuiteError",
    "TrainerExpectation",
    "Vector",
    "answer",
    "answer_as",
    "check",
    "evaluate",
    "generate",
    "request",
    "trainer_table",
]

#: The protocol this module speaks: the ``protocol`` of the manifest and of docs/conformance.md.
PROTOCOL = "durations-conformance/1"

#: The features (levels) of the suite, in the order the summary shows them.
FEATURES = ("core", "resume", "sharding", "schedules", "intervals", "mixtures", "properties")

#: The phases of a refusal: the scenario file, the plan, or taking up the checkpoint.
PHASES = ("parse", "plan", "resume")

#: Learning-rate factors that are floats (inside a cosine) agree to this relative tolerance.
FLOAT_TOLERANCE = 1e-12

#: What a trainer profile answers: the steps it trains and the samples it reads.
TRAINER_FIELDS = ("total_steps", "reads")

#: The expected fields, in the order they are checked, and the response part each is in.
_FIELDS = {
    "total_steps": "plan",
    "stop": "plan",
    "segments": "plan",
    "diagnostics": "plan",
    "reads": "reads",
    "rates": "rates",
    "events": "events",
}

#: An exact number in the suite: a whole number, or a fraction in lowest terms.
_EXACT = re.compile(r"-?[0-9]+(?:/[0-9]+)?")

#: A vector id: ``<feature>/<kebab-name>``.
_ID = re.compile(r"[a-z]+/[a-z0-9]+(?:[-.][a-z0-9]+)*")


class SuiteError(DurationsError, ValueError):
    """A vector, a vector file or a manifest that does not follow docs/conformance.md."""


class AdapterError(DurationsError, RuntimeError):
    """An adapter that did not answer a request: ``status`` is ``TIMEOUT`` (no answer in
    time) or ``FAIL`` (a line that is not a response to the request, or the adapter ended)."""

    def __init__(self, status: Status, message: str) -> None:
        self.status = status
        super().__init__(message)


class Status(enum.Enum):
    """The result of one vector."""

    #: Every expected field agrees.
    PASS = "pass"
    #: A field differs (the first one is shown, with both values), or the response is broken.
    FAIL = "fail"
    #: The adapter refused where a value was expected, or answered where a refusal was.
    ERROR = "error"
    #: The adapter said it does not support the vector, or gave no value for an expected field.
    UNSUPPORTED = "unsupported"
    #: No response within the timeout; the adapter was restarted.
    TIMEOUT = "timeout"


@attrs.frozen(kw_only=True)
class Expectation:
    """One expected field of a vector: its JSON ``value`` and the rules that decide it."""

    field: str
    value: Any
    rules: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ErrorExpectation:
    """A refusal a vector expects: its ``code`` in the ``phase`` (parse, plan or resume)."""

    code: str
    phase: str
    rules: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Generator:
    """How the runner draws a property vector's scenarios: ``count`` of them, with
    ``random.Random(seed)``, within ``params`` (:func:`generate`)."""

    seed: int
    count: int
    params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Property:
    """What a property vector checks: ``kind`` over the crash steps ``crash_steps`` (``None``:
    all of them), on the vector's own scenario or, with a ``generator``, on drawn ones."""

    kind: str
    crash_steps: tuple[int, ...] | None = None
    generator: Generator | None = None


#: The kinds of property, each checked by :func:`_check_property`.
PROPERTY_KINDS = ("resume-invariance", "idempotent-rerun", "world-size-invariance")


@attrs.frozen(kw_only=True)
class TrainerExpectation:
    """A trainer's own outcome of a vector (``trainers.json``): measured on the real trainer,
    or derived from its profile."""

    trainer: str
    version: str
    provenance: str
    evidence: str | None
    expect: tuple[Expectation, ...] = ()
    error: ErrorExpectation | None = None
    #: Why the trainer's profile cannot say (a stream, a mixture, several processes).
    unsupported: str | None = None


@attrs.frozen(kw_only=True)
class Vector:
    """One vector of the suite: a scenario (resumed from a time, on a world size, or from a
    given checkpoint) and what an implementation must answer; or a property to check; or both
    plus each trainer's outcome."""

    id: str
    description: str
    features: tuple[str, ...]
    rules: tuple[str, ...]
    scenario: str
    scenario_data: Any
    resume_from: str | None = None
    world_size: int | None = None
    #: A checkpoint given as docs/checkpoint-format.md writes it (a JSON object), taken up by
    #: the scenario's plan; read by the adapter, so one that does not read stays as given.
    checkpoint: Mapping[str, Any] | None = None
    expect: tuple[Expectation, ...] = ()
    error: ErrorExpectation | None = None
    property: Property | None = None
    trainers: tuple[TrainerExpectation, ...] = ()
    supersedes: tuple[str, ...] = ()
    #: Why no implementation is expected to answer (a trainer's recorded outcome).
    unsupported: str | None = None

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "vector") -> Vector:
        """A vector from its JSON value; :class:`SuiteError` naming ``where`` and the key."""
        body = _table(data, where)
        vid = body.get("id")
        if not isinstance(vid, str) or not _ID.fullmatch(vid):
            raise SuiteError(
                f"{where}: id {shown_value(vid)}: expected '<feature>/<kebab-name>', e.g. "
                "'core/two-phases'"
            )
        where = f"{where} {shown_value(vid)}"
        given = _table(body.get("input"), f"{where}: input")
        scenario = given.get("scenario")
        if not isinstance(scenario, str):
            raise SuiteError(f"{where}: input.scenario: expected the scenario's TOML text")
        resume_from = given.get("resume_from")
        if resume_from is not None and not isinstance(resume_from, str):
            raise SuiteError(
                f"{where}: input.resume_from {shown_value(resume_from)}: expected a time string"
            )
        world_size = given.get("world_size")
        if world_size is not None:
            world_size = _whole(world_size, f"{where}: input.world_size")
        checkpoint = given.get("checkpoint")
        if checkpoint is not None:
            if not isinstance(checkpoint, dict):
                raise SuiteError(
                    f"{where}: input.checkpoint: expected a checkpoint as a JSON object "
                    f"(docs/checkpoint-format.md) or null, got {type(checkpoint).__name__}"
                )
            if resume_from is not None or world_size is not None:
                raise SuiteError(
                    f"{where}: input.checkpoint comes without resume_from and world_size: the "
                    "plan takes up either the checkpoint it writes itself or the one given"
                )
        expect: tuple[Expectation, ...] = ()
        error = None
        if "expect" in body:
            expect, error = _expectations(body["expect"], f"{where}: expect")
        prop = None
        if "property" in body:
            prop = _property(body["property"], f"{where}: property")
        if "expect" not in body and prop is None:
            raise SuiteError(f"{where}: expected 'expect' or 'property'")
        trainers = tuple(
            _trainer(entry, f"{where}: trainers[{index}]")
            for index, entry in enumerate(_list(body.get("trainers", []), f"{where}: trainers"))
        )
        return cls(
            id=vid,
            description=str(body.get("description", "")),
            features=_strings(body.get("features"), f"{where}: features"),
            rules=_strings(body.get("rules", []), f"{where}: rules"),
            scenario=scenario,
            scenario_data=given.get("scenario_data"),
            resume_from=resume_from,
            world_size=world_size,
            checkpoint=checkpoint,
            expect=expect,
            error=error,
            property=prop,
            trainers=trainers,
            supersedes=_strings(body.get("supersedes", []), f"{where}: supersedes"),
        )

    def as_trainer(self, trainer: str) -> Vector:
        """This vector with ``trainer``'s own outcome as its expectation, when it records one
        (``trainers.json``); otherwise itself."""
        for entry in self.trainers:
            if entry.trainer == trainer:
                return attrs.evolve(
                    self, expect=entry.expect, error=entry.error, unsupported=entry.unsupported
                )
        return self

    def only(self, fields: Iterable[str]) -> Vector:
        """This vector checking only ``fields`` of its expectation (a refusal stays)."""
        keep = set(fields)
        return attrs.evolve(self, expect=tuple(e for e in self.expect if e.field in keep))


@attrs.frozen(kw_only=True)
class Result:
    """What one vector gave: its ``status``; for a failure, the first differing ``field``
    with the ``expected`` and ``received`` values; ``detail`` in words; ``known`` the reason
    given for a known failure."""

    id: str
    status: Status
    features: tuple[str, ...] = ()
    field: str | None = None
    expected: Any = None
    received: Any = None
    detail: str = ""
    known: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every expected field agreed."""
        return self.status is Status.PASS

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON value (``durations conformance --json``)."""
        return {
            "id": self.id,
            "status": self.status.value,
            "features": list(self.features),
            "field": self.field,
            "expected": self.expected,
            "received": self.received,
            "detail": self.detail,
            "known": self.known,
        }


# -- reading vectors ----------------------------------------------------------------------------


def _table(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise SuiteError(f"{where}: expected a JSON array, got {type(value).__name__}")
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    items = _list(value, where)
    if not all(isinstance(item, str) for item in items):
        raise SuiteError(f"{where}: expected an array of strings, got {shown_value(items)}")
    return tuple(items)


def _whole(value: object, where: str) -> int:
    """A whole number > 0 given as a JSON integer or an exact string."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]+", value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SuiteError(f"{where}: {shown_value(value)}: expected a whole number > 0")
    return value


def _expectations(
    value: object, where: str, *, with_error: bool = False
) -> tuple[tuple[Expectation, ...], ErrorExpectation | None]:
    """A vector's expected fields, or its refusal; ``with_error`` (a trainer's outcome) allows
    both: the trainer trained, then raised."""
    body = dict(_table(value, where))
    error = None
    if "error" in body:
        if len(body) != 1 and not with_error:
            raise SuiteError(f"{where}: an error expectation stands alone, got {sorted(body)}")
        error = _error_expectation(body.pop("error"), where)
    found = []
    for name, entry in body.items():
        if name not in _FIELDS:
            raise SuiteError(
                f"{where}: unknown field {shown_value(name)}; expected one of {list(_FIELDS)}"
            )
        table = _table(entry, f"{where}.{name}")
        if "value" not in table:
            raise SuiteError(f"{where}.{name}: expected {{'value': ..., 'rules': [...]}}")
        rules = _strings(table.get("rules", []), f"{where}.{name}.rules")
        found.append(Expectation(field=name, value=table["value"], rules=rules))
    order = list(_FIELDS)
    found.sort(key=lambda e: order.index(e.field))
    return tuple(found), error


def _error_expectation(value: object, where: str) -> ErrorExpectation:
    error = _table(value, f"{where}.error")
    code, phase = error.get("code"), error.get("phase")
    if not isinstance(code, str) or phase not in PHASES:
        raise SuiteError(
            f"{where}.error: expected a code and a phase ({', '.join(PHASES)}), got "
            f"{shown_value(code)} and {shown_value(phase)}"
        )
    rules = _strings(error.get("rules", []), f"{where}.error.rules")
    return ErrorExpectation(code=code, phase=phase, rules=rules)


def _property(value: object, where: str) -> Property:
    body = _table(value, where)
    kind = body.get("kind")
    if kind not in PROPERTY_KINDS:
        raise SuiteError(
            f"{where}: kind {shown_value(kind)}: expected one of {', '.join(PROPERTY_KINDS)}"
        )
    over = _table(body.get("over", {"crash_steps": "all"}), f"{where}.over")
    steps = over.get("crash_steps", "all")
    crash_steps = None
    if steps != "all":
        crash_steps = tuple(
            _whole(step, f"{where}.over.crash_steps") for step in _list(steps, f"{where}.over")
        )
    generator = None
    if body.get("generator") is not None:
        drawn = _table(body["generator"], f"{where}.generator")
        seed = drawn.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise SuiteError(
                f"{where}.generator.seed {shown_value(seed)}: expected a whole number >= 0"
            )
        generator = Generator(
            seed=seed,
            count=_whole(drawn.get("count"), f"{where}.generator.count"),
            params=_table(drawn.get("params", {}), f"{where}.generator.params"),
        )
    return Property(kind=kind, crash_steps=crash_steps, generator=generator)


def _trainer(value: object, where: str) -> TrainerExpectation:
    body = _table(value, where)
    outcome = _table(body.get("expect", {}), f"{where}.expect")
    unsupported = outcome.get("unsupported")
    expect: tuple[Expectation, ...] = ()
    error = None
    if unsupported is None:
        expect, error = _expectations(outcome, f"{where}.expect", with_error=True)
    evidence = body.get("evidence")
    return TrainerExpectation(
        trainer=str(body.get("trainer")),
        version=str(body.get("version")),
        provenance=str(body.get("provenance")),
        evidence=None if evidence is None else str(evidence),
        expect=expect,
        error=error,
        unsupported=None if unsupported is None else str(unsupported),
    )


# -- requests and checks ------------------------------------------------------------------------


def request(
    vector: Vector,
    *,
    id: str | None = None,
    resume_from: str | None = None,
    world_size: int | None = None,
    scenario: tuple[str, Any] | None = None,
    want: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The request line for ``vector`` (docs/conformance.md, "The adapter protocol"); the
    keywords make a property check's requests (another id, crash step, world size, scenario),
    which carry no checkpoint.

    ``want`` is what the expectation needs: ``plan`` for ``total_steps``, ``stop``,
    ``segments`` and ``diagnostics``, then ``reads``, ``rates`` and ``events``.
    """
    if want is None:
        parts = {_FIELDS[e.field] for e in vector.expect} | {"plan"}
        want = [part for part in ("plan", "reads", "rates", "events") if part in parts]
    text, data = scenario if scenario is not None else (vector.scenario, vector.scenario_data)
    checkpoint = None
    if scenario is None and resume_from is None:
        resume_from, world_size = vector.resume_from, vector.world_size
        checkpoint = vector.checkpoint
    return {
        "id": vector.id if id is None else id,
        "scenario": text,
        "scenario_data": data,
        "resume_from": resume_from,
        "world_size": world_size,
        "checkpoint": checkpoint,
        "want": list(want),
    }


@attrs.frozen
class _Differs(Exception):  # noqa: N818 - a finding, not a failure of this module
    """Where a received value first differs from the expected one."""

    path: str
    expected: Any
    received: Any
    why: str = ""


@attrs.frozen
class _Missing(Exception):  # noqa: N818 - a finding
    """An expected field the response does not give."""

    path: str


def check(vector: Vector, response: Any) -> Result:
    """Compare ``response`` with ``vector``'s expectation: only the expected fields, exact
    numbers as strings by value, floats to :data:`FLOAT_TOLERANCE` relative, lists item by
    item (each item a subset match), diagnostics as a set.

    A field that differs fails the vector (the first one, with both values); a field the
    response does not give makes it unsupported when no given field differs.
    """

    def result(status: Status, detail: str = "", **found: Any) -> Result:
        return Result(id=vector.id, status=status, features=vector.features, detail=detail, **found)

    if not isinstance(response, dict):
        return result(Status.FAIL, f"the response is not a JSON object: {_short(response)}")
    if response.get("id") != vector.id:
        return result(
            Status.FAIL,
            f"the response's id is {shown_value(response.get('id'))}, the request's "
            f"{shown_value(vector.id)}",
        )
    if "unsupported" in response:
        return result(Status.UNSUPPORTED, f"unsupported: {response['unsupported']}")
    refused = response.get("error")
    if vector.error is not None:
        want = {"code": vector.error.code, "phase": vector.error.phase}
        if not isinstance(refused, dict):
            return result(
                Status.ERROR,
                f"expected a refusal ({want['code']} in phase {want['phase']}), got an answer",
                field="error",
                expected=want,
                received=None,
            )
        for key in ("phase", "code"):
            if refused.get(key) != want[key]:
                return result(
                    Status.FAIL,
                    f"refused with another {key}",
                    field=f"error.{key}",
                    expected=want[key],
                    received=refused.get(key),
                )
        return result(Status.PASS)
    if refused is not None:
        return result(
            Status.ERROR,
            f"refused ({_short(refused)}) where a value was expected",
            field="error",
            expected=None,
            received=refused,
        )
    missing = []
    for expectation in vector.expect:
        try:
            given = _given(response, expectation.field)
            _compare(expectation.field, expectation.value, given, expectation.field)
        except _Differs as differs:
            return result(
                Status.FAIL,
                differs.why,
                field=differs.path,
                expected=differs.expected,
                received=differs.received,
            )
        except _Missing as gone:
            missing.append(gone.path)
    if missing:
        return result(Status.UNSUPPORTED, f"the response gives no {', '.join(missing)}")
    return result(Status.PASS)


def _given(response: Mapping[str, Any], field: str) -> Any:
    part = _FIELDS[field]
    if part == "plan":
        plan = response.get("plan")
        if not isinstance(plan, dict) or field not in plan:
            raise _Missing(field)
        return plan[field]
    if part not in response or response[part] is None:
        raise _Missing(field)
    return response[part]


def _compare(field: str, expected: Any, received: Any, path: str) -> None:
    """Raise :class:`_Differs` where ``received`` first differs from ``expected``."""
    if field == "diagnostics":
        if not isinstance(received, list) or set(map(str, received)) != set(expected):
            raise _Differs(path, sorted(expected), _sorted_codes(received))
        return
    if field == "reads" and isinstance(received, list) and isinstance(expected, list):
        # Maximal runs, by loader then start: compared in that order whatever the order given.
        received = sorted(received, key=_read_key)
        expected = sorted(expected, key=_read_key)
    _same(expected, received, path)


def _sorted_codes(received: object) -> object:
    return sorted(map(str, received)) if isinstance(received, list) else received


def _read_key(item: object) -> tuple[str, str, int]:
    if not isinstance(item, dict):
        return ("", "", 0)
    start = item.get("start")
    number = _count_of(start) or 0
    return (str(item.get("loader")), str(item.get("source", "")), number)


def _same(expected: Any, received: Any, path: str) -> None:
    if isinstance(expected, str) and _EXACT.fullmatch(expected):
        if not isinstance(received, str):
            why = "exact numbers are JSON strings" if isinstance(received, int | float) else ""
            raise _Differs(path, expected, received, why)
        if not _canonical(received):
            why = "not an exact number in lowest terms (docs/conformance.md, Exact numbers)"
            raise _Differs(path, expected, received, why)
        if Fraction(received) == Fraction(expected):
            return
        raise _Differs(path, expected, received)
    if isinstance(expected, dict) and set(expected) == {"float"}:
        if not _close(expected["float"], received):
            raise _Differs(path, expected, received)
        return
    if isinstance(expected, dict):
        if not isinstance(received, dict):
            raise _Differs(path, expected, received)
        for key, value in expected.items():
            if key not in received:
                raise _Differs(f"{path}.{key}", value, None, "not given")
            _same(value, received[key], f"{path}.{key}")
        return
    if isinstance(expected, list):
        if not isinstance(received, list):
            raise _Differs(path, expected, received)
        if len(received) != len(expected):
            raise _Differs(
                f"{path}.length", str(len(expected)), str(len(received)), "lists of other lengths"
            )
        for index, (want, got) in enumerate(zip(expected, received, strict=True)):
            _same(want, got, f"{path}[{index}]")
        return
    if isinstance(expected, bool) != isinstance(received, bool) or expected != received:
        raise _Differs(path, expected, received)


def _canonical(text: object) -> bool:
    """Whether ``text`` is an exact number as the suite writes it: a string, an integer
    without leading zeros, or a fraction in lowest terms with a denominator > 1 (``"012"``,
    ``"24/2"``, ``"1/0"`` and ``"-0"`` are not)."""
    if not isinstance(text, str) or not _EXACT.fullmatch(text):
        return False
    try:
        return str(Fraction(text)) == text
    except ZeroDivisionError:
        return False


def _count_of(text: object) -> int | None:
    """The whole number >= 0 that ``text`` writes canonically (``"0"``, ``"23"``); else
    ``None``."""
    if not _canonical(text) or "/" in str(text) or str(text).startswith("-"):
        return None
    return int(str(text))


def _close(expected: object, received: object) -> bool:
    """A float factor against a received float (``{"float": ...}``) or exact number."""
    try:
        want = float(str(expected))
        if isinstance(received, dict) and set(received) == {"float"}:
            got = float(str(received["float"]))
        elif _canonical(received):
            got = float(Fraction(str(received)))
        else:
            return False
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    return math.isclose(want, got, rel_tol=FLOAT_TOLERANCE, abs_tol=1e-15)


def _short(value: object, most: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


# -- evaluating vectors -------------------------------------------------------------------------

#: Asks an adapter one request; returns its response or raises :class:`AdapterError`.
Ask = Callable[[dict[str, Any]], Any]


def evaluate(vector: Vector, ask: Ask, *, fields: Iterable[str] | None = None) -> Result:
    """The result of ``vector`` for the adapter that ``ask`` talks to: one request and
    :func:`check`, or a property vector's requests and checks. ``fields`` checks only those
    expected fields (a trainer profile's :data:`TRAINER_FIELDS`); a vector expecting none of
    them is unsupported."""
    if vector.unsupported is not None:
        return Result(
            id=vector.id,
            status=Status.UNSUPPORTED,
            features=vector.features,
            detail=f"recorded as unsupported: {vector.unsupported}",
        )
    if fields is not None:
        narrowed = vector.only(fields)
        if vector.property is None and vector.error is None and not narrowed.expect:
            expected = ", ".join(e.field for e in vector.expect)
            return Result(
                id=vector.id,
                status=Status.UNSUPPORTED,
                features=vector.features,
                detail=f"checks only {', '.join(fields)}; the vector expects {expected}",
            )
        vector = narrowed
    try:
        if vector.property is not None:
            return _check_property(vector, ask)
        return check(vector, ask(request(vector)))
    except AdapterError as error:
        return Result(
            id=vector.id, status=error.status, features=vector.features, detail=str(error)
        )


def _check_property(vector: Vector, ask: Ask) -> Result:
    """Check a property vector (docs/conformance.md, "Properties"): the runner asks for the
    uninterrupted plan, then for each crash step the plan resumed there, and compares."""
    prop = vector.property
    assert prop is not None
    if prop.generator is None:
        scenarios = [(vector.scenario, vector.scenario_data)]
    else:
        # The rules' domain: a drawn scenario the planner refuses (rule 1's no-duration, a
        # target in a unit the loader cannot convert) has no property to check.
        drawn = generate(prop.generator, prop.kind)
        scenarios = [s for s in drawn if _Reference.of(s) is not None]
    numbers = itertools.count()
    for index, scenario in enumerate(scenarios):
        found = _property_holds(vector, prop, index, scenario, ask, numbers)
        if found is not None:
            return found
    return Result(id=vector.id, status=Status.PASS, features=vector.features)


def _property_holds(
    vector: Vector,
    prop: Property,
    index: int,
    scenario: tuple[str, Any],
    ask: Ask,
    numbers: Iterator[int],
) -> Result | None:
    """``None`` when the property holds for one scenario; else the failing result. Requests
    are ``<id>#<n>``, numbered over the vector; messages say which plan each one asks for."""
    drawn = "" if prop.generator is None else f"scenario {index}, "
    base = f"{drawn}the uninterrupted plan"

    def fail(status: Status, detail: str, **found: Any) -> Result:
        if prop.generator is not None:
            seed = f"scenario {index} drawn with seed {prop.generator.seed}"
            detail = f"{detail}; {seed}" if detail else seed
        return Result(
            id=vector.id,
            status=status,
            features=vector.features,
            detail=detail,
            **found,
        )

    def values(label: str, *, resume_from: str | None = None, world: int | None = None) -> Any:
        rid = f"{vector.id}#{next(numbers)}"
        response = ask(
            request(
                vector,
                id=rid,
                scenario=scenario,
                resume_from=resume_from,
                world_size=world,
                want=["plan", "reads"],
            )
        )
        if not isinstance(response, dict) or response.get("id") != rid:
            raise _Differs(label, "a response to " + rid, _short(response), "not its response")
        return response

    try:
        full = values(base)
        if "unsupported" in full:
            return fail(Status.UNSUPPORTED, f"unsupported: {full['unsupported']}")
        if "error" in full:
            return fail(Status.ERROR, f"{base}: refused {_short(full['error'])}")
        total = _number(full, "total_steps", base)
        reference = _Reference.of(scenario)
        if reference is None:
            raise _Refused(f"{base}: the planner refuses the scenario", unsupported=False)
        # The uninterrupted plan first: crash steps and reads are measured against it, so an
        # empty or short plan must not pass a property by having nothing to resume.
        _compare_one(full, "total_steps", _exact(reference.fresh.total_steps), base)
        whole = _counts(_given_reads(full, base))
        _same_counts(_counts(reference.first_reads(total)), whole, f"{base}: reads")
        if prop.kind == "idempotent-rerun":
            label = f"{drawn}resumed at its end, {total}"
            again = values(label, resume_from=f"{total}ba")
            _compare_one(again, "total_steps", "0", label)
            return None
        steps = range(1, total) if prop.crash_steps is None else prop.crash_steps
        for k in steps:
            if k >= total:
                continue
            done = _counts(reference.first_reads(k))
            if prop.kind == "resume-invariance":
                label = f"{drawn}resumed at {k}"
                resumed = values(label, resume_from=f"{k}ba")
                _refused(resumed, label)
                if "stop" in (full.get("plan") or {}):
                    _compare_one(resumed, "stop", full["plan"]["stop"], label)
                added = _add(done, _counts(_given_reads(resumed, label)))
                _same_counts(whole, added, f"{label}: reads + the first {k} steps' reads")
            else:
                after = _subtract(whole, done)
                for world in _world_sizes(prop):
                    label = f"{drawn}resumed at {k} on {world} ranks"
                    resumed = values(label, resume_from=f"{k}ba", world=world)
                    got = _counts(_given_reads(resumed, label))
                    evened = reference.evened(k, world)
                    _same_counts(_outside(after, evened), _outside(got, evened), f"{label}: reads")
    except _Differs as differs:
        return fail(
            Status.FAIL,
            differs.why,
            field=differs.path,
            expected=differs.expected,
            received=differs.received,
        )
    except _Missing as gone:
        return fail(Status.UNSUPPORTED, f"the response gives no {gone.path}")
    except _Refused as refused:
        status = Status.UNSUPPORTED if refused.unsupported else Status.ERROR
        return fail(status, str(refused))
    return None


class _Refused(Exception):  # noqa: N818 - a finding
    def __init__(self, message: str, *, unsupported: bool) -> None:
        self.unsupported = unsupported
        super().__init__(message)


def _refused(response: Mapping[str, Any], rid: str) -> None:
    if "unsupported" in response:
        raise _Refused(f"{rid}: unsupported: {response['unsupported']}", unsupported=True)
    if "error" in response:
        raise _Refused(f"{rid}: refused {_short(response['error'])}", unsupported=False)


def _world_sizes(prop: Property) -> list[int]:
    params = prop.generator.params if prop.generator is not None else {}
    return [int(w) for w in params.get("world_sizes") or GENERATOR_DEFAULTS["world_sizes"]]


def _number(response: Mapping[str, Any], field: str, rid: str) -> int:
    value = _given(response, field)
    number = _count_of(value)
    if number is None:
        raise _Differs(f"{rid}: {field}", "a whole number as a string", value)
    return number


def _compare_one(response: Mapping[str, Any], field: str, expected: Any, rid: str) -> None:
    _refused(response, rid)
    try:
        _compare(field, expected, _given(response, field), field)
    except _Differs as differs:
        raise _Differs(f"{rid}: {differs.path}", differs.expected, differs.received) from None


def _given_reads(response: Mapping[str, Any], rid: str) -> list[Any]:
    _refused(response, rid)
    reads = _given(response, "reads")
    if not isinstance(reads, list):
        raise _Differs(f"{rid}: reads", "a list of reads", _short(reads))
    return reads


#: Samples read, as ``{(loader, source): {position: times}}`` runs: ``(start, stop) -> times``.
_Counts = dict[tuple[str, str], dict[int, int]]


def _counts(reads: Iterable[Any]) -> _Counts:
    """Each sample's read count from maximal runs (sparse: one entry per position)."""
    found: _Counts = {}
    for item in reads:
        if not isinstance(item, dict):
            raise _Differs("reads", "objects {loader, start, stop, times}", _short(item))
        numbers = [_count_of(item.get(name)) for name in ("start", "stop", "times")]
        if "loader" not in item or None in numbers:
            raise _Differs("reads", "{loader, start, stop, times}", _short(item))
        key = (str(item["loader"]), str(item.get("source", "")))
        start, stop, times = (int(n or 0) for n in numbers)
        counts = found.setdefault(key, {})
        for position in range(start, stop):
            counts[position] = counts.get(position, 0) + times
    return found


def _add(first: _Counts, second: _Counts) -> _Counts:
    total: _Counts = {key: dict(counts) for key, counts in first.items()}
    for key, counts in second.items():
        into = total.setdefault(key, {})
        for position, times in counts.items():
            into[position] = into.get(position, 0) + times
    return total


def _subtract(whole: _Counts, done: _Counts) -> _Counts:
    left: _Counts = {}
    for key, counts in whole.items():
        for position, times in counts.items():
            rest = times - done.get(key, {}).get(position, 0)
            if rest:
                left.setdefault(key, {})[position] = rest
    return left


def _same_counts(expected: _Counts, received: _Counts, path: str) -> None:
    for key in sorted(set(expected) | set(received)):
        want, got = expected.get(key, {}), received.get(key, {})
        for position in sorted(set(want) | set(got)):
            if want.get(position, 0) != got.get(position, 0):
                raise _Differs(
                    f"{path}: loader {key[0]!r}{' source ' + repr(key[1]) if key[1] else ''} "
                    f"sample {position}",
                    str(want.get(position, 0)),
                    str(got.get(position, 0)),
                    "read another number of times",
                )


def _outside(counts: _Counts, evened: Mapping[str, Container[int]]) -> _Counts:
    """``counts`` without the samples each loader's evening may read again or drop."""
    return {
        key: {p: t for p, t in found.items() if p not in evened.get(key[0], range(0))}
        for key, found in counts.items()
    }


@attrs.frozen
class _Reference:
    """The planner's side of a property check: the protocol gives a plan's reads as a whole,
    so the reads of the uninterrupted plan's first ``k`` steps, and the samples evening over
    ranks touches, are the planner's."""

    scenario: Any
    fresh: Any

    @classmethod
    def of(cls, scenario: tuple[str, Any]) -> _Reference | None:
        """The planner's plan of ``scenario``; ``None`` when it refuses it."""
        from .errors import DurationsError
        from .fit import ResumeMode
        from .planner import plan
        from .scenario import Scenario

        try:
            parsed = Scenario.from_toml(scenario[0], source="<vector>")
        except DurationsError:
            return None
        config = attrs.evolve(parsed.config, resume=ResumeMode.CONTINUE)
        fresh = plan(config, parsed.calls)
        return cls(parsed, fresh) if fresh.ok else None

    def first_reads(self, k: int) -> list[dict[str, str]]:
        """The reads of the uninterrupted plan's first ``k`` steps."""
        return _reads(self.fresh, steps=k)

    def evened(self, k: int, world: int) -> dict[str, Container[int]]:
        """Per loader, the samples evening reads again (its first ones) or drops (its last
        ones) in the uninterrupted plan or the one resumed at ``k`` on ``world`` ranks (rule
        17): what moves with the world size, which world-size invariance sets aside."""
        from .planner import plan

        calls = tuple(_on_ranks(call, world) for call in self.scenario.calls)
        resumed = plan(self.scenario.config, calls, self.fresh.checkpoint_at(k))
        found: dict[str, tuple[int, int, int]] = {}
        for segment in (*self.fresh.segments, *resumed.segments):
            for tail in segment.tails:
                name = str(segment.loader.name)
                repeated, dropped, _ = found.get(name, (0, 0, tail.samples))
                found[name] = (
                    max(repeated, min(tail.repeated, tail.samples)),
                    max(dropped, tail.dropped),
                    tail.samples,
                )
        return {
            name: _Evened(repeated, samples - dropped)
            for name, (repeated, dropped, samples) in found.items()
        }


@attrs.frozen
class _Evened:
    """The samples ``[0, first)`` and those from ``last`` on."""

    first: int
    last: int

    def __contains__(self, place: object) -> bool:
        return isinstance(place, int) and (0 <= place < self.first or self.last <= place)


# -- the seeded generator -----------------------------------------------------------------------

#: The generator's parameters and their defaults: inclusive ranges ``[low, high]``, and lists
#: to choose from (docs/conformance.md, "The seeded generator").
GENERATOR_DEFAULTS: dict[str, Any] = {
    "loaders": [1, 2],
    "samples": [1, 40],
    "batch_size": [1, 8],
    "calls": [1, 3],
    "units": ["ba", "sp", "ep"],
    "amount": [1, 30],
    "epochs": [1, 2],
    "world_size": [1, 4],
    "device_batch_size": [1, 6],
    "world_sizes": [1, 2, 3, 4],
}


def generate(generator: Generator, kind: str = "resume-invariance") -> list[tuple[str, Any]]:
    """``generator.count`` scenarios drawn with ``random.Random(generator.seed)`` for a
    property of ``kind``, each as its TOML text and the same parsed (docs/conformance.md, "The
    seeded generator", states the draws and their order).

    >>> one = Generator(seed=7, count=1, params={"loaders": [1, 1], "calls": [1, 1]})
    >>> text, data = generate(one)[0]
    >>> print(text, end="")
    [loaders.l0]
    samples = 10
    batch_size = 7
    [[fit]]
    loader = "l0"
    duration = "12ba"
    >>> data["fit"]
    [{'loader': 'l0', 'duration': '12ba'}]
    """
    import tomllib

    params = {**GENERATOR_DEFAULTS, **generator.params}
    rng = random.Random(generator.seed)
    drawn = []
    for _ in range(generator.count):
        if kind == "world-size-invariance":
            epochs = _draw(rng, params["epochs"])
            samples = _draw(rng, params["samples"])
            world = _draw(rng, params["world_size"])
            micro = _draw(rng, params["device_batch_size"])
            text = (
                f'[run]\nmax_duration = "{epochs}ep"\n[loaders.a]\nsamples = {samples}\n'
                f"world_size = {world}\ndevice_batch_size = {micro}\n"
                '[[fit]]\nloader = "a"\n'
            )
        else:
            names = [f"l{i}" for i in range(_draw(rng, params["loaders"]))]
            text = ""
            for name in names:
                samples = _draw(rng, params["samples"])
                batch = _draw(rng, params["batch_size"])
                text += f"[loaders.{name}]\nsamples = {samples}\nbatch_size = {batch}\n"
            for _ in range(_draw(rng, params["calls"])):
                unit = rng.choice(list(params["units"]))
                key = rng.choice(["duration", "until"])
                amount = _draw(rng, params["amount"])
                # An amount of ep above 9 is a fraction: 0.25ep for 25.
                said = f"0.{amount}" if unit == "ep" and amount > 9 else str(amount)
                loader = rng.choice(names)
                text += f'[[fit]]\nloader = "{loader}"\n{key} = "{said}{unit}"\n'
        drawn.append((text, tomllib.loads(text)))
    return drawn


def _draw(rng: random.Random, bounds: Any) -> int:
    low, high = (int(bound) for bound in bounds)
    return rng.randint(low, high)


# -- the reference answers ----------------------------------------------------------------------


def answer(message: Any) -> dict[str, Any]:
    """The reference adapter's response to one request: the planner's answer.

    >>> reply = answer({"id": "x", "scenario": '[loaders.a]\\nsamples = 10\\nbatch_size = 4\\n'
    ...                 '[[fit]]\\nloader = "a"\\nduration = "1ep"\\n', "want": ["plan", "reads"]})
    >>> reply["plan"]["total_steps"], reply["reads"]
    ('3', [{'loader': 'a', 'start': '0', 'stop': '10', 'times': '1'}])
    >>> answer({"id": "y", "scenario": "[loaders.a]\\nsamples = 0\\n"})["error"]
    {'code': 'ScenarioError', 'phase': 'parse'}

    A ``checkpoint`` (docs/checkpoint-format.md) is taken up by the scenario's plan; one
    without a ledger is located in the script's own plan (rule 10):

    >>> counters = {"epoch": 1, "batch": 12, "sample": 120, "token": None,
    ...             "batch_in_epoch": 2, "sample_in_epoch": 20, "token_in_epoch": None}
    >>> foreign = {"format": 4, "progress": counters, "loader_state": True, "ledger": None,
    ...            "taken_up": None}
    >>> reply = answer({"id": "z", "scenario": '[loaders.a]\\nsamples = 100\\nbatch_size = 10\\n'
    ...                 '[[fit]]\\nloader = "a"\\nuntil = "2ep"\\n', "checkpoint": foreign})
    >>> reply["plan"]["total_steps"], reply["plan"]["diagnostics"]
    ('8', ['checkpoint-located'])
    >>> answer({"id": "z", "scenario": '[loaders.a]\\nsamples = 100\\nbatch_size = 10\\n'
    ...         '[[fit]]\\nloader = "a"\\nuntil = "2ep"\\n', "checkpoint": {"format": 4}})["error"]
    {'code': 'CheckpointFormatError', 'phase': 'resume'}
    """
    rid, refusal = _request_id(message)
    if refusal is not None:
        return refusal
    from .errors import DurationsError
    from .scenario import Scenario

    resume_from, checkpoint = message.get("resume_from"), message.get("checkpoint")
    if resume_from is not None and checkpoint is not None:
        return {
            "id": rid,
            "unsupported": "a request gives resume_from or checkpoint, not both: the plan takes "
            "up either the checkpoint it writes itself or the one given",
        }
    try:
        scenario = Scenario.from_toml(str(message.get("scenario")), source="<vector>")
    except DurationsError as error:
        return _error(rid, type(error).__name__, "parse")
    try:
        if checkpoint is not None:
            found = _taken_up(scenario, checkpoint)
        else:
            found = _planned(scenario, resume_from, message.get("world_size"))
    except _Refusal as refusal_:
        return _error(rid, refusal_.code, refusal_.phase)
    want = _want(message)
    reply: dict[str, Any] = {"id": rid}
    if "plan" in want:
        reply["plan"] = _plan_json(found)
    if "reads" in want:
        reply["reads"] = _reads(found)
    if "rates" in want and scenario.schedule is not None:
        reply["rates"] = _rates(scenario, found)
    if "events" in want:
        reply["events"] = _events(scenario, found)
    return reply


class _Refusal(Exception):  # noqa: N818 - an answer, not a failure
    def __init__(self, code: str, phase: str) -> None:
        self.code, self.phase = code, phase
        super().__init__(f"{code} ({phase})")


def _request_id(message: Any) -> tuple[str, dict[str, Any] | None]:
    if not isinstance(message, dict) or not isinstance(message.get("id"), str):
        rid = message.get("id") if isinstance(message, dict) else None
        said = rid if isinstance(rid, str) else ""
        return said, {"id": said, "unsupported": "a request is an object with a string id"}
    return message["id"], None


def _error(rid: str, code: str, phase: str) -> dict[str, Any]:
    return {"id": rid, "error": {"code": code, "phase": phase}}


def _want(message: Mapping[str, Any]) -> set[str]:
    want = message.get("want")
    return set(want) if isinstance(want, list) else {"plan", "reads", "rates", "events"}


def _planned(scenario: Any, resume_from: object, world_size: object) -> Any:
    """The plan the request asks for: ``scenario``'s own, or the re-run from the checkpoint
    its plan writes at ``resume_from`` (on ``world_size`` ranks)."""
    from .errors import DurationsError
    from .fit import ResumeMode
    from .planner import plan

    if resume_from is None:
        result = _plan(scenario.config, scenario.calls)
        _raise_first_error(result, "plan")
        _place(scenario, result, "plan")
        return result
    fresh = _plan(attrs.evolve(scenario.config, resume=ResumeMode.CONTINUE), scenario.calls)
    _raise_first_error(fresh, "plan")
    _place(scenario, fresh, "plan")
    try:
        step = _step_of(fresh, str(resume_from))
        checkpoint = fresh.checkpoint_at(step)
        calls = scenario.calls
        if world_size is not None:
            ranks = _whole(world_size, "world_size")
            calls = tuple(_on_ranks(call, ranks) for call in calls)
        result = plan(scenario.config, calls, checkpoint)
    except (DurationsError, ValueError) as error:
        raise _Refusal(type(error).__name__, "resume") from None
    _raise_first_error(result, "resume")
    _place(scenario, result, "resume")
    return result


def _taken_up(scenario: Any, given: object) -> Any:
    """The plan of ``scenario`` from the ``given`` checkpoint (docs/checkpoint-format.md),
    under the scenario's ``[resume]`` mode; one that does not read is a refusal in phase
    ``resume``, as is an error diagnostic of the plan."""
    from .checkpoint import Checkpoint
    from .errors import CheckpointFormatError

    # The script first, as a resume from a time: its refusal is phase plan.
    fresh = _plan(scenario.config, scenario.calls)
    _raise_first_error(fresh, "plan")
    _place(scenario, fresh, "plan")
    try:
        checkpoint = Checkpoint.from_dict(given)
    except CheckpointFormatError:
        raise _Refusal("CheckpointFormatError", "resume") from None
    result = _plan(scenario.config, scenario.calls, checkpoint)
    _raise_first_error(result, "resume")
    _place(scenario, result, "resume")
    return result


def _plan(config: Any, calls: Any, checkpoint: Any = None) -> Any:
    """``plan(config, calls, checkpoint)``; a script the planner refuses whole (two calls of
    one identity, rule 8) is a refusal ``FitCallError`` in phase ``plan``."""
    from .errors import FitCallError
    from .planner import plan

    try:
        return plan(config, calls, checkpoint)
    except FitCallError:
        raise _Refusal("FitCallError", "plan") from None


def _place(scenario: Any, result: Any, phase: str) -> None:
    """Place the scenario's schedule and events on ``result``: a :class:`ScheduleError` is a
    refusal in ``phase``, whatever the request wants."""
    from .errors import ScheduleError

    try:
        if scenario.schedule is not None:
            scenario.schedule.resolve(result, on_extend=scenario.on_extend)
        for interval in scenario.events.values():
            interval.resolve(result)
    except ScheduleError:
        raise _Refusal("ScheduleError", phase) from None


def _step_of(fresh: Any, text: str) -> int:
    """The step of ``fresh`` a resume time names: ``Nba`` is after N steps, other units are
    found on the run clock (as ``durations plan --resume-from``)."""
    from .errors import FitCallError
    from .time import Time
    from .units import Unit

    when = Time.parse(text)
    step = int(when.value) if when.unit is Unit.BA else fresh.resolve(when)
    if step is None or step > fresh.total_steps:
        raise FitCallError(f"{text}: the plan ends after {fresh.total_steps} steps")
    return int(step)


def _on_ranks(call: Any, ranks: int) -> Any:
    from .errors import GeometryError

    if call.loader.sharding is None:
        raise GeometryError("world_size", f"loader {call.loader.name!r} has no per-device geometry")
    return attrs.evolve(call, loader=call.loader.with_world_size(ranks))


def _raise_first_error(result: Any, phase: str) -> None:
    from .diagnostics import Severity

    for diagnostic in result.diagnostics:
        if diagnostic.severity is Severity.ERROR:
            raise _Refusal(diagnostic.code, phase)


def _exact(value: int | Fraction) -> str:
    return str(Fraction(value))


def _progress_json(progress: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for field in ("epoch", "batch", "sample", "token", "batch_in_epoch", "sample_in_epoch",
                  "token_in_epoch"):  # fmt: skip
        value = getattr(progress, field)
        found[field] = {"min": "0", "max": None} if value is None else _exact(value)
    return found


def _range_json(found: Any) -> dict[str, str] | None:
    if found is None:
        return None
    return {"epoch": _exact(found.epoch), "start": _exact(found.start), "stop": _exact(found.stop)}


def _plan_json(result: Any) -> dict[str, Any]:
    return {
        "total_steps": _exact(result.total_steps),
        "stop": _progress_json(result.stop),
        "segments": [
            {
                "name": s.name,
                "action": s.action.value,
                "loader": s.loader.name,
                "steps": _exact(s.steps),
                "start_step": _exact(s.start_step),
                "target": str(s.target),
                "abandoned": _range_json(s.abandoned),
                "replayed": _range_json(s.replayed),
                "skipped": _range_json(s.skipped),
                "stop_at_runtime": s.stop_at_runtime,
                "sources": [
                    {"name": r.name, "start": _exact(r.start), "stop": _exact(r.stop)}
                    for r in s.sources
                ],
            }
            for s in result.segments
        ],
        "diagnostics": sorted({d.code for d in result.diagnostics}),
    }


def _reads(result: Any, steps: int | None = None) -> list[dict[str, str]]:
    """How many times each sample is read in the plan's first ``steps`` steps (default: all),
    as maximal runs of equal count > 0, by loader (and source) then start.

    A step reads positions of its epoch's order (an evened epoch's positions past the data's
    end read its start again); a mixture's step reads each source's positions as its cursors
    advance (rule 20).
    """
    from .sharding import sample_at

    pieces: dict[tuple[str, str], list[tuple[int, int]]] = {}
    left = result.total_steps if steps is None else steps
    for segment in result.segments:
        if left <= 0:
            break
        loader = segment.loader
        name = str(loader.name)
        if loader.mixture is not None:
            taken = min(left, segment.steps)
            for source, span in _mixture_reads(result, segment, taken):
                pieces.setdefault((name, source), []).extend(span)
            left -= taken
            continue
        for read in segment.reads():
            if left <= 0:
                break
            left -= 1
            start, stop = read.start, read.stop
            samples = loader.samples
            into = pieces.setdefault((name, ""), [])
            position = start
            while position < stop:
                if samples is None or position < samples:
                    end = stop if samples is None else min(stop, samples)
                    into.append((position, end))
                    position = end
                else:
                    place = sample_at(position, samples)
                    length = min(stop - position, samples - place)
                    into.append((place, place + length))
                    position += length
    return _runs(pieces)


def _mixture_reads(
    result: Any, segment: Any, steps: int
) -> Iterable[tuple[str, list[tuple[int, int]]]]:
    """What the first ``steps`` steps of a mixture call read of each source: its cursor's
    reads, read ``t`` being position ``t mod samples``."""
    from . import _mixing

    loader = segment.loader
    start = dict(segment.cursors)
    stop_at = segment.start.advance(loader, steps)
    cursors = _mixing.advance(loader, dict(segment.cursors), segment.start, stop_at)[0]
    for source in loader.mixture.sources:
        first, last = start.get(source.name, 0), cursors.get(source.name, 0)
        spans = []
        read = first
        while read < last:
            place = read % source.samples
            length = min(last - read, source.samples - place)
            spans.append((place, place + length))
            read += length
        yield source.name, spans


def _runs(pieces: Mapping[tuple[str, str], list[tuple[int, int]]]) -> list[dict[str, str]]:
    """Spans read, as maximal runs of equal count > 0 (a sweep over their ends)."""
    found = []
    for (loader, source), spans in sorted(pieces.items()):
        events: dict[int, int] = {}
        for start, stop in spans:
            if start < stop:
                events[start] = events.get(start, 0) + 1
                events[stop] = events.get(stop, 0) - 1
        count = 0
        runs: list[list[int]] = []
        places = sorted(events)
        for here, there in itertools.pairwise(places):
            count += events[here]
            if count <= 0:
                continue
            if runs and runs[-1][1] == here and runs[-1][2] == count:
                runs[-1][1] = there
            else:
                runs.append([here, there, count])
        for start, stop, times in runs:
            item = {"loader": loader}
            if source:
                item["source"] = source
            item.update(start=str(start), stop=str(stop), times=str(times))
            found.append(item)
    return found


def _factor_json(value: Fraction | float) -> Any:
    if isinstance(value, Fraction):
        return _exact(value)
    return {"float": repr(float(value))}


def _rates(scenario: Any, result: Any) -> list[Any]:
    """The learning-rate factor at every lifetime step ``k`` of the plan, from its start to its
    stop, both included (``ResolvedSchedule.factor(k)``: the factor of the step from ``k`` to
    ``k + 1``; the last one is held after the end)."""
    curve = scenario.schedule.resolve(result, on_extend=scenario.on_extend)
    steps = range(result.start.batch, result.stop.batch + 1)
    return [_factor_json(curve.factor(k)) for k in steps]


def _events(scenario: Any, result: Any) -> dict[str, list[str]]:
    """The lifetime steps at which each event interval is due on the plan (``Events.steps``:
    from the script's first call, the steps a re-run's checkpoint already trained included)."""
    return {
        name: [str(step) for step in interval.resolve(result).steps()]
        for name, interval in scenario.events.items()
    }


# -- the trainer profiles as adapters ----------------------------------------------------------


def answer_as(trainer: str, message: Any) -> dict[str, Any]:
    """A trainer profile's response to one request (``--trainer NAME``): the ``total_steps``
    and ``reads`` of its emulation (:mod:`durations.compare`), a resume being a crash after
    that step and the same script run again as the trainer resumes it; the re-run's steps and
    reads. A trainer that raises refuses, in phase ``plan`` (the first run) or ``resume`` (the
    re-run), its exception's class the code. A given ``checkpoint`` is unsupported: a profile
    resumes only the run it crashed itself."""
    rid, refusal = _request_id(message)
    if refusal is not None:
        return refusal
    if message.get("checkpoint") is not None:
        return {
            "id": rid,
            "unsupported": "a given checkpoint: the profiles resume only the run they crash",
        }
    from .compare import compare, datasets
    from .errors import DurationsError
    from .scenario import Scenario
    from .trainers import Unsupported

    try:
        scenario = Scenario.from_toml(str(message.get("scenario")), source="<vector>")
    except DurationsError as error:
        return _error(rid, type(error).__name__, "parse")
    resume_from, world = message.get("resume_from"), message.get("world_size")
    crash = None
    if resume_from is not None:
        from .planner import plan

        fresh = plan(scenario.config, scenario.calls)
        try:
            crash = _step_of(fresh, str(resume_from))
        except DurationsError as error:
            return _error(rid, type(error).__name__, "resume")
        if crash >= fresh.total_steps:
            return {"id": rid, "unsupported": "the profiles crash a run inside it, not at its end"}
        crash = crash or None
    try:
        comparison = compare(
            scenario,
            crash_at=crash,
            world_size=None if world is None or crash is None else _whole(world, "world_size"),
            trainers=[trainer],
        )
        data = datasets(scenario)
    except (Unsupported, DurationsError) as why:
        return {"id": rid, "unsupported": str(why)}
    outcome = comparison.trainers[0]
    if not outcome.supported:
        return {"id": rid, "unsupported": str(outcome.reason)}
    first = len(outcome.outcomes)
    if crash is not None:
        first = next((i + 1 for i, o in enumerate(outcome.outcomes) if o.crashed), first)
    for index, call in enumerate(outcome.outcomes):
        if call.error is not None:
            return _error(rid, call.error.type, "plan" if index < first else "resume")
    batches = [batch for o in outcome.outcomes for batch in o.batches]
    if crash is not None:
        batches = batches[sum(o.steps for o in outcome.outcomes[:first]) :]
    offsets = sorted((dataset.offset, name) for name, dataset in data.items())
    pieces: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for batch in batches:
        for start, stop in _id_runs(batch):
            for offset, name in reversed(offsets):
                if start >= offset:
                    pieces.setdefault((name, ""), []).append((start - offset, stop - offset))
                    break
    reply: dict[str, Any] = {"id": rid}
    want = _want(message)
    if "plan" in want:
        reply["plan"] = {"total_steps": _exact(len(batches))}
    if "reads" in want:
        reply["reads"] = _runs(pieces)
    return reply


def _id_runs(ids: Sequence[int]) -> Iterable[tuple[int, int]]:
    """A step's sample ids as runs ``[start, stop)`` of consecutive ids."""
    from .trainers._outcome import Runs

    if isinstance(ids, Runs):
        yield from ((run.start, run.stop) for run in ids.ranges if run)
        return
    if isinstance(ids, range) and ids.step == 1:
        if ids:
            yield (ids.start, ids.stop)
        return
    for sample in ids:
        yield (sample, sample + 1)


# -- the trainer table --------------------------------------------------------------------------

#: How a result is shown in the table of docs/conformance.md.
_MARKS = {
    Status.PASS: "pass",
    Status.FAIL: "**fail**",
    Status.ERROR: "**error**",
    Status.UNSUPPORTED: "—",
    Status.TIMEOUT: "timeout",
}


def trainer_table(vectors: Sequence[Vector], trainers: Sequence[str]) -> str:
    """The Markdown table of docs/conformance.md: each vector that at least one trainer profile
    answers (on ``total_steps`` and ``reads``, a refusal, or a property), and what each gives:
    ``pass``, **fail**, **error** (it refuses where the plan answers, or the reverse), ``—``
    (the profile cannot say: a stream, a mixture, several processes, a unit the trainer lacks);
    for a vector of ``trainers.json``, the result against the trainer's own recorded outcome
    in brackets. A last line counts the vectors no profile answers."""
    header = ["vector", *trainers]
    rows = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    silent = 0
    for vector in vectors:
        cells = [f"`{vector.id}`"]
        said = False
        for name in trainers:
            ask = functools.partial(answer_as, name)
            result = evaluate(vector, ask, fields=TRAINER_FIELDS)
            said = said or result.status is not Status.UNSUPPORTED
            cell = _MARKS[result.status]
            if any(entry.trainer == name for entry in vector.trainers):
                own = evaluate(vector.as_trainer(name), ask, fields=TRAINER_FIELDS)
                cell += f" (recorded: {_MARKS[own.status]})"
            cells.append(cell)
        if said:
            rows.append("| " + " | ".join(cells) + " |")
        else:
            silent += 1
    rows.append("")
    rows.append(f"{silent} more vectors are answered by no profile (— in every column).")
    return "\n".join(rows) + "\n"
