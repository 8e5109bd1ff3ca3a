"""The planner's diagnostics, whole: each message says what happened, with the numbers of the
scenario, and what to do (docs/errors.md and the diagnostics table of docs/semantics.md).
Each row's comment says what the numbers are and why they are the right ones."""

from __future__ import annotations

import pytest

from durations import Action, Checkpoint, FitCall, Loader, Plan, Progress, RunConfig, Time, plan

A = Loader(samples=100, batch_size=10, name="a", tokens_per_sample=2)
B = Loader(samples=60, batch_size=10, name="b", tokens_per_sample=2)
TEXT = Loader(samples=100, batch_size=10, name="text")  # tokens per sample unknown
TWO_PHASES = [FitCall(loader=A, until="10ba"), FitCall(loader=B, duration="1ep")]  # 10 + 6 steps
ONE_CALL = [FitCall(loader=A, until="2ep")]  # 20 steps


def _at_15() -> Checkpoint:
    """Step 15 of ONE_CALL: 50 samples into epoch 1 (planned in the test, not at import, so
    that a broken planner fails the test and not the collection)."""
    return plan(RunConfig(), ONE_CALL).checkpoint_at(15)


def _said(p: Plan) -> list[tuple[str, str | None, str]]:
    return [(d.code, d.call, d.message) for d in p.diagnostics]


def _foreign(steps: int) -> Checkpoint:
    """A checkpoint of another trainer (no ledger) after ``steps`` steps of TWO_PHASES."""
    progress = Progress().advance(A, min(steps, 10))
    if steps > 10:
        progress = progress.advance(B, steps - 10)
    return Checkpoint(progress=progress, loader_state=True)


LOCATED = "the checkpoint has no ledger: located by its step counter ({}) in this script's own plan of 16 steps, {}"  # noqa: E501


@pytest.mark.parametrize(
    ("steps", "where"),
    [
        (0, "at its start"),  # no step taken: no call has run
        (5, "inside call '#0'"),  # step 5 of the 10 of #0
        (10, "inside call '#0'"),  # the step that ends #0 is #0's
        (11, "inside call '#1'"),  # the first step of #1
        (15, "inside call '#1'"),  # the last step but one
        (16, "at or past its end"),  # the plan's last step: nothing is inside
        (20, "at or past its end"),  # past the end of this script
    ],
)
def test_checkpoint_located(steps: int, where: str) -> None:
    """Rule 10: a ledger-less checkpoint is located by its step counter, and the message says
    where in the script's own plan it is."""
    said = _said(plan(RunConfig(), TWO_PHASES, _foreign(steps)))
    assert said[0] == ("checkpoint-located", None, LOCATED.format(steps, where))


POLICIES = [
    (
        "replay_epoch",
        "data-replayed",
        "the checkpoint is 50 samples into epoch 1; the epoch is read again from its start: "
        "samples 0-49 of epoch 1 are trained twice",
    ),
    (
        "next_epoch",
        "data-skipped",
        "the checkpoint is 50 samples into epoch 1; training goes on from the next epoch: "
        "samples 50-99 of epoch 1 are never read",
    ),
]


@pytest.mark.parametrize(("policy", "code", "message"), POLICIES)
def test_data_policy_messages(policy: str, code: str, message: str) -> None:
    """Rule 11: step 15 of 10-sample batches on 100 samples is 50 samples into epoch 1; each
    policy names what it reads twice or never."""
    said = _said(plan(RunConfig(data=policy), ONE_CALL, _at_15()))
    assert said[0] == (code, "#0", message)


def test_no_loader_state_message() -> None:
    """Rule 11, exact: without loader state, the loader itself must skip the 50 samples."""
    at_15 = _at_15()
    blind = Checkpoint(progress=at_15.progress, ledger=at_15.ledger, loader_state=False)
    assert _said(plan(RunConfig(), ONE_CALL, blind)) == [
        (
            "mid-epoch-no-loader-state",
            "#0",
            "the checkpoint is 50 samples into epoch 1 but saved no loader state: an exact "
            "resume needs the loader to start at sample 50 of the epoch (a stateful loader, or a "
            "sampler that skips); a plain DataLoader would replay the epoch from its start (data "
            "policy replay_epoch)",
        )
    ]


def test_stream_without_samples_skips_nothing_past_its_position() -> None:
    """Rule 11, next_epoch on a stream (no epoch length): nothing past the position is known
    to be skipped, so the skipped range is empty."""
    stream = Loader(samples=None, batch_size=10, name="s")
    script = [FitCall(loader=stream, until="20ba")]
    at_5 = plan(RunConfig(), script).checkpoint_at(5)
    resumed = plan(RunConfig(data="next_epoch"), script, at_5).segments[0]
    assert resumed.skipped is not None
    assert (resumed.skipped.start, resumed.skipped.stop) == (50, 50)


def test_batch_size_changed_messages() -> None:
    """Rule 12: resumed at batch 20 from batch 10, 50 samples into epoch 1; a target in ba
    changes meaning, one in ep does not."""
    kept = (
        "batch-size-changed",
        "#0",
        "batch size 10 -> 20: the data position is kept in samples (50 into epoch 1)",
    )
    in_epochs = plan(RunConfig(), [FitCall(loader=A.with_batch_size(20), until="2ep")], _at_15())
    assert _said(in_epochs) == [kept]
    at_15 = plan(RunConfig(), [FitCall(loader=A, until="20ba")]).checkpoint_at(15)
    in_steps = plan(RunConfig(), [FitCall(loader=A.with_batch_size(20), until="20ba")], at_15)
    assert _said(in_steps) == [
        kept,
        (
            "ba-target-batch-size-changed",
            "#0",
            "target 20ba counts optimizer steps, set at batch size 10; at batch size 20 each "
            "step trains 20 samples instead, so the call trains a different number of samples; "
            "give the target in sp, tok or ep to keep its meaning",
        ),
    ]


