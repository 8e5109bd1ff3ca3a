"""Fuzzing the parsers: every input that reaches ``durations`` from outside, for a fixed budget.

Targets (:data:`TARGETS`), each fed bytes:

- ``time``: ``Time.parse`` and what parses a time for the user (``FitCall``, ``RunConfig``,
  ``durations convert``), and the values those constructors are given instead of a string;
- ``scenario``: ``Scenario.from_toml``, then ``durations plan FILE`` and ``--json``;
- ``checkpoint``: a checkpoint JSON file through ``read_checkpoint``, the Hugging Face ledger
  reader (``durations.json``), ``durations inspect`` and ``durations plan --resume-from``;
- ``trainer-state``: a Hugging Face ``trainer_state.json`` through the same readers;
- ``schedule``: a scenario's ``[schedule]`` and ``[events]``, placed on a plan, and their
  factors and intervals from text;
- ``plot`` (needs matplotlib): ``durations plan FILE --plot OUT.svg``;
- ``folders``: the checkpoint folders the integrations read on every resume (a Hugging Face
  ``checkpoint-N``, a Keras ``step-N``), whose files may be anything: JSON, a FIFO, a device,
  a directory, missing; their readers, ``latest_checkpoint`` and the command line;
- ``order``: the data order's inputs (``Order``, ``Permutation``, ``step_indices``, and the
  state an ``OrderSampler`` loads), from JSON or from any value;
- ``torch`` (needs torch): Lightning and Composer files through their readers, ``read_checkpoint``
  and ``durations inspect``, hostile pickles included, which must be refused and never run.

Each input is classified: accepted, refused (a ``DurationsError``; for the command line, one
paragraph on stderr and exit code 1 or 2), an *escape* (any other exception; for the command
line a traceback or an exit code outside 0/1/2; a message longer than :data:`MAX_MESSAGE`; a
broken round trip), or a *hang* (past the per-input time limit). The engine mutates a corpus
seeded from the repository's own files, deterministically from ``--seed``, and keeps the inputs
that were told something new (guided by outcomes, not by coverage).

Run ``python -m tests.fuzz --budget ci|large`` (the torch target needs the frameworks
environment: ``--targets torch``); ``--write-docs`` rewrites its figures block of
``docs/reliability.md``. Escaping inputs are written to ``--crashes`` (``fuzz-crashes/``).
The per-input limit uses ``SIGALRM``: run it on the main thread of a POSIX system.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import itertools
import json
import os
import pickle
import random
import re
import signal
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import attrs

from durations import Checkpoint, FitCall, Loader, RunConfig, Time, cli, plan
from durations.errors import DurationsError
from durations.readers import ExternalState, read_checkpoint
from durations.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
SMALL = ROOT / "tests" / "golden" / "two-phase-small.toml"
#: A ledger of :data:`SMALL`'s script, for the folders beside a fuzzed one.
SMALL_CHECKPOINT = ROOT / "tests" / "golden" / "checkpoint-v4.json"

#: The longest error message accepted, whatever the input: hostile text is shown by its start
#: and its length (``durations.errors.shown``), so a megabyte of input is not a megabyte of error.
MAX_MESSAGE = 2_000
#: The per-input time limit: an input that takes longer is a hang. Generous, for a busy
#: 2-core machine (the slowest inputs, a megabyte through every reader, take about 3 s).
LIMIT = 20.0
#: The most a command prints (``--json`` lists at most 100,000 event steps in all), and the
#: widest line of its text (docs/cli.md: every line fits in 100 columns).
MAX_OUTPUT = 4 * 2**20
LINE_WIDTH = 100
#: The longest input the mutations build (the command line reads up to 64 MiB; the grammar
#: refuses more than 256 characters before reading them).
MAX_INPUT = 2**20


class Escape(Exception):  # noqa: N818 - an outcome, not an error of the fuzzer
    """An input that got out of the promised outcomes; ``kind`` says how."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(kind)


class Hang(BaseException):
    """Raised by the per-input alarm: a BaseException, so no ``except Exception`` swallows it."""


#: What the current input was told (the first line of each refusal): a new combination keeps
#: the input in the corpus, a cheap stand-in for new coverage.
_TOLD: list[str] = []


def _refused(error: BaseException, where: str) -> None:
    """A refusal: a DurationsError with a bounded message. Anything else escapes."""
    _TOLD.append(f"{where}: {type(error).__name__}: {_first_line(error)}")
    if not isinstance(error, DurationsError):
        raise Escape(f"{where}: {type(error).__name__}: {_first_line(error)}") from error
    if len(str(error)) > MAX_MESSAGE:
        raise Escape(f"{where}: {type(error).__name__} message of {len(str(error)):,} characters")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:160] if text else ""


def _api(where: str, call: Callable[[], Any], *, oserror: bool = False) -> Any:
    """Run ``call``; return its result, or None when it refused the input as promised (an
    ``OSError`` too where ``oserror``: a file that cannot be read as text)."""
    try:
        return call()
    except (Escape, Hang):
        raise
    except OSError as error:
        if not oserror:
            raise Escape(f"{where}: OSError: {_first_line(error)}") from error
        _TOLD.append(f"{where}: OSError: {error.strerror}")
        return None
    except Exception as error:
        _refused(error, where)
        return None


def _cli(*argv: str) -> int:
    """``durations ARGV`` in this process: an exception out of ``main`` is a traceback; the
    exit code must be 0, 1 or 2, and an error one bounded paragraph on stderr."""
    out, err = io.StringIO(), io.StringIO()
    where = "durations " + " ".join(a if len(a) < 40 else "<input>" for a in argv)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code: object = cli.main(list(argv))
        except SystemExit as exit_:  # argparse
            code = exit_.code
        except (Escape, Hang):
            raise
        except Exception as error:
            kind = f"{where}: traceback: {type(error).__name__}: {_first_line(error)}"
            raise Escape(kind) from error
    if code not in (0, 1, 2):
        raise Escape(f"{where}: exit code {code!r}")
    printed = out.getvalue()
    if len(printed) > MAX_OUTPUT:
        raise Escape(f"{where}: {len(printed):,} characters of output")
    if "--json" not in argv:
        widest = max(map(len, printed.splitlines()), default=0)
        if widest > LINE_WIDTH:
            raise Escape(f"{where}: a line of {widest:,} columns")
    text = err.getvalue()
    _TOLD.append(f"{where}: {code}: {text[:200]}")
    if "Traceback" in text:
        raise Escape(f"{where}: traceback on stderr")
    if len(text) > MAX_MESSAGE:
        raise Escape(f"{where}: {len(text):,} characters on stderr")
    if code == 2 and not text.startswith("durations: error: "):
        raise Escape(f"{where}: exit code 2 without its message")
    return int(code)


def _text(data: bytes) -> str:
    """The bytes as text: UTF-8, with any other byte kept as a lone surrogate (hostile text)."""
    return data.decode("utf-8", "surrogateescape")


# -- targets ---------------------------------------------------------------------------------

_LOADER = Loader(samples=1_000, batch_size=10, tokens_per_sample=2, name="a")


def _value(data: bytes) -> object:
    """A value that is not a time string, for the constructors that take one: what a config
    file or a careless caller may pass instead (bytes, numbers, lists, the text as a list)."""
    kind = data[0] % 6 if data else 0
    rest = data[1:]
    values: list[object] = [
        rest,
        int.from_bytes(rest[:64] or b"\0", "big"),
        len(rest) / 7,
        list(_text(rest)),
        {_text(rest): 1},
        bytearray(rest),
    ]
    return values[kind]


def target_time(data: bytes, scratch: Path) -> str:
    """``Time.parse``; what a parsed time must satisfy (``str`` round-trips); the constructors
    that parse a time, on the text and on other values; ``durations convert``."""
    text = _text(data)
    parsed = _api("Time.parse", lambda: Time.parse(text))
    if parsed is not None:
        again = _api("Time.parse(str(t))", lambda: Time.parse(str(parsed)))
        if again != parsed or str(again) != str(parsed):
            raise Escape(f"str does not round-trip: {str(parsed)[:80]!r} -> {again!r}")
    for make in (
        lambda: FitCall(loader=_LOADER, duration=text),
        lambda: FitCall(loader=_LOADER, until=text),
        lambda: RunConfig(max_duration=text),
    ):
        _api("FitCall/RunConfig(text)", make)
    value = _value(data)
    makers: tuple[Callable[[], object], ...] = (
        lambda: FitCall(loader=_LOADER, duration=value),
        lambda: RunConfig(max_duration=value),
        lambda: RunConfig(resume=value),
        lambda: RunConfig(data=value),
        lambda: FitCall(loader=_LOADER, name=value),  # type: ignore[arg-type]
        lambda: FitCall(loader=_LOADER, reset_time=value),  # type: ignore[arg-type]
        lambda: Loader(samples=value, batch_size=1),  # type: ignore[arg-type]
        lambda: Loader(samples=10, batch_size=2, name=value),  # type: ignore[arg-type]
    )
    for build in makers:
        _api("constructor(value)", build)
    _cli("convert", text, "--samples", "1000", "--batch-size", "10", "--tokens-per-sample", "2")
    return "accepted" if parsed is not None else "refused"


