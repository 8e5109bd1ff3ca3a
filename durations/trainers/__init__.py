"""Trainer profiles: how each trainer really interprets durations and resumes, emulated.

One module per trainer, each a pure emulation (no framework is imported) verified against real
runs of that framework (``tests/frameworks/``):

- :mod:`durations.trainers.lightning` — PyTorch Lightning 2.x ``Trainer.fit``
- :mod:`durations.trainers.transformers` — Hugging Face ``Trainer.train``
- :mod:`durations.trainers.keras` — Keras 3 ``Model.fit``
- :mod:`durations.trainers.composer` — Composer ``Trainer.fit``

Each module has a frozen ``Call`` type in the trainer's own vocabulary and a pure
``simulate(calls) -> tuple[CallOutcome, ...]`` that runs the calls in order, as the trainer would
(a call may build a fresh trainer that resumes from what earlier calls saved), and reports what
each call trains: the sample ids of every optimizer step, the trainer's own counters afterwards,
the messages it prints about durations and resumes, and the error it raises. ``translate``
writes a ``durations`` scenario in the trainer's own idiom, so that :mod:`durations.compare` can
set what the trainer does next to the plan.
"""

from __future__ import annotations

from ._outcome import CallOutcome, Dataset, TrainerError, Translation, Unsupported

__all__ = ["CallOutcome", "Dataset", "TrainerError", "Translation", "Unsupported"]
