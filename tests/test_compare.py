"""Comparing trainers with the plan: the differences are found and said in words."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import attrs
import pytest

from durations import (
    END,
    CompareError,
    FitCall,
    Landmark,
    Loader,
    Mixture,
    RunConfig,
    Schedule,
    Source,
)
from durations._render.compare import _finite, compare_text
from durations.compare import TRAINERS, compare, datasets, differences
from durations.scenario import Scenario
from durations.trainers import CallOutcome, Unsupported
from durations.trainers._outcome import Runs
from durations.trainers._script import shapes

ROOT = Path(__file__).resolve().parent.parent
SMALL = Scenario.from_toml((ROOT / "tests" / "golden" / "two-phase-small.toml").read_text())


def _scenario(*calls: FitCall, max_duration: str | None = None) -> Scenario:
    loaders = {c.loader.name or "": c.loader for c in calls}
    return Scenario(config=RunConfig(max_duration=max_duration), loaders=loaders, calls=calls)


A = Loader(samples=100, batch_size=10, name="a")


def outcome(comparison: object, trainer: str) -> object:
    return next(t for t in comparison.trainers if t.trainer == trainer)  # type: ignore[attr-defined]


def test_readme_table() -> None:
    """The README's side-by-side rows for the crash at step 13 (Hugging Face agrees)."""
    assert outcome(compare(SMALL, crash_at=13), "transformers").agrees  # type: ignore[attr-defined]


class TestAgreement:
    """Where a trainer's idiom says exactly what the script says, it trains exactly the plan."""

    @pytest.mark.parametrize("trainer", ["composer", "lightning", "transformers", "keras"])
    def test_whole_epochs(self, trainer: str) -> None:
        """Two epochs of one data set, no crash: every trainer agrees with the plan."""
        result = outcome(compare(_scenario(FitCall(loader=A), max_duration="2ep")), trainer)
        assert result.supported  # type: ignore[attr-defined]
        assert result.differences == ()  # type: ignore[attr-defined]
        assert result.steps == 20  # type: ignore[attr-defined]


class TestDifferences:
    """The differences a wrong trainer produces are found and worded (trainers.md, FINDINGS)."""

    def test_lightning_plain_loader_replays(self) -> None:
        """A.5: a crash at step 13 replays samples 0-29 and never reads 70-99 of that epoch."""
        result = outcome(compare(SMALL, crash_at=13), "lightning")
        assert result.differences == (  # type: ignore[attr-defined]
            "reads samples 0-29 of 'a' 3 times where the plan reads them twice",
            "reads samples 70-99 of 'a' once where the plan reads them twice",
        )

    def test_composer_rejects_fractional_epochs(self) -> None:
        """D.3: Composer raises on 0.1ep, so the second phase never trains."""
        result = outcome(compare(SMALL), "composer")
        assert result.differences[0] == (  # type: ignore[attr-defined]
            "raises TypeError: value 0.1 is not an integer. Units TimeUnit.EPOCH require "
            "integer values."
        )
        assert (
            "never reads samples 0-29 of 'b' (the plan reads them once)" in result.differences  # type: ignore[attr-defined]
        )

    def test_keras_restarts_the_epoch(self) -> None:
        """C: BackupAndRestore restarts the interrupted epoch from its first batch, and the
        restored initial_epoch is never reset, so the second phase's fit trains nothing."""
        result = outcome(compare(SMALL, crash_at=13), "keras")
        assert (
            "never reads samples 0-29 of 'b' (the plan reads them once)" in result.differences  # type: ignore[attr-defined]
        )
        assert (
            "reads samples 0-29 of 'a' 3 times where the plan reads them twice"
            in result.differences  # type: ignore[attr-defined]
        )

    def test_composer_overshoot_leaks(self) -> None:
        """Composer measures the second relative call from the overshot counter: 2048, not 2016."""
        loader = Loader(samples=10_000, batch_size=32, name="a")
        scenario = _scenario(
            FitCall(loader=loader, duration="1000sp"),
            FitCall(loader=loader, duration="1000sp"),
            max_duration="1000sp",
        )
        result = outcome(compare(scenario), "composer")
        assert result.steps == 64  # type: ignore[attr-defined]
        assert result.differences[0] == "trains 64 steps where the plan has 63"  # type: ignore[attr-defined]


