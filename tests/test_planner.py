"""Planner rules by example: diagnostics, plan queries, and edge cases (docs/semantics.md)."""

from __future__ import annotations

import attrs
import pytest

from durations import (
    Action,
    Checkpoint,
    FitCall,
    FitCallError,
    Loader,
    Progress,
    RunConfig,
    Severity,
    Time,
    Unit,
    plan,
)

A = Loader(samples=100, batch_size=10, name="a", tokens_per_sample=2)
B = Loader(samples=60, batch_size=10, name="b", tokens_per_sample=2)
VARIABLE = Loader(samples=100, batch_size=10, name="text")  # tokens per sample unknown


def codes(p: object) -> list[str]:
    return [d.code for d in p.diagnostics]  # type: ignore[attr-defined]


class TestDiagnostics:
    """Each diagnostic code is raised where semantics.md says, with its severity."""

    def test_no_duration(self) -> None:
        """Rule 1: neither duration, until nor max_duration is an error, and the call trains 0."""
        p = plan(RunConfig(), [FitCall(loader=A)])
        assert codes(p) == ["no-duration"]
        assert p.diagnostics[0].severity is Severity.ERROR
        assert not p.ok
        assert p.total_steps == 0
        assert "give one of them" in p.diagnostics[0].message

    def test_dur_without_max_duration(self) -> None:
        """Rule 6: dur needs max_duration."""
        p = plan(RunConfig(), [FitCall(loader=A, duration="0.5dur")])
        assert codes(p) == ["no-duration"]
        assert "dur is a fraction of max_duration" in p.diagnostics[0].message

    def test_epochs_of_a_stream(self) -> None:
        """An epoch target on a stream of unknown length cannot be converted."""
        stream = Loader(samples=None, batch_size=4)
        p = plan(RunConfig(), [FitCall(loader=stream, until="1ep")])
        assert codes(p) == ["cannot-convert"]

    def test_token_stop_at_runtime(self) -> None:
        """Rule 13: tokens of unknown length give a bounded stop decided at run time."""
        p = plan(RunConfig(), [FitCall(loader=VARIABLE, duration="25tok")])
        segment = p.segments[0]
        assert segment.stop_at_runtime
        assert segment.steps == 3  # at most 25 samples: ceil(25 / 10)
        assert codes(p) == ["token-stop-at-runtime"]
        measured = Progress(
            batch=1, sample=10, token=30, batch_in_epoch=1, sample_in_epoch=10, token_in_epoch=30
        )
        assert segment.should_stop(measured)  # 30 measured tokens >= 25

    def test_runtime_token_target_after_unknown_tokens(self) -> None:
        """Rule 13: an absolute token target after tokens of unknown count cannot be placed."""
        p = plan(
            RunConfig(),
            [FitCall(loader=VARIABLE, duration="1ep"), FitCall(loader=VARIABLE, until="10tok")],
        )
        assert codes(p) == ["tokens-unknown"]
        assert "cannot be placed" in p.diagnostics[0].message

    def test_runtime_token_target_already_reached(self) -> None:
        """Rule 13 with rule 2: measured tokens already past the target train 0 steps."""
        start = Progress(
            batch=5, sample=50, token=400, batch_in_epoch=5, sample_in_epoch=50, token_in_epoch=400
        )
        p = plan(
            RunConfig(resume="extend"),
            [FitCall(loader=VARIABLE, until="300tok")],
            Checkpoint(progress=start, loader_state=True),
        )
        assert p.total_steps == 0
        assert codes(p) == ["target-already-reached"]

    def test_tokens_unknown(self) -> None:
        """Rule 13: after unknown tokens, a token target cannot be placed at all."""
        p = plan(
            RunConfig(),
            [FitCall(loader=VARIABLE, duration="1ep"), FitCall(loader=A, duration="10tok")],
        )
        assert codes(p) == ["tokens-unknown"]

    def test_epoch_abandoned(self) -> None:
        """Rule 4: moving to another stream mid-epoch abandons the rest, and says so."""
        p = plan(RunConfig(), [FitCall(loader=A, until="13ba"), FitCall(loader=B, duration="1ep")])
        assert codes(p) == ["epoch-abandoned"]
        assert "samples 30-99 of epoch 1" in p.diagnostics[0].message

    def test_same_stream_goes_on(self) -> None:
        """Rule 4: the same stream at another batch size continues inside the epoch."""
        p = plan(
            RunConfig(),
            [
                FitCall(loader=A, until="13ba"),
                FitCall(loader=A.with_batch_size(20), duration="1ep"),
            ],
        )
        assert p.segments[1].start.sample_in_epoch == 30
        assert p.segments[1].abandoned is None

    def test_script_changed_finished_call(self) -> None:
        """Rule 14: a finished call that changed is reported and not run again."""
        script = [FitCall(loader=A, duration="1ep"), FitCall(loader=B, duration="1ep")]
        at = plan(RunConfig(), script).checkpoint_at(12)
        changed = [FitCall(loader=A, duration="2ep"), script[1]]
        p = plan(RunConfig(), changed, at)
        assert codes(p) == ["script-changed"]
        assert "duration 1ep -> 2ep" in p.diagnostics[0].message
        assert p.segments[0].action is Action.SKIP

    def test_script_changed_started_call_keeps_target(self) -> None:
        """Rule 14: a started call that changed keeps the target stored when it started."""
        script = [FitCall(loader=A, duration="1ep")]
        at = plan(RunConfig(), script).checkpoint_at(4)
        p = plan(RunConfig(), [FitCall(loader=A, duration="3ep")], at)
        assert codes(p) == ["script-changed"]
        assert p.stop.batch == 10

    def test_loader_changed(self) -> None:
        """Rule 14: a started call resumed on another stream starts a new epoch of it."""
        at = plan(RunConfig(), [FitCall(loader=A, duration="1ep")]).checkpoint_at(4)
        p = plan(RunConfig(), [FitCall(loader=B, duration="1ep")], at)
        assert "loader-changed" in codes(p)
        assert p.segments[0].start.sample_in_epoch == 0
        assert p.segments[0].abandoned is not None

    def test_removed_call_is_kept(self) -> None:
        """Rule 14: ledger entries of calls the script no longer makes stay in the ledger."""
        script = [
            FitCall(loader=A, duration="1ep", name="warmup"),
            FitCall(loader=B, duration="1ep"),
        ]
        at = plan(RunConfig(), script).checkpoint_at(12)
        p = plan(RunConfig(), [FitCall(loader=B, duration="1ep", name="main")], at)
        assert "script-changed" in codes(p)
        names = [e.name for e in p.checkpoint_at(0).ledger or ()]
        assert "warmup" in names

    def test_target_rounded_says_where(self) -> None:
        """Rule 2: a target inside a step says where the call really stops."""
        p = plan(RunConfig(), [FitCall(loader=A, duration="15sp")])
        assert codes(p) == ["target-rounded"]
        assert p.diagnostics[0].message.endswith("20sp")


