"""End-to-end tests of the framework integrations, on real tiny CPU trainings.

The script under test is the README's two-phase run at toy size: 2 epochs of A (100 samples,
batch 10), then 0.1 epoch of B (300 samples, batch 10): 20 + 3 = 23 steps. Items carry their ids
(A: 0-99, B: 1000-1299), sampling is sequential, and Adam trains at a small rate, so that every
step changes the weights: each process records them, bit for bit, when each call returns.

A *process* is a fresh model, a fresh callback and a fresh Trainer per fit call, running the
whole script; a crash at step k raises right after the checkpoint at lifetime step k is written
(as in ``tests/frameworks/_common.py``), and the next process runs the same script again. The
steps a run trains are its processes' steps, in order: since each crash comes right after a
checkpoint and the next process resumes from that checkpoint, no step is redone.

The framework tests skip when the framework is missing; the pure tests always run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from durations import Checkpoint, CheckpointFormatError, FitCall, Loader, Progress, RunConfig, plan
from durations.integrations.checkpoints import (
    LIGHTNING,
    TRANSFORMERS,
    latest_checkpoint,
    read_lightning_checkpoint,
    read_transformers_checkpoint,
)

A = Loader(samples=100, batch_size=10, name="a")
B = Loader(samples=300, batch_size=10, name="b")
OFFSETS = {"a": 0, "b": 1000}
CONFIG = RunConfig(max_duration="2ep")
CALLS = (FitCall(loader=A, name="pretrain"), FitCall(loader=B, duration="0.1ep", name="curated"))
CRASHES = (5, 13, 20, 21)


@attrs.frozen
class Step:
    """One optimizer step as a process trained it: lifetime step, call, and sample ids."""

    lifetime: int
    call: str
    ids: tuple[int, ...]


#: The model's weights as the hex of each tensor's bytes: equal means bit for bit.
Weights = tuple[str, ...]


@attrs.frozen
class Process:
    """What one process of the script did: where it started, the steps it trained, and the
    weights when each of its train/fit calls returned (trained or skipped), by call."""

    start: int
    steps: tuple[Step, ...]
    final: int
    after: tuple[tuple[str, Weights], ...] = ()


def _weights(model: Any) -> Weights:
    return tuple(t.detach().cpu().numpy().tobytes().hex() for t in model.state_dict().values())


@contextmanager
def _quiet() -> Iterator[None]:
    """Framework warnings are not under test here (FINDINGS.md records them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _records(steps: Sequence[Step]) -> list[Any]:
    """The steps as ``durations.testing.StepRecord``s: loader by id range, in-epoch indices, and
    the lifetime epoch as the stream shows it (a new loader, or ids starting over, is a new
    epoch: rule 4)."""
    from durations.testing import StepRecord

    records, epoch, previous = [], -1, None
    for step in steps:
        loader = "b" if step.ids[0] >= OFFSETS["b"] else "a"
        samples = tuple(i - OFFSETS[loader] for i in step.ids)
        if previous is None or previous[0] != loader or samples[0] <= previous[1]:
            epoch += 1
        previous = (loader, samples[-1])
        records.append(StepRecord(step.call, loader, epoch, samples))
    return records


def _run(
    process: Callable[[Path, int | None], Process], root: Path, crashes: Sequence[int]
) -> list[Process]:
    """Run the script, crashing after each step in ``crashes``, then to the end."""
    runs = [process(root, crash) for crash in crashes]
    runs.append(process(root, None))
    return runs


def _check_chain(runs: Sequence[Process], crashes: Sequence[int], full: Process) -> None:
    """Each process resumes at the previous crash; together they train the uninterrupted run,
    and end with its weights; a process that skips a call holds the uninterrupted weights
    after it."""
    from durations.scenario import Scenario
    from durations.testing import compare, expected_steps

    assert [run.start for run in runs] == [0, *crashes]
    assert runs[-1].after[-1] == full.after[-1]
    uncrashed = dict(full.after)
    for run in runs:
        for call, weights in run.after:
            assert weights == uncrashed[call], (run.start, call)
    assert [run.final for run in runs] == [*crashes, 23]
    trained = [step for run in runs for step in run.steps]
    assert [s.lifetime for s in trained] == list(range(1, 24))
    assert trained == list(full.steps)
    scenario = Scenario(config=CONFIG, loaders={"a": A, "b": B}, calls=CALLS, source="<test>")
    compare(scenario, tuple(crashes), _records(trained))
    assert _records(trained) == expected_steps(plan(CONFIG, CALLS))


def _check_full(full: Process) -> None:
    assert full.start == 0
    assert full.final == 23
    assert [s.ids for s in full.steps[:10]] == [tuple(range(i, i + 10)) for i in range(0, 100, 10)]
    assert [s.ids for s in full.steps[10:20]] == [s.ids for s in full.steps[:10]]
    assert [s.ids for s in full.steps[20:]] == [
        tuple(range(i, i + 10)) for i in range(1000, 1030, 10)
    ]
    assert [s.call for s in full.steps] == ["pretrain"] * 20 + ["curated"] * 3


# -- Hugging Face -------------------------------------------------------------------------------


class SimulatedCrashError(RuntimeError):
    """Raised right after the checkpoint at the crash step is written."""


def _hf_process(root: Path, crash_at: int | None, *, reuse: bool = False) -> Process:
    """One process of the script on Hugging Face: a Trainer per call, or with ``reuse`` one
    Trainer for both (its output_dir and dataset set anew for the second), which then carries
    its optimizer from the first train() to the second."""
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __init__(self, loader: Loader) -> None:
            self.n, self.offset = loader.samples or 0, OFFSETS[loader.name or ""]

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(self.offset + index)]), "labels": torch.tensor([0.0])}

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.pending: list[int] = []

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                self.pending += [int(v) for v in x[:, 0].tolist()]
            return {"loss": ((self.layer(x) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(CONFIG, CALLS, checkpoints=root)
    steps: list[Step] = []
    after: list[tuple[str, Weights]] = []
    trainer: Any = None

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            call = callback.session.current().name
            steps.append(Step(callback.lifetime_step, call, tuple(model.pending)))
            model.pending = []

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if crash_at is not None and callback.lifetime_step >= crash_at:
                raise SimulatedCrashError(f"crash after step {callback.lifetime_step}")

    with _quiet():
        try:
            for call in CALLS:
                output_dir = str(root / (call.name or ""))
                if reuse and call is not CALLS[0]:
                    # New TrainingArguments would reset accelerate's state under the trainer.
                    trainer.args.output_dir = output_dir
                    trainer.train_dataset = IdDataset(call.loader)
                else:
                    args = TrainingArguments(
                        output_dir=output_dir,
                        per_device_train_batch_size=10,
                        learning_rate=1e-3,
                        max_steps=1000,
                        save_strategy="steps",
                        save_steps=1,
                        report_to="none",
                        disable_tqdm=True,
                        logging_strategy="no",
                        use_cpu=True,
                        seed=0,
                        dataloader_num_workers=0,
                        train_sampling_strategy="sequential",
                    )
                    trainer = Trainer(
                        model=model,
                        args=args,
                        train_dataset=IdDataset(call.loader),
                        callbacks=[callback, Probe()],
                    )
                    trainer.remove_callback(PrinterCallback)
                callback.train(trainer)
                after.append((call.name or "", _weights(model)))
        except SimulatedCrashError:
            pass
    assert callback.session.plan is not None
    final = callback.lifetime_step if steps else callback.session.plan.start.batch
    return Process(callback.session.plan.start.batch, tuple(steps), final, tuple(after))


@pytest.fixture(scope="module")
def hf_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Process, list[Process], Path]:
    with _quiet():
        pytest.importorskip("transformers")
        pytest.importorskip("accelerate")
    full = _hf_process(tmp_path_factory.mktemp("hf-full"), None)
    root = tmp_path_factory.mktemp("hf-crashes")
    return full, _run(_hf_process, root, CRASHES), root


def test_hf_uninterrupted_run_is_the_plan(hf_runs: tuple[Process, list[Process], Path]) -> None:
    """HF trains 20 steps on A (two epochs, ids 0-99 twice) and 3 on B (ids 1000-1029)."""
    _check_full(hf_runs[0])


def test_hf_crashes_at_5_13_20_21_finish_like_the_uninterrupted_run(
    hf_runs: tuple[Process, list[Process], Path],
) -> None:
    """Killed after steps 5, 13, 20 and 21 and re-run as-is, HF trains the same 23 steps on
    the same sample ids as without crashes, and agrees with durations.testing.compare."""
    full, runs, _ = hf_runs
    _check_chain(runs, CRASHES, full)


def test_hf_rerun_of_a_finished_script_trains_nothing_and_holds_the_final_weights(
    hf_runs: tuple[Process, list[Process], Path],
) -> None:
    """Re-running the finished script skips both calls (the ledger says finished), and after
    each the model holds the uninterrupted run's weights after it, bit for bit (each call's
    final checkpoint, loaded), not the freshly built model's."""
    full = hf_runs[0]
    again = _hf_process(hf_runs[2], None)
    assert (again.start, again.steps, again.final) == (23, (), 23)
    assert len({weights for _, weights in full.after}) == 2  # training changed them
    assert again.after == full.after


def test_hf_reused_trainer_carries_its_optimizer_across_a_restart(tmp_path: Path) -> None:
    """One Trainer for both calls keeps its optimizer (Adam's moments) from the first train()
    to the second. Crashed right after the first call's final checkpoint and run again, the
    skipped first call restores that optimizer state too, so the second call trains as the
    uninterrupted run's did: its end weights are the same, bit for bit (with the weights alone
    restored, they are not)."""
    with _quiet():
        pytest.importorskip("transformers")
        pytest.importorskip("accelerate")
    full = _hf_process(tmp_path / "full", None, reuse=True)
    runs = [_hf_process(tmp_path / "crashed", crash, reuse=True) for crash in (20, None)]
    _check_chain(runs, [20], full)


def test_hf_checkpoint_dirs_carry_the_ledger(hf_runs: tuple[Process, list[Process], Path]) -> None:
    """Every checkpoint-N directory has durations.json; the newest by progress is the end of
    call 'curated', although HF numbered it checkpoint-3 (its own step count)."""
    root = hf_runs[2]
    found = latest_checkpoint(root, reader=TRANSFORMERS)
    assert found is not None
    assert Path(found.path) == root / "curated" / "checkpoint-3"
    assert found.checkpoint.progress.batch == 23
    ledger = found.checkpoint.ledger or ()
    assert [(e.name, e.finished) for e in ledger] == [("pretrain", True), ("curated", True)]
    at13 = read_transformers_checkpoint(root / "pretrain" / "checkpoint-13")
    assert at13 == plan(CONFIG, CALLS).checkpoint_at(13)


@pytest.mark.parametrize("crash", [1, 10, 19, 22])
def test_hf_single_crash_finishes_like_the_uninterrupted_run(
    hf_runs: tuple[Process, list[Process], Path], tmp_path: Path, crash: int
) -> None:
    """A crash after step 1, 10 (an epoch boundary), 19 or 22 and a re-run give the
    uninterrupted run's 23 steps."""
    runs = _run(_hf_process, tmp_path, [crash])
    _check_chain(runs, [crash], hf_runs[0])


def test_hf_batch_size_other_than_the_loaders_is_refused(tmp_path: Path) -> None:
    """A trainer whose global batch differs from the FitCall's loader is refused at once."""
    with _quiet():
        pytest.importorskip("transformers")
        from durations.integrations.transformers import DurationsCallback, IntegrationError

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
    callback.session.begin()
    callback._active = True
    args = attrs.make_class("Args", ["gradient_accumulation_steps", "world_size"])(2, 1)
    state = attrs.make_class("State", ["global_step", "train_batch_size"])(0, 10)
    with pytest.raises(IntegrationError, match=r"global batch is 20 .* batch_size=10"):
        callback.on_train_begin(args, state, None)


def test_hf_plain_train_call_is_refused(tmp_path: Path) -> None:
    """Calling trainer.train() directly (not callback.train) fails at once, naming the fix."""
    with _quiet():
        pytest.importorskip("transformers")
        from durations.integrations.transformers import DurationsCallback, IntegrationError

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
    with pytest.raises(IntegrationError, match=r"callback\.train\(trainer\)"):
        callback.on_train_begin(None, None, None)


# -- Lightning ------------------------------------------------------------------------------------


def _pl_process(root: Path, crash_at: int | None, *, plain: bool = False) -> Process:
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader, Dataset
    from torchdata.stateful_dataloader import StatefulDataLoader

    from durations.integrations.lightning import DurationsCallback

    class IdDataset(Dataset[torch.Tensor]):
        def __init__(self, loader: Loader) -> None:
            self.n, self.offset = loader.samples or 0, OFFSETS[loader.name or ""]

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> torch.Tensor:
            return torch.tensor([float(self.offset + index)])

    class IdModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.pending: list[int] = []

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            self.pending += [int(v) for v in batch[:, 0].tolist()]
            loss: torch.Tensor = (self.layer(batch) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(CONFIG, CALLS, checkpoints=root)
    steps: list[Step] = []
    after: list[tuple[str, Weights]] = []

    class Probe(pl.Callback):
        def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
            if crash_at is not None and callback.lifetime_step >= crash_at:
                raise SimulatedCrashError(f"crash after step {callback.lifetime_step}")

        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            call = callback.session.current().name
            steps.append(Step(callback.lifetime_step, call, tuple(model.pending)))
            model.pending = []

    with _quiet():
        try:
            for call in CALLS:
                trainer = pl.Trainer(
                    accelerator="cpu",
                    devices=1,
                    max_epochs=-1,
                    logger=False,
                    enable_progress_bar=False,
                    enable_model_summary=False,
                    num_sanity_val_steps=0,
                    default_root_dir=root,
                    callbacks=[
                        callback,
                        Probe(),
                        pl.callbacks.ModelCheckpoint(
                            dirpath=root / (call.name or ""),
                            filename="{step}",
                            every_n_train_steps=1,
                            save_top_k=-1,
                        ),
                    ],
                )
                kind: Any = DataLoader if plain else StatefulDataLoader
                loader = kind(IdDataset(call.loader), batch_size=10)
                callback.fit(trainer, model, loader)
                after.append((call.name or "", _weights(model)))
        except SimulatedCrashError:
            pass
    assert callback.session.plan is not None
    final = callback.lifetime_step if steps else callback.session.plan.start.batch
    return Process(callback.session.plan.start.batch, tuple(steps), final, tuple(after))


@pytest.fixture(scope="module")
def pl_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Process, list[Process], Path]:
    with _quiet():
        pytest.importorskip("pytorch_lightning")
        pytest.importorskip("torchdata")
    full = _pl_process(tmp_path_factory.mktemp("pl-full"), None)
    root = tmp_path_factory.mktemp("pl-crashes")
    return full, _run(_pl_process, root, CRASHES), root


def test_lightning_uninterrupted_run_is_the_plan(
    pl_runs: tuple[Process, list[Process], Path],
) -> None:
    """Lightning trains 20 steps on A and 3 on B, the plan's 23."""
    _check_full(pl_runs[0])


def test_lightning_crashes_at_5_13_20_21_finish_like_the_uninterrupted_run(
    pl_runs: tuple[Process, list[Process], Path],
) -> None:
    """Killed after steps 5, 13, 20 and 21 and re-run as-is, Lightning trains the same 23 steps
    on the same sample ids as without crashes (13 resumes mid-epoch through the
    StatefulDataLoader), and agrees with durations.testing.compare."""
    full, runs, _ = pl_runs
    _check_chain(runs, CRASHES, full)


def test_lightning_rerun_of_a_finished_script_trains_nothing_and_holds_the_final_weights(
    pl_runs: tuple[Process, list[Process], Path],
) -> None:
    """Re-running the finished script skips both calls, and after each the model holds the
    uninterrupted run's weights after it, bit for bit."""
    full = pl_runs[0]
    again = _pl_process(pl_runs[2], None)
    assert (again.start, again.steps, again.final) == (23, (), 23)
    assert len({weights for _, weights in full.after}) == 2  # training changed them
    assert again.after == full.after


def test_lightning_ckpt_reader_reads_the_stored_ledger(
    pl_runs: tuple[Process, list[Process], Path],
) -> None:
    """A .ckpt written by the run reads back as the plan's own checkpoint at that step."""
    root = pl_runs[2]
    assert read_lightning_checkpoint(root / "pretrain" / "step=13.ckpt") == plan(
        CONFIG, CALLS
    ).checkpoint_at(13)
    found = latest_checkpoint(root, reader=LIGHTNING)
    assert found is not None
    assert found.checkpoint.progress.batch == 23
    assert [e.finished for e in found.checkpoint.ledger or ()] == [True, True]


def test_lightning_ckpt_reader_without_ledger_uses_lightnings_counters(
    pl_runs: tuple[Process, list[Process], Path], tmp_path: Path
) -> None:
    """Without the durations key, the reader builds the progress from global_step, epoch and
    the batch progress (and the samples from a loader when given), with ledger=None."""
    import torch

    data = torch.load(pl_runs[2] / "pretrain" / "step=13.ckpt", weights_only=True)
    del data["durations"]
    bare = tmp_path / "bare.ckpt"
    torch.save(data, bare)
    checkpoint = read_lightning_checkpoint(bare)
    assert checkpoint.ledger is None
    assert checkpoint.loader_state
    assert (checkpoint.progress.batch, checkpoint.progress.epoch) == (13, 1)
    assert checkpoint.progress.batch_in_epoch == 3
    exact = read_lightning_checkpoint(bare, loader=A).progress
    assert (exact.sample_in_epoch, exact.sample) == (30, 130)
    located = plan(CONFIG, CALLS, read_lightning_checkpoint(bare, loader=A))
    assert [s.steps for s in located.segments] == [7, 3]


@pytest.mark.parametrize("crash", range(1, 23))
def test_lightning_single_crash_anywhere_finishes_like_the_uninterrupted_run(
    pl_runs: tuple[Process, list[Process], Path], tmp_path: Path, crash: int
) -> None:
    """A crash after any step 1-22 and a re-run give the uninterrupted run's 23 steps."""
    runs = _run(_pl_process, tmp_path, [crash])
    _check_chain(runs, [crash], pl_runs[0])


def test_lightning_mid_epoch_resume_with_a_plain_dataloader_is_refused(
    pl_runs: tuple[Process, list[Process], Path], tmp_path: Path
) -> None:
    """With a plain DataLoader the checkpoint at step 13 (mid-epoch) records no loader state,
    and its re-run, which Lightning would start at the epoch's first sample, is refused before
    training, naming StatefulDataLoader."""
    from durations.integrations.lightning import IntegrationError

    _pl_process(tmp_path, 13, plain=True)
    assert not read_lightning_checkpoint(tmp_path / "pretrain" / "step=13.ckpt").loader_state
    with pytest.raises(IntegrationError, match="StatefulDataLoader"):
        _pl_process(tmp_path, None, plain=True)


class _NotAllowed:
    """An arbitrary class: weights_only must refuse to unpickle it."""


def test_ckpt_reader_refuses_arbitrary_objects(tmp_path: Path) -> None:
    """A checkpoint holding a custom object is refused, saying weights_only refused it."""
    torch = pytest.importorskip("torch")
    path = tmp_path / "custom.ckpt"
    torch.save({"global_step": 3, "epoch": 0, "thing": _NotAllowed()}, path)
    with pytest.raises(CheckpointFormatError, match=r"weights_only=True\) refused"):
        read_lightning_checkpoint(path)
    other = tmp_path / "tensor.ckpt"
    torch.save(torch.zeros(2), other)
    with pytest.raises(CheckpointFormatError, match="is not a Lightning checkpoint"):
        read_lightning_checkpoint(other)


def test_composer_reader_reads_the_timestamp(tmp_path: Path) -> None:
    """A Composer-shaped checkpoint (state.timestamp of ints and timedeltas, as Composer's
    Timestamp.state_dict writes) reads as the exact progress, with ledger=None."""
    import datetime

    torch = pytest.importorskip("torch")
    from durations.integrations.checkpoints import read_composer_checkpoint

    stamp = {
        "iteration": 0, "epoch": 1, "batch": 13, "sample": 130, "token": 0,
        "epoch_in_iteration": 1, "token_in_iteration": 0, "batch_in_epoch": 3,
        "sample_in_epoch": 30, "token_in_epoch": 0,
        "total_wct": datetime.timedelta(seconds=5), "iteration_wct": datetime.timedelta(0),
        "epoch_wct": datetime.timedelta(0), "batch_wct": datetime.timedelta(0),
    }  # fmt: skip
    path = tmp_path / "ep1-ba13-rank0.pt"
    torch.save({"state": {"timestamp": stamp, "model": {}}, "rng": []}, path)
    checkpoint = read_composer_checkpoint(path)
    assert checkpoint.ledger is None
    assert checkpoint.progress == Progress(
        epoch=1, batch=13, sample=130, token=0, batch_in_epoch=3, sample_in_epoch=30,
        token_in_epoch=0,
    )  # fmt: skip


def test_latest_checkpoint_on_memory_fs_picks_by_recorded_progress() -> None:
    """On a memory:// filesystem the newest by lifetime step wins, though its name sorts first
    and it was written first; the result is a full URL, ready for ckpt_path."""
    torch = pytest.importorskip("torch")
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = "memory://durations-test/run"
    for name, step in [("a-step30.ckpt", 30), ("z-step10.ckpt", 10), ("sub/m-step20.ckpt", 20)]:
        with fs.open(f"{root}/{name}", "wb") as handle:
            torch.save({"global_step": step, "epoch": step // 10, "state_dict": {}}, handle)
    with fs.open(f"{root}/notes.txt", "wb") as handle:
        handle.write(b"not a checkpoint")
    try:
        found = latest_checkpoint(root)
        assert found is not None
        assert found.path == f"{root}/a-step30.ckpt"
        assert found.checkpoint.progress.batch == 30
        assert found.checkpoint.ledger is None
        fs.mkdir("/durations-test/empty")
        assert latest_checkpoint("memory://durations-test/empty") is None
        assert latest_checkpoint("memory://durations-test/missing") is None
    finally:
        fs.rm("/durations-test", recursive=True)


# -- pure: no framework needed ---------------------------------------------------------------------


def _hf_dir(root: Path, name: str, checkpoint: Checkpoint) -> None:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "durations.json").write_text(json.dumps(checkpoint.to_dict()))


def test_latest_checkpoint_ignores_names_and_modification_times(tmp_path: Path) -> None:
    """HF names checkpoints by each train()'s own step count: checkpoint-3 of the second call
    is newer than checkpoint-20 of the first, and is chosen by its recorded progress."""
    full = plan(CONFIG, CALLS)
    _hf_dir(tmp_path, "curated/checkpoint-3", full.checkpoint_at(23))
    _hf_dir(tmp_path, "pretrain/checkpoint-20", full.checkpoint_at(20))
    _hf_dir(tmp_path, "pretrain/checkpoint-9", full.checkpoint_at(9))
    found = latest_checkpoint(tmp_path, reader=TRANSFORMERS)
    assert found is not None
    assert Path(found.path) == tmp_path / "curated" / "checkpoint-3"
    assert found.checkpoint == full.checkpoint_at(23)


def test_latest_checkpoint_of_missing_or_empty_location_is_none(tmp_path: Path) -> None:
    """Nothing to resume is an explicit None, for a missing folder and an empty one."""
    assert latest_checkpoint(tmp_path / "missing", reader=TRANSFORMERS) is None
    assert latest_checkpoint(tmp_path, reader=TRANSFORMERS) is None
    (tmp_path / "checkpoint-1").mkdir()
    with pytest.warns(RuntimeWarning, match="skipping"), pytest.raises(CheckpointFormatError):
        latest_checkpoint(tmp_path, reader=TRANSFORMERS)


def test_transformers_reader_without_ledger_reads_trainer_state(tmp_path: Path) -> None:
    """A foreign HF checkpoint reads global_step and the epoch, with ledger=None."""
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 13, "epoch": 1.3}))
    checkpoint = read_transformers_checkpoint(tmp_path)
    assert checkpoint.ledger is None
    assert checkpoint.progress == Progress(
        epoch=1, batch=13, sample=13, token=None, token_in_epoch=None
    )


