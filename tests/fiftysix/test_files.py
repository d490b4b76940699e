"""Reading a file a person names: a regular file within its limit, or one clear refusal, never a wait
for a FIFO's writer nor a read without end."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from fiftysix.files import FileRefusedError, read_file, read_stream
from fiftysix.record import RecordError, RecordFileError, load


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    assert read_file(path, 10, "a test file") == b"0123456789"
    with pytest.raises(FileRefusedError, match=r"^10 bytes, over the limit of 9 for a test file$"):
        read_file(path, 9, "a test file")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("fifo", "not a regular file: a FIFO (a named pipe)"),
        ("device", "not a regular file: a character device"),
        ("directory", "not a regular file: a directory"),
        ("missing", "cannot read: No such file or directory"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_unread(kind: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer: it is opened without waiting
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    with pytest.raises(FileRefusedError) as refused:
        read_file(path, 1024, "a test file")
    assert str(refused.value) == message


class Endless(io.RawIOBase):
    """A stream without end (a pipe from /dev/zero), counting what was read of it."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        self.served += len(buffer)
        return len(buffer)


def test_a_stream_is_read_for_at_most_the_limit_and_one_byte() -> None:
    endless = Endless()
    with pytest.raises(
        FileRefusedError, match=r"^more than 3,000,000 bytes, over the limit for a test file$"
    ):
        read_stream(endless, 3_000_000, "a test file")  # type: ignore[arg-type]
    assert endless.served == 3_000_001
    assert read_stream(io.BytesIO(b"x" * 100), 100, "a test file") == b"x" * 100


def test_a_record_file_refused_is_a_record_error_of_its_own(tmp_path: Path) -> None:
    with pytest.raises(RecordFileError, match="not a regular file: a directory"):
        load(tmp_path)
    assert issubclass(RecordFileError, RecordError)  # callers of load catch one family
    path = tmp_path / "latin-1.json"
    path.write_bytes(b"\xe9")
    with pytest.raises(RecordError, match="not UTF-8 text"):
        load(path)
