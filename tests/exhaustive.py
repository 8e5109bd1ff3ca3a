"""Bounded-exhaustive checking of the planner (the small-scope hypothesis): every script of a
small scope, every crash point of its plan, every data policy and a changed batch size (or
number of ranks) at every resume, checked against the relations of ``docs/semantics.md``.

Run it with ``python -m tests.exhaustive --scope ci`` (what ``tests/test_exhaustive.py`` runs)
or ``--scope large``; ``--write-docs`` rewrites the figures block of ``docs/reliability.md``.
Each scope is the union of the parts listed in :data:`SCOPES`: one product each, enumerated
whole, scripts counted once. The checks use ``assert``: do not run it under ``python -O``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path

import attrs

from durations import (
    Action,
    Checkpoint,
    DataPolicy,
    FitCall,
    Loader,
    Plan,
    Progress,
    RunConfig,
    Time,
    Unit,
    plan,
)
from durations.errors import DurationsError
from durations.plans import resolve_dur
from durations.sharding import Padding

from . import simulate
from .test_planner_properties import _policy_ranges_hold, _same_remaining

Script = tuple[RunConfig, tuple[FitCall, ...]]

#: Whole loaders before names and token counts: (samples, batch_size, drop_last), or a sharded
#: geometry (samples, world_size, device_batch_size, padding, drop_last).
Geometry = tuple[int, int, bool] | tuple[int, int, int, str, bool]


@attrs.frozen
class Part:
    """One product of the scope: scripts of ``1..max_calls`` calls on one or two loaders of
    ``geometries`` (the second a different stream, or the same stream at another batch size),
    each call ``until=T``, ``duration=T`` or neither, with ``reset_time`` both ways; ``T`` in
    ``whole`` for every unit, plus ``fractions`` for ``ep`` and ``dur``. ``max_duration`` is
    each of ``limits`` when a call needs it (neither, or ``dur``), and ``None`` as well; else
    ``None`` (it is then read by nothing). ``tokens_per_sample`` is 1 and 2 for each stream
    when a target is in ``tok``; else 1 (it only scales the token counters). ``reset_time`` of
    every call is each of ``resets``."""

    name: str
    max_calls: int
    geometries: tuple[Geometry, ...]
    whole: tuple[int, ...]
    fractions: tuple[Fraction, ...]
    units: tuple[Unit, ...]
    limits: tuple[Time, ...]
    two_loaders: bool = True
    resets: tuple[bool, ...] = (False, True)


def plain(max_samples: int, batch_sizes: Sequence[int]) -> tuple[Geometry, ...]:
    """Every one-process geometry: samples 1..max_samples, each batch size, drop_last both
    ways (except where an epoch would train nothing)."""
    return tuple(
        (samples, batch, drop)
        for samples in range(1, max_samples + 1)
        for batch in batch_sizes
        for drop in (False, True)
        if not (drop and samples < batch)
    )


def sharded(max_samples: int, device_batch_sizes: Sequence[int]) -> tuple[Geometry, ...]:
    """Every data-parallel geometry on 2 ranks: samples 1..max_samples, each micro-batch size,
    every padding, drop_last both ways (except where an epoch would train nothing)."""
    found: list[Geometry] = []
    for samples, micro, padding, drop in itertools.product(
        range(1, max_samples + 1), device_batch_sizes, [p.value for p in Padding], (False, True)
    ):
        try:
            Loader.sharded(
                samples=samples,
                world_size=2,
                device_batch_size=micro,
                padding=padding,
                drop_last=drop,
            )
        except DurationsError:
            continue
        found.append((samples, 2, micro, padding, drop))
    return tuple(found)


_ALL_UNITS = (Unit.BA, Unit.SP, Unit.TOK, Unit.EP, Unit.DUR)
_HALVES = (Fraction(1, 2), Fraction(3, 2))


def _limits(values: Sequence[int]) -> tuple[Time, ...]:
    units = (Unit.BA, Unit.SP, Unit.TOK, Unit.EP)
    return (*(Time(v, u) for u in units for v in values), Time(Fraction(3, 2), Unit.EP))


SCOPES: dict[str, tuple[Part, ...]] = {
    "ci": (
        Part(
            "every one-process geometry of up to 4 samples, one call, every target",
            max_calls=1,
            geometries=plain(4, (1, 2, 3)),
            whole=(0, 1, 2, 3),
            fractions=_HALVES,
            units=_ALL_UNITS,
            limits=(Time(2, Unit.BA), Time(2, Unit.TOK), Time(Fraction(3, 2), Unit.EP)),
            two_loaders=False,
        ),
        Part(
            "two calls on one or two loaders (two streams, or one at two batch sizes)",
            max_calls=2,
            geometries=((3, 2, False), (3, 1, False)),
            whole=(1,),
            fractions=(Fraction(1, 2),),
            units=(Unit.BA, Unit.EP),
            limits=(Time(2, Unit.BA),),
        ),
    ),
    "large": (
        Part(
            "every one-process geometry of up to 5 samples, one call, every target",
            max_calls=1,
            geometries=plain(5, (1, 2, 3)),
            whole=(0, 1, 2, 3),
            fractions=_HALVES,
            units=_ALL_UNITS,
            limits=_limits((1, 3)),
            two_loaders=False,
        ),
        Part(
            "every data-parallel geometry of up to 5 samples on 2 ranks, one call, every target",
            max_calls=1,
            geometries=sharded(5, (1, 2)),
            whole=(0, 1, 2, 3),
            fractions=_HALVES,
            units=_ALL_UNITS,
            limits=_limits((1, 3)),
            two_loaders=False,
        ),
        Part(
            "two calls on every pair of one-process geometries of up to 4 samples",
            max_calls=2,
            geometries=plain(4, (1, 2, 3)),
            whole=(1,),
            fractions=(Fraction(1, 2),),
            units=(Unit.BA, Unit.EP),
            limits=(),
            resets=(False,),
        ),
        Part(
            "two calls on one or two loaders (one of them data-parallel), every unit",
            max_calls=2,
            geometries=((3, 2, False), (2, 2, 1, "cycle", False)),
            whole=(0, 2),
            fractions=_HALVES,
            units=_ALL_UNITS,
            limits=(Time(2, Unit.BA), Time(Fraction(3, 2), Unit.EP)),
        ),
        Part(
            "three calls on one or two loaders",
            max_calls=3,
            geometries=((3, 2, False), (2, 1, True)),
            whole=(1,),
            fractions=(Fraction(1, 2),),
            units=(Unit.BA, Unit.SP, Unit.EP),
            limits=(Time(2, Unit.BA),),
        ),
    ),
}


# -- enumeration ------------------------------------------------------------------------------


def _build(geometry: Geometry, name: str, tokens: int) -> Loader:
    if len(geometry) == 3:
        samples, batch, drop = geometry
        return Loader(
            samples=samples, batch_size=batch, drop_last=drop, tokens_per_sample=tokens, name=name
        )
    samples, world, micro, padding, drop = geometry
    return Loader.sharded(
        samples=samples,
        world_size=world,
        device_batch_size=micro,
        padding=padding,
        drop_last=drop,
        tokens_per_sample=tokens,
        name=name,
    )


def _requests(part: Part) -> list[tuple[str, Time | None]]:
    """What one call asks for: ``("until", T)``, ``("duration", T)`` or ``("neither", None)``."""
    targets = [Time(v, u) for u in part.units for v in part.whole]
    targets += [Time(v, u) for u in part.units if u in (Unit.EP, Unit.DUR) for v in part.fractions]
    return [(form, t) for form in ("until", "duration") for t in targets] + [("neither", None)]


def _pairs(part: Part) -> Iterator[tuple[Geometry, Geometry | None, bool]]:
    """The loaders of a script: one geometry; or two, the second a different stream (``False``)
    or the same stream at another batch size or number of ranks (``True``)."""
    for first in part.geometries:
        yield first, None, False
        if not part.two_loaders:
            continue
        for second in part.geometries:
            yield first, second, False
            same = len(first) == len(second) and first[0] == second[0] and first[-1] == second[-1]
            if same and first != second and first[3:4] == second[3:4]:  # padding too
                yield first, second, True


def scripts(part: Part) -> Iterator[Script]:
    """Every script of ``part``, each once (loaders named in order of first use)."""
    requests = _requests(part)
    for first, second, same_stream in _pairs(part):
        for count in range(1, part.max_calls + 1):
            # Which loader each call reads, the first call reading the first loader.
            patterns = [
                (0, *rest)
                for rest in itertools.product((0, 1) if second else (0,), repeat=count - 1)
                if second is None or 1 in rest
            ]
            for pattern in patterns:
                for chosen in itertools.product(requests, repeat=count):
                    yield from _variants(part, first, second, same_stream, pattern, chosen)


def _variants(
    part: Part,
    first: Geometry,
    second: Geometry | None,
    same_stream: bool,
    pattern: tuple[int, ...],
    chosen: tuple[tuple[str, Time | None], ...],
) -> Iterator[Script]:
    units = {t.unit for _, t in chosen if t is not None}
    needs_limit = "neither" in {form for form, _ in chosen} or Unit.DUR in units
    limits: list[Time | None] = [None, *part.limits] if needs_limit else [None]
    streams = 1 if second is None or same_stream else 2
    for limit in limits:
        has_tok = Unit.TOK in units or (limit is not None and limit.unit is Unit.TOK)
        for tokens in itertools.product((1, 2) if has_tok else (1,), repeat=streams):
            loaders = [_build(first, "a", tokens[0])]
            if second is not None:
                loaders.append(_build(second, "a" if same_stream else "b", tokens[-1]))
            for resets in itertools.product(part.resets, repeat=len(chosen)):
                calls = tuple(
                    FitCall(
                        loader=loaders[which],
                        duration=target if form == "duration" else None,
                        until=target if form == "until" else None,
                        reset_time=reset,
                    )
                    for which, (form, target), reset in zip(pattern, chosen, resets, strict=True)
                )
                yield RunConfig(max_duration=limit), calls


# -- the relations ----------------------------------------------------------------------------


@attrs.define
class Tally:
    """What a run checked."""

    scripts: int = 0
    crash_points: int = 0
    plans: int = 0
    #: Scripts whose plan has an error diagnostic (a call that cannot be planned): rule 16
    #: and rule 15 exempt them, every other relation is checked.
    with_errors: int = 0
    #: Plans refused with a DurationsError.
    refused: int = 0
    #: Changed geometries the library refuses to build (an epoch that would train nothing).
    impossible: int = 0
    seconds: float = 0.0


#: Steps the simulator has taken for the script being checked: its plans from every crash point
#: walk the same positions again, so each is simulated once.
_walked: dict[tuple[Progress, Loader], Progress] = {}


def _one_step(position: Progress, loader: Loader) -> Progress:
    key = (position, loader)
    after = _walked.get(key)
    if after is None:
        after = _walked[key] = simulate.one_step(position, loader)
    return after


def _steps_until(position: Progress, target: Time, loader: Loader, since: Progress) -> int:
    """``simulate.steps_until``, one simulated step at a time, each step simulated once."""
    position, steps = simulate.normalize(position, loader), 0
    while not simulate.reached(position, target, loader, since):
        assert steps < 10_000, "the simulator did not reach the target"
        position, steps = _one_step(position, loader), steps + 1
    return steps


def _consistent(p: Plan) -> None:
    """A plan trains a whole, consistent amount: segments follow each other (the lifetime
    counters never jump between calls), each trains steps >= 0 exactly to the first step
    boundary at or past its target (rule 2) as the step-by-step simulator reads its loader,
    and the plan's position after every step inside a call, and where the call stops, is the
    simulator's."""
    assert p.total_steps >= 0
    step, position = 0, p.start
    for segment in p.segments:
        if segment.action is Action.SKIP:
            continue
        assert segment.start_step == step
        assert segment.steps >= 0
        start = segment.start
        assert (start.batch, start.sample, start.token) == (
            position.batch,
            position.sample,
            position.token,
        )
        if not segment.failed:
            expected = _steps_until(start, segment.target, segment.loader, segment.origin)
            assert segment.steps == expected, (segment.name, segment.steps, expected)
        walked = start
        for j in range(1, segment.steps + 1):
            walked = _one_step(walked, segment.loader)
            if j < segment.steps:  # after the last, progress_at passes empty calls
                assert p.progress_at(segment.start_step + j) == walked
        assert segment.stop == walked
        step, position = segment.stop_step, segment.stop
    assert step == p.total_steps
    assert p.stop == position


