"""Comparing trainers: what each trainer does with a scenario, next to ``durations``' own plan.

Each trainer profile (:mod:`durations.trainers`) translates a scenario into that trainer's own
idiom and emulates it; this module lines the emulated steps up with the plan's steps and says
the differences in words: steps trained, samples read twice, samples never read, errors.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .errors import CompareError, ScheduleError
from .fit import FitCall
from .planner import plan as make_plan
from .plans import Plan
from .scenario import Scenario
from .sharding import sample_at
from .trainers import CallOutcome, Dataset, Translation, Unsupported
from .trainers._outcome import Runs

__all__ = ["TRAINERS", "Comparison", "TrainerOutcome", "compare", "datasets", "on_world_size"]

#: The trainer profiles, in the order they are shown.
TRAINERS = ("composer", "lightning", "transformers", "keras")

#: The most steps a comparison emulates: each profile steps through the run, so its cost grows
#: with the steps (never with the samples they read).
MAX_STEPS = 1_000_000


@attrs.frozen(kw_only=True)
class TrainerOutcome:
    """One trainer's outcome for a scenario: its calls, and how it differs from the plan."""

    trainer: str
    version: str
    supported: bool
    steps: int
    outcomes: tuple[CallOutcome, ...] = ()
    translation: tuple[str, ...] = ()
    differences: tuple[str, ...] = ()
    reason: str | None = None
    #: How the trainer's own schedulers were given the scenario's schedule, or why not.
    schedule: str = ""
    #: The learning rate of every step the trainer trains (a factor of the base learning
    #: rate), in order, and the plan's for the same steps; empty when not modelled.
    rates: tuple[float, ...] = ()
    planned_rates: tuple[float, ...] = ()

    @property
    def agrees(self) -> bool:
        """Whether the trainer trains exactly what the plan does."""
        return self.supported and not self.differences


@attrs.frozen(kw_only=True)
class Comparison:
    """A scenario, ``durations``' own plan of it, and each trainer's outcome.

    With a crash and another world size, ``resumed`` is the plan of the re-run (from the
    checkpoint the first run writes at ``crash_at``, every data-parallel loader read on
    ``world_size`` ranks); the plan the trainers are held to is ``plan``'s first ``crash_at``
    steps, then ``resumed``.
    """

    scenario: Scenario
    plan: Plan
    crash_at: int | None
    trainers: tuple[TrainerOutcome, ...]
    world_size: int | None = None
    resumed: Plan | None = None

    @property
    def total_steps(self) -> int:
        """The steps the plan trains, the re-run's included."""
        if self.resumed is None or self.crash_at is None:
            return self.plan.total_steps
        return self.crash_at + self.resumed.total_steps


def datasets(scenario: Scenario) -> dict[str, Dataset]:
    """Each loader of ``scenario`` as a profile ``Dataset`` with its own id range: the loaders'
    samples one after another, in the scenario's order."""
    result = {}
    offset = 0
    for name, loader in scenario.loaders.items():
        if loader.samples is None:
            raise Unsupported(f"loader {name!r} is a stream; the profiles model sized data sets")
        if loader.mixture is not None:
            raise Unsupported(
                f"loader {name!r} is a mixture of sources; the profiles model one data set a "
                "loader, read in order"
            )
        result[name] = Dataset(samples=loader.samples, offset=offset)
        offset += loader.samples
    return result


def on_world_size(calls: Sequence[FitCall], world_size: int) -> tuple[FitCall, ...]:
    """``calls`` with every data-parallel loader read on ``world_size`` ranks (its per-device
    geometry unchanged); :class:`CompareError` for a loader with no per-device geometry.

    >>> from durations import FitCall, Loader
    >>> job = FitCall(loader=Loader.sharded(samples=101, world_size=2, device_batch_size=10))
    >>> on_world_size([job], 3)[0].loader.batch_size
    30
    """
    moved = []
    for index, call in enumerate(calls):
        if call.loader.sharding is None:
            raise CompareError(
                f"world size {world_size}: loader {call.loader.name!r} of call "
                f"{call.identity(index)!r} gives no per-device geometry; give its table "
                "world_size and device_batch_size instead of batch_size (docs/scenario-files.md)"
            )
        moved.append(attrs.evolve(call, loader=call.loader.with_world_size(world_size)))
    return tuple(moved)


