"""``Progress`` counters and exact conversions, checked against a step-by-step simulation."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import attrs
import pytest
from hypothesis import assume, given, strategies as st

from durations import ConversionError, Loader, Progress, ProgressError, Time, Unit

from . import simulate
from .strategies import positions, small_loaders

L100 = Loader(samples=100, batch_size=10, tokens_per_sample=3)


class TestConstruction:
    """Construction rejects counters that no run can produce."""

    @pytest.mark.parametrize(
        ("kwargs", "field", "message"),
        [
            (  # a step counted in the epoch is counted in the lifetime too
                {"batch": 1, "batch_in_epoch": 2, "sample": 5, "sample_in_epoch": 5},
                "batch_in_epoch",
                "batch_in_epoch=2 exceeds the lifetime batch=1; a position inside the epoch is "
                "part of the lifetime total",
            ),
            (  # the same for samples
                {"sample": 3, "sample_in_epoch": 4},
                "sample_in_epoch",
                "sample_in_epoch=4 exceeds the lifetime sample=3; a position inside the epoch is "
                "part of the lifetime total",
            ),
            (  # and for tokens
                {"token": 3, "token_in_epoch": 4},
                "token_in_epoch",
                "token_in_epoch=4 exceeds the lifetime token=3; a position inside the epoch is "
                "part of the lifetime total",
            ),
            (  # every step trains a sample
                {"batch": 5, "sample": 4},
                "sample",
                "sample=4 is less than batch=5; every step trains at least one sample",
            ),
            (  # the same inside the epoch
                {"batch": 5, "sample": 5, "batch_in_epoch": 2, "sample_in_epoch": 1},
                "sample_in_epoch",
                "sample_in_epoch=1 is less than batch_in_epoch=2; every step trains at least "
                "one sample",
            ),
            (  # both known or both unknown
                {"token": None},
                "token_in_epoch",
                "token=None and token_in_epoch=0: either both are known or both are None",
            ),
            (  # the other way round
                {"token_in_epoch": None},
                "token_in_epoch",
                "token=0 and token_in_epoch=None: either both are known or both are None",
            ),
            ({"epoch": -1}, "epoch", "expected a whole number >= 0, got -1"),  # negative
            ({"epoch": None}, "epoch", "expected a whole number >= 0, got None"),  # only tokens
            ({"batch": 1.0, "sample": 1}, "batch", "expected a whole number >= 0, got 1.0"),
            ({"batch": True, "sample": 1}, "batch", "expected a whole number >= 0, got True"),
            (  # an unknown token count is None, never negative
                {"token": -1, "token_in_epoch": -1},
                "token",
                "expected a whole number >= 0, got -1",
            ),
            (  # the same for the epoch's
                {"token_in_epoch": -1},
                "token_in_epoch",
                "expected a whole number >= 0, got -1",
            ),
            ({"token": 1.5}, "token", "expected a whole number >= 0, got 1.5"),  # not a count
        ],
    )
    def test_inconsistent(self, kwargs: dict[str, object], field: str, message: str) -> None:
        """Each inconsistent set of counters names the counter at fault, and says why."""
        with pytest.raises(ProgressError) as info:
            Progress(**kwargs)  # type: ignore[arg-type]
        assert info.value.field == field
        assert str(info.value) == f"inconsistent progress {field}: {message}"
        assert isinstance(info.value, ValueError)

    def test_unknown_tokens(self) -> None:
        """Tokens may be unknown, together."""
        p = Progress(token=None, token_in_epoch=None)
        assert p.token is None


class TestAdvance:
    """``advance(loader, k)`` equals ``k`` single steps; an epoch closes at its last batch."""

    @given(small_loaders(), st.data(), st.integers(min_value=0, max_value=150))
    def test_matches_simulation(self, loader: Loader, data: st.DataObject, steps: int) -> None:
        """The closed form agrees with the step-by-step model from any reachable position."""
        start = data.draw(positions(loader))
        assert start.advance(loader, steps) == simulate.run(start, loader, steps)

    @given(small_loaders(), st.data(), st.integers(0, 150))
    def test_derived_positions_are_valid(
        self, loader: Loader, data: st.DataObject, steps: int
    ) -> None:
        """Positions advance builds without re-validation pass full validation."""
        start = data.draw(positions(loader))
        for p in (start.advance(loader, steps), start.close_epoch(), start.restart_epoch()):
            assert Progress(**attrs.asdict(p)) == p

    @given(small_loaders(), st.data(), st.integers(0, 60), st.integers(0, 60))
    def test_additive(self, loader: Loader, data: st.DataObject, a: int, b: int) -> None:
        """Advancing a then b steps is advancing a + b steps (for a > 0; 0 steps change nothing)."""
        start = data.draw(positions(loader))
        once = start.advance(loader, a + b)
        twice = start.advance(loader, a).advance(loader, b)
        assert once == (twice if a or b else start)

    @given(small_loaders(), st.data(), st.integers(1, 80))
    def test_invariants_hold(self, loader: Loader, data: st.DataObject, steps: int) -> None:
        """After any advance, lifetime totals grew and in-epoch counters stay within the epoch."""
        start = data.draw(positions(loader))
        end = start.advance(loader, steps)
        assert end.batch == start.batch + steps
        assert end.sample > start.sample
        assert end.epoch >= start.epoch
        if loader.samples is not None:
            assert end.sample_in_epoch < loader.samples

    @pytest.mark.parametrize("drop_last", [False, True])
    @pytest.mark.parametrize("tokens_per_sample", [None, 2])
    def test_steps_on_a_small_loader(self, drop_last: bool, tokens_per_sample: int | None) -> None:
        """On 7 samples in batches of 3 (a short last batch, or a dropped tail), from positions
        read before in batches of 1 or 2: ``a`` then ``b`` steps are ``a + b`` steps, and both
        are that many single steps."""
        loader = Loader(
            samples=7, batch_size=3, drop_last=drop_last, tokens_per_sample=tokens_per_sample
        )
        for before in (1, 2):
            for read in range(4):
                start = simulate.run(
                    Progress(),
                    Loader(samples=7, batch_size=before, tokens_per_sample=tokens_per_sample),
                    read,
                )
                for a in range(5):
                    for b in range(1, 4):
                        expected = simulate.run(start, loader, a + b)
                        assert start.advance(loader, a).advance(loader, b) == expected
                        assert start.advance(loader, a + b) == expected

    def test_examples(self) -> None:
        """Worked examples: 13 steps of 10 from zero on 100 samples."""
        p = Progress().advance(L100, 13)
        assert p == Progress(
            epoch=1,
            batch=13,
            sample=130,
            token=390,
            batch_in_epoch=3,
            sample_in_epoch=30,
            token_in_epoch=90,
        )

    def test_unknown_tokens_become_none(self) -> None:
        """Training samples of unknown length makes the token count unknown."""
        p = Progress().advance(Loader(samples=100, batch_size=10), 1)
        assert (p.token, p.token_in_epoch) == (None, None)

    def test_measured_tokens(self) -> None:
        """A trainer may report the measured tokens of a step on a variable-length loader: they
        count in the lifetime total and in the epoch, whose counter goes back to zero when the
        second step of 10 closes the epoch of 20 samples."""
        loader = Loader(samples=20, batch_size=10)
        first = Progress().advance(loader, 1, tokens=700)
        assert (first.token, first.token_in_epoch, first.epoch) == (700, 700, 0)
        p = first.advance(loader, 1, tokens=650)
        assert (p.token, p.token_in_epoch, p.epoch) == (1350, 0, 1)

    def test_tokens_added_to_the_counters_as_they_stand(self) -> None:
        """Tokens trained are added to both token counters as they stand, not recomputed from
        the samples: 7 tokens measured on a step of 5 samples, then 2 steps of 10 samples of 3
        tokens add 60 to both (the epoch of 100 samples is not over at 25). One step at a time
        agrees with two at once."""
        here = Progress().advance(Loader(samples=100, batch_size=5), 1, tokens=7)
        two = here.advance(L100, 2)
        assert (two.token, two.token_in_epoch, two.sample_in_epoch) == (67, 67, 25)
        assert two == here.advance(L100, 1).advance(L100, 1)

    def test_one_step_by_default(self) -> None:
        """``advance(loader)`` takes one step (``steps`` defaults to 1)."""
        for here in (Progress(), Progress().advance(L100, 9), Progress().advance(L100, 4)):
            assert here.advance(L100) == here.advance(L100, 1)
            assert here.advance(L100).batch == here.batch + 1

    @pytest.mark.parametrize(
        ("loader", "steps"),
        [
            (Loader(samples=20, batch_size=10), 2),  # measured over several steps
            (L100, 1),  # on a loader whose tokens are known from tokens_per_sample
        ],
    )
    def test_measured_tokens_only_for_one_step(self, loader: Loader, steps: int) -> None:
        """tokens= over several steps or on a fixed-length loader is refused, by name."""
        with pytest.raises(ConversionError) as info:
            Progress().advance(loader, steps, tokens=5)
        assert info.value.missing == "tokens"
        assert str(info.value) == (
            "tokens= gives the measured tokens of one step on a loader without "
            "tokens_per_sample; pass steps=1 and leave tokens_per_sample unset"
        )

    @pytest.mark.parametrize("steps", [-1, 1.5, True])
    def test_bad_steps(self, steps: object) -> None:
        """The step count is a whole number >= 0; the message shows what was passed."""
        with pytest.raises(ProgressError) as info:
            Progress().advance(L100, steps)  # type: ignore[arg-type]
        assert info.value.field == "steps"
        assert str(info.value) == (
            f"inconsistent progress steps: expected a whole number >= 0, got {steps!r}"
        )


class TestEpochs:
    """Closing, restarting, and measuring epochs."""

    def test_close_keeps_totals(self) -> None:
        """Closing an epoch keeps lifetime totals and resets the position in the epoch."""
        p = Progress().advance(L100, 3).close_epoch()
        assert (p.epoch, p.batch, p.sample, p.sample_in_epoch, p.token_in_epoch) == (1, 3, 30, 0, 0)

    def test_restart_keeps_epoch(self) -> None:
        """Replaying an epoch keeps the epoch counter and totals; the data position resets."""
        p = Progress().advance(L100, 3).restart_epoch()
        assert (p.epoch, p.batch, p.sample, p.sample_in_epoch) == (0, 3, 30, 0)

    def test_epoch_position_uses_samples(self) -> None:
        """A fractional epoch is measured in samples of the loader's epoch."""
        p = Progress().advance(L100, 13)
        assert p.epoch_position(L100) == Fraction(13, 10)
        assert p.epoch_position(L100.with_batch_size(20)) == Fraction(13, 10)

    def test_stream_has_no_epochs(self) -> None:
        """A stream asks for its length by name."""
        with pytest.raises(ConversionError) as info:
            Progress().epoch_position(Loader(samples=None, batch_size=4))
        assert info.value.missing == "loader.samples"

    def test_normalized_closes_exhausted_epoch(self) -> None:
        """Resumed with a batch larger than what is left under drop_last, the epoch has ended."""
        p = Progress().advance(Loader(samples=105, batch_size=10, drop_last=True), 9)  # 90 read
        bigger = Loader(samples=105, batch_size=20, drop_last=True)  # 15 left < 20
        assert p.normalized(bigger).epoch == 1
        assert p.steps_left_in_epoch(bigger) == 5

    @pytest.mark.parametrize("read", range(6))
    @pytest.mark.parametrize(
        "loader",
        [
            Loader(samples=1, batch_size=1),
            Loader(samples=2, batch_size=2, drop_last=True),  # 1 read: the rest is dropped
            Loader(samples=5, batch_size=2, drop_last=True),
            Loader(samples=5, batch_size=4),
        ],
    )
    def test_normalized_leaves_a_step(self, loader: Loader, read: int) -> None:
        """A position ``read`` samples into the epoch (read by another loader), normalized,
        has at least one step of ``loader`` left in its epoch (units.md rule 2): its epoch is
        kept or closed, and normalizing again changes nothing."""
        here = Progress(sample=read, sample_in_epoch=read, token=None, token_in_epoch=None)
        normal = here.normalized(loader)
        assert normal in (here, here.close_epoch())
        assert normal.normalized(loader) == normal
        left = normal.steps_left_in_epoch(loader)
        assert left is not None
        assert left >= 1
        assert (normal == here) == (loader.samples_left_in_epoch(read) > 0 or read == 0)