def _targets_as_asked(config: RunConfig, p: Plan) -> None:
    """Rule 1: ``until=T`` stops at ``T``, neither at ``max_duration``, ``duration=D`` at ``D``
    after where the call starts or after the target it anchors on (rule 3); ``dur`` is a
    fraction of ``max_duration`` (rule 6)."""
    previous: Time | None = None
    for segment, call in zip(p.segments, p.calls, strict=True):
        if segment.failed:
            continue
        if call.until is not None:
            asked = call.until
            if asked.unit is Unit.DUR:
                asked = resolve_dur(asked, config.max_duration)
            assert segment.target == asked
        elif call.duration is not None:
            amount = call.duration
            if amount.unit is Unit.DUR:
                amount = resolve_dur(amount, config.max_duration)
            here = segment.start.time_in(amount.unit, loader=segment.loader, since=segment.origin)
            anchored = previous is not None and previous.unit is amount.unit
            assert segment.target == here + amount or (
                anchored and previous is not None and segment.target == previous + amount
            )
        else:
            assert segment.target == config.max_duration
        previous = segment.entry.anchor


def _first_training(p: Plan) -> int | None:
    return next((s.index for s in p.segments if s.action is not Action.SKIP), None)


def _elastic(at: Checkpoint, resumed: Plan) -> None:
    """Rules 12 and 18: a resumed call at another batch size or number of ranks keeps the data
    position in samples: it starts at the checkpoint's position, or at the next epoch when the
    new geometry has nothing left to read in this one; and it says so."""
    index = _first_training(resumed)
    if index is None:
        return
    segment = resumed.segments[index]
    if segment.action is not Action.RESUME or segment.abandoned is not None or segment.failed:
        return
    entry = segment.entry
    if not entry.loader.same_stream(segment.loader):
        return
    saved = at.progress.normalized(entry.loader)
    left = segment.loader.samples_left_in_epoch(saved.sample_in_epoch)
    expected = saved.close_epoch() if saved.sample_in_epoch and not left else saved
    assert segment.start == expected, (segment.start, expected)
    if entry.loader.batch_size != segment.loader.batch_size:
        assert "batch-size-changed" in [d.code for d in segment.diagnostics]


