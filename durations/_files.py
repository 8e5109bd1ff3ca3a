"""Reading a file from outside, within bounds: the one layer under every reader.

The command line's reader (:mod:`durations.readers`) and the integrations' readers
(:mod:`durations.integrations.checkpoints`, the Keras folder reader) all read through here, so
each refuses the same things the same way: a FIFO, a device, a socket or a directory before
anything is read from it (a FIFO could wait for a writer forever, ``/dev/zero`` never ends),
a file past :data:`MAX_FILE_BYTES`, text that is not UTF-8, JSON nested too deeply or holding
an integer Python will not read. This module does I/O and imports nothing above the core's
values; the readers import it, never the other way round.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import IO, Any

from .checkpoint import Checkpoint
from .errors import CheckpointFormatError

#: The file in which the integrations write the durations checkpoint (its ledger) beside a
#: trainer's own: in every Hugging Face ``checkpoint-N`` directory and Keras ``step-N`` folder.
LEDGER_FILE = "durations.json"

#: The largest text file read (a scenario, a checkpoint JSON, a ``trainer_state.json``), and the
#: largest pickle inside a torch file: 64 MiB, far past any real one. A larger file is refused
#: before it is decoded.
MAX_FILE_BYTES = 64 * 2**20


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """``path`` opened for reading in binary, once it is known to be a regular file.

    It is opened without waiting (``O_NONBLOCK``: opening a FIFO must not wait for a writer) and
    its kind is read from the open descriptor, so a FIFO, a device, a socket or a directory is
    refused before anything is read, with an ``OSError`` naming the path and its kind.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(
                errno.EINVAL,
                f"{_kind(status.st_mode)}, not a regular file; expected a file",
                os.fspath(path),
            )
        os.set_blocking(descriptor, True)  # a network filesystem may honour the flag on reads
        file = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    return file


def bounded_read(handle: IO[bytes], where: object, *, size: int | None = None) -> bytes:
    """At most :data:`MAX_FILE_BYTES` of ``handle``; more (by ``size``, the file's size when it
    is known, or by what is read) is an ``OSError`` naming ``where``."""
    data = b"" if size is not None and size > MAX_FILE_BYTES else handle.read(MAX_FILE_BYTES + 1)
    if max(size or 0, len(data)) > MAX_FILE_BYTES:
        raise OSError(
            errno.EFBIG,
            f"larger than {MAX_FILE_BYTES:,} bytes (64 MiB), the most durations reads",
            str(where),
        )
    return data


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at ``path``, at most :data:`MAX_FILE_BYTES` of them
    (:func:`open_regular`, :func:`bounded_read`)."""
    with open_regular(path) as file:
        return bounded_read(file, os.fspath(path), size=os.fstat(file.fileno()).st_size)


def read_text(path: str | Path) -> str:
    """The UTF-8 text of the regular file at ``path``, newlines translated as ``open`` does.

    Only a regular file is read, and at most :data:`MAX_FILE_BYTES` of it: a FIFO, a device or
    a socket (which could wait for a writer forever, or never end) is refused before anything
    is read from it, and so is a directory; so is a file that is not UTF-8. Each refusal is an
    ``OSError`` naming the path.
    """
    data = read_bytes(path)
    try:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    except UnicodeDecodeError as error:
        raise OSError(
            errno.EILSEQ,
            f"not UTF-8 text ({error.reason} at byte {error.start}); expected a UTF-8 file",
            str(path),
        ) from None


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


def checkpoint_json(text: str | bytes, where: object) -> Any:
    """Parse the JSON of a checkpoint read from ``where``; whatever the text holds, a failure
    is a :class:`CheckpointFormatError` naming ``where`` (bytes must be UTF-8)."""
    try:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointFormatError("", f"{where} is not JSON: {error}") from None
    except RecursionError:
        raise CheckpointFormatError(
            "", f"{where} nests JSON arrays or objects too deeply to be a checkpoint"
        ) from None
    except ValueError:  # an integer past the digits int() converts
        raise CheckpointFormatError(
            "",
            f"{where} has an integer of more than {sys.get_int_max_str_digits():,} digits, the "
            "most Python reads; no checkpoint has one",
        ) from None


def ledger_checkpoint(data: Any, where: object) -> Checkpoint:
    """The durations checkpoint an integration wrote (its ledger), from its parsed JSON read
    from ``where``; an invalid one is a :class:`CheckpointFormatError` naming ``where``."""
    try:
        return Checkpoint.from_dict(data)
    except CheckpointFormatError as error:
        raise CheckpointFormatError(error.path, f"{where}: {error.reason}") from None
