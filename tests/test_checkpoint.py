"""Checkpoints: the versioned JSON form round-trips, golden files stay readable, bad data is
rejected with the place it is wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, strategies as st

from durations import (
    Checkpoint,
    CheckpointFormatError,
    FitCall,
    Loader,
    Order,
    Progress,
    ResumeMode,
    RunConfig,
    Time,
    plan,
)
from durations.checkpoint import TakenUp
from durations.order import step_indices

from .strategies import scripts

GOLDEN = Path(__file__).parent / "golden"


@given(scripts(), st.data())
def test_round_trip(script: tuple[RunConfig, tuple[FitCall, ...]], data: st.DataObject) -> None:
    """from_dict(to_dict(c)) == c, through JSON text too, for checkpoints of generated plans."""
    config, calls = script
    p = plan(config, calls)
    checkpoint = p.checkpoint_at(data.draw(st.integers(0, p.total_steps)))
    assert Checkpoint.from_dict(checkpoint.to_dict()) == checkpoint
    assert Checkpoint.from_dict(json.loads(json.dumps(checkpoint.to_dict()))) == checkpoint


def test_without_ledger_round_trips() -> None:
    """A foreign checkpoint (no ledger) keeps ledger=None, not an empty ledger."""
    checkpoint = Checkpoint.from_dict(
        {
            "format": 1,
            "loader_state": False,
            "ledger": None,
            "progress": {
                "epoch": 1, "batch": 13, "sample": 130, "token": None,
                "batch_in_epoch": 3, "sample_in_epoch": 30, "token_in_epoch": None,
            },
        }
    )  # fmt: skip
    assert checkpoint.ledger is None
    assert Checkpoint.from_dict(checkpoint.to_dict()) == checkpoint


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("checkpoint-v*.json")), ids=lambda p: p.name)
def test_golden_files_load(path: Path) -> None:
    """Every checkpoint format ever written still loads; a checkpoint that is written in its
    file's format (format 4 without an ordered loader, format 5 with one) writes back
    unchanged."""
    data = json.loads(path.read_text())
    checkpoint = Checkpoint.from_dict(data)
    if data["format"] >= 4:
        assert checkpoint.to_dict() == data


def test_golden_v4_continues_its_extension() -> None:
    """The pinned format-4 checkpoint (step 10 of an extension taken up at the end of the
    two-phase run) continues that extension when its extend script is run again (rule 9): it
    resumes to the extension's stored target, 15 more steps, not 25 from here."""
    curated = Loader(samples=200, batch_size=8, tokens_per_sample=16, name="curated")
    checkpoint = Checkpoint.from_dict(json.loads((GOLDEN / "checkpoint-v4.json").read_text()))
    assert checkpoint.taken_up == TakenUp(ResumeMode.EXTEND, 67)
    config = RunConfig(max_duration="2ep", resume="extend")
    again = plan(config, [FitCall(loader=curated, duration="1ep", name="more")], checkpoint)
    assert [(s.action.value, s.steps) for s in again.segments] == [("resume", 15)]
    assert again.stop.batch == 92


@pytest.mark.parametrize("version", [1, 2, 3])
def test_golden_resumes_the_two_phase_run(version: int) -> None:
    """The pinned checkpoints (step 65 of the two-phase run) resume to the same end; format 3
    pins a data-parallel pretraining loader (4 ranks of 8: the same global batch)."""
    pretrain = Loader(samples=1_000, batch_size=32, tokens_per_sample=16, name="pretrain")
    if version >= 3:
        pretrain = Loader.sharded(
            samples=1_000, world_size=4, device_batch_size=8, tokens_per_sample=16, name="pretrain"
        )
    curated = Loader(samples=200, batch_size=8, tokens_per_sample=16, name="curated")
    calls = [FitCall(loader=pretrain), FitCall(loader=curated, duration="0.1ep", name="anneal")]
    config = RunConfig(max_duration="2ep")
    path = GOLDEN / f"checkpoint-v{version}.json"
    checkpoint = Checkpoint.from_dict(json.loads(path.read_text()))
    resumed = plan(config, calls, checkpoint)
    assert resumed.stop == plan(config, calls).stop
    assert resumed.total_steps == 2


