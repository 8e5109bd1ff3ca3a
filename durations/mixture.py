"""``Mixture``: weighted sources read as one stream, and what each source reads of it
(``docs/mixtures.md``; ``docs/semantics.md``, rule 20).

A mixture interleaves its :class:`Source` s by their weights (:class:`~durations.Interleave`:
every prefix within one sample of its shares). A :class:`~durations.Loader` built with
:meth:`Loader.mixing <durations.Loader.mixing>` reads it as one stream whose *mixture epoch*
is :attr:`Mixture.epoch_samples` positions, fixed by the weights, the source sizes and the
stop rule (:class:`StopRule`). Position ``p`` of every mixture epoch reads source
``s(p)`` of the interleave, restarted each epoch; what it reads of that source is the
source's next sample: each source keeps a *cursor*, the samples of it read so far in the run,
which goes on across epochs, calls, phases and resumes. Read number ``t`` of a source of
``S`` samples is position ``t mod S`` of its pass ``t // S`` (:meth:`Source.index`).

>>> web = Source(name="web", samples=600, weight=3)
>>> code = Source(name="code", samples=200, weight=1)
>>> mix = Mixture(sources=(web, code))
>>> mix.epoch_samples, mix.counts(mix.epoch_samples)   # code is exhausted first
(800, (600, 200))
>>> str(mix)
'web 3 : code 1, first_exhausted (800 samples an epoch)'
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from fractions import Fraction

import attrs

from ._grammar import MAX_NUMBER_CHARS, NumberError, parse_factor
from .errors import MixtureError, counted, shown, shown_value
from .interleave import Interleave
from .order import Order
from .units import Unit

__all__ = ["Mixture", "Source", "SourceReads", "StopRule", "Wrap"]


class StopRule(enum.Enum):
    """Where a mixture of shares ends its epoch (``docs/mixtures.md``)."""

    #: When the first source has read all its samples: no sample is read twice in an epoch.
    FIRST_EXHAUSTED = "first_exhausted"
    #: When every source has read all its samples: the others wrap into another pass.
    ALL_EXHAUSTED = "all_exhausted"
    #: Never: the mixture is a stream without epochs, every source wrapping as it needs.
    NEVER = "never"


class Wrap(enum.Enum):
    """What a source reads when it wraps into another pass."""

    #: Each pass in its own order (pass ``p`` of a shuffled source is its order's epoch ``p``).
    RESHUFFLE = "reshuffle"
    #: Every pass in the order of its first.
    REPLAY = "replay"


def _named(name: object) -> str:
    """A source's name in a message: quoted, and by its start when it is long."""
    return shown(name) if isinstance(name, str) else shown_value(name)


def _listed(names: Iterable[object], most: int = 5) -> str:
    """Names in a message: the first ``most``, each by its start when long, and how many more."""
    names = list(names)
    listed = ", ".join(_named(name) for name in names[:most])
    return listed + (f", and {len(names) - most:,} more" if len(names) > most else "")


