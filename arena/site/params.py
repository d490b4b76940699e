"""What a request to the site may ask: its query parameters, path segments, headers and small bodies,
each checked in one place. A value that is malformed (too long, not printable, a number that is not one,
given twice) is a 400 that says what was expected, never a 500 and never a guess: entrants read this code
and send what it does not expect. An empty query parameter is the same as none (a form's empty field)."""

from __future__ import annotations

import re
from typing import Final

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request

from arena.site.data import MAX_PAGE, SiteError

MAX_NAME: Final = 200
"""The longest name a request may give (a bot's, a pool's)."""
MATCH_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A match id as the arena makes them (hex digits; older ladders `set12-rot0-1a2b3c`)."""
MAX_SEQ: Final = 999_999_999
"""The highest event number `after` may name (a match has some thousands)."""


def single(query: QueryParams, key: str) -> str | None:
    """The query parameter `key` as given, None when absent or empty; a 400 when it is given twice (which
    one was meant?)."""
    values = query.getlist(key)
    if len(values) > 1:
        raise SiteError(400, f"{key!r} is given {len(values)} times; give it once")
    return values[0] if values and values[0] != "" else None


def text(query: QueryParams, key: str, limit: int = MAX_NAME) -> str | None:
    """A query parameter that is a name: printable, at most `limit` characters."""
    value = single(query, key)
    if value is not None and (len(value) > limit or not value.isprintable()):
        raise SiteError(400, f"{key!r} must be printable text of at most {limit} characters")
    return value


def page(query: QueryParams) -> int:
    """`page`: from 1 (the default) to MAX_PAGE."""
    value = single(query, "page")
    if value is None:
        return 1
    if not _digits(value, 6) or not 1 <= int(value) <= MAX_PAGE:
        raise SiteError(400, f"'page' must be a whole number from 1 to {MAX_PAGE:,}")
    return int(value)


def after(query: QueryParams, headers: Headers) -> int:
    """Where a live stream starts: after the event numbered `Last-Event-ID` (a reconnecting browser's),
    else `?after=`, else -1 (from the first)."""
    header = headers.get("last-event-id", "").strip(" \t")  # a header's own spaces are not its value
    given = [single(query, "after"), header or None]
    numbers = [_event_number(value) for value in given if value is not None]
    return numbers[-1] if numbers else -1


def _event_number(value: str) -> int:
    if value == "-1":
        return -1
    if not _digits(value, len(str(MAX_SEQ))):
        raise SiteError(400, f"'after' (or Last-Event-ID) must be a whole number from -1 to {MAX_SEQ:,}")
    return int(value)


def bot_name(value: str) -> str:
    """A bot's name from a path."""
    if len(value) > MAX_NAME or not value.isprintable():
        raise SiteError(400, f"a bot's name is printable text of at most {MAX_NAME} characters")
    return value


def match_id(value: str) -> str:
    """A match id from a path."""
    if not MATCH_ID.fullmatch(value):
        raise SiteError(400, "a match id is 1 to 64 letters, digits, '-' or '_'")
    return value


def content_length(headers: Headers, limit: int, what: str) -> int | None:
    """The body's declared size, None when not declared; a 400 when it is not a number, a 413 when it is
    over `limit` bytes (`what` names the body in the message)."""
    value = headers.get("content-length")
    if value is None:
        return None
    if not _digits(value, 20):
        raise SiteError(400, "Content-Length must be a whole number of bytes")
    if int(value) > limit:
        raise SiteError(413, f"{what} is over {limit:,} bytes")
    return int(value)


def _digits(value: str, most: int) -> bool:
    """ASCII digits only (not `٣`, `1e3`, `-5`, `+5`), at most `most` of them (int() is never given
    thousands)."""
    return 0 < len(value) <= most and value.isascii() and value.isdecimal()


async def small_body(request: Request, limit: int, what: str) -> bytes:
    """A request's whole body when it is at most `limit` bytes (a JSON document, a form), or a 413 (`what`
    names it in the message)."""
    content_length(request.headers, limit, what)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise SiteError(413, f"{what} is over {limit:,} bytes")
    return body
