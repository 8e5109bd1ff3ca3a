"""durations.testing: public strategies, and a conformance harness that catches faulty trainers."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
import pytest
from hypothesis import given, settings, strategies as st

import durations
from durations import Checkpoint, LedgerEntry, Loader, Plan, Progress, ResumeMode, Time, Unit, plan
from durations._hypothesis import resolve, value_types
from durations.fit import DataPolicy
from durations.scenario import Scenario
from durations.testing import (
    ConformanceError,
    StepRecord,
    check_trainer,
    checkpoints,
    compare,
    crash_schedules,
    expected_steps,
    fit_calls,
    loaders,
    plans,
    progresses,
    run_configs,
    scenarios,
    times,
)


class TestStrategies:
    """Strategies generate valid values, honour their arguments, and reject bad arguments."""

    @given(times(units=["ep"]))
    def test_times_units(self, t: Time) -> None:
        """times(units=) stays in the units asked for."""
        assert t.unit is Unit.EP

    @given(loaders(sized=True, tokens=True, max_samples=5, max_batch_size=3))
    def test_loaders_bounds(self, loader: Loader) -> None:
        """loaders() honours sized, tokens and the bounds."""
        assert loader.samples is not None
        assert loader.samples <= 5
        assert loader.batch_size <= 3
        assert loader.tokens_per_sample is not None

    @given(progresses(loader=Loader(samples=10, batch_size=3), max_steps=7))
    def test_progresses(self, p: Progress) -> None:
        """progresses() gives positions no later than max_steps steps in."""
        assert p.batch <= 7

    @given(scenarios(max_calls=2, max_loaders=1))
    def test_scenarios(self, scenario: Scenario) -> None:
        """scenarios() gives runs the planner can plan, within the bounds."""
        assert 1 <= len(scenario.calls) <= 2
        assert len(scenario.loaders) == 1
        plan(scenario.config, scenario.calls)

    @given(st.data())
    def test_crash_schedules(self, data: st.DataObject) -> None:
        """Crash steps are sorted, distinct and strictly inside the run."""
        crashes = data.draw(crash_schedules(total_steps=10, max_crashes=4))
        assert list(crashes) == sorted(set(crashes))
        assert all(1 <= c <= 9 for c in crashes)

    @given(st.from_type(Time))
    def test_registered_for_from_type(self, t: Time) -> None:
        """The hypothesis entry point registers the strategies: st.from_type(Time) works."""
        assert Time.parse(str(t)) == t

    @pytest.mark.parametrize(
        ("make", "message"),
        [
            (lambda: times(max_value=-1), "max_value=-1: expected a whole number >= 0"),
            (lambda: times(units=[]), "units=[]"),
            (lambda: loaders(max_samples=0), "max_samples=0"),
            (lambda: loaders(names=()), "names=()"),
            (lambda: fit_calls(loaders=[]), "loaders=[]"),
            (lambda: scenarios(max_calls=0), "max_calls=0"),
            (lambda: crash_schedules(total_steps=-1), "total_steps=-1"),
            (lambda: progresses(max_steps=True), "max_steps=True"),
            (lambda: fit_calls(loaders=["a"]), "loaders=['a']: expected Loader values"),
            (lambda: run_configs(units=["dur"]), "max_duration cannot be in dur"),
            (lambda: run_configs(max_duration=1), "max_duration=1: expected True, False or None"),
            (lambda: plans(max_calls=0), "max_calls=0"),
            (lambda: plans(resumed="yes"), "resumed='yes': expected True, False or None"),
            (lambda: checkpoints(scenario="x.toml"), "scenario='x.toml': expected a Scenario"),
            (lambda: checkpoints(ledger=None), "ledger=None: expected True or False"),
        ],
    )
    def test_arguments_validated(self, make: object, message: str) -> None:
        """Bad arguments fail at once with the argument named."""
        with pytest.raises(ValueError, match=re.escape(message)):
            make()  # type: ignore[operator]

    def test_keyword_only(self) -> None:
        """Strategy arguments are keyword-only."""
        with pytest.raises(TypeError):
            loaders(True)  # type: ignore[misc]

    @given(st.data())
    def test_checkpoints_of_a_scenario(self, data: st.DataObject) -> None:
        """checkpoints(scenario=) are the scenario's own: planning the script again from one
        goes on to the same end; without a ledger, the planner locates it."""
        scenario = data.draw(scenarios(max_calls=3))
        full = plan(scenario.config, scenario.calls)
        checkpoint = data.draw(checkpoints(scenario=scenario))
        assert plan(scenario.config, scenario.calls, checkpoint).stop == full.stop
        bare = data.draw(checkpoints(scenario=scenario, ledger=False))
        assert bare.ledger is None
        assert plan(scenario.config, scenario.calls, bare).ok

    @given(plans(resumed=True), plans(resumed=False), run_configs(max_duration=False))
    def test_plans_and_run_configs_honour_their_arguments(
        self, resumed: Plan, fresh: Plan, config: durations.RunConfig
    ) -> None:
        """plans(resumed=) plans from a checkpoint or from the start; run_configs(max_duration=
        False) has none."""
        assert resumed.checkpoint is not None
        assert fresh.checkpoint is None
        assert config.max_duration is None


def _public_classes() -> list[str]:
    return sorted(name for name in durations.__all__ if isinstance(getattr(durations, name), type))


def _check_valid(value: object) -> None:
    """What a valid value of each type satisfies; every value passes its own constructor."""
    if attrs.has(type(value)):
        assert attrs.evolve(value) == value
    if isinstance(value, Time):
        assert Time.parse(str(value)) == value
    elif isinstance(value, Checkpoint):
        assert Checkpoint.from_dict(value.to_dict()) == value
    elif isinstance(value, LedgerEntry):
        alone = Checkpoint(progress=value.stop or value.start, ledger=(value,))
        assert Checkpoint.from_dict(alone.to_dict()) == alone
    elif isinstance(value, Plan):
        assert plan(value.config, value.calls, value.checkpoint) == value
    elif isinstance(value, Scenario):
        assert plan(value.config, value.calls).segments


@pytest.mark.parametrize("name", _public_classes())
def test_from_type_draws_valid_values(name: str) -> None:
    """st.from_type draws valid values of every public type (errors aside): a registered
    strategy, never one that builds the type from its fields, which gives invalid values."""
    kind = getattr(durations, name)
    if issubclass(kind, BaseException):
        assert issubclass(kind, durations.DurationsError)
        return

    @settings(max_examples=8, deadline=None, database=None)
    @given(st.from_type(kind))
    def valid(value: object) -> None:
        assert type(value) is kind
        _check_valid(value)

    valid()


def test_every_value_type_is_registered() -> None:
    """Each public value type (not an error, not an enum) has a strategy in durations.testing;
    one without is refused when drawn, with a message saying so."""
    from hypothesis import find
    from hypothesis.errors import ResolutionFailed

    from durations.testing import _STRATEGIES, _strategy_for

    assert set(value_types()) <= set(_STRATEGIES)

    class Stray:
        pass

    with pytest.raises(ResolutionFailed, match=r"durations\.testing has no strategy for Stray"):
        _strategy_for(Stray)
    st.register_type_strategy(Stray, resolve)  # as the entry point registers each type
    with pytest.raises(ResolutionFailed, match="no strategy for Stray"):
        find(st.from_type(Stray), lambda _: True)


# -- a toy trainer that uses durations as an integration would, with injectable faults ---------


def _read(position: Progress, loader: Loader) -> tuple[Progress, tuple[int, ...]]:
    """The toy data loader: the next batch from the saved position (its loader state)."""
    if loader.samples is not None:
        left = loader.samples - position.sample_in_epoch
        if left <= 0 or (loader.drop_last and left < loader.batch_size):
            position = position.close_epoch()
    start = position.sample_in_epoch
    size = loader.batch_size
    if loader.samples is not None:
        size = min(size, loader.samples - start)
    return position, tuple(range(start, start + size))


def toy_trainer(fault: str | None = None):  # type: ignore[no-untyped-def]
    """A trainer that re-plans at every (re)start and loops until each call's should_stop."""

    def run(scenario: Scenario, crashes: tuple[int, ...]) -> Sequence[StepRecord]:
        records: list[StepRecord] = []
        checkpoint: Checkpoint | None = None
        done = 0
        pending = list(crashes)
        while True:
            config = scenario.config
            saved = checkpoint
            if checkpoint is not None and fault == "re-adds-durations":
                config = attrs.evolve(config, resume=ResumeMode.EXTEND)
            if checkpoint is not None and fault == "replays-epoch":
                config = attrs.evolve(config, data=DataPolicy.REPLAY_EPOCH)
            if checkpoint is not None and fault == "resets-clock-again" and checkpoint.ledger:
                ledger = tuple(
                    attrs.evolve(e, origin=checkpoint.progress.close_epoch())
                    if e.reset_time and not e.finished
                    else e
                    for e in checkpoint.ledger
                )
                saved = attrs.evolve(checkpoint, ledger=ledger)
            current = plan(config, scenario.calls, saved)
            this_run = 0
            crash_at = pending.pop(0) if pending else None
            for segment in current.segments:
                position = segment.start
                while not segment.should_stop(position):
                    position, ids = _read(position, segment.loader)
                    records.append(
                        StepRecord(segment.name, segment.loader.name, position.epoch, ids)
                    )
                    position = position.advance(segment.loader, 1)
                    if fault == "stops-late" and segment.should_stop(position):
                        position = position.advance(segment.loader, 1)
                        records.append(
                            StepRecord(segment.name, segment.loader.name, position.epoch, ())
                        )
                    this_run += 1
                    done += 1
                    if done == crash_at:
                        checkpoint = current.checkpoint_at(this_run)
                        break
                else:
                    continue
                break
            else:
                return records

    return run


