"""Keras 3: a ``Callback`` that makes each ``Model.fit`` follow the plan.

One ``fit`` per ``FitCall``, in order, through :meth:`DurationsCallback.fit`::

    callback = DurationsCallback(config, calls, checkpoints="ckpts")
    for call, (x, y) in zip(calls, [(x_a, y_a), (x_b, y_b)]):
        callback.fit(model, x, y, verbose=0)  # instead of model.fit(x, y, epochs=...)

``callback.fit`` decides ``epochs`` and ``initial_epoch`` (Keras counts the epochs of each call:
the call's first epoch is 0), stops the call at its segment's exact step
(``model.stop_training``), and saves the training state itself: at every end of an epoch of the
data, or on the grid of ``save_on`` resolved on the plan, and when a call ends, into
``<checkpoints>/step-<N>/`` (the model's weights with the optimizer's variables,
``model.weights.h5``, and the durations checkpoint with the ledger, ``durations.json``), written
to a temporary folder and renamed into place, so that a process killed while saving leaves the
previous checkpoint whole; the newest ``keep`` are kept, and each call's final folder. At the
first ``fit`` of a process it plans from the newest of those checkpoints (chosen by recorded
progress); ``callback.fit`` then skips finished calls, giving the model each one's final
weights and optimizer state (what an uninterrupted run holds when the call returns), restores
the started one and goes on to its stored target, and gives a call that starts after a restart
the previous call's final weights and optimizer state.

The data is read exactly where the plan says when it is arrays (``x``, ``y``,
``sample_weight``: read in order, in batches of the loader's ``batch_size``) or a finite
``keras.utils.PyDataset`` whose ``__getitem__(i)`` returns batch ``i`` of an epoch: a call
resumed inside an epoch reads the rest of that epoch from the saved sample on. Any other input
(a generator, a ``torch`` ``DataLoader``, a ``tf.data.Dataset``) starts every epoch at its first
sample; a resume inside an epoch is then refused before training, naming the samples Keras would
train again. ``keras.callbacks.BackupAndRestore`` is refused: it restarts the interrupted epoch
from its first batch and leaves ``model._initial_epoch`` set for every later ``fit``
(``tests/frameworks/FINDINGS.md``). See ``docs/integrations.md``.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._files import LEDGER_FILE, checkpoint_json, ledger_checkpoint, read_bytes
from ..checkpoint import Checkpoint
from ..errors import CheckpointFormatError
from ..fit import FitCall, RunConfig
from ..intervals import At, AtCallEnds, Every
from ..loader import Loader
from ..plans import Segment
from . import INSTALL_HINT
from ._session import IntegrationError, Session, StartKind, created_on_first_use, samples_between
from .checkpoints import CheckpointReader, _is_url

__all__ = [
    "KERAS",
    "WEIGHTS_FILE",
    "DurationsCallback",
    "IntegrationError",
    "read_keras_checkpoint",
]

#: Created on first use by the module ``__getattr__`` below (the framework is imported then).
DurationsCallback: Any

#: The model's weights (and its optimizer's variables) in every ``step-<N>`` folder.
WEIGHTS_FILE = "model.weights.h5"
_FOLDER = re.compile(r"step-(?P<step>[0-9]+)")
#: What Keras warns when an epoch's data ends before the epoch's step count; a resumed call's
#: first epoch ends that way on purpose (it reads only the rest of the epoch).
_RAN_OUT = "Your input ran out of data"
#: ``Model.fit`` arguments the callback decides.
_DECIDED = ("epochs", "initial_epoch", "steps_per_epoch")


# -- the checkpoints: pure, no Keras ---------------------------------------------------------


def read_keras_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a ``step-<N>`` folder the Keras callback wrote: its ``durations.json``, exactly.

    Raises :class:`~durations.CheckpointFormatError` for a folder without it (say, one cut short
    by a crash) or with one that is not a durations checkpoint.
    """
    location = os.fspath(path)
    ledger = os.path.join(location, LEDGER_FILE)
    if not os.path.lexists(ledger):
        raise CheckpointFormatError(
            "", f"{location} has no {LEDGER_FILE}; expected a step-<N> folder of the Keras callback"
        )
    return ledger_checkpoint(checkpoint_json(read_bytes(ledger), ledger), ledger)


