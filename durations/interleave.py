"""``Interleave``: which source each sample of a weighted mixture of sources reads, so that
every prefix of the mixture is within one sample of its shares (``docs/mixtures.md``).

Sources ``0 .. k-1`` have weights ``w_j > 0`` (exact rationals, normalised to sum to 1; write
``w_j = a_j / A`` with ``A`` their common denominator, the *period*). Sample ``i`` of the
mixture (0-based) reads source ``s(i)``, and ``c_j(n)`` counts the samples of source ``j``
among the first ``n``. The rule is Tijdeman's (1980), with ``d = 1 / (2k - 2)``:

    among the sources with ``w_j (i + 1) - c_j(i) >= d``, ``s(i)`` is the one with the
    smallest ``(c_j(i) + 1 - d) / w_j``, the lowest ``j`` on a tie (``k = 1``: source 0).

Every prefix is then within one sample of its shares, ``|c_j(n) - w_j n| <= 1 - d < 1``, which
is to say ``floor(w_j n) <= c_j(n) <= ceil(w_j n)`` (tested exhaustively on small mixtures and
by property). Megatron-LM's greedy blend (``argmax w_j max(i, 1) - c_j``) is not: with weights
``1:1:4`` it reads sources 2, 0, 1 first, one sample of source 2 in three where its share is
two (this rule reads 2, 2, 0). Since ``c_j(A) = a_j``, the interleave repeats with period
``A``, so one period, built once in ``O(k A)``, answers any prefix: ``c_j(n) = q a_j +
c_j(r)`` for ``n = q A + r``, in ``O(k log A)``, and ``s(i) = s(i mod A)`` in ``O(1)``,
whatever ``n`` (the planner's cost stays independent of the number of steps). The period is
at most :data:`MAX_PERIOD`; weights whose common denominator is larger are refused, naming it.

>>> mix = Interleave.of(1, 1, 4)
>>> [mix.source(i) for i in range(6)], mix.period, mix.shares
([2, 2, 0, 2, 1, 2], 6, (1, 1, 4))
>>> mix.counts(3)                          # shares 0.5, 0.5 and 2: each within one sample
(1, 0, 2)
>>> mix.counts(6 * 10**30 + 3) == (10**30 + 1, 10**30, 4 * 10**30 + 2)   # no walk
True
"""

from __future__ import annotations

import bisect
import functools
import math
from array import array
from fractions import Fraction

import attrs

from ._grammar import NumberError, parse_factor
from .errors import MixtureError, counted, shown_value

__all__ = ["MAX_PERIOD", "MAX_SOURCES", "Interleave"]

#: The longest period (common denominator of the weights) an interleave is built for: its table
#: takes ``O(k A)`` time once, about a second in pure Python at 10**6.
MAX_PERIOD = 10**6
#: The most sources one interleave mixes.
MAX_SOURCES = 1_000


def _weight(index: int, value: object) -> Fraction:
    """One weight: a whole number, a ``Fraction``, or a string of the time grammar's numbers
    (``'0.3'``, ``'1/3'``); never a float, whose binary value is not the number written."""
    if isinstance(value, str):
        try:
            weight = parse_factor(value)
        except NumberError as error:
            raise MixtureError(f"weights[{index}]", str(error)) from None
    elif isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        raise MixtureError(
            f"weights[{index}]",
            f"expected a whole number, a Fraction or a string such as '0.3' or '1/3', got "
            f"{shown_value(value)}"
            + (" (a float is not exact)" if isinstance(value, float) else ""),
        )
    else:
        weight = Fraction(value)
    if weight <= 0:
        raise MixtureError(
            f"weights[{index}]",
            f"{shown_value(value)}: a weight must be > 0 (leave a source out to read none of it)",
        )
    return weight


