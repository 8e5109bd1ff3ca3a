"""The Composer profile against real Composer 0.32.1 runs (``observed_composer.json``).

The expected values are the observations that ``_composer_runner.py`` recorded from real
``composer.Trainer`` runs (torch 2.13.0+cpu); none comes from the profile itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations import FitCall, Loader, RunConfig
from durations.compare import compare, datasets
from durations.scenario import Scenario
from durations.schedules import END, Landmark, Schedule
from durations.trainers import CallOutcome, Dataset, TrainerError, Unsupported, composer as profile

from ._composer_runner import DEFAULTS, SCENARIOS

OBSERVED_PATH = Path(__file__).with_name("observed_composer.json")
OBSERVED: dict[str, Any] = json.loads(OBSERVED_PATH.read_text())
SCENARIO_IDS = sorted(OBSERVED["observations"])

# Scenarios the profile does not reproduce, with the reason.
XFAIL = {
    "composer/autoresume_reset_time": (
        "the checkpoint saver's file-conflict check (composer/utils/file_helpers.py:190, "
        "save_overwrite=False under autoresume) raises FileExistsError naming whichever "
        "'future' checkpoint os.listdir returns first; the profile does not model save_folder "
        "file names"
    ),
}


def to_call(spec: dict[str, Any]) -> profile.Call:
    """The profile's ``Call`` for one runner call dict: the same keys, the data as a Dataset and
    the schedulers as Schedulers."""
    data = {**DEFAULTS["data"], **spec.get("data", {})}
    arguments = {key: value for key, value in spec.items() if key != "data"}
    for key in ("scheduler", "fit_scheduler"):
        if arguments.get(key) is not None:
            arguments[key] = profile.Scheduler(**arguments[key])
    return profile.Call(data=Dataset(samples=data["n"], offset=data["offset"]), **arguments)


def observations(name: str) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = OBSERVED["observations"][f"composer/{name}"]["calls"]
    return calls


def as_observed(outcome: CallOutcome) -> dict[str, Any]:
    """The observation fields a profile outcome predicts, in the runner's JSON shape."""
    error = outcome.error
    return {
        "steps": outcome.steps,
        "batches": [list(batch) for batch in outcome.batches],
        "counters_after": dict(outcome.counters) or None,
        "warnings": list(outcome.messages),
        "error": None if error is None else {"type": error.type, "message": error.message},
        "crashed": outcome.crashed,
    }


def observed_fields(observation: dict[str, Any]) -> dict[str, Any]:
    """The recorded fields a profile outcome predicts. A step that failed after its optimizer
    step (in the scheduler step before BATCH_END) was trained: its pending micro-batches are
    its ids."""
    fields = {
        key: observation[key] for key in as_observed(CallOutcome(steps=0, batches=(), counters={}))
    }
    pending = observation.get("pending_micro_batches")
    if pending and observation["error"] is not None:
        fields["steps"] += 1
        fields["batches"] = [*fields["batches"], [i for micro in pending for i in micro]]
    return fields


def recorded_rates(observation: dict[str, Any]) -> list[float]:
    """The learning rate of each trained step (a factor of the runner's base), as recorded."""
    rates = [position["lr"] for position in observation["positions"]]
    if observation.get("pending_micro_batches") and observation["error"] is not None:
        rates.append(observation["pending_lr"])
    return rates


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


#: The recorded scenarios with a scheduler: every call's trainer has one there (the profile
#: reports rates for every step), and no other scenario's does (it reports none).
SCHEDULED = sorted(
    name
    for name, (_, calls) in SCENARIOS.items()
    if any(call.get("scheduler") or call.get("fit_scheduler") for call in calls)
)


def scenario_params() -> list[Any]:
    return [
        pytest.param(
            name, marks=pytest.mark.xfail(strict=True, reason=XFAIL[name]) if name in XFAIL else ()
        )
        for name in SCENARIO_IDS
    ]


@pytest.mark.parametrize("name", scenario_params())
def test_profile_matches_real_run(name: str) -> None:
    """Every call of a recorded scenario: same steps, sample ids, counters, warnings, errors."""
    observations = OBSERVED["observations"][name]["calls"]
    outcomes = profile.simulate([to_call(o["call"]) for o in observations])
    assert [observed_fields(o) for o in observations] == [as_observed(o) for o in outcomes]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_profile_rates_match_real_run(name: str) -> None:
    """Every trained step's learning rate, to 1e-9 relative, where the trainer has a scheduler;
    no rates where it has none."""
    observations = OBSERVED["observations"][f"composer/{name}"]["calls"]
    outcomes = profile.simulate([to_call(o["call"]) for o in observations])
    for index, (observation, outcome) in enumerate(zip(observations, outcomes, strict=True)):
        if name not in SCHEDULED:
            assert outcome.rates == (), index
            continue
        recorded = recorded_rates(observation)
        assert len(outcome.rates) == len(recorded) == outcome.steps, index
        for step, (got, want) in enumerate(zip(outcome.rates, recorded, strict=True)):
            assert _close(got, want), (index, step, got, want)