def test_importing_durations_imports_no_framework() -> None:
    """``import durations`` and planning import neither the integrations nor torch."""
    code = (
        "import sys, durations; durations.plan; durations.Checkpoint; "
        "import durations.integrations.checkpoints; "
        "bad = [m for m in ('torch', 'transformers', 'pytorch_lightning', 'keras', "
        "'durations.integrations.lightning', 'durations.integrations.transformers', "
        "'durations.integrations.keras') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "framework"),
    [("transformers", "transformers"), ("lightning", "pytorch_lightning"), ("keras", "keras")],
)
def test_missing_framework_says_how_to_install(module: str, framework: str) -> None:
    """Without the framework the module imports, and using its callback says what to install."""
    code = (
        f"import sys; sys.modules[{framework!r}] = None; sys.modules['lightning'] = None\n"
        f"import durations.integrations.{module} as m\n"
        "try:\n    m.DurationsCallback\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'training-durations[frameworks]'" in out.stdout


# (framework step at train end, the error the session raises or None, why)
ENDED = [
    (23, None, "at the plan's stop: the call is done"),
    (
        21,
        "Keras ended call 'second' at lifetime step 21, before the plan's stop 23: remove what "
        "stopped it (data that ran out)",
        "short of the stop: the framework stopped the call, which the plan did not",
    ),
]


@pytest.mark.parametrize(("step", "message", "why"), ENDED)
def test_a_call_ended_before_the_plan_s_stop_is_refused(
    tmp_path: Path, step: int, message: str | None, why: str
) -> None:
    """Every callback ends a call through Session.check_reached_stop: ending short of the
    plan's stop is an IntegrationError naming the framework, the call, both steps and the
    remedy (the lifetime step counts from the call's start, here 20)."""
    from durations.integrations._session import IntegrationError, Session
    from durations.integrations.checkpoints import TRANSFORMERS

    a = Loader(samples=100, batch_size=10, name="a")
    b = Loader(samples=300, batch_size=10, name="b")
    calls = [FitCall(loader=a, name="first"), FitCall(loader=b, duration="0.1ep", name="second")]
    session = Session(RunConfig(max_duration="2ep"), calls, tmp_path, TRANSFORMERS)
    session.begin()
    session.begin()
    session.attach(0)  # the framework counts the second call's steps from 0: lifetime 20
    remedy = "remove what stopped it (data that ran out)"
    if message is None:
        session.check_reached_stop("Keras", step - 20, remedy)
        return
    with pytest.raises(IntegrationError) as raised:
        session.check_reached_stop("Keras", step - 20, remedy)
    assert str(raised.value) == message, why


def test_a_callback_the_trainer_does_not_call_is_refused(tmp_path: Path) -> None:
    """callback.train / callback.fit with a real trainer built without the callback is refused
    before any step, naming the constructor to pass it to (require_registered, shared by the
    Hugging Face, Lightning and Composer callbacks); with it, the check passes."""
    with _quiet():
        pytest.importorskip("transformers")
        import pytorch_lightning as pl
        import torch
        from transformers import Trainer, TrainingArguments

        from durations.integrations import lightning, transformers
        from durations.integrations._session import IntegrationError, require_registered

        hf = transformers.DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path / "hf")
        args = TrainingArguments(output_dir=str(tmp_path / "hf"), report_to=[], use_cpu=True)
        hf_trainer = Trainer(model=torch.nn.Linear(1, 1), args=args)
        pl_callback = lightning.DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path / "pl")
        pl_trainer = pl.Trainer(logger=False, enable_checkpointing=False, callbacks=[])
    with pytest.raises(IntegrationError) as raised:
        hf.train(hf_trainer)
    assert str(raised.value) == (
        "this DurationsCallback is not one of the trainer's callbacks: pass it as "
        "Trainer(..., callbacks=[callback])"
    )
    with pytest.raises(IntegrationError) as raised:
        pl_callback.fit(pl_trainer, torch.nn.Linear(1, 1))
    assert str(raised.value) == (
        "this DurationsCallback is not one of the trainer's callbacks: pass it as "
        "pl.Trainer(..., callbacks=[callback])"
    )
    assert (hf.session.segment, pl_callback.session.segment) == (None, None)  # nothing began
    require_registered(hf, [hf], "Trainer")  # registered: passes


