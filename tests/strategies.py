"""Hypothesis strategies shared by the test suite."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from durations import FitCall, Loader, Progress, RunConfig, Time, Unit
from durations.errors import GeometryError
from durations.testing import _amounts as public_amounts, _sharded, scenarios

from . import simulate


def values_for(unit: Unit, *, max_value: int = 10**30) -> st.SearchStrategy[int | Fraction]:
    whole = st.integers(min_value=0, max_value=max_value)
    if unit.is_whole:
        return whole
    return st.one_of(
        whole,
        st.fractions(min_value=0, max_value=max_value),
    )


@st.composite
def times(draw: st.DrawFn, units: tuple[Unit, ...] = tuple(Unit)) -> Time:
    unit = draw(st.sampled_from(units))
    return Time(draw(values_for(unit)), unit)


@st.composite
def small_loaders(
    draw: st.DrawFn, *, sized: bool | None = None, tokens: bool | None = None
) -> Loader:
    """Loaders small enough to simulate step by step, one process or data-parallel."""
    is_sized = draw(st.booleans()) if sized is None else sized
    batch = draw(st.integers(min_value=1, max_value=12))
    samples = draw(st.integers(min_value=1, max_value=60)) if is_sized else None
    has_tokens = draw(st.booleans()) if tokens is None else tokens
    per_sample = draw(st.integers(min_value=1, max_value=7)) if has_tokens else None
    if draw(st.booleans()):
        return draw(sharded_loaders(samples=samples, tokens_per_sample=per_sample))
    drop_last = samples is not None and samples >= batch and draw(st.booleans())
    return Loader(
        samples=samples, batch_size=batch, drop_last=drop_last, tokens_per_sample=per_sample
    )


@st.composite
def sharded_loaders(
    draw: st.DrawFn, *, samples: int | None, tokens_per_sample: int | None = None
) -> Loader:
    """A data-parallel loader of ``samples``: 1-4 ranks, micro-batches of 1-4, accumulation
    1-3, every padding, ``drop_last`` either way (``durations.testing``'s own drawing)."""
    micro = draw(st.integers(1, 4))
    return _sharded(draw, samples, micro, tokens_per_sample, None, 4, None)


@st.composite
def positions(draw: st.DrawFn, loader: Loader) -> Progress:
    """A position reachable on ``loader``'s data, possibly read with another batch size (or,
    for a data-parallel loader, on another number of ranks)."""
    steps = draw(st.integers(min_value=0, max_value=40))
    if loader.sharding is not None:
        try:
            other = loader.with_world_size(draw(st.integers(min_value=1, max_value=4)))
        except GeometryError:  # that many ranks would train nothing: read on this one
            other = loader
        return simulate.run(Progress(), other, steps)
    batch = draw(st.integers(min_value=1, max_value=12))
    fits = not loader.drop_last or loader.samples is None or batch <= loader.samples
    other = loader.with_batch_size(batch) if fits else loader
    return simulate.run(Progress(), other, steps)


# -- scripts: the public strategies of durations.testing, as (config, calls) pairs ----------

_amounts = public_amounts


def scripts(*, max_calls: int = 4) -> st.SearchStrategy[tuple[RunConfig, tuple[FitCall, ...]]]:
    """A run configuration with a max_duration, and one to ``max_calls`` fit calls on one to
    three named loaders (``durations.testing.scenarios``, ``dur`` included), some of them
    data-parallel on up to 3 ranks (semantics.md rule 17)."""
    units = ("ba", "sp", "ep", "tok", "dur")
    return scenarios(max_calls=max_calls, units=units, max_world_size=3).map(
        lambda scenario: (scenario.config, scenario.calls)
    )


@st.composite
def wide_scripts(draw: st.DrawFn) -> tuple[RunConfig, tuple[FitCall, ...]]:
    """Scripts beyond the public strategy: streams of unknown length, unknown token counts,
    drop_last, and one stream read at several batch sizes across calls."""
    streams = []
    for name in ("a", "b"):
        sized = draw(st.booleans())
        samples = draw(st.integers(1, 30)) if sized else None
        tokens = draw(st.one_of(st.none(), st.integers(1, 4)))
        streams.append((name, samples, tokens))
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        name, samples, tokens = draw(st.sampled_from(streams))
        batch = draw(st.integers(1, 6))
        drop = samples is not None and samples >= batch and draw(st.booleans())
        loader = Loader(
            samples=samples, batch_size=batch, drop_last=drop, tokens_per_sample=tokens, name=name
        )
        units = [Unit.BA, Unit.SP] + ([Unit.EP] if samples is not None else [])
        units += [Unit.TOK] if tokens is not None else []
        amount = draw(st.sampled_from(units).flatmap(_amounts))
        kind = draw(st.sampled_from(["duration", "until"]))
        calls.append(
            FitCall(
                loader=loader,
                duration=amount if kind == "duration" else None,
                until=amount if kind == "until" else None,
                reset_time=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    return RunConfig(max_duration=draw(_amounts(Unit.BA))), tuple(calls)
