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
    Plan,
    Progress,
    ResumeMode,
    RunConfig,
    Severity,
    Time,
    Unit,
    plan,
)
from durations.checkpoint import TakenUp

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
        assert _said(p) == [
            (
                "cannot-convert",
                "#0",
                "cannot convert 1ep to steps: the loader is a stream of unknown length "
                "(samples=None), so it has no epochs; give the loader's samples per epoch, or use "
                "ba, sp or tok",
            )
        ]

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

    @pytest.mark.parametrize(
        ("duration", "steps", "stop"),
        [
            ("15sp", 2, "20sp"),  # inside the second step of 10 samples
            ("5sp", 1, "10sp"),  # inside the first: one step is rounded too
        ],
    )
    def test_target_rounded_says_where(self, duration: str, steps: int, stop: str) -> None:
        """Rule 2: a target inside a step says where the call really stops."""
        p = plan(RunConfig(), [FitCall(loader=A, duration=duration)])
        assert codes(p) == ["target-rounded"]
        assert p.total_steps == steps
        assert p.diagnostics[0].message == (
            f"the target {duration} on the run clock falls inside a step: the call stops at the "
            f"first step boundary past it, {stop}"
        )


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
        # The lifetime step is kept (13); abandoning the rest of epoch 1 takes no step.
        assert p.diagnostics[0].message == (
            "weights only: a fresh run clock starts at lifetime step 13"
        )
        assert (p.total_steps, p.stop.batch, p.stop.epoch) == (10, 23, 3)

    @pytest.mark.parametrize(
        ("step", "first", "rest"),
        [
            # 10 steps of 10 an epoch of a: step 13 is sample 30 of epoch 1
            (13, 30, "samples 30-99 of epoch 1"),
            # sample 70: past b's 60 samples, which must not close a's epoch silently
            (17, 70, "samples 70-99 of epoch 1"),
        ],
    )
    def test_weights_abandons_the_epoch_of_the_loader_that_read_it(
        self, step: int, first: int, rest: str
    ) -> None:
        """weights on another loader (rules 4 and 9): the rest of the epoch the checkpoint left
        is measured on the loader that read it, a (100 samples), which its ledger names, not on
        the new call's b (60 samples)."""
        at = plan(RunConfig(), [FitCall(loader=A, until=f"{step}ba")]).checkpoint_at(step)
        p = plan(RunConfig(max_duration="1ep", resume="weights"), [FitCall(loader=B)], at)
        assert codes(p) == ["fresh-clock", "epoch-abandoned"]
        assert p.diagnostics[1].message == (
            f"call '#0' starts a new epoch: the rest of the previous epoch ({rest}) is not read"
        )
        abandoned = p.segments[0].abandoned
        assert abandoned is not None
        assert (abandoned.epoch, abandoned.start, abandoned.stop) == (1, first, 100)
        # b's epoch starts at epoch 2, sample 0, and the one epoch of b is 6 steps.
        assert (p.total_steps, p.stop.epoch, p.stop.sample_in_epoch) == (6, 3, 0)

    def test_weights_from_a_checkpoint_without_a_ledger(self) -> None:
        """weights from a checkpoint without a ledger (rule 9): which loader read the data is
        not known, so the rest of its epoch is measured on the first call's loader: at sample
        30 of epoch 1, b's samples 30-59."""
        at = Checkpoint(progress=Progress().advance(A, 13))
        p = plan(RunConfig(max_duration="1ep", resume="weights"), [FitCall(loader=B)], at)
        assert codes(p) == ["fresh-clock", "epoch-abandoned"]
        assert str(p.segments[0].abandoned) == "samples 30-59 of epoch 1"
        assert (p.total_steps, p.stop.epoch) == (6, 3)

    def test_extend_keeps_the_clock_of_a_reset(self) -> None:
        """extend keeps the run clock (rule 9), and so the origin a reset_time set (rule 7):
        after 10ba, then 5ba on a clock restarted at lifetime 10, "until 8ba" is lifetime 18."""
        script = [FitCall(loader=A, until="10ba"), FitCall(loader=A, until="5ba", reset_time=True)]
        done = plan(RunConfig(), script)
        at_end = done.checkpoint_at(done.total_steps)
        more = plan(RunConfig(resume="extend"), [FitCall(loader=A, until="8ba")], at_end)
        assert (more.total_steps, more.stop.batch) == (3, 18)
        assert more.segments[0].origin.batch == 10

    def test_extend_ignores_an_anchor_recorded_on_an_interrupted_call(self) -> None:
        """extend: an interrupted call anchors nothing (rule 3), even when its ledger entry
        carries an anchor (a hand-written checkpoint; the format reads one on any entry): "12
        more" from 10ba is 22ba, not 15ba + 12."""
        loader = Loader(samples=1000, batch_size=10)
        at_10 = plan(RunConfig(max_duration="15ba"), [FitCall(loader=loader)]).checkpoint_at(10)
        assert at_10.ledger is not None
        forged = attrs.evolve(at_10.ledger[0], anchor=Time.parse("15ba"))
        at = Checkpoint.from_dict(attrs.evolve(at_10, ledger=(forged,)).to_dict())
        assert at.ledger is not None
        assert (at.ledger[0].finished, at.ledger[0].anchor) == (False, Time.parse("15ba"))
        more = plan(RunConfig(resume="extend"), [FitCall(loader=loader, duration="12ba")], at)
        assert more.stop.batch == 22

    def test_an_extension_run_again_continues_its_ledger(self) -> None:
        """extend, run again (rule 9): killed after 2 of its 6 steps, the same extend script
        resumes its call to the target stored when it started, and says why; run once more from
        its end, it is complete. Before, it added its 1ep again from where the kill left it."""
        done = plan(RunConfig(), [FitCall(loader=A, until="10ba")]).checkpoint_at(10)
        more = [FitCall(loader=B, duration="1ep", name="more")]
        extend = RunConfig(resume="extend")
        extended = plan(extend, more, done)
        killed = extended.checkpoint_at(2)
        assert killed.taken_up == TakenUp(ResumeMode.EXTEND, 10)
        again = plan(extend, more, killed)
        assert [(s.action, s.steps) for s in again.segments] == [(Action.RESUME, 4)]
        assert again.stop == extended.stop
        assert codes(again) == ["ledger-continued"]
        assert again.diagnostics[0].message == (
            "the checkpoint's ledger is this script's, which took the run up under extend at "
            "lifetime step 10: it is continued (finished calls skip, the started one resumes "
            "to its stored target), not taken up again"
        )
        final = plan(extend, more, again.checkpoint_at(again.total_steps))
        assert (final.total_steps, codes(final)) == (0, ["ledger-continued", "run-complete"])

    @pytest.mark.parametrize(
        ("mode", "calls", "steps", "taken_at"),
        [
            # another extension, on an extended run: none of its calls is in the ledger
            ("extend", [FitCall(loader=B, duration="1ep", name="other")], 6, 16),
            # the same call under another mode: weights take the run up anew
            ("weights", [FitCall(loader=B, duration="1ep", name="more")], 6, 16),
            # the extension run again under continue keeps the record it found
            ("continue", [FitCall(loader=B, duration="1ep", name="more")], 0, 10),
        ],
    )
    def test_what_an_extended_ledger_is_taken_up_as(
        self, mode: str, calls: list[FitCall], steps: int, taken_at: int
    ) -> None:
        """From the final checkpoint of an extension (6 steps from lifetime 10): only the same
        script in the same mode continues its ledger; any other takes the run up anew at 16, and
        continue keeps the record so an extend re-run later still continues it."""
        done = plan(RunConfig(), [FitCall(loader=A, until="10ba")]).checkpoint_at(10)
        more = [FitCall(loader=B, duration="1ep", name="more")]
        extended = plan(RunConfig(resume="extend"), more, done)
        final = extended.checkpoint_at(extended.total_steps)
        p = plan(RunConfig(resume=mode), calls, final)
        assert p.total_steps == steps
        taken = p.checkpoint_at(0).taken_up
        assert taken is not None
        assert taken.step == taken_at
        assert "ledger-continued" not in codes(p)

    def test_a_weights_run_again_continues_its_ledger(self) -> None:
        """weights, run again (rule 9): a fine-tune from pretrained weights, killed after 3
        steps, continues on its own clock instead of starting a fresh one a second time."""
        at = plan(RunConfig(), [FitCall(loader=A, until="13ba")]).checkpoint_at(13)
        weights = RunConfig(max_duration="1ep", resume="weights")
        tune = plan(weights, [FitCall(loader=B, name="tune")], at)
        again = plan(weights, [FitCall(loader=B, name="tune")], tune.checkpoint_at(3))
        assert [(s.action, s.steps) for s in again.segments] == [(Action.RESUME, 3)]
        assert (again.stop, codes(again)) == (tune.stop, ["ledger-continued"])

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


