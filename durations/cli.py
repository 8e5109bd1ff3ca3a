"""The ``durations`` command: a thin shell that reads files and prints what the core computes.

Exit codes: 0 success; 1 the plan has an error diagnostic; 2 bad input (a message on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import textwrap

from .errors import SHOWN_CHARS, DurationsError, shown

# Each command imports what it uses when it runs: `durations --help` imports none of the core,
# and `plan` neither the trainer profiles nor `compare` (tests/test_cli_imports.py checks it).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import _SubParsersAction
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import NoReturn

    from .checkpoint import Checkpoint
    from .fit import FitCall
    from .intervals import Events
    from .plans import Plan
    from .scenario import Scenario
    from .schedules import ResolvedSchedule

__all__ = ["main"]

#: The choices of --mode, --data and --trainer: the values of ResumeMode and DataPolicy
#: (durations.fit) and compare.TRAINERS, written out so that building the parser imports
#: neither (tests/test_cli_imports.py checks that they agree).
RESUME_MODES = ("continue", "extend", "weights")
DATA_POLICIES = ("exact", "replay_epoch", "next_epoch")
TRAINERS = ("composer", "lightning", "transformers", "keras")


class InputError(Exception):
    """Bad input: printed as one paragraph, exit code 2."""


class _ArgumentParser(argparse.ArgumentParser):
    """Argument errors in the same one-paragraph form as every other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"durations: error: {self.prog}: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter at the width argparse would find, without importing shutil (and its
    compression modules) for every command: argparse makes a formatter for each argument."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    import warnings

    for stream in (sys.stdout, sys.stderr):
        # Text the terminal's encoding cannot show (PYTHONIOENCODING=ascii) is escaped, never
        # a UnicodeEncodeError.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            # What the frameworks and matplotlib warn about while durations reads or draws is
            # theirs to say, not this command's: the one-paragraph error stays one paragraph.
            warnings.filterwarnings("ignore", module=r"(torch|matplotlib|PIL)(\.|$)")
            code: int = args.run(args)
        sys.stdout.flush()  # a write error is this command's to report, not the interpreter's
    except BrokenPipeError:
        # The reader went away (`| head`): it has read what it wanted. Nothing more is written,
        # and the interpreter's flush at exit must not fail on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except (InputError, DurationsError, OSError, UnicodeDecodeError) as error:
        message = str(error)
        if isinstance(error, OSError):
            message = _os_error(error)
        elif isinstance(error, UnicodeDecodeError):
            message = f"cannot read the file as UTF-8 text: {error.reason} at byte {error.start}"
        print(f"durations: error: {message}", file=sys.stderr)
        if isinstance(error, OSError) and error.filename is None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    return code


def _say(text: str, end: str = "\n") -> None:
    """Print text output, every line in 100 columns (``_render.fitted``)."""
    from . import _render

    print(_render.fitted(text), end=end)


def _os_error(error: OSError) -> str:
    """An OSError as the command says it: a file that cannot be read names the file; one
    without a file name is standard output that cannot be written (``> /dev/full``)."""
    if error.filename is None:
        return f"cannot write the output: {error.strerror or error}"
    name = str(error.filename)
    return f"cannot read {shown(name) if len(name) > SHOWN_CHARS else name}: {error.strerror}"


