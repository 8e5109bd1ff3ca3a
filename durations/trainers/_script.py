"""Helpers the trainer profiles share to write a ``durations`` scenario in their own idiom."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Literal

import attrs

from ..errors import DurationsError
from ..fit import FitCall
from ..plans import Plan
from ..progress import Progress
from ..scenario import Scenario
from ..schedules import ResolvedPiece
from ..time import Time
from ..units import Unit
from ._outcome import Dataset, Unsupported


@attrs.frozen(kw_only=True)
class Step:
    """One fit call of a scenario, with what a trainer translation needs to know about it."""

    index: int
    call: FitCall
    data: Dataset
    #: The time the call asks for: its duration, its until, or the run's max_duration.
    request: Time
    #: Which of the three the request is.
    kind: str
    #: Whether the call reads another stream than the call before it.
    new_stream: bool

    @property
    def batch_size(self) -> int:
        return self.call.loader.batch_size

    def steps(self, time: Time | None = None) -> int:
        """Optimizer steps that ``time`` (default: the request) takes from a fresh start."""
        target = self.request if time is None else time
        return Progress().steps_until(target, loader=self.call.loader)

    def steps_per_epoch(self) -> int:
        steps = self.call.loader.steps_per_epoch
        assert steps is not None
        return steps


def steps_of(scenario: Scenario, data: Mapping[str, Dataset], trainer: str) -> Iterator[Step]:
    """The calls of ``scenario`` in order; :class:`Unsupported` for what no trainer expresses."""
    previous = None
    for index, call in enumerate(scenario.calls):
        if call.duration is not None:
            kind, request = "duration", call.duration
        elif call.until is not None:
            kind, request = "until", call.until
        elif scenario.config.max_duration is not None:
            kind, request = "max_duration", scenario.config.max_duration
        else:
            raise Unsupported(f"call #{index} has no duration and the run has no max_duration")
        if request.unit is Unit.DUR:
            raise Unsupported(f"{trainer} has no unit for a fraction of the plan ({request})")
        if call.loader.drop_last:
            raise Unsupported("the translations read every batch (drop_last is not modelled)")
        name = call.loader.name or ""
        yield Step(
            index=index,
            call=call,
            data=data[name],
            request=request,
            kind=kind,
            new_stream=previous is None or not previous.same_stream(call.loader),
        )
        previous = call.loader


def whole(value: object, what: str, trainer: str) -> int:
    """``value`` as an int, or :class:`Unsupported` when the trainer only takes whole ones."""
    if isinstance(value, int):
        return value
    raise Unsupported(f"{trainer} takes whole {what} only; {value} has no exact equivalent")


@attrs.frozen(kw_only=True)
class Shape:
    """A call's part of the scenario's learning-rate schedule, in the terms trainers' own
    schedulers take: from the call's first step, a linear warmup from 0 over ``warmup`` steps to
    ``peak``, then a ``decay`` (``constant``, ``linear`` or ``cosine``) from ``peak`` to
    ``floor`` over the rest of the call's ``steps`` (every factor of the base learning rate).

    A trainer's scheduler whose clock starts with the call is written with base learning rate
    ``peak``, warmup ``warmup``, length ``steps`` and floor ``floor / peak``.
    """

    warmup: int
    peak: Fraction
    decay: Literal["constant", "linear", "cosine"]
    floor: Fraction
    steps: int

    @property
    def floor_ratio(self) -> Fraction:
        """The floor as a fraction of the peak (0 for a peak of 0)."""
        return self.floor / self.peak if self.peak else Fraction(0)


def shapes(
    scenario: Scenario, plan: Plan, *, per: Literal["call", "run"] = "call"
) -> tuple[Shape, ...]:
    """Each call's part of ``scenario.schedule`` as a :class:`Shape` (``per="call"``, for
    trainers whose scheduler starts again with each call), or the whole run's as one
    (``per="run"``, for a scheduler built once for the run); :class:`Unsupported` when a part
    has another form (no trainer's own scheduler takes it) or there is no schedule. Steps are
    the plan's: a call's part runs from its first step to its last.

    >>> from durations.scenario import Scenario
    >>> text = '''
    ... [run]
    ... max_duration = "10ba"
    ... [loaders.a]
    ... samples = 100
    ... batch_size = 10
    ... [[fit]]
    ... loader = "a"
    ... [schedule]
    ... warmup = "2ba"
    ... [[schedule.pieces]]
    ... kind = "cosine"
    ... to = "0.1"
    ... until = "end"
    ... '''
    >>> from durations import plan
    >>> found = Scenario.from_toml(text)
    >>> shapes(found, plan(found.config, found.calls))
    (Shape(warmup=2, peak=Fraction(1, 1), decay='cosine', floor=Fraction(1, 10), steps=10),)
    """
    if scenario.schedule is None:
        raise Unsupported("the scenario has no [schedule]")
    try:
        curve = scenario.schedule.resolve(plan, on_extend=scenario.on_extend)
    except DurationsError as error:
        raise Unsupported(f"the schedule cannot be placed on the plan: {error}") from None
    spans = [(f"call #{i}'s", s.start_step, s.stop_step) for i, s in enumerate(plan.segments)]
    if per == "run":
        spans = [("the run's", 0, plan.total_steps)]
    found = []
    for what, start, stop in spans:
        pieces = [piece for piece in curve.pieces if piece.start < stop and piece.stop > start]
        found.append(_shape(what, start, stop, pieces, curve.factor(start)))
    return tuple(found)


def _shape(what: str, start: int, stop: int, pieces: list[ResolvedPiece], first: object) -> Shape:
    """One span's pieces as a Shape, or :class:`Unsupported` saying why not."""
    steps = stop - start
    why = f"{what} part of the schedule (steps {start} to {stop})"
    warmup, peak = 0, first
    if pieces and pieces[0].piece.kind == "warmup":
        head = pieces.pop(0)
        if head.start != start or head.start_value != 0:
            raise Unsupported(f"{why} warms up from another point than its first step at 0")
        if head.stop > stop:
            raise Unsupported(f"{why} ends inside its warmup")
        warmup, peak = head.stop - start, head.stop_value
    if not isinstance(peak, Fraction):
        raise Unsupported(f"{why} starts at an inexact factor ({peak})")
    if not pieces:
        return Shape(warmup=warmup, peak=peak, decay="constant", floor=peak, steps=steps)
    body = pieces[0]
    kinds: dict[str, Literal["constant", "linear", "cosine"]] = {
        "constant": "constant",
        "linear": "linear",
        "cosine": "cosine",
    }
    # A constant piece that jumps to its level at the span's first step is a constant level.
    jumps = body.piece.jumps and not (body.piece.kind == "constant" and body.start == start)
    if len(pieces) > 1 or body.piece.kind not in kinds or jumps:
        shown = ", then ".join(str(piece.piece) for piece in pieces)
        raise Unsupported(
            f"{why} is {shown}: the trainers' own schedulers take a warmup and one constant, "
            "linear or cosine decay"
        )
    if body.start != start + warmup or body.stop != stop:
        raise Unsupported(
            f"{why} decays over other steps than those after its warmup: the trainers' own "
            "schedulers decay until the end of their length"
        )
    floor = body.stop_value
    if not isinstance(floor, Fraction) or body.start_value != peak:
        raise Unsupported(f"{why} decays from or to an inexact factor")
    if floor > peak:
        raise Unsupported(
            f"{why} rises from {peak} to {floor}: after their warmup, the trainers' own "
            "schedulers only decay"
        )
    decay: Literal["constant", "linear", "cosine"] = kinds[body.piece.kind]
    return Shape(warmup=warmup, peak=peak, decay=decay, floor=floor, steps=steps)
