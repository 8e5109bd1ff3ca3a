"""The conformance harness (``durations.testing.check_trainer``) on the real integrations.

Each framework gets a *script*: the training script a user would write with the integration, one
``Trainer`` per fit call of a generated scenario, every step checkpointed. ``restarting(script)``
is the adapter ``check_trainer`` calls: it runs the script as a fresh process (fresh callback,
model and trainers) once per crash step, killing it right after the checkpoint at that step, and
once more to the end, all in one checkpoint folder; the dataset items carry their call and
sample index, the model logs the indices of every batch it trains on, and the log becomes the
``StepRecord``s the harness compares with the plan.

Keras's script passes arrays to ``DurationsCallback.fit`` (its ``Model.fit``) and saves after
every step (``save_on="1ba"``). The Hugging Face test and its script are shown verbatim in
``docs/testing.md`` (checked below).
The framework tests skip when their framework is missing; the docs check always runs.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from durations import FitCall, Loader, RunConfig
from durations.scenario import Scenario
from durations.testing import StepRecord, check_trainer, compare
from tests.frameworks._common import quiet
from tests.frameworks._harness import SCRIPTS, Crash, Process, records

with warnings.catch_warnings():  # the frameworks are optional: their tests skip without them
    warnings.simplefilter("ignore")
    with contextlib.suppress(ImportError):
        import torch
    with contextlib.suppress(ImportError):
        from transformers import Trainer, TrainingArguments

        from durations.integrations.transformers import DurationsCallback
    with contextlib.suppress(ImportError):
        import pytorch_lightning as pl
        from torchdata.stateful_dataloader import StatefulDataLoader

        from durations.integrations import lightning

DOCS = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
FRAMEWORK_LOGGERS = ["transformers", "accelerate", "pytorch_lightning", "lightning_fabric"]


def _quiet() -> contextlib.AbstractContextManager[None]:
    return quiet(FRAMEWORK_LOGGERS)


Script = Callable[[Scenario, Process], None]


def restarting(script: Script) -> Callable[[Scenario, tuple[int, ...]], list[StepRecord]]:
    """The trainer under test for ``check_trainer``: ``script`` run once per crash step as a
    process killed right after that step's checkpoint, then once to the end, in one checkpoint
    folder; every step trained, in order, as ``StepRecord``s."""

    def run(scenario: Scenario, crashes: tuple[int, ...]) -> list[StepRecord]:
        log: list[tuple[int, tuple[int, ...]]] = []
        with tempfile.TemporaryDirectory() as folder, _quiet():
            for crash in [*crashes, None]:
                with contextlib.suppress(Crash):
                    script(scenario, Process(Path(folder), log, crash))
        return records(scenario, log)

    return run


# -- the toy task: items that carry their ids, models that report them ------------------------


class IdData:
    """The items of call ``index``'s loader: ``x`` is (call index, sample index), ``labels`` 0."""

    def __init__(self, index: int, call: Any) -> None:
        self.index, self.samples = index, call.loader.samples

    def __len__(self) -> int:
        return int(self.samples)

    def __getitem__(self, sample: int) -> dict[str, torch.Tensor]:
        if not 0 <= sample < len(self):
            raise IndexError(sample)
        x = torch.tensor([float(self.index), float(sample)])
        return {"x": x, "labels": torch.zeros(1)}


def IdModel(process: Process) -> Any:
    """A linear Hugging Face-style model that reports every batch it trains on to ``process``."""

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                process.trained(x)
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    return Model()


