"""The conformance vectors (``vectors/``): their definitions, and the tool that writes them.

``python -m tests.vectors --write`` computes every vector's expectations with the planner and
writes ``vectors/<feature>.json`` and the manifest's hashes; ``--check`` writes nothing and
lists the files that are stale (exit 1), as the suite's self-check does
(``tests/test_vectors.py``). The format is docs/conformance.md's (``durations-conformance/1``).

A vector is defined here by its input (a scenario's TOML, ``resume_from``, ``world_size``,
``checkpoint``) and
the fields it checks, each with the rules of docs/semantics.md it exercises; the values come
from the planner, exactly as the reference adapter answers them:

- without ``resume_from``: ``plan(config, calls)`` of the scenario;
- with ``resume_from`` (``"13ba"``: after 13 steps; another unit: where the plan reaches that
  time), the scenario planned from scratch under ``continue`` writes its checkpoint there, and
  the scenario is planned again from it, under its ``[resume]`` mode and data policy, every
  data-parallel loader read on ``world_size`` ranks when given (``durations plan
  --resume-from T --world-size N``);
- with ``checkpoint`` (a checkpoint as docs/checkpoint-format.md writes it, e.g. a foreign
  trainer's counters without a ledger), the scenario is planned from it, under its
  ``[resume]`` mode (``durations plan --resume-from FILE``); one that does not read is
  ``CheckpointFormatError``, and an error of that plan is in phase ``resume``;
- ``reads``: how many times each sample (a place of the loader's epoch order; a padded
  position past the data reads place ``q - samples``) is read, over the plan's steps, as
  maximal runs of equal count, by loader then start; a mixture's are its sources' (read ``t``
  of a source is place ``t mod samples`` of its pass), with ``source`` naming it;
- ``rates``: the schedule's factor at every lifetime step from the plan's start to its end,
  both included (the factor at step k is the step from k to k + 1's: rule S1);
- ``events``: every interval's steps, by the scenario's ``[events.NAME]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs

from durations import Checkpoint, DurationsError, Time, plan
from durations.compare import compare, datasets
from durations.errors import CheckpointFormatError, FitCallError, ScheduleError
from durations.fit import ResumeMode
from durations.plans import Plan, SampleRange, Segment
from durations.scenario import Scenario, ScenarioError
from durations.sharding import sample_at
from durations.units import Unit

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "vectors"
SCHEMA = SUITE / "schema"
PROTOCOL = "durations-conformance/1"
VERSION = "1.0.0"

FEATURES = {
    "core": "targets, anchoring, epochs of several loaders, dur, the run clock, tokens, errors",
    "resume": "checkpoints taken up: continue, extend, weights, data policies, elastic batches",
    "sharding": "data-parallel loaders: evening over ranks, resumes on another world size",
    "schedules": "learning-rate schedules placed on the plan, their factors step by step",
    "intervals": "event intervals (Every, At, AtCallEnds) placed on the plan",
    "mixtures": "one stream of several sources, each with its cursor",
    "properties": "relations over every crash step: resume invariance, idempotent re-runs",
    "trainers": "where the emulated trainers differ from the plan, with each one's outcome",
}

#: The fields of a plan's stop a vector checks unless it says otherwise.
STOP = ("epoch", "batch", "sample", "batch_in_epoch", "sample_in_epoch")
#: The fields of each segment a vector checks unless it says otherwise.
SEGMENT = ("name", "action", "steps", "start_step")


@dataclass(frozen=True)
class Vector:
    """One vector's definition: its input and the fields it checks, each with its rules."""

    id: str
    description: str
    scenario: str
    expect: Mapping[str, Sequence[str]]
    resume_from: str | None = None
    world_size: int | None = None
    segment: Sequence[str] = SEGMENT
    stop: Sequence[str] = STOP
    supersedes: Sequence[str] = ()
    #: A checkpoint as docs/checkpoint-format.md writes it, taken up by the scenario's plan.
    checkpoint: Mapping[str, Any] | None = None

    @property
    def rules(self) -> list[str]:
        return sorted({r for rules in self.expect.values() for r in rules}, key=rule_key)


@dataclass(frozen=True)
class Property:
    """A property vector: ``kind`` over ``crash_steps`` of a scenario, or of generated ones."""

    id: str
    description: str
    kind: str
    rules: Sequence[str]
    scenario: str
    crash_steps: str | Sequence[str] = "all"
    generator: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class TrainerVector:
    """A vector where trainers differ: the plan's expectations and each trainer's outcome."""

    id: str
    description: str
    scenario: str
    expect: Mapping[str, Sequence[str]]
    resume_from: str | None = None
    world_size: int | None = None
    #: trainer -> the recording of this same script (``file#key``), when one was made.
    evidence: Mapping[str, str] = field(default_factory=dict)


def rule_key(rule: str) -> tuple[int, int, str]:
    """Rules in the order of docs/semantics.md: 1-20, then S1, S2, ... (S4a after S4)."""
    if rule.startswith("S"):
        digits = "".join(c for c in rule[1:] if c.isdigit())
        return (1, int(digits), rule)
    return (0, int(rule), rule)


# -- exact numbers ---------------------------------------------------------------------------


def exact(value: int | Fraction | float) -> Any:
    """An exact number as the protocol writes it: ``"23"``, ``"7/3"``; a float factor as
    ``{"float": repr}``."""
    if isinstance(value, bool):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float):
        return {"float": repr(value)}
    return str(Fraction(value))


def _range(r: SampleRange | None) -> dict[str, str] | None:
    if r is None:
        return None
    return {"epoch": exact(r.epoch), "start": exact(r.start), "stop": exact(r.stop)}


# -- computing a vector's values -------------------------------------------------------------


class RefusedError(Exception):
    """What the reference implementation answers as an error: its code and phase."""

    def __init__(self, code: str, phase: str) -> None:
        super().__init__(f"{phase}: {code}")
        self.code = code
        self.phase = phase


@dataclass
class Outcome:
    scenario: Scenario
    plan: Plan
    crash_step: int | None


def _error_code(p: Plan) -> str | None:
    return next((d.code for d in p.diagnostics if d.severity.value == "error"), None)


def crash_step(fresh: Plan, when: str) -> int:
    """The step ``resume_from`` names in ``fresh``: ``Nba`` is after N steps, another unit where
    the plan reaches it."""
    time = Time.parse(when)
    step = int(time.value) if time.unit is Unit.BA else fresh.resolve(time)
    if step is None or not 0 <= step <= fresh.total_steps:
        raise ValueError(f"resume_from {when}: the plan ends after {fresh.total_steps} steps")
    return step


def on_world_size(scenario: Scenario, world_size: int | None) -> tuple[Any, ...]:
    calls = scenario.calls
    if world_size is None:
        return calls
    return tuple(attrs.evolve(c, loader=c.loader.with_world_size(world_size)) for c in calls)


def run(
    text: str,
    resume_from: str | None,
    world_size: int | None,
    checkpoint: Mapping[str, Any] | None = None,
) -> Outcome:
    """The plan a vector's input asks for; :class:`RefusedError` for an error, with its phase."""
    try:
        scenario = Scenario.from_toml(text)
    except ScenarioError:
        raise RefusedError("ScenarioError", "parse") from None
    try:
        # Two calls of one identity (rule 8): the planner refuses the script as a whole.
        script = plan(scenario.config, scenario.calls)
    except FitCallError:
        raise RefusedError("FitCallError", "plan") from None
    if checkpoint is not None:
        # The script first, as with resume_from: its own refusal is phase plan.
        code = _error_code(script)
        if code is not None:
            raise RefusedError(code, "plan")
        _place(scenario, script, "plan")
        try:
            given = Checkpoint.from_dict(checkpoint)
        except CheckpointFormatError:
            raise RefusedError("CheckpointFormatError", "resume") from None
        result = plan(scenario.config, scenario.calls, given)
        code = _error_code(result)
        if code is not None:
            raise RefusedError(code, "resume")
        _place(scenario, result, "resume")
        return Outcome(scenario, result, None)
    if resume_from is None:
        result = plan(scenario.config, scenario.calls)
        code = _error_code(result)
        if code is not None:
            raise RefusedError(code, "plan")
        _place(scenario, result, "plan")
        return Outcome(scenario, result, None)
    fresh = plan(attrs.evolve(scenario.config, resume=ResumeMode.CONTINUE), scenario.calls)
    code = _error_code(fresh)
    if code is not None:
        raise RefusedError(code, "plan")
    _place(scenario, fresh, "plan")
    step = crash_step(fresh, resume_from)
    result = plan(scenario.config, on_world_size(scenario, world_size), fresh.checkpoint_at(step))
    code = _error_code(result)
    if code is not None:
        raise RefusedError(code, "resume")
    _place(scenario, result, "resume")
    return Outcome(scenario, result, step)