class TestUnsupported:
    """What a trainer's vocabulary cannot say is reported, with the reason, not guessed."""

    def test_reset_time_in_lightning(self) -> None:
        """Lightning has no clock reset."""
        scenario = _scenario(
            FitCall(loader=A, until="5ba"), FitCall(loader=A, until="5ba", reset_time=True)
        )
        result = outcome(compare(scenario), "lightning")
        assert not result.supported  # type: ignore[attr-defined]
        assert "no way to restart the clock" in result.reason  # type: ignore[attr-defined]

    def test_streams(self) -> None:
        """The profiles model sized data sets."""
        stream = Loader(samples=None, batch_size=4, name="s")
        with pytest.raises(Unsupported, match="is a stream"):
            datasets(_scenario(FitCall(loader=stream, duration="5ba")))

    def test_too_many_steps(self) -> None:
        """The profiles step through the run: a plan of more than MAX_STEPS steps is refused
        with the way out, before any trainer is emulated."""
        tiny = Loader(samples=10**9, batch_size=1, name="tiny")
        with pytest.raises(ValueError, match="the plan has 1,000,000,000 steps: compare emulates"):
            compare(_scenario(FitCall(loader=tiny), max_duration="1ep"))

    def test_crash_outside_the_run(self) -> None:
        """A crash step must be inside the run."""
        with pytest.raises(ValueError, match="expected a step inside the run, 1 to 22"):
            compare(SMALL, crash_at=23)


