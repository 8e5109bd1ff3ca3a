"""What a script asks for: its fit calls and its run configuration."""

from __future__ import annotations

import enum
import functools
import hashlib
import json
from collections.abc import Callable
from typing import TypeVar

import attrs

from .errors import FitCallError, shown_value
from .loader import Loader
from .time import Time
from .units import Unit

__all__ = ["DataPolicy", "FitCall", "ResumeMode", "RunConfig"]


def _optional_time(value: object) -> Time | None:
    if value is None or isinstance(value, Time):
        return value
    if isinstance(value, str):
        return Time.parse(value)
    raise FitCallError(f"expected a Time or a time string such as '10ba', got {shown_value(value)}")


class ResumeMode(enum.Enum):
    """How a checkpoint is taken up (``docs/semantics.md``, "Resume modes")."""

    #: Autoresume of the same script: the ledger is honoured, nothing is re-added.
    CONTINUE = "continue"
    #: Counters and run clock kept; this script's calls are all new and planned from there.
    EXTEND = "extend"
    #: Only the weights: lifetime totals kept, a fresh run clock, data from an epoch start.
    WEIGHTS = "weights"


class DataPolicy(enum.Enum):
    """Where the data resumes when a checkpoint is in the middle of an epoch."""

    #: At the saved sample position (needs a resumable loader or a sampler that skips).
    EXACT = "exact"
    #: From the start of the interrupted epoch (a plain DataLoader): samples are replayed.
    REPLAY_EPOCH = "replay_epoch"
    #: From the start of the next epoch: the rest of the interrupted epoch is skipped.
    NEXT_EPOCH = "next_epoch"


_E = TypeVar("_E", bound=enum.Enum)


def _enum(kind: type[_E], field: str) -> Callable[[object], _E]:
    def convert(value: object) -> _E:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError:
            valid = ", ".join(repr(member.value) for member in kind)
            raise FitCallError(
                f"invalid {field} {shown_value(value)}: expected one of {valid}"
            ) from None

    return convert


_to_resume_mode = _enum(ResumeMode, "resume mode")
_to_data_policy = _enum(DataPolicy, "data policy")


def _resume_mode(value: object) -> ResumeMode:
    return _to_resume_mode(value)


def _data_policy(value: object) -> DataPolicy:
    return _to_data_policy(value)


@attrs.frozen(kw_only=True)
class RunConfig:
    """The run's configuration: its default end, and how a checkpoint is taken up.

    ``max_duration`` is where a fit call without ``duration`` or ``until`` stops, on the run
    clock; it is not a cap on calls that say otherwise.
    """

    max_duration: Time | None = attrs.field(default=None, converter=_optional_time)
    resume: ResumeMode = attrs.field(default=ResumeMode.CONTINUE, converter=_resume_mode)
    data: DataPolicy = attrs.field(default=DataPolicy.EXACT, converter=_data_policy)

    def __attrs_post_init__(self) -> None:
        if self.max_duration is not None and self.max_duration.unit is Unit.DUR:
            raise FitCallError(
                f"invalid max_duration {self.max_duration}: dur is a fraction of max_duration "
                "itself; give max_duration in ba, ep, sp or tok"
            )


@attrs.frozen(kw_only=True)
class FitCall:
    """One call of a trainer's fit.

    ``duration`` is relative: this much more, measured from where the call starts (see the
    anchoring rule in ``docs/semantics.md``). ``until`` is absolute on the run clock. With
    neither, the call runs until the run's ``max_duration``. ``reset_time`` restarts the run
    clock at the start of the call. ``name`` identifies the call across re-runs of the script;
    by default a call is identified by its position (``#0``, ``#1``, ...).
    """

    loader: Loader
    duration: Time | None = attrs.field(default=None, converter=_optional_time)
    until: Time | None = attrs.field(default=None, converter=_optional_time)
    reset_time: bool = False
    name: str | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.loader, Loader):
            raise FitCallError(
                f"invalid fit call loader {shown_value(self.loader)}: expected a Loader"
            )
        if self.duration is not None and self.until is not None:
            raise FitCallError(
                f"fit call has both duration={self.duration} and until={self.until}; pass "
                "duration= for 'this much more' or until= for 'up to this point on the run "
                "clock', not both"
            )
        if not isinstance(self.reset_time, bool):
            raise FitCallError(
                f"invalid reset_time {shown_value(self.reset_time)}: expected True or False"
            )
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise FitCallError(
                f"invalid fit call name {shown_value(self.name)}: expected a non-empty string"
            )
        if self.name is not None and self.name.startswith("#"):
            raise FitCallError(
                f"invalid fit call name {shown_value(self.name)}: names starting with '#' are "
                "the default positional identities"
            )

    def identity(self, index: int) -> str:
        """The name this call is known by in a checkpoint's ledger."""
        return self.name if self.name is not None else f"#{index}"

    def fingerprint(self) -> str:
        """A short, stable digest of what the call asks for and the geometry it reads."""
        return fingerprint(self.loader, self.duration, self.until, self.reset_time)


def _sharding(loader: Loader) -> dict[str, object]:
    sharding = loader.sharding
    assert sharding is not None
    return {
        "world_size": sharding.world_size,
        "device_batch_size": sharding.device_batch_size,
        "accumulation": sharding.accumulation,
        "padding": sharding.padding.value,
    }


@functools.lru_cache(maxsize=4096)
def fingerprint(loader: Loader, duration: Time | None, until: Time | None, reset: bool) -> str:
    """The digest of a call's request and its loader's geometry (stable across versions)."""
    payload = {
        "loader": {
            "name": loader.name,
            "samples": loader.samples,
            "batch_size": loader.batch_size,
            "drop_last": loader.drop_last,
            "tokens_per_sample": loader.tokens_per_sample,
            # Added only when present, so the digest of a one-stream loader stays as it was.
            **({} if loader.sharding is None else {"sharding": _sharding(loader)}),
            **(
                {}
                if loader.order is None
                else {"order": {"shuffle": loader.order.shuffle, "seed": loader.order.seed}}
            ),
            **({} if loader.mixture is None else {"mixture": loader.mixture.to_dict()}),
        },
        "duration": None if duration is None else str(duration),
        "until": None if until is None else str(until),
        "reset_time": reset,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
