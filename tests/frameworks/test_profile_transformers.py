"""The transformers profile (``durations.trainers.transformers``) against real ``train()`` runs.

The pure tests replay every ``transformers/*`` scenario recorded in ``observed.json`` through
:func:`~durations.trainers.transformers.simulate` and compare each call: steps, the sample ids
of every optimizer step, every recorded counter, the error, the crash and the duration/resume
messages. They need no framework. The live test runs a few scenarios through the real runner
(``tests/frameworks/runners.py``) so that a new transformers version that behaves differently
fails here.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest

from durations.compare import compare, datasets
from durations.scenario import Scenario
from durations.trainers import CallOutcome, Dataset, TrainerError
from durations.trainers.transformers import RULES, VERSION, Call, Overrides, simulate, translate
from tests.frameworks import scenarios
from tests.frameworks._common import CallSpec, call_defaults

OBSERVED = json.loads((Path(__file__).parent / "observed.json").read_text())
TRANSFORMERS = {
    scenario_id: observation
    for scenario_id, observation in OBSERVED["observations"].items()
    if observation["framework"] == "transformers"
}

# Which recorded messages are about durations and resumes. The profile reports exactly these, in
# order: the max_steps override, the checkpoint-arguments mismatch, the run summary lines that
# carry a duration (examples, epochs, updates per epoch, accumulation, total steps), the resume
# and fast-forward lines, and the empty-epoch stop.
RELEVANT = re.compile(
    "|".join(
        [
            r"^max_steps is given, it will override any value given in num_train_epochs$",
            r"^Warning: The following arguments do not match the ones in the `trainer_state\.json`",
            r"^Num examples = ",
            r"^Num Epochs = ",
            r"^Num update steps per epoch = ",
            r"^Gradient Accumulation steps = ",
            r"^Total optimization steps = ",
            r"^Resuming training from checkpoint with epoch \d+ and global step \d+$",
            r"^Fast-forwarding the dataloader past ",
            r"^There seems not to be a single sample in your epoch_iterator",
        ]
    )
)
# Messages HF may print that say nothing about durations or resumes (most are already dropped by
# the harness's ``_common.NOISE``). Every recorded message must match RELEVANT or this, so a new
# message from a new version is looked at rather than silently ignored.
IRRELEVANT = re.compile(
    "|".join(
        [
            r"^Instantaneous batch size per device",
            r"^Total train batch size",
            r"^Number of trainable parameters",
            r"^Training with DataParallel",
            r"^No output directory specified",
            r"^Saving model checkpoint to",
            r"^Loading model from",
            r"Training completed",
        ]
    )
)

HARNESS_DEFAULT_SAVE_STEPS = 500  # _transformers.run: save_steps before any call sets it
HARNESS_DEFAULT_LEARNING_RATE = 0.0  # _transformers.run: unless a call's args give one


def to_calls(specs: list[CallSpec]) -> list[Call]:
    """The profile's calls for the harness's call specs, made as ``_transformers.run`` makes them.

    ``save_steps`` carries over from the last call that set ``save_every`` (the harness does that
    so a resume does not warn about it); a call on a reused trainer repeats the arguments that
    trainer was built with, and its ``args.X`` assignments become ``set``.
    """
    calls: list[Call] = []
    save_steps = HARNESS_DEFAULT_SAVE_STEPS
    built: Call | None = None
    for raw in specs:
        spec = call_defaults(raw)
        data = Dataset(samples=spec["data"]["n"], offset=spec["data"]["offset"])
        overrides = Overrides(
            **{path.removeprefix("args."): value for path, value in spec["set"].items()}
        )
        common: dict[str, Any] = {
            "data": data,
            "resume_latest": spec["resume"] == "latest",
            "crash_at": spec["crash_at"],
            "set": overrides,
        }
        if spec["fresh"] or built is None:
            save = spec["save_every"]
            save_steps = save if isinstance(save, int) else save_steps
            built = Call(
                per_device_train_batch_size=spec["batch_size"],
                train_sampling_strategy="random" if spec["shuffle"] else "sequential",
                save_strategy="steps" if isinstance(save, int) else save or "no",
                save_steps=save_steps,
                **{"learning_rate": HARNESS_DEFAULT_LEARNING_RATE, **spec["args"]},
                **common,
            )
            calls.append(built)
        else:
            calls.append(Call(**{**_arguments(built), **common, "fresh": False}))
    return calls


def _arguments(call: Call) -> dict[str, Any]:
    names = [
        "per_device_train_batch_size",
        "num_train_epochs",
        "max_steps",
        "gradient_accumulation_steps",
        "ignore_data_skip",
        "train_sampling_strategy",
        "save_strategy",
        "save_steps",
        "output_dir",
        "learning_rate",
        "lr_scheduler_type",
        "warmup_steps",
        "lr_scheduler_kwargs",
    ]
    return {name: getattr(call, name) for name in names}


def relevant(observed: dict[str, Any]) -> list[str]:
    """The recorded warnings, then logs, that are about durations and resumes."""
    return [text for text in observed["warnings"] + observed["logs"] if RELEVANT.search(text)]


def _epochs(batches: list[list[int]]) -> list[list[int]]:
    """Split the profile's steps into epochs: within an epoch its ids only increase."""
    spans: list[list[int]] = []
    for index, ids in enumerate(batches):
        if not spans or ids[0] <= batches[index - 1][-1]:
            spans.append([])
        spans[-1].append(index)
    return spans


