"""The fuzzers (``tests/fuzz.py``) on their CI budget, the figures they write into
``docs/reliability.md``, and the inputs they found that escaped, pinned one by one."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from durations import (
    Checkpoint,
    CheckpointFormatError,
    GeometryError,
    LedgerEntry,
    Loader,
    Order,
    Progress,
    Source,
    Time,
)
from durations.errors import DurationsError
from durations.integrations.checkpoints import read_transformers_checkpoint
from durations.order import Permutation
from durations.readers import ExternalState, read_checkpoint
from durations.scenario import Scenario, ScenarioError

from . import fuzz
from .fuzz import COUNTS, PURE, TARGETS, Tally, figures, marks, run, write_docs

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="module")
def ci() -> list[Tally]:
    """One run of the CI budget on every target that needs no framework."""
    return run("ci", PURE)


def test_ci_budget_finds_no_escape_and_no_hang(ci: list[Tally]) -> None:
    """Every target tries its whole budget, and no input escapes or hangs."""
    assert [t.name for t in ci] == list(PURE)
    for tally in ci:
        assert tally.inputs == fuzz.BUDGETS["ci"][0], tally.name
        assert (tally.escapes, tally.hangs) == ([], 0), tally.name
        assert sum(tally.outcomes.values()) == tally.inputs


def _block(text: str, budget: str, names: tuple[str, ...] = PURE) -> str:
    begin, end = marks(budget, names)
    return text.partition(begin)[2].partition(end)[0].strip()


def test_doc_figures_are_current(ci: list[Tally]) -> None:
    """docs/reliability.md shows the counts this run measured (times are not compared)."""
    shown = _block(fuzz.DOC.read_text(encoding="utf-8"), "ci").splitlines()
    measured = figures("ci", ci).splitlines()
    fix = "rewrite it: python -m tests.fuzz --budget ci --write-docs"
    assert shown[0] == measured[0], fix
    counts = [m["counts"] for m in map(COUNTS.fullmatch, shown[1:-1]) if m is not None]
    assert counts == [m["counts"] for m in map(COUNTS.fullmatch, measured[1:-1]) if m], fix


@pytest.mark.parametrize(
    ("budget", "names", "clean"),
    [("large", PURE, True), ("ci", ("torch",), True), ("large", ("torch",), False)],
)
def test_doc_shows_the_other_runs(budget: str, names: tuple[str, ...], clean: bool) -> None:
    """The large budget and the torch target (run in the frameworks environment) have their
    blocks, in the format the command writes; with no escape and no hang, except the torch
    target's large budget (its hangs are inside torch.load: docs/reliability.md, Known gaps)."""
    lines = _block(fuzz.DOC.read_text(encoding="utf-8"), budget, names).splitlines()
    assert lines[0].startswith(f"- budget `{budget}`: ")
    targets = [COUNTS.fullmatch(line) for line in lines[1:-1]]
    assert len(targets) == len(names)
    assert all(m is not None for m in targets)
    if clean:
        assert all(m is not None and ", escapes 0, hangs 0 (" in m["counts"] for m in targets)


def test_write_docs_replaces_only_its_block(tmp_path: Path) -> None:
    """--write-docs rewrites the marked block of its budget and leaves the rest as it was."""
    doc = tmp_path / "reliability.md"
    begin, end = marks("ci", PURE)
    doc.write_text(f"before\n{begin}\nold\n{end}\nafter\n", encoding="utf-8")
    write_docs("ci", PURE, "new", doc)
    assert doc.read_text(encoding="utf-8") == f"before\n{begin}\nnew\n{end}\nafter\n"