def test_plan_keeps_its_script() -> None:
    """A plan keeps the calls it was made from, as a tuple, and the checkpoint."""
    script = [FitCall(loader=A, duration="1ep"), FitCall(loader=B, duration="1ep")]
    p = plan(RunConfig(), script)
    assert p.calls == tuple(script)
    assert p.checkpoint is None
    at = p.checkpoint_at(3)
    assert plan(RunConfig(), iter(script), at).calls == tuple(script)


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
    (  # another stream, and a token target whose stop would be found at run time, but the
        # token count is already unknown (a reads no tokens_per_sample): tokens-unknown
        FitCall(loader=Loader(samples=3, batch_size=2, name="c"), until="1tok"),
        "another stream, tokens unknown",
    ),
    (  # another stream, of unknown length: an epoch target cannot be converted
        FitCall(loader=Loader(samples=None, batch_size=2, name="s"), until="1ep"),
        "another stream, epochs of a stream",
    ),
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
        assert (failed.index, failed.name, failed.steps) == (1, "#1", 0), why
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

    def test_one_step_past_the_target_anchors(self) -> None:
        """Rule 3: a call that trained one step, past its target inside that step, anchors on
        its target: 5sp then 5sp more stop where 10sp does, at the first step (10 samples)."""
        split = plan(RunConfig(), [FitCall(loader=A, duration="5sp")] * 2)
        assert [s.steps for s in split.segments] == [1, 0]
        assert split.stop == plan(RunConfig(), [FitCall(loader=A, duration="10sp")]).stop
        ledger = split.checkpoint_at(1).ledger
        assert ledger is not None
        assert ledger[0].anchor == Time.parse("5sp")

    def test_reset_time_abandons_the_epoch_of_the_loader_that_read_it(self) -> None:
        """Rules 4 and 7: a reset_time on another stream starts a new epoch; the rest of the
        epoch left is the previous loader's (a: samples 30-99 of its 100), not the new one's
        (b has 60); the clock restarts at lifetime step 13."""
        p = plan(
            RunConfig(),
            [FitCall(loader=A, until="13ba"), FitCall(loader=B, until="1ep", reset_time=True)],
        )
        assert _said(p) == [
            ("clock-reset", "#1", "the run clock restarts at step 13"),
            (
                "epoch-abandoned",
                "#1",
                "call '#1' starts a new epoch: the rest of the previous epoch (samples 30-99 of "
                "epoch 1) is not read",
            ),
        ]
        assert str(p.segments[1].abandoned) == "samples 30-99 of epoch 1"

    def test_a_started_call_with_nothing_left_completes_the_run(self) -> None:
        """Rules 11 and 15: a call stopped at 15 of the 16 steps to 1.55ep, resumed under
        next_epoch, goes on at epoch 2, past its target: it resumes with 0 steps, is not said
        to be rounded (it trained nothing), and the run is complete at step 15."""
        script = [FitCall(loader=A, until="1.55ep")]
        at_15 = plan(RunConfig(), script).checkpoint_at(15)
        p = plan(RunConfig(data="next_epoch"), script, at_15)
        assert [(s.action, s.steps, s.failed) for s in p.segments] == [(Action.RESUME, 0, False)]
        assert _said(p) == [
            (
                "data-skipped",
                "#0",
                "the checkpoint is 50 samples into epoch 1; training goes on from the next "
                "epoch: samples 50-99 of epoch 1 are never read",
            ),
            ("run-complete", None, "nothing left to train: the run is complete at step 15"),
        ]

    def test_empty_script_is_not_complete(self) -> None:
        """Rule 15: a script with no calls has nothing to finish; no run-complete."""
        at = plan(RunConfig(max_duration="1ep"), [FitCall(loader=A)]).checkpoint_at(3)
        assert codes(plan(RunConfig(), [], at)) == ["script-changed"]


