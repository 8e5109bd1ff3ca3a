"""The hypothesis entry point: registers ``durations.testing``'s strategies for ``st.from_type``.

It runs while hypothesis itself is being imported, possibly from inside ``durations.testing``,
so it imports only the value types and looks each strategy up when it is first drawn.

Every public value type of ``durations`` (every class of ``durations.__all__`` but the errors
and the enums, which hypothesis draws by itself), and ``Scenario``, is registered: a type
without a strategy in ``durations.testing`` is refused when drawn, with a message that says so,
rather than built from its fields (which gives invalid values).
"""

from __future__ import annotations

import enum
import importlib
from typing import Any


def _testing() -> Any:
    return importlib.import_module("durations.testing")


def value_types() -> list[type]:
    """The types registered: the public classes that are neither errors nor enums."""
    import durations

    from .scenario import Scenario

    public = [getattr(durations, name) for name in durations.__all__]
    found = [
        kind
        for kind in public
        if isinstance(kind, type)
        and not issubclass(kind, BaseException)
        and not issubclass(kind, enum.Enum)
    ]
    return [*found, Scenario]


def _hypothesis_setup_hook() -> None:
    from hypothesis import strategies as st

    for kind in value_types():
        st.register_type_strategy(kind, resolve)


def resolve(kind: type) -> Any:
    """The strategy of ``kind``, looked up when ``st.from_type`` first draws it (a strategy
    registered as such would be built at once, while hypothesis is being imported)."""
    return _testing()._strategy_for(kind)
