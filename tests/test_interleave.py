"""``durations.interleave``: which source each sample of a weighted mixture reads
(docs/mixtures.md). The rule is checked against a direct implementation in exact fractions,
and its promise (every prefix within one sample of its shares) on every small mixture."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from durations import MixtureError
from durations.interleave import MAX_PERIOD, MAX_SOURCES, Interleave

weight_lists = st.lists(st.integers(1, 12), min_size=1, max_size=6)


def _reference(weights: tuple[Fraction, ...], samples: int) -> list[int]:
    """The rule as docs/mixtures.md writes it, in fractions, one sample at a time."""
    k = len(weights)
    if k == 1:
        return [0] * samples
    d = Fraction(1, 2 * k - 2)
    counts, out = [0] * k, []
    for i in range(samples):
        due = [j for j in range(k) if weights[j] * (i + 1) - counts[j] >= d]
        j = min(due, key=lambda j: ((counts[j] + 1 - d) / weights[j], j))
        out.append(j)
        counts[j] += 1
    return out


def _within_one(mix: Interleave, samples: int) -> None:
    """floor(w_j n) <= c_j(n) <= ceil(w_j n) for every prefix n up to ``samples``, with the
    bound 1 - 1 / (2k - 2) on the deviation."""
    k = len(mix)
    bound = 1 - Fraction(1, 2 * k - 2) if k > 1 else 0
    counts = [0] * k
    for n in range(samples + 1):
        assert mix.counts(n) == tuple(counts)
        for j, weight in enumerate(mix.weights):
            assert abs(counts[j] - weight * n) <= bound, (mix, n, j)
        if n < samples:
            counts[mix.source(n)] += 1


@settings(max_examples=60)
@given(weight_lists)
def test_the_rule_is_the_one_written(weights: list[int]) -> None:
    """Two periods of sources equal the rule of docs/mixtures.md, run in fractions."""
    mix = Interleave.of(*weights)
    samples = 2 * mix.period
    assert [mix.source(i) for i in range(samples)] == _reference(mix.weights, samples)


@settings(max_examples=60)
@given(weight_lists)
def test_every_prefix_is_within_one_sample(weights: list[int]) -> None:
    mix = Interleave.of(*weights)
    _within_one(mix, 2 * mix.period)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_small_mixture_is_within_one_sample(k: int) -> None:
    """Every mixture of k sources whose period is at most 12 (every composition of the period
    into k shares, in every order): each prefix within one sample, and one period reads each
    source's share exactly."""
    for period in range(k, 13):
        for cuts in itertools.combinations(range(1, period), k - 1):
            shares = [b - a for a, b in zip((0, *cuts), (*cuts, period), strict=True)]
            mix = Interleave.of(*shares)
            assert mix.counts(mix.period) == mix.shares
            _within_one(mix, mix.period)


@settings(max_examples=60)
@given(weight_lists, st.integers(0, 10**40), st.integers(0, 50))
def test_counts_of_any_prefix(weights: list[int], far: int, near: int) -> None:
    """A prefix count is a number of periods' shares plus the rest's, at any distance, and it
    grows by one sample of source(n) from n to n + 1."""
    mix = Interleave.of(*weights)
    n = far * mix.period + near
    expected = tuple(far * a + c for a, c in zip(mix.shares, mix.counts(near), strict=True))
    assert mix.counts(n) == expected
    assert sum(mix.counts(n)) == n
    step = [b - a for a, b in zip(mix.counts(n), mix.counts(n + 1), strict=True)]
    assert step == [int(j == mix.source(n)) for j in range(len(mix))]


@given(weight_lists, st.integers(2, 9))
def test_the_scale_of_the_weights_does_not_matter(weights: list[int], scale: int) -> None:
    assert Interleave.of(*weights) == Interleave.of(*(w * scale for w in weights))
    strings = Interleave.of(*(str(Fraction(w, scale)) for w in weights))
    assert strings == Interleave.of(*weights)


