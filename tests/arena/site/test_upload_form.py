"""The upload form read as it streams: its fields, then its file's bytes exactly, however the body is cut
into chunks (a delimiter split across two of them included), whatever the file holds (hypothesis); any
other shape of form is a 400, whatever bytes are put in it or taken out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from arena.site.data import SiteError
from arena.site.upload_form import UploadForm

BOUNDARY = "----arenaFormBoundary7MA4YWxkTrZu0gW"
FILE = b"\x1f\x8b" + bytes(range(256)) * 3 + b"\r\n--" + BOUNDARY[:-1].encode() + b"\r\n-- not the end"
"""A file whose bytes hold all but the last character of the delimiter, a line break and dashes."""


def body(parts: list[tuple[str, bytes, str | None]], end: bytes = b"--\r\n") -> bytes:
    """A multipart body of (name, value, file name) parts, as a browser sends it."""
    out = b""
    for name, value, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        kind = "\r\nContent-Type: application/gzip" if filename else ""
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}{kind}\r\n\r\n".encode() + value + b"\r\n"
    return out + f"--{BOUNDARY}".encode() + end


def request(data: bytes, chunk: int, content_type: str | None = None) -> Request:
    pieces = [data[start : start + chunk] for start in range(0, len(data), chunk)]
    messages = [{"type": "http.request", "body": piece, "more_body": True} for piece in pieces]
    messages.append({"type": "http.request", "body": b"", "more_body": False})

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    headers = [
        (b"content-type", (content_type or f"multipart/form-data; boundary={BOUNDARY}").encode()),
        (b"content-length", str(len(data)).encode()),
    ]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive)


def read(
    data: bytes, chunk: int, content_type: str | None = None
) -> tuple[dict[str, str], bytes, int | None]:
    async def run() -> tuple[dict[str, str], bytes, int | None]:
        form = UploadForm(request(data, chunk, content_type))
        fields = await form.fields("csrf", "run")
        bundle = await form.bundle("bundle")
        return fields, b"".join([piece async for piece in bundle.chunks]), bundle.declared

    return asyncio.run(run())


GOOD = body(
    [("csrf", b"abc123", None), ("run", "python bot.py \u00e9".encode(), None), ("bundle", FILE, "b.tgz")]
)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 38, 41, 64, 1000, len(GOOD)])
def test_the_fields_and_the_file_come_through_whatever_the_chunks(chunk: int) -> None:
    fields, file, declared = read(GOOD, chunk)
    assert fields == {"csrf": "abc123", "run": "python bot.py \u00e9"}
    assert file == FILE
    assert declared is not None
    assert len(FILE) < declared < len(FILE) + 100  # the rest of the body: the file and the closing line


@pytest.mark.parametrize(
    ("data", "content_type", "says"),
    [
        (GOOD, "application/x-www-form-urlencoded", "multipart/form-data"),
        (GOOD, "multipart/form-data", "multipart/form-data"),
        (
            body([("run", b"x", None), ("csrf", b"y", None), ("bundle", FILE, "b")]),
            None,
            "expected the field",
        ),
        (
            body([("csrf", b"y", None), ("run", b"x", None), ("bundle", FILE, None)]),
            None,
            "expected the file",
        ),
        (body([("csrf", b"y", None), ("run", b"x" * 5000, None), ("bundle", FILE, "b")]), None, "over 4,096"),
        (body([("csrf", b"y", None), ("run", b"\xff", None), ("bundle", FILE, "b")]), None, "not UTF-8"),
        (
            body([("csrf", b"y", None), ("run", b"x", None), ("bundle", FILE, "b"), ("more", b"z", None)]),
            None,
            "its last field",
        ),
        (
            body([("csrf", b"y", None), ("run", b"x", None), ("bundle", FILE, "b")])[:-40],
            None,
            "did not arrive whole",
        ),
        (b"preamble\r\n" + GOOD, None, "malformed"),
        (b"", None, "malformed"),
    ],
    ids=[
        "urlencoded",
        "no boundary",
        "fields reordered",
        "file not a file",
        "field too long",
        "field not text",
        "file not last",
        "cut short",
        "preamble",
        "empty",
    ],
)
def test_any_other_form_is_a_400_that_says_what(data: bytes, content_type: str | None, says: str) -> None:
    with pytest.raises(SiteError) as refused:
        read(data, 7, content_type)
    assert refused.value.status == 400
    assert says in refused.value.message


DELIMITER = b"\r\n--" + BOUNDARY.encode()
ENDINGS = [b"", b"\r", b"\r\n", b"\r\n-", b"\r\n--", DELIMITER[:-1], DELIMITER[:-1] + b"--\r\n"]
"""What a file may end with that looks like the start of the delimiter after it."""


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(ENDINGS), st.text(max_size=40), st.integers(1, 80))
def test_any_file_and_run_command_come_through_whatever_the_chunks(
    start: bytes, ending: bytes, run: str, chunk: int
) -> None:
    file = start + ending
    data = body([("csrf", b"abc", None), ("run", run.encode(), None), ("bundle", file, "b.tgz")])
    if DELIMITER in b"\r\n" + run.encode() + b"\r\n" or DELIMITER in file + DELIMITER[:-1]:
        return  # a value that holds the delimiter ends there: a browser's boundary is in none of its data
    fields, got, _declared = read(data, chunk)
    assert fields == {"csrf": "abc", "run": run}
    assert got == file


def status_of(data: bytes, chunk: int) -> int:
    """200 when the form reads, else the status of its refusal."""
    try:
        read(data, chunk)
    except SiteError as refused:
        return refused.status
    return 200


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, len(GOOD)), st.integers(0, 300), st.integers(1, 80))
def test_any_body_is_read_or_a_400(spliced: bytes, at: int, cut: int, chunk: int) -> None:
    """Bytes put anywhere in a good form, or taken out of it: the form reads, or is a 400, never
    another error."""
    assert status_of(GOOD[:at] + spliced + GOOD[at + cut :], chunk) in (200, 400)