def test_an_escape_is_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The classification is not vacuous: a parser that raises a KeyError is an escape, and one
    that takes longer than the limit is a hang."""

    def broken(text: str, *, source: str = "") -> Scenario:
        raise KeyError(text[:10])

    monkeypatch.setattr(fuzz.Scenario, "from_toml", broken)
    kind = "Scenario.from_toml: KeyError: '[run]'"
    assert fuzz.one(TARGETS["scenario"], b"[run]", tmp_path, 10.0) == (f"escape {kind}", kind)

    def slow(text: str) -> Time:
        time.sleep(5)
        raise AssertionError("not reached")

    monkeypatch.setattr(fuzz.Time, "parse", slow)
    assert fuzz.one(TARGETS["time"], b"1ba", tmp_path, 0.2) == ("hang", "hang")


def test_a_long_message_is_an_escape(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A refusal whose message grows with the input is counted as an escape."""

    def verbose(text: str) -> Time:
        raise GeometryError("samples", "x" * (fuzz.MAX_MESSAGE + 1))

    monkeypatch.setattr(fuzz.Time, "parse", verbose)
    kind = "Time.parse: GeometryError message of 2,025 characters"
    assert fuzz.one(TARGETS["time"], b"1ba", tmp_path, 10.0) == (f"escape {kind}", kind)


# -- escapes found by fuzzing ----------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: Loader(samples=b"\0" * 1_000_000, batch_size=1),  # type: ignore[arg-type]
        lambda: Loader(samples=10, batch_size=2, name=[1] * 100_000),  # type: ignore[arg-type]
        lambda: Progress(epoch="9" * 1_000_000),  # type: ignore[arg-type]
        lambda: Progress(token=[0] * 100_000, token_in_epoch=None),  # type: ignore[arg-type]
        lambda: Scenario.from_toml('[run]\nmax_duration = ["' + "x" * 1_000_000 + '"]'),
        lambda: Scenario.from_toml("[" + "k" * 1_000_000 + "]"),
        lambda: Scenario.from_toml(
            '[loaders.b]\nbatch_size = 1\n[[fit]]\nloader = "' + "a" * 10**6 + '"'
        ),
        lambda: Scenario.from_toml(
            "[loaders." + "a" * 1_000_000 + ']\nsample = 1\n[[fit]]\nloader = "a"'
        ),
        lambda: Scenario.from_toml(
            '[loaders.a]\nbatch_size = 1\n[[fit]]\nloader = "a"\n[events.'
            + "e" * 1_000_000
            + "]\nevery = 1"
        ),
        lambda: Scenario.from_toml(
            "".join(f"[loaders.{'a' * 1_000}{i}]\nbatch_size = 1\n" for i in range(1_000))
            + '[[fit]]\nloader = "b"'
        ),
        # A table declared twice: Python's TOML reader quotes the key whole in its message
        # (found by the schedule target: a message of 5,093 characters).
        lambda: Scenario.from_toml(("[events." + "9" * 5_000 + "]\n") * 2),
        # Found by the order target: a sharded loader's and an order's numbers were repeated
        # whole (messages of 40,000 to 97,000 characters).
        lambda: Loader.sharded(samples=10, world_size=["x"] * 10_000, device_batch_size=1),  # type: ignore[arg-type]
        lambda: Loader.sharded(samples=10, world_size=1, device_batch_size=1, padding="p" * 10**6),
        lambda: Order.shuffled(seed=["x"] * 10_000),  # type: ignore[arg-type]
        lambda: Permutation(10, 0, "e" * 1_000_000),  # type: ignore[arg-type]
        # Found by the folders target's large budget: a ledger entry's name was repeated whole
        # in its validation message (142,191 characters).
        lambda: LedgerEntry(
            name="9" * 142_037,
            fingerprint="f",
            loader=Loader(samples=10, batch_size=2),
            duration=Time.parse("1ba"),
            until=Time.parse("2ba"),
            reset_time=False,
            start=Progress(),
            origin=Progress(),
            target=Time.parse("2ba"),
            finished=False,
        ),
        # Found by the mixture target: a source's name repeated whole (158,453 characters).
        lambda: Source(name="x" * 100_000, samples=0, weight=1),
    ],
)
def test_a_huge_bad_value_gives_a_short_message(make: object) -> None:
    """A megabyte of bad input is named by its start and its length, not repeated whole."""
    with pytest.raises(DurationsError) as raised:
        make()  # type: ignore[operator]
    assert len(str(raised.value)) < 1_000, str(raised.value)[:1_000]
    assert "characters" in str(raised.value)