def test_observations_are_from_the_profiled_version() -> None:
    """The observations were recorded with the Composer version the profile names."""
    assert OBSERVED["meta"]["versions"]["mosaicml"] == profile.VERSION


def test_every_runner_scenario_was_recorded() -> None:
    """observed_composer.json holds exactly the runner's scenarios (re-record after a change)."""
    assert sorted(f"composer/{name}" for name in SCENARIOS) == SCENARIO_IDS
    for name, (_, calls) in SCENARIOS.items():
        recorded = [o["call"] for o in OBSERVED["observations"][f"composer/{name}"]["calls"]]
        assert recorded == calls


def test_runner_defaults_are_the_profiles() -> None:
    """A key the runner leaves out means what the profile's Call field means when left out."""
    fields = attrs.fields_dict(profile.Call)
    for key, value in DEFAULTS.items():
        if key != "data":
            assert fields[key].default == value, key
    assert profile.Call().data == Dataset(samples=DEFAULTS["data"]["n"])


def test_rules_name_a_source() -> None:
    """Each rule is a sentence or two and points at a file of the Composer source."""
    assert profile.RULES
    for rule, source in profile.RULES:
        assert rule.strip()
        assert source.startswith("composer/")


class TestQuotedRealOutcomes:
    """Spot checks written out from observed_composer.json, readable without the JSON."""

    def test_mid_epoch_stop_keeps_epoch(self) -> None:
        """'15ba' leaves epoch=1 and batch_in_epoch=5 (real run composer/batches15)."""
        (outcome,) = profile.simulate([profile.Call(max_duration="15ba")])
        assert outcome.counters == {
            "epoch": 1,
            "batch": 15,
            "sample": 150,
            "token": 0,
            "batch_in_epoch": 5,
            "sample_in_epoch": 50,
            "token_in_epoch": 0,
        }

    def test_fractional_epoch_type_error(self) -> None:
        """'0.1ep' raises Composer's TypeError (real run composer/fractional_epoch)."""
        (outcome,) = profile.simulate([profile.Call(max_duration="0.1ep")])
        assert outcome.error == TrainerError(
            type="TypeError",
            message="value 0.1 is not an integer. Units TimeUnit.EPOCH require integer values.",
        )

    def test_max_duration_le_elapsed(self) -> None:
        """Resume at batch 13 with '10ba' (real run composer/max_duration_le_elapsed_on_resume)."""
        outcomes = profile.simulate(
            [
                profile.Call(max_duration="2ep", save_interval="1ba", crash_at=13),
                profile.Call(max_duration="10ba", resume="latest"),
            ]
        )
        assert outcomes[1].error == TrainerError(
            type="ValueError",
            message=(
                "The max_duration (10ba) is less than or equal to the elapsed training duration "
                "(13ba). No training would occur. Please provide the `duration` or specify "
                "`reset_time=True` in Trainer.fit()."
            ),
        )

    def test_autoresume_fit_duration_readds(self) -> None:
        """fit(duration='2ep') autoresumed at batch 13 trains to 3ep, 17 more batches (#3357)."""
        call = profile.Call(duration="2ep", autoresume=True, save_interval="1ba")
        outcomes = profile.simulate([attrs.evolve(call, crash_at=13), call])
        assert (outcomes[1].steps, outcomes[1].counters["epoch"]) == (17, 3)

    @pytest.mark.parametrize("interval", ["1ep", "1ba"])
    def test_end_of_training_checkpoint_is_saved_once(self, interval: str) -> None:
        """'10ba' ends on an epoch's last batch: the saver keeps the BATCH_CHECKPOINT save
        (epoch 0, batch_in_epoch 10) and skips the epoch-end one, so an autoresumed
        fit(duration='1ep') spins the epoch and trains 0 steps, ending at batch 10, epoch 1,
        sample 100 (real runs composer/end_checkpoint_then_fit and ..._1ba)."""
        first = profile.Call(max_duration="10ba", save_interval=interval, autoresume=True)
        second = profile.Call(duration="1ep", save_interval=interval, autoresume=True)
        outcome = profile.simulate([first, second])[1]
        assert outcome.steps == 0
        assert (outcome.counters["batch"], outcome.counters["epoch"]) == (10, 1)
        assert outcome.counters["sample"] == 100
        assert outcome.messages[0].startswith("UserWarning: No batches were trained")

    def test_token_budget_ends_inside_a_batch(self) -> None:
        """'1000tok' at 8 tokens a sample, 80 a batch: batch 13 (tokens 960 to 1040) is trained
        whole (real run composer/tokens_1000)."""
        (outcome,) = profile.simulate([profile.Call(max_duration="1000tok", tokens_per_sample=8)])
        assert outcome.steps == 13
        assert outcome.counters["token"] == 1040
        assert outcome.counters["token_in_epoch"] == 240

    def test_token_duration_in_a_later_fit(self) -> None:
        """After '15ba' (1200 tokens), fit(duration='200tok') trains to 1440: 3 batches, ids
        50-79 (real run composer/tokens_fit_duration)."""
        outcomes = profile.simulate(
            [
                profile.Call(max_duration="15ba", tokens_per_sample=8),
                profile.Call(fresh=False, duration="200tok", tokens_per_sample=8),
            ]
        )
        assert [tuple(batch) for batch in outcomes[1].batches] == [
            tuple(range(50, 60)),
            tuple(range(60, 70)),
            tuple(range(70, 80)),
        ]
        assert outcomes[1].counters["token"] == 1440

    def test_auto_micro_batches_on_cpu(self) -> None:
        """'auto' warns, then Trainer refuses it on CPU (composer/microbatch_auto_on_cpu)."""
        call = profile.Call(max_duration="2ba", device_train_microbatch_size="auto")
        (outcome,) = profile.simulate([call])
        assert outcome.error == TrainerError(
            type="ValueError",
            message=(
                "Can only use adaptive device_train_microbatch_size on GPU. Please set "
                "device_train_microbatch_size >= 1."
            ),
        )
        assert outcome.messages[0].startswith(
            "UserWarning: `device_train_microbatch_size='auto'` may potentially fail"
        )
        assert outcome.counters == {}

    def test_sixty_micro_batches(self) -> None:
        """Batch 10 in micro-batches of 1 for '6ba': 60 forward passes in the real run, 6 steps
        of 10 ids each (composer/microbatch1_6ba)."""
        (real,) = observations("microbatch1_6ba")
        assert sum(real["micro_batches_per_step"]) == 60
        call = profile.Call(max_duration="6ba", device_train_microbatch_size=1)
        (outcome,) = profile.simulate([call])
        assert [tuple(batch) for batch in outcome.batches] == [
            tuple(range(start, start + 10)) for start in range(0, 60, 10)
        ]


