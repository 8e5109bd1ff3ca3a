"""Reading trainers' checkpoints as ``durations`` checkpoints, and finding the newest one.

Lightning ``.ckpt`` files and Composer checkpoints are loaded with
``torch.load(path, map_location="cpu", weights_only=True)``: no arbitrary object is ever
unpickled. A checkpoint written with a ``durations`` integration carries its ledger (the
``"durations"`` key) and reads back exactly; any other is read from its own counters, with
``ledger=None`` (the planner then locates it in the script's plan, ``docs/semantics.md`` rule 10).

:func:`latest_checkpoint` chooses among many checkpoints by the lifetime step each records, never
by file name or modification time, on a local folder or any fsspec URL (``memory://``, ``gs://``,
``s3://``, ...; fsspec is needed for URLs). A missing or empty location gives ``None``, an explicit
"nothing to resume", never a silent fresh start (Lightning's ``ckpt_path="last"`` trains from
scratch on remote storage; ``docs/integrations.md``).

``torch`` is imported only when a ``.ckpt``/Composer file is read.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import io
import math
import os
import pickle
import pickletools
import posixpath
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

import attrs

from .._files import (
    LEDGER_FILE,
    MAX_FILE_BYTES,
    bounded_read,
    checkpoint_json,
    ledger_checkpoint,
    open_regular,
    read_bytes,
)
from ..checkpoint import Checkpoint
from ..errors import CheckpointFormatError, shown_value
from ..loader import Loader
from ..progress import Progress
from . import INSTALL_HINT

__all__ = [
    "COMPOSER",
    "COMPOSER_CALLBACK",
    "DURATIONS_KEY",
    "LEDGER_FILE",
    "LIGHTNING",
    "TRANSFORMERS",
    "CheckpointReader",
    "FoundCheckpoint",
    "latest_checkpoint",
    "list_checkpoints",
    "read_composer_checkpoint",
    "read_lightning_checkpoint",
    "read_transformers_checkpoint",
]

#: The key under which the integrations store the durations checkpoint in a trainer's checkpoint.
DURATIONS_KEY = "durations"
#: The callback whose state (``state.callbacks.<name>``) holds the ledger in a Composer checkpoint.
COMPOSER_CALLBACK = "DurationsCallback"


# -- file access: local paths, or fsspec URLs ---------------------------------------------------


def _is_url(location: str) -> bool:
    return "://" in location and not location.startswith("file://")


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError as error:
        raise ImportError(
            "reading checkpoints from a URL needs fsspec (and the filesystem's own package, "
            "e.g. gcsfs for gs://): pip install fsspec"
        ) from error
    return fsspec


def _filesystem(location: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``location`` and the path on it (local paths need no fsspec)."""
    if not _is_url(location):
        try:
            fsspec = _fsspec()
        except ImportError:
            return None, os.path.abspath(location.removeprefix("file://"))
        return fsspec.filesystem("file"), os.path.abspath(location.removeprefix("file://"))
    fs, path = _fsspec().core.url_to_fs(location)
    return fs, path


def _open(location: str) -> IO[bytes]:
    if not _is_url(location):
        return open(location.removeprefix("file://"), "rb")
    fs, path = _filesystem(location)
    return fs.open(path, "rb")  # type: ignore[no-any-return]


def _join(location: str, name: str) -> str:
    return posixpath.join(location, name) if _is_url(location) else os.path.join(location, name)


def _exists(location: str) -> bool:
    fs, path = _filesystem(location)
    return os.path.exists(path) if fs is None else bool(fs.exists(path))


# -- torch.load, safely ---------------------------------------------------------------------------


def _plain_values() -> list[Any]:
    """Plain-data types Composer pickles into its checkpoints, safe to allow in ``weights_only``:
    wall-clock ``timedelta``s, the torch version string, and numpy arrays (its random state)."""
    import datetime

    from torch.torch_version import TorchVersion

    allowed: list[Any] = [datetime.timedelta, TorchVersion]
    try:
        numpy: Any = importlib.import_module("numpy")
    except ImportError:
        return allowed
    core = getattr(numpy, "_core", None) or numpy.core
    dtypes = getattr(numpy, "dtypes", None)
    allowed += [numpy.ndarray, numpy.dtype, core.multiarray._reconstruct]
    if dtypes is not None:
        allowed += [getattr(dtypes, name) for name in dir(dtypes) if name.endswith("DType")]
    return allowed