def test_cli_compare() -> None:
    """`durations compare` prints each trainer next to the plan, or JSON with the same data."""
    path = str(ROOT / "tests" / "golden" / "two-phase-small.toml")
    text = subprocess.run(
        [sys.executable, "-m", "durations", "compare", path, "--crash-at", "13"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "durations plans 23 steps (#0 20 · #1 3)" in text
    assert "  - reads samples 0-29 of 'a' 3 times where the plan reads them twice" in text
    data = json.loads(
        subprocess.run(
            [sys.executable, "-m", "durations", "compare", path, "--json", "--trainer", "keras"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert [t["trainer"] for t in data["trainers"]] == ["keras"]
    assert data["plan"]["total_steps"] == 23


ELASTIC_DDP = Scenario.from_toml((ROOT / "examples" / "elastic-ddp.toml").read_text())


class TestDataParallel:
    """A data-parallel loader is written with its world size for the trainers whose profiles
    have one (Hugging Face under torchrun, Lightning under strategy="ddp"); the others say why
    they cannot say it. 101 samples on 2 ranks of 10, two epochs, torch's padding."""

    def test_trainers_under_ddp(self) -> None:
        """Uncrashed: Lightning's DistributedSampler evens as the plan does; accelerate cycles
        whole batches, so samples 1-18 are read once more per epoch."""
        result = compare(ELASTIC_DDP)
        assert outcome(result, "lightning").agrees  # type: ignore[attr-defined]
        hf = outcome(result, "transformers")
        assert hf.differences == (  # type: ignore[attr-defined]
            "reads samples 1-18 of 'train' 4 times where the plan reads them twice",
        )
        assert tuple(hf.outcomes[0].batches[5]) == (*range(100, 101), *range(19))  # type: ignore[attr-defined]

    def test_crash_at_3(self) -> None:
        """`durations compare examples/elastic-ddp.toml --crash-at 3`: Lightning's plain loader
        replays the epoch's first 3 steps of 2 ranks (positions 0-59) and never reads 60-101 of
        that epoch (FINDINGS.md LR2); Hugging Face resumes exactly (HR2)."""
        result = compare(ELASTIC_DDP, crash_at=3)
        pl = outcome(result, "lightning")
        assert pl.differences == (  # type: ignore[attr-defined]
            "reads samples 1-59 of 'train' 3 times where the plan reads them twice",
            "reads samples 60-100 of 'train' once where the plan reads them twice",
        )
        assert pl.translation == (  # type: ignore[attr-defined]
            'Trainer(max_epochs=2, strategy="ddp", devices=2).fit(model, <train>) with '
            "DataLoader(batch_size=10); the injected DistributedSampler shuffles and evens the "
            "ranks by repeating samples",
        )
        hf = outcome(result, "transformers")
        assert hf.translation == (  # type: ignore[attr-defined]
            "torchrun --nproc_per_node=2: Trainer(TrainingArguments(per_device_train_batch_size"
            "=10, num_train_epochs=2.0, output_dir='phase0')).train() (accelerate evens the ranks "
            "by cycling, not by repeat)",
        )
        assert hf.steps == 12  # type: ignore[attr-defined]
        assert [len(o.batches) for o in hf.outcomes] == [3, 9]  # type: ignore[attr-defined]

    @pytest.mark.parametrize("trainer", ["composer", "keras"])
    def test_one_process_profiles_cannot_say_it(self, trainer: str) -> None:
        """Composer and Keras have no world size in their profiles: no guess, a reason."""
        result = outcome(compare(ELASTIC_DDP, crash_at=3), trainer)
        assert not result.supported  # type: ignore[attr-defined]
        assert result.reason == (  # type: ignore[attr-defined]
            f"the {trainer} profile models one process (no multi-process run of {trainer} was "
            "recorded), so it cannot say what 2 ranks read"
        )

    def test_accumulation_and_cycle(self) -> None:
        """With accelerate's own padding and accumulation, Hugging Face trains exactly the plan
        through a crash; Lightning's Trainer gets the accumulation."""
        job = Loader.sharded(
            samples=101, world_size=3, device_batch_size=10, accumulation=2, padding="cycle",
            name="job",
        )  # fmt: skip
        scenario = _scenario(FitCall(loader=job), max_duration="2ep")
        result = compare(scenario, crash_at=1)
        assert outcome(result, "transformers").agrees  # type: ignore[attr-defined]
        pl = outcome(result, "lightning")
        assert "accumulate_grad_batches=2" in pl.translation[0]  # type: ignore[attr-defined]
        assert pl.supported  # type: ignore[attr-defined]


def test_cli_compare_under_ddp() -> None:
    """`durations compare examples/elastic-ddp.toml --crash-at 3` shows Hugging Face and
    Lightning under DDP next to the plan, and why Composer and Keras cannot say it."""
    path = str(ROOT / "examples" / "elastic-ddp.toml")
    text = subprocess.run(
        [sys.executable, "-m", "durations", "compare", path, "--crash-at", "3"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "durations plans 12 steps (#0 12)" in text
    assert 'Trainer(max_epochs=2, strategy="ddp", devices=2)' in text
    assert "torchrun --nproc_per_node=2: Trainer(" in text
    assert "  - reads samples 60-100 of 'train' once where the plan reads them twice" in text
    assert "cannot say it: the keras profile models one process" in text


class TestWorldSize:
    """``compare(..., crash_at=k, world_size=n)``: the re-run on ``n`` processes, against the
    plan's first ``k`` steps and then the plan resumed on ``n`` ranks."""

    @pytest.mark.parametrize("crash", [1, 3, 5, 7, 11])
    def test_the_same_world_size_is_the_plain_crash(self, crash: int) -> None:
        """Re-running on as many processes as the first run changes nothing: same steps, same
        differences, for every trainer (the resumed plan is the rest of the uninterrupted one)."""
        plain = compare(ELASTIC_DDP, crash_at=crash)
        same = compare(ELASTIC_DDP, crash_at=crash, world_size=2)
        assert same.total_steps == plain.total_steps == 12
        for a, b in zip(plain.trainers, same.trainers, strict=True):
            assert (a.trainer, a.steps, a.differences) == (b.trainer, b.steps, b.differences)

    @pytest.mark.parametrize(
        ("world", "steps"),
        [
            # 41 samples left of 101 at 10 a step: 5 steps, then 101: 11 steps
            (1, 3 + 5 + 11),
            # the epoch padded to 102: 42 left at 30 a step: 2, then 102: 4
            (3, 3 + 2 + 4),
            # padded to 104: 44 left at 40 a step: 2, then 104: 3
            (4, 3 + 2 + 3),
        ],
    )
    def test_the_plan_resumes_on_the_new_ranks(self, world: int, steps: int) -> None:
        """The plan reads on from position 60 of epoch 0 (3 steps of 2 ranks of 10) at the new
        global batch of 10 per rank, each epoch padded to a multiple of the ranks."""
        result = compare(ELASTIC_DDP, crash_at=3, world_size=world)
        assert result.resumed is not None
        assert result.resumed.start.sample == 60
        assert result.total_steps == steps

    def test_a_trainer_that_follows_the_plan_agrees(self) -> None:
        """Lightning and Hugging Face both shift the data at another world size (FINDINGS.md
        LR3, HR3): neither agrees with the sample-exact plan on 3 processes."""
        result = compare(ELASTIC_DDP, crash_at=3, world_size=3)
        for trainer in ("lightning", "transformers"):
            found = outcome(result, trainer)
            assert found.supported  # type: ignore[attr-defined]
            assert not found.agrees  # type: ignore[attr-defined]
        assert outcome(result, "transformers").outcomes[-1].steps == 5  # type: ignore[attr-defined]

    @pytest.mark.parametrize(
        ("scenario", "kwargs", "message"),
        [
            # a world size is for the re-run: without a crash there is none
            (ELASTIC_DDP, {"world_size": 3}, "the re-run's world size needs a re-run"),
            # a loader of one global batch has no per-device geometry to scale
            (SMALL, {"world_size": 2, "crash_at": 3}, "gives no per-device geometry"),
            # zero processes run nothing
            (ELASTIC_DDP, {"world_size": 0, "crash_at": 3}, "expected a whole number >= 1"),
        ],
    )
    def test_refusals(self, scenario: Scenario, kwargs: dict[str, int], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            compare(scenario, **kwargs)  # type: ignore[arg-type]


def test_cli_compare_on_another_world_size() -> None:
    """`durations compare examples/elastic-ddp.toml --crash-at 3 --world-size 3` says the
    resumed plan's steps, and JSON carries the resumed plan."""
    path = str(ROOT / "examples" / "elastic-ddp.toml")
    command = [sys.executable, "-m", "durations", "compare", path, "--crash-at", "3"]
    text = subprocess.run(
        [*command, "--world-size", "3"], capture_output=True, text=True, check=True
    ).stdout
    words = " ".join(text.split())  # lines wrap at 100 columns, where the path's length says
    assert "the same script run again on 3 processes" in words
    assert "and on 3 processes from step 3: 6 more steps, 9 in all" in words
    data = json.loads(
        subprocess.run(
            [*command, "--world-size", "3", "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    assert (data["world_size"], data["total_steps"]) == (3, 9)
    assert data["resumed"]["total_steps"] == 6
    failed = subprocess.run(
        [sys.executable, "-m", "durations", "compare", path, "--world-size", "3"],
        capture_output=True,
        text=True,
    )
    assert failed.returncode != 0
    assert "the re-run's world size needs a re-run" in failed.stderr


class TestCost:
    """The comparison works on runs of sample ids: a data set of millions of samples costs what
    its steps cost (the emulations step), not what its samples would."""

    def test_reads_are_ranges(self) -> None:
        big = Loader(samples=4_000_000, batch_size=500_000, name="big")
        result = compare(_scenario(FitCall(loader=big), max_duration="2ep"), crash_at=3)
        for trainer in result.trainers:
            assert trainer.supported
            for call in trainer.outcomes:
                assert all(isinstance(ids, range) for ids in call.batches)

    def test_loaders_of_more_than_a_million_samples_are_told_apart(self) -> None:
        """Each loader's ids follow the previous loader's: two large loaders never share ids,
        so the second phase's reads are named on its own loader."""
        a = Loader(samples=1_500_000, batch_size=500_000, name="a")
        b = Loader(samples=2_000_000, batch_size=500_000, name="b")
        scenario = _scenario(FitCall(loader=a, duration="1ep"), FitCall(loader=b, duration="1ep"))
        assert datasets(scenario)["b"].offset == 1_500_000
        result = outcome(compare(scenario, crash_at=2), "lightning")
        # The replayed epoch's last third would have been b's first samples with a fixed
        # offset of 1,000,000 a loader: here it is a's, and b is read as planned.
        assert result.differences == (  # type: ignore[attr-defined]
            "reads samples 0-499,999 of 'a' twice where the plan reads them once",
            "never reads samples 1,000,000-1,499,999 of 'a' (the plan reads them once)",
        )


def test_one_process_with_accumulation_is_one_process() -> None:
    """A data-parallel loader on one rank is one process: Composer writes its accumulation as
    micro-batches (device_train_microbatch_size) and Keras as one global batch, instead of
    saying they cannot read several ranks; on 2 ranks they still cannot say it."""
    job = Loader.sharded(samples=100, world_size=1, device_batch_size=5, accumulation=2, name="j")
    result = compare(_scenario(FitCall(loader=job), max_duration="2ep"), crash_at=7)
    composer = outcome(result, "composer")
    assert composer.agrees  # type: ignore[attr-defined]
    assert "device_train_microbatch_size=5" in composer.translation[0]  # type: ignore[attr-defined]
    assert outcome(result, "keras").supported  # type: ignore[attr-defined]
    elastic = compare(_scenario(FitCall(loader=job), max_duration="2ep"), crash_at=7, world_size=2)
    assert outcome(elastic, "composer").reason == (  # type: ignore[attr-defined]
        "the composer profile models one process (no multi-process run of composer was "
        "recorded), so it cannot say what 2 ranks read"
    )


def _toml(text: str) -> Scenario:
    return Scenario.from_toml(textwrap.dedent(text))


_DDP_SCHEDULE = """
    [run]
    max_duration = "2ep"
    [loaders.train]
    samples = 101
    world_size = 2
    device_batch_size = 10
    padding = "cycle"
    [[fit]]
    loader = "train"
    [schedule]
    warmup = "{warmup}"
    [[schedule.pieces]]
    kind = "linear"
    to = "{to}"
    until = "{until}"
"""


class TestFoundByReview:
    """Each row a comparison that once went wrong, and what it says now."""

    def test_a_profile_refusal_is_that_trainers_alone(self) -> None:
        """Hugging Face has no formula for a polynomial decay as long as its warmup (its own
        division by zero): on 4 processes the re-run's max_steps is the warmup's 6, so the
        profile refuses it; that trainer cannot say it, the others are still compared."""
        scenario = _toml(_DDP_SCHEDULE.format(warmup="6ba", to="0.1", until="end"))
        result = compare(scenario, crash_at=3, world_size=4)
        hf = outcome(result, "transformers")
        assert not hf.supported  # type: ignore[attr-defined]
        assert hf.reason.startswith("the transformers profile does not model it: ")  # type: ignore[attr-defined]
        assert outcome(result, "lightning").supported  # type: ignore[attr-defined]

    def test_a_curve_the_rerun_never_reaches_is_not_compared(self) -> None:
        """A piece ending at 12ba: the plan on 3 processes ends at step 9, so the curve cannot
        be placed on the re-run; the learning rates are not compared, with that reason, and
        the samples still are."""
        scenario = _toml(_DDP_SCHEDULE.format(warmup="2ba", to="0", until="12ba"))
        result = compare(scenario, crash_at=3, world_size=3)
        hf = outcome(result, "transformers")
        assert hf.schedule.startswith(  # type: ignore[attr-defined]
            "not compared: the schedule cannot be placed on the re-run's plan on 3 processes: "
        )
        assert hf.rates == ()  # type: ignore[attr-defined]
        assert any("reads samples" in d for d in hf.differences)  # type: ignore[attr-defined]

    @pytest.mark.parametrize("trainers", [("lightning",), ("transformers",), TRAINERS])
    def test_a_curve_the_plan_never_reaches_says_so_for_every_selection(
        self, trainers: tuple[str, ...]
    ) -> None:
        """A 1000-step warmup in a 20-step plan: the same answer whichever trainers are asked
        for (it once raised only when Hugging Face was among them)."""
        scenario = attrs.evolve(
            _scenario(FitCall(loader=A), max_duration="2ep"),
            schedule=Schedule.warmup("1000ba"),
        )
        for found in compare(scenario, trainers=trainers).trainers:
            assert found.rates == ()
            assert found.schedule.startswith("not compared: the schedule cannot be placed")

    def test_a_schedule_a_trainer_cannot_be_given_is_not_compared(self) -> None:
        """Hugging Face runs a schedule it cannot be given at a constant rate; those rates are
        the fallback's, not the trainer's scheduler's, and are not compared."""
        scenario = attrs.evolve(
            _scenario(FitCall(loader=A), max_duration="2ep"),
            schedule=Schedule.constant(0).then_linear(to="0.5", until=END),
        )
        hf = outcome(compare(scenario), "transformers")
        assert hf.schedule.startswith("cannot be written: ")  # type: ignore[attr-defined]
        assert hf.rates == ()  # type: ignore[attr-defined]
        assert hf.agrees  # type: ignore[attr-defined]

    @pytest.mark.parametrize("samples", [40_000_001, 39_999_999])
    def test_reads_past_the_data_cost_their_runs(self, samples: int) -> None:
        """Evened epochs of 40 million samples read past the data's end every epoch: the
        steps' ids are runs, not every id (this took 5 s and 1.2 GB)."""
        job = Loader.sharded(samples=samples, world_size=2, device_batch_size=5_000_000, name="j")
        result = compare(_scenario(FitCall(loader=job), max_duration="2ep"), crash_at=3)
        for trainer in ("lightning", "transformers"):
            for call in outcome(result, trainer).outcomes:  # type: ignore[attr-defined]
                assert all(isinstance(ids, range | Runs) for ids in call.batches)

    @pytest.mark.parametrize("duration", ["0ba", "0sp"])
    def test_a_call_of_no_steps_trains_none(self, duration: str) -> None:
        """Hugging Face's max_steps=0 still trains a step and Keras's steps_per_epoch=0 is
        falsy (a whole epoch): a call the plan gives no step is written as no epoch."""
        b = Loader(samples=300, batch_size=10, name="b")
        scenario = _scenario(
            FitCall(loader=A, duration="2ep"), FitCall(loader=b, duration=duration)
        )
        result = compare(scenario)
        for trainer in ("lightning", "transformers", "keras"):
            assert outcome(result, trainer).agrees, trainer  # type: ignore[attr-defined]

    def test_crash_at_must_be_a_whole_number(self) -> None:
        for value in (2.5, True, "3"):
            with pytest.raises(CompareError, match="expected a whole number of steps"):
                compare(SMALL, crash_at=value)  # type: ignore[arg-type]

    def test_no_crash_is_claimed_when_none_happened(self) -> None:
        """Composer raises for 0.5ep at step 10, before the crash step 12 is reached: the step
        count difference does not speak of a crash."""
        b = Loader(samples=300, batch_size=10, name="b")
        scenario = _scenario(FitCall(loader=A, duration="1ep"), FitCall(loader=b, duration="0.5ep"))
        composer = outcome(compare(scenario, crash_at=12), "composer")
        assert not any(o.crashed for o in composer.outcomes)  # type: ignore[attr-defined]
        assert "trains 10 steps where the plan has 25" in composer.differences  # type: ignore[attr-defined]

    def test_a_mixture_is_not_read_as_one_data_set(self) -> None:
        sources = (
            Source(name="web", samples=40, weight=1),
            Source(name="code", samples=40, weight=1),
        )
        mixed = Loader.mixing(Mixture(sources=sources), batch_size=8, name="m")
        with pytest.raises(Unsupported, match="is a mixture of sources"):
            datasets(_scenario(FitCall(loader=mixed, duration="1ep")))

    def test_steps_of_other_sizes_are_a_difference(self) -> None:
        """The same samples in the same order, in steps split elsewhere, do not agree."""
        plan = compare(_scenario(FitCall(loader=A, duration="2ba"))).plan
        data = datasets(_scenario(FitCall(loader=A, duration="2ba")))
        split = CallOutcome(steps=2, batches=(range(5), range(5, 20)), counters={})
        assert differences(plan, [split], data) == [
            "reads the planned samples in steps of other sizes"
        ]
        same = CallOutcome(steps=2, batches=(range(10), range(10, 20)), counters={})
        assert differences(plan, [same], data) == []

    def test_json_has_no_infinity(self) -> None:
        """Lightning's num_training_batches of a loader it never sized is inf: JSON has no
        number for it, so it is written as text."""
        path = ROOT / "tests" / "golden" / "two-phase-small.toml"
        command = [sys.executable, "-m", "durations", "compare", str(path), "--json"]
        text = subprocess.run(command, capture_output=True, text=True, check=True).stdout

        def refuse(constant: str) -> object:
            raise AssertionError(f"{constant} in JSON")

        json.loads(text, parse_constant=refuse)
        assert _finite(float("inf")) == "inf"


_TWO_CALLS = (FitCall(loader=A, duration="1ep", name="p"), FitCall(loader=A, duration="1ep"))


class TestShapes:
    """``shapes``: a call's part of a schedule in the terms the trainers' own schedulers take,
    or why not (each row with the reason)."""

    @pytest.mark.parametrize(
        ("schedule", "per", "expected"),
        [
            # a level each call, the second jumping to it at its first step: two constants
            (
                Schedule.constant(1, until=Landmark.call_stop("p")).then_constant(
                    value="0.5", until=END
                ),
                "call",
                [
                    ("constant", 0, Fraction(1), Fraction(1)),
                    ("constant", 0, Fraction(1, 2), Fraction(1, 2)),
                ],
            ),
            # a warmup then a cosine over the whole run, as one curve
            (
                Schedule.warmup("2ba").then_cosine(to="0.1", until=END),
                "run",
                [("cosine", 2, Fraction(1), Fraction(1, 10))],
            ),
        ],
    )
    def test_written(
        self, schedule: Schedule, per: str, expected: list[tuple[str, int, Fraction, Fraction]]
    ) -> None:
        scenario = attrs.evolve(_scenario(*_TWO_CALLS), schedule=schedule)
        found = shapes(scenario, compare(scenario, trainers=()).plan, per=per)  # type: ignore[arg-type]
        assert [(s.decay, s.warmup, s.peak, s.floor) for s in found] == expected

    @pytest.mark.parametrize(
        ("schedule", "per", "why"),
        [
            # no trainer's own scheduler rises after its warmup
            (Schedule.constant(0).then_cosine(to="0.5", until=END), "run", "rises from 0 to 1/2"),
            # a decay that ends before the run does is not one of their lengths
            (Schedule.constant(1).then_linear(to=0, until="10ba"), "run", "other steps than"),
            # two decays in one call
            (
                Schedule.constant(1)
                .then_linear(to="0.5", until="5ba")
                .then_cosine(to=0, until=END),
                "call",
                "one constant, linear or cosine decay",
            ),
        ],
    )
    def test_refused(self, schedule: Schedule, per: str, why: str) -> None:
        scenario = attrs.evolve(_scenario(*_TWO_CALLS), schedule=schedule)
        with pytest.raises(Unsupported, match=why):
            shapes(scenario, compare(scenario, trainers=()).plan, per=per)  # type: ignore[arg-type]


def test_one_process_is_said_in_the_singular() -> None:
    text = compare_text(compare(ELASTIC_DDP, crash_at=3, world_size=1, trainers=()), "s.toml")
    assert "run again on 1 process\n" in text
    assert "and on 1 process from step 3" in text


def test_a_kill_a_trainer_cannot_count_to_is_said() -> None:
    """Composer's kill counts its timestamp, which reset_time restarts: a crash after lifetime
    step 7 (the second call's second step) is never reached on it, so Composer cannot say it,
    rather than agreeing without a crash. Step 3 is before the reset: it is placed."""
    b = Loader(samples=300, batch_size=10, name="b")
    scenario = _scenario(
        FitCall(loader=A, duration="5ba"), FitCall(loader=b, duration="5ba", reset_time=True)
    )
    late = outcome(compare(scenario, crash_at=7), "composer")
    assert late.reason == (  # type: ignore[attr-defined]
        "the kill after step 7 cannot be placed: the trainer's step counter is not the script's "
        "lifetime step here (it restarts with reset_time)"
    )
    early = outcome(compare(scenario, crash_at=3), "composer")
    assert any(o.crashed for o in early.outcomes)  # type: ignore[attr-defined]