# -- diagnostics, whole ---------------------------------------------------------------------
# Each message says what happened, with the numbers of the scenario, and what to do
# (docs/errors.md and the diagnostics table of docs/semantics.md). Each row's comment says what
# the numbers are and why they are the right ones.

TEXT = VARIABLE  # tokens per sample unknown
TWO_PHASES = [FitCall(loader=A, until="10ba"), FitCall(loader=B, duration="1ep")]  # 10 + 6 steps
ONE_CALL = [FitCall(loader=A, until="2ep")]  # 20 steps


def _at_15() -> Checkpoint:
    """Step 15 of ONE_CALL: 50 samples into epoch 1 (planned in the test, not at import, so
    that a broken planner fails the test and not the collection)."""
    return plan(RunConfig(), ONE_CALL).checkpoint_at(15)


def _said(p: Plan) -> list[tuple[str, str | None, str]]:
    return [(d.code, d.call, d.message) for d in p.diagnostics]


def _foreign(steps: int) -> Checkpoint:
    """A checkpoint of another trainer (no ledger) after ``steps`` steps of TWO_PHASES."""
    progress = Progress().advance(A, min(steps, 10))
    if steps > 10:
        progress = progress.advance(B, steps - 10)
    return Checkpoint(progress=progress, loader_state=True)


LOCATED = "the checkpoint has no ledger: located by its step counter ({}) in this script's own plan of 16 steps, {}"  # noqa: E501


@pytest.mark.parametrize(
    ("steps", "where"),
    [
        (0, "at its start"),  # no step taken: no call has run
        (5, "inside call '#0'"),  # step 5 of the 10 of #0
        (10, "inside call '#0'"),  # the step that ends #0 is #0's
        (11, "inside call '#1'"),  # the first step of #1
        (15, "inside call '#1'"),  # the last step but one
        (16, "at or past its end"),  # the plan's last step: nothing is inside
        (20, "at or past its end"),  # past the end of this script
    ],
)
def test_checkpoint_located(steps: int, where: str) -> None:
    """Rule 10: a ledger-less checkpoint is located by its step counter, and the message says
    where in the script's own plan it is."""
    said = _said(plan(RunConfig(), TWO_PHASES, _foreign(steps)))
    assert said[0] == ("checkpoint-located", None, LOCATED.format(steps, where))


