"""Figure 4: parsing time strings, ``Time.parse`` against Composer's ``from_timestring``."""

from __future__ import annotations

from collections.abc import Callable

from durations import Time
from durations.time import _parse_cached

from ._context import Context
from ._harness import Contender, Figure, measure

#: Strings both parsers accept (Composer rejects fractional epochs such as 2.1ep).
MIX = ("10ba", "2ep", "1000sp", "3e4tok", "0.5dur", "1024tok", "1e6tok", "250ba", "0.25dur", "8ep")


def _parse_all(parse: Callable[[str], object]) -> Callable[[int], object]:
    def run(repeat: int) -> object:
        result = None
        for _ in range(repeat):
            for text in MIX:
                result = parse(text)
        return result

    return run


def _uncached(text: str) -> Time:
    """Time.parse as if the string had never been seen: the parse cache is cleared first."""
    _parse_cached.cache_clear()
    return Time.parse(text)


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="parse",
        title="Figure 4: parsing a mix of time strings",
        unit="per string",
        baseline="durations",
    )
    repeat = ctx.settings.pick(300, 5)
    contenders = [
        Contender(
            "durations", "durations: Time.parse(text)", _parse_all(Time.parse), repeat, len(MIX)
        ),
        Contender(
            "durations-uncached",
            "durations: Time.parse, cache cleared (first sight of a string)",
            _parse_all(_uncached),
            repeat,
            len(MIX),
        ),
    ]
    if ctx.composer is not None:
        from_timestring = ctx.composer.time.from_timestring
        contenders.append(
            Contender(
                "composer",
                "Composer: Time.from_timestring(text)",
                _parse_all(from_timestring),
                repeat,
                len(MIX),
            )
        )
        exact = "9007199254740993tok"
        figure.notes.append(
            f"Exactness, not timed: {exact!r} parses to {Time.parse(exact).value} in durations "
            f"and to {from_timestring(exact).value} in Composer (float parsing)."
        )
    else:
        figure.skipped.append(f"Composer skipped: {ctx.composer_reason}")
    rounds = ctx.settings.pick(15, 2)
    measure(figure, contenders, rounds=rounds)
    figure.notes.append(f"Strings: {', '.join(MIX)}; {repeat} passes per round, {rounds} rounds.")
    figure.notes.append(
        "Time.parse keeps the last 1,024 strings it parsed (times are immutable): configs repeat "
        "their strings. The uncached row is the cost of a string's first parse."
    )
    return figure