class TestMicroBatches:
    """device_train_microbatch_size=m splits each batch with torch's split: ceil(n / m)
    micro-batches of m samples, the last shorter; a batch shorter than m is one micro-batch."""

    @pytest.mark.parametrize(
        "name",
        [
            # 10 in 1s: ten micro-batches a step
            "microbatch1_6ba",
            # 10 in 3s: 3, 3, 3, 1
            "microbatch3_of_10",
            # 10 in 4s (4, 4, 2) and the 5-sample last batch in 4s (4, 1)
            "microbatch4_ragged_last_batch",
            # 10 in 20s: one micro-batch
            "microbatch_larger_than_batch",
            # tokens do not change the split
            "tokens_microbatch",
            # the resumed run splits as the first one did
            "microbatch_crash_resume",
        ],
    )
    def test_recorded_split(self, name: str) -> None:
        """The real runs' forward passes a step are ceil(samples / m)."""
        for observation in observations(name):
            size = observation["call"]["device_train_microbatch_size"]
            counts = observation.get("micro_batches_per_step", [1] * observation["steps"])
            assert counts == [math.ceil(len(batch) / size) for batch in observation["batches"]]

    @pytest.mark.parametrize(
        "value",
        [
            0,  # torch's split raises RuntimeError on a size of 0: not modelled
            2.0,  # Composer's split refuses floats at the first batch: not modelled
            True,  # a bool is not a size
        ],
    )
    def test_sizes_the_profile_refuses(self, value: Any) -> None:
        """What the profile does not model is refused, not guessed."""
        with pytest.raises(ValueError, match="device_train_microbatch_size must be"):
            profile.simulate([profile.Call(max_duration="2ba", device_train_microbatch_size=value)])


def test_token_duration_without_tokens_is_refused() -> None:
    """Without max_seq_len Composer counts 0 tokens and a 'tok' duration never ends: refused."""
    with pytest.raises(NotImplementedError, match="never stops"):
        profile.simulate([profile.Call(max_duration="100tok")])


def _killed_at(name: str) -> list[tuple[int, int | None]]:
    """(call index, crash_at of its trainer) of each recorded call that was killed."""
    killed: list[tuple[int, int | None]] = []
    crash_at = None
    for index, observation in enumerate(observations(name)):
        call = observation["call"]
        if call.get("fresh", True):
            crash_at = call.get("crash_at")
        if observation["crashed"]:
            killed.append((index, crash_at))
    return killed