#: 100 samples on 2 ranks of 10: 5 steps an epoch; on 3 ranks 4 (102 positions, 30 a step);
#: on 1 rank 10.
DDP = Loader.sharded(samples=100, world_size=2, device_batch_size=10, name="a")


@pytest.mark.parametrize(
    ("steps", "world", "fits"),
    [
        (8, 2, True),  # the geometry it was written at: step 8 is epoch 1, 60 samples in
        (8, 3, False),  # on 3 ranks step 8 is the start of epoch 2, not inside epoch 1
        (4, 3, False),  # on 3 ranks step 4 ends epoch 0, where the checkpoint is inside it
        (5, 3, True),  # epoch 1 on both: within one epoch the check cannot tell
        (6, 1, False),  # on 1 rank step 6 is in epoch 0, the checkpoint in epoch 1
        (10, 1, False),  # the start of epoch 2 at 2 ranks, inside epoch 1 at 1 rank
        (15, 2, True),  # the plan's end at its own geometry: complete
        (16, 3, True),  # past the end of the 12-step plan, in the epoch it ends in: complete
        (25, 1, False),  # on 1 rank step 25 is in epoch 2, the checkpoint in epoch 5
        (20, 3, True),  # past the 12-step plan's end, and at epoch 4, past its epoch 3 too
    ],
)
def test_a_checkpoint_without_a_ledger_must_fit_its_located_epoch(
    steps: int, world: int, fits: bool
) -> None:
    """Rule 10: a ledger-less checkpoint written after ``steps`` steps on 2 ranks, planned on
    ``world`` ranks, is located by its step counter; where the step falls in another epoch than
    the one the checkpoint records, the plan refuses it (checkpoint-mislocated, an error)."""
    config = RunConfig(max_duration="3ep")
    written = Checkpoint(progress=Progress().advance(DDP, steps), loader_state=True)
    p = plan(config, [FitCall(loader=DDP.with_world_size(world))], written)
    assert ("checkpoint-mislocated" not in codes(p)) is fits
    assert p.ok is fits


def test_checkpoint_mislocated_message() -> None:
    """The whole message: both positions, why, and the fix."""
    written = Checkpoint(progress=Progress().advance(DDP, 8), loader_state=True)
    p = plan(RunConfig(max_duration="3ep"), [FitCall(loader=DDP.with_world_size(3))], written)
    assert _said(p)[1] == (
        "checkpoint-mislocated",
        None,
        "the checkpoint has no ledger and records epoch 1 at step 8, but step 8 of this "
        "script's plan is in epoch 2 (sample 0 of it): it was written at another geometry than "
        "this script's loaders (another world size, batch size or accumulation); plan with the "
        "loaders it was written at, or resume from a checkpoint with a ledger (a durations "
        "integration's)",
    )


POLICIES = [
    (
        "replay_epoch",
        "data-replayed",
        "the checkpoint is 50 samples into epoch 1; the epoch is read again from its start: "
        "samples 0-49 of epoch 1 are trained twice",
    ),
    (
        "next_epoch",
        "data-skipped",
        "the checkpoint is 50 samples into epoch 1; training goes on from the next epoch: "
        "samples 50-99 of epoch 1 are never read",
    ),
]


@pytest.mark.parametrize(("policy", "code", "message"), POLICIES)
def test_data_policy_messages(policy: str, code: str, message: str) -> None:
    """Rule 11: step 15 of 10-sample batches on 100 samples is 50 samples into epoch 1; each
    policy names what it reads twice or never."""
    said = _said(plan(RunConfig(data=policy), ONE_CALL, _at_15()))
    assert said[0] == (code, "#0", message)


def test_no_loader_state_message() -> None:
    """Rule 11, exact: without loader state, the loader itself must skip the 50 samples."""
    at_15 = _at_15()
    blind = Checkpoint(progress=at_15.progress, ledger=at_15.ledger, loader_state=False)
    assert _said(plan(RunConfig(), ONE_CALL, blind)) == [
        (
            "mid-epoch-no-loader-state",
            "#0",
            "the checkpoint is 50 samples into epoch 1 but saved no loader state: an exact "
            "resume needs the loader to start at sample 50 of the epoch (a stateful loader, or a "
            "sampler that skips); a plain DataLoader would replay the epoch from its start (data "
            "policy replay_epoch)",
        )
    ]


def test_stream_without_samples_skips_nothing_past_its_position() -> None:
    """Rule 11, next_epoch on a stream (no epoch length): nothing past the position is known
    to be skipped, so the skipped range is empty."""
    stream = Loader(samples=None, batch_size=10, name="s")
    script = [FitCall(loader=stream, until="20ba")]
    at_5 = plan(RunConfig(), script).checkpoint_at(5)
    resumed = plan(RunConfig(data="next_epoch"), script, at_5).segments[0]
    assert resumed.skipped is not None
    assert (resumed.skipped.start, resumed.skipped.stop) == (50, 50)


