"""The Lightning profile (:mod:`durations.trainers.lightning`) against real Lightning runs.

The pure tests replay every ``lightning/*`` scenario of ``observed.json`` through
:func:`~durations.trainers.lightning.simulate` and compare, call by call, what the profile
predicts with what Lightning 2.6.6 did. They need no framework. The live test runs a few scenarios
through the real runner again (skipped without ``pytorch_lightning``), so that a new Lightning
release that changes behaviour is caught.

Which messages are compared: the harness records every warning and INFO log of Lightning's
loggers except its ``_common.NOISE`` patterns. Of those, the ones about durations and resumes are
the ones matching :data:`RELEVANT` below; the profile must emit exactly these, in order, warnings
and logs compared separately (the harness stores them in two lists). The harness drops
"`Trainer.fit` stopped: `max_steps=N` reached." as noise, so the profile's copy of that line is
dropped the same way before comparing.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from durations.trainers import CallOutcome, Dataset
from durations.trainers.lightning import RULES, VERSION, Call, simulate
from tests.frameworks import scenarios
from tests.frameworks._common import NOISE, CallSpec, call_defaults

OBSERVED = json.loads((Path(__file__).parent / "observed.json").read_text())["observations"]
LIGHTNING_IDS = [s["id"] for s in scenarios.LIGHTNING]

# Messages about durations and resumes: the limits and their defaults, why a fit stopped, the
# mid-epoch resume warning, invalid limits and empty loaders. Anything else Lightning prints
# (device info, tips, model summaries) is out of the profile's scope.
RELEVANT = re.compile(
    "|".join(
        [
            r"`max_epochs` was not set",
            r"^`Trainer\(limit_train_batches=",
            r"^`Trainer\.fit` stopped: ",
            r"You're resuming from a checkpoint that ended before the epoch ended",
            r"Total length of `\w+` across ranks is zero",
        ]
    )
)
_NOISE = re.compile("|".join(f"(?:{pattern})" for pattern in NOISE))
_WARNING = re.compile(r"^\w*Warning: ")

# No scenario needs an xfail: every recorded Lightning call is reproduced.
XFAIL: dict[str, str] = {}


def to_call(spec: CallSpec) -> Call:
    """The profile's :class:`Call` for one harness call spec (``tests/frameworks/_common.py``)."""
    full = call_defaults(spec)
    args: dict[str, Any] = dict(full["args"])
    assigned: dict[str, Any] = dict(full["set"])
    known_args = {"max_epochs", "max_steps", "limit_train_batches", "accumulate_grad_batches"}
    known_set = {"fit_loop.max_epochs", "fit_loop.epoch_loop.max_steps", "limit_train_batches"}
    assert set(args) <= known_args, f"unmapped Trainer arguments {set(args) - known_args}"
    assert set(assigned) <= known_set, f"unmapped assignments {set(assigned) - known_set}"
    assert full["optimizer"] == {}
    save_every = full["save_every"]
    assert save_every is None or isinstance(save_every, int)
    return Call(
        data=Dataset(samples=full["data"]["n"], offset=full["data"]["offset"]),
        batch_size=full["batch_size"],
        max_epochs=args.get("max_epochs"),
        max_steps=args.get("max_steps", -1),
        limit_train_batches=args.get("limit_train_batches"),
        accumulate_grad_batches=args.get("accumulate_grad_batches", 1),
        loader=full["loader"],
        fresh=full["fresh"],
        resume_latest=full["resume"] == "latest",
        save_every=save_every,
        save_at_end=full["save_at_end"],
        crash_at=full["crash_at"],
        set_max_epochs=assigned.get("fit_loop.max_epochs"),
        set_max_steps=assigned.get("fit_loop.epoch_loop.max_steps"),
        set_limit_train_batches=assigned.get("limit_train_batches"),
    )


def relevant(messages: Sequence[str]) -> list[str]:
    """The duration/resume messages among ``messages``, noise dropped, duplicates folded."""
    seen: dict[str, None] = {}
    for message in messages:
        text = message.strip()
        if RELEVANT.search(text) and not _NOISE.search(text):
            seen.setdefault(text, None)
    return list(seen)


def _split(messages: Sequence[str]) -> tuple[list[str], list[str]]:
    warned = [m for m in messages if _WARNING.match(m)]
    logged = [m for m in messages if not _WARNING.match(m)]
    return warned, logged