def test_messages_of_huge_counters_and_long_ledgers_are_bounded() -> None:
    """A 4,299-digit counter (just below Python's limit) is named by its size, and 20,000
    ledger entries of one name name it once (messages of 4,456 and 120,080 characters)."""
    start = Checkpoint.from_dict(json.loads((GOLDEN / "checkpoint-v3.json").read_text()))
    assert start.ledger is not None
    big = int("9" * 4299)
    with pytest.raises(DurationsError) as raised:
        Progress(batch=big, sample=13)
    assert str(raised.value) == (
        "inconsistent progress sample: sample=13 is less than batch=(an int of 14,281 bits); "
        "every step trains at least one sample"
    )
    with pytest.raises(CheckpointFormatError) as raised:
        Checkpoint(progress=start.progress, ledger=(start.ledger[0],) * 20_000)
    assert str(raised.value) == (
        "invalid checkpoint data: duplicate call names in the ledger (20,000 entries): "
        f"{start.ledger[0].name!r} appear more than once; each call of a script has its own name"
    )


def test_a_checkpoint_with_many_unknown_keys_names_five(tmp_path: Path) -> None:
    """Unknown keys are listed up to five, then counted."""
    data = json.loads((GOLDEN / "checkpoint-v3.json").read_text())
    data.update({f"k{i}": 0 for i in range(10_000)})
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointFormatError) as raised:
        read_checkpoint(path)
    assert str(raised.value) == (
        "invalid checkpoint data: unknown keys ['k0', 'k1', 'k10', 'k100', 'k1000', and 9,995 "
        "more]; this version of durations writes no such keys"
    )