def _parser() -> argparse.ArgumentParser:
    formatter = _HelpFormatter
    parser = _ArgumentParser(
        prog="durations",
        description="Exact training durations, resumes and multi-phase plans.",
        epilog=textwrap.dedent(
            """\
            examples:
              durations plan examples/two-phase.toml
              durations plan examples/two-phase.toml --resume-from 0.5ep
              durations convert 2.1ep --samples 1000000 --batch-size 512
              durations inspect examples/checkpoints/mid-epoch.json
              durations compare examples/two-phase.toml --crash-at 3000
            """
        ),
        formatter_class=formatter,
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    for add in (_plan_command, _convert_command, _compare_command, _inspect_command):
        add(commands, formatter)
    _audit_command(commands, formatter)
    _conformance_command(commands, formatter)
    return parser


def _plan_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations plan``: a scenario's plan, its what-ifs and its picture."""
    p = commands.add_parser(
        "plan",
        help="print the plan of a scenario file",
        description="Print the exact plan of a scenario file: one row per fit call, the total, "
        "a timeline, and the diagnostics.",
        epilog=textwrap.dedent(
            """\
            examples:
              durations plan examples/two-phase.toml
              durations plan examples/two-phase.toml --json
              durations plan examples/two-phase.toml --plot plan.png
              durations plan examples/two-phase.toml --resume-from 13ba   # crash at step 13?
              durations plan examples/two-phase.toml --resume-from runs/checkpoint-500
              durations plan examples/mid-epoch-exact.toml --data replay_epoch
              durations plan examples/elastic-ddp.toml --resume-from 3ba --world-size 3
            """
        ),
        formatter_class=formatter,
    )
    p.add_argument("scenario", help="a scenario TOML file (docs/scenario-files.md)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the calls, epochs, events and learning-rate factor on one axis of "
        "lifetime steps into FILE (.png or .svg; needs the plot extra: pip install "
        "'training-durations[plot]')",
    )
    p.add_argument(
        "--resume-from",
        metavar="TIME|PATH",
        help="plan the re-run from a checkpoint: a time (the checkpoint this script's own plan "
        "writes there, e.g. 13ba or 0.5ep) or a path (a durations checkpoint JSON, or a Hugging "
        "Face checkpoint directory or trainer_state.json); overrides [resume] checkpoint",
    )
    p.add_argument(
        "--world-size",
        type=_positive,
        metavar="N",
        help="what if the re-run has N data-parallel ranks: every data-parallel loader is read "
        "on N ranks (same per-device batch), the checkpoint stays as written",
    )
    p.add_argument(
        "--indices",
        type=_positive,
        metavar="STEP",
        help="print the data-set indices each rank reads in the step that ends at lifetime step "
        "STEP, through its loader's order (the loader's order and seed keys); by default, "
        "those of the plan's first step when its loader has an order",
    )
    p.add_argument("--mode", choices=RESUME_MODES, help="override [resume] mode")
    p.add_argument("--data", choices=DATA_POLICIES, help="override [resume] data")
    p.set_defaults(run=_plan)


def _convert_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations convert``: a time in every unit at the start of a run."""
    c = commands.add_parser(
        "convert",
        help="print a time in every unit at the start of a run",
        description="Print a time in every unit it converts to at the start of a run, exactly, "
        "and say which conversions need more information.",
        epilog=textwrap.dedent(
            """\
            examples:
              durations convert 2.1ep --samples 1000000 --batch-size 512
              durations convert 1e9tok --samples 1000000 --batch-size 512 --tokens-per-sample 2048
            """
        ),
        formatter_class=formatter,
    )
    c.add_argument("time", help="a time string such as 2.1ep, 1000ba, 1e9tok")
    c.add_argument("--samples", type=_positive, help="samples per epoch (omit for a stream)")
    c.add_argument("--batch-size", type=_positive, required=True, help="global batch size")
    c.add_argument("--tokens-per-sample", type=_positive, help="tokens in every sample")
    c.add_argument("--drop-last", action="store_true", help="the incomplete last batch is dropped")
    c.set_defaults(run=_convert)


def _compare_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations compare``: each trainer's emulation next to the plan."""
    k = commands.add_parser(
        "compare",
        help="print what each trainer does with a scenario, next to the plan",
        description="Emulate a scenario file on Composer, Lightning, Hugging Face and Keras "
        "(each written in its own idiom), optionally crashing after a step and running the same "
        "script again, and say where each differs from the durations plan.",
        epilog=textwrap.dedent(
            """\
            examples:
              durations compare examples/two-phase.toml
              durations compare examples/two-phase.toml --crash-at 3000
              durations compare examples/two-phase.toml --trainer lightning --json
              durations compare examples/elastic-ddp.toml --crash-at 3 --world-size 3
            """
        ),
        formatter_class=formatter,
    )
    k.add_argument("scenario", help="a scenario TOML file ([resume] is not used)")
    k.add_argument(
        "--crash-at",
        type=_positive,
        metavar="STEP",
        help="the job is killed after this many optimizer steps (counted over the whole script) "
        "and the same script is run again, resuming from the newest checkpoint each trainer's "
        "own save settings wrote",
    )
    k.add_argument(
        "--world-size",
        type=_positive,
        metavar="N",
        help="run the re-run after --crash-at on N processes (every data-parallel loader's "
        "per-device geometry unchanged)",
    )
    k.add_argument(
        "--trainer",
        action="append",
        choices=list(TRAINERS),
        help="compare only this trainer (repeatable; default: all)",
    )
    k.add_argument("--json", action="store_true", help="print the comparison as JSON")
    k.set_defaults(run=_compare)


def _inspect_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations inspect``: what a checkpoint says."""
    i = commands.add_parser(
        "inspect",
        help="print what a checkpoint says",
        description="Print what a checkpoint says: progress, ledger, format version.",
        epilog="example:\n  durations inspect examples/checkpoints/mid-epoch.json",
        formatter_class=formatter,
    )
    i.add_argument("path", help="a durations checkpoint JSON, or a Hugging Face checkpoint")
    i.set_defaults(run=_inspect)


def _audit_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations audit``: whether a run's step log followed the plan (docs/audits.md)."""
    a = commands.add_parser(
        "audit",
        help="check a run's step log against the plan",
        description="Plan a scenario file and check a run's step log (one JSON line per "
        "optimizer step, docs/audits.md) against it, step by step: the data each step read, its "
        "learning rate, each checkpoint's saved loader state, and the resumes of a killed job. "
        "Exit 0 when the run followed the plan, 1 when it did not (the first divergence is "
        "named), 2 for input that cannot be read.",
        epilog="example:\n  durations audit run.toml runs/steps.jsonl",
        formatter_class=formatter,
    )
    a.add_argument("scenario", help="the run's scenario TOML file ([resume] is not used)")
    a.add_argument("log", help="the run's step log (JSON lines)")
    a.add_argument(
        "--base-lr",
        type=float,
        metavar="LR",
        help="the base learning rate the [schedule]'s factors multiply (default: the log "
        "header's base_lr, else the first logged rate over its factor)",
    )
    a.add_argument("--json", action="store_true", help="print the audit as JSON")
    a.set_defaults(run=_audit)


def _audit(args: argparse.Namespace) -> int:
    import io
    import json
    from pathlib import Path

    from ._files import open_regular
    from ._render.audit import audit_json, audit_text
    from .audit import StepLog, audit
    from .planner import plan
    from .readers import read_text
    from .scenario import Scenario

    path = Path(args.scenario)
    scenario = Scenario.from_toml(read_text(path), source=str(path))
    result = plan(scenario.config, scenario.calls)
    if not result.ok:
        raise InputError(f"{path}: the scenario cannot be planned; see durations plan {path}")
    curve, _ = _schedule(scenario, result)
    # Refused before anything is read unless a regular file (a FIFO would wait for a writer);
    # then streamed, not read whole: a long run's log is past the bound of the other readers.
    with open_regular(args.log) as raw, io.TextIOWrapper(raw, encoding="utf-8") as handle:
        log = StepLog.parse(handle)
    base = args.base_lr if args.base_lr is not None else log.base_lr
    found = audit(result, log.records, schedule=curve, base_lr=base)
    if args.json:
        print(json.dumps(audit_json(found, str(path), args.log), indent=2))
    else:
        _say(audit_text(found, str(path), args.log), end="")
    return 0 if found.ok else 1


def _conformance_command(
    commands: _SubParsersAction[_ArgumentParser], formatter: type[argparse.HelpFormatter]
) -> None:
    """``durations conformance``: the conformance suite against an adapter."""
    c = commands.add_parser(
        "conformance",
        help="run the conformance suite against an implementation",
        description="Run the conformance suite (docs/conformance.md) against an adapter: a "
        "command that reads one JSON request a line on stdin and writes one JSON response a "
        "line on stdout. Exit 0 when every vector not known to fail passes, 1 when one does "
        "not (or a known failure is stale or names no vector), 2 for bad input.",
        epilog=textwrap.dedent(
            """\
            examples:
              durations conformance
              durations conformance --adapter "node my-adapter.js" --features core,resume
              durations conformance --trainer lightning --as-trainer
              durations conformance --adapter ./adapter --known-failures known.json --json
            """
        ),
        formatter_class=formatter,
    )
    who = c.add_mutually_exclusive_group()
    who.add_argument(
        "--adapter",
        metavar="CMD",
        help="the adapter command, split as a shell would (default: the reference adapter, "
        "python -m durations.adapter)",
    )
    who.add_argument(
        "--trainer",
        choices=list(TRAINERS),
        help="run a trainer profile as the adapter: its total_steps and reads are checked",
    )
    c.add_argument(
        "--suite", metavar="DIR", help="the suite's directory (default: the shipped one)"
    )
    c.add_argument(
        "--features",
        metavar="LIST",
        help="run only the vectors whose features are all in this comma-separated list, "
        "e.g. core,resume (default: every vector)",
    )
    c.add_argument(
        "--known-failures",
        metavar="FILE",
        help='a JSON object {"<vector id>": "<why>"}: those vectors may fail; one that passes '
        "or names no vector fails the run",
    )
    c.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for each response (default 10); the adapter is restarted after",
    )
    c.add_argument("--json", action="store_true", help="print the results as JSON")
    c.add_argument(
        "--as-trainer",
        action="store_true",
        help="with --trainer: expect the trainer's own recorded outcome where the suite has one",
    )
    c.set_defaults(run=_conformance)