class TestCrashModel:
    """crash_at=k kills the job at the first BATCH_START with timestamp.batch >= k: after step
    k's saves and epoch end, before any micro-batch of the next step."""

    @pytest.mark.parametrize(
        ("name", "killed"),
        [
            # killed mid-epoch, resumed from the batch-13 save
            ("load_path_resume_13", [0]),
            # the epoch-end save (ep1-ba10) comes before the kill at epoch 2's first step
            ("crash_at_epoch_end_save", [0]),
            # the first fit ends at batch 10 unharmed; the next fit dies at its first step
            ("crash_at_later_fit", [1]),
            # killed before the first step
            ("crash_at_zero", [0]),
            # a fit that only spins starts no step: not killed
            ("end_checkpoint_then_fit_crash_at", []),
            # killed before step 4's first micro-batch
            ("microbatch_crash_resume", [0]),
            # killed between token-interval saves
            ("tokens_save_interval_crash", [0]),
        ],
    )
    def test_where_the_real_runs_were_killed(self, name: str, killed: list[int]) -> None:
        """The killed calls, each at batch k exactly, with no micro-batch of the next step."""
        found = _killed_at(name)
        assert [index for index, _ in found] == killed
        for index, crash_at in found:
            observation = observations(name)[index]
            assert observation["counters_after"]["batch"] == crash_at
            assert "pending_micro_batches" not in observation

    def test_epoch_end_save_precedes_the_kill(self) -> None:
        """crash_at=10 with save_interval='1ep': the kill finds epoch 1 done and saved, and the
        re-run loads ep1-ba10 and trains epoch 2 only (composer/crash_at_epoch_end_save)."""
        crashed, resumed = observations("crash_at_epoch_end_save")
        assert crashed["counters_after"]["epoch"] == 1
        assert resumed["checkpoint_loaded"] == "ep1-ba10-rank0.pt"
        outcomes = profile.simulate([to_call(o["call"]) for o in (crashed, resumed)])
        assert outcomes[0].crashed
        assert (outcomes[1].steps, outcomes[1].counters["epoch"]) == (10, 2)


def _scenario(*calls: FitCall, max_duration: str | None = None) -> Scenario:
    loaders = {call.loader.name or "": call.loader for call in calls}
    return Scenario(config=RunConfig(max_duration=max_duration), loaders=loaders, calls=calls)


TOKENS = Loader(samples=100, batch_size=10, tokens_per_sample=8, name="t")


class TestTranslate:
    """translate writes token durations and one-process micro-batches as Composer takes them."""

    def test_token_durations(self) -> None:
        """'1000tok', then fit(duration='200tok'): the Calls carry the tokens a sample."""
        scenario = _scenario(
            FitCall(loader=TOKENS), FitCall(loader=TOKENS, duration="200tok"),
            max_duration="1000tok",
        )  # fmt: skip
        translation = profile.translate(scenario, datasets(scenario))
        first, second = translation.calls
        assert (first.max_duration, first.tokens_per_sample) == ("1000tok", 8)
        assert (second.duration, second.tokens_per_sample) == ("200tok", 8)
        assert "max_seq_len=8" in translation.notes[0]

    @pytest.mark.parametrize(
        ("calls", "max_duration"),
        [
            # a budget that ends inside batch 13
            ((FitCall(loader=TOKENS),), "1000tok"),
            # batches, then tokens relative to the 1200 already trained
            ((FitCall(loader=TOKENS, duration="15ba"), FitCall(loader=TOKENS, duration="200tok")),
             None),
        ],
    )  # fmt: skip
    def test_token_runs_agree_with_the_plan(
        self, calls: tuple[FitCall, ...], max_duration: str | None
    ) -> None:
        """Where each call's budget starts at a batch boundary, Composer trains the plan."""
        result = compare(_scenario(*calls, max_duration=max_duration), trainers=["composer"])
        (composer,) = result.trainers
        assert composer.supported
        assert composer.differences == ()

    def test_micro_batches_of_one_process(self) -> None:
        """A data-parallel loader on one process, 2 a device and accumulation 5: batches of 10
        split into micro-batches of 2, reading what batches of 10 read."""
        job = Loader.sharded(
            samples=100, world_size=1, device_batch_size=2, accumulation=5, name="a"
        )
        scenario = _scenario(FitCall(loader=job), max_duration="2ep")
        (call,) = profile.translate(scenario, datasets(scenario)).calls
        assert (call.batch_size, call.device_train_microbatch_size) == (10, 2)
        plain = profile.Call(max_duration="2ep", autoresume=True, save_interval="1ba")
        assert [tuple(b) for b in profile.simulate([call])[0].batches] == [
            tuple(b) for b in profile.simulate([plain])[0].batches
        ]

    def test_several_processes_are_refused(self) -> None:
        """No multi-process Composer run was recorded."""
        job = Loader.sharded(samples=100, world_size=2, device_batch_size=5, name="a")
        scenario = _scenario(FitCall(loader=job), max_duration="2ep")
        with pytest.raises(Unsupported, match="cannot say what 2 ranks read"):
            profile.translate(scenario, datasets(scenario))

    def test_tokens_need_tokens_per_sample(self) -> None:
        """A token duration on a loader without tokens_per_sample would never end in Composer."""
        loader = Loader(samples=100, batch_size=10, name="a")
        scenario = _scenario(FitCall(loader=loader, duration="100tok"))
        with pytest.raises(Unsupported, match="has no tokens_per_sample"):
            profile.translate(scenario, datasets(scenario))

    def test_micro_batch_size_is_the_trainers(self) -> None:
        """device_train_microbatch_size is written on the Trainer: a later call whose loader
        needs another one is refused."""
        one = Loader.sharded(
            samples=100, world_size=1, device_batch_size=2, accumulation=5, name="a"
        )
        other = Loader.sharded(
            samples=100, world_size=1, device_batch_size=5, accumulation=2, name="b"
        )
        scenario = _scenario(
            FitCall(loader=one, duration="1ep"), FitCall(loader=other, duration="1ep")
        )
        with pytest.raises(Unsupported, match="call #1's loader needs 5"):
            profile.translate(scenario, datasets(scenario))


