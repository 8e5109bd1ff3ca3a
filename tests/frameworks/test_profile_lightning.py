"""The Lightning profile (:mod:`durations.trainers.lightning`) against real Lightning runs.

The pure tests replay every ``lightning/*`` scenario of ``observed.json`` through
:func:`~durations.trainers.lightning.simulate` and compare, call by call, what the profile
predicts with what Lightning 2.6.6 did: the steps and their sample ids, every counter the runner
reads (``global_step``, ``current_epoch``, the ``total`` and ``current`` ready/started/processed/
completed of the fit loop's ``epoch_progress`` and of its epoch loop's ``batch_progress``, the
limits), the error, the crash, the messages, and the checkpoint each call restored and the newest
one on disk after it. They need no framework. The live test runs a few scenarios through the real
runner again (skipped without ``pytorch_lightning``), so that a new Lightning release that changes
behaviour is caught.

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

import attrs
import pytest

from durations import FitCall, Loader, RunConfig
from durations.compare import compare as compare_trainers, datasets
from durations.scenario import Scenario as ScriptScenario
from durations.schedules import END, Landmark, Schedule
from durations.trainers import CallOutcome, Dataset
from durations.trainers.lightning import RULES, VERSION, Call, Scheduler, _play, simulate, translate
from durations.trainers.lightning._loop import _Checkpoint
from tests.frameworks import scenarios
from tests.frameworks._common import NOISE, CallSpec, call_defaults
from tests.frameworks._lightning import BASE_LR

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
            r"^UserWarning: Be aware that when using `ckpt_path`, callbacks used to create the "
            r"checkpoint need to be provided",
            r"^Loading `train_dataloader` to estimate number of stepping batches\.$",
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
    schedule = full["lr_schedule"]
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
        scheduler=None if schedule is None else Scheduler(**schedule),
    )


def recorded_rates(observed: dict[str, Any]) -> list[float]:
    """The learning rate of each recorded step as a factor of the runner's base."""
    return [position["lr"] / BASE_LR for position in observed["positions"]]


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
        assert [tuple(ids) for ids in predicted.batches] == seen
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
    if call_defaults(observed["call"])["lr_schedule"] is None:
        assert predicted.rates == ()
    else:
        assert len(predicted.rates) == predicted.steps
        for got, want in zip(predicted.rates, recorded_rates(observed), strict=True):
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (got, want)


def _summary(checkpoint: _Checkpoint) -> dict[str, Any]:
    """A profile checkpoint as the runner summarises a ``.ckpt`` file (``_lightning.py``)."""

    def tracker(progress: Any) -> dict[str, int]:
        fields = ("ready", "started", "processed", "completed")
        return {field: getattr(progress, field) for field in fields}

    summary = {
        "epoch": checkpoint.epoch,
        "global_step": checkpoint.global_step,
        "epoch_progress_current": tracker(checkpoint.epoch_progress.current),
        "batch_progress_total": tracker(checkpoint.batch_progress.total),
        "batch_progress_current": tracker(checkpoint.batch_progress.current),
        "loader_state_saved": checkpoint.loader_state is not None,
        "callbacks": sorted(checkpoint.callbacks),
    }
    if checkpoint.scheduler is not None:
        summary["lr_scheduler"] = {
            "last_epoch": checkpoint.scheduler.last_epoch,
            "base_lr": checkpoint.scheduler.base,
            "lr": checkpoint.scheduler.lr,
        }
    return summary


def compare_checkpoint(recorded: dict[str, Any] | None, predicted: _Checkpoint | None) -> None:
    """Assert that a checkpoint the profile holds is the one the runner read from disk."""
    if recorded is None:
        assert predicted is None
        return
    assert predicted is not None
    summary = _summary(predicted)
    recorded = {k: v for k, v in recorded.items() if k != "file"}
    if "lr_scheduler" in recorded:  # the runner's values, the profile's factors of its base
        saved, held = recorded.pop("lr_scheduler"), summary.pop("lr_scheduler", None)
        assert held is not None
        assert held["last_epoch"] == saved["last_epoch"]
        for key in ("base_lr", "lr"):
            assert math.isclose(held[key], saved[key] / BASE_LR, rel_tol=1e-9, abs_tol=1e-12)
    assert summary == recorded


