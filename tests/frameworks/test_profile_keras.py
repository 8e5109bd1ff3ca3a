"""The Keras profile (:mod:`durations.trainers.keras`) against real Keras runs.

The pure tests replay every ``keras/*`` scenario of ``observed.json`` (recorded by
``tests/frameworks/record.py`` with Keras 3.15.1 on torch) through :func:`simulate` and compare
each call: steps, the ids of every optimizer step, every counter, the error, the crash and the
messages. They need no framework. The live tests run a few scenarios through the real runner
when Keras is installed, so that a new Keras version that behaves differently is caught.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations.trainers import CallOutcome, Dataset
from durations.trainers.keras import RAN_OUT_OF_DATA, RULES, VERSION, Call, simulate
from tests.frameworks import scenarios
from tests.frameworks._common import CallSpec, Scenario, call_defaults

OBSERVED = json.loads((Path(__file__).parent / "observed.json").read_text())
KERAS_IDS = sorted(key for key in OBSERVED["observations"] if key.startswith("keras/"))

# Scenarios the profile cannot reproduce, with the reason (xfail strict, never skip).
CANNOT_REPRODUCE: dict[str, str] = {}

# Which observed warnings and log lines are about durations and resumes. Every observed message
# must match exactly one list; the profile must emit exactly the relevant ones, in order.
RELEVANT = [
    # epoch_iterator.py:88: steps_per_epoch reaches past the end of the data.
    r"^UserWarning: Your input ran out of data; interrupting training\.",
    # trainer.py:198 / epoch_iterator.py:65: the KERAS debugging caps on epochs and steps.
    r"^UserWarning: Limiting (epochs|steps_per_epoch) to \d+$",
]
IGNORED: list[str] = [
    # None yet: _common.NOISE already drops what the harness knows to be noise, and Keras said
    # nothing else in the grid. A new message fails test_messages until it is classified here.
]


def _params(ids: list[str]) -> list[Any]:
    return [
        pytest.param(i, marks=pytest.mark.xfail(strict=True, reason=CANNOT_REPRODUCE[i]), id=i)
        if i in CANNOT_REPRODUCE
        else pytest.param(i, id=i)
        for i in ids
    ]


def to_call(spec: CallSpec) -> Call:
    """The profile's :class:`Call` for one harness call (see ``tests/frameworks/_keras.py``)."""
    full = call_defaults(spec)
    args = dict(full["args"])
    epochs = args.pop("epochs", 1)
    initial_epoch = args.pop("initial_epoch", 0)
    steps_per_epoch = args.pop("steps_per_epoch", None)
    optimizer = dict(full["optimizer"])
    accumulation = optimizer.pop("gradient_accumulation_steps", None)
    assert not args, f"fit arguments the profile does not model: {args}"
    assert not optimizer, f"optimizer arguments the profile does not model: {optimizer}"
    assert not full["set"], "the Keras runner's `set` is not modelled"
    assert full["resume"] is None, "Keras resumes through BackupAndRestore"
    save_every = full["save_every"]
    return Call(
        data=Dataset(samples=full["data"]["n"], offset=full["data"]["offset"]),
        batch_size=full["batch_size"],
        epochs=epochs,
        initial_epoch=initial_epoch,
        steps_per_epoch=steps_per_epoch,
        shuffle=full["shuffle"],
        gradient_accumulation_steps=accumulation,
        fresh=full["fresh"],
        backup=save_every is not None,
        save_freq="epoch" if save_every is None else save_every,
        delete_checkpoint=not full["save_at_end"],
        crash_at=full["crash_at"],
    )


def observed_counters(call: dict[str, Any]) -> dict[str, Any]:
    """The runner's ``counters_after`` (and ``backup_after``) in the profile's counter names.

    The runner records the epoch indices as lists; the profile reports the first index and
    the count, so the lists must be consecutive, and ``History.epoch`` the epochs run.
    """
    counters = call["counters_after"]
    epochs = counters["epochs_run"]
    assert epochs == list(range(epochs[0], epochs[0] + len(epochs))) if epochs else True
    history = counters["history_epochs"]
    assert history is None or history == epochs
    backup = call["backup_after"]
    return {
        "iterations": counters["iterations"],
        "raw_iterations": counters["raw_iterations"],
        "first_epoch": epochs[0] if epochs else None,
        "epochs_run": len(epochs),
        "history_epochs": None if history is None else len(history),
        "model_initial_epoch": counters["model_initial_epoch"],
        "backup_epoch": None if backup is None else backup["epoch"],
        "backup_batch": None if backup is None else backup["batch"],
    }


def relevant_messages(call: dict[str, Any]) -> list[str]:
    """The observed warnings and logs that are about durations and resumes, in order."""
    kept = []
    for text in call["warnings"] + call["logs"]:
        relevant = any(re.search(pattern, text) for pattern in RELEVANT)
        ignored = any(re.search(pattern, text) for pattern in IGNORED)
        assert relevant != ignored, f"classify this Keras message in RELEVANT or IGNORED: {text!r}"
        if relevant:
            kept.append(text)
    return kept


