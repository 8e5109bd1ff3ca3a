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
from tests.frameworks._schedule_runs import run_worker
from tests.frameworks._schedule_worker import BASE, CALLS, CONFIG, COSINE, MORE, SCHEDULE, STEPS


def _kills() -> tuple[int, int]:
    fixed = os.environ.get("DURATIONS_SCHEDULE_KILLS")
    if fixed:
        first, second = (int(k) for k in fixed.split(","))
        return first, second
    first = random.randint(1, STEPS - 3)
    return first, random.randint(first + 1, STEPS - 2)


def _run(framework: str, root: Path) -> dict[str, Any]:
    first, second = _kills()
    (root / "uncrashed").mkdir()
    (root / "crashed").mkdir()
    return {
        "kills": (first, second),
        "uncrashed": run_worker(framework, root / "uncrashed", "p0"),
        "processes": [
            run_worker(framework, root / "crashed", "p1", hold_at=first),
            run_worker(framework, root / "crashed", "p2", kill_at=second),
            run_worker(framework, root / "crashed", "p3"),
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


def test_hf_killed_before_its_ledger_resumes_from_the_last_finished_save(tmp_path: Path) -> None:
    """SIGKILL after Hugging Face's trainer_state.json of checkpoint-12 and before the
    callback's on_save wrote its durations.json (what a kill in step 11 left in CI): run again
    unchanged, the run resumes from checkpoint-11, not from the cut save, and trains every step
    at the uncrashed run's rate. The process is held after checkpoint 12 and the ledger removed,
    which is exactly that state on disk."""
    pytest.importorskip("transformers")
    curve = SCHEDULE.resolve(plan(CONFIG, CALLS))
    held = run_worker("hf", tmp_path, "p1", hold_at=12)
    assert held["killed"], held["output"]
    (tmp_path / "run" / "pretrain" / "checkpoint-12" / "durations.json").unlink()
    again = run_worker("hf", tmp_path, "p2")
    assert again["end"], again["output"]
    assert again["starts"] == [11, 20]
    assert [(s[0], s[1]) for s in again["steps"]] == [
        (k, curve.lr(k, BASE)) for k in range(11, STEPS)
    ]


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
    run = run_worker(framework, tmp_path, "ga2", accumulation=2)
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

    first = run_worker(framework, tmp_path, "p0", extra={"schedule": "cosine"})
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
        more = run_worker(framework, root, f"more-{option}", extra={"extend": option})
        assert more["returncode"] == 0, (option, more["output"])
        curve = COSINE.resolve(extended, on_extend=option)
        expected = [(k, curve.lr(k, BASE), "more") for k in range(STEPS, STEPS + 6)]
        assert [tuple(s) for s in more["steps"]] == expected, option
    stretched = COSINE.resolve(extended, on_extend="stretch")
    assert 0.1 * BASE < stretched.lr(STEPS, BASE) < BASE, "stretched: on the way down, not at 0.1"
    assert COSINE.resolve(extended, on_extend="rewarm").lr(STEPS, BASE) == 0.0


@pytest.mark.parametrize("framework", ["hf", "lightning"])
def test_a_killed_extension_run_again_finishes_on_the_stretched_curve(
    framework: str, tmp_path: Path
) -> None:
    """The extension of a finished run (RunConfig(resume="extend"), 6 steps of a new stream,
    on_extend="stretch"), killed with SIGKILL after its checkpoint at lifetime step 25 and run
    again unchanged, continues its own ledger (rule 9): the second process resumes call 'more'
    at step 25 and ends at 29, each of the 6 steps trained once at the stretched curve's rate.
    Before, the callback refused the re-run ("call 'more' starts inside an epoch")."""
    pytest.importorskip({"hf": "transformers", "lightning": "pytorch_lightning"}[framework])
    from durations import RunConfig

    first = run_worker(framework, tmp_path, "p0", extra={"schedule": "cosine"})
    assert first["returncode"] == 0, first["output"]
    extra = {"extend": "stretch"}
    killed = run_worker(framework, tmp_path, "more-1", hold_at=STEPS + 2, extra=extra)
    assert killed["killed"], killed["output"]
    assert killed["returncode"] == -signal.SIGKILL, killed["output"]
    again = run_worker(framework, tmp_path, "more-2", extra=extra)
    assert again["returncode"] == 0, again["output"]
    assert again["end"], again["output"]
    extended = plan(RunConfig(resume="extend"), MORE, plan(CONFIG, CALLS).checkpoint_at(STEPS))
    curve = COSINE.resolve(extended, on_extend="stretch")
    expected = [(k, curve.lr(k, BASE), "more") for k in range(STEPS, STEPS + 6)]
    assert (killed["starts"], again["starts"]) == ([STEPS], [STEPS + 2])
    assert [tuple(s) for s in killed["steps"] + again["steps"]] == expected