def check_batches(predicted: CallOutcome, observed: dict[str, Any], *, shuffled: bool) -> None:
    """Unshuffled: the ids of every step are equal. Shuffled: every step reads as many samples,
    and every complete epoch reads the same ids."""
    got = [list(ids) for ids in predicted.batches]
    assert predicted.steps == observed["steps"]
    if not shuffled:
        assert got == observed["batches"]
        return
    assert [len(ids) for ids in got] == [len(ids) for ids in observed["batches"]]
    data = call_defaults(observed["call"])["data"]
    whole = Counter(range(data["offset"], data["offset"] + data["n"]))
    for span in _epochs(got):
        ours = Counter(i for index in span for i in got[index])
        theirs = Counter(i for index in span for i in observed["batches"][index])
        if ours == whole:
            assert ours == theirs


def check_counters(predicted: CallOutcome, observed: dict[str, Any]) -> None:
    """Every recorded counter is equal, ``epoch`` after the harness's ``round(epoch, 6)``."""
    for name, value in observed["counters_after"].items():
        ours = predicted.counters[name]
        if name == "epoch" and isinstance(ours, float):
            ours = round(ours, 6)
        assert (name, ours) == (name, value)
        assert (name, type(ours)) == (name, type(value))


def check_call(predicted: CallOutcome, observed: dict[str, Any]) -> None:
    """Everything the harness recorded about one call matches the profile's outcome."""
    shuffled = call_defaults(observed["call"])["shuffle"]
    check_batches(predicted, observed, shuffled=shuffled)
    check_counters(predicted, observed)
    error = observed["error"]
    assert predicted.error == (None if error is None else TrainerError(**error))
    assert predicted.crashed == observed["crashed"]
    assert list(predicted.messages) == relevant(observed)
    check_rates(predicted, observed)


def recorded_rates(observed: dict[str, Any]) -> list[float] | None:
    """The learning rate of every recorded step (``lr`` in its position), when it was recorded."""
    positions = observed["positions"]
    if not positions or any("lr" not in position for position in positions):
        return None
    return [position["lr"] for position in positions]


def check_rates(predicted: CallOutcome, observed: dict[str, Any]) -> None:
    """The profile reports a rate per step, and where HF's were recorded, each equals HF's to
    1e-9 relative."""
    assert len(predicted.rates) == predicted.steps
    rates = recorded_rates(observed)
    if rates is not None:
        assert len(predicted.rates) == len(rates)
        for step, (ours, theirs) in enumerate(zip(predicted.rates, rates, strict=True)):
            assert math.isclose(ours, theirs, rel_tol=1e-9), (step, ours, theirs)


def _replay(scenario_id: str) -> list[tuple[CallOutcome, dict[str, Any]]]:
    observed = TRANSFORMERS[scenario_id]["calls"]
    predicted = simulate(to_calls([call["call"] for call in observed]))
    assert len(predicted) == len(observed)
    return list(zip(predicted, observed, strict=True))


IDS = sorted(TRANSFORMERS)


def test_observations_are_this_version() -> None:
    """The recorded runs are of the transformers version the profile names."""
    assert OBSERVED["meta"]["frameworks"]["transformers"]["versions"]["transformers"] == VERSION


def test_every_scenario_was_recorded() -> None:
    """Every transformers scenario of the grid has an observation to check the profile on."""
    assert {s["id"] for s in scenarios.TRANSFORMERS} <= set(TRANSFORMERS)


@pytest.mark.parametrize("scenario_id", IDS)
def test_steps_and_batches(scenario_id: str) -> None:
    """Each call trains as many optimizer steps as HF did, reading the same sample ids per step
    (run length, epoch loop, accumulation groups, resume skip)."""
    for predicted, observed in _replay(scenario_id):
        check_batches(predicted, observed, shuffled=call_defaults(observed["call"])["shuffle"])


@pytest.mark.parametrize("scenario_id", IDS)
def test_counters(scenario_id: str) -> None:
    """global_step, the float epoch, max_steps and num_train_epochs after each call are HF's."""
    for predicted, observed in _replay(scenario_id):
        check_counters(predicted, observed)


@pytest.mark.parametrize("scenario_id", IDS)
def test_error_and_crash(scenario_id: str) -> None:
    """Each call raises HF's exception (type and message) or none, and crashes where it did."""
    for predicted, observed in _replay(scenario_id):
        error = observed["error"]
        assert predicted.error == (None if error is None else TrainerError(**error))
        assert predicted.crashed == observed["crashed"]


