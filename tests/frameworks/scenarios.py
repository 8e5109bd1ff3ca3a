"""The grid of framework scenarios, as data.

Each scenario is a list of calls (see :class:`tests.frameworks._common.CallSpec`) run in order in
one temporary directory; a call with ``fresh`` left True builds a new trainer and model, which
stands in for a new process resuming from the files on disk. Unless a call says otherwise the
data set is ``A`` (100 samples, ids 0..99), the batch size is 10 (10 batches per epoch), there is
no shuffling and the learning rate is 0. ``about`` names the section of
the research notes on trainers (``trainers.md``) whose claim the scenario checks.
"""

from __future__ import annotations

from ._common import JSON, DataSpec, Scenario

A: DataSpec = {"n": 100, "offset": 0}
A95: DataSpec = {"n": 95, "offset": 0}
B: DataSpec = {"n": 300, "offset": 1000}
B100: DataSpec = {"n": 100, "offset": 1000}
B50: DataSpec = {"n": 50, "offset": 1000}

# Hugging Face schedulers (TrainingArguments fields) on a base learning rate of 0.1.
HF_COSINE_MIN: dict[str, JSON] = {
    "learning_rate": 0.1,
    "lr_scheduler_type": "cosine_with_min_lr",
    "warmup_steps": 4,
    "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
}
HF_COSINE: dict[str, JSON] = {
    "learning_rate": 0.1,
    "lr_scheduler_type": "cosine",
    "warmup_steps": 2,
}
HF_LINEAR: dict[str, JSON] = {
    "learning_rate": 0.1,
    "lr_scheduler_type": "linear",
    "warmup_steps": 2,
}