def test_batch_size_changed_messages() -> None:
    """Rule 12: resumed at batch 20 from batch 10, 50 samples into epoch 1; a target in ba
    changes meaning, one in ep does not."""
    kept = (
        "batch-size-changed",
        "#0",
        "batch size 10 -> 20: the data position is kept in samples (50 into epoch 1)",
    )
    in_epochs = plan(RunConfig(), [FitCall(loader=A.with_batch_size(20), until="2ep")], _at_15())
    assert _said(in_epochs) == [kept]
    at_15 = plan(RunConfig(), [FitCall(loader=A, until="20ba")]).checkpoint_at(15)
    in_steps = plan(RunConfig(), [FitCall(loader=A.with_batch_size(20), until="20ba")], at_15)
    assert _said(in_steps) == [
        kept,
        (
            "ba-target-batch-size-changed",
            "#0",
            "target 20ba counts optimizer steps, set at batch size 10; at batch size 20 each "
            "step trains 20 samples instead, so the call trains a different number of samples; "
            "give the target in sp, tok or ep to keep its meaning",
        ),
    ]


RUNTIME = (
    "the loader's tokens_per_sample is unknown, so {} is reached at run time: after 1 to {} "
    "steps (at least one token a sample); later calls are planned from the latest stop and must "
    "be planned again when this call ends"
)


@pytest.mark.parametrize(
    ("until", "steps", "said"),
    [
        ("0tok", 0, ["target-already-reached"]),  # no token is missing: nothing at run time
        ("1tok", 1, ["token-stop-at-runtime"]),  # one token: one step at most
        ("100tok", 10, ["token-stop-at-runtime"]),  # 100 samples suffice, 10 to a step
    ],
)
def test_token_stop_at_runtime(until: str, steps: int, said: list[str]) -> None:
    """Rule "tokens of unknown length": the bound is the steps of one token a sample."""
    p = plan(RunConfig(), [FitCall(loader=TEXT, until=until)])
    assert [code for code, _, _ in _said(p)] == said
    assert p.total_steps == steps
    if said == ["token-stop-at-runtime"]:
        assert p.diagnostics[0].message == RUNTIME.format(until, steps)


def test_tokens_unknown_after_a_runtime_stop() -> None:
    """After a stop decided at run time, the token count is unknown: a later token target
    cannot be placed, and the message says how to make it known."""
    p = plan(RunConfig(), [FitCall(loader=TEXT, until="1ep"), FitCall(loader=TEXT, until="9tok")])
    assert _said(p) == [
        (
            "tokens-unknown",
            "#1",
            "the token count at this point is unknown, so 9tok cannot be placed; give the "
            "loaders tokens_per_sample, or report measured tokens with every step",
        )
    ]
    failed = p.segments[1]
    assert (failed.index, failed.action, failed.steps, failed.failed) == (1, Action.RUN, 0, True)


def test_a_resumed_runtime_stop_keeps_its_entry() -> None:
    """Rules 13 and 16: a call whose stop is decided at run time, resumed from the plan's own
    checkpoint (whose token count is unknown: only the trainer measures it), cannot be placed;
    it is a resumed call that keeps its ledger entry as the checkpoint had it."""
    script = [FitCall(loader=TEXT, duration="25tok")]
    at_1 = plan(RunConfig(), script).checkpoint_at(1)
    assert at_1.ledger is not None
    assert at_1.progress.token is None
    resumed = plan(RunConfig(), script, at_1)
    assert [code for code, _, _ in _said(resumed)] == ["tokens-unknown"]
    failed = resumed.segments[0]
    assert (failed.index, failed.action, failed.steps, failed.failed) == (0, Action.RESUME, 0, True)
    assert failed.entry == at_1.ledger[0]
    assert failed.target == Time.parse("25tok")
    assert resumed.checkpoint_at(0).ledger == at_1.ledger


CHANGED = (
    "call '#0' changed since the checkpoint ({}); it had already finished, so it is not run again"
)


@pytest.mark.parametrize(
    ("call", "change"),
    [
        (FitCall(loader=A, until="11ba"), "until 10ba -> 11ba"),  # the request
        (  # two fields: listed in the order duration, until, reset_time
            FitCall(loader=A, duration="10ba", reset_time=True),
            "duration none -> 10ba, until 10ba -> none, reset_time False -> True",
        ),
        (  # another stream, named and sized both ways
            FitCall(loader=Loader(samples=None, batch_size=4, name="s"), until="10ba"),
            "loader a: 100 samples, batch 10 -> s: stream, batch 4",
        ),
        (  # an unnamed loader is described by its size alone
            FitCall(loader=Loader(samples=50, batch_size=10), until="10ba"),
            "loader a: 100 samples, batch 10 -> 50 samples, batch 10",
        ),
    ],
)
def test_finished_call_changed(call: FitCall, change: str) -> None:
    """Rule "call identity": a finished call that changed is named with what changed, and
    skipped; its segment is the ledger's, untouched."""
    at_13 = plan(RunConfig(), TWO_PHASES).checkpoint_at(13)
    assert at_13.ledger is not None
    entry = at_13.ledger[0]
    p = plan(RunConfig(), [call, TWO_PHASES[1]], at_13)
    assert _said(p)[0] == ("script-changed", "#0", CHANGED.format(change))
    skipped = p.segments[0]
    assert (skipped.index, skipped.name, skipped.action) == (0, "#0", Action.SKIP)
    assert (skipped.loader, skipped.start, skipped.stop) == (entry.loader, entry.start, entry.stop)
    assert (skipped.start_step, skipped.steps, skipped.target) == (0, 0, entry.target)