class TestQueries:
    """Plan queries: should_stop, segment_at, progress_at, resolve, checkpoint_at."""

    two = plan(
        RunConfig(max_duration="2ep"), [FitCall(loader=A), FitCall(loader=B, duration="0.5ep")]
    )

    def test_should_stop(self) -> None:
        """The plan's stop is a step count: O(1) to check in a training loop."""
        assert not self.two.should_stop(self.two.progress_at(22))
        assert self.two.should_stop(self.two.progress_at(23))
        assert self.two.segments[0].should_stop(self.two.progress_at(20))

    def test_segment_at(self) -> None:
        """Step k is run by the call whose steps include it."""
        assert self.two.segment_at(0) is None
        assert [self.two.segment_at(k).name for k in (1, 20, 21, 23)] == ["#0", "#0", "#1", "#1"]  # type: ignore[union-attr]

    def test_resolve(self) -> None:
        """resolve finds the first plan step at which a time is reached, in any unit."""
        assert self.two.resolve(Time.parse("1ep")) == 10
        assert self.two.resolve(Time.parse("0.5dur")) == 10
        assert self.two.resolve(Time.parse("2.5ep")) == 23
        assert self.two.resolve(Time.parse("3ep")) is None
        assert self.two.resolve(Time.parse("100sp")) == 10

    def test_bad_step(self) -> None:
        """Steps outside the plan are refused with the valid range."""
        with pytest.raises(FitCallError, match="expected a whole number from 0 to 23"):
            self.two.checkpoint_at(24)

    def test_checkpoint_ledger(self) -> None:
        """A started call is unfinished in the ledger; a done one is finished with its stop."""
        ledger = self.two.checkpoint_at(21).ledger
        assert ledger is not None
        assert [(e.name, e.finished) for e in ledger] == [("#0", True), ("#1", False)]
        assert ledger[1].target == Time.parse("2.5ep")