def IdModule(process: Process) -> Any:
    """A linear LightningModule that reports every batch it trains on to ``process``."""

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: dict[str, torch.Tensor], index: int) -> torch.Tensor:
            process.trained(batch["x"])
            loss: torch.Tensor = ((self.layer(batch["x"]) - batch["labels"]) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Module()


@pytest.fixture
def hugging_face() -> None:
    with _quiet():
        for module in ("torch", "transformers", "accelerate"):
            pytest.importorskip(module)


@pytest.fixture
def pytorch_lightning() -> None:
    with _quiet():
        for module in ("torch", "pytorch_lightning", "torchdata"):
            pytest.importorskip(module)


# -- Hugging Face: the test docs/testing.md shows ---------------------------------------------


def hf_script(scenario: Scenario, process: Process) -> None:
    callback = DurationsCallback(scenario.config, scenario.calls, checkpoints=process.root)
    model = IdModel(process)
    for i, call in enumerate(scenario.calls):
        args = TrainingArguments(
            process.root / str(i),
            per_device_train_batch_size=call.loader.batch_size,
            dataloader_drop_last=call.loader.drop_last,
            train_sampling_strategy="sequential",
            max_steps=10**6,  # the callback stops each call
            save_steps=1,  # a checkpoint after every step: a crash can follow any
        )
        callback.train(Trainer(model, args, train_dataset=IdData(i, call), callbacks=[callback]))


@pytest.mark.usefixtures("hugging_face")
def test_hugging_face_trainer_follows_the_plan() -> None:
    """Generated scripts, killed after any step and re-run, train exactly the plan's steps."""
    check_trainer(restarting(hf_script), max_examples=40, max_crashes=2, scenario_strategy=SCRIPTS)


# -- Lightning ---------------------------------------------------------------------------------


def lightning_script(scenario: Scenario, process: Process) -> None:
    callback = lightning.DurationsCallback(
        scenario.config, scenario.calls, checkpoints=process.root
    )
    model = IdModule(process)
    for i, call in enumerate(scenario.calls):
        every_step = pl.callbacks.ModelCheckpoint(
            process.root / str(i), "{step}", every_n_train_steps=1, save_top_k=-1
        )
        trainer = pl.Trainer(
            max_epochs=-1,  # the callback stops each fit
            callbacks=[callback, every_step],
            accelerator="cpu",
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        loader = call.loader
        data = StatefulDataLoader(
            IdData(i, call), batch_size=loader.batch_size, drop_last=loader.drop_last
        )
        callback.fit(trainer, model, data)


@pytest.mark.usefixtures("pytorch_lightning")
def test_lightning_trainer_follows_the_plan() -> None:
    """Generated scripts, killed after any step and re-run, train exactly the plan's steps.

    One crash per run: with two, a re-run after an epoch-end crash can replay the next epoch
    (the known mismatch pinned below), and hypothesis would find it at random."""
    check_trainer(
        restarting(lightning_script), max_examples=60, max_crashes=2, scenario_strategy=SCRIPTS
    )


@pytest.mark.usefixtures("pytorch_lightning")
def test_lightning_second_resume_after_an_epoch_end_checkpoint() -> None:
    """The harness's smallest failing case before the callback repaired Lightning's counters:
    a 2-sample loader, batch 1, 4 steps, crashes after steps 2 (an epoch's end) and 3. The
    process resumed from the epoch-end checkpoint writes checkpoints whose Lightning loop state
    counts the running epoch as completed; resumed from step 3, Lightning 2.6.6 would start a
    new epoch and drop the StatefulDataLoader's position (sample 0 instead of 1). The callback
    now saves such an epoch as not completed, and the run follows the plan."""
    loader = Loader(samples=2, batch_size=1, tokens_per_sample=1, name="a")
    scenario = Scenario(
        config=RunConfig(max_duration="4ba"), loaders={"a": loader}, calls=(FitCall(loader=loader),)
    )
    compare(scenario, (2, 3), restarting(lightning_script)(scenario, (2, 3)))


# -- the docs cannot drift ----------------------------------------------------------------------


def test_docs_show_the_hugging_face_test_verbatim() -> None:
    """docs/testing.md's conformance example is this file's hf_script and HF test, verbatim,
    in under twenty lines."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("\n## The conformance test, in under twenty lines\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)
    test = test_hugging_face_trainer_follows_the_plan
    shown = "\n\n".join(inspect.getsource(function) for function in (hf_script, test))
    assert blocks == [shown]
    assert len(shown.splitlines()) < 20


# -- Keras ---------------------------------------------------------------------------------------


@pytest.fixture
def keras_framework() -> Any:
    os.environ.setdefault("KERAS_BACKEND", "torch")
    with _quiet():
        pytest.importorskip("torch")
        keras = pytest.importorskip("keras")
    if keras.backend.backend() != "torch":
        pytest.skip(f"keras runs with backend {keras.backend.backend()!r}, not torch")
    return keras


def keras_script(scenario: Scenario, process: Process) -> None:
    import keras
    import numpy as np

    from durations.integrations.keras import DurationsCallback as KerasCallback

    class Report(keras.layers.Layer):  # type: ignore[misc]
        """Identity layer that reports every batch trained (not the symbolic ones)."""

        def call(self, x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.device.type != "meta":
                process.trained(x)
            return x

    callback = KerasCallback(
        scenario.config, scenario.calls, checkpoints=process.root, save_on="1ba"
    )
    model = keras.Sequential([keras.Input((2,)), Report(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    for i, call in enumerate(scenario.calls):
        samples = call.loader.samples or 0
        x = np.array([[i, sample] for sample in range(samples)], dtype="float32")
        callback.fit(model, x.reshape(-1, 2), np.zeros((samples, 1), "float32"), verbose=0)


def test_keras_fit_follows_the_plan(keras_framework: Any) -> None:
    """Generated scripts, killed after any step and re-run, train exactly the plan's steps."""
    check_trainer(
        restarting(keras_script), max_examples=20, max_crashes=2, scenario_strategy=SCRIPTS
    )