def _place(scenario: Scenario, result: Plan, phase: str) -> None:
    try:
        if scenario.schedule is not None:
            scenario.schedule.resolve(result, on_extend=scenario.on_extend)
        for interval in scenario.events.values():
            interval.resolve(result)
    except ScheduleError:
        raise RefusedError("ScheduleError", phase) from None


def runs(counts: Mapping[tuple[Any, ...], int]) -> list[tuple[tuple[Any, ...], int, int, int]]:
    """Counts of (key..., place) as maximal runs ``(key, start, stop, times)`` of equal count."""
    found: list[tuple[tuple[Any, ...], int, int, int]] = []
    for *key, place in sorted(counts):
        times = counts[(*key, place)]
        if times == 0:
            continue
        if found and found[-1][0] == tuple(key) and found[-1][2] == place and found[-1][3] == times:
            found[-1] = (found[-1][0], found[-1][1], place + 1, times)
        else:
            found.append((tuple(key), place, place + 1, times))
    return found


def plan_reads(segments: Iterable[Segment], steps: int | None = None) -> Counter[tuple[Any, ...]]:
    """How many times each (loader, [source,] place) the plan's first ``steps`` steps read."""
    counts: Counter[tuple[Any, ...]] = Counter()
    left = steps
    for segment in segments:
        name = segment.loader.name or ""
        if segment.loader.mixture is not None:
            if left is not None:
                raise ValueError("a mixture's reads are counted over whole calls")
            for source in segment.sources:
                for t in range(source.start, source.stop):
                    counts[(name, source.name, t % source.samples)] += 1
            continue
        samples = segment.loader.samples
        for read in segment.reads():
            if left is not None:
                if left == 0:
                    return counts
                left -= 1
            for q in range(read.start, read.stop):
                place = sample_at(q, samples) if samples is not None and q >= samples else q
                counts[(name, place)] += 1
    return counts


def reads_json(counts: Mapping[tuple[Any, ...], int]) -> list[dict[str, str]]:
    found = []
    for key, start, stop, times in runs(counts):
        item = {"loader": key[0]}
        if len(key) == 2:
            item["source"] = key[1]
        item.update(start=exact(start), stop=exact(stop), times=exact(times))
        found.append(item)
    return found


def segment_json(s: Segment, keys: Sequence[str]) -> dict[str, Any]:
    every: dict[str, Any] = {
        "name": s.name,
        "action": s.action.value,
        "loader": s.loader.name,
        "steps": exact(s.steps),
        "start_step": exact(s.start_step),
        "target": str(s.target),
        "abandoned": _range(s.abandoned),
        "replayed": _range(s.replayed),
        "skipped": _range(s.skipped),
        "stop_at_runtime": s.stop_at_runtime,
        "sources": [
            {"name": r.name, "start": exact(r.start), "stop": exact(r.stop)} for r in s.sources
        ],
    }
    return {key: every[key] for key in keys}


def values(
    outcome: Outcome, fields: Iterable[str], *, segment: Sequence[str], stop: Sequence[str]
) -> dict[str, Any]:
    """The values of ``fields`` of a planned vector, as the protocol writes them."""
    p = outcome.plan
    found: dict[str, Any] = {}
    for name in fields:
        if name == "total_steps":
            found[name] = exact(p.total_steps)
        elif name == "stop":
            found[name] = {key: exact(getattr(p.stop, key)) for key in stop}
        elif name == "segments":
            found[name] = [segment_json(s, segment) for s in p.segments]
        elif name == "diagnostics":
            found[name] = sorted({d.code for d in p.diagnostics})
        elif name == "reads":
            found[name] = reads_json(plan_reads(p.segments))
        elif name == "rates":
            schedule = outcome.scenario.schedule
            assert schedule is not None, "a rates vector needs a [schedule]"
            curve = schedule.resolve(p, on_extend=outcome.scenario.on_extend)
            found[name] = [exact(curve.factor(k)) for k in range(p.start.batch, p.stop.batch + 1)]
        elif name == "events":
            found[name] = {
                event: [exact(k) for k in interval.resolve(p).steps()]
                for event, interval in outcome.scenario.events.items()
            }
        else:
            raise ValueError(f"unknown field {name!r}")
    return found


# -- a vector file ---------------------------------------------------------------------------


def scenario_data(text: str) -> Any:
    """The TOML as tomllib reads it, as JSON (integers stay integers: the input's own data)."""
    return tomllib.loads(text)


def features_of(
    feature: str,
    text: str,
    resume_from: str | None,
    world_size: int | None,
    checkpoint: Mapping[str, Any] | None = None,
) -> list[str]:
    data = scenario_data(text)
    loaders = data.get("loaders", {})
    found = [feature]
    extra = {
        "resume": resume_from is not None or checkpoint is not None,
        "sharding": world_size is not None or any("world_size" in t for t in loaders.values()),
        "schedules": "schedule" in data,
        "intervals": "events" in data,
        "mixtures": any("sources" in t for t in loaders.values()),
    }
    found.extend(name for name, present in extra.items() if present and name != feature)
    return found


def _input(
    text: str,
    resume_from: str | None,
    world_size: int | None,
    checkpoint: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    given = {
        "scenario": text,
        "scenario_data": scenario_data(text),
        "resume_from": resume_from,
        "world_size": world_size,
    }
    if checkpoint is not None:  # optional: absent is none
        given["checkpoint"] = dict(checkpoint)
    return given


def vector_json(feature: str, v: Vector) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": v.id,
        "description": v.description,
        "features": features_of(feature, v.scenario, v.resume_from, v.world_size, v.checkpoint),
        "rules": v.rules,
        "input": _input(v.scenario, v.resume_from, v.world_size, v.checkpoint),
    }
    if v.supersedes:
        item["supersedes"] = list(v.supersedes)
    try:
        item["expect"] = expectations(
            v.scenario,
            v.resume_from,
            v.world_size,
            v.expect,
            v.segment,
            v.stop,
            checkpoint=v.checkpoint,
        )
    except (ValueError, DurationsError) as error:
        raise ValueError(f"{v.id}: {error}") from error
    return item


