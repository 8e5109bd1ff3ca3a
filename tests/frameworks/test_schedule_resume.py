"""A two-phase run whose learning rate comes from a durations schedule, through a framework's
callback, killed with SIGKILL from outside and run again unchanged: every optimizer step's rate
is the uncrashed run's and ``ResolvedSchedule.lr(k, base)``.

Each framework's run is three processes after an uncrashed one (``_schedule_worker.py``):

1. killed once it holds after the checkpoint of a random step ``k1`` (1-20);
2. killed at once when its log shows the rate of a random step ``k2`` (``k1 < k2 <= 21``: well
   before the run ends), not at a checkpoint: the process may be anywhere in step ``k2`` (or
   its checkpoint), and the next process trains again what that checkpoint lacks;
3. run to the end.

``DURATIONS_SCHEDULE_KILLS="k1,k2"`` fixes the kill steps; a failure names them.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from durations import plan
from tests.frameworks._kill import held_or_past, read_log, run_and_kill
from tests.frameworks._schedule_worker import BASE, CALLS, CONFIG, COSINE, MORE, SCHEDULE, STEPS

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 300.0


def _kills() -> tuple[int, int]:
    fixed = os.environ.get("DURATIONS_SCHEDULE_KILLS")
    if fixed:
        first, second = (int(k) for k in fixed.split(","))
        return first, second
    first = random.randint(1, STEPS - 3)
    return first, random.randint(first + 1, STEPS - 2)


def _process(
    framework: str,
    root: Path,
    name: str,
    *,
    hold_at: int | None = None,
    kill_at: int | None = None,
    save_on: str | None = None,
    accumulation: int = 1,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one process of the script; SIGKILL it once it holds after ``hold_at``'s checkpoint,
    or as soon as its log shows step ``kill_at`` (its steps then paced by 0.1 s, so that on a
    busy machine the kill still lands inside the run)."""
    pace = 0.1 if kill_at is not None else 0
    log = root / f"{name}.jsonl"
    job = root / f"{name}.json"
    job.write_text(
        json.dumps(
            {
                "framework": framework,
                "root": str(root / "run"),
                "log": str(log),
                "hold_at": hold_at,
                "pace": pace,
                "save_on": save_on,
                "accumulation": accumulation,
                **(extra or {}),
            }
        )
    )
    output = root / f"{name}.out"
    due = held_or_past(hold_at, kill_at)
    returncode, killed = run_and_kill(
        "tests.frameworks._schedule_worker", job, log, output, due, TIMEOUT
    )
    items = read_log(log)
    return {
        "name": name,
        "returncode": returncode,
        "killed": killed,
        "starts": [i["start"] for i in items if "start" in i],
        "steps": [(i["step"], i["lr"], i["call"]) for i in items if "step" in i],
        "end": any("end" in i for i in items),
        "output": output.read_text(errors="replace").splitlines()[-20:],
    }


def _run(framework: str, root: Path) -> dict[str, Any]:
    first, second = _kills()
    (root / "uncrashed").mkdir()
    (root / "crashed").mkdir()
    return {
        "kills": (first, second),
        "uncrashed": _process(framework, root / "uncrashed", "p0"),
        "processes": [
            _process(framework, root / "crashed", "p1", hold_at=first),
            _process(framework, root / "crashed", "p2", kill_at=second),
            _process(framework, root / "crashed", "p3"),
        ],
    }


