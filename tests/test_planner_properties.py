"""Properties of the planner on generated scripts. Each class is one rule of docs/semantics.md;
a wrong planner breaks the relation its tests state."""

from __future__ import annotations

import attrs
from hypothesis import assume, given, settings, strategies as st

from durations import (
    Action,
    Checkpoint,
    DataPolicy,
    FitCall,
    Loader,
    Plan,
    ResumeMode,
    RunConfig,
    Time,
    Unit,
    plan,
)

from .strategies import _amounts, scripts, wide_scripts

Script = tuple[RunConfig, tuple[FitCall, ...]]


def _steps_to_check(total: int, data: st.DataObject) -> list[int]:
    if total <= 40:
        return list(range(total + 1))
    return sorted({0, total, *data.draw(st.lists(st.integers(0, total), max_size=12))})


def _same_remaining(original: Plan, k: int, resumed: Plan) -> None:
    assert resumed.stop == original.stop
    assert resumed.total_steps == original.total_steps - k
    for j in range(resumed.total_steps + 1):
        assert resumed.progress_at(j) == original.progress_at(k + j)
    stops = [s.stop for s in original.segments]
    assert [s.stop for s in resumed.segments] == stops


class TestInterruptionInvariance:
    """Rule 16: planning the same script from ``checkpoint_at(k)`` continues exactly where the
    plan is: same final position, ``total - k`` steps, and the same position after every step."""

    @given(scripts(), st.data())
    def test_any_crash_point(self, script: Script, data: st.DataObject) -> None:
        """One crash at any step changes nothing."""
        config, calls = script
        original = plan(config, calls)
        for k in _steps_to_check(original.total_steps, data):
            _same_remaining(original, k, plan(config, calls, original.checkpoint_at(k)))

    @given(scripts(), st.data())
    def test_chain_of_crashes(self, script: Script, data: st.DataObject) -> None:
        """Any number of crashes, each resumed from the last plan's checkpoint, change nothing."""
        config, calls = script
        original = plan(config, calls)
        current, done = original, 0
        for _ in range(data.draw(st.integers(1, 5))):
            k = data.draw(st.integers(0, current.total_steps))
            current = plan(config, calls, current.checkpoint_at(k))
            done += k
            _same_remaining(original, done, current)

    @given(scripts(), st.data())
    def test_through_serialization(self, script: Script, data: st.DataObject) -> None:
        """A checkpoint written to JSON and read back resumes the same way."""
        config, calls = script
        original = plan(config, calls)
        k = data.draw(st.integers(0, original.total_steps))
        saved = Checkpoint.from_dict(original.checkpoint_at(k).to_dict())
        _same_remaining(original, k, plan(config, calls, saved))


class TestInvarianceOnWiderScripts:
    """Rule 16 beyond the public strategy: streams, unknown token counts, drop_last, and one
    stream at several batch sizes. Plans with an error or a run-time token stop are the two
    documented exceptions and are left out."""

    @given(wide_scripts(), st.data())
    def test_any_crash_point(self, script: Script, data: st.DataObject) -> None:
        """One crash at any step changes nothing."""
        config, calls = script
        original = plan(config, calls)
        assume(original.ok)
        assume(not any(s.stop_at_runtime for s in original.segments))
        for k in _steps_to_check(original.total_steps, data):
            _same_remaining(original, k, plan(config, calls, original.checkpoint_at(k)))