def _golden() -> dict[str, Any]:
    return json.loads((GOLDEN / "checkpoint-v3.json").read_text())  # type: ignore[no-any-return]


def test_version_1_anchors_on_finished_targets() -> None:
    """Format 1 had no anchor: a finished call's target is its anchor when read."""
    data = json.loads((GOLDEN / "checkpoint-v1.json").read_text())
    ledger = Checkpoint.from_dict(data).ledger
    assert ledger is not None
    assert [e.anchor for e in ledger] == [e.target if e.finished else None for e in ledger]


def _broken(edit: str) -> dict[str, Any]:
    data = copy.deepcopy(_golden())
    exec(edit, {"d": data})
    return data


# (edit applied to the golden checkpoint, the place named, the reason)
MALFORMED = [
    ("d['format'] = 7", "format", "format 7 is newer than this version of durations reads"),
    ("d['format'] = 4", "taken_up", "missing"),  # format 4 records how the run was taken up
    (
        "d['ledger'][0]['loader']['sharding']['padding'] = 'pad'",
        "ledger[0].loader.sharding",
        "invalid loader padding: expected one of 'repeat', 'drop', 'cycle', got 'pad'",
    ),
    (
        "d['ledger'][0]['loader']['batch_size'] = 16",
        "ledger[0].loader",
        "a sharded loader's batch_size is world_size x device_batch_size x accumulation = 32",
    ),
    ("del d['ledger'][0]['loader']['sharding']", "ledger[0].loader.sharding", "missing"),
    ("d['ledger'][0]['anchor'] = 5", "ledger[0].anchor", "expected a string, got 5"),
    ("d['format'] = 0", "format", "unknown format 0"),
    ("d['format'] = '1'", "format", "expected a whole number, got '1'"),
    ("del d['format']", "format", "missing"),
    ("d['surprise'] = 1", "", "unknown keys ['surprise']"),  # nothing is silently dropped
    ("del d['progress']['sample']", "progress.sample", "missing"),
    ("d['progress']['batch'] = -1", "progress", "expected a whole number >= 0"),
    ("d['progress']['batch'] = True", "progress.batch", "expected a whole number, got True"),
    ("d['progress']['batch_in_epoch'] = 10**6", "progress", "exceeds the lifetime batch"),
    ("d['loader_state'] = 'yes'", "loader_state", "expected true or false"),
    ("d['ledger'] = {}", "ledger", "expected a list or null"),
    ("d['ledger'][0]['target'] = '2 ep'", "ledger[0].target", "whitespace inside"),
    ("d['ledger'][0]['loader']['batch_size'] = 0", "ledger[0].loader", "invalid loader batch_size"),
    ("d['ledger'][0]['stop'] = None", "ledger[0]", "is finished but has no stop"),
    ("d['ledger'][1]['name'] = d['ledger'][0]['name']", "", "duplicate call names"),
    ("d['ledger'][0]['extra'] = 1", "ledger[0]", "unknown keys ['extra']"),
    ("d['ledger'] = [1]", "ledger[0]", "expected an object, got int"),
]

# (edit applied to the golden format-4 checkpoint, the place named, the reason)
MALFORMED_V4 = [
    (  # a continue run keeps the record it found: it never takes a run up itself
        "d['taken_up']['mode'] = 'continue'",
        "taken_up.mode",
        "expected 'extend' or 'weights', got 'continue'",
    ),
    ("d['taken_up']['step'] = -1", "taken_up", "expected a whole number >= 0"),
    ("d['taken_up']['step'] = 2.5", "taken_up.step", "expected a whole number, got 2.5"),
    ("del d['taken_up']['step']", "taken_up.step", "missing"),
    ("d['taken_up']['when'] = 1", "taken_up", "unknown keys ['when']"),
    ("d['taken_up'] = 'extend'", "taken_up", "expected an object, got str"),
]