def test_a_skipped_call_still_anchors_the_next() -> None:
    """Rule 3 across a skip: a finished call read from the ledger anchors the next relative
    call as it did when it ran. 0.55ep stops at step 6 (0.6ep); the next 0.1ep is measured from
    the target, 0.65ep, not from the position, in the resumed plan as in the uncrashed one."""
    script = [FitCall(loader=A, until="0.55ep"), FitCall(loader=A, duration="0.1ep")]
    full = plan(RunConfig(), script)
    resumed = plan(RunConfig(), script, full.checkpoint_at(6))
    assert [s.action for s in resumed.segments] == [Action.SKIP, Action.RUN]
    assert resumed.segments[1].target == full.segments[1].target == Time.parse("0.65ep")


def test_a_call_that_cannot_be_planned() -> None:
    """A failed call is a segment of 0 steps where the run is, with a placeholder target of
    0ba, kept out of the ledger; a failed call resumed from the ledger keeps its entry."""
    p = plan(RunConfig(), [FitCall(loader=A, until="1ep"), FitCall(loader=B)])
    failed = p.segments[1]
    assert failed.failed
    assert (failed.index, failed.name, failed.action, failed.steps) == (1, "#1", Action.RUN, 0)
    assert failed.start == failed.stop == p.segments[0].stop
    assert (failed.start_step, failed.target, failed.origin) == (10, Time(0, "ba"), Progress())
    assert (failed.entry.start, failed.entry.target) == (failed.start, Time(0, "ba"))
    stream = Loader(samples=None, batch_size=10, name="a")  # an epoch target cannot be placed
    at_5 = plan(RunConfig(), ONE_CALL).checkpoint_at(5)
    assert at_5.ledger is not None
    resumed = plan(RunConfig(), [FitCall(loader=stream, until="2ep")], at_5).segments[0]
    assert resumed.failed
    assert (resumed.action, resumed.steps, resumed.entry) == (Action.RESUME, 0, at_5.ledger[0])


#: How a tail's numbers are read (rule 17).
ORDER = " (positions in the epoch's order)"


@pytest.mark.parametrize(
    ("padding", "drop_last", "said"),
    [
        (  # 5 samples on 2 ranks: the sampler pads to 6 with the epoch's first sample
            "repeat",
            False,
            "data-repeated: 2 data-parallel ranks are kept even (repeat padding, 2 per device): "
            "samples 0-0 read again in epoch 0" + ORDER,
        ),
        (  # or trims to 4, leaving the last one out
            "drop",
            False,
            "data-dropped: 2 data-parallel ranks are kept even (drop padding, 2 per device): "
            "samples 4-4 never read in epoch 0" + ORDER,
        ),
        (  # drop_last drops the incomplete global batch of 4 first, whatever the padding
            "repeat",
            True,
            "data-dropped: 2 data-parallel ranks are kept even (repeat padding, 2 per device, "
            "drop_last): samples 4-4 never read in epoch 0" + ORDER,
        ),
    ],
)
def test_ranks_kept_even(padding: str, drop_last: bool, said: str) -> None:
    """Rule 17: what evening the ranks repeats or drops is named with the sharding, and as
    positions of the epoch's order."""
    loader = Loader.sharded(
        samples=5, world_size=2, device_batch_size=2, padding=padding, drop_last=drop_last
    )
    p = plan(RunConfig(), [FitCall(loader=loader, until="1ep")])
    assert [f"{d.code}: {d.message}" for d in p.diagnostics] == [said]
    assert [str(tail) for tail in p.segments[0].tails] == [
        said.removesuffix(ORDER).rpartition(": ")[2]
    ]


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (  # the clock is measured in the target's unit: 10 steps of 100 samples are 1ep
            [FitCall(loader=A, until="1ep"), FitCall(loader=A, until="0.5ep")],
            "the target 0.5ep is already reached (the run clock is at 1ep); the call trains 0 "
            "steps",
        ),
        (  # and from the call's own clock, restarted by reset_time: 0ep, not the lifetime 1ep
            [FitCall(loader=A, until="1ep"), FitCall(loader=A, until="0ep", reset_time=True)],
            "the target 0ep is already reached (the run clock is at 0ep); the call trains 0 steps",
        ),
    ],
)
def test_target_already_reached_message(script: list[FitCall], said: str) -> None:
    """A call whose target is behind the clock says where the clock is, in the target's unit."""
    messages = [d.message for d in plan(RunConfig(), script).diagnostics]
    assert messages[-1] == said