def _targets(loader: Loader) -> st.SearchStrategy[Time]:
    units = [Unit.BA, Unit.SP]
    if loader.samples is not None:
        units.append(Unit.EP)
    if loader.tokens_per_sample is not None:
        units.append(Unit.TOK)

    def build(unit: Unit) -> st.SearchStrategy[Time]:
        if unit is Unit.EP:
            return st.fractions(min_value=0, max_value=5, max_denominator=40).map(
                lambda v: Time(v, unit)
            )
        return st.integers(min_value=0, max_value=400).map(lambda v: Time(v, unit))

    return st.sampled_from(units).flatmap(build)


class TestStepsUntil:
    """A target is reached at the first step boundary where the counter is at or past it."""

    @given(small_loaders(), st.data())
    def test_matches_brute_force(self, loader: Loader, data: st.DataObject) -> None:
        """The closed form agrees with stepping one batch at a time until the target is reached."""
        start = data.draw(positions(loader))
        target = data.draw(_targets(loader))
        expected = simulate.steps_until(start, target, loader, Progress(), limit=10_000)
        assert start.steps_until(target, loader=loader) == expected

    @given(small_loaders(), st.data(), st.integers(0, 100))
    def test_round_trip(self, loader: Loader, data: st.DataObject, k: int) -> None:
        """k steps forward, then "steps until that sample count" from the start, is k."""
        start = data.draw(positions(loader))
        end = start.advance(loader, k)
        assert start.steps_until(Time(end.sample, Unit.SP), loader=loader) == k
        assert start.steps_until(Time(end.batch, Unit.BA), loader=loader) == k

    @given(small_loaders(), st.data())
    def test_monotone(self, loader: Loader, data: st.DataObject) -> None:
        """A later target never needs fewer steps."""
        start = data.draw(positions(loader))
        a, b = data.draw(_targets(loader)), data.draw(_targets(loader))
        assume(a.unit is b.unit)
        low, high = sorted([a, b], key=lambda t: t.value)
        assert start.steps_until(low, loader=loader) <= start.steps_until(high, loader=loader)

    @given(small_loaders(sized=True), st.data())
    def test_clock_origin(self, loader: Loader, data: st.DataObject) -> None:
        """On a clock started at an epoch start, targets are measured from there."""
        origin = data.draw(positions(loader)).close_epoch()
        start = origin.advance(loader, data.draw(st.integers(0, 30)))
        target = data.draw(_targets(loader))
        expected = simulate.steps_until(start, target, loader, origin, limit=10_000)
        assert start.steps_until(target, loader=loader, since=origin) == expected

    @pytest.mark.parametrize("drop_last", [False, True])
    @pytest.mark.parametrize("tokens_per_sample", [None, 2])
    def test_least_steps_on_a_small_loader(
        self, drop_last: bool, tokens_per_sample: int | None
    ) -> None:
        """Every target up to two epochs of 7 samples in batches of 3 (a short last batch, or a
        dropped tail), from positions read before in batches of 1 or 2: ``steps_until`` is the
        least number of single steps whose counters reach the target."""
        loader = Loader(
            samples=7, batch_size=3, drop_last=drop_last, tokens_per_sample=tokens_per_sample
        )
        targets = [Time(v, Unit.SP) for v in range(17)]
        targets += [Time(v, Unit.BA) for v in range(6)]
        targets += [Time(Fraction(v, 7), Unit.EP) for v in range(15)]
        targets += [Time(Fraction(v, 14), Unit.EP) for v in range(1, 28, 2)]  # between samples
        if tokens_per_sample is not None:
            targets += [Time(v, Unit.TOK) for v in range(0, 33, 3)]
        for before in (1, 2):
            for read in range(4):
                start = simulate.run(
                    Progress(),
                    Loader(samples=7, batch_size=before, tokens_per_sample=tokens_per_sample),
                    read,
                )
                for target in targets:
                    expected = simulate.steps_until(start, target, loader, Progress(), limit=100)
                    assert start.steps_until(target, loader=loader) == expected, (start, target)

    @pytest.mark.parametrize(
        ("target", "steps"),
        [
            ("1000sp", 100),  # divisible: exact
            ("1001sp", 101),  # overshoot to the next step boundary
            ("2.1ep", 21),  # 2 epochs of 10 steps, then 10 of 100 samples
            ("0.15ep", 2),  # 15 samples: the second step reaches 20
            ("2ep", 20),
            ("3000tok", 100),  # 3 tokens a sample
            ("0ba", 0),  # nothing to do
        ],
    )
    def test_examples(self, target: str, steps: int) -> None:
        """Worked examples on 100 samples, batches of 10, 3 tokens a sample."""
        assert Progress().steps_until(Time.parse(target), loader=L100) == steps

    def test_needs_loader_samples_for_epochs(self) -> None:
        """An epoch target on a stream names what is missing."""
        with pytest.raises(ConversionError) as info:
            Progress().steps_until(Time(1, Unit.EP), loader=Loader(samples=None, batch_size=4))
        assert info.value.missing == "loader.samples"

    def test_needs_tokens_per_sample(self) -> None:
        """A token target on a loader of unknown sample length names what is missing."""
        with pytest.raises(ConversionError) as info:
            Progress().steps_until(Time(1, Unit.TOK), loader=Loader(samples=10, batch_size=4))
        assert info.value.missing == "loader.tokens_per_sample"

    def test_dur_needs_the_planner(self) -> None:
        """dur is resolved against max_duration by the planner, not here."""
        with pytest.raises(ConversionError) as info:
            Progress().steps_until(Time(1, Unit.DUR), loader=L100)
        assert info.value.missing == "max_duration"

    def test_epoch_clock_must_start_at_epoch_start(self) -> None:
        """An epoch clock started mid-epoch would make '1ep' ambiguous."""
        with pytest.raises(ConversionError) as info:
            Progress().steps_until(Time(1, Unit.EP), loader=L100, since=Progress().advance(L100, 1))
        assert info.value.missing == "since"


