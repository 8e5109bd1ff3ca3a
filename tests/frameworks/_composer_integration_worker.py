"""One process of the two-phase script on real Composer, through ``DurationsCallback``: killed
from outside (SIGKILL) and run again, unchanged, by ``test_composer_integration.py``.

The script is the README's at toy size: 2 epochs of A (100 samples, batch 10), then 0.1 epoch
of B (300 samples, batch 10), 23 steps; the items carry their ids (A: 0-99, B: 1000-1299),
sampling is sequential, and SGD with momentum trains at rate 0.1, so that every step changes the
weights and the momentum. One ``Trainer`` with ``autoresume=True`` and a checkpoint after every
step, two ``callback.fit`` calls. With ``"reset": true`` the second call has
``reset_time=True``; with ``"save_on": interval`` the callback has it and the trainer saves on
it (``save_interval=callback.save_interval``) instead of after every step.

The job is a JSON file: ``root`` (the checkpoint folder), ``log`` (a JSON-lines file, flushed
line by line so a kill leaves what was written), ``hold_at`` (after the checkpoint of that
lifetime step, log ``{"hold": k}`` and sleep until killed), ``pace`` (seconds to sleep after
each step, so a kill from outside lands inside the run on a busy machine). The log has
``{"start": k}`` when a process's first step is about to run, ``{"step": k, "call": name,
"ids": [...]}`` after each step (``k`` its lifetime step count after it), ``{"after": name,
"state": {...}}`` when each ``callback.fit`` returns (trained or skipped: the weights and the
momentum buffers, as the hex of their bytes), and ``{"end": k}``.

Run: ``python -m tests.frameworks._composer_integration_worker JOB.json``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from durations import FitCall, Loader, RunConfig

A = Loader(samples=100, batch_size=10, name="a")
B = Loader(samples=300, batch_size=10, name="b")
OFFSETS = {"a": 0, "b": 1000}
CONFIG = RunConfig(max_duration="2ep")
CALLS = (FitCall(loader=A, name="pretrain"), FitCall(loader=B, duration="0.1ep", name="curated"))
RESET_CALLS = (CALLS[0], FitCall(loader=B, duration="0.1ep", reset_time=True, name="curated"))
STEPS = 23


def main(job: dict[str, Any]) -> None:
    warnings.simplefilter("ignore")
    logging.getLogger("composer").setLevel(logging.ERROR)
    import torch
    from composer import Callback, Event, State, Trainer
    from composer.loggers import Logger
    from composer.models import ComposerModel
    from torch.utils.data import DataLoader, Dataset

    from durations.integrations.composer import DurationsCallback

    torch.set_num_threads(1)
    calls = RESET_CALLS if job.get("reset") else CALLS
    log = open(job["log"], "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - kept open

    def write(item: dict[str, Any]) -> None:
        log.write(json.dumps(item) + "\n")
        log.flush()

    class IdDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
        def __init__(self, loader: Loader) -> None:
            self.n, self.offset = loader.samples or 0, OFFSETS[loader.name or ""]

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.tensor([1.0]), torch.tensor(self.offset + index)

    class IdModel(ComposerModel):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.pending: list[int] = []

        def forward(self, batch: Any) -> torch.Tensor:
            x, ids = batch
            if self.training:
                self.pending += [int(v) for v in ids.tolist()]
            out: torch.Tensor = self.layer(x)
            return out

        def loss(self, outputs: Any, batch: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
            loss: torch.Tensor = (outputs**2).mean()
            return loss

    save_on = job.get("save_on")
    callback = DurationsCallback(CONFIG, calls, checkpoints=job["root"], save_on=save_on)
    started = False

    class Probe(Callback):
        def run_event(self, event: Event, state: State, logger: Logger) -> None:
            nonlocal started
            if event == Event.BATCH_START:
                here = callback.lifetime_step
                hold = job.get("hold_at")
                if hold is not None and here >= hold:
                    write({"hold": here})
                    while True:
                        time.sleep(1)
                if not started:
                    write({"start": here})
                    started = True
            elif event == Event.BATCH_END:
                name = callback.session.current().name
                write({"step": callback.lifetime_step, "call": name, "ids": model.pending})
                model.pending = []
                time.sleep(job.get("pace", 0))

    def state() -> dict[str, list[str]]:
        """What the trainer carries from one fit to the next, bit by bit."""
        buffers = [s["momentum_buffer"] for s in optimizer.state_dict()["state"].values()]
        return {
            "model": [t.detach().numpy().tobytes().hex() for t in model.state_dict().values()],
            "optimizer": [t.numpy().tobytes().hex() for t in buffers],
        }

    torch.manual_seed(0)
    model = IdModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    trainer = Trainer(
        model=model,
        optimizers=optimizer,
        device="cpu",
        callbacks=[callback, Probe()],
        progress_bar=False,
        log_to_console=False,
        seed=0,
        run_name="run",
        save_folder=job["root"],
        save_interval=callback.save_interval if save_on else "1ba",
        save_overwrite=True,
        autoresume=True,
    )
    for call in calls:
        dataset = IdDataset(call.loader)
        callback.fit(trainer, train_dataloader=DataLoader(dataset, batch_size=10))
        write({"after": call.name, "state": state()})
    trainer.close()
    write({"end": callback.lifetime_step})


if __name__ == "__main__":
    main(json.loads(Path(sys.argv[1]).read_text()))