def compare(
    scenario: Scenario,
    *,
    crash_at: int | None = None,
    world_size: int | None = None,
    trainers: Sequence[str] = TRAINERS,
) -> Comparison:
    """Emulate ``scenario`` on each trainer and compare with the plan.

    ``crash_at=k`` kills the job after its k-th optimizer step, counted over the whole script
    (the plan's lifetime step k), and runs the same script again, each trainer resuming as its
    own resume mechanism does from the newest checkpoint its save settings wrote
    (``docs/frameworks.md``, "One crash model"). ``world_size=n`` runs that re-run on ``n``
    processes, every data-parallel loader's per-device geometry unchanged.
    """
    plan = make_plan(scenario.config, scenario.calls)
    if plan.total_steps > MAX_STEPS:
        raise CompareError(
            f"the plan has {plan.total_steps:,} steps: compare emulates each trainer step by "
            f"step, at most {MAX_STEPS:,} steps; scale the scenario down (fewer samples and "
            "the same batches a call, or larger batches): the differences scale with it"
        )
    if crash_at is not None and (isinstance(crash_at, bool) or not isinstance(crash_at, int)):
        raise CompareError(f"crash_at={crash_at!r}: expected a whole number of steps")
    if crash_at is not None and not 0 < crash_at < plan.total_steps:
        raise CompareError(
            f"crash_at={crash_at}: expected a step inside the run, 1 to {plan.total_steps - 1}"
        )
    resumed = None
    if world_size is not None:
        if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
            raise CompareError(f"world_size={world_size!r}: expected a whole number >= 1")
        if crash_at is None:
            raise CompareError(
                f"world_size={world_size}: the re-run's world size needs a re-run; give "
                "crash_at (--crash-at), the step after which the job dies"
            )
        moved = on_world_size(scenario.calls, world_size)
        resumed = make_plan(scenario.config, moved, plan.checkpoint_at(crash_at))
        if crash_at + resumed.total_steps > MAX_STEPS:
            raise CompareError(
                f"the plan on {world_size} ranks has {crash_at + resumed.total_steps:,} steps: "
                f"compare emulates each trainer step by step, at most {MAX_STEPS:,} steps"
            )
    curve = _Curve.of(scenario, plan, crash_at, resumed, world_size)
    results = tuple(
        _one(name, scenario, plan, crash_at, world_size, resumed, curve) for name in trainers
    )
    return Comparison(
        scenario=scenario,
        plan=plan,
        crash_at=crash_at,
        trainers=results,
        world_size=world_size,
        resumed=resumed,
    )


@attrs.frozen
class _Curve:
    """The plan's learning rates, step by step, for the trainers' to be compared with; or why
    they cannot be (``why``)."""

    rates: Callable[[int], tuple[float, ...]] | None
    why: str = ""

    @classmethod
    def of(
        cls,
        scenario: Scenario,
        plan: Plan,
        crash_at: int | None,
        resumed: Plan | None,
        world_size: int | None,
    ) -> _Curve:
        schedule = scenario.schedule
        if schedule is None:
            return cls(None)
        try:
            curve = schedule.resolve(plan, on_extend=scenario.on_extend)
        except ScheduleError as error:
            return cls(None, f"the schedule cannot be placed on the plan: {error}")
        later = curve
        if resumed is not None and crash_at is not None:
            try:
                later = schedule.resolve(resumed, on_extend=scenario.on_extend)
            except ScheduleError as error:
                return cls(
                    None,
                    f"the schedule cannot be placed on the re-run's plan on {world_size} "
                    f"{_processes(world_size or 0)}: {error}",
                )

        def rates(steps: int) -> tuple[float, ...]:
            # Step n uses the factor at lifetime step n - 1; past the plan's end the last one
            # is held.
            found = []
            for step in range(steps):
                placed = later if crash_at is not None and step >= crash_at else curve
                found.append(float(placed.factor(min(step, placed.end))))
            return tuple(found)

        return cls(rates)


