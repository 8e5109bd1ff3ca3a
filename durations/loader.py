"""``Loader``: the geometry of one data stream, which conversions between units need."""

from __future__ import annotations

import attrs

from .errors import GeometryError

__all__ = ["Loader"]


def _whole(field: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "a whole number > 0" + (" or None" if optional else "")
        raise GeometryError(field, f"expected {expected}, got {value!r}")
    if value <= 0:
        raise GeometryError(field, f"expected a whole number > 0, got {value!r}")


@attrs.frozen(kw_only=True)
class Loader:
    """The geometry of one data stream, as the whole job sees it (summed over devices).

    ``samples`` is the number of samples in one epoch, or ``None`` for a stream of unknown
    length (which has no epochs). ``batch_size`` is the global batch: the samples consumed by
    one optimizer step. With ``drop_last`` the incomplete final batch of an epoch is not
    trained. ``tokens_per_sample`` is the (constant) number of tokens in a sample, or
    ``None`` when it varies or is unknown. ``name`` tells apart two data sets of the same
    geometry: calls continue one epoch across them only when the loaders are the same stream
    (:meth:`same_stream`).

    >>> loader = Loader(samples=105, batch_size=10)
    >>> loader.steps_per_epoch, loader.last_batch_size, loader.samples_per_epoch
    (11, 5, 105)
    >>> dropping = Loader(samples=105, batch_size=10, drop_last=True)
    >>> dropping.steps_per_epoch, dropping.last_batch_size, dropping.samples_per_epoch
    (10, 10, 100)
    """

    samples: int | None
    batch_size: int
    drop_last: bool = False
    tokens_per_sample: int | None = None
    name: str | None = None

    def __attrs_post_init__(self) -> None:
        _whole("samples", self.samples, optional=True)
        _whole("batch_size", self.batch_size, optional=False)
        _whole("tokens_per_sample", self.tokens_per_sample, optional=True)
        if self.name is not None and not isinstance(self.name, str):
            raise GeometryError("name", f"expected a string or None, got {self.name!r}")
        if not isinstance(self.drop_last, bool):
            raise GeometryError("drop_last", f"expected True or False, got {self.drop_last!r}")
        if self.drop_last and self.samples is not None and self.samples < self.batch_size:
            raise GeometryError(
                "samples",
                f"with drop_last=True, {self.samples} samples are fewer than one batch of "
                f"{self.batch_size}, so an epoch would train nothing; use drop_last=False or a "
                f"batch_size <= {self.samples}",
            )

    @property
    def is_sized(self) -> bool:
        """Whether the epoch length is known (``samples`` is not ``None``)."""
        return self.samples is not None

    @property
    def steps_per_epoch(self) -> int | None:
        """Optimizer steps in one full epoch, or ``None`` for a stream of unknown length."""
        if self.samples is None:
            return None
        if self.drop_last:
            return self.samples // self.batch_size
        return -(-self.samples // self.batch_size)

    @property
    def last_batch_size(self) -> int | None:
        """Samples in the last trained batch of a full epoch (``None`` for a stream)."""
        if self.samples is None:
            return None
        if self.drop_last:
            return self.batch_size
        return self.samples - (self.samples - 1) // self.batch_size * self.batch_size

    @property
    def samples_per_epoch(self) -> int | None:
        """Samples trained in one full epoch: all of them, less the dropped tail."""
        if self.samples is None:
            return None
        if self.drop_last:
            return self.samples // self.batch_size * self.batch_size
        return self.samples

    def same_stream(self, other: Loader) -> bool:
        """Whether ``other`` reads the same data: equal but perhaps for the batch size."""
        return (self.name, self.samples, self.drop_last, self.tokens_per_sample) == (
            other.name,
            other.samples,
            other.drop_last,
            other.tokens_per_sample,
        )

    def with_batch_size(self, batch_size: int) -> Loader:
        """The same data read in batches of ``batch_size`` (an elastic resume)."""
        return attrs.evolve(self, batch_size=batch_size)