def _cosine(t: int, total: int, *, warmup: int = 3, floor: float = 0.1) -> float:
    """The runner's COSINE scheduler at timestamp ``t`` with t_max = ``total`` batches, as
    Composer's docstring formula writes it (a warmup t / t_warmup, then a cosine to alpha_f),
    with the decay ending at t_max as its code does."""
    if t < warmup:
        return t / warmup
    fraction = min(1.0, (t - warmup) / (total - warmup))
    return floor + (1 - floor) * (1 + math.cos(math.pi * fraction)) / 2


def _rates(name: str, call: int) -> list[float]:
    return recorded_rates(observations(name)[call])


def _first_batch(observation: dict[str, Any]) -> int:
    """The timestamp (batch) of a call's first trained step."""
    batch: int = observation["counters_after"]["batch"]
    return batch - observation["steps"]


class TestRates:
    """Composer's schedulers are functions of the State, evaluated when compiled and after each
    batch (before the timestamp advances); a checkpoint restores the optimizer's learning
    rate, and every later one is recomputed from the restored timestamp."""

    def test_each_step_uses_the_factor_of_the_timestamp_before(self) -> None:
        """2ep, warmup 3, cosine to 0.1 over 20 batches: step t >= 1 trains with alpha(t - 1),
        step 0 with alpha(0) (the compile's evaluation), so the rate is 0 twice and reaches 1
        at step 4 (real run composer/lr_cosine_2ep)."""
        rates = _rates("lr_cosine_2ep", 0)
        assert rates[:5] == [0.0, 0.0, pytest.approx(1 / 3), pytest.approx(2 / 3), 1.0]
        for t, rate in enumerate(rates):
            assert _close(rate, _cosine(max(t - 1, 0), 20)), t
        (outcome,) = profile.simulate([to_call(observations("lr_cosine_2ep")[0]["call"])])
        assert all(_close(a, b) for a, b in zip(outcome.rates, rates, strict=True))

    @pytest.mark.parametrize(
        "name",
        [
            # killed at step 13, load_path from the batch-13 checkpoint
            "lr_cosine_crash_load_path",
            # killed at step 13, autoresumed from the batch-12 checkpoint: step 13 trained twice
            "lr_cosine_crash_autoresume",
        ],
    )
    def test_a_resume_has_the_uninterrupted_rates(self, name: str) -> None:
        """Every step of the killed run and of its re-run has the uninterrupted run's rate at
        the same timestamp: the checkpoint's lr is the one the next step would have used."""
        uninterrupted = _rates("lr_cosine_2ep", 0)
        for index, observation in enumerate(observations(name)):
            start = _first_batch(observation)
            rates = recorded_rates(observation)
            for step, rate in enumerate(rates):
                assert _close(rate, uninterrupted[start + step]), (index, step)
        outcomes = profile.simulate([to_call(o["call"]) for o in observations(name)])
        assert [list(o.rates) for o in outcomes] == [
            pytest.approx(recorded_rates(o), rel=1e-9) for o in observations(name)
        ]

    @pytest.mark.parametrize(
        ("name", "step", "want"),
        [
            # the checkpoint's lr, set by the 2ep run: its curve's alpha(12)
            ("lr_cosine_crash_resume_longer", 0, _cosine(12, 20)),
            # then the resumed Trainer's 3ep curve, from the restored timestamp
            ("lr_cosine_crash_resume_longer", 1, _cosine(13, 30)),
            # the lr the first fit's last scheduler step set, on the 10ba curve
            ("lr_dur_stretches", 0, _cosine(9, 10)),
            # max_duration is 20ba now and '1dur' with it: a jump up
            ("lr_dur_stretches", 1, _cosine(10, 20)),
            # t_max='20ba' does not move: one curve over both fits
            ("lr_t_max_batches", 0, _cosine(9, 20)),
            ("lr_t_max_batches", 1, _cosine(10, 20)),
            # t_max='2ep' is 20 batches of this loader, whatever max_duration says
            ("lr_t_max_epochs", 0, _cosine(14, 20)),
            # the lr set before the reset
            ("lr_reset_time", 0, _cosine(9, 10)),
            # the timestamp restarted: the warmup again, over the new 5ba
            ("lr_reset_time", 1, _cosine(0, 5)),
            ("lr_reset_time", 4, _cosine(3, 5)),
            # fit(schedulers=...) compiles at timestamp 10: alpha(10), not the lr set at 9
            ("lr_fit_schedulers", 0, _cosine(10, 20)),
            # and the first scheduler step sees timestamp 10 again
            ("lr_fit_schedulers", 1, _cosine(10, 20)),
            # re-run: fit(schedulers=...) compiles after the load (timestamp 6) on the re-added
            # max_duration 16ba, overwriting the saved lr (alpha(5) of the 10ba curve)
            ("lr_fit_schedulers_autoresume", 0, _cosine(6, 16)),
            ("lr_fit_schedulers_autoresume", 1, _cosine(6, 16)),
            # '1dur' of 2ep is 2 x 5 batches of the new loader, behind the timestamp: the floor
            ("lr_switch_loader", 1, 0.1),
        ],
    )
    def test_the_second_calls_rates(self, name: str, step: int, want: float) -> None:
        """The second call's step ``step``, where the curve is not the uninterrupted one."""
        assert _close(_rates(name, 1)[step], want)
        outcomes = profile.simulate([to_call(o["call"]) for o in observations(name)])
        assert _close(outcomes[1].rates[step], want)

    def test_a_fit_past_t_max_in_batches_trains_one_step(self) -> None:
        """t_max='10ba', then fit(duration='10ba'): the second fit's first batch trains (with
        the lr set at batch 9), and the scheduler step after it raises; the timestamp stays at
        10 (composer/lr_t_max_batches_exceeded)."""
        real = observations("lr_t_max_batches_exceeded")[1]
        assert real["steps"] == 0
        assert real["pending_micro_batches"] == [list(range(10))]
        outcomes = profile.simulate(
            [to_call(o["call"]) for o in observations("lr_t_max_batches_exceeded")]
        )
        assert outcomes[1].steps == 1
        assert outcomes[1].error == TrainerError(
            type="ValueError",
            message=(
                "t_max 10ba must be greater than or equal to max_duration 20ba. Otherwise, the "
                "LR schedule will not be defined for the entire training duration."
            ),
        )
        assert outcomes[1].counters["batch"] == 10
        assert _close(outcomes[1].rates[0], _cosine(9, 10))

    def test_a_trainer_scheduler_needs_max_duration(self) -> None:
        """Trainer(schedulers=...) evaluates the scheduler in Trainer(): without max_duration
        its assertion fails (composer/lr_trainer_scheduler_without_max_duration)."""
        (real,) = observations("lr_trainer_scheduler_without_max_duration")
        (outcome,) = profile.simulate([to_call(real["call"])])
        assert outcome.error == TrainerError(
            type="AssertionError",
            message="max_duration should be set whenever schedulers are invoked",
        )
        assert outcome.counters == {}

    def test_micro_batches_share_their_steps_rate(self) -> None:
        """Micro-batches of 3 change nothing: the rates of whole batches (composer/
        lr_micro_batches)."""
        rates = _rates("lr_micro_batches", 0)
        assert all(_close(rate, _cosine(max(t - 1, 0), 5)) for t, rate in enumerate(rates))
        spec = observations("lr_micro_batches")[0]["call"]
        split = profile.simulate([to_call(spec)])[0].rates
        whole = profile.simulate(
            [to_call({k: v for k, v in spec.items() if k != "device_train_microbatch_size"})]
        )[0].rates
        assert split == whole

    def test_a_zero_warmup_warns(self) -> None:
        """t_warmup='0ba' warns at every evaluation; the harness folds the repeats."""
        (real,) = observations("lr_constant_zero_warmup")
        assert real["warnings"][0].startswith("UserWarning: The warmup duration is 0.")
        (outcome,) = profile.simulate([to_call(real["call"])])
        assert outcome.messages == tuple(real["warnings"])
        assert outcome.rates == (0.5, 0.5, 0.5)

    def test_a_scheduler_resuming_a_checkpoint_without_one_is_refused(self) -> None:
        """No run of a Trainer with a scheduler loading a checkpoint saved without one."""
        scheduler = profile.Scheduler(kind="ConstantWithWarmupScheduler", t_warmup="1ba")
        with pytest.raises(NotImplementedError, match="saved without one is not modelled"):
            profile.simulate(
                [
                    profile.Call(max_duration="2ep", save_interval="1ba", crash_at=3),
                    profile.Call(max_duration="2ep", resume="latest", scheduler=scheduler),
                ]
            )