# (edit applied to the golden format-5 checkpoint, the place named, the reason)
MALFORMED_V5 = [
    ("del d['ledger'][0]['loader']['order']", "ledger[0].loader.order", "missing"),
    (  # an order is an object, as Order's fields
        "d['ledger'][0]['loader']['order'] = 'shuffled'",
        "ledger[0].loader.order",
        "expected an object, got str",
    ),
    (
        "d['ledger'][0]['loader']['order']['shuffle'] = 1",
        "ledger[0].loader.order.shuffle",
        "expected true or false, got 1",
    ),
    (
        "d['ledger'][0]['loader']['order']['seed'] = -1",
        "ledger[0].loader.order",
        "expected a whole number from 0 to",
    ),
    (
        "d['ledger'][0]['loader']['order']['seed'] = 2**64",
        "ledger[0].loader.order",
        "expected a whole number from 0 to",
    ),
    ("del d['ledger'][0]['loader']['order']['seed']", "ledger[0].loader.order.seed", "missing"),
    (
        "d['ledger'][0]['loader']['order']['key'] = 1",
        "ledger[0].loader.order",
        "unknown keys ['key']",
    ),
    (  # an order of each epoch needs epochs: a stream of unknown length has none
        "d['ledger'][0]['loader']['samples'] = None",
        "ledger[0].loader",
        "a stream of unknown length has no epochs",
    ),
    (  # format 4 has no order: a format-4 reader would drop it silently
        "d['format'] = 4",
        "ledger[0].loader",
        "unknown keys ['order']",
    ),
]


def test_format_is_the_oldest_that_holds_the_ledger() -> None:
    """A checkpoint is written in format 5 exactly when a loader of its ledger has an order,
    so a run without one stays readable where format 4 is the newest read."""
    plain = Loader(samples=100, batch_size=10, name="a")
    config = RunConfig(max_duration="1ep")
    for loader, version in (
        (plain, 4),
        (attrs.evolve(plain, order=Order.sequential()), 5),
        (attrs.evolve(plain, order=Order.shuffled(seed=3)), 5),
    ):
        checkpoint = plan(config, [FitCall(loader=loader)]).checkpoint_at(4)
        data = checkpoint.to_dict()
        assert data["format"] == version
        assert Checkpoint.from_dict(json.loads(json.dumps(data))) == checkpoint


def test_golden_v5_resumes_its_order() -> None:
    """The pinned format-5 checkpoint (step 40 of the two-phase run, its pretraining shuffled
    with seed 2026 on 4 ranks) resumes to the uninterrupted end with its order, and the plan's
    steps after it read what the uninterrupted run's do; on 3 ranks, the rest of the epoch
    reads each sample the 4 ranks had not read yet once (rule 19)."""
    order = Order.shuffled(seed=2026)
    pretrain = Loader.sharded(
        samples=1_000, world_size=4, device_batch_size=8, tokens_per_sample=16,
        name="pretrain", order=order,
    )  # fmt: skip
    curated = Loader(
        samples=200, batch_size=8, tokens_per_sample=16, name="curated", order=Order.sequential()
    )
    calls = [FitCall(loader=pretrain), FitCall(loader=curated, duration="0.1ep", name="anneal")]
    config = RunConfig(max_duration="2ep")
    checkpoint = Checkpoint.from_dict(json.loads((GOLDEN / "checkpoint-v5.json").read_text()))
    whole = plan(config, calls)
    resumed = plan(config, calls, checkpoint)
    assert resumed.stop == whole.stop
    assert [d.code for d in resumed.diagnostics] == [d.code for d in whole.diagnostics]
    for k, rank in ((41, 1), (64, 3), (65, 0), (67, 0)):  # the anneal is one process
        assert step_indices(resumed, k - 40, rank=rank) == step_indices(whole, k, rank=rank)
    on3 = [FitCall(loader=pretrain.with_world_size(3)), calls[1]]
    elastic = plan(config, on3, checkpoint)
    assert elastic.segments[0].start.sample_in_epoch == 256  # 8 steps of 32 into epoch 1
    rest = [  # 744 samples on 3 ranks of 8: 31 steps, nothing to even
        i for k in range(1, 32) for r in range(3) for i in step_indices(elastic, k, rank=r)
    ]
    read = [i for k in range(33, 41) for r in range(4) for i in step_indices(whole, k, rank=r)]
    assert sorted(read + rest) == list(range(1_000))