# -- the state after a skipped call: which checkpoint holds it (pure) ---------------------------

#: The script's checkpoints by lifetime step, as the Hugging Face callback names them.
HF_DIRS = {
    13: "pretrain/checkpoint-13",
    20: "pretrain/checkpoint-20",
    21: "curated/checkpoint-1",
    22: "curated/checkpoint-2",
    23: "curated/checkpoint-3",
}

# (checkpoints on disk by lifetime step, each call's Start: kind and the checkpoint it restores,
#  resumes or takes the weights from; why)
RESTORES = [
    (
        [13, 20, 22, 23],
        [("skip", 20), ("skip", 23)],
        "finished: each skipped call restores its own final checkpoint, not the newest",
    ),
    (
        [13, 20, 21, 22],
        [("skip", 20), ("resume", 22)],
        "killed in the second call: the first call's end, then the resume",
    ),
    (
        [13, 20],
        [("skip", 20), ("run", 20)],
        "killed at the call boundary: the first call's end, and the second starts from it",
    ),
]


@pytest.mark.parametrize(("steps", "starts", "why"), RESTORES)
def test_a_skipped_call_restores_its_final_checkpoint(
    tmp_path: Path, steps: list[int], starts: list[tuple[str, int]], why: str
) -> None:
    """Session.begin gives every skipped call the checkpoint whose recorded progress is the
    call's stop and whose ledger records it finished there (Start.restore_from): the state an
    uninterrupted run holds when the call returns."""
    from durations.integrations._session import Session

    full = plan(CONFIG, CALLS)
    for step in steps:
        _hf_dir(tmp_path, HF_DIRS[step], full.checkpoint_at(step))
    session = Session(CONFIG, CALLS, tmp_path, TRANSFORMERS)
    got = []
    for _ in CALLS:
        start = session.begin()
        chosen = start.restore_from or start.resume_from or start.weights_from
        got.append((start.kind.value, chosen))
    assert got == [(kind, str(tmp_path / HF_DIRS[step])) for kind, step in starts], why


