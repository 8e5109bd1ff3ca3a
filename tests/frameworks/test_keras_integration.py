"""The Keras integration end to end, on real tiny CPU trainings (Keras 3, torch backend).

The script is the README's two-phase run at toy size, as ``tests/frameworks/test_integrations.py``
runs it for Hugging Face and Lightning: 2 epochs of A (100 samples, batch 10), then 0.1 epoch of B
(300 samples): 20 + 3 = 23 steps; items carry their ids (A: 0-99, B: 1000-1299), learning rate 0.

- Killed with SIGKILL from outside (``_keras_integration_worker.py`` in a subprocess) three times
  at random steps, once while it waits after a step's checkpoint and twice anywhere in a step,
  and run again unchanged: the steps that count (those up to the checkpoint the next process
  resumed from) are the plan's 23, on the plan's sample ids.
- In one process: the uncrashed run, a finished script re-run, crashes after every step, and
  the refusals, each naming the fix.

Skipped without keras (or torch).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from durations import FitCall, Loader, RunConfig, plan
from durations.integrations.checkpoints import latest_checkpoint
from durations.integrations.keras import KERAS, read_keras_checkpoint
from durations.scenario import Scenario
from durations.testing import StepRecord, compare, expected_steps
from tests.frameworks._keras_integration_worker import CALLS, CONFIG, OFFSETS, STEPS, A, B
from tests.frameworks._kill import read_log

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 240.0

#: The steps of a run: (call, sample ids) each.
Steps = list[tuple[str, tuple[int, ...]]]
#: A script: its RunConfig and its fit calls.
Script = tuple[RunConfig, tuple[FitCall, ...]]
#: The README's two calls, then a third that resets the run clock and trains until 1ep on it.
RESET = (
    CONFIG,
    (*CALLS, FitCall(loader=A, until="1ep", reset_time=True, name="again")),
)


@contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def keras() -> Any:
    os.environ.setdefault("KERAS_BACKEND", "torch")
    with _quiet():
        pytest.importorskip("torch")
        module = pytest.importorskip("keras")
    if module.backend.backend() != "torch":
        pytest.skip(f"keras runs with backend {module.backend.backend()!r}, not torch")
    return module


def _records(steps: Steps) -> list[StepRecord]:
    """(call, ids) per step as StepRecords: the loader by id range, in-epoch indices, and the
    lifetime epoch as the stream shows it (a new loader, or ids starting over: rule 4)."""
    records, epoch, previous = [], -1, None
    for call, ids in steps:
        loader = "b" if ids[0] >= OFFSETS["b"] else "a"
        samples = tuple(i - OFFSETS[loader] for i in ids)
        if previous is None or previous[0] != loader or samples[0] <= previous[1]:
            epoch += 1
        previous = (loader, samples[-1])
        records.append(StepRecord(call, loader, epoch, samples))
    return records


def _check(steps: Steps, crashes: tuple[int, ...], script: Script = (CONFIG, CALLS)) -> None:
    """The steps trained are the plan's: their count, order, calls and sample ids (so their
    multiset too), by durations.testing.compare."""
    config, calls = script
    full = plan(config, calls)
    assert len(steps) == full.total_steps
    scenario = Scenario(config=config, loaders={"a": A, "b": B}, calls=calls, source="<test>")
    compare(scenario, crashes, _records(steps))
    assert _records(steps) == expected_steps(full)
    wanted = Counter(OFFSETS[r.loader or ""] + i for r in expected_steps(full) for i in r.samples)
    assert Counter(i for _, ids in steps for i in ids) == wanted


# -- killed with SIGKILL from outside ------------------------------------------------------------


def _kills() -> tuple[int, int, int]:
    fixed = os.environ.get("DURATIONS_KERAS_KILLS")
    if fixed:
        first, second, third = (int(k) for k in fixed.split(","))
        return first, second, third
    first = random.randint(1, STEPS - 4)
    second = random.randint(first + 1, STEPS - 2)
    return first, second, random.randint(second, STEPS - 1)


class Server:
    """The worker's ``--serve`` mode: torch and Keras imported once, one forked process (its
    own session, killed from outside) per process of the script."""

    def __init__(self, root: Path) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
        env["KERAS_BACKEND"] = "torch"
        self.output = (root / "server.out").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.frameworks._keras_integration_worker", "--serve"],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.output, text=True, start_new_session=True,
        )  # fmt: skip
        assert self._line() == "ready"

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line, "the worker server ended"
        return line

    def start(self, job: Path) -> int:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{job}\n")
        self.process.stdin.flush()
        kind, pid = self._line().split()
        assert kind == "pid"
        return int(pid)

    def wait(self, pid: int) -> int:
        kind, ended, code = self._line().split()
        assert (kind, int(ended)) == ("exit", pid)
        return int(code)

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()  # the server ends at the end of its input
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process.stdout.close()
        self.output.close()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (the server reaps its processes as they end)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _process(
    server: Server,
    root: Path,
    name: str,
    *,
    hold_at: int | None = None,
    kill_at: int | None = None,
    lr: float | None = None,
) -> dict[str, Any]:
    """One process of the script: SIGKILL it once it holds after ``hold_at``'s checkpoint, or a
    random moment after its log shows the batch of lifetime step ``kill_at`` (steps then paced
    by 0.1 s, so the kill lands inside the run, in a step or in its checkpoint). With ``lr``,
    it trains with Adam at that rate."""
    log, job, output = root / f"{name}.jsonl", root / f"{name}.json", root / f"{name}.out"
    pace = 0.1 if kill_at is not None else 0
    job.write_text(
        json.dumps(
            {
                "root": str(root / "run"),
                "log": str(log),
                "hold_at": hold_at,
                "pace": pace,
                "output": str(output),
                "lr": lr,
            }
        )
    )
    pid = server.start(job)
    deadline, killed = time.monotonic() + TIMEOUT, False
    while time.monotonic() < deadline:
        items = read_log(log)
        if any("end" in i for i in items) or not _alive(pid):  # ended, or failed
            break
        starts = [i["at"] for i in items if "at" in i]
        batches = sum("ids" in i for i in items)
        if (hold_at is not None and any("hold" in i for i in items)) or (
            kill_at is not None and starts and starts[0] + batches >= kill_at
        ):
            if kill_at is not None:
                time.sleep(random.uniform(0, 0.15))
            with contextlib.suppress(ProcessLookupError):  # it may have ended meanwhile
                os.killpg(pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.01)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    returncode = server.wait(pid)
    items = read_log(log)
    return {
        "name": name,
        "returncode": returncode,
        "killed": killed,
        "durations": next((i["durations"] for i in items if "durations" in i), None),
        "calls": [(i["call"], i["at"]) for i in items if "at" in i],
        "ids": [tuple(i["ids"]) for i in items if "ids" in i],
        "after": {i["after"]: i["state"] for i in items if "after" in i},
        "end": any("end" in i for i in items),
        "output": output.read_text(errors="replace").splitlines()[-20:],
    }


def _effective(processes: list[dict[str, Any]]) -> tuple[Steps, list[int]]:
    """The steps that count, and where each process started: a process's batches up to where
    the next one resumed (what it trained after its last checkpoint was lost with it)."""
    starts = [p["calls"][0][1] for p in processes]
    steps: Steps = []
    for index, process in enumerate(processes):
        start = starts[index]
        end = starts[index + 1] if index + 1 < len(processes) else STEPS
        assert start <= end <= start + len(process["ids"]), (starts, process["name"])
        calls = process["calls"]
        for k, ids in enumerate(process["ids"][: end - start]):
            lifetime = start + k + 1
            call = [name for name, at in calls if at < lifetime][-1]
            steps.append((call, ids))
    return steps, starts


def test_killed_three_times_with_sigkill_trains_the_plan(keras: Any, tmp_path: Path) -> None:
    """Killed with SIGKILL at three random steps (after a checkpoint, then twice anywhere in a
    step or its checkpoint) and run again unchanged each time, the run trains the plan's 23
    steps on the plan's samples (DURATIONS_KERAS_KILLS="k1,k2,k3" fixes the kills)."""
    first, second, third = _kills()
    about = f"DURATIONS_KERAS_KILLS={first},{second},{third}"
    server = Server(tmp_path)
    try:
        processes = [
            _process(server, tmp_path, "p1", hold_at=first),
            _process(server, tmp_path, "p2", kill_at=second),
            _process(server, tmp_path, "p3", kill_at=third),
            _process(server, tmp_path, "p4"),
        ]
    finally:
        server.close()
    print(json.dumps({"kills": [first, second, third], "starts": [p["calls"] for p in processes]}))
    for process in processes:
        assert process["durations"] == str(REPO / "durations" / "__init__.py"), process
    for process in processes[:3]:
        assert process["killed"], (about, process)
        assert process["returncode"] == -signal.SIGKILL, (about, process)
    last = processes[-1]
    assert last["returncode"] == 0, (about, last["output"])
    assert last["end"], (about, last["output"])
    steps, starts = _effective(processes)
    assert starts[:2] == [0, first], about
    _check(steps, tuple(starts[1:]))
    found = latest_checkpoint(tmp_path / "run", reader=KERAS)
    assert found is not None
    assert found.checkpoint == plan(CONFIG, CALLS).checkpoint_at(STEPS)