def target_scenario(data: bytes, scratch: Path) -> str:
    """``Scenario.from_toml`` and its plan; ``durations plan FILE``, ``--json`` and
    ``--indices``."""
    scenario = _api("Scenario.from_toml", lambda: Scenario.from_toml(_text(data), source="s.toml"))
    if scenario is not None:
        _api("plan", lambda: plan(scenario.config, scenario.calls))
    path = scratch / "s.toml"
    path.write_bytes(data)
    code = _cli("plan", str(path))
    _cli("plan", str(path), "--json")
    # The indices of a step the input decides (one of the plan's, or not).
    _cli("plan", str(path), "--indices", str(1 + sum(data) % 40))
    return {0: "accepted", 1: "planned with an error"}.get(code, "refused")


#: The most steps a fuzzed comparison emulates: the profiles step through the run, so a
#: mutated scenario of a million steps would be slow, not wrong (``compare`` refuses more than
#: ``MAX_STEPS`` itself, tested in tests/test_compare.py).
_COMPARED_STEPS = 5_000


def _drawn_scenario(data: bytes) -> Scenario | None:
    """A small scenario the bytes decide, valid by construction more often than a mutated file:
    one or two loaders (some data-parallel), one to three calls of every kind of duration, a
    clock reset, and a schedule of a warmup and a decay."""
    from durations import END, Landmark, Schedule

    if len(data) < 12:
        return None
    pick = iter(data)

    def byte() -> int:
        return next(pick, 0)

    loaders: dict[str, Loader] = {}
    for name in ("a", "b")[: 1 + byte() % 2]:
        samples, size = 1 + byte() % 120, 1 + byte() % 16
        if byte() % 3 == 0:
            loaders[name] = Loader.sharded(
                samples=samples, world_size=1 + byte() % 3, device_batch_size=size,
                accumulation=1 + byte() % 2, name=name,
            )  # fmt: skip
        else:
            loaders[name] = Loader(samples=samples, batch_size=size, name=name)
    names = list(loaders)
    units = ("ba", "ep", "sp", "ep")
    calls = []
    for index in range(1 + byte() % 3):
        loader = loaders[names[byte() % len(names)]]
        kind, amount = byte() % 4, 1 + byte() % 30
        text = f"{amount}{units[byte() % 4]}" if kind else None
        if text is not None and text.endswith("ep"):
            text = f"{amount / 10}ep" if byte() % 2 else f"{1 + amount % 3}ep"
        reset = byte() % 7 == 0
        calls.append(FitCall(loader=loader, duration=text, reset_time=reset, name=f"c{index}"))
    config = RunConfig(max_duration=f"{1 + byte() % 4}ep")
    schedule = None
    if byte() % 2:
        until: object = END if byte() % 2 else Landmark.call_stop(0)
        base = Schedule.warmup(f"{byte() % 5}ba") if byte() % 2 else Schedule.constant(1)
        shape = byte() % 3
        schedule = (
            base.then_cosine(to="0.1", until=until)
            if shape == 0
            else base.then_linear(to=0, until=until)
            if shape == 1
            else base
        )
    return Scenario(config=config, loaders=loaders, calls=tuple(calls), schedule=schedule)


def target_compare(data: bytes, scratch: Path) -> str:
    """``compare`` of a scenario on the four trainer profiles, with a crash step and a world
    size the input decides: the scenario drawn from the bytes, and the bytes as a scenario file
    through ``durations compare FILE --crash-at K [--world-size N] [--json]``. Beyond the
    refusals: a comparison's steps are its outcomes' steps, a trainer that agrees has no
    difference, and the learning rates line up with the plan's."""
    from durations.compare import compare

    drawn = _api("a drawn scenario", lambda: _drawn_scenario(data))
    said = "refused"
    crash: int | None = None
    world: int | None = None
    written = _api("Scenario.from_toml", lambda: Scenario.from_toml(_text(data)))
    for scenario in (drawn, written):
        if scenario is None:
            continue
        found = _api("plan", lambda: plan(scenario.config, scenario.calls))  # noqa: B023
        if found is None or found.total_steps > _COMPARED_STEPS:
            said = "not compared" if said == "refused" else said
            continue
        crash = 1 + sum(data) % max(1, found.total_steps) if found.total_steps > 1 else None
        world = 1 + len(data) % 4 if crash is not None and len(data) % 3 == 0 else None
        result = _api(
            "compare",
            lambda: compare(scenario, crash_at=crash, world_size=world),  # noqa: B023
        )
        if result is None:
            continue
        said = "compared" if scenario is drawn else "compared (a file)"
        for trainer in result.trainers:
            if trainer.steps != sum(o.steps for o in trainer.outcomes):
                raise Escape(f"compare: {trainer.trainer} steps are not its calls' steps")
            if trainer.agrees and trainer.differences:
                raise Escape(f"compare: {trainer.trainer} agrees with differences")
            if len(trainer.rates) != len(trainer.planned_rates):
                raise Escape(f"compare: {trainer.trainer} rates and planned rates differ in length")
    if written is not None and said != "compared (a file)":
        return said  # a file the command would take long to compare (checked above)
    path = scratch / "s.toml"
    path.write_bytes(data)
    argv = ["compare", str(path)]
    if crash is not None:
        argv += ["--crash-at", str(crash)]
    if world is not None:
        argv += ["--world-size", str(world)]
    _cli(*argv)
    _cli(*argv, "--json")
    return said


def target_audit(data: bytes, scratch: Path) -> str:
    """A step log: ``StepLog.parse`` and ``audit`` against a small plan (with a schedule, so
    the learning rates are read too), and ``durations audit SCENARIO LOG [--json]``. Beyond
    the refusals: an audit's verdicts are one per planned step, and a run it says followed the
    plan has no divergence."""
    from durations.audit import StepLog, audit

    scenario = _api("the audit's scenario", lambda: Scenario.from_toml(_AUDITED))
    assert scenario is not None
    assert scenario.schedule is not None
    planned = plan(scenario.config, scenario.calls)
    curve = scenario.schedule.resolve(planned)
    log = _api("StepLog.parse", lambda: StepLog.parse(_text(data).splitlines(keepends=True)))
    said = "refused"
    if log is not None:
        found = _api("audit", lambda: audit(planned, log.records, schedule=curve))
        if found is not None:
            if [v.step for v in found.steps] != list(range(1, planned.total_steps + 1)):
                raise Escape(f"audit: verdicts for steps other than 1 to {planned.total_steps}")
            if sorted(found.divergences, key=lambda d: d.step) != list(found.divergences):
                raise Escape("audit: divergences out of step order")
            said = "followed" if found.ok else "diverged"
    path, log_path = scratch / "s.toml", scratch / "run.jsonl"
    path.write_text(_AUDITED)
    log_path.write_bytes(data)
    _cli("audit", str(path), str(log_path))
    _cli("audit", str(path), str(log_path), "--json")
    return said


#: The scenario the audit target's logs are read against: 12 steps, a warmup and a decay.
_AUDITED = """
[run]
max_duration = "2ep"
[loaders.a]
samples = 60
batch_size = 10
[[fit]]
loader = "a"
[schedule]
warmup = "2ba"
[[schedule.pieces]]
kind = "linear"
to = "0.1"
until = "end"
"""