@pytest.mark.parametrize("scenario_id", IDS)
def test_messages(scenario_id: str) -> None:
    """The profile prints exactly the duration/resume messages HF printed, in order."""
    for predicted, observed in _replay(scenario_id):
        assert list(predicted.messages) == relevant(observed)


@pytest.mark.parametrize("scenario_id", IDS)
def test_every_recorded_message_is_classified(scenario_id: str) -> None:
    """No recorded message is outside both RELEVANT and IRRELEVANT (a new one needs a look)."""
    for observed in TRANSFORMERS[scenario_id]["calls"]:
        for text in observed["warnings"] + observed["logs"]:
            assert RELEVANT.search(text) or IRRELEVANT.search(text), text


def test_shuffled_resume_reads_the_uninterrupted_positions() -> None:
    """A shuffled crash at 13 and resume reads the positions of one uninterrupted run, and so
    did HF: the two calls together read exactly the ids of the uninterrupted shuffled run."""
    whole = TRANSFORMERS["transformers/shuffle_epochs2"]["calls"][0]
    crashed, resumed = TRANSFORMERS["transformers/crash13_shuffle"]["calls"]
    assert crashed["batches"] + resumed["batches"] == whole["batches"]
    (uninterrupted,) = simulate(to_calls([whole["call"]]))
    first, second = simulate(to_calls([crashed["call"], resumed["call"]]))
    assert [tuple(ids) for ids in (*first.batches, *second.batches)] == [
        tuple(ids) for ids in uninterrupted.batches
    ]


A = Dataset(samples=100)


def test_fractional_epochs_with_accumulation_end_past_the_fraction() -> None:
    """1.5 epochs with GA=3 is ceil(1.5 * 4) = 6 updates, which end at epoch 1.6 (FINDINGS D6)."""
    (outcome,) = simulate(
        [
            Call(
                data=A,
                per_device_train_batch_size=10,
                num_train_epochs=1.5,
                gradient_accumulation_steps=3,
            )
        ]
    )
    assert outcome.steps == 6
    assert outcome.counters["epoch"] == 1.6
    assert [len(ids) for ids in outcome.batches] == [30, 30, 30, 10, 30, 30]


def test_resume_past_max_steps_trains_one_step_more() -> None:
    """Resuming at step 13 with max_steps=13 still runs epoch 1 and trains step 14 (live-checked
    below): the stop check only follows an optimizer step."""
    crash = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    _, resumed = simulate(
        [
            attrs.evolve(crash, crash_at=13),
            attrs.evolve(crash, max_steps=13, resume_latest=True),
        ]
    )
    assert resumed.steps == 1
    assert resumed.counters == {
        "global_step": 14,
        "epoch": 1.4,
        "max_steps": 13,
        "num_train_epochs": 2,
    }


def test_max_steps_zero_trains_one_step() -> None:
    """max_steps=0 counts as unset for the epoch count but caps the run after its first step."""
    (outcome,) = simulate([Call(data=A, per_device_train_batch_size=10, max_steps=0)])
    assert outcome.steps == 1
    assert outcome.counters == {
        "global_step": 1,
        "epoch": 0.1,
        "max_steps": 0,
        "num_train_epochs": 3,
    }


# Killed after step k, re-run from the newest checkpoint: (scenario, the checkpoint the re-run
# loaded, how many steps it trains again). Each row is a recorded real run.
RERUNS = [
    # save_steps=4: checkpoint-12 is the newest when the kill comes after step 13
    ("transformers/save4_crash13", "checkpoint-12", 1),
    # GA=3: the kill is still per optimizer step; step 13's three micro-batches come again
    ("transformers/accum3_bs5_save4_crash13", "checkpoint-12", 1),
    # step 10 ends epoch 0; the steps strategy saves nothing at an epoch's end
    ("transformers/save3_crash10_epoch_end", "checkpoint-9", 1),
    # save_strategy='epoch': the epoch-end save after step 10 comes before step 11 starts
    ("transformers/save_epoch_crash10", "checkpoint-10", 0),
    # save_strategy='epoch': steps 11-13 came after the newest (epoch-end) checkpoint
    ("transformers/save_epoch_crash13", "checkpoint-10", 3),
    # save_steps=13: a checkpoint at the very step the kill came after
    ("transformers/crash13", "checkpoint-13", 0),
    # killed before step 1: nothing was saved, so the re-run starts over
    ("transformers/save4_crash0", None, 0),
]


@pytest.mark.parametrize(("scenario_id", "loaded", "again"), RERUNS)
def test_the_rerun_trains_again_the_steps_after_the_newest_checkpoint(
    scenario_id: str, loaded: str | None, again: int
) -> None:
    """HF resumed from the checkpoint of the row and trained its steps after it a second time,
    on the same ids; the profile's two calls do the same."""
    crashed, resumed = TRANSFORMERS[scenario_id]["calls"]
    assert crashed["crashed"]
    assert not crashed.get("pending_micro_batches")  # killed before step k + 1's first forward
    checkpoint = resumed["checkpoint_loaded"]
    assert (checkpoint and checkpoint["dir"]) == loaded
    start = checkpoint["global_step"] if checkpoint else 0
    assert crashed["steps"] - start == again
    assert resumed["positions"][0]["global_step"] == start + 1
    assert resumed["batches"][:again] == crashed["batches"][start:]
    first, second = simulate(to_calls([crashed["call"], resumed["call"]]))
    assert first.crashed
    assert [list(ids) for ids in second.batches[:again]] == [
        list(ids) for ids in first.batches[start:]
    ]


