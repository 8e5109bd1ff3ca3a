"""Composer (``mosaicml`` 0.32.1) ``Trainer.fit``, emulated.

A pure emulation: nothing of Composer or torch is imported. It predicts what a sequence of
``Trainer(...)`` / ``Trainer.fit(...)`` calls trains, sample id by sample id, and the
``Timestamp`` counters (``epoch``, ``batch``, ``sample``, ``batch_in_epoch``,
``sample_in_epoch``) afterwards.

How it was verified: against real runs of Composer 0.32.1's ``Trainer`` on torch 2.13.0+cpu
(a separate venv, with torchvision's two ``register_fake`` decorators made conditional; see
``tests/frameworks/_composer_runner.py``). The runner trains a one-parameter model with
learning rate 0 on a map-style data set whose items carry their ids, and records the ids of
every optimizer step (``BATCH_END``), the timestamp after each call, the warnings and the
exact error texts. The recorded observations are ``tests/frameworks/observed_composer.json``
and ``tests/frameworks/test_profile_composer.py`` compares this module with every one of them.
Each rule below also names the source line it comes from (``composer/trainer/trainer.py``,
``composer/core/time.py``, ``composer/utils/misc.py`` of the 0.32.1 wheel).

Not modelled: shuffled samplers, ``drop_last``, tokens, iterations, wall-clock (``sec``) and
``dur`` durations in ``fit`` (refused with :class:`NotImplementedError`), scale-schedule
ratios, and the checkpoint saver's file-conflict check (``FileExistsError`` when
``save_overwrite=False`` finds checkpoints "from the future" in ``save_folder``). A trainer
that is not built with ``autoresume`` is assumed to have ``save_overwrite=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import attrs

from ..scenario import Scenario
from ..time import Time as DurationsTime
from ._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported
from ._script import steps_of

__all__ = ["RULES", "VERSION", "Call", "simulate"]

VERSION = "0.32.1"

RULES: tuple[tuple[str, str], ...] = (
    (
        "A time string is `<number><unit>`, the number read with `float()`; for every unit but "
        "`dur` a non-integral number raises TypeError 'value 0.1 is not an integer. Units "
        "TimeUnit.EPOCH require integer values.'",
        "composer/core/time.py:391 (Time.from_timestring)",
    ),
    (
        "A wall-clock (`sec`) max_duration or duration is refused with ValueError 'Wall clock "
        "time not an allowed time unit.'",
        "composer/trainer/trainer.py:1563 (Trainer.__init__), 2105 (fit)",
    ),
    (
        "A `dur` max_duration is refused by the State setter: ValueError 'TimeUnit.DURATION is "
        "not allowed as a unit for max_duration'.",
        "composer/core/state.py (State.max_duration setter)",
    ),
    (
        "fit(reset_time=True) replaces the timestamp by a zero Timestamp before anything else "
        "about durations is checked.",
        "composer/trainer/trainer.py:2100 (fit)",
    ),
    (
        "fit(duration=d) sets max_duration = d + timestamp.get(d.unit): the duration is added to "
        "the elapsed time counted in d's unit, so it is additive across fits and resumes.",
        "composer/trainer/trainer.py:2112 (fit)",
    ),
    (
        "Without max_duration from the Trainer or fit, fit raises ValueError 'max_duration is a "
        "required argument ...'.",
        "composer/trainer/trainer.py:2114 (fit), 141 (_raise_missing_argument_exception)",
    ),
    (
        "Unless reset_time, fit raises ValueError 'The max_duration (X) is less than or equal to "
        "the elapsed training duration (Y). No training would occur. ...' when max_duration <= "
        "the elapsed count in max_duration's unit.",
        "composer/trainer/trainer.py:2125 (fit)",
    ),
    (
        "max_duration is not saved in checkpoints; a resumed Trainer uses its own max_duration "
        "(or the one its fit computes from the restored timestamp).",
        "composer/core/state.py (State.serialized_attributes)",
    ),
    (
        "load_path and autoresume restore the whole Timestamp; autoresume loads the latest "
        "checkpoint in save_folder and otherwise starts fresh. The PR #3358 validation "
        "(autoresume forbids fit(duration) and reset_time) is not in 0.32.1: it was reverted "
        "(#3364), so fit(duration) re-adds the duration on every autoresumed restart (#3357).",
        "composer/trainer/trainer.py:1617 (Trainer.__init__ autoresume)",
    ),
    (
        "Training runs while timestamp < max_duration; each epoch pass iterates the loader from "
        "its first batch, and with spin_dataloaders=True skips (iterates without training) the "
        "first batch_in_epoch batches; with spin_dataloaders=False it trains them again.",
        "composer/trainer/trainer.py:2416 and 2431 (_train_loop)",
    ),
    (
        "After each batch: batch += 1, batch_in_epoch += 1, sample and sample_in_epoch += the "
        "batch's samples; the pass breaks as soon as timestamp >= max_duration.",
        "composer/trainer/trainer.py:2514 and 2526 (_train_loop), composer/core/time.py "
        "(Timestamp.to_next_batch)",
    ),
    (
        "The epoch ends (epoch += 1, batch_in_epoch = sample_in_epoch = 0) only if the pass was "
        "not broken early or batch_in_epoch equals the loader length: a mid-epoch stop such as "
        "'15ba' leaves epoch=1, batch_in_epoch=5.",
        "composer/trainer/trainer.py:2543 (_train_loop), composer/core/time.py "
        "(Timestamp.to_next_epoch)",
    ),
    (
        "fit(train_dataloader=...) swaps the loader but keeps the timestamp: batch_in_epoch "
        "batches of the new loader are skipped, all of them if it is that short (0 batches "
        "trained, the epoch still ends).",
        "composer/trainer/trainer.py:2083 (fit), 2431 and 2543 (_train_loop)",
    ),
    (
        "A pass that ends before any batch of this fit was trained warns 'No batches were "
        "trained for global rank 0. ...'.",
        "composer/trainer/trainer.py:2538 (_train_loop)",
    ),
    (
        "save_interval 'Nba'/'Nsp' saves at BATCH_CHECKPOINT when the count crosses a multiple "
        "of N, 'Nep' at EPOCH_CHECKPOINT. At the end of training (elapsed >= 1) both events "
        "save again unless an interval save already happened at this batch: so a '2ep' run "
        "saved every '1ba' ends on the batch-20 checkpoint with epoch=1, batch_in_epoch=10, and a "
        "resume from it spins a whole epoch without training.",
        "composer/utils/misc.py:105 (create_interval_scheduler.check_interval)",
    ),
)

_UNITS = ("iter", "ep", "ba", "sp", "tok", "dur", "sec")
_UNIT_NAMES = {
    "iter": "ITERATION",
    "ep": "EPOCH",
    "ba": "BATCH",
    "sp": "SAMPLE",
    "tok": "TOKEN",
    "dur": "DURATION",
    "sec": "SECOND",
}
_TIME_RE = re.compile(r"^(.+)(" + "|".join(_UNITS) + r")$", flags=re.IGNORECASE)
_MODELLED = ("ep", "ba", "sp")

_DEFAULT_DATA = Dataset(samples=100)

_NO_BATCHES = (
    "UserWarning: No batches were trained for global rank 0. This may be due to an issue with "
    "the train dataset, dataloader, or sampler. This may cause other issues or crashes down "
    "the line."
)
_MISSING_MAX_DURATION = (
    "max_duration is a required argument and must be specified when constructing the Trainer "
    "or when calling Trainer.fit(). To fix, please specify `max_duration` via "
    "Trainer(max_duration=...) or Trainer.fit(max_duration=...)."
)


@attrs.frozen(kw_only=True)
class Call:
    """One ``fit`` call, on a new ``Trainer`` (``fresh``) or on the previous one.

    Trainer arguments (used only when ``fresh``, or when there is no previous trainer):
    ``max_duration``, ``autoresume`` (``run_name`` and ``save_folder`` set, one folder shared by
    every call), ``resume="latest"`` (``load_path`` = the newest checkpoint saved by earlier
    calls), ``save_interval`` (checkpoints only when set), ``crash_at`` (the job dies once batch
    k is done and saved). ``fit`` arguments: ``duration``, ``reset_time``,
    ``spin_dataloaders``, and ``loader_in_fit`` (the dataloader over ``data`` is passed to
    ``fit(train_dataloader=...)``, which on a previous trainer switches its loader; otherwise a
    fresh trainer gets it in ``Trainer(train_dataloader=...)`` and a reused one keeps its own).
    """

    data: Dataset = _DEFAULT_DATA
    batch_size: int = 10
    max_duration: str | None = None
    duration: str | None = None
    reset_time: bool = False
    fresh: bool = True
    autoresume: bool = False
    resume: Literal["latest"] | None = None
    save_interval: str | None = None
    crash_at: int | None = None
    spin_dataloaders: bool = True
    loader_in_fit: bool = False


@attrs.frozen
class _Time:
    value: int | float
    unit: str

    def __str__(self) -> str:
        return f"{self.value}{self.unit}"


@attrs.define
class _Timestamp:
    epoch: int = 0
    batch: int = 0
    sample: int = 0
    batch_in_epoch: int = 0
    sample_in_epoch: int = 0

    def get(self, unit: str) -> int:
        return {"ep": self.epoch, "ba": self.batch, "sp": self.sample}[unit]

    def counters(self) -> dict[str, int | float | None]:
        return {
            "epoch": self.epoch,
            "batch": self.batch,
            "sample": self.sample,
            "batch_in_epoch": self.batch_in_epoch,
            "sample_in_epoch": self.sample_in_epoch,
        }


@attrs.define
class _Loader:
    data: Dataset
    batch_size: int

    def __len__(self) -> int:
        return -(-self.data.samples // self.batch_size)

    def batch(self, index: int) -> tuple[int, ...]:
        start = index * self.batch_size
        return self.data.ids(start, min(start + self.batch_size, self.data.samples))


@attrs.define
class _Trainer:
    loader: _Loader | None
    max_duration: _Time | None
    timestamp: _Timestamp
    spin: bool
    save_interval: _Time | None
    crash_at: int | None
    last_batch_seen: int = -1


class _Error(Exception):
    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.error = TrainerError(type=type_, message=message)


class _CrashError(Exception):
    pass


def _parse(text: str) -> _Time:
    """``Time.from_timestring`` (``ensure_time(..., TimeUnit.EPOCH)`` for a str)."""
    found = _TIME_RE.findall(text)
    if len(found) != 1:
        raise _Error("ValueError", f"Invalid time string: {text}")
    number, unit = found[0]
    unit = unit.lower()
    try:
        value = float(number)
    except ValueError as exc:
        raise _Error("ValueError", str(exc)) from None
    if unit == "dur":
        return _Time(value, unit)
    if int(value) != value:
        raise _Error(
            "TypeError",
            f"value {value} is not an integer. Units TimeUnit.{_UNIT_NAMES[unit]} require "
            "integer values.",
        )
    return _Time(int(value), unit)


def _check_modelled(time: _Time) -> None:
    if time.unit not in _MODELLED:
        raise NotImplementedError(f"the Composer profile models ep, ba and sp only, not {time}")


def _max_duration(text: str) -> _Time:
    """``Trainer(max_duration=text)``: parse, then the State setter's and the wall-clock checks."""
    time = _parse(text)
    if time.unit == "dur":
        raise _Error("ValueError", "TimeUnit.DURATION is not allowed as a unit for max_duration")
    if time.unit == "sec":
        raise _Error("ValueError", "Wall clock time not an allowed time unit.")
    _check_modelled(time)
    return time


