"""What each source of a mixture reads between two positions of its stream (private; the
planner's source accounting, ``docs/semantics.md`` rule 20).

Position ``p`` of a mixture epoch reads, of source ``j``, its read number ``base_j +
c_j(p)``, where ``base`` are the sources' cursors when the epoch began and ``c`` the
interleave's counts (positions past the data's end, a data-parallel loader's padding, read
position ``p mod N`` again and move no cursor). So the cursors at a position are ``base +
c(min(p, N))``, and an epoch that ends at position ``E`` hands the next ``base + c(min(E,
N))``. Every function here is closed-form: ``O(k log A)`` whatever the steps between.
"""

from __future__ import annotations

from collections.abc import Mapping

from .loader import Loader
from .mixture import Mixture, Source, SourceReads
from .progress import Progress

Cursors = dict[str, int]


def _mixture(loader: Loader) -> Mixture:
    assert loader.mixture is not None
    return loader.mixture


def _read_to(mixture: Mixture, position: int) -> tuple[int, ...]:
    """The sources' reads among the first ``position`` positions of an epoch (padding aside)."""
    end = mixture.epoch_samples
    return mixture.counts(position if end is None else min(position, end))


def _padding(mixture: Mixture, start: int, stop: int) -> tuple[int, ...]:
    """Each source's positions among ``[start, stop)`` of an epoch that lie past its data's
    end (read again from the epoch's start, ``sample_at``)."""
    end = mixture.epoch_samples
    if end is None or stop <= end:
        return (0,) * len(mixture.sources)
    first, last = max(start, end) - end, stop - end
    whole = last // end - first // end
    full, low, high = mixture.counts(end), mixture.counts(first % end), mixture.counts(last % end)
    return tuple(whole * f + h - lo for f, lo, h in zip(full, low, high, strict=True))


def epoch_start(loader: Loader, cursors: Mapping[str, int], at: Progress) -> Cursors:
    """The sources' cursors when the epoch ``at`` is in began, from their cursors at ``at``."""
    mixture = _mixture(loader)
    read = _read_to(mixture, at.sample_in_epoch)
    base = dict(cursors)
    for source, count in zip(mixture.sources, read, strict=True):
        base[source.name] = base.get(source.name, 0) - count
    return base


def advance(
    loader: Loader, cursors: Mapping[str, int], start: Progress, stop: Progress
) -> tuple[Cursors, tuple[SourceReads, ...]]:
    """The cursors at ``stop`` and what each source read from ``start`` (both positions of
    ``loader``'s stream, ``cursors`` those at ``start``)."""
    mixture = _mixture(loader)
    k = len(mixture.sources)
    new = [0] * k
    repeated = [0] * k

    def add(into: list[int], counts: tuple[int, ...], times: int = 1) -> None:
        for j, count in enumerate(counts):
            into[j] += times * count

    def sub(into: list[int], counts: tuple[int, ...]) -> None:
        for j, count in enumerate(counts):
            into[j] -= count

    first = start.sample_in_epoch
    if stop.epoch == start.epoch:
        add(new, _read_to(mixture, stop.sample_in_epoch))
        sub(new, _read_to(mixture, first))
        add(repeated, _padding(mixture, first, stop.sample_in_epoch))
    else:
        end = first + loader.samples_left_in_epoch(first)
        add(new, _read_to(mixture, end))
        sub(new, _read_to(mixture, first))
        add(repeated, _padding(mixture, first, end))
        full = stop.epoch - start.epoch - 1
        if full:
            whole = loader.samples_left_in_epoch(0)
            add(new, _read_to(mixture, whole), full)
            add(repeated, _padding(mixture, 0, whole), full)
        add(new, _read_to(mixture, stop.sample_in_epoch))
        add(repeated, _padding(mixture, 0, stop.sample_in_epoch))
    after = dict(cursors)
    reads = []
    for j, source in enumerate(mixture.sources):
        begun = cursors.get(source.name, 0)
        after[source.name] = begun + new[j]
        reads.append(
            SourceReads(
                name=source.name,
                samples=source.samples,
                start=begun,
                stop=begun + new[j],
                repeated=repeated[j],
                tokens_per_sample=source.tokens_per_sample,
            )
        )
    return after, tuple(reads)


def new_pass(read: int, before: Source, after: Source) -> int:
    """The cursor of a source that starts a new pass: past every pass it has begun (of
    ``before``'s size), in passes of ``after``'s size."""
    begun = -(-read // before.samples)
    return begun * after.samples