# -- the state after a skipped call ----------------------------------------------------------------

#: Adam's rate in the runs that learn: every step changes the weights and the moments.
LR = 0.01


@pytest.fixture(scope="module")
def learning(keras: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A worker server, and the uninterrupted run of the script that learns (``LR``): where it
    ran and the state it logged when each fit returned."""
    root = tmp_path_factory.mktemp("keras-learning")
    server = Server(root)
    try:
        full = _process(server, root, "p0", lr=LR)
        assert full["returncode"] == 0, full["output"]
        after = full["after"]
        assert [a["iterations"] for a in after.values()] == [20, 23], after
        assert after["pretrain"]["weights"] != after["curated"]["weights"]
        yield server, root, full
    finally:
        server.close()


def test_a_finished_script_run_again_holds_the_uninterrupted_state(learning: Any) -> None:
    """Run again once finished, both fits are skipped, and after each the model holds the
    uninterrupted run's weights and optimizer variables (Adam's moments, the iteration count)
    after it, bit for bit: the call's step-<N> folder, loaded. (Before: the freshly built
    model, at iteration 0.)"""
    server, root, full = learning
    again = _process(server, root, "again", lr=LR)
    assert again["returncode"] == 0, again["output"]
    assert (again["calls"], again["ids"]) == ([], [])
    assert again["after"] == full["after"]


def test_killed_in_the_second_call_the_first_s_skip_holds_its_final_state(
    learning: Any, tmp_path: Path
) -> None:
    """Killed with SIGKILL after step 22's checkpoint (the second call's second), the first
    call's final folder step-20 is still there beside the newest keep=2; run again, the state
    right after the first call's skipped fit is the uninterrupted run's at step 20 (weights,
    moments, 20 iterations), and the end is its end, bit for bit."""
    server, _, full = learning
    killed = _process(server, tmp_path, "p1", hold_at=22, lr=LR)
    assert killed["killed"], killed["output"]
    assert killed["returncode"] == -signal.SIGKILL, killed["output"]
    names = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert names == ["step-20", "step-21", "step-22"]
    again = _process(server, tmp_path, "p2", lr=LR)
    assert again["returncode"] == 0, again["output"]
    assert again["calls"] == [("curated", 22)]
    assert again["after"] == full["after"]


# -- in one process -------------------------------------------------------------------------------


class Crash(Exception):  # noqa: N818 - the simulated kill of a process
    """Raised in the forward pass of the batch after the crash step."""


def _process_in(
    keras: Any,
    root: Path,
    crash: int | None,
    *,
    data: Callable[[Loader, Any], tuple[Any, ...]] | None = None,
    script: Script = (CONFIG, CALLS),
    **options: Any,
) -> tuple[int, Steps]:
    """One process of the script in this one: its start and its steps; it dies (Crash) in
    the forward pass of the step after lifetime step ``crash`` (whose checkpoint is written)."""
    import numpy as np
    import torch

    from durations.integrations.keras import DurationsCallback

    config, calls = script
    options.setdefault("save_on", "1ba")
    callback = DurationsCallback(config, calls, checkpoints=root, **options)
    steps: Steps = []

    class Record(keras.layers.Layer):  # type: ignore[misc]
        def call(self, x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.device.type != "meta":
                if crash is not None and callback.lifetime_step >= crash:
                    raise Crash(f"killed after step {crash}")
                ids = tuple(int(v) for v in x[:, 0].tolist())
                steps.append((callback.session.current().name, ids))
            return x

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((1,)), Record(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    with _quiet():
        try:
            for call in calls:
                loader = call.loader
                offset = OFFSETS[loader.name or ""]
                x = np.arange(offset, offset + (loader.samples or 0), dtype="float32")
                x = x.reshape(-1, 1)
                args = (x, np.zeros_like(x)) if data is None else data(loader, x)
                callback.fit(model, *args, verbose=0)
        except Crash:
            pass
    assert callback.session.plan is not None
    return callback.session.plan.start.batch, steps


def _chain(
    keras: Any, root: Path, crashes: list[int], script: Script = (CONFIG, CALLS), **options: Any
) -> list[int]:
    runs = [_process_in(keras, root, crash, script=script, **options) for crash in [*crashes, None]]
    starts = [start for start, _ in runs]
    steps: Steps = []
    for (start, trained), end in zip(runs, [*starts[1:], None], strict=True):
        # What a process trained after its last checkpoint is lost with it.
        steps += trained if end is None else trained[: end - start]
    _check(steps, tuple(starts[1:]), script)
    return starts


def test_uninterrupted_run_and_a_rerun_of_the_finished_script(keras: Any, tmp_path: Path) -> None:
    """Keras trains 20 steps on A and 3 on B, the plan's 23; the script run again trains
    nothing (the ledger says both calls finished), and the newest checkpoint is the plan's."""
    start, steps = _process_in(keras, tmp_path, None)
    assert start == 0
    _check(steps, ())
    assert _process_in(keras, tmp_path, None) == (23, [])
    assert read_keras_checkpoint(tmp_path / "step-23") == plan(CONFIG, CALLS).checkpoint_at(23)
    # keep=2: the newest two, and each call's final checkpoint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-20", "step-22", "step-23"]