def _torch_load(location: str) -> Any:
    """``torch.load(..., map_location="cpu", weights_only=True)``; refusals become clear errors."""
    try:
        import torch
    except ImportError as error:
        raise ImportError(f"reading {location} needs torch: {INSTALL_HINT}") from error

    # A file that cannot be opened is an OSError, as for every reader; once open, whatever
    # torch.load raises is about the content (torch's errors on a corrupt file are of many
    # types: RuntimeError, KeyError, UnicodeDecodeError, ...) and becomes a format error.
    with contextlib.ExitStack() as stack:
        path = location.removeprefix("file://")
        if _is_url(location):
            opened = stack.enter_context(_open(location))
            _refuse_before_torch(opened, location)
            opened.seek(0)
            handle: IO[bytes] | None = opened
        else:
            with open_regular(path) as file:  # a FIFO or a device is refused, not waited on
                _refuse_before_torch(file, location)
            handle = None
        with torch.serialization.safe_globals(_plain_values()):
            try:
                if handle is not None:
                    return torch.load(handle, map_location="cpu", weights_only=True)
                try:  # mmap: the tensors are not read, only the counters we look at
                    return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
                except RuntimeError as error:
                    if "mmap" not in str(error):
                        raise
                    return torch.load(path, map_location="cpu", weights_only=True)
            except pickle.UnpicklingError as error:
                raise CheckpointFormatError(
                    "",
                    f"{location}: torch.load(weights_only=True) refused this checkpoint "
                    f"({_first_line(error)}). durations never unpickles arbitrary objects; if "
                    "you trust the file, load it yourself and pass the counters to "
                    "durations.Checkpoint, or re-save it without the custom objects",
                ) from None
            except Exception as error:
                raise CheckpointFormatError(
                    "",
                    f"{location}: torch.load cannot read this file ({type(error).__name__}: "
                    f"{_first_line(error)}); expected a checkpoint written by torch.save",
                ) from None


#: The longest name of a global a pickle may refer to: torch's own are under 100 characters.
MAX_GLOBAL_CHARS = 1_000

#: The pickles a file of torch's legacy format begins with (magic number, protocol, system
#: information, the object, its storage keys); the storages' raw bytes follow.
LEGACY_PICKLES = 5


class _Item(enum.Enum):
    """What the scan of a pickle knows of an item of the unpickler's stack."""

    GLOBAL = "a global"  # pushed by GLOBAL (or fetched back from the memo): callable by torch
    VALUE = "a value"  # anything else the data built


def _refuse_before_torch(file: IO[bytes], location: str) -> None:
    """Refuse the pickles whose refusal by ``torch.load(weights_only=True)`` would not be
    bounded in time, reading their opcodes without running any.

    torch searches its own refusal message with ``(\\S+) must be (\\S+) to load``, which takes
    time to the square of the longest run without a space in it (a 30 KB run: a minute). The
    message holds data from the file in two cases: the name of a global (refused here over
    :data:`MAX_GLOBAL_CHARS`), and the text of a value the pickle calls (``REDUCE``) or
    instantiates (``NEWOBJ``), which torch refuses whatever it is unless it is a global: such a
    call is refused here first. So only pickles torch refuses are refused. The pickle is
    ``data.pkl`` of a torch zip file, or else the pickles that begin a file of torch's legacy
    format. A zip whose pickle Python cannot read is refused: torch's own zip reader is more
    lenient (it read a file whose member header Python refused, then spent minutes on the
    message about its 150,000-character global), and ``torch.save`` writes zips Python reads.
    A legacy file whose opcodes stop making sense is left to ``torch.load`` to refuse at the
    same place."""
    pickled: IO[bytes] = file
    try:
        zipped = zipfile.is_zipfile(file)
    except Exception as error:  # it finds a zip's directory it cannot follow (many disks)
        raise CheckpointFormatError(
            "",
            f"{location}: a zip that cannot be read ({type(error).__name__}: "
            f"{_first_line(error)}); expected a checkpoint written by torch.save",
        ) from None
    if zipped:
        try:
            archive = zipfile.ZipFile(file)
            _refuse_inflating(archive, location)
            name = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
            if name is None:
                raise CheckpointFormatError(
                    "",
                    f"{location}: a zip without a pickle (data.pkl); expected a checkpoint "
                    "written by torch.save",
                )
            pickled = io.BytesIO(archive.read(name))
        except CheckpointFormatError:
            raise
        except Exception as error:
            raise CheckpointFormatError(
                "",
                f"{location}: a zip whose pickle (data.pkl) cannot be read "
                f"({type(error).__name__}: {_first_line(error)}); expected a checkpoint "
                "written by torch.save",
            ) from None
    try:
        pickled.seek(0)
        for _ in range(LEGACY_PICKLES):
            _scan_pickle(pickled, location)
    except CheckpointFormatError:
        raise
    except Exception:  # not a pickle (any more): torch.load says what is wrong, if anything
        return