def test_another_order_is_another_stream() -> None:
    """Resumed with another seed (or without the order), the checkpoint's position would read
    other samples: the call starts a new epoch and says so, naming both orders (rule 14)."""
    checkpoint = Checkpoint.from_dict(json.loads((GOLDEN / "checkpoint-v5.json").read_text()))
    for order, named in (
        (Order.shuffled(seed=7), "shuffled, seed 7"),
        (None, "the job's own order"),
    ):
        pretrain = Loader.sharded(
            samples=1_000, world_size=4, device_batch_size=8, tokens_per_sample=16,
            name="pretrain", order=order,
        )  # fmt: skip
        resumed = plan(RunConfig(max_duration="2ep"), [FitCall(loader=pretrain)], checkpoint)
        changed = [d for d in resumed.diagnostics if d.code == "loader-changed"]
        assert len(changed) == 1
        assert changed[0].message == (
            f"the loader of call '#0' changed since it started (its order: shuffled, seed 2026 "
            f"-> {named}; resume with the order it started with to go on in its epoch); the data "
            "position of the checkpoint does not apply to it: it starts a new epoch"
        )
        assert resumed.segments[0].start.at_epoch_start


@pytest.mark.parametrize(("edit", "where", "reason"), MALFORMED_V4)
def test_malformed_taken_up(edit: str, where: str, reason: str) -> None:
    """A malformed ``taken_up`` record is rejected with its place and the reason."""
    data = json.loads((GOLDEN / "checkpoint-v4.json").read_text())
    exec(edit, {"d": data})
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(data)
    assert info.value.path == where
    assert reason in str(info.value)


@pytest.mark.parametrize(("edit", "where", "reason"), MALFORMED)
def test_malformed(edit: str, where: str, reason: str) -> None:
    """Each malformed checkpoint is rejected with the place in the data and the reason."""
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(_broken(edit))
    assert info.value.path == where
    assert reason in str(info.value)
    assert isinstance(info.value, ValueError)


def test_not_an_object() -> None:
    """A JSON list, string or number is not a checkpoint."""
    with pytest.raises(CheckpointFormatError, match="expected an object, got list"):
        Checkpoint.from_dict([])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (  # the ledger is a list of entries, or null for a foreign checkpoint
            "d['ledger'] = {}",
            "invalid checkpoint data at ledger: expected a list or null",
        ),
        (  # only the token counters may be unknown (null)
            "d['progress']['epoch'] = None",
            "invalid checkpoint data at progress.epoch: expected a whole number, got None",
        ),
        (  # every key is required, null or not
            "del d['progress']['token']",
            "invalid checkpoint data at progress.token: missing",
        ),
        (  # a loader's name is text or null, nothing else
            "d['ledger'][0]['loader']['name'] = 5",
            "invalid checkpoint data at ledger[0].loader.name: expected a string, got 5",
        ),
        (  # a flag is JSON true or false, not a word for it; the message shows what came
            "d['loader_state'] = 'yes'",
            "invalid checkpoint data at loader_state: expected true or false, got 'yes'",
        ),
    ],
)
def test_malformed_message(edit: str, message: str) -> None:
    """The whole message of a rejected checkpoint: where, and what was expected."""
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(_broken(edit))
    assert str(info.value) == message


def _keys(count: int) -> list[str]:
    """``count`` names that sort in the order they are made: k0000, k0001, ..."""
    return [f"k{i:04d}" for i in range(count)]


