"""End-to-end tests of the Composer integration on real Composer 0.32.1 (CPU), in the
environment ``.ci/composer-env`` makes; every test skips where Composer is not installed.

The kill tests run ``_composer_integration_worker.py`` (the README's two-phase script at toy
size, 23 steps, one ``Trainer`` with ``autoresume=True``) as separate processes and kill them
with SIGKILL from outside: once a process holds after the checkpoint of a random step, and once
at a random moment of a random step (paced, so the kill lands inside the run), then run the same
script again, unchanged. The other tests run Composer in this process, where a crash is an
exception raised right after a checkpoint (as in ``test_conformance.py``).

``DURATIONS_COMPOSER_KILLS="k1,k2,k3"`` fixes the kill steps of the random kill test; a failure
names them.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from durations import Loader, Progress, plan
from durations.scenario import Scenario
from durations.testing import StepRecord, check_trainer, compare, expected_steps
from tests.frameworks._common import quiet
from tests.frameworks._composer_integration_worker import (
    CALLS,
    CONFIG,
    OFFSETS,
    RESET_CALLS,
    STEPS,
)
from tests.frameworks._kill import held_or_past, read_log, run_and_kill

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 300.0
LOGGERS = ["composer"]


def _quiet() -> contextlib.AbstractContextManager[None]:
    return quiet(LOGGERS)


@pytest.fixture(scope="module")
def composer() -> Iterator[None]:
    with _quiet():
        pytest.importorskip("torch")
        pytest.importorskip("composer")
    yield
    with _quiet():
        # Composer's CheckpointSaver makes a temporary folder it removes only in close(); a
        # trainer refused in its constructor cannot be closed, and the folder goes with it.
        gc.collect()


# -- processes of the script, killed from outside -------------------------------------------------


def _process(
    root: Path,
    name: str,
    *,
    hold_at: int | None = None,
    kill_at: int | None = None,
    reset: bool = False,
    save_on: str | None = None,
) -> dict[str, Any]:
    """Run one process of the script; SIGKILL it once it holds after ``hold_at``'s checkpoint,
    or as soon as its log shows step ``kill_at`` (its steps then paced by 0.1 s)."""
    log = root / f"{name}.jsonl"
    job = root / f"{name}.json"
    pace = 0.1 if kill_at is not None else 0
    job.write_text(
        json.dumps(
            {"root": str(root / "run"), "log": str(log), "hold_at": hold_at, "pace": pace}
            | {"reset": reset, "save_on": save_on}
        )
    )
    output = root / f"{name}.out"
    due = held_or_past(hold_at, kill_at)
    returncode, killed = run_and_kill(
        "tests.frameworks._composer_integration_worker", job, log, output, due, TIMEOUT
    )
    items = read_log(log)
    return {
        "name": name,
        "returncode": returncode,
        "killed": killed,
        "start": next((i["start"] for i in items if "start" in i), None),
        "steps": [(i["step"], i["call"], tuple(i["ids"])) for i in items if "step" in i],
        "after": {i["after"]: i["state"] for i in items if "after" in i},
        "end": next((i["end"] for i in items if "end" in i), None),
        "output": output.read_text(errors="replace").splitlines()[-20:],
    }


def _records(steps: list[tuple[int, str, tuple[int, ...]]]) -> list[StepRecord]:
    """The steps as ``StepRecord``s: loader by id range, in-epoch indices, and the lifetime
    epoch as the stream shows it (a new loader, or ids starting over, is a new epoch)."""
    records, epoch, previous = [], -1, None
    for _, call, ids in steps:
        loader = "b" if ids[0] >= OFFSETS["b"] else "a"
        samples = tuple(i - OFFSETS[loader] for i in ids)
        if previous is None or previous[0] != loader or samples[0] <= previous[1]:
            epoch += 1
        previous = (loader, samples[-1])
        records.append(StepRecord(call, loader, epoch, samples))
    return records


def _check_killed_run(
    processes: list[dict[str, Any]], full: dict[str, Any], about: str, calls: Any
) -> None:
    """Every process trains lifetime steps in order from where it starts, each step on the
    uncrashed run's samples; the last process ends at step 23; the steps that count (each
    lifetime step as its last process trained it: a step trained again is one whose checkpoint
    the kill cut off) are the plan's steps, checked by durations.testing.compare."""
    *killed, last = processes
    for process in killed:
        assert process["killed"], (about, process)
        assert process["returncode"] == -signal.SIGKILL, (about, process)
    assert last["returncode"] == 0, (about, last["output"])
    assert last["end"] == STEPS, (about, last)
    assert processes[0]["start"] == 0, about
    uncrashed = {step: (call, ids) for step, call, ids in full["steps"]}
    counted: dict[int, tuple[int, str, tuple[int, ...]]] = {}
    for process in processes:
        steps = [s[0] for s in process["steps"]]
        if steps:
            assert steps == list(range(process["start"] + 1, process["start"] + 1 + len(steps)))
        for step, call, ids in process["steps"]:
            assert (call, ids) == uncrashed[step], (about, process["name"], step)
            counted[step] = (step, call, ids)
    for before, after in itertools.pairwise(processes):
        if after["start"] is None:
            continue  # held at once: its start is past the step it was to hold at
        trained = [s[0] for s in before["steps"]]
        if trained:
            # It resumes where the one before checkpointed last: after its last step, or,
            # killed anywhere, possibly one step before (the checkpoint of that step cut off).
            assert after["start"] in {trained[-1], trained[-1] - 1}, about
    effective = [counted[k] for k in sorted(counted)]
    assert [s[0] for s in effective] == list(range(1, STEPS + 1)), about
    scenario = Scenario(
        config=CONFIG, loaders={"a": CALLS[0].loader, "b": CALLS[1].loader}, calls=calls
    )
    compare(scenario, (), _records(effective))
    planned = expected_steps(plan(CONFIG, calls))
    ids = collections.Counter(i for _, _, step_ids in effective for i in step_ids)
    want = collections.Counter(
        OFFSETS[r.loader or ""] + sample for r in planned for sample in r.samples
    )
    assert ids == want, about


