"""Real Lightning and Hugging Face DDP jobs reading a two-phase mixture through the durations
order, killed with SIGKILL and re-run on another number of processes, once with edited
pretraining weights (semantics.md rule 20; docs/mixtures.md).

Pretraining reads web, code and math 3:1:1 for two mixture epochs, annealing code and math 1:2
for two. Killed after step 3 on 2 ranks (inside pretraining's first epoch), re-run on 3 ranks
with pretraining's weights edited to 2:1:1 and killed inside annealing, then finished on 1
process. Every step of every rank reads exactly the indices ``step_indices`` names in the plan
that re-run makes, each re-run's checkpoint is the plan's, and over the whole run each source
is read exactly as the plans' cursors say: every read of a source once, at the positions its
cursor passed, and nothing skipped or read twice for the kills, the edit or the world sizes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from durations import Checkpoint, plan
from durations.order import step_indices
from tests.frameworks._kill import torchrun_held
from tests.frameworks.record_ddp import kill_job
from tests.frameworks.test_ddp_integrations import _free_port

pytest.importorskip("torch")

from tests.frameworks._mixture_lightning_worker import CONFIG, script
from tests.frameworks.test_order_integrations import _checkpoint

#: framework -> (worker module, the loaders' padding)
WORKERS = {
    "lightning": ("tests.frameworks._mixture_lightning_worker", "repeat"),
    "transformers": ("tests.frameworks._mixture_hf_worker", "cycle"),
}

#: (world size, the lifetime step it is killed after or None, pretraining weights edited)
CHAIN = [(2, 3, False), (3, 12, True), (1, None, True)]


def _run(
    job_dir: Path, framework: str, world: int, hold_at: int | None, edited: bool, name: str
) -> Any:
    job = {"hold_at": hold_at, "edited": edited, "log": f"{name}.jsonl"}
    (job_dir / "job.json").write_text(json.dumps(job))
    return torchrun_held(
        WORKERS[framework][0],
        job_dir,
        world=world,
        hold_at=hold_at,
        name=name,
        port=_free_port(),
        kill=kill_job,
    )


@pytest.mark.parametrize("framework", sorted(WORKERS))
def test_killed_edited_and_resumed_on_2_3_1_processes_reads_the_plan(
    tmp_path: Path, framework: str
) -> None:
    pytest.importorskip("pytorch_lightning" if framework == "lightning" else "transformers")
    padding = WORKERS[framework][1]

    checkpoint: Checkpoint | None = None
    reads: Counter[tuple[str, int]] = Counter()  # (source, read number) over the whole run
    said: list[str] = []
    for index, (world, hold_at, edited) in enumerate(CHAIN):
        run = plan(CONFIG, script(world, edited, padding), checkpoint)
        assert run.ok, run.diagnostics
        said += [d.code for d in run.diagnostics]
        upto = run.stop.batch if hold_at is None else hold_at
        items = _run(tmp_path, framework, world, hold_at, edited, f"run{index}-w{world}")
        steps = [i for i in items if "step" in i]
        got = {(i["step"], i["rank"]): i["ids"] for i in steps}
        expected = {
            (run.start.batch + k, r): step_indices(run, k, rank=r)
            for k in range(1, upto - run.start.batch + 1)
            for r in range(world)
        }
        assert got == expected, f"re-run {index} on {world} processes"
        for segment in run.segments:  # what each source read, by the plan's own account
            for r in segment.sources:
                last = min(segment.stop_step, upto - run.start.batch)
                stop = run.cursors_at(last)[r.name] if last >= segment.start_step else r.start
                reads.update((r.name, t) for t in range(r.start, max(r.start, stop)))
        if hold_at is not None:
            held = {i["checkpoint"] for i in items if "hold" in i}
            assert len(held) == 1
            checkpoint = _checkpoint(framework, held.pop())
            assert checkpoint == run.checkpoint_at(hold_at - run.start.batch)
        else:
            assert max(i["end"] for i in items if "end" in i) == run.stop.batch
    assert "mixture-changed" in said  # the edit, at the re-run on 3 processes
    assert "world-size-changed" in said  # annealing resumed from 3 processes on 1
    assert max(reads.values()) == 1  # no read of any source counted twice across the re-runs
    final = run.cursors_at(run.total_steps)
    assert {name: sum(1 for n, _ in reads if n == name) for name in final} == final
