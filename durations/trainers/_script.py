"""Helpers the trainer profiles share to write a ``durations`` scenario in their own idiom."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from ..fit import FitCall
from ..progress import Progress
from ..scenario import Scenario
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