def test_a_missing_final_checkpoint_is_refused(keras: Any, tmp_path: Path) -> None:
    """With the first call's final step-20 deleted, a re-run of the finished script cannot give
    the model the state after that call: refused, naming the call, the step and the fix,
    rather than leaving the model as it was built."""
    import shutil

    from durations.integrations import IntegrationError

    _process_in(keras, tmp_path, None)
    shutil.rmtree(tmp_path / "step-20")
    with pytest.raises(IntegrationError) as caught:
        _process_in(keras, tmp_path, None)
    assert str(caught.value) == (
        f"call 'pretrain' finished at lifetime step 20, but no checkpoint under '{tmp_path}' "
        "records it finished there: its final checkpoint was deleted or never written, and "
        "without it the model would not hold what the uninterrupted run had after the call. "
        "Keep every call's final checkpoint: the callback's keep= never removes a call's "
        "final step-<N> folder; do not delete it"
    )


@pytest.mark.parametrize("crashes", [[5, 13, 20, 21], [10], [19, 22]])
def test_crashes_finish_like_the_uninterrupted_run(
    keras: Any, tmp_path: Path, crashes: list[int]
) -> None:
    """Crashed after the listed steps (13 inside an epoch, 10 and 20 at epoch ends, 21 inside
    the second call) and re-run, the run trains the plan's steps."""
    assert _chain(keras, tmp_path, crashes) == [0, *crashes]