def test_a_skipped_call_without_its_final_checkpoint_is_refused(tmp_path: Path) -> None:
    """A call the ledger records as finished whose final checkpoint is gone (a rotation deleted
    pretrain's step 20) cannot be given its state: refused, naming the call, the step and the
    fix, never left with the model as the script built it."""
    from durations.integrations import IntegrationError
    from durations.integrations._session import Session

    full = plan(CONFIG, CALLS)
    for step in (21, 22):
        _hf_dir(tmp_path, HF_DIRS[step], full.checkpoint_at(step))
    session = Session(CONFIG, CALLS, tmp_path, TRANSFORMERS, keep_final="keep it")
    with pytest.raises(IntegrationError) as raised:
        session.begin()
    assert str(raised.value) == (
        f"call 'pretrain' finished at lifetime step 20, but no checkpoint under '{tmp_path}' "
        "records it finished there: its final checkpoint was deleted or never written, and "
        "without it the model would not hold what the uninterrupted run had after the call. "
        "Keep every call's final checkpoint: keep it"
    )


def test_a_checkpoint_cut_short_before_its_ledger_is_set_aside(tmp_path: Path) -> None:
    """Killed after Hugging Face's trainer_state.json and before the callback's on_save, a
    checkpoint-N has a step counter and no ledger. Beside checkpoints with one it is a save cut
    short: set aside with a warning naming it (its counter would outrank the last finished
    save, and its step, read without a ledger, is not where the data is), and the process
    resumes from the newest ledgered one. A folder with no ledger anywhere is still taken up by
    its step counters (rule 10)."""
    from durations.integrations._session import Session

    full = plan(CONFIG, CALLS)
    _hf_dir(tmp_path, "pretrain/checkpoint-11", full.checkpoint_at(11))
    cut = tmp_path / "pretrain" / "checkpoint-12"
    cut.mkdir()
    (cut / "trainer_state.json").write_text(json.dumps({"global_step": 12, "epoch": 1.2}))
    with pytest.warns(RuntimeWarning, match="checkpoint-12: it has no ledger") as caught:
        start = Session(CONFIG, CALLS, tmp_path, TRANSFORMERS).begin()
    assert [str(w.message).split(":")[0] for w in caught] == [f"skipping {cut}"]
    with pytest.warns(RuntimeWarning, match="checkpoint-12: it has no ledger"):
        latest = latest_checkpoint(tmp_path, reader=TRANSFORMERS)
    assert latest is not None
    assert latest.checkpoint == full.checkpoint_at(11)
    finished = str(tmp_path / "pretrain" / "checkpoint-11")
    assert (start.kind.value, start.resume_from) == ("resume", finished)
    assert start.segment.start.batch == 11
    # The same counter alone in its folder: a run started without the integration.
    alone = tmp_path / "alone"
    shutil.copytree(cut, alone / "pretrain" / "checkpoint-12")
    taken = Session(CONFIG, CALLS, alone, TRANSFORMERS).begin()
    assert (taken.kind.value, taken.segment.start.batch) == ("resume", 12)