#: How a profile's ``Translation.schedule`` says that it gave the trainer no scheduler of the
#: scenario's curve: its learning rates are then not compared.
_NOT_WRITTEN = ("cannot be written", "not modelled")


def _processes(count: int) -> str:
    return "process" if count == 1 else "processes"


def _unsupported(name: str, version: str, why: str) -> TrainerOutcome:
    return TrainerOutcome(trainer=name, version=version, supported=False, steps=0, reason=why)


def _one(
    name: str,
    scenario: Scenario,
    plan: Plan,
    crash_at: int | None,
    world_size: int | None,
    resumed: Plan | None,
    curve: _Curve,
) -> TrainerOutcome:
    if name not in TRAINERS:
        raise CompareError(f"unknown trainer {name!r}; expected one of {', '.join(TRAINERS)}")
    profile: Any = importlib.import_module(f"durations.trainers.{name}")
    version = str(getattr(profile, "VERSION", "?"))
    try:
        data = datasets(scenario)
        _check_world_size(name, profile, scenario)
        translation: Translation[Any] = profile.translate(scenario, data)
    except Unsupported as why:
        return _unsupported(name, version, str(why))
    calls = list(translation.calls)
    notes = translation.notes
    if world_size is not None:
        if world_size > 1 and "world_size" not in attrs.fields_dict(profile.Call):
            return _unsupported(
                name,
                version,
                f"the {name} profile models one process (no multi-process run of {name} was "
                f"recorded), so it cannot say what {world_size} ranks read",
            )
        notes = (*notes, f"re-run on {world_size} {_processes(world_size)}")
    try:
        if crash_at is not None:
            calls = _crashed_then_rerun(profile, translation, crash_at, world_size)
        outcomes = tuple(profile.simulate(calls))
    except Unsupported as why:
        return _unsupported(name, version, str(why))
    except ValueError as error:
        # A profile refuses what it does not model (its Call's checks, a scheduler argument it
        # has no formula for): the trainer cannot be said, the others still are.
        return _unsupported(name, version, f"the {name} profile does not model it: {error}")
    found = differences(plan, outcomes, data, crash_at=crash_at, resumed=resumed)
    rates: tuple[float, ...] = ()
    planned: tuple[float, ...] = ()
    steps = sum(o.steps for o in outcomes)
    schedule = translation.schedule
    if curve.why and scenario.schedule is not None:
        schedule = f"not compared: {curve.why}"
    written = not schedule.startswith(_NOT_WRITTEN)
    measured = steps and all(len(o.rates) == o.steps for o in outcomes)
    if curve.rates is not None and written and measured:
        rates = tuple(rate for o in outcomes for rate in o.rates)
        planned = curve.rates(len(rates))
        found.extend(rate_differences(rates, planned, crash_at=crash_at))
    return TrainerOutcome(
        trainer=name,
        version=version,
        supported=True,
        steps=steps,
        outcomes=outcomes,
        translation=notes,
        differences=tuple(found),
        schedule=schedule,
        rates=rates,
        planned_rates=planned,
    )


