"""Mixtures on the plan (docs/semantics.md rule 20, docs/mixtures.md): what each source reads
is checked against a sample-by-sample walk of the plan's positions, and stated as relations
(resume invariance at every step, phase continuity, sharding invariance of what each source
reads, one sample of the shares); edits, changed sources, restarts and budgets by tables of
examples with a reason per row."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from durations import (
    Checkpoint,
    FitCall,
    GeometryError,
    Loader,
    Mixture,
    MixtureError,
    Order,
    Plan,
    RunConfig,
    Source,
    plan,
)
from durations.plans import Action
from durations.testing import mixtures

# -- the reference: walk every position the plan reads ------------------------------------------


def _walk(p: Plan) -> tuple[dict[str, int], list[dict[str, tuple[int, int]]]]:
    """Each source's cursor at the plan's end, and per segment (new reads, repeated) per
    source, by reading every position of every step: position ``q`` of a mixture epoch of
    ``N`` reads source ``s(q)`` of the interleave when ``q < N`` (its next sample: the cursor
    goes up by one) and is a padding position read again otherwise. An epoch that begins
    starts the interleave at its position 0; nothing else moves a cursor."""
    cursors = dict(p.checkpoint.cursors or ()) if p.checkpoint is not None else {}
    per_segment = []
    for segment in p.segments:
        found: dict[str, tuple[int, int]] = {}
        mixture = segment.loader.mixture
        if mixture is None or segment.action is Action.SKIP or segment.failed:
            per_segment.append(found)
            continue
        cursors.update(dict(segment.cursors))  # restarts and changed sources, said apart
        new = dict.fromkeys(mixture.names, 0)
        again = dict.fromkeys(mixture.names, 0)
        end = mixture.epoch_samples
        for reads in segment.reads():
            for q in range(reads.start, reads.stop):
                if end is None or q < end:
                    name = mixture.names[mixture.interleave.source(q)]
                    new[name] += 1
                    cursors[name] = cursors.get(name, 0) + 1
                else:
                    again[mixture.names[mixture.interleave.source(q % end)]] += 1
        per_segment.append({n: (new[n], again[n]) for n in mixture.names})
    return cursors, per_segment


def _reported(p: Plan) -> list[dict[str, tuple[int, int]]]:
    return [
        {}
        if s.action is Action.SKIP or s.failed
        else {r.name: (r.read, r.repeated) for r in s.sources}
        for s in p.segments
    ]


@st.composite
def mixed_scripts(draw: st.DrawFn) -> tuple[RunConfig, tuple[FitCall, ...]]:
    """One to three calls, each on one of two drawn mixtures (sharing source names, so later
    calls continue earlier calls' sources), some data-parallel, in ba, sp or ep."""
    loaders = []
    for name in ("p", "q"):
        mixture = draw(mixtures(max_sources=3, max_samples=20, sized=None))
        if draw(st.booleans()):
            try:
                loader = Loader.mixing(
                    mixture,
                    world_size=draw(st.integers(1, 3)),
                    device_batch_size=draw(st.integers(1, 4)),
                    padding=draw(st.sampled_from(["repeat", "cycle", "drop"])),
                    drop_last=draw(st.booleans()),
                    name=name,
                )
            except GeometryError:
                loader = Loader.mixing(mixture, batch_size=draw(st.integers(1, 6)), name=name)
        else:
            batch = draw(st.integers(1, 6))
            epoch = mixture.epoch_samples
            drop = epoch is not None and epoch >= batch and draw(st.booleans())
            loader = Loader.mixing(mixture, batch_size=batch, drop_last=drop, name=name)
        loaders.append(loader)
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        loader = draw(st.sampled_from(loaders))
        units = ["ba", "sp"] + (["ep"] if loader.samples is not None else [])
        unit = draw(st.sampled_from(units))
        amount = (
            f"{draw(st.integers(1, 7))}/{draw(st.integers(1, 3))}"
            if unit == "ep"
            else str(draw(st.integers(1, 40)))
        )
        if unit == "ep":
            whole = Fraction(amount)
            amount = str(whole.numerator) if whole.denominator == 1 else f"{float(whole):.3f}"
        calls.append(FitCall(loader=loader, duration=f"{amount}{unit}"))
    return RunConfig(), tuple(calls)


@settings(max_examples=150, deadline=None)
@given(mixed_scripts())
def test_source_reads_are_the_positions_read(script: tuple[RunConfig, tuple[FitCall, ...]]) -> None:
    """What the plan reports of each source, call by call, and the cursors it ends at, equal a
    walk of every position its steps read: the closed form is the sample-by-sample count."""
    config, calls = script
    p = plan(config, calls)
    cursors, per_segment = _walk(p)
    assert _reported(p) == per_segment
    assert p.cursors_at(p.total_steps) == cursors


@settings(max_examples=60, deadline=None)
@given(mixed_scripts(), st.data())
def test_resume_anywhere_reads_the_same(
    script: tuple[RunConfig, tuple[FitCall, ...]], data: st.DataObject
) -> None:
    """Killed after any step and resumed from that step's checkpoint (written and read back),
    the rest of the run reads exactly what the uninterrupted run reads from there: the same
    stop, the same cursors at every later step."""
    config, calls = script
    p = plan(config, calls)
    k = data.draw(st.integers(0, p.total_steps))
    saved = Checkpoint.from_dict(p.checkpoint_at(k).to_dict())
    assert dict(saved.cursors or ()) == p.cursors_at(k)
    resumed = plan(config, calls, saved)
    assert resumed.stop == p.stop
    for later in range(k, p.total_steps + 1):
        assert resumed.cursors_at(later - k) == p.cursors_at(later)


def _two(**parts: object) -> tuple[Source, Source]:
    return (
        Source(name="A", samples=2000, **parts),  # type: ignore[arg-type]
        Source(name="B", samples=2000, **parts),  # type: ignore[arg-type]
    )


def test_phases_continue_each_shared_source() -> None:
    """A later call's mixture reads each source it shares with earlier calls from where they
    left it (the annealing phase does not read pretraining's first samples again); a source
    it names in ``restart`` starts a new pass instead, and the unread rest is said."""
    web, code = (
        Source(name="web", samples=1000, weight=3),
        Source(name="code", samples=500, weight=1),
    )
    math = Source(name="math", samples=100, weight=1)
    pretrain = Loader.mixing(Mixture(sources=(web, code), stop="never"), batch_size=100)
    anneal = Mixture(sources=(Source(name="code", samples=500, weight=1), math), stop="never")
    calls = [
        FitCall(loader=pretrain, duration="800sp", name="pretrain"),
        FitCall(loader=Loader.mixing(anneal, batch_size=50), duration="200sp", name="anneal"),
    ]
    p = plan(RunConfig(), calls)
    first, second = p.segments
    assert {r.name: (r.start, r.stop) for r in first.sources} == {"web": (0, 600), "code": (0, 200)}
    assert {r.name: (r.start, r.stop) for r in second.sources} == {
        "code": (200, 300),
        "math": (0, 100),
    }
    restarting = Mixture(sources=anneal.sources, stop="never", restart=["code"])
    calls[1] = FitCall(
        loader=Loader.mixing(restarting, batch_size=50), duration="200sp", name="anneal"
    )
    p = plan(RunConfig(), calls)
    assert {r.name: (r.start, r.stop) for r in p.segments[1].sources}["code"] == (500, 600)
    (said,) = [d.message for d in p.diagnostics if d.code == "source-restarted"]
    assert said == (
        "the mixture restarts source 'code': it starts pass 1; positions 200-499 of its pass 0 "
        "are never read"
    )


def test_a_mixture_edit_names_what_each_source_reads_differently() -> None:
    """The issue's edit: A and B of 2,000 samples at 1:1 for 3,000 samples, checkpointed after
    1,200 and resumed at 2:1. Each source goes on from its cursor (600 each: nothing skipped
    or read twice at the edit), and against the unedited mix the call's end reads 300 more of
    A (1,800 - 1,500) and 300 fewer of B (1,200 - 1,500), named by position."""
    before = Loader.mixing(Mixture(sources=_two(weight=1), stop="never"), batch_size=100)
    _a, b = _two(weight=1)
    edited = Mixture(sources=(Source(name="A", samples=2000, weight=2), b), stop="never")
    call = FitCall(loader=before, duration="3000sp", name="pretrain")
    saved = plan(RunConfig(), [call]).checkpoint_at(12)
    assert dict(saved.cursors or ()) == {"A": 600, "B": 600}
    p = plan(
        RunConfig(),
        [FitCall(loader=Loader.mixing(edited, batch_size=100), duration="3000sp", name="pretrain")],
        saved,
    )
    assert p.total_steps == 18  # the stored target, 3,000 samples, is kept
    assert {r.name: (r.start, r.stop) for r in p.segments[0].sources} == {
        "A": (600, 1800),
        "B": (600, 1200),
    }
    said = {d.code: d.message for d in p.diagnostics}
    assert said["mixture-changed"] == (
        "the mixture of call 'pretrain' changed since it started (weights A:B 1:1 -> A:B 2:1): "
        "each source goes on from its cursor (A at 600, B at 600), and the interleave starts "
        "again from its first position at the checkpoint (a new mixture epoch)"
    )
    assert said["mixture-edit"] == (
        "by the end of call 'pretrain', against the mixture it started with: A reads 300 more "
        "(positions 1,500-1,799 of pass 0); B reads 300 fewer (positions 1,200-1,499 of pass "
        "0 are left for later calls, or never read)"
    )
    assert "loader-changed" not in said


# (the resumed mixture, the code said, its message, why)
_EDITS = [
    (
        Mixture(sources=(*_two(weight=1), Source(name="C", samples=100, weight=2)), stop="never"),
        "mixture-changed",
        "source added: C",
        "a source appended mid-call starts at its first sample; the others keep their cursors",
    ),
    (
        Mixture(
            sources=(
                Source(name="A", samples=2000, weight=1, order=Order.shuffled(5)),
                _two(weight=1)[1],
            ),
            stop="never",
        ),
        "source-changed",
        "source 'A' changed since it was last read (A (2,000 samples, weight 1) -> A (2,000 "
        "samples, weight 1, shuffled, seed 5)): it starts a new pass; positions 600-1,999 of "
        "its pass 0 are never read",
        "a source read in another order cannot go on in its pass: the rest is named",
    ),
    (
        Mixture(
            sources=(Source(name="A", samples=1000, weight=1), _two(weight=1)[1]), stop="never"
        ),
        "source-changed",
        "source 'A' changed since it was last read (A (2,000 samples, weight 1) -> A (1,000 "
        "samples, weight 1)): it starts a new pass; positions 600-1,999 of its pass 0 are "
        "never read",
        "a source of another size is other data: a new pass, counted in its new size",
    ),
]


@pytest.mark.parametrize(("edited", "code", "message", "why"), _EDITS)
def test_edits_at_resume(edited: Mixture, code: str, message: str, why: str) -> None:
    before = Loader.mixing(Mixture(sources=_two(weight=1), stop="never"), batch_size=100)
    saved = plan(RunConfig(), [FitCall(loader=before, duration="3000sp", name="x")]).checkpoint_at(
        12
    )
    p = plan(
        RunConfig(),
        [FitCall(loader=Loader.mixing(edited, batch_size=100), duration="3000sp", name="x")],
        saved,
    )
    found = [d.message for d in p.diagnostics if d.code == code]
    assert any(message in text for text in found), (why, found)


def test_a_new_source_starts_at_zero_and_a_changed_one_at_a_new_pass() -> None:
    before = Loader.mixing(Mixture(sources=_two(weight=1), stop="never"), batch_size=100)
    saved = plan(RunConfig(), [FitCall(loader=before, duration="3000sp", name="x")]).checkpoint_at(
        12
    )
    appended = Loader.mixing(_EDITS[0][0], batch_size=100)
    p = plan(RunConfig(), [FitCall(loader=appended, duration="3000sp", name="x")], saved)
    starts = {r.name: r.start for r in p.segments[0].sources}
    assert starts == {"A": 600, "B": 600, "C": 0}
    reordered = Loader.mixing(_EDITS[1][0], batch_size=100)
    p = plan(RunConfig(), [FitCall(loader=reordered, duration="3000sp", name="x")], saved)
    assert {r.name: r.start for r in p.segments[0].sources} == {"A": 2000, "B": 600}


def test_world_size_change_keeps_every_cursor() -> None:
    """Resumed on another number of ranks, a mixture goes on in its epoch: the sources read
    from the checkpoint are those the unchanged job reads, less what evening pads (rule 18)."""
    mixture = Mixture(
        sources=(Source(name="A", samples=30, weight=2), Source(name="B", samples=20, weight=1))
    )
    job = Loader.mixing(mixture, world_size=2, device_batch_size=3, padding="cycle")
    calls = [FitCall(loader=job, duration="2ep")]
    p = plan(RunConfig(), calls)
    saved = p.checkpoint_at(3)
    on3 = plan(
        RunConfig(),
        [
            FitCall(
                loader=Loader.mixing(mixture, world_size=3, device_batch_size=3, padding="cycle"),
                duration="2ep",
            )
        ],
        saved,
    )
    assert on3.cursors_at(on3.total_steps) == p.cursors_at(p.total_steps)
    assert "world-size-changed" in [d.code for d in on3.diagnostics]


@settings(max_examples=60, deadline=None)
@given(mixtures(max_sources=3, max_samples=20, sized=True), st.integers(1, 3), st.integers(1, 3))
def test_what_each_source_reads_of_whole_epochs_is_the_same_at_any_geometry(
    mixture: Mixture, epochs: int, ranks: int
) -> None:
    """Whole mixture epochs read the same samples of every source at any batch size and any
    number of ranks (padding only adds positions read again): c(N) per epoch."""
    one = plan(
        RunConfig(), [FitCall(loader=Loader.mixing(mixture, batch_size=1), duration=f"{epochs}ep")]
    )
    many = Loader.mixing(mixture, world_size=ranks, device_batch_size=2, padding="cycle")
    other = plan(RunConfig(), [FitCall(loader=many, duration=f"{epochs}ep")])
    assert mixture.epoch_samples is not None
    per_epoch = dict(zip(mixture.names, mixture.counts(mixture.epoch_samples), strict=True))
    expected = {name: epochs * count for name, count in per_epoch.items()}
    assert one.cursors_at(one.total_steps) == expected == other.cursors_at(other.total_steps)


@settings(max_examples=80, deadline=None)
@given(mixtures(max_sources=4, max_samples=30), st.integers(0, 200))
def test_every_epoch_prefix_is_within_one_sample(mixture: Mixture, n: int) -> None:
    """The first n positions of a mixture epoch read each source within one sample of its
    share (the interleave's promise, here through the mixture's own shares)."""
    end = mixture.epoch_samples
    n = n if end is None else min(n, end)
    for count, weight in zip(mixture.counts(n), mixture.interleave.weights, strict=True):
        assert abs(count - weight * n) < 1


def test_epoch_by_stop_rule() -> None:
    """Each stop rule's epoch, computed by hand: shares 3:1 over sources of 600 and 100."""
    big, small = (
        Source(name="big", samples=600, weight=3),
        Source(name="small", samples=100, weight=1),
    )
    first = Mixture(sources=(big, small))
    every = Mixture(sources=(big, small), stop="all_exhausted")
    never = Mixture(sources=(big, small), stop="never")
    # The interleave reads big, big, small, big: small, read at 2, 6, 10, ..., runs out
    # first, its 101st read due at position 402.
    assert [first.interleave.source(i) for i in range(4)] == [0, 0, 1, 0]
    assert first.epoch_samples == 402
    assert first.counts(402) == (302, 100)
    # big runs out last: its 600th read is at position 799.
    assert every.epoch_samples == 800
    assert every.counts(800) == (600, 200)
    assert never.epoch_samples is None
    counted = Mixture(
        sources=(
            Source(name="big", samples=600, count=150),
            Source(name="small", samples=100, count=50),
        )
    )
    assert counted.epoch_samples == 200
    assert counted.counts(200) == (150, 50)
    repeated = Mixture(
        sources=(
            Source(name="big", samples=600, repeats="0.5"),
            Source(name="small", samples=100, repeats=2),
        )
    )
    assert repeated.epoch_samples == 500
    assert repeated.counts(500) == (300, 200)
    tokens = Mixture(
        sources=(
            Source(name="big", samples=600, weight=1, tokens_per_sample=100),
            Source(name="small", samples=100, weight=1, tokens_per_sample=50),
        ),
        unit="tok",
        stop="never",
    )
    assert tokens.interleave.shares == (1, 2)  # equal tokens: twice the samples of the short one


def test_budget_is_checked_before_the_run() -> None:
    """``max_passes`` bounds a source over the whole script: a later phase that would read it
    past its budget is an error of the plan, named with the reads."""
    math = Source(name="math", samples=100, weight=1, max_passes=2)
    web = Source(name="web", samples=10_000, weight=1)
    loader = Loader.mixing(Mixture(sources=(web, math), stop="never"), batch_size=50)
    ok = plan(RunConfig(), [FitCall(loader=loader, duration="400sp")])
    assert ok.ok
    over = plan(
        RunConfig(),
        [FitCall(loader=loader, duration="400sp"), FitCall(loader=loader, duration="2ba")],
    )
    assert not over.ok
    (said,) = [d for d in over.diagnostics if d.code == "source-budget-exceeded"]
    assert said.call == "#1"
    assert said.message.startswith("source 'math' reaches 2.5 passes by the end of call '#1'")


# (kwargs of Mixture / Source, the field named, a part of the message, why)
_REFUSALS = [
    (lambda: Source(name="a", samples=10), "source 'a'", "give exactly one of", "no part given"),
    (
        lambda: Source(name="a", samples=10, weight=1, count=3),
        "source 'a'",
        "exactly one",
        "two parts",
    ),
    (
        lambda: Source(name="a", samples=10, weight=0.5),
        "source weight",
        "a float is not exact",
        "floats are not exact",
    ),
    (
        lambda: Source(name="a", samples=10, weight="-1"),
        "source weight",
        "> 0",
        "a weight must be positive",
    ),
    (
        lambda: Source(name="", samples=10, weight=1),
        "name",
        "non-empty",
        "a source is known by its name",
    ),
    (
        lambda: Source(name="a", samples=3, repeats="0.5"),
        "source 'a' repeats",
        "not a whole number",
        "half of 3 samples",
    ),
    (
        lambda: Source(name="a", samples=3, weight=1, wrap="again"),
        "source wrap",
        "'reshuffle' or 'replay'",
        "unknown wrap",
    ),
    (lambda: Mixture(sources=()), "sources", "at least one", "an empty mixture"),
    (
        lambda: Mixture(
            sources=(Source(name="a", samples=3, weight=1), Source(name="a", samples=4, weight=1))
        ),
        "sources",
        "repeated: 'a'",
        "two sources of one name",
    ),
    (
        lambda: Mixture(
            sources=(Source(name="a", samples=3, weight=1), Source(name="b", samples=4, count=2))
        ),
        "sources",
        "count and weight",
        "shares and counts do not mix",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, weight=1),), unit="tok"),
        "unit",
        "tokens_per_sample",
        "token shares need sample lengths",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, count=1),), stop="never"),
        "stop",
        "epoch of their sum",
        "counts fix the epoch",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, weight=1),), restart=["b"]),
        "restart",
        "names no source",
        "restart of an unknown source",
    ),
    (
        lambda: Mixture(
            sources=(
                Source(name="a", samples=3, weight=1),
                Source(name="b", samples=1000, weight="0.001"),
            )
        ),
        "source 'b' weight",
        "rounds to no sample",
        "a share rounded to nothing is refused, not warned",
    ),
]


