"""Plain PyTorch: a learning-rate scheduler that follows a schedule resolved on the plan, and a
sampler that reads the plan's data order (:class:`OrderSampler`, below).

:func:`scheduler` builds a ``torch.optim.lr_scheduler.LambdaLR`` whose count
(``last_epoch``) is the run's lifetime step, and whose rate at step ``k`` is exactly
``resolved.lr(k, base)``::

    curve = schedule.resolve(run)                       # run = plan(config, script, checkpoint)
    sched = scheduler(optimizer, curve, step=run.start.batch)
    ...
    optimizer.step(); sched.step()                      # one per optimizer step

After a resume, build it the same way (``run.start.batch`` is then the checkpoint's step); its
state need not be saved, and loading a state it saved itself gives the same count. Torch is
imported when :func:`scheduler` is called. :func:`lr_lambda` is the bare function for a
``LambdaLR`` of your own (``base * float(factor)``: within one rounding of ``resolved.lr``). See
``docs/schedules.md``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .. import _mixing
from ..errors import counted, shown_value
from ..interleave import _table
from ..loader import Loader
from ..mixture import Mixture, Wrap
from ..order import MAX_SAMPLES, MULTIPLIERS, PRIME, Order, Permutation
from ..plans import Plan, Segment
from ..progress import Progress
from ..schedules import ResolvedSchedule
from ..sharding import Padding, sample_at
from . import INSTALL_HINT
from ._session import IntegrationError

__all__ = ["DealtOrderSampler", "IntegrationError", "OrderSampler", "lr_lambda", "scheduler"]


def _check(resolved: object) -> ResolvedSchedule:
    if not isinstance(resolved, ResolvedSchedule):
        raise TypeError(
            f"resolved={shown_value(resolved)}: expected a durations.ResolvedSchedule, from "
            "Schedule.resolve(plan)"
        )
    return resolved


def lr_lambda(resolved: ResolvedSchedule, *, offset: int = 0) -> Callable[[int], float]:
    """``k -> float(resolved.factor(k + offset))``: the ``lr_lambda`` of a ``LambdaLR`` whose
    count ``k`` is ``offset`` steps behind the lifetime step (0 when it counts lifetime steps).

    A plain function, so ``LambdaLR.state_dict()`` does not try to save it.
    """
    curve = _check(resolved)

    def factor(k: int) -> float:
        return float(curve.factor(k + offset))

    return factor


def scheduler(optimizer: Any, resolved: ResolvedSchedule, *, step: int) -> Any:
    """A ``LambdaLR`` on ``optimizer`` whose count is the lifetime step, set to ``step`` (the
    optimizer steps the run has taken: ``plan.start.batch`` of this process's plan).

    Its rate for the optimizer step from ``k`` to ``k + 1`` is ``resolved.lr(k, base)``
    exactly, where ``base`` is each parameter group's ``initial_lr`` (its ``lr`` when the
    group has none yet). ``load_state_dict`` also puts the rate of the restored count into the
    optimizer, so the order of loading the optimizer's and the scheduler's states does not
    matter.
    """
    curve = _check(resolved)
    if isinstance(step, bool) or not isinstance(step, int) or step < curve.start:
        raise IntegrationError(
            f"invalid step={shown_value(step)}: expected the lifetime step the optimizer is at, "
            f"a whole number >= {curve.start} (where the schedule starts), such as plan.start.batch"
        )
    return _scheduler_class()(optimizer, curve, step)


_CLASS: list[type[Any]] = []


def _scheduler_class() -> type[Any]:
    if _CLASS:
        return _CLASS[0]
    try:
        from torch.optim.lr_scheduler import LambdaLR
    except ImportError as error:
        raise ImportError(f"durations.integrations.torch needs torch: {INSTALL_HINT}") from error

    class PlanLR(LambdaLR):  # type: ignore[misc, unused-ignore]
        """A ``LambdaLR`` on lifetime steps whose rate is ``resolved.lr(k, base)`` exactly."""

        def __init__(self, optimizer: Any, resolved: ResolvedSchedule, step: int) -> None:
            self._durations_lr: Callable[[int, float], float] = resolved.lr
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
            super().__init__(optimizer, lr_lambda(resolved), last_epoch=step - 1)

        def get_lr(self) -> list[float]:
            return [self._durations_lr(self.last_epoch, float(b)) for b in self.base_lrs]

        def state_dict(self) -> dict[str, Any]:
            state: dict[str, Any] = super().state_dict()
            state.pop("_durations_lr", None)
            return state

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            state = dict(state_dict)
            state.pop("_durations_lr", None)
            super().load_state_dict(state)
            rates = self.get_lr()
            for group, rate in zip(self.optimizer.param_groups, rates, strict=True):
                group["lr"] = rate
            self._last_lr = rates

    PlanLR.__module__ = __name__
    _CLASS.append(PlanLR)
    return PlanLR


# -- the data order ------------------------------------------------------------------------------


class OrderSampler:
    """The indices one rank reads of a loader's :class:`~durations.Order`, as a sampler of the
    shape of torch's ``DistributedSampler``: ``DataLoader(data, batch_size=device_batch_size,
    sampler=OrderSampler(order, loader, rank=rank))`` on each rank.

    ``loader`` is the plan's loader (``Loader.sharded(...)`` for a data-parallel job: its world
    size and padding, and ``drop_last``, are what the sampler deals by; a plain ``Loader`` is one
    rank). It reads epoch ``epoch`` from position ``start`` (semantics.md, rule 19): rank ``r``
    reads positions ``start + r, start + r + W, ...`` of the rest of the epoch, evened for the
    ``W`` ranks, each through the order. Iterating it again goes on where the last iteration
    stopped: the rest of the epoch, or, once it was read to its end, the next epoch from its
    start, unless :meth:`set_epoch` or :meth:`start_at` says otherwise.

    A resume on any world size, device batch size or accumulation starts where the plan does:
    ``sampler.start_at(run)`` with ``run = plan(config, script, checkpoint)`` (the plan's first
    step on this stream, its data policy applied), or
    ``load_state_dict`` of a state saved on any number of ranks: the state is the *global*
    position (every rank's count of samples read, times the world size, from the start), so it
    means the same on every geometry. The state also records the order and the data's length;
    a state of another order, seed or length is refused, naming the difference. The state
    counts the indices this sampler has handed out: a ``DataLoader`` with worker processes
    takes them ahead of training (``prefetch_factor`` batches per worker), so resume from the
    plan's position (:meth:`start_at`), which the checkpoint's step decides, unless the state is
    saved by a loader that accounts for what it prefetched.

    Indices are worked out a chunk at a time on int64 tensors, with the same arithmetic as
    :class:`~durations.order.Permutation` (so the same indices, checked by the tests).

    With ``for_framework=True`` (as the integrations give it to Lightning), ``len()`` is a whole
    epoch's share of one rank at this geometry, whatever the position, so that a framework that
    counts an epoch's batches from it once counts whole epochs (the first iteration after a
    start inside an epoch yields only its rest), and :meth:`set_epoch` is ignored: a framework's
    epoch counter (Lightning's starts again with every ``Trainer``) is not the lifetime epoch
    the order is keyed by, and the sampler goes on to the next epoch by itself.

    A loader that reads a :class:`~durations.Mixture` (``Loader.mixing``) is given with
    ``order=None``: the sampler then yields indices of the concatenation of the mixture's
    sources in its order (``ConcatDataset(sources)``, ``Mixture.offsets``), each position
    reading its source's next sample (semantics.md rule 20). Where each source stands is the
    plan's: start it with :meth:`start_at` a plan or a segment (a position alone does not say
    it), and it carries every source's cursor from epoch to epoch itself (``set_epoch`` is
    ignored). A mixture that never ends its epoch is not read by these samplers yet.
    """

    #: Positions worked out per chunk while iterating.
    CHUNK = 65_536

    def __init__(
        self,
        order: Order | None,
        loader: Loader,
        *,
        rank: int,
        epoch: int = 0,
        for_framework: bool = False,
    ) -> None:
        if not isinstance(for_framework, bool):
            raise IntegrationError(
                f"for_framework={shown_value(for_framework)}: expected True or False"
            )
        #: As the integrations hand it to a framework (class docs).
        self.for_framework = for_framework
        if not isinstance(loader, Loader) or loader.samples is None:
            raise IntegrationError(
                f"loader={shown_value(loader)}: expected a sized durations.Loader (the plan's "
                "loader, Loader.sharded(...) for a data-parallel job, Loader.mixing(...) for a "
                "mixture that ends its epochs)"
            )
        #: The mixture the loader reads, when it reads one (class docs).
        self.mixture: Mixture | None = loader.mixture
        self._base: dict[str, int] = {}  # each source's cursor when the epoch began
        if self.mixture is not None:
            if order is not None:
                raise IntegrationError(
                    f"order={shown_value(order)} but the loader {shown_value(loader.name)} "
                    "reads a mixture, whose sources carry their orders: pass order=None"
                )
            order = Order.sequential()  # the positions' own order; the mixture maps them
        if not isinstance(order, Order):
            raise IntegrationError(f"order={shown_value(order)}: expected a durations.Order")
        if loader.order is not None and loader.order != order:
            raise IntegrationError(
                f"order={order} but the loader {shown_value(loader.name)} is read {loader.order} "
                "(Loader.order, which the ledger records): give the sampler the loader's order"
            )
        world = loader.sharding.world_size if loader.sharding is not None else 1
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < world:
            raise IntegrationError(
                f"rank={shown_value(rank)}: expected a rank from 0 to {counted(world - 1)} of "
                f"the loader's world size {counted(world)}"
            )
        order.epoch(samples=loader.samples, epoch=0)  # an epoch it can order, or refused now
        self.order, self.loader, self.rank, self.world_size = order, loader, rank, world
        self.samples: int = loader.samples
        self.epoch, self.start, self._read = 0, 0, 0
        self._unread: Iterator[int] = iter(())
        self._ended: int | None = None  # the epoch last read to its end
        self._begin(_epoch(epoch), 0)

    # -- where it reads from

    def set_epoch(self, epoch: int) -> None:
        """Read epoch ``epoch`` (the lifetime epoch counter) from its start, as
        ``DistributedSampler.set_epoch``. The epoch it is reading, and the epoch it has just
        read to its end, are kept as they are: frameworks call it at every epoch's start with
        their own counter, also right after a resume, which must not undo the position set by
        :meth:`start_at` or a loaded state."""
        _epoch(epoch)
        if self.for_framework or self.mixture is not None:
            return  # the framework's own counter; a mixture's cursors follow its own (class docs)
        if epoch not in (self.epoch, self._ended):
            self._ended = None  # an epoch chosen on purpose: none is just behind it any more
            self._begin(epoch, 0)

    def start_at(self, where: Plan | Segment | Progress) -> None:
        """Read from where ``where`` starts: a plan (``plan(config, script, checkpoint)``), whose
        first step on this sampler's stream says where (its data policy and any new stream
        applied), one of its segments (a call), or a position (its epoch and
        ``sample_in_epoch``). The rest of that epoch is evened for this sampler's ranks; a
        position with no step left in the epoch starts the next one."""
        if isinstance(where, Segment):
            self._start_segment(where)
        elif isinstance(where, Plan):
            segment = next(
                (
                    s
                    for s in where.segments
                    if s.steps > 0 and not s.failed and s.loader.same_stream(self.loader)
                ),
                None,
            )
            if segment is None:
                raise IntegrationError(
                    f"the plan has no step to take on this sampler's loader "
                    f"{shown_value(self.loader.name)}: nothing to read from it"
                )
            self._start_segment(segment)
        elif isinstance(where, Progress):
            if self.mixture is not None:
                raise IntegrationError(
                    "a position alone does not say where each source of the mixture stands: "
                    "start the sampler at the plan, or at one of its segments"
                )
            self._begin(where.epoch, where.sample_in_epoch)
        else:
            raise IntegrationError(
                f"where={shown_value(where)}: expected a durations.Plan (plan(config, script, "
                "checkpoint)), one of its segments, or a durations.Progress"
            )

    def _start_segment(self, segment: Segment) -> None:
        """Read from a call's first position, its sources' cursors the plan's there."""
        here = segment.start.normalized(segment.loader)
        if self.mixture is not None:
            cursors = dict(segment.cursors)
            self._base = _mixing.epoch_start(self.loader, cursors, here)
        self._begin(here.epoch, here.sample_in_epoch)

    def _begin(self, epoch: int, position: int) -> None:
        """Read epoch ``epoch`` from ``position``; past its last position, the next epoch (a
        mixture's sources then go on from what that epoch read of them)."""
        if self.loader.samples_left_in_epoch(position) == 0:
            if self.mixture is not None:
                read = self.mixture.counts(min(position, self.samples))
                names = self.mixture.names
                self._base = {n: self._base.get(n, 0) + c for n, c in zip(names, read, strict=True)}
            self._ended, epoch, position = epoch, epoch + 1, 0
        self.epoch, self.start, self._read, self._unread = epoch, position, 0, iter(())

    def _lookup(self, positions: Any) -> list[int]:
        """The indices ``positions`` of the epoch being read read."""
        if self.mixture is not None:
            return _mixture_indices(self.mixture, self._base, positions)
        order = self.order.epoch(samples=self.samples, epoch=self.epoch)
        return _indices(order, self.samples, positions)

    def _rest(self) -> tuple[int, int]:
        """The epoch and position the next iteration starts at."""
        position = self.position
        if self.loader.samples_left_in_epoch(position) == 0:
            return self.epoch + 1, 0
        return self.epoch, position

    @property
    def position(self) -> int:
        """The global position in the epoch the ranks have read up to: the start, plus the
        samples this rank has yielded times the world size."""
        return self.start + (self._read - operator.length_hint(self._unread)) * self.world_size

    # -- the sampler protocol

    def __len__(self) -> int:
        """The indices the next iteration yields: the rest of the epoch it is reading, or, once
        that is read, the next epoch (with ``for_framework``: a whole epoch's share)."""
        position = 0 if self.for_framework else self._rest()[1]
        return self.loader.samples_left_in_epoch(position) // self.world_size

    def __iter__(self) -> Iterator[int]:
        """The rest of the epoch from where the last iteration stopped (or from its start, after
        :meth:`set_epoch` or once the last epoch was read to its end)."""
        epoch, position = self._rest()
        if (epoch, position) != (self.epoch, self.start):
            self._begin(self.epoch, self.position)  # the next epoch once this one is read
        first = self.position + self.rank
        stop = self.start + self.loader.samples_left_in_epoch(self.start)
        self._read = (self.position - self.start) // self.world_size
        self._unread = iter(())
        for low in range(first, stop, self.CHUNK * self.world_size):
            high = min(stop, low + self.CHUNK * self.world_size)
            chunk = self._lookup(range(low, high, self.world_size))
            self._read += len(chunk)
            self._unread = iter(chunk)  # what of it is not yielded yet: position counts it
            yield from self._unread
        self._unread = iter(())
        self._begin(self.epoch, self.position)  # read to its end: the next epoch

    # -- state, for StatefulDataLoader and checkpoints

    def state_dict(self) -> dict[str, Any]:
        """The global position (``epoch``, ``position``), and what it is a position of."""
        state: dict[str, Any] = {
            "epoch": self.epoch,
            "position": self.position,
            "order": {"shuffle": self.order.shuffle, "seed": self.order.seed},
            "samples": self.samples,
        }
        if self.mixture is not None:
            state["mixture"] = self.mixture.to_dict()
            # Each source's cursor when the epoch began.
            state["cursors"] = {n: self._base.get(n, 0) for n in self.mixture.names}
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Go on from a state saved by an ``OrderSampler`` on any number of ranks."""
        saved = {"shuffle": self.order.shuffle, "seed": self.order.seed}
        differences = []
        if not isinstance(state, Mapping):
            raise IntegrationError(
                f"the saved sampler state is {shown_value(state)}: expected the dict an "
                "OrderSampler's state_dict() returns"
            )
        if state.get("order") != saved:
            differences.append(
                f"order {shown_value(state.get('order'))} (this sampler's: {saved!r})"
            )
        if state.get("samples") != self.samples:
            differences.append(
                f"a data set of {shown_value(state.get('samples'))} samples (this one has "
                f"{self.samples})"
            )
        mixed = None if self.mixture is None else _stream(self.mixture.to_dict())
        saved_mixture = state.get("mixture")
        if (
            _stream(saved_mixture) if isinstance(saved_mixture, Mapping) else saved_mixture
        ) != mixed:
            differences.append("another mixture" if mixed else "a mixture")
        if differences:
            raise IntegrationError(
                "the saved sampler state is of " + " and ".join(differences) + ": its position "
                "would read other samples. Resume with the order and data set the run started "
                "with, or start a new stream (another loader name, semantics.md rule 4)"
            )
        epoch, position = (_saved(state, name) for name in ("epoch", "position"))
        if self.mixture is not None:
            cursors = state.get("cursors")
            if not isinstance(cursors, Mapping) or not all(
                isinstance(cursors.get(n), int) and not isinstance(cursors.get(n), bool)
                for n in self.mixture.names
            ):
                raise IntegrationError(
                    f"the saved sampler state's cursors are {shown_value(cursors)}: expected "
                    "each source's cursor when the epoch began"
                )
            self._base = {n: int(cursors[n]) for n in self.mixture.names}
        self._begin(epoch, position)


class DealtOrderSampler:
    """Every rank's indices of a loader's :class:`~durations.Order`, one micro-batch of each
    rank in turn, for a framework that deals whole micro-batches to its ranks itself:
    accelerate's ``BatchSamplerShard`` under Hugging Face's ``Trainer`` gives rank ``r`` the
    ``r``-th micro-batch of every round of ``world_size``. So each rank reads exactly what an
    :class:`OrderSampler` of its rank yields (rule 19: positions ``s + r, s + r + W, ...``),
    micro-batch by micro-batch, and the integrations check it against the plan: round ``j``
    from the start ``s`` yields, for each rank ``r`` and ``i < device_batch_size``, position
    ``s + j W B + r + W i``.

    Each round is ``world_size x device_batch_size`` positions, so the rest of every epoch must
    be whole rounds: one rank, or ``padding="cycle"`` (accelerate's ``even_batches``), which
    evens the rest of an epoch to whole rounds (rule 17); other paddings are refused.

    ``len()`` is a whole epoch at this geometry, whatever the position: a framework that counts
    an epoch's steps from it once (Hugging Face) ends its epochs where the data's end. The first
    iteration after :meth:`start_at` inside an epoch yields its rest; every iteration after an
    epoch read to its end yields the next epoch whole (an iteration left early goes on at the
    round it left). ``set_epoch`` is accepted and ignored: the frameworks call it with a counter
    of their own (Hugging Face's starts at 0 in every ``train()``), while the order is keyed by
    the lifetime epoch, which the sampler follows itself.
    """

    #: Rounds of positions worked out per chunk while iterating.
    CHUNK_ROUNDS = 4_096

    def __init__(self, order: Order | None, loader: Loader, *, epoch: int = 0) -> None:
        # The checks of an OrderSampler (order, loader, epoch), and its positioning.
        self._place = OrderSampler(order, loader, rank=0, epoch=epoch)
        sharding = loader.sharding
        world = loader.world_size
        if sharding is not None and world > 1 and sharding.padding is not Padding.CYCLE:
            raise IntegrationError(
                f"loader {shown_value(loader.name)} evens its ranks by {sharding.padding.value} "
                "padding; a framework that deals whole micro-batches to its ranks reads whole "
                "rounds of them: build it with Loader.sharded(..., padding='cycle')"
            )
        self.order, self.loader, self.world_size = self._place.order, loader, world
        self.device_batch_size = 1 if sharding is None else sharding.device_batch_size
        self.samples: int = self._place.samples
        self._read = 0  # positions of whole rounds read since the start

    def set_epoch(self, epoch: int) -> None:
        """Ignored: the sampler goes on to the next lifetime epoch by itself (class docs)."""

    def start_at(self, where: Plan | Segment | Progress) -> None:
        """Read from where ``where`` starts, as :meth:`OrderSampler.start_at`."""
        self._place.start_at(where)
        self._read = 0

    def _rest(self) -> tuple[int, int]:
        """The epoch and position the next iteration starts at."""
        position = self._place.start + self._read
        if self.loader.samples_left_in_epoch(position) == 0:
            return self._place.epoch + 1, 0
        return self._place.epoch, position

    @property
    def epoch(self) -> int:
        """The lifetime epoch the next index is read from."""
        return self._rest()[0]

    @property
    def position(self) -> int:
        """The global position in that epoch the ranks have read up to (whole rounds)."""
        return self._rest()[1]

    def __len__(self) -> int:
        samples = self.loader.samples_per_epoch
        assert samples is not None  # a sized loader: OrderSampler checked it
        return samples

    def __iter__(self) -> Iterator[int]:
        # The next epoch once this one is read (a mixture's cursors going on with it).
        self._place._begin(self._place.epoch, self._place.start + self._read)
        self._read = 0
        position = self._place.start
        stop = position + self.loader.samples_left_in_epoch(position)
        world, device = self.world_size, self.device_batch_size
        size = self.CHUNK_ROUNDS * world * device
        for low in range(position, stop, size):
            high = min(stop, low + size)
            chunk = self._place._lookup(_dealt(low, high, world, device))
            for index, value in enumerate(chunk):
                if index % (world * device) == 0:
                    self._read = low - position + index  # whole rounds yielded
                yield value
        self._read = stop - position  # read to its end: the next iteration, the next epoch


def _dealt(low: int, high: int, world: int, device: int) -> Any:
    """Positions ``low`` to ``high`` (whole rounds of ``world x device`` from ``low``, the last
    perhaps shorter for one rank) in the order micro-batches are dealt: round ``j``, rank
    ``r``, place ``i`` is position ``low + j W B + r + W i``."""
    if world == 1:
        return range(low, high)
    round_ = world * device
    try:
        import torch
    except ImportError:
        return [
            low + t // round_ * round_ + (t % round_) // device + world * (t % device)
            for t in range(high - low)
        ]
    t = torch.arange(high - low, dtype=torch.int64)
    within = t % round_
    return low + (t - within) + within // device + world * (within % device)


def _stream(mixture: Mapping[str, Any]) -> dict[str, Any]:
    """A mixture's data as a sampler state records it, its ``restart`` aside (it applies when a
    call starts reading, not to where a stream stands: ``Mixture.same_stream``)."""
    return {key: value for key, value in mixture.items() if key != "restart"}


def _ranked(shares: tuple[int, ...]) -> tuple[Any, Any]:
    """The interleave of ``shares`` as tensors: each period place's source, and how many of
    that source's samples come before it in the period."""
    import torch

    sources, places = _table(shares)
    rank = [0] * len(sources)
    for mine in places:
        for n, place in enumerate(mine):
            rank[place] = n
    return torch.tensor(list(sources), dtype=torch.int64), torch.tensor(rank, dtype=torch.int64)


_RANKED: dict[tuple[int, ...], tuple[Any, Any]] = {}


def _mixture_indices(mixture: Mixture, base: Mapping[str, int], positions: Any) -> list[int]:
    """The indices of the sources' concatenation that ``positions`` of a mixture epoch read,
    from the cursors ``base`` the epoch began with (``Mixture.index_at``, on tensors)."""
    try:
        import torch
    except ImportError:  # the same, one position at a time
        return [mixture.index_at(base, int(q)) for q in positions]
    end = mixture.epoch_samples
    assert end is not None  # the samplers read mixtures that end their epochs
    if isinstance(positions, range):
        q = torch.arange(positions.start, positions.stop, positions.step, dtype=torch.int64)
    else:
        q = torch.as_tensor(positions, dtype=torch.int64)
    q = torch.where(q < end, q, (q - end) % end)
    shares = mixture.interleave.shares
    if shares not in _RANKED:
        _RANKED.clear()  # one mixture at a time, as a call reads it
        _RANKED[shares] = _ranked(shares)
    table, rank = _RANKED[shares]
    period = mixture.interleave.period
    source = table[q % period]
    share = torch.tensor(shares, dtype=torch.int64)
    first = torch.tensor([base.get(name, 0) for name in mixture.names], dtype=torch.int64)
    reads = first[source] + (q // period) * share[source] + rank[q % period]
    out = torch.empty_like(q)
    for j, (src, offset) in enumerate(zip(mixture.sources, mixture.offsets, strict=True)):
        mine = source == j
        if not bool(mine.any()):
            continue
        passes, place = reads[mine] // src.samples, reads[mine] % src.samples
        index = place.clone()
        if src.order is not None and src.order.shuffle:
            for number in passes.unique().tolist():
                same = passes == number
                key = int(number) if src.wrap is Wrap.RESHUFFLE else 0
                order = src.order.epoch(samples=src.samples, epoch=key)
                assert isinstance(order, Permutation)
                index[same] = _permuted(order, place[same])
        out[mine] = offset + index
    return out.tolist()  # type: ignore[no-any-return]


def _epoch(epoch: object) -> int:
    """``epoch``, a lifetime epoch counter, or refused."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2**64:
        raise IntegrationError(
            f"epoch={shown_value(epoch)}: expected a whole number from 0 to 2**64 - 1"
        )
    return epoch


def _saved(state: Mapping[str, Any], name: str) -> int:
    value = state.get(name)
    below = 2**64 if name == "epoch" else MAX_SAMPLES + 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < below:
        raise IntegrationError(
            f"the saved sampler state's {name} is {shown_value(value)}: expected a whole "
            f"number from 0 to {below - 1:,}"
        )
    return value


def _indices(order: Any, samples: int, positions: Any) -> list[int]:
    """The indices ``positions`` read (a ``range``, a list, or an int64 tensor): the places
    they wrap to, through ``order`` (a range when sequential), a chunk at a time on int64
    tensors for a :class:`Permutation`."""
    try:
        import torch
    except ImportError:  # the same arithmetic, one index at a time
        if not isinstance(order, Permutation):
            return [sample_at(q, samples) for q in positions]
        return [order[sample_at(q, samples)] for q in positions]
    if isinstance(positions, range):
        places = torch.arange(positions.start, positions.stop, positions.step, dtype=torch.int64)
    else:
        places = torch.as_tensor(positions, dtype=torch.int64)
    places = torch.where(places < samples, places, (places - samples) % samples)
    if not isinstance(order, Permutation):
        return places.tolist()  # type: ignore[no-any-return]
    return _permuted(order, places).tolist()  # type: ignore[no-any-return]


def _permuted(order: Permutation, values: Any) -> Any:
    """:class:`Permutation` on a tensor of places: its network, then cycle walking."""
    out = _network(order, values)
    over = out >= order.samples
    while bool(over.any()):
        out[over] = _network(order, out[over])
        over = out >= order.samples
    return out


def _network(order: Permutation, values: Any) -> Any:
    half, mask = order.half, (1 << order.half) - 1
    first, second = MULTIPLIERS
    left, right = values >> half, values & mask
    for key in order.keys:
        y = ((right ^ key) * first) % PRIME
        y = y ^ (y >> 13)
        y = (y * second) % PRIME
        y = y ^ (y >> 16)
        left, right = right, left ^ (y & mask)
    return (left << half) | right
