"""MosaicML Composer: a ``Callback`` that makes each ``Trainer.fit`` follow the plan.

One ``Trainer`` per process, one ``fit()`` per ``FitCall``, in order, through
:meth:`DurationsCallback.fit`::

    callback = DurationsCallback(config, calls, checkpoints="ckpts")
    trainer = Trainer(model=model, optimizers=optimizer, callbacks=[callback],
                      save_folder="ckpts", save_interval="500ba", save_overwrite=True,
                      autoresume=True, run_name="run")
    callback.fit(trainer, train_dataloader=loader_a)
    callback.fit(trainer, train_dataloader=loader_b)

The durations checkpoint (with the ledger) rides in every Composer checkpoint as the callback's
own state (``state_dict``/``load_state_dict``: ``state.callbacks.DurationsCallback``). When the
``Trainer`` is built, after Composer's own (auto)resume, the callback plans the script from the
newest checkpoint under ``checkpoints`` **by recorded progress** (a folder or an fsspec URL) and,
when Composer loaded another one (its ``latest`` symlink names the file saved last, and a kill
between removing and re-creating that symlink leaves none: Composer then starts from scratch),
loads that one into the trainer. ``callback.fit`` then trains nothing for a finished call (and
loads that call's final checkpoint into the trainer, the state an uninterrupted run holds when
it returns; the newest one again before the next call trains), and passes every other call's
remaining steps as ``duration='<n>ba'``, so a ``0.1ep`` target becomes
the step count Composer accepts and a resumed call runs to the target stored when it started
(Composer's ``fit(duration=...)`` adds the duration to the elapsed time on every run). A call
with ``reset_time`` resets Composer's clock when it starts, never when it resumes.

Composer restores the whole trainer state from its checkpoint (weights, optimizers,
schedulers, the timestamp), and its resume skips the ``batch_in_epoch`` batches the checkpoint
records; the callback checks, before the first step, that this puts the data where the plan
says. With ``save_on=`` and ``Trainer(save_interval=callback.save_interval)`` the trainer saves
on the plan's grid of lifetime steps. See ``docs/integrations.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..checkpoint import Checkpoint
from ..errors import CheckpointFormatError
from ..fit import FitCall, RunConfig
from ..intervals import At, AtCallEnds, Every
from ..plans import Segment
from . import INSTALL_HINT
from ._session import (
    IntegrationError,
    Session,
    StartKind,
    created_on_first_use,
    require_registered,
    samples_between,
)
from .checkpoints import COMPOSER, COMPOSER_CALLBACK, DURATIONS_KEY, _is_url

__all__ = ["DurationsCallback", "IntegrationError"]

#: Created on first use by the module ``__getattr__`` below (the framework is imported then).
DurationsCallback: Any

#: ``fit()`` arguments the callback decides.
_DECIDED = ("duration", "reset_time")


def _within(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Callback:
    """Enforce a durations plan on Composer ``Trainer.fit`` calls, one per ``FitCall``.

    ``config`` and ``calls`` are the script's ``RunConfig`` and ``FitCall``s (a loader's
    ``batch_size`` is the batch of one optimizer step, the ``DataLoader``'s ``batch_size``).
    ``checkpoints`` is the trainer's ``save_folder`` (or a folder above it, or the fsspec URL
    Composer uploads to): the newest checkpoint there, by recorded progress, is where a re-run
    of the script resumes.

    Fit with :meth:`fit`, not ``trainer.fit()``: a finished call must not train at all, and the
    callback decides ``duration`` and ``reset_time``.

    With ``save_on`` (an :class:`~durations.Every`, :class:`~durations.At` or
    :class:`~durations.AtCallEnds`, or a time string meaning ``Every``: ``"0.25ep"``), the
    trainer saves after each lifetime step of that interval resolved on the plan, and at each
    call's stop: one grid across calls, restarts and ``reset_time``. Pass
    ``Trainer(save_interval=callback.save_interval)``, which does that in place of Composer's
    own interval (whose ``"0.25ep"`` Composer refuses: it takes whole epochs only).
    """

    def __init__(
        self,
        config: RunConfig,
        calls: Sequence[FitCall],
        *,
        checkpoints: str | os.PathLike[str],
        save_on: Every | At | AtCallEnds | str | None = None,
    ) -> None:
        self.session = Session(
            config,
            calls,
            checkpoints,
            COMPOSER,
            save_on=save_on,
            keep_final="Composer saves it at the end of every fit; keep it "
            "(save_num_checkpoints_to_keep=-1, the default)",
        )
        self._save_on = save_on
        self._state: Any = None
        self._active = False
        self._loaded: Mapping[str, Any] | None = None
        self._rng: Any = None
        #: The checkpoint whose state the trainer holds (``None``: none, or what it trained).
        self._holding: str | None = None

    @property
    def lifetime_step(self) -> int:
        """The run's lifetime step count (``Progress.batch``) where training is now."""
        return self.session.lifetime(self._batch())

    def _batch(self) -> int:
        return 0 if self._state is None else int(self._state.timestamp.batch)

    # -- the script's side ---------------------------------------------------------------------

    def fit(self, trainer: Any, **kwargs: Any) -> None:
        """Run the script's next fit call: ``trainer.fit(**kwargs)`` as the plan says, with the
        ``duration`` (the call's remaining steps, ``'<n>ba'``) and ``reset_time`` it decides;
        nothing for a call that is finished."""
        decided = [name for name in _DECIDED if name in kwargs]
        if decided:
            raise TypeError(
                f"callback.fit(trainer, {decided[0]}=...): the callback decides duration and "
                "reset_time from the plan; state them in the FitCall and drop the argument"
            )
        require_registered(self, trainer.state.callbacks, "Trainer")
        start = self.session.begin()
        state = trainer.state
        if start.kind is StartKind.SKIP:
            if start.restore_from is not None and self._holding != start.restore_from:
                # The state an uninterrupted run holds when this call returns: its final
                # checkpoint's (Composer loaded the newest one when the Trainer was built).
                self._load(state, trainer.logger, start.restore_from)
            return
        wanted = start.resume_from or start.weights_from
        if wanted is not None and self._holding != wanted:
            # A skipped call gave the trainer its own final state: the run goes on from the
            # checkpoint the plan starts at.
            self._load(state, trainer.logger, wanted)
        self._holding = None  # from here on, the trainer holds what it trains
        segment = start.segment
        reset = start.kind is StartKind.RUN and segment.entry.reset_time
        if start.kind is StartKind.RUN and not reset and int(state.timestamp.batch_in_epoch):
            # The previous call stopped inside an epoch of its loader; this call's loader starts
            # an epoch (rule 4), which Composer would skip ``batch_in_epoch`` batches into.
            state.timestamp = state.timestamp.to_next_epoch()
        if self._rng is not None:
            # The checkpoint the callback loaded itself: Composer restores the random state
            # from the one it loads, at the batch the data resumes at.
            trainer._rng_state, self._rng = self._rng, None
        self._active = True
        try:
            trainer.fit(duration=f"{segment.steps}ba", reset_time=reset, **kwargs)
        finally:
            self._active = False

    def save_interval(self, state: Any, event: Any) -> bool:
        """Composer's ``save_interval`` on the plan's grid: ``Trainer(save_interval=
        callback.save_interval)`` saves after each lifetime step of ``save_on`` resolved on the
        plan (``Session.save_due``), and after each call's stop."""
        from composer.core import Event

        if event != Event.BATCH_CHECKPOINT or not self._active:
            return False
        return self.session.save_due(int(state.timestamp.batch))

    # -- Composer's side ----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The durations checkpoint at Composer's step, stored in every Composer checkpoint."""
        if self.session.segment is None:
            return {}
        return {DURATIONS_KEY: self.session.checkpoint_dict(self._batch())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._loaded = state.get(DURATIONS_KEY) if isinstance(state, Mapping) else None

    def init(self, state: Any, logger: Any) -> None:
        self._state = state

    def after_load(self, state: Any, logger: Any) -> None:
        """Plan the script from the newest checkpoint by recorded progress, and make sure the
        trainer holds that checkpoint's state."""
        self._state = state
        from composer.utils import dist

        if self.session.plan is not None:
            raise IntegrationError(
                "this DurationsCallback already planned the script with another Trainer: build "
                "one Trainer per process and run every fit call on it with callback.fit"
            )
        if dist.get_world_size() > 1:
            raise IntegrationError(
                f"the Composer job runs on {dist.get_world_size()} processes; the Composer "
                "integration supports one process: run on one device"
            )
        self._check_saver(state)
        self.session._plan()
        found = self.session.found
        if found is None:
            if self._loaded is not None or int(state.timestamp.batch):
                raise IntegrationError(
                    f"Composer loaded a checkpoint at step {int(state.timestamp.batch)} "
                    f"({state.load_path}), but there is none under "
                    f"checkpoints={self.session.checkpoints!r}: point checkpoints at the "
                    "trainer's save_folder"
                )
            return
        if self._holds(found.checkpoint.to_dict(), state):
            self._holding = found.path
            return
        self._load(state, logger, found.path)

    def _load(self, state: Any, logger: Any, path: str) -> None:
        """Load the checkpoint at ``path`` (one of the session's) into the trainer's state:
        weights, optimizers, schedulers, timestamp; its random state is restored at the next
        ``fit``."""
        from composer.utils import checkpoint, maybe_create_object_store_from_uri, parse_uri

        found = next(f for f in self.session.available if f.path == path)
        self._loaded = None
        store = maybe_create_object_store_from_uri(path)
        _, _, local = parse_uri(path)
        self._rng = checkpoint.load_checkpoint(
            path=local, state=state, logger=logger, object_store=store, progress_bar=False
        )
        state.load_path = path
        if not self._holds(found.checkpoint.to_dict(), state):
            raise IntegrationError(
                f"Composer loaded {path}, but the trainer is at step "
                f"{int(state.timestamp.batch)}, not the {found.checkpoint.progress.batch} "
                "it records"
            )
        self._holding = path

    def _holds(self, wanted: Mapping[str, Any], state: Any) -> bool:
        """Whether the trainer holds the checkpoint ``wanted`` (a durations checkpoint dict)."""
        if self._loaded is not None:
            try:
                return Checkpoint.from_dict(self._loaded).to_dict() == dict(wanted)
            except CheckpointFormatError:
                return False
        progress = wanted["progress"]
        stamp = state.timestamp
        return bool(wanted.get("ledger") is None) and all(
            int(getattr(stamp, key)) == progress[key]
            for key in ("epoch", "batch", "sample", "batch_in_epoch", "sample_in_epoch")
        )

    def _check_saver(self, state: Any) -> None:
        from composer.callbacks import CheckpointSaver
        from composer.utils import format_name_with_dist

        savers = [c for c in state.callbacks if isinstance(c, CheckpointSaver)]
        if not savers:
            raise IntegrationError(
                "the trainer saves no checkpoints: pass Trainer(save_folder=..., "
                "save_interval=...) with save_folder under the callback's checkpoints="
                f"{self.session.checkpoints!r}"
            )
        for saver in savers:
            ours = saver.save_interval == self.save_interval
            if self.session.save_on is not None and not ours:
                raise IntegrationError(
                    f"save_on={self._save_on!r} would be unused: the trainer saves on "
                    "Composer's own save_interval (which counts Composer's clock, restarted by "
                    "reset_time, and refuses fractions of an epoch); pass "
                    "Trainer(save_interval=callback.save_interval) to save on the plan's grid"
                )
            if ours and self.session.save_on is None:
                raise IntegrationError(
                    "save_interval=callback.save_interval saves on the callback's save_on, "
                    "which is None: give DurationsCallback(..., save_on=...) (such as "
                    "save_on='500ba'), or the Trainer a save_interval of Composer's own"
                )
            folder = format_name_with_dist(saver.folder, state.run_name)
            if not (_is_url(self.session.checkpoints) or _is_url(folder)) and not _within(
                folder, self.session.checkpoints
            ):
                raise IntegrationError(
                    f"the trainer saves to save_folder={folder!r}, outside the callback's "
                    f"checkpoints={self.session.checkpoints!r}: a re-run would not find its "
                    "checkpoints; make save_folder checkpoints or a folder under it"
                )
            if not saver.overwrite:
                raise IntegrationError(
                    "save_overwrite=False: a checkpoint cut short by a kill stays in save_folder, "
                    "and Composer refuses to resume before it (FileExistsError, 'may conflict "
                    "with a future checkpoint'); the callback resumes from the newest readable "
                    "checkpoint and rewrites the same steps: pass Trainer(save_overwrite=True)"
                )

    def fit_start(self, state: Any, logger: Any) -> None:
        if not self._active:
            raise IntegrationError(
                "trainer.fit() was called directly: run each fit call with "
                "callback.fit(trainer, ...) so finished calls are skipped, a started one resumes "
                "to its stored target, and the duration is the plan's"
            )
        self._state = state
        segment = self.session.current()
        self.session.attach(int(state.timestamp.batch))
        self._check_loader(segment, state)
        needed = segment.stop.batch - self.session.offset
        limit = state.max_duration
        if str(getattr(limit.unit, "value", "")) != "ba" or int(limit.value) != needed:
            raise IntegrationError(
                f"call {segment.name!r} needs Composer to train to batch {needed}, but its "
                f"max_duration is {limit} (fit(scale_schedule_ratio=...) scales it, and an "
                "algorithm or callback may change it): leave max_duration to the callback"
            )
        self._check_data_position(segment, state)

    def _check_loader(self, segment: Segment, state: Any) -> None:
        loader = segment.loader
        dataloader = state.train_dataloader
        batch = getattr(dataloader, "batch_size", None)
        batch_sampler = getattr(dataloader, "batch_sampler", None)
        if batch is None and batch_sampler is not None:
            batch = getattr(batch_sampler, "batch_size", None)
        if batch is not None and batch != loader.batch_size:
            raise IntegrationError(
                f"call {segment.name!r}: the train_dataloader's batch_size is {batch}, the "
                f"plan's loader has batch_size={loader.batch_size}; make them agree"
            )
        drop_last = getattr(dataloader, "drop_last", None)
        if batch_sampler is not None and getattr(dataloader, "batch_size", None) is None:
            drop_last = getattr(batch_sampler, "drop_last", drop_last)
        if drop_last is not None and bool(drop_last) != loader.drop_last:
            raise IntegrationError(
                f"call {segment.name!r}: the train_dataloader has drop_last={drop_last}, the "
                f"plan's loader has drop_last={loader.drop_last}; make them agree"
            )
        dataset = getattr(dataloader, "dataset", None)
        size = len(dataset) if dataset is not None and hasattr(dataset, "__len__") else None
        if loader.samples is not None and size is not None and size != loader.samples:
            raise IntegrationError(
                f"call {segment.name!r}: the training dataset has {size} samples, the plan's "
                f"loader {loader.samples}; make them agree"
            )
        length = state.dataloader_len
        steps = loader.steps_per_epoch
        if steps is not None and length is not None and int(length) != steps:
            raise IntegrationError(
                f"call {segment.name!r}: Composer has {int(length)} batches per epoch (the "
                "train_dataloader's length, or fit(train_subset_num_batches=...)), the plan's "
                f"loader {steps} (samples={loader.samples}, batch_size={loader.batch_size}); "
                "make them agree"
            )

    def _check_data_position(self, segment: Segment, state: Any) -> None:
        """Composer's resume skips the checkpoint's ``batch_in_epoch`` batches of the loader,
        at the batch size it resumes at; check that this is the plan's sample position.

        A checkpoint at an epoch's last step records the whole epoch as ``batch_in_epoch``
        (Composer saves before it moves to the next epoch): resumed, Composer ends that epoch
        without a step and starts the next at its first sample, as the plan does.
        """
        loader = segment.loader
        skipped = int(state.timestamp.batch_in_epoch)
        if skipped == loader.steps_per_epoch:
            skipped = 0
        here = segment.start
        resumes = skipped * loader.batch_size
        if loader.samples_per_epoch is not None:
            resumes = min(resumes, loader.samples_per_epoch)
        if resumes == here.sample_in_epoch or loader.samples is None:
            return
        at, plans = (here.epoch, resumes), (here.epoch, here.sample_in_epoch)
        if resumes < here.sample_in_epoch:
            what = f"{samples_between(at, plans, loader.samples)} would be trained again"
        else:
            what = f"{samples_between(plans, at, loader.samples)} would never be trained"
        saved = self.session.saved_loader(segment.name) or segment.entry.loader
        raise IntegrationError(
            f"call {segment.name!r}: Composer would resume at sample {resumes} of epoch "
            f"{here.epoch} (it skips batch_in_epoch={skipped} batches of {loader.batch_size}), "
            f"the plan at sample {here.sample_in_epoch}: {what}. Its skip is only exact at the "
            f"batch size the call was saved at: resume at batch size {saved.batch_size}"
        )

    def batch_end(self, state: Any, logger: Any) -> None:
        self._state = state

    def fit_end(self, state: Any, logger: Any) -> None:
        segment = self.session.current()
        lifetime = self.session.lifetime(int(state.timestamp.batch))
        if lifetime != segment.stop.batch:
            raise IntegrationError(
                f"Composer ended call {segment.name!r} at lifetime step {lifetime}, not the "
                f"plan's stop {segment.stop.batch}: remove what stopped it (a loader that ran "
                "out, an algorithm or callback that changed max_duration)"
            )


def _make_class() -> type[Any]:
    try:
        from composer import Callback
    except ImportError as error:
        raise ImportError(
            "durations.integrations.composer needs Composer: pip install mosaicml "
            f"(see docs/integrations.md; the other frameworks: {INSTALL_HINT})"
        ) from error

    class DurationsCallback(_Callback, Callback):  # type: ignore[misc, unused-ignore]
        __doc__ = _Callback.__doc__

    DurationsCallback.__module__ = __name__
    # Composer keys each callback's state by class __qualname__ in its checkpoints.
    DurationsCallback.__qualname__ = COMPOSER_CALLBACK
    return DurationsCallback


#: ``DurationsCallback`` is created on first use, so importing this module (say, by a doctest
#: collector) imports no framework.
__getattr__ = created_on_first_use(__name__, globals(), "DurationsCallback", _make_class)