class TestInvarianceAfterTakingUp:
    """Rules 9 and 16: a plan that took a checkpoint up under extend or weights writes a new
    ledger; the same script re-run under continue from any of its checkpoints goes on exactly,
    from its very first step on."""

    @given(
        scripts(max_calls=3), st.sampled_from([ResumeMode.EXTEND, ResumeMode.WEIGHTS]), st.data()
    )
    def test_any_crash_point(self, script: Script, mode: ResumeMode, data: st.DataObject) -> None:
        """Crash anywhere in an extend/weights plan; continue gives the same rest of the run."""
        config, calls = script
        before = plan(config, calls)
        taken = before.checkpoint_at(data.draw(st.integers(0, before.total_steps)))
        taking_up = plan(attrs.evolve(config, resume=mode), calls, taken)
        for k in _steps_to_check(taking_up.total_steps, data):
            resumed = plan(config, calls, taking_up.checkpoint_at(k))
            assert resumed.stop == taking_up.stop
            assert resumed.total_steps == taking_up.total_steps - k
            for j in range(1, resumed.total_steps + 1):
                assert resumed.progress_at(j) == taking_up.progress_at(k + j)

    @given(
        scripts(max_calls=3), st.sampled_from([ResumeMode.EXTEND, ResumeMode.WEIGHTS]), st.data()
    )
    def test_run_again_in_its_own_mode(
        self, script: Script, mode: ResumeMode, data: st.DataObject
    ) -> None:
        """The same extend/weights script run again unchanged, in its own mode, after any chain
        of crashes, continues its own ledger: the same rest of the run, never taken up twice."""
        config, calls = script
        before = plan(config, calls)
        taken = before.checkpoint_at(data.draw(st.integers(0, before.total_steps)))
        same = attrs.evolve(config, resume=mode)
        taking_up = plan(same, calls, taken)
        current, done = taking_up, 0
        for _ in range(data.draw(st.integers(1, 4))):
            k = data.draw(st.integers(0, current.total_steps))
            current = plan(same, calls, current.checkpoint_at(k))
            done += k
            assert current.stop == taking_up.stop
            assert current.total_steps == taking_up.total_steps - done
            for j in range(1, current.total_steps + 1):
                assert current.progress_at(j) == taking_up.progress_at(done + j)
            assert current.taken_up == taking_up.taken_up


class TestLocating:
    """Rule 10: a checkpoint without a ledger is located in the script's own plan by its step
    counter, and its recorded epoch must fit the located one."""

    @given(wide_scripts(), st.data())
    def test_a_foreign_checkpoint_of_the_same_script_fits(
        self, script: Script, data: st.DataObject
    ) -> None:
        """The counters the script's own plan reaches after any k steps, without a ledger, are
        located at step k and never mislocated; the rest of the run is the plan's."""
        config, calls = script
        original = plan(config, calls)
        assume(original.ok)
        assume(not any(s.stop_at_runtime for s in original.segments))
        for k in _steps_to_check(original.total_steps, data):
            foreign = Checkpoint(progress=original.progress_at(k), loader_state=True)
            located = plan(config, calls, foreign)
            assert "checkpoint-mislocated" not in [d.code for d in located.diagnostics]
            assert located.stop == original.stop
            assert located.total_steps == original.total_steps - k


class TestIdempotence:
    """Rule 15: re-running a finished script trains 0 steps and says the run is complete."""

    @given(scripts())
    def test_final_checkpoint(self, script: Script) -> None:
        """Planning from the final checkpoint runs nothing, however often it is repeated."""
        config, calls = script
        original = plan(config, calls)
        final = original.checkpoint_at(original.total_steps)
        for _ in range(2):
            again = plan(config, calls, final)
            assert again.total_steps == 0
            assert again.stop == original.stop
            assert "run-complete" in [d.code for d in again.diagnostics]
            assert all(s.action is Action.SKIP for s in again.segments)
            final = again.checkpoint_at(0)


class TestUntilAndDuration:
    """Rule 1: from a position ``p``, ``until=T`` is ``duration=T - p`` whenever ``T >= p``."""

    @given(scripts(max_calls=2), st.data())
    def test_agree(self, script: Script, data: st.DataObject) -> None:
        """With no previous target to anchor on, both readings stop at the same place."""
        config, calls = script
        first = plan(config, calls)
        k = data.draw(st.integers(0, first.total_steps))
        loader = data.draw(st.sampled_from([c.loader for c in calls]))
        # A checkpoint without a ledger in extend mode: the call starts from the position alone.
        at = Checkpoint(progress=first.progress_at(k), loader_state=True)
        extend = attrs.evolve(config, resume=ResumeMode.EXTEND)
        unit = data.draw(st.sampled_from([Unit.BA, Unit.SP, Unit.TOK, Unit.EP]))
        start = plan(extend, [FitCall(loader=loader, until=Time(0, unit))], at).segments[0].start
        now = start.time_in(unit, loader=loader)
        extra = data.draw(_amounts(unit))
        by_until = plan(extend, [FitCall(loader=loader, until=now + extra)], at)
        by_duration = plan(extend, [FitCall(loader=loader, duration=extra)], at)
        assert by_until.stop == by_duration.stop
        assert by_until.total_steps == by_duration.total_steps