@attrs.define
class _Run:
    """The state shared by all calls: the checkpoints saved so far (one ``save_folder``)."""

    checkpoints: list[_Timestamp] = attrs.Factory(list)

    def build(self, call: Call) -> _Trainer:
        max_duration = None if call.max_duration is None else _max_duration(call.max_duration)
        interval = None if call.save_interval is None else _parse(call.save_interval)
        if interval is not None:
            _check_modelled(interval)
        timestamp = _Timestamp()
        if (call.autoresume or call.resume == "latest") and self.checkpoints:
            timestamp = attrs.evolve(self.checkpoints[-1])
        return _Trainer(
            loader=None if call.loader_in_fit else _Loader(call.data, call.batch_size),
            max_duration=max_duration,
            timestamp=timestamp,
            spin=call.spin_dataloaders,
            save_interval=interval,
            crash_at=call.crash_at,
        )

    def fit(self, trainer: _Trainer, call: Call, out: _Outcome) -> None:
        if call.loader_in_fit:
            trainer.loader = _Loader(call.data, call.batch_size)
        if trainer.loader is None:
            message = _MISSING_MAX_DURATION.replace("max_duration", "train_dataloader")
            raise _Error("ValueError", message)
        trainer.spin = call.spin_dataloaders
        if call.reset_time:
            trainer.timestamp = _Timestamp()
        if call.duration is not None:
            duration = _parse(call.duration)
            if duration.unit == "sec":
                raise _Error("ValueError", "Wall clock time not an allowed time unit.")
            _check_modelled(duration)
            trainer.max_duration = _Time(
                int(duration.value) + trainer.timestamp.get(duration.unit), duration.unit
            )
        max_duration = trainer.max_duration
        if max_duration is None:
            raise _Error("ValueError", _MISSING_MAX_DURATION)
        elapsed = trainer.timestamp.get(max_duration.unit)
        if max_duration.value <= elapsed and not call.reset_time:
            raise _Error(
                "ValueError",
                f"The max_duration ({max_duration}) is less than or equal to the elapsed training "
                f"duration ({elapsed}{max_duration.unit}). No training would occur. Please provide "
                "the `duration` or specify `reset_time=True` in Trainer.fit().",
            )
        self._train_loop(trainer, max_duration, out)

    def _train_loop(self, trainer: _Trainer, max_duration: _Time, out: _Outcome) -> None:
        loader = trainer.loader
        assert loader is not None
        ts = trainer.timestamp
        trained_any = False
        while ts.get(max_duration.unit) < max_duration.value:
            finished_early = False
            for index in range(len(loader)):
                if trainer.spin and index < ts.batch_in_epoch:
                    continue
                if trainer.crash_at is not None and ts.batch >= trainer.crash_at:
                    raise _CrashError
                ids = loader.batch(index)
                out.batches.append(ids)
                trained_any = True
                previous = attrs.evolve(ts)
                ts.batch += 1
                ts.batch_in_epoch += 1
                ts.sample += len(ids)
                ts.sample_in_epoch += len(ids)
                self._checkpoint(trainer, max_duration, previous, epoch_event=False)
                if ts.get(max_duration.unit) >= max_duration.value:
                    finished_early = True
                    break
            if not trained_any and _NO_BATCHES not in out.messages:
                out.messages.append(_NO_BATCHES)
            if not finished_early or len(loader) == ts.batch_in_epoch:
                previous = attrs.evolve(ts)
                ts.epoch += 1
                ts.batch_in_epoch = 0
                ts.sample_in_epoch = 0
                self._checkpoint(trainer, max_duration, previous, epoch_event=True)

    def _checkpoint(
        self, trainer: _Trainer, max_duration: _Time, previous: _Timestamp, *, epoch_event: bool
    ) -> None:
        interval = trainer.save_interval
        if interval is None:
            return
        ts = trainer.timestamp
        at_end = ts.get(max_duration.unit) >= max_duration.value
        unit = interval.unit
        crossed = interval.value > 0 and (
            previous.get(unit) // int(interval.value) != ts.get(unit) // int(interval.value)
        )
        interval_event = (unit == "ep") == epoch_event
        if at_end and ts.batch != trainer.last_batch_seen:
            self.checkpoints.append(attrs.evolve(ts))
        elif interval_event and crossed:
            trainer.last_batch_seen = ts.batch
            self.checkpoints.append(attrs.evolve(ts))