def _epoch_segments(batches: Sequence[Sequence[int]]) -> list[range]:
    """Step ranges of the profile's in-order reads: a new one starts where the ids go back."""
    segments: list[range] = []
    start = 0
    for k in range(1, len(batches)):
        if batches[k] and batches[k - 1] and batches[k][0] <= batches[k - 1][-1]:
            segments.append(range(start, k))
            start = k
    if batches:
        segments.append(range(start, len(batches)))
    return segments


def compare(observed: dict[str, Any], predicted: CallOutcome, *, samples: int) -> None:
    """Assert that one predicted call matches one observed call (see the module docstring)."""
    assert predicted.steps == observed["steps"]
    seen = [tuple(ids) for ids in observed["batches"]]
    if not call_defaults(observed["call"])["shuffle"]:
        assert list(predicted.batches) == seen
    else:
        assert [len(ids) for ids in predicted.batches] == [len(ids) for ids in seen]
        for segment in _epoch_segments(predicted.batches):
            got = [i for k in segment for i in seen[k]]
            want = [i for k in segment for i in predicted.batches[k]]
            assert len(set(got)) == len(got), "a shuffled epoch repeated a sample"
            if len(want) == samples:
                assert Counter(got) == Counter(want)
    after = {
        key: math.inf if value == "inf" else value
        for key, value in observed["counters_after"].items()
    }
    assert dict(predicted.counters) == after
    error = observed["error"]
    if error is None:
        assert predicted.error is None
    else:
        assert predicted.error is not None
        assert (predicted.error.type, predicted.error.message) == (error["type"], error["message"])
    assert predicted.crashed == observed["crashed"]
    warned, logged = _split(relevant(predicted.messages))
    assert warned == relevant(observed["warnings"])
    assert logged == relevant(observed["logs"])


def _scenario_params() -> list[Any]:
    return [
        pytest.param(sid, marks=pytest.mark.xfail(strict=True, reason=XFAIL[sid]))
        if sid in XFAIL
        else sid
        for sid in LIGHTNING_IDS
    ]


def _check_scenario(calls: list[CallSpec], observations: list[dict[str, Any]]) -> None:
    predicted = simulate([to_call(spec) for spec in calls])
    assert len(predicted) == len(observations)
    for index, (observed, outcome) in enumerate(zip(observations, predicted, strict=True)):
        samples = call_defaults(calls[index])["data"]["n"]
        try:
            compare(observed, outcome, samples=samples)
        except AssertionError as failure:
            raise AssertionError(f"call {index}: {failure}") from failure


@pytest.mark.parametrize("scenario_id", _scenario_params())
def test_profile_reproduces_observation(scenario_id: str) -> None:
    """Every call of the scenario: steps, sample ids per step, counters, error, crash, messages."""
    scenario = scenarios.BY_ID[scenario_id]
    observation = OBSERVED[scenario_id]
    _check_scenario(scenario["calls"], observation["calls"])


def test_every_lightning_observation_is_a_scenario() -> None:
    """The observations and the scenario grid list the same Lightning scenarios."""
    recorded = sorted(sid for sid in OBSERVED if sid.startswith("lightning/"))
    assert recorded == sorted(LIGHTNING_IDS)


def test_profile_version_matches_the_recording() -> None:
    """The profile was written for the Lightning version the observations were recorded with."""
    with open(Path(__file__).parent / "observed.json") as handle:
        meta = json.load(handle)["meta"]
    assert meta["frameworks"]["lightning"]["versions"]["pytorch_lightning"] == VERSION


def test_rules_cite_lightning_sources() -> None:
    """Every rule is one or two sentences with a source reference in Lightning (or torchdata)."""
    assert RULES
    for rule, source in RULES:
        assert rule.endswith(".")
        assert rule[0].isupper()
        assert "pytorch_lightning/" in source or "torchdata/" in source


