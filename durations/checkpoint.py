"""``Checkpoint``: the progress a run saved, and the ledger of the fit calls it had started.

The ledger is what makes autoresume idempotent: it stores each started call's resolved target,
so resuming never adds a relative duration twice, and its run-clock origin, so ``reset_time``
is never applied twice. ``to_dict``/``from_dict`` give a versioned JSON form
(``docs/checkpoint-format.md``).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs

from .errors import CheckpointFormatError, DurationsError, shown, shown_value
from .fit import ResumeMode
from .loader import Loader
from .mixture import Mixture, Source
from .order import Order
from .progress import Progress
from .sharding import Sharding
from .time import Time
from .units import Unit

__all__ = ["FORMAT", "Checkpoint", "LedgerEntry", "TakenUp"]

#: The newest serialized format this version writes and reads (1 to 6 are read). Format 3 adds
#: each loader's ``sharding`` (``null`` for one global stream); format 4 the checkpoint's
#: ``taken_up`` (``null`` for a script that did not take a run up); format 5 each loader's
#: ``order`` (``null`` when the job's sampler orders the data); format 6 each loader's
#: ``mixture`` (``null`` for one data set) and the checkpoint's source ``cursors``. A
#: checkpoint is written in the oldest format that holds it (4 without an order or a mixture,
#: 5 with an order and no mixture), so a run that uses neither stays readable by older
#: versions.
FORMAT = 6
#: The format a checkpoint without an ordered loader is written in.
_UNORDERED_FORMAT = 4
#: The format a checkpoint with an ordered loader and no mixture is written in.
_ORDERED_FORMAT = 5


@attrs.frozen(kw_only=True)
class LedgerEntry:
    """What a checkpoint remembers of one fit call that had started.

    ``duration``/``until``/``reset_time`` are what the call asked for and ``fingerprint`` their
    digest with the loader's geometry; ``start`` is where it started and ``origin`` the run
    clock it measured on; ``target`` is its resolved stop on that clock. ``stop`` is where it
    ended, once ``finished``.
    """

    name: str
    fingerprint: str
    loader: Loader
    duration: Time | None
    until: Time | None
    reset_time: bool
    start: Progress
    origin: Progress
    target: Time
    finished: bool
    stop: Progress | None = None
    #: Once finished: the target the next relative call may be measured from, or ``None`` when
    #: this call's target is not its anchor (semantics rule 3 says exactly when it is).
    anchor: Time | None = None

    def __attrs_post_init__(self) -> None:
        if not self.name:
            raise CheckpointFormatError("", "a ledger entry needs the call's name")
        if self.finished and self.stop is None:
            raise CheckpointFormatError("", f"call {shown(self.name)} is finished but has no stop")
        if self.duration is not None and self.until is not None:
            raise CheckpointFormatError(
                "", f"call {shown(self.name)} records both a duration and an until; a call has one"
            )
        if self.target.unit is Unit.DUR:
            raise CheckpointFormatError(
                "",
                f"call {shown(self.name)} records target {self.target}; a resolved target is "
                "never in dur",
            )
        if not self.origin.at_epoch_start:
            raise CheckpointFormatError(
                "",
                f"call {shown(self.name)} records a clock origin inside an epoch; a run clock "
                "starts at an epoch start",
            )


@attrs.frozen
class TakenUp:
    """How the script whose ledger a checkpoint holds took a run up: under ``mode`` (``extend``
    or ``weights``), from a checkpoint at lifetime step ``step``.

    A plan made under ``extend`` or ``weights`` writes a new ledger for its own calls, and
    records this beside it, so that the same script run again from one of its own checkpoints
    continues that ledger instead of taking the run up a second time (``docs/semantics.md``,
    rule 9).

    >>> TakenUp(ResumeMode.EXTEND, 26)
    TakenUp(mode=<ResumeMode.EXTEND: 'extend'>, step=26)
    """

    mode: ResumeMode
    step: int

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.mode, ResumeMode) or self.mode is ResumeMode.CONTINUE:
            raise CheckpointFormatError(
                "",
                f"taken_up mode {shown_value(self.mode)}: a run is taken up under extend or "
                "weights (a continue run keeps the ledger it found)",
            )
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 0:
            raise CheckpointFormatError(
                "", f"taken_up step {shown_value(self.step)}: expected a whole number >= 0"
            )

    def __str__(self) -> str:
        return f"taken up under {self.mode.value} at lifetime step {self.step:,}"


def _ledger(entries: Iterable[LedgerEntry] | None) -> tuple[LedgerEntry, ...] | None:
    return None if entries is None else tuple(entries)


def _cursors(
    value: Mapping[str, int] | Iterable[tuple[str, int]] | None,
) -> tuple[tuple[str, int], ...] | None:
    if value is None:
        return None
    pairs = tuple(value.items()) if isinstance(value, Mapping) else tuple(value)
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise CheckpointFormatError(
                "cursors", f"expected source names and reads, got {shown_value(pair)}"
            )
        name, read = pair
        if isinstance(read, bool) or not isinstance(read, int) or read < 0:
            raise CheckpointFormatError(
                f"cursors.{_key(name)}", f"expected a whole number >= 0, got {shown_value(read)}"
            )
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise CheckpointFormatError("cursors", "a source has one cursor; a name repeats")
    return pairs


@attrs.frozen(kw_only=True)
class Checkpoint:
    """A saved position: ``progress``, the ``ledger`` of started calls, and loader state.

    ``ledger`` is ``None`` for a checkpoint written without one (by another trainer): the
    planner then locates it inside the script's own plan. ``loader_state`` says whether the
    data loader's position was saved too, which an exact mid-epoch resume needs. ``taken_up``
    says how the script whose ledger this is took the run up (``extend`` or ``weights``), or
    ``None`` for a script that did not.
    """

    progress: Progress
    ledger: tuple[LedgerEntry, ...] | None = attrs.field(default=None, converter=_ledger)
    loader_state: bool = False
    taken_up: TakenUp | None = None
    #: Each mixture source's cursor at ``progress``: its reads so far in the run, as ``(name,
    #: reads)`` pairs (a mapping is accepted); ``None`` when no ledger call read a mixture.
    cursors: tuple[tuple[str, int], ...] | None = attrs.field(default=None, converter=_cursors)

    def __attrs_post_init__(self) -> None:
        mixed = any(entry.loader.mixture is not None for entry in self.ledger or ())
        if mixed and self.cursors is None:
            raise CheckpointFormatError(
                "cursors",
                "the ledger has a call reading a mixture, and a mixture's checkpoint records "
                "where each of its sources stands (cursors={name: reads})",
            )
        if self.ledger is not None:
            names = [entry.name for entry in self.ledger]
            if len(set(names)) != len(names):
                counts = collections.Counter(names)
                twice = sorted(name for name, count in counts.items() if count > 1)
                listed = ", ".join(shown(name) for name in twice[:5])
                more = f", and {len(twice) - 5:,} more" if len(twice) > 5 else ""
                raise CheckpointFormatError(
                    "",
                    f"duplicate call names in the ledger ({len(names):,} entries): {listed}{more} "
                    "appear more than once; each call of a script has its own name",
                )

    # -- serialization -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``Checkpoint.from_dict(c.to_dict()) == c``."""
        loaders = [entry.loader for entry in self.ledger or ()]
        if self.cursors is not None or any(loader.mixture is not None for loader in loaders):
            version = FORMAT
        elif any(loader.order is not None for loader in loaders):
            version = _ORDERED_FORMAT
        else:
            version = _UNORDERED_FORMAT
        data: dict[str, Any] = {
            "format": version,
            "progress": _progress_to_dict(self.progress),
            "loader_state": self.loader_state,
            "ledger": None
            if self.ledger is None
            else [_entry_to_dict(entry, version) for entry in self.ledger],
            "taken_up": None
            if self.taken_up is None
            else {"mode": self.taken_up.mode.value, "step": self.taken_up.step},
        }
        if version >= 6:
            data["cursors"] = None if self.cursors is None else dict(self.cursors)
        return data

    @classmethod
    def from_dict(cls, data: object) -> Checkpoint:
        """Read a dict written by ``to_dict`` of this or an older format version.

        Malformed data, unknown keys and newer format versions raise
        :class:`~durations.CheckpointFormatError` naming the place in the data.
        """
        root = _Reader(data, "")
        version = root.whole("format")
        if version > FORMAT:
            raise CheckpointFormatError(
                "format",
                f"format {shown_value(version)} is newer than this version of durations reads "
                f"(at most {FORMAT}); upgrade durations to read it",
            )
        if version < 1:
            raise CheckpointFormatError(
                "format", f"unknown format {version}; expected a whole number from 1 to {FORMAT}"
            )
        ledger_data = root.value("ledger")
        ledger = None
        if ledger_data is not None:
            if not isinstance(ledger_data, list):
                raise CheckpointFormatError("ledger", "expected a list or null")
            ledger = tuple(
                _entry_from(_Reader(item, f"ledger[{i}]"), version)
                for i, item in enumerate(ledger_data)
            )
        progress = _progress_from(root.child("progress"))
        loader_state = root.flag("loader_state")
        taken = root.child_or_none("taken_up") if version >= 4 else None
        taken_up = None if taken is None else _taken_up_from(taken)
        cursors = _cursors_from(root) if version >= 6 else None
        root.finish()
        return root.build(
            lambda: cls(
                progress=progress,
                ledger=ledger,
                loader_state=loader_state,
                taken_up=taken_up,
                cursors=cursors,
            )
        )


