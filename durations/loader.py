"""``Loader``: the geometry of one data stream, which conversions between units need."""

from __future__ import annotations

import attrs

from .errors import GeometryError, shown_value
from .mixture import Mixture
from .order import Order
from .sharding import Padding, Sharding

__all__ = ["Loader"]


def _whole(field: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "a whole number > 0" + (" or None" if optional else "")
        raise GeometryError(field, f"expected {expected}, got {shown_value(value)}")
    if value <= 0:
        raise GeometryError(field, f"expected a whole number > 0, got {shown_value(value)}")


@attrs.frozen(kw_only=True)
class Loader:
    """The geometry of one data stream, as the whole job sees it (summed over devices).

    ``samples`` is the number of samples in one epoch, or ``None`` for a stream of unknown
    length (which has no epochs). ``batch_size`` is the global batch: the samples consumed by
    one optimizer step. With ``drop_last`` the incomplete final batch of an epoch is not
    trained. ``tokens_per_sample`` is the (constant) number of tokens in a sample, or
    ``None`` when it varies or is unknown. ``name`` tells apart two data sets of the same
    geometry: calls continue one epoch across them only when the loaders are the same stream
    (:meth:`same_stream`). ``sharding`` is the per-device geometry of a data-parallel job
    (:class:`~durations.Sharding`, built by :meth:`sharded`); ``None`` is one global stream
    with nothing padded, as one process (or a dispatching loader) reads it. ``order`` is the
    :class:`~durations.Order` the job reads each epoch in when durations produces it (the
    integrations' samplers, rule 19), recorded in the ledger so a resume reads the same data;
    ``None`` (the default) leaves the order to the job's own sampler, which durations does not
    know. ``mixture`` is the :class:`~durations.Mixture` of sources the stream interleaves
    (built by :meth:`mixing`): its epoch is the mixture's, and the plan reports what each
    source reads (``docs/mixtures.md``).

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
    sharding: Sharding | None = None
    order: Order | None = None
    mixture: Mixture | None = None

    @classmethod
    def mixing(
        cls,
        mixture: Mixture,
        *,
        batch_size: int | None = None,
        world_size: int | None = None,
        device_batch_size: int | None = None,
        accumulation: int = 1,
        padding: Padding | str = Padding.REPEAT,
        drop_last: bool = False,
        name: str | None = None,
    ) -> Loader:
        """The loader that reads ``mixture`` as one stream: in global batches of
        ``batch_size``, or on ``world_size`` ranks of ``device_batch_size`` (as
        :meth:`sharded`). Its epoch is the mixture's epoch (``samples=None`` for a mixture that
        never stops) and its ``tokens_per_sample`` the one its sources share.

        >>> from durations import Mixture, Source
        >>> mix = Mixture(sources=[Source(name="a", samples=30, weight=2),
        ...                        Source(name="b", samples=10, weight=1)])
        >>> job = Loader.mixing(mix, batch_size=8)
        >>> job.samples, job.steps_per_epoch         # b runs out at the 31st position
        (31, 4)
        """
        if not isinstance(mixture, Mixture):
            raise GeometryError(
                "mixture", f"expected a durations.Mixture, got {shown_value(mixture)}"
            )
        sharding = None
        if world_size is None and device_batch_size is None:
            if batch_size is None:
                raise GeometryError(
                    "batch_size",
                    "give batch_size=, or world_size= and device_batch_size= for a "
                    "data-parallel job",
                )
        elif batch_size is not None or world_size is None or device_batch_size is None:
            raise GeometryError(
                "batch_size",
                "give either batch_size= (one global stream) or world_size= and "
                "device_batch_size= (a data-parallel job), not both",
            )
        else:
            sharding = Sharding(
                world_size=world_size,
                device_batch_size=device_batch_size,
                accumulation=accumulation,
                padding=padding,
            )
            batch_size = sharding.batch_size
        return cls(
            samples=mixture.epoch_samples,
            batch_size=batch_size,
            drop_last=drop_last,
            tokens_per_sample=mixture.tokens_per_sample,
            name=name,
            sharding=sharding,
            mixture=mixture,
        )

    @classmethod
    def sharded(
        cls,
        *,
        samples: int | None,
        world_size: int,
        device_batch_size: int,
        accumulation: int = 1,
        padding: Padding | str = Padding.REPEAT,
        drop_last: bool = False,
        tokens_per_sample: int | None = None,
        name: str | None = None,
        order: Order | None = None,
    ) -> Loader:
        """The loader of a data-parallel job: ``world_size`` ranks of ``device_batch_size``
        samples per micro-batch, ``accumulation`` micro-batches per optimizer step, evened by
        ``padding``; ``drop_last`` is each rank's ``DataLoader(drop_last=...)``.

        >>> job = Loader.sharded(samples=7, world_size=3, device_batch_size=2, padding="cycle")
        >>> job.batch_size, job.steps_per_epoch, job.samples_per_epoch, job.last_batch_size
        (6, 2, 12, 6)
        """
        sharding = Sharding(
            world_size=world_size,
            device_batch_size=device_batch_size,
            accumulation=accumulation,
            padding=padding,
        )
        return cls(
            samples=samples,
            batch_size=sharding.batch_size,
            drop_last=drop_last,
            tokens_per_sample=tokens_per_sample,
            name=name,
            sharding=sharding,
            order=order,
        )

    def __attrs_post_init__(self) -> None:
        _whole("samples", self.samples, optional=True)
        _whole("batch_size", self.batch_size, optional=False)
        _whole("tokens_per_sample", self.tokens_per_sample, optional=True)
        if self.name is not None and not isinstance(self.name, str):
            raise GeometryError("name", f"expected a string or None, got {shown_value(self.name)}")
        if not isinstance(self.drop_last, bool):
            raise GeometryError(
                "drop_last", f"expected True or False, got {shown_value(self.drop_last)}"
            )
        if self.order is not None:
            self._check_order(self.order)
        if self.mixture is not None:
            self._check_mixture(self.mixture)
        if self.sharding is not None:
            self._check_sharding(self.sharding)
        elif self.drop_last and self.samples is not None and self.samples < self.batch_size:
            raise GeometryError(
                "samples",
                f"with drop_last=True, {self.samples} samples are fewer than one batch of "
                f"{self.batch_size}, so an epoch would train nothing; use drop_last=False or a "
                f"batch_size <= {self.samples}",
            )

    def _check_order(self, order: Order) -> None:
        if not isinstance(order, Order):
            raise GeometryError(
                "order",
                f"expected a durations.Order (Order.sequential() or Order.shuffled(seed)) or "
                f"None, got {shown_value(order)}",
            )
        if self.samples is None:
            raise GeometryError(
                "order",
                f"{order} is an order of each epoch, and a stream of unknown length has no "
                "epochs; give samples, or leave the order out",
            )
        order.epoch(samples=self.samples, epoch=0)  # an epoch it can order, or refused now

    def _check_mixture(self, mixture: Mixture) -> None:
        if not isinstance(mixture, Mixture):
            raise GeometryError(
                "mixture", f"expected a durations.Mixture or None, got {shown_value(mixture)}"
            )
        if self.order is not None:
            raise GeometryError(
                "order",
                "a mixture's order is its interleave and its sources' orders; give each "
                "Source its order= instead of the loader",
            )
        for field, value in (
            ("samples", mixture.epoch_samples),
            ("tokens_per_sample", mixture.tokens_per_sample),
        ):
            if getattr(self, field) != value:
                raise GeometryError(
                    field,
                    f"a loader of a mixture has the mixture's {field} ({shown_value(value)}), "
                    f"got {shown_value(getattr(self, field))}; build it with Loader.mixing(...)",
                )

    def _check_sharding(self, sharding: Sharding) -> None:
        if not isinstance(sharding, Sharding):
            raise GeometryError(
                "sharding", f"expected a Sharding or None, got {shown_value(sharding)}"
            )
        if self.batch_size != sharding.batch_size:
            raise GeometryError(
                "batch_size",
                f"a sharded loader's batch_size is world_size x device_batch_size x "
                f"accumulation = {shown_value(sharding.batch_size)}, got "
                f"{shown_value(self.batch_size)}; build it with "
                "Loader.sharded(...)",
            )
        if self.samples is not None and self.samples_left_in_epoch(0) == 0:
            raise GeometryError(
                "samples",
                f"{self.samples} samples on {sharding.world_size} ranks of "
                f"{sharding.device_batch_size} ({sharding.padding.value} padding, drop_last="
                f"{self.drop_last}) train nothing in an epoch; use drop_last=False, "
                "padding='repeat', or fewer ranks",
            )

    @property
    def world_size(self) -> int:
        """Data-parallel ranks that read this loader (1 when it is not sharded)."""
        return 1 if self.sharding is None else self.sharding.world_size

    def samples_left_in_epoch(self, sample_in_epoch: int) -> int:
        """Samples (positions, repeats included) still trained in an epoch read up to
        ``sample_in_epoch``: the rest of the data, evened over the ranks, less any dropped
        tail. Only for a sized loader.

        >>> Loader(samples=105, batch_size=10, drop_last=True).samples_left_in_epoch(30)
        70
        >>> job = Loader.sharded(samples=101, world_size=3, device_batch_size=10)
        >>> job.samples_left_in_epoch(60)     # 41 samples, padded to 42 for 3 ranks
        42
        """
        if self.samples is None:
            raise GeometryError("samples", "a stream of unknown length has no epoch to finish")
        remaining = max(0, self.samples - sample_in_epoch)
        if self.sharding is not None:
            return self.sharding.read(remaining, drop_last=self.drop_last)
        if self.drop_last:
            return remaining // self.batch_size * self.batch_size
        return remaining

    @property
    def is_sized(self) -> bool:
        """Whether the epoch length is known (``samples`` is not ``None``)."""
        return self.samples is not None

    @property
    def steps_per_epoch(self) -> int | None:
        """Optimizer steps in one full epoch, or ``None`` for a stream of unknown length."""
        if self.samples is None:
            return None
        return -(-self.samples_left_in_epoch(0) // self.batch_size)

    @property
    def last_batch_size(self) -> int | None:
        """Samples in the last trained batch of a full epoch (``None`` for a stream)."""
        if self.samples is None:
            return None
        trained = self.samples_left_in_epoch(0)
        return trained - (trained - 1) // self.batch_size * self.batch_size

    @property
    def samples_per_epoch(self) -> int | None:
        """Samples trained in one full epoch: all of them, less the dropped tail, plus the
        positions a sharded loader repeats to even its ranks."""
        if self.samples is None:
            return None
        return self.samples_left_in_epoch(0)

    def same_stream(self, other: Loader) -> bool:
        """Whether ``other`` reads the same data in the same order: equal but perhaps for the
        batch size and the sharding (the number of devices reading it); a mixture's sources
        restarted when a call starts reading it do not count (:meth:`Mixture.same_stream`)."""
        same = (self.name, self.samples, self.drop_last, self.tokens_per_sample, self.order) == (
            other.name,
            other.samples,
            other.drop_last,
            other.tokens_per_sample,
            other.order,
        )
        if not same or self.mixture is None or other.mixture is None:
            return same and self.mixture is other.mixture
        return self.mixture.same_stream(other.mixture)

    def with_batch_size(self, batch_size: int) -> Loader:
        """The same data read in batches of ``batch_size`` (an elastic resume)."""
        if self.sharding is not None:
            raise GeometryError(
                "batch_size",
                f"a sharded loader's batch size is world_size x device_batch_size x "
                f"accumulation; change one of them (with_world_size, or Loader.sharded) "
                f"instead of asking for batch_size={shown_value(batch_size)}",
            )
        return attrs.evolve(self, batch_size=batch_size)

    def with_world_size(self, world_size: int) -> Loader:
        """The same data read on ``world_size`` ranks, per-device geometry unchanged (an
        elastic resume on another number of devices).

        >>> job = Loader.sharded(samples=101, world_size=2, device_batch_size=10)
        >>> job.with_world_size(3).batch_size, job.with_world_size(3).samples_per_epoch
        (30, 102)
        """
        if self.sharding is None:
            raise GeometryError(
                "sharding",
                "this loader is one global stream with no per-device geometry; build it with "
                "Loader.sharded(world_size=..., device_batch_size=...) to change its world size",
            )
        sharding = attrs.evolve(self.sharding, world_size=world_size)
        return attrs.evolve(self, batch_size=sharding.batch_size, sharding=sharding)