class TestUnobservedRules:
    """Rules read from Lightning's source that the recorded grid does not exercise, checked
    against one-off real runs made while writing the profile (FINDINGS-style notes in the
    docstrings)."""

    def test_stateful_checkpoint_at_epoch_end_skips_the_next_epoch(self) -> None:
        """A StatefulDataLoader saved after an epoch's last batch resumes exhausted: the next
        epoch trains 0 batches yet counts as completed (real run: 0 steps, 10/2)."""
        a = Dataset(samples=100)
        first, second = simulate(
            [
                Call(data=a, max_epochs=2, loader="stateful", save_every=10, crash_at=10),
                Call(data=a, max_epochs=2, loader="stateful", resume_latest=True),
            ]
        )
        assert first.crashed
        assert second.steps == 0
        assert second.counters["global_step"] == 10
        assert second.counters["current_epoch"] == 2
        assert second.messages == ("`Trainer.fit` stopped: `max_epochs=2` reached.",)

    def test_end_checkpoint_resumed_with_max_steps_runs_one_batch_past_the_epoch(self) -> None:
        """An end-of-fit checkpoint (10 of 10 batches) resumed with max_steps restarts the epoch
        loop, which runs one batch at batch_idx 10 before it can stop (real run: 5 steps on
        0-9, 0-9, 10-19, 20-29, 30-39 and current_epoch 4)."""
        a = Dataset(samples=100)
        _, resumed = simulate(
            [
                Call(data=a, max_steps=20, save_at_end=True),
                Call(data=a, max_steps=25, resume_latest=True),
            ]
        )
        assert [b[0] for b in resumed.batches] == [0, 0, 10, 20, 30]
        assert resumed.counters["current_epoch"] == 4
        assert resumed.counters["batch_progress_current_completed"] == 4

    def test_pending_micro_batches_carry_into_the_next_epoch(self) -> None:
        """When a restored stateful loader runs dry mid-accumulation, its micro-batches join the
        next epoch's first step (real run: first step 90-99 then 0-14, 5 micro-batches)."""
        a = Dataset(samples=100)
        _, resumed = simulate(
            [
                Call(
                    data=a,
                    max_epochs=2,
                    accumulate_grad_batches=3,
                    loader="stateful",
                    save_every=3,
                    crash_at=3,
                ),
                Call(
                    data=a,
                    max_epochs=2,
                    accumulate_grad_batches=3,
                    loader="stateful",
                    batch_size=5,
                    resume_latest=True,
                ),
            ]
        )
        assert resumed.batches[0] == (*range(90, 100), *range(15))
        assert resumed.steps == 7
        assert resumed.counters["global_step"] == 10

    def test_a_zero_limit_skips_the_fit(self) -> None:
        """limit_train_batches=0 trains nothing and never sets up the data (real run: inf)."""
        (outcome,) = simulate(
            [Call(data=Dataset(samples=100), max_epochs=1, limit_train_batches=0)]
        )
        assert outcome.steps == 0
        assert outcome.counters["num_training_batches"] == math.inf
        assert outcome.messages == ()

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            # a negative limit is neither a fraction nor a count
            (
                {"limit_train_batches": -1},
                "You have passed invalid value -1 for "
                "limit_train_batches, it has to be in [0.0, 1.0] or an int.",
            ),
            # a non-integral float above 1 is neither
            (
                {"limit_train_batches": 1.5},
                "You have passed invalid value 1.5 for "
                "limit_train_batches, it has to be in [0.0, 1.0] or an int.",
            ),
            # -1 is the only negative max_epochs (no limit)
            (
                {"max_epochs": -2},
                "`max_epochs` must be a non-negative integer or -1. You passed in -2.",
            ),
            # -1 is the only negative max_steps (no limit)
            (
                {"max_steps": -2},
                "`max_steps` must be a non-negative integer or -1 (infinite "
                "steps). You passed in -2.",
            ),
        ],
    )
    def test_invalid_trainer_arguments_raise(self, kwargs: dict[str, Any], message: str) -> None:
        """Trainer(...) rejects negative limits with Lightning's exact message."""
        (outcome,) = simulate([Call(data=Dataset(samples=100), **kwargs)])
        assert outcome.error is not None
        assert (outcome.error.type, outcome.error.message) == ("MisconfigurationException", message)
        assert outcome.steps == 0


LIVE = [
    "lightning/crash13_plain",
    "lightning/crash13_stateful",
    "lightning/bs10to20_at13",
    "lightning/phase_B_same_trainer",
    "lightning/end_max_steps15_resume20",
    "lightning/accum3_crash5_resume",
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("scenario_id", LIVE)
def test_profile_matches_live_lightning(scenario_id: str) -> None:
    """A real Lightning run of the scenario today still matches the profile."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("pytorch_lightning", reason="pytorch_lightning is not installed")
        if "stateful" in scenario_id:
            pytest.importorskip("torchdata", reason="torchdata is not installed")
    from tests.frameworks import runners

    scenario = scenarios.BY_ID[scenario_id]
    observation = runners.run_scenario(scenario)
    _check_scenario(scenario["calls"], observation["calls"])