def rate_differences(
    rates: Sequence[float], planned: Sequence[float], *, crash_at: int | None = None
) -> list[str]:
    """How a trainer's learning rates differ from the plan's, step by step, in words: how many
    steps differ, the first and the largest difference, and the steps around a crash (empty
    when they agree to 1e-9 of the larger).

    >>> rate_differences([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
    []
    >>> for line in rate_differences([0.0, 0.5, 0.25], [0.0, 0.5, 1.0], crash_at=2):
    ...     print(line)
    learning rate differs at 1 of 3 steps: first at step 3 (0.25 where the plan has 1)
    learning rate across the crash, steps 2 to 3: 0.5, 0.25 where the plan has 0.5, 1
    >>> len(rate_differences([9.0, 9.0, 9.0], [0.0, 0.5, 1.0], crash_at=2))  # not the crash's
    1
    """
    wrong = [
        step
        for step, (got, want) in enumerate(zip(rates, planned, strict=True))
        if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
    ]
    if not wrong:
        return []
    first = wrong[0]
    largest = max(wrong, key=lambda step: abs(rates[step] - planned[step]))
    said = (
        f"learning rate differs at {len(wrong):,} of {len(rates):,} steps: first at step "
        f"{first + 1:,} ({_rate(rates[first])} where the plan has {_rate(planned[first])})"
    )
    if largest != first:
        said += (
            f", most at step {largest + 1:,} ({_rate(rates[largest])} where the plan has "
            f"{_rate(planned[largest])})"
        )
    found = [said]
    if crash_at is not None and 0 < crash_at < len(rates):
        # The steps around the crash are shown when the rates begin to differ there: the step
        # before them agrees, one of them does not.
        around = range(crash_at - 1, min(crash_at + 2, len(rates)))
        before = around.start - 1
        agreed = before < 0 or before not in set(wrong)
        if agreed and any(step in around for step in wrong):
            found.append(
                f"learning rate across the crash, steps {around.start + 1:,} to {around.stop:,}: "
                f"{', '.join(_rate(rates[k]) for k in around)} where the plan has "
                f"{', '.join(_rate(planned[k]) for k in around)}"
            )
    return found


def _rate(value: float) -> str:
    return f"{value:.6g}"


def _check_world_size(name: str, profile: Any, scenario: Scenario) -> None:
    """:class:`Unsupported` for a data-parallel scenario on a profile of one process."""
    sharded = [loader for loader in scenario.loaders.values() if loader.world_size > 1]
    if sharded and "world_size" not in attrs.fields_dict(profile.Call):
        world = max(loader.world_size for loader in sharded)
        raise Unsupported(
            f"the {name} profile models one process (no multi-process run of {name} was "
            f"recorded), so it cannot say what {world} ranks read"
        )


def _crashed_then_rerun(
    profile: Any, translation: Translation[Any], crash_at: int, world_size: int | None
) -> list[Any]:
    """The script killed after its ``crash_at``-th optimizer step (counted over all its calls),
    then the same script run again (on ``world_size`` processes, when given)."""
    calls = list(translation.calls)
    if translation.crash_counter == "call":
        # Each call's trainer counts from where it starts: the kill comes before the call
        # that would take step crash_at + 1, once it has taken crash_at - trained of them.
        trained = 0
        for index, (call, done) in enumerate(zip(calls, profile.simulate(calls), strict=True)):
            if trained <= crash_at < trained + done.steps:
                calls[index] = attrs.evolve(call, crash_at=crash_at - trained)
                break
            trained += done.steps
    else:
        calls = [
            attrs.evolve(call, crash_at=crash_at)
            if translation.crash_on == "all" or call.fresh
            else call
            for call in calls
        ]
    first = profile.simulate(calls)
    crashed = next((i for i, outcome in enumerate(first) if outcome.crashed), None)
    if crashed is None:
        if sum(outcome.steps for outcome in first) > crash_at:
            # It trained past step crash_at without being killed: its counter is not the
            # script's (Composer's timestamp restarts with reset_time).
            raise Unsupported(
                f"the kill after step {crash_at:,} cannot be placed: the trainer's step counter "
                "is not the script's lifetime step here (it restarts with reset_time)"
            )
        return calls
    rerun = list(translation.rerun)
    if world_size is not None and "world_size" in attrs.fields_dict(profile.Call):
        rerun = [
            attrs.evolve(call, world_size=world_size) if call.fresh else call for call in rerun
        ]
    return [*calls[: crashed + 1], *rerun]


