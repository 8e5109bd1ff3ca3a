"""``Progress``: the immutable counters of a run, and exact conversions at a position.

Every conversion here is closed-form: its cost does not depend on how many steps it spans.
"""

from __future__ import annotations

from fractions import Fraction

import attrs

from .errors import ConversionError, ProgressError, shown_value
from .loader import Loader
from .time import Time
from .units import Unit

__all__ = ["Progress"]


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _check_counter(field: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProgressError(field, f"expected a whole number >= 0, got {shown_value(value)}")
    if value < 0:
        raise ProgressError(field, f"expected a whole number >= 0, got {shown_value(value)}")


#: How a token count becomes known, said where it is not.
_KNOW_TOKENS = (
    "a loader read before it has no tokens_per_sample: give every loader tokens_per_sample, "
    "or report measured tokens with every step (advance(tokens=...)), or measure in ba, sp "
    "or ep"
)


@attrs.frozen(kw_only=True)
class Progress:
    """Where a run is: lifetime totals and the position inside the current epoch.

    ``epoch``, ``batch``, ``sample`` and ``token`` are lifetime totals: they never go down
    and nothing resets them. ``batch_in_epoch``, ``sample_in_epoch`` and ``token_in_epoch``
    are the position in the current epoch of the current loader; ``sample_in_epoch`` is the
    data position (how far the loader has read), which survives a change of batch size.
    ``token`` and ``token_in_epoch`` are ``None`` once tokens were trained whose count is
    unknown (a loader without ``tokens_per_sample``, advanced without ``tokens=``).

    >>> from durations import Loader
    >>> loader = Loader(samples=100, batch_size=10, tokens_per_sample=512)
    >>> Progress().advance(loader, 13)
    Progress(epoch=1, batch=13, sample=130, token=66560,
             batch_in_epoch=3, sample_in_epoch=30, token_in_epoch=15360)
    """

    epoch: int = 0
    batch: int = 0
    sample: int = 0
    token: int | None = 0
    batch_in_epoch: int = 0
    sample_in_epoch: int = 0
    token_in_epoch: int | None = 0

    def __attrs_post_init__(self) -> None:
        for field in ("epoch", "batch", "sample", "batch_in_epoch", "sample_in_epoch"):
            _check_counter(field, getattr(self, field))
        _check_counter("token", self.token, optional=True)
        _check_counter("token_in_epoch", self.token_in_epoch, optional=True)
        if (self.token is None) != (self.token_in_epoch is None):
            raise ProgressError(
                "token_in_epoch",
                f"token={shown_value(self.token)}"
                f" and token_in_epoch={shown_value(self.token_in_epoch)}: "
                "either both are known or both are None",
            )
        for inner, outer in (
            ("batch_in_epoch", "batch"),
            ("sample_in_epoch", "sample"),
            ("token_in_epoch", "token"),
        ):
            inner_value, outer_value = getattr(self, inner), getattr(self, outer)
            if inner_value is not None and inner_value > outer_value:
                raise ProgressError(
                    inner,
                    f"{inner}={shown_value(inner_value)} exceeds the lifetime "
                    f"{outer}={shown_value(outer_value)}; "
                    "a position inside the epoch is part of the lifetime total",
                )
        if self.sample < self.batch:
            raise ProgressError(
                "sample",
                f"sample={shown_value(self.sample)} is less than batch={shown_value(self.batch)}; "
                "every step trains "
                "at least one sample",
            )
        if self.sample_in_epoch < self.batch_in_epoch:
            raise ProgressError(
                "sample_in_epoch",
                f"sample_in_epoch={shown_value(self.sample_in_epoch)} is less than "
                f"batch_in_epoch={shown_value(self.batch_in_epoch)}; every step trains at least "
                "one sample",
            )

    # -- positions ---------------------------------------------------------------------

    @property
    def at_epoch_start(self) -> bool:
        """Whether the current epoch has not been read at all."""
        return self.sample_in_epoch == 0

    def counts_as_epoch(self, epoch: int, *, inside: bool = False) -> bool:
        """Whether a trainer whose epoch counter reads ``epoch`` can be at this position.

        With ``inside`` (the trainer recorded a position past that epoch's start), the position
        must be inside the same epoch. Otherwise the same epoch, or, exactly at an epoch's
        start, the epoch that just ended (trainers record an ended epoch either way). How a
        checkpoint without a ledger is checked once it is located by its step counter
        (``docs/semantics.md``, rule 10).

        >>> at = Progress().advance(Loader(samples=100, batch_size=10), 10)  # epoch 0 read
        >>> at.epoch, at.counts_as_epoch(1), at.counts_as_epoch(0), at.counts_as_epoch(2)
        (1, True, True, False)
        >>> at.counts_as_epoch(0, inside=True), at.counts_as_epoch(1, inside=True)
        (False, False)
        """
        if inside:
            return epoch == self.epoch and not self.at_epoch_start
        return epoch == self.epoch or (self.at_epoch_start and epoch == self.epoch - 1)

    def epoch_position(self, loader: Loader) -> Fraction:
        """Epochs elapsed, with the current epoch's share measured in ``loader``'s samples.

        >>> from durations import Loader
        >>> Progress(epoch=2, batch=25, sample=250, batch_in_epoch=5, sample_in_epoch=50,
        ...          token=0, token_in_epoch=0).epoch_position(Loader(samples=200, batch_size=10))
        Fraction(9, 4)
        """
        samples = _require_samples(loader, "measure a fractional epoch")
        # Positions past the data's end (a sharded loader's padding) are no further into it.
        return self.epoch + Fraction(min(self.sample_in_epoch, samples), samples)

    def time_in(
        self, unit: Unit, *, loader: Loader | None = None, since: Progress | None = None
    ) -> Time:
        """This position as a ``Time`` in ``unit``, on a clock that started at ``since``.

        ``since`` defaults to the very start (all counters zero). Epochs need ``loader`` to
        measure the current epoch's share; ``since`` must then be at an epoch start.
        """
        origin = ZERO if since is None else since
        if unit is Unit.BA:
            return Time(self.batch - origin.batch, unit)
        if unit is Unit.SP:
            return Time(self.sample - origin.sample, unit)
        if unit is Unit.TOK:
            if self.token is None or origin.token is None:
                raise ConversionError(
                    "progress.token",
                    f"the token count is unknown at this position; {_KNOW_TOKENS}",
                )
            return Time(self.token - origin.token, unit)
        if unit is Unit.EP:
            if loader is None:
                raise ConversionError(
                    "loader", "a position in epochs needs loader= to measure the current epoch"
                )
            _check_epoch_origin(origin)
            return Time(self.epoch_position(loader) - origin.epoch, unit)
        raise ConversionError(
            "max_duration",
            "a position in dur is a fraction of max_duration: convert max_duration with "
            "durations.plans.resolve_dur and measure in its unit, or ask Plan.resolve(time)",
        )

    # -- moving ------------------------------------------------------------------------

    def close_epoch(self) -> Progress:
        """The position after the current epoch ends (or is abandoned): a new epoch begins.

        Lifetime totals are kept; the position inside the epoch goes back to zero.
        """
        return _derived(
            self.epoch + 1,
            self.batch,
            self.sample,
            self.token,
            0,
            0,
            None if self.token is None else 0,
        )

    def restart_epoch(self) -> Progress:
        """The position after the current epoch is read again from its start (a replay).

        The epoch counter and the lifetime totals are kept: replayed samples count again.
        """
        return _derived(
            self.epoch,
            self.batch,
            self.sample,
            self.token,
            0,
            0,
            None if self.token is None else 0,
        )

    def normalized(self, loader: Loader) -> Progress:
        """Close the current epoch if ``loader`` has no step left in it.

        A position reached by a change of batch size (or of ``drop_last``) may have fewer
        samples left in the epoch than one batch needs; under ``drop_last`` that epoch has
        ended. Every conversion below starts from the normalized position.
        """
        if loader.samples is None or self.sample_in_epoch == 0:
            return self
        if _steps_left_in_epoch(self.sample_in_epoch, loader) == 0:
            return self.close_epoch()
        return self

    def steps_left_in_epoch(self, loader: Loader) -> int | None:
        """Optimizer steps until the current epoch of ``loader`` ends (``None`` for a stream)."""
        if loader.samples is None:
            return None
        return _steps_left_in_epoch(self.normalized(loader).sample_in_epoch, loader)

    def advance(self, loader: Loader, steps: int = 1, *, tokens: int | None = None) -> Progress:
        """The position ``steps`` optimizer steps later, reading ``loader``.

        An epoch closes at the step that trains its last batch. ``tokens`` gives the measured
        token count of a single step on a loader without ``tokens_per_sample``.

        >>> from durations import Loader
        >>> loader = Loader(samples=105, batch_size=10)
        >>> p = Progress().advance(loader, 11)
        >>> p.epoch, p.sample, p.sample_in_epoch
        (1, 105, 0)
        """
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ProgressError("steps", f"expected a whole number >= 0, got {shown_value(steps)}")
        if not isinstance(loader, Loader):
            raise TypeError(f"loader must be a Loader, not {shown_value(loader)}")
        if tokens is not None and (steps != 1 or loader.tokens_per_sample is not None):
            raise ConversionError(
                "tokens",
                "tokens= gives the measured tokens of one step on a loader without "
                "tokens_per_sample; pass steps=1 and leave tokens_per_sample unset",
            )
        one_step = steps == 1 and tokens is None and loader.sharding is None
        if one_step and loader.samples is not None:
            one = self._one_step(loader, loader.samples)
            if one is not None:
                return one
        if steps == 0:
            return self
        start = self.normalized(loader)
        batch = loader.batch_size
        if loader.samples is None:
            trained, closed, sample_in_epoch, batch_in_epoch = (
                steps * batch,
                0,
                start.sample_in_epoch + steps * batch,
                start.batch_in_epoch + steps,
            )
        else:
            left = _steps_left_in_epoch(start.sample_in_epoch, loader)
            if steps < left:
                trained, closed = steps * batch, 0
                sample_in_epoch = start.sample_in_epoch + trained
                batch_in_epoch = start.batch_in_epoch + steps
            else:
                finishing = _samples_left_in_epoch(start.sample_in_epoch, loader)
                full_epochs, batch_in_epoch = divmod(steps - left, _steps_per_epoch(loader))
                sample_in_epoch = batch_in_epoch * batch
                trained = finishing + full_epochs * _samples_per_epoch(loader) + sample_in_epoch
                closed = 1 + full_epochs
        token, token_in_epoch = start._tokens_after(
            loader, trained, closed, sample_in_epoch, tokens
        )
        return _derived(
            start.epoch + closed,
            start.batch + steps,
            start.sample + trained,
            token,
            batch_in_epoch,
            sample_in_epoch,
            token_in_epoch,
        )

    def _one_step(self, loader: Loader, samples: int) -> Progress | None:
        """``advance(loader, 1)`` for the training loop's common case, or ``None`` when the
        current epoch must first be closed (the general path handles that)."""
        batch, position = loader.batch_size, self.sample_in_epoch
        available = samples - position
        if available <= 0 or (loader.drop_last and available < batch):
            return None
        size = batch if available > batch else available
        position += size
        left = samples - position
        closes = left == 0 or (loader.drop_last and left < batch)
        token, token_in_epoch = self.token, self.token_in_epoch
        per_sample = loader.tokens_per_sample
        if token is None or token_in_epoch is None or per_sample is None:
            token = token_in_epoch = None
        else:
            token += size * per_sample
            token_in_epoch = 0 if closes else token_in_epoch + size * per_sample
        if closes:
            return _derived(
                self.epoch + 1, self.batch + 1, self.sample + size, token, 0, 0, token_in_epoch
            )
        return _derived(
            self.epoch,
            self.batch + 1,
            self.sample + size,
            token,
            self.batch_in_epoch + 1,
            position,
            token_in_epoch,
        )

    def _tokens_after(
        self,
        loader: Loader,
        trained: int,
        closed: int,
        sample_in_epoch: int,
        measured: int | None,
    ) -> tuple[int | None, int | None]:
        if self.token is None or self.token_in_epoch is None:
            return None, None
        per_sample = loader.tokens_per_sample
        if per_sample is not None:
            added = trained * per_sample
            in_epoch = sample_in_epoch * per_sample if closed else self.token_in_epoch + added
            return self.token + added, in_epoch
        if measured is not None:
            return self.token + measured, 0 if closed else self.token_in_epoch + measured
        return None, None

    # -- how far to a target -----------------------------------------------------------

    def steps_until(self, target: Time, *, loader: Loader, since: Progress | None = None) -> int:
        """Optimizer steps from here until ``target`` is reached on ``loader``.

        ``target`` is measured on a clock that started at ``since`` (default: the start of
        the run). A target is reached at the first step boundary where the counter is at or
        past it, so sample, token and fractional-epoch targets may overshoot by less than one
        batch. A target already reached needs 0 steps.

        >>> from durations import Loader, Time
        >>> loader = Loader(samples=10_000, batch_size=32)
        >>> Progress().steps_until(Time.parse("1000sp"), loader=loader)
        32
        """
        if not isinstance(target, Time):
            raise TypeError(
                f"target must be a Time, such as Time.parse('10ba'), not {shown_value(target)}"
            )
        origin = ZERO if since is None else since
        start = self.normalized(loader)
        value = target.value
        if target.unit is Unit.BA:
            return max(0, origin.batch + int(value) - start.batch)
        if target.unit is Unit.SP:
            return start._steps_until_sample(origin.sample + int(value), loader)
        if target.unit is Unit.TOK:
            per_sample = loader.tokens_per_sample
            if per_sample is None:
                raise ConversionError(
                    "loader.tokens_per_sample",
                    f"cannot convert {target} to steps: the loader's tokens_per_sample is "
                    "unknown, so the stop is decided at run time from measured tokens",
                )
            if start.token is None or origin.token is None:
                raise ConversionError(
                    "progress.token",
                    f"cannot convert {target} to steps: "
                    f"the token count at this position is unknown; {_KNOW_TOKENS}",
                )
            missing = origin.token + int(value) - start.token
            if missing <= 0:
                return 0
            return start._steps_until_sample(start.sample + _ceil_div(missing, per_sample), loader)
        if target.unit is Unit.EP:
            _require_samples(loader, f"convert {target} to steps")
            _check_epoch_origin(origin)
            return start._steps_until_epoch(origin.epoch + Fraction(value), loader)
        raise ConversionError(
            "max_duration",
            f"cannot convert {target} to steps: dur is a fraction of max_duration, "
            "which the planner resolves",
        )

    def _steps_until_sample(self, goal: int, loader: Loader) -> int:
        missing = goal - self.sample
        if missing <= 0:
            return 0
        batch = loader.batch_size
        if loader.samples is None:
            return _ceil_div(missing, batch)
        finishing = _samples_left_in_epoch(self.sample_in_epoch, loader)
        if missing <= finishing:
            return _ceil_div(missing, batch)
        full_epochs, rest = divmod(missing - finishing, _samples_per_epoch(loader))
        steps = _steps_left_in_epoch(self.sample_in_epoch, loader)
        steps += full_epochs * _steps_per_epoch(loader)
        return steps + _ceil_div(rest, batch)

    def _steps_until_epoch(self, goal: Fraction, loader: Loader) -> int:
        samples = _require_samples(loader, "measure a fractional epoch")
        if self.epoch_position(loader) >= goal:
            return 0
        whole = goal.numerator // goal.denominator
        share = goal - whole
        batch = loader.batch_size
        left = _steps_left_in_epoch(self.sample_in_epoch, loader)
        need = _ceil_div(share.numerator * samples, share.denominator)  # samples into epoch `whole`
        if self.epoch == whole:
            return min(left, _ceil_div(need - self.sample_in_epoch, batch))
        steps = left + (whole - self.epoch - 1) * _steps_per_epoch(loader)
        return steps + min(_steps_per_epoch(loader), _ceil_div(need, batch))


ZERO = Progress()

_new = object.__new__
_SETTERS = tuple(Progress.__dict__[field.name].__set__ for field in attrs.fields(Progress))
(
    _set_epoch,
    _set_batch,
    _set_sample,
    _set_token,
    _set_batch_in_epoch,
    _set_sample_in_epoch,
    _set_token_in_epoch,
) = _SETTERS


def _derived(
    epoch: int,
    batch: int,
    sample: int,
    token: int | None,
    batch_in_epoch: int,
    sample_in_epoch: int,
    token_in_epoch: int | None,
) -> Progress:
    """A ``Progress`` the exact arithmetic above derived from a valid one.

    It is valid by construction (the tests check every derivation against validated
    construction), so it skips the validation that dominates a training loop's per-step cost.
    """
    progress: Progress = _new(Progress)
    _set_epoch(progress, epoch)
    _set_batch(progress, batch)
    _set_sample(progress, sample)
    _set_token(progress, token)
    _set_batch_in_epoch(progress, batch_in_epoch)
    _set_sample_in_epoch(progress, sample_in_epoch)
    _set_token_in_epoch(progress, token_in_epoch)
    return progress


def _require_samples(loader: Loader, action: str) -> int:
    if loader.samples is None:
        raise ConversionError(
            "loader.samples",
            f"cannot {action}: the loader is a stream of unknown length (samples=None), so it "
            "has no epochs; give the loader's samples per epoch, or use ba, sp or tok",
        )
    return loader.samples


def _check_epoch_origin(origin: Progress) -> None:
    if not origin.at_epoch_start:
        raise ConversionError(
            "since",
            "a clock measured in epochs must start at an epoch start "
            f"(since.sample_in_epoch is {origin.sample_in_epoch})",
        )


def _steps_per_epoch(loader: Loader) -> int:
    steps = loader.steps_per_epoch
    assert steps is not None
    return steps


def _samples_per_epoch(loader: Loader) -> int:
    samples = loader.samples_per_epoch
    assert samples is not None
    return samples


def _steps_left_in_epoch(sample_in_epoch: int, loader: Loader) -> int:
    """Steps still to run in the epoch from data position ``sample_in_epoch``."""
    return _ceil_div(loader.samples_left_in_epoch(sample_in_epoch), loader.batch_size)


def _samples_left_in_epoch(sample_in_epoch: int, loader: Loader) -> int:
    """Samples still to be trained in the epoch from data position ``sample_in_epoch``."""
    return loader.samples_left_in_epoch(sample_in_epoch)