_REFUSALS += [
    (
        lambda: Source(name="a", samples=3, weight=10**300),
        "source weight",
        "characters written exactly",
        "a weight a checkpoint could not read back (found by the mixture fuzz target)",
    ),
    (
        lambda: Source(name="x" * 100_000, samples=0, weight=1),
        f"source {'x' * 40!r}... (100,000 characters) samples",
        "whole number > 0",
        "a huge name is shown by its start (a 144,289-character message found by fuzzing)",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, weight=1),), restart=5),  # type: ignore[arg-type]
        "restart",
        "a list of source names",
        "restart that is not a list (a TypeError found by fuzzing)",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, weight=1),), restart=[1]),  # type: ignore[list-item]
        "restart",
        "strings",
        "a name that is not a string",
    ),
    (
        lambda: Mixture(sources=(Source(name="a", samples=3, weight=1),), stop=[1]),  # type: ignore[arg-type]
        "stop",
        "'first_exhausted', 'all_exhausted' or 'never'",
        "a stop rule of another type",
    ),
]


@pytest.mark.parametrize(("make", "field", "part", "why"), _REFUSALS)
def test_refusals(make: object, field: str, part: str, why: str) -> None:
    with pytest.raises(MixtureError) as info:
        make()  # type: ignore[operator]
    assert info.value.field == field, why
    assert part in str(info.value), why
    assert len(str(info.value)) < 1_000, why  # bounded, whatever the input


