"""``python -m benchmarks``: run every figure, print the table, write JSON (and the docs page).

Run from the repository root with a Python that can import ``durations``. Composer's and
Lightning's contenders are skipped, with the reason printed, when they are unavailable.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from . import (
    comparing,
    crash,
    importing,
    mixing,
    parsing,
    planning,
    plotting,
    sampling,
    schedule,
    startup,
    step,
)
from ._composer import VERSION as COMPOSER_VERSION, composer_time
from ._context import Context
from ._harness import Figure, Settings
from ._lightning import lightning_progress
from ._report import load_average, machine, markdown, table, write_json

FIGURES: dict[str, Callable[[Context], Figure]] = {
    "step": step.run,
    "plan_length": planning.run_length,
    "plan_calls": planning.fit_calls,
    "crash": crash.run,
    "parse": parsing.run,
    "import": importing.run,
    "schedule": schedule.run,
    "plot": plotting.run,
    "startup": startup.run,
    "compare": comparing.run,
    "sampling": sampling.run,
    "mixing": mixing.run,
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny repetition counts (a smoke test of a few seconds); speed goals are not assessed",
    )
    parser.add_argument(
        "--json",
        default="benchmarks/results/latest.json",
        metavar="PATH",
        help="where to write the results (default: %(default)s)",
    )
    parser.add_argument(
        "--write-docs",
        nargs="?",
        const="docs/performance.md",
        default=None,
        metavar="PATH",
        help="also write the generated performance page (default path: %(const)s)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(FIGURES),
        metavar="FIGURE",
        help=f"run only these figures: {', '.join(FIGURES)}",
    )
    parser.add_argument(
        "--composer-wheel",
        metavar="PATH",
        help=f"the mosaicml {COMPOSER_VERSION} wheel to load composer.core.time (and its "
        "schedulers) from",
    )
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="never download the mosaicml wheel (--quick never downloads either)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings(quick=args.quick)
    began = time.perf_counter()
    composer, composer_reason = composer_time(
        args.composer_wheel, fetch=not (args.no_fetch or args.quick)
    )
    lightning, lightning_reason = lightning_progress()
    ctx = Context(settings, composer, composer_reason, lightning, lightning_reason)
    meta = machine(COMPOSER_VERSION if composer is not None else None)
    mode = "quick (smoke test: numbers are not meaningful)" if args.quick else "full"
    print(f"durations benchmarks, {mode}")
    print(
        f"{meta['cpu']}, {meta['cores']} cores, load average {meta['load_average_start']}, "
        f"Python {meta['python']} ({meta['executable']})"
    )
    print(f"composer: {composer.source if composer else 'skipped: ' + composer_reason}")
    if lightning is not None:
        print(f"lightning: pytorch_lightning {lightning.version} (its loops.progress trackers)")
    else:
        print(f"lightning: skipped: {lightning_reason}")
    figures: list[Figure] = []
    for key, run in FIGURES.items():
        if args.only and key not in args.only:
            continue
        figure = run(ctx)
        figures.append(figure)
        print()
        print("\n".join(table(figure)), flush=True)
    meta["load_average_end"] = load_average()
    meta["seconds"] = round(time.perf_counter() - began, 2)
    write_json(Path(args.json), meta, figures, args.quick)
    print(f"\nwrote {args.json}")
    if args.write_docs is not None:
        command = "python -m benchmarks --write-docs" + (" --quick" if args.quick else "")
        path = Path(args.write_docs)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown(meta, figures, command), encoding="utf-8")
        print(f"wrote {path}")
    print(f"load average at end {meta['load_average_end']}; {meta['seconds']} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
