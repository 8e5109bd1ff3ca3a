"""Hypothesis profiles: ``default`` for every run, ``thorough`` for a deep search by hand
(``HYPOTHESIS_PROFILE=thorough python -m pytest``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
