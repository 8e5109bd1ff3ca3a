"""Framework integrations: one module per framework, each imported only by those who use it.

- :mod:`durations.integrations.transformers`: a Hugging Face ``TrainerCallback``.
- :mod:`durations.integrations.lightning`: a PyTorch Lightning ``Callback``.
- :mod:`durations.integrations.composer`: a MosaicML Composer ``Callback``.
- :mod:`durations.integrations.keras`: a Keras 3 ``Callback`` for ``Model.fit``.
- :mod:`durations.integrations.checkpoints`: readers of Lightning and Composer checkpoints, and
  :func:`~durations.integrations.checkpoints.latest_checkpoint`, which picks the newest
  checkpoint of a folder or fsspec URL by the progress each records
  (:func:`~durations.integrations.checkpoints.list_checkpoints`: all of them, in that order).

Every integration refuses what it cannot run as the plan says with :class:`IntegrationError`.

Importing this package imports no framework; ``import durations`` never imports it. The
frameworks come with ``pip install 'training-durations[frameworks]'`` (Composer, which pins an
older torch, in an environment of its own: ``.ci/composer-env``). See
``docs/integrations.md``.
"""

from __future__ import annotations

from ..errors import DurationsError

__all__ = ["IntegrationError"]

#: What every integration says when its framework is missing.
INSTALL_HINT = "pip install 'training-durations[frameworks]'"


class IntegrationError(DurationsError, RuntimeError):
    """A framework run that cannot follow the plan, or a script that uses an integration wrongly.
    The message says what was found, what the plan needs, and the fix.

    Defined here, so that a traceback and ``repr`` name it by its public path,
    ``durations.integrations.IntegrationError``; every integration module exports it too.
    """
