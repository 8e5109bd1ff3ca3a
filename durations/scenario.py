"""Scenario files: a run described in TOML, mirroring the API one to one.

Parsing is pure: ``Scenario.from_toml(text, source=...)`` takes the text; reading files is the
command line's job. The format is documented key by key in ``docs/scenario-files.md``.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import SHOWN_CHARS, DurationsError, elided, shown, shown_value
from .fit import DataPolicy, FitCall, ResumeMode, RunConfig
from .intervals import At, AtCallEnds, Every
from .loader import Loader
from .mixture import Mixture, Source
from .order import Order
from .schedules import END, Boundary, Landmark, OnExtend, Schedule
from .time import Time
from .units import Unit

__all__ = ["Scenario", "ScenarioError"]


class ScenarioError(DurationsError, ValueError):
    """A scenario file that cannot be read as a run. ``source`` is the file, ``key`` the place."""

    def __init__(self, source: str, key: str, message: str) -> None:
        self.source = source
        self.key = key
        where = f"{source}: {key}: " if key else f"{source}: "
        super().__init__(where + message)


@attrs.frozen(kw_only=True)
class Scenario:
    """A run as a scenario file states it: configuration, loaders, fit calls, and resume.

    ``checkpoint`` is the ``[resume] checkpoint`` path exactly as written (relative paths are
    relative to the scenario file). ``schedule`` and ``on_extend`` are the ``[schedule]`` table,
    ``events`` the ``[events.NAME]`` tables, in the file's order.
    """

    config: RunConfig
    loaders: Mapping[str, Loader]
    calls: tuple[FitCall, ...]
    checkpoint: str | None = None
    source: str = "<scenario>"
    schedule: Schedule | None = None
    on_extend: OnExtend | None = None
    events: Mapping[str, Every | At | AtCallEnds] = attrs.field(factory=dict)

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<scenario>") -> Scenario:
        """Parse a scenario from TOML text; errors name ``source``, the key, and what is valid.

        >>> s = Scenario.from_toml('''
        ... [run]
        ... max_duration = "2ep"
        ... [loaders.big]
        ... samples = 1_000
        ... batch_size = 10
        ... [[fit]]
        ... loader = "big"
        ... ''')
        >>> s.calls[0].loader.steps_per_epoch
        100
        """
        long_key = _LONG_KEY.search(text)
        if long_key is not None:
            line = text.count("\n", 0, long_key.start()) + 1
            raise ScenarioError(
                source,
                "",
                f"invalid TOML: line {line:,} has a dotted key of more than {MAX_KEY_PARTS} parts; "
                "Python's TOML reader takes time to the square of the parts, and a scenario's "
                "keys have at most 3",
            )
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ScenarioError(source, "", f"invalid TOML: {elided(str(error))}") from None
        except RecursionError:
            raise ScenarioError(
                source, "", "invalid TOML: arrays or inline tables nested too deeply to read"
            ) from None
        except ValueError:  # an integer past the digits int() converts
            raise ScenarioError(
                source,
                "",
                "invalid TOML: an integer with more digits than Python converts (4,300 unless "
                "configured); no scenario needs one",
            ) from None
        return _Parser(source).scenario(data)


#: The most parts a dotted key may have (``[loaders.a]`` has 2): ``tomllib`` takes time to the
#: square of the parts of one key, so a hostile ``[a.a.a...]`` of 100,000 parts would take
#: minutes. Longer keys are refused before the TOML is read.
MAX_KEY_PARTS = 100

#: The most ``[[fit]]`` tables a scenario file may hold: what the command prints stays bounded
#: (``--json`` lists every call; 5,000 calls made 5.5 MB).
MAX_CALLS = 1_000

#: A run of ``MAX_KEY_PARTS`` key parts each followed by a dot (bare or quoted keys), starting
#: where a key starts: linear to search, since a match cannot start inside such a run.
_LONG_KEY = re.compile(
    rf"""(?<![A-Za-z0-9_\-."'])(?:(?:[A-Za-z0-9_\-]+|"[^"\n]*"|'[^'\n]*')[ \t]*\.[ \t]*)"""
    rf"{{{MAX_KEY_PARTS}}}"
)

_TOP = {"run", "loaders", "fit", "resume", "schedule", "events"}
_RUN = {"max_duration"}
_LOADER = {"samples", "batch_size", "drop_last", "tokens_per_sample", "order", "seed"}
_SHARDED = {"world_size", "device_batch_size", "accumulation", "padding"}
#: A mixture loader's own keys (it has ``sources`` in place of ``samples`` and an order).
_MIXED = {"sources", "stop", "unit", "restart", "batch_size", "drop_last"}
_SOURCE = {
    "samples",
    "weight",
    "count",
    "repeats",
    "tokens_per_sample",
    "order",
    "seed",
    "wrap",
    "max_passes",
}
_FIT = {"loader", "duration", "until", "reset_time", "name"}
_RESUME = {"checkpoint", "mode", "data"}
_SCHEDULE = {"initial", "warmup", "pieces", "on_extend"}
#: The keys of each kind of ``[[schedule.pieces]]``, besides ``kind``: the ``Schedule.then_*``
#: method of that name takes them as arguments.
_PIECES = {
    "constant": {"until", "value"},
    "linear": {"to", "until"},
    "cosine": {"to", "until"},
    "exponential": {"to", "until"},
    "inverse_sqrt": {"until"},
    "drops": {"at", "gamma", "until"},
}
_EVENT = {"every", "at", "at_call_ends"}
_BOUNDARY = "a time string such as '2000ba' or '0.9dur', 'end', 'start:CALL' or 'stop:CALL'"


def _key(name: str) -> str:
    """A table name as a message shows it in a key path: whole, or its start and length."""
    return name if len(name) <= SHOWN_CHARS else shown(name)


def _names(names: list[str], most: int = 10) -> str:
    """The first ``most`` names, each by its start when long, and how many others."""
    listed = ", ".join(_key(name) for name in names[:most])
    return listed + (f", and {len(names) - most:,} more" if len(names) > most else "")


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> ScenarioError:
        return ScenarioError(self.source, key, message)

    def table(self, value: object, key: str, allowed: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {_kind(value)}")
        for name in value:
            if name not in allowed:
                valid = ", ".join(sorted(allowed))
                close = difflib.get_close_matches(name, sorted(allowed), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                where = f"{key}.{_key(name)}" if key else _key(name)
                raise self.fail(where, f"unknown key {shown(name)}{hint}; valid keys here: {valid}")
        return value

    def typed(self, table: dict[str, Any], key: str, where: str, kind: type, what: str) -> Any:
        value = table.get(key)
        if value is None:
            return None
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.fail(
                f"{where}.{key}", f"expected {what}, got {_kind(value)} {shown_value(value)}"
            )
        return value

    def time(self, table: dict[str, Any], key: str, where: str) -> Time | None:
        text = self.typed(table, key, where, str, "a time string such as '2ep' or '1000ba'")
        if text is None:
            return None
        try:
            return Time.parse(text)
        except DurationsError as error:
            raise self.fail(f"{where}.{key}", str(error)) from None

    def build(self, where: str, make: Any) -> Any:
        try:
            return make()
        except DurationsError as error:
            raise self.fail(where, str(error)) from None

    def scenario(self, data: dict[str, Any]) -> Scenario:
        self.table(data, "", _TOP)
        run = self.table(data.get("run", {}), "run", _RUN)
        max_duration = self.time(run, "max_duration", "run")
        if max_duration is not None and max_duration.unit is Unit.DUR:
            raise self.fail(
                "run.max_duration",
                f"{max_duration} is a fraction of max_duration itself; give it in ba, ep, sp "
                "or tok",
            )

        loaders_table = data.get("loaders")
        if loaders_table is None:
            raise self.fail("loaders", "missing: define at least one [loaders.NAME] table")
        if not isinstance(loaders_table, dict):
            raise self.fail("loaders", f"expected a table of loaders, got {_kind(loaders_table)}")
        loaders = {name: self.loader(name, body) for name, body in loaders_table.items()}

        fits = data.get("fit")
        if fits is None:
            raise self.fail("fit", "missing: add at least one [[fit]] table")
        if not isinstance(fits, list):
            raise self.fail("fit", "expected an array of tables: write [[fit]], not [fit]")
        if not fits:
            raise self.fail("fit", "empty: add at least one [[fit]] table")
        if len(fits) > MAX_CALLS:
            raise self.fail(
                "fit",
                f"{len(fits):,} [[fit]] tables; a scenario file has at most {MAX_CALLS:,} (a "
                "script has a handful; plan() itself takes any number)",
            )
        calls = tuple(self.fit(i, body, loaders) for i, body in enumerate(fits))

        resume = self.table(data.get("resume", {}), "resume", _RESUME)
        checkpoint = self.typed(resume, "checkpoint", "resume", str, "a path")
        mode = self.typed(resume, "mode", "resume", str, "one of continue, extend, weights")
        policy = self.typed(resume, "data", "resume", str, "one of exact, replay_epoch, next_epoch")
        config = self.build(
            "resume",
            lambda: RunConfig(
                max_duration=max_duration,
                resume=ResumeMode.CONTINUE if mode is None else mode,
                data=DataPolicy.EXACT if policy is None else policy,
            ),
        )
        names = [call.identity(index) for index, call in enumerate(calls)]
        schedule, on_extend = None, None
        if "schedule" in data:
            schedule, on_extend = self.schedule(data["schedule"], names)
        events = {}
        if "events" in data:
            table = data["events"]
            if not isinstance(table, dict):
                raise self.fail(
                    "events", f"expected a table of [events.NAME] tables, got {_kind(table)}"
                )
            events = {name: self.event(name, body, names) for name, body in table.items()}
        return Scenario(
            config=config,
            loaders=loaders,
            calls=calls,
            checkpoint=checkpoint,
            source=self.source,
            schedule=schedule,
            on_extend=on_extend,
            events=events,
        )

    # -- [schedule] and [events] ---------------------------------------------------------

    def factor(self, table: dict[str, Any], key: str, where: str) -> Any:
        """A factor as the API takes it: an integer, or a decimal string (never a TOML float)."""
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            inexact = (
                " (a TOML float is inexact: write it as a string)"
                if isinstance(value, float)
                else ""
            )
            raise self.fail(
                f"{where}.{key}",
                f'expected a factor: an integer or a decimal string such as "0.1"{inexact}, '
                f"got {_kind(value)} {shown_value(value)}",
            )
        return value

    def boundary(self, value: object, where: str, names: list[str]) -> Boundary:
        """``'end'``, ``'start:CALL'``, ``'stop:CALL'`` or a time string."""
        if not isinstance(value, str):
            raise self.fail(where, f"expected {_BOUNDARY}, got {_kind(value)} {shown_value(value)}")
        if value == "end":
            return END
        kind, colon, call = value.partition(":")
        if colon and kind in ("start", "stop"):
            if call not in names:
                close = difflib.get_close_matches(call, names, n=1)
                hint = f" (did you mean {shown(close[0])}?)" if close else ""
                raise self.fail(
                    where,
                    f"no call {shown(call)} in [[fit]]{hint}; calls: {_names(names)} (a call "
                    "without a name is '#' and its position)",
                )
            return Landmark.call_start(call) if kind == "start" else Landmark.call_stop(call)
        try:
            return Time.parse(value)
        except DurationsError as error:
            raise self.fail(where, f"{error}; a boundary is {_BOUNDARY}") from None

    def schedule(self, body: object, names: list[str]) -> tuple[Schedule, OnExtend | None]:
        table = self.table(body, "schedule", _SCHEDULE)
        initial = self.factor(table, "initial", "schedule")
        mode = self.typed(table, "on_extend", "schedule", str, "'stretch' or 'rewarm'")
        if mode is not None and mode not in ("stretch", "rewarm"):
            raise self.fail(
                "schedule.on_extend", f"expected 'stretch' or 'rewarm', got {shown(mode)}"
            )
        on_extend = None if mode is None else OnExtend(mode)
        schedule: Schedule
        if "warmup" in table:
            warmup = self.boundary(table["warmup"], "schedule.warmup", names)
            schedule = self.build(
                "schedule",
                lambda: Schedule.warmup(warmup, initial=0 if initial is None else initial),
            )
        else:
            schedule = self.build(
                "schedule.initial", lambda: Schedule(1 if initial is None else initial)
            )
        pieces = table.get("pieces", [])
        if not isinstance(pieces, list):
            raise self.fail(
                "schedule.pieces",
                "expected an array of tables: write [[schedule.pieces]], not [schedule.pieces]",
            )
        for index, piece in enumerate(pieces):
            schedule = self.piece(schedule, index, piece, names)
        return schedule, on_extend

    def piece(self, schedule: Schedule, index: int, body: object, names: list[str]) -> Schedule:
        where = f"schedule.pieces[{index}]"
        kinds = ", ".join(_PIECES)
        if not isinstance(body, dict):
            raise self.fail(where, f"expected a table, got {_kind(body)}")
        kind = self.typed(body, "kind", where, str, f"one of {kinds}")
        if kind is None:
            raise self.fail(f"{where}.kind", f"missing: one of {kinds}")
        if kind not in _PIECES:
            close = difflib.get_close_matches(kind, list(_PIECES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            warmup = " (a warmup is [schedule] warmup)" if kind == "warmup" else ""
            raise self.fail(
                f"{where}.kind",
                f"unknown kind {shown(kind)}{hint}{warmup}; expected one of {kinds}",
            )
        self.table(body, where, {"kind"} | _PIECES[kind])
        required = {"until"} | ({"to"} if "to" in _PIECES[kind] else set())
        required |= {"at", "gamma"} if kind == "drops" else set()
        for key in sorted(required):
            if key not in body:
                raise self.fail(f"{where}.{key}", f"missing: a {kind} piece needs {key}")
        until = self.boundary(body["until"], f"{where}.until", names)
        args: dict[str, Any] = {"until": until}
        for key in ("to", "value", "gamma"):
            if key in body:
                args[key] = self.factor(body, key, where)
        if "at" in body:
            at = body["at"]
            items = at if isinstance(at, list) else [at]
            args["at"] = [
                self.boundary(
                    item, f"{where}.at[{i}]" if isinstance(at, list) else f"{where}.at", names
                )
                for i, item in enumerate(items)
            ]
        method = getattr(schedule, f"then_{kind}")
        return self.build(where, lambda: method(**args))  # type: ignore[no-any-return]

    def event(self, name: str, body: object, names: list[str]) -> Every | At | AtCallEnds:
        where = f"events.{_key(name)}"
        table = self.table(body, where, _EVENT)
        given = [key for key in ("every", "at", "at_call_ends") if key in table]
        if len(given) != 1:
            found = f"got {' and '.join(given)}" if given else "got none"
            raise self.fail(
                where,
                f"give exactly one of every (a time such as '500ba'), at (a boundary or an "
                f"array of them) or at_call_ends = true; {found}",
            )
        if "every" in table:
            every = self.typed(table, "every", where, str, "a time string such as '500ba'")
            time = self.boundary(every, f"{where}.every", names)
            return self.build(f"{where}.every", lambda: Every(time))  # type: ignore[no-any-return]
        if "at" in table:
            at = table["at"]
            if isinstance(at, list):
                times = [self.boundary(t, f"{where}.at[{i}]", names) for i, t in enumerate(at)]
            else:
                times = [self.boundary(at, f"{where}.at", names)]
            return self.build(f"{where}.at", lambda: At(times))  # type: ignore[no-any-return]
        if table["at_call_ends"] is not True:
            raise self.fail(
                f"{where}.at_call_ends",
                f"expected true (leave the key out otherwise), got {_kind(table['at_call_ends'])} "
                f"{shown_value(table['at_call_ends'])}",
            )
        return AtCallEnds()

    def loader(self, name: str, body: object) -> Loader:
        where = f"loaders.{_key(name)}"
        if isinstance(body, dict) and "sources" in body:
            return self.mixed(name, body, where)
        table = self.table(body, where, _LOADER | _SHARDED)
        samples = self.typed(table, "samples", where, int, "a whole number")
        batch = self.typed(table, "batch_size", where, int, "a whole number")
        drop_last = self.typed(table, "drop_last", where, bool, "true or false")
        tokens = self.typed(table, "tokens_per_sample", where, int, "a whole number")
        order = self.order(table, where)
        if _SHARDED & set(table):
            loader = self.sharded(where, table, name, samples, batch, bool(drop_last), tokens)
            return self.build(where, lambda: attrs.evolve(loader, order=order))  # type: ignore[no-any-return]
        if "batch_size" not in table:
            raise self.fail(
                f"{where}.batch_size",
                "missing: give the global batch size, or world_size and device_batch_size for "
                "a data-parallel loader",
            )
        return self.build(  # type: ignore[no-any-return]
            where,
            lambda: Loader(
                name=name,
                samples=samples,
                batch_size=batch,
                drop_last=bool(drop_last),
                tokens_per_sample=tokens,
                order=order,
            ),
        )

    def mixed(self, name: str, body: dict[str, Any], where: str) -> Loader:
        """A loader of a mixture: its ``[loaders.NAME.sources.SOURCE]`` tables, the
        mixture's ``stop``, ``unit`` and ``restart``, and the batch geometry."""
        table = self.table(body, where, _MIXED | _SHARDED)
        sources_table = self.table(table["sources"], f"{where}.sources", set(table["sources"]))
        if not sources_table:
            raise self.fail(f"{where}.sources", "expected at least one [..sources.NAME] table")
        sources = [
            self.source_table(source, body, f"{where}.sources.{_key(source)}")
            for source, body in sources_table.items()
        ]
        stop = self.typed(table, "stop", where, str, "first_exhausted, all_exhausted or never")
        unit = self.typed(table, "unit", where, str, "'sp' or 'tok'")
        restart = self.typed(table, "restart", where, list, "a list of source names")
        if restart is not None and not all(isinstance(n, str) for n in restart):
            raise self.fail(f"{where}.restart", "expected a list of source names (strings)")
        mixture = self.build(
            where,
            lambda: Mixture(
                sources=sources,
                unit="sp" if unit is None else unit,
                stop=stop,
                restart=frozenset(restart or ()),
            ),
        )
        batch = self.typed(table, "batch_size", where, int, "a whole number")
        drop_last = bool(self.typed(table, "drop_last", where, bool, "true or false"))
        if _SHARDED & set(table):
            for key in ("world_size", "device_batch_size"):
                if key not in table:
                    raise self.fail(
                        f"{where}.{key}",
                        "missing: a data-parallel loader gives world_size and "
                        "device_batch_size (the global batch is their product times "
                        "accumulation)",
                    )
            if batch is not None:
                raise self.fail(
                    f"{where}.batch_size",
                    "leave batch_size out of a data-parallel loader: it is world_size x "
                    "device_batch_size x accumulation",
                )
            world = self.typed(table, "world_size", where, int, "a whole number")
            micro = self.typed(table, "device_batch_size", where, int, "a whole number")
            accumulation = self.typed(table, "accumulation", where, int, "a whole number")
            padding = self.typed(table, "padding", where, str, "one of repeat, drop, cycle")
            return self.build(  # type: ignore[no-any-return]
                where,
                lambda: Loader.mixing(
                    mixture,
                    world_size=world,
                    device_batch_size=micro,
                    accumulation=1 if accumulation is None else accumulation,
                    padding="repeat" if padding is None else padding,
                    drop_last=drop_last,
                    name=name,
                ),
            )
        if batch is None:
            raise self.fail(
                f"{where}.batch_size",
                "missing: give the global batch size, or world_size and device_batch_size for "
                "a data-parallel loader",
            )
        return self.build(  # type: ignore[no-any-return]
            where, lambda: Loader.mixing(mixture, batch_size=batch, drop_last=drop_last, name=name)
        )

    def source_table(self, name: str, body: object, where: str) -> Source:
        """One ``[loaders.NAME.sources.SOURCE]`` table."""
        table = self.table(body, where, _SOURCE)
        samples = self.typed(table, "samples", where, int, "a whole number")
        if samples is None:
            raise self.fail(f"{where}.samples", "missing: the samples in one pass of the source")
        parts = {key: self.exact(table, key, where) for key in ("weight", "repeats", "max_passes")}
        count = self.typed(table, "count", where, int, "a whole number")
        tokens = self.typed(table, "tokens_per_sample", where, int, "a whole number")
        wrap = self.typed(table, "wrap", where, str, "'reshuffle' or 'replay'")
        order = self.order(table, where)
        return self.build(  # type: ignore[no-any-return]
            where,
            lambda: Source(
                name=name,
                samples=samples,
                weight=parts["weight"],
                count=count,
                repeats=parts["repeats"],
                tokens_per_sample=tokens,
                order=order,
                wrap="reshuffle" if wrap is None else wrap,
                max_passes=parts["max_passes"],
            ),
        )

    def exact(self, table: dict[str, Any], key: str, where: str) -> int | str | None:
        """A weight, repeat count or budget: a whole number, or a string such as ``'0.3'``
        or ``'1/3'`` (a TOML float is refused: its binary value is not the number written)."""
        value = table.get(key)
        if isinstance(value, float):
            raise self.fail(
                f"{where}.{key}",
                f"got the float {shown_value(value)}, which is not exact; write it as a string "
                f'({key} = "{value}") or a whole number',
            )
        if (
            value is None
            or isinstance(value, str)
            or (isinstance(value, int) and not isinstance(value, bool))
        ):
            return value
        raise self.fail(
            f"{where}.{key}",
            f"expected a whole number or a string such as '0.3' or '1/3', got {_kind(value)} "
            f"{shown_value(value)}",
        )

    def order(self, table: dict[str, Any], where: str) -> Order | None:
        """A loader's ``order`` (``"sequential"``, or ``"shuffled"`` with a ``seed``)."""
        kind = self.typed(table, "order", where, str, "'sequential' or 'shuffled'")
        seed = self.typed(table, "seed", where, int, "a whole number from 0 to 2**64 - 1")
        if kind is None:
            if seed is not None:
                raise self.fail(
                    f"{where}.seed",
                    'a seed is for a shuffled order: add order = "shuffled", or leave seed out',
                )
            return None
        if kind == "sequential":
            if seed is not None:
                raise self.fail(
                    f"{where}.seed",
                    'order = "sequential" reads the data set in order and takes no seed: '
                    'leave seed out, or use order = "shuffled"',
                )
            return Order.sequential()
        if kind == "shuffled":
            if seed is None:
                raise self.fail(
                    f"{where}.seed",
                    'missing: order = "shuffled" needs the seed of its permutation (a whole '
                    "number from 0 to 2**64 - 1)",
                )
            return self.build(f"{where}.seed", lambda: Order.shuffled(seed))  # type: ignore[no-any-return]
        raise self.fail(
            f"{where}.order",
            f"unknown order {shown(kind)}; expected 'sequential' or 'shuffled' (with a seed)",
        )

    def sharded(
        self,
        where: str,
        table: dict[str, Any],
        name: str,
        samples: int | None,
        batch: int | None,
        drop_last: bool,
        tokens: int | None,
    ) -> Loader:
        """A data-parallel loader: per-device geometry, the global batch derived from it."""
        for key in ("world_size", "device_batch_size"):
            if key not in table:
                raise self.fail(
                    f"{where}.{key}",
                    "missing: a data-parallel loader gives world_size and device_batch_size "
                    "(the global batch is their product times accumulation)",
                )
        world = self.typed(table, "world_size", where, int, "a whole number")
        micro = self.typed(table, "device_batch_size", where, int, "a whole number")
        accumulation = self.typed(table, "accumulation", where, int, "a whole number")
        padding = self.typed(table, "padding", where, str, "one of repeat, drop, cycle")
        loader = self.build(
            where,
            lambda: Loader.sharded(
                name=name,
                samples=samples,
                world_size=world,
                device_batch_size=micro,
                accumulation=1 if accumulation is None else accumulation,
                padding="repeat" if padding is None else padding,
                drop_last=drop_last,
                tokens_per_sample=tokens,
            ),
        )
        if batch is not None and batch != loader.batch_size:
            raise self.fail(
                f"{where}.batch_size",
                f"{batch} is not world_size x device_batch_size x accumulation = "
                f"{loader.batch_size}; leave batch_size out of a data-parallel loader",
            )
        return loader  # type: ignore[no-any-return]

    def fit(self, index: int, body: object, loaders: dict[str, Loader]) -> FitCall:
        where = f"fit[{index}]"
        table = self.table(body, where, _FIT)
        loader_name = self.typed(table, "loader", where, str, "the name of a [loaders.NAME] table")
        if loader_name is None:
            raise self.fail(f"{where}.loader", "missing: name the loader this call trains on")
        if loader_name not in loaders:
            defined = _names(list(loaders)) if loaders else "none"
            close = difflib.get_close_matches(loader_name, list(loaders), n=1)
            hint = f" (did you mean {shown(close[0])}?)" if close else ""
            raise self.fail(
                f"{where}.loader",
                f"undefined loader {shown(loader_name)}{hint}; defined loaders: {defined}",
            )
        duration = self.time(table, "duration", where)
        until = self.time(table, "until", where)
        reset = self.typed(table, "reset_time", where, bool, "true or false")
        name = self.typed(table, "name", where, str, "a string")
        return self.build(  # type: ignore[no-any-return]
            where,
            lambda: FitCall(
                loader=loaders[loader_name],
                duration=duration,
                until=until,
                reset_time=bool(reset),
                name=name,
            ),
        )


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table"}
    return names.get(type(value), type(value).__name__)