def test_a_finished_call_of_no_step_holds_what_was_before_it(tmp_path: Path) -> None:
    """A call of duration 0ba finishes without a step, so no checkpoint records its end. Run
    again after a kill in a later call, its skip holds what was before it: the model as built
    (first, at step 0), or what the previous skip restored; never refused for a missing final
    checkpoint (found by the Hugging Face conformance run: '0ba' then '2ba', killed after 1)."""
    from durations.integrations._session import Session

    first = (FitCall(loader=A, duration="0ba", name="none"), FitCall(loader=A, duration="2ba"))
    config = RunConfig(max_duration="0ba")
    _hf_dir(tmp_path / "first", "b/checkpoint-1", plan(config, first).checkpoint_at(1))
    session = Session(config, first, tmp_path / "first", TRANSFORMERS)
    starts = [session.begin() for _ in first]
    assert [(s.kind.value, s.restore_from) for s in starts] == [("skip", None), ("resume", None)]
    assert starts[1].resume_from == str(tmp_path / "first" / "b" / "checkpoint-1")
    between = (CALLS[0], FitCall(loader=B, duration="0ba", name="none"), CALLS[1])
    full = plan(CONFIG, between)
    _hf_dir(tmp_path / "between", "pretrain/checkpoint-20", full.checkpoint_at(20))
    _hf_dir(tmp_path / "between", "curated/checkpoint-1", full.checkpoint_at(21))
    again = Session(CONFIG, between, tmp_path / "between", TRANSFORMERS)
    kinds = [(s.kind.value, s.restore_from) for s in (again.begin() for _ in between)]
    assert kinds == [
        ("skip", str(tmp_path / "between" / "pretrain" / "checkpoint-20")),
        # The checkpoint at step 20 records 'none' finished there too: its state, again.
        ("skip", str(tmp_path / "between" / "pretrain" / "checkpoint-20")),
        ("resume", None),
    ]


