"""Write the example checkpoints: each is what the library writes for a run of an example.

Run from the repository root: ``python examples/checkpoints/generate.py``. The tests check the
files are still exactly what this writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from durations import Checkpoint, FitCall, Loader, RunConfig, plan
from durations.scenario import Scenario

HERE = Path(__file__).parent
EXAMPLES = HERE.parent


def checkpoints() -> dict[str, Checkpoint]:
    """File name -> checkpoint."""
    data = Loader(samples=10_000, batch_size=100, name="data")
    # A run configured for 15ba, stopped at 10ba (saved with its loader state).
    at_10 = plan(RunConfig(max_duration="15ba"), [FitCall(loader=data)]).checkpoint_at(10)
    # A 3-epoch run on a plain DataLoader (no loader state), stopped 30 steps into epoch 1.
    three = plan(RunConfig(max_duration="3ep"), [FitCall(loader=data)])
    mid_epoch = Checkpoint(
        progress=three.checkpoint_at(130).progress,
        ledger=three.checkpoint_at(130).ledger,
        loader_state=False,
    )
    # The two-phase example, finished.
    two_phase = Scenario.from_toml((EXAMPLES / "two-phase.toml").read_text())
    full = plan(two_phase.config, two_phase.calls)
    return {
        "at-10ba.json": at_10,
        "mid-epoch.json": mid_epoch,
        "two-phase-final.json": full.checkpoint_at(full.total_steps),
    }


def main() -> None:
    for name, checkpoint in checkpoints().items():
        (HERE / name).write_text(json.dumps(checkpoint.to_dict(), indent=2) + "\n")


if __name__ == "__main__":
    main()
