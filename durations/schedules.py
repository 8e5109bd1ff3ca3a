"""``Schedule``: a learning-rate curve stated in time units, placed exactly on a plan.

A schedule is a value: an initial factor and pieces in sequence, each ending at a time
(``"2000ba"``, ``"1e9tok"``, ``"0.1dur"``) or a landmark of the plan (:data:`END`, where a call
starts or stops). :meth:`Schedule.resolve` places every boundary on the plan's lifetime steps;
the :class:`ResolvedSchedule` it returns gives the factor at any step as a pure function of the
step, so a crash and a resume cannot move the curve. The rules are in ``docs/semantics.md``
("Schedules and intervals"); the how-to is ``docs/schedules.md``.

>>> from fractions import Fraction
>>> from durations import END, FitCall, Loader, RunConfig, Schedule, plan
>>> p = plan(RunConfig(max_duration="10ba"), [FitCall(loader=Loader(samples=100, batch_size=10))])
>>> curve = Schedule.warmup("2ba").then_linear(to=Fraction(1, 10), until=END).resolve(p)
>>> [str(curve.factor(k)) for k in range(11)]
['0', '1/2', '1', '71/80', '31/40', '53/80', '11/20', '7/16', '13/40', '17/80', '1/10']
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable
from fractions import Fraction
from typing import Literal

import attrs

from ._factors import factor, power
from ._grammar import format_number
from ._rates import PLAIN_NUMBERS, Rate, Value, factor_at, level, lr_of, rate, sqrt_ratio
from ._timeline import Timeline
from .errors import ConversionError, ScheduleError
from .plans import Plan
from .time import Time
from .units import Unit

__all__ = [
    "END",
    "Landmark",
    "OnExtend",
    "Piece",
    "ResolvedPiece",
    "ResolvedSchedule",
    "Schedule",
    "Value",
]


# -- landmarks ----------------------------------------------------------------------------------

LandmarkKind = Literal["end", "call_start", "call_stop"]


def _check_call(call: object) -> str | int:
    if isinstance(call, str) and call.strip():
        return call
    if isinstance(call, int) and not isinstance(call, bool) and call >= 0:
        return call
    raise ScheduleError(
        f"invalid call {call!r}: expected a call name (a non-empty string) or its position "
        "in the script (a whole number >= 0)"
    )


@attrs.frozen
class Landmark:
    """A point of a plan that is not a time: the plan's end, or where a call starts or stops.

    A call is named by its ``name`` (or default identity ``'#1'``) or by its position.

    >>> str(Landmark.call_stop("pretrain")), str(Landmark.call_start(1)), str(END)
    ("stop of call 'pretrain'", 'start of call #1', 'end')
    """

    kind: LandmarkKind
    call: str | int | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("end", "call_start", "call_stop"):
            raise ScheduleError(
                f"invalid landmark kind {self.kind!r}: expected 'end', 'call_start' or "
                "'call_stop'; build one with Landmark.end(), Landmark.call_start(call) or "
                "Landmark.call_stop(call)"
            )
        if self.kind == "end" and self.call is not None:
            raise ScheduleError(f"the end landmark names no call, got call={self.call!r}")
        if self.kind != "end":
            _check_call(self.call)

    @classmethod
    def end(cls) -> Landmark:
        """Where the plan stops (``Plan.stop``): the same lifetime step after any crash."""
        return cls("end")

    @classmethod
    def call_start(cls, call: str | int) -> Landmark:
        """Where call ``call`` (a name, or a position in the script) starts."""
        return cls("call_start", _check_call(call))

    @classmethod
    def call_stop(cls, call: str | int) -> Landmark:
        """Where call ``call`` (a name, or a position in the script) stops."""
        return cls("call_stop", _check_call(call))

    def __str__(self) -> str:
        if self.kind == "end":
            return "end"
        which = f"#{self.call}" if isinstance(self.call, int) else repr(self.call)
        return f"{'start' if self.kind == 'call_start' else 'stop'} of call {which}"


#: The plan's end: ``Landmark.end()``.
END = Landmark.end()

#: Where a piece ends, or a step drops: a time on the run clock, or a landmark.
Boundary = Time | Landmark


def _boundary(value: object, what: str) -> Boundary:
    if isinstance(value, (Time, Landmark)):
        return value
    if isinstance(value, str):
        return Time.parse(value)
    raise ScheduleError(
        f"invalid {what} {value!r}: expected a Time, a time string such as '2000ba' or "
        "'0.1dur', or a Landmark such as END"
    )


# -- pieces -------------------------------------------------------------------------------------

#: The most pieces a schedule has, and drop times a piece has: far past any real curve (a
#: cyclic schedule of a hundred restarts is two hundred pieces), and a bound on the work a
#: hostile scenario can ask for.
MAX_PIECES = 1000
MAX_DROP_TIMES = 1000


PieceKind = Literal[
    "warmup", "constant", "linear", "cosine", "exponential", "inverse_sqrt", "drops"
]


@attrs.frozen
class Piece:
    """One piece of a schedule: a shape from where the previous piece ended until ``until``.

    ``to`` is the factor a ``warmup`` (always 1), ``linear``, ``cosine`` or ``exponential``
    piece reaches exactly at ``until``; ``value`` is the level a ``constant`` piece jumps to
    (``None`` holds the current factor); ``drops`` multiply the factor by ``gamma`` at each time
    of ``at``. Build pieces with the ``Schedule.then_*`` methods.
    """

    kind: PieceKind
    until: Boundary
    to: Fraction | None = None
    value: Fraction | None = None
    at: tuple[Boundary, ...] = ()
    gamma: Fraction | None = None

    def __attrs_post_init__(self) -> None:
        kinds = ("warmup", "constant", "linear", "cosine", "exponential", "inverse_sqrt", "drops")
        if self.kind not in kinds:
            raise ScheduleError(
                f"invalid piece kind {self.kind!r}: expected one of {', '.join(kinds)}"
            )
        if not isinstance(self.until, (Time, Landmark)):
            raise ScheduleError(f"invalid piece end {self.until!r}: expected a Time or a Landmark")
        needs_to = self.kind in ("warmup", "linear", "cosine", "exponential")
        if needs_to != (self.to is not None) or (self.kind == "drops") != (self.gamma is not None):
            raise ScheduleError(
                f"invalid {self.kind} piece: build pieces with the Schedule.then_* methods"
            )
        for name, number in (("to", self.to), ("value", self.value), ("gamma", self.gamma)):
            if number is not None and factor(number, f"{self.kind} {name}") != number:
                raise ScheduleError(
                    f"invalid {self.kind} piece: build pieces with the Schedule.then_* methods"
                )
        if len(self.at) > MAX_DROP_TIMES:
            raise ScheduleError(
                f"invalid drops: {len(self.at):,} drop times; a drops piece has at most "
                f"{MAX_DROP_TIMES:,} (for a decay at every step, use then_exponential)"
            )

    @property
    def jumps(self) -> bool:
        """Whether the piece declares a discontinuity: a constant with a new level, or drops."""
        return (self.kind == "constant" and self.value is not None) or (
            self.kind == "drops" and bool(self.at)
        )

    def __str__(self) -> str:
        until = f"until {self.until}"
        if self.kind == "warmup":
            return f"warmup {until}"
        if self.kind == "constant":
            level = "" if self.value is None else f" at {format_number(self.value)}"
            return f"constant{level} {until}"
        if self.kind == "inverse_sqrt":
            return f"inverse_sqrt {until}"
        if self.kind == "drops":
            shown = self.at if len(self.at) <= 10 else (*self.at[:3], "...", self.at[-1])
            times = ", ".join(str(t) for t in shown) or "no time"
            if len(self.at) > 10:
                times += f" ({len(self.at):,} times)"
            assert self.gamma is not None
            return f"drops by {format_number(self.gamma)} at {times} {until}"
        assert self.to is not None
        return f"{self.kind} to {format_number(self.to)} {until}"


class OnExtend(enum.Enum):
    """What a schedule does on a run taken up under ``extend`` (``docs/semantics.md``, S5)."""

    #: The curve re-resolved on the new plan from the run clock's origin: steps already done
    #: stay done, warmup is not repeated, the decay stretches to the new end.
    STRETCH = "stretch"
    #: A fresh curve from where the new script starts: warmup again, then decay to the new end.
    REWARM = "rewarm"


def _on_extend(value: object) -> OnExtend:
    if isinstance(value, OnExtend):
        return value
    try:
        return OnExtend(value)
    except ValueError:
        raise ScheduleError(
            f"invalid on_extend {value!r}: expected 'stretch' or 'rewarm' (or None for a plan "
            "that does not extend a run)"
        ) from None


def _initial(value: object) -> Fraction:
    return factor(value, "initial factor")


def _pieces(value: Iterable[Piece]) -> tuple[Piece, ...]:
    pieces = tuple(value)
    if len(pieces) > MAX_PIECES:
        raise ScheduleError(
            f"invalid schedule of {len(pieces):,} pieces: a schedule has at most {MAX_PIECES:,}"
        )
    for piece in pieces:
        if not isinstance(piece, Piece):
            raise ScheduleError(f"invalid piece {piece!r}: build pieces with Schedule.then_*")
    return pieces


@attrs.frozen
class Schedule:
    """A learning-rate curve: factors of a base rate, from ``initial`` through ``pieces``.

    Each piece starts where the previous one ended (the first at the schedule's start) and
    from the factor it ended at, so the curve is continuous except where a piece declares a
    jump. After the last piece the final factor holds.

    >>> from fractions import Fraction
    >>> s = Schedule.warmup("2000ba").then_cosine(to=Fraction(1, 10), until=END)
    >>> print(s)
    from 0: warmup until 2000ba, then cosine to 0.1 until end
    """

    initial: Fraction = attrs.field(converter=_initial)
    pieces: tuple[Piece, ...] = attrs.field(default=(), converter=_pieces)

    # -- named constructors --------------------------------------------------------------

    @classmethod
    def constant(cls, value: object = 1, *, until: object = None) -> Schedule:
        """A constant factor; with ``until``, a constant piece that ends there.

        >>> print(Schedule.constant(until=Landmark.call_stop("pretrain")))
        from 1: constant until stop of call 'pretrain'
        """
        schedule = cls(factor(value, "constant factor"))
        return schedule if until is None else schedule.then_constant(until=until)

    @classmethod
    def warmup(cls, until: object, *, initial: object = 0) -> Schedule:
        """A linear warmup from ``initial`` (default 0) that reaches 1 exactly at ``until``.

        >>> print(Schedule.warmup("1e9tok"))
        from 0: warmup until 1000000000tok
        """
        boundary = _boundary(until, "warmup end")
        return cls(factor(initial, "initial factor"), (Piece("warmup", boundary, to=Fraction(1)),))

    @classmethod
    def warmup_stable_decay(
        cls,
        *,
        warmup: object,
        decay_from: object,
        until: object = END,
        to: object = 0,
        shape: Literal["linear", "cosine"] = "linear",
    ) -> Schedule:
        """Warm up until ``warmup``, hold 1 until ``decay_from``, then decay to ``to`` by
        ``until`` (default: the plan's end), linearly or along a cosine.

        >>> print(Schedule.warmup_stable_decay(warmup="100ba", decay_from="0.9dur"))
        from 0: warmup until 100ba, then constant until 0.9dur, then linear to 0 until end
        """
        stable = cls.warmup(warmup).then_constant(until=decay_from)
        if shape == "linear":
            return stable.then_linear(to=to, until=until)
        if shape == "cosine":
            return stable.then_cosine(to=to, until=until)
        raise ScheduleError(f"invalid decay shape {shape!r}: expected 'linear' or 'cosine'")

    # -- pieces --------------------------------------------------------------------------

    def _then(self, piece: Piece) -> Schedule:
        return attrs.evolve(self, pieces=(*self.pieces, piece))

    def then_constant(self, *, until: object, value: object = None) -> Schedule:
        """Hold the factor until ``until``; with ``value``, jump to that level first."""
        level = None if value is None else factor(value, "constant factor")
        return self._then(Piece("constant", _boundary(until, "constant end"), value=level))

    def then_linear(self, *, to: object, until: object) -> Schedule:
        """Go linearly to ``to``, reached exactly at ``until``."""
        return self._then(
            Piece("linear", _boundary(until, "linear end"), to=factor(to, "linear target"))
        )

    def then_cosine(self, *, to: object, until: object) -> Schedule:
        """Go along a half cosine to the floor ``to``, reached exactly at ``until``."""
        return self._then(
            Piece("cosine", _boundary(until, "cosine end"), to=factor(to, "cosine floor"))
        )

    def then_exponential(self, *, to: object, until: object) -> Schedule:
        """Decay geometrically (a constant ratio per step) to ``to`` > 0, reached at ``until``."""
        target = factor(to, "exponential target")
        if target == 0 or self._ends_at_zero():
            where = "to 0" if target == 0 else "from 0 (the factor where it starts)"
            raise ScheduleError(
                f"invalid exponential piece {where}: a geometric curve runs between two "
                "factors > 0; use then_linear or then_cosine to reach 0 or leave it"
            )
        return self._then(Piece("exponential", _boundary(until, "exponential end"), to=target))

    def then_inverse_sqrt(self, *, until: object) -> Schedule:
        """Decay as ``sqrt(t / (t + n))``, ``n`` steps into the piece, where ``t`` is the steps
        from the schedule's start to the piece's start (the warmup, usually)."""
        return self._then(Piece("inverse_sqrt", _boundary(until, "inverse_sqrt end")))

    def then_drops(self, *, at: Iterable[object], gamma: object, until: object) -> Schedule:
        """Hold the factor, multiplied by ``gamma`` at each time of ``at``, until ``until``
        (torch's ``MultiStepLR``: a drop applies from the step it is placed at)."""
        if isinstance(at, (str, Time, Landmark)):
            at = [at]
        times: list[Boundary] = []
        for time in at:
            if len(times) == MAX_DROP_TIMES:
                raise ScheduleError(
                    f"invalid drops: more than {MAX_DROP_TIMES:,} drop times; a drops piece has "
                    f"at most {MAX_DROP_TIMES:,} (for a decay at every step, use "
                    "then_exponential)"
                )
            times.append(_boundary(time, "drop time"))
        return self._then(
            Piece(
                "drops",
                _boundary(until, "drops end"),
                at=tuple(times),
                gamma=factor(gamma, "gamma"),
            )
        )

    def _ends_at_zero(self) -> bool:
        zero = self.initial == 0
        for piece in self.pieces:
            if piece.kind == "constant" and piece.value is not None:
                zero = piece.value == 0
            elif piece.to is not None:
                zero = piece.to == 0
            elif piece.kind == "drops" and piece.gamma == 0 and piece.at:
                zero = True
        return zero

    def __str__(self) -> str:
        pieces = ", then ".join(str(piece) for piece in self.pieces) or "constant"
        return f"from {format_number(self.initial)}: {pieces}"

    # -- placing it on a plan ---------------------------------------------------------

    def resolve(self, plan: Plan, *, on_extend: OnExtend | str | None = None) -> ResolvedSchedule:
        """Place every boundary of the schedule on ``plan``'s lifetime steps.

        A time is placed at the first step boundary at or past it on the run clock; ``dur`` is
        a fraction of ``max_duration``; a landmark is the plan's end or a call's start or stop.
        On a plan from a checkpoint the steps already trained come from the ledger, so every
        re-run of the same script gives the same curve. A plan that goes on from a run taken up
        under ``extend`` needs ``on_extend``: ``'stretch'`` or ``'rewarm'`` (rule S5); on any
        other plan it changes nothing, so a script may always pass it.

        >>> from durations import FitCall, Loader, RunConfig, plan
        >>> script = [FitCall(loader=Loader(samples=100, batch_size=10))]
        >>> p = plan(RunConfig(max_duration="2ep"), script)
        >>> curve = Schedule.warmup("0.5ep").then_cosine(to=0, until=END).resolve(p)
        >>> curve.start, [(piece.start, piece.stop) for piece in curve.pieces]
        (0, [(0, 5), (5, 20)])
        >>> resumed = plan(RunConfig(max_duration="2ep"), script, p.checkpoint_at(7))
        >>> Schedule.warmup("0.5ep").then_cosine(to=0, until=END).resolve(resumed) == curve
        True
        """
        timeline = Timeline.of(plan)
        mode = None if on_extend is None else _on_extend(on_extend)
        if timeline.extended and mode is None:
            raise ScheduleError(
                f"this plan goes on from lifetime step {timeline.start} of a run whose clock "
                f"started at step {timeline.origin.batch} (a run taken up under extend): pass "
                "on_extend='stretch' to re-resolve the curve on this plan from the run clock's "
                "origin, or on_extend='rewarm' for a fresh curve from step "
                f"{timeline.start}"
            )
        stretch = timeline.extended and mode is OnExtend.STRETCH
        rewarm = timeline.extended and mode is OnExtend.REWARM
        start = timeline.origin.batch if stretch else timeline.start
        placer = _Placer(timeline, stretch=stretch, rewarm=rewarm)
        value: Value = self.initial
        previous = start
        resolved = []
        for index, piece in enumerate(self.pieces):
            label = f"pieces[{index}] ({piece})"
            stop = placer.place(piece.until, label)
            if stop < previous:
                raise ScheduleError(
                    f"{label} ends at lifetime step {stop}, before it starts (step {previous}, "
                    "where the previous piece ends): pieces must end in order",
                    piece=label,
                )
            drops = tuple(placer.place(time, label) for time in piece.at)
            for time, drop in zip(piece.at, drops, strict=True):
                if not previous <= drop <= stop:
                    raise ScheduleError(
                        f"{label}: the drop at {time} falls at lifetime step {drop}, outside the "
                        f"piece (steps {previous} to {stop})",
                        piece=label,
                    )
            if list(drops) != sorted(drops):
                raise ScheduleError(f"{label}: the drop times must be in order", piece=label)
            start_value: Value = value
            if piece.kind == "constant" and piece.value is not None:
                start_value = piece.value
            stop_value = _stop_value(piece, start_value, previous, stop, start, label, drops)
            resolved.append(
                ResolvedPiece(
                    piece=piece,
                    start=previous,
                    stop=stop,
                    start_value=start_value,
                    stop_value=stop_value,
                    drops=drops,
                )
            )
            value, previous = stop_value, stop
        return ResolvedSchedule(
            schedule=self, start=start, end=timeline.end, pieces=tuple(resolved)
        )


@attrs.frozen
class _Placer:
    """Places boundaries on a timeline (rules S2 and S5)."""

    timeline: Timeline
    stretch: bool
    rewarm: bool

    def place(self, boundary: Boundary, label: str) -> int:
        timeline = self.timeline
        if isinstance(boundary, Landmark):
            if boundary.kind == "end":
                return timeline.end
            assert boundary.call is not None
            try:
                call = timeline.call(boundary.call)
            except ScheduleError as error:
                raise ScheduleError(f"{label}: {error}", piece=label) from None
            return call.start if boundary.kind == "call_start" else call.stop
        try:
            time = timeline.absolute(boundary)
        except ScheduleError as error:
            raise ScheduleError(f"{label}: {error}", piece=label) from None
        if self.rewarm:
            # Rule S5, rewarm: times are measured from where this script starts.
            here = self._clock_at_start(time, boundary, label)
            time = Time(here + Fraction(time.value), time.unit)
        step = timeline.resolve(time)
        if step is None:
            raise ScheduleError(
                f"{label}: {boundary} is never reached in this plan, which ends at lifetime "
                f"step {timeline.end} (or it cannot be measured on its calls' loaders); end "
                "the piece at END or earlier",
                piece=label,
            )
        if self.stretch and step == timeline.start:
            # Rule S5, stretch: a time the run had passed before this script started.
            here = self._clock_at_start(time, boundary, label)
            if Fraction(time.value) < here:
                if time.unit is Unit.BA:
                    return timeline.origin.batch + int(time.value)
                raise ScheduleError(
                    f"{label}: {boundary} was reached before this script's first call (lifetime "
                    f"step {timeline.start}), in the run it extends, whose loaders the "
                    "checkpoint does not record: give it in ba, or pass on_extend='rewarm'",
                    piece=label,
                )
        return step

    def _clock_at_start(self, time: Time, boundary: Boundary, label: str) -> Fraction:
        try:
            return self.timeline.clock_at_start(time.unit)
        except ConversionError as error:
            raise ScheduleError(
                f"{label}: cannot measure {boundary} where this script starts: {error}",
                piece=label,
            ) from None


def _stop_value(
    piece: Piece,
    start_value: Value,
    start: int,
    stop: int,
    origin: int,
    label: str,
    drops: tuple[int, ...],
) -> Value:
    if piece.kind == "constant":
        return start_value
    if piece.kind == "drops":
        assert piece.gamma is not None
        if isinstance(start_value, Fraction):
            return power(start_value, piece.gamma, len(drops), label)
        return start_value * float(power(Fraction(1), piece.gamma, len(drops), label))
    if piece.kind == "inverse_sqrt":
        scale = start - origin
        if scale == 0:
            raise ScheduleError(
                f"{label} starts where the schedule starts: its time scale (the steps before "
                "it) is 0; put a warmup or a constant piece before it",
                piece=label,
            )
        return start_value * sqrt_ratio(scale, scale + stop - start)
    assert piece.to is not None
    return piece.to


@attrs.frozen
class ResolvedPiece:
    """A piece placed on a plan: lifetime steps ``[start, stop)``, the factor at its start and
    the factor it reaches at ``stop``, and the steps of its drops."""

    piece: Piece
    start: int
    stop: int
    start_value: Value
    stop_value: Value
    drops: tuple[int, ...] = ()


def _bounds(resolved: ResolvedSchedule) -> tuple[int, ...]:
    return (resolved.start, *(piece.stop for piece in resolved.pieces))


def _no_rates(resolved: ResolvedSchedule) -> list[Rate | None]:
    return [None] * (len(resolved.pieces) + 1)


@attrs.frozen
class ResolvedSchedule:
    """A schedule placed on a plan: the factor at every lifetime step.

    Step ``k`` means "after ``k`` optimizer steps" (``Progress.batch``), and ``factor(k)`` is
    the factor of the optimizer step that takes the run from ``k`` to ``k + 1`` steps: torch's
    ``LambdaLR`` convention, where step ``k + 1`` uses ``lr_lambda(k)``. It is a pure function
    of ``k``. ``start`` is the lifetime step where the curve starts, ``end`` the plan's end.
    Plan step ``j`` of a plan from a checkpoint is lifetime step ``plan.start.batch + j``.
    """

    schedule: Schedule
    start: int
    end: int
    pieces: tuple[ResolvedPiece, ...]
    _bounds: tuple[int, ...] = attrs.field(
        init=False, eq=False, repr=False, default=attrs.Factory(_bounds, takes_self=True)
    )
    #: Per piece, then for the final factor: what ``lr`` needs at its steps, made on first use.
    _rates: list[Rate | None] = attrs.field(
        init=False, eq=False, repr=False, default=attrs.Factory(_no_rates, takes_self=True)
    )

    @property
    def final(self) -> Value:
        """The factor after the last piece, held from there on."""
        return self.pieces[-1].stop_value if self.pieces else self.schedule.initial

    def factor(self, step: int) -> Value:
        """The factor at lifetime step ``step``: exact (``Fraction``) except inside a cosine,
        exponential or inverse-square-root piece (``float``). O(log pieces).

        >>> from durations import FitCall, Loader, RunConfig, plan
        >>> script = [FitCall(loader=Loader(samples=9, batch_size=1))]
        >>> p = plan(RunConfig(max_duration="9ba"), script)
        >>> curve = Schedule.warmup("3ba").then_cosine(to=0, until=END).resolve(p)
        >>> [str(curve.factor(k)) for k in (0, 1, 3, 5, 6, 7, 9)]
        ['0', '1/3', '1', '3/4', '1/2', '1/4', '0']
        >>> curve.factor(4)
        0.9330127018922194
        """
        if isinstance(step, bool) or not isinstance(step, int):
            raise ScheduleError(f"invalid step {step!r}: expected a whole number of steps")
        if step < self.start:
            raise ScheduleError(
                f"invalid step {step}: the schedule starts at lifetime step {self.start}; the "
                "steps before it belong to the run this plan took up"
            )
        index = bisect.bisect_right(self._bounds, step) - 1
        if index >= len(self.pieces):
            return self.final
        return factor_at(self.pieces[index], step, self.start)

    def lr(self, step: int, base: float | Fraction | int) -> float:
        """The learning rate at lifetime step ``step``: ``base`` times the factor; an exact factor
        times the exact value of ``base`` is rounded to a float once.

        O(log pieces) and a few arithmetic operations per call, no ``Fraction`` arithmetic:
        what a piece needs is worked out on the first call in it. The result is the same float,
        bit for bit, as ``float(factor(step) * Fraction(base))`` for an exact factor and
        ``factor(step) * float(base)`` for a float one.

        >>> from durations import FitCall, Loader, RunConfig, plan
        >>> script = [FitCall(loader=Loader(samples=9, batch_size=1))]
        >>> p = plan(RunConfig(max_duration="4ba"), script)
        >>> Schedule.warmup("4ba").resolve(p).lr(1, 3e-4)
        7.5e-05
        """
        if type(step) is int and step >= self.start and type(base) in PLAIN_NUMBERS:
            index = bisect.bisect_right(self._bounds, step) - 1
            rate = self._rates[index]
            if rate is None:
                rate = self._rates[index] = self._rate(index)
            return rate.lr(step, base)
        if isinstance(base, bool) or not isinstance(base, (int, float, Fraction)):
            raise ScheduleError(f"invalid base learning rate {base!r}: expected a number")
        return lr_of(self.factor(step), base)

    def _rate(self, index: int) -> Rate:
        """What ``lr`` needs at the steps of piece ``index`` (the final factor past the last)."""
        if index == len(self.pieces):
            return level(self.final)
        return rate(self.pieces[index], self.start)