def test_an_integer_past_python_s_digit_limit_is_refused(tmp_path: Path) -> None:
    """An integer of 5,000 digits in a scenario or a checkpoint is bad input, not a ValueError
    from int() (found by fuzzing: a traceback from `durations plan` and `inspect`)."""
    with pytest.raises(ScenarioError) as raised:
        Scenario.from_toml("[run]\nx = " + "1" * 5_000)
    assert str(raised.value) == (
        "<scenario>: invalid TOML: an integer with more digits than Python converts (4,300 "
        "unless configured); no scenario needs one"
    )
    for name, text in [
        ("c.json", '{"format": ' + "1" * 5_000 + "}"),
        ("trainer_state.json", '{"global_step": ' + "1" * 5_000 + "}"),
    ]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(CheckpointFormatError, match="an integer of more than 4,300 digits"):
            read_checkpoint(path)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("trainer_state.json", "[" * 100_000, "nests JSON arrays or objects too deeply"),
        ("durations.json", "[" * 100_000, "nests JSON arrays or objects too deeply"),
        ("trainer_state.json", '{"global_step": 1' + "0" * 5_000 + "}", "4,300 digits"),
        ("trainer_state.json", '{"global_step": 3, "epoch": NaN}', "expected a finite number"),
        ("trainer_state.json", '{"global_step": 3, "epoch": Infinity}', "expected a finite"),
    ],
)
def test_the_hugging_face_reader_refuses_what_it_cannot_read(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    """read_transformers_checkpoint turns deep nesting, huge integers and a NaN or infinite
    epoch into a format error (found by fuzzing: RecursionError, ValueError, OverflowError)."""
    directory = tmp_path / "checkpoint-3"
    directory.mkdir()
    (directory / name).write_text(text)
    with pytest.raises(CheckpointFormatError, match=message):
        read_transformers_checkpoint(directory)


def test_a_key_of_many_dotted_parts_is_refused_at_once() -> None:
    """A table header of 200,000 dotted parts is refused before tomllib reads it: tomllib takes
    time to the square of the parts (found by fuzzing: 400 KB took 290 s)."""
    began = time.perf_counter()
    with pytest.raises(ScenarioError) as raised:
        Scenario.from_toml("[run]\n[loaders" + ".s" * 200_000 + "]\n")
    assert time.perf_counter() - began < 5
    assert str(raised.value) == (
        "<scenario>: invalid TOML: line 2 has a dotted key of more than 100 parts; Python's TOML "
        "reader takes time to the square of the parts, and a scenario's keys have at most 3"
    )


def test_a_key_of_a_few_dotted_parts_is_read() -> None:
    """The bound refuses nothing a scenario writes: dotted keys, quoted names with dots."""
    scenario = Scenario.from_toml(
        '[run]\nmax_duration = "2ep"\n[loaders."a.b.c"]\nsamples = 10\nbatch_size = 2\n'
        '[[fit]]\nloader = "a.b.c"\n[events . "every.step"]\nevery = "1ba"\n'
    )
    assert [call.loader.name for call in scenario.calls] == ["a.b.c"]
    assert list(scenario.events) == ["every.step"]


# -- the integrations' readers: the bounds of the command line's reader --------------------------


def _special(kind: str, path: Path) -> None:
    """Make ``path`` a file of ``kind`` that a careless reader would wait on or never finish."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()


def _folder_readers() -> list[tuple[str, str, Callable[[Path], object]]]:
    from durations.integrations.keras import read_keras_checkpoint

    return [
        ("hf ledger", "checkpoint-3/durations.json", read_transformers_checkpoint),
        ("hf state", "checkpoint-3/trainer_state.json", read_transformers_checkpoint),
        ("keras ledger", "step-3/durations.json", read_keras_checkpoint),
        ("cli, hf folder", "checkpoint-3/durations.json", read_checkpoint),
        ("cli, hf state", "checkpoint-3/trainer_state.json", read_checkpoint),
    ]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
@pytest.mark.parametrize("reader", range(5), ids=[r[0] for r in _folder_readers()])
def test_the_integrations_readers_refuse_what_is_not_a_file(
    tmp_path: Path, kind: str, reader: int
) -> None:
    """A FIFO (which would wait for a writer), a device (``/dev/zero`` never ends) or a
    directory where a reader expects its JSON is refused at once with an OSError naming the
    file and its kind, as the command line's reader refuses it (they share durations/_files.py)."""
    _, inside, read = _folder_readers()[reader]
    target = tmp_path / inside
    target.parent.mkdir()
    _special(kind, target)
    begun = time.monotonic()
    with pytest.raises(OSError, match="not a regular file") as raised:
        read(target.parent)
    assert time.monotonic() - begun < 5
    assert raised.value.filename == str(target)


def test_latest_checkpoint_skips_a_fifo_and_takes_the_rest(tmp_path: Path) -> None:
    """On a resume, a checkpoint folder whose ledger is a FIFO is skipped with a warning, not
    waited on: the newest readable one is taken."""
    from durations.integrations.checkpoints import TRANSFORMERS, latest_checkpoint

    good = tmp_path / "checkpoint-2"
    good.mkdir()
    (good / "durations.json").write_text((GOLDEN / "checkpoint-v4.json").read_text())
    bad = tmp_path / "checkpoint-9"
    bad.mkdir()
    os.mkfifo(bad / "durations.json")
    with pytest.warns(RuntimeWarning, match=r"skipping .*checkpoint-9.*not a regular file"):
        found = latest_checkpoint(tmp_path, reader=TRANSFORMERS)
    assert found is not None
    assert found.path == str(good)


def test_the_integrations_readers_bound_the_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger past the bound is refused before it is decoded, by every reader (the bound is
    lowered here so that the test writes kilobytes, not 64 MiB)."""
    from durations import _files
    from durations.integrations.keras import read_keras_checkpoint

    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 1_000)
    for folder, read in (
        ("checkpoint-1", read_transformers_checkpoint),
        ("step-1", read_keras_checkpoint),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "durations.json").write_text(" " * 1_001 + "{}")
        with pytest.raises(OSError, match="larger than 1,000 bytes"):
            read(tmp_path / folder)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        # Reason: repr of a list nested past the recursion limit raises RecursionError.
        ("deep", "(a list nested too deeply to show)"),
        # Reason: repr of an int past 4,300 digits raises ValueError, inside a container too.
        ("long int", "(a list holding an int too long to show)"),
    ],
)
def test_a_value_repr_cannot_show_is_named_by_its_kind(value: str, shown: str) -> None:
    """A checkpoint field holding such a value is refused with a short message, not a
    traceback (found on the torch readers: a ledger field nested 100,000 deep)."""
    data = json.loads((GOLDEN / "checkpoint-v4.json").read_text())
    if value == "deep":
        nested: list[object] = []
        for _ in range(100_000):
            nested = [nested]
        data["format"] = nested
    else:
        data["format"] = [int("9" * 4_299) * 10**10]
    with pytest.raises(CheckpointFormatError) as raised:
        Checkpoint.from_dict(data)
    assert (
        str(raised.value)
        == f"invalid checkpoint data at format: expected a whole number, got {shown}"
    )


def test_a_scenario_of_too_many_calls_is_refused() -> None:
    """1,000 [[fit]] tables are read; 1,001 are refused at once, saying the bound (found by the
    large scenario budget: 5,000 calls printed 5.5 MB with --json)."""
    head = "[loaders.a]\nsamples = 10\nbatch_size = 2\n"
    assert len(Scenario.from_toml(head + '[[fit]]\nloader = "a"\n' * 1_000).calls) == 1_000
    with pytest.raises(ScenarioError) as raised:
        Scenario.from_toml(head + '[[fit]]\nloader = "a"\n' * 1_001)
    assert str(raised.value) == (
        "<scenario>: fit: 1,001 [[fit]] tables; a scenario file has at most 1,000 (a "
        "script has a handful; plan() itself takes any number)"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        # Reason: a checkpoint format of 4,000 digits (just under Python's limit) is shown by
        # its size, not whole (found by the large checkpoint budget: 4,429 characters).
        ("format", "format (an int of 13,288 bits) is newer"),
        # Reason: the same for a sharded loader's batch size in a ledger entry (4,495).
        ("batch_size", "got (an int of 13,288 bits); build it with Loader.sharded"),
    ],
)
def test_huge_numbers_of_a_checkpoint_are_named_by_size(value: str, shown: str) -> None:
    from durations import FitCall, RunConfig, plan

    job = Loader.sharded(samples=10, world_size=2, device_batch_size=2, name="a")
    data = plan(RunConfig(max_duration="1ep"), [FitCall(loader=job)]).checkpoint_at(1).to_dict()
    huge = int("9" * 4_000)
    if value == "format":
        data["format"] = huge
    else:
        data["ledger"][0]["loader"]["batch_size"] = huge
    with pytest.raises(CheckpointFormatError) as raised:
        Checkpoint.from_dict(data)
    assert shown in str(raised.value)
    assert len(str(raised.value)) < 400


def test_a_huge_integer_epoch_is_read_exactly(tmp_path: Path) -> None:
    """A trainer_state.json epoch that is an integer past a float's range is read as the exact
    integer (it raised OverflowError: found by the large trainer-state budget), by the command
    line's reader and the integrations'."""
    directory = tmp_path / "checkpoint-3"
    directory.mkdir()
    (directory / "trainer_state.json").write_text('{"global_step": 3, "epoch": 1' + "0" * 400 + "}")
    found = read_checkpoint(directory)
    assert isinstance(found, ExternalState)
    assert found.epoch == 10**400
    assert read_transformers_checkpoint(directory).progress.epoch == 10**400


def test_the_json_mutator_repeats_values_not_references() -> None:
    """The engine's own bound: the structural edit that repeats a list appends new values
    within an input's bound, never references to the same ones (a list of 20,000 references to
    a list of 20,000 writes out 400 million values: the large budget took 24 GB so)."""
    inner = [0] * 100
    items = [inner]
    fuzz._repeat(items, 20_000)
    assert len({id(item) for item in items}) == len(items) > 1
    assert items[1] == inner
    assert len(json.dumps(items)) <= 2 * fuzz.MAX_INPUT
