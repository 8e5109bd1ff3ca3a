"""The Keras profile (:mod:`durations.trainers.keras`) against real Keras runs.

The pure tests replay every ``keras/*`` scenario of ``observed.json`` (recorded by
``tests/frameworks/record.py`` with Keras 3.15.1 on torch) through :func:`simulate` and compare
each call: steps, the ids of every optimizer step, every counter, the error, the crash, the
messages and the learning rate of every update. They need no framework. The live tests run a
few scenarios through the real runner when Keras is installed, so that a new Keras version that
behaves differently is caught.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations import FitCall, Loader, RunConfig
from durations.compare import compare as compare_with_plan, datasets
from durations.planner import plan
from durations.scenario import Scenario as Script
from durations.schedules import END, Schedule
from durations.trainers import CallOutcome, Dataset, Unsupported
from durations.trainers.keras import (
    RAN_OUT_OF_DATA,
    RULES,
    VERSION,
    Call,
    CosineDecay,
    PolynomialDecay,
    simulate,
    translate,
)
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


SCHEDULES = {"CosineDecay": CosineDecay, "PolynomialDecay": PolynomialDecay}


def learning_rate(spec: CallSpec) -> float | CosineDecay | PolynomialDecay | None:
    """The profile's ``learning_rate`` for a harness call's ``lr_schedule`` (Keras's serialized
    form: ``{"class_name": ..., "config": {...}}``, or a float)."""
    given = call_defaults(spec)["lr_schedule"]
    if given is None:
        return None
    rate = given["learning_rate"]
    if isinstance(rate, float):
        return rate
    config = dict(rate["config"])
    config.pop("name", None)
    result: CosineDecay | PolynomialDecay = SCHEDULES[rate["class_name"]](**config)
    return result


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
        learning_rate=learning_rate(spec),
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


def _built_by(specs: list[CallSpec], index: int) -> CallSpec:
    """The call that built the model call ``index`` trains (its optimizer's arguments)."""
    while index > 0 and not call_defaults(specs[index])["fresh"]:
        index -= 1
    return specs[index]


def rate_tolerance(specs: list[CallSpec], index: int) -> float:
    """How closely the profile's rates must match a call's recorded ones: 1e-9 of the rate when
    Keras computed in float64, as the profile does; 1e-6 in Keras's default float32, whose
    rounding the profile does not model (torch's float32 cos is not the correctly rounded one,
    so no pure float32 emulation would be exact either)."""
    given = call_defaults(_built_by(specs, index))["lr_schedule"] or {}
    return 1e-9 if given.get("floatx") == "float64" else 1e-6


def check_rates(specs: list[CallSpec], index: int, outcome: CallOutcome, call: Any) -> None:
    """The learning rate of every update, as recorded, when the model was given one."""
    observed = [position["lr"] for position in call["positions"] if "lr" in position]
    if learning_rate(_built_by(specs, index)) is None:
        assert outcome.rates == ()
        assert observed == []
        return
    assert len(observed) == len(call["positions"]) == len(outcome.rates)
    tolerance = rate_tolerance(specs, index)
    for step, (got, seen) in enumerate(zip(outcome.rates, observed, strict=True)):
        assert math.isclose(got, seen, rel_tol=tolerance, abs_tol=1e-15), f"update {step}"


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
        check_rates(specs, index, outcome, call)


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
    """Rule: a call is killed as it is about to start an optimizer step with iterations >=
    crash_at, and the errors Keras raises are reported with their type and exact message."""
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


@pytest.mark.parametrize("scenario_id", _params(KERAS_IDS))
def test_learning_rates(scenario_id: str) -> None:
    """Rule: an update uses the optimizer's learning rate read as it is applied, a schedule's
    value at the raw _iterations, restored by BackupAndRestore; every recorded rate is matched."""
    specs, calls = _observed(scenario_id)
    for index, (outcome, call) in enumerate(zip(replay(specs), calls, strict=True)):
        check_rates(specs, index, outcome, call)


def _accumulation(specs: list[CallSpec], index: int) -> int:
    """The accumulation steps of the model call ``index`` trains (set where it was built)."""
    steps = call_defaults(_built_by(specs, index))["optimizer"].get("gradient_accumulation_steps")
    return int(steps or 1)


CRASH_CALLS = [
    (scenario_id, index)
    for scenario_id in KERAS_IDS
    for index, spec in enumerate(scenarios.BY_ID[scenario_id]["calls"])
    if call_defaults(spec)["crash_at"] is not None
]


@pytest.mark.parametrize(("scenario_id", "index"), CRASH_CALLS, ids=str)
def test_real_kills_come_as_a_step_starts(scenario_id: str, index: int) -> None:
    """The crash model, on the real runs: no step starts after one that reached crash_at; a
    killed call has iterations >= crash_at and no micro-batch of a next update begun."""
    specs, calls = _observed(scenario_id)
    spec, call = specs[index], calls[index]
    crash_at = call_defaults(spec)["crash_at"]
    assert crash_at is not None
    reached = [position["iterations"] >= crash_at for position in call["positions"]]
    assert not any(reached[:-1]), "a step started after crash_at was reached"
    if call["crashed"]:
        counters = call["counters_after"]
        assert counters["iterations"] >= crash_at
        assert counters["raw_iterations"] % _accumulation(specs, index) == 0
        assert "pending_micro_batches" not in call


# Steps a crash loses: counted before the kill, then undone by the restore and trained again.
LOST = [
    # A backup after every batch: the kill before step 14 finds step 13's backup.
    ("keras/crash13_freq1", 0),
    # save_freq='epoch': the newest backup is epoch 0's end, step 10.
    ("keras/crash13_freq_epoch", 3),
    # save_freq=4 counts batches across epochs (batch indices restart, the count goes on):
    # backups at steps 4, 8 and 12.
    ("keras/save_freq4_crash13", 1),
    # The kill comes as step 11 starts, after epoch 0's end saved step 10.
    ("keras/crash10_freq_epoch", 0),
]


@pytest.mark.parametrize(("scenario_id", "lost"), LOST, ids=[row[0] for row in LOST])
def test_steps_lost_to_a_crash(scenario_id: str, lost: int) -> None:
    """Rule: the re-run restores the newest backup the save settings wrote before the kill,
    which need not be at crash_at (real runs and the profile alike)."""
    specs, calls = _observed(scenario_id)
    crashed, resumed = replay(specs)
    assert crashed.crashed
    assert calls[0]["crashed"]
    restored = resumed.counters["iterations"] - resumed.steps  # type: ignore[operator]
    assert crashed.counters["iterations"] - restored == lost  # type: ignore[operator]
    observed = calls[1]["counters_after"]["iterations"] - calls[1]["steps"]
    assert calls[0]["counters_after"]["iterations"] - observed == lost


# The schedule step (the raw _iterations the schedule is called with) of every recorded update,
# call by call, and why. A schedule restored with the counter and an epoch restarted at batch 0
# make these differ from the uninterrupted run's 0..19.
SCHEDULE_STEPS = [
    (
        "keras/lr_cosine_crash13_freq1",
        # The backup after step 13 restores the counter 13, so no rate is used twice; epoch 1
        # restarts at batch 0, so the re-run takes 10 steps, the last 3 past the curve's end (20).
        [range(13), range(13, 23)],
    ),
    (
        "keras/lr_cosine_crash13_freq4",
        # The newest backup holds step 12: the lost step 13 is trained again at schedule(12).
        [range(13), range(12, 22)],
    ),
    (
        "keras/lr_linear_crash13_freq_epoch",
        # The epoch-end backup holds step 10: steps 11 to 13 are trained again at their rates.
        [range(13), range(10, 20)],
    ),
    (
        "keras/lr_cosine_three_fits",
        # One optimizer, one curve: each fit goes on where the one before left off.
        [range(10), range(10, 20), range(20, 30)],
    ),
    (
        "keras/lr_accum3_cosine_crash3",
        # Accumulation 3: update u reads the schedule at its last micro-batch, raw 3u + 2; the
        # backup after micro-batch 9 restores raw 9, so the re-run's updates read 11, 14, ...
        [range(2, 9, 3), range(11, 29, 3)],
    ),
]


@pytest.mark.parametrize(
    ("scenario_id", "steps"), SCHEDULE_STEPS, ids=[r[0] for r in SCHEDULE_STEPS]
)
def test_schedule_steps_of_recorded_updates(scenario_id: str, steps: list[range]) -> None:
    """Rule: every recorded update's learning rate is the schedule at the raw counter the
    table gives, from 0 for a new model, from the backup's counter for a re-run."""
    specs, calls = _observed(scenario_id)
    schedule = learning_rate(specs[0])
    assert isinstance(schedule, (CosineDecay, PolynomialDecay))
    for index, (call, used) in enumerate(zip(calls, steps, strict=True)):
        observed = [position["lr"] for position in call["positions"]]
        expected = [schedule(step) for step in used]
        assert len(observed) == len(expected), f"call {index}"
        assert all(
            math.isclose(a, b, rel_tol=1e-9) for a, b in zip(observed, expected, strict=True)
        ), index


CURVE = CosineDecay(
    initial_learning_rate=0.0, decay_steps=18, alpha=0.1, warmup_target=1.0, warmup_steps=2
)


@pytest.mark.parametrize("save_freq", [1, 4, "epoch"])
@pytest.mark.parametrize("crash_at", range(1, 20))
def test_a_resumed_schedule_goes_on_from_the_backup(crash_at: int, save_freq: int | str) -> None:
    """Relation: whatever the kill and the save settings, the killed call uses the
    uninterrupted run's first rates, and the re-run the uninterrupted run's from the restored
    step on (then the floor, 0.1, past the curve's end): the schedule comes back with the
    counter, only the data restarts."""
    call = Call(
        data=Dataset(samples=100),
        batch_size=10,
        epochs=2,
        backup=True,
        save_freq=save_freq,  # type: ignore[arg-type]
        learning_rate=CURVE,
    )
    (whole,) = simulate([call])
    crashed, resumed = simulate([attrs.evolve(call, crash_at=crash_at), call])
    assert crashed.crashed
    assert crashed.rates == whole.rates[: crashed.steps]
    restored = int(resumed.counters["iterations"] or 0) - resumed.steps
    padded = whole.rates + (0.1,) * 10
    assert resumed.rates == padded[restored : restored + resumed.steps]


def test_fits_on_one_model_follow_one_curve() -> None:
    """Relation: three fit(epochs=1) calls on one model use the rates of one fit(epochs=3),
    recorded and emulated: the schedule reads the optimizer's counter, which the model keeps."""
    specs, calls = _observed("keras/lr_cosine_three_fits")
    observed = [position["lr"] for call in calls for position in call["positions"]]
    (one,) = simulate([attrs.evolve(to_call(specs[0]), epochs=3)])
    assert len(one.rates) == len(observed) == 30
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(one.rates, observed, strict=True))


