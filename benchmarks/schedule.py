"""Figure 6: the learning rate per step from a schedule, against the trainers' schedulers.

Every contender gives the rate of each step of the two-phase plan (or of one piece of it):
warm up over 200 steps, then a cosine to 0 by the plan's end, as transformers'
``get_cosine_schedule_with_warmup`` does. The torch contenders step a real scheduler on a real
optimizer; Composer's scheduler is called as its ``LambdaLR`` calls it, with the state's
timestamp at each step.
"""

from __future__ import annotations

import importlib
import math
import statistics
import types
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from durations import END, Plan, ResolvedSchedule, Schedule

from . import scenario
from ._composer import composer_schedulers
from ._context import Context
from ._harness import Contender, Figure, Goal, measure

WARMUP = 200
BASE = 3e-4


def _curves(on: Plan) -> dict[str, ResolvedSchedule]:
    warmup = Schedule.warmup(f"{WARMUP}ba")
    return {
        "cosine": warmup.then_cosine(to=0, until=END).resolve(on),
        "exponential": warmup.then_exponential(to="0.01", until=END).resolve(on),
        "inverse_sqrt": warmup.then_inverse_sqrt(until=END).resolve(on),
    }


def _loop(rate: Callable[[int], object], steps: Sequence[int]) -> Callable[[int], object]:
    def run(repeat: int) -> object:
        value: object = None
        for _ in range(repeat):
            for k in steps:
                value = rate(k)
        return value

    return run


def _floor(total: int) -> Callable[[int], float]:
    """A bare float loop: the warmup ramp, then the cosine, written inline."""
    cos, pi, decay = math.cos, math.pi, total - WARMUP

    def rate(k: int) -> float:
        if k < WARMUP:
            return BASE * (k / WARMUP)
        return BASE * (0.5 * (1.0 + cos(pi * ((k - WARMUP) / decay))))

    return rate


def _exact(curve: ResolvedSchedule) -> Callable[[int], float]:
    """The evaluation ``lr`` made before it worked out its pieces: the factor, then the product
    (an exact factor times the exact base, rounded once)."""
    factor = curve.factor

    def rate(k: int) -> float:
        value = factor(k)
        if isinstance(value, Fraction):
            return float(value * Fraction(BASE))
        return value * float(BASE)

    return rate


def _stepper(scheduler: Any, reset: Callable[[], None]) -> Callable[[Sequence[int]], Any]:
    """Run a torch scheduler's ``step()`` once per step, from a reset count."""

    def make(steps: Sequence[int]) -> Callable[[int], object]:
        step = scheduler.step

        def run(repeat: int) -> object:
            for _ in range(repeat):
                reset()
                for _ in steps:
                    step()
            return scheduler

        return run

    return make


def _torch(on: Plan, curve: ResolvedSchedule) -> tuple[dict[str, Any], str]:
    """transformers' lambdas and torch's schedulers on one SGD optimizer each, or why not."""
    try:
        torch = importlib.import_module("torch")
        optimization = importlib.import_module("transformers.optimization")
        transformers = importlib.import_module("transformers")
    except ImportError as error:
        return {}, (
            f"torch or transformers is not importable ({error}); run with a Python that has "
            "them (pip install 'training-durations[frameworks]')"
        )
    from durations.integrations.torch import scheduler as plan_scheduler

    total = on.stop.batch

    def optimizer() -> Any:
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE)

    hf = optimization.get_cosine_schedule_with_warmup(optimizer(), WARMUP, total)
    hf_isqrt = optimization.get_inverse_sqrt_schedule(optimizer(), WARMUP)
    lambda_lr = optimization.get_cosine_schedule_with_warmup(optimizer(), WARMUP, total)
    cosine_optimizer = optimizer()
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(cosine_optimizer, total - WARMUP)
    ours = plan_scheduler(optimizer(), curve, step=0)
    for made in (lambda_lr, cosine, ours):
        made.optimizer.step()  # (no gradients: changes nothing) so torch does not warn

    def reset_lambda() -> None:
        lambda_lr.last_epoch = -1

    def reset_cosine() -> None:
        cosine.last_epoch = 0
        cosine_optimizer.param_groups[0]["lr"] = BASE

    def reset_ours() -> None:
        ours.last_epoch = -1

    return {
        "hf": hf.lr_lambdas[0],
        "hf_isqrt": hf_isqrt.lr_lambdas[0],
        "lambda_lr": _stepper(lambda_lr, reset_lambda),
        "cosine_lr": _stepper(cosine, reset_cosine),
        "plan_lr": _stepper(ours, reset_ours),
        "versions": f"torch {torch.__version__}, transformers {transformers.__version__}",
    }, ""