def _check(run: dict[str, Any]) -> None:
    """The uncrashed run's rates are the resolved schedule's; every process of the killed run
    trains each lifetime step it trains at that same rate; together they train every step."""
    first, second = run["kills"]
    about = f"killed after steps {first} and {second} (DURATIONS_SCHEDULE_KILLS={first},{second})"
    curve = SCHEDULE.resolve(plan(CONFIG, CALLS))
    expected = [curve.lr(k, BASE) for k in range(STEPS)]
    full = run["uncrashed"]
    assert full["end"], (about, full["output"])
    assert full["returncode"] == 0, (about, full["output"])
    assert [s[0] for s in full["steps"]] == list(range(STEPS)), about
    assert [s[1] for s in full["steps"]] == expected, about
    assert [s[2] for s in full["steps"]] == ["pretrain"] * 20 + ["curated"] * 3, about
    p1, p2, p3 = run["processes"]
    for killed in (p1, p2):
        assert killed["killed"], (about, killed)
        assert killed["returncode"] == -signal.SIGKILL, (about, killed)
    assert p3["end"], (about, p3["output"])
    assert p3["returncode"] == 0, (about, p3["output"])
    assert p1["starts"][0] == 0, about
    assert p1["steps"][-1][0] == first - 1, about
    assert p2["starts"][0] == first, about
    # The kill lands a moment after the log shows step k2: p2 may have gone a step or two on,
    # and p3 starts at p2's last checkpoint, at most one past the last step p2 logged.
    assert p2["steps"][-1][0] >= second, about
    assert first <= p3["starts"][0] <= p2["steps"][-1][0] + 1, about
    trained: dict[int, set[float]] = {}
    for process in (p1, p2, p3):
        steps = [s[0] for s in process["steps"]]
        assert steps == list(range(process["starts"][0], process["starts"][0] + len(steps)))
        for step, lr, call in process["steps"]:
            assert (lr, call) == (full["steps"][step][1], full["steps"][step][2]), (about, step)
            trained.setdefault(step, set()).add(lr)
    assert sorted(trained) == list(range(STEPS)), about
    assert all(len(rates) == 1 for rates in trained.values()), about


@pytest.mark.parametrize("framework", ["hf", "lightning"])
def test_killed_run_follows_the_schedule_at_every_step(framework: str, tmp_path: Path) -> None:
    """Killed with SIGKILL twice at random steps (once after a checkpoint, once anywhere in a
    step) and run again unchanged, the run trains every lifetime step at the uncrashed run's
    rate, which is ResolvedSchedule.lr(k, base)."""
    pytest.importorskip({"hf": "transformers", "lightning": "pytorch_lightning"}[framework])
    run = _run(framework, tmp_path)
    processes = [(p["starts"], [s[0] for s in p["steps"]]) for p in run["processes"]]
    print(json.dumps({"kills": run["kills"], "processes": processes}))
    print(json.dumps({"rates": run["uncrashed"]["steps"]}))
    _check(run)


def test_hf_checkpoint_of_a_run_without_the_schedule_is_refused(tmp_path: Path) -> None:
    """A scheduler restored from a checkpoint whose count is not the lifetime step (the second
    call's own step count, as a run without schedule= saves it) is refused, saying why."""
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    from durations.integrations.transformers import DurationsCallback, IntegrationError

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path, schedule=SCHEDULE)
    callback.session.begin()
    callback.session.begin()  # the second call, 'curated', from lifetime step 20
    callback.session.attach(0)
    callback._check_scheduler(SimpleNamespace(last_epoch=22), 2)  # lifetime 22: fine
    with pytest.raises(IntegrationError, match=r"lifetime step 22, but .* counts 2 steps"):
        callback._check_scheduler(SimpleNamespace(last_epoch=2), 2)


def test_lightning_scheduler_of_configure_optimizers_is_refused(tmp_path: Path) -> None:
    """With a schedule, a scheduler from configure_optimizers is refused before training."""
    pytest.importorskip("pytorch_lightning")
    from types import SimpleNamespace

    from durations.integrations.lightning import DurationsCallback, IntegrationError

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path, schedule=SCHEDULE)
    callback.session.begin()
    callback._active = True
    theirs = SimpleNamespace(scheduler=object())
    strategy = SimpleNamespace(lr_scheduler_configs=[theirs], optimizers=[object()])
    with pytest.raises(IntegrationError, match="return only the optimizer"):
        callback.on_fit_start(SimpleNamespace(strategy=strategy), None)


# (TrainingArguments given with schedule=, what the refusal names; None: accepted)
HF_SCHEDULER_ARGUMENTS = [
    ({}, None),  # the defaults shape nothing the schedule does not replace
    ({"lr_scheduler_kwargs": {}}, None),  # empty kwargs are the default in another spelling
    ({"lr_scheduler_type": "cosine"}, "lr_scheduler_type='cosine'"),
    ({"warmup_steps": 5}, "warmup_steps=5"),
    (
        {"lr_scheduler_type": "constant", "warmup_steps": 0.1},
        "lr_scheduler_type='constant', warmup_steps=0.1",
    ),
]