def _scenario_params() -> list[Any]:
    return [
        pytest.param(sid, marks=pytest.mark.xfail(strict=True, reason=XFAIL[sid]))
        if sid in XFAIL
        else sid
        for sid in LIGHTNING_IDS
    ]


def _check_scenario(calls: list[CallSpec], observations: list[dict[str, Any]]) -> None:
    predicted = list(_play([to_call(spec) for spec in calls]))
    assert len(predicted) == len(observations)
    for index, (observed, played) in enumerate(zip(observations, predicted, strict=True)):
        samples = call_defaults(calls[index])["data"]["n"]
        try:
            compare(observed, played.outcome, samples=samples)
            if "scheduler_totals" in observed:  # configure_optimizers ran once, or never
                totals = [] if played.total is None else [played.total]
                assert observed["scheduler_totals"] == totals
            compare_checkpoint(observed["checkpoint_loaded"], played.loaded)
            if "checkpoint_saved" in observed:
                compare_checkpoint(observed["checkpoint_saved"], played.newest)
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


def _recorded_calls() -> list[tuple[str, int, CallSpec, dict[str, Any]]]:
    """Every recorded Lightning call: scenario id, index, full spec, observation."""
    rows = []
    for sid in LIGHTNING_IDS:
        specs = scenarios.BY_ID[sid]["calls"]
        for index, observed in enumerate(OBSERVED[sid]["calls"]):
            rows.append((sid, index, call_defaults(specs[index]), observed))
    return rows


def _builder(sid: str, index: int) -> CallSpec:
    """The spec of the call that built the Trainer call ``index`` runs on (the last fresh one up
    to it): its callbacks (crash_at, save_every) stay with that Trainer for later fits."""
    specs = [call_defaults(spec) for spec in scenarios.BY_ID[sid]["calls"][: index + 1]]
    return next(spec for spec in reversed(specs) if spec["fresh"])


def _writer(sid: str, checkpoint: dict[str, Any]) -> CallSpec:
    """The spec of the call that wrote ``checkpoint`` (the runner names files ``call{i}-...``)."""
    index = int(checkpoint["file"].split("-")[0].removeprefix("call"))
    return call_defaults(scenarios.BY_ID[sid]["calls"][index])