_PROGRESS_FIELDS = (
    "epoch",
    "batch",
    "sample",
    "token",
    "batch_in_epoch",
    "sample_in_epoch",
    "token_in_epoch",
)
_LOADER_FIELDS = ("name", "samples", "batch_size", "drop_last", "tokens_per_sample")


def _progress_to_dict(progress: Progress) -> dict[str, Any]:
    return {field: getattr(progress, field) for field in _PROGRESS_FIELDS}


def _loader_to_dict(loader: Loader, version: int) -> dict[str, Any]:
    data = {field: getattr(loader, field) for field in _LOADER_FIELDS}
    sharding = loader.sharding
    data["sharding"] = (
        None
        if sharding is None
        else {
            "world_size": sharding.world_size,
            "device_batch_size": sharding.device_batch_size,
            "accumulation": sharding.accumulation,
            "padding": sharding.padding.value,
        }
    )
    if version >= 5:
        order = loader.order
        data["order"] = None if order is None else {"shuffle": order.shuffle, "seed": order.seed}
    if version >= 6:
        data["mixture"] = None if loader.mixture is None else loader.mixture.to_dict()
    return data


def _time_or_none(time: Time | None) -> str | None:
    return None if time is None else str(time)


def _entry_to_dict(entry: LedgerEntry, version: int) -> dict[str, Any]:
    return {
        "name": entry.name,
        "fingerprint": entry.fingerprint,
        "loader": _loader_to_dict(entry.loader, version),
        "duration": _time_or_none(entry.duration),
        "until": _time_or_none(entry.until),
        "reset_time": entry.reset_time,
        "start": _progress_to_dict(entry.start),
        "origin": _progress_to_dict(entry.origin),
        "target": str(entry.target),
        "finished": entry.finished,
        "stop": None if entry.stop is None else _progress_to_dict(entry.stop),
        "anchor": _time_or_none(entry.anchor),
    }


