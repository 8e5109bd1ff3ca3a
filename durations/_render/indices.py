"""``durations plan``'s indices: the data-set indices each rank reads in one step, through the
step's loader's order (semantics.md rule 19)."""

from __future__ import annotations

from typing import Any

from ..mixture import Mixture
from ..order import step_indices
from ..plans import Plan
from ._text import LINE_WIDTH, clip, number

#: Indices shown per rank in the text (``--json`` lists more).
SHOWN_PER_RANK = 12
#: Ranks shown in the text.
SHOWN_RANKS = 8
#: The most indices ``--json`` lists for one step, over all ranks.
MAX_JSON_INDICES = 100_000


def _where(plan: Plan, step: int) -> dict[str, Any]:
    """What plan step ``step`` reads: its loader, epoch and positions."""
    segment = plan.segment_at(step)
    assert segment is not None
    loader = segment.loader
    here = plan.progress_at(step - 1).normalized(loader)
    size = loader.batch_size
    if loader.samples is not None:
        size = min(size, loader.samples_left_in_epoch(here.sample_in_epoch))
    return {
        "loader": loader,
        "epoch": here.epoch,
        "first": here.sample_in_epoch,
        "size": size,
    }


def indices_text(plan: Plan, step: int) -> list[str]:
    """The indices of plan step ``step`` (``1 <= step <= total_steps``), each rank's on a line,
    at most :data:`SHOWN_PER_RANK` of each and :data:`SHOWN_RANKS` ranks."""
    where = _where(plan, step)
    loader = where["loader"]
    first, size = where["first"], where["size"]
    span = f"{number(first)}-{number(first + size - 1)}" if size > 1 else number(first)
    read = loader.order if loader.mixture is None else _mixture_text(loader.mixture)
    lines = [
        f"step {number(plan.start.batch + step)} reads ({clip(loader.name or 'unnamed')}: {read}),",
        f"  epoch {number(where['epoch'])}, positions {span}:",
    ]
    world = loader.world_size
    for rank in range(min(world, SHOWN_RANKS)):
        indices = step_indices(plan, step, rank=rank)
        lines.append(_rank_line(rank, indices))
    if world > SHOWN_RANKS:
        lines.append(f"  ... and {number(world - SHOWN_RANKS)} more ranks (--json lists them)")
    return lines


def _mixture_text(mixture: Mixture) -> str:
    """A mixture's sources by their offsets in the concatenation its indices are of."""
    parts = [
        f"{clip(source.name)} from {number(offset)}"
        for source, offset in zip(mixture.sources, mixture.offsets, strict=True)
    ]
    shown = ", ".join(parts[:6]) + (
        f", and {number(len(parts) - 6)} more" if len(parts) > 6 else ""
    )
    return f"a mixture; indices of its sources' concatenation: {shown}"


def _rank_line(rank: int, indices: list[int]) -> str:
    """``  rank r: i, j, ...``: at most :data:`SHOWN_PER_RANK` indices, as many as fit in
    ``LINE_WIDTH`` with the count of all when some are left out."""
    head = f"  rank {rank}: "
    more = f", ... ({number(len(indices))} in all)"
    shown: list[str] = []
    width = len(head)
    for place, index in enumerate(indices[:SHOWN_PER_RANK]):
        text = str(index)
        last = place == len(indices) - 1
        if width + len(text) + (0 if last else len(more)) > LINE_WIDTH and shown:
            break
        shown.append(text)
        width += len(text) + 2
    tail = more if len(shown) < len(indices) else ""
    return head + ", ".join(shown) + tail


def indices_json(plan: Plan, step: int) -> dict[str, Any]:
    """The indices of plan step ``step`` by rank, at most :data:`MAX_JSON_INDICES` in all
    (``complete`` says whether every rank is listed whole)."""
    where = _where(plan, step)
    loader = where["loader"]
    ranks: list[list[int]] = []
    left = MAX_JSON_INDICES
    for rank in range(loader.world_size):
        if left <= 0:
            break
        indices = step_indices(plan, step, rank=rank)[:left]
        left -= len(indices)
        ranks.append(indices)
    order, mixture = loader.order, loader.mixture
    return {
        "step": plan.start.batch + step,
        "loader": loader.name,
        "order": None if order is None else {"shuffle": order.shuffle, "seed": order.seed},
        # A mixture's indices are of its sources' concatenation, each source from its offset.
        "sources": None
        if mixture is None
        else [
            {"name": source.name, "offset": offset}
            for source, offset in zip(mixture.sources, mixture.offsets, strict=True)
        ],
        "epoch": where["epoch"],
        "positions": {"first": where["first"], "count": where["size"]},
        "ranks": ranks,
        "complete": where["size"] <= MAX_JSON_INDICES,  # every position is one rank's
    }