class TestUnitAgreement:
    """Rule 5 and units.md: on divisible geometry, equal amounts in different units plan alike."""

    @given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 5), st.booleans())
    def test_ep_ba_sp_tok(self, batch: int, batches: int, epochs: int, drop: bool) -> None:
        """``E ep``, ``E*S ba``, ``E*N sp`` and ``E*N*T tok`` give identical plans."""
        samples = batch * batches
        loader = Loader(samples=samples, batch_size=batch, drop_last=drop, tokens_per_sample=3)
        texts = [f"{epochs}ep", f"{epochs * batches}ba", f"{epochs * samples}sp"]
        texts.append(f"{epochs * samples * 3}tok")
        plans = [plan(RunConfig(), [FitCall(loader=loader, duration=t)]) for t in texts]
        assert len({(p.stop, p.total_steps) for p in plans}) == 1

    def test_issue_example(self) -> None:
        """2ep, 20ba and 200sp (10 batches of 10) give identical plans."""
        loader = Loader(samples=100, batch_size=10)
        plans = [
            plan(RunConfig(), [FitCall(loader=loader, duration=t)])
            for t in ("2ep", "20ba", "200sp")
        ]
        assert plans[0].stop == plans[1].stop == plans[2].stop


class TestAnchoring:
    """Rule 3: two relative calls in one unit on one stream plan exactly like one call of their
    sum; across units the first call's overshoot is kept."""

    @given(st.data())
    def test_additive_in_one_unit(self, data: st.DataObject) -> None:
        """duration=a then duration=b equals duration=a+b, for every unit."""
        loader = Loader(
            samples=data.draw(st.integers(1, 50)),
            batch_size=data.draw(st.integers(1, 9)),
            tokens_per_sample=data.draw(st.integers(1, 4)),
        )
        unit = data.draw(st.sampled_from([Unit.BA, Unit.SP, Unit.TOK, Unit.EP]))
        a, b = data.draw(_amounts(unit)), data.draw(_amounts(unit))
        split = plan(
            RunConfig(), [FitCall(loader=loader, duration=a), FitCall(loader=loader, duration=b)]
        )
        whole = plan(RunConfig(), [FitCall(loader=loader, duration=a + b)])
        assert split.stop == whole.stop

    @given(st.integers(1, 50), st.integers(2, 9), st.integers(1, 200), st.integers(1, 20))
    def test_overshoot_kept_across_units(self, samples: int, batch: int, sp: int, ba: int) -> None:
        """sp then ba: the ba steps start where the sp call really stopped."""
        loader = Loader(samples=samples, batch_size=batch)
        first = plan(RunConfig(), [FitCall(loader=loader, duration=Time(sp, Unit.SP))])
        both = plan(
            RunConfig(),
            [
                FitCall(loader=loader, duration=Time(sp, Unit.SP)),
                FitCall(loader=loader, duration=Time(ba, Unit.BA)),
            ],
        )
        assert both.stop.batch == first.stop.batch + ba


class TestMonotonicity:
    """Rule 2: a longer duration never plans fewer steps."""

    @given(scripts(max_calls=3), st.data())
    def test_longer_last_call(self, script: Script, data: st.DataObject) -> None:
        """Lengthening the last call's duration never shortens the plan."""
        config, calls = script
        last = calls[-1]
        assume(last.duration is not None)
        longer = attrs.evolve(
            last, duration=last.duration + data.draw(_amounts(last.duration.unit))
        )
        assert plan(config, (*calls[:-1], longer)).total_steps >= plan(config, calls).total_steps


class TestElasticResume:
    """Rule 12: with a new batch size, sample targets stop within one new batch of the target."""

    @given(st.integers(5, 60), st.integers(1, 8), st.integers(1, 8), st.integers(1, 300), st.data())
    def test_sample_target(
        self, samples: int, old: int, new: int, target: int, data: st.DataObject
    ) -> None:
        """The resumed run stops at or past the target, by less than one new batch."""
        loader = Loader(samples=samples, batch_size=old, name="a")
        config = RunConfig(max_duration=Time(target, Unit.SP))
        before = plan(config, [FitCall(loader=loader)])
        k = data.draw(st.integers(0, before.total_steps))
        after = plan(config, [FitCall(loader=loader.with_batch_size(new))], before.checkpoint_at(k))
        assert target <= after.stop.sample < target + new or after.total_steps == 0

    def test_ba_target_is_flagged(self) -> None:
        """A ba target under a changed batch size is honoured as a count and flagged."""
        loader = Loader(samples=100, batch_size=10)
        config = RunConfig(max_duration="20ba")
        at = plan(config, [FitCall(loader=loader)]).checkpoint_at(13)
        after = plan(config, [FitCall(loader=loader.with_batch_size(20))], at)
        assert after.stop.batch == 20
        codes = [d.code for d in after.diagnostics]
        assert codes == ["batch-size-changed", "ba-target-batch-size-changed"]