def test_a_float_learning_rate_comes_back_from_the_backup() -> None:
    """Rule: a float learning_rate is an optimizer variable: the re-run given 0.05 trains at
    the 0.1 the backup holds (recorded); without a backup it trains at its own."""
    specs, calls = _observed("keras/lr_constant_restored")
    assert {position["lr"] for call in calls for position in call["positions"]} == {0.1}
    _, resumed = replay(specs)
    assert set(resumed.rates) == {0.1}
    (alone,) = simulate([attrs.evolve(to_call(specs[1]), backup=False)])
    assert set(alone.rates) == {0.05}


def test_float32_rates_are_the_float64_ones_rounded() -> None:
    """Keras's default float32 changes no rate by more than its rounding: the recorded float32
    run and the float64 runs of the same schedule agree to 1e-6, not to 1e-15."""
    _, (float32,) = _observed("keras/lr_cosine_float32")
    _, (crashed, resumed) = _observed("keras/lr_cosine_crash13_freq1")
    wide = [position["lr"] for position in float32["positions"]]
    exact = [position["lr"] for call in (crashed, resumed) for position in call["positions"]]
    pairs = list(zip(wide, exact[:20], strict=True))
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in pairs)
    assert any(not math.isclose(a, b, rel_tol=1e-15) for a, b in pairs)


