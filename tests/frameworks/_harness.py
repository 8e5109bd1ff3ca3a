"""The conformance harness's shared parts: the scripts it generates, the simulated process and
its crash, and the log of what was trained as ``StepRecord``s.

Kept out of the test modules so that other tests (Composer's) import them without pytest's
assertion rewriting compiling a test module in the middle of a test.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from durations import plan
from durations.scenario import Scenario
from durations.testing import StepRecord, scenarios

if TYPE_CHECKING:
    import torch


# -- what the integrations can run -----------------------------------------------------------


def _trainable(scenario: Scenario) -> bool:
    """No call goes on inside an epoch of the previous call's loader: the integrations refuse
    that (a framework's train/fit starts its loader at the first sample; docs/integrations.md,
    Limits), so it is left to the planner's own tests."""
    return all(
        segment.steps == 0 or segment.start.at_epoch_start
        for segment in plan(scenario.config, scenario.calls).segments
    )


#: Tiny scripts: up to two calls on up to two loaders of at most 30 samples, batches up to 8,
#: targets in every unit the integrations stop at exactly (tokens too: the loaders have
#: tokens_per_sample), reset_time included, data="exact" (the scenarios' default). The loaders
#: have no order: the conformance suite checks the frameworks' own samplers (the order's are
#: checked by test_order_integrations.py).
SCRIPTS = scenarios(
    max_calls=2,
    max_loaders=2,
    units=("ba", "sp", "ep", "tok"),
    max_samples=30,
    max_batch_size=8,
    ordered=False,
).filter(_trainable)


# -- the adapter: processes, crashes, and the log of what was trained -------------------------


class Crash(Exception):  # noqa: N818 - it is not an error: the simulated kill of a process
    """The simulated kill of a process of the script."""


@attrs.define
class Process:
    """One process of the script: its checkpoint folder, the log of every step trained so far
    (by it and the processes before it: call index and sample indices), and its crash step.

    The model reports each batch it trains on with :meth:`trained`, which kills the process
    (raises :class:`Crash`) before the step after ``crash``: every step is checkpointed, so the
    process dies right after the checkpoint at its crash step.
    """

    root: Path
    log: list[tuple[int, tuple[int, ...]]]
    crash: int | None

    def trained(self, ids: torch.Tensor) -> None:
        if len(self.log) == self.crash:
            raise Crash(f"killed after step {self.crash}")
        calls = {int(call) for call in ids[:, 0].tolist()}
        assert len(calls) == 1, f"a batch mixes the items of calls {sorted(calls)}"
        self.log.append((calls.pop(), tuple(int(i) for i in ids[:, 1].tolist())))


def records(scenario: Scenario, log: list[tuple[int, tuple[int, ...]]]) -> list[StepRecord]:
    """The log as ``StepRecord``s: the call and its loader from the call index the items carry,
    the sample indices, and the lifetime epoch as the stream shows it: a new epoch begins where
    the loader changes or its indices start over (``docs/semantics.md`` rule 4)."""
    out: list[StepRecord] = []
    epoch, previous = -1, None
    for index, samples in log:
        call = scenario.calls[index]
        loader = call.loader.name
        if previous is None or previous[0] != loader or samples[0] <= previous[1]:
            epoch += 1
        previous = (loader, samples[-1])
        out.append(StepRecord(call.identity(index), loader, epoch, samples))
    return out