def differences(
    plan: Plan,
    outcomes: Sequence[CallOutcome],
    data: Mapping[str, Dataset],
    *,
    crash_at: int | None = None,
    resumed: Plan | None = None,
) -> list[str]:
    """The ways ``outcomes`` differ from ``plan``, in words (empty when they agree); with
    ``resumed``, from ``plan``'s first ``crash_at`` steps, then ``resumed``.

    The reads on both sides are runs of consecutive sample ids, so the cost grows with the steps
    and their ranges, never with the samples they read.
    """
    found: list[str] = []
    for outcome in outcomes:
        if outcome.error is not None:
            found.append(f"raises {outcome.error.type}: {outcome.error.message}")
    total = plan.total_steps
    if resumed is not None and crash_at is not None:
        planned = _runs([*_planned_reads(plan, data, crash_at), *_planned_reads(resumed, data)])
        total = crash_at + resumed.total_steps
    else:
        planned = _runs(_planned_reads(plan, data))
    trained = _runs(batch for outcome in outcomes for batch in outcome.batches)
    steps = sum(outcome.steps for outcome in outcomes)
    if steps != total:
        crashed = crash_at is not None and any(outcome.crashed for outcome in outcomes)
        crash = f" (with a crash after step {crash_at:,})" if crashed else ""
        found.append(f"trains {steps:,} steps{crash} where the plan has {total:,}")
    loaders = sorted((dataset.offset, name) for name, dataset in data.items())
    groups: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    cuts = [offset for offset, _ in loaders]
    for start, stop, got, want in _multiplicities(trained, planned, cuts=cuts):
        place = bisect.bisect_right(loaders, (start, "\U0010ffff")) - 1
        offset = loaders[place][0]
        groups.setdefault((place, got, want), []).append((start - offset, stop - offset))
    ordered = sorted(groups.items(), key=lambda item: (item[0][0], item[1][0]))
    for (place, got, want), spans in ordered:
        label = f"{_ranges(spans)} of {loaders[place][1]!r}"
        if got == 0:
            found.append(f"never reads {label} (the plan reads them {_times(want)})")
        elif want == 0:
            found.append(f"reads {label} {_times(got)}, which the plan never reads")
        else:
            found.append(f"reads {label} {_times(got)} where the plan reads them {_times(want)}")
    if not groups and steps == total and trained != planned:
        found.append("reads the planned samples in another order")
    elif (
        not groups
        and steps == total
        and _sizes(outcomes) != _planned_sizes(plan, crash_at, resumed)
    ):
        found.append("reads the planned samples in steps of other sizes")
    return found


def _sizes(outcomes: Sequence[CallOutcome]) -> list[int]:
    return [len(batch) for outcome in outcomes for batch in outcome.batches]


def _planned_sizes(plan: Plan, crash_at: int | None, resumed: Plan | None) -> list[int]:
    """The samples each step of the plan reads (the first ``crash_at`` of ``plan``, then
    ``resumed``'s, when given)."""
    if resumed is None or crash_at is None:
        return [read.samples for segment in plan.segments for read in segment.reads()]
    first = [read.samples for segment in plan.segments for read in segment.reads()]
    return first[:crash_at] + [read.samples for s in resumed.segments for read in s.reads()]