def test_removed_calls_are_named() -> None:
    """Rule "call identity": each ledger entry the script no longer makes is named, in the
    ledger's order, with the call it belongs to; the entries stay in the ledger."""
    script = [FitCall(loader=A, duration="1ep", name="warmup"), FitCall(loader=B, duration="1ep")]
    at = plan(RunConfig(), script).checkpoint_at(12)
    p = plan(RunConfig(), [FitCall(loader=B, duration="1ep", name="main")], at)
    removed = (
        "the checkpoint's ledger has call {!r}, which this script no longer makes; it is kept in "
        "the ledger and not run"
    )
    assert _said(p) == [
        ("script-changed", "warmup", removed.format("warmup")),
        ("script-changed", "#1", removed.format("#1")),
    ]
    assert [e.name for e in p.unmatched] == ["warmup", "#1"]


def test_resumed_call_changes_messages() -> None:
    """Rule "call identity" on a started call: a changed request keeps the stored target, and
    another stream starts a new epoch; both are said with what changed."""
    at_15 = _at_15()
    changed = plan(RunConfig(), [FitCall(loader=A, until="3ep")], at_15)
    assert _said(changed) == [
        (
            "script-changed",
            "#0",
            "call '#0' changed since it started (until 2ep -> 3ep); it keeps the target stored "
            "when it started, 2ep",
        )
    ]
    moved = plan(RunConfig(), [FitCall(loader=B, until="2ep")], at_15)
    assert _said(moved)[0] == (
        "loader-changed",
        "#0",
        "the loader of call '#0' changed since it started (a: 100 samples, batch 10 -> b: 60 "
        "samples, batch 10); the data position of the checkpoint does not apply to it: it starts "
        "a new epoch",
    )


def test_world_size_changed_message() -> None:
    """Rule 18: 2 -> 4 ranks of 5 at step 3 (30 samples into epoch 0): the rest of the epoch is
    evened for 4 ranks; its 70 samples are padded to 72, repeating samples 0 and 1."""
    two = Loader.sharded(samples=100, world_size=2, device_batch_size=5, name="a")
    at_3 = plan(RunConfig(), [FitCall(loader=two, until="2ep")]).checkpoint_at(3)
    four = plan(RunConfig(), [FitCall(loader=two.with_world_size(4), until="2ep")], at_3)
    assert _said(four)[0] == (
        "world-size-changed",
        "#0",
        "2 -> 4 data-parallel ranks: the rest of epoch 0 from sample 30 is evened for 4 ranks",
    )
    assert [d.code for d in four.diagnostics][1:] == ["batch-size-changed", "data-repeated"]


def test_resumed_at_a_batch_size_with_nothing_left_in_the_epoch() -> None:
    """Rule 12: 6 of 10 samples read at batch 3 (drop_last); at batch 5 the 4 left make no
    batch, so the resumed call starts at the next epoch, and trains its 2 steps there."""
    by_3 = Loader(samples=10, batch_size=3, drop_last=True, name="a")
    at_2 = plan(RunConfig(), [FitCall(loader=by_3, until="2ep")]).checkpoint_at(2)
    assert at_2.progress.sample_in_epoch == 6
    resumed = plan(RunConfig(), [FitCall(loader=by_3.with_batch_size(5), until="2ep")], at_2)
    start = resumed.segments[0].start
    assert (start.epoch, start.sample_in_epoch, start.batch, start.sample) == (1, 0, 2, 6)
    assert resumed.total_steps == 2


@pytest.mark.parametrize(
    ("script", "anchor"),
    [
        (  # the second call trains nothing: the run is exactly at its target, 1ep
            [FitCall(loader=A, until="1ep"), FitCall(loader=A, until="1ep")],
            Time.parse("1ep"),
        ),
        (  # on its own clock, restarted by reset_time: exactly at 0ep (the lifetime is at 1ep)
            [FitCall(loader=A, until="1ep"), FitCall(loader=A, until="0ep", reset_time=True)],
            Time.parse("0ep"),
        ),
    ],
)
def test_a_call_of_no_steps_anchors_where_it_lands(script: list[FitCall], anchor: Time) -> None:
    """Rule 3: a call that trains no step anchors the next relative call on its target when
    the position is exactly that target, in the ledger that its checkpoints carry."""
    p = plan(RunConfig(), script)
    ledger = p.checkpoint_at(p.total_steps).ledger
    assert ledger is not None
    assert ledger[1].anchor == anchor