LIGHTNING: list[Scenario] = [
    # (a) plain durations
    {
        "id": "lightning/epochs2",
        "framework": "lightning",
        "about": "A.1 max_epochs=2",
        "calls": [{"args": {"max_epochs": 2}}],
    },
    {
        "id": "lightning/max_steps15",
        "framework": "lightning",
        "about": "A.1/A.3 max_steps=15 alone: max_epochs -1; current_epoch after a mid-epoch stop",
        "calls": [{"args": {"max_steps": 15}}],
    },
    {
        "id": "lightning/limit_int3",
        "framework": "lightning",
        "about": "A.2 limit_train_batches=3 (int)",
        "calls": [{"args": {"max_epochs": 2, "limit_train_batches": 3}}],
    },
    {
        "id": "lightning/limit_float0.25",
        "framework": "lightning",
        "about": "A.2 limit_train_batches=0.25 -> int(2.5)=2 batches per epoch",
        "calls": [{"args": {"max_epochs": 2, "limit_train_batches": 0.25}}],
    },
    {
        "id": "lightning/limit_int1",
        "framework": "lightning",
        "about": "A.2 limit_train_batches=1 is one batch",
        "calls": [{"args": {"max_epochs": 1, "limit_train_batches": 1}}],
    },
    {
        "id": "lightning/limit_float1.0",
        "framework": "lightning",
        "about": "A.2 limit_train_batches=1.0 is all",
        "calls": [{"args": {"max_epochs": 1, "limit_train_batches": 1.0}}],
    },
    {
        "id": "lightning/limit_float2.0",
        "framework": "lightning",
        "about": "A.2 an integral float > 1 is coerced to int",
        "calls": [{"args": {"max_epochs": 1, "limit_train_batches": 2.0}}],
    },
    {
        "id": "lightning/limit_float0.05",
        "framework": "lightning",
        "about": "A.2 a fraction yielding 0 batches raises",
        "calls": [{"args": {"max_epochs": 1, "limit_train_batches": 0.05}}],
    },
    {
        "id": "lightning/n95",
        "framework": "lightning",
        "about": "partial last batch (95 samples, bs 10)",
        "calls": [{"data": A95, "args": {"max_epochs": 1}}],
    },
    {
        "id": "lightning/no_limits",
        "framework": "lightning",
        "about": "A.1 neither max_epochs nor max_steps: 1000 epochs, a warning (1 batch/epoch)",
        "calls": [{"args": {"limit_train_batches": 1}}],
    },
    {
        "id": "lightning/max_epochs0",
        "framework": "lightning",
        "about": "A.1 max_epochs=0 trains nothing",
        "calls": [{"args": {"max_epochs": 0}}],
    },
    # (b) gradient accumulation
    {
        "id": "lightning/accum3_epochs2",
        "framework": "lightning",
        "about": "A.3 accumulate_grad_batches=3, 10 batches/epoch: steps on an epoch's last batch",
        "calls": [{"args": {"max_epochs": 2, "accumulate_grad_batches": 3}}],
    },
    {
        "id": "lightning/accum3_max_steps5",
        "framework": "lightning",
        "about": "A.3 max_steps counts optimizer steps under accumulation",
        "calls": [{"args": {"max_steps": 5, "accumulate_grad_batches": 3}}],
    },
    {
        "id": "lightning/accum3_crash5_resume",
        "framework": "lightning",
        "about": "A.5 accumulation: crash after step 5 (epoch 1, batches 0-2), resume",
        "calls": [
            {
                "args": {"max_epochs": 2, "accumulate_grad_batches": 3},
                "save_every": 5,
                "crash_at": 5,
            },
            {"args": {"max_epochs": 2, "accumulate_grad_batches": 3}, "resume": "latest"},
        ],
    },
    # (c) a second fit on the same Trainer
    {
        "id": "lightning/second_fit_same_args",
        "framework": "lightning",
        "about": "A.6 second fit with the same max_epochs=1 trains 0 steps",
        "calls": [{"args": {"max_epochs": 1}}, {"fresh": False}],
    },
    {
        "id": "lightning/second_fit_raise_max_epochs",
        "framework": "lightning",
        "about": "A.6 raising fit_loop.max_epochs to 2 trains 10 more steps (absolute limit)",
        "calls": [{"args": {"max_epochs": 1}}, {"fresh": False, "set": {"fit_loop.max_epochs": 2}}],
    },
    {
        "id": "lightning/second_fit_raise_max_steps_only",
        "framework": "lightning",
        "about": "A.6 raising only epoch_loop.max_steps is not enough once max_epochs is reached",
        "calls": [
            {"args": {"max_epochs": 1}},
            {"fresh": False, "set": {"fit_loop.epoch_loop.max_steps": 15}},
        ],
    },
    {
        "id": "lightning/second_fit_after_max_steps",
        "framework": "lightning",
        "about": "A.6 first fit max_steps=5, then raise max_steps to 12 on the same Trainer",
        "calls": [
            {"args": {"max_steps": 5}},
            {"fresh": False, "set": {"fit_loop.epoch_loop.max_steps": 12}},
        ],
    },
    # (d) crash and resume with the same config
    {
        "id": "lightning/crash13_plain",
        "framework": "lightning",
        "about": "A.5 plain DataLoader, crash after step 13, resume: replayed from epoch start",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/crash13_stateful",
        "framework": "lightning",
        "about": "A.5 torchdata StatefulDataLoader, crash after step 13, resume: exact position",
        "calls": [
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "loader": "stateful", "resume": "latest"},
        ],
    },
    {
        "id": "lightning/shuffle_stateful_epochs2",
        "framework": "lightning",
        "about": "reference order for the shuffled crash/resume below (uninterrupted)",
        "calls": [{"args": {"max_epochs": 2}, "loader": "stateful", "shuffle": True}],
    },
    {
        "id": "lightning/crash13_stateful_shuffle",
        "framework": "lightning",
        "about": "F StatefulDataLoader, shuffled: does the resume reproduce the uninterrupted run?",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "loader": "stateful",
                "shuffle": True,
                "save_every": 13,
                "crash_at": 13,
            },
            {"args": {"max_epochs": 2}, "loader": "stateful", "shuffle": True, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/crash10_plain",
        "framework": "lightning",
        "about": "A.5 crash exactly at an epoch boundary (step 10), plain loader",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 10, "crash_at": 10},
            {"args": {"max_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/crash13_resume_max_epochs1",
        "framework": "lightning",
        "about": "A.4 mid-epoch checkpoint (epoch=1) resumed with max_epochs=1",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 1}, "resume": "latest"},
        ],
    },
    # (e) batch size changed on resume
    {
        "id": "lightning/bs10to20_at5",
        "framework": "lightning",
        "about": "A.5 batch size 10 -> 20 from step 5",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 5, "crash_at": 5},
            {"args": {"max_epochs": 2}, "batch_size": 20, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/bs10to20_at13",
        "framework": "lightning",
        "about": "A.5 batch size 10 -> 20 from step 13",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "batch_size": 20, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/bs10to5_at5",
        "framework": "lightning",
        "about": "A.5 batch size 10 -> 5 from step 5",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 5, "crash_at": 5},
            {"args": {"max_epochs": 2}, "batch_size": 5, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/bs10to5_at13",
        "framework": "lightning",
        "about": "A.5 batch size 10 -> 5 from step 13",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "batch_size": 5, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/stateful_bs10to20_at13",
        "framework": "lightning",
        "about": "F StatefulDataLoader state restored at a new batch size 20",
        "calls": [
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "loader": "stateful", "batch_size": 20, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/stateful_bs10to5_at13",
        "framework": "lightning",
        "about": "F StatefulDataLoader state restored at a new batch size 5",
        "calls": [
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 2}, "loader": "stateful", "batch_size": 5, "resume": "latest"},
        ],
    },
    # (f) a second data set: "2 epochs on A, then 0.1 epoch on B"
    {
        "id": "lightning/phase_B_new_trainer",
        "framework": "lightning",
        "about": "A.7 new Trainer(max_epochs=3, limit_train_batches=0.1), fit(B, ckpt_path=A end)",
        "calls": [
            {"args": {"max_epochs": 2}, "save_at_end": True},
            {"data": B, "args": {"max_epochs": 3, "limit_train_batches": 0.1}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/phase_B_same_trainer",
        "framework": "lightning",
        "about": "A.7 same Trainer: fit_loop.max_epochs=3, limit_train_batches=0.1, fit(B)",
        "calls": [
            {"args": {"max_epochs": 2}},
            {
                "fresh": False,
                "data": B,
                "set": {"fit_loop.max_epochs": 3, "limit_train_batches": 0.1},
            },
        ],
    },
    {
        "id": "lightning/phase_B_max_steps",
        "framework": "lightning",
        "about": "A.5 max_steps=20 on A, then resume its end checkpoint with B and max_steps=23",
        "calls": [
            {"args": {"max_steps": 20}, "save_at_end": True},
            {"data": B, "args": {"max_steps": 23}, "resume": "latest"},
        ],
    },
    # (g) end-of-fit checkpoints and the epoch guard
    {
        "id": "lightning/end_max_steps15_resume20",
        "framework": "lightning",
        "about": "A.3 checkpoint after fit stopped by max_steps=15, resumed with max_steps=20",
        "calls": [
            {"args": {"max_steps": 15}, "save_at_end": True},
            {"args": {"max_steps": 20}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/inner_max_steps15_resume20",
        "framework": "lightning",
        "about": "A.3 compare: checkpoint at step 15 inside a max_steps=20 run, resumed",
        "calls": [
            {"args": {"max_steps": 20}, "save_every": 15, "crash_at": 15},
            {"args": {"max_steps": 20}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/resume_epoch_gt_max",
        "framework": "lightning",
        "about": "A.4 end checkpoint with current_epoch=2 resumed with max_epochs=1: error",
        "calls": [
            {"args": {"max_epochs": 2}, "save_at_end": True},
            {"args": {"max_epochs": 1}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/resume_epoch_eq_max",
        "framework": "lightning",
        "about": "A.4 end checkpoint with current_epoch=2 resumed with max_epochs=2: 0 steps",
        "calls": [
            {"args": {"max_epochs": 2}, "save_at_end": True},
            {"args": {"max_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/resume_epoch_extend",
        "framework": "lightning",
        "about": "A.4 end checkpoint with current_epoch=2 resumed with max_epochs=3",
        "calls": [
            {"args": {"max_epochs": 2}, "save_at_end": True},
            {"args": {"max_epochs": 3}, "resume": "latest"},
        ],
    },
    # (h) the crash model: killed at the first batch that starts with global_step >= k; the
    # re-run resumes from the newest checkpoint its ModelCheckpoint wrote
    {
        "id": "lightning/every1_crash13",
        "framework": "lightning",
        "about": "crash model: checkpoint every step, crash at 13, the same script re-run: the "
        "killed Trainer counts batch 3 of epoch 1 completed, the step-13 checkpoint does not",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"max_epochs": 2}, "save_every": 1, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/every4_crash13",
        "framework": "lightning",
        "about": "crash model: checkpoint every 4 steps, crash at 13, resume from step 12: "
        "step 13 lost and trained again",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 4, "crash_at": 13},
            {"args": {"max_epochs": 2}, "save_every": 4, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/every4_crash13_stateful",
        "framework": "lightning",
        "about": "crash model: as every4_crash13 with a StatefulDataLoader (resumes at sample 20)",
        "calls": [
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 4, "crash_at": 13},
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 4, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/every4_crash10",
        "framework": "lightning",
        "about": "crash model: step 10 ends epoch 0 before the kill (epoch counters moved, "
        "epoch 1 started); the newest checkpoint is step 8",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 4, "crash_at": 10},
            {"args": {"max_epochs": 2}, "save_every": 4, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/stateful_crash10_epoch_end",
        "framework": "lightning",
        "about": "crash model: a StatefulDataLoader saved on epoch 0's last batch resumes "
        "exhausted: epoch 1 trains nothing yet counts as completed",
        "calls": [
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 10, "crash_at": 10},
            {"args": {"max_epochs": 2}, "loader": "stateful", "save_every": 10, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/accum3_every2_crash5",
        "framework": "lightning",
        "about": "crash model under accumulate_grad_batches=3: killed at the first micro-batch "
        "of step 6; the newest checkpoint is step 4, saved on epoch 0's last batch",
        "calls": [
            {
                "args": {"max_epochs": 2, "accumulate_grad_batches": 3},
                "save_every": 2,
                "crash_at": 5,
            },
            {
                "args": {"max_epochs": 2, "accumulate_grad_batches": 3},
                "save_every": 2,
                "resume": "latest",
            },
        ],
    },
    {
        "id": "lightning/crash_at_last_step",
        "framework": "lightning",
        "about": "crash model: crash_at=20 in a 20-step fit: no step starts after 20, no crash",
        "calls": [{"args": {"max_epochs": 2}, "save_every": 4, "crash_at": 20}],
    },
    {
        "id": "lightning/max_steps15_crash15",
        "framework": "lightning",
        "about": "crash model: max_steps=15 stops the fit before another step: no crash",
        "calls": [{"args": {"max_steps": 15}, "save_every": 4, "crash_at": 15}],
    },
    {
        "id": "lightning/crash0",
        "framework": "lightning",
        "about": "crash model: crash_at=0 kills the first batch; no checkpoint, the re-run starts "
        "afresh",
        "calls": [
            {"args": {"max_epochs": 1}, "save_every": 4, "crash_at": 0},
            {"args": {"max_epochs": 1}, "save_every": 4, "resume": "latest"},
        ],
    },
    # (i) ckpt_path and the callbacks that wrote the checkpoint
    {
        "id": "lightning/ckpt_callbacks_differ",
        "framework": "lightning",
        "about": "checkpoint by ModelCheckpoint(every_n_train_steps=4), resumed by a Trainer "
        "with every_n_train_steps=5: 'Be aware that when using `ckpt_path`' names the first",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 4, "crash_at": 13},
            {"args": {"max_epochs": 2}, "save_every": 5, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/ckpt_callbacks_end_checkpoint",
        "framework": "lightning",
        "about": "trainer.save_checkpoint by a Trainer with a ModelCheckpoint, resumed by one "
        "without: the warning",
        "calls": [
            {"args": {"max_epochs": 1}, "save_every": 100, "save_at_end": True},
            {"args": {"max_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/ckpt_no_callback_state",
        "framework": "lightning",
        "about": "a checkpoint with no callback state, resumed by a Trainer with a "
        "ModelCheckpoint: no warning (only missing callbacks warn)",
        "calls": [
            {"args": {"max_epochs": 1}, "save_at_end": True},
            {"args": {"max_epochs": 2}, "save_every": 4, "resume": "latest"},
        ],
    },
    # (j) a float max_epochs: accepted by Trainer(...), refused inside fit
    {
        "id": "lightning/max_epochs_float0.5",
        "framework": "lightning",
        "about": "max_epochs=0.5: built, then fit raises a bare AssertionError (fit_loop.done)",
        "calls": [{"args": {"max_epochs": 0.5}}],
    },
    {
        "id": "lightning/max_epochs_float1.5",
        "framework": "lightning",
        "about": "max_epochs=1.5: the same AssertionError, nothing trained",
        "calls": [{"args": {"max_epochs": 1.5}}],
    },
    {
        "id": "lightning/max_epochs_float2.0",
        "framework": "lightning",
        "about": "max_epochs=2.0: an integral float is not an int: the same AssertionError",
        "calls": [{"args": {"max_epochs": 2.0}}],
    },
    {
        "id": "lightning/max_epochs_float-1.0",
        "framework": "lightning",
        "about": "max_epochs=-1.0 with max_steps=5: not 'no limit': the same AssertionError",
        "calls": [{"args": {"max_epochs": -1.0, "max_steps": 5}}],
    },
    {
        "id": "lightning/max_epochs_float-2.5",
        "framework": "lightning",
        "about": "max_epochs=-2.5: the Trainer's check looks at ints only: built, AssertionError",
        "calls": [{"args": {"max_epochs": -2.5}}],
    },
    {
        "id": "lightning/max_epochs_float0.5_max_steps0",
        "framework": "lightning",
        "about": "max_epochs=0.5, max_steps=0: max_steps stops the fit before the assert",
        "calls": [{"args": {"max_epochs": 0.5, "max_steps": 0}}],
    },
    {
        "id": "lightning/max_epochs_float0.5_limit0",
        "framework": "lightning",
        "about": "max_epochs=0.5, limit_train_batches=0: the assert comes before the skip",
        "calls": [{"args": {"max_epochs": 0.5, "limit_train_batches": 0}}],
    },
    {
        "id": "lightning/resume_max_epochs_float0.5",
        "framework": "lightning",
        "about": "step-13 checkpoint (current_epoch=1) resumed with max_epochs=0.5: "
        "restore_loops refuses it first",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 0.5}, "save_every": 13, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/resume_max_epochs_float1.5",
        "framework": "lightning",
        "about": "step-13 checkpoint resumed with max_epochs=1.5: restored, then AssertionError",
        "calls": [
            {"args": {"max_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_epochs": 1.5}, "save_every": 13, "resume": "latest"},
        ],
    },
    {
        "id": "lightning/set_max_epochs_float1.5",
        "framework": "lightning",
        "about": "fit_loop.max_epochs = 1.5 on a Trainer that fit 1 epoch: AssertionError",
        "calls": [
            {"args": {"max_epochs": 1}},
            {"fresh": False, "set": {"fit_loop.max_epochs": 1.5}},
        ],
    },
    # (j) learning rates: configure_optimizers returns transformers' warmup schedule (a LambdaLR)
    # with interval "step", over trainer.estimated_stepping_batches unless "total" is given; the
    # runner's optimizer has learning rate lr * 0.1 and records the rate of every step
    {
        "id": "lightning/lr_cosine_epochs2",
        "framework": "lightning",
        "about": "learning rates: warmup 3, cosine to 0.1 over estimated_stepping_batches = 20 "
        "(max_epochs=2 sets up the data first): the uninterrupted run",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            }
        ],
    },
    {
        "id": "lightning/lr_cosine_every1_crash13",
        "framework": "lightning",
        "about": "learning rates: checkpoint every step, crash at 13, the same script re-run: "
        "the restored LambdaLR continues at last_epoch 13",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "save_every": 1,
                "crash_at": 13,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "args": {"max_epochs": 2},
                "save_every": 1,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_cosine_every4_crash13",
        "framework": "lightning",
        "about": "learning rates: checkpoint every 4 steps, crash at 13: step 13 is lost and "
        "trained again at the rate it had",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "save_every": 4,
                "crash_at": 13,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "args": {"max_epochs": 2},
                "save_every": 4,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_stateful_every4_crash13",
        "framework": "lightning",
        "about": "learning rates: estimated_stepping_batches sets the data up before ckpt_path "
        "is restored, so a StatefulDataLoader's saved position is never loaded",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "loader": "stateful",
                "save_every": 4,
                "crash_at": 13,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "args": {"max_epochs": 2},
                "loader": "stateful",
                "save_every": 4,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_stateful_total20_every4_crash13",
        "framework": "lightning",
        "about": "learning rates: the same with num_training_steps=20 written out: no early "
        "data setup, the StatefulDataLoader resumes at its saved position",
        "calls": [
            {
                "args": {"max_epochs": 2},
                "loader": "stateful",
                "save_every": 4,
                "crash_at": 13,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": 20,
                },
            },
            {
                "args": {"max_epochs": 2},
                "loader": "stateful",
                "save_every": 4,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": 20,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_accum3_every2_crash5",
        "framework": "lightning",
        "about": "learning rates under accumulate_grad_batches=3: the scheduler steps once per "
        "optimizer step (4 an epoch, the last of one batch); estimated_stepping_batches = 8",
        "calls": [
            {
                "args": {"max_epochs": 2, "accumulate_grad_batches": 3},
                "save_every": 2,
                "crash_at": 5,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "args": {"max_epochs": 2, "accumulate_grad_batches": 3},
                "save_every": 2,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_epochs2_max_steps15_linear",
        "framework": "lightning",
        "about": "learning rates: get_linear_schedule_with_warmup over estimated_stepping_batches "
        "= min(2 epochs of 10, max_steps=15)",
        "calls": [
            {
                "args": {"max_epochs": 2, "max_steps": 15},
                "lr_schedule": {
                    "decay": "linear",
                    "warmup": 2,
                    "floor": 0.0,
                    "lr": 1.0,
                    "total": None,
                },
            }
        ],
    },
    {
        "id": "lightning/lr_constant_warmup4",
        "framework": "lightning",
        "about": "learning rates: get_constant_schedule_with_warmup(4) at lr 0.5 for one epoch",
        "calls": [
            {
                "args": {"max_epochs": 1},
                "lr_schedule": {
                    "decay": "constant",
                    "warmup": 4,
                    "floor": 0.0,
                    "lr": 0.5,
                    "total": None,
                },
            }
        ],
    },
    {
        "id": "lightning/lr_second_fit_max_steps",
        "framework": "lightning",
        "about": "learning rates: a second fit on the same Trainer calls configure_optimizers "
        "again: a new LambdaLR from 0 over the new absolute max_steps=20, not the 12 left",
        "calls": [
            {
                "args": {"max_steps": 8},
                "lr_schedule": {
                    "decay": "linear",
                    "warmup": 2,
                    "floor": 0.2,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "fresh": False,
                "set": {"fit_loop.epoch_loop.max_steps": 20},
                "lr_schedule": {
                    "decay": "linear",
                    "warmup": 2,
                    "floor": 0.2,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_second_fit_epochs_B",
        "framework": "lightning",
        "about": "learning rates: fit_loop.max_epochs = 2 and fit(B) on the same Trainer: "
        "estimated_stepping_batches is 2 epochs of B (60), of which the fit trains 30",
        "calls": [
            {
                "args": {"max_epochs": 1},
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "fresh": False,
                "data": B,
                "set": {"fit_loop.max_epochs": 2},
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_second_fit_crash14",
        "framework": "lightning",
        "about": "learning rates: the two-fit script killed at 14 in its second fit and run "
        "again: the first fit restores the second's scheduler and trains nothing, the second "
        "builds a new one from 0",
        "calls": [
            {
                "args": {"max_steps": 8},
                "save_every": 1,
                "crash_at": 14,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 2,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "fresh": False,
                "set": {"fit_loop.epoch_loop.max_steps": 20},
                "lr_schedule": {
                    "decay": "linear",
                    "warmup": 0,
                    "floor": 0.0,
                    "lr": 0.5,
                    "total": 12,
                },
            },
            {
                "args": {"max_steps": 8},
                "save_every": 1,
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 2,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "fresh": False,
                "set": {"fit_loop.epoch_loop.max_steps": 20},
                "lr_schedule": {
                    "decay": "linear",
                    "warmup": 0,
                    "floor": 0.0,
                    "lr": 0.5,
                    "total": 12,
                },
            },
        ],
    },
    {
        "id": "lightning/lr_end_max_steps10_resume20",
        "framework": "lightning",
        "about": "learning rates: an end-of-fit checkpoint resumed by a Trainer(max_steps=20) "
        "whose optimizer has lr 0.5: the first step uses the checkpoint's learning rate, the "
        "next ones the checkpoint's base_lrs times the new lambda",
        "calls": [
            {
                "args": {"max_steps": 10},
                "save_at_end": True,
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 1.0,
                    "total": None,
                },
            },
            {
                "args": {"max_steps": 20},
                "resume": "latest",
                "lr_schedule": {
                    "decay": "cosine",
                    "warmup": 3,
                    "floor": 0.1,
                    "lr": 0.5,
                    "total": None,
                },
            },
        ],
    },
]

TRANSFORMERS: list[Scenario] = [
    # (a) plain durations
    {
        "id": "transformers/epochs2",
        "framework": "transformers",
        "about": "B.2 num_train_epochs=2",
        "calls": [{"args": {"num_train_epochs": 2}}],
    },
    {
        "id": "transformers/max_steps15",
        "framework": "transformers",
        "about": "B.1 max_steps=15 overrides num_train_epochs (default 3)",
        "calls": [{"args": {"max_steps": 15}}],
    },
    {
        "id": "transformers/epochs1.5",
        "framework": "transformers",
        "about": "B.2 num_train_epochs=1.5",
        "calls": [{"args": {"num_train_epochs": 1.5}}],
    },
    {
        "id": "transformers/epochs0.1",
        "framework": "transformers",
        "about": "B.2 num_train_epochs=0.1",
        "calls": [{"args": {"num_train_epochs": 0.1}}],
    },
    {
        "id": "transformers/epochs0.01",
        "framework": "transformers",
        "about": "B.2 num_train_epochs=0.01: ceil(0.1) = 1 step?",
        "calls": [{"args": {"num_train_epochs": 0.01}}],
    },
    {
        "id": "transformers/n95",
        "framework": "transformers",
        "about": "partial last batch (95 samples)",
        "calls": [{"data": A95, "args": {"num_train_epochs": 1}}],
    },
    # (b) gradient accumulation
    {
        "id": "transformers/accum3_epochs2",
        "framework": "transformers",
        "about": "B.2 gradient_accumulation_steps=3, 10 micro-batches per epoch",
        "calls": [{"args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3}}],
    },
    {
        "id": "transformers/accum3_epochs1.5",
        "framework": "transformers",
        "about": "B.2 GA=3 and fractional epochs: max_steps=ceil(1.5*4)=6",
        "calls": [{"args": {"num_train_epochs": 1.5, "gradient_accumulation_steps": 3}}],
    },
    {
        "id": "transformers/accum3_crash5_resume",
        "framework": "transformers",
        "about": "B.4 GA=3: crash after step 5, resume (skips (5%4)*3 micro-batches)",
        "calls": [
            {
                "args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3},
                "save_every": 5,
                "crash_at": 5,
            },
            {"args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3}, "resume": "latest"},
        ],
    },
    # (c) a second train() on the same Trainer
    {
        "id": "transformers/second_train_same",
        "framework": "transformers",
        "about": "B.5 second train() starts a fresh TrainerState: global_step ends at 10, not 20",
        "calls": [{"args": {"num_train_epochs": 1}}, {"fresh": False}],
    },
    # (d) crash and resume with the same config
    {
        "id": "transformers/crash13",
        "framework": "transformers",
        "about": "B.4 crash after step 13, resume: skip_first_batches to the exact position",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/crash13_ignore_data_skip",
        "framework": "transformers",
        "about": "B.4 ignore_data_skip=True: epoch restarts at batch 0, state.epoch goes back",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 2, "ignore_data_skip": True}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/shuffle_epochs2",
        "framework": "transformers",
        "about": "reference order for the shuffled crash/resume below (uninterrupted)",
        "calls": [{"args": {"num_train_epochs": 2}, "shuffle": True}],
    },
    {
        "id": "transformers/crash13_shuffle",
        "framework": "transformers",
        "about": "B.4 random sampler: the resume reproduces the uninterrupted order?",
        "calls": [
            {"args": {"num_train_epochs": 2}, "shuffle": True, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "shuffle": True, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/crash10",
        "framework": "transformers",
        "about": "B.4 crash exactly at an epoch boundary (step 10)",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 10, "crash_at": 10},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    # (e) batch size changed on resume
    {
        "id": "transformers/bs10to20_at5",
        "framework": "transformers",
        "about": "B.4 batch 10 -> 20 at step 5",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 5, "crash_at": 5},
            {"args": {"num_train_epochs": 2}, "batch_size": 20, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/bs10to20_at13",
        "framework": "transformers",
        "about": "B.4 batch 10 -> 20 at step 13: new max_steps=10 <= 13",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "batch_size": 20, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/bs10to5_at5",
        "framework": "transformers",
        "about": "B.4 batch 10 -> 5 at step 5",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 5, "crash_at": 5},
            {"args": {"num_train_epochs": 2}, "batch_size": 5, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/bs10to5_at13",
        "framework": "transformers",
        "about": "B.4 batch 10 -> 5 at step 13",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "batch_size": 5, "resume": "latest"},
        ],
    },
    # (f) a second data set
    {
        "id": "transformers/phase_B_2.1",
        "framework": "transformers",
        "about": "B.4 2 epochs on A (checkpoint-20), resume with B (300) and num_train_epochs=2.1",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 10},
            {"data": B, "args": {"num_train_epochs": 2.1}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/phase_B100_2.1",
        "framework": "transformers",
        "about": "B.4 same, B the same size as A (100): looks right only because sizes match",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 10},
            {"data": B100, "args": {"num_train_epochs": 2.1}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/phase_B50_2.1",
        "framework": "transformers",
        "about": "B.4 same, B smaller (50): max_steps=ceil(2.1*5)=11 <= 20",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 10},
            {"data": B50, "args": {"num_train_epochs": 2.1}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/phase_B_fresh_0.1",
        "framework": "transformers",
        "about": "B.4 workaround: a fresh Trainer on B with num_train_epochs=0.1 (counters from 0)",
        "calls": [
            {"args": {"num_train_epochs": 2}},
            {"data": B, "args": {"num_train_epochs": 0.1}},
        ],
    },
    # (h) resume with a different length
    {
        "id": "transformers/resume13_max_steps10",
        "framework": "transformers",
        "about": "B.4 checkpoint global_step 13 > new max_steps=10",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_steps": 10}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/resume13_max_steps15",
        "framework": "transformers",
        "about": "B.4 checkpoint global_step 13, new max_steps=15",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"max_steps": 15}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/resume13_epochs3",
        "framework": "transformers",
        "about": "B.4 checkpoint global_step 13, new num_train_epochs=3",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 13, "crash_at": 13},
            {"args": {"num_train_epochs": 3}, "resume": "latest"},
        ],
    },
    # (i) the kill comes as the next optimizer step starts (on_step_begin); the checkpoints are
    # where save_steps/save_strategy put them, so the steps after the newest one are trained again
    {
        "id": "transformers/save4_crash13",
        "framework": "transformers",
        "about": "killed after step 13, save_steps=4: resume from checkpoint-12, step 13 again",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 4, "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/accum3_bs5_save4_crash13",
        "framework": "transformers",
        "about": "GA=3, 20 micro-batches of 5 (7 updates/epoch): killed after 13, from 12",
        "calls": [
            {
                "batch_size": 5,
                "args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3},
                "save_every": 4,
                "crash_at": 13,
            },
            {
                "batch_size": 5,
                "args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3},
                "resume": "latest",
            },
        ],
    },
    {
        "id": "transformers/save3_crash10_epoch_end",
        "framework": "transformers",
        "about": "killed after step 10, which ends epoch 0; save_steps=3: from checkpoint-9",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 3, "crash_at": 10},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/save_epoch_crash10",
        "framework": "transformers",
        "about": "save_strategy='epoch', killed after step 10: the epoch-end save came first",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": "epoch", "crash_at": 10},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/save_epoch_crash13",
        "framework": "transformers",
        "about": "save_strategy='epoch', killed after step 13: from checkpoint-10, 3 steps again",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": "epoch", "crash_at": 13},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/save_epoch_max_steps15_resume20",
        "framework": "transformers",
        "about": "save_strategy='epoch' saves at the end of the epoch a max_steps=15 stop cuts",
        "calls": [
            {"args": {"max_steps": 15}, "save_every": "epoch"},
            {"args": {"max_steps": 20}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/save4_crash20_last_step",
        "framework": "transformers",
        "about": "crash_at=20 of 20 steps: no step starts after it, so no kill",
        "calls": [{"args": {"num_train_epochs": 2}, "save_every": 4, "crash_at": 20}],
    },
    {
        "id": "transformers/save4_crash0",
        "framework": "transformers",
        "about": "crash_at=0: killed before step 1, nothing saved; the re-run starts over",
        "calls": [
            {"args": {"num_train_epochs": 2}, "save_every": 4, "crash_at": 0},
            {"args": {"num_train_epochs": 2}, "resume": "latest"},
        ],
    },
    # (j) learning rates: the runner records the rate of every optimizer step (``lr`` in its
    # position); the base is 0.1, so each rate is 0.1 times the scheduler's factor
    {
        "id": "transformers/lr_cosine_min",
        "framework": "transformers",
        "about": "cosine_with_min_lr (min_lr_rate 0.1), 4 warmup steps, 20 steps: reference",
        "calls": [{"args": {"num_train_epochs": 2, **HF_COSINE_MIN}}],
    },
    {
        "id": "transformers/lr_cosine_min_save1_crash9",
        "framework": "transformers",
        "about": "killed after step 9 mid-decay, save_steps=1: scheduler.pt restores step 9",
        "calls": [
            {"args": {"num_train_epochs": 2, **HF_COSINE_MIN}, "save_every": 1, "crash_at": 9},
            {"args": {"num_train_epochs": 2, **HF_COSINE_MIN}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/lr_cosine_min_save4_crash9",
        "framework": "transformers",
        "about": "killed after step 9, save_steps=4: from checkpoint-8, step 9's rate again",
        "calls": [
            {"args": {"num_train_epochs": 2, **HF_COSINE_MIN}, "save_every": 4, "crash_at": 9},
            {"args": {"num_train_epochs": 2, **HF_COSINE_MIN}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/lr_cosine_accum3_bs5_save4_crash9",
        "framework": "transformers",
        "about": "GA=3, 7 updates an epoch: one scheduler step per optimizer step, crash after 9",
        "calls": [
            {
                "batch_size": 5,
                "args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3, **HF_COSINE},
                "save_every": 4,
                "crash_at": 9,
            },
            {
                "batch_size": 5,
                "args": {"num_train_epochs": 2, "gradient_accumulation_steps": 3, **HF_COSINE},
                "resume": "latest",
            },
        ],
    },
    {
        "id": "transformers/lr_two_trainers_crash3",
        "framework": "transformers",
        "about": "one Trainer per call: each warms up over its own max_steps; the second is "
        "killed after its step 3 and resumed",
        "calls": [
            {"args": {"max_steps": 6, **HF_COSINE}},
            {"data": B, "args": {"max_steps": 8, **HF_LINEAR}, "save_every": 1, "crash_at": 3},
            {"data": B, "args": {"max_steps": 8, **HF_LINEAR}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/lr_cosine_resume_at_end",
        "framework": "transformers",
        "about": "resumed from its last checkpoint (max_steps=6 inside epoch 0): one step more, "
        "at the rate the finished scheduler left",
        "calls": [
            {"args": {"max_steps": 6, **HF_COSINE_MIN}, "save_every": 1},
            {"args": {"max_steps": 6, **HF_COSINE_MIN}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/lr_linear_resume_max_steps20",
        "framework": "transformers",
        "about": "linear over max_steps=10, killed after 4; resumed with max_steps=20: the "
        "restored scheduler's length?",
        "calls": [
            {"args": {"max_steps": 10, **HF_LINEAR}, "save_every": 4, "crash_at": 4},
            {"args": {"max_steps": 20, **HF_LINEAR}, "resume": "latest"},
        ],
    },
    {
        "id": "transformers/lr_resume_new_rate_and_type",
        "framework": "transformers",
        "about": "resumed with learning_rate=0.5 and cosine: the base stays the checkpoint's, "
        "also for the next train() on that Trainer",
        "calls": [
            {"args": {"max_steps": 10, **HF_LINEAR}, "save_every": 4, "crash_at": 4},
            {
                "args": {"max_steps": 10, **HF_COSINE, "learning_rate": 0.5},
                "resume": "latest",
            },
            {"fresh": False},
        ],
    },
    {
        "id": "transformers/lr_accum3_epochs1.5_warmup_ratio",
        "framework": "transformers",
        "about": "GA=3, num_train_epochs=1.5 (max_steps 6), warmup_steps=0.5: ceil(6 * 0.5) = 3",
        "calls": [
            {
                "args": {
                    "num_train_epochs": 1.5,
                    "gradient_accumulation_steps": 3,
                    **HF_COSINE,
                    "warmup_steps": 0.5,
                }
            }
        ],
    },
    {
        "id": "transformers/lr_second_train_restarts",
        "framework": "transformers",
        "about": "a second train() on the same Trainer builds a new scheduler over its own length",
        "calls": [
            {"args": {"num_train_epochs": 0.5, **HF_LINEAR, "warmup_steps": 0.5}},
            {"fresh": False, "set": {"args.num_train_epochs": 0.3}},
        ],
    },
    {
        "id": "transformers/lr_constant_ignores_warmup",
        "framework": "transformers",
        "about": "lr_scheduler_type='constant' with warmup_steps=2: no warmup",
        "calls": [{"args": {"max_steps": 5, **HF_LINEAR, "lr_scheduler_type": "constant"}}],
    },
    {
        "id": "transformers/lr_constant_with_warmup",
        "framework": "transformers",
        "about": "constant_with_warmup, 3 warmup steps",
        "calls": [
            {
                "args": {
                    "max_steps": 5,
                    **HF_LINEAR,
                    "lr_scheduler_type": "constant_with_warmup",
                    "warmup_steps": 3,
                }
            }
        ],
    },
    {
        "id": "transformers/lr_polynomial_to_floor",
        "framework": "transformers",
        "about": "polynomial, power 1, lr_end 0.01: a linear decay to a floor after the warmup",
        "calls": [
            {
                "args": {
                    "max_steps": 10,
                    **HF_LINEAR,
                    "lr_scheduler_type": "polynomial",
                    "lr_scheduler_kwargs": {"lr_end": 0.01, "power": 1.0},
                }
            }
        ],
    },
    {
        "id": "transformers/lr_warmup_stable_decay",
        "framework": "transformers",
        "about": "warmup_stable_decay: warms up from min_lr_ratio, not from 0",
        "calls": [
            {
                "args": {
                    "max_steps": 10,
                    **HF_LINEAR,
                    "lr_scheduler_type": "warmup_stable_decay",
                    "lr_scheduler_kwargs": {
                        "num_decay_steps": 4,
                        "min_lr_ratio": 0.1,
                        "decay_type": "linear",
                    },
                }
            }
        ],
    },
    {
        "id": "transformers/lr_max_steps0",
        "framework": "transformers",
        "about": "max_steps=0 trains one step; linear over 0 steps gives it rate 0",
        "calls": [{"args": {"max_steps": 0, "learning_rate": 0.1}}],
    },
]

KERAS: list[Scenario] = [
    # (a) plain durations
    {
        "id": "keras/epochs2",
        "framework": "keras",
        "about": "C fit(epochs=2)",
        "calls": [{"args": {"epochs": 2}}],
    },
    {
        "id": "keras/steps_per_epoch5_epochs3",
        "framework": "keras",
        "about": "C steps_per_epoch keeps the iterator across epochs",
        "calls": [{"args": {"epochs": 3, "steps_per_epoch": 5}}],
    },
    {
        "id": "keras/steps_per_epoch15_epochs1",
        "framework": "keras",
        "about": "C steps_per_epoch larger than the data: 'ran out of data'",
        "calls": [{"args": {"epochs": 1, "steps_per_epoch": 15}}],
    },
    {
        "id": "keras/steps_per_epoch15_epochs2",
        "framework": "keras",
        "about": "C steps_per_epoch=15 over two epochs: is the iterator re-created?",
        "calls": [{"args": {"epochs": 2, "steps_per_epoch": 15}}],
    },
    {
        "id": "keras/n95",
        "framework": "keras",
        "about": "partial last batch (95 samples)",
        "calls": [{"data": A95, "args": {"epochs": 1}}],
    },
    {
        "id": "keras/initial_epoch1_epochs2",
        "framework": "keras",
        "about": "C epochs is the final epoch index with initial_epoch",
        "calls": [{"args": {"epochs": 2, "initial_epoch": 1}}],
    },
    {
        "id": "keras/initial_epoch2_epochs2",
        "framework": "keras",
        "about": "C initial_epoch >= epochs runs nothing",
        "calls": [{"args": {"epochs": 2, "initial_epoch": 2}}],
    },
    # (b) gradient accumulation
    {
        "id": "keras/accum3_epochs2",
        "framework": "keras",
        "about": "C optimizer gradient_accumulation_steps=3 crosses epochs; 2 micro-batches left",
        "calls": [{"args": {"epochs": 2}, "optimizer": {"gradient_accumulation_steps": 3}}],
    },
    {
        "id": "keras/accum3_crash3_resume",
        "framework": "keras",
        "about": "C GA=3 with BackupAndRestore(save_freq=1): crash after update 3, resume",
        "calls": [
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": 1,
                "crash_at": 3,
            },
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": 1,
            },
        ],
    },
    # (c) a second fit on the same model
    {
        "id": "keras/second_fit_same",
        "framework": "keras",
        "about": "C two fit(epochs=1): iterations keep counting, epoch index restarts",
        "calls": [{"args": {"epochs": 1}}, {"fresh": False, "args": {"epochs": 1}}],
    },
    # (d) crash and resume with BackupAndRestore
    {
        "id": "keras/crash13_freq1",
        "framework": "keras",
        "about": "C BackupAndRestore(save_freq=1): metadata batch is never read, epoch restarts",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": 1},
        ],
    },
    {
        "id": "keras/crash13_freq_epoch",
        "framework": "keras",
        "about": "C BackupAndRestore(save_freq='epoch'): restore from the end of epoch 0",
        "calls": [
            {"args": {"epochs": 2}, "save_every": "epoch", "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": "epoch"},
        ],
    },
    {
        "id": "keras/restore_then_plain_fit",
        "framework": "keras",
        "about": "C model._initial_epoch is never reset after a restore",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": 1},
            {"fresh": False, "args": {"epochs": 2}},
        ],
    },
    # (e) batch size changed on resume
    {
        "id": "keras/bs10to20_at5",
        "framework": "keras",
        "about": "C batch 10 -> 20 after step 5",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 5},
            {"args": {"epochs": 2}, "batch_size": 20, "save_every": 1},
        ],
    },
    {
        "id": "keras/bs10to20_at13",
        "framework": "keras",
        "about": "C batch 10 -> 20 after step 13",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 2}, "batch_size": 20, "save_every": 1},
        ],
    },
    {
        "id": "keras/bs10to5_at5",
        "framework": "keras",
        "about": "C batch 10 -> 5 after step 5",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 5},
            {"args": {"epochs": 2}, "batch_size": 5, "save_every": 1},
        ],
    },
    {
        "id": "keras/bs10to5_at13",
        "framework": "keras",
        "about": "C batch 10 -> 5 after step 13",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 2}, "batch_size": 5, "save_every": 1},
        ],
    },
    # (f) a second data set
    {
        "id": "keras/phase_B_fit_again",
        "framework": "keras",
        "about": "C 2 epochs on A, then fit(B, epochs=3, initial_epoch=2, steps_per_epoch=3)",
        "calls": [
            {"args": {"epochs": 2}},
            {
                "fresh": False,
                "data": B,
                "args": {"epochs": 3, "initial_epoch": 2, "steps_per_epoch": 3},
            },
        ],
    },
    {
        "id": "keras/phase_B_backup",
        "framework": "keras",
        "about": "C 2 epochs on A kept in a backup; new model restores it and fits B for 3 steps",
        "calls": [
            {"args": {"epochs": 2}, "save_every": "epoch", "save_at_end": True},
            {"data": B, "args": {"epochs": 3, "steps_per_epoch": 3}, "save_every": "epoch"},
        ],
    },
    # (g) a float epochs
    {
        "id": "keras/epochs1.5",
        "framework": "keras",
        "about": "C fit(epochs=1.5): epochs goes to range() unchecked",
        "calls": [{"args": {"epochs": 1.5}}],
    },
    {
        "id": "keras/epochs0.5",
        "framework": "keras",
        "about": "C fit(epochs=0.5): less than one epoch",
        "calls": [{"args": {"epochs": 0.5}}],
    },
    {
        "id": "keras/epochs2.0",
        "framework": "keras",
        "about": "C fit(epochs=2.0): a whole number as a float",
        "calls": [{"args": {"epochs": 2.0}}],
    },
    {
        "id": "keras/epochs1.5_initial_epoch1",
        "framework": "keras",
        "about": "C fit(epochs=1.5, initial_epoch=1)",
        "calls": [{"args": {"epochs": 1.5, "initial_epoch": 1}}],
    },
    {
        "id": "keras/epochs1.5_steps_per_epoch5",
        "framework": "keras",
        "about": "C fit(epochs=1.5, steps_per_epoch=5): 7.5 steps' worth",
        "calls": [{"args": {"epochs": 1.5, "steps_per_epoch": 5}}],
    },
    {
        "id": "keras/epochs1.5_fit_again",
        "framework": "keras",
        "about": "C fit(epochs=1), then fit(epochs=1.5) on the same model",
        "calls": [{"args": {"epochs": 1}}, {"fresh": False, "args": {"epochs": 1.5}}],
    },
    {
        "id": "keras/epochs1.5_after_restore",
        "framework": "keras",
        "about": "C fit(epochs=1.5) with BackupAndRestore after a crash: restored, then fails, "
        "and the backup is kept for the next run",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 13},
            {"args": {"epochs": 1.5}, "save_every": 1},
            {"args": {"epochs": 2}, "save_every": 1},
        ],
    },
    # (h) the crash model: killed as an optimizer step is about to start
    {
        "id": "keras/save_freq4_crash13",
        "framework": "keras",
        "about": "C BackupAndRestore(save_freq=4) counts batches across epochs: the last backup "
        "is at step 12, killed before step 14",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 4, "crash_at": 13},
            {"args": {"epochs": 2}, "save_every": 4},
        ],
    },
    {
        "id": "keras/crash10_freq_epoch",
        "framework": "keras",
        "about": "C killed before step 11: epoch 0's end saved the backup, epoch 1 has begun",
        "calls": [
            {"args": {"epochs": 2}, "save_every": "epoch", "crash_at": 10},
            {"args": {"epochs": 2}, "save_every": "epoch"},
        ],
    },
    {
        "id": "keras/crash20_end_of_fit",
        "framework": "keras",
        "about": "C crash_at=20 in a 20-step fit: it ends (backup deleted) without a kill; the "
        "next fit on the model is killed before its first step",
        "calls": [
            {"args": {"epochs": 2}, "save_every": 1, "crash_at": 20},
            {"fresh": False, "args": {"epochs": 3}, "save_every": 1, "crash_at": 20},
            {"args": {"epochs": 3}, "save_every": 1},
        ],
    },
    {
        "id": "keras/accum3_crash_mid_step_restore",
        "framework": "keras",
        "about": "C GA=3: the epoch backup holds raw 10 (one micro-batch into step 4); a resumed "
        "run with crash_at=3 finishes step 4 and is killed before step 5",
        "calls": [
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": "epoch",
                "crash_at": 4,
            },
            {
                "args": {"epochs": 3},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": "epoch",
                "crash_at": 3,
            },
            {
                "args": {"epochs": 3},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": "epoch",
            },
        ],
    },
    {
        "id": "keras/steps_per_epoch15_crash10",
        "framework": "keras",
        "about": "C steps_per_epoch=15: epoch 0 runs out of data after step 10 (the warning), "
        "epoch 1 begins, then the kill",
        "calls": [{"args": {"epochs": 2, "steps_per_epoch": 15}, "crash_at": 10}],
    },
    # (i) learning rates: a schedule given to the optimizer (base 0.1, so the rates are 0.1 x
    # the factors), computed in float64 so that every recorded rate can be matched to 1e-9
    {
        "id": "keras/lr_cosine_crash13_freq1",
        "framework": "keras",
        "about": "C CosineDecay warmup 2 then cosine to 0.1 x peak over 18 steps, killed before "
        "step 14 with a backup after step 13: the re-run goes on from schedule(13) while epoch 1 "
        "restarts at batch 0, its last 3 steps past the curve's end at the floor",
        "calls": [
            {
                "args": {"epochs": 2},
                "save_every": 1,
                "crash_at": 13,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
            {
                "args": {"epochs": 2},
                "save_every": 1,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
        ],
    },
    {
        "id": "keras/lr_cosine_crash13_freq4",
        "framework": "keras",
        "about": "C the same schedule with BackupAndRestore(save_freq=4): the backup holds step "
        "12, so step 13's learning rate schedule(12) is used again after the restore",
        "calls": [
            {
                "args": {"epochs": 2},
                "save_every": 4,
                "crash_at": 13,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
            {
                "args": {"epochs": 2},
                "save_every": 4,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
        ],
    },
    {
        "id": "keras/lr_cosine_three_fits",
        "framework": "keras",
        "about": "C CosineDecay(0.1, decay_steps=20, alpha=0.1) without warmup over three fit "
        "calls on one model: one curve along optimizer.iterations, held at the floor past step 20",
        "calls": [
            {
                "args": {"epochs": 1},
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {"initial_learning_rate": 0.1, "decay_steps": 20, "alpha": 0.1},
                    },
                    "floatx": "float64",
                },
            },
            {"fresh": False, "args": {"epochs": 1}},
            {"fresh": False, "args": {"epochs": 1}},
        ],
    },
    {
        "id": "keras/lr_linear_crash13_freq_epoch",
        "framework": "keras",
        "about": "C PolynomialDecay(0.1, 20, 0.01, power=1.0) with BackupAndRestore(save_freq="
        "'epoch'), killed before step 14: the re-run restores step 10 and uses schedule(10..12) "
        "again",
        "calls": [
            {
                "args": {"epochs": 2},
                "save_every": "epoch",
                "crash_at": 13,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "PolynomialDecay",
                        "config": {
                            "initial_learning_rate": 0.1,
                            "decay_steps": 20,
                            "end_learning_rate": 0.01,
                            "power": 1.0,
                        },
                    },
                    "floatx": "float64",
                },
            },
            {
                "args": {"epochs": 2},
                "save_every": "epoch",
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "PolynomialDecay",
                        "config": {
                            "initial_learning_rate": 0.1,
                            "decay_steps": 20,
                            "end_learning_rate": 0.01,
                            "power": 1.0,
                        },
                    },
                    "floatx": "float64",
                },
            },
        ],
    },
    {
        "id": "keras/lr_constant_restored",
        "framework": "keras",
        "about": "C a float learning_rate is an optimizer variable: the re-run given 0.05 trains "
        "with the 0.1 the backup restores",
        "calls": [
            {
                "args": {"epochs": 2},
                "save_every": 1,
                "crash_at": 5,
                "lr_schedule": {"learning_rate": 0.1, "floatx": "float64"},
            },
            {
                "args": {"epochs": 2},
                "save_every": 1,
                "lr_schedule": {"learning_rate": 0.05, "floatx": "float64"},
            },
        ],
    },
    {
        "id": "keras/lr_accum3_cosine_crash3",
        "framework": "keras",
        "about": "C GA=3: the schedule reads the raw _iterations (micro-batches), so update n uses "
        "schedule(3n + 2); killed before update 4, the re-run restores raw 9 and restarts epoch 0",
        "calls": [
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": 1,
                "crash_at": 3,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
            {
                "args": {"epochs": 2},
                "optimizer": {"gradient_accumulation_steps": 3},
                "save_every": 1,
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                    "floatx": "float64",
                },
            },
        ],
    },
    {
        "id": "keras/lr_cosine_float32",
        "framework": "keras",
        "about": "C the warmup + cosine schedule in Keras's default float32: every rate is the "
        "float64 one rounded, within 1e-6",
        "calls": [
            {
                "args": {"epochs": 2},
                "lr_schedule": {
                    "learning_rate": {
                        "class_name": "CosineDecay",
                        "config": {
                            "initial_learning_rate": 0.0,
                            "decay_steps": 18,
                            "alpha": 0.1,
                            "warmup_target": 0.1,
                            "warmup_steps": 2,
                        },
                    },
                },
            },
        ],
    },
]

SCENARIOS: list[Scenario] = [*LIGHTNING, *TRANSFORMERS, *KERAS]

BY_ID: dict[str, Scenario] = {scenario["id"]: scenario for scenario in SCENARIOS}