def test_a_call_with_no_step_to_take_holds_what_the_run_holds(tmp_path: Path) -> None:
    """A call whose target is already reached (until='2ep' after 2 epochs) is skipped: after a
    trained call the model holds its state already (nothing to load); first in a process, it
    takes the checkpoint the plan starts from."""
    from durations.integrations._session import Session

    calls = (CALLS[0], FitCall(loader=B, until="2ep", name="nothing"))
    session = Session(CONFIG, calls, tmp_path, TRANSFORMERS)
    assert session.begin().kind.value == "run"
    nothing = session.begin()
    assert (nothing.kind.value, nothing.segment.steps, nothing.restore_from) == ("skip", 0, None)
    scripted = plan(CONFIG, calls)
    _hf_dir(tmp_path, "pretrain/checkpoint-20", scripted.checkpoint_at(20))
    again = Session(CONFIG, calls, tmp_path, TRANSFORMERS)
    restores = [again.begin().restore_from for _ in calls]
    assert restores == [str(tmp_path / "pretrain" / "checkpoint-20")] * 2
    # First in its process: a finished run taken up under extend by a call already reached.
    _hf_dir(tmp_path, "curated/checkpoint-3", plan(CONFIG, CALLS).checkpoint_at(23))
    reached = (FitCall(loader=B, until="1ba", name="reached"),)
    extended = Session(RunConfig(resume="extend"), reached, tmp_path, TRANSFORMERS)
    first = extended.begin()
    assert (first.kind.value, first.segment.steps) == ("skip", 0)
    assert first.restore_from == str(tmp_path / "curated" / "checkpoint-3")


