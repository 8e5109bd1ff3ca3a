"""The reference adapter of the conformance suite (docs/conformance.md, "The adapter protocol").

``python -m durations.adapter`` reads one JSON request a line on standard input and writes one
JSON response a line on standard output, in order, until the end of its input; the answers
are the planner's (:func:`durations.conformance.answer`). ``--trainer NAME`` answers as that
trainer profile instead (:func:`durations.conformance.answer_as`): the steps it trains and
the samples it reads, a resume being a crash and the same script run again.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["main", "serve"]

#: The trainer profiles an adapter can answer as (``durations.compare.TRAINERS``).
TRAINERS = ("composer", "lightning", "transformers", "keras")


def serve(answer: Callable[[Any], dict[str, Any]], source: TextIO, sink: TextIO) -> None:
    """Answer every request line of ``source`` on ``sink``, one line each, flushed at once.

    A line that is not JSON gets a response with an empty id saying so; an answer that raises
    is unsupported, with the exception (the loop goes on: one request cannot stop the run).
    """
    for line in source:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as error:
            response: dict[str, Any] = {"id": "", "unsupported": f"not a JSON line: {error}"}
        else:
            try:
                response = answer(message)
            except Exception as error:  # said in the response: one request cannot stop the run
                rid = message.get("id") if isinstance(message, dict) else ""
                response = {"id": rid, "unsupported": f"{type(error).__name__}: {error}"}
        sink.write(json.dumps(response, separators=(",", ":")) + "\n")
        sink.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve requests on standard input; return 0 at its end."""
    parser = argparse.ArgumentParser(
        prog="python -m durations.adapter",
        description="The conformance suite's reference adapter: one JSON request a line on "
        "stdin, one JSON response a line on stdout (docs/conformance.md).",
    )
    parser.add_argument(
        "--trainer",
        choices=TRAINERS,
        help="answer as this trainer profile: the steps and reads of its emulation",
    )
    args = parser.parse_args(argv)
    from . import conformance

    if args.trainer is None:
        answer: Callable[[Any], dict[str, Any]] = conformance.answer
    else:
        name = args.trainer

        def answer(message: Any) -> dict[str, Any]:
            return conformance.answer_as(name, message)

    serve(answer, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
