"""``Loader`` geometry: derived sizes, and invalid geometry named by field."""

from __future__ import annotations

import pytest
from hypothesis import given

from durations import GeometryError, Loader

from .strategies import small_loaders

# (samples, batch_size, drop_last, steps per epoch, last batch, samples trained per epoch)
GEOMETRY = [
    (100, 10, False, 10, 10, 100),  # divisible: all batches full
    (105, 10, False, 11, 5, 105),  # a short last batch is trained
    (105, 10, True, 10, 10, 100),  # ... or dropped
    (10, 10, True, 1, 10, 10),  # exactly one batch
    (3, 10, False, 1, 3, 3),  # fewer samples than a batch: one short step
    (1, 1, False, 1, 1, 1),
]


@pytest.mark.parametrize(("samples", "batch", "drop", "steps", "last", "trained"), GEOMETRY)
def test_derived(samples: int, batch: int, drop: bool, steps: int, last: int, trained: int) -> None:
    """Steps per epoch, last batch size and trained samples follow from the geometry."""
    loader = Loader(samples=samples, batch_size=batch, drop_last=drop)
    assert (loader.steps_per_epoch, loader.last_batch_size, loader.samples_per_epoch) == (
        steps,
        last,
        trained,
    )


def test_stream() -> None:
    """A stream of unknown length has no epochs."""
    loader = Loader(samples=None, batch_size=8)
    assert not loader.is_sized
    assert (loader.steps_per_epoch, loader.last_batch_size, loader.samples_per_epoch) == (
        None,
        None,
        None,
    )


@given(small_loaders(sized=True))
def test_epoch_adds_up(loader: Loader) -> None:
    """Full batches plus the last batch make up the samples trained per epoch."""
    assert loader.steps_per_epoch is not None
    assert loader.last_batch_size is not None
    full = (loader.steps_per_epoch - 1) * loader.batch_size
    assert full + loader.last_batch_size == loader.samples_per_epoch
    assert 0 < loader.last_batch_size <= loader.batch_size


INVALID = [
    ({"samples": 0, "batch_size": 10}, "samples", "expected a whole number > 0, got 0"),
    ({"samples": -5, "batch_size": 10}, "samples", "got -5"),
    ({"samples": 10.0, "batch_size": 10}, "samples", "got 10.0"),  # a float is not a count
    ({"samples": 100, "batch_size": 0}, "batch_size", "expected a whole number > 0, got 0"),
    ({"samples": 100, "batch_size": None}, "batch_size", "got None"),  # required
    ({"samples": 100, "batch_size": True}, "batch_size", "got True"),  # bool is not a count
    ({"samples": 100, "batch_size": 10, "tokens_per_sample": 0}, "tokens_per_sample", "got 0"),
    ({"samples": 100, "batch_size": 10, "drop_last": 1}, "drop_last", "expected True or False"),
    (
        {"samples": 5, "batch_size": 10, "drop_last": True},
        "samples",
        "with drop_last=True, 5 samples are fewer than one batch of 10",
    ),
]


@pytest.mark.parametrize(("kwargs", "field", "message"), INVALID)
def test_invalid(kwargs: dict[str, object], field: str, message: str) -> None:
    """Impossible geometry raises GeometryError naming the field."""
    with pytest.raises(GeometryError) as info:
        Loader(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert str(info.value).startswith(f"invalid loader {field}: ")
    assert message in str(info.value)


def test_with_batch_size() -> None:
    """An elastic resume keeps the data and changes only the batch size."""
    loader = Loader(samples=100, batch_size=10, tokens_per_sample=4)
    assert loader.with_batch_size(20) == Loader(samples=100, batch_size=20, tokens_per_sample=4)