def check_batches(spec: CallSpec, outcome: CallOutcome, call: dict[str, Any]) -> None:
    """Exact ids when unshuffled; when shuffled, the per-step sizes and each epoch's ids."""
    assert outcome.steps == call["steps"]
    if not call_defaults(spec)["shuffle"]:
        assert [list(ids) for ids in outcome.batches] == call["batches"]
        return
    assert [len(ids) for ids in outcome.batches] == [len(ids) for ids in call["batches"]]
    by_epoch: dict[int, tuple[Counter[int], Counter[int]]] = {}
    for ids, seen, position in zip(
        outcome.batches, call["batches"], call["positions"], strict=True
    ):
        predicted, observed = by_epoch.setdefault(position["epoch"], (Counter(), Counter()))
        predicted.update(ids)
        observed.update(seen)
    for epoch, (predicted, observed) in by_epoch.items():
        assert predicted == observed, f"epoch {epoch}"


def replay(specs: list[CallSpec]) -> tuple[CallOutcome, ...]:
    return simulate([to_call(spec) for spec in specs])


def compare(specs: list[CallSpec], calls: list[dict[str, Any]]) -> None:
    """Every comparison of the pure tests at once (for the live runs)."""
    outcomes = replay(specs)
    assert len(outcomes) == len(calls)
    for index, (spec, outcome, call) in enumerate(zip(specs, outcomes, calls, strict=True)):
        where = f"call {index}"
        check_batches(spec, outcome, call)
        assert dict(outcome.counters) == observed_counters(call), where
        assert outcome.crashed == call["crashed"], where
        error = (
            None
            if outcome.error is None
            else {"type": outcome.error.type, "message": outcome.error.message}
        )
        assert error == call["error"], where
        assert list(outcome.messages) == relevant_messages(call), where


