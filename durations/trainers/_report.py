"""``docs/frameworks.md``, generated from the trainer profiles so that it cannot drift.

``python -m durations.trainers > docs/frameworks.md`` writes it; a test checks it is current.
"""

from __future__ import annotations

import importlib
from typing import Any

import attrs

from ..compare import TRAINERS, TrainerOutcome, compare
from ..fit import FitCall, RunConfig
from ..loader import Loader
from ..scenario import Scenario
from ..schedules import END, Landmark, Schedule

_A = Loader(samples=100, batch_size=10, name="a")
_B = Loader(samples=300, batch_size=10, name="b")
_C = Loader(samples=10_000, batch_size=32, name="c")
_D = Loader.sharded(samples=101, world_size=2, device_batch_size=10, padding="repeat", name="d")
_E = Loader.sharded(samples=101, world_size=2, device_batch_size=10, padding="cycle", name="e")


def _scenario(max_duration: str | None, *calls: FitCall) -> Scenario:
    loaders = {call.loader.name or "": call.loader for call in calls}
    return Scenario(config=RunConfig(max_duration=max_duration), loaders=loaders, calls=calls)


_TWO_PHASE = _scenario("2ep", FitCall(loader=_A), FitCall(loader=_B, duration="0.1ep"))

#: (title, what it shows, scenario, crash step)
SCENARIOS: tuple[tuple[str, str, Scenario, int | None], ...] = (
    ("2 epochs of a", "a plain run", _scenario("2ep", FitCall(loader=_A)), None),
    ("1.5 epochs of a", "a fractional epoch", _scenario("1.5ep", FitCall(loader=_A)), None),
    ("2 ep of a, then 0.1 ep of b", 'two phases, "2.1 epochs"', _TWO_PHASE, None),
    ("... crash at step 13", "a mid-epoch crash, same script re-run", _TWO_PHASE, 13),
    ("... crash at step 21", "a crash in the second phase", _TWO_PHASE, 21),
    (
        "3 ep of a, crash at step 13",
        "a mid-epoch crash in a one-phase run",
        _scenario("3ep", FitCall(loader=_A)),
        13,
    ),
    (
        "1000sp, then 1000sp more (batch 32)",
        "two relative calls: does the overshoot leak?",
        _scenario(
            "1000sp",
            FitCall(loader=_C, duration="1000sp"),
            FitCall(loader=_C, duration="1000sp"),
        ),
        None,
    ),
    (
        "5ba of a, then 5ba of b with reset_time",
        "a clock reset",
        _scenario(
            None,
            FitCall(loader=_A, duration="5ba"),
            FitCall(loader=_B, duration="5ba", reset_time=True),
        ),
        None,
    ),
)

_REPEAT = _scenario("2ep", FitCall(loader=_D))
_CYCLE = _scenario("2ep", FitCall(loader=_E))

#: (title, what it shows, scenario, crash step, world size of the re-run) of a data-parallel
#: job re-run on another number of processes.
ELASTIC_SCENARIOS: tuple[tuple[str, str, Scenario, int, int], ...] = (
    ("2 ep of d, crash at step 3, re-run on 3", "a resume on 3 processes", _REPEAT, 3, 3),
    ("2 ep of e, crash at step 3, re-run on 1", "a resume on 1 process", _CYCLE, 3, 1),
)

_COSINE = Schedule.warmup("2ba").then_cosine(to="0.1", until=END)
_PHASES = (
    Schedule.warmup("2ba")
    .then_cosine(to="0.1", until=Landmark.call_stop(0))
    .then_linear(to=0, until=END)
)