class TestTimeIn:
    """``time_in`` reads the position as a Time in any unit."""

    def test_units(self) -> None:
        """13 steps of 10 on 100 samples, 3 tokens each."""
        p = Progress().advance(L100, 13)
        assert p.time_in(Unit.BA) == Time(13, Unit.BA)
        assert p.time_in(Unit.SP) == Time(130, Unit.SP)
        assert p.time_in(Unit.TOK) == Time(390, Unit.TOK)
        assert p.time_in(Unit.EP, loader=L100) == Time.parse("1.3ep")

    @given(small_loaders(tokens=True), st.data(), st.integers(0, 50))
    def test_inverse_of_steps_until(self, loader: Loader, data: st.DataObject, k: int) -> None:
        """From zero, the time of the position k steps on is reached in exactly k steps."""
        end = Progress().advance(loader, k)
        for unit in (Unit.BA, Unit.SP, Unit.TOK):
            assert Progress().steps_until(end.time_in(unit), loader=loader) == k

    def test_on_a_later_clock(self) -> None:
        """On a clock started at ``since``, each unit reads the difference of the counters:
        3 steps of 10 past the close of the first epoch (10 steps of 10 on 100 samples, 3
        tokens a sample) are 3ba, 30sp, 90tok and 0.3ep."""
        origin = Progress().advance(L100, 10)  # epoch 1 starts: 10ba, 100sp, 300tok
        p = origin.advance(L100, 3)
        assert p.time_in(Unit.BA, since=origin) == Time(3, Unit.BA)
        assert p.time_in(Unit.SP, since=origin) == Time(30, Unit.SP)
        assert p.time_in(Unit.TOK, since=origin) == Time(90, Unit.TOK)
        assert p.time_in(Unit.EP, loader=L100, since=origin) == Time.parse("0.3ep")

    @given(small_loaders(sized=True, tokens=True), st.data(), st.integers(0, 40))
    def test_clocks_add_up(self, loader: Loader, data: st.DataObject, k: int) -> None:
        """The time from the start is the time to an epoch start ``origin`` plus the time
        from there, in every unit."""
        origin = data.draw(positions(loader)).close_epoch()
        p = origin.advance(loader, k)
        for unit in (Unit.BA, Unit.SP, Unit.TOK, Unit.EP):
            before = origin.time_in(unit, loader=loader)
            after = p.time_in(unit, loader=loader, since=origin)
            assert before + after == p.time_in(unit, loader=loader)

    def test_missing_context(self) -> None:
        """Epochs ask for a loader; dur asks for the plan; unknown tokens say so."""
        p = Progress()
        with pytest.raises(ConversionError, match="loader="):
            p.time_in(Unit.EP)
        with pytest.raises(ConversionError, match="fraction of max_duration"):
            p.time_in(Unit.DUR)
        with pytest.raises(ConversionError, match="unknown"):
            Progress(token=None, token_in_epoch=None).time_in(Unit.TOK)