def expectations(
    text: str,
    resume_from: str | None,
    world_size: int | None,
    expect: Mapping[str, Sequence[str]],
    segment: Sequence[str] = SEGMENT,
    stop: Sequence[str] = STOP,
    *,
    checkpoint: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    try:
        outcome = run(text, resume_from, world_size, checkpoint)
    except RefusedError as refused:
        if "error" not in expect:
            raise ValueError(f"refused ({refused}) where values are expected") from None
        return {
            "error": {"code": refused.code, "phase": refused.phase, "rules": list(expect["error"])}
        }
    if "error" in expect:
        raise ValueError("planned where an error is expected")
    found = values(outcome, expect, segment=segment, stop=stop)
    return {name: {"value": found[name], "rules": list(expect[name])} for name in expect}


def property_json(p: Property) -> dict[str, Any]:
    over: dict[str, Any] = {
        "crash_steps": p.crash_steps if p.crash_steps == "all" else list(p.crash_steps)
    }
    return {
        "id": p.id,
        "description": p.description,
        "features": features_of("properties", p.scenario, None, None),
        "rules": list(p.rules),
        "input": _input(p.scenario, None, None),
        "property": {"kind": p.kind, "over": over, "generator": p.generator},
    }


def trainer_outcomes(t: TrainerVector, rules: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Each trainer profile's outcome of ``t``: its steps, what it reads, its error."""
    scenario = Scenario.from_toml(t.scenario)
    fresh = plan(attrs.evolve(scenario.config, resume=ResumeMode.CONTINUE), scenario.calls)
    crash = None if t.resume_from is None else crash_step(fresh, t.resume_from)
    comparison = compare(scenario, crash_at=crash, world_size=t.world_size)
    data = datasets(scenario)
    found = []
    for outcome in comparison.trainers:
        item: dict[str, Any] = {
            "trainer": outcome.trainer,
            "version": outcome.version,
            "provenance": "measured" if outcome.trainer in t.evidence else "derived",
            "evidence": t.evidence.get(outcome.trainer),
        }
        if not outcome.supported:
            item["expect"] = {"unsupported": outcome.reason}
            found.append(item)
            continue
        # With a crash, what the re-run trains: every step after the kill's first ``crash``.
        batches = [batch for call in outcome.outcomes for batch in call.batches][crash or 0 :]
        counts: Counter[tuple[Any, ...]] = Counter()
        for batch in batches:
            for sample in batch:
                name = next(n for n, d in data.items() if d.offset <= sample < d.offset + d.samples)
                counts[(name, sample - data[name].offset)] += 1
        expect: dict[str, Any] = {
            "total_steps": {"value": exact(len(batches)), "rules": list(rules["total_steps"])},
            "reads": {"value": reads_json(counts), "rules": list(rules["reads"])},
        }
        crashed = next((i for i, o in enumerate(outcome.outcomes) if o.crashed), None)
        for index, call in enumerate(outcome.outcomes):
            if call.error is not None:
                phase = "resume" if crashed is not None and index > crashed else "plan"
                expect["error"] = {"code": call.error.type, "phase": phase, "rules": []}
                break
        item["expect"] = expect
        found.append(item)
    return found


def trainer_json(t: TrainerVector) -> dict[str, Any]:
    return {
        "id": t.id,
        "description": t.description,
        "features": features_of("trainers", t.scenario, t.resume_from, t.world_size),
        "rules": sorted({r for rules in t.expect.values() for r in rules}, key=rule_key),
        "input": _input(t.scenario, t.resume_from, t.world_size),
        "expect": expectations(t.scenario, t.resume_from, t.world_size, t.expect),
        "trainers": trainer_outcomes(t, t.expect),
    }


def build() -> dict[str, bytes]:
    """Every file of the suite, by its path under ``vectors/``, as it should be."""
    files: dict[str, dict[str, Any]] = {}
    for feature, defs in VECTORS.items():
        files[f"{feature}.json"] = {
            "feature": feature,
            "description": FEATURES[feature],
            "vectors": [vector_json(feature, v) for v in defs],
        }
    files["properties.json"] = {
        "feature": "properties",
        "description": FEATURES["properties"],
        "vectors": [property_json(p) for p in PROPERTIES],
    }
    files["trainers.json"] = {
        "feature": "trainers",
        "description": FEATURES["trainers"],
        "vectors": [trainer_json(t) for t in TRAINERS],
    }
    out = {path: dumps(data) for path, data in files.items()}
    manifest = {
        "suite": "durations-conformance",
        "protocol": PROTOCOL,
        "version": VERSION,
        "semantics": semantics_version(),
        "features": FEATURES,
        "files": [
            {
                "path": path,
                "sha256": hashlib.sha256(out[path]).hexdigest(),
                "features": [files[path]["feature"]],
                "vectors": len(files[path]["vectors"]),
            }
            for path in out
        ],
    }
    out["manifest.json"] = dumps(manifest)
    return out


def dumps(data: Any) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()


def semantics_version() -> str:
    """The version docs/semantics.md states on its "Semantics version: X" line."""
    for line in (ROOT / "docs" / "semantics.md").read_text().splitlines()[:5]:
        if line.startswith("Semantics version: "):
            return line.removeprefix("Semantics version: ").strip()
    raise ValueError("docs/semantics.md has no 'Semantics version: X' line near its top")


def stale() -> list[str]:
    """The files of ``vectors/`` that differ from what ``--write`` would write."""
    return [
        path
        for path, content in build().items()
        if not (SUITE / path).is_file() or (SUITE / path).read_bytes() != content
    ]


# -- the vectors -----------------------------------------------------------------------------

#: The loaders the scenarios share (docs/semantics.md's examples).
A = "[loaders.a]\nsamples = 100\nbatch_size = 10\n"
B = "[loaders.b]\nsamples = 60\nbatch_size = 10\n"
BIG = "[loaders.big]\nsamples = 10_000\nbatch_size = 32\n"


def toml(
    *parts: str, run: str | None = None, resume: str | None = None, fits: Sequence[str] = ()
) -> str:
    """A scenario's TOML: ``[run] max_duration``, loaders, ``[[fit]]`` tables (each
    ``key = value`` lines joined by ``;``), then any further tables, then ``[resume]``."""
    text = "" if run is None else f'[run]\nmax_duration = "{run}"\n'
    text += "".join(p for p in parts if p.startswith("[loaders"))
    for f in fits:
        text += "[[fit]]\n" + "".join(line.strip() + "\n" for line in f.split(";"))
    text += "".join(p for p in parts if not p.startswith("[loaders"))
    if resume is not None:
        text += "[resume]\n" + "".join(line.strip() + "\n" for line in resume.split(";"))
    return text


TWO = toml(
    A,
    "[loaders.b]\nsamples = 60\nbatch_size = 10\n",
    fits=[
        'loader = "a"; until = "2ep"; name = "pretrain"',
        'loader = "b"; duration = "1ep"; name = "anneal"',
    ],
)
TWO_PHASE = toml(
    A,
    "[loaders.b]\nsamples = 300\nbatch_size = 10\n",
    run="2ep",
    fits=['loader = "a"', 'loader = "b"; duration = "0.1ep"'],
)
JOB = "[loaders.a]\nsamples = 101\nworld_size = 2\ndevice_batch_size = 10\n"
WEB_CODE = (
    '[loaders.pretrain]\nbatch_size = 100\nstop = "never"\n'
    "[loaders.pretrain.sources.web]\nsamples = 1000\nweight = 3\n"
    "[loaders.pretrain.sources.code]\nsamples = 500\nweight = 1\n"
)
ANNEAL = (
    '[loaders.anneal]\nbatch_size = 50\nstop = "never"\n'
    "[loaders.anneal.sources.code]\nsamples = 500\nweight = 1\n"
    "[loaders.anneal.sources.math]\nsamples = 100\nweight = 1\n"
)


def _sched(body: str) -> str:
    return "[schedule]\n" + body


def piece(kind: str, **keys: str) -> str:
    return (
        "[[schedule.pieces]]\n"
        + f'kind = "{kind}"\n'
        + "".join(f"{k} = {v}\n" for k, v in keys.items())
    )


V = Vector
PLAN = {"total_steps": (), "stop": ()}


def ledgerless(
    epoch: int,
    batch: int,
    sample: int,
    batch_in_epoch: int,
    sample_in_epoch: int,
    *,
    loader_state: bool = True,
) -> dict[str, Any]:
    """A checkpoint without a ledger, as docs/checkpoint-format.md writes it (format 4): a
    foreign trainer's counters as durations reads them, tokens unknown."""
    return {
        "format": 4,
        "progress": {
            "epoch": epoch,
            "batch": batch,
            "sample": sample,
            "token": None,
            "batch_in_epoch": batch_in_epoch,
            "sample_in_epoch": sample_in_epoch,
            "token_in_epoch": None,
        },
        "loader_state": loader_state,
        "ledger": None,
        "taken_up": None,
    }


def written(text: str, step: int, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The checkpoint another script writes after ``step`` steps (docs/checkpoint-format.md):
    the scenario ``text`` planned (from ``given`` when there is one), as ``durations plan``
    saves it, its ledger included."""
    scenario = Scenario.from_toml(text)
    taken_up = None if given is None else Checkpoint.from_dict(given)
    result = plan(scenario.config, scenario.calls, taken_up)
    if not result.ok or not 0 <= step <= result.total_steps:
        raise ValueError(f"a checkpoint after {step} steps of a plan of {result.total_steps}")
    return result.checkpoint_at(step).to_dict()


#: A call named pretrain, 15 steps of a; its checkpoint after 5 steps is given to edited scripts.
PRETRAIN = toml(A, fits=['loader = "a"; until = "15ba"; name = "pretrain"'])
#: An extension of 10 steps of a by one epoch of b (6 steps), killed after 2 of them.
EXTENDED = toml(
    A, B, fits=['loader = "b"; duration = "1ep"; name = "more"'], resume='mode = "extend"'
)


def mixing(web_weight: int, web_samples: int) -> str:
    """Call x: 800 samples of a mixture of web and code (docs/semantics.md rule 20's example)."""
    return toml(
        '[loaders.pretrain]\nbatch_size = 100\nstop = "never"\n'
        f"[loaders.pretrain.sources.web]\nsamples = {web_samples}\nweight = {web_weight}\n"
        "[loaders.pretrain.sources.code]\nsamples = 500\nweight = 1\n",
        fits=['loader = "pretrain"; duration = "800sp"; name = "x"'],
    )


VECTORS: dict[str, list[Vector]] = {
    "core": [
        V(
            "core/until-is-absolute",
            "until=5ba, then until=12ba: the second call trains 7 steps",
            toml(A, fits=['loader = "a"; until = "5ba"', 'loader = "a"; until = "12ba"']),
            {"total_steps": ["1"], "segments": ["1"]},
        ),
        V(
            "core/duration-is-relative",
            "until=5ba, then duration=12ba: 12 more, to 17",
            toml(A, fits=['loader = "a"; until = "5ba"', 'loader = "a"; duration = "12ba"']),
            {"total_steps": ["1", "3"], "segments": ["1"]},
        ),
        V(
            "core/max-duration-is-the-default-end",
            "a call with neither stops at max_duration",
            toml(A, run="15ba", fits=['loader = "a"']),
            {"total_steps": ["1"], "stop": ["1"], "reads": ["1"]},
        ),
        V(
            "core/max-duration-is-not-a-cap",
            "max_duration=15ba does not cap until=25ba",
            toml(A, run="15ba", fits=['loader = "a"; until = "25ba"']),
            {"total_steps": ["1"], "diagnostics": ["1"]},
        ),
        V(
            "core/duration-and-until",
            "a call with both duration and until is refused",
            toml(A, fits=['loader = "a"; duration = "5ba"; until = "6ba"']),
            {"error": ["1"]},
        ),
        V(
            "core/no-duration",
            "a call with neither and no max_duration: no-duration",
            toml(A, fits=['loader = "a"']),
            {"error": ["1"]},
        ),
        V(
            "core/sample-target-rounded",
            "until=1000sp at 32 a step stops at 1024 (step 32)",
            toml(BIG, fits=['loader = "big"; until = "1000sp"']),
            {"total_steps": ["2"], "stop": ["2"], "diagnostics": ["2"]},
        ),
        V(
            "core/target-already-reached",
            "until=10ba, then until=8ba: 0 steps and a warning",
            toml(A, fits=['loader = "a"; until = "10ba"', 'loader = "a"; until = "8ba"']),
            {"segments": ["2"], "diagnostics": ["2"]},
        ),
        V(
            "core/fractional-epoch-rounded",
            "0.25ep of 100 samples at 10 a step: 3 steps, 30 samples",
            toml(A, fits=['loader = "a"; until = "0.25ep"']),
            {"total_steps": ["2", "5"], "stop": ["2"], "diagnostics": ["2"]},
        ),
        V(
            "core/relative-samples-anchor",
            "1000sp then 1000sp more at 32 a step end at 2016, as 2000sp",
            toml(
                BIG,
                fits=['loader = "big"; duration = "1000sp"', 'loader = "big"; duration = "1000sp"'],
            ),
            {"total_steps": ["3"], "stop": ["3"]},
        ),
        V(
            "core/relative-across-units",
            "1000sp, then 20ba: 20 steps after the 32nd, 1664 samples",
            toml(
                BIG,
                fits=['loader = "big"; duration = "1000sp"', 'loader = "big"; duration = "20ba"'],
            ),
            {"total_steps": ["3"], "stop": ["3"]},
        ),
        V(
            "core/max-duration-call-anchors",
            "620sp, to max_duration 630sp (0 steps), 100sp more: 730sp",
            toml(
                BIG,
                run="630sp",
                fits=[
                    'loader = "big"; duration = "620sp"',
                    'loader = "big"',
                    'loader = "big"; duration = "100sp"',
                ],
            ),
            {"segments": ["3"], "stop": ["3"]},
            segment=("steps", "target"),
        ),
        V(
            "core/max-duration-call-other-unit",
            "20ba, to 630sp (0 steps), 100sp more: 740sp",
            toml(
                BIG,
                run="630sp",
                fits=[
                    'loader = "big"; duration = "20ba"',
                    'loader = "big"',
                    'loader = "big"; duration = "100sp"',
                ],
            ),
            {"segments": ["3"], "stop": ["3"]},
            segment=("steps", "target"),
        ),
        V(
            "core/stale-until-anchors-nothing",
            "620sp, until=100sp (long passed), 100sp more: 740sp",
            toml(
                BIG,
                fits=[
                    'loader = "big"; duration = "620sp"',
                    'loader = "big"; until = "100sp"',
                    'loader = "big"; duration = "100sp"',
                ],
            ),
            {"segments": ["3", "2"]},
            segment=("steps", "target"),
        ),
        V(
            "core/new-stream-abandons-epoch",
            "13ba of a, then 1ep of b: samples 30-99 abandoned",
            toml(A, B, fits=['loader = "a"; until = "13ba"', 'loader = "b"; duration = "1ep"']),
            {"segments": ["4"], "stop": ["4"], "diagnostics": ["4"], "reads": ["4"]},
            segment=("name", "steps", "abandoned"),
        ),
        V(
            "core/same-stream-goes-on",
            "13ba then 1ep more on the same stream: inside the epoch",
            toml(A, fits=['loader = "a"; until = "13ba"', 'loader = "a"; duration = "1ep"']),
            {"total_steps": ["4", "3"], "stop": ["4"], "reads": ["4"]},
        ),
        V(
            "core/two-phases-2.1ep",
            "2 epochs of a, then 0.1 epoch of b: 23 steps",
            TWO_PHASE,
            {"total_steps": ["4", "5"], "stop": ["5"], "segments": ["4", "5"], "reads": ["4", "5"]},
        ),
        V(
            "core/tenth-epoch-any-batch-size",
            "0.1ep of 300 samples at 7 a step: 30 samples, 5 steps",
            toml(
                "[loaders.b]\nsamples = 300\nbatch_size = 7\n",
                fits=['loader = "b"; until = "0.1ep"'],
            ),
            {"total_steps": ["5", "2"], "stop": ["5"]},
        ),
        V(
            "core/dur-rounds-up",
            "0.3dur of 15ba is 4.5ba, reached at step 5",
            toml(A, run="15ba", fits=['loader = "a"; duration = "0.3dur"']),
            {"total_steps": ["6"]},
        ),
        V(
            "core/dur-each-call-alone",
            "two 0.5dur calls of 15ba are 8ba each: 16",
            toml(
                A,
                run="15ba",
                fits=['loader = "a"; duration = "0.5dur"', 'loader = "a"; duration = "0.5dur"'],
            ),
            {"total_steps": ["6"], "segments": ["6"]},
            segment=("steps", "target"),
        ),
        V(
            "core/dur-in-epochs",
            "0.5dur of 3ep is 1.5ep: 15 steps",
            toml(A, run="3ep", fits=['loader = "a"; until = "0.5dur"']),
            {"total_steps": ["6"]},
        ),
        V(
            "core/dur-without-max-duration",
            "dur with no max_duration: no-duration",
            toml(A, fits=['loader = "a"; duration = "0.5dur"']),
            {"error": ["6"]},
        ),
        V(
            "core/max-duration-in-dur",
            "max_duration cannot itself be in dur",
            toml(A, run="0.5dur", fits=['loader = "a"']),
            {"error": ["6"]},
        ),
        V(
            "core/reset-time",
            "until=10ba, then until=5ba with reset_time on b: 15 lifetime steps",
            toml(
                A,
                B,
                fits=[
                    'loader = "a"; until = "10ba"',
                    'loader = "b"; until = "5ba"; reset_time = true',
                ],
            ),
            {"segments": ["7"], "stop": ["7"], "diagnostics": ["7"]},
        ),
        V(
            "core/reset-time-abandons-epoch",
            "13ba, then reset_time on the same stream: a new epoch",
            toml(
                A,
                fits=[
                    'loader = "a"; until = "13ba"',
                    'loader = "a"; until = "1ep"; reset_time = true',
                ],
            ),
            {"segments": ["7", "4"], "stop": ["7"], "diagnostics": ["7"]},
            segment=("steps", "abandoned"),
        ),
        V(
            "core/tokens-known",
            "until=1000tok at 8 tokens a sample, 10 a step: 13 steps, 1040 tokens",
            toml(
                "[loaders.t]\nsamples = 100\nbatch_size = 10\ntokens_per_sample = 8\n",
                fits=['loader = "t"; until = "1000tok"'],
            ),
            {"total_steps": ["2"], "stop": ["2"]},
            stop=("batch", "sample", "token"),
        ),
        V(
            "core/tokens-stop-at-runtime",
            "until=500tok on samples of unknown length: at most 50 steps",
            toml(A, fits=['loader = "a"; until = "500tok"']),
            {"total_steps": ["13"], "diagnostics": ["13"], "segments": ["13"]},
            segment=("steps", "stop_at_runtime"),
        ),
        V(
            "core/tokens-unknown",
            "a token target after a loader of unknown sample length",
            toml(
                A,
                "[loaders.t]\nsamples = 100\nbatch_size = 10\ntokens_per_sample = 8\n",
                fits=['loader = "a"; duration = "5ba"', 'loader = "t"; until = "1000tok"'],
            ),
            {"error": ["13"]},
        ),
        V(
            "core/stream-epochs-cannot-convert",
            "an epoch target on a stream cannot be placed",
            toml("[loaders.s]\nbatch_size = 4\n", fits=['loader = "s"; duration = "1ep"']),
            # units.md's cannot-convert: an epoch is measured in the loader's samples (rule 5),
            # and a stream has no count of them.
            {"error": ["5"]},
        ),
        V(
            "core/stream-in-batches",
            "a stream read for 5ba",
            toml("[loaders.s]\nbatch_size = 4\n", fits=['loader = "s"; duration = "5ba"']),
            {"total_steps": ["1"], "stop": ["1"]},
            stop=("batch", "sample"),
        ),
        V(
            "core/undefined-loader",
            "a call on an undefined loader is refused",
            toml(A, fits=['loader = "b"; duration = "5ba"']),
            {"error": ["1"]},
        ),
        V(
            "core/repeated-call-name",
            "two calls named warmup: a call's identity is its name, so the script is refused",
            toml(
                A,
                fits=[
                    'loader = "a"; until = "5ba"; name = "warmup"',
                    'loader = "a"; until = "10ba"; name = "warmup"',
                ],
            ),
            {"error": ["8"]},
        ),
    ],
    "resume": [
        V(
            "resume/exact-mid-epoch",
            "3ep of a, crash at step 13 (30 samples in): 17 more steps",
            toml(A, run="3ep", fits=['loader = "a"']),
            {
                "total_steps": ["11", "16"],
                "stop": ["16"],
                "reads": ["11", "16"],
                "diagnostics": ["11"],
            },
            resume_from="13ba",
        ),
        V(
            "resume/replay-epoch",
            "replay_epoch from step 13: 20 steps, samples 0-29 read again",
            toml(A, run="3ep", fits=['loader = "a"'], resume='data = "replay_epoch"'),
            {"total_steps": ["11"], "segments": ["11"], "diagnostics": ["11"], "reads": ["11"]},
            resume_from="13ba",
            segment=("steps", "replayed"),
        ),
        V(
            "resume/next-epoch",
            "next_epoch from step 13: 10 steps, samples 30-99 never read",
            toml(A, run="3ep", fits=['loader = "a"'], resume='data = "next_epoch"'),
            {"total_steps": ["11"], "segments": ["11"], "diagnostics": ["11"], "stop": ["11"]},
            resume_from="13ba",
            segment=("steps", "skipped"),
        ),
        V(
            "resume/epoch-boundary",
            "a crash at an epoch's end: no data policy applies",
            toml(A, run="3ep", fits=['loader = "a"'], resume='data = "replay_epoch"'),
            {"total_steps": ["11", "16"], "diagnostics": ["11"]},
            resume_from="10ba",
        ),
        V(
            "resume/two-phases-crash-13",
            "the two-phase run killed at step 13: 7 + 3 steps more",
            TWO_PHASE,
            {"total_steps": ["16"], "segments": ["8", "16"], "stop": ["16"], "reads": ["16"]},
            resume_from="13ba",
        ),
        V(
            "resume/two-phases-crash-21",
            "killed inside the second phase: the first is skipped",
            TWO_PHASE,
            {"segments": ["8", "9"], "stop": ["16"]},
            resume_from="21ba",
        ),
        V(
            "resume/stored-target",
            "duration=15ba killed at step 5 resumes to 15, not 20",
            toml(A, fits=['loader = "a"; duration = "15ba"']),
            {"total_steps": ["8"], "stop": ["8"]},
            resume_from="5ba",
        ),
        V(
            "resume/reset-time-crash-12",
            "reset_time is not applied again: 3 steps to lifetime 15",
            toml(
                A,
                B,
                fits=[
                    'loader = "a"; until = "10ba"',
                    'loader = "b"; until = "5ba"; reset_time = true',
                ],
            ),
            {"segments": ["7", "8"], "stop": ["7"]},
            resume_from="12ba",
        ),
        V(
            "resume/complete",
            "the plan's own last checkpoint: 0 steps, run-complete",
            TWO_PHASE,
            {"total_steps": ["15"], "diagnostics": ["15"]},
            resume_from="23ba",
        ),
        V(
            "resume/extend-12-more",
            "at 10ba on the way to 12ba, extend by duration=12ba: 12 more, to 22ba",
            toml(A, run="15ba", fits=['loader = "a"; duration = "12ba"'], resume='mode = "extend"'),
            {"stop": ["1", "9"], "total_steps": ["9"]},
            resume_from="10ba",
            stop=("batch",),
        ),
        V(
            "resume/extend-until-12",
            "at 10ba, extend with until=12ba: 2 steps",
            toml(A, run="15ba", fits=['loader = "a"; until = "12ba"'], resume='mode = "extend"'),
            {"stop": ["1", "9"], "total_steps": ["9"]},
            resume_from="10ba",
            stop=("batch",),
        ),
        V(
            "resume/extend-already-reached",
            "at 8ba, extend with until=8ba: 0 steps, a warning",
            toml(A, run="15ba", fits=['loader = "a"; until = "8ba"'], resume='mode = "extend"'),
            {"total_steps": ["2", "9"], "diagnostics": ["2"]},
            resume_from="8ba",
        ),
        V(
            "resume/weights-fresh-clock",
            "weights from step 13: the rest of epoch 1 abandoned, 2ep afresh",
            toml(A, run="2ep", fits=['loader = "a"'], resume='mode = "weights"'),
            {"total_steps": ["9"], "diagnostics": ["9", "4"], "segments": ["9"]},
            resume_from="13ba",
            segment=("steps", "abandoned"),
        ),
        V(
            "resume/elastic-batch-doubled",
            "2ep at batch 10, resumed at step 13 at 20: 4 steps to 200",
            toml(
                "[loaders.a]\nsamples = 100\nworld_size = 1\ndevice_batch_size = 10\n",
                run="2ep",
                fits=['loader = "a"'],
            ),
            {"total_steps": ["12"], "stop": ["12"], "diagnostics": ["12", "18"], "reads": ["12"]},
            resume_from="13ba",
            world_size=2,
        ),
        V(
            "resume/elastic-ba-target",
            "until=20ba resumed at a doubled batch: the count is kept, flagged",
            toml(
                "[loaders.a]\nsamples = 100\nworld_size = 1\ndevice_batch_size = 10\n",
                fits=['loader = "a"; until = "20ba"'],
            ),
            {"total_steps": ["12"], "diagnostics": ["12", "18"]},
            resume_from="13ba",
            world_size=2,
        ),
        V(
            "resume/elastic-drop-last-rest",
            "90 samples in, at a batch of 20 with drop_last: that epoch has ended",
            toml(
                "[loaders.a]\nsamples = 100\nworld_size = 1\n"
                "device_batch_size = 10\ndrop_last = true\n",
                run="2ep",
                fits=['loader = "a"'],
            ),
            {"total_steps": ["12"], "stop": ["12"]},
            resume_from="9ba",
            world_size=2,
        ),
        V(
            "resume/resume-from-epochs",
            "resume_from in epochs: the checkpoint where 1ep is reached",
            TWO_PHASE,
            {"total_steps": ["16"], "stop": ["16"]},
            resume_from="1ep",
        ),
        V(
            "resume/mixture-budget",
            "extend re-reads a source past its max_passes",
            toml(
                '[loaders.m]\nbatch_size = 10\nstop = "never"\n'
                "[loaders.m.sources.web]\nsamples = 100\nweight = 1\nmax_passes = 1\n",
                fits=['loader = "m"; duration = "100sp"'],
                resume='mode = "extend"',
            ),
            {"error": ["20", "9"]},
            resume_from="5ba",
        ),
        V(
            "resume/ledgerless-located",
            "a foreign checkpoint at step 12 (2 steps into b) is located: 4 more steps of b",
            toml(
                A,
                B,
                fits=['loader = "a"; until = "10ba"', 'loader = "b"; duration = "1ep"'],
            ),
            {
                "total_steps": ["10"],
                "segments": ["10", "8"],
                "stop": ["10"],
                "diagnostics": ["10"],
                "reads": ["10"],
            },
            checkpoint=ledgerless(1, 12, 120, 2, 20),
        ),
        V(
            "resume/ledgerless-mislocated",
            "step 8 of 2 ranks (epoch 1) is the start of epoch 2 on 3 ranks: refused",
            toml(
                "[loaders.a]\nsamples = 100\nworld_size = 3\ndevice_batch_size = 10\n",
                run="3ep",
                fits=['loader = "a"'],
            ),
            {"error": ["10"]},
            checkpoint=ledgerless(1, 8, 160, 3, 60, loader_state=False),
        ),
        V(
            "resume/ledgerless-weights",
            "weights from foreign counters 70 samples into epoch 1: the first call's epoch closes",
            toml(
                "[loaders.c]\nsamples = 200\nbatch_size = 10\n",
                run="1ep",
                fits=['loader = "c"'],
                resume='mode = "weights"',
            ),
            {"total_steps": ["9"], "segments": ["9"], "diagnostics": ["9", "10", "4"]},
            checkpoint=ledgerless(1, 17, 170, 7, 70),
            segment=("steps", "abandoned"),
        ),
        V(
            "resume/checkpoint-malformed",
            "a checkpoint whose batch_in_epoch (13) is past its batch (3) does not read",
            toml(A, run="3ep", fits=['loader = "a"']),
            {"error": ["10"]},
            checkpoint=ledgerless(0, 3, 30, 13, 30),
        ),
        V(
            "resume/script-changed",
            "pretrain, started until=15ba and saved at 5ba, now asks until=20ba: it keeps 15ba",
            toml(A, fits=['loader = "a"; until = "20ba"; name = "pretrain"']),
            {"total_steps": ["14", "8"], "stop": ["14", "8"], "diagnostics": ["14"]},
            checkpoint=written(PRETRAIN, 5),
            stop=("batch",),
        ),
        V(
            "resume/loader-changed",
            "pretrain, started on a and saved at 5ba, now reads b: a new epoch of b, to 15ba",
            toml(A, B, fits=['loader = "b"; until = "15ba"; name = "pretrain"']),
            {"total_steps": ["14", "8"], "diagnostics": ["14"], "reads": ["14", "4"]},
            checkpoint=written(PRETRAIN, 5),
        ),
        V(
            "resume/no-loader-state",
            "foreign counters 30 samples into epoch 1, no loader state: exact, with a warning",
            toml(A, run="3ep", fits=['loader = "a"']),
            {"total_steps": ["11", "10"], "diagnostics": ["11", "10"], "reads": ["11"]},
            checkpoint=ledgerless(1, 13, 130, 3, 30, loader_state=False),
        ),
        V(
            "resume/ledger-continued",
            "an extend script run again from its own checkpoint 2 steps in: 4 more, not 6",
            EXTENDED,
            {"total_steps": ["9"], "segments": ["9"], "diagnostics": ["9"], "stop": ["9"]},
            checkpoint=written(
                EXTENDED, 2, written(toml(A, fits=['loader = "a"; until = "10ba"']), 10)
            ),
        ),
    ],
    "sharding": [
        V(
            "sharding/repeat-101-on-2",
            "101 samples on 2 ranks of 10: 102 positions, sample 0 twice",
            toml(JOB, run="1ep", fits=['loader = "a"']),
            {"total_steps": ["17"], "stop": ["17"], "diagnostics": ["17"], "reads": ["17"]},
        ),
        V(
            "sharding/cycle-101-on-2",
            "accelerate's cycle: 120 positions, samples 0-18 twice",
            toml(JOB + 'padding = "cycle"\n', run="1ep", fits=['loader = "a"']),
            {"total_steps": ["17"], "stop": ["17"], "reads": ["17"]},
        ),
        V(
            "sharding/drop-101-on-3",
            "drop on 3 ranks with drop_last: 90 positions, 90-100 never read",
            toml(
                "[loaders.a]\nsamples = 101\nworld_size = 3\n"
                'device_batch_size = 10\npadding = "drop"\ndrop_last = true\n',
                run="1ep",
                fits=['loader = "a"'],
            ),
            {"total_steps": ["17"], "stop": ["17"], "diagnostics": ["17"], "reads": ["17"]},
        ),
        V(
            "sharding/half-epoch-of-101",
            "0.5ep of 101 samples is past 50.5: step 3, 60 positions",
            toml(JOB, fits=['loader = "a"; until = "0.5ep"']),
            {"stop": ["17", "5"]},
            stop=("batch", "sample"),
        ),
        V(
            "sharding/samples-count-positions",
            "until=110sp counts the padded position: 122",
            toml(JOB, fits=['loader = "a"; until = "110sp"']),
            {"stop": ["17"]},
            stop=("batch", "sample"),
        ),
        V(
            "sharding/accumulation",
            "2 ranks of 5, 2 micro-batches a step: 20 a step",
            toml(
                "[loaders.a]\nsamples = 100\nworld_size = 2\n"
                "device_batch_size = 5\naccumulation = 2\n",
                run="1ep",
                fits=['loader = "a"'],
            ),
            {"total_steps": ["17"], "reads": ["17"]},
        ),
        V(
            "sharding/one-rank-evens-nothing",
            "world_size=1: every padding reads the data as it is",
            toml(
                "[loaders.a]\nsamples = 101\nworld_size = 1\n"
                'device_batch_size = 10\npadding = "cycle"\n',
                run="1ep",
                fits=['loader = "a"'],
            ),
            {"total_steps": ["17"], "reads": ["17"], "stop": ["17"]},
        ),
        V(
            "sharding/resume-on-3",
            "2ep on 2 ranks, step 3 (60 positions), resumed on 3: 6 steps to 204",
            toml(JOB, run="2ep", fits=['loader = "a"']),
            {
                "total_steps": ["18"],
                "stop": ["18"],
                "diagnostics": ["18", "12", "17"],
                "reads": ["18"],
            },
            resume_from="3ba",
            world_size=3,
        ),
        V(
            "sharding/resume-on-4",
            "resumed on 4 ranks: 5 steps to 208, samples 0-2 twice a epoch",
            toml(JOB, run="2ep", fits=['loader = "a"']),
            {"total_steps": ["18"], "stop": ["18"], "reads": ["18"]},
            resume_from="3ba",
            world_size=4,
        ),
        V(
            "sharding/resume-on-1",
            "resumed on 1 rank: 16 steps to 202, nothing padded",
            toml(JOB, run="2ep", fits=['loader = "a"']),
            {"total_steps": ["18"], "stop": ["18"], "reads": ["18"]},
            resume_from="3ba",
            world_size=1,
        ),
        V(
            "sharding/resume-same-world",
            "resumed on the same 2 ranks: 9 steps, no world-size change",
            toml(JOB, run="2ep", fits=['loader = "a"']),
            {"total_steps": ["18", "16"], "diagnostics": ["18", "17"]},
            resume_from="3ba",
            world_size=2,
        ),
        V(
            "sharding/shuffled-resume-on-3",
            "a shuffled order, 4 positions in on 2 ranks, resumed on 3",
            toml(
                "[loaders.a]\nsamples = 11\nworld_size = 2\n"
                'device_batch_size = 2\norder = "shuffled"\nseed = 7\n',
                run="1ep",
                fits=['loader = "a"'],
            ),
            {"reads": ["19", "18"], "total_steps": ["19"]},
            resume_from="1ba",
            world_size=3,
        ),
        V(
            "sharding/ordered-two-calls",
            "a sequential order: the second call goes on inside the epoch",
            toml(
                "[loaders.a]\nsamples = 11\nworld_size = 2\n"
                'device_batch_size = 2\norder = "sequential"\n',
                fits=['loader = "a"; until = "2ba"', 'loader = "a"; duration = "1ep"'],
            ),
            {"reads": ["19", "4"], "total_steps": ["19"]},
        ),
        V(
            "sharding/seed-out-of-range",
            "a seed past 2**64 - 1 is refused",
            toml(
                "[loaders.a]\nsamples = 11\nbatch_size = 2\n"
                'order = "shuffled"\nseed = 18446744073709551616\n',
                fits=['loader = "a"; duration = "1ep"'],
            ),
            {"error": ["19"]},
        ),
    ],
    "schedules": [
        V(
            "schedules/warmup-cosine",
            "warmup 4ba, then cosine to 1/10 until the end, on the two-phase run",
            TWO + _sched('warmup = "4ba"\n') + piece("cosine", to='"0.1"', until='"end"'),
            {"rates": ["S1", "S4"], "total_steps": ["S2"]},
        ),
        V(
            "schedules/landmarks",
            "constant until anneal starts, then linear to 0 until it stops",
            TWO
            + _sched("")
            + piece("constant", until='"start:anneal"')
            + piece("linear", to="0", until='"stop:anneal"'),
            {"rates": ["S2", "S4"]},
        ),
        V(
            "schedules/cosine-thirds",
            "cosine from 1 to 0 until 6ba, then 0: exact at thirds",
            TWO + _sched("") + piece("cosine", to="0", until='"6ba"'),
            {"rates": ["S4", "S3"]},
        ),
        V(
            "schedules/warmup-in-samples",
            "a warmup until 25sp at 10 a step ends at step 3",
            toml(A, fits=['loader = "a"; until = "6ba"']) + _sched('warmup = "25sp"\n'),
            {"rates": ["S2"]},
        ),
        V(
            "schedules/warmup-in-dur",
            "a warmup until 0.3dur of 10ba ends at step 3",
            toml(A, run="10ba", fits=['loader = "a"']) + _sched('warmup = "0.3dur"\n'),
            {"rates": ["S2", "6"]},
        ),
        V(
            "schedules/initial-and-hold",
            "warmup from 1/2 over 2ba, then the final factor holds",
            toml(A, fits=['loader = "a"; until = "5ba"'])
            + _sched('warmup = "2ba"\ninitial = "1/2"\n'),
            {"rates": ["S3", "S4"]},
        ),
        V(
            "schedules/empty-piece",
            "a linear piece that stops where it starts is empty",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched('warmup = "2ba"\n')
            + piece("linear", to="0", until='"2ba"')
            + piece("constant", until='"end"', value='"1/4"'),
            {"rates": ["S3", "S4"]},
        ),
        V(
            "schedules/never-reached",
            "a warmup until 30ba on a 26-step plan is refused",
            TWO + _sched('warmup = "30ba"\n'),
            {"error": ["S3"]},
        ),
        V(
            "schedules/stops-before-it-starts",
            "a piece that stops before the previous one",
            TWO + _sched('warmup = "10ba"\n') + piece("linear", to="0", until='"5ba"'),
            {"error": ["S3"]},
        ),
        V(
            "schedules/unknown-call",
            "a landmark of a call the script does not make",
            TWO + _sched("") + piece("linear", to="0", until='"stop:finetune"'),
            {"error": ["S3"]},
        ),
        V(
            "schedules/drops",
            "drops at 5ba and 10ba by 1/2, until the end",
            toml(A, fits=['loader = "a"; until = "12ba"'])
            + _sched("")
            + piece("drops", at='["5ba", "10ba"]', gamma='" 0.5 "', until='"end"'),
            {"rates": ["S4", "S4a"]},
        ),
        V(
            "schedules/linear-decay",
            "linear from 1 to 0 over 20 steps: 1 - k/20",
            toml(A, run="2ep", fits=['loader = "a"'])
            + _sched("")
            + piece("linear", to="0", until='"end"'),
            {"rates": ["S4"]},
        ),
        V(
            "schedules/exponential",
            "exponential from 1 to 1/16 over 4 steps: exact halvings",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched("")
            + piece("exponential", to='"1/16"', until='"end"'),
            {"rates": ["S4"]},
        ),
        V(
            "schedules/inverse-sqrt",
            "warmup 4ba, then inverse square root until 8ba",
            toml(A, fits=['loader = "a"; until = "8ba"'])
            + _sched('warmup = "4ba"\n')
            + piece("inverse_sqrt", until='"end"'),
            {"rates": ["S4"]},
        ),
        V(
            "schedules/float-factor",
            "a factor written as a TOML float is refused",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched("")
            + piece("linear", to="0.1", until='"end"'),
            {"error": ["S4a"]},
        ),
        V(
            "schedules/zero-denominator",
            "a factor '1/0' is refused",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched("")
            + piece("linear", to='"1/0"', until='"end"'),
            {"error": ["S4a"]},
        ),
        V(
            "schedules/factor-too-large",
            "a factor above 1,000,000 is refused",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched("")
            + piece("constant", value='"1000001"', until='"end"'),
            {"error": ["S4a"]},
        ),
        V(
            "schedules/signed-factor",
            "a sign in a factor is refused",
            toml(A, fits=['loader = "a"; until = "4ba"'])
            + _sched("")
            + piece("linear", to='"-1"', until='"end"'),
            {"error": ["S4a"]},
        ),
        V(
            "schedules/continue-same-curve",
            "resumed at step 13 under continue: the same factors",
            toml(A, run="2ep", fits=['loader = "a"'])
            + _sched("")
            + piece("linear", to="0", until='"end"'),
            {"rates": ["S5", "S7"]},
            resume_from="13ba",
        ),
        V(
            "schedules/two-phase-resume",
            "the two-phase curve resumed at step 17",
            TWO + _sched('warmup = "4ba"\n') + piece("cosine", to='"0.1"', until='"end"'),
            {"rates": ["S7", "S2"]},
            resume_from="17ba",
        ),
        V(
            "schedules/weights-fresh-curve",
            "weights: a new warmup from the resume point",
            toml(A, run="2ep", fits=['loader = "a"'], resume='mode = "weights"')
            + _sched('warmup = "4ba"\n'),
            {"rates": ["S5"], "total_steps": ["9"]},
            resume_from="13ba",
        ),
        V(
            "schedules/extend-needs-on-extend",
            "a schedule on an extended run without on_extend",
            toml(A, run="15ba", fits=['loader = "a"; duration = "12ba"'], resume='mode = "extend"')
            + _sched('warmup = "4ba"\n')
            + piece("linear", to="0", until='"end"'),
            {"error": ["S5"]},
            resume_from="10ba",
        ),
        V(
            "schedules/extend-stretch",
            "on_extend = stretch: the curve from the origin, to the new end",
            toml(A, run="15ba", fits=['loader = "a"; duration = "12ba"'], resume='mode = "extend"')
            + _sched('warmup = "4ba"\non_extend = "stretch"\n')
            + piece("linear", to="0", until='"end"'),
            {"rates": ["S5"]},
            resume_from="10ba",
        ),
        V(
            "schedules/extend-rewarm",
            "on_extend = rewarm: a new warmup where the new script starts",
            toml(A, run="15ba", fits=['loader = "a"; duration = "12ba"'], resume='mode = "extend"')
            + _sched('warmup = "4ba"\non_extend = "rewarm"\n')
            + piece("linear", to="0", until='"end"'),
            {"rates": ["S5"]},
            resume_from="10ba",
        ),
    ],
    "intervals": [
        V(
            "intervals/every-half-epoch",
            "every 0.5ep of the two-phase run: 5, 10, 15, 20, 23, 26",
            TWO + '[events.checkpoint]\nevery = "0.5ep"\n',
            {"events": ["S6", "5"]},
        ),
        V(
            "intervals/abandoned-multiples",
            "every 1ep over an abandoned epoch: due where the next call starts",
            toml(A, B, fits=['loader = "a"; until = "13ba"', 'loader = "b"; duration = "1ep"'])
            + '[events.epoch]\nevery = "1ep"\n',
            {"events": ["S6", "4"]},
        ),
        V(
            "intervals/at-half-dur",
            "at 0.5dur of 3ep: step 15",
            toml(A, run="3ep", fits=['loader = "a"']) + '[events.eval]\nat = "0.5dur"\n',
            {"events": ["S6", "6"]},
        ),
        V(
            "intervals/at-call-ends",
            "at each call's stop: 20, 26",
            TWO + "[events.eval]\nat_call_ends = true\n",
            {"events": ["S6"]},
        ),
        V(
            "intervals/every-tenth-dur",
            "every 0.1dur of 15ba is every 1.5ba, exactly",
            toml(A, run="15ba", fits=['loader = "a"']) + '[events.log]\nevery = "0.1dur"\n',
            {"events": ["S6", "6"]},
        ),
        V(
            "intervals/reset-time-restarts-grid",
            "every 2ba; reset_time at step 11 restarts the grid",
            toml(
                A,
                B,
                fits=[
                    'loader = "a"; until = "11ba"',
                    'loader = "b"; until = "5ba"; reset_time = true',
                ],
            )
            + '[events.log]\nevery = "2ba"\n',
            {"events": ["S6", "7"]},
        ),
        V(
            "intervals/at-list-and-landmark",
            "at 3ba, 0.5ep and the start of anneal",
            TWO + '[events.eval]\nat = ["3ba", "0.5ep", "start:anneal"]\n',
            {"events": ["S6", "S2"]},
        ),
        V(
            "intervals/replay-not-due-again",
            "every 1ep; replay_epoch from step 13 reads epoch 1 again",
            toml(A, run="2ep", fits=['loader = "a"'], resume='data = "replay_epoch"')
            + '[events.epoch]\nevery = "1ep"\n',
            {"events": ["S6", "11"]},
            resume_from="13ba",
        ),
        V(
            "intervals/resumed-same-events",
            "the two-phase run resumed at step 17: the same steps",
            TWO + '[events.checkpoint]\nevery = "0.5ep"\n[events.eval]\nat_call_ends = true\n',
            {"events": ["S7"]},
            resume_from="17ba",
        ),
        V(
            "intervals/two-keys",
            "an events table with two kinds of interval is refused",
            TWO + '[events.x]\nevery = "1ep"\nat_call_ends = true\n',
            {"error": ["S6"]},
        ),
    ],
    "mixtures": [
        V(
            "mixtures/phase-cursors",
            "pretraining 800sp of web:code 3:1, then annealing on code and math",
            toml(
                WEB_CODE,
                ANNEAL,
                fits=[
                    'loader = "pretrain"; duration = "800sp"',
                    'loader = "anneal"; duration = "200sp"',
                ],
            ),
            {"segments": ["20"], "reads": ["20"], "total_steps": ["20"]},
            segment=("steps", "sources"),
        ),
        V(
            "mixtures/first-exhausted",
            "first_exhausted: the epoch ends before code reads past 100",
            toml(
                "[loaders.m]\nbatch_size = 10\n[loaders.m.sources.web]\nsamples = 300\nweight = 1\n"
                "[loaders.m.sources.code]\nsamples = 100\nweight = 1\n",
                fits=['loader = "m"; until = "1ep"'],
            ),
            {"total_steps": ["20"], "stop": ["20"], "reads": ["20"]},
        ),
        V(
            "mixtures/counts",
            "counts fix the epoch at their sum: 30 + 10",
            toml(
                "[loaders.m]\nbatch_size = 10\n[loaders.m.sources.web]\nsamples = 300\ncount = 30\n"
                "[loaders.m.sources.code]\nsamples = 100\ncount = 10\n",
                fits=['loader = "m"; until = "2ep"'],
            ),
            {"total_steps": ["20"], "reads": ["20"]},
        ),
        V(
            "mixtures/restart",
            "annealing restarts code at a new pass",
            toml(
                WEB_CODE,
                ANNEAL.replace('stop = "never"\n', 'stop = "never"\nrestart = ["code"]\n'),
                fits=[
                    'loader = "pretrain"; duration = "800sp"',
                    'loader = "anneal"; duration = "200sp"',
                ],
            ),
            {"segments": ["20"], "diagnostics": ["20", "4"]},
            segment=("steps", "sources"),
        ),
        V(
            "mixtures/resume-cursors",
            "pretraining killed at step 4 goes on from every cursor",
            toml(
                WEB_CODE,
                ANNEAL,
                fits=[
                    'loader = "pretrain"; duration = "800sp"',
                    'loader = "anneal"; duration = "200sp"',
                ],
            ),
            {"segments": ["20", "16"], "reads": ["20", "16"]},
            resume_from="4ba",
            segment=("steps", "sources"),
        ),
        V(
            "mixtures/budget-exceeded",
            "a source read past its max_passes",
            toml(
                '[loaders.m]\nbatch_size = 10\nstop = "never"\n'
                "[loaders.m.sources.web]\nsamples = 50\nweight = 1\nmax_passes = 1\n",
                fits=['loader = "m"; duration = "60sp"'],
            ),
            {"error": ["20"]},
        ),
        V(
            "mixtures/zero-share",
            "a source whose share rounds to no sample is refused",
            toml(
                "[loaders.m]\nbatch_size = 10\n[loaders.m.sources.web]\n"
                "samples = 10\nweight = 1000\n"
                "[loaders.m.sources.code]\nsamples = 1000\nweight = 1\n",
                fits=['loader = "m"; duration = "5ba"'],
            ),
            {"error": ["20"]},
        ),
        V(
            "mixtures/float-weight",
            "a weight written as a TOML float is refused",
            toml(
                "[loaders.m]\nbatch_size = 10\n[loaders.m.sources.web]\n"
                "samples = 100\nweight = 0.5\n",
                fits=['loader = "m"; duration = "5ba"'],
            ),
            {"error": ["20"]},
        ),
        V(
            "mixtures/weights-edited-at-resume",
            "x saved at 400 samples of web:code 3:1 resumes at 1:1: cursors go on, 200 more each",
            mixing(1, 1000),
            {"segments": ["20"], "diagnostics": ["20"], "total_steps": ["20"]},
            checkpoint=written(mixing(3, 1000), 4),
            segment=("steps", "sources"),
        ),
        V(
            "mixtures/source-resized-at-resume",
            "x saved with web at 300 of 1000 resumes with web of 800 samples: a new pass of web",
            mixing(3, 800),
            {"segments": ["20"], "diagnostics": ["20"]},
            checkpoint=written(mixing(3, 1000), 4),
            segment=("steps", "sources"),
        ),
    ],
}

P = Property
PROPERTIES: list[Property] = [
    P(
        "properties/two-phases",
        "the two-phase run resumed after every step",
        "resume-invariance",
        ["16", "4", "5"],
        TWO_PHASE,
    ),
    P(
        "properties/reset-time",
        "a reset_time run resumed after every step",
        "resume-invariance",
        ["16", "7"],
        toml(
            A,
            B,
            fits=['loader = "a"; until = "10ba"', 'loader = "b"; until = "5ba"; reset_time = true'],
        ),
    ),
    P(
        "properties/anchored-samples",
        "two relative sample calls resumed after every step",
        "resume-invariance",
        ["16", "3"],
        toml(
            "[loaders.s]\nsamples = 50\nbatch_size = 7\n",
            fits=['loader = "s"; duration = "30sp"', 'loader = "s"; duration = "30sp"'],
        ),
    ),
    P(
        "properties/sharded",
        "101 samples on 2 ranks for 2ep, resumed after every step",
        "resume-invariance",
        ["16", "17"],
        toml(JOB, run="2ep", fits=['loader = "a"']),
    ),
    P(
        "properties/mixture-phases",
        "a mixture then another resumed at chosen steps",
        "resume-invariance",
        ["16", "20"],
        toml(
            WEB_CODE,
            ANNEAL,
            fits=[
                'loader = "pretrain"; duration = "800sp"',
                'loader = "anneal"; duration = "200sp"',
            ],
        ),
        crash_steps=["1", "4", "8", "10"],
    ),
    P(
        "properties/rerun-two-phases",
        "the two-phase run from its own end trains nothing",
        "idempotent-rerun",
        ["15", "16"],
        TWO_PHASE,
    ),
    P(
        "properties/rerun-reset-time",
        "a reset_time run from its own end trains nothing",
        "idempotent-rerun",
        ["15", "7"],
        toml(
            A,
            B,
            fits=['loader = "a"; until = "10ba"', 'loader = "b"; until = "5ba"; reset_time = true'],
        ),
    ),
    P(
        "properties/world-size",
        "101 samples for 2ep on 2 ranks, resumed on 1 to 4 ranks",
        "world-size-invariance",
        ["18"],
        toml(JOB, run="2ep", fits=['loader = "a"']),
    ),
    P(
        "properties/generated-scripts",
        "generated scripts of 1-3 calls on 1-2 loaders",
        "resume-invariance",
        ["16", "2", "3", "4"],
        toml(A, run="2ep", fits=['loader = "a"']),
        generator={
            "seed": 7,
            "count": 20,
            "params": {
                "loaders": [1, 2],
                "samples": [1, 40],
                "batch_size": [1, 8],
                "calls": [1, 3],
                "units": ["ba", "sp", "ep"],
                "amount": [1, 30],
            },
        },
    ),
    P(
        "properties/generated-reruns",
        "generated scripts from their own end",
        "idempotent-rerun",
        ["15"],
        toml(A, run="2ep", fits=['loader = "a"']),
        generator={
            "seed": 11,
            "count": 20,
            "params": {
                "loaders": [1, 2],
                "samples": [1, 40],
                "batch_size": [1, 8],
                "calls": [1, 3],
                "units": ["ba", "sp", "ep"],
                "amount": [1, 30],
            },
        },
    ),
    P(
        "properties/generated-world-sizes",
        "generated data-parallel loaders on other world sizes",
        "world-size-invariance",
        ["18"],
        toml(JOB, run="2ep", fits=['loader = "a"']),
        generator={
            "seed": 3,
            "count": 10,
            "params": {
                "samples": [1, 40],
                "device_batch_size": [1, 6],
                "world_size": [1, 4],
                "epochs": [1, 2],
                "world_sizes": [1, 2, 3, 4],
            },
        },
    ),
]

OBSERVED = "tests/frameworks/observed.json#"
COMPOSER = "tests/frameworks/observed_composer.json#"
TRAINERS: list[TrainerVector] = [
    TrainerVector(
        "trainers/mid-epoch-crash-13",
        "2ep of a, killed after step 13 (30 samples into epoch 1)",
        toml(A, run="2ep", fits=['loader = "a"']),
        {"total_steps": ["16", "11"], "reads": ["16", "11"]},
        resume_from="13ba",
        evidence={
            "composer": COMPOSER + "composer/autoresume_max_duration",
            "lightning": OBSERVED + "lightning/crash13_plain",
            "transformers": OBSERVED + "transformers/crash13",
            "keras": OBSERVED + "keras/crash13_freq1",
        },
    ),
    TrainerVector(
        "trainers/epoch-end-crash-10",
        "2ep of a, killed after step 10, at the epoch's end",
        toml(A, run="2ep", fits=['loader = "a"']),
        {"total_steps": ["16"], "reads": ["16"]},
        resume_from="10ba",
        evidence={
            "lightning": OBSERVED + "lightning/crash10_plain",
            "transformers": OBSERVED + "transformers/crash10",
        },
    ),
    TrainerVector(
        "trainers/two-phases",
        "2 epochs of a, then 0.1 epoch of b, no crash",
        TWO_PHASE,
        {"total_steps": ["4", "5"], "reads": ["4", "5"]},
    ),
    TrainerVector(
        "trainers/two-phases-crash-13",
        "the two-phase run killed after step 13",
        TWO_PHASE,
        {"total_steps": ["16"], "reads": ["16", "11"]},
        resume_from="13ba",
    ),
    TrainerVector(
        "trainers/second-fit-crash-15",
        "until 1ep, then 1ep more, killed after step 15",
        toml(A, fits=['loader = "a"; until = "1ep"', 'loader = "a"; duration = "1ep"']),
        {"total_steps": ["8", "16"], "reads": ["8", "16"]},
        resume_from="15ba",
    ),
    TrainerVector(
        "trainers/relative-samples",
        "1000sp then 1000sp more at 32 a step: 2016, or 2048 when overshoot leaks",
        toml(
            "[loaders.a]\nsamples = 10_000\nbatch_size = 32\n",
            run="1000sp",
            fits=['loader = "a"; duration = "1000sp"', 'loader = "a"; duration = "1000sp"'],
        ),
        {"total_steps": ["3"], "reads": ["3"]},
    ),
    TrainerVector(
        "trainers/batch-size-doubled",
        "one rank of 10, killed after step 13, resumed on 2 ranks",
        toml(
            "[loaders.a]\nsamples = 100\nworld_size = 1\ndevice_batch_size = 10\n",
            run="2ep",
            fits=['loader = "a"'],
        ),
        {"total_steps": ["12", "18"], "reads": ["12", "18"]},
        resume_from="13ba",
        world_size=2,
    ),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.vectors", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the vector files")
    mode.add_argument("--check", action="store_true", help="list stale files; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for path in found:
            print(f"stale: vectors/{path}")
        return 1 if found else 0
    SUITE.mkdir(exist_ok=True)
    for path, content in build().items():
        target = SUITE / path
        if not target.is_file() or target.read_bytes() != content:
            target.write_bytes(content)
            print(f"wrote vectors/{path}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DurationsError as error:
        sys.exit(f"error: {error}")