def _keras_match(path: str, is_dir: bool) -> bool:
    return is_dir and _FOLDER.fullmatch(os.path.basename(path.rstrip("/"))) is not None


#: The ``step-<N>`` folders the Keras callback writes.
KERAS = CheckpointReader("keras", _keras_match, read_keras_checkpoint)


def _folders(root: str) -> list[tuple[int, str]]:
    """The callback's ``step-<N>`` folders directly under ``root``, by ``N``."""
    if not os.path.isdir(root):
        return []
    found = []
    for entry in os.listdir(root):
        match = _FOLDER.fullmatch(entry)
        if match and os.path.isdir(os.path.join(root, entry)):
            found.append((int(match["step"]), os.path.join(root, entry)))
    return sorted(found)


def _first_epoch(segment: Segment) -> tuple[int, int, int]:
    """The call's epoch index where the segment starts (Keras's ``initial_epoch``), the steps
    the segment takes in that epoch, and the ``epochs`` argument that lets Keras run them all
    (the callback stops the last epoch at the plan's step)."""
    loader = segment.loader
    start = segment.start.normalized(loader)
    per_epoch = loader.steps_per_epoch
    assert per_epoch is not None  # a sized loader: checked before
    initial = start.epoch - segment.entry.start.epoch
    first = min(start.steps_left_in_epoch(loader) or 0, segment.steps)
    later = segment.steps - first
    return initial, first, initial + 1 + -(-later // per_epoch)


def _length(batch: Any) -> int | None:
    """The number of samples of a batch: the leading size of its first array."""
    while isinstance(batch, tuple | list | dict) and batch:
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) > 0 and shape[0] is not None:
        return int(shape[0])
    return None