def _changed(loader: Loader, choice: int) -> Loader:
    """The loader at the ``choice``-th other batch size of 1, 2, 3; a data-parallel one on 1
    or 3 ranks instead (the ``choice``-th)."""
    if loader.sharding is None:
        return loader.with_batch_size([b for b in (1, 2, 3) if b != loader.batch_size][choice])
    return loader.with_world_size([w for w in (1, 3) if w != loader.world_size][choice])


def _elastic_variants(calls: tuple[FitCall, ...]) -> Iterator[tuple[FitCall, ...] | None]:
    """The script with every call's loader changed alike, both ways: ``None`` for a geometry
    the library refuses with a ``DurationsError`` (an epoch that would train nothing)."""
    for choice in (0, 1):
        try:
            yield tuple(attrs.evolve(call, loader=_changed(call.loader, choice)) for call in calls)
        except DurationsError:
            yield None


def check(config: RunConfig, calls: tuple[FitCall, ...], tally: Tally) -> None:
    """Every relation on one script; an ``AssertionError`` names the first broken one."""
    _walked.clear()
    original = plan(config, calls)
    tally.plans += 1
    _consistent(original)
    _targets_as_asked(config, original)
    tally.with_errors += not original.ok
    elastic = [variant for variant in _elastic_variants(calls) if variant is not None]
    tally.impossible += 2 - len(elastic)
    for k in range(original.total_steps + 1):
        at = original.checkpoint_at(k)
        resumed = plan(config, calls, at)
        tally.plans += 1
        tally.crash_points += 1
        if original.ok:  # rule 16; a call that cannot be planned is its documented exception
            _same_remaining(original, k, resumed)
        _consistent(resumed)
        if at.progress.sample_in_epoch > 0:  # rule 11: a policy acts inside an epoch only
            for policy in (DataPolicy.REPLAY_EPOCH, DataPolicy.NEXT_EPOCH):
                try:
                    other = plan(attrs.evolve(config, data=policy), calls, at)
                except DurationsError:
                    tally.refused += 1
                    continue
                tally.plans += 1
                _consistent(other)
                _policy_ranges_hold(at, resumed, other, policy)
        for variant in elastic:
            try:
                moved = plan(config, variant, at)
            except DurationsError:
                tally.refused += 1
                continue
            tally.plans += 1
            _consistent(moved)
            _elastic(at, moved)
    if original.ok:  # rule 15: a finished run trains nothing, however often it is re-run
        final = original.checkpoint_at(original.total_steps)
        for _ in range(2):
            again = plan(config, calls, final)
            tally.plans += 1
            assert again.total_steps == 0
            assert again.stop == original.stop
            assert "run-complete" in [d.code for d in again.diagnostics]
            assert all(s.action is Action.SKIP for s in again.segments)
            final = again.checkpoint_at(0)