@pytest.mark.parametrize(
    ("unknown", "listed"),
    [
        (_keys(1), "['k0000']"),
        (_keys(2), "['k0000', 'k0001']"),  # listed in sorted order, separated by ", "
        (  # five are all listed, with nothing more
            _keys(5),
            "['k0000', 'k0001', 'k0002', 'k0003', 'k0004']",
        ),
        (  # the sixth is counted, not listed: 6 - 5 = 1 more
            _keys(6),
            "['k0000', 'k0001', 'k0002', 'k0003', 'k0004', and 1 more]",
        ),
        (  # 1,005 - 5 = 1,000 more, with a thousands separator
            _keys(1_005),
            "['k0000', 'k0001', 'k0002', 'k0003', 'k0004', and 1,000 more]",
        ),
        (  # a key longer than 256 characters is shown by its first 40 and its length
            ["k" * 300],
            "['" + "k" * 40 + "'... (300 characters)]",
        ),
    ],
    ids=["1", "2", "5", "6", "1005", "long"],
)
def test_unknown_keys_listed(unknown: list[str], listed: str) -> None:
    """Unknown keys are listed in sorted order, up to five; the others are counted."""
    data = _golden()
    data.update(dict.fromkeys(reversed(unknown), 1))
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(data)
    assert info.value.path == ""
    assert str(info.value) == (
        f"invalid checkpoint data: unknown keys {listed}; this version of durations writes no "
        "such keys"
    )


def test_unnamed_loaders_round_trip() -> None:
    """A ledger whose loaders have no name (null in the data) reads back as written."""
    loader = Loader(samples=10, batch_size=4)
    calls = [FitCall(loader=loader, until="2ba"), FitCall(loader=loader, duration="1ep")]
    checkpoint = plan(RunConfig(), calls).checkpoint_at(3)
    assert checkpoint.ledger is not None
    assert [entry.loader.name for entry in checkpoint.ledger] == [None, None]
    assert Checkpoint.from_dict(json.loads(json.dumps(checkpoint.to_dict()))) == checkpoint


def test_duplicate_names_built_directly() -> None:
    """A ledger with one name twice is refused when built in Python too, at the root (path
    ``''``, as when read from data)."""
    ledger = Checkpoint.from_dict(_golden()).ledger
    assert ledger is not None
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint(progress=ledger[0].start, ledger=(ledger[0], ledger[0]))
    assert info.value.path == ""
    assert str(info.value).startswith("invalid checkpoint data: duplicate call names")