def test_loader_refuses_what_the_mixture_decides() -> None:
    mixture = Mixture(sources=(Source(name="a", samples=10, weight=1),))
    with pytest.raises(GeometryError, match="a loader of a mixture has the mixture's samples"):
        Loader(samples=11, batch_size=2, mixture=mixture)
    with pytest.raises(GeometryError, match="give each Source its order"):
        Loader(samples=10, batch_size=2, mixture=mixture, order=Order.shuffled(1))
    with pytest.raises(GeometryError, match="not both"):
        Loader.mixing(mixture, batch_size=4, world_size=2, device_batch_size=2)


def test_checkpoint_round_trip_and_format() -> None:
    """A mixture's checkpoint is format 6 and reads back equal; a checkpoint with neither an
    order nor a mixture stays format 4; a mixture's ledger without cursors is refused."""
    loader = Loader.mixing(Mixture(sources=_two(weight=1), stop="never"), batch_size=100)
    saved = plan(RunConfig(), [FitCall(loader=loader, duration="30ba")]).checkpoint_at(7)
    data = saved.to_dict()
    assert data["format"] == 6
    assert data["cursors"] == {"A": 350, "B": 350}
    assert Checkpoint.from_dict(data) == saved
    plain = plan(RunConfig(), [FitCall(loader=Loader(samples=10, batch_size=2), duration="3ba")])
    assert plain.checkpoint_at(2).to_dict()["format"] == 4
    data["cursors"] = None
    from durations import CheckpointFormatError

    with pytest.raises(CheckpointFormatError, match="records where each of its sources stands"):
        Checkpoint.from_dict(data)