STREAM = Loader(samples=None, batch_size=4)
UNSIZED_TOKENS = Loader(samples=100, batch_size=10)  # no tokens_per_sample
UNKNOWN_TOKENS = Progress(token=None, token_in_epoch=None)
MID_EPOCH = Progress().advance(L100, 1)  # 10 samples into epoch 0
#: What every refusal for want of a token count says to do: the three ways a count becomes known.
KNOW_TOKENS = (
    "a loader read before it has no tokens_per_sample: give every loader tokens_per_sample, "
    "or report measured tokens with every step (advance(tokens=...)), or measure in ba, sp "
    "or ep"
)
STREAM_MESSAGE = (
    "the loader is a stream of unknown length (samples=None), so it has no epochs; give the "
    "loader's samples per epoch, or use ba, sp or tok"
)
ORIGIN_MESSAGE = (
    "a clock measured in epochs must start at an epoch start (since.sample_in_epoch is 10)"
)


@pytest.mark.parametrize(
    ("convert", "missing", "message"),
    [
        pytest.param(
            lambda: Progress().epoch_position(STREAM),
            "loader.samples",
            f"cannot measure a fractional epoch: {STREAM_MESSAGE}",
            id="epoch_position-stream",
        ),
        pytest.param(
            lambda: Progress().time_in(Unit.EP, loader=STREAM),
            "loader.samples",
            f"cannot measure a fractional epoch: {STREAM_MESSAGE}",
            id="time_in-ep-stream",
        ),
        pytest.param(
            lambda: Progress().time_in(Unit.EP),
            "loader",
            "a position in epochs needs loader= to measure the current epoch",
            id="time_in-ep-no-loader",
        ),
        pytest.param(
            lambda: MID_EPOCH.time_in(Unit.EP, loader=L100, since=MID_EPOCH),
            "since",
            ORIGIN_MESSAGE,
            id="time_in-ep-since-mid-epoch",
        ),
        pytest.param(
            lambda: UNKNOWN_TOKENS.time_in(Unit.TOK),
            "progress.token",
            "the token count is unknown at this position; " + KNOW_TOKENS,
            id="time_in-tok-unknown-here",
        ),
        pytest.param(
            lambda: Progress().time_in(Unit.TOK, since=UNKNOWN_TOKENS),
            "progress.token",
            "the token count is unknown at this position; " + KNOW_TOKENS,
            id="time_in-tok-unknown-at-since",
        ),
        pytest.param(
            lambda: Progress().time_in(Unit.DUR),
            "max_duration",
            "a position in dur is a fraction of max_duration: convert max_duration with "
            "durations.plans.resolve_dur and measure in its unit, or ask Plan.resolve(time)",
            id="time_in-dur",
        ),
        pytest.param(
            lambda: Progress().steps_until(Time.parse("2ep"), loader=STREAM),
            "loader.samples",
            f"cannot convert 2ep to steps: {STREAM_MESSAGE}",
            id="steps_until-ep-stream",
        ),
        pytest.param(
            lambda: MID_EPOCH.steps_until(Time.parse("1ep"), loader=L100, since=MID_EPOCH),
            "since",
            ORIGIN_MESSAGE,
            id="steps_until-ep-since-mid-epoch",
        ),
        pytest.param(
            lambda: Progress().steps_until(Time.parse("7tok"), loader=UNSIZED_TOKENS),
            "loader.tokens_per_sample",
            "cannot convert 7tok to steps: the loader's tokens_per_sample is unknown, so the "
            "stop is decided at run time from measured tokens",
            id="steps_until-tok-no-tokens_per_sample",
        ),
        pytest.param(
            lambda: UNKNOWN_TOKENS.steps_until(Time.parse("7tok"), loader=L100),
            "progress.token",
            "cannot convert 7tok to steps: the token count at this position is unknown; "
            + KNOW_TOKENS,
            id="steps_until-tok-unknown-here",
        ),
        pytest.param(
            lambda: Progress().steps_until(Time.parse("7tok"), loader=L100, since=UNKNOWN_TOKENS),
            "progress.token",
            "cannot convert 7tok to steps: the token count at this position is unknown; "
            + KNOW_TOKENS,
            id="steps_until-tok-unknown-at-since",
        ),
        pytest.param(
            lambda: Progress().steps_until(Time.parse("0.5dur"), loader=L100),
            "max_duration",
            "cannot convert 0.5dur to steps: dur is a fraction of max_duration, which the "
            "planner resolves",
            id="steps_until-dur",
        ),
    ],
)
def test_refusal_messages(convert: Callable[[], object], missing: str, message: str) -> None:
    """A conversion without the context it needs names what is missing (units.md rule 7) and
    says what to give instead, in these exact words."""
    with pytest.raises(ConversionError) as info:
        convert()
    assert info.value.missing == missing
    assert str(info.value) == message


