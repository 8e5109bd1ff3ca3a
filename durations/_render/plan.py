"""``durations plan``'s text: the calls' table, the total, the timeline and the diagnostics."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from fractions import Fraction

from .._grammar import format_number
from ..diagnostics import Diagnostic
from ..loader import Loader
from ..mixture import read_span
from ..plans import Action, Plan, SampleRange, Segment
from ..progress import Progress
from ._text import LINE_WIDTH, aligned, clip, edges, elide, number, position

TIMELINE_WIDTH = 60


#: More diagnostics than this are summarised: one line per code, with its count and first message.
MAX_DIAGNOSTICS = 40


def plan_text(plan: Plan) -> str:
    config = plan.config
    head = [
        f"run: max_duration {'none' if config.max_duration is None else config.max_duration}"
        f" · resume {config.resume.value} · data {config.data.value}",
    ]
    if plan.checkpoint is not None:
        head.append(f"from: {position(plan.start)}")
    shown, left_out = edges(plan.segments)
    rows = [
        ["call", "action", "loader", "start", "stop", "steps", "epochs", "samples", "tokens"],
        *(_segment_row(s) for s in shown),
    ]
    table = aligned(rows, frozenset({3, 4, 5, 6, 7, 8}))
    lines = [*head, "", *elide(table, left_out, "calls"), ""]
    lines.append(f"total: {number(plan.total_steps)} steps · ends at {position(plan.stop)}")
    lines.append("")
    lines.extend(timeline(plan))
    lines.extend(_sources(plan))
    if plan.diagnostics:
        lines.append("")
        lines.append("diagnostics:")
        lines.extend(f"  {line}" for line in _diagnostics(plan.diagnostics))
    return "\n".join(lines) + "\n"


def _sources(plan: Plan) -> list[str]:
    """What each call reading a mixture reads of each source: samples, the share they make
    of the call against the share asked, passes, the cursor it leaves, and the positions."""
    mixed = [s for s in plan.segments if s.sources and not s.failed]
    if not mixed:
        return []
    rows = [["call", "source", "samples", "share", "asked", "passes", "cursor", "tokens", "reads"]]
    for segment in mixed:
        assert segment.loader.mixture is not None
        asked = segment.loader.mixture.interleave.weights
        total = sum(r.read + r.repeated for r in segment.sources)
        for reads, weight in zip(segment.sources, asked, strict=True):
            share = Fraction(reads.read + reads.repeated, total) if total else Fraction(0)
            rows.append(
                [
                    clip(segment.name),
                    clip(reads.name),
                    number(reads.read + reads.repeated),
                    _share(share),
                    _share(weight),
                    _passes(reads.passes),
                    number(reads.stop),
                    "?" if reads.tokens is None else number(reads.tokens),
                    "-" if not reads.read else read_span(reads.start, reads.stop, reads.samples),
                ]
            )
    return ["", "sources:", *aligned(rows, frozenset({2, 3, 4, 5, 6, 7}))]


def _passes(value: Fraction) -> str:
    """Passes exactly when short (``0.75``, ``2``), else to three decimals (``~0.750``)."""
    text = format_number(value)
    return text if len(text) <= 6 and "/" not in text else f"~{float(value):.3f}"


def _share(value: Fraction) -> str:
    """A share to three decimals (the exact value is in --json)."""
    return f"{float(value):.3f}"


def _diagnostics(diagnostics: Sequence[Diagnostic]) -> list[str]:
    """One line per diagnostic; past ``MAX_DIAGNOSTICS``, one line per code (in order of first
    appearance) with its count and its first message, so that no code is hidden."""
    if len(diagnostics) <= MAX_DIAGNOSTICS:
        return [_diagnostic(d) for d in diagnostics]
    by_code: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_code.setdefault(d.code, []).append(d)
    lines = [f"{number(len(diagnostics))} diagnostics, by code (--json lists every one):"]
    for found in by_code.values():
        first = found[0]
        if len(found) == 1:
            lines.append(_diagnostic(first))
            continue
        where = f" [{first.call}]" if first.call else ""
        lines.append(
            f"{first.severity.value:<7} {first.code} ({number(len(found))} times), "
            f"the first{where}: {first.message}"
        )
    return lines


def _action(s: Segment) -> str:
    """What a call does, as the integrations do it: a started call with nothing left to train
    (its target reached where it resumes) trains nothing, so it is a ``skip`` too (the plan's
    ``Action`` stays ``resume``, with 0 steps)."""
    if s.action is Action.RESUME and s.steps == 0 and not s.failed:
        return Action.SKIP.value
    return s.action.value


def _segment_row(s: Segment) -> list[str]:
    steps = number(s.steps) if s.action is not Action.SKIP else "-"
    if s.stop_at_runtime:
        steps = f"<={steps}"
    return [
        clip(s.name),
        _action(s),
        clip(s.loader.name or "-"),
        f"{number(s.start.batch)}ba",
        f"{number(s.stop.batch)}ba",
        steps,
        _epochs(s.start, s.stop, s.loader),
        number(s.stop.sample - s.start.sample),
        _difference(s.stop.token, s.start.token),
    ]


def _epochs(start: Progress, stop: Progress, loader: Loader) -> str:
    if loader.samples is None:
        return "-"
    delta = (
        stop.epoch
        - start.epoch
        + Fraction(stop.sample_in_epoch - start.sample_in_epoch, loader.samples)
    )
    return number(delta) if delta.denominator == 1 else format_number(delta)


def _difference(stop: int | None, start: int | None) -> str:
    return "?" if stop is None or start is None else number(stop - start)


def _diagnostic(d: Diagnostic) -> str:
    where = f" [{d.call}]" if d.call else ""
    return f"{d.severity.value:<7} {d.code}{where}: {d.message}"


#: Each call's name, and its parts: a character and how many steps it stands for.
_Spans = list[tuple[str, list[tuple[str, int]]]]


def timeline(plan: Plan) -> list[str]:
    """One line, one span per fit call, proportional to steps, with a legend.

    ``.`` trained before the checkpoint, ``>`` where training resumes, ``=`` steps to train,
    ``R`` steps that read replayed samples, ``x`` an epoch's samples skipped or abandoned.
    """
    spans: _Spans = []
    first_active = _first_active(plan)
    for s in plan.segments:
        parts: list[tuple[str, int]] = []
        done = s.entry.start.batch if s.action is Action.SKIP else s.start.batch
        if s.action is Action.SKIP and s.entry.stop is not None:
            parts.append((".", s.entry.stop.batch - s.entry.start.batch))
        elif s.action is Action.RESUME:
            parts.append((".", max(0, done - s.entry.start.batch)))
        for gap in (s.abandoned, s.skipped):
            if gap is not None:
                parts.append(("x", _steps_of(gap, s.loader)))
        replay = 0 if s.replayed is None else min(s.steps, _steps_of(s.replayed, s.loader))
        if s.action is Action.RESUME or (plan.checkpoint is not None and s is first_active):
            parts.append((">", 0))
        parts.append(("R", replay))
        parts.append(("=", s.steps - replay))
        spans.append((s.name, parts))
    per_call = _one_span_per_call(spans)
    line, labels = per_call or _one_span(spans)
    used = set(line)
    meanings = [
        (".", "done before the checkpoint"),
        (">", "resume"),
        ("=", "to train"),
        ("R", "replays samples"),
        ("x", "samples skipped"),
    ]
    legend = " · ".join(f"'{char}' {meaning}" for char, meaning in meanings if char in used)
    lines = [f"timeline: {line}", f"          {labels}", f"          {legend}"]
    if per_call is None:
        lines.append(
            f"          {number(len(spans))} calls in one span, proportional to steps "
            f"(one each would not fit in {LINE_WIDTH} columns)"
        )
    return lines


def _one_span_per_call(spans: _Spans) -> tuple[str, str] | None:
    """The timeline with one span per call and its name under it, or ``None`` when that does
    not fit in ``LINE_WIDTH`` or a name would run into the next."""
    room = LINE_WIDTH - len("timeline: ")
    if 2 * len(spans) + 1 > room:
        return None
    weights = [w for _, parts in spans for _, w in parts]
    cells = _allocate(weights, TIMELINE_WIDTH)
    line, labels, k = "", "", 0
    for name, parts in spans:
        start = len(line)
        line += "|"
        for char, _ in parts:
            width = cells[k]
            k += 1
            line += ">" if char == ">" else char * width
        if labels and start <= len(labels):
            return None
        labels += " " * (start - len(labels)) + clip(name)
    line += "|"
    if max(len(line), len(labels)) > room:
        return None
    return line, labels


def _one_span(spans: _Spans) -> tuple[str, str]:
    """The timeline of many calls as one span of ``TIMELINE_WIDTH`` cells: each cell shows what
    the step at its middle does, ``>`` is put where training resumes; the first and last
    calls are named under its ends."""
    parts = [part for _, span in spans for part in span]
    total = sum(w for _, w in parts)
    ends, end = [], 0  # the step each part ends at
    for _, weight in parts:
        end += weight
        ends.append(end)
    # Cell i's middle is at step (2i + 1) * total / (2 * TIMELINE_WIDTH): compare it exactly.
    scaled = [2 * TIMELINE_WIDTH * end for end in ends]
    cells = [
        parts[bisect.bisect_right(scaled, (2 * cell + 1) * total)][0]
        for cell in range(TIMELINE_WIDTH if total else 0)
    ]
    resume = next((i for i, (char, _) in enumerate(parts) if char == ">"), None)
    if resume is not None:
        at = ends[resume] * TIMELINE_WIDTH // total if total else 0
        cells.insert(at, ">")
    line = "|" + "".join(cells) + "|"
    first, last = clip(spans[0][0]), clip(spans[-1][0])
    return line, first + " " * max(1, len(line) - len(first) - len(last)) + last


def _first_active(plan: Plan) -> Segment | None:
    return next((s for s in plan.segments if s.action is not Action.SKIP), None)


def _steps_of(samples: SampleRange, loader: Loader) -> int:
    return -(-samples.samples // loader.batch_size)


def _allocate(weights: list[int], width: int) -> list[int]:
    """Cells for each weight: proportional, at least one for any non-zero weight."""
    total = sum(weights)
    if total == 0:
        return [0] * len(weights)
    return [max(1, w * width // total) if w else 0 for w in weights]