def _refuse_inflating(archive: zipfile.ZipFile, location: str) -> None:
    """Refuse a torch zip file that would grow in memory past what its bytes on disk hold:
    ``torch.save`` stores every member uncompressed (so that tensors can be mapped from the
    file), and its pickle holds only structure, never tensor data. A compressed member (a zip
    bomb: a megabyte inflating to gigabytes) or a pickle past :data:`MAX_FILE_BYTES` is refused
    before anything is inflated."""
    for info in archive.infolist():
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointFormatError(
                "",
                f"{location}: member {shown_value(info.filename)} is compressed "
                f"({info.compress_size:,} bytes inflating to {info.file_size:,}); torch.save "
                "writes every member uncompressed, so this is not a file it wrote",
            )
        if info.compress_size != info.file_size:  # a stored member holds its size as it is
            raise CheckpointFormatError(
                "",
                f"{location}: member {shown_value(info.filename)} is stored with "
                f"{info.compress_size:,} bytes for a content of {info.file_size:,}; expected a "
                "checkpoint written by torch.save",
            )
        if info.filename.endswith("data.pkl") and info.file_size > MAX_FILE_BYTES:
            raise CheckpointFormatError(
                "",
                f"{location}: its pickle is {info.file_size:,} bytes, past the "
                f"{MAX_FILE_BYTES:,} (64 MiB) durations reads; a checkpoint's pickle holds "
                "its structure and counters, its tensors are stored beside it",
            )


def _opcodes(pickled: IO[bytes], location: str) -> Iterator[tuple[Any, Any, int | None]]:
    """``pickletools.genops`` of ``pickled``, which stops where the pickle stops making sense.

    One place where it stops and torch's unpickler goes on: a ``GLOBAL`` (or ``INST``) whose
    name no newline ends. torch reads the name to the end of the data, so a pickle ending in a
    long unterminated name reaches torch's quadratic message; such a name past
    :data:`MAX_GLOBAL_CHARS` is refused here."""
    operations = pickletools.genops(pickled)
    while True:
        offset = pickled.tell()
        try:
            found = next(operations)
        except StopIteration:
            return
        except ValueError:
            pickled.seek(offset)
            code = pickled.read(1)
            rest = len(pickled.read(MAX_GLOBAL_CHARS + 1)) if code in (b"c", b"i") else 0
            if rest > MAX_GLOBAL_CHARS:
                raise CheckpointFormatError(
                    "",
                    f"{location}: the pickle refers to a global named by more than "
                    f"{MAX_GLOBAL_CHARS:,} characters that no newline ends; durations never "
                    "unpickles arbitrary objects, and no checkpoint needs one",
                ) from None
            raise
        yield found