class TestScheduler:
    """A Scheduler holds what Composer's class takes; anything else is refused."""

    @pytest.mark.parametrize(
        ("arguments", "match"),
        [
            # not one of the modelled classes
            ({"kind": "CosineAnnealingScheduler", "t_warmup": "1ba"}, "'kind' must be in"),
            # the cosine one takes no alpha_i
            (
                {"kind": "CosineAnnealingWithWarmupScheduler", "t_warmup": "1ba", "alpha_i": 1.0},
                "takes no alpha_i",
            ),
            # the constant one takes no alpha_f
            (
                {"kind": "ConstantWithWarmupScheduler", "t_warmup": "1ba", "alpha_f": 0.0},
                "takes no alpha_f",
            ),
            # wall-clock time: not modelled
            ({"kind": "LinearWithWarmupScheduler", "t_warmup": "1sec"}, "ba, ep, sp, tok or dur"),
            # iterations: not modelled
            (
                {"kind": "LinearWithWarmupScheduler", "t_warmup": "1ba", "t_max": "1iter"},
                "ba, ep, sp, tok or dur",
            ),
            # a fraction of a batch
            ({"kind": "LinearWithWarmupScheduler", "t_warmup": "1.5ba"}, "whole ba only"),
            # no unit
            ({"kind": "LinearWithWarmupScheduler", "t_warmup": "10"}, "ba, ep, sp, tok or dur"),
        ],
    )
    def test_refused(self, arguments: dict[str, Any], match: str) -> None:
        """Each row is refused with ValueError."""
        with pytest.raises(ValueError, match=match):
            profile.Scheduler(**arguments)

    def test_written_as_composer_takes_it(self) -> None:
        """str() is the constructor call, with the arguments given."""
        scheduler = profile.Scheduler(
            kind="LinearWithWarmupScheduler", t_warmup="0.25dur", alpha_i=1.0, alpha_f=0.2
        )
        assert str(scheduler) == (
            "LinearWithWarmupScheduler(t_warmup='0.25dur', alpha_i=1.0, alpha_f=0.2)"
        )