def test_wrong_argument_types() -> None:
    """Conversions name a wrong argument type."""
    with pytest.raises(TypeError, match="target must be a Time"):
        Progress().steps_until("10ba", loader=L100)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="loader must be a Loader"):
        Progress().advance(None, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("sample_in_epoch", [10, 12])
def test_one_step_from_past_the_end_of_the_epoch(drop_last: bool, sample_in_epoch: int) -> None:
    """A position another loader left at or past the end of this loader's epoch (10 samples):
    one step first closes the epoch, as the general path of several steps does."""
    loader = Loader(samples=10, batch_size=4, drop_last=drop_last)
    here = Progress(
        sample=sample_in_epoch,
        sample_in_epoch=sample_in_epoch,
        token=None,
        token_in_epoch=None,
    )
    one = here.advance(loader, 1)
    assert one == here.normalized(loader).advance(loader, 1)
    assert (one.epoch, one.batch, one.sample_in_epoch) == (1, 1, 4)


def test_advance_and_steps_until_name_what_they_were_given() -> None:
    """The whole message of a value that is not a Loader, or not a Time, named as given."""
    with pytest.raises(TypeError) as raised:
        Progress().advance("a loader", 1)  # type: ignore[arg-type]
    assert str(raised.value) == "loader must be a Loader, not 'a loader'"
    with pytest.raises(TypeError) as raised:
        Progress().steps_until("10ba", loader=Loader(samples=10, batch_size=2))  # type: ignore[arg-type]
    assert str(raised.value) == ("target must be a Time, such as Time.parse('10ba'), not '10ba'")


@pytest.mark.parametrize(
    ("steps", "epoch", "inside", "counts"),
    [
        # Reason: exactly at epoch 1's start, a trainer may record the epoch that just ended.
        (10, 0, False, True),
        # Reason: or the one that starts there.
        (10, 1, False, True),
        # Reason: but not the epoch before that one.
        (10, -1, False, False),
        # Reason: nor, recording a position inside an epoch, either of them.
        (10, 0, True, False),
        (10, 1, True, False),
        # Reason: inside epoch 1 (3 steps in), only epoch 1, with or without a position.
        (13, 1, False, True),
        (13, 1, True, True),
        (13, 0, False, False),
    ],
)
def test_counts_as_epoch(steps: int, epoch: int, inside: bool, counts: bool) -> None:
    """Rule 10's check of a ledger-less checkpoint's epoch counter, called as the planner calls
    it and with its default (``inside=False``)."""
    at = Progress().advance(Loader(samples=100, batch_size=10), steps)
    if inside:
        assert at.counts_as_epoch(epoch, inside=True) is counts
    else:
        assert at.counts_as_epoch(epoch) is counts