@settings(max_examples=80, deadline=None)
@given(mixed_scripts())
def test_step_indices_read_each_source_s_next_samples(
    script: tuple[RunConfig, tuple[FitCall, ...]],
) -> None:
    """Every step's indices, over all ranks, are the sources' next samples in position order
    (a position past the epoch's end reads its wrapped position's sample again), as indices
    of the concatenation of the mixture's sources: the order the samplers produce (rule 20)."""
    from durations.order import step_indices

    config, calls = script
    p = plan(config, calls)
    cursors: dict[str, int] = {}
    by_position: dict[tuple[int, int], int] = {}  # what each position of an epoch read
    for segment in p.segments:
        mixture = segment.loader.mixture
        if mixture is None or segment.failed or not segment.steps:
            continue
        cursors.update(dict(segment.cursors))
        end = mixture.epoch_samples
        for k, reads in enumerate(segment.reads(), start=segment.start_step + 1):
            expected = []
            for q in range(reads.start, reads.stop):
                if end is None or q < end:
                    j = mixture.interleave.source(q)
                    source = mixture.sources[j]
                    index = mixture.offsets[j] + source.index(cursors.get(source.name, 0))
                    cursors[source.name] = cursors.get(source.name, 0) + 1
                    by_position[reads.epoch, q] = index
                else:
                    index = by_position[reads.epoch, q % end]
                expected.append(index)
            ranks = range(segment.loader.world_size)
            got = [i for r in ranks for i in step_indices(p, k, rank=r)]
            assert sorted(got) == sorted(expected), k


