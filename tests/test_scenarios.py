"""The six acceptance scenarios of the planner (docs/semantics.md, "The six scenarios")."""

from __future__ import annotations

import attrs
import pytest

from durations import (
    Action,
    Checkpoint,
    DataPolicy,
    FitCall,
    Loader,
    Progress,
    RunConfig,
    Time,
    Unit,
    plan,
)

PRETRAIN = Loader(samples=1_000, batch_size=32, tokens_per_sample=16, name="pretrain")
CURATED = Loader(samples=200, batch_size=8, tokens_per_sample=16, name="curated")
TWO_PHASE = (FitCall(loader=PRETRAIN), FitCall(loader=CURATED, duration="0.1ep"))
TWO_PHASE_CONFIG = RunConfig(max_duration="2ep")


class TestScenario1TwoPhases:
    """2 epochs on a large loader then 0.1 epoch on a curated one, crashing anywhere, any number
    of times, re-run as the same script: the run trains exactly what the uninterrupted run does."""

    def test_uninterrupted(self) -> None:
        """2 epochs of 32 steps, then 20 curated samples: 3 steps of 8 (24 samples)."""
        p = plan(TWO_PHASE_CONFIG, TWO_PHASE)
        assert [s.steps for s in p.segments] == [64, 3]
        assert (p.stop.epoch, p.stop.sample_in_epoch) == (2, 24)
        assert p.stop.token == (2_000 + 24) * 16

    @pytest.mark.parametrize("crash", range(68))
    def test_every_crash_point(self, crash: int) -> None:
        """From the checkpoint at each step, the script ends where the uninterrupted run does."""
        p = plan(TWO_PHASE_CONFIG, TWO_PHASE)
        resumed = plan(TWO_PHASE_CONFIG, TWO_PHASE, p.checkpoint_at(crash))
        assert resumed.stop == p.stop
        assert resumed.total_steps == p.total_steps - crash

    def test_crash_every_step(self) -> None:
        """Crashing after every single step, 67 times in a row, still ends at the same place."""
        p = plan(TWO_PHASE_CONFIG, TWO_PHASE)
        current = p
        for _ in range(p.total_steps):
            current = plan(TWO_PHASE_CONFIG, TWO_PHASE, current.checkpoint_at(1))
        assert current.stop == p.stop
        assert current.total_steps == 0


class TestScenario2TwelveOfFifteen:
    """A checkpoint at 10ba, max_duration=15ba, a fit asking for 12ba: both readings are
    expressible, and neither is a silent default."""

    loader = Loader(samples=100, batch_size=1)
    at_10 = Checkpoint(progress=Progress().advance(loader, 10), loader_state=True)
    config = RunConfig(max_duration="15ba", resume="extend")

    @pytest.mark.parametrize(
        ("call", "steps", "stop", "codes"),
        [
            ({"duration": "12ba"}, 12, 22, []),  # "12 more"
            ({"until": "12ba"}, 2, 12, []),  # "until 12"
            ({"until": "8ba"}, 0, 10, ["target-already-reached"]),  # already passed
            ({}, 5, 15, []),  # neither: the configured max_duration
        ],
    )
    def test_readings(self, call: dict[str, str], steps: int, stop: int, codes: list[str]) -> None:
        """Each reading plans the steps it says."""
        p = plan(self.config, [FitCall(loader=self.loader, **call)], self.at_10)  # type: ignore[arg-type]
        assert (p.total_steps, p.stop.batch) == (steps, stop)
        assert [d.code for d in p.diagnostics] == codes

    def test_duration_is_not_added_again_on_autoresume(self) -> None:
        """Autoresume of the 12-more run from its own checkpoints never goes past 22ba."""
        config = attrs.evolve(self.config, resume="continue")
        first = plan(self.config, [FitCall(loader=self.loader, duration="12ba")], self.at_10)
        for k in range(first.total_steps + 1):
            again = plan(
                config, [FitCall(loader=self.loader, duration="12ba")], first.checkpoint_at(k)
            )
            assert again.stop.batch == 22


class TestScenario3ResetTime:
    """reset_time restarts the run clock; autoresume does not apply it again; lifetime totals are
    never lost."""

    a = Loader(samples=100, batch_size=10, name="a")
    b = Loader(samples=60, batch_size=10, name="b")
    script = (FitCall(loader=a, until="10ba"), FitCall(loader=b, until="5ba", reset_time=True))

    def test_clock_and_totals(self) -> None:
        """The second call measures 5ba from step 10; lifetime totals reach 15."""
        p = plan(RunConfig(), self.script)
        second = p.segments[1]
        assert second.origin.batch == 10
        assert (second.steps, p.stop.batch, p.stop.sample) == (5, 15, 150)

    @pytest.mark.parametrize("crash", [10, 11, 12, 14, 15])
    def test_not_applied_twice(self, crash: int) -> None:
        """Resumed inside or after the reset call, the clock stays where the reset put it."""
        p = plan(RunConfig(), self.script)
        again = plan(RunConfig(), self.script, p.checkpoint_at(crash))
        assert again.stop.batch == 15
        assert all(s.origin.batch == 10 for s in again.segments[1:])
        assert "clock-reset" not in [d.code for d in again.diagnostics] or crash == 10