def _scan_pickle(pickled: IO[bytes], location: str) -> None:
    """Follow one pickle's stack as far as :func:`_refuse_before_torch` needs: which items
    are globals. A mark starts a new stack, as in torch's unpickler."""
    stack: list[_Item] = []
    below: list[list[_Item]] = []  # the stacks under the marks
    memo: dict[Any, _Item] = {}
    for opcode, argument, position in _opcodes(pickled, location):
        name = opcode.name
        if name in ("GLOBAL", "INST"):
            if len(str(argument)) > MAX_GLOBAL_CHARS:
                raise CheckpointFormatError(
                    "",
                    f"{location}: the pickle refers to a global named by "
                    f"{len(str(argument)):,} characters; durations never unpickles arbitrary "
                    "objects, and no checkpoint needs one",
                )
            stack.append(_Item.GLOBAL)
        elif name == "STACK_GLOBAL":  # module, name -> a global (torch refuses the opcode)
            stack[-2:] = [_Item.GLOBAL]
        elif name in ("REDUCE", "NEWOBJ"):
            # REDUCE: callable, arguments -> result; NEWOBJ: class, arguments -> instance
            if stack[-2] is _Item.VALUE:
                raise CheckpointFormatError(
                    "",
                    f"{location}: the pickle calls a value that is not a global ({name} at "
                    f"byte {position:,}); torch.load(weights_only=True) refuses such a call, "
                    "and durations refuses it first because torch's message about it can "
                    "take minutes",
                )
            stack[-2:] = [_Item.VALUE]
        elif name == "BUILD":  # instance, state -> the same instance
            stack.pop()
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[argument] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo.get(argument, _Item.VALUE))
        elif name == "STOP":
            return
        elif name == "MARK":
            below.append(stack)
            stack = []
        else:
            before = opcode.stack_before
            if pickletools.markobject in before:  # the items since the mark, and some under it
                stack = below.pop()
                under = before.index(pickletools.markobject)
                if under:
                    del stack[-under:]
            elif before:
                del stack[-len(before) :]
            stack += [_Item.VALUE] * len(opcode.stack_after)


