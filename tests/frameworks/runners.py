"""Run real tiny CPU trainings with Lightning, transformers and Keras, and record what they did.

Every runner takes a list of :class:`~tests.frameworks._common.CallSpec` and a work directory and
returns one JSON-able observation per call::

    {"call": {...the spec...}, "steps": 7, "batches": [[30, ..., 39], ...],
     "positions": [{"epoch": 1, "batch_idx": 3}, ...], "counters_after": {...},
     "checkpoint_loaded": {...} or None, "warnings": [...], "logs": [...],
     "crashed": bool, "error": None or {"type": ..., "message": ...}, "seconds": 0.1}

``batches`` holds, per optimizer step, the ids of the samples that step saw (all micro-batches
of an accumulated step together). The frameworks are imported lazily, inside the runners.
"""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path
from types import ModuleType

from ._common import JSON, CallSpec, Scenario

FRAMEWORKS = ("lightning", "transformers", "keras")

# The module each runner needs, for pytest.importorskip and for a friendly error.
REQUIRES = {"lightning": "pytorch_lightning", "transformers": "transformers", "keras": "keras"}


def runner(framework: str) -> ModuleType:
    """The runner module for ``framework`` (one of :data:`FRAMEWORKS`)."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; expected one of {FRAMEWORKS}")
    return importlib.import_module(f"{__package__}._{framework}")


def run_calls(framework: str, calls: list[CallSpec], workdir: Path | None = None) -> list[JSON]:
    """Run ``calls`` with ``framework`` in ``workdir`` (a fresh temporary directory by default)."""
    module = runner(framework)
    if workdir is not None:
        return list(module.run(calls, workdir))
    with tempfile.TemporaryDirectory(prefix=f"durations-{framework}-") as tmp:
        return list(module.run(calls, Path(tmp)))


def run_scenario(scenario: Scenario) -> dict[str, JSON]:
    """Run one scenario and return its observation: the scenario's text plus one entry per call."""
    calls = run_calls(scenario["framework"], scenario["calls"])
    return {
        "framework": scenario["framework"],
        "about": scenario["about"],
        "calls": calls,
    }


def versions(framework: str) -> dict[str, str]:
    """Installed versions of ``framework`` and what it runs on."""
    result: dict[str, str] = runner(framework).versions()
    return result