class TestModes:
    """Rule 9: the three resume modes."""

    def test_extend_anchors_on_last_target(self) -> None:
        """extend: a new relative call in the same unit measures from the last stored target."""
        first = plan(
            RunConfig(), [FitCall(loader=Loader(samples=1000, batch_size=32), duration="100sp")]
        )
        at = first.checkpoint_at(first.total_steps)
        more = plan(
            RunConfig(resume="extend"),
            [FitCall(loader=Loader(samples=1000, batch_size=32), duration="100sp")],
            at,
        )
        assert more.stop.sample == 224  # 200sp is reached at 7 * 32, not 128 + 100 -> 256

    def test_extend_does_not_anchor_on_an_interrupted_call(self) -> None:
        """extend: a call interrupted before its target anchors nothing; "12 more" from 10ba of a
        15ba run ends at 22ba, not at 27ba."""
        loader = Loader(samples=1000, batch_size=10)
        at_10 = plan(RunConfig(max_duration="15ba"), [FitCall(loader=loader)]).checkpoint_at(10)
        assert at_10.ledger is not None
        assert not at_10.ledger[0].finished
        more = plan(RunConfig(resume="extend"), [FitCall(loader=loader, duration="12ba")], at_10)
        assert more.stop.batch == 22

    def test_weights_fresh_clock(self) -> None:
        """weights: totals kept, the clock and the data start afresh."""
        at = plan(RunConfig(), [FitCall(loader=A, until="13ba")]).checkpoint_at(13)
        p = plan(RunConfig(max_duration="1ep", resume="weights"), [FitCall(loader=A)], at)
        assert codes(p) == ["fresh-clock", "epoch-abandoned"]
        assert (p.total_steps, p.stop.batch, p.stop.epoch) == (10, 23, 3)

    def test_foreign_checkpoint_past_the_end(self) -> None:
        """A ledger-less checkpoint past the script's end is complete."""
        foreign = Checkpoint(progress=Progress().advance(A, 30))
        p = plan(RunConfig(max_duration="2ep"), [FitCall(loader=A)], foreign)
        assert codes(p) == ["checkpoint-located", "run-complete"]
        assert p.total_steps == 0


def test_diagnostic_str() -> None:
    """A diagnostic prints its severity, code, call and message."""
    p = plan(RunConfig(), [FitCall(loader=A)])
    assert str(p.diagnostics[0]).startswith("error: no-duration [#0]: no duration anywhere")


def test_unknown_diagnostic_code() -> None:
    """Codes are a closed catalogue."""
    from durations import Diagnostic

    with pytest.raises(ValueError, match="unknown diagnostic code 'made-up'"):
        Diagnostic(code="made-up", message="x")


def test_plan_is_immutable() -> None:
    """A plan cannot be changed after it is made."""
    p = plan(RunConfig(), [FitCall(loader=A, duration="1ep")])
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        p.stop = Progress()  # type: ignore[misc]
    assert p.segments[0].target.unit is Unit.EP


# (the call that cannot be planned, why it starts a new epoch)
FAILED_NEW_EPOCH = [
    (FitCall(loader=Loader(samples=3, batch_size=2, name="a"), reset_time=True), "reset_time"),
    (FitCall(loader=Loader(samples=3, batch_size=2, name="b")), "another stream"),
]