@pytest.mark.parametrize(
    ("strategy", "save_steps"), [("steps", 1), ("steps", 4), ("steps", 13), ("epoch", 500)]
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_a_kill_loses_only_the_steps_after_the_newest_checkpoint(
    strategy: Literal["steps", "epoch"], save_steps: int, accumulation: int
) -> None:
    """For every k, a call killed after step k trained k steps and is killed unless k is its
    last step; the steps up to the newest checkpoint (a multiple of save_steps, or an epoch's
    end) followed by the re-run are exactly the uninterrupted run."""
    base = Call(
        data=A,
        per_device_train_batch_size=10,
        num_train_epochs=3,
        gradient_accumulation_steps=accumulation,
        train_sampling_strategy="sequential",
        save_strategy=strategy,
        save_steps=save_steps,
    )
    (whole,) = simulate([base])
    per_epoch = whole.steps // 3
    every = save_steps if strategy == "steps" else per_epoch
    for k in range(whole.steps + 1):
        crashed, rerun = simulate(
            [attrs.evolve(base, crash_at=k), attrs.evolve(base, resume_latest=True)]
        )
        assert (k, crashed.crashed, crashed.steps) == (k, k < whole.steps, k)
        kept = whole.steps if k == whole.steps else k // every * every
        assert [list(ids) for ids in [*crashed.batches[:kept], *rerun.batches]] == [
            list(ids) for ids in whole.batches
        ], k


def test_a_resume_already_past_crash_at_is_killed_before_its_first_step() -> None:
    """A call that starts at global_step 13 with crash_at=5 trains nothing and is killed (live
    run below); its state is the checkpoint's."""
    first = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    _, resumed = simulate(
        [attrs.evolve(first, crash_at=13), attrs.evolve(first, crash_at=5, resume_latest=True)]
    )
    assert (resumed.crashed, resumed.steps, resumed.counters["global_step"]) == (True, 0, 13)


def test_negative_crash_at_is_refused() -> None:
    """crash_at counts steps from 0; a negative one is a mistake, not 'never'."""
    with pytest.raises(ValueError, match=r"crash_at must be an int >= 0 or None, got -1"):
        simulate([Call(data=A, crash_at=-1)])


def test_resume_keeps_the_checkpoint_save_steps() -> None:
    """A resume saves at the checkpoint's save_steps, not the new one, and only warns: killed
    after step 15, it left no checkpoint-15 (nor 10), so the next resume is from 13 again."""
    first = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    _, resumed, again = simulate(
        [
            attrs.evolve(first, crash_at=13),
            attrs.evolve(first, save_steps=5, crash_at=15, resume_latest=True),
            attrs.evolve(first, save_steps=5, resume_latest=True),
        ]
    )
    assert resumed.crashed
    assert resumed.counters["global_step"] == 15
    assert resumed.messages[0].endswith(
        "\n\tsave_steps: 5 (from args) != 13 (from trainer_state.json)"
    )
    assert again.messages[-2] == "Resuming training from checkpoint with epoch 1 and global step 13"
    assert [tuple(ids) for ids in again.batches] == [tuple(ids) for ids in resumed.batches] + [
        tuple(range(start, start + 10)) for start in range(50, 100, 10)
    ]


def test_resume_true_without_checkpoint_raises_hf_error() -> None:
    """resume_from_checkpoint=True with no checkpoint-N raises HF's ValueError; state untouched."""
    (outcome,) = simulate([Call(data=A, resume_from_checkpoint=True, output_dir="out")])
    assert outcome.error == TrainerError(
        type="ValueError", message="No valid checkpoint found in output directory (out)"
    )
    assert outcome.counters == {"global_step": 0, "epoch": 0, "max_steps": 0, "num_train_epochs": 0}


def test_resume_true_picks_the_highest_step() -> None:
    """resume_from_checkpoint=True is get_last_checkpoint: the highest N, not the newest write."""
    base = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    outcomes = simulate(
        [
            attrs.evolve(base, crash_at=13),
            attrs.evolve(base, save_steps=5, crash_at=5),
            attrs.evolve(base, save_steps=5, resume_from_checkpoint=True),
        ]
    )
    assert outcomes[2].messages[-2] == (
        "Resuming training from checkpoint with epoch 1 and global step 13"
    )


def test_empty_data_without_max_steps_raises_hf_error() -> None:
    """An empty data set needs max_steps > 0 (its loader has no usable length)."""
    (outcome,) = simulate([Call(data=Dataset(samples=0), train_sampling_strategy="sequential")])
    assert outcome.error == TrainerError(
        type="ValueError",
        message="args.max_steps must be set to a positive value if dataloader does not have a "
        "length, was -1",
    )


def test_reused_trainer_must_repeat_its_arguments() -> None:
    """fresh=False with other TrainingArguments than the Trainer was built with is refused."""
    with pytest.raises(ValueError, match=r"repeat per_device_train_batch_size=8"):
        simulate([Call(data=A), Call(data=A, fresh=False, per_device_train_batch_size=4)])


def test_reused_trainer_keeps_its_loader_batch_size() -> None:
    """set per_device_train_batch_size on a built Trainer only changes the resume warning."""
    first = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    _, again = simulate(
        [
            attrs.evolve(first, crash_at=13),
            attrs.evolve(
                first,
                fresh=False,
                resume_latest=True,
                set=Overrides(per_device_train_batch_size=20),
            ),
        ]
    )
    assert [len(ids) for ids in again.batches] == [10] * 7
    assert "per_device_train_batch_size: 20 (from args) != 10" in again.messages[0]


# -- learning rates ---------------------------------------------------------------------------

RATE_IDS = sorted(
    scenario_id
    for scenario_id, observation in TRANSFORMERS.items()
    if any(recorded_rates(call) is not None for call in observation["calls"])
)
BASE = 0.1  # the learning_rate of every transformers/lr_* scenario


def test_every_learning_rate_scenario_recorded_its_rates() -> None:
    """Every lr_ scenario of the grid has the rate of each of its steps recorded."""
    wanted = {s["id"] for s in scenarios.TRANSFORMERS if s["id"].startswith("transformers/lr_")}
    assert wanted
    assert wanted <= set(RATE_IDS)
    for scenario_id in wanted:
        for call in TRANSFORMERS[scenario_id]["calls"]:
            assert call["steps"] == 0 or recorded_rates(call) is not None, scenario_id


@pytest.mark.parametrize("scenario_id", RATE_IDS)
def test_rates(scenario_id: str) -> None:
    """Each optimizer step's learning rate is HF's, to 1e-9 relative (the scheduler's lambda,
    its length, its steps under accumulation, and what a resume restores)."""
    for predicted, observed in _replay(scenario_id):
        check_rates(predicted, observed)


def _recorded(scenario_id: str) -> list[list[float]]:
    rates = [recorded_rates(call) for call in TRANSFORMERS[scenario_id]["calls"]]
    assert all(r is not None for r in rates)
    return [r or [] for r in rates]


def test_a_resume_from_every_step_keeps_the_uninterrupted_rates() -> None:
    """save_steps=1, killed after step 9 mid-decay: HF restored scheduler.pt, so the two calls
    used the uninterrupted run's 20 rates, and so does the profile."""
    (whole,) = _recorded("transformers/lr_cosine_min")
    crashed, resumed = _recorded("transformers/lr_cosine_min_save1_crash9")
    assert (len(crashed), len(resumed)) == (9, 11)
    assert crashed + resumed == whole
    first, second = (o.rates for o, _ in _replay("transformers/lr_cosine_min_save1_crash9"))
    assert first + second == tuple(whole)


def test_a_lost_step_is_trained_again_at_its_rate() -> None:
    """save_steps=4, killed after step 9: the re-run from checkpoint-8 trains step 9 again at
    the rate it had, then goes on as the uninterrupted run."""
    (whole,) = _recorded("transformers/lr_cosine_min")
    crashed, resumed = _recorded("transformers/lr_cosine_min_save4_crash9")
    assert crashed == whole[:9]
    assert resumed == whole[8:]


def _hf_cosine(k: int, *, warmup: int, steps: int) -> float:
    """HF's documented cosine: linear warmup from 0, then half a cosine to 0 over the rest."""
    if k < warmup:
        return k / warmup
    return 0.5 * (1 + math.cos(math.pi * (k - warmup) / (steps - warmup)))


def test_accumulation_steps_the_scheduler_once_per_optimizer_step() -> None:
    """GA=3 on 20 micro-batches: 7 updates an epoch, 14 in all; the update from global step k
    uses the cosine at k, and the re-run from checkpoint-8 goes on from there."""
    crashed, resumed = _recorded("transformers/lr_cosine_accum3_bs5_save4_crash9")
    expected = [BASE * _hf_cosine(k, warmup=2, steps=14) for k in range(14)]
    assert len(crashed) == 9
    for ours, theirs in zip(crashed + resumed, expected[:9] + expected[8:], strict=True):
        assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-15)