# -- found by review: each a relation that failed before its fix ---------------------------------

_WEB, _CODE = Source(name="web", samples=30, weight=3), Source(name="code", samples=10, weight=1)
_MIX = Loader.mixing(Mixture(sources=(_WEB, _CODE)), batch_size=4, name="m")


def test_a_checkpoint_without_a_ledger_keeps_the_located_cursors() -> None:
    """Rule 10: a checkpoint without a ledger is located in the script's own plan, cursors
    included: the plan starts from them, and its own checkpoint resumes to the same end."""
    script = [FitCall(loader=_MIX, duration="2ep", name="x")]
    whole = plan(RunConfig(), script)
    located = plan(
        RunConfig(), script, Checkpoint(progress=whole.progress_at(13), loader_state=True)
    )
    assert located.cursors_at(0) == whole.cursors_at(13) == {"web": 39, "code": 13}
    again = plan(RunConfig(), script, located.checkpoint_at(0))
    assert again.cursors_at(again.total_steps) == whole.cursors_at(whole.total_steps)


@pytest.mark.parametrize(
    "edited",
    [
        Loader.mixing(
            Mixture(sources=(Source(name="web", samples=30, weight=1), _CODE)),
            batch_size=4,
            name="m",
        ),
        Loader.mixing(
            Mixture(sources=(_WEB, Source(name="code", samples=12, weight=1))),
            batch_size=4,
            name="m",
        ),
    ],
    ids=["weights", "a source's size"],
)
def test_the_checkpoint_before_the_first_step_of_an_edited_resume_goes_on_where_it_does(
    edited: Loader,
) -> None:
    """Rule 16: a resume whose mixture changed moves to a new mixture epoch (rule 20); its
    checkpoint before the first step records that position and those cursors, so planning
    again from it reads what the resume reads."""
    saved = plan(RunConfig(), [FitCall(loader=_MIX, duration="10ba", name="x")]).checkpoint_at(5)
    resumed = plan(RunConfig(), [FitCall(loader=edited, duration="10ba", name="x")], saved)
    again = plan(
        RunConfig(), [FitCall(loader=edited, duration="10ba", name="x")], resumed.checkpoint_at(0)
    )
    assert (again.stop, again.cursors_at(again.total_steps)) == (
        resumed.stop,
        resumed.cursors_at(resumed.total_steps),
    )