_T = TypeVar("_T")


class _Reader:
    """Reads one JSON object strictly: typed fields, and every key accounted for."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, Mapping):
            raise CheckpointFormatError(path, f"expected an object, got {type(data).__name__}")
        self.data = data
        self.path = path
        self.seen: set[str] = set()

    def _where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def value(self, key: str) -> object:
        if key not in self.data:
            raise CheckpointFormatError(self._where(key), "missing")
        self.seen.add(key)
        return self.data[key]

    def whole(self, key: str) -> int:
        value = self.value(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise CheckpointFormatError(
                self._where(key), f"expected a whole number, got {shown_value(value)}"
            )
        return value

    def whole_or_none(self, key: str) -> int | None:
        return None if self.value(key) is None else self.whole(key)

    def flag(self, key: str) -> bool:
        value = self.value(key)
        if not isinstance(value, bool):
            raise CheckpointFormatError(
                self._where(key), f"expected true or false, got {shown_value(value)}"
            )
        return value

    def text(self, key: str) -> str:
        value = self.value(key)
        if not isinstance(value, str):
            raise CheckpointFormatError(
                self._where(key), f"expected a string, got {shown_value(value)}"
            )
        return value

    def text_or_none(self, key: str) -> str | None:
        return None if self.value(key) is None else self.text(key)

    def time(self, key: str) -> Time:
        text = self.text(key)
        return self.build(lambda: Time.parse(text), key)

    def time_or_none(self, key: str) -> Time | None:
        return None if self.value(key) is None else self.time(key)

    def child(self, key: str) -> _Reader:
        return _Reader(self.value(key), self._where(key))

    def child_or_none(self, key: str) -> _Reader | None:
        return None if self.value(key) is None else self.child(key)

    def build(self, make: Callable[[], _T], key: str = "") -> _T:
        """Run a constructor, turning its validation error into a format error here."""
        try:
            return make()
        except CheckpointFormatError as error:
            if error.path:
                raise
            raise CheckpointFormatError(self.path, error.reason) from None
        except DurationsError as error:
            raise CheckpointFormatError(
                self._where(key) if key else self.path, str(error)
            ) from None

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            raise CheckpointFormatError(
                self.path,
                f"unknown keys {_some(unknown)}; this version of durations writes no such keys",
            )


def _some(names: list[str], most: int = 5) -> str:
    """The first ``most`` names, each shown by its start when long, and how many others."""
    listed = ", ".join(shown(name) for name in names[:most])
    more = f", and {len(names) - most:,} more" if len(names) > most else ""
    return f"[{listed}{more}]"


def _progress_from(reader: _Reader) -> Progress:
    values = {
        field: reader.whole_or_none(field) if field.startswith("token") else reader.whole(field)
        for field in _PROGRESS_FIELDS
    }
    reader.finish()
    return reader.build(lambda: Progress(**values))  # type: ignore[arg-type]


def _loader_from(reader: _Reader, version: int) -> Loader:
    name = reader.text_or_none("name")
    samples = reader.whole_or_none("samples")
    batch_size = reader.whole("batch_size")
    drop_last = reader.flag("drop_last")
    tokens = reader.whole_or_none("tokens_per_sample")
    shards = reader.child_or_none("sharding") if version >= 3 else None
    sharding = None
    if shards is not None:
        world, micro = shards.whole("world_size"), shards.whole("device_batch_size")
        accumulation, padding = shards.whole("accumulation"), shards.text("padding")
        shards.finish()
        sharding = shards.build(
            lambda: Sharding(
                world_size=world,
                device_batch_size=micro,
                accumulation=accumulation,
                padding=padding,
            )
        )
    ordering = reader.child_or_none("order") if version >= 5 else None
    order = None if ordering is None else _order_from(ordering)
    mixing = reader.child_or_none("mixture") if version >= 6 else None
    mixture = None if mixing is None else _mixture_from(mixing)
    reader.finish()
    return reader.build(
        lambda: Loader(
            name=name,
            samples=samples,
            batch_size=batch_size,
            drop_last=drop_last,
            tokens_per_sample=tokens,
            sharding=sharding,
            order=order,
            mixture=mixture,
        )
    )


def _order_from(reader: _Reader) -> Order:
    shuffle, seed = reader.flag("shuffle"), reader.whole("seed")
    reader.finish()
    return reader.build(lambda: Order(shuffle=shuffle, seed=seed))


def _mixture_from(reader: _Reader) -> Mixture:
    listed = reader.value("sources")
    if not isinstance(listed, list):
        raise CheckpointFormatError(reader._where("sources"), "expected a list of sources")
    sources = [
        _source_from(_Reader(item, f"{reader._where('sources')}[{i}]"))
        for i, item in enumerate(listed)
    ]
    unit, stop = reader.text("unit"), reader.text_or_none("stop")
    restart = reader.value("restart")
    if not isinstance(restart, list) or not all(isinstance(n, str) for n in restart):
        raise CheckpointFormatError(reader._where("restart"), "expected a list of source names")
    reader.finish()
    return reader.build(
        lambda: Mixture(sources=sources, unit=unit, stop=stop, restart=frozenset(restart))
    )


def _source_from(reader: _Reader) -> Source:
    name, samples = reader.text("name"), reader.whole("samples")
    weight, repeats = reader.text_or_none("weight"), reader.text_or_none("repeats")
    count, tokens = reader.whole_or_none("count"), reader.whole_or_none("tokens_per_sample")
    ordering = reader.child_or_none("order")
    order = None if ordering is None else _order_from(ordering)
    wrap, budget = reader.text("wrap"), reader.text_or_none("max_passes")
    reader.finish()
    return reader.build(
        lambda: Source(
            name=name,
            samples=samples,
            weight=weight,
            count=count,
            repeats=repeats,
            tokens_per_sample=tokens,
            order=order,
            wrap=wrap,
            max_passes=budget,
        )
    )


def _cursors_from(root: _Reader) -> tuple[tuple[str, int], ...] | None:
    data = root.value("cursors")
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise CheckpointFormatError("cursors", "expected an object of source names and reads")
    pairs = []
    for name, read in data.items():
        if isinstance(read, bool) or not isinstance(read, int):
            raise CheckpointFormatError(
                f"cursors.{_key(str(name))}", f"expected a whole number, got {shown_value(read)}"
            )
        pairs.append((str(name), read))
    return tuple(pairs)


def _key(name: str) -> str:
    """A source's name in a place of the data: whole when short, else by its start."""
    return name if len(name) <= 64 else f"{name[:40]}...({len(name):,} characters)"