def _whole(field: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MixtureError(field, f"expected a whole number > 0, got {shown_value(value)}")


def _positive(field: str, value: object) -> Fraction | None:
    """A weight, repeat count or budget: a whole number, a ``Fraction`` or a string such as
    ``'0.3'`` or ``'1/3'``; never a float, whose binary value is not the number written."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip().startswith("-"):
            raise MixtureError(field, f"{shown_value(value)} is negative; expected a number > 0")
        try:
            number = parse_factor(value)
        except NumberError as error:
            raise MixtureError(field, str(error)) from None
    elif isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        raise MixtureError(
            field,
            f"expected a whole number, a Fraction or a string such as '0.3' or '1/3', got "
            f"{shown_value(value)}"
            + (" (a float is not exact)" if isinstance(value, float) else ""),
        )
    else:
        number = Fraction(value)
    if number <= 0:
        raise MixtureError(field, f"expected a number > 0, got {shown_value(value)}")
    if len(str(number)) > MAX_NUMBER_CHARS:  # as checkpoints write it, and read it back
        raise MixtureError(
            field,
            f"{shown_value(value)} is {len(str(number)):,} characters written exactly; at most "
            f"{MAX_NUMBER_CHARS} (round it: shares such as 3:2:1 or '0.55')",
        )
    return number


def _as_weight(value: Fraction | int | str | None) -> Fraction | None:
    return _positive("source weight", value)


def _as_repeats(value: Fraction | int | str | None) -> Fraction | None:
    return _positive("source repeats", value)


def _as_budget(value: Fraction | int | str | None) -> Fraction | None:
    return _positive("source max_passes", value)


def _as_wrap(value: Wrap | str) -> Wrap:
    if isinstance(value, Wrap):
        return value
    try:
        return Wrap(value)
    except (ValueError, TypeError):
        raise MixtureError(
            "source wrap", f"expected 'reshuffle' or 'replay', got {shown_value(value)}"
        ) from None


@attrs.frozen(kw_only=True)
class Source:
    """One data set of a mixture: ``name`` (how phases and checkpoints know it), ``samples``
    in one pass, and its part of the mixture, given one way for every source of a mixture:

    - ``weight``: its share, relative to the others' (in samples, or in tokens with
      ``Mixture(unit="tok")``);
    - ``count``: exactly this many samples of it in every mixture epoch;
    - ``repeats``: this many passes over it in every mixture epoch (``'0.5'``, ``2``).

    ``tokens_per_sample`` is its constant sample length, when known. ``order`` is the
    :class:`~durations.Order` of each pass (``None``: in order), ``wrap`` what a new pass
    reads, and ``max_passes`` a budget: the most passes over it the whole script may read
    (checked by the plan before the run).

    >>> src = Source(name="math", samples=5, weight=1, order=Order.shuffled(3))
    >>> [src.index(t) for t in range(10)] != [src.index(t) for t in range(5)] * 2   # reshuffled
    True
    """

    name: str
    samples: int
    weight: Fraction | None = attrs.field(default=None, converter=_as_weight)
    count: int | None = None
    repeats: Fraction | None = attrs.field(default=None, converter=_as_repeats)
    tokens_per_sample: int | None = None
    order: Order | None = None
    wrap: Wrap = attrs.field(default=Wrap.RESHUFFLE, converter=_as_wrap)
    max_passes: Fraction | None = attrs.field(default=None, converter=_as_budget)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise MixtureError("name", f"expected a non-empty string, got {shown_value(self.name)}")
        where = f"source {_named(self.name)}"
        _whole(f"{where} samples", self.samples)
        _whole(f"{where} tokens_per_sample", self.tokens_per_sample, optional=True)
        _whole(f"{where} count", self.count, optional=True)
        given = [f for f in ("weight", "count", "repeats") if getattr(self, f) is not None]
        if len(given) != 1:
            raise MixtureError(
                where,
                "give exactly one of weight= (a share), count= (samples an epoch) or repeats= "
                f"(passes an epoch); got {', '.join(given) if given else 'none'}",
            )
        if self.order is not None and not isinstance(self.order, Order):
            raise MixtureError(
                f"{where} order",
                f"expected Order.sequential(), Order.shuffled(seed) or None, got "
                f"{shown_value(self.order)}",
            )
        if self.repeats is not None and (self.repeats * self.samples).denominator != 1:
            raise MixtureError(
                f"{where} repeats",
                f"{self.repeats} passes over {self.samples:,} samples is "
                f"{float(self.repeats * self.samples):,.2f} samples, not a whole number; "
                f"use count= instead",
            )
        if self.order is not None:
            self.order.epoch(samples=self.samples, epoch=0)  # an epoch it can order

    @property
    def kind(self) -> str:
        """How its part is given: ``'weight'``, ``'count'`` or ``'repeats'``."""
        return (
            "weight"
            if self.weight is not None
            else "count"
            if self.count is not None
            else "repeats"
        )

    @property
    def part(self) -> Fraction | int:
        """Its ``weight``, ``count`` or ``repeats``, whichever is given."""
        part = self.weight if self.weight is not None else self.count
        part = part if part is not None else self.repeats
        assert part is not None
        return part

    def index(self, read: int) -> int:
        """The data-set index read number ``read`` (0-based, over the run) of this source
        reads: position ``read mod samples`` of pass ``read // samples``, in that pass's
        order (its first pass's under ``wrap='replay'``)."""
        if isinstance(read, bool) or not isinstance(read, int) or read < 0:
            raise MixtureError("read", f"expected a whole number >= 0, got {shown_value(read)}")
        passed, position = divmod(read, self.samples)
        if self.order is None:
            return position
        epoch = passed if self.wrap is Wrap.RESHUFFLE else 0
        return self.order.index(samples=self.samples, epoch=epoch, position=position)

    def same_data(self, other: Source) -> bool:
        """Whether ``other`` reads the same samples in the same order (its part may differ)."""
        return (self.name, self.samples, self.tokens_per_sample, self.order, self.wrap) == (
            other.name,
            other.samples,
            other.tokens_per_sample,
            other.order,
            other.wrap,
        )

    def describe(self) -> str:
        """The source as a scenario file gives it, briefly."""
        text = f"{self.name} ({self.samples:,} samples, {self.kind} {self.part}"
        if self.order is not None:
            text += f", {self.order}"
            if self.wrap is Wrap.REPLAY:
                text += ", replayed"
        return text + ")"


def _sources(value: Iterable[Source]) -> tuple[Source, ...]:
    if isinstance(value, Source):
        return (value,)
    return tuple(value)


def _names(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise MixtureError("restart", f"expected a list of source names, got {shown_value(value)}")
    try:
        return frozenset(value)
    except TypeError:  # an unhashable name
        raise MixtureError(
            "restart", f"expected a list of source names, got {shown_value(value)}"
        ) from None


def _unit(value: Unit | str) -> Unit:
    if isinstance(value, Unit):
        return value
    try:
        return Unit(value)
    except (ValueError, TypeError):
        raise MixtureError("unit", f"expected 'sp' or 'tok', got {shown_value(value)}") from None


def _stop(value: StopRule | str | None) -> StopRule | None:
    if value is None or isinstance(value, StopRule):
        return value
    try:
        return StopRule(value)
    except (ValueError, TypeError):
        raise MixtureError(
            "stop",
            "expected 'first_exhausted', 'all_exhausted' or 'never', got " + shown_value(value),
        ) from None


@attrs.frozen(kw_only=True)
class Mixture:
    """Weighted ``sources`` read as one stream (module docstring). Weights are in ``unit``
    (``sp``, or ``tok``: each source's token share over its ``tokens_per_sample``). Shares
    end their epoch by ``stop`` (``first_exhausted`` unless given); counts and repeats fix
    it themselves (the epoch is their sum). ``restart`` names sources that this mixture,
    when a call starts reading it, starts at a new pass instead of where earlier calls left
    them (``docs/mixtures.md``, phases).
    """

    sources: tuple[Source, ...] = attrs.field(converter=_sources)
    unit: Unit = attrs.field(default=Unit.SP, converter=_unit)
    stop: StopRule | None = attrs.field(default=None, converter=_stop)
    restart: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    interleave: Interleave = attrs.field(init=False, eq=False, repr=False)
    epoch_samples: int | None = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if not self.sources:
            raise MixtureError("sources", "expected at least one Source")
        for position, source in enumerate(self.sources):
            if not isinstance(source, Source):
                raise MixtureError(
                    f"sources[{position}]", f"expected a Source, got {shown_value(source)}"
                )
        names = [source.name for source in self.sources]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise MixtureError(
                "sources", f"each source needs its own name; repeated: {_listed(twice)}"
            )
        kinds = {source.kind for source in self.sources}
        if len(kinds) > 1:
            raise MixtureError(
                "sources",
                f"every source gives its part the same way; got {' and '.join(sorted(kinds))} "
                "(shares, counts and repeats do not mix: write them all as one)",
            )
        kind = kinds.pop()
        if self.unit not in (Unit.SP, Unit.TOK):
            raise MixtureError("unit", f"weights are in sp or tok, got {self.unit.value}")
        if self.unit is Unit.TOK:
            if kind != "weight":
                raise MixtureError(
                    "unit", f"unit='tok' gives token shares; {kind} is counted in samples"
                )
            unknown = [s.name for s in self.sources if s.tokens_per_sample is None]
            if unknown:
                raise MixtureError(
                    "unit",
                    f"token shares need each source's tokens_per_sample; {_listed(unknown)} "
                    "has none (give it, or weigh in samples)",
                )
        stop = self.stop
        if kind == "weight" and stop is None:
            stop = StopRule.FIRST_EXHAUSTED
        elif kind != "weight" and stop is not None:
            raise MixtureError(
                "stop",
                f"a mixture of {kind} has an epoch of their sum; stop={stop.value!r} is for "
                "shares (weight=)",
            )
        object.__setattr__(self, "stop", stop)
        strays = [name for name in self.restart if not isinstance(name, str)]
        if strays:
            raise MixtureError("restart", f"expected source names (strings), got {_listed(strays)}")
        unknown_names = sorted(self.restart - set(names))
        if unknown_names:
            raise MixtureError(
                "restart",
                f"names no source of the mixture: {_listed(unknown_names)}; its "
                f"sources are {_listed(names)}",
            )
        interleave = Interleave.of(*(self._sample_part(source) for source in self.sources))
        object.__setattr__(self, "interleave", interleave)
        object.__setattr__(self, "epoch_samples", self._epoch(interleave, kind, stop))
        self._check_every_source_read()

    def _sample_part(self, source: Source) -> Fraction:
        if source.weight is not None:
            if self.unit is Unit.TOK:
                assert source.tokens_per_sample is not None
                return source.weight / source.tokens_per_sample
            return source.weight
        if source.count is not None:
            return Fraction(source.count)
        assert source.repeats is not None
        return source.repeats * source.samples

    def _epoch(self, interleave: Interleave, kind: str, stop: StopRule | None) -> int | None:
        if kind != "weight":
            return sum(int(self._sample_part(source)) for source in self.sources)
        if stop is StopRule.NEVER:
            return None
        if stop is StopRule.FIRST_EXHAUSTED:
            # The place of the first read past a source's size: the epoch ends just before.
            return min(interleave.place(j, s.samples) for j, s in enumerate(self.sources))
        return max(interleave.place(j, s.samples - 1) + 1 for j, s in enumerate(self.sources))

    def _check_every_source_read(self) -> None:
        """A weight that rounds a source to no sample of an epoch is refused, not warned."""
        if self.epoch_samples is None:
            return
        for source, read in zip(self.sources, self.counts(self.epoch_samples), strict=True):
            if read == 0:
                raise MixtureError(
                    f"source {_named(source.name)} weight",
                    f"its share of a mixture epoch of {counted(self.epoch_samples)} samples "
                    f"rounds to no sample ({self.stop.value if self.stop else ''}); raise its "
                    "weight, or leave it out",
                )

    @property
    def names(self) -> tuple[str, ...]:
        """The sources' names, in order."""
        return tuple(source.name for source in self.sources)

    @property
    def tokens_per_sample(self) -> int | None:
        """The sample length every source shares, or ``None`` when they differ (or one is
        unknown): the stream's tokens then vary by position."""
        lengths = {source.tokens_per_sample for source in self.sources}
        return lengths.pop() if len(lengths) == 1 else None

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each source starts in the concatenation of the sources' samples, in the
        mixture's order (``torch.utils.data.ConcatDataset(sources)``): source ``j``'s index
        ``i`` is index ``offsets[j] + i`` of it. Its length is :attr:`size`."""
        starts, total = [], 0
        for source in self.sources:
            starts.append(total)
            total += source.samples
        return tuple(starts)

    @property
    def size(self) -> int:
        """The samples of all sources, one pass each: the length of their concatenation."""
        return sum(source.samples for source in self.sources)

    def read_at(self, base: Mapping[str, int], position: int) -> tuple[int, int]:
        """The source (by its place in the mixture) and read number that ``position`` of a
        mixture epoch reads, given each source's cursor ``base`` when the epoch began (rule
        20): source ``s(p)`` of the interleave, its read ``base + c(p)``. A position past the
        epoch's end (a data-parallel loader's padding) reads position ``p mod N`` again.

        >>> mix = Mixture(sources=(Source(name="a", samples=4, weight=1),
        ...                        Source(name="b", samples=4, weight=1)), stop="never")
        >>> [mix.read_at({"a": 2, "b": 0}, p) for p in range(4)]
        [(0, 2), (1, 0), (0, 3), (1, 1)]
        """
        end = self.epoch_samples
        if end is not None and position >= end:
            position %= end
        j = self.interleave.source(position)
        return j, base.get(self.sources[j].name, 0) + self.interleave.counts(position)[j]

    def index_at(self, base: Mapping[str, int], position: int) -> int:
        """The index of the sources' concatenation (:attr:`offsets`) that ``position`` of a
        mixture epoch reads, given the cursors ``base`` when the epoch began."""
        j, read = self.read_at(base, position)
        return self.offsets[j] + self.sources[j].index(read)

    def source(self, name: str) -> Source:
        """The source called ``name``."""
        for source in self.sources:
            if source.name == name:
                return source
        raise MixtureError(
            "name", f"no source {_named(name)}; the sources are {_listed(self.names)}"
        )

    def counts(self, positions: int) -> tuple[int, ...]:
        """The samples of each source among the first ``positions`` of a mixture epoch
        (past its end, of the interleave continued)."""
        return self.interleave.counts(positions)

    def same_stream(self, other: Mixture) -> bool:
        """Whether ``other`` reads the same interleave of the same data (``restart`` aside:
        it applies only when a call starts reading)."""
        return (
            len(self.sources) == len(other.sources)
            and all(a.same_data(b) for a, b in zip(self.sources, other.sources, strict=True))
            and self.interleave.weights == other.interleave.weights
            and self.epoch_samples == other.epoch_samples
        )

    def changes(self, other: Mixture) -> list[str]:
        """What ``other`` changed of this mixture, one phrase each (for diagnostics)."""
        said: list[str] = []
        mine, theirs = set(self.names), set(other.names)
        if theirs - mine:
            said.append(f"source added: {', '.join(n for n in other.names if n not in mine)}")
        if mine - theirs:
            said.append(f"source removed: {', '.join(n for n in self.names if n not in theirs)}")
        for source in other.sources:
            if source.name in mine and not self.source(source.name).same_data(source):
                said.append(
                    f"source {source.name!r} changed: {self.source(source.name).describe()} "
                    f"-> {source.describe()}"
                )
        if self.shares_text() != other.shares_text():
            said.append(f"weights {self.shares_text()} -> {other.shares_text()}")
        if self.epoch_samples != other.epoch_samples and self.stop != other.stop:
            stops = (
                self.stop.value if self.stop else "counts",
                other.stop.value if other.stop else "counts",
            )
            said.append(f"stop rule {stops[0]} -> {stops[1]}")
        return said

    def shares_text(self) -> str:
        """The sample shares, as ``web:code 3:1``."""
        return f"{':'.join(self.names)} {self.interleave}"

    def __str__(self) -> str:
        parts = " : ".join(f"{s.name} {s.part}" for s in self.sources)
        unit = " (tokens)" if self.unit is Unit.TOK else ""
        if self.epoch_samples is None:
            return f"{parts}{unit}, never stops"
        stop = f"{self.stop.value} " if self.stop is not None else ""
        return f"{parts}{unit}, {stop}({self.epoch_samples:,} samples an epoch)"

    def to_dict(self) -> dict[str, object]:
        """The mixture as JSON-ready data: numbers exact (a ``Fraction`` as ``'7/3'``), keys
        fixed; what checkpoints store and call fingerprints digest."""
        return {
            "sources": [_source_to_dict(source) for source in self.sources],
            "unit": self.unit.value,
            "stop": None if self.stop is None else self.stop.value,
            "restart": sorted(self.restart),
        }


def _number(value: Fraction | int | None) -> str | None:
    return None if value is None else str(value)


def _source_to_dict(source: Source) -> dict[str, object]:
    order = source.order
    return {
        "name": source.name,
        "samples": source.samples,
        "weight": _number(source.weight),
        "count": source.count,
        "repeats": _number(source.repeats),
        "tokens_per_sample": source.tokens_per_sample,
        "order": None if order is None else {"shuffle": order.shuffle, "seed": order.seed},
        "wrap": source.wrap.value,
        "max_passes": _number(source.max_passes),
    }


@attrs.frozen(kw_only=True)
class SourceReads:
    """What one call reads of one source of its mixture: the source's cursor goes from
    ``start`` to ``stop`` (read numbers over the run: read ``t`` is position ``t mod samples``
    of pass ``t // samples``), and ``repeated`` positions a data-parallel loader's padding read
    a second time (rule 17) on top.

    >>> reads = SourceReads(name="web", samples=1000, start=600, stop=1500)
    >>> reads.read, reads.passes, str(reads)
    (900, Fraction(9, 10), 'web: 900 samples, positions 600-999 of pass 0 and 0-499 of pass 1')
    """

    name: str
    samples: int
    start: int
    stop: int
    repeated: int = 0
    tokens_per_sample: int | None = None

    @property
    def read(self) -> int:
        """Samples of the source read for the first time in this pass (padding aside)."""
        return self.stop - self.start

    @property
    def passes(self) -> Fraction:
        """The passes over the source this call reads."""
        return Fraction(self.read, self.samples)

    @property
    def tokens(self) -> int | None:
        """Tokens read, padding included, when the source's sample length is known."""
        if self.tokens_per_sample is None:
            return None
        return (self.read + self.repeated) * self.tokens_per_sample

    def __str__(self) -> str:
        text = f"{self.name}: {counted(self.read)} sample{'' if self.read == 1 else 's'}"
        if self.read:
            text += ", " + read_span(self.start, self.stop, self.samples)
        if self.repeated:
            text += f", and {counted(self.repeated)} padding positions read again"
        return text


def read_span(start: int, stop: int, samples: int) -> str:
    """Reads ``[start, stop)`` of a source of ``samples`` as positions of
    its passes: ``positions 600-999 of pass 0 and 0-499 of pass 1``, ``all of passes 0-1``.

    >>> read_span(0, 2000, 1000), read_span(500, 2100, 1000)
    ('all of passes 0-1', 'positions 500-999 of pass 0, all of pass 1, and 0-99 of pass 2')
    """
    if stop <= start:
        return "no position"
    first_pass, first = divmod(start, samples)
    last_pass, last = divmod(stop - 1, samples)
    whole_from = first_pass if first == 0 else first_pass + 1
    whole_to = last_pass if last == samples - 1 else last_pass - 1
    if first_pass == last_pass and whole_from > whole_to:
        return f"positions {_range(first, last)} of pass {first_pass}"
    parts = []
    if first_pass < whole_from:
        parts.append(f"positions {_range(first, samples - 1)} of pass {first_pass}")
    if whole_from <= whole_to:
        passes = (
            f"pass {whole_from}" if whole_from == whole_to else f"passes {whole_from}-{whole_to}"
        )
        parts.append(f"all of {passes}")
    if last_pass > whole_to:
        words = "" if parts and parts[0].startswith("positions") else "positions "
        parts.append(f"{words}{_range(0, last)} of pass {last_pass}")
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return f"{parts[0]}, {parts[1]}, and {parts[2]}"


def _range(first: int, last: int) -> str:
    return f"{first:,}" if first == last else f"{first:,}-{last:,}"


def cursors_text(cursors: Mapping[str, int]) -> str:
    """Cursors as ``web at 600, code at 200``."""
    return ", ".join(f"{name} at {read:,}" for name, read in cursors.items())
