"""Hypothesis strategies shared by the test suite."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from durations import FitCall, Loader, Progress, RunConfig, Time, Unit

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
    """Loaders small enough to simulate step by step."""
    is_sized = draw(st.booleans()) if sized is None else sized
    batch = draw(st.integers(min_value=1, max_value=12))
    samples = draw(st.integers(min_value=1, max_value=60)) if is_sized else None
    drop_last = samples is not None and samples >= batch and draw(st.booleans())
    has_tokens = draw(st.booleans()) if tokens is None else tokens
    per_sample = draw(st.integers(min_value=1, max_value=7)) if has_tokens else None
    return Loader(
        samples=samples, batch_size=batch, drop_last=drop_last, tokens_per_sample=per_sample
    )


@st.composite
def positions(draw: st.DrawFn, loader: Loader) -> Progress:
    """A position reachable on ``loader``'s data, possibly read with another batch size."""
    batch = draw(st.integers(min_value=1, max_value=12))
    fits = not loader.drop_last or loader.samples is None or batch <= loader.samples
    other = loader.with_batch_size(batch) if fits else loader
    steps = draw(st.integers(min_value=0, max_value=40))
    return simulate.run(Progress(), other, steps)


# -- scripts -------------------------------------------------------------------------------

_STREAMS = ("a", "b", "c")


@st.composite
def stream_loaders(draw: st.DrawFn) -> tuple[Loader, ...]:
    """One to three small named loaders with known tokens (a script's data sets)."""
    count = draw(st.integers(min_value=1, max_value=3))
    loaders = []
    for name in _STREAMS[:count]:
        batch = draw(st.integers(min_value=1, max_value=8))
        samples = draw(st.integers(min_value=1, max_value=40))
        drop_last = samples >= batch and draw(st.booleans())
        loaders.append(
            Loader(
                name=name,
                samples=samples,
                batch_size=batch,
                drop_last=drop_last,
                tokens_per_sample=draw(st.integers(min_value=1, max_value=5)),
            )
        )
    return tuple(loaders)


def _amounts(unit: Unit) -> st.SearchStrategy[Time]:
    if unit is Unit.EP:
        return st.fractions(min_value=0, max_value=3, max_denominator=10).map(
            lambda v: Time(v, unit)
        )
    if unit is Unit.DUR:
        return st.fractions(min_value=0, max_value=1, max_denominator=10).map(
            lambda v: Time(v, unit)
        )
    top = {Unit.BA: 25, Unit.SP: 120, Unit.TOK: 400}[unit]
    return st.integers(min_value=0, max_value=top).map(lambda v: Time(v, unit))


@st.composite
def fit_calls(
    draw: st.DrawFn, loaders: tuple[Loader, ...], *, dur: bool = True, names: bool = True
) -> FitCall:
    loader = draw(st.sampled_from(loaders))
    units = [Unit.BA, Unit.SP, Unit.EP, Unit.TOK] + ([Unit.DUR] if dur else [])
    kind = draw(st.sampled_from(["duration", "duration", "until", "none"]))
    amount = draw(st.sampled_from(units).flatmap(_amounts))
    return FitCall(
        loader=loader,
        duration=amount if kind == "duration" else None,
        until=amount if kind == "until" else None,
        reset_time=draw(st.booleans()) and draw(st.booleans()),
    )


@st.composite
def scripts(draw: st.DrawFn, *, max_calls: int = 4) -> tuple[RunConfig, tuple[FitCall, ...]]:
    """A run configuration with a max_duration, and one to four fit calls."""
    loaders = draw(stream_loaders())
    unit = draw(st.sampled_from([Unit.BA, Unit.SP, Unit.EP, Unit.TOK]))
    max_duration = draw(_amounts(unit))
    calls = draw(st.lists(fit_calls(loaders), min_size=1, max_size=max_calls))
    return RunConfig(max_duration=max_duration), tuple(calls)
