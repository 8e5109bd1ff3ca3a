"""Interleaved measurement, medians and paired ratios, and the result records of a figure."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Settings:
    """How hard to measure: ``quick`` runs every figure with tiny repetition counts."""

    quick: bool

    def pick(self, full: int, quick: int) -> int:
        """``quick`` in quick mode, otherwise ``full``."""
        return quick if self.quick else full


@dataclass(frozen=True)
class Contender:
    """One way of doing the measured thing.

    ``run(repeat)`` performs the operation ``repeat`` times; each operation counts ``ops``
    units (steps, fit calls), and results are reported per unit.
    """

    key: str
    label: str
    run: Callable[[int], object]
    repeat: int
    ops: int = 1


@dataclass
class Row:
    """One contender's result: the median time per unit and its ratio to the baseline."""

    key: str
    label: str
    median_s: float
    p25_s: float
    p75_s: float
    ratio: float | None
    rounds: int
    repeat: int
    ops: int

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "median_s": self.median_s,
            "p25_s": self.p25_s,
            "p75_s": self.p75_s,
            "ratio_to_baseline": self.ratio,
            "rounds": self.rounds,
            "repeat": self.repeat,
            "ops": self.ops,
        }


@dataclass
class Goal:
    """A target from the issue, and whether this run meets it (``None``: not assessed)."""

    text: str
    met: bool | None
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "met": self.met, "evidence": self.evidence}

    @property
    def verdict(self) -> str:
        return {True: "met", False: "NOT met", None: "not assessed"}[self.met]


@dataclass
class Figure:
    """A figure's table (rows against one baseline), goals, notes and extra data."""

    key: str
    title: str
    unit: str
    baseline: str | None
    rows: list[Row] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, key: str) -> Row | None:
        """The row of contender ``key``, or ``None`` if it was skipped."""
        return next((r for r in self.rows if r.key == key), None)

    def get(self, key: str) -> Row:
        """The row of contender ``key``, which must have run."""
        row = self.row(key)
        if row is None:
            raise KeyError(f"figure {self.key!r} has no row {key!r}")
        return row

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "unit": self.unit,
            "baseline": self.baseline,
            "rows": [r.to_json() for r in self.rows],
            "goals": [g.to_json() for g in self.goals],
            "notes": self.notes,
            "skipped": self.skipped,
            "extra": self.extra,
        }


def interleave(
    contenders: list[Contender], *, rounds: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Time every contender once per round, rotating the order each round.

    Returns the seconds per unit of each round, by contender key. The garbage collector is
    collected before and disabled during the rounds (as ``timeit`` does), so a collection
    triggered by one contender is not charged to another.
    """
    for _ in range(warmup):
        for contender in contenders:
            contender.run(contender.repeat)
    samples: dict[str, list[float]] = {c.key: [] for c in contenders}
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for index in range(rounds):
            shift = index % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                start = time.perf_counter_ns()
                contender.run(contender.repeat)
                elapsed = time.perf_counter_ns() - start
                samples[contender.key].append(elapsed / 1e9 / (contender.repeat * contender.ops))
    finally:
        if enabled:
            gc.enable()
    return samples


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """The 25th percentile, median and 75th percentile (the median alone for few values)."""
    median = statistics.median(values)
    if len(values) < 4:
        return min(values), median, max(values)
    q1, _, q3 = statistics.quantiles(values, n=4)
    return q1, median, q3


def rows(
    contenders: list[Contender], samples: dict[str, list[float]], baseline: str | None
) -> list[Row]:
    """Rows with medians and paired ratios: the median over rounds of contender / baseline.

    Pairing by round means a burst of load on the machine moves both sides of a ratio.
    """
    result = []
    base = samples.get(baseline) if baseline is not None else None
    for contender in contenders:
        values = samples[contender.key]
        p25, median, p75 = quartiles(values)
        ratio = None
        if base is not None:
            ratio = statistics.median(v / b for v, b in zip(values, base, strict=True))
        result.append(
            Row(
                key=contender.key,
                label=contender.label,
                median_s=median,
                p25_s=p25,
                p75_s=p75,
                ratio=ratio,
                rounds=len(values),
                repeat=contender.repeat,
                ops=contender.ops,
            )
        )
    return result


def measure(
    figure: Figure, contenders: list[Contender], *, rounds: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Interleave ``contenders`` and add their rows to ``figure``; return the raw samples."""
    samples = interleave(contenders, rounds=rounds, warmup=warmup)
    figure.rows.extend(rows(contenders, samples, figure.baseline))
    return samples


def fmt_seconds(seconds: float) -> str:
    """A duration with a readable unit: ``37.2 ns``, ``6.64 us``, ``1.20 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio to the baseline, ``-`` when there is none."""
    if ratio is None:
        return "-"
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    return f"{ratio:.3g}x"