def test_saves_at_epoch_ends_resume_from_the_last_one(keras: Any, tmp_path: Path) -> None:
    """With save_on=None (the default: at epoch ends) a process killed after step 13 resumes
    from the end of the first epoch (step 10): steps 11-13 are trained again, and what counts
    is the plan's. So does a DataLoader, which then never resumes inside an epoch."""
    from torch.utils.data import DataLoader, TensorDataset

    def loader(plan_loader: Loader, x: Any) -> tuple[Any, ...]:
        import torch

        tensor = torch.from_numpy(x)
        return (DataLoader(TensorDataset(tensor, tensor * 0), batch_size=10),)

    assert _chain(keras, tmp_path / "arrays", [13], save_on=None) == [0, 10]
    assert _chain(keras, tmp_path / "loader", [15], data=loader, save_on=None) == [0, 10]
    names = sorted(p.name for p in (tmp_path / "loader").iterdir())
    assert names == ["step-20", "step-23"]  # the last epoch's end and the end of 'curated'


def test_save_on_saves_on_the_plans_grid(keras: Any, tmp_path: Path) -> None:
    """save_on="0.25ep" saves at each step of Every("0.25ep") resolved on the plan, on lifetime
    steps across both calls, and at each call's stop (the ledger records it finished)."""
    from durations import Every

    _process_in(keras, tmp_path, None, save_on="0.25ep", keep=None)
    full = plan(CONFIG, CALLS)
    grid = set(Every("0.25ep").resolve(full).steps()) | {20, 23}
    saved = {int(p.name.removeprefix("step-")) for p in tmp_path.iterdir()}
    assert saved == grid
    assert all(
        read_keras_checkpoint(tmp_path / f"step-{k}") == full.checkpoint_at(k) for k in saved
    )


