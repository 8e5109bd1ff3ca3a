"""Run audits of real runs: a Hugging Face CPU training writes its step log through the durations
callback (``step_log=``), is SIGKILLed from outside in the middle of an epoch and run again, and
``durations audit`` passes the log; the same log with one batch's indices replaced is flagged at
that step; a real torchdata ``StatefulDataLoader`` whose saved state is frozen is flagged. The
same script on Lightning (``_audit_lightning_worker``), its loaders rebuilt around the order's
sampler and their indices logged through the callback's ``IndexTap``, is killed inside a step
and run again: its log passes, and a replaced batch is flagged at its step.

The script (``SCENARIO``): 2 epochs of ``a`` (100 samples, batch 10, shuffled), then 0.1 epoch
of ``b`` (300 samples, batch 10, in order): 23 steps, a checkpoint every 4 steps and at each
call's end, a warmup over 5 steps then a linear decay to 0. Each item is its index, and the
model records the items of every step it trains, so the step log's indices are checked against
what the model read, not only against the plan.

``python -m tests.frameworks.test_audit_runs JOB_DIR`` runs one process of the script.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from durations.audit import StepLog, audit
from durations.cli import main as durations
from durations.planner import plan
from durations.scenario import Scenario

from ._kill import held_or_past, read_log, run_and_kill

SCENARIO = """
[run]
max_duration = "2ep"

[loaders.a]
samples = 100
batch_size = 10
order = "shuffled"
seed = 3

[loaders.b]
samples = 300
batch_size = 10
order = "sequential"

[[fit]]
loader = "a"
name = "pretrain"

[[fit]]
loader = "b"
duration = "0.1ep"
name = "curated"

[schedule]
warmup = "5ba"

[[schedule.pieces]]
kind = "linear"
to = 0
until = "end"
"""
BASE_LR = 0.01
#: The kill comes once the log shows this step: 2 steps after the checkpoint at 12, inside the
#: second epoch of ``a``.
KILL_AT = 14


def main(job_dir: Path) -> None:
    """One process of the script (frameworks imported here: the main suite collects this file)."""
    import torch
    import transformers
    from torch.utils.data import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    from durations.integrations.transformers import DurationsCallback

    transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    transformers.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    warnings.simplefilter("ignore")
    scenario = Scenario.from_toml((job_dir / "run.toml").read_text())
    root = job_dir / "checkpoints"

    class IdDataset(Dataset[dict[str, torch.Tensor]]):
        def __init__(self, samples: int) -> None:
            self.n = samples

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return {"x": torch.tensor([float(index)]), "labels": torch.tensor([0.0])}

    class IdModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.pending: list[int] = []

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            if self.training:
                self.pending += [int(v) for v in x[:, 0].tolist()]
                time.sleep(0.03)  # a step slow enough for the kill to land inside the run
            return {"loss": ((self.layer(x / 100) - labels) ** 2).mean()}

    torch.manual_seed(0)
    model = IdModel()
    callback = DurationsCallback(
        scenario.config,
        scenario.calls,
        checkpoints=root,
        schedule=scenario.schedule,
        save_on="4ba",
        step_log=job_dir / "steps.jsonl",
    )
    seen = (job_dir / "seen.jsonl").open("a", encoding="utf-8")

    class Probe(TrainerCallback):  # type: ignore[misc, unused-ignore]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            seen.write(json.dumps({"step": callback.lifetime_step, "ids": model.pending}) + "\n")
            seen.flush()
            model.pending = []

    for call in scenario.calls:
        args = TrainingArguments(
            output_dir=str(root / (call.name or "")),
            per_device_train_batch_size=10,
            learning_rate=BASE_LR,
            max_steps=1000,  # the callback stops each call
            save_strategy="no",  # only the callback's grid
            ignore_data_skip=True,  # the order's sampler starts at the plan's position
            report_to="none",
            disable_tqdm=True,
            logging_strategy="no",
            use_cpu=True,
            seed=0,
            dataloader_num_workers=0,
        )
        samples = call.loader.samples or 0
        trainer = Trainer(
            model=model, args=args, train_dataset=IdDataset(samples), callbacks=[callback, Probe()]
        )
        trainer.remove_callback(PrinterCallback)
        callback.train(trainer)


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The script killed once the log shows step 14, then run again to its end."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("transformers")
        pytest.importorskip("accelerate")
    job = tmp_path_factory.mktemp("audit-hf")
    (job / "run.toml").write_text(SCENARIO)
    log = job / "steps.jsonl"
    module = "tests.frameworks.test_audit_runs"
    code, killed = run_and_kill(
        module, job, log, job / "first.out", held_or_past(None, KILL_AT), timeout=60
    )
    assert killed, (job / "first.out").read_text()[-3000:]
    code, killed = run_and_kill(module, job, log, job / "second.out", lambda _: False, timeout=60)
    assert code == 0, (job / "second.out").read_text()[-3000:]
    return job


def _plan_steps() -> int:
    scenario = Scenario.from_toml(SCENARIO)
    return plan(scenario.config, scenario.calls).total_steps


def test_the_killed_and_rerun_log_passes(
    killed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log of the killed job and its re-run follows the plan: the audit exits 0, with one
    restart, from the newest checkpoint logged (step 12) at step 13."""
    code = durations(["audit", str(killed_run / "run.toml"), str(killed_run / "steps.jsonl")])
    out = capsys.readouterr().out
    (killed_run / "audit.txt").write_text(out)
    assert code == 0, out
    result = json.loads(_json(killed_run, capsys))
    assert [(r["step"], r["checkpoint"]) for r in result["restarts"]] == [(13, 12)]
    assert [s["step"] for s in result["steps"]] == list(range(1, _plan_steps() + 1))
    assert {(s["data"], s["lr"]) for s in result["steps"]} == {("ok", "ok")}
    assert result["base_lr"] == BASE_LR


