"""``durations plan FILE --plot OUT``: the plan drawn on one axis of lifetime steps (a shell).

The calls as spans, the epoch boundaries, the event ticks, and the learning-rate factor, into a
PNG or an SVG. matplotlib is an optional extra (``pip install 'training-durations[plot]'``),
imported only here and only when a picture is asked for; the core never imports it. The curve
is sampled at a bounded number of steps (its piece boundaries and jumps exactly), so a plan of
a billion steps draws as fast as one of a hundred.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

from ._timeline import Timeline
from .errors import ConversionError
from .intervals import Events
from .plans import Plan
from .schedules import ResolvedSchedule
from .units import Unit

__all__ = ["draw"]

#: Evenly spaced steps at which the curve is sampled, besides its boundaries and jumps.
CURVE_SAMPLES = 1_000
#: At most this many epoch boundaries are drawn (a plan of more draws none, and says so).
MAX_EPOCH_LINES = 200
#: At most this many ticks are drawn per event interval (the first ones; the label says so).
MAX_TICKS = 5_000

_COLORS = ("#4C72B0", "#55A868", "#C44E52", "#8172B2", "#CCB974", "#64B5CD")


def curve_steps(curve: ResolvedSchedule, *, since: int | None = None) -> list[int]:
    """The steps at which the curve is sampled, from ``since`` (default: its start): about
    ``CURVE_SAMPLES`` evenly spaced ones, and on each side of every piece boundary and drop, so
    that every jump is drawn where it is."""
    start = curve.start if since is None else max(since, curve.start)
    end = max(curve.end, start)
    stride = max(1, (end - start) // CURVE_SAMPLES)
    steps = set(range(start, end + 1, stride)) | {end}
    for piece in curve.pieces:
        for step in (piece.start, piece.stop, *piece.drops):
            steps.update({step - 1, step})
    return sorted(s for s in steps if start <= s <= end)


def epoch_steps(timeline: Timeline) -> list[tuple[int, int]]:
    """``(lifetime step, epoch)`` where each whole epoch of the run clock is reached."""
    found: list[tuple[int, int]] = []
    for span in timeline.spans:
        try:
            first = span.clock(Unit.EP, span.first)
            last = span.clock(Unit.EP, span.last)
        except ConversionError:
            continue  # a stream has no epochs
        epoch = -(-first.numerator // first.denominator)
        while epoch <= last:
            step = span.first + span.steps_until(Fraction(epoch), Unit.EP)
            if step <= span.last:
                found.append((step, epoch))
            if len(found) > MAX_EPOCH_LINES:
                return found
            epoch += 1
    return sorted(set(found))


#: The furthest step a picture's axis draws: matplotlib's coordinates are floats (at most about
#: 1.8e308), and no run is near it.
MAX_DRAWN_STEP = 10**300


def draw(plan: Plan, curve: ResolvedSchedule | None, events: dict[str, Events], path: Path) -> None:
    """Draw ``plan`` (and its curve and events) into ``path``, a ``.png`` or ``.svg``; a plan
    that ends past ``MAX_DRAWN_STEP`` is a ``ValueError``, before matplotlib is imported."""
    import warnings

    last = Timeline.of(plan).end
    if last > MAX_DRAWN_STEP:
        raise ValueError(
            f"the plan ends at lifetime step 10^{int(last.bit_length() * 0.30103)} or so, past "
            "10^300: a picture's axis is drawn in floats; the text and --json say it all"
        )

    from matplotlib import rc_context

    # Names are drawn as written: '$x$' is not math, and '$\\bogus{x}$' not an error.
    with rc_context({"text.parse_math": False, "svg.fonttype": "none"}), warnings.catch_warnings():
        # A letter the font lacks is drawn as a box; matplotlib's warning of it is not the
        # command's to print.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        _draw(plan, curve, events, path)


def _draw(
    plan: Plan, curve: ResolvedSchedule | None, events: dict[str, Events], path: Path
) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    timeline = Timeline.of(plan)
    first = timeline_first(timeline)
    last = max(timeline.end, first + 1)
    rows = 1 + len(events)
    shares = source_shares(plan)
    heights = [0.6 + 0.35 * rows] + ([1.6] if shares else []) + ([2.6] if curve else [])
    figure = Figure(figsize=(11, 1.6 + sum(heights)))
    FigureCanvasAgg(figure)
    panels = figure.subplots(
        len(heights), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": heights}
    )[:, 0].tolist()
    spans = panels.pop(0)
    mixed = panels.pop(0) if shares else None
    factor = panels.pop(0) if curve is not None else None

    _calls(spans, timeline, last - first)
    _events(spans, events)
    epochs = epoch_steps(timeline)
    axes = [axis for axis in (spans, mixed, factor) if axis is not None]
    if len(epochs) <= MAX_EPOCH_LINES:
        for step, epoch in epochs:
            for axis in axes:
                axis.axvline(step, color="0.6", linestyle=":", linewidth=0.8, zorder=0)
            if len(epochs) <= 24:
                right = step - first > 0.95 * (last - first)
                spans.text(
                    step,
                    rows - 0.45,
                    f"ep {epoch} " if right else f" ep {epoch}",
                    fontsize=7,
                    color="0.4",
                    va="bottom",
                    ha="right" if right else "left",
                )
    if plan.checkpoint is not None:
        for axis in axes:  # trained before the checkpoint: shaded
            axis.axvspan(first, plan.start.batch, color="0.94", zorder=0)
            axis.axvline(plan.start.batch, color="#C44E52", linestyle="--", linewidth=1.2)
        spans.text(plan.start.batch, -0.62, " resume", fontsize=8, color="#C44E52", va="top")

    spans.set_yticks(range(rows), ["calls", *events])
    spans.set_ylim(rows - 0.5 + (0.45 if len(epochs) <= 24 and epochs else 0), -0.75)
    spans.set_xlim(first, last)
    spans.tick_params(axis="y", length=0)
    spans.spines[["top", "right"]].set_visible(False)
    title = f"{plan.total_steps:,} steps to train, lifetime steps {plan.start.batch:,} to "
    title += f"{plan.stop.batch:,}"
    if len(epochs) > MAX_EPOCH_LINES:
        title += " (epoch boundaries: too many to draw)"
    elif epochs:
        title += " · dotted: epoch boundaries"
    figure.suptitle(title, fontsize=10)
    if mixed is not None:
        _shares(mixed, shares)
    if factor is not None and curve is not None:
        # Rule S5: a stretched curve starts at the run clock's origin, but the steps the run
        # trained before this script did not train on it; they are not redrawn on it.
        _curve(factor, curve, since=max(curve.start, timeline.start))
        factor.set_xlim(first, last)
    bottom = axes[-1]
    bottom.set_xlabel("lifetime step (optimizer steps since the run started)")
    bottom.xaxis.set_major_formatter(_thousands())
    figure.tight_layout()
    figure.savefig(path, dpi=120, format=path.suffix.lower()[1:])  # SVG text stays text


def source_shares(plan: Plan) -> list[tuple[int, int, dict[str, Fraction]]]:
    """Each call that reads a mixture, as (first lifetime step, last, each source's share of
    the samples it reads there): what the sources panel draws."""
    out = []
    for segment in plan.segments:
        total = sum(r.read + r.repeated for r in segment.sources)
        if segment.failed or not segment.steps or not total:
            continue
        first = plan.start.batch + segment.start_step
        out.append(
            (
                first,
                first + segment.steps,
                {r.name: Fraction(r.read + r.repeated, total) for r in segment.sources},
            )
        )
    return out


def _shares(axis: Any, shares: list[tuple[int, int, dict[str, Fraction]]]) -> None:
    """The share of each source over the run: stacked, call by call, one color a source."""
    names = list(dict.fromkeys(name for _, _, parts in shares for name in parts))
    colors = {name: f"C{i % 10}" for i, name in enumerate(names)}
    labelled: set[str] = set()
    for first, last, parts in shares:
        bottom = 0.0
        for name, share in parts.items():
            axis.fill_between(
                [first, last],
                bottom,
                bottom + float(share),
                color=colors[name],
                alpha=0.75,
                linewidth=0,
                label=None if name in labelled else name,
            )
            labelled.add(name)
            bottom += float(share)
    axis.set_ylim(0, 1)
    axis.set_ylabel("source share", fontsize=8)
    axis.spines[["top", "right"]].set_visible(False)
    axis.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _: f"{x:,.0f}")


def _calls(axis: Any, timeline: Timeline, width: int) -> None:
    """One bar per call on row 0, named inside it when it is wide enough (else above it)."""
    past = {span.call for span in timeline.past}
    for call in timeline.calls:
        if call.failed:
            continue
        color = _COLORS[call.index % len(_COLORS)]
        length = max(call.stop - call.start, 0)
        axis.broken_barh(
            [(call.start, length)],
            (-0.35, 0.7),
            facecolors=color,
            alpha=0.45 if call.name in past and call.stop <= timeline.plan.start.batch else 0.9,
            edgecolor="white",
        )
        inside = length >= 0.08 * width
        right = call.start - timeline_first(timeline) > 0.8 * width  # name it leftwards
        axis.text(
            call.start + length / 2 if inside else call.stop if right else call.start,
            0 if inside else -0.4,
            call.name,
            ha="center" if inside else "right" if right else "left",
            va="center" if inside else "bottom",
            fontsize=8,
            color="white" if inside else "black",
            clip_on=True,
        )


def timeline_first(timeline: Timeline) -> int:
    """The first lifetime step drawn: 0, or where the first call recorded started."""
    return min([0, *(call.start for call in timeline.calls)])


def _events(axis: Any, events: dict[str, Events]) -> None:
    """One row of ticks per event interval, at the steps after which it is due (a band, for an
    interval of more than ``MAX_TICKS`` events)."""
    for row, found in enumerate(events.values(), start=1):
        steps: list[int] = []
        for step in found.steps():
            if len(steps) == MAX_TICKS:
                # Too dense to tell apart: one band from the first event to the plan's end.
                axis.broken_barh(
                    [(steps[0], found.end - steps[0])], (row - 0.3, 0.6), facecolors="0.8"
                )
                axis.text(
                    (steps[0] + found.end) / 2,
                    row,
                    f"more than {MAX_TICKS:,} events: too dense to draw one by one",
                    fontsize=7,
                    ha="center",
                    va="center",
                )
                break
            steps.append(step)
        else:
            axis.vlines(steps, row - 0.3, row + 0.3, color="black", linewidth=1)


def _curve(axis: Any, curve: ResolvedSchedule, *, since: int) -> None:
    """The factor from lifetime step ``since`` on, sampled at a bounded number of steps; each
    piece's boundaries marked. Before ``since`` (the steps of the run an extension goes on
    from, whose rates this plan does not have) nothing is drawn but a note saying so."""
    steps = curve_steps(curve, since=since)
    values = [float(curve.factor(step)) for step in steps]
    # Straight lines between samples: a jump at step b is drawn between b - 1 and b.
    axis.plot(steps, values, color="#4C72B0", linewidth=1.6)
    top = max([*values, 1.0]) * 1.12
    if since > curve.start:
        axis.text(
            (curve.start + since) / 2,
            top / 2,
            "trained before this script:\nits rates are not in this plan",
            ha="center",
            va="center",
            fontsize=8,
            color="0.4",
        )
    for piece in curve.pieces:
        if piece.stop < since:
            continue
        axis.axvline(piece.stop, color="#4C72B0", alpha=0.25, linewidth=0.8)
        middle = (max(piece.start, since) + piece.stop) / 2
        if piece.stop > max(piece.start, since):
            axis.text(middle, top * 0.97, piece.piece.kind, ha="center", va="top", fontsize=8)
    axis.set_ylim(0, top)
    axis.set_ylabel("learning-rate factor")
    axis.spines[["top", "right"]].set_visible(False)
    axis.set_title(
        "\n".join(textwrap.wrap(str(curve.schedule), 120)), fontsize=8, loc="left", color="0.3"
    )