@pytest.fixture(scope="module")
def uncrashed(composer: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("composer-uncrashed")
    return _process(root, "p0") | {"root": root}


def test_uncrashed_run_is_the_plan(uncrashed: dict[str, Any]) -> None:
    """One Trainer, two callback.fit calls: 20 steps on A (ids 0-99 twice), then 3 on B (ids
    1000-1029), the plan's 23; no fit(duration='0.1ep') is needed (Composer rejects it)."""
    assert uncrashed["returncode"] == 0, uncrashed["output"]
    assert (uncrashed["start"], uncrashed["end"]) == (0, STEPS)
    steps = uncrashed["steps"]
    assert [s[0] for s in steps] == list(range(1, STEPS + 1))
    assert [s[1] for s in steps] == ["pretrain"] * 20 + ["curated"] * 3
    ids = [s[2] for s in steps]
    assert ids[:10] == [tuple(range(i, i + 10)) for i in range(0, 100, 10)]
    assert ids[10:20] == ids[:10]
    assert ids[20:] == [tuple(range(i, i + 10)) for i in range(1000, 1030, 10)]


def test_rerun_of_a_finished_script_trains_nothing(uncrashed: dict[str, Any]) -> None:
    """Run again on the finished run's checkpoints, the script trains no step: both calls
    are finished in the ledger (Composer's own autoresume would add 2ep and then 0.1ep again);
    after each skipped call the trainer holds the uninterrupted run's weights and momentum
    after it, bit for bit (Composer's autoresume alone leaves the end of the run there after
    the first call too)."""
    after = uncrashed["after"]
    assert list(after) == ["pretrain", "curated"]
    assert after["pretrain"]["model"] != after["curated"]["model"]  # the weights do change
    again = _process(uncrashed["root"], "again")
    assert again["returncode"] == 0, again["output"]
    assert (again["start"], again["steps"], again["end"]) == (None, [], STEPS)
    assert again["after"] == after


def test_killed_in_the_second_call_the_first_s_skip_holds_its_final_state(
    uncrashed: dict[str, Any], tmp_path: Path
) -> None:
    """Killed with SIGKILL after step 22's checkpoint and run again: Composer's autoresume
    loads step 22 into the trainer when it is built, yet right after the first call's skipped
    fit the trainer holds the end of that call (step 20's weights and momentum); the second
    call then resumes from step 22, and the run ends with the uninterrupted run's state, bit
    for bit."""
    killed = _process(tmp_path, "p1", hold_at=22)
    assert killed["killed"], killed["output"]
    assert killed["returncode"] == -signal.SIGKILL, killed["output"]
    again = _process(tmp_path, "p2")
    assert again["returncode"] == 0, again["output"]
    assert (again["start"], again["end"]) == (22, STEPS)
    assert again["after"] == uncrashed["after"]


def _kills() -> tuple[int, int, int]:
    fixed = os.environ.get("DURATIONS_COMPOSER_KILLS")
    if fixed:
        first, second, third = (int(k) for k in fixed.split(","))
        return first, second, third
    first = random.randint(1, 18)
    second = random.randint(first + 1, 20)
    return first, second, random.randint(second + 2, STEPS - 1)


def test_killed_three_times_at_random_steps_trains_the_plan(
    uncrashed: dict[str, Any], tmp_path: Path
) -> None:
    """Killed with SIGKILL after the checkpoint of a random step, at a random moment of a later
    step, and after the checkpoint of a third, and run again unchanged each time, the script
    trains the plan's 23 steps on the plan's samples: each call to its stop, the duration never
    added twice, a step trained twice only where the kill cut its checkpoint off. Composer's
    latest-rank0.pt symlink is removed after the first kill and pointed at the checkpoint of
    step 1 after the third: the callback resumes from the newest checkpoint by recorded
    progress all the same."""
    first, second, third = _kills()
    about = (
        f"killed at {first}, {second}, {third} (DURATIONS_COMPOSER_KILLS={first},{second},{third})"
    )
    run = tmp_path / "run"
    processes = [_process(tmp_path, "p1", hold_at=first)]
    # Killed between removing Composer's latest-rank0.pt symlink and making it anew: Composer's
    # autoresume would start from scratch.
    (run / "latest-rank0.pt").unlink()
    processes.append(_process(tmp_path, "p2", kill_at=second))
    processes.append(_process(tmp_path, "p3", hold_at=third))
    # The symlink names an older checkpoint: Composer's autoresume would resume there.
    (run / "latest-rank0.pt").unlink()
    (run / "latest-rank0.pt").symlink_to("ep0-ba1-rank0.pt")
    processes.append(_process(tmp_path, "p4"))
    summary = [(p["start"], [s[0] for s in p["steps"]], p["end"]) for p in processes]
    print(json.dumps({"kills": [first, second, third], "processes": summary}))
    assert processes[0]["steps"][-1][0] == first, about
    assert processes[1]["start"] == first, about
    _check_killed_run(processes, uncrashed, about, CALLS)


def test_reset_time_is_applied_once_across_a_kill(
    uncrashed: dict[str, Any], tmp_path: Path
) -> None:
    """The second call with reset_time=True, killed after its first step: Composer's clock is
    reset when the call starts and not again when it resumes (Composer's own autoresume would
    reset it again and train B from its start), and the run trains the plan's steps."""
    processes = [
        _process(tmp_path, "p1", hold_at=21, reset=True),
        _process(tmp_path, "p2", reset=True),
    ]
    assert processes[1]["start"] == 21
    _check_killed_run(processes, uncrashed, "reset_time, killed after step 21", RESET_CALLS)


def test_composer_checkpoint_carries_the_ledger(uncrashed: dict[str, Any], tmp_path: Path) -> None:
    """A real Composer checkpoint reads back as the plan's checkpoint at its step (the ledger
    rides in the callback's state); without it, Composer's own counters give the exact
    progress, with ledger=None."""
    import torch

    from durations.integrations.checkpoints import (
        COMPOSER,
        _torch_load,
        latest_checkpoint,
        read_composer_checkpoint,
    )

    run = uncrashed["root"] / "run"
    assert read_composer_checkpoint(run / "ep1-ba13-rank0.pt") == plan(CONFIG, CALLS).checkpoint_at(
        13
    )
    found = latest_checkpoint(run, reader=COMPOSER)
    assert found is not None
    assert found.checkpoint == plan(CONFIG, CALLS).checkpoint_at(STEPS)
    data = _torch_load(str(run / "ep1-ba13-rank0.pt"))
    del data["state"]["callbacks"]["DurationsCallback"]
    bare = tmp_path / "ep1-ba13-rank0.pt"
    torch.save(data, bare)
    checkpoint = read_composer_checkpoint(bare)
    assert checkpoint.ledger is None
    assert checkpoint.progress == Progress(
        epoch=1, batch=13, sample=130, token=0, batch_in_epoch=3, sample_in_epoch=30,
        token_in_epoch=0,
    )  # fmt: skip


# -- in this process: refusals, and the conformance harness ---------------------------------------


def _items(loader: Loader, index: int = 0) -> Any:
    import torch

    return [
        (torch.tensor([float(index), float(i)]), torch.tensor(i))
        for i in range(loader.samples or 0)
    ]


def _model(log: list[tuple[int, tuple[int, ...]]] | None = None, crash: int | None = None) -> Any:
    import torch
    from composer.models import ComposerModel

    class Model(ComposerModel):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def forward(self, batch: Any) -> torch.Tensor:
            x, _ = batch
            if self.training and log is not None:
                if len(log) == crash:
                    raise Crash(f"killed after step {crash}")
                calls = {int(c) for c in x[:, 0].tolist()}
                assert len(calls) == 1, f"a batch mixes the items of calls {sorted(calls)}"
                log.append((calls.pop(), tuple(int(i) for i in x[:, 1].tolist())))
            out: torch.Tensor = self.layer(x)
            return out

        def loss(self, outputs: Any, batch: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
            loss: torch.Tensor = (outputs**2).mean()
            return loss

    return Model()


class Crash(Exception):  # noqa: N818 - it is not an error: the simulated kill of a process
    """The simulated kill of a process of the script."""


def _trainer(root: Path, callback: Any, model: Any, **overrides: Any) -> Any:
    import torch
    from composer import Trainer

    arguments: dict[str, Any] = {
        "model": model,
        "optimizers": torch.optim.SGD(model.parameters(), lr=0.01),
        "device": "cpu",
        "callbacks": [callback],
        "progress_bar": False,
        "log_to_console": False,
        "seed": 0,
        "run_name": "run",
        "save_folder": str(root),
        "save_interval": "1ba",
        "save_overwrite": True,
        "autoresume": True,
    }
    return Trainer(**(arguments | overrides))


REFUSED = [
    # The DataLoader's batch is not the plan loader's.
    (
        {"batch_size": 5},
        {},
        "call 'pretrain': the train_dataloader's batch_size is 5, the plan's loader has "
        "batch_size=10; make them agree",
    ),
    # drop_last differs from the plan loader's.
    (
        {"batch_size": 10, "drop_last": True},
        {},
        "call 'pretrain': the train_dataloader has drop_last=True, the plan's loader has "
        "drop_last=False; make them agree",
    ),
    # An epoch cut short by Composer: another epoch length than the plan's.
    (
        {"batch_size": 10},
        {"train_subset_num_batches": 5},
        "call 'pretrain': Composer has 5 batches per epoch (the train_dataloader's length, or "
        "fit(train_subset_num_batches=...)), the plan's loader 10 (samples=100, batch_size=10); "
        "make them agree",
    ),
    # Composer's max_duration scaled below the plan's stop.
    (
        {"batch_size": 10},
        {"scale_schedule_ratio": 0.5, "schedulers": []},
        "call 'pretrain' needs Composer to train to batch 20, but its max_duration is 10ba "
        "(fit(scale_schedule_ratio=...) scales it, and an algorithm or callback may change "
        "it): leave max_duration to the callback",
    ),
]


@pytest.mark.usefixtures("composer")
@pytest.mark.parametrize(("loader", "fit", "message"), REFUSED)
def test_a_fit_that_cannot_follow_the_plan_is_refused_before_its_first_step(
    tmp_path: Path, loader: dict[str, Any], fit: dict[str, Any], message: str
) -> None:
    """Batch size, drop_last, epoch length and max_duration are checked at fit start, with an
    error that names the bad input and the fix; nothing is trained."""
    from torch.utils.data import DataLoader

    from durations.integrations.composer import DurationsCallback, IntegrationError

    log: list[tuple[int, tuple[int, ...]]] = []
    with _quiet():
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
        trainer = _trainer(tmp_path, callback, _model(log))
        data = DataLoader(_items(CALLS[0].loader), **loader)
        try:
            with pytest.raises(IntegrationError) as caught:
                callback.fit(trainer, train_dataloader=data, **fit)
        finally:
            trainer.close()
    assert str(caught.value) == message
    assert log == []


@pytest.mark.usefixtures("composer")
def test_script_mistakes_are_refused(tmp_path: Path) -> None:
    """save_overwrite=False (a checkpoint cut short by a kill would stop every re-run), a save
    folder outside checkpoints, trainer.fit() called directly, a duration passed to
    callback.fit, and a second Trainer for the same callback are refused, naming the fix."""
    from torch.utils.data import DataLoader

    from durations.integrations.composer import DurationsCallback, IntegrationError

    data = DataLoader(_items(CALLS[0].loader), batch_size=10)
    with _quiet():
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
        with pytest.raises(IntegrationError, match=r"pass Trainer\(save_overwrite=True\)"):
            _trainer(tmp_path, callback, _model(), save_overwrite=False)
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path / "elsewhere")
        with pytest.raises(IntegrationError, match="outside the callback's checkpoints="):
            _trainer(tmp_path / "run", callback, _model())
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
        trainer = _trainer(tmp_path, callback, _model())
        try:
            with pytest.raises(TypeError, match="the callback decides duration and reset_time"):
                callback.fit(trainer, train_dataloader=data, duration="2ep")
            with pytest.raises(IntegrationError, match=r"callback\.fit\(trainer, \.\.\.\)"):
                trainer.fit(train_dataloader=data, duration="1ba")
        finally:
            trainer.close()
        with pytest.raises(IntegrationError, match="build one Trainer per process"):
            _trainer(tmp_path, callback, _model())


# -- checkpoint intervals from the plan -----------------------------------------------------------


def _saved_steps(root: Path) -> list[int]:
    """The lifetime step of every checkpoint Composer wrote in ``root``, as each records it."""
    from durations.integrations.checkpoints import read_composer_checkpoint

    return sorted(read_composer_checkpoint(p).progress.batch for p in root.glob("ep*-ba*-rank0.pt"))


@pytest.mark.usefixtures("composer")
def test_save_on_saves_on_the_plan_s_grid(tmp_path: Path) -> None:
    """save_on="0.25ep", which Composer's own save_interval refuses (a TypeError: it takes whole
    epochs), with Trainer(save_interval=callback.save_interval): the checkpoints are exactly
    Every("0.25ep") resolved on the plan, on lifetime steps across both calls, and each call's
    stop (tests/frameworks/test_save_on.py has the grid)."""
    from torch.utils.data import DataLoader

    from durations.integrations.composer import DurationsCallback
    from tests.frameworks._schedule_runs import saved_on

    with _quiet():
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path, save_on="0.25ep")
        trainer = _trainer(tmp_path, callback, _model(), save_interval=callback.save_interval)
        try:
            for index, call in enumerate(CALLS):
                data = DataLoader(_items(call.loader, index), batch_size=10)
                callback.fit(trainer, train_dataloader=data)
        finally:
            trainer.close()
    assert _saved_steps(tmp_path) == saved_on("0.25ep") == [3, 5, 8, 10, 13, 15, 18, 20, 23]