def test_float_epochs_fail_after_the_restore() -> None:
    """Rule: a float epochs fails once on_train_begin ran: BackupAndRestore has restored the
    counter and epoch, no epoch began, and the backup stays for the next run."""
    specs, calls = _observed("keras/epochs1.5_after_restore")
    killed, failed, rerun = calls
    assert failed["error"] == {
        "type": "TypeError",
        "message": "'float' object cannot be interpreted as an integer",
    }
    assert (failed["steps"], failed["counters_after"]["epochs_run"]) == (0, [])
    assert failed["counters_after"]["iterations"] == killed["counters_after"]["iterations"]
    assert failed["counters_after"]["model_initial_epoch"] == killed["backup_after"]["epoch"]
    assert failed["backup_after"] == failed["checkpoint_loaded"] == killed["backup_after"]
    assert rerun["checkpoint_loaded"] == killed["backup_after"]
    outcome = replay(specs)[1]
    assert outcome.error is not None
    assert observed_counters(failed) == dict(outcome.counters)


def _one_phase(duration: str) -> tuple[Script, dict[str, Dataset]]:
    """A durations scenario of one fit over 100 samples at batch 10, for ``duration``."""
    loader = Loader(samples=100, batch_size=10, name="a")
    calls = (FitCall(loader=loader),)
    script = Script(config=RunConfig(max_duration=duration), loaders={"a": loader}, calls=calls)
    return script, datasets(script)