def _taken_up_from(reader: _Reader) -> TakenUp:
    mode, step = reader.text("mode"), reader.whole("step")
    reader.finish()
    if mode not in (ResumeMode.EXTEND.value, ResumeMode.WEIGHTS.value):
        raise CheckpointFormatError(
            reader._where("mode"), f"expected 'extend' or 'weights', got {shown_value(mode)}"
        )
    return reader.build(lambda: TakenUp(ResumeMode(mode), step))


def _entry_from(reader: _Reader, version: int) -> LedgerEntry:
    stop = reader.child_or_none("stop")
    name = reader.text("name")
    fingerprint = reader.text("fingerprint")
    loader = _loader_from(reader.child("loader"), version)
    duration = reader.time_or_none("duration")
    until = reader.time_or_none("until")
    reset_time = reader.flag("reset_time")
    start = _progress_from(reader.child("start"))
    origin = _progress_from(reader.child("origin"))
    target = reader.time("target")
    finished = reader.flag("finished")
    stop_progress = None if stop is None else _progress_from(stop)
    # Format 1 had no anchor: a finished call's target anchored the next call.
    anchor = reader.time_or_none("anchor") if version >= 2 else (target if finished else None)
    reader.finish()
    return reader.build(
        lambda: LedgerEntry(
            name=name,
            fingerprint=fingerprint,
            loader=loader,
            duration=duration,
            until=until,
            reset_time=reset_time,
            start=start,
            origin=origin,
            target=target,
            finished=finished,
            stop=stop_progress,
            anchor=anchor,
        )
    )