def _composer(ctx: Context, on: Plan) -> tuple[Callable[[int], float] | None, str]:
    """Composer's CosineAnnealingWithWarmupScheduler as its LambdaLR calls it, or why not."""
    module, reason = composer_schedulers(ctx.composer)
    if module is None or ctx.composer is None:
        return None, reason
    time_type, timestamp_type = ctx.composer.time, ctx.composer.timestamp
    batches = time_type.from_timestring("1ba").unit
    total = on.stop.batch
    scheduler = module.CosineAnnealingWithWarmupScheduler(t_warmup=f"{WARMUP}ba", alpha_f=0.0)
    state = types.SimpleNamespace(
        max_duration=time_type(total, batches),
        dataloader_len=time_type(scenario.PRETRAIN.steps_per_epoch, batches),
        timestamp=timestamp_type(),
    )
    stamps = [timestamp_type(batch=k) for k in range(total)]

    def rate(k: int) -> float:
        state.timestamp = stamps[k]
        value: float = BASE * scheduler(state)
        return value

    return rate, ""


#: The rows, in the order shown; each is lettered by its place here.
ORDER = (
    "floor", "durations", "hf", "exact", "composer",
    "cosine", "hf_decay", "exponential", "inverse_sqrt", "hf_isqrt", "warmup",
    "lambda_lr", "plan_lr", "cosine_lr",
)  # fmt: skip


def letter(key: str) -> str:
    """The row's letter: ``(a)`` for the first of ``ORDER``."""
    return f"({chr(ord('a') + ORDER.index(key))})"


def run(ctx: Context) -> Figure:
    figure = Figure(
        key="schedule",
        title="Figure 6: the learning rate at each step, from a warmup-then-cosine schedule",
        unit="per step",
        baseline="floor",
    )
    on = scenario.two_phase()
    total = on.stop.batch
    curves = _curves(on)
    cosine = curves["cosine"]
    stride = ctx.settings.pick(1, 16)
    every = range(0, total, stride)
    decay = range(WARMUP, total, stride)
    warmup = range(0, WARMUP, stride)
    repeat = ctx.settings.pick(2, 1)

    def lr(curve: ResolvedSchedule) -> Callable[[int], float]:
        rate = curve.lr

        def at(k: int) -> float:
            return rate(k, BASE)

        return at

    rows: dict[str, tuple[str, Callable[[int], object], range]] = {
        "floor": ("bare float loop: the ramp, then 0.5 * (1 + cos(pi * p))", _floor(total), every),
        "durations": ("durations: curve.lr(k, base), warmup then cosine", lr(cosine), every),
        "exact": ("durations before: factor(k), then the exact product", _exact(cosine), every),
        "cosine": ("durations: curve.lr(k, base), the cosine's steps", lr(cosine), decay),
        "exponential": (
            "durations: curve.lr(k, base), an exponential's steps (to 0.01)",
            lr(curves["exponential"]),
            decay,
        ),
        "inverse_sqrt": (
            "durations: curve.lr(k, base), an inverse square root's steps",
            lr(curves["inverse_sqrt"]),
            decay,
        ),
        "warmup": ("durations: curve.lr(k, base), the warmup's steps (exact)", lr(cosine), warmup),
    }
    stepped: dict[str, tuple[str, Callable[[Sequence[int]], Any], range]] = {}
    torch, torch_reason = _torch(on, cosine)
    if torch:
        hf, hf_isqrt = torch["hf"], torch["hf_isqrt"]
        cosine_lambda = "transformers: base * lr_lambda(k), get_cosine_schedule_with_warmup"
        rows["hf"] = (cosine_lambda, lambda k: BASE * hf(k), every)
        rows["hf_decay"] = (f"{cosine_lambda}, the cosine's steps", lambda k: BASE * hf(k), decay)
        rows["hf_isqrt"] = (
            "transformers: base * lr_lambda(k), get_inverse_sqrt_schedule, the decay's steps",
            lambda k: BASE * hf_isqrt(k),
            decay,
        )
        stepped["lambda_lr"] = (
            "torch: LambdaLR(transformers' cosine lambda).step()",
            torch["lambda_lr"],
            every,
        )
        stepped["plan_lr"] = (
            "durations.integrations.torch.scheduler(...).step()",
            torch["plan_lr"],
            every,
        )
        stepped["cosine_lr"] = (
            "torch: CosineAnnealingLR.step(), the cosine's steps",
            torch["cosine_lr"],
            decay,
        )
        figure.notes.append(
            f"{torch['versions']}: each torch scheduler steps an SGD optimizer of one parameter "
            f"group, so its row includes writing the group's lr; {letter('cosine_lr')} has no "
            f"warmup and uses torch's recursive formula; {letter('hf_isqrt')} is transformers' "
            f"inverse square root with its timescale {WARMUP}."
        )
        gap = max(abs(cosine.lr(k, BASE) - BASE * hf(k)) for k in range(total))
        figure.notes.append(
            f"The same curve, not timed: {letter('durations')} and {letter('hf')} differ by at "
            f"most {gap / BASE:.2g} of the base rate over the plan's steps (float rounding)."
        )
    else:
        figure.skipped.append(f"transformers and torch: {torch_reason}")
    composer, composer_reason = _composer(ctx, on)
    if composer is not None:
        label = "Composer: base * CosineAnnealingWithWarmupScheduler('200ba')(state)"
        rows["composer"] = (label, composer, every)
        figure.notes.append(
            "Composer 0.32.1: composer.optim.scheduler from the wheel (see Figure 1), called "
            "with a state holding max_duration, dataloader_len and each step's Timestamp, as "
            "compile_composer_scheduler's LambdaLR calls it."
        )
    else:
        figure.skipped.append(f"Composer: {composer_reason or ctx.composer_reason}")
    contenders = []
    for key in ORDER:
        if key in rows:
            label, rate, steps = rows[key]
            run_steps = _loop(rate, steps)
        elif key in stepped:
            label, make, steps = stepped[key]
            run_steps = make(steps)
        else:
            continue
        contenders.append(
            Contender(key, f"{letter(key)} {label}", run_steps, repeat, ops=len(steps))
        )
    rounds = ctx.settings.pick(21, 3)
    samples = measure(figure, contenders, rounds=rounds)
    which = f"every {stride}th of the two-phase plan's" if stride > 1 else "the two-phase plan's"
    figure.notes.append(
        f"Steps: {which} {total:,} (the decay's from step {WARMUP}), base {BASE}, {repeat} "
        f"pass(es) per round, {rounds} rounds; ratio = median over rounds of contender / (a)."
    )
    _agreement(figure, curves, total)
    _goals(figure, samples, ctx)
    return figure