# Steps whose rate is not the uninterrupted single run's, each recorded: (scenario, call, step of
# the call, the rate HF used, why). Expected values are HF's formulas worked by hand.
DIFFERENT_RATES = [
    # the first resumed step uses the optimizer's saved rate: linear over the old max_steps 10
    ("transformers/lr_linear_resume_max_steps20", 1, 0, BASE * (10 - 4) / (10 - 2)),
    # then the new lambda (max_steps 20) on the restored step: linear at 5 of 20
    ("transformers/lr_linear_resume_max_steps20", 1, 1, BASE * (20 - 5) / (20 - 2)),
    # a resume with learning_rate=0.5 and cosine: first the saved (linear) rate...
    ("transformers/lr_resume_new_rate_and_type", 1, 0, BASE * (10 - 4) / (10 - 2)),
    # ...then the new cosine, on the checkpoint's base 0.1, not 0.5
    ("transformers/lr_resume_new_rate_and_type", 1, 1, BASE * _hf_cosine(5, warmup=2, steps=10)),
    # a later train() on that Trainer peaks at the checkpoint's initial_lr, 0.1
    ("transformers/lr_resume_new_rate_and_type", 2, 2, BASE),
    # resumed from the finished run's last checkpoint: one more step, at lambda(6) = min_lr_rate
    ("transformers/lr_cosine_resume_at_end", 1, 0, BASE * 0.1),
    # a second Trainer warms up again from 0, over its own max_steps
    ("transformers/lr_two_trainers_crash3", 1, 0, 0.0),
    ("transformers/lr_two_trainers_crash3", 1, 2, BASE),
    # its resume goes on at step 3 of its own linear schedule over 8
    ("transformers/lr_two_trainers_crash3", 2, 0, BASE * (8 - 3) / (8 - 2)),
    # a second train() on the same Trainer: warmup ceil(3 * 0.5) = 2 of its own 3 steps
    ("transformers/lr_second_train_restarts", 1, 2, BASE),
    # warmup_steps=0.5 of max_steps ceil(1.5 * 4) = 6 is 3 steps; the 4th is at the peak
    ("transformers/lr_accum3_epochs1.5_warmup_ratio", 0, 3, BASE),
    # 'constant' ignores warmup_steps=2
    ("transformers/lr_constant_ignores_warmup", 0, 0, BASE),
    # 'constant_with_warmup' over 3 steps
    ("transformers/lr_constant_with_warmup", 0, 1, BASE / 3),
    # 'polynomial' (power 1) decays linearly to lr_end 0.01 at max_steps: 6 of its 8 steps left
    ("transformers/lr_polynomial_to_floor", 0, 4, (BASE - 0.01) * (1 - 2 / 8) + 0.01),
    # 'warmup_stable_decay' starts at min_lr_ratio, not at 0
    ("transformers/lr_warmup_stable_decay", 0, 0, BASE * 0.1),
    # max_steps=0 still trains a step; linear over 0 steps gives it max(0, 0 / 1) = 0
    ("transformers/lr_max_steps0", 0, 0, 0.0),
]