def _first_line(error: BaseException) -> str:
    """The first line of an error from torch, bounded (some run to a paragraph)."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else repr(error)
    return first if len(first) <= 160 else first[:160] + "..."


# -- Lightning -------------------------------------------------------------------------------------


def _whole(data: Mapping[str, Any], key: str, location: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CheckpointFormatError(
            key, f"{location}: expected a whole number >= 0, got {shown_value(value)}"
        )
    return value


def _ledger_checkpoint(data: Any, location: str) -> Checkpoint | None:
    if not isinstance(data, Mapping) or DURATIONS_KEY not in data:
        return None
    stored = data[DURATIONS_KEY]
    try:
        return Checkpoint.from_dict(stored)
    except CheckpointFormatError as error:
        raise CheckpointFormatError(
            f"{DURATIONS_KEY}.{error.path}" if error.path else DURATIONS_KEY,
            f"{location}: {error.reason}",
        ) from None


def _counters_progress(
    *, epoch: int, batch: int, batch_in_epoch: int, loader: Loader | None
) -> Progress:
    """A Progress from a trainer's step counters; samples come from ``loader`` when given,
    else they are the lower bound one sample per step (the file records no sample counts)."""
    batch_in_epoch = min(batch_in_epoch, batch)
    if loader is None:
        return Progress(
            epoch=epoch,
            batch=batch,
            sample=batch,
            batch_in_epoch=batch_in_epoch,
            sample_in_epoch=batch_in_epoch,
            token=None,
            token_in_epoch=None,
        )
    in_epoch = batch_in_epoch * loader.batch_size
    if loader.samples is not None:
        in_epoch = min(in_epoch, loader.samples)
    return Progress(
        epoch=epoch,
        batch=batch,
        sample=max(batch * loader.batch_size, in_epoch),
        batch_in_epoch=batch_in_epoch,
        sample_in_epoch=in_epoch,
        token=None,
        token_in_epoch=None,
    )


def read_lightning_checkpoint(
    path: str | os.PathLike[str], *, loader: Loader | None = None
) -> Checkpoint:
    """Read a PyTorch Lightning ``.ckpt`` file (a local path or an fsspec URL).

    With the ledger the Lightning integration stored, the result is that checkpoint exactly.
    Otherwise ``ledger=None``, ``loader_state`` says whether a stateful loader's state was saved,
    and the progress comes from ``global_step``, ``epoch`` and the fit loop's batch progress;
    sample counts are computed with ``loader`` when given, else they are the lower bound of one
    sample per step. Raises :class:`~durations.CheckpointFormatError` for a file that is not a
    Lightning checkpoint and ``OSError`` when it cannot be read.
    """
    location = os.fspath(path)
    data = _torch_load(location)
    if not isinstance(data, Mapping) or "global_step" not in data:
        raise CheckpointFormatError(
            "global_step",
            f"{location} is not a Lightning checkpoint: expected a dict with 'global_step' and "
            "'epoch' (what Trainer.save_checkpoint writes)",
        )
    stored = _ledger_checkpoint(data, location)
    if stored is not None:
        return stored
    step = _whole(data, "global_step", location)
    epoch = _whole(data, "epoch", location, default=0)
    fit_loop = (
        data.get("loops", {}).get("fit_loop", {}) if isinstance(data.get("loops"), Mapping) else {}
    )
    progress = (
        fit_loop.get("epoch_loop.batch_progress", {}) if isinstance(fit_loop, Mapping) else {}
    )
    current = progress.get("current", {}) if isinstance(progress, Mapping) else {}
    in_epoch = current.get("processed", 0) if isinstance(current, Mapping) else 0
    if isinstance(in_epoch, bool) or not isinstance(in_epoch, int) or in_epoch < 0:
        in_epoch = 0
    loaders = (
        fit_loop.get("state_dict", {}).get("combined_loader")
        if isinstance(fit_loop.get("state_dict"), Mapping)
        else None
    )
    return Checkpoint(
        progress=_counters_progress(
            epoch=epoch, batch=step, batch_in_epoch=in_epoch, loader=loader
        ),
        ledger=None,
        loader_state=bool(loaders),
    )


# -- Composer --------------------------------------------------------------------------------------


def read_composer_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a Composer checkpoint (``state.timestamp``), a local path or an fsspec URL.

    Composer records every counter durations needs (epoch, batch, sample, token, and their
    in-epoch positions), so the progress is exact; ``ledger`` is ``None`` unless a ``durations``
    key was stored (by the Composer integration, in its callback's state
    ``state.callbacks.DurationsCallback``; or at the top level or in ``state``). Besides tensors,
    Composer pickles timedeltas, its torch version string and numpy arrays, which are allowed;
    when ``weights_only`` refuses any other object, the error says so.
    """
    location = os.fspath(path)
    data = _torch_load(location)
    state = data.get("state") if isinstance(data, Mapping) else None
    stamp = state.get("timestamp") if isinstance(state, Mapping) else None
    if isinstance(stamp, Mapping) and isinstance(stamp.get("Timestamp"), Mapping):
        stamp = stamp["Timestamp"]  # State.state_dict keys the timestamp by its class name
    if not isinstance(stamp, Mapping):
        raise CheckpointFormatError(
            "state.timestamp",
            f"{location} is not a Composer checkpoint: expected state.timestamp with the "
            "epoch/batch/sample/token counters",
        )
    callbacks = state.get("callbacks") if isinstance(state, Mapping) else None
    ours = callbacks.get(COMPOSER_CALLBACK) if isinstance(callbacks, Mapping) else None
    stored = (
        _ledger_checkpoint(ours, location)
        or _ledger_checkpoint(data, location)
        or _ledger_checkpoint(state, location)
    )
    if stored is not None:
        return stored
    values = {
        key: _whole(stamp, key, location)
        for key in ("epoch", "batch", "sample", "batch_in_epoch", "sample_in_epoch")
    }
    token, token_in_epoch = stamp.get("token"), stamp.get("token_in_epoch")
    try:
        progress = Progress(token=token, token_in_epoch=token_in_epoch, **values)
    except Exception as error:  # a ProgressError names the field
        raise CheckpointFormatError("state.timestamp", f"{location}: {error}") from None
    return Checkpoint(progress=progress, ledger=None, loader_state=True)


# -- Hugging Face ----------------------------------------------------------------------------------


def _read_json(location: str) -> Any:
    """The JSON at ``location``, read within the bounds of :mod:`durations._files` (a regular
    file of at most 64 MiB); what is not JSON Python reads is a format error."""
    if not _is_url(location):
        return checkpoint_json(read_bytes(location.removeprefix("file://")), location)
    with _open(location) as handle:
        return checkpoint_json(bounded_read(handle, location), location)