def _paired(samples: dict[str, list[float]], key: str, reference: str) -> float:
    """The median over rounds of ``key`` / ``reference``, both timed in the same round."""
    pairs = zip(samples[key], samples[reference], strict=True)
    return statistics.median(a / b for a, b in pairs)


def _agreement(figure: Figure, curves: dict[str, ResolvedSchedule], total: int) -> None:
    """Not timed: lr gives the exact evaluation's floats at every step, bit for bit."""
    checked = differ = 0
    for curve in curves.values():
        exact = _exact(curve)
        for k in range(total + 1):
            checked += 1
            differ += curve.lr(k, BASE).hex() != exact(k).hex()
    figure.extra["lr_checked"] = checked
    figure.extra["lr_differ"] = differ
    figure.goals.append(
        Goal(
            "the same rates as the exact evaluation, bit for bit (exact where rational)",
            differ == 0,
            f"{differ} of {checked:,} steps of the three curves differ from "
            f"{letter('exact')}'s formula",
        )
    )


def _goals(figure: Figure, samples: dict[str, list[float]], ctx: Context) -> None:
    assessed = not ctx.settings.quick
    if "hf_decay" not in samples:
        figure.goals.append(
            Goal("lr on the float pieces no slower than transformers' lambda", None, "skipped")
        )
        return
    pieces = ("cosine", "exponential", "inverse_sqrt")
    ratios = {key: _paired(samples, key, "hf_decay") for key in pieces}
    figure.extra["to_transformers"] = ratios
    words = ", ".join(f"{key} {ratio:.3g}x" for key, ratio in ratios.items())
    figure.goals.append(
        Goal(
            "durations' lr on the float pieces (cosine, exponential, inverse square root) no "
            "slower than transformers' cosine-with-warmup lambda",
            all(r <= 1 for r in ratios.values()) if assessed else None,
            f"per step, paired by round, against {letter('hf_decay')}: {words}; the whole "
            f"schedule {letter('durations')} / {letter('hf')} "
            f"{_paired(samples, 'durations', 'hf'):.3g}x, the exact warmup {letter('warmup')} / "
            f"{letter('hf_decay')} {_paired(samples, 'warmup', 'hf_decay'):.3g}x, the "
            f"evaluation before {letter('exact')} / {letter('hf')} "
            f"{_paired(samples, 'exact', 'hf'):.3g}x",
        )
    )
