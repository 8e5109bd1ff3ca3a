"""The two-phase scenario every figure plans: pretrain for a while, then a curated phase."""

from __future__ import annotations

from durations import FitCall, Loader, Plan, RunConfig, plan

#: 1,048,576 samples of 2,048 tokens in batches of 512: 2,048 steps an epoch.
PRETRAIN = Loader(samples=1_048_576, batch_size=512, tokens_per_sample=2048, name="pretrain")
#: 20,000 curated samples in batches of 64; its 0.1ep phase is 32 steps.
CURATED = Loader(samples=20_000, batch_size=64, tokens_per_sample=2048, name="curated")


def script() -> list[FitCall]:
    """Fit on the pretraining data until ``max_duration``, then 0.1 epoch of curated data."""
    return [FitCall(loader=PRETRAIN), FitCall(loader=CURATED, duration="0.1ep")]


def config(max_duration: str = "2ep") -> RunConfig:
    return RunConfig(max_duration=max_duration)


def two_phase(max_duration: str = "2ep") -> Plan:
    """The scenario's plan: with ``2ep``, 4,096 pretraining steps then 32 curated ones."""
    return plan(config(max_duration), script())