def test_save_on_keeps_the_grid_across_a_kill(uncrashed: dict[str, Any], tmp_path: Path) -> None:
    """save_on="3ba", killed with SIGKILL after a random checkpoint of that grid and run again
    unchanged: the checkpoints of both processes are the grid (21, the second call's first
    step, included: Composer's own "3ba" counts its clock, which a reset_time would restart),
    and the run trains the plan's steps and ends with the uninterrupted run's state."""
    from tests.frameworks._schedule_runs import saved_on

    expected = saved_on("3ba")
    hold = random.choice([k for k in expected if k < STEPS])
    about = f"held after step {hold}"
    processes = [_process(tmp_path, "p1", hold_at=hold, save_on="3ba")]
    assert _saved_steps(tmp_path / "run") == [k for k in expected if k <= hold], about
    processes.append(_process(tmp_path, "p2", save_on="3ba"))
    assert processes[1]["start"] == hold, about
    assert _saved_steps(tmp_path / "run") == expected, about
    _check_killed_run(processes, uncrashed, about, CALLS)
    assert processes[1]["after"]["curated"] == uncrashed["after"]["curated"], about


# (save_on, save_interval: the callback's or Composer's own, the refusal; why)
SAVERS = [
    (
        "0.25ep",
        "1ep",
        "save_on='0.25ep' would be unused: the trainer saves on Composer's own save_interval",
        "a grid the trainer never saves on would be silently ignored",
    ),
    (
        None,
        "callback",
        "save_interval=callback.save_interval saves on the callback's save_on, which is None",
        "no grid: the trainer would never save, not even at a call's stop",
    ),
]