def _audit_seeds(scratch: Path) -> list[bytes]:
    """A step log of the audited plan as a run writes it, and variations."""
    lines = ['{"log": "durations-step-log/1", "scenario": "s.toml", "base_lr": 0.1}']
    for step in range(1, 13):
        start = (step - 1) * 10  # the lifetime sample counter before the step
        done = step - 1  # the step uses the factor after its steps before it (rule S1)
        factor = done / 2 if done < 2 else 1 - 0.9 * (done - 2) / 10
        checkpoint = ', "checkpoint": {"path": "ck", "loader_state": null}' if step % 4 == 0 else ""
        lines.append(
            f'{{"step": {step}, "loader": "a", "samples": {{"start": {start}, "stop": '
            f'{start + 10}}}, "lr": {0.1 * factor}{checkpoint}}}'
        )
    whole = "\n".join(lines).encode() + b"\n"
    return [whole, whole[: len(whole) // 2], whole.replace(b'"step": 7', b'"step": 5')]


def target_adapter(data: bytes, scratch: Path) -> str:
    """A request line of the adapter protocol: the reference adapter's ``answer`` (and a
    trainer profile's ``answer_as``) must answer any line with a response of the request's id
    (a refusal, an error or an answer), never raise; and ``Vector.from_dict`` on the line read
    as a vector refuses with ``SuiteError``."""
    from durations.conformance import Vector, answer, answer_as

    try:
        message = json.loads(_text(data))
    except (ValueError, RecursionError):
        return "not JSON"  # the runner never sends it: its lines are json.dumps
    said = "answered"
    for name, respond in (("answer", answer), ("answer_as", lambda m: answer_as("keras", m))):
        try:
            response = respond(message)
        except (Escape, Hang):
            raise
        except Exception as error:
            raise Escape(f"{name}: {type(error).__name__}: {_first_line(error)}") from error
        if not isinstance(response, dict) or "id" not in response:
            raise Escape(f"{name}: a response without an id: {str(response)[:80]}")
        json.dumps(response)
        if "unsupported" in response or "error" in response:
            said = "refused"
    _api("Vector.from_dict", lambda: Vector.from_dict(message))
    return said


def _adapter_seeds(scratch: Path) -> list[bytes]:
    """The requests of the suite's first vectors, as the runner writes them."""
    from durations.conformance import request

    seeds = []
    for path in sorted((ROOT / "vectors").glob("*.json"))[:8]:
        if path.name == "manifest.json":
            continue
        from durations.conformance import Vector

        for raw in json.loads(path.read_text())["vectors"][:3]:
            seeds.append(json.dumps(raw).encode())
            seeds.append(json.dumps(request(Vector.from_dict(raw))).encode())
    return seeds


def target_checkpoint(data: bytes, scratch: Path) -> str:
    """A checkpoint JSON file: ``read_checkpoint`` (a Checkpoint it returns must round-trip
    through ``to_dict``), the Hugging Face ledger reader, ``durations inspect`` and
    ``durations plan --resume-from``."""
    from durations.integrations.checkpoints import read_transformers_checkpoint

    path = scratch / "c.json"
    path.write_bytes(data)
    found = _api("read_checkpoint", lambda: read_checkpoint(path), oserror=True)
    if isinstance(found, Checkpoint):
        again = _api(
            "Checkpoint.from_dict(to_dict())", lambda: Checkpoint.from_dict(found.to_dict())
        )
        if again != found:
            raise Escape("a checkpoint read does not round-trip through to_dict")
    directory = scratch / "checkpoint-7"
    directory.mkdir(exist_ok=True)
    (directory / "durations.json").write_bytes(data)
    _api("read_transformers_checkpoint", lambda: read_transformers_checkpoint(directory))
    code = _cli("inspect", str(path))
    _cli("plan", str(SMALL), "--resume-from", str(path))
    if code != 0:
        return "refused"
    return "accepted" if isinstance(found, Checkpoint) else "accepted (another trainer)"


def target_trainer_state(data: bytes, scratch: Path) -> str:
    """A Hugging Face ``trainer_state.json``: ``read_checkpoint`` on the file and on its
    ``checkpoint-N`` directory, the integrations' reader, ``durations inspect`` and
    ``durations plan --resume-from``."""
    from durations.integrations.checkpoints import read_transformers_checkpoint

    directory = scratch / "checkpoint-500"
    directory.mkdir(exist_ok=True)
    path = directory / "trainer_state.json"
    path.write_bytes(data)
    found = _api("read_checkpoint(dir)", lambda: read_checkpoint(directory), oserror=True)
    _api("read_checkpoint(file)", lambda: read_checkpoint(path), oserror=True)
    _api("read_transformers_checkpoint", lambda: read_transformers_checkpoint(directory))
    code = _cli("inspect", str(directory))
    _cli("plan", str(SMALL), "--resume-from", str(directory))
    if code != 0:
        return "refused"
    return "accepted" if isinstance(found, ExternalState) else "accepted (a durations checkpoint)"


def target_order(data: bytes, scratch: Path) -> str:
    """The data order's inputs: a JSON object's ``samples``, ``seed``, ``epoch``, ``world``,
    ``rank`` and ``state`` (or, for bytes that are not such JSON, a value of any type as the
    seed): ``Order.shuffled``, ``Permutation`` (an index it gives must be in range; a small
    epoch must be a bijection), ``step_indices`` on a one-epoch plan, and ``OrderSampler`` (its
    ``load_state_dict`` of the state, then up to 100 indices, each in range)."""
    from durations import Order
    from durations.integrations.torch import OrderSampler
    from durations.order import Permutation, step_indices

    try:
        fields = json.loads(data)
    except (ValueError, RecursionError):
        fields = None
    if not isinstance(fields, dict):
        fields = {"seed": _value(data)}
    samples, seed, epoch = (
        fields.get(k, d) for k, d in (("samples", 10), ("seed", 0), ("epoch", 0))
    )
    order = _api("Order.shuffled", lambda: Order.shuffled(seed=seed))
    permutation = _api("Permutation", lambda: Permutation(samples, seed, epoch))
    if permutation is not None:
        size = len(permutation)
        for place in {0, size // 2, size - 1} if size else ():
            if not 0 <= permutation[place] < len(permutation):
                raise Escape(f"Permutation gave {permutation[place]} of {len(permutation)}")
        if len(permutation) <= 64 and sorted(permutation) != list(range(len(permutation))):
            raise Escape("a permutation that is not a bijection")
    world, rank, state = fields.get("world", 2), fields.get("rank", 0), fields.get("state")
    loader = _api(
        "Loader.sharded",
        lambda: Loader.sharded(samples=samples, world_size=world, device_batch_size=2, name="a"),
    )
    if order is None or loader is None or loader.samples is None:
        return "refused"
    if loader.samples <= 10_000:
        run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=loader)])
        for step in {1, run.total_steps}:
            if step <= run.total_steps:
                _api("step_indices", lambda: step_indices(run, step, order=order, rank=rank))  # noqa: B023
    sampler = _api("OrderSampler", lambda: OrderSampler(order, loader, rank=rank))
    if sampler is None:
        return "refused"
    loaded = state is None or _api(
        "load_state_dict",
        lambda: sampler.load_state_dict(state) or True,  # type: ignore[func-returns-value]
    )
    if not loaded:
        return "state refused"
    for index in itertools.islice(sampler, 100):
        if not 0 <= index < loader.samples:
            raise Escape(f"OrderSampler gave {index} of {loader.samples}")
    return "read" if state is None else "read from a state"


_ORDER_SEEDS = [
    {"samples": 23, "seed": 5, "epoch": 1, "world": 3, "rank": 2},
    {"samples": 10**12, "seed": 2**64 - 1, "epoch": 2**40, "world": 8, "rank": 7},
    {"samples": 1, "seed": 0},
    {
        "samples": 23,
        "seed": 5,
        "world": 2,
        "rank": 1,
        "state": {"epoch": 0, "position": 8, "order": {"shuffle": True, "seed": 5}, "samples": 23},
    },
    {
        "samples": 23,
        "seed": 5,
        "state": {"epoch": 3, "position": 30, "order": {"shuffle": True, "seed": 5}, "samples": 23},
    },
]