@pytest.mark.parametrize("crashes", [[28], [23, 30], [20, 25, 32]])
def test_reset_time_is_applied_once(keras: Any, tmp_path: Path, crashes: list[int]) -> None:
    """A third call resets the run clock and trains until 1ep on it (10 steps, from lifetime
    step 23); crashed inside it and re-run, it resumes to the target stored when it started,
    not 1ep from the restart: 33 steps in all."""
    assert plan(*RESET).total_steps == 33
    assert _chain(keras, tmp_path, crashes, RESET) == [0, *crashes]


def test_pydataset_resumes_inside_an_epoch(keras: Any, tmp_path: Path) -> None:
    """A PyDataset whose __getitem__(i) returns batch i of an epoch resumes at the saved batch."""

    class Batches(keras.utils.PyDataset):  # type: ignore[misc]
        def __init__(self, x: Any) -> None:
            super().__init__()
            self.x = x

        def __len__(self) -> int:
            return -(-len(self.x) // 10)

        def __getitem__(self, index: int) -> Any:
            x = self.x[index * 10 : (index + 1) * 10]
            return x, x * 0

    assert _chain(keras, tmp_path, [13, 21], data=lambda loader, x: (Batches(x),)) == [0, 13, 21]


def test_pydataset_of_other_batches_is_refused_before_training(keras: Any, tmp_path: Path) -> None:
    """A PyDataset of 10 batches of 5 (not the loader's 10 of 10) is refused at its first
    batch, which Keras reads to build the step before training, naming both sizes."""
    import numpy as np

    from durations.integrations.keras import DurationsCallback, IntegrationError

    class Halves(keras.utils.PyDataset):  # type: ignore[misc]
        def __len__(self) -> int:
            return 10

        def __getitem__(self, index: int) -> Any:
            x = np.full((5, 1), index, dtype="float32")
            return x, x * 0

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    wanted = (
        "call 'pretrain': batch 0 of the PyDataset has 5 samples, the plan's loader reads 10 "
        "there (batch_size=10, samples=100, drop_last=False); make them agree"
    )
    with _quiet(), pytest.raises(IntegrationError) as caught:
        callback.fit(model, Halves(), verbose=0)
    assert str(caught.value) == wanted
    assert int(model.optimizer.iterations) == 0


def test_dataloader_resumed_inside_an_epoch_is_refused(keras: Any, tmp_path: Path) -> None:
    """A torch DataLoader starts every epoch at its first sample: resumed after step 13, the
    call is refused before training, naming the samples Keras would train again."""
    from torch.utils.data import DataLoader, TensorDataset

    from durations.integrations.keras import IntegrationError

    def loader(plan_loader: Loader, x: Any) -> tuple[Any, ...]:
        import torch

        tensor = torch.from_numpy(x)
        return (DataLoader(TensorDataset(tensor, tensor * 0), batch_size=10),)

    _process_in(keras, tmp_path, 13, data=loader)
    with pytest.raises(IntegrationError) as caught:
        _process_in(keras, tmp_path, None, data=loader)
    assert str(caught.value) == (
        "call 'pretrain' resumes at sample 30 of epoch 1, but Keras starts every epoch of a "
        "DataLoader at its first sample: samples 0-29 of epoch 1 would be trained again. Pass "
        "the data as arrays or as a keras.utils.PyDataset (the callback starts them at the saved "
        "sample), or save only at epoch ends (save_on=None, the default) and resume from "
        "such a checkpoint"
    )
    # From an epoch boundary it is exact: crashed after step 10, the DataLoader run is the plan's.
    assert _chain(keras, tmp_path / "epoch", [10], data=loader) == [0, 10]


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        # the epoch is 90 samples, not the loader's 100
        (lambda x: (x[:90], x[:90] * 0), {}, "x has 90 samples, the plan's loader samples=100"),
        # Keras would cut batches of 20, the plan steps by 10
        (lambda x: (x, x * 0), {"batch_size": 20}, "batch_size=20, the plan's loader has"),
        # the callback decides the epochs
        (lambda x: (x, x * 0), {"epochs": 2}, "callback decides epochs"),
        # Keras would shuffle with its own unseeded order
        (lambda x: (x, x * 0), {"shuffle": True}, "shuffle=True"),
        # a generator has no length: no epochs to plan
        (lambda x: (iter([(x, x)]),), {}, "has no length"),
    ],
)
def test_inputs_that_cannot_follow_the_plan_are_refused(
    keras: Any,
    tmp_path: Path,
    data: Callable[[Any], tuple[Any, ...]],
    kwargs: dict[str, Any],
    message: str,
) -> None:
    """Wrong epoch length, batch size, decided arguments, shuffling or an unsized input: refused
    before any step, the message naming the fix."""
    import numpy as np

    from durations.integrations.keras import DurationsCallback

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    x = np.arange(100, dtype="float32").reshape(-1, 1)
    with _quiet(), pytest.raises((TypeError, ValueError, RuntimeError), match=message):
        callback.fit(model, *data(x), verbose=0, **kwargs)
    assert int(model.optimizer.iterations) == 0
    assert not list(tmp_path.iterdir())