class TestScenario4MidEpoch:
    """A mid-epoch checkpoint resumed exactly, by replaying the epoch, or at the next epoch; the
    plan says which samples are replayed or skipped."""

    loader = Loader(samples=100, batch_size=10)
    config = RunConfig(max_duration="3ep")

    @pytest.mark.parametrize(
        ("policy", "steps", "replayed", "skipped", "code"),
        [
            (DataPolicy.EXACT, 17, None, None, None),  # the rest of epoch 1, then epoch 2
            (
                DataPolicy.REPLAY_EPOCH,
                20,
                (1, 0, 30),
                None,
                "data-replayed",
            ),  # all of epoch 1 again
            (DataPolicy.NEXT_EPOCH, 10, None, (1, 30, 100), "data-skipped"),  # epoch 2 only
        ],
    )
    def test_policies(
        self,
        policy: DataPolicy,
        steps: int,
        replayed: tuple[int, int, int] | None,
        skipped: tuple[int, int, int] | None,
        code: str | None,
    ) -> None:
        """Step 13 is 30 samples into epoch 1; each policy reports exactly what it does."""
        at = plan(self.config, [FitCall(loader=self.loader)]).checkpoint_at(13)
        p = plan(attrs.evolve(self.config, data=policy), [FitCall(loader=self.loader)], at)
        s = p.segments[0]
        assert s.steps == steps
        assert (None if s.replayed is None else attrs.astuple(s.replayed)) == replayed
        assert (None if s.skipped is None else attrs.astuple(s.skipped)) == skipped
        assert [d.code for d in p.diagnostics] == ([code] if code else [])
        assert p.stop.epoch == 3

    def test_exact_without_loader_state_warns(self) -> None:
        """A checkpoint that saved no loader state can resume exactly only if the loader skips."""
        at = attrs.evolve(
            plan(self.config, [FitCall(loader=self.loader)]).checkpoint_at(13), loader_state=False
        )
        p = plan(self.config, [FitCall(loader=self.loader)], at)
        assert [d.code for d in p.diagnostics] == ["mid-epoch-no-loader-state"]
        assert p.total_steps == 17


class TestScenario5ElasticResume:
    """The batch size differs at resume: the data position is kept in samples, sp/tok/ep targets
    keep their meaning, and a ba target is flagged."""

    loader = Loader(samples=100, batch_size=10, tokens_per_sample=4)

    @pytest.mark.parametrize(
        ("target", "steps", "samples"),
        [
            ("2ep", 4, 200),  # 70 samples left in epoch 1: 20 + 20 + 20 + 10
            ("200sp", 4, 200),
            ("800tok", 4, 200),
            ("195sp", 4, 200),  # overshoot under one new batch: 195 is reached at 200
            ("190sp", 3, 190),  # 130 + 3 * 20 lands exactly on the target
            ("20ba", 7, 260),  # a count of steps: now 20 samples each (flagged)
        ],
    )
    def test_doubled(self, target: str, steps: int, samples: int) -> None:
        """Resumed at step 13 with twice the batch size."""
        config = RunConfig(max_duration=target)
        at = plan(config, [FitCall(loader=self.loader)]).checkpoint_at(13)
        p = plan(config, [FitCall(loader=self.loader.with_batch_size(20))], at)
        assert (p.total_steps, p.stop.sample) == (steps, samples)
        codes = [d.code for d in p.diagnostics]
        assert ("ba-target-batch-size-changed" in codes) == target.endswith("ba")
        assert "batch-size-changed" in codes


class TestScenario6FinishedRerun:
    """Re-running a finished script plans 0 steps and says the run is complete."""

    def test_rerun(self) -> None:
        """The final checkpoint of the two-phase run."""
        p = plan(TWO_PHASE_CONFIG, TWO_PHASE)
        again = plan(TWO_PHASE_CONFIG, TWO_PHASE, p.checkpoint_at(p.total_steps))
        assert again.total_steps == 0
        assert [s.action for s in again.segments] == [Action.SKIP, Action.SKIP]
        assert [d.code for d in again.diagnostics] == ["run-complete"]
        assert again.complete


class TestComposerOvershoot:
    """1000sp then +1000sp at 32 per step ends at 2016 here (2048 in Composer)."""

    def test_two_relative_calls(self) -> None:
        """Anchoring on the previous target keeps the overshoot from leaking."""
        loader = Loader(samples=10_000, batch_size=32)
        p = plan(
            RunConfig(),
            [FitCall(loader=loader, duration="1000sp"), FitCall(loader=loader, duration="1000sp")],
        )
        assert p.stop.sample == 2016
        assert p.segments[1].target == Time(2000, Unit.SP)
