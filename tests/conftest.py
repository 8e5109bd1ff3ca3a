"""Hypothesis profiles: ``default`` for every run, ``thorough`` for a deep search by hand
(``HYPOTHESIS_PROFILE=thorough python -m pytest``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# The mutation run (tests/mutation/): few examples, the same ones for every mutant, no database
# shared between mutants, and no shrinking (a failure kills the mutant, however large the
# example); mutmut runs the tests more than once in one process, hence the suppressed check on
# executors.
settings.register_profile(
    "mutation",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.differing_executors, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