def _conformance(args: argparse.Namespace) -> int:
    import json
    import shlex
    from pathlib import Path

    from . import _conformance_run as runner

    if args.as_trainer and args.trainer is None:
        raise InputError("--as-trainer needs --trainer NAME: whose recorded outcome to expect")
    if not args.timeout > 0:
        raise InputError(f"--timeout {args.timeout:g}: expected a number of seconds > 0")
    command = runner.reference_command(args.trainer)
    label = "python -m durations.adapter" + (f" --trainer {args.trainer}" if args.trainer else "")
    if args.adapter is not None:
        command = shlex.split(args.adapter)
        label = args.adapter
        if not command:
            raise InputError("--adapter '': expected a command")
    suite = runner.load_suite(runner.find_suite(args.suite))
    known = None
    if args.known_failures is not None:
        known = runner.load_known_failures(Path(args.known_failures))
    features = None
    if args.features is not None:
        features = [f.strip() for f in args.features.split(",") if f.strip()]
        if not features:
            raise InputError(
                f"--features {args.features!r}: no feature given; expected a comma-separated "
                "list, e.g. core,resume"
            )
    adapter = runner.Adapter(command, timeout=args.timeout)
    report = runner.run(
        suite,
        adapter,
        features=features,
        known=known,
        trainer=args.trainer,
        as_trainer=args.as_trainer,
        label=label,
    )
    if args.json:
        print(json.dumps(runner.report_json(report), indent=2))
    else:
        _say(runner.report_text(report, args.known_failures), end="")
    return 0 if report.ok else 1