def describe(config: RunConfig, calls: Sequence[FitCall]) -> str:
    """A script as Python source, to paste into a regression test."""
    lines = [f"plan({config!r}, ["]
    lines += [f"    {call!r}," for call in calls]
    return "\n".join([*lines, "])"])


def run(scope: str, *, limit: int | None = None, progress: bool = False) -> Tally:
    """Check every script of ``scope`` (the first ``limit`` only, when given); with
    ``progress``, say on stderr how far it is every 10,000 scripts."""
    tally = Tally()
    began = time.perf_counter()
    seen: set[Script] = set()
    for part in SCOPES[scope]:
        for config, calls in scripts(part):
            if (config, calls) in seen:
                continue
            seen.add((config, calls))
            if limit is not None and tally.scripts >= limit:
                break
            try:
                check(config, calls, tally)
            except AssertionError as error:
                raise AssertionError(
                    f"relation broken on this script:\n{describe(config, calls)}\n{error}"
                ) from error
            tally.scripts += 1
            if progress and tally.scripts % 10_000 == 0:
                print(f"{tally.scripts:,} scripts ({part.name})", file=sys.stderr, flush=True)
    tally.seconds = time.perf_counter() - began
    return tally


# -- figures ----------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"
BEGIN = "<!-- figures: begin (python -m tests.exhaustive --scope {scope} --write-docs) -->"
END = "<!-- figures: end ({scope}) -->"