# What translate writes for one phase of 100 samples at batch 10 (10 steps an epoch).
TRANSLATIONS = [
    ("2ep", 2, None),
    # A whole number written as a decimal: written as the int 2, since fit(epochs=2.0) raises.
    ("2.0ep", 2, None),
    # Part of an epoch: one epoch cut to 5 steps, not fit(epochs=0.5), which raises.
    ("0.5ep", 1, 5),
    ("5ba", 1, 5),
]


@pytest.mark.parametrize(("duration", "epochs", "steps_per_epoch"), TRANSLATIONS)
def test_translate_writes_int_epochs(
    duration: str, epochs: int, steps_per_epoch: int | None
) -> None:
    """translate never writes a float epochs (Keras raises on every one), and what it writes
    trains without an error."""
    translation = translate(*_one_phase(duration))
    (call,) = translation.calls
    assert (type(call.epochs), call.epochs, call.steps_per_epoch) == (
        int,
        epochs,
        steps_per_epoch,
    )
    (outcome,) = simulate(translation.calls)
    assert outcome.error is None


def test_translate_never_writes_fit_epochs_1_5() -> None:
    """1.5 epochs is written as int epochs that train its 15 steps, or refused with a reason;
    never as fit(epochs=1.5), whose real outcome is a TypeError."""
    try:
        translation = translate(*_one_phase("1.5ep"))
    except Unsupported as why:
        reason = str(why)
    else:
        reason = None
    if reason is not None:
        assert "1.5ep" in reason
        return
    assert all(type(call.epochs) is int for call in translation.calls)
    outcomes = simulate(translation.calls)
    assert [outcome.error for outcome in outcomes] == [None] * len(outcomes)
    assert sum(outcome.steps for outcome in outcomes) == 15


WARMUP_COSINE = Schedule.warmup("2ba").then_cosine(to="0.1", until=END)

# What translate gives the optimizer for a schedule over 2 epochs of 100 samples at batch 10
# (20 steps), at a base learning rate of 1.
WRITTEN = [
    # The recorded runs' schedule at base 1: warmup 2, cosine to 0.1 over the other 18 steps.
    (
        WARMUP_COSINE,
        CosineDecay(
            initial_learning_rate=0.0, decay_steps=18, alpha=0.1, warmup_target=1.0, warmup_steps=2
        ),
    ),
    # A warmup then a constant: CosineDecay with alpha=1 stays at its warmup target.
    (
        Schedule.warmup("2ba"),
        CosineDecay(
            initial_learning_rate=0.0, decay_steps=18, alpha=1.0, warmup_target=1.0, warmup_steps=2
        ),
    ),
    # A constant is a float learning rate.
    (Schedule.constant("0.5"), 0.5),
    # A plain linear decay is PolynomialDecay with power 1.
    (
        Schedule.constant().then_linear(to="0.1", until=END),
        PolynomialDecay(
            initial_learning_rate=1.0, decay_steps=20, end_learning_rate=0.1, power=1.0
        ),
    ),
    # A plain cosine is CosineDecay without a warmup target.
    (
        Schedule.constant().then_cosine(to=0, until=END),
        CosineDecay(initial_learning_rate=1.0, decay_steps=20, alpha=0.0),
    ),
]

NOT_WRITTEN = [
    # PolynomialDecay has no warmup, and CosineDecay's decay is a cosine.
    (
        Schedule.warmup("2ba").then_linear(to=0, until=END),
        "warm up only in CosineDecay",
    ),
    # Two decays in one run: one built-in schedule takes one.
    (
        Schedule.warmup("2ba").then_cosine(to="0.1", until="10ba").then_linear(to=0, until=END),
        "one constant, linear or cosine decay",
    ),
]


