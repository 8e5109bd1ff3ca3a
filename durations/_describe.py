"""How the planner names what it found in its messages: a changed request, a loader, a
data-parallel geometry, a position (private)."""

from __future__ import annotations

from .checkpoint import LedgerEntry
from .errors import ConversionError
from .fit import FitCall
from .loader import Loader
from .order import Order
from .progress import Progress
from .units import Unit


def describe_change(call: FitCall, entry: LedgerEntry) -> str:
    """What changed in a call since its ledger entry: each field, old -> new."""
    changes = []
    for field in ("duration", "until", "reset_time"):
        old, new = getattr(entry, field), getattr(call, field)
        if old != new:
            changes.append(f"{field} {_none_or(old)} -> {_none_or(new)}")
    if not entry.loader.same_stream(call.loader):
        old, new = describe_loader(entry.loader), describe_loader(call.loader)
        changes.append(f"loader {old} -> {new}")
    return ", ".join(changes) or "no change"


def _none_or(value: object) -> str:
    return "none" if value is None else str(value)


def describe_loader(loader: Loader) -> str:
    """A loader by its name, length and batch size (and its order, when it has one)."""
    name = f"{loader.name}: " if loader.name else ""
    if loader.mixture is not None:
        return f"{name}mixture {loader.mixture}, batch {loader.batch_size}"
    samples = "stream" if loader.samples is None else f"{loader.samples} samples"
    order = "" if loader.order is None else f", {loader.order}"
    return f"{name}{samples}, batch {loader.batch_size}{order}"


def describe_order(order: Order | None) -> str:
    """A loader's order, or what reads the data when it has none."""
    return "the job's own order" if order is None else str(order)


def describe_sharding(loader: Loader) -> str:
    """A data-parallel loader's padding, per-device batch and ``drop_last``."""
    sharding = loader.sharding
    assert sharding is not None
    return f"{sharding.padding.value} padding, {sharding.device_batch_size} per device" + (
        ", drop_last" if loader.drop_last else ""
    )


def describe_position(pos: Progress, unit: Unit, loader: Loader, origin: Progress) -> str:
    """A position on the run clock in ``unit``, or its step when it cannot be measured so."""
    try:
        return str(pos.time_in(unit, loader=loader, since=origin))
    except ConversionError:
        return f"step {pos.batch}"