@pytest.mark.usefixtures("composer")
@pytest.mark.parametrize(("save_on", "interval", "message", "why"), SAVERS)
def test_save_on_and_save_interval_go_together(
    tmp_path: Path, save_on: str | None, interval: str, message: str, why: str
) -> None:
    """The callback's save_on and Trainer(save_interval=callback.save_interval) are given
    together or not at all: either alone is refused when the Trainer is built, naming the
    fix."""
    from durations.integrations.composer import DurationsCallback, IntegrationError

    with _quiet():
        callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path, save_on=save_on)
        chosen = callback.save_interval if interval == "callback" else interval
        with pytest.raises(IntegrationError, match=re.escape(message)):
            _trainer(tmp_path, callback, _model(), save_interval=chosen)


#: Larger than any batch the generated scripts have.
MICROBATCH = 1_000


def composer_script(scenario: Scenario, process: Any) -> None:
    """A user's script for ``scenario``: one Trainer, one callback.fit per call."""
    from torch.utils.data import DataLoader

    from durations.integrations.composer import DurationsCallback

    callback = DurationsCallback(scenario.config, scenario.calls, checkpoints=process.root)
    # One forward per optimizer step, as the log counts steps: Composer takes the microbatch
    # size from the first call's batch and would split a later call's larger batches.
    trainer = _trainer(
        process.root,
        callback,
        _model(process.log, process.crash),
        device_train_microbatch_size=MICROBATCH,
    )
    try:
        for i, call in enumerate(scenario.calls):
            loader = call.loader
            data = DataLoader(
                _items(loader, i), batch_size=loader.batch_size, drop_last=loader.drop_last
            )
            callback.fit(trainer, train_dataloader=data)
    finally:
        trainer.close()