@pytest.mark.parametrize(("given", "named"), HF_SCHEDULER_ARGUMENTS)
def test_hf_scheduler_arguments_the_schedule_replaces_are_refused(
    tmp_path: Path, given: dict[str, Any], named: str | None
) -> None:
    """With schedule=, a TrainingArguments field that shapes Hugging Face's own scheduler
    would be silently unused: callback.train refuses it before training, naming it."""
    pytest.importorskip("transformers")
    import torch
    from transformers import Trainer, TrainingArguments

    from durations.integrations.transformers import DurationsCallback, IntegrationError
    from tests.frameworks._schedule_worker import _dataset

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path, schedule=SCHEDULE)
    args = TrainingArguments(
        output_dir=str(tmp_path / "pretrain"), report_to="none", use_cpu=True, **given
    )
    trainer = Trainer(
        model=Model(), args=args, train_dataset=_dataset(CALLS[0].loader), callbacks=[callback]
    )
    trainer.train = lambda **kwargs: "trained"  # only what callback.train decides before it
    if named is None:
        assert callback.train(trainer) == "trained"
        return
    with pytest.raises(IntegrationError, match=f"TrainingArguments\\({named}\\) shape"):
        callback.train(trainer)


@pytest.mark.parametrize("framework", ["hf", "lightning"])
def test_accumulated_steps_follow_the_schedule(framework: str, tmp_path: Path) -> None:
    """With gradient accumulation 2 (5 samples per micro-batch, the same global batch of 10),
    the scheduler counts optimizer steps, not micro-batches: every optimizer step trains at
    ResolvedSchedule.lr(k, base) of the same plan, and the run takes its 23 steps."""
    pytest.importorskip({"hf": "transformers", "lightning": "pytorch_lightning"}[framework])
    run = _process(framework, tmp_path, "ga2", accumulation=2)
    assert run["returncode"] == 0, run["output"]
    assert run["end"], run["output"]
    curve = SCHEDULE.resolve(plan(CONFIG, CALLS))
    assert [(s[0], s[1]) for s in run["steps"]] == [(k, curve.lr(k, BASE)) for k in range(STEPS)]


@pytest.mark.parametrize("framework", ["hf", "lightning"])
def test_extend_follows_the_chosen_option(framework: str, tmp_path: Path) -> None:
    """A finished two-call run on a warmup-then-cosine curve, taken up under
    RunConfig(resume="extend") for 0.2 epoch of another loader (6 steps): with
    on_extend="stretch" the new steps train on the curve re-resolved on the longer run (the
    warmup where it was, the cosine stretched to the new end, so step 23 is no longer at the
    floor), with "rewarm" on a fresh curve from step 23 (factor 0 there, a new warmup)."""
    pytest.importorskip({"hf": "transformers", "lightning": "pytorch_lightning"}[framework])
    from durations import RunConfig

    first = _process(framework, tmp_path, "p0", extra={"schedule": "cosine"})
    assert first["returncode"] == 0, first["output"]
    assert len(first["steps"]) == STEPS, first["steps"]
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    finished = plan(CONFIG, CALLS)
    extended = plan(RunConfig(resume="extend"), MORE, finished.checkpoint_at(STEPS))
    assert (extended.start.batch, extended.stop.batch) == (STEPS, STEPS + 6)
    for option, root in (("stretch", tmp_path), ("rewarm", tmp_path / "copy-root")):
        if option == "rewarm":
            root.mkdir()
            shutil.move(tmp_path / "copy", root / "run")
        more = _process(framework, root, f"more-{option}", extra={"extend": option})
        assert more["returncode"] == 0, (option, more["output"])
        curve = COSINE.resolve(extended, on_extend=option)
        expected = [(k, curve.lr(k, BASE), "more") for k in range(STEPS, STEPS + 6)]
        assert [tuple(s) for s in more["steps"]] == expected, option
    stretched = COSINE.resolve(extended, on_extend="stretch")
    assert 0.1 * BASE < stretched.lr(STEPS, BASE) < BASE, "stretched: on the way down, not at 0.1"
    assert COSINE.resolve(extended, on_extend="rewarm").lr(STEPS, BASE) == 0.0