def test_plain_model_fit_and_backup_and_restore_are_refused(keras: Any, tmp_path: Path) -> None:
    """model.fit(callbacks=[callback]) is refused at train start, naming callback.fit; and
    BackupAndRestore, which restarts the interrupted epoch, is refused by callback.fit."""
    import numpy as np

    from durations.integrations.keras import DurationsCallback, IntegrationError

    callback = DurationsCallback(CONFIG, CALLS, checkpoints=tmp_path)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    x = np.arange(100, dtype="float32").reshape(-1, 1)
    with _quiet(), pytest.raises(IntegrationError, match=r"callback\.fit\(model, x, y"):
        model.fit(x, x, epochs=1, verbose=0, callbacks=[callback])
    backup = keras.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    with (
        _quiet(),
        pytest.raises(IntegrationError, match=r"remove keras\.callbacks\.BackupAndRestore"),
    ):
        callback.fit(model, x, x, verbose=0, callbacks=[backup])
    assert int(model.optimizer.iterations) == 0


# -- pure: no framework needed ---------------------------------------------------------------------


def test_newest_checkpoint_is_chosen_by_progress_and_unfinished_saves_are_ignored(
    tmp_path: Path,
) -> None:
    """Of the step-N folders, the one with the most recorded progress wins; a temporary folder
    of a save cut short (.step-N.*) is not a candidate, and a step-N folder without its
    durations.json is skipped with a warning."""
    from durations import CheckpointFormatError

    full = plan(CONFIG, CALLS)
    for step, name in [(13, "step-13"), (21, ".step-22.x1y2"), (9, "step-9")]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "durations.json").write_text(json.dumps(full.checkpoint_at(step).to_dict()))
    (tmp_path / "step-30").mkdir()
    with pytest.warns(RuntimeWarning, match="step-30"):
        found = latest_checkpoint(tmp_path, reader=KERAS)
    assert found is not None
    assert Path(found.path) == tmp_path / "step-13"
    assert found.checkpoint == full.checkpoint_at(13)
    with pytest.raises(CheckpointFormatError, match=r"has no durations\.json"):
        read_keras_checkpoint(tmp_path / "step-30")