# A ledger entry no run can write: (its fields changed from the unfinished call 'anneal' of the
# golden checkpoint, the same change made to the data, the reason given).
INVALID_ENTRIES: list[tuple[dict[str, Any], str, str]] = [
    (  # a call is found again on resume by its name: an empty one names nothing
        {"name": ""},
        "d['ledger'][1]['name'] = ''",
        "a ledger entry needs the call's name",
    ),
    (  # the next call starts where a finished call stopped, so a finished call records its stop
        {"finished": True},
        "d['ledger'][1]['finished'] = True",
        "call 'anneal' is finished but has no stop",
    ),
    (  # FitCall takes a duration or an until, never both ('anneal' has duration 0.1ep)
        {"until": Time.parse("2.1ep")},
        "d['ledger'][1]['until'] = '2.1ep'",
        "call 'anneal' records both a duration and an until; a call has one",
    ),
    (  # a target in dur is resolved to another unit before it is recorded
        {"target": Time.parse("0.5dur")},
        "d['ledger'][1]['target'] = '0.5dur'",
        "call 'anneal' records target 0.5dur; a resolved target is never in dur",
    ),
    (  # the golden checkpoint's own position, one batch into epoch 2, as the clock origin
        {"origin": Progress(epoch=2, batch=65, sample=2008, token=32128, batch_in_epoch=1,
                            sample_in_epoch=8, token_in_epoch=128)},
        "d['ledger'][1]['origin'] = dict(d['progress'])",
        "call 'anneal' records a clock origin inside an epoch; a run clock starts at an epoch "
        "start",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("change", "edit", "reason"), INVALID_ENTRIES)
def test_invalid_entry_built_directly(change: dict[str, Any], edit: str, reason: str) -> None:
    """A ledger entry no run can write is refused when built in Python, with no place in the
    data (path ``''``) and the whole reason."""
    ledger = Checkpoint.from_dict(_golden()).ledger
    assert ledger is not None
    with pytest.raises(CheckpointFormatError) as info:
        attrs.evolve(ledger[1], **change)
    assert info.value.path == ""
    assert info.value.reason == reason
    assert str(info.value) == f"invalid checkpoint data: {reason}"


@pytest.mark.parametrize(("change", "edit", "reason"), INVALID_ENTRIES)
def test_invalid_entry_read(change: dict[str, Any], edit: str, reason: str) -> None:
    """The same entry read from data is refused at its place in the ledger, with the same
    reason."""
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(_broken(edit))
    assert info.value.path == "ledger[1]"
    assert info.value.reason == reason
    assert str(info.value) == f"invalid checkpoint data at ledger[1]: {reason}"


@pytest.mark.parametrize(
    ("names", "listed"),
    [
        # Reason: one name twice among three: named once, the count of entries given.
        (["a", "b", "a"], "(3 entries): 'a' appear"),
        # Reason: several names repeated: listed in sorted order, each once.
        (["c", "a", "c", "b", "a"], "(5 entries): 'a', 'c' appear"),
        # Reason: exactly five repeated names: all listed, nothing counted (the boundary).
        ([f"n{i}" for i in range(5)] * 2, "(10 entries): 'n0', 'n1', 'n2', 'n3', 'n4' appear"),
        # Reason: six: the first five, then one more counted.
        (
            [f"n{i}" for i in range(6)] * 2,
            "(12 entries): 'n0', 'n1', 'n2', 'n3', 'n4', and 1 more appear",
        ),
        # Reason: more than five repeated names: the first five, then the rest counted.
        (
            [f"n{i}" for i in range(7)] * 2,
            "(14 entries): 'n0', 'n1', 'n2', 'n3', 'n4', and 2 more appear",
        ),
    ],
)
def test_duplicate_names_are_listed_up_to_five(names: list[str], listed: str) -> None:
    """The whole message of a ledger that repeats call names: how many entries, which names
    (sorted, at most five, then how many more), and what a ledger must be."""
    ledger = Checkpoint.from_dict(_golden()).ledger
    assert ledger is not None
    entries = tuple(attrs.evolve(ledger[0], name=name) for name in names)
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint(progress=ledger[0].start, ledger=entries)
    assert str(info.value) == (
        f"invalid checkpoint data: duplicate call names in the ledger {listed} more than "
        "once; each call of a script has its own name"
    )
    distinct = tuple(attrs.evolve(ledger[0], name=f"x{i}") for i in range(len(names)))
    assert Checkpoint(progress=ledger[0].start, ledger=distinct).ledger == distinct


@pytest.mark.parametrize(
    ("mode", "step", "message"),
    [
        # Reason: a continue run keeps the ledger it found: it takes nothing up.
        (
            ResumeMode.CONTINUE,
            3,
            "taken_up mode <ResumeMode.CONTINUE: 'continue'>: a run is taken up under extend "
            "or weights (a continue run keeps the ledger it found)",
        ),
        # Reason: the mode is the enum, not its value as text.
        (
            "extend",
            3,
            "taken_up mode 'extend': a run is taken up under extend or weights (a continue run "
            "keeps the ledger it found)",
        ),
        # Reason: a step is a lifetime step counter: whole and never negative.
        (ResumeMode.EXTEND, -1, "taken_up step -1: expected a whole number >= 0"),
        # Reason: a bool is not a counter, though Python's bool is an int.
        (ResumeMode.WEIGHTS, True, "taken_up step True: expected a whole number >= 0"),
        # Reason: a float step is not a step counter.
        (ResumeMode.EXTEND, 3.0, "taken_up step 3.0: expected a whole number >= 0"),
    ],
)
def test_taken_up_refusals(mode: object, step: object, message: str) -> None:
    with pytest.raises(CheckpointFormatError) as info:
        TakenUp(mode, step)  # type: ignore[arg-type]
    assert info.value.path == ""
    assert str(info.value) == f"invalid checkpoint data: {message}"


def test_taken_up_accepts_both_modes_from_step_zero() -> None:
    """extend and weights, at step 0 and later, and how each reads."""
    assert str(TakenUp(ResumeMode.EXTEND, 0)) == "taken up under extend at lifetime step 0"
    assert str(TakenUp(ResumeMode.WEIGHTS, 1234)) == "taken up under weights at lifetime step 1,234"


def test_golden_v6_resumes_the_mixture_run() -> None:
    """The pinned format-6 checkpoint (step 800 of examples/mixture.toml, 18 steps into the
    annealing call: code and math at 576 reads each past pretraining's 15,002 and 5,000)
    resumes to the uninterrupted run's end, with the same cursors there."""
    from durations.scenario import Scenario

    scenario = Scenario.from_toml((GOLDEN.parents[1] / "examples" / "mixture.toml").read_text())
    checkpoint = Checkpoint.from_dict(json.loads((GOLDEN / "checkpoint-v6.json").read_text()))
    assert dict(checkpoint.cursors or ()) == {"web": 30_004, "code": 15_578, "math": 5_576}
    whole = plan(scenario.config, scenario.calls)
    resumed = plan(scenario.config, scenario.calls, checkpoint)
    assert resumed.stop == whole.stop
    assert resumed.cursors_at(resumed.total_steps) == whole.cursors_at(whole.total_steps)


# (edit applied to the golden format-6 checkpoint, the place named, the reason)
MALFORMED_V6 = [
    ("d['cursors'] = None", "cursors", "records where each of its sources stands"),
    ("d['cursors'] = [1]", "cursors", "expected an object of source names and reads"),
    ("d['cursors']['web'] = -1", "cursors.web", "expected a whole number >= 0"),
    ("d['cursors']['web'] = 1.5", "cursors.web", "expected a whole number, got 1.5"),
    (  # a source's name is shown by its start (found by the folders fuzz target)
        "d['cursors']['x' * 100_000] = -1",
        "cursors." + "x" * 40 + "...(100,000 characters)",
        "expected a whole number >= 0, got -1",
    ),
    ("del d['cursors']", "cursors", "missing"),
    ("del d['ledger'][0]['loader']['mixture']", "ledger[0].loader.mixture", "missing"),
    (  # a mixture's epoch is its own: a loader of another length does not read it
        "d['ledger'][0]['loader']['samples'] = 7",
        "ledger[0].loader",
        "a loader of a mixture has the mixture's samples",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'] = {}",
        "ledger[0].loader.mixture.sources",
        "expected a list of sources",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'][0]['weight'] = 0.5",
        "ledger[0].loader.mixture.sources[0].weight",
        "expected a string, got 0.5",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'][0]['weight'] = '0'",
        "ledger[0].loader.mixture.sources[0]",
        "expected a number > 0",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'][0]['count'] = 3",
        "ledger[0].loader.mixture.sources[0]",
        "give exactly one of",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['stop'] = 'sometimes'",
        "ledger[0].loader.mixture",
        "expected 'first_exhausted', 'all_exhausted' or 'never'",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['restart'] = ['nobody']",
        "ledger[0].loader.mixture",
        "names no source of the mixture",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'][1]['name'] = 'web'",
        "ledger[0].loader.mixture",
        "repeated: 'web'",
    ),
    (
        "d['ledger'][0]['loader']['mixture']['sources'][0]['extra'] = 1",
        "ledger[0].loader.mixture.sources[0]",
        "unknown keys ['extra']",
    ),
    (  # format 5 has no mixture: a format-5 reader would drop it silently
        "d['format'] = 5",
        "ledger[0].loader",
        "unknown keys ['mixture']",
    ),
]


@pytest.mark.parametrize(
    ("version", "edit", "where", "reason"),
    [(5, *row) for row in MALFORMED_V5] + [(6, *row) for row in MALFORMED_V6],
)
def test_malformed_order_and_mixture(version: int, edit: str, where: str, reason: str) -> None:
    """A malformed loader ``order`` (format 5), mixture or cursor (format 6) is rejected with
    its place and the reason."""
    data = json.loads((GOLDEN / f"checkpoint-v{version}.json").read_text())
    exec(edit, {"d": data})
    with pytest.raises(CheckpointFormatError) as info:
        Checkpoint.from_dict(data)
    assert info.value.path == where
    assert reason in str(info.value)
