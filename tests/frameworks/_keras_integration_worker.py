"""One process of the README's two-phase script on Keras 3 (torch backend), through
``durations.integrations.keras.DurationsCallback``: 2 epochs of A (100 samples, ids 0-99), then
0.1 epoch of B (300 samples, ids 1000-1299), batch 10, learning rate 0, a checkpoint after every
step. ``tests/frameworks/test_keras_integration.py`` runs it and kills it with SIGKILL.

Usage: ``python -m tests.frameworks._keras_integration_worker JOB.json`` where the job holds
``root`` (the checkpoint folder), ``log`` (a JSON-lines file), ``hold_at`` (after the checkpoint
of that lifetime step, log ``hold`` and wait to be killed), ``pace`` (seconds to sleep in
every step, so that a kill from outside lands inside the run) and ``lr`` (optional: train with
Adam at that learning rate, so that every step changes the weights and the optimizer's
moments; the model sees the ids divided by 1000 and learns twice that).

``python -m tests.frameworks._keras_integration_worker --serve`` imports Keras once and then,
for every job path read from stdin, forks a new process (its own session) that runs the job
with its output in the job's ``output`` file; it prints ``pid N`` when the process starts and
``exit N CODE`` when it ends (``CODE`` is ``-9`` for a process killed with SIGKILL). Each
process of the script is still a process of its own, killed from outside; only the seconds
of importing torch and Keras are not paid again.

The log: ``{"durations": path}`` (where durations was imported from), ``{"call": name, "at":
k}`` for every fit that trains (the first says where the process starts),
``{"ids": [...]}`` for every batch trained, written before the step's checkpoint,
``{"after": name, "state": {...}}`` when each ``callback.fit`` returns (trained or skipped: the
model's weights and the optimizer's variables, as the hex of their bytes, and the optimizer's
iteration count), then ``{"hold": k}`` or ``{"end": true}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from typing import Any

from durations import FitCall, Loader, RunConfig

A = Loader(samples=100, batch_size=10, name="a")
B = Loader(samples=300, batch_size=10, name="b")
OFFSETS = {"a": 0, "b": 1000}
CONFIG = RunConfig(max_duration="2ep")
CALLS = (FitCall(loader=A, name="pretrain"), FitCall(loader=B, duration="0.1ep", name="curated"))
STEPS = 23


def main(job_path: str) -> None:
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    os.environ["KERAS_BACKEND"] = "torch"
    log = open(job["log"], "a", encoding="utf-8")  # noqa: SIM115 - open for the whole process

    def write(item: dict[str, Any]) -> None:
        log.write(json.dumps(item) + "\n")
        log.flush()

    import durations

    write({"durations": durations.__file__})
    warnings.simplefilter("ignore")
    import keras
    import numpy as np
    import torch

    from durations.integrations.keras import DurationsCallback

    pace, hold_at = float(job.get("pace") or 0), job.get("hold_at")

    class Record(keras.layers.Layer):  # type: ignore[misc]
        """Identity layer that logs the ids of each batch trained (not the symbolic ones)."""

        def call(self, x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.device.type != "meta":
                write({"ids": [int(v) for v in x[:, 0].tolist()]})
                if pace:
                    time.sleep(pace)
            return x

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=job["root"], save_on="1ba")

    class Probe(keras.callbacks.Callback):  # type: ignore[misc]
        """After the DurationsCallback: logs where each fit starts, holds after a checkpoint."""

        def on_train_begin(self, logs: Any = None) -> None:
            write({"call": callback.session.current().name, "at": callback.lifetime_step})

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if hold_at is not None and callback.lifetime_step >= hold_at:
                write({"hold": callback.lifetime_step})
                time.sleep(600)

    def state() -> dict[str, Any]:
        """The training state an uninterrupted run carries from one fit to the next, bit by
        bit."""
        optimizer = model.optimizer
        return {
            "weights": [w.tobytes().hex() for w in model.get_weights()],
            "optimizer": [
                keras.ops.convert_to_numpy(v).tobytes().hex() for v in optimizer.variables
            ],
            "iterations": int(optimizer.iterations),
        }

    keras.utils.set_random_seed(0)
    layers = [keras.Input((1,)), Record(), keras.layers.Rescaling(0.001), keras.layers.Dense(1)]
    model = keras.Sequential(layers)
    lr = job.get("lr")
    optimizer = keras.optimizers.SGD(learning_rate=0.0) if lr is None else keras.optimizers.Adam(lr)
    model.compile(optimizer=optimizer, loss="mse")
    for call in CALLS:
        loader = call.loader
        offset = OFFSETS[loader.name or ""]
        x = np.arange(offset, offset + (loader.samples or 0), dtype="float32").reshape(-1, 1)
        callback.fit(model, x, x * 0.002, verbose=0, callbacks=[callback, Probe()])
        write({"after": call.name, "state": state()})
    write({"end": True, "iterations": int(model.optimizer.iterations)})


def serve() -> None:
    """Import once, then fork one process per job read from stdin (see the module's doc)."""
    os.environ["KERAS_BACKEND"] = "torch"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import keras  # noqa: F401
        import numpy  # noqa: F401
        import torch  # noqa: F401

        import durations.integrations.keras  # noqa: F401
    print("ready", flush=True)
    for line in sys.stdin:
        job_path = line.strip()
        if not job_path:
            continue
        with open(job_path, encoding="utf-8") as handle:
            job = json.load(handle)
        pid = os.fork()
        if pid == 0:  # the new process of the script
            os.setsid()
            output = os.open(job["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(output, 1)
            os.dup2(output, 2)
            code = 0
            try:
                main(job_path)
            except BaseException:
                import traceback

                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {pid} {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve()
    else:
        main(sys.argv[1])