class TestCrashModel:
    """``crash_at = k``: the process is killed at the moment the trainer is about to start an
    optimizer step while its own step counter is >= k (Lightning: ``on_train_batch_start`` of
    the first micro-batch of that step). Everything after step k has happened (the saves its
    settings make, an epoch's end, the end of the fit call); nothing of the next step. A call
    that ends without starting another step does not crash. The re-run resumes from the newest
    checkpoint the trainer itself wrote. These tests hold the recorded real runs to the model;
    the replay above holds the profile to the same runs."""

    def test_a_killed_call_stops_at_the_start_of_the_next_step(self) -> None:
        """A killed call has done exactly k steps (it starts below k in the grid), has fetched
        and counted as ready the batch of step k + 1 but not started it, and trained none of
        its micro-batches."""
        killed = [row for row in _recorded_calls() if row[3]["crashed"]]
        assert {"lightning/every1_crash13", "lightning/accum3_every2_crash5"} <= {
            sid for sid, *_ in killed
        }
        for sid, index, _, observed in killed:
            after = observed["counters_after"]
            assert after["global_step"] == _builder(sid, index)["crash_at"], sid
            for tracker in ("total", "current"):
                ready = after[f"batch_progress_{tracker}_ready"]
                assert after[f"batch_progress_{tracker}_started"] == ready - 1, sid
                assert after[f"batch_progress_{tracker}_completed"] == ready - 1, sid
            assert "pending_micro_batches" not in observed, sid

    def test_a_call_that_ends_first_is_not_killed(self) -> None:
        """A call given crash_at that is not killed never passes step k: its fit ended (by
        max_epochs or max_steps) without starting another step."""
        spared = [
            row
            for row in _recorded_calls()
            if row[2]["crash_at"] is not None and not row[3]["crashed"]
        ]
        assert {"lightning/crash_at_last_step", "lightning/max_steps15_crash15"} <= {
            sid for sid, *_ in spared
        }
        for sid, _, spec, observed in spared:
            assert observed["counters_after"]["global_step"] <= spec["crash_at"], sid

    def test_the_rerun_resumes_from_the_newest_checkpoint(self) -> None:
        """After a kill at k the re-run loads the checkpoint of the last multiple of save_every
        up to k (none below save_every) and trains again every step after it: the steps it
        trains are its final global_step minus the checkpoint's."""
        seen = set()
        for sid in LIGHTNING_IDS:
            specs = [call_defaults(spec) for spec in scenarios.BY_ID[sid]["calls"]]
            observed = OBSERVED[sid]["calls"]
            for index in range(1, len(specs)):
                killed, rerun = _builder(sid, index - 1), specs[index]
                if not observed[index - 1]["crashed"] or rerun["resume"] != "latest":
                    continue
                seen.add(sid)
                every, k = killed["save_every"], killed["crash_at"]
                assert isinstance(every, int)
                assert isinstance(k, int)
                loaded = observed[index]["checkpoint_loaded"]
                newest = k // every * every
                assert (loaded["global_step"] if loaded else 0) == newest, sid
                if observed[index]["error"] is None:
                    final = observed[index]["counters_after"]["global_step"]
                    assert observed[index]["steps"] == final - newest, sid
        assert {"lightning/every4_crash13", "lightning/crash0", "lightning/every4_crash10"} <= seen

    @pytest.mark.parametrize(
        "scenario_id",
        [
            # saved at step 13 in on_train_batch_end, before `completed` counted batch 3 of
            # epoch 1; the kill comes after it was counted
            "lightning/every1_crash13",
            # the same with every_n_train_steps=13
            "lightning/crash13_plain",
            # saved at step 5 (third micro-batch of epoch 1's first step), killed at the next
            "lightning/accum3_crash5_resume",
        ],
    )
    def test_a_checkpoint_at_k_lags_the_killed_trainer_by_one_batch(self, scenario_id: str) -> None:
        """A checkpoint saved at step k mid-epoch counts one batch fewer as completed than the
        killed Trainer (which also counts the fetched next batch as ready), in the same epoch."""
        killed = OBSERVED[scenario_id]["calls"][0]
        saved = killed["checkpoint_saved"]
        after = killed["counters_after"]
        assert saved["global_step"] == after["global_step"]
        assert saved["epoch"] == after["current_epoch"]
        batch = saved["batch_progress_current"]
        assert after["batch_progress_current_completed"] == batch["completed"] + 1
        assert after["batch_progress_current_ready"] == batch["ready"] + 1

    def test_an_epoch_that_step_k_ended_has_ended_before_the_kill(self) -> None:
        """Killed at the first batch after the epoch's last step: the epoch counts as
        processed, the next one has started, its batch counters start again at one ready."""
        after = OBSERVED["lightning/every4_crash10"]["calls"][0]["counters_after"]
        assert (after["global_step"], after["current_epoch"]) == (10, 1)
        assert after["epoch_progress_current_processed"] == 1
        assert after["epoch_progress_current_started"] == 2
        assert after["batch_progress_current_ready"] == 1
        assert after["batch_progress_current_started"] == 0


