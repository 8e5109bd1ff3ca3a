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
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations.trainers import CallOutcome, Dataset, TrainerError
from durations.trainers.transformers import RULES, VERSION, Call, Overrides, simulate
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
                save_strategy="steps" if isinstance(save, int) else "no",
                save_steps=save_steps,
                **spec["args"],
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
    assert first.batches + second.batches == uninterrupted.batches


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


def test_resume_keeps_the_checkpoint_save_steps() -> None:
    """A resume saves at the checkpoint's save_steps, not the new one, and only warns."""
    first = Call(data=A, per_device_train_batch_size=10, num_train_epochs=2, save_steps=13)
    _, resumed = simulate(
        [
            attrs.evolve(first, crash_at=13),
            attrs.evolve(first, save_steps=5, crash_at=15, resume_latest=True),
        ]
    )
    assert resumed.crashed
    assert resumed.counters["global_step"] == 20  # no checkpoint-15: saved at the end only
    assert resumed.messages[0].endswith(
        "\n\tsave_steps: 5 (from args) != 13 (from trainer_state.json)"
    )


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
    "transformers/crash13_ignore_data_skip",
    "transformers/bs10to5_at13",
    "transformers/phase_B_2.1",
    "transformers/accum3_crash5_resume",
    "transformers/second_train_same",
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
