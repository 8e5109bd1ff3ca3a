"""What every figure is given: the settings and the optional competitors."""

from __future__ import annotations

from dataclasses import dataclass

from ._composer import ComposerTime
from ._harness import Settings
from ._lightning import LightningProgress


@dataclass(frozen=True)
class Context:
    settings: Settings
    composer: ComposerTime | None
    composer_reason: str
    lightning: LightningProgress | None
    lightning_reason: str