class TestCkptPathCallbacks:
    """Restoring warns "Be aware that when using `ckpt_path`, callbacks used to create the
    checkpoint need to be provided during `Trainer` instantiation…" when the checkpoint holds the
    state of a callback (by state_key) that the new Trainer lacks."""

    def test_warns_exactly_when_the_checkpoints_callback_is_missing(self) -> None:
        """The runner's only callback with a state is ModelCheckpoint(every_n_train_steps=
        save_every): a restore warns iff the checkpoint holds one and the new Trainer's differs
        (another save_every, or none), and the warning names the writer's setting."""
        outcomes = set()
        for sid, _, spec, observed in _recorded_calls():
            loaded = observed["checkpoint_loaded"]
            if loaded is None:
                continue
            writer = _writer(sid, loaded)
            holds = bool(loaded["callbacks"])
            assert holds == isinstance(writer["save_every"], int), sid
            missing = holds and writer["save_every"] != spec["save_every"]
            warned = [w for w in observed["warnings"] if "Be aware that when using" in w]
            assert bool(warned) == missing, sid
            if missing:
                assert f"'every_n_train_steps': {writer['save_every']}," in warned[0], sid
            outcomes.add(missing)
        assert outcomes == {True, False}


class TestFloatMaxEpochs:
    """Trainer(max_epochs=...) checks only ints (below -1 raises); a float gets through."""

    @pytest.mark.parametrize(
        "value",
        [
            0.5,  # half an epoch: what a user means by a part of an epoch
            1.5,  # a fractional epoch above one
            2.0,  # an integral float is still not an int to Lightning
            -1.0,  # equal to -1 but not 'no limit' to the fit loop's assert
            -2.5,  # below -1, yet the Trainer's int-only check lets it through
        ],
    )
    def test_a_float_is_built_and_refused_inside_fit(self, value: float) -> None:
        """The profile builds the Call as Lightning builds the Trainer, and the fit fails as the
        recorded run of the same value does."""
        scenario_id = f"lightning/max_epochs_float{value}"
        recorded = OBSERVED[scenario_id]["calls"][0]
        (outcome,) = simulate([to_call(scenarios.BY_ID[scenario_id]["calls"][0])])
        assert recorded["error"] == {"type": "AssertionError", "message": ""}
        assert outcome.error is not None
        assert (outcome.error.type, outcome.error.message) == ("AssertionError", "")
        assert outcome.steps == recorded["steps"] == 0

    @pytest.mark.parametrize(
        "value",
        [
            True,  # a bool is an int to Lightning, but no run was recorded with one
            "2",  # a string is no limit
        ],
    )
    def test_other_types_are_refused(self, value: object) -> None:
        """max_epochs is an int, a float or None."""
        with pytest.raises(TypeError, match="max_epochs must be an int, a float or None"):
            Call(data=Dataset(samples=100), max_epochs=value)  # type: ignore[arg-type]


def _rates_by_step(sid: str) -> list[tuple[int, float]]:
    """Every recorded step of a scenario as (its global_step once taken, its learning rate as a
    factor of the runner's base), calls in order: a step lost to a crash appears twice."""
    rows = []
    for observed in OBSERVED[sid]["calls"]:
        start = observed["counters_after"]["global_step"] - observed["steps"]
        rows += [(start + n, rate) for n, rate in enumerate(recorded_rates(observed), 1)]
    return rows


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def _cosine(step: int, *, warmup: int, floor: float, total: int) -> float:
    """A linear warmup from 0 over ``warmup`` steps, then a half cosine from 1 to ``floor``
    at ``total``: the factor after ``step`` scheduler steps, written out independently."""
    if step < warmup:
        return step / warmup
    return floor + (1 - floor) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2


def _linear(step: int, *, warmup: int, floor: float, total: int) -> float:
    """The same with a straight line from 1 to ``floor``."""
    if step < warmup:
        return step / warmup
    return floor + (1 - floor) * (total - step) / (total - warmup)