def target_mixture(data: bytes, scratch: Path) -> str:
    """A mixture's inputs: a JSON object's ``sources`` (each a ``Source``'s keyword arguments),
    ``unit``, ``stop``, ``restart``, ``batch``, ``world``, ``duration``, ``edited`` (the
    sources of the mixture a resume at the plan's middle reads instead) and ``state`` (an
    ``OrderSampler`` state): ``Source``, ``Mixture``, ``Loader.mixing``, ``plan`` (every
    cursor at its end is the sum of what its calls read), ``step_indices`` (indices of the
    sources' concatenation), the checkpoint at its middle (it round-trips), the resume with
    the edited mixture, and ``OrderSampler`` (its ``load_state_dict`` of the state, then up to
    100 indices, each in the concatenation)."""
    from durations import Mixture, Source
    from durations.integrations.torch import OrderSampler
    from durations.order import step_indices

    try:
        fields = json.loads(data)
    except (ValueError, RecursionError):
        fields = None
    if not isinstance(fields, dict):
        fields = {"sources": _value(data)}

    def mixture_of(listed: object) -> Any:
        if not isinstance(listed, list):
            listed = [listed]
        sources = []
        for i, entry in enumerate(listed[:8]):
            given = entry if isinstance(entry, dict) else {"name": entry}
            arguments = {k: given[k] for k in _SOURCE_KEYS if k in given}
            arguments.setdefault("name", f"s{i}")
            arguments.setdefault("samples", 1)
            source = _api("Source", lambda a=arguments: Source(**a))  # type: ignore[misc]
            if source is None:
                return None
            sources.append(source)
        extra = {k: fields[k] for k in ("unit", "stop", "restart") if k in fields}
        return _api("Mixture", lambda: Mixture(sources=sources, **extra))

    mixture = mixture_of(fields.get("sources"))
    if mixture is None:
        return "refused"
    batch, world = fields.get("batch", 4), fields.get("world")
    loader = _api(
        "Loader.mixing",
        lambda: (
            Loader.mixing(mixture, batch_size=batch, name="m")
            if world is None
            else Loader.mixing(mixture, world_size=world, device_batch_size=batch, name="m")
        ),
    )
    if loader is None:
        return "refused"
    duration = fields.get("duration", "2ep" if loader.samples is not None else "40sp")
    call = _api("FitCall", lambda: FitCall(loader=loader, duration=duration, name="x"))
    if call is None:
        return "refused"
    run = _api("plan", lambda: plan(RunConfig(), [call]))
    if run is None or run.total_steps > 10**6:
        return "planned" if run is not None else "refused"
    end = run.cursors_at(run.total_steps)
    read = {r.name: r.stop for s in run.segments for r in s.sources}
    if end != read:
        raise Escape(f"cursors {end} are not what the calls read, {read}")
    for step in {1, run.total_steps} - {0}:
        for index in _api("step_indices", lambda k=step: step_indices(run, k)) or ():  # type: ignore[misc]
            if not 0 <= index < mixture.size:
                raise Escape(f"step_indices gave {index} of {mixture.size}")
    middle = run.checkpoint_at(run.total_steps // 2)
    if Checkpoint.from_dict(middle.to_dict()) != middle:
        raise Escape("a mixture's checkpoint does not round-trip through to_dict")
    if "edited" in fields:
        edited = mixture_of(fields["edited"])
        other = edited and _api("Loader.mixing", lambda: Loader.mixing(edited, batch_size=batch))
        if other:
            again = FitCall(loader=other, duration=duration, name="x")
            _api("plan (edited)", lambda: plan(RunConfig(), [again], middle))
    if loader.samples is None:
        return "planned"
    sampler = _api("OrderSampler", lambda: OrderSampler(None, loader, rank=0))
    if sampler is None:
        return "planned"
    state = fields.get("state")
    loaded = state is None or _api(
        "load_state_dict",
        lambda: sampler.load_state_dict(state) or True,  # type: ignore[func-returns-value]
    )
    if not loaded:
        return "state refused"
    for index in itertools.islice(sampler, 100):
        if not 0 <= index < mixture.size:
            raise Escape(f"OrderSampler gave {index} of {mixture.size}")
    return "read" if state is None else "read from a state"


#: The keyword arguments of ``Source`` an input's source may give (others are not an input).
_SOURCE_KEYS = (
    "name",
    "samples",
    "weight",
    "count",
    "repeats",
    "tokens_per_sample",
    "order",
    "wrap",
    "max_passes",
)

_MIXTURE_SEEDS = [
    {
        "sources": [
            {"name": "web", "samples": 23, "weight": 3, "order": None},
            {"name": "code", "samples": 7, "weight": "1/2", "wrap": "replay"},
        ],
        "batch": 4,
        "edited": [
            {"name": "web", "samples": 23, "weight": 1},
            {"name": "math", "samples": 5, "weight": 1},
        ],
    },
    {
        "sources": [
            {"name": "a", "samples": 10, "count": 4},
            {"name": "b", "samples": 3, "repeats": 2},
        ],
        "world": 3,
        "batch": 2,
        "state": {"epoch": 1, "position": 3, "order": {"shuffle": False, "seed": 0}, "samples": 10},
    },
    {
        "sources": [{"name": "a", "samples": 100, "weight": "0.3", "tokens_per_sample": 5}],
        "unit": "tok",
        "stop": "never",
        "duration": "100tok",
    },
    {
        "sources": [
            {"name": "a", "samples": 10**9, "weight": 1, "max_passes": 1},
            {"name": "b", "samples": 3, "weight": "0.001"},
        ],
        "stop": "all_exhausted",
        "restart": ["b"],
    },
]


#: Where a ``folders`` input is put, and as what kind of file (its first two bytes choose).
_PLACES = (
    "checkpoint-7/durations.json",
    "checkpoint-7/trainer_state.json",
    "step-7/durations.json",
)
_KINDS = ("file", "fifo", "device", "directory", "missing")


def target_folders(data: bytes, scratch: Path) -> str:
    """A checkpoint folder as the integrations find it on a resume: beside an older readable
    one (``checkpoint-3``, ``step-3``), a newer folder whose file (chosen by the input's first
    byte: the Hugging Face ledger, its ``trainer_state.json``, the Keras ledger) is of the kind
    the second byte chooses (the rest of the input as a regular file; a FIFO, which a careless
    reader waits on forever; ``/dev/zero``, which never ends; a directory; nothing). The folder
    readers, ``read_checkpoint``, ``latest_checkpoint`` and the command line must read it or
    refuse it, never hang or escape."""
    import shutil

    from durations.integrations.checkpoints import (
        TRANSFORMERS,
        latest_checkpoint,
        read_transformers_checkpoint,
    )
    from durations.integrations.keras import KERAS, read_keras_checkpoint

    place = _PLACES[data[0] % len(_PLACES)] if data else _PLACES[0]
    kind = _KINDS[data[1] % len(_KINDS)] if len(data) > 1 else "file"
    root = scratch / "run"
    shutil.rmtree(root, ignore_errors=True)
    older = SMALL_CHECKPOINT.read_bytes()
    for folder in ("checkpoint-3", "step-3"):
        (root / folder).mkdir(parents=True)
        (root / folder / "durations.json").write_bytes(older)
    path = root / place
    path.parent.mkdir(exist_ok=True)
    if kind == "file":
        path.write_bytes(data[2:])
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    folder = path.parent
    read = (
        read_keras_checkpoint if folder.name.startswith("step-") else read_transformers_checkpoint
    )
    found = _api(read.__name__, lambda: read(folder), oserror=True)
    _api("read_checkpoint(folder)", lambda: read_checkpoint(folder), oserror=True)
    if kind != "missing":
        _api("read_checkpoint(file)", lambda: read_checkpoint(path), oserror=True)
    reader = KERAS if folder.name.startswith("step-") else TRANSFORMERS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a folder skipped is said so
        latest = _api("latest_checkpoint", lambda: latest_checkpoint(root, reader=reader))
    if latest is None:
        raise Escape("latest_checkpoint lost the older readable folder")
    _cli("inspect", str(folder))
    _cli("plan", str(SMALL), "--resume-from", str(folder))
    if found is None:
        return "refused (the older folder taken)"
    return "read" if latest.path == str(folder) else "read (an older folder taken)"


#: What a hostile pickle would create if it ever ran: the torch target fails if it exists.
SENTINEL_NAME = "pickle-ran"


def target_torch(data: bytes, scratch: Path) -> str:
    """A Lightning ``.ckpt`` and a Composer ``.pt`` file: their readers, ``read_checkpoint``
    and ``durations inspect``. A pickle that would run code must be refused, and must not run."""
    from durations.integrations.checkpoints import (
        read_composer_checkpoint,
        read_lightning_checkpoint,
    )

    outcomes = []
    for suffix, read in ((".ckpt", read_lightning_checkpoint), (".pt", read_composer_checkpoint)):
        path = scratch / f"c{suffix}"
        path.write_bytes(data)
        found = _api(f"read {suffix}", lambda: read(path))  # noqa: B023 - called at once
        _api(f"read_checkpoint {suffix}", lambda: read_checkpoint(path))  # noqa: B023
        _cli("inspect", str(path))
        outcomes.append(found is not None)
    if (scratch / SENTINEL_NAME).exists():
        raise Escape("a pickle ran code: the sentinel exists")
    return {
        (True, True): "accepted (both)",
        (True, False): "accepted (Lightning)",
        (False, True): "accepted (Composer)",
    }.get((outcomes[0], outcomes[1]), "refused")


#: The script a ``schedule`` input is appended to: two calls on two loaders, named, so that
#: landmarks and every unit can be placed.
SCHEDULE_SCRIPT = """\
[run]
max_duration = "2ep"

[loaders.a]
samples = 100
batch_size = 10
tokens_per_sample = 4

[loaders.b]
samples = 60
batch_size = 10

[[fit]]
loader = "a"
name = "pretrain"

[[fit]]
loader = "b"
duration = "0.5ep"
name = "anneal"

"""


def target_schedule(data: bytes, scratch: Path) -> str:
    """A ``[schedule]`` and ``[events]`` of a scenario (the input, after a fixed two-call
    script): placed on the plan, the factor and the rate at its first, middle and last steps;
    ``durations plan FILE`` and ``--json``. Then every quoted string of the input as a factor
    (``Schedule.constant``, a drops ``gamma``) and as an interval (``Every``, ``At``)."""
    from durations import END, At, Every, Schedule

    text = SCHEDULE_SCRIPT + _text(data)
    scenario = _api("Scenario.from_toml", lambda: Scenario.from_toml(text, source="s.toml"))
    outcome = "refused"
    if scenario is not None:
        planned = _api("plan", lambda: plan(scenario.config, scenario.calls))
        if planned is not None and scenario.schedule is not None:
            curve = _api(
                "Schedule.resolve",
                lambda: scenario.schedule.resolve(planned, on_extend=scenario.on_extend),
            )
            if curve is not None:
                outcome = "placed"
                for step in sorted({curve.start, (curve.start + curve.end) // 2, curve.end}):
                    _api("ResolvedSchedule.factor", lambda: curve.factor(step))  # noqa: B023
                    _api("ResolvedSchedule.lr", lambda: curve.lr(step, 3e-4))  # noqa: B023
                _api("str(schedule)", lambda: str(curve.schedule))
        if planned is not None:
            for interval in scenario.events.values():
                found = _api("interval.resolve", lambda: interval.resolve(planned))  # noqa: B023
                if found is not None:
                    list(itertools.islice(found.steps(), 1000))
    path = scratch / "s.toml"
    path.write_bytes(SCHEDULE_SCRIPT.encode() + data)
    _cli("plan", str(path))
    _cli("plan", str(path), "--json")
    small = plan(RunConfig(max_duration="30ba"), [FitCall(loader=_LOADER)])
    for quoted in re.findall(r'"([^"\n]{0,300})"', _text(data))[:8]:
        _api("Schedule.constant(text)", lambda: Schedule.constant(quoted))  # noqa: B023
        drops = _api(
            "then_drops(gamma=text)",
            lambda: Schedule.constant().then_drops(at=["1ba"], gamma=quoted, until=END),  # noqa: B023
        )
        if drops is not None:
            _api("resolve(drops)", lambda: drops.resolve(small))  # noqa: B023
        for make in (lambda: Every(quoted), lambda: At([quoted])):  # noqa: B023
            interval = _api("Every/At(text)", make)
            if interval is not None:
                _api("interval.resolve", lambda: interval.resolve(small))  # noqa: B023
    return outcome if scenario is not None else "refused"


def target_plot(data: bytes, scratch: Path) -> str:
    """``durations plan FILE --plot OUT.svg`` on a scenario: drawn (an SVG where the command
    succeeded) or refused in one paragraph, whatever the names, schedule and events."""
    path = scratch / "s.toml"
    path.write_bytes(data)
    out = scratch / "plan.svg"
    out.unlink(missing_ok=True)
    code = _cli("plan", str(path), "--plot", str(out))
    if code in (0, 1) and not out.read_bytes().lstrip().startswith((b"<?xml", b"<svg")):
        raise Escape("the command succeeded without drawing the picture")
    return {0: "drawn", 1: "drawn (a plan with an error)"}.get(code, "refused")


_SCHEDULE_SEEDS = [
    '[schedule]\nwarmup = "10ba"\n\n[[schedule.pieces]]\nkind = "cosine"\nto = "0.1"\n'
    'until = "stop:pretrain"\n\n[[schedule.pieces]]\nkind = "linear"\nto = 0\nuntil = "end"\n',
    '[schedule]\ninitial = "1/3"\n\n[[schedule.pieces]]\nkind = "drops"\ngamma = "0.5"\n'
    'at = ["5ba", "0.5ep", "start:anneal"]\nuntil = "end"\n',
    '[schedule]\nwarmup = "0.1dur"\n\n[[schedule.pieces]]\nkind = "exponential"\nto = "0.01"\n'
    'until = "100sp"\n\n[[schedule.pieces]]\nkind = "inverse_sqrt"\nuntil = "end"\n',
    '[schedule]\nwarmup = "40tok"\n\n[[schedule.pieces]]\nkind = "constant"\nvalue = "2"\n'
    'until = "stop:#0"\n',
    '[events.checkpoint]\nevery = "0.25ep"\n\n[events.eval]\nat_call_ends = true\n\n'
    '[events.log]\nat = ["0.5dur", "stop:pretrain", "3ba"]\n',
    '[events.log]\nevery = "1ba"\n\n[events.other]\nevery = "7sp"\n',
]


def _schedule_seeds(scratch: Path) -> list[bytes]:
    seeds = [seed.encode() for seed in _SCHEDULE_SEEDS]
    for text in _files("examples/two-phase.toml"):
        seeds.append(text[text.index(b"[schedule]") :])  # its schedule and events
    return seeds


_FACTOR_TOKENS = tuple(
    f'"{text}"'.encode()
    for text in [
        "1/0",
        "0/0",
        "1e5000",
        "1e309",
        "1e100000000",
        "\u0661",
        " 0.5 ",
        "\u2003 0.5",
        "+1",
        "-0",
        "nan",
        "1_0",
        "1e-150",
        "0.123456789",
        "stop:pretrain",
        "start:#1",
        "end",
        "$\\bogus{x}$",
    ]
)

_NAME_TOKENS = tuple(
    f'name = "{text}"\n'.encode()
    for text in ["$\\bogus{x}$", "$x$", "\u0915\u094d", "\U0001f600", "a" * 300, "\\n"]
)


@attrs.frozen
class Target:
    name: str
    what: str
    run: Callable[[bytes, Path], str]
    seeds: Callable[[Path], list[bytes]]
    tokens: tuple[bytes, ...]
    needs: str | None = None
    structure: Callable[[bytes, random.Random], bytes | None] | None = None
    longest: int = MAX_INPUT


def _files(*patterns: str) -> list[bytes]:
    return [p.read_bytes() for pattern in patterns for p in sorted(ROOT.glob(pattern))]


_TIME_SEEDS = (
    "10ba 2.1ep 1e6tok 1/3ep 0.5dur 9007199254740993tok 1_000sp .5ep 12.ep 1E-3ep 0ba "
    "1e1000tok 2/0ep 10epochs 10 ep 1e-1001ba"
)


def _time_seeds(scratch: Path) -> list[bytes]:
    seeds = [s.encode() for s in _TIME_SEEDS.split(" ") if s]
    seeds += [b" 3ep\t", b"\xef\xbc\x91\xef\xbc\x90ba", b"1" * 300 + b"ba"]  # fullwidth 10ba
    for text in _files("examples/*.toml"):
        seeds += sorted(set(re.findall(rb'"([0-9][^"]*)"', text)))
    return seeds


_TRAINER_STATE = {
    "best_metric": None,
    "epoch": 1.3,
    "eval_steps": 500,
    "global_step": 13,
    "log_history": [{"epoch": 1.0, "loss": 2.5, "step": 10}],
    "logging_steps": 10,
    "max_steps": 23,
    "num_train_epochs": 3,
    "save_steps": 500,
    "train_batch_size": 8,
    "trial_name": None,
}


def _state_seeds(scratch: Path) -> list[bytes]:
    return [
        *_files("tests/golden/nan-epoch/trainer_state.json"),
        json.dumps(_TRAINER_STATE, indent=2).encode(),
        json.dumps({"global_step": 0}).encode(),
    ]


def _folder_seeds(scratch: Path) -> list[bytes]:
    """Each place as each kind, with a ledger or a ``trainer_state.json`` as the file."""
    texts = [*_files("tests/golden/checkpoint-v*.json"), *_state_seeds(scratch)]
    seeds = [bytes([p, k]) for p in range(len(_PLACES)) for k in range(1, len(_KINDS))]
    return seeds + [bytes([p, 0]) + text for p in range(len(_PLACES)) for text in texts]


#: Two bytes that choose a place and a kind of file (:func:`target_folders`).
_KIND_TOKENS = tuple(bytes([p, k]) for p in range(len(_PLACES)) for k in range(len(_KINDS)))


def _after_prefix(
    structure: Callable[[bytes, random.Random], bytes | None],
) -> Callable[[bytes, random.Random], bytes | None]:
    """``structure`` applied to an input past its two bytes of place and kind."""

    def mutated(data: bytes, rng: random.Random) -> bytes | None:
        edited = structure(data[2:], rng)
        return None if edited is None else data[:2] + edited

    return mutated


class _Runs:
    """A class whose pickle, if loaded by plain ``pickle``, calls ``os.mkdir(sentinel)``."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (self.path,))


def hostile_pickles(sentinel: Path) -> list[bytes]:
    """Pickles that run code when loaded (each creates ``sentinel``): raw, inside a torch
    zip checkpoint, and disguised as a Lightning and a Composer checkpoint."""
    import torch

    raw = [
        pickle.dumps(_Runs(sentinel), protocol=protocol)
        for protocol in (0, 2, pickle.HIGHEST_PROTOCOL)
    ]
    raw.append(pickle.dumps({"global_step": 3, "epoch": 0, "callbacks": _Runs(sentinel)}))
    wrapped = []
    for payload in (
        _Runs(sentinel),
        {"global_step": 3, "epoch": 0, "state_dict": {}, "hparams": _Runs(sentinel)},
        {"state": {"timestamp": {"epoch": 0}, "model": _Runs(sentinel)}},
    ):
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        wrapped.append(buffer.getvalue())
    return raw + wrapped


def _torch_seeds(scratch: Path) -> list[bytes]:
    import datetime

    import torch

    small = plan(
        RunConfig(max_duration="2ep"),
        [FitCall(loader=Loader(samples=100, batch_size=10, name="a"))],
    )
    stamp = {
        "epoch": 1, "batch": 13, "sample": 130, "token": 0, "batch_in_epoch": 3,
        "sample_in_epoch": 30, "token_in_epoch": 0, "total_wct": datetime.timedelta(seconds=5),
    }  # fmt: skip
    objects: list[object] = [
        {"epoch": 1, "global_step": 13, "state_dict": {"w": torch.zeros(2)}},
        {
            "epoch": 1,
            "global_step": 13,
            "loops": {
                "fit_loop": {
                    "epoch_loop.batch_progress": {"current": {"processed": 3}},
                    "state_dict": {"combined_loader": [{"a": 1}]},
                }
            },
        },
        {"epoch": 2, "global_step": 1, "durations": small.checkpoint_at(13).to_dict()},
        {"state": {"timestamp": stamp, "model": {}}, "rng": []},
        {"state": {"timestamp": stamp, "durations": small.checkpoint_at(3).to_dict()}},
        torch.zeros(2),
    ]
    seeds = []
    for thing in objects:
        buffer = io.BytesIO()
        torch.save(thing, buffer)
        seeds.append(buffer.getvalue())
    seeds.append(pickle.dumps({"epoch": 1, "global_step": 13}, protocol=2))
    return seeds + hostile_pickles(scratch / SENTINEL_NAME) + _odd_torch_files(seeds[2])


def _odd_torch_files(ledgered: bytes) -> list[bytes]:
    """Torch zips no torch.save writes, each of a class that escaped once: a ledger with an
    int key, with keys of mixed types, a value nested 100,000 deep (pickled by hand: pickle
    itself refuses such depth), and a zip bomb (the pickle deflated from megabytes)."""
    import torch

    seeds = []
    for ledger in ({1: 2}, {1: 2, "format": 4}, {"format": 4, (1, 2): "x"}):
        buffer = io.BytesIO()
        torch.save({"epoch": 2, "global_step": 1, "durations": ledger}, buffer)
        seeds.append(buffer.getvalue())
    deep = 100_000
    nested = (
        b"\x80\x02}(X\x0b\x00\x00\x00global_stepK\x03X\x09\x00\x00\x00durations}X\x06"
        b"\x00\x00\x00format" + b"]" * deep + b"a" * (deep - 1) + b"su."
    )
    for pickled, how in ((nested, zipfile.ZIP_STORED), (None, zipfile.ZIP_DEFLATED)):
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(ledgered)) as old, zipfile.ZipFile(out, "w") as new:
            for info in old.infolist():
                content = old.read(info.filename)
                if info.filename.endswith("data.pkl"):
                    content = pickled if pickled is not None else content + b"\0" * 2**22
                new.writestr(info, content, how)
        seeds.append(out.getvalue())
    return seeds


_VALUES: tuple[object, ...] = (
    0, 1, -1, 3, 13, 2**63, 10**300, 0.5, 1.3, float("nan"), float("inf"), -0.0, True, False,
    None, "", "10ba", "0.5ep", "1e6tok", "2.1ep", "0.5dur", "1/3ep", "x", "#0", "a", "b",
    "exact", "replay_epoch", "cycle", "\udc80", "1" * 300, [], {}, [1], {"a": 1},
)  # fmt: skip


def _nodes(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _replace(value: Any, path: tuple[object, ...], new: object) -> Any:
    if not path:
        return new
    value[path[0]] = _replace(value[path[0]], path[1:], new)
    return value


def mutate_json(data: bytes, rng: random.Random) -> bytes | None:
    """A structural edit of a JSON document: a value replaced by another of any type (or a
    copy of another node), a key deleted or added, a list element repeated, a huge string."""
    try:
        tree = json.loads(data)
    except (ValueError, RecursionError):
        return None
    for _ in range(rng.randint(1, 3)):
        paths = list(_nodes(tree))
        path = rng.choice(paths)
        choice = rng.randrange(6)
        if choice == 0 and path:
            parent = _replace(tree, (), tree)
            for step in path[:-1]:
                parent = parent[step]
            del parent[path[-1]]
        elif choice == 1:
            duplicate = json.loads(json.dumps(_at(tree, rng.choice(paths))))
            tree = _replace(tree, path, duplicate)
        elif choice == 2 and isinstance(_at(tree, path), dict):
            _at(tree, path)[rng.choice(["format", "extra", "name", "x" * rng.randint(1, 600)])] = (
                copy.deepcopy(rng.choice(_VALUES))
            )
        elif choice == 3 and isinstance(_at(tree, path), list) and _at(tree, path):
            # New values, never references to the same ones: a list of 20,000 references to a
            # list of 20,000 is 400 million values to write out (the large budget took 24 GB).
            items = _at(tree, path)
            _repeat(items, rng.choice([rng.randint(1, 50), 20_000 // len(items)]))
        elif choice == 4 and rng.random() < 0.5:
            tree = _replace(tree, path, "9" * rng.randint(300, 200_000))
        elif choice == 4:  # a counter just below Python's 4,300-digit limit, or at it
            tree = _replace(tree, path, int("9" * rng.choice([40, 309, 1000, 4299])))
        else:
            tree = _replace(tree, path, copy.deepcopy(rng.choice(_VALUES)))
    return json.dumps(tree).encode("utf-8", "surrogatepass")


def _repeat(items: list[Any], times: int) -> None:
    """Append ``items`` to itself ``times`` more times (fewer where that would pass an input's
    bound), as new values: never references to the same ones."""
    text = json.dumps(items)
    times = max(1, min(times, MAX_INPUT // len(text)))
    items.extend(item for _ in range(times) for item in json.loads(text))


def _at(tree: Any, path: tuple[object, ...]) -> Any:
    for step in path:
        tree = tree[step]
    return tree


def mutate_lines(data: bytes, rng: random.Random) -> bytes | None:
    """A line-level edit of a scenario: a line deleted, repeated or moved, the value after
    ``=`` replaced by another TOML value, or a whole table repeated up to 5,000 times."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        choice = rng.randrange(5)
        if choice == 4:
            # A table repeated: thousands of calls, pieces or event tables, the inputs whose
            # cost grows with their count (events listed per call, pieces chained).
            starts = [j for j, line in enumerate(lines) if line.startswith(b"[")] or [0]
            first = rng.choice(starts)
            after = [j for j in starts if j > first]
            block = lines[first : after[0] if after else len(lines)]
            copies = rng.choice([2, 100, 1000, 5000])
            # Newlines counted too: a block of empty lines is bytes all the same (uncounted,
            # 5,000 copies of 5,000 copies of empty lines ran a large run out of memory).
            if (sum(map(len, block)) + len(block)) * copies <= MAX_INPUT:
                lines[first:first] = block * copies
        elif choice == 0:
            del lines[i]
        elif choice == 1:
            lines[i:i] = [lines[i]] * rng.randint(1, 3)
        elif choice == 2:
            lines.insert(rng.randrange(len(lines) + 1), lines.pop(i))
        elif b"=" in lines[i]:
            key = lines[i].partition(b"=")[0]
            value = rng.choice(
                [b'"10ba"', b'"0.5ep"', b'"1e6tok"', b'"0.9dur"', b'"end"', b'"start:#1"', b"0",
                 b"-1", b"1", b"2", b"3", b"true", b"1.5", b"inf", b"nan", b'"a"', b'"b"', b"[]",
                 b'["1ba", "2ba"]', b"{}", b'"cycle"', b'"cosine"', b'"0.1"', b"10_000_000_000",
                 b'"' + b"x" * 1000 + b'"', b"2" * 500]
            )  # fmt: skip
            lines[i] = key + b"= " + value
        if not lines:
            lines = [b""]
    return b"\n".join(lines)


_JSON_TOKENS = (
    b"{", b"}", b"[", b"]", b"null", b"true", b"false", b"1e999", b"-1", b"NaN", b"Infinity",
    b'"', b":", b",", b"0.5", b'"format"', b'"ledger"', b'"progress"', b'"global_step"',
    b'"epoch"', b'"durations"', b'"cursors"', b'"mixture"', b'"sources"', b'"weight"',
    b'"1/3"', b'"samples"', b'"count"', b'"repeats"', b'"stop"', b'"never"', b'"name"',
    b"9" * 5000, b"[" * 100_000, b'"\\ud800"', b"\xff",
)  # fmt: skip

# -- the mutation engine ---------------------------------------------------------------------


def mutate(
    data: bytes,
    rng: random.Random,
    corpus: Sequence[bytes],
    tokens: Sequence[bytes],
    longest: int = MAX_INPUT,
) -> bytes:
    """One to four random edits of ``data``: bit flips, byte and token insertions, deletions,
    repeats, splices with another corpus entry, and (rarely) a huge repeat or a deep nest."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(out))
        choice = rng.randrange(10)
        if choice == 0 and out:
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif choice == 1:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif choice in (2, 3) and out:
            end = min(len(out), at + rng.randint(1, 16))
            del out[at:end]
        elif choice in (4, 5):
            out[at:at] = rng.choice(tokens)
        elif choice == 6 and out:
            start = rng.randrange(len(out))
            chunk = out[start : start + rng.randint(1, 64)]
            out[at:at] = chunk * rng.randint(1, 8)
        elif choice == 7 and corpus:
            other = rng.choice(corpus)
            cut = rng.randint(0, len(other))
            out = bytearray(out[:at] + other[cut:])
        elif choice == 8 and out:
            i = rng.randrange(len(out))
            out[i] = rng.choice(b"0123456789.-+eE/_ \n\"'[]{}=,:#\\")
        elif rng.random() < 0.2:
            piece = bytes(out[at : at + rng.randint(1, 8)]) or b"1"
            size = rng.randint(min(10_000, longest // 4), longest // 2)
            out[at:at] = piece * (size // len(piece))
    return bytes(out[:longest])


_PICKLE_TOKENS = (
    b"\x80\x02", b"c", b"builtins\nopen\n", b"R", b".", b"}", b"(", b"\x94", b"posix\nsystem\n",
    b"global_step", b"epoch", b"X\x0b\x00\x00\x00global_step", b"K\x0d", b"J\xff\xff\xff\xff",
    b"G\x7f\xf8\x00\x00\x00\x00\x00\x00", b"\x8a\x09" + b"\xff" * 9, b"N", b"\x88", b"s", b"u",
    b"]", b"e", b"t", b"h\x00", b"q\x00", b"\x93", b"\x81", b"b",
)  # fmt: skip


def mutate_torch(data: bytes, rng: random.Random) -> bytes | None:
    """An edit inside a torch zip checkpoint that keeps the container readable: the pickle
    ``data.pkl`` mutated, or another record dropped, emptied or mutated."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        records = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return None
    names = sorted(records)
    pickled = [name for name in names if name.endswith("data.pkl")]
    name = rng.choice(pickled) if pickled and rng.random() < 0.8 else rng.choice(names)
    choice = rng.randrange(4)
    if choice == 0 and len(names) > 1:
        del records[name]
    elif choice == 1:
        records[name] = b""
    else:
        records[name] = mutate(records[name], rng, [], _PICKLE_TOKENS)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as rewritten:
        for record, content in records.items():
            rewritten.writestr(record, content)
    return out.getvalue()


_TIME_TOKENS = (
    *(
        token.encode()
        for token in [
            "ba",
            "ep",
            "sp",
            "tok",
            "dur",
            "e",
            "E",
            "/",
            "_",
            ".",
            "-",
            "+",
            "0",
            "1",
            "5",
        ]
    ),
    # a space, a long number, a fullwidth and an Arabic-Indic 1, a NUL, a byte that is not UTF-8
    *(b" ", b"9" * 250, b"\xef\xbc\x91", b"\xd9\xa1", b"\x00", b"\xff"),
)

_TOML_TOKENS = (
    *(
        token.encode() + b"\n"
        for token in [
            "[[fit]]",
            "[run]",
            "[loaders.a]",
            "[resume]",
            "[schedule]",
            "[events.e]",
            "[[schedule.pieces]]",
            "[loaders.a.sources.web]",
            "[loaders.a.sources.code]",
        ]
    ),
    *(
        key.encode() + b" = "
        for key in [
            "loader",
            "samples",
            "batch_size",
            "world_size",
            "device_batch_size",
            "max_duration",
            "duration",
            "until",
            "kind",
            "every",
            "at",
            "checkpoint",
            "mode",
            "data",
            "padding",
            "order",
            "seed",
            "weight",
            "count",
            "repeats",
            "stop",
            "unit",
            "restart",
            "wrap",
            "max_passes",
        ]
    ),
    *(
        value.encode()
        for value in [
            '"a"',
            '"0.5dur"',
            '"end"',
            '"start:#0"',
            '"cosine"',
            '"shuffled"',
            '"sequential"',
            '"first_exhausted"',
            '"all_exhausted"',
            '"never"',
            '"replay"',
            '"1/3"',
            '["web"]',
            "0.3",
            "inf",
            "nan",
            "1e308",
            "-1",
            "0",
            "true",
            "{",
            "}",
            "=",
            '"',
            "1979-05-27T07:32:00Z",
            "0x7f",
        ]
    ),
    *(b"\n", b"9" * 5000, b"[" * 10_000, b"a." * 200, b"\xff"),
)

TARGETS: dict[str, Target] = {
    target.name: target
    for target in (
        Target(
            "time",
            "Time.parse, FitCall, RunConfig, durations convert",
            target_time,
            _time_seeds,
            _TIME_TOKENS,
        ),
        Target(
            "scenario",
            "Scenario.from_toml, durations plan FILE [--json | --indices STEP]",
            target_scenario,
            lambda scratch: _files("examples/*.toml", "tests/golden/*.toml"),
            _TOML_TOKENS,
            structure=mutate_lines,
        ),
        Target(
            "compare",
            "compare, durations compare FILE [--crash-at K] [--world-size N] [--json]",
            target_compare,
            lambda scratch: _files("examples/*.toml", "tests/golden/*.toml"),
            _TOML_TOKENS,
            structure=mutate_lines,
        ),
        Target(
            "audit",
            "StepLog.parse, audit, durations audit SCENARIO LOG [--json]",
            target_audit,
            _audit_seeds,
            _JSON_TOKENS,
            structure=mutate_lines,
        ),
        Target(
            "adapter",
            "conformance.answer, answer_as, Vector.from_dict on a request line",
            target_adapter,
            _adapter_seeds,
            _JSON_TOKENS,
        ),
        Target(
            "checkpoint",
            "read_checkpoint, the Hugging Face ledger reader, durations inspect, --resume-from",
            target_checkpoint,
            lambda scratch: _files("examples/checkpoints/*.json", "tests/golden/*.json"),
            _JSON_TOKENS,
            structure=mutate_json,
        ),
        Target(
            "trainer-state",
            "Hugging Face trainer_state.json: read_checkpoint, the integrations' reader, "
            "durations inspect, --resume-from",
            target_trainer_state,
            _state_seeds,
            _JSON_TOKENS,
            structure=mutate_json,
        ),
        Target(
            "schedule",
            "a scenario's [schedule] and [events]: placed, its factors and rates; durations "
            "plan FILE [--json]; Schedule and intervals from text",
            target_schedule,
            _schedule_seeds,
            (*_TOML_TOKENS, *_FACTOR_TOKENS),
            structure=mutate_lines,
            longest=2**16,
        ),
        Target(
            "plot",
            "durations plan FILE --plot OUT.svg (needs matplotlib)",
            target_plot,
            lambda scratch: _files("examples/*.toml", "tests/golden/*.toml"),
            (*_TOML_TOKENS, *_NAME_TOKENS, *_FACTOR_TOKENS),
            needs="matplotlib",
            structure=mutate_lines,
            # Each input draws a picture (a tenth of a second to a second): small scenarios.
            longest=2**14,
        ),
        Target(
            "folders",
            "the integrations' folder readers (Hugging Face checkpoint-N, Keras step-N), "
            "latest_checkpoint, read_checkpoint of a folder, durations inspect, --resume-from; "
            "files that are FIFOs, devices, directories or missing",
            target_folders,
            _folder_seeds,
            (*_JSON_TOKENS, *_KIND_TOKENS),
            structure=_after_prefix(mutate_json),
        ),
        Target(
            "order",
            "Order, Permutation, step_indices, OrderSampler and the state it loads",
            target_order,
            lambda scratch: [json.dumps(seed).encode() for seed in _ORDER_SEEDS],
            _JSON_TOKENS,
            structure=mutate_json,
        ),
        Target(
            "mixture",
            "Source, Mixture, Loader.mixing, plan, step_indices, checkpoints, an edited "
            "resume, OrderSampler and the state it loads",
            target_mixture,
            lambda scratch: [json.dumps(seed).encode() for seed in _MIXTURE_SEEDS],
            _JSON_TOKENS,
            structure=mutate_json,
        ),
        Target(
            "torch",
            "Lightning .ckpt and Composer .pt readers, read_checkpoint, durations inspect; "
            "hostile pickles",
            target_torch,
            _torch_seeds,
            (*_PICKLE_TOKENS, b"PK\x03\x04"),
            needs="torch",
            structure=mutate_torch,
            # torch's weights_only unpickler reads about 250,000 opcodes a second, linearly:
            # a megabyte of pickle through the six reads of an input would take most of the
            # per-input limit on a busy machine.
            longest=2**18,
        ),
    )
}


@attrs.define
class Tally:
    """What one target's run counted."""

    name: str
    inputs: int = 0
    outcomes: dict[str, int] = attrs.field(factory=dict)
    escapes: list[str] = attrs.field(factory=list)
    hangs: int = 0
    corpus: int = 0
    seconds: float = 0.0


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _signature(outcome: str, scratch: Path) -> str:
    """The outcome and what the input was told, without numbers, quoted values and the
    scratch path: an input with a new signature is kept in the corpus."""
    text = "\n".join([outcome, *_TOLD]).replace(str(scratch), "<scratch>")
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "Q", text)
    return re.sub(r"[0-9]+", "N", text)


def one(target: Target, data: bytes, scratch: Path, limit: float) -> tuple[str, str | None]:
    """Run one input: its outcome (for the corpus) and its escape, if any ('hang' for a hang)."""
    _TOLD.clear()
    try:
        # Warnings are not outcomes (torch warns of unusual pickle protocols, for one).
        with _alarm(limit), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = target.run(data, scratch)
    except Hang:
        return "hang", "hang"
    except Escape as escape:
        return f"escape {escape.kind}", escape.kind
    return outcome, None


def fuzz(
    target: Target,
    *,
    inputs: int,
    seed: int = 0,
    limit: float = LIMIT,
    crashes: Path | None = None,
    seconds: float | None = None,
) -> Tally:
    """Run ``target`` on its seeds, then on mutations of its corpus, until ``inputs`` inputs
    (or ``seconds`` seconds, whichever comes first) are tried."""
    tally = Tally(target.name)
    rng = random.Random(f"{target.name}:{seed}")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="durations-fuzz-") as name:
        scratch = Path(name)
        corpus = target.seeds(scratch)
        queue = list(corpus)
        seen: set[str] = set()
        while tally.inputs < inputs:
            if seconds is not None and time.perf_counter() - began > seconds:
                break
            if queue:
                data = queue.pop(0)
            else:
                parent = rng.choice(corpus)
                found = None
                if target.structure is not None and rng.random() < 0.5:
                    found = target.structure(parent, rng)
                if found is None or len(found) > target.longest:
                    found = mutate(parent, rng, corpus, target.tokens, target.longest)
                data = found
            outcome, escape = one(target, data, scratch, limit)
            tally.inputs += 1
            key = "escape" if escape and escape != "hang" else outcome
            tally.outcomes[key] = tally.outcomes.get(key, 0) + 1
            if escape == "hang":
                tally.hangs += 1
            elif escape is not None:
                tally.escapes.append(escape)
            if escape is not None and crashes is not None:
                crashes.mkdir(parents=True, exist_ok=True)
                (crashes / f"{target.name}-{tally.inputs}").write_bytes(data)
            signature = _signature(outcome if escape is None else f"escape {escape}", scratch)
            if signature not in seen:
                seen.add(signature)
                if len(data) <= 65_536 and len(corpus) < 5_000:
                    corpus.append(data)
    tally.corpus = len(corpus)
    tally.seconds = time.perf_counter() - began
    return tally


# -- budgets and figures ---------------------------------------------------------------------

#: Each budget: inputs per target, and the seconds each target may take at most (``None``: no
#: bound in time, so that the counts do not depend on the machine; the CI test compares them).
BUDGETS: dict[str, tuple[int, float | None]] = {"ci": (300, None), "large": (10**6, 150.0)}


def available(names: Sequence[str]) -> list[Target]:
    """The targets of ``names`` whose dependency is installed."""
    chosen = []
    for name in names:
        target = TARGETS[name]
        if target.needs is not None:
            try:
                __import__(target.needs)
            except ImportError:
                continue
        chosen.append(target)
    return chosen


def run(
    budget: str,
    names: Sequence[str],
    *,
    seed: int = 0,
    crashes: Path | None = None,
    inputs: int | None = None,
) -> list[Tally]:
    """Fuzz each of ``names`` whose dependency is installed, for ``budget`` (or ``inputs``)."""
    budgeted, seconds = BUDGETS[budget]
    inputs = budgeted if inputs is None else inputs
    return [
        fuzz(target, inputs=inputs, seed=seed, crashes=crashes, seconds=seconds)
        for target in available(names)
    ]


#: The targets of the default run; ``torch`` needs the frameworks environment.
PURE = (
    "time",
    "scenario",
    "schedule",
    "checkpoint",
    "trainer-state",
    "folders",
    "order",
    "mixture",
    "compare",
    "audit",
    "adapter",
)
BEGIN = "<!-- figures: begin (python -m tests.fuzz --budget {budget}{targets} --write-docs) -->"
END = "<!-- figures: end (fuzz {budget}{targets}) -->"


def marks(budget: str, names: Sequence[str]) -> tuple[str, str]:
    """The lines around the figures block of ``budget`` and these targets."""
    targets = "" if tuple(names) == PURE else " --targets " + ",".join(names)
    return BEGIN.format(budget=budget, targets=targets), END.format(budget=budget, targets=targets)


def figures(budget: str, tallies: Sequence[Tally], seed: int = 0) -> str:
    """The lines the doc shows: the budget, then per target its counts and its time."""
    inputs, seconds = BUDGETS[budget]
    bound = f"{inputs:,} inputs" if seconds is None else f"{seconds:.0f} s"
    lines = [
        f"- budget `{budget}`: {bound} per target, seed {seed}, at most {LIMIT:.0f} s an input"
    ]
    for tally in tallies:
        counts = ", ".join(f"{key} {n:,}" for key, n in sorted(tally.outcomes.items()))
        lines.append(
            f"- `{tally.name}`: {tally.inputs:,} inputs, escapes {len(tally.escapes):,}, "
            f"hangs {tally.hangs:,} ({counts}; corpus {tally.corpus:,}) in {tally.seconds:.1f} s"
        )
    total = sum(t.seconds for t in tallies)
    lines.append(f"- time: {total:.1f} s (one process, on this project's 2-core machine)")
    return "\n".join(lines)


#: A figures line without its time: what the CI test compares.
COUNTS = re.compile(r"(?P<counts>- `[\w-]+`: .*\)) in [0-9.]+ s")


def write_docs(budget: str, names: Sequence[str], text: str, doc: Path = DOC) -> None:
    content = doc.read_text(encoding="utf-8")
    begin, end = marks(budget, names)
    head, found, rest = content.partition(begin)
    if not found or end not in rest:
        raise SystemExit(f"{doc}: no block between {begin!r} and {end!r}")
    rest = rest.partition(end)[2]
    doc.write_text(f"{head}{begin}\n{text}\n{end}{rest}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="ci")
    parser.add_argument("--targets", default=",".join(PURE), help="comma-separated target names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crashes", type=Path, default=ROOT / "fuzz-crashes")
    parser.add_argument("--inputs", type=int, help="try this many inputs, not the budget's")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.write_docs and args.inputs is not None:
        parser.error("--write-docs writes the figures of a budget: drop --inputs")
    names = args.targets.split(",")
    tallies = run(args.budget, names, seed=args.seed, crashes=args.crashes, inputs=args.inputs)
    text = figures(args.budget, tallies, args.seed)
    print(text)
    for tally in tallies:
        for kind in sorted(set(tally.escapes)):
            print(f"escape in {tally.name}: {kind}", file=sys.stderr)
    if args.write_docs:
        write_docs(args.budget, [t.name for t in tallies], text)
    return 1 if any(t.escapes or t.hangs for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