def test_list_checkpoints_orders_by_recorded_progress(tmp_path: Path) -> None:
    """list_checkpoints reads every candidate once and orders them by recorded progress, oldest
    first, whatever their names; latest_checkpoint is its last, and both skip an unreadable one
    with a warning."""
    from durations.integrations.checkpoints import list_checkpoints

    full = plan(CONFIG, CALLS)
    for step in (23, 13, 20):
        _hf_dir(tmp_path, HF_DIRS[step], full.checkpoint_at(step))
    (tmp_path / "pretrain" / "checkpoint-99").mkdir()
    with pytest.warns(RuntimeWarning, match="checkpoint-99"):
        listed = list_checkpoints(tmp_path, reader=TRANSFORMERS)
    assert [found.checkpoint.progress.batch for found in listed] == [13, 20, 23]
    with pytest.warns(RuntimeWarning, match="checkpoint-99"):
        assert latest_checkpoint(tmp_path, reader=TRANSFORMERS) == listed[-1]
    assert list_checkpoints(tmp_path / "missing", reader=TRANSFORMERS) == []


def test_integration_errors_are_named_by_their_public_path() -> None:
    """IntegrationError prints as durations.integrations.IntegrationError (in a traceback and
    its repr), not by the private module that raises it, and every integration module exports
    that one class."""
    import importlib
    import traceback

    from durations import DurationsError
    from durations.integrations import IntegrationError

    error = IntegrationError("call 'a': the reason")
    assert traceback.format_exception_only(error) == [
        "durations.integrations.IntegrationError: call 'a': the reason\n"
    ]
    assert repr(IntegrationError) == "<class 'durations.integrations.IntegrationError'>"
    assert isinstance(error, DurationsError)
    assert isinstance(error, RuntimeError)
    for name in ("_session", "transformers", "lightning", "keras", "composer"):
        module = importlib.import_module(f"durations.integrations.{name}")
        assert module.IntegrationError is IntegrationError, name
