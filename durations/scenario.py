"""Scenario files: a run described in TOML, mirroring the API one to one.

Parsing is pure: ``Scenario.from_toml(text, source=...)`` takes the text; reading files is the
command line's job. The format is documented key by key in ``docs/scenario-files.md``.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import DurationsError
from .fit import DataPolicy, FitCall, ResumeMode, RunConfig
from .loader import Loader
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
    relative to the scenario file).
    """

    config: RunConfig
    loaders: Mapping[str, Loader]
    calls: tuple[FitCall, ...]
    checkpoint: str | None = None
    source: str = "<scenario>"

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
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ScenarioError(source, "", f"invalid TOML: {error}") from None
        except RecursionError:
            raise ScenarioError(
                source, "", "invalid TOML: arrays or inline tables nested too deeply to read"
            ) from None
        return _Parser(source).scenario(data)


_TOP = {"run", "loaders", "fit", "resume"}
_RUN = {"max_duration"}
_LOADER = {"samples", "batch_size", "drop_last", "tokens_per_sample"}
_SHARDED = {"world_size", "device_batch_size", "accumulation", "padding"}
_FIT = {"loader", "duration", "until", "reset_time", "name"}
_RESUME = {"checkpoint", "mode", "data"}


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
                where = f"{key}.{name}" if key else name
                raise self.fail(where, f"unknown key {name!r}{hint}; valid keys here: {valid}")
        return value

    def typed(self, table: dict[str, Any], key: str, where: str, kind: type, what: str) -> Any:
        value = table.get(key)
        if value is None:
            return None
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.fail(f"{where}.{key}", f"expected {what}, got {_kind(value)} {value!r}")
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
        return Scenario(
            config=config, loaders=loaders, calls=calls, checkpoint=checkpoint, source=self.source
        )

    def loader(self, name: str, body: object) -> Loader:
        where = f"loaders.{name}"
        table = self.table(body, where, _LOADER | _SHARDED)
        samples = self.typed(table, "samples", where, int, "a whole number")
        batch = self.typed(table, "batch_size", where, int, "a whole number")
        drop_last = self.typed(table, "drop_last", where, bool, "true or false")
        tokens = self.typed(table, "tokens_per_sample", where, int, "a whole number")
        if _SHARDED & set(table):
            return self.sharded(where, table, name, samples, batch, bool(drop_last), tokens)
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
            ),
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
            defined = ", ".join(loaders) or "none"
            close = difflib.get_close_matches(loader_name, list(loaders), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.fail(
                f"{where}.loader",
                f"undefined loader {loader_name!r}{hint}; defined loaders: {defined}",
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
