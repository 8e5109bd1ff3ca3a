"""Comparing trainers: what each trainer does with a scenario, next to ``durations``' own plan.

Each trainer profile (:mod:`durations.trainers`) translates a scenario into that trainer's own
idiom and emulates it; this module lines the emulated steps up with the plan's steps and says
the differences in words: steps trained, samples read twice, samples never read, errors.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .planner import plan as make_plan
from .plans import Plan
from .scenario import Scenario
from .sharding import sample_at
from .trainers import CallOutcome, Dataset, Translation, Unsupported

__all__ = ["TRAINERS", "Comparison", "TrainerOutcome", "compare", "datasets"]

#: The trainer profiles, in the order they are shown.
TRAINERS = ("composer", "lightning", "transformers", "keras")

#: Sample ids are offset per loader so that every loader's samples are told apart.
OFFSET = 1_000_000


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

    @property
    def agrees(self) -> bool:
        """Whether the trainer trains exactly what the plan does."""
        return self.supported and not self.differences


@attrs.frozen(kw_only=True)
class Comparison:
    """A scenario, ``durations``' own plan of it, and each trainer's outcome."""

    scenario: Scenario
    plan: Plan
    crash_at: int | None
    trainers: tuple[TrainerOutcome, ...]


def datasets(scenario: Scenario) -> dict[str, Dataset]:
    """Each loader of ``scenario`` as a profile ``Dataset`` with its own id range."""
    result = {}
    for index, (name, loader) in enumerate(scenario.loaders.items()):
        if loader.samples is None:
            raise Unsupported(f"loader {name!r} is a stream; the profiles model sized data sets")
        result[name] = Dataset(samples=loader.samples, offset=index * OFFSET)
    return result


def compare(
    scenario: Scenario,
    *,
    crash_at: int | None = None,
    trainers: Sequence[str] = TRAINERS,
) -> Comparison:
    """Emulate ``scenario`` on each trainer (crashing after step ``crash_at`` and re-running the
    same script, when given) and compare with the plan."""
    plan = make_plan(scenario.config, scenario.calls)
    if crash_at is not None and not 0 < crash_at < plan.total_steps:
        raise ValueError(
            f"crash_at={crash_at}: expected a step inside the run, 1 to {plan.total_steps - 1}"
        )
    results = tuple(_one(name, scenario, plan, crash_at) for name in trainers)
    return Comparison(scenario=scenario, plan=plan, crash_at=crash_at, trainers=results)


def _one(name: str, scenario: Scenario, plan: Plan, crash_at: int | None) -> TrainerOutcome:
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}; expected one of {', '.join(TRAINERS)}")
    profile: Any = importlib.import_module(f"durations.trainers.{name}")
    version = str(getattr(profile, "VERSION", "?"))
    try:
        data = datasets(scenario)
        _check_world_size(name, profile, scenario)
        translation: Translation[Any] = profile.translate(scenario, data)
    except Unsupported as why:
        return TrainerOutcome(
            trainer=name, version=version, supported=False, steps=0, reason=str(why)
        )
    calls = list(translation.calls)
    if crash_at is not None:
        calls = _crashed_then_rerun(profile, translation, crash_at)
    outcomes = tuple(profile.simulate(calls))
    return TrainerOutcome(
        trainer=name,
        version=version,
        supported=True,
        steps=sum(o.steps for o in outcomes),
        outcomes=outcomes,
        translation=translation.notes,
        differences=tuple(differences(plan, outcomes, data, crash_at=crash_at)),
    )


def _check_world_size(name: str, profile: Any, scenario: Scenario) -> None:
    """:class:`Unsupported` for a data-parallel scenario on a profile of one process."""
    sharded = [loader for loader in scenario.loaders.values() if loader.sharding is not None]
    if sharded and "world_size" not in attrs.fields_dict(profile.Call):
        world = max(loader.world_size for loader in sharded)
        raise Unsupported(
            f"the {name} profile models one process (no multi-process run of {name} was "
            f"recorded), so it cannot say what {world} ranks read"
        )


def _crashed_then_rerun(profile: Any, translation: Translation[Any], crash_at: int) -> list[Any]:
    """The script with a crash after the trainer's ``crash_at``-th step, then run again."""
    calls = list(translation.calls)
    if translation.crash_counter == "call":
        trained = 0
        for index, call in enumerate(calls):
            steps = profile.simulate(calls[: index + 1])[-1].steps
            if trained < crash_at <= trained + steps:
                calls[index] = attrs.evolve(call, crash_at=crash_at - trained)
                break
            trained += steps
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
        return calls
    return [*calls[: crashed + 1], *translation.rerun]


def differences(
    plan: Plan,
    outcomes: Sequence[CallOutcome],
    data: Mapping[str, Dataset],
    *,
    crash_at: int | None = None,
) -> list[str]:
    """The ways ``outcomes`` differ from ``plan``, in words (empty when they agree)."""
    found: list[str] = []
    for outcome in outcomes:
        if outcome.error is not None:
            found.append(f"raises {outcome.error.type}: {outcome.error.message}")
    planned = _planned_reads(plan, data)
    trained = [sample for outcome in outcomes for batch in outcome.batches for sample in batch]
    steps = sum(outcome.steps for outcome in outcomes)
    if steps != plan.total_steps:
        crash = f" (with a crash after step {crash_at:,})" if crash_at is not None else ""
        found.append(f"trains {steps:,} steps{crash} where the plan has {plan.total_steps:,}")
    expected, actual = Counter(planned), Counter(trained)
    names = {dataset.offset // OFFSET: name for name, dataset in data.items()}
    changed = sorted(
        (sample // OFFSET, actual[sample], expected[sample], sample % OFFSET)
        for sample in set(expected) | set(actual)
        if actual[sample] != expected[sample]
    )
    groups: dict[tuple[int, int, int], list[int]] = {}
    for loader, got, want, index in changed:
        groups.setdefault((loader, got, want), []).append(index)
    ordered = sorted(groups.items(), key=lambda item: (item[0][0], item[1][0]))
    for (loader, got, want), samples in ordered:
        label = f"{_ranges(samples)} of {names.get(loader, '?')!r}"
        if got == 0:
            found.append(f"never reads {label} (the plan reads them {_times(want)})")
        elif want == 0:
            found.append(f"reads {label} {_times(got)}, which the plan never reads")
        else:
            found.append(f"reads {label} {_times(got)} where the plan reads them {_times(want)}")
    if not changed and steps == plan.total_steps and trained != planned:
        found.append("reads the planned samples in another order")
    return found


def _planned_reads(plan: Plan, data: Mapping[str, Dataset]) -> list[int]:
    reads: list[int] = []
    for segment in plan.segments:
        offset = data[segment.loader.name or ""].offset
        samples = segment.loader.samples
        for read in segment.reads():
            # A data-parallel epoch reads its start again past the data's end.
            reads.extend(
                offset + (position if samples is None else sample_at(position, samples))
                for position in range(read.start, read.stop)
            )
    return reads


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _ranges(samples: list[int]) -> str:
    runs: list[tuple[int, int]] = []
    for sample in samples:
        if runs and sample == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], sample)
        else:
            runs.append((sample, sample))
    words = [f"{a:,}-{b:,}" if a != b else f"{a:,}" for a, b in runs]
    noun = "sample" if len(samples) == 1 else "samples"
    return f"{noun} {', '.join(words)}"
