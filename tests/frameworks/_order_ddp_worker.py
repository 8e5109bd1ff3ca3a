"""One rank of a plain PyTorch DDP training (gloo, CPU) that reads the plan's data order
through ``OrderSampler``: started by ``test_order_ddp.py`` under ``torch.distributed.run``.

``python -m tests.frameworks._order_ddp_worker JOB_DIR``: ``JOB_DIR/job.json`` holds
``samples``, ``device_batch_size``, ``epochs``, ``seed``, ``hold_at`` (a lifetime step, or
null) and ``log`` (a file name). The run resumes from ``JOB_DIR/ckpt`` when a checkpoint is
there, on whatever world size torchrun gives it: the plan is made from the checkpoint with the
loader of this world size, and the sampler starts at the plan's start. Each rank appends
``{"step": k, "rank": r, "world": W, "ids": [...]}`` for every optimizer step to the log; rank
0 saves the model and the plan's checkpoint after every step (written whole, then renamed);
after saving step ``hold_at`` every rank logs ``{"hold": k}`` and waits to be killed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from durations import Checkpoint, FitCall, Loader, Order, RunConfig, plan
from durations.integrations.torch import OrderSampler


def _write_whole(path: Path, write: object) -> None:
    temporary = path.with_name(path.name + ".tmp")
    write(temporary)  # type: ignore[operator]
    os.replace(temporary, path)


def main(job_dir: Path) -> None:
    # torch is imported here, not at the top: the main suite collects this module (doctests)
    # in an environment without it.
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader

    job = json.loads((job_dir / "job.json").read_text())
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    loader = Loader.sharded(
        samples=job["samples"],
        world_size=world,
        device_batch_size=job["device_batch_size"],
        name="data",
    )
    ckpt = job_dir / "ckpt"
    checkpoint = None
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if (ckpt / "durations.json").exists():
        checkpoint = Checkpoint.from_dict(json.loads((ckpt / "durations.json").read_text()))
        state = torch.load(ckpt / "model.pt", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    config = RunConfig(max_duration=f"{job['epochs']}ep")
    run = plan(config, [FitCall(loader=loader, name="train")], checkpoint)
    sampler = OrderSampler(Order.shuffled(seed=job["seed"]), loader, rank=rank)
    sampler.start_at(run)
    data = DataLoader(range(job["samples"]), batch_size=job["device_batch_size"], sampler=sampler)
    ddp = DistributedDataParallel(model)
    step = run.start.batch
    log = (job_dir / job["log"]).open("a", encoding="utf-8")
    while step < run.stop.batch:
        for ids in data:
            features = torch.stack([ids.float() / job["samples"], torch.ones(len(ids))], dim=1)
            loss = ddp(features).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            item = {"step": step, "rank": rank, "world": world, "ids": ids.tolist()}
            log.write(json.dumps(item) + "\n")
            log.flush()
            os.fsync(log.fileno())
            if rank == 0:
                ckpt.mkdir(exist_ok=True)
                state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
                _write_whole(ckpt / "model.pt", lambda p: torch.save(state, p))  # noqa: B023
                saved = run.checkpoint_at(step - run.start.batch).to_dict()
                _write_whole(ckpt / "durations.json", lambda p: p.write_text(json.dumps(saved)))  # noqa: B023
            dist.barrier()
            if step == job["hold_at"]:
                log.write(json.dumps({"hold": step, "rank": rank}) + "\n")
                log.flush()
                os.fsync(log.fileno())
                time.sleep(300)  # the test kills the job long before this
            if step == run.stop.batch:
                break
    log.write(json.dumps({"end": step, "rank": rank}) + "\n")
    log.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