def read_transformers_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a Hugging Face ``checkpoint-N`` directory (a local path or an fsspec URL).

    The ledger file ``durations.json`` that the Hugging Face integration writes is read exactly.
    Without it, ``trainer_state.json`` gives ``global_step`` and the epoch (a float) with
    ``ledger=None`` and no loader state; sample counts are the lower bound of one per step.
    """
    location = os.fspath(path)
    ledger_path = _join(location, LEDGER_FILE)
    if _exists(ledger_path):
        return ledger_checkpoint(_read_json(ledger_path), ledger_path)
    state_path = _join(location, "trainer_state.json")
    if not _exists(state_path):
        raise CheckpointFormatError(
            "",
            f"{location} has neither {LEDGER_FILE} nor trainer_state.json; expected a Hugging "
            "Face checkpoint-N directory",
        )
    state = _read_json(state_path)
    if not isinstance(state, Mapping):
        raise CheckpointFormatError("", f"{state_path}: expected a JSON object")
    step = _whole(state, "global_step", state_path)
    epoch = state.get("epoch") or 0
    if (
        not isinstance(epoch, int | float)
        or isinstance(epoch, bool)
        or (isinstance(epoch, float) and not math.isfinite(epoch))
        or epoch < 0
    ):
        raise CheckpointFormatError(
            "epoch", f"{state_path}: expected a finite number >= 0, got {shown_value(epoch)}"
        )
    return Checkpoint(
        progress=_counters_progress(epoch=int(epoch), batch=step, batch_in_epoch=0, loader=None),
        ledger=None,
        loader_state=False,
    )


# -- choosing the newest ---------------------------------------------------------------------------


@attrs.frozen
class CheckpointReader:
    """How :func:`latest_checkpoint` recognises and reads one kind of checkpoint.

    ``matches(path, is_dir)`` says whether an entry of the location is a candidate (by its
    kind, never to order them); ``read(location)`` reads it.
    """

    kind: str
    matches: Callable[[str, bool], bool]
    read: Callable[[str], Checkpoint]


def _lightning_match(path: str, is_dir: bool) -> bool:
    return not is_dir and path.endswith(".ckpt")


def _composer_match(path: str, is_dir: bool) -> bool:
    return not is_dir and path.endswith((".pt", ".pt.tar"))


def _transformers_match(path: str, is_dir: bool) -> bool:
    return is_dir and posixpath.basename(path.rstrip("/")).startswith("checkpoint-")


#: Lightning ``.ckpt`` files.
LIGHTNING = CheckpointReader("lightning", _lightning_match, read_lightning_checkpoint)
#: Composer ``.pt`` / ``.pt.tar`` files.
COMPOSER = CheckpointReader("composer", _composer_match, read_composer_checkpoint)
#: Hugging Face ``checkpoint-N`` directories.
TRANSFORMERS = CheckpointReader("transformers", _transformers_match, read_transformers_checkpoint)


@attrs.frozen
class FoundCheckpoint:
    """A checkpoint :func:`latest_checkpoint` chose: where it is (a path, or a full URL with
    its protocol, ready for ``ckpt_path=``) and what it records."""

    path: str
    checkpoint: Checkpoint


def _rank(found: FoundCheckpoint) -> tuple[int, int, int, str]:
    """Order by lifetime step; among equals, the one whose ledger records more finished calls
    (a call's final checkpoint), then more started calls; the path only breaks exact ties."""
    ledger = found.checkpoint.ledger or ()
    return (
        found.checkpoint.progress.batch,
        sum(entry.finished for entry in ledger),
        len(ledger),
        found.path,
    )


def _as_location(location: str, root: str, path: str) -> str:
    """``path`` (as the filesystem lists it) spelled like ``location``: fsspec lists paths
    without their protocol (``bucket/run/x.ckpt``), which Lightning would then look for on the
    local disk (``docs/integrations.md``); the result keeps the user's ``gs://...`` prefix."""
    if not _is_url(location):
        return path
    relative = posixpath.relpath(path, root.rstrip("/") or "/")
    return posixpath.join(location.rstrip("/"), relative)


def list_checkpoints(
    location: str | os.PathLike[str], *, reader: CheckpointReader = LIGHTNING
) -> list[FoundCheckpoint]:
    """Every checkpoint under ``location`` (searched recursively), ordered by the progress each
    records: oldest first, the one :func:`latest_checkpoint` picks last.

    ``location`` is a local folder or an fsspec URL; candidates are the entries ``reader``
    recognises, each read once. The order is the lifetime step, then (among checkpoints at the
    same step) the one whose ledger records more finished calls, then more started calls; the
    path only breaks exact ties, never a name or modification time. Returns ``[]`` when
    ``location`` does not exist or holds no candidate. A candidate that cannot be read (say, cut
    short by the crash) is skipped with a ``RuntimeWarning``; if every candidate fails, the first
    error is raised. A candidate without a ledger beside others that have one is a save cut
    short before the integration wrote its ledger: left out, with a ``RuntimeWarning``.
    """
    return _listed(os.fspath(location), reader, stacklevel=3)


def _listed(text: str, reader: CheckpointReader, *, stacklevel: int) -> list[FoundCheckpoint]:
    """:func:`list_checkpoints`; ``stacklevel`` makes its warnings name the public caller."""
    fs, root = _filesystem(text)
    entries: list[tuple[str, bool]] = []
    if fs is None:
        if not os.path.isdir(root):
            return []
        for directory, dirs, files in os.walk(root):
            entries += [(os.path.join(directory, d), True) for d in dirs]
            entries += [(os.path.join(directory, f), False) for f in files]
    else:
        if not fs.exists(root) or not fs.isdir(root):
            return []
        for path, info in fs.find(root, withdirs=True, detail=True).items():
            if path.rstrip("/") != root.rstrip("/"):
                entries.append((path, info.get("type") == "directory"))
    candidates = sorted(
        _as_location(text, root, path) for path, is_dir in entries if reader.matches(path, is_dir)
    )
    found: list[FoundCheckpoint] = []
    errors: list[Exception] = []
    for candidate in candidates:
        try:
            found.append(FoundCheckpoint(candidate, reader.read(candidate)))
        except (CheckpointFormatError, OSError, EOFError, RuntimeError) as error:
            errors.append(error)
            warnings.warn(
                f"skipping {candidate}: it cannot be read as a {reader.kind} checkpoint ({error})",
                RuntimeWarning,
                stacklevel=stacklevel,
            )
    if not found and errors:
        raise errors[0]
    return sorted(_finished_saves(found, text, stacklevel=stacklevel), key=_rank)


def _finished_saves(
    found: list[FoundCheckpoint], location: str, *, stacklevel: int
) -> list[FoundCheckpoint]:
    """The checkpoints of ``found`` a run may resume from: where any carries a ledger, only
    those that do.

    An integration writes its ledger into every checkpoint it saves, last (Hugging Face's
    ``durations.json`` follows the framework's own files): in a folder the integration writes
    to, a checkpoint without one is a save the kill cut short, whose step counter would outrank
    the last finished save. Only a location with no ledger at all (a run started without the
    integration) is taken up by its step counters (semantics.md rule 10). Each candidate set
    aside is named in a ``RuntimeWarning``.
    """
    if all(candidate.checkpoint.ledger is None for candidate in found):
        return found
    for candidate in found:
        if candidate.checkpoint.ledger is None:
            warnings.warn(
                f"skipping {candidate.path}: it has no ledger while other checkpoints under "
                f"{location} do, so its save was cut short (the integration writes the ledger "
                "last); the newest checkpoint that has one is taken",
                RuntimeWarning,
                stacklevel=stacklevel + 1,
            )
    return [candidate for candidate in found if candidate.checkpoint.ledger is not None]


def latest_checkpoint(
    location: str | os.PathLike[str], *, reader: CheckpointReader = LIGHTNING
) -> FoundCheckpoint | None:
    """The checkpoint under ``location`` (searched recursively) that records the most progress.

    ``location`` is a local folder or an fsspec URL. Candidates are the entries ``reader``
    recognises (``LIGHTNING``: ``.ckpt`` files; ``COMPOSER``; ``TRANSFORMERS``: ``checkpoint-N``
    directories); each is read and the one with the highest lifetime step wins, whatever its
    name or modification time. Returns ``None`` when ``location`` does not exist or holds no
    candidate. A candidate that cannot be read (say, cut short by the crash) is skipped with a
    ``RuntimeWarning``; if every candidate fails, the first error is raised. A candidate
    without a ledger beside others that have one is a save cut short before the integration
    wrote its ledger: left out, with a ``RuntimeWarning``. The last of :func:`list_checkpoints`.
    """
    found = _listed(os.fspath(location), reader, stacklevel=3)
    return found[-1] if found else None