def figures(scope: str, tally: Tally) -> str:
    """The lines the doc shows for ``scope``: counts, then the time of this run."""
    parts = "; ".join(part.name for part in SCOPES[scope])
    return "\n".join(
        [
            f"- scope `{scope}` ({parts})",
            f"- scripts enumerated: {tally.scripts:,}",
            f"- crash points checked: {tally.crash_points:,}",
            f"- plans checked: {tally.plans:,}",
            f"- scripts with a call that cannot be planned: {tally.with_errors:,}",
            f"- plans refused with a DurationsError: {tally.refused:,}",
            f"- changed geometries refused as impossible: {tally.impossible:,}",
            f"- time: {tally.seconds:.1f} s (one process, on this project's 2-core machine)",
        ]
    )


FIGURES = re.compile(
    r"- scope `(?P<scope>\w+)` \(.*\)\n"
    r"- scripts enumerated: (?P<scripts>[0-9,]+)\n"
    r"- crash points checked: (?P<crash_points>[0-9,]+)\n"
    r"- plans checked: (?P<plans>[0-9,]+)\n"
    r"- scripts with a call that cannot be planned: (?P<with_errors>[0-9,]+)\n"
    r"- plans refused with a DurationsError: (?P<refused>[0-9,]+)\n"
    r"- changed geometries refused as impossible: (?P<impossible>[0-9,]+)\n"
    r"- time: [0-9.]+ s \(.*\)"
)


def write_docs(scope: str, tally: Tally, doc: Path = DOC) -> None:
    """Replace the marked figures block of ``scope`` in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    begin, end = BEGIN.format(scope=scope), END.format(scope=scope)
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise SystemExit(f"{doc}: no block between {begin!r} and {end!r}")
    rest = rest.partition(end)[2]
    doc.write_text(f"{head}{begin}\n{figures(scope, tally)}\n{end}{rest}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.exhaustive", description=__doc__)
    parser.add_argument("--scope", choices=sorted(SCOPES), default="ci")
    parser.add_argument("--limit", type=int, help="check only the first LIMIT scripts")
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite the figures block of the doc"
    )
    args = parser.parse_args(argv)
    tally = run(args.scope, limit=args.limit, progress=True)
    print(figures(args.scope, tally))
    if args.write_docs:
        write_docs(args.scope, tally)
    return 0


if __name__ == "__main__":
    sys.exit(main())