@pytest.mark.parametrize(("scenario_id", "call", "step", "rate"), DIFFERENT_RATES)
def test_rates_at_resumes_and_call_boundaries(
    scenario_id: str, call: int, step: int, rate: float
) -> None:
    """HF used the row's rate at that step, and the profile reports it."""
    recorded = _recorded(scenario_id)[call][step]
    assert math.isclose(recorded, rate, rel_tol=1e-12, abs_tol=1e-15)
    predicted = _replay(scenario_id)[call][0].rates[step]
    assert math.isclose(predicted, rate, rel_tol=1e-12, abs_tol=1e-15)


def test_a_resume_with_a_new_max_steps_differs_from_a_fresh_run_only_at_its_first_step() -> None:
    """Resumed at step 4 with max_steps=20: the first step keeps the old schedule's rate, every
    later one is a fresh max_steps=20 run's (the restored step, the new lambda)."""
    _, resumed = _recorded("transformers/lr_linear_resume_max_steps20")
    (fresh,) = simulate(to_calls([{"args": {"max_steps": 20, **scenarios.HF_LINEAR}}]))
    assert not math.isclose(resumed[0], fresh.rates[4])
    assert resumed[1:] == list(fresh.rates[5:])


@pytest.mark.parametrize(
    ("kind", "kwargs"),
    [
        ("linear", {}),
        ("cosine_with_min_lr", {"min_lr_rate": 0.1}),
        ("polynomial", {"lr_end": 0.01, "power": 2.0}),
        ("warmup_stable_decay", {"num_decay_steps": 5, "decay_type": "1-sqrt"}),
    ],
)
@pytest.mark.parametrize(("save_steps", "accumulation"), [(1, 1), (4, 1), (4, 3)])
def test_the_rerun_rates_are_the_uninterrupted_rates(
    kind: Literal["linear", "cosine_with_min_lr", "polynomial", "warmup_stable_decay"],
    kwargs: dict[str, float | str],
    save_steps: int,
    accumulation: int,
) -> None:
    """For every k, killed after step k and re-run with the same arguments: the steps kept up to
    the newest checkpoint and the re-run's use exactly the uninterrupted run's rates (HF restores
    the optimizer's rate and the scheduler's step)."""
    base = Call(
        data=A,
        per_device_train_batch_size=10,
        num_train_epochs=2,
        gradient_accumulation_steps=accumulation,
        train_sampling_strategy="sequential",
        save_steps=save_steps,
        learning_rate=BASE,
        lr_scheduler_type=kind,
        warmup_steps=3,
        lr_scheduler_kwargs=kwargs,
    )
    (whole,) = simulate([base])
    assert len(set(whole.rates)) > 3  # a schedule, not a constant
    for k in range(whole.steps):
        crashed, rerun = simulate(
            [attrs.evolve(base, crash_at=k), attrs.evolve(base, resume_latest=True)]
        )
        kept = k // save_steps * save_steps
        assert crashed.rates[:kept] + rerun.rates == whole.rates, k


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # a type the profile has no lambda for
        (
            {"lr_scheduler_type": "inverse_sqrt"},
            r"lr_scheduler_type='inverse_sqrt' is not modelled",
        ),
        # a keyword the chosen type does not take
        ({"lr_scheduler_kwargs": {"min_lr_rate": 0.1}}, r"\['min_lr_rate'\] are not modelled"),
        # HF's cosine_with_min_lr needs exactly one of the two
        ({"lr_scheduler_type": "cosine_with_min_lr"}, r"takes min_lr or min_lr_rate"),
        # HF's get_wsd_schedule needs the length of the decay
        ({"lr_scheduler_type": "warmup_stable_decay"}, r"needs an int num_decay_steps"),
        # HF's polynomial refuses an end above the start
        (
            {"lr_scheduler_type": "polynomial", "lr_scheduler_kwargs": {"lr_end": 0.5}},
            r"lr_end \(0.5\) must be smaller than initial lr \(0.1\)",
        ),
        # TrainingArguments refuses a negative warmup
        ({"warmup_steps": -1}, r"warmup_steps must be >= 0, got -1"),
    ],
)
def test_scheduler_arguments_the_profile_refuses(arguments: dict[str, Any], message: str) -> None:
    """Scheduler arguments outside the modelled set raise ValueError naming them."""
    with pytest.raises(ValueError, match=message):
        simulate([Call(data=A, learning_rate=BASE, **arguments)])