_A = Loader(samples=100, batch_size=10, name="a")
_B = Loader(samples=300, batch_size=10, name="b")
_COSINE = Schedule.warmup("2ba").then_cosine(to="0.1", until=END)


def _scheduled(scenario: Scenario, schedule: Schedule = _COSINE) -> Scenario:
    return attrs.evolve(scenario, schedule=schedule)


_ONE_CALL = _scheduled(_scenario(FitCall(loader=_A), max_duration="2ep"))
_TWO_CALLS = _scheduled(
    _scenario(FitCall(loader=_A), FitCall(loader=_B, duration="3ba"), max_duration="2ep")
)
_NO_MAX_DURATION = _scheduled(
    _scenario(FitCall(loader=_A, duration="15ba"), FitCall(loader=_A, duration="5ba"))
)
_BELOW_THE_CAP = _scheduled(
    _scenario(
        FitCall(loader=_A, duration="15ba"), FitCall(loader=_A, duration="5ba"), max_duration="5ep"
    )
)


class TestScheduleTranslation:
    """translate writes the run's curve as one Composer scheduler (shapes per run): its rates
    are the plan's one step late, the first two steps sharing the first factor."""

    @pytest.mark.parametrize(
        ("scenario", "t_max"),
        [
            # one call of 2ep: '1dur' is its 20 batches
            (_ONE_CALL, "1dur"),
            # a later fit moves max_duration: the plan's 23 steps written out
            (_TWO_CALLS, "23ba"),
        ],
    )
    def test_the_scheduler_is_on_the_trainer(self, scenario: Scenario, t_max: str) -> None:
        """Warmup 2, a cosine to 0.1: CosineAnnealingWithWarmupScheduler on the Trainer, the
        optimizer at the peak."""
        translation = profile.translate(scenario, datasets(scenario))
        first = translation.calls[0]
        assert first.scheduler == profile.Scheduler(
            kind="CosineAnnealingWithWarmupScheduler", t_warmup="2ba", t_max=t_max, alpha_f=0.1
        )
        assert (first.lr, first.fit_scheduler) == (1.0, None)
        assert all(call.scheduler is None for call in translation.calls[1:])
        assert translation.schedule.startswith("Trainer(optimizers=SGD(lr=1 * base), schedulers=")

    @pytest.mark.parametrize(
        "scenario",
        [
            # no max_duration: Trainer(schedulers=...) would fail its assertion
            _NO_MAX_DURATION,
            # max_duration='5ep' (50 batches) on the Trainer: a t_max of the plan's 20 batches
            # would fail its check there, before fit(duration='15ba') sets max_duration
            _BELOW_THE_CAP,
        ],
    )
    def test_a_first_fit_with_a_duration_gets_it(self, scenario: Scenario) -> None:
        """The first fit's duration sets the max_duration the scheduler is evaluated on:
        fit(schedulers=...)."""
        translation = profile.translate(scenario, datasets(scenario))
        first = translation.calls[0]
        assert first.scheduler is None
        assert first.fit_scheduler is not None
        assert first.fit_scheduler.t_max == "20ba"
        assert "fit(duration=..., schedulers=" in translation.schedule
        (composer,) = compare(scenario, trainers=["composer"]).trainers
        assert not [line for line in composer.differences if not line.startswith("learning")]

    @pytest.mark.parametrize("scenario", [_ONE_CALL, _TWO_CALLS, _NO_MAX_DURATION, _BELOW_THE_CAP])
    def test_the_rates_trail_the_plans_by_one_step(self, scenario: Scenario) -> None:
        """Step 1 has the plan's factor, every later step the plan's factor of the step
        before."""
        (composer,) = compare(scenario, trainers=["composer"]).trainers
        rates, planned = composer.rates, composer.planned_rates
        assert len(rates) == len(planned) == composer.steps
        assert _close(rates[0], planned[0])
        for step in range(1, len(rates)):
            assert _close(rates[step], planned[step - 1]), step
        assert composer.differences[0].startswith("learning rate differs at ")

    @pytest.mark.parametrize("crash_at", [5, 13, 20])
    def test_a_crash_changes_no_rate(self, crash_at: int) -> None:
        """Killed after step k and re-run by autoresume (a checkpoint every batch): the same
        rates as the uninterrupted run, step for step."""
        (plain,) = compare(_TWO_CALLS, trainers=["composer"]).trainers
        (crashed,) = compare(_TWO_CALLS, crash_at=crash_at, trainers=["composer"]).trainers
        assert len(crashed.rates) == crashed.steps == 23
        assert crashed.rates == pytest.approx(plain.rates, rel=1e-9)

    @pytest.mark.parametrize(
        ("schedule", "why"),
        [
            # two decays: no single warmup-then-decay scheduler
            (
                Schedule.warmup("2ba")
                .then_cosine(to="0.1", until=Landmark.call_stop(0))
                .then_linear(to=0, until=END),
                "the trainers' own schedulers take a warmup and one",
            ),
            # from 0 to 0.5: no scheduler rises after its warmup (and the optimizer's learning
            # rate, the peak, would be 0)
            (Schedule(0).then_linear(to="0.5", until=END), "rises from 0 to 1/2"),
        ],
    )
    def test_what_cannot_be_written(self, schedule: Schedule, why: str) -> None:
        """The reason is in Translation.schedule; the run is still translated, without a
        scheduler, and its rates are not compared."""
        scenario = _scheduled(_TWO_CALLS, schedule)
        translation = profile.translate(scenario, datasets(scenario))
        assert translation.schedule.startswith("cannot be written: ")
        assert why in translation.schedule
        assert all(c.scheduler is None and c.fit_scheduler is None for c in translation.calls)
        (composer,) = compare(scenario, trainers=["composer"]).trainers
        assert composer.supported
        assert composer.rates == ()


@pytest.mark.parametrize(
    "name",
    [
        "batches15_then_1ep",
        "load_path_resume_13",
        "switch_loader_short",
        "end_checkpoint_then_fit",
        "tokens_fit_duration",
        "microbatch4_ragged_last_batch",
        "lr_cosine_crash_resume_longer",
        "lr_t_max_batches_exceeded",
    ],
)
def test_live_composer_matches_profile(name: str, tmp_path: Path) -> None:
    """With Composer installed, a fresh real run still agrees with the profile, rates too."""
    pytest.importorskip("composer")
    from ._composer_runner import run

    _, calls = SCENARIOS[name]
    observations = run(calls, tmp_path)
    outcomes = profile.simulate([to_call(call) for call in calls])
    assert [observed_fields(o) for o in observations] == [as_observed(o) for o in outcomes]
    if name in SCHEDULED:
        assert [list(o.rates) for o in outcomes] == [
            pytest.approx(recorded_rates(o), rel=1e-9) for o in observations
        ]