#: (title, what it shows, scenario, crash step) with a learning-rate schedule.
SCHEDULE_SCENARIOS: tuple[tuple[str, str, Scenario, int | None], ...] = (
    (
        "2 ep of a, warmup 2ba, cosine to 0.1",
        "one curve over one call",
        attrs.evolve(_scenario("2ep", FitCall(loader=_A)), schedule=_COSINE),
        None,
    ),
    (
        "... crash at step 13",
        "the same curve across a crash and the re-run",
        attrs.evolve(_scenario("2ep", FitCall(loader=_A)), schedule=_COSINE),
        13,
    ),
    (
        "2 ep of a, then 0.1 ep of b; cosine, then linear to 0, crash at step 13",
        "a curve of two phases, one piece a call",
        attrs.evolve(_TWO_PHASE, schedule=_PHASES),
        13,
    ),
    (
        "... crash at step 21",
        "a crash inside the second phase's curve",
        attrs.evolve(_TWO_PHASE, schedule=_PHASES),
        21,
    ),
)

#: (title, what it shows, scenario, crash step) of a data-parallel job.
DDP_SCENARIOS: tuple[tuple[str, str, Scenario, int | None], ...] = (
    (
        "2 ep of d",
        "torch's DistributedSampler evening: one sample read again per epoch",
        _REPEAT,
        None,
    ),
    ("... crash at step 3", "a mid-epoch crash, re-run on as many processes", _REPEAT, 3),
    ("2 ep of e", "accelerate's even_batches: 19 samples read again per epoch", _CYCLE, None),
    ("... crash at step 3", "the same crash, with accelerate's evening", _CYCLE, 3),
)

#: Where running the frameworks corrected or completed the research notes (trainers.md).
CORRECTIONS: tuple[tuple[str, str], ...] = (
    (
        "Lightning",
        'The mid-epoch "resuming from a checkpoint that ended before the epoch ended" warning '
        "also fires for end-of-fit checkpoints resumed with max_steps, and only while the loop "
        "is restarting.",
    ),
    (
        "Lightning",
        "A StatefulDataLoader resumes at the saved sample, but Lightning's batch counter does "
        "not: with a changed batch size the epoch ends early (10 -> 20 at step 13 never reads "
        "samples 70-99), and a checkpoint on an epoch's last batch resumes to 0 steps.",
    ),
    (
        "Lightning",
        "A restarting epoch loop runs one batch before it can stop: an end-of-fit checkpoint "
        "resumed with a larger max_steps trains a batch at batch_idx 10 of a 10-batch epoch.",
    ),
    (
        "Lightning",
        "The batch-size-change resume restores completed=4 and adds 1 (not 'completed=5').",
    ),
    (
        "Lightning",
        "Resumed from a checkpoint at an epoch's last step, it saves its later mid-epoch "
        "checkpoints with the running epoch counted as completed; a second resume then starts a "
        "new epoch and replays data.",
    ),
    (
        "Hugging Face",
        "A resume keeps the checkpoint's save_steps and train_batch_size, not only max_steps and "
        "num_train_epochs; the stop check runs after a step, so resuming at max_steps trains one "
        "more step; max_steps=0 trains one step; num_train_epochs=1.5 with accumulation 3 ends "
        "at epoch 1.6.",
    ),
    (
        "Hugging Face",
        "The checkpoint-mismatch warning is a warning_once: a second identical resume in the "
        "same process is silent. Versions 5.23.0 and 5.24.0 differ only in line numbers.",
    ),
    (
        "Keras",
        "BackupAndRestore counts finished epochs from 0 in each new run: a second crash before "
        "an epoch ends writes epoch 0, and the next restore starts again from the beginning.",
    ),
    (
        "Keras",
        "steps_per_epoch keeps the iterator: any value that does not divide the batches of an "
        "epoch shortens a later epoch ('ran out of data' ends the epoch, not the training). "
        "Gradient accumulation carries across fit calls too. An integer save_freq never saves at "
        "epoch end.",
    ),
    (
        "Composer",
        "0.32.1 has no autoresume validation errors (PR #3358 was reverted): autoresume with "
        "fit(duration=...) is accepted and re-adds the duration on every restart. The error "
        "texts are 'Units TimeUnit.EPOCH require integer values.' and '... Please provide the "
        "`duration` or specify `reset_time=True` in Trainer.fit().'",
    ),
    (
        "Composer",
        "A run saving every batch ends on a checkpoint taken before the epoch counter advances, "
        "so autoresuming it with a longer max_duration spins a whole epoch without training.",
    ),
)