def test_the_rest_of_an_epoch_evened_away_at_another_world_size() -> None:
    """Rules 17 and 18: 4 samples on 2 ranks of 1 (drop padding), resumed after step 1 on 4
    ranks: the 2 samples left cannot be shared by 4 ranks, so they are dropped (said, with the
    epoch they belong to), and the call goes on at epoch 1."""
    two = Loader.sharded(samples=4, world_size=2, device_batch_size=1, padding="drop", name="a")
    at_1 = plan(RunConfig(), [FitCall(loader=two, until="2ep")]).checkpoint_at(1)
    four = plan(RunConfig(), [FitCall(loader=two.with_world_size(4), until="2ep")], at_1)
    assert (four.segments[0].start.epoch, four.total_steps) == (1, 1)
    assert _said(four)[-1] == (
        "data-dropped",
        "#0",
        "4 data-parallel ranks are kept even (drop padding, 1 per device): samples 2-3 never "
        "read in epoch 0" + ORDER,
    )


def test_a_next_call_at_another_world_size_says_what_its_ranks_drop() -> None:
    """Rule 17, from one call to the next on the same stream: after 1 step of 4 samples on 2
    ranks of 1 (drop padding), a call on 3 ranks cannot share the 2 samples left, so they are
    never read; that is said for epoch 0 (it was absorbed silently), as at a resume."""
    two = Loader.sharded(samples=4, world_size=2, device_batch_size=1, padding="drop", name="a")
    script = [
        FitCall(loader=two, until="1ba"),
        FitCall(loader=two.with_world_size(3), duration="1ba"),
    ]
    p = plan(RunConfig(), script)
    assert (p.segments[1].start.epoch, p.segments[1].steps) == (1, 1)
    assert [d.message.rpartition(": ")[2] for d in p.diagnostics] == [
        "samples 2-3 never read in epoch 0" + ORDER,
        "samples 3-3 never read in epoch 1" + ORDER,
    ]


def test_a_resumed_call_writes_the_ledger_the_uncrashed_run_writes() -> None:
    """Rule 16, in the ledger: a two-call script resumed inside its first call ends with the
    same ledger (anchors included) as the run that never crashed; resumed at another batch
    size, the entry records the loader the call finished with."""
    script = [FitCall(loader=A, until="0.55ep"), FitCall(loader=A, duration="0.1ep")]
    full = plan(RunConfig(), script)
    resumed = plan(RunConfig(), script, full.checkpoint_at(3))
    end = resumed.checkpoint_at(resumed.total_steps).ledger
    assert end == full.checkpoint_at(full.total_steps).ledger
    assert end is not None
    assert end[0].anchor == Time.parse("0.55ep")
    wider = [FitCall(loader=A.with_batch_size(20), until="0.55ep"), script[1]]
    elastic = plan(RunConfig(), wider, full.checkpoint_at(3))
    last = elastic.checkpoint_at(elastic.total_steps).ledger
    assert last is not None
    assert last[0].loader == A.with_batch_size(20)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (  # one call where a list is expected
            "plan(RunConfig(), FitCall(loader=A))",
            "plan() takes a sequence of fit calls; wrap a single call in a list",
        ),
        (  # a checkpoint as read from JSON, not yet made a Checkpoint
            "plan(RunConfig(), [FitCall(loader=A)], {'progress': {}})",
            "checkpoint must be a Checkpoint or None, got dict; Checkpoint.from_dict(data) reads "
            "a serialized one",
        ),
        (  # two names repeated: both are listed, sorted
            "plan(RunConfig(), [FitCall(loader=A, name=n) for n in ('y', 'x', 'y', 'x')])",
            "fit call names must be unique; repeated: x, y",
        ),
        (  # nothing says how long to train
            "plan(RunConfig(), [FitCall(loader=A)]).diagnostics[0].message",
            "no duration anywhere: the call gives neither duration= nor until=, and the run has "
            "no max_duration; give one of them",
        ),
    ],
)
def test_whole_messages(call: str, message: str) -> None:
    """The whole message of a refused plan, or of a call that cannot be planned."""
    names = {"plan": plan, "RunConfig": RunConfig, "FitCall": FitCall, "A": A}
    try:
        said = eval(call, names)
    except FitCallError as error:
        said = str(error)
    assert said == message


def test_the_position_after_skipped_calls_is_its_reader_s() -> None:
    """Rules 4 and 16: after the ledger's finished calls are skipped, the data position is the
    one the started call's loader read to, not the last skipped call's: a call that cannot be
    planned placed before the started call measures the epoch on the right loader, and the
    resume ends where the uninterrupted plan does."""
    a = Loader(samples=40, batch_size=4, name="a")
    b = Loader(samples=20, batch_size=4, name="b")
    script = [
        FitCall(loader=a, until="3ba", name="first"),
        FitCall(loader=b, duration="2ba", name="second"),
        FitCall(loader=a, duration="100tok", name="bad"),
        FitCall(loader=a, duration="2ba", name="last"),
    ]
    whole = plan(RunConfig(), script)
    resumed = plan(RunConfig(), script, whole.checkpoint_at(6))
    assert resumed.stop == whole.stop
    assert "epoch-abandoned" not in [d.code for d in resumed.diagnostics]
