"""Reading a file that a person names, bounded: one place for every reader of a path given from outside
(a game record for `arena replay`, a bot's bundle for `arena bots add`).

A path may name a FIFO (opening it waits for a writer, reading it for the writer's end), a device
(`/dev/zero` has no end), a folder, or a file too big to hold in memory. So a path is opened without
waiting (O_NONBLOCK), checked on the descriptor opened (`fstat`: what was checked is what is read, even if
the path is swapped meanwhile) to be a regular file of at most the limit, and read for at most the limit
and one byte (a file that grows while it is read is refused too). A stream (standard input, which may be
a pipe or anything) is read the same way: at most the limit and one byte.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Final

CHUNK_BYTES: Final = 1024 * 1024

_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefusedError(ValueError):
    """A file that was not read: missing, unreadable, not a regular file, or over its limit. The message
    says which, without the path (the caller names it as its user gave it)."""


def read_file(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file at `path`, which must hold at most `limit` of them (`what` names
    the kind of file the limit is for, in the message).

    :raises FileRefusedError: the file is missing or unreadable, is not a regular file, or is too big.
    """
    with open_file(path, limit, what) as file:
        return read_stream(file, limit, what)  # read errors are its FileRefusedError


@contextmanager
def open_file(path: str | Path, limit: int, what: str) -> Iterator[BinaryIO]:
    """The regular file at `path`, opened for reading, which held at most `limit` bytes when opened (a
    reader that streams it must still stop at `limit` + 1: it may grow).

    :raises FileRefusedError: the file is missing or unreadable, is not a regular file, or is too big.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise FileRefusedError(f"cannot read: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "a special file")
            raise FileRefusedError(f"not a regular file: {kind}")
        if status.st_size > limit:
            raise FileRefusedError(f"{status.st_size:,} bytes, over the limit of {limit:,} for {what}")
        file = open(descriptor, "rb", closefd=False)  # noqa: SIM115 -- closed below, with the descriptor
    except OSError as error:
        os.close(descriptor)
        raise FileRefusedError(f"cannot read: {error.strerror or error}") from None
    except FileRefusedError:
        os.close(descriptor)
        raise
    try:
        yield file
    finally:
        file.close()
        os.close(descriptor)


def read_stream(stream: BinaryIO, limit: int, what: str) -> bytes:
    """Everything `stream` holds, which must be at most `limit` bytes: at most `limit` + 1 are read, a
    chunk at a time (memory follows what the stream holds, not the limit).

    :raises FileRefusedError: the stream holds more, or cannot be read.
    """
    chunks: list[bytes] = []
    total = 0
    try:
        while total <= limit:
            chunk = stream.read(min(CHUNK_BYTES, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise FileRefusedError(f"cannot read: {error.strerror or error}") from None
    if total > limit:
        raise FileRefusedError(f"more than {limit:,} bytes, over the limit for {what}")
    return b"".join(chunks)