def _cell(result: TrainerOutcome) -> str:
    if not result.supported:
        return f"cannot say it: {result.reason}"
    if result.agrees:
        return "= plan"
    return "; ".join(result.differences)


#: The one crash model of every profile and of ``durations compare --crash-at``.
CRASH_MODEL = [
    "",
    "## One crash model",
    "",
    'Every profile, and `durations compare --crash-at K`, says "crash" the same way:',
    "",
    "- **The kill.** The job is killed (as by SIGKILL) after its K-th optimizer step, counted "
    "over the whole script from its start (the plan's lifetime step K): at the moment the "
    "trainer is about to start step K + 1. Everything the trainer does after step K has "
    "happened (the saves its own save settings make after that step or at that epoch's end, "
    "the epoch's end, the end of a fit call and the start of the next); nothing of step K + 1 "
    "has (no batch of it read, no counter moved by it).",
    "- **The checkpoints** are where the trainer's own save settings put them, not necessarily "
    "at step K; the steps after the newest one are lost and trained again.",
    "- **The re-run** is the same script run again, every call resuming as the trainer's own "
    "resume mechanism does from the newest checkpoint it finds (Composer `autoresume`, "
    "Lightning `ckpt_path` of the newest checkpoint on the first `fit`, Hugging Face "
    "`resume_from_checkpoint` of each call's `output_dir`, Keras `BackupAndRestore`). With "
    "`--world-size N` it runs on N processes, every data-parallel loader's per-device geometry "
    "unchanged, and the plan it is held to is the plan's first K steps, then the plan resumed "
    "on N ranks from the checkpoint at K.",
    "- **In a profile**, `Call(crash_at=k)` kills the process when the trainer is about to "
    "start an optimizer step while its own step counter is at least k: Composer "
    "`state.timestamp.batch`, Lightning `trainer.global_step`, Hugging Face `state.global_step` "
    "(each call's Trainer counts from its own start), Keras `optimizer.iterations` (optimizer "
    "steps, after gradient accumulation). A call that ends without starting another step is "
    "not killed. `compare` turns K into each call's k.",
    "- **The recorded runs** kill the same way: a callback at the trainer's step-start hook "
    "raises once the counter reaches k (`tests/frameworks/`).",
    "",
    "A resumed call is stated in each profile as its trainer's users state it, and "
    "`Translation.rerun` is the script with those options set, the same script otherwise:",
    "",
    "| trainer | a resumed call | a kill |",
    "|---|---|---|",
    "| Composer | `Call(autoresume=True)` (the newest checkpoint of the run's save folder), or "
    '`Call(resume="latest")` (`load_path` = the newest checkpoint earlier calls wrote) | '
    "`Call(crash_at=k)` on `state.timestamp.batch` |",
    "| Lightning | `Call(resume_latest=True)`: `fit(ckpt_path=` the newest checkpoint `)` | "
    "`Call(crash_at=k)` on `trainer.global_step` |",
    "| Hugging Face | `Call(resume_latest=True)` (the checkpoint written last), or "
    "`Call(resume_from_checkpoint=True)` (`get_last_checkpoint`: the highest step in the "
    "call's `output_dir`) | `Call(crash_at=k)` on `state.global_step` |",
    "| Keras | `Call(backup=True)`: `BackupAndRestore` restores the backup it finds at the "
    "start of `fit` | `Call(crash_at=k)` on `optimizer.iterations` |",
]


def _profile(name: str) -> Any:
    return importlib.import_module(f"durations.trainers.{name}")