class TestLearningRates:
    """Each fit's ``configure_optimizers`` returns a transformers warmup schedule (a LambdaLR)
    with interval "step" over ``trainer.estimated_stepping_batches`` (or a given length); the
    step taken after k scheduler steps uses base * lr_lambda(k). These tests hold the recorded
    runs to that; the replay above holds the profile to the same runs, rate by rate."""

    @pytest.mark.parametrize(
        "scenario_id",
        [
            # resumed at the step-13 checkpoint, mid-epoch: the plain loader reads the epoch
            # again from sample 0, the scheduler goes on from last_epoch 13
            "lightning/lr_cosine_every1_crash13",
            # resumed at step 12: step 13 is trained twice
            "lightning/lr_cosine_every4_crash13",
            # the loader replays the epoch from sample 0; the scheduler is restored all the same
            "lightning/lr_stateful_every4_crash13",
            # the loader resumes at its sample; the same rates
            "lightning/lr_stateful_total20_every4_crash13",
        ],
    )
    def test_rates_across_a_crash_are_the_uninterrupted_runs(self, scenario_id: str) -> None:
        """Every step's learning rate, a lost and retrained one included, is the uninterrupted
        run's at the same global step: the checkpoint holds the stepped scheduler and ckpt_path
        restores it."""
        uninterrupted = dict(_rates_by_step("lightning/lr_cosine_epochs2"))
        assert sorted(uninterrupted) == list(range(1, 21))
        seen = _rates_by_step(scenario_id)
        assert {step for step, _ in seen} == set(uninterrupted)
        for step, rate in seen:
            assert _close(rate, uninterrupted[step]), (step, rate, uninterrupted[step])
        for step, rate in _rates_by_step("lightning/lr_cosine_epochs2"):
            assert _close(rate, _cosine(step - 1, warmup=3, floor=0.1, total=20)), step

    def test_the_first_step_after_a_resume_uses_the_checkpoints_learning_rate(self) -> None:
        """ckpt_path restores the optimizer's learning rate, which the scheduler had already
        stepped when ModelCheckpoint saved: the first resumed step uses it, whatever the new
        fit's scheduler would start at; its last_epoch counts the saving fit's steps."""
        resumed = [
            (sid, observed)
            for sid, _, _, observed in _recorded_calls()
            if (observed["checkpoint_loaded"] or {}).get("lr_scheduler") and observed["steps"]
        ]
        assert {sid for sid, _ in resumed} >= {
            "lightning/lr_cosine_every4_crash13",
            "lightning/lr_end_max_steps10_resume20",
        }
        for sid, observed in resumed:
            saved = observed["checkpoint_loaded"]["lr_scheduler"]
            assert _close(recorded_rates(observed)[0], saved["lr"] / BASE_LR), sid
        every4 = OBSERVED["lightning/lr_cosine_every4_crash13"]["calls"][1]["checkpoint_loaded"]
        assert (every4["global_step"], every4["lr_scheduler"]["last_epoch"]) == (12, 12)

    def test_a_resume_with_other_limits_keeps_the_checkpoints_base(self) -> None:
        """An end-of-fit checkpoint of max_steps=10 resumed by Trainer(max_steps=20) whose
        optimizer has lr 0.5: the new lambda (cosine over 20) with the checkpoint's base_lrs."""
        first, resumed = OBSERVED["lightning/lr_end_max_steps10_resume20"]["calls"]
        rates = recorded_rates(resumed)
        rows = [
            # step 11: the checkpoint's learning rate, the first cosine's end (its floor)
            (0, 0.1),
            # step 12: base_lrs 1.0 from the checkpoint, not 0.5, times the cosine over 20
            (1, _cosine(11, warmup=3, floor=0.1, total=20)),
            # step 20: the same lambda at its last_epoch 19
            (9, _cosine(19, warmup=3, floor=0.1, total=20)),
        ]
        for index, want in rows:
            assert _close(rates[index], want), index
        assert _close(recorded_rates(first)[-1], _cosine(9, warmup=3, floor=0.1, total=10))

    def test_each_fit_starts_a_new_scheduler(self) -> None:
        """A second fit on the same Trainer calls configure_optimizers again: its scheduler
        warms up from 0 again, over the new absolute max_steps=20, though 12 steps are left."""
        first, second = OBSERVED["lightning/lr_second_fit_max_steps"]["calls"]
        for observed, total in ((first, 8), (second, 20)):
            want = [_linear(k, warmup=2, floor=0.2, total=total) for k in range(observed["steps"])]
            got = recorded_rates(observed)
            assert all(_close(a, b) for a, b in zip(got, want, strict=True)), (got, want)
        assert (second["steps"], second["scheduler_totals"]) == (12, [20])

    def test_a_crash_in_a_later_fit_starts_its_scheduler_again(self) -> None:
        """The two-fit script killed at 14 (6 steps into its second fit) and run again: the
        first fit restores the second's checkpoint and trains nothing; the second fit builds its
        scheduler anew, so steps 15-20 use the rates of steps 9-14."""
        calls = OBSERVED["lightning/lr_second_fit_crash14"]["calls"]
        killed, rerun_first, rerun_second = calls[1], calls[2], calls[3]
        restarted = [0.5 * (12 - k) / 12 for k in range(6)]  # linear from 0.5 over 12, k=0..5
        uninterrupted = [0.5 * (12 - k) / 12 for k in range(6, 12)]  # where it would be, k=6..11
        assert rerun_first["steps"] == 0
        assert rerun_first["checkpoint_loaded"]["lr_scheduler"]["last_epoch"] == 6
        rows = [
            # steps 9-14, the second fit before the kill: its scheduler from 0
            (killed, restarted),
            # steps 15-20, the second fit of the re-run: a new scheduler from 0 again
            (rerun_second, restarted),
        ]
        for observed, want in rows:
            got = recorded_rates(observed)
            assert all(_close(a, b) for a, b in zip(got, want, strict=True)), (got, want)
        got = recorded_rates(rerun_second)
        assert not any(_close(a, b) for a, b in zip(got, uninterrupted, strict=True))

    def test_the_scheduler_steps_once_an_optimizer_step(self) -> None:
        """Under accumulate_grad_batches=3 (4 optimizer steps an epoch, the last of one batch)
        the scheduler steps with the optimizer, never on an accumulating micro-batch: step n
        uses the cosine over ceil(10 / 3) * 2 = 8 at n - 1, across the crash too."""
        seen = _rates_by_step("lightning/lr_accum3_every2_crash5")
        assert [step for step, _ in seen] == [1, 2, 3, 4, 5, 5, 6, 7, 8]
        for step, rate in seen:
            assert _close(rate, _cosine(step - 1, warmup=3, floor=0.1, total=8)), step

    @pytest.mark.parametrize(
        ("scenario_id", "index", "total", "sets_up"),
        [
            # 2 epochs of 10 batches; max_epochs makes it set up the data to count them
            ("lightning/lr_cosine_epochs2", 0, 20, True),
            # ceil(10 / 3) = 4 optimizer steps an epoch, 2 epochs
            ("lightning/lr_accum3_every2_crash5", 0, 8, True),
            # 2 epochs are 20 steps; max_steps=15 is fewer
            ("lightning/lr_epochs2_max_steps15_linear", 0, 15, True),
            # max_epochs is -1 with max_steps: max_steps, no data set up
            ("lightning/lr_second_fit_max_steps", 0, 8, False),
            # the second fit: the new absolute max_steps, of which 12 are left
            ("lightning/lr_second_fit_max_steps", 1, 20, False),
            # the second fit: 2 epochs of B's 30 batches, of which one epoch is left
            ("lightning/lr_second_fit_epochs_B", 1, 60, True),
            # num_training_steps written out: nothing estimated
            ("lightning/lr_stateful_total20_every4_crash13", 0, 20, False),
        ],
    )
    def test_estimated_stepping_batches_is_the_fits_whole_limits(
        self, scenario_id: str, index: int, total: int, sets_up: bool
    ) -> None:
        """The scheduler's length, and whether Lightning set up the training data to find it."""
        observed = OBSERVED[scenario_id]["calls"][index]
        assert observed["scheduler_totals"] == [total]
        loading = "Loading `train_dataloader` to estimate number of stepping batches."
        assert (loading in observed["logs"]) == sets_up

    @pytest.mark.parametrize(
        ("scenario_id", "first_sample"),
        [
            # estimated_stepping_batches set the data up before ckpt_path restored the loops:
            # the saved position is never loaded and the epoch is read again from sample 0
            ("lightning/lr_stateful_every4_crash13", 0),
            # num_training_steps written out: the loader resumes after step 12's 2 batches
            ("lightning/lr_stateful_total20_every4_crash13", 20),
        ],
    )
    def test_the_early_data_setup_loses_a_stateful_position(
        self, scenario_id: str, first_sample: int
    ) -> None:
        """A StatefulDataLoader resumed under a scheduler over estimated_stepping_batches
        replays its epoch, and Lightning does not warn (it counts the loader as resumable)."""
        resumed = OBSERVED[scenario_id]["calls"][1]
        assert resumed["batches"][0][0] == first_sample
        assert not [w for w in resumed["warnings"] if "resuming from a checkpoint" in w]

    def test_a_checkpoint_without_a_scheduler_leaves_the_rates_unknown(self) -> None:
        """Resuming a checkpoint written without a scheduler restores the optimizer's learning
        rate, which the profile does not model: the call's rates are left out, not guessed."""
        a = Dataset(samples=100)
        cosine = Scheduler(decay="cosine", warmup=3, floor=0.1)
        _, resumed = simulate(
            [
                Call(data=a, max_epochs=2, save_every=4, crash_at=13),
                Call(data=a, max_epochs=2, save_every=4, resume_latest=True, scheduler=cosine),
            ]
        )
        assert resumed.steps == 8
        assert resumed.rates == ()