def _policy_ranges_hold(at: Checkpoint, exact: Plan, resumed: Plan, policy: DataPolicy) -> None:
    """Rule 11's accounting: ``resumed`` is planned from ``at`` under ``policy``, ``exact`` from
    ``at`` under the exact policy. replay_epoch reports [0, sample_in_epoch) and starts the
    epoch again with the lifetime counters unchanged; next_epoch reports [sample_in_epoch,
    samples) and starts the next epoch; a resume that does not go on inside an epoch of the
    same stream reports neither. The policy applies at the first call that trains: one that
    cannot be planned before it reads nothing and leaves the resume point to it (rule 14)."""
    first = next(
        (s for s in resumed.segments if s.action is not Action.SKIP and not s.failed), None
    )
    resumes_mid_epoch = (
        first is not None
        and exact.segments[first.index].start.sample_in_epoch > 0
        and first.abandoned is None
    )
    if not resumes_mid_epoch:
        assert all(s.replayed is None and s.skipped is None for s in resumed.segments)
        return
    assert first is not None
    if policy is DataPolicy.EXACT:
        assert first.replayed is None
        assert first.skipped is None
        return
    position = at.progress.normalized(first.loader)
    if policy is DataPolicy.REPLAY_EPOCH:
        assert first.replayed is not None
        assert (first.replayed.epoch, first.replayed.start, first.replayed.stop) == (
            position.epoch,
            0,
            position.sample_in_epoch,
        )
        assert first.start.sample == position.sample
        assert first.start.sample_in_epoch == 0
    else:
        assert policy is DataPolicy.NEXT_EPOCH
        assert first.skipped is not None
        assert (first.skipped.start, first.skipped.stop) == (
            position.sample_in_epoch,
            first.loader.samples,
        )
        assert first.start.epoch == position.epoch + 1


class TestReplayAccounting:
    """Rule 11: each data policy reports exactly the samples it replays or skips."""

    @given(scripts(max_calls=2), st.data())
    def test_ranges(self, script: Script, data: st.DataObject) -> None:
        """replay_epoch reports [0, sample_in_epoch); next_epoch [sample_in_epoch, samples); a
        resume that does not go on inside an epoch of the same stream reports neither."""
        config, calls = script
        original = plan(config, calls)
        at = original.checkpoint_at(data.draw(st.integers(0, original.total_steps)))
        exact = plan(config, calls, at)
        for policy in DataPolicy:
            resumed = plan(attrs.evolve(config, data=policy), calls, at)
            _policy_ranges_hold(at, exact, resumed, policy)

    @given(scripts(), st.data())
    def test_exact_needs_no_range(self, script: Script, data: st.DataObject) -> None:
        """The exact policy never replays or skips."""
        config, calls = script
        original = plan(config, calls)
        resumed = plan(
            config, calls, original.checkpoint_at(data.draw(st.integers(0, original.total_steps)))
        )
        assert all(s.replayed is None and s.skipped is None for s in resumed.segments)


class TestWeightsMode:
    """Rule 9: weights keep lifetime totals and start a fresh run clock at an epoch start."""

    @given(scripts(max_calls=2), st.data())
    def test_fresh_clock(self, script: Script, data: st.DataObject) -> None:
        """From any checkpoint, a weights resume trains what a fresh run trains."""
        config, calls = script
        assume(not any(c.reset_time for c in calls))
        original = plan(config, calls)
        at = original.checkpoint_at(data.draw(st.integers(0, original.total_steps)))
        weights = plan(attrs.evolve(config, resume=ResumeMode.WEIGHTS), calls, at)
        # The data starts afresh at an epoch start: the same samples as a fresh run.
        assert weights.total_steps == original.total_steps
        assert weights.stop.sample - weights.start.sample == original.stop.sample


@settings(max_examples=50)
@given(scripts())
def test_plan_is_pure(script: Script) -> None:
    """The same inputs give an equal plan: nothing hidden is read or kept."""
    config, calls = script
    assert plan(config, calls) == plan(config, calls)