def test_faithful_trainer_passes() -> None:
    """A trainer that follows the plan, checkpoints with the ledger and resumes exactly passes."""
    check_trainer(toy_trainer(), max_examples=60)


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("re-adds-durations", "step"),  # Composer's autoresume bug
        ("replays-epoch", "read samples"),  # a plain DataLoader under Lightning
        ("resets-clock-again", "step"),  # reset_time applied on every restart
        ("stops-late", "step"),  # one step past each stop
    ],
)
def test_faulty_trainers_are_caught(fault: str, words: str) -> None:
    """Each deliberate fault is caught, reported with the first diverging step in words."""
    with pytest.raises(ConformanceError) as info:
        check_trainer(toy_trainer(fault), max_examples=300)
    message = str(info.value)
    assert message.startswith("step ")
    assert "differs from the plan" in message
    assert words in message
    assert "[[fit]]" in message  # the (shrunk) scenario, as TOML


def test_compare_reports_in_words() -> None:
    """A hand-made mismatch: the message names the step, expected and actual reads."""
    loader = Loader(samples=10, batch_size=5, name="a")
    from durations import FitCall, RunConfig

    scenario = Scenario(
        config=RunConfig(max_duration="2ba"), loaders={"a": loader}, calls=(FitCall(loader=loader),)
    )
    wrong = [StepRecord("#0", "a", 0, (0, 1, 2, 3, 4)), StepRecord("#0", "a", 1, (0, 1, 2, 3, 4))]
    with pytest.raises(ConformanceError) as info:
        compare(scenario, (), wrong)
    assert str(info.value).splitlines()[0] == (
        "step 2 differs from the plan: expected call #0 read samples 5-9 of a in epoch 0; "
        "the trainer trained call #0 read samples 0-4 of a in epoch 1"
    )
    assert expected_steps(plan(scenario.config, scenario.calls))[1].samples == (5, 6, 7, 8, 9)