SCHEDULED = """
[run]
max_duration = "2ep"
[loaders.a]
samples = 100
batch_size = 10
[loaders.b]
samples = 300
batch_size = 10
[[fit]]
loader = "a"
name = "first"
[[fit]]
loader = "b"
duration = "8ba"
[schedule]
warmup = "3ba"
"""

# A two-call script's schedule, and how the translation writes it: (its pieces, the second
# call's written scheduler, why that type).
WRITTEN = [
    # a cosine to a floor, then linear to 0: cosine_with_min_lr, then linear from the floor
    (
        [("cosine", "0.1", "stop:first"), ("linear", "0", "end")],
        'call #0: TrainingArguments(learning_rate=1.0, lr_scheduler_type="cosine_with_min_lr", '
        'warmup_steps=3, lr_scheduler_kwargs={"min_lr_rate": 0.1}); call #1: '
        'TrainingArguments(learning_rate=0.1, lr_scheduler_type="linear")',
    ),
    # a linear decay to a floor is 'polynomial' of power 1 with lr_end; the floor held after it
    # is 'constant' at that rate
    (
        [("linear", "0.2", "stop:first"), ("constant", None, "end")],
        'call #0: TrainingArguments(learning_rate=1.0, lr_scheduler_type="polynomial", '
        'warmup_steps=3, lr_scheduler_kwargs={"lr_end": 0.2, "power": 1.0}); call #1: '
        'TrainingArguments(learning_rate=0.2, lr_scheduler_type="constant")',
    ),
    # a held peak after the warmup is 'constant_with_warmup'; a cosine to 0 is 'cosine'
    (
        [("constant", None, "stop:first"), ("cosine", "0", "end")],
        'call #0: TrainingArguments(learning_rate=1.0, lr_scheduler_type="constant_with_warmup", '
        "warmup_steps=3); call #1: TrainingArguments(learning_rate=1.0, "
        'lr_scheduler_type="cosine")',
    ),
]


def _scheduled(pieces: list[tuple[str, str | None, str]]) -> Scenario:
    text = SCHEDULED
    for kind, to, until in pieces:
        text += f'[[schedule.pieces]]\nkind = "{kind}"\nuntil = "{until}"\n'
        if to is not None:
            text += f'to = "{to}"\n'
    return Scenario.from_toml(text)


@pytest.mark.parametrize(("pieces", "written"), WRITTEN)
def test_the_translation_writes_each_calls_scheduler(
    pieces: list[tuple[str, str | None, str]], written: str
) -> None:
    """Each call's Trainer gets its part of the schedule in TrainingArguments; the note says
    how, and the translation's calls carry it."""
    scenario = _scheduled(pieces)
    translation = translate(scenario, datasets(scenario))
    assert translation.schedule == (
        "one Trainer per call, its scheduler over its own max_steps: " + written
    )
    assert [call.learning_rate for call in translation.rerun] == [
        call.learning_rate for call in translation.calls
    ]