def _json(job: Path, capsys: pytest.CaptureFixture[str], log: str = "steps.jsonl") -> str:
    durations(["audit", str(job / "run.toml"), str(job / log), "--json"])
    return capsys.readouterr().out


def test_the_logged_indices_are_what_the_model_read(killed_run: Path) -> None:
    """Independently of the plan: each step's logged indices are the items the model trained on
    in that step (the last of each step, over both processes), and steps 13 and on were logged
    twice (the kill lost them)."""
    logged = {
        r.step: r
        for r in StepLog.parse((killed_run / "steps.jsonl").read_text().splitlines()).records
        if r.indices is not None
    }
    read = {item["step"]: item["ids"] for item in read_log(killed_run / "seen.jsonl")}
    assert set(logged) == set(read) == set(range(1, _plan_steps() + 1))
    for step, record in logged.items():
        assert record.indices is not None
        assert [sorted(values) for _, values in record.indices] == [sorted(read[step])], step
    steps = [item["step"] for item in read_log(killed_run / "steps.jsonl") if "indices" in item]
    assert steps.count(13) == 2
    assert steps.count(KILL_AT) == 2


def test_a_replaced_batch_is_flagged_at_its_step(
    killed_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same log with step 17's indices replaced by step 16's: flagged at step 17 (exit 1),
    its log and plan values named."""
    items = [json.loads(line) for line in (killed_run / "steps.jsonl").read_text().splitlines()]
    last = {item["step"]: i for i, item in enumerate(items) if "indices" in item}
    items[last[17]]["indices"] = items[last[16]]["indices"]
    broken = killed_run / "broken.jsonl"
    broken.write_text("".join(json.dumps(item) + "\n" for item in items))
    code = durations(["audit", str(killed_run / "run.toml"), str(broken)])
    out = capsys.readouterr().out
    (killed_run / "broken.txt").write_text(out)
    assert code == 1
    first = json.loads(_json(killed_run, capsys, "broken.jsonl"))["first"]
    assert (first["step"], first["kind"], first["rule"]) == (17, "indices", "19")


def test_a_frozen_stateful_dataloader_state_is_flagged() -> None:
    """A real torchdata StatefulDataLoader read step by step over one epoch of ``a``, its
    state_dict() saved after steps 3 and 6: the honest states pass; the state of step 3 saved
    again at step 6 (frozen), or a fresh loader's state (restarted), is flagged at step 6."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stateful = pytest.importorskip("torchdata.stateful_dataloader")
    from durations import FitCall, Loader, Order, RunConfig
    from durations.audit import StepRecord
    from durations.integrations._steplog import loader_state_counts

    loader = Loader(samples=100, batch_size=10, name="a", order=Order.sequential())
    run = plan(RunConfig(max_duration="1ep"), [FitCall(loader=loader)])

    def records(states: dict[int, Any]) -> list[StepRecord]:
        return [
            StepRecord.from_dict(
                {
                    "step": k,
                    "indices": batch,
                    "checkpoint": None
                    if k not in states
                    else {"path": f"ckpt-{k}", "loader_state": loader_state_counts(states[k])},
                },
                line=k,
            )
            for k, batch in enumerate(batches, start=1)
        ]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = stateful.StatefulDataLoader(list(range(100)), batch_size=10)
        batches: list[list[int]] = []
        states: dict[int, Any] = {}
        for batch in data:
            batches.append([int(v) for v in batch])
            if len(batches) in (3, 6):
                states[len(batches)] = data.state_dict()
        fresh = stateful.StatefulDataLoader(list(range(100)), batch_size=10).state_dict()
    assert audit(run, records(states)).ok
    for state, why in ((states[3], "frozen"), (fresh, "restarted")):
        first = audit(run, records({3: states[3], 6: state})).first
        assert first is not None, why
        assert (first.step, first.kind) == (6, "loader-state"), (why, first)


LIGHTNING_SCENARIO = """
[run]
max_duration = "1.5ep"

[loaders.a]
samples = 100
batch_size = 10

[[fit]]
loader = "a"

[schedule]
warmup = "3ba"
"""


def test_a_lightning_run_with_a_stateful_dataloader_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Lightning run on a torchdata StatefulDataLoader writes its step log through the
    callback: each checkpoint's saved loader state (steps 4, 8, 12 and the end, 15) is where the
    plan is in the epoch, each rate the schedule's: the audit passes. The log's loader states
    are Lightning's own (its fit loop's combined_loader), not the plan's: at step 12 it says
    20 samples of the second epoch were read."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pl = pytest.importorskip("pytorch_lightning")
        stateful = pytest.importorskip("torchdata.stateful_dataloader")
    import torch

    from durations.integrations.lightning import DurationsCallback

    scenario = Scenario.from_toml(LIGHTNING_SCENARIO)

    class Model(pl.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            loss: torch.Tensor = (self.layer(batch[:, None] / 100) ** 2).mean()
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=BASE_LR)

    log = tmp_path / "steps.jsonl"
    callback = DurationsCallback(
        scenario.config,
        scenario.calls,
        checkpoints=tmp_path / "ckpts",
        schedule=scenario.schedule,
        save_on="4ba",
        step_log=log,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = pl.Trainer(
            accelerator="cpu",
            max_epochs=-1,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            callbacks=[callback],
        )
        data = stateful.StatefulDataLoader(torch.arange(100.0), batch_size=10)
        callback.fit(trainer, Model(), data)
    (tmp_path / "run.toml").write_text(LIGHTNING_SCENARIO)
    result = json.loads(_json(tmp_path, capsys))
    assert result["ok"], result["divergences"]
    saved = [s["step"] for s in result["steps"] if s["checkpoint"] == "ok"]
    assert saved == [4, 8, 12, 15]
    items = [json.loads(line) for line in log.read_text().splitlines()]
    state = next(
        i["checkpoint"]["loader_state"]
        for i in items
        if "checkpoint" in i and i["checkpoint"] and i["step"] == 12
    )
    assert state["_sampler_iter_state"] == {"samples_yielded": 20}


#: The Lightning run is held, and killed, inside the training step after this one (its batch
#: read, the step not taken): 2 steps after the checkpoint at 12, inside the second epoch of
#: ``a``, not at a checkpoint.
LIGHTNING_KILL_AT = 14


@pytest.fixture(scope="module")
def killed_lightning_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The script on Lightning (``_audit_lightning_worker``), the callback rebuilding each
    loader around the order's sampler and logging its indices: killed inside step 15, then
    run again to its end."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("pytorch_lightning")
    job = tmp_path_factory.mktemp("audit-lightning")
    (job / "run.toml").write_text(SCENARIO)
    module = "tests.frameworks._audit_lightning_worker"
    seen = job / "seen.jsonl"
    (job / "job.json").write_text(json.dumps({"hold_at": LIGHTNING_KILL_AT}))
    code, killed = run_and_kill(
        module, job, seen, job / "first.out", held_or_past(LIGHTNING_KILL_AT, None), timeout=60
    )
    assert killed, (job / "first.out").read_text()[-3000:]
    (job / "job.json").write_text(json.dumps({"hold_at": None}))
    code, killed = run_and_kill(module, job, seen, job / "second.out", lambda _: False, timeout=60)
    assert code == 0, (job / "second.out").read_text()[-3000:]
    return job


def _last_records(job: Path) -> dict[int, dict[str, Any]]:
    """The last record with indices of each step in the job's step log, read as plain JSON."""
    return {item["step"]: item for item in read_log(job / "steps.jsonl") if "indices" in item}


def test_the_killed_and_rerun_lightning_log_passes(
    killed_lightning_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Lightning job's log follows the plan: exit 0; every step's indices checked (the
    loader has an order); one restart, named in the text with its log line (the re-run's first
    record, found in the file here), at step 13 from the checkpoint after step 12; the
    callback's checkpoints at its grid (4, 8, 12, 16) and at each call's end (20, 23)."""
    job = killed_lightning_run
    code = durations(["audit", str(job / "run.toml"), str(job / "steps.jsonl")])
    out = capsys.readouterr().out
    (job / "audit.txt").write_text(out)
    assert code == 0, out
    lines = [json.loads(text) for text in (job / "steps.jsonl").read_text().splitlines()]
    records = [(n, item["step"]) for n, item in enumerate(lines, start=1) if "indices" in item]
    again = [n for (_, k0), (n, k) in itertools.pairwise(records) if k <= k0]
    assert len(again) == 1
    restart = (
        f"restart at log line {again[0]}: step 13 again, the newest checkpoint logged before "
        "it after step 12"
    )
    assert restart in out, out
    assert "1 restart\n" in out, out
    assert out.rstrip().endswith("the run followed the plan"), out
    result = json.loads(_json(job, capsys))
    assert [(r["step"], r["checkpoint"]) for r in result["restarts"]] == [(13, 12)]
    assert [s["step"] for s in result["steps"]] == list(range(1, _plan_steps() + 1))
    assert {(s["data"], s["lr"]) for s in result["steps"]} == {("ok", "ok")}
    saved = {s["step"]: s["checkpoint"] for s in result["steps"] if s["checkpoint"] is not None}
    # Unchecked: the order's sampler starts where the plan is, so Lightning saves no loader
    # state of a plain DataLoader (the log says null) and there is no position to check.
    assert saved == dict.fromkeys([4, 8, 12, 16, 20, 23], "unchecked")
    assert result["base_lr"] == BASE_LR


def test_the_lightning_indices_are_what_the_model_read(killed_lightning_run: Path) -> None:
    """Independently of the plan: each step's logged indices (rank 0's) are the items the
    model trained on in that step; each epoch of ``a`` reads every item once, the second in
    another order than the first (across the kill: nothing skipped or read twice); ``b``
    reads its first 30 items in order; steps 13 and 14 were logged twice (the kill lost
    them), step 15 once (the kill came before it ended)."""
    job = killed_lightning_run
    logged = _last_records(job)
    read = {item["step"]: item["ids"] for item in read_log(job / "seen.jsonl") if "step" in item}
    assert set(logged) == set(read) == set(range(1, _plan_steps() + 1))
    for step, record in logged.items():
        assert record["indices"] == {"0": read[step]}, step
    epochs = [[i for k in range(s, s + 10) for i in read[k]] for s in (1, 11)]
    assert [sorted(e) for e in epochs] == [list(range(100))] * 2
    assert epochs[0] != epochs[1]
    assert [i for k in (21, 22, 23) for i in read[k]] == list(range(30))
    steps = [item["step"] for item in read_log(job / "steps.jsonl") if "indices" in item]
    assert [steps.count(k) for k in (12, 13, 14, 15)] == [1, 2, 2, 1]


@pytest.mark.parametrize(
    ("step", "source"),
    [
        (14, 13),  # a step the kill lost: its re-run record (the last) is the one checked
        (22, 21),  # the second call, read in order
    ],
)
def test_a_replaced_lightning_batch_is_flagged_at_its_step(
    killed_lightning_run: Path, capsys: pytest.CaptureFixture[str], step: int, source: int
) -> None:
    """The Lightning log with the last record of ``step`` given the indices of ``source``:
    flagged at ``step`` (exit 1), as an index divergence (rule 19)."""
    job = killed_lightning_run
    items = [json.loads(line) for line in (job / "steps.jsonl").read_text().splitlines()]
    last = {item["step"]: i for i, item in enumerate(items) if "indices" in item}
    items[last[step]]["indices"] = items[last[source]]["indices"]
    broken = job / f"broken-{step}.jsonl"
    broken.write_text("".join(json.dumps(item) + "\n" for item in items))
    code = durations(["audit", str(job / "run.toml"), str(broken)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"first divergence at step {step}\n" in out, out
    first = json.loads(_json(job, capsys, broken.name))["first"]
    assert (first["step"], first["line"], first["kind"], first["rule"]) == (
        step,
        last[step] + 1,
        "indices",
        "19",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