RUNTIME = (
    "the loader's tokens_per_sample is unknown, so {} is reached at run time: after 1 to {} "
    "steps (at least one token a sample); later calls are planned from the latest stop and must "
    "be planned again when this call ends"
)


@pytest.mark.parametrize(
    ("until", "steps", "said"),
    [
        ("0tok", 0, ["target-already-reached"]),  # no token is missing: nothing at run time
        ("1tok", 1, ["token-stop-at-runtime"]),  # one token: one step at most
        ("100tok", 10, ["token-stop-at-runtime"]),  # 100 samples suffice, 10 to a step
    ],
)
def test_token_stop_at_runtime(until: str, steps: int, said: list[str]) -> None:
    """Rule "tokens of unknown length": the bound is the steps of one token a sample."""
    p = plan(RunConfig(), [FitCall(loader=TEXT, until=until)])
    assert [code for code, _, _ in _said(p)] == said
    assert p.total_steps == steps
    if said == ["token-stop-at-runtime"]:
        assert p.diagnostics[0].message == RUNTIME.format(until, steps)


def test_tokens_unknown_after_a_runtime_stop() -> None:
    """After a stop decided at run time, the token count is unknown: a later token target
    cannot be placed, and the message says how to make it known."""
    p = plan(RunConfig(), [FitCall(loader=TEXT, until="1ep"), FitCall(loader=TEXT, until="9tok")])
    assert _said(p) == [
        (
            "tokens-unknown",
            "#1",
            "the token count at this point is unknown, so 9tok cannot be placed; give the "
            "loaders tokens_per_sample, or report measured tokens with every step",
        )
    ]


CHANGED = (
    "call '#0' changed since the checkpoint ({}); it had already finished, so it is not run again"
)


@pytest.mark.parametrize(
    ("call", "change"),
    [
        (FitCall(loader=A, until="11ba"), "until 10ba -> 11ba"),  # the request
        (  # two fields: listed in the order duration, until, reset_time
            FitCall(loader=A, duration="10ba", reset_time=True),
            "duration none -> 10ba, until 10ba -> none, reset_time False -> True",
        ),
        (  # another stream, named and sized both ways
            FitCall(loader=Loader(samples=None, batch_size=4, name="s"), until="10ba"),
            "loader a: 100 samples, batch 10 -> s: stream, batch 4",
        ),
        (  # an unnamed loader is described by its size alone
            FitCall(loader=Loader(samples=50, batch_size=10), until="10ba"),
            "loader a: 100 samples, batch 10 -> 50 samples, batch 10",
        ),
    ],
)
def test_finished_call_changed(call: FitCall, change: str) -> None:
    """Rule "call identity": a finished call that changed is named with what changed, and
    skipped; its segment is the ledger's, untouched."""
    at_13 = plan(RunConfig(), TWO_PHASES).checkpoint_at(13)
    assert at_13.ledger is not None
    entry = at_13.ledger[0]
    p = plan(RunConfig(), [call, TWO_PHASES[1]], at_13)
    assert _said(p)[0] == ("script-changed", "#0", CHANGED.format(change))
    skipped = p.segments[0]
    assert (skipped.index, skipped.name, skipped.action) == (0, "#0", Action.SKIP)
    assert (skipped.loader, skipped.start, skipped.stop) == (entry.loader, entry.start, entry.stop)
    assert (skipped.start_step, skipped.steps, skipped.target) == (0, 0, entry.target)


def test_a_skipped_call_still_anchors_the_next() -> None:
    """Rule 3 across a skip: a finished call read from the ledger anchors the next relative
    call as it did when it ran. 0.55ep stops at step 6 (0.6ep); the next 0.1ep is measured from
    the target, 0.65ep, not from the position, in the resumed plan as in the uncrashed one."""
    script = [FitCall(loader=A, until="0.55ep"), FitCall(loader=A, duration="0.1ep")]
    full = plan(RunConfig(), script)
    resumed = plan(RunConfig(), script, full.checkpoint_at(6))
    assert [s.action for s in resumed.segments] == [Action.SKIP, Action.RUN]
    assert resumed.segments[1].target == full.segments[1].target == Time.parse("0.65ep")


def test_a_call_that_cannot_be_planned() -> None:
    """A failed call is a segment of 0 steps where the run is, with a placeholder target of
    0ba, kept out of the ledger; a failed call resumed from the ledger keeps its entry."""
    p = plan(RunConfig(), [FitCall(loader=A, until="1ep"), FitCall(loader=B)])
    failed = p.segments[1]
    assert failed.failed
    assert (failed.index, failed.name, failed.action, failed.steps) == (1, "#1", Action.RUN, 0)
    assert failed.start == failed.stop == p.segments[0].stop
    assert (failed.start_step, failed.target, failed.origin) == (10, Time(0, "ba"), Progress())
    assert (failed.entry.start, failed.entry.target) == (failed.start, Time(0, "ba"))
    stream = Loader(samples=None, batch_size=10, name="a")  # an epoch target cannot be placed
    at_5 = plan(RunConfig(), ONE_CALL).checkpoint_at(5)
    assert at_5.ledger is not None
    resumed = plan(RunConfig(), [FitCall(loader=stream, until="2ep")], at_5).segments[0]
    assert resumed.failed
    assert (resumed.action, resumed.steps, resumed.entry) == (Action.RESUME, 0, at_5.ledger[0])