class _Callback:
    """Enforce a durations plan on Keras ``Model.fit`` calls, one per ``FitCall``.

    ``config`` and ``calls`` are the script's ``RunConfig`` and ``FitCall``s (a loader's
    ``batch_size`` is the batch of one optimizer step, ``samples`` the epoch's length).
    ``checkpoints`` is a local folder: the callback writes its ``step-<N>`` folders there and, at
    the first ``fit`` of a process, resumes from the newest by recorded progress. It saves every
    end of an epoch of the data (``save_on=None``), or on the grid of ``save_on`` (an
    :class:`~durations.Every`, :class:`~durations.At` or :class:`~durations.AtCallEnds`, or a
    time string meaning ``Every``: ``"500ba"``, ``"0.25ep"``) resolved on the plan's lifetime
    steps, and always when a call ends; it keeps the newest ``keep`` of them (``None``: all).

    Fit with :meth:`fit`, not ``model.fit``: it decides ``epochs`` and ``initial_epoch``, starts
    the data where the plan says and skips calls that are finished.
    """

    #: Set by Keras (``Callback.set_model``) while ``fit`` runs.
    model: Any

    def __init__(
        self,
        config: RunConfig,
        calls: Sequence[FitCall],
        *,
        checkpoints: str | os.PathLike[str],
        save_on: Every | At | AtCallEnds | str | None = None,
        keep: int | None = 2,
    ) -> None:
        if _is_url(os.fspath(checkpoints)):
            raise IntegrationError(
                f"checkpoints={os.fspath(checkpoints)!r}: the Keras callback writes its "
                "checkpoints to a local folder; give a path (a mounted bucket works)"
            )
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise ValueError(f"keep={keep!r}: expected a whole number >= 1, or None to keep all")
        self.session = Session(
            config,
            calls,
            checkpoints,
            KERAS,
            save_on=save_on,
            keep_final="the callback's keep= never removes a call's final step-<N> folder; "
            "do not delete it",
        )
        self.keep = keep
        self._active = False
        self._step = 0
        self._data: Any = None
        self._initial_epoch = 0

    @property
    def lifetime_step(self) -> int:
        """The run's lifetime step count (``Progress.batch``) where training is now."""
        return self.session.lifetime(self._step)

    # -- the script's side ---------------------------------------------------------------------

    def fit(self, model: Any, x: Any = None, y: Any = None, **kwargs: Any) -> Any:
        """Run the script's next fit call: ``model.fit(x, y, **kwargs)`` as the plan says.

        Returns Keras's ``History``, or ``None`` for a call the ledger records as finished
        (nothing is trained). ``kwargs`` go to ``model.fit`` (``callbacks``, ``verbose``,
        ``validation_data``, ...), except ``epochs``, ``initial_epoch`` and
        ``steps_per_epoch``, which the callback decides.
        """
        decided = [name for name in _DECIDED if name in kwargs]
        if decided:
            raise TypeError(
                f"callback.fit(..., {decided[0]}=...): the callback decides epochs, "
                "initial_epoch and steps_per_epoch from the plan; drop the argument"
            )
        if kwargs.get("validation_split"):
            raise IntegrationError(
                "validation_split takes the last samples of x away from training, so the "
                "epoch is not the plan's loader: pass validation_data instead"
            )
        if kwargs.get("shuffle", False):
            raise IntegrationError(
                "shuffle=True: Keras would shuffle the batches with its own unseeded random "
                "order, which a restart cannot resume; pass shuffle=False (the default here) "
                "and shuffle inside the data, by a seeded permutation per epoch"
            )
        callbacks = list(kwargs.pop("callbacks", None) or [])
        keras = _keras()
        for other in callbacks:
            if isinstance(other, keras.callbacks.BackupAndRestore):
                raise IntegrationError(
                    "remove keras.callbacks.BackupAndRestore: it restarts an interrupted epoch "
                    "from its first batch and sets model._initial_epoch for every later fit; "
                    "the DurationsCallback saves and restores the training state itself"
                )
        start = self.session.begin()
        if start.kind is StartKind.SKIP:
            if start.restore_from is not None:
                # The state an uninterrupted run has when this call returns: its final weights
                # and optimizer variables (the optimizer's step counter included).
                _restore(model, start.restore_from, start.segment)
            return None
        segment = start.segment
        loader = segment.loader
        if loader.samples is None or loader.sharding is not None:
            raise IntegrationError(
                f"call {segment.name!r}: the Keras callback needs a loader of known length "
                f"read by one process, Loader(samples=..., batch_size=...); got {loader!r}"
            )
        self._check_model(model, segment)
        _clean_temporaries(self.session.checkpoints)
        restore = start.resume_from or start.weights_from
        if restore is not None:
            _restore(model, restore, segment)
        initial, first, epochs = _first_epoch(segment)
        data = self._planned_data(keras, segment, x, y, kwargs, first)
        self._data = data
        self._initial_epoch = initial
        # A model restored by BackupAndRestore keeps its epoch, which Keras takes over
        # initial_epoch in every later fit.
        model._initial_epoch = None
        if self not in callbacks:
            callbacks.append(self)
        self._active = True
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=_RAN_OUT)
                return model.fit(
                    data,
                    epochs=epochs,
                    initial_epoch=initial,
                    shuffle=False,
                    callbacks=callbacks,
                    **kwargs,
                )
        finally:
            self._active = False
            self._data = None

    def _check_model(self, model: Any, segment: Segment) -> None:
        if getattr(model, "optimizer", None) is None:
            raise IntegrationError(
                f"call {segment.name!r}: the model is not compiled; call model.compile(...) "
                "before callback.fit"
            )
        steps = getattr(model, "steps_per_execution", 1)
        if steps != 1:
            raise IntegrationError(
                f"call {segment.name!r}: steps_per_execution={steps} runs {steps} steps "
                "between callbacks, so the call cannot stop or save at every step: compile "
                "with steps_per_execution=1"
            )
        accumulation = getattr(model.optimizer, "gradient_accumulation_steps", None) or 1
        if accumulation != 1:
            raise IntegrationError(
                f"call {segment.name!r}: the optimizer accumulates gradients over "
                f"{accumulation} batches across epoch and fit boundaries, which the plan does "
                "not model: use gradient_accumulation_steps=None and a batch of "
                f"{accumulation} x the micro-batch"
            )

    def _planned_data(
        self, keras: Any, segment: Segment, x: Any, y: Any, kwargs: dict[str, Any], first: int
    ) -> Any:
        """The call's data as Keras reads it: a PyDataset that starts where the plan does, or
        the input unchanged when it cannot be positioned and the call starts an epoch."""
        loader = segment.loader
        start = segment.start.normalized(loader)
        per_epoch = loader.steps_per_epoch or 0
        position = start.sample_in_epoch
        name = segment.name
        if isinstance(x, keras.utils.PyDataset):
            if y is not None or kwargs.get("sample_weight") is not None:
                raise TypeError("a PyDataset yields its own targets: drop y and sample_weight")
            if kwargs.get("batch_size") is not None:
                raise TypeError("a PyDataset makes its own batches: drop batch_size")
            size = x.num_batches
            if size != per_epoch:
                raise IntegrationError(
                    f"call {name!r}: the PyDataset has {size} batches an epoch, the plan's "
                    f"loader {per_epoch} (samples={loader.samples}, batch_size="
                    f"{loader.batch_size}, drop_last={loader.drop_last}); make them agree"
                )
            if position % loader.batch_size:
                saved = self.session.saved_loader(name) or segment.entry.loader
                batch = position // loader.batch_size
                resumes = (start.epoch, batch * loader.batch_size)
                raise IntegrationError(
                    f"call {name!r} resumes at sample {position} of its epoch, which is not a "
                    f"whole number of batches of {loader.batch_size}: a PyDataset resumes by "
                    f"batches, from sample {resumes[1]}, so "
                    f"{samples_between(resumes, (start.epoch, position), loader.samples or 0)} "
                    f"would be trained again. Resume at batch size {saved.batch_size}, the one "
                    "the call was saved at"
                )
            return _make_data(keras)(
                segment, x=x, offset=position // loader.batch_size, first=first, arrays=None
            )
        if _is_array_like(x):
            batch_size = kwargs.pop("batch_size", None)
            if batch_size is not None and batch_size != loader.batch_size:
                raise IntegrationError(
                    f"call {name!r}: batch_size={batch_size}, the plan's loader has batch_size="
                    f"{loader.batch_size}; make them agree (or leave batch_size out)"
                )
            arrays = (x, y, kwargs.pop("sample_weight", None))
            count = _leading(x)
            if count != loader.samples:
                raise IntegrationError(
                    f"call {name!r}: x has {count} samples, the plan's loader samples="
                    f"{loader.samples}; make them agree"
                )
            return _make_data(keras)(segment, x=None, offset=position, first=first, arrays=arrays)
        if y is not None:
            raise TypeError(
                f"a {type(x).__name__} yields its own targets: drop y (it is for arrays only)"
            )
        size = len(x) if hasattr(x, "__len__") else None
        if size is None:
            raise IntegrationError(
                f"call {name!r}: {type(x).__name__} has no length, so the callback cannot tell "
                "Keras's epochs from the plan's: pass arrays or a keras.utils.PyDataset whose "
                "__getitem__(i) returns batch i of an epoch"
            )
        if size != per_epoch:
            raise IntegrationError(
                f"call {name!r}: {type(x).__name__} has {size} batches an epoch, the plan's "
                f"loader {per_epoch} (samples={loader.samples}, batch_size={loader.batch_size}, "
                f"drop_last={loader.drop_last}); make them agree"
            )
        if position:
            what = samples_between((start.epoch, 0), (start.epoch, position), loader.samples or 0)
            raise IntegrationError(
                f"call {name!r} resumes at sample {position} of epoch {start.epoch}, but Keras "
                f"starts every epoch of a {type(x).__name__} at its first sample: {what} would "
                "be trained again. Pass the data as arrays or as a keras.utils.PyDataset "
                "(the callback starts them at the saved sample), or save only at epoch ends "
                "(save_on=None, the default) and resume from such a checkpoint"
            )
        return x

    # -- Keras's side -----------------------------------------------------------------------------

    def on_train_begin(self, logs: Any = None) -> None:
        if not self._active:
            raise IntegrationError(
                "model.fit() was called with the DurationsCallback directly: run each fit call "
                "with callback.fit(model, x, y, ...) so finished calls are skipped and a started "
                "one resumes where it stopped"
            )
        self._step = 0
        self.session.attach(0)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        if self._data is not None:
            self._data.partial = epoch == self._initial_epoch

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._step += 1
        segment = self.session.current()
        lifetime = self.session.lifetime(self._step)
        stop = self.session.should_stop(self._step)
        if stop:
            self.model.stop_training = True
        if stop or self._due(lifetime, segment):
            self._save()

    def _due(self, lifetime: int, segment: Segment) -> bool:
        if self.session.save_on is not None:
            return self.session.save_due(self._step)
        here = segment.start.advance(segment.loader, lifetime - segment.start.batch)
        return here.at_epoch_start

    def _save(self) -> None:
        """Write ``step-<N>`` whole or not at all: into a temporary folder, then renamed."""
        root = self.session.checkpoints
        lifetime = self.session.lifetime(self._step)
        data = self.session.checkpoint_dict(self._step)
        os.makedirs(root, exist_ok=True)
        final = os.path.join(root, f"step-{lifetime}")
        temporary = tempfile.mkdtemp(prefix=f".step-{lifetime}.", dir=root)
        self.model.save_weights(os.path.join(temporary, WEIGHTS_FILE))
        with open(os.path.join(temporary, LEDGER_FILE), "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        if os.path.exists(final):  # left by an earlier process of a changed script
            stale = tempfile.mkdtemp(prefix=f".step-{lifetime}.", dir=root)
            os.rename(final, os.path.join(stale, "old"))
            os.rename(temporary, final)
            shutil.rmtree(stale, ignore_errors=True)
        else:
            os.rename(temporary, final)
        if self.keep is not None:
            # Each call's final checkpoint stays beside the newest ``keep``: a re-run restores
            # it when it skips the call (the state an uninterrupted run has after it).
            finals = self.session.stops()
            for step, older in _folders(root)[: -self.keep]:
                if step not in finals:
                    shutil.rmtree(older, ignore_errors=True)

    def on_train_end(self, logs: Any = None) -> None:
        self.session.check_reached_stop(
            "Keras",
            self._step,
            "remove what stopped it (EarlyStopping, TerminateOnNaN, data that ran out)",
        )


def _keras() -> Any:
    try:
        return importlib.import_module("keras")
    except ImportError as error:
        raise ImportError(f"durations.integrations.keras needs keras: {INSTALL_HINT}") from error


def _is_array_like(x: Any) -> bool:
    """Arrays, or a list/tuple/dict of them (a model with several inputs)."""
    if isinstance(x, dict):
        return bool(x) and all(_is_array_like(v) for v in x.values())
    if isinstance(x, tuple | list):
        return bool(x) and all(_is_array_like(v) for v in x)
    return hasattr(x, "shape") and hasattr(x, "__getitem__") and len(getattr(x, "shape", ())) > 0


def _leading(x: Any) -> int:
    while isinstance(x, tuple | list | dict):
        x = next(iter(x.values())) if isinstance(x, dict) else x[0]
    return int(x.shape[0])


def _slice(x: Any, begin: int, end: int) -> Any:
    if x is None:
        return None
    if isinstance(x, dict):
        return {key: _slice(value, begin, end) for key, value in x.items()}
    if isinstance(x, tuple | list):
        return type(x)(_slice(value, begin, end) for value in x)
    return x[begin:end]


def _restore(model: Any, folder: str, segment: Segment) -> None:
    """Load a ``step-<N>`` folder's weights and optimizer variables into ``model``."""
    if not model.built:
        raise IntegrationError(
            f"call {segment.name!r} restores {folder}, but the model is not built: build it "
            "before callback.fit (keras.Input in a Sequential, or call it on a batch)"
        )
    optimizer = model.optimizer
    if optimizer is not None and not optimizer.built:
        optimizer.build(model.trainable_variables)
    model.load_weights(os.path.join(folder, WEIGHTS_FILE))


def _clean_temporaries(root: str) -> None:
    """Remove the temporary folders of saves a killed process left unfinished."""
    if not os.path.isdir(root):
        return
    for entry in os.listdir(root):
        if entry.startswith(".step-"):
            shutil.rmtree(os.path.join(root, entry), ignore_errors=True)


@functools.cache
def _make_data(keras: Any) -> Callable[..., Any]:
    """The PyDataset class that reads a call's data from where the plan starts it."""

    class PlannedData(keras.utils.PyDataset):  # type: ignore[misc, name-defined, unused-ignore]
        """Batch ``i`` of an epoch of the call's data; in the call's first epoch (``partial``),
        only the ``first`` batches from the plan's position on (``offset``: a batch index of a
        PyDataset, a sample of arrays)."""

        def __init__(
            self,
            segment: Segment,
            *,
            x: Any,
            offset: int,
            first: int,
            arrays: tuple[Any, Any, Any] | None,
        ) -> None:
            super().__init__()
            self.loader: Loader = segment.loader
            self.name = segment.name
            self.source = x
            self.arrays = arrays
            self.offset = offset
            self.first = first
            self.partial = False
            if x is not None:
                self.workers = x.workers
                self.use_multiprocessing = x.use_multiprocessing
                self.max_queue_size = x.max_queue_size

        @property
        def num_batches(self) -> int:
            per_epoch = self.loader.steps_per_epoch or 0
            resumed = self.offset != 0
            return self.first if self.partial and resumed else per_epoch

        def __getitem__(self, index: int) -> Any:
            loader = self.loader
            shift = self.offset if self.partial else 0
            if self.arrays is not None:
                begin = shift + index * loader.batch_size
                end = begin + min(loader.batch_size, loader.samples_left_in_epoch(begin))
                x, y, weight = (_slice(a, begin, end) for a in self.arrays)
                return (x,) if y is None else (x, y) if weight is None else (x, y, weight)
            batch = self.source[shift + index]
            got = _length(batch)
            begin = (shift + index) * loader.batch_size
            wanted = min(loader.batch_size, loader.samples_left_in_epoch(begin))
            if got is not None and got != wanted:
                raise IntegrationError(
                    f"call {self.name!r}: batch {shift + index} of the PyDataset has {got} "
                    f"samples, the plan's loader reads {wanted} there (batch_size="
                    f"{loader.batch_size}, samples={loader.samples}, drop_last="
                    f"{loader.drop_last}); make them agree"
                )
            return batch

        def on_epoch_begin(self) -> None:
            if self.source is not None:
                self.source.on_epoch_begin()

        def on_epoch_end(self) -> None:
            if self.source is not None:
                self.source.on_epoch_end()

    return PlannedData


def _make_class() -> type[Any]:
    keras = _keras()

    class DurationsCallback(_Callback, keras.callbacks.Callback):  # type: ignore[misc, name-defined, unused-ignore]
        __doc__ = _Callback.__doc__

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            keras.callbacks.Callback.__init__(self)
            _Callback.__init__(self, *args, **kwargs)

    DurationsCallback.__module__ = __name__
    return DurationsCallback


#: ``DurationsCallback`` is created on first use, so importing this module (say, by a doctest
#: collector) imports no framework.
__getattr__ = created_on_first_use(__name__, globals(), "DurationsCallback", _make_class)