def frameworks_markdown() -> str:
    """The whole page."""
    lines = [
        "# Trainers: how each interprets durations and resumes",
        "",
        "<!-- Generated by `python -m durations.trainers > docs/frameworks.md`; "
        "do not edit by hand. -->",
        "",
        "Each trainer has a profile in `durations.trainers`: a pure emulation, in the trainer's "
        "own vocabulary, of what its fit or train call does with durations and resumes. Every "
        "profile reproduces real CPU trainings of that trainer, step by step and sample by sample "
        "(`tests/frameworks/`: the recorded runs, the harness that records them, and what they "
        "showed in `FINDINGS.md`); live tests re-run a subset against the installed framework.",
        "",
        "| trainer | version checked |",
        "|---|---|",
    ]
    names = {"composer": "Composer (mosaicml)", "lightning": "PyTorch Lightning"}
    names |= {"transformers": "Hugging Face transformers", "keras": "Keras 3 (torch backend)"}
    for trainer in TRAINERS:
        lines.append(f"| {names[trainer]} | {_profile(trainer).VERSION} |")
    lines += CRASH_MODEL
    lines += [
        "",
        "## Side by side",
        "",
        "Each scenario is written in each trainer's own idiom (see each trainer's section), run "
        "(crashed after the given step and run again as the same script, where a crash is "
        "given), and compared sample by sample with the `durations` plan (`durations compare`). "
        "Loader `a` has 100 samples, `b` 300, both in batches of 10; `c` has 10,000 in batches "
        "of 32.",
        "",
        "| scenario | plan | " + " | ".join(TRAINERS) + " |",
        "|---|---|" + "---|" * len(TRAINERS),
    ]
    for title, _, scenario, crash in SCENARIOS:
        result = compare(scenario, crash_at=crash)
        cells = [_cell(t) for t in result.trainers]
        plan = f"{result.plan.total_steps} steps"
        lines.append(f"| {title} | {plan} | " + " | ".join(cells) + " |")
    lines += ["", "What each scenario shows:", ""]
    lines += [f"- **{title}**: {what}." for title, what, _, _ in SCENARIOS]
    lines += _multi_device()
    lines += _schedules()
    for trainer in TRAINERS:
        profile = _profile(trainer)
        lines += ["", f"## {names[trainer]} {profile.VERSION}", ""]
        lines += [_paragraph(profile.translate.__doc__), ""]
        lines += ["| rule | source |", "|---|---|"]
        for rule, source in profile.RULES:
            lines.append(f"| {_escape(rule)} | `{source}` |")
    lines += [
        "",
        "## Where the runs corrected the research notes",
        "",
        "The research notes on trainers (`trainers.md`) were checked by running every claim "
        "they mark as run; all of those held. These are the places where the real frameworks "
        "disagreed with the notes or went beyond them:",
        "",
    ]
    lines += [f"- **{who}**: {what}" for who, what in CORRECTIONS]
    return "\n".join(lines) + "\n"