def _observed(scenario_id: str) -> tuple[list[CallSpec], list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = OBSERVED["observations"][scenario_id]["calls"]
    specs = scenarios.BY_ID[scenario_id]["calls"]
    assert [call["call"] for call in calls] == specs, "observed.json is older than scenarios.py"
    return specs, calls


def test_every_keras_scenario_was_recorded() -> None:
    """The grid's Keras scenarios and the recorded ones are the same set."""
    assert sorted(s["id"] for s in scenarios.KERAS) == KERAS_IDS
    assert OBSERVED["meta"]["frameworks"]["keras"]["versions"]["keras"] == VERSION


def test_rules_cite_the_source() -> None:
    """Each rule is one or two sentences with a keras/src file and line reference."""
    assert RULES
    for rule, source in RULES:
        assert rule.endswith("."), rule
        assert rule.count(". ") <= 1, rule
        assert re.match(r"keras/src/\S+\.py:\d+", source), source


@pytest.mark.parametrize("scenario_id", _params(KERAS_IDS))
def test_steps_and_batches(scenario_id: str) -> None:
    """Rule: epochs, initial_epoch, steps_per_epoch, restores and accumulation decide which
    samples each optimizer update reads (exact ids unshuffled; sizes and epoch sets shuffled)."""
    specs, calls = _observed(scenario_id)
    for index, (spec, outcome, call) in enumerate(zip(specs, replay(specs), calls, strict=True)):
        assert outcome.steps == call["steps"], f"call {index}"
        check_batches(spec, outcome, call)


@pytest.mark.parametrize("scenario_id", _params(KERAS_IDS))
def test_counters(scenario_id: str) -> None:
    """Rule: optimizer.iterations (real and raw) persists across fits and backups, epoch indices
    restart per fit from `_initial_epoch or initial_epoch`, and the backup's metadata is as
    written by BackupAndRestore (and what the next call reads)."""
    specs, calls = _observed(scenario_id)
    outcomes = replay(specs)
    for index, (outcome, call) in enumerate(zip(outcomes, calls, strict=True)):
        assert dict(outcome.counters) == observed_counters(call), f"call {index}"
        if call["checkpoint_loaded"] is not None:
            before = outcomes[index - 1].counters
            loaded = {"epoch": before["backup_epoch"], "batch": before["backup_batch"]}
            assert loaded == call["checkpoint_loaded"], f"call {index}"


@pytest.mark.parametrize("scenario_id", _params(KERAS_IDS))
def test_errors_and_crashes(scenario_id: str) -> None:
    """Rule: a call is killed right after the backup of the batch that reaches crash_at, and
    the errors Keras raises are reported with their type and exact message."""
    specs, calls = _observed(scenario_id)
    for index, (outcome, call) in enumerate(zip(replay(specs), calls, strict=True)):
        assert outcome.crashed == call["crashed"], f"call {index}"
        error = outcome.error
        predicted = None if error is None else {"type": error.type, "message": error.message}
        assert predicted == call["error"], f"call {index}"


@pytest.mark.parametrize("scenario_id", _params(KERAS_IDS))
def test_messages(scenario_id: str) -> None:
    """Rule: the only duration message is 'Your input ran out of data', once per call, when an
    epoch's steps_per_epoch reaches past the data; the profile emits exactly the relevant ones."""
    specs, calls = _observed(scenario_id)
    for index, (outcome, call) in enumerate(zip(replay(specs), calls, strict=True)):
        assert list(outcome.messages) == relevant_messages(call), f"call {index}"


def test_ran_out_of_data_warning_is_verbatim() -> None:
    """The warning text is the one the real run printed."""
    _, calls = _observed("keras/steps_per_epoch15_epochs1")
    assert calls[0]["warnings"] == [RAN_OUT_OF_DATA]


def test_invalid_gradient_accumulation_is_keras_value_error() -> None:
    """Rule: gradient_accumulation_steps=1 fails when the optimizer is built."""
    (outcome,) = simulate([Call(data=Dataset(samples=100), gradient_accumulation_steps=1)])
    assert outcome.error is not None
    assert (outcome.error.type, outcome.error.message) == (
        "ValueError",
        "`gradient_accumulation_steps` must be an integer >= 2. "
        "Received: gradient_accumulation_steps=1",
    )
    assert outcome.steps == 0


def test_invalid_save_freq_is_rejected() -> None:
    """A save_freq that is neither an integer nor 'epoch' is refused when the Call is made."""
    with pytest.raises(ValueError, match=r"invalid save_freq 'step'"):
        Call(data=Dataset(samples=10), save_freq="step")  # type: ignore[arg-type]


# Scenarios beyond the grid that the live tests also run: predictions of rules the grid does
# not reach, checked against the real Keras as soon as it is installed.
EXTRA: list[Scenario] = [
    {
        "id": "keras/crash_twice_freq1",
        "framework": "keras",
        "about": "a resumed run killed before it finishes an epoch writes epoch 0",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 15},
            {"args": {"epochs": 2}, "save_every": 1},
        ],
    },
    {
        "id": "keras/steps_per_epoch4_epochs3",
        "framework": "keras",
        "about": "the kept iterator runs out in epoch 2 after 2 of 4 steps",
        "calls": [{"args": {"epochs": 3, "steps_per_epoch": 4}}],
    },
    {
        "id": "keras/accum3_fit_again",
        "framework": "keras",
        "about": "2 pending micro-batches carry into a second fit",
        "calls": [
            {"args": {"epochs": 2}, "optimizer": {"gradient_accumulation_steps": 3}},
            {"fresh": False, "args": {"epochs": 1}},
        ],
    },
    {
        "id": "keras/save_freq3_crash13",
        "framework": "keras",
        "about": "save_freq=3 counts batches across epochs: last backup at batch 11",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 3, "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": 3},
        ],
    },
    {
        "id": "keras/accum3_epoch_backup_pending",
        "framework": "keras",
        "about": "GA=3, epoch backup at raw 10 (1 micro-batch pending): the resumed first update "
        "reads 2 micro-batches",
        "calls": [
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": "epoch",
                "crash_at": 4,
            },
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": "epoch",
            },
        ],
    },
    {
        "id": "keras/shuffled_epochs2",
        "framework": "keras",
        "about": "shuffled: sizes and epoch id sets",
        "calls": [{"args": {"epochs": 2}, "shuffle": True}],
    },
    {
        "id": "keras/batch_size_default_steps",
        "framework": "keras",
        "about": "batch_size=None with steps_per_epoch=4: ceil(100/4)=25 per batch",
        "calls": [{"batch_size": None, "args": {"epochs": 1, "steps_per_epoch": 4}}],  # type: ignore[typeddict-item]
    },
]

LIVE = [
    "keras/crash13_freq1",
    "keras/accum3_epochs2",
    "keras/accum3_crash3_resume",
    "keras/restore_then_plain_fit",
    "keras/steps_per_epoch5_epochs3",
    "keras/steps_per_epoch15_epochs2",
    "keras/phase_B_backup",
]


def _require_keras() -> None:
    os.environ.setdefault("KERAS_BACKEND", "torch")  # must precede the first keras import
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("keras", reason="keras is not installed")
        pytest.importorskip("torch", reason="torch is not installed (KERAS_BACKEND=torch)")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "scenario", [scenarios.BY_ID[i] for i in LIVE] + EXTRA, ids=lambda s: s["id"]
)
def test_live_keras_matches_profile(scenario: Scenario, tmp_path: Path) -> None:
    """A real Keras run of the scenario does what the profile predicts, call by call."""
    _require_keras()
    from tests.frameworks import runners

    calls = runners.run_calls("keras", scenario["calls"], tmp_path)
    compare(scenario["calls"], calls)