def _scheduled(schedule: Schedule, *durations: str) -> tuple[Script, dict[str, Dataset]]:
    """A durations scenario of one fit call per duration over loader ``a`` (100 samples at
    batch 10), the run 2 epochs, with ``schedule``."""
    loader = Loader(samples=100, batch_size=10, name="a")
    calls = tuple(FitCall(loader=loader, duration=d) for d in durations) or (
        FitCall(loader=loader),
    )
    script = Script(
        config=RunConfig(max_duration="2ep"),
        loaders={"a": loader},
        calls=calls,
        schedule=schedule,
    )
    return script, datasets(script)


def _planned(script: Script) -> list[float]:
    """The plan's factor of every step: step n uses the factor after n - 1 steps."""
    assert script.schedule is not None
    made = plan(script.config, script.calls)
    curve = script.schedule.resolve(made, on_extend=script.on_extend)
    return [float(curve.factor(step)) for step in range(made.total_steps)]


@pytest.mark.parametrize(("schedule", "written"), WRITTEN, ids=str)
def test_translate_writes_the_schedule(
    schedule: Schedule, written: float | CosineDecay | PolynomialDecay
) -> None:
    """The scenario's one curve over the run is the optimizer's learning_rate, named in the
    translation, given to every call (only the first builds the model)."""
    translation = translate(*_scheduled(schedule))
    assert [call.learning_rate for call in translation.calls] == [written]
    assert translation.schedule == (
        f"the optimizer's learning_rate={written!r}, built with the model: one curve over every "
        "fit on it"
    )


@pytest.mark.parametrize(("schedule", "written"), WRITTEN, ids=str)
@pytest.mark.parametrize("durations", [(), ("10ba", "10ba")], ids=["one fit", "two fits"])
def test_translated_rates_are_the_plans(
    schedule: Schedule, written: object, durations: tuple[str, ...]
) -> None:
    """Relation: the written schedule gives every step the plan's factor, over one fit or
    two fits on one model."""
    script, data = _scheduled(schedule, *durations)
    outcomes = simulate(translate(script, data).calls)
    rates = [rate for outcome in outcomes for rate in outcome.rates]
    planned = _planned(script)
    assert len(rates) == len(planned) == 20
    assert all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(rates, planned, strict=True)
    )


@pytest.mark.parametrize(("schedule", "why"), NOT_WRITTEN, ids=str)
def test_translate_says_why_a_schedule_cannot_be_written(schedule: Schedule, why: str) -> None:
    """A curve no built-in schedule takes leaves the learning rate out (no rates to compare)
    and says why; the rest of the translation is written."""
    translation = translate(*_scheduled(schedule))
    assert translation.schedule.startswith("cannot be written: ")
    assert why in translation.schedule
    assert [call.learning_rate for call in translation.calls] == [None]
    assert [call.epochs for call in translation.calls] == [2]
    assert simulate(translation.calls)[0].rates == ()


def test_translate_without_a_schedule_writes_none() -> None:
    """No [schedule]: no learning rate, and nothing said about one."""
    translation = translate(*_one_phase("2ep"))
    assert translation.schedule == ""
    assert [call.learning_rate for call in translation.calls] == [None]


def test_compare_rates_agree_across_a_crash() -> None:
    """Relation: killed after step 13, Keras trains 3 steps more than the plan (epoch 1 restarts
    at batch 0), yet every step's learning rate is the plan's: the schedule comes back with
    the counter, and the extra steps are past the curve's end, at its floor, as the plan holds
    it."""
    script, _ = _scheduled(WARMUP_COSINE)
    (keras,) = compare_with_plan(script, crash_at=13, trainers=("keras",)).trainers
    assert len(keras.rates) == len(keras.planned_rates) == 23
    assert not [line for line in keras.differences if line.startswith("learning rate")]
    assert any("trains 23 steps" in line for line in keras.differences)


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
    "keras/save_freq4_crash13",
    "keras/crash10_freq_epoch",
    "keras/accum3_crash_mid_step_restore",
    "keras/epochs1.5_after_restore",
    "keras/accum3_epochs2",
    "keras/accum3_crash3_resume",
    "keras/restore_then_plain_fit",
    "keras/steps_per_epoch5_epochs3",
    "keras/steps_per_epoch15_epochs2",
    "keras/phase_B_backup",
    "keras/lr_cosine_crash13_freq4",
    "keras/lr_accum3_cosine_crash3",
    "keras/lr_constant_restored",
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