def _multi_device() -> list[str]:
    """The side-by-side table of data-parallel jobs, with what the profiles know of them."""
    lines = [
        "",
        "## On several processes (data parallelism)",
        "",
        "A data-parallel loader (`Loader.sharded`, see `docs/multi-device.md`) is written for "
        "Hugging Face as a torchrun job of `world_size` processes, and for Lightning as "
        '`Trainer(strategy="ddp", devices=world_size)`; each evens its ranks its own way, '
        "whatever the loader's `padding` says (accelerate cycles whole batches from the epoch's "
        "start, the DistributedSampler that Lightning injects shuffles and repeats samples). "
        "Both profiles reproduce every run recorded on 1 to 3 processes, every rank's ids of "
        "every micro-batch (`tests/frameworks/observed_ddp.json`, replayed by "
        "`tests/frameworks/test_profile_ddp.py`): uninterrupted runs, runs killed after a "
        "checkpoint, and their resumes on the same and on another number of processes. The "
        "Composer and Keras profiles model one process; no multi-process run of them was "
        "recorded, so they cannot say what a data-parallel job reads.",
        "",
        "Loaders `d` and `e` have 101 samples on 2 processes of 10 per device, `d` evened as "
        'torch\'s DistributedSampler does (`padding = "repeat"`), `e` as accelerate does '
        '(`padding = "cycle"`). A crashed script is run again on as many processes; on '
        "another number both frameworks skip or repeat data without a word (FINDINGS.md, HR3 "
        "and LR3), where `durations plan --resume-from ... --world-size ...` says what the "
        "plan reads.",
        "",
        "| scenario | plan | " + " | ".join(TRAINERS) + " |",
        "|---|---|" + "---|" * len(TRAINERS),
    ]
    for title, _, scenario, crash in DDP_SCENARIOS:
        result = compare(scenario, crash_at=crash)
        cells = [_cell(t) for t in result.trainers]
        plan = f"{result.plan.total_steps} steps"
        lines.append(f"| {title} | {plan} | " + " | ".join(cells) + " |")
    for title, _, scenario, crash, world in ELASTIC_SCENARIOS:
        result = compare(scenario, crash_at=crash, world_size=world)
        cells = [_cell(t) for t in result.trainers]
        plan = f"{result.total_steps} steps"
        lines.append(f"| {title} | {plan} | " + " | ".join(cells) + " |")
    lines += ["", "What each scenario shows:", ""]
    lines += [f"- **{title}**: {what}." for title, what, _, _ in DDP_SCENARIOS]
    lines += [f"- **{title}**: {what}." for title, what, _, _, _ in ELASTIC_SCENARIOS]
    lines += [
        "",
        "On another number of processes the plan reads on from the sample the crash left "
        "(`durations compare --crash-at K --world-size N`): its first K steps, then the plan "
        "resumed on N ranks from the checkpoint at K.",
    ]
    return lines


def _schedules() -> list[str]:
    """The side-by-side table of scenarios with a learning-rate schedule."""
    lines = [
        "",
        "## Learning rates",
        "",
        "With a `[schedule]`, each trainer is given the scenario's curve in its own scheduler "
        "(a call's part of it as a warmup from 0, then a constant, linear or cosine decay: "
        "each trainer's section says how), and the learning rate of every step it trains is "
        "compared with the plan's, across the crash and the re-run. A cell says where they "
        "differ; `durations compare --json` has both, step by step. The curves are factors of "
        "the base learning rate.",
        "",
        "| scenario | plan | " + " | ".join(TRAINERS) + " |",
        "|---|---|" + "---|" * len(TRAINERS),
    ]
    notes: dict[str, str] = {}
    for title, _, scenario, crash in SCHEDULE_SCENARIOS:
        result = compare(scenario, crash_at=crash)
        cells = []
        for trainer in result.trainers:
            cell = _cell(trainer)
            if trainer.supported and not trainer.rates:
                why = trainer.schedule or "its profile does not model its scheduler"
                cell = f"learning rate not compared ({why}); {cell}"
            cells.append(cell)
            if trainer.supported and trainer.rates and trainer.schedule:
                notes.setdefault(trainer.trainer, trainer.schedule)
        plan = f"{result.plan.total_steps} steps"
        lines.append(f"| {title} | {plan} | " + " | ".join(cells) + " |")
    lines += ["", "What each scenario shows:", ""]
    lines += [f"- **{title}**: {what}." for title, what, _, _ in SCHEDULE_SCENARIOS]
    if notes:
        lines += ["", "How each trainer was given the first curve:", ""]
        lines += [f"- **{trainer}**: {note}" for trainer, note in notes.items()]
    return lines


def _paragraph(doc: str | None) -> str:
    return " ".join((doc or "").split())


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