@attrs.define
class _Outcome:
    batches: list[tuple[int, ...]] = attrs.Factory(list)
    messages: list[str] = attrs.Factory(list)


def _validate(call: Call) -> None:
    if call.data.samples <= 0 or call.batch_size <= 0:
        raise ValueError(f"need a non-empty data set and a positive batch size, got {call!r}")


def simulate(calls: Iterable[Call] | Sequence[Call]) -> tuple[CallOutcome, ...]:
    """Run ``calls`` in order as Composer 0.32.1 would; return what each call does."""
    run = _Run()
    trainer: _Trainer | None = None
    outcomes: list[CallOutcome] = []
    for call in calls:
        _validate(call)
        out = _Outcome()
        error: TrainerError | None = None
        crashed = False
        try:
            if call.fresh or trainer is None:
                trainer = None
                trainer = run.build(call)
            run.fit(trainer, call, out)
        except _Error as exc:
            error = exc.error
        except _CrashError:
            crashed = True
        counters = {} if trainer is None else trainer.timestamp.counters()
        outcomes.append(
            CallOutcome(
                steps=len(out.batches),
                batches=tuple(out.batches),
                counters=counters,
                messages=tuple(out.messages),
                error=error,
                crashed=crashed,
            )
        )
    return tuple(outcomes)