_COSINE = Schedule.warmup("2ba").then_cosine(to="0.1", until=END)
_A = Loader(samples=100, batch_size=10, name="a")
_B = Loader(samples=300, batch_size=10, name="b")


def _script(*calls: FitCall, schedule: Schedule) -> ScriptScenario:
    loaders = {call.loader.name or "": call.loader for call in calls}
    return ScriptScenario(
        config=RunConfig(max_duration="2ep"), loaders=loaders, calls=calls, schedule=schedule
    )


_ONE_FIT = _script(FitCall(loader=_A), schedule=_COSINE)
_TWO_FITS = _script(
    FitCall(loader=_A),
    FitCall(loader=_B, duration="0.1ep"),
    schedule=Schedule.warmup("2ba")
    .then_cosine(to="0.1", until=Landmark.call_stop(0))
    .then_linear(to=0, until=END),
)


class TestScheduleTranslation:
    """``translate`` writes each fit's part of the scenario's schedule as the scheduler that
    fit's configure_optimizers returns (shapes per call: every fit builds a new one)."""

    def test_one_fit_is_one_scheduler_over_the_estimate(self) -> None:
        """Warmup 2 and a cosine to 0.1 over the only fit: the fit's estimated_stepping_batches
        is its 20 steps, so the scheduler is written over it."""
        translation = translate(_ONE_FIT, datasets(_ONE_FIT))
        assert translation.calls[0].scheduler == Scheduler(
            decay="cosine", warmup=2, floor=0.1, lr=1.0, total=None
        )
        assert "estimated_stepping_batches" in translation.schedule

    def test_a_later_fit_gets_its_own_length(self) -> None:
        """0.1 epoch of b is 3 steps, while that fit's estimated_stepping_batches counts its
        absolute max_epochs=3 (9 steps): the length is written out, from the factor where the
        first fit ended (0.1) to 0."""
        translation = translate(_TWO_FITS, datasets(_TWO_FITS))
        assert translation.calls[1].scheduler == Scheduler(
            decay="linear", warmup=0, floor=0.0, lr=0.1, total=3
        )

    @pytest.mark.parametrize("crash_at", [None, 13, 20])
    def test_the_rates_are_the_plans_where_the_scheduler_is_restored(
        self, crash_at: int | None
    ) -> None:
        """Uninterrupted, or killed in the first fit (or right at its end) and re-run: every
        step's learning rate is the plan's."""
        outcome = compare_trainers(_TWO_FITS, crash_at=crash_at, trainers=["lightning"]).trainers[0]
        assert len(outcome.rates) == outcome.steps == 23
        assert not [line for line in outcome.differences if "learning rate" in line]

    def test_a_crash_in_a_later_fit_restarts_its_part(self) -> None:
        """Killed after step 21, one step into the second fit: the re-run's second fit starts
        its scheduler again, so steps 22 and 23 use the rates of steps 21 and 22."""
        outcome = compare_trainers(_TWO_FITS, crash_at=21, trainers=["lightning"]).trainers[0]
        rows = [
            # step 21, before the kill: the second fit's first step, the plan's
            (20, 0.1, 0.1),
            # step 22, after it: a new scheduler's first step, where the plan has gone on
            (21, 0.1, 0.1 * 2 / 3),
            # step 23: that scheduler's second step
            (22, 0.1 * 2 / 3, 0.1 / 3),
        ]
        for index, got, planned in rows:
            assert _close(outcome.rates[index], got), index
            assert _close(outcome.planned_rates[index], planned), index
        assert any(
            line.startswith("learning rate differs at 2 of 23") for line in outcome.differences
        )

    def test_a_schedule_across_fits_cannot_be_written(self) -> None:
        """One cosine over both fits: the second fit's part is the tail of a cosine, which no
        warmup-then-decay scheduler starting at that fit writes; the steps are still
        compared, the rates are not."""
        across = attrs.evolve(_TWO_FITS, schedule=_COSINE)
        translation = translate(across, datasets(across))
        assert translation.schedule.startswith("cannot be written: ")
        assert all(call.scheduler is None for call in translation.calls)
        outcome = compare_trainers(across, trainers=["lightning"]).trainers[0]
        assert outcome.supported
        assert outcome.rates == ()

    def test_a_scheduler_under_ddp_is_not_modelled(self) -> None:
        """No run of a scheduler under strategy='ddp' was recorded: the translation says so,
        and a Call refuses one."""
        sharded = Loader.sharded(samples=101, world_size=2, device_batch_size=10, name="d")
        scenario = _script(FitCall(loader=sharded), schedule=_COSINE)
        translation = translate(scenario, datasets(scenario))
        assert translation.schedule.startswith("not modelled: ")
        with pytest.raises(ValueError, match="a scheduler under strategy='ddp' is not modelled"):
            attrs.evolve(translation.calls[0], scheduler=Scheduler(decay="constant"))


