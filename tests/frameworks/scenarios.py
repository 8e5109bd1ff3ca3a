"""The grid of framework scenarios, as data.

Each scenario is a list of calls (see :class:`tests.frameworks._common.CallSpec`) run in order in
one temporary directory; a call with ``fresh`` left True builds a new trainer and model, which
stands in for a new process resuming from the files on disk. Unless a call says otherwise the
data set is ``A`` (100 samples, ids 0..99), the batch size is 10 (10 batches per epoch), there is
no shuffling and the learning rate is 0. ``about`` names the section of
the research notes on trainers (``trainers.md``) whose claim the scenario checks.
"""

from __future__ import annotations

from ._common import DataSpec, Scenario

A: DataSpec = {"n": 100, "offset": 0}
A95: DataSpec = {"n": 95, "offset": 0}
B: DataSpec = {"n": 300, "offset": 1000}
B100: DataSpec = {"n": 100, "offset": 1000}
B50: DataSpec = {"n": 50, "offset": 1000}

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
]

SCENARIOS: list[Scenario] = [*LIGHTNING, *TRANSFORMERS, *KERAS]

BY_ID: dict[str, Scenario] = {scenario["id"]: scenario for scenario in SCENARIOS}