# (weights, the first sources, why)
EXAMPLES = [
    ((1,), [0, 0, 0], "one source reads every sample"),
    ((1, 1, 1), [0, 1, 2, 0, 1, 2], "equal weights: round robin, lowest source first"),
    ((3, 2), [0, 1, 0, 1, 0, 0, 1, 0, 1, 0], "3:2 spread out, repeating every 5"),
    (
        (1, 1, 4),
        [2, 2, 0, 2, 1, 2],
        "Megatron's greedy reads 2, 0, 1: one sample of source 2 in three, whose share is two",
    ),
    (  # worked by hand: d = 1/4; at sample 7 source 2 (1.6 - 1 >= d, deadline 8.75) comes
        # before source 1 (deadline 2.75 / 0.3 = 9.17); source 0 is not due (4 - 4 < d)
        ("0.5", "0.3", "0.2"),
        [0, 1, 0, 2, 0, 1, 0, 2, 1, 0],
        "decimal shares: 5:3:2, each source spread over the period",
    ),
]


@pytest.mark.parametrize(("weights", "first", "why"), EXAMPLES)
def test_examples(weights: tuple[object, ...], first: list[int], why: str) -> None:
    mix = Interleave.of(*weights)  # type: ignore[arg-type]
    assert [mix.source(i) for i in range(len(first))] == first, why


# (what is called, the message, why)
REFUSED = [
    (lambda: Interleave.of(), "invalid mixture weights: expected at least one weight", "nothing"),
    (
        lambda: Interleave.of(1, 0),
        "invalid mixture weights[1]: 0: a weight must be > 0 (leave a source out to read none "
        "of it)",
        "a source of weight 0 would never be read",
    ),
    (
        lambda: Interleave.of(1, 0.5),
        "invalid mixture weights[1]: expected a whole number, a Fraction or a string such as "
        "'0.3' or '1/3', got 0.5 (a float is not exact)",
        "a float's binary value is not the number written",
    ),
    (
        lambda: Interleave.of(True),
        "invalid mixture weights[0]: expected a whole number, a Fraction or a string",
        "a bool is not a weight",
    ),
    (
        lambda: Interleave.of("1/0"),
        "invalid mixture weights[0]: zero denominator in '1/0'",
        "the number grammar of times, with its bounds",
    ),
    (
        lambda: Interleave.of(1, Fraction(1, MAX_PERIOD)),
        "repeat every 1,000,001 samples (their common denominator), more than the 1,000,000 an "
        "interleave is built for; round them to fewer digits",
        "the period's table would be too long to build",
    ),
    (
        lambda: Interleave.of(1, Fraction(1, 10**5000 + 1)),
        "(a Fraction of a 1-bit numerator and a 16,610-bit denominator) repeat every (an int of "
        "16,610 bits) samples",
        "a huge weight is named by its size: the message stays short",
    ),
    (
        lambda: Interleave.of(*[1] * (MAX_SOURCES + 1)),
        "invalid mixture weights: 1,001 sources; at most 1,000",
        "a bound on the sources",
    ),
    (
        lambda: Interleave.of(1).counts(-1),
        "invalid mixture samples: expected a whole number >= 0, got -1",
        "no prefix is negative",
    ),
    (
        lambda: Interleave.of(1).source("3"),  # type: ignore[arg-type]
        "invalid mixture sample: expected a whole number >= 0, got '3'",
        "a sample is a whole number",
    ),
    (
        lambda: Interleave((Fraction(1, 2),)),
        "invalid mixture weights: expected weights that sum to 1; use Interleave.of(...)",
        "the constructor takes normalised weights",
    ),
]


@pytest.mark.parametrize(("call", "message", "why"), REFUSED)
def test_refused(call: object, message: str, why: str) -> None:
    with pytest.raises(MixtureError) as error:
        call()  # type: ignore[operator]
    assert message in str(error.value), why
    assert isinstance(error.value, ValueError)


def test_megatron_s_greedy_is_a_whole_sample_off() -> None:
    """Megatron-LM's blend (helpers.cpp ``build_blending_indices``: sample i goes to the source
    with the largest ``w_j max(i, 1) - c_j``, the lowest on a tie), on 1:1:4: after 3 samples
    source 2 has 1 where its share is 2, a whole sample off, which this rule never is."""
    weights = Interleave.of(1, 1, 4).weights
    counts, megatron = [0, 0, 0], []
    for i in range(3):
        j = max(range(3), key=lambda j: (weights[j] * max(i, 1) - counts[j], -j))
        megatron.append(j)
        counts[j] += 1
    assert megatron == [2, 0, 1]
    assert weights[2] * 3 - counts[2] == 1
    assert Interleave.of(1, 1, 4).counts(3)[2] == 2