class TestUnobservedRules:
    """Rules read from Lightning's source that the recorded grid does not exercise, checked
    against one-off real runs made while writing the profile (FINDINGS-style notes in the
    docstrings)."""

    def test_stateful_checkpoint_at_epoch_end_skips_the_next_epoch(self) -> None:
        """A StatefulDataLoader saved after an epoch's last batch resumes exhausted: the next
        epoch trains 0 batches yet counts as completed (real run: 0 steps, 10/2; recorded as
        lightning/stateful_crash10_epoch_end)."""
        a = Dataset(samples=100)
        first, second = simulate(
            [
                Call(data=a, max_epochs=2, loader="stateful", save_every=10, crash_at=10),
                Call(data=a, max_epochs=2, loader="stateful", save_every=10, resume_latest=True),
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
        assert tuple(resumed.batches[0]) == (*range(90, 100), *range(15))
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
    "lightning/every4_crash13",
    "lightning/ckpt_callbacks_differ",
    "lightning/max_epochs_float0.5",
    "lightning/lr_cosine_every4_crash13",
    "lightning/lr_second_fit_crash14",
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
        if "/lr_" in scenario_id:  # the runner's schedulers are transformers'
            pytest.importorskip("transformers", reason="transformers is not installed")
    from tests.frameworks import runners

    scenario = scenarios.BY_ID[scenario_id]
    observation = runners.run_scenario(scenario)
    _check_scenario(scenario["calls"], observation["calls"])