@pytest.mark.parametrize("pieces", [row[0] for row in WRITTEN])
def test_the_written_schedule_gives_the_plans_rates_across_any_crash(
    pieces: list[tuple[str, str | None, str]],
) -> None:
    """The translated script, killed after any step k and re-run (save_steps=1), uses the
    plan's learning rate at every step, to 1e-9."""
    scenario = _scheduled(pieces)
    for crash_at in (None, *range(1, 28)):
        (outcome,) = compare(scenario, crash_at=crash_at, trainers=["transformers"]).trainers
        assert len(outcome.rates) == outcome.steps == 28, crash_at
        assert outcome.differences == (), crash_at


def test_a_schedule_hf_cannot_write_runs_at_the_base_rate_and_says_why() -> None:
    """A cosine across both calls has no per-call HF scheduler: the translation says why and
    runs every Trainer at learning_rate=1.0; the comparison does not hold those rates to the
    plan's (the profile still reports them)."""
    scenario = _scheduled([("cosine", "0.1", "end")])
    translation = translate(scenario, datasets(scenario))
    assert translation.schedule.startswith(
        "cannot be written: call #0's part of the schedule (steps 0 to 20) decays over other "
        "steps than those after its warmup"
    )
    assert {(c.learning_rate, c.lr_scheduler_type) for c in translation.calls} == {
        (1.0, "constant")
    }
    # The constant rates are the fallback's, not a scheduler given the curve: not compared.
    (outcome,) = compare(scenario, trainers=["transformers"]).trainers
    assert outcome.rates == ()
    assert not any(d.startswith("learning rate") for d in outcome.differences)
    assert [len(o.rates) for o in outcome.outcomes] == [o.steps for o in outcome.outcomes]


def test_rules_name_a_source_at_this_version() -> None:
    """Every rule is one or two plain sentences with a transformers (or torch) source line."""
    assert RULES
    for text, source in RULES:
        assert text.endswith(".")
        assert text.count(". ") <= 1
        assert re.match(r"(transformers|torch)/[a-z_/]+\.py:\d+ \(", source), source


# Live: the real runner and the profile agree. Scenarios of the grid, plus a few edge cases that
# are not in observed.json (their expectations above were checked with these runs).
LIVE_GRID = [
    "transformers/crash13",
    "transformers/save4_crash13",
    "transformers/accum3_bs5_save4_crash13",
    "transformers/save_epoch_crash10",
    "transformers/crash13_ignore_data_skip",
    "transformers/bs10to5_at13",
    "transformers/phase_B_2.1",
    "transformers/accum3_crash5_resume",
    "transformers/second_train_same",
    "transformers/lr_cosine_min_save4_crash9",
    "transformers/lr_resume_new_rate_and_type",
]
EMPTY = {"n": 0, "offset": 0}
LIVE_EXTRA: dict[str, list[CallSpec]] = {
    "resume13_max_steps13": [
        {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
        {"args": {"max_steps": 13}, "resume": "latest"},
    ],
    "resume_new_save_steps": [
        {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
        {"args": {"num_train_epochs": 2}, "save_every": 5, "crash_at": 15, "resume": "latest"},
        {"args": {"num_train_epochs": 2}, "save_every": 5, "resume": "latest"},
    ],
    "resume13_crash5": [
        {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
        {"args": {"num_train_epochs": 2}, "crash_at": 5, "resume": "latest"},
    ],
    "reused_set_batch_size": [
        {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
        {"fresh": False, "set": {"args.per_device_train_batch_size": 20}, "resume": "latest"},
    ],
    "reused_set_accumulation": [
        {"args": {"num_train_epochs": 1}},
        {
            "fresh": False,
            "set": {"args.gradient_accumulation_steps": 3, "args.num_train_epochs": 2},
        },
    ],
    "max_steps0": [{"args": {"max_steps": 0}}],
    "epochs0": [{"args": {"num_train_epochs": 0}}],
    "empty_sequential": [{"data": EMPTY, "args": {"num_train_epochs": 2}}],
    "empty_sequential_max_steps3": [{"data": EMPTY, "args": {"max_steps": 3}}],
    "empty_random": [{"data": EMPTY, "shuffle": True, "args": {"num_train_epochs": 2}}],
}
LIVE = {**{i: scenarios.BY_ID[i]["calls"] for i in LIVE_GRID}, **LIVE_EXTRA}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(LIVE))
def test_live_runs_match_the_profile(name: str) -> None:
    """Real Trainer.train runs of the installed transformers agree with the profile call by call
    (catches version drift)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("transformers", reason="transformers is not installed")
    from tests.frameworks import runners

    specs = LIVE[name]
    observed = runners.run_calls("transformers", specs)
    predicted = simulate(to_calls(specs))
    assert len(predicted) == len(observed)
    for outcome, call in zip(predicted, observed, strict=True):
        check_call(outcome, call)
        for text in call["warnings"] + call["logs"]:
            assert RELEVANT.search(text) or IRRELEVANT.search(text), text