def _positive(text: str) -> int:
    if not re.fullmatch(r"[0-9](?:_?[0-9])*", text):
        raise argparse.ArgumentTypeError(f"expected a whole number > 0, got {text!r}")
    value = int(text.replace("_", ""))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number > 0, got {text!r}")
    return value


# -- plan ------------------------------------------------------------------------------------


def _plan(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    import attrs

    from . import _render
    from .planner import plan
    from .readers import read_text
    from .scenario import Scenario

    path = Path(args.scenario)
    if args.plot is not None:
        # Checked before anything is read or planned: a target that would block, or overwrite
        # a file this command reads, is refused whatever else the command would say.
        _check_plot_target(args.plot, read=[path, Path(args.resume_from or path)])
    scenario = Scenario.from_toml(read_text(path), source=str(path))
    if args.plot is not None and scenario.checkpoint is not None:
        _check_plot_target(args.plot, read=[path.parent / scenario.checkpoint])
    config = scenario.config
    if args.mode is not None:
        config = attrs.evolve(config, resume=args.mode)
    if args.data is not None:
        config = attrs.evolve(config, data=args.data)
    notes: list[str] = []
    checkpoint = _checkpoint(args, scenario, path, notes)
    calls = scenario.calls
    if args.world_size is not None:
        calls = _on_world_size(calls, args.world_size)
        notes.append(
            f"what if: the re-run reads every data-parallel loader on {args.world_size} ranks"
        )
    result = plan(config, calls, checkpoint)
    step = _indices_step(result, args.indices)
    curve, events = _schedule(scenario, result)
    if args.plot is not None:
        _plot_to(args.plot, result, curve, events)
    if args.json:
        data = _render.plan_json(result)
        data["schedule"] = _render.schedule_json(result, curve)
        data["events"] = _render.events_json(events)
        data["indices"] = None if step is None else _render.indices_json(result, step)
        print(json.dumps(data, indent=2))
    else:
        for note in notes:
            _say(note)
        text = _render.plan_text(result)
        extra = _render.schedule_text(result, curve, events)
        if step is not None:
            extra = [*extra, *([""] if extra else []), *_render.indices_text(result, step)]
        if extra:
            # The schedule and events go after the timeline, before the diagnostics.
            head, marker, diagnostics = text.partition("\ndiagnostics:\n")
            text = "\n".join([head.rstrip("\n"), "", *extra]) + "\n"
            text += marker + diagnostics if marker else ""
        _say(text, end="")
        if args.plot is not None:
            _say(f"plot: {args.plot}")
    return 0 if result.ok else 1


def _schedule(
    scenario: Scenario, result: Plan
) -> tuple[ResolvedSchedule | None, dict[str, Events]]:
    """The scenario's ``[schedule]`` and ``[events]`` placed on ``result``."""
    from .errors import ScheduleError

    where = "[schedule]"
    try:
        curve = None
        if scenario.schedule is not None:
            curve = scenario.schedule.resolve(result, on_extend=scenario.on_extend)
        events = {}
        for name, interval in scenario.events.items():
            where = f"[events.{name}]"
            events[name] = interval.resolve(result)
    except ScheduleError as error:
        message = str(error).replace("pass on_extend='stretch'", 'set on_extend = "stretch"')
        message = message.replace("on_extend='rewarm'", 'on_extend = "rewarm"')
        raise InputError(f"{scenario.source}: {where}: {message}") from None
    return curve, events


def _check_plot_target(target: str, *, read: Sequence[Path]) -> None:
    """Refuse a ``--plot`` target that is not a ``.png`` or ``.svg`` name, that exists as
    anything but a regular file (a FIFO would block, a device never end), or that is one of the
    files ``read``."""
    import stat
    from pathlib import Path

    path = Path(target)
    if path.suffix.lower() not in (".png", ".svg"):
        raise InputError(f"--plot {shown(target)}: expected a file name ending in .png or .svg")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise InputError(f"cannot write {shown(target)}: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise InputError(
            f"--plot {shown(target)}: {_file_kind(mode)}, not a regular file; give the name of "
            "a new file or of a picture to replace"
        )
    for source in read:
        if source.is_file() and os.path.samefile(source, path):
            raise InputError(
                f"--plot {shown(target)} is {shown(str(source))}, which this command reads: "
                "drawing would overwrite it; give the picture another name"
            )


def _plot_to(
    target: str, result: Plan, curve: ResolvedSchedule | None, events: dict[str, Events]
) -> None:
    """Draw the plan into ``target`` (PNG or SVG by its suffix, checked by
    :func:`_check_plot_target`) with the optional matplotlib.

    The picture is drawn into a new file beside ``target`` and renamed onto it: ``target`` is
    the whole picture or left as it was.
    """
    import tempfile
    from pathlib import Path

    path = Path(target)
    suffix = path.suffix.lower()
    from . import _plot  # matplotlib itself is imported when drawing

    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(
            suffix=suffix, prefix=f".{path.name}.", dir=path.parent
        )
        os.close(handle)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a file the command created, not mkstemp's 0600
        _plot.draw(result, curve, events, Path(temporary))
        os.replace(temporary, path)
        temporary = None
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] != "matplotlib":
            raise
        raise InputError(
            "--plot needs matplotlib, which is not installed: "
            "pip install 'training-durations[plot]'"
        ) from None
    except OSError as error:
        raise InputError(f"cannot write {shown(target)}: {error.strerror or error}") from None
    except ValueError as error:  # what _plot.draw refuses to draw
        raise InputError(f"--plot {shown(target)}: {error}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _file_kind(mode: int) -> str:
    """What a non-regular file is, for a message: ``a FIFO``, ``a directory``..."""
    import stat

    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def _indices_step(result: Plan, lifetime: int | None) -> int | None:
    """The plan step whose indices to print: the one ending at lifetime step ``lifetime``, or,
    without it, the plan's first when its loader has an order (``None``: no indices)."""
    if lifetime is None:
        first = result.segment_at(1) if result.total_steps else None
        ordered = first is not None and (
            first.loader.order is not None or first.loader.mixture is not None
        )
        return 1 if ordered else None
    low, high = result.start.batch + 1, result.stop.batch
    if low > high:
        raise InputError(f"--indices {lifetime:,}: the plan trains nothing: no step reads data")
    if not low <= lifetime <= high:
        raise InputError(
            f"--indices {lifetime:,}: not a step of this plan; its steps end at lifetime steps "
            f"from {low:,} to {high:,}"
        )
    segment = result.segment_at(lifetime - result.start.batch)
    assert segment is not None
    if segment.loader.order is None and segment.loader.mixture is None:
        raise InputError(
            f"--indices {lifetime:,}: loader {segment.loader.name!r} of call {segment.name!r} has "
            'no order to name indices by; give its table order = "sequential", or order = '
            '"shuffled" and a seed (docs/scenario-files.md)'
        )
    return lifetime - result.start.batch


def _on_world_size(calls: tuple[FitCall, ...], world_size: int) -> tuple[FitCall, ...]:
    """The calls with every data-parallel loader read on ``world_size`` ranks."""
    import attrs

    moved = []
    for index, call in enumerate(calls):
        if call.loader.sharding is None:
            raise InputError(
                f"--world-size {world_size}: loader {call.loader.name!r} of call "
                f"{call.identity(index)!r} gives no per-device geometry; give its table "
                "world_size and device_batch_size instead of batch_size (docs/scenario-files.md)"
            )
        moved.append(attrs.evolve(call, loader=call.loader.with_world_size(world_size)))
    return tuple(moved)


def _checkpoint(
    args: argparse.Namespace,
    scenario: Scenario,
    scenario_path: Path,
    notes: list[str],
) -> Checkpoint | None:
    from pathlib import Path

    import attrs

    from .errors import TimeParseError
    from .fit import ResumeMode
    from .planner import plan
    from .time import Time
    from .units import Unit

    fresh: Plan | None = None

    def own_plan() -> Plan:
        nonlocal fresh
        if fresh is None:
            fresh = plan(attrs.evolve(scenario.config, resume=ResumeMode.CONTINUE), scenario.calls)
        return fresh

    source = args.resume_from
    if source is None:
        if scenario.checkpoint is None:
            return None
        target = Path(scenario.checkpoint)
        if not target.is_absolute():
            target = scenario_path.parent / target
        return _read(target, own_plan, notes)
    try:
        when = Time.parse(source)
    except TimeParseError as error:
        if Path(source).exists():
            return _read(Path(source), own_plan, notes)
        raise InputError(
            f"--resume-from {shown(source)} is neither a time ({error.reason}) nor an existing path"
        ) from None
    fresh_plan = own_plan()
    # Nba is "after N steps of this plan"; other units are found on the run clock (resolve).
    if when.unit is Unit.BA:
        step = int(when.value) if when.value <= fresh_plan.total_steps else None
    else:
        step = fresh_plan.resolve(when)
    if step is None:
        raise InputError(
            f"--resume-from {when}: this script's plan ends before {when} "
            f"(it ends after {fresh_plan.total_steps:,} steps)"
        )
    notes.append(f"resuming from the checkpoint this script writes at {when}: step {step:,}")
    return fresh_plan.checkpoint_at(step)


def _read(path: Path, own_plan: Callable[[], Plan], notes: list[str]) -> Checkpoint:
    from . import _render
    from .readers import ExternalState, read_checkpoint

    found = read_checkpoint(path)
    if isinstance(found, ExternalState):
        fresh = own_plan()
        details = ", ".join(f"{k}={v}" for k, v in found.details.items())
        epoch = "" if found.epoch is None else f", epoch={_render.number(found.epoch)}"
        notes.append(
            f"read {found.trainer} checkpoint {found.path}: global_step={found.global_step}"
            f"{epoch}{', ' + details if details else ''}; located by its step in this script's plan"
        )
        return found.locate(fresh)
    if path.is_dir() or path.suffix in (".ckpt", ".pt") or path.name == "trainer_state.json":
        notes.append(f"read the ledger the durations integration saved with {path}")
    return found


# -- compare, convert and inspect ------------------------------------------------------------


def _compare(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from . import _render
    from .compare import TRAINERS, compare
    from .readers import read_text
    from .scenario import Scenario

    path = Path(args.scenario)
    scenario = Scenario.from_toml(read_text(path), source=str(path))
    try:
        comparison = compare(
            scenario,
            crash_at=args.crash_at,
            world_size=args.world_size,
            trainers=args.trainer or TRAINERS,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    if args.json:
        print(json.dumps(_render.compare_json(comparison), indent=2))
    else:
        _say(_render.compare_text(comparison, str(path)), end="")
    return 0


# -- convert and inspect ----------------------------------------------------------------------


def _convert(args: argparse.Namespace) -> int:
    from . import _render
    from .loader import Loader
    from .time import Time

    target = Time.parse(args.time)
    loader = Loader(
        samples=args.samples,
        batch_size=args.batch_size,
        drop_last=args.drop_last,
        tokens_per_sample=args.tokens_per_sample,
    )
    _say(_render.convert_text(target, loader), end="")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from . import _render
    from .readers import LEDGER_FILE, ExternalState, read_checkpoint, read_text

    found = read_checkpoint(Path(args.path))
    if isinstance(found, ExternalState):
        epoch = "unknown" if found.epoch is None else _render.number(found.epoch)
        _say(f"{found.path}: {found.trainer} checkpoint (no ledger)")
        _say(f"global_step: {found.global_step:,}")
        _say(f"epoch: {epoch}")
        for key, value in found.details.items():
            _say(f"{key}: {value}")
        return 0
    version: object = "?"
    source = Path(args.path)
    if source.is_dir() or source.name == "trainer_state.json":
        source = (source if source.is_dir() else source.parent) / LEDGER_FILE
    if source.suffix == ".json":
        version = json.loads(read_text(source)).get("format", "?")
    _say(_render.checkpoint_text(found, args.path, version), end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