def test_a_call_that_cannot_be_planned_changes_no_source() -> None:
    """Rule 14: a call that fails to place its target (a token target with no token count)
    reads nothing, so it restarts no source and changes none: the call after it goes on in
    each source where the call before left it, as when the call fails earlier."""
    restarting = Loader.mixing(
        Mixture(sources=(_WEB, Source(name="code", samples=12, weight=1)), restart={"code"}),
        batch_size=4,
        name="r",
    )
    other = Loader(samples=20, batch_size=4, name="b")
    for failing in ("until", "duration"):
        script = [
            FitCall(loader=_MIX, until="3ba"),
            FitCall(loader=other, duration="2ba"),
            FitCall(loader=restarting, **{failing: "100tok"}),
            FitCall(loader=_MIX, duration="2ba"),
        ]
        p = plan(RunConfig(), script)
        assert [r.start for r in p.segments[3].sources] == [9, 3], failing
        codes = {d.code for d in p.diagnostics}
        assert not codes & {"source-restarted", "source-changed"}, failing


def test_a_failed_call_keeps_the_resume_point_for_the_next() -> None:
    """Rule 11: at a mid-epoch resume, a call that cannot be planned does not use up the
    resume point: the next call that trains applies the data policy, and says so."""
    script = [
        FitCall(loader=_MIX, until="5ba", name="a"),
        FitCall(loader=_MIX, until="100tok", name="bad"),
        FitCall(loader=_MIX, duration="3ba", name="c"),
    ]
    saved = plan(RunConfig(), script[:1]).checkpoint_at(5)
    p = plan(RunConfig(data="replay_epoch"), script, saved)
    replayed = [d.call for d in p.diagnostics if d.code == "data-replayed"]
    assert replayed == ["c"]
    assert p.segments[2].start.sample_in_epoch == 0


def test_coverage_and_budget_count_what_a_restart_passes_over_as_unread() -> None:
    """A restart moves a source to a new pass: the positions it leaves are named as never
    read at the plan's end, and the budget counts the passes its cursor reaches."""
    code = Source(name="code", samples=10, weight=1, max_passes=1)
    first = Loader.mixing(Mixture(sources=(_WEB, code)), batch_size=4, name="m")
    second = Loader.mixing(Mixture(sources=(_WEB, code), restart={"code"}), batch_size=4, name="r")
    p = plan(
        RunConfig(), [FitCall(loader=first, until="5ba"), FitCall(loader=second, duration="5ba")]
    )
    said = {d.code: d.message for d in p.diagnostics}
    assert said["source-unfinished"].endswith(
        "its cursor at 15 (10 samples a pass), never read: positions 5-9 of pass 0; positions "
        "5-9 of pass 1"
    )
    assert "reaches 1.5 passes" in said["source-budget-exceeded"]