@attrs.frozen
class Interleave:
    """The interleave of sources by their ``weights`` (normalised: ``weights`` sum to 1). Made
    with :meth:`of`. ``period`` is ``A``, and ``shares`` the ``a_j``: one period reads
    ``shares[j]`` samples of source ``j``.
    """

    weights: tuple[Fraction, ...]
    period: int = attrs.field(init=False)
    shares: tuple[int, ...] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.weights, tuple) or not self.weights:
            raise MixtureError("weights", "expected at least one source; use Interleave.of(...)")
        if len(self.weights) > MAX_SOURCES:
            raise MixtureError(
                "weights", f"{counted(len(self.weights))} sources; at most {MAX_SOURCES:,}"
            )
        for index, weight in enumerate(self.weights):
            if not isinstance(weight, Fraction) or weight <= 0:
                raise MixtureError(
                    f"weights[{index}]", f"expected a Fraction > 0, got {shown_value(weight)}"
                )
        if sum(self.weights) != 1:
            raise MixtureError(
                "weights", "expected weights that sum to 1; use Interleave.of(...) to normalise"
            )
        period = math.lcm(*(weight.denominator for weight in self.weights))
        if period > MAX_PERIOD:
            shown = ", ".join(shown_value(w) for w in self.weights[:5])
            raise MixtureError(
                "weights",
                f"the weights {shown}{', ...' if len(self.weights) > 5 else ''} repeat every "
                f"{counted(period)} samples (their common denominator), more than the "
                f"{MAX_PERIOD:,} an interleave is built for; round them to fewer digits "
                "(shares such as 3:2:1 or 0.55:0.3:0.15)",
            )
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "shares", tuple(int(w * period) for w in self.weights))

    @classmethod
    def of(cls, *weights: int | Fraction | str) -> Interleave:
        """The interleave of sources with relative ``weights`` (any positive scale: ``of(3, 1)``
        and ``of('0.75', '0.25')`` are the same)."""
        parsed = [_weight(index, value) for index, value in enumerate(weights)]
        if not parsed:
            raise MixtureError("weights", "expected at least one weight")
        total = sum(parsed)
        return cls(tuple(weight / total for weight in parsed))

    def source(self, sample: int) -> int:
        """The source sample ``sample`` (0-based) of the mixture reads."""
        _check_count("sample", sample)
        return _table(self.shares)[0][sample % self.period]

    def counts(self, samples: int) -> tuple[int, ...]:
        """The samples of each source among the first ``samples`` of the mixture."""
        _check_count("samples", samples)
        whole, rest = divmod(samples, self.period)
        places = _table(self.shares)[1]
        return tuple(
            whole * share + bisect.bisect_left(mine, rest)
            for share, mine in zip(self.shares, places, strict=True)
        )

    def place(self, source: int, nth: int) -> int:
        """The mixture sample (0-based) at which source ``source`` reads its ``nth`` sample
        (0-based): the inverse of :meth:`counts` (``counts(place(j, n))[j] == n``), in ``O(1)``.

        >>> mix = Interleave.of(1, 1, 4)
        >>> [mix.place(2, n) for n in range(5)], mix.counts(mix.place(2, 4))
        ([0, 1, 3, 5, 6], (1, 1, 4))
        """
        if isinstance(source, bool) or not isinstance(source, int) or not 0 <= source < len(self):
            raise MixtureError(
                "source", f"expected a source from 0 to {len(self) - 1}, got {shown_value(source)}"
            )
        _check_count("nth", nth)
        whole, rest = divmod(nth, self.shares[source])
        return whole * self.period + _table(self.shares)[1][source][rest]

    def __len__(self) -> int:
        """The number of sources."""
        return len(self.weights)

    def __str__(self) -> str:
        return ":".join(str(share) for share in self.shares)


def _check_count(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MixtureError(field, f"expected a whole number >= 0, got {shown_value(value)}")


@functools.lru_cache(maxsize=16)
def _table(shares: tuple[int, ...]) -> tuple[array[int], list[array[int]]]:
    """One period of the interleave of ``shares`` (Tijdeman's rule, module docstring, in
    integers): the source of each of its samples, and each source's places in it."""
    period, k = sum(shares), len(shares)
    sources: array[int] = array("I", bytes(4 * period))
    places: list[array[int]] = [array("Q") for _ in shares]
    if k == 1:
        places[0].extend(range(period))
        return sources, places
    m = 2 * k - 2  # d = 1 / m; scaled by A and m, every test is on integers
    counts = [0] * k
    for i in range(period):
        best = -1
        for j in range(k):
            # eligible: w_j (i + 1) - c_j >= d  <=>  m (a_j (i + 1) - A c_j) >= A
            if m * (shares[j] * (i + 1) - period * counts[j]) < period:
                continue
            # deadline (c_j + 1 - d) / w_j, as (m (c_j + 1) - 1) / a_j: the smallest wins
            if (
                best < 0
                or (m * (counts[j] + 1) - 1) * shares[best]
                < (m * (counts[best] + 1) - 1) * shares[j]
            ):
                best = j
        if best < 0:  # no source released: impossible by Tijdeman's theorem
            raise AssertionError(f"no source is due at sample {i} of the interleave {shares}")
        sources[i] = best
        places[best].append(i)
        counts[best] += 1
    return sources, places
