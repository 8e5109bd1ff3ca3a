"""The hypothesis entry point: registers ``durations.testing``'s strategies for ``st.from_type``.

It runs while hypothesis itself is being imported, possibly from inside ``durations.testing``,
so it imports only the value types and defers each strategy until it is first drawn.
"""

from __future__ import annotations

import importlib
from typing import Any


def _testing() -> Any:
    return importlib.import_module("durations.testing")


def _hypothesis_setup_hook() -> None:
    from hypothesis import strategies as st

    from .loader import Loader
    from .progress import Progress
    from .scenario import Scenario
    from .time import Time

    st.register_type_strategy(Time, st.deferred(lambda: _testing().times()))
    st.register_type_strategy(Loader, st.deferred(lambda: _testing().loaders()))
    st.register_type_strategy(Progress, st.deferred(lambda: _testing().progresses()))
    st.register_type_strategy(Scenario, st.deferred(lambda: _testing().scenarios()))