@pytest.mark.usefixtures("composer")
# A Trainer refused in its constructor cannot be closed, and its CheckpointSaver's temporary
# folder is cleaned up whenever the garbage collector gets to it, with a ResourceWarning that
# would fail whichever step of the harness it lands in (see the composer fixture).
@pytest.mark.filterwarnings("ignore:Implicitly cleaning up:ResourceWarning")
def test_composer_trainer_follows_the_plan() -> None:
    """The conformance harness: generated scripts (every target unit, reset_time, drop_last),
    crashed after any step up to twice and re-run, train exactly the plan's steps."""
    from tests.frameworks._harness import SCRIPTS, Process, records

    def run(scenario: Scenario, crashes: tuple[int, ...]) -> list[StepRecord]:
        import tempfile

        log: list[tuple[int, tuple[int, ...]]] = []
        with tempfile.TemporaryDirectory() as folder, _quiet():
            for crash in [*crashes, None]:
                with contextlib.suppress(Crash):
                    composer_script(scenario, Process(Path(folder), log, crash))
        return records(scenario, log)

    check_trainer(run, max_examples=20, max_crashes=2, scenario_strategy=SCRIPTS)


# -- without Composer -----------------------------------------------------------------------------


def test_missing_composer_says_how_to_install() -> None:
    """Without Composer the module imports, and using its callback says what to install."""
    code = (
        "import sys; sys.modules['composer'] = None\n"
        "import durations.integrations.composer as m\n"
        "try:\n    m.DurationsCallback\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install mosaicml" in out.stdout


def test_importing_the_integration_imports_no_framework() -> None:
    """Importing durations.integrations.composer imports neither Composer nor torch."""
    code = (
        "import sys, durations.integrations.composer; "
        "print([m for m in ('composer', 'torch') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