def _runs(reads: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """``reads`` (each a run of ids or a tuple of them) as maximal runs ``[start, stop)`` of
    consecutive ids, in reading order.

    >>> _runs([range(0, 5), range(5, 8), (9, 8)])
    [(0, 8), (9, 10), (8, 9)]
    """
    runs: list[tuple[int, int]] = []
    for ids in reads:
        pieces: Iterable[tuple[int, int]]
        if isinstance(ids, Runs):
            pieces = [(run.start, run.stop) for run in ids.ranges if run]
        elif isinstance(ids, range) and ids.step == 1:
            pieces = [(ids.start, ids.stop)] if ids else []
        else:
            pieces = ((sample, sample + 1) for sample in ids)
        for start, stop in pieces:
            if runs and runs[-1][1] == start:
                runs[-1] = (runs[-1][0], stop)
            else:
                runs.append((start, stop))
    return runs


def _multiplicities(
    got: Sequence[tuple[int, int]], want: Sequence[tuple[int, int]], *, cuts: Iterable[int] = ()
) -> list[tuple[int, int, int, int]]:
    """The spans ``[start, stop)`` where the two sides read a sample a different number of
    times, with both numbers (a sweep over the runs' ends); no span crosses a ``cut`` (where
    one loader's ids end and the next one's begin).

    >>> _multiplicities([(0, 10), (0, 3)], [(0, 10)])
    [(0, 3, 2, 1)]
    >>> _multiplicities([(0, 10)], [], cuts=[5])
    [(0, 5, 1, 0), (5, 10, 1, 0)]
    """
    cut = set(cuts)
    events: dict[int, list[int]] = {place: [0, 0] for place in cut}
    for side, runs in enumerate((got, want)):
        for start, stop in runs:
            events.setdefault(start, [0, 0])[side] += 1
            events.setdefault(stop, [0, 0])[side] -= 1
    spans: list[tuple[int, int, int, int]] = []
    counts = [0, 0]
    places = sorted(events)
    for here, there in itertools.pairwise(places):
        counts[0] += events[here][0]
        counts[1] += events[here][1]
        if counts[0] != counts[1]:
            joins = spans and spans[-1][1] == here and here not in cut
            if joins and spans[-1][2:] == tuple(counts):
                spans[-1] = (spans[-1][0], there, counts[0], counts[1])
            else:
                spans.append((here, there, counts[0], counts[1]))
    return spans


def _planned_reads(
    plan: Plan, data: Mapping[str, Dataset], steps: int | None = None
) -> list[range]:
    """The sample ids the plan's first ``steps`` steps (default: all) read, in order (a
    data-parallel epoch's positions past the data's end read its start again:
    :func:`durations.sharding.sample_at`)."""
    pieces: list[range] = []
    left = plan.total_steps if steps is None else steps
    for segment in plan.segments:
        offset = data[segment.loader.name or ""].offset
        samples = segment.loader.samples
        for read in segment.reads():
            if left == 0:
                return pieces
            left -= 1
            start, stop = read.start, read.stop
            if samples is not None and stop > samples:
                pieces.extend(_wrapped(start, stop, samples, offset))
            else:
                pieces.append(range(offset + start, offset + stop))
    return pieces


def _wrapped(start: int, stop: int, samples: int, offset: int) -> Iterator[range]:
    """Positions ``[start, stop)`` of an evened epoch, as runs of sample ids.

    >>> [tuple(r) for r in _wrapped(5, 12, 7, 0)]
    [(5, 6), (0, 1, 2, 3, 4)]
    """
    position = start
    while position < stop:
        place = sample_at(position, samples)
        length = min(stop - position, samples - place)
        yield range(offset + place, offset + place + length)
        position += length


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _ranges(spans: list[tuple[int, int]]) -> str:
    """Spans of sample indices in words, touching spans joined.

    >>> _ranges([(0, 30), (30, 31), (70, 71)])
    'samples 0-30, 70'
    """
    runs: list[tuple[int, int]] = []
    for start, stop in spans:
        if runs and start == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], stop - 1)
        else:
            runs.append((start, stop - 1))
    words = [f"{a:,}-{b:,}" if a != b else f"{a:,}" for a, b in runs]
    noun = "sample" if runs == [(runs[0][0], runs[0][0])] else "samples"
    return f"{noun} {', '.join(words)}"
