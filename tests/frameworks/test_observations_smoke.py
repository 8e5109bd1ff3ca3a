"""Smoke tests of the framework runners: a few real scenarios give well-formed observations.

Each test is skipped when its framework is not installed (the project's own CI does not install
them; see ``tests/frameworks/FINDINGS.md`` for the environment that does).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import pytest

from tests.frameworks import record, runners, scenarios

QUICK = ["lightning/crash13_plain", "transformers/crash13", "keras/crash13_freq1"]

CALL_KEYS = {
    "call",
    "steps",
    "batches",
    "positions",
    "counters_after",
    "checkpoint_loaded",
    "warnings",
    "logs",
    "crashed",
    "error",
    "seconds",
}


def _require(framework: str) -> None:
    # Import-time deprecation noise of a framework is not ours to fail on; the runners record
    # every warning of the runs themselves.
    if framework == "keras":
        os.environ.setdefault("KERAS_BACKEND", "torch")  # must precede the first keras import
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = runners.REQUIRES[framework]
        pytest.importorskip(module, reason=f"{module} is not installed (framework {framework})")


def _check_call(call: dict[str, Any]) -> None:
    assert set(call) >= CALL_KEYS
    assert call["steps"] == len(call["batches"]) == len(call["positions"])
    assert all(isinstance(i, int) for ids in call["batches"] for i in ids)
    assert all(isinstance(text, str) for text in call["warnings"] + call["logs"])
    assert call["error"] is None or set(call["error"]) == {"type", "message"}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("scenario_id", QUICK)
def test_crash_and_resume_observation_is_well_formed(scenario_id: str) -> None:
    """A crash-at-13 scenario records 13 steps from id 0, a crash, then a resume that trains."""
    scenario = scenarios.BY_ID[scenario_id]
    _require(scenario["framework"])
    observation = runners.run_scenario(scenario)
    assert json.loads(json.dumps(observation)) == observation
    crashed, resumed = observation["calls"]
    for call in (crashed, resumed):
        _check_call(call)
    assert crashed["crashed"]
    assert crashed["error"] is None
    assert crashed["steps"] == 13
    assert crashed["batches"][0] == list(range(10))
    assert not resumed["crashed"]
    assert resumed["error"] is None
    assert resumed["steps"] > 0
    assert record.describe_call(resumed).startswith(f"steps={resumed['steps']}")


def test_scenario_ids_are_unique_and_well_formed() -> None:
    """Every scenario has a unique id prefixed by its framework and at least one call."""
    ids = [scenario["id"] for scenario in scenarios.SCENARIOS]
    assert len(ids) == len(set(ids))
    for scenario in scenarios.SCENARIOS:
        assert scenario["id"].startswith(scenario["framework"] + "/")
        assert scenario["framework"] in runners.FRAMEWORKS
        assert scenario["calls"]