# -- writing a durations scenario in Composer's idiom ---------------------------------------------


def translate(scenario: Scenario, data: Mapping[str, Dataset]) -> Translation[Call]:
    """The script as a Composer user writes it: one ``Trainer(max_duration=...,
    autoresume=True, save_interval="1ba")``, then one ``fit`` per call, the later ones with
    ``fit(duration=..., train_dataloader=..., reset_time=...)``. Re-running after a crash is the
    same script: autoresume loads the latest checkpoint.
    """
    calls: list[Call] = []
    notes: list[str] = []
    for step in steps_of(scenario, data, "Composer"):
        text = _composer_time(step.request)
        if step.index == 0:
            limit = text if step.kind != "duration" else _limit(scenario)
            calls.append(
                Call(
                    data=step.data,
                    batch_size=step.batch_size,
                    max_duration=limit,
                    duration=text if step.kind == "duration" else None,
                    reset_time=step.call.reset_time,
                    autoresume=True,
                    save_interval="1ba",
                )
            )
            notes.append(
                f"Trainer(max_duration={limit!r}, autoresume=True, save_interval='1ba')"
                + (f"; fit(duration={text!r})" if step.kind == "duration" else "; fit()")
            )
            continue
        if step.kind == "until":
            raise Unsupported(
                "Composer's fit(duration=) is relative to the elapsed time; an absolute until= "
                f"has no equivalent after the first call (call #{step.index})"
            )
        duration = text if step.kind == "duration" else None
        calls.append(
            Call(
                data=step.data,
                batch_size=step.batch_size,
                duration=duration,
                reset_time=step.call.reset_time,
                fresh=False,
                loader_in_fit=step.new_stream,
            )
        )
        arguments = [f"duration={duration!r}"] if duration else []
        if step.new_stream:
            arguments.append(f"train_dataloader=<{step.call.loader.name}>")
        if step.call.reset_time:
            arguments.append("reset_time=True")
        notes.append(f"fit({', '.join(arguments)})")
    return Translation(calls=tuple(calls), rerun=tuple(calls), notes=tuple(notes), crash_on="fresh")


def _limit(scenario: Scenario) -> str | None:
    limit = scenario.config.max_duration
    return None if limit is None else _composer_time(limit)


def _composer_time(time: DurationsTime) -> str:
    """A time as Composer's string (it parses fractional epochs and then rejects them)."""
    if time.unit.value not in ("ep", "ba", "sp"):
        raise Unsupported(f"the Composer profile models ep, ba and sp only, not {time}")
    text = str(time)
    if "/" in text:
        raise Unsupported(f"Composer's time strings are decimal; {text} has no decimal form")
    return text