class TestRegressions:
    """Cases a review found; each names the rule it pins."""

    def test_finished_call_hands_over_the_stream_it_read(self) -> None:
        """Rule 4: a finished call whose loader changed in the script still owns the data
        position it left; the next call on another stream abandons that epoch."""
        a = Loader(samples=100, batch_size=10, name="a")
        b = Loader(samples=100, batch_size=10, name="b")
        at = plan(
            RunConfig(), [FitCall(loader=a, until="13ba"), FitCall(loader=b, duration="5ba")]
        ).checkpoint_at(13)
        changed = [FitCall(loader=b, until="13ba"), FitCall(loader=b, duration="5ba")]
        second = plan(RunConfig(), changed, at).segments[1]
        assert second.start.sample_in_epoch == 0
        assert str(second.abandoned) == "samples 30-99 of epoch 1"

    def test_a_call_that_cannot_be_planned_stays_out_of_the_ledger(self) -> None:
        """Rule 14: an error keeps the call out of the ledger, so the plan keeps saying so,
        and a corrected configuration plans the call later."""
        calls = [
            FitCall(loader=A, duration="5ba"),
            FitCall(loader=A),
            FitCall(loader=A, duration="5ba"),
        ]
        first = plan(RunConfig(), calls)
        at = first.checkpoint_at(5)
        assert [e.name for e in at.ledger or ()] == ["#0"]
        again = plan(RunConfig(), calls, at)
        assert codes(again) == ["no-duration"]
        assert again.stop == first.stop
        fixed = plan(RunConfig(max_duration="2ep"), calls, at)
        assert [s.steps for s in fixed.segments] == [0, 15, 5]

    @pytest.mark.parametrize(("failing", "why"), FAILED_NEW_EPOCH)
    def test_a_call_that_cannot_be_planned_still_says_the_epoch_it_abandons(
        self, failing: FitCall, why: str
    ) -> None:
        """Rules 4 and 14: a call that cannot be planned (no duration anywhere) still moves the
        data position to a new epoch, and the calls after it start there; the rest of the
        epoch it leaves is reported as for any call, in the segment and as epoch-abandoned."""
        a = Loader(samples=3, batch_size=2, name="a")
        p = plan(
            RunConfig(),
            [FitCall(loader=a, until="1ba"), failing, FitCall(loader=a, duration="1ba")],
        )
        failed = p.segments[1]
        assert failed.failed, why
        assert str(failed.abandoned) == "sample 2 of epoch 0", why
        assert "epoch-abandoned" in [d.code for d in failed.diagnostics], why
        assert p.segments[2].start.epoch == 1, why

    def test_a_stale_target_is_no_anchor(self) -> None:
        """Rule 3: a call whose target was already passed anchors nothing; the next relative
        call is measured from where it starts."""
        loader = Loader(samples=100, batch_size=10, name="c")
        calls = [
            FitCall(loader=loader, until="10ba"),
            FitCall(loader=loader, until="5ba"),
            FitCall(loader=loader, duration="3ba"),
        ]
        assert [s.steps for s in plan(RunConfig(), calls).segments] == [10, 0, 3]

    def test_zero_durations_keep_the_anchor(self) -> None:
        """Rule 3: a zero-length relative call in between does not break exact addition."""
        loader = Loader(samples=10_000, batch_size=32, name="c")
        calls = [FitCall(loader=loader, duration=t) for t in ("1000sp", "0sp", "1000sp")]
        assert plan(RunConfig(), calls).stop.sample == 2016

    def test_abandoned_epoch_of_a_longer_stream(self) -> None:
        """Rule 4: the rest of the previous stream's epoch is reported even when the new
        stream is shorter than the position."""
        a = Loader(samples=100, batch_size=20, name="a")
        b = Loader(samples=50, batch_size=10, name="b")
        p = plan(RunConfig(), [FitCall(loader=a, until="3ba"), FitCall(loader=b, duration="1ep")])
        assert str(p.segments[1].abandoned) == "samples 60-99 of epoch 0"

    def test_relative_dur_rounds_per_call(self) -> None:
        """Rule 6: each dur duration is resolved, and rounded up to a whole unit, on its own:
        two halves of 15ba are 8ba each."""
        config = RunConfig(max_duration="15ba")
        halves = plan(config, [FitCall(loader=A, duration="0.5dur")] * 2)
        assert halves.total_steps == 16
        assert plan(config, [FitCall(loader=A, duration="1dur")]).total_steps == 15

    def test_empty_script_is_not_complete(self) -> None:
        """Rule 15: a script with no calls has nothing to finish; no run-complete."""
        at = plan(RunConfig(max_duration="1ep"), [FitCall(loader=A)]).checkpoint_at(3)
        assert codes(plan(RunConfig(), [], at)) == ["script-changed"]
