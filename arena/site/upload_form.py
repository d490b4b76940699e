"""The site's upload form (`multipart/form-data`) read as it streams: its leading text fields first, then
its file's bytes handed on as they arrive, so that the bundle goes through uploading.py's one path (the
same limits, written to disk as it comes) as the API's raw body does, never held whole nor spooled twice.

The form is read strictly in the order the page sends it (a browser sends a form's fields in the order of
the page): the named text fields, then the file, last. Anything else (another order, a field unnamed or
twice, a part's headers or a field over its bound, a body that ends early) is a 400 that says so: only
this site's own form, or a client that sends the same, gets through."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Final

from starlette.requests import Request

from arena.site import params
from arena.site.data import SiteError
from arena.site.uploading import BUNDLE_BYTES, Body

FIELD_BYTES: Final = 4096
"""The most a text field of the form (its CSRF token, the run command) may hold."""
HEADER_BYTES: Final = 1024
"""The most the headers of one part may take."""
FORM_BYTES: Final = BUNDLE_BYTES + 4 * (FIELD_BYTES + HEADER_BYTES)
"""The largest body the form may send: a bundle at its limit and its few fields."""
_BOUNDARY: Final = re.compile(r'boundary=(?:"([^"]{1,70})"|([^";\s]{1,70}))', re.IGNORECASE)
_NAME: Final = re.compile(r'(?:^|;)\s*name="([^"]*)"', re.IGNORECASE)
_FILENAME: Final = re.compile(r'(?:^|;)\s*filename="([^"]*)"', re.IGNORECASE)
_MALFORMED: Final = "the upload form's body is malformed (send the page's form: its fields, then the bundle)"


class UploadForm:
    """One request's upload form, read once, front to back: `fields(...)`, then `bundle(...)`."""

    def __init__(self, request: Request) -> None:
        content_type = request.headers.get("content-type", "")
        found = _BOUNDARY.search(content_type)
        if not content_type.lower().startswith("multipart/form-data") or found is None:
            raise SiteError(400, "send the upload form as multipart/form-data")
        boundary = (found.group(1) or found.group(2)).encode("latin-1")
        self._declared = params.content_length(request.headers, FORM_BYTES, "the upload")
        self._stream = request.stream().__aiter__()
        self._delimiter = b"\r\n--" + boundary
        # The body opens with the delimiter less its line break: given one, every part starts alike.
        self._buffer = bytearray(b"\r\n")
        self._taken = -2
        """How many of the body's bytes have left the buffer."""
        self._ended = False

    async def fields(self, *names: str) -> dict[str, str]:
        """The form's leading text fields, which must be `names` in that order, each its text."""
        values = {}
        for name in names:
            await self._delimited()
            given, filename = await self._part()
            if given != name or filename is not None:
                raise SiteError(400, f"{_MALFORMED}: expected the field {name!r}")
            value = await self._until(self._delimiter, FIELD_BYTES, f"the field {name!r}")
            try:
                values[name] = value.decode("utf-8")
            except UnicodeDecodeError:
                raise SiteError(400, f"the field {name!r} is not UTF-8 text") from None
        return values

    async def bundle(self, name: str) -> Body:
        """The file of the field `name`, the form's last, as uploading.py takes a body."""
        await self._delimited()
        given, filename = await self._part()
        if given != name or filename is None:
            raise SiteError(400, f"{_MALFORMED}: expected the file {name!r}")
        declared = None if self._declared is None else max(0, self._declared - self._taken)
        return Body(self._file_chunks(), declared)

    async def _file_chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes as they arrive, up to the delimiter that ends it (which may arrive split
        across chunks: the last bytes that could begin it are held back until the next chunk)."""
        keep = len(self._delimiter) - 1
        while True:
            at = self._buffer.find(self._delimiter)
            if at >= 0:
                if at:
                    yield self._take(at)
                self._take(len(self._delimiter))
                break
            if len(self._buffer) > keep:
                yield self._take(len(self._buffer) - keep)
            if not await self._more():
                raise SiteError(400, "the bundle did not arrive whole: the form ended in it")
        if await self._exactly(2) != b"--":
            raise SiteError(400, f"{_MALFORMED}: the bundle must be its last field")

    async def _delimited(self) -> None:
        """Past the delimiter that opens the next part (at the body's start, or after a field's value,
        which `_until` took it with)."""
        if self._taken < 0 and await self._exactly(len(self._delimiter)) != self._delimiter:
            raise SiteError(400, f"{_MALFORMED}: it does not open with its boundary")

    async def _part(self) -> tuple[str, str | None]:
        """A part's name and its file's name (None for a text field), from its headers."""
        if await self._exactly(2) != b"\r\n":
            raise SiteError(400, f"{_MALFORMED}: it ended before its fields")
        headers = (await self._until(b"\r\n\r\n", HEADER_BYTES, "a part's headers")).decode("latin-1")
        disposition = next(
            (
                line.split(":", 1)[1].strip()
                for line in headers.split("\r\n")
                if line.lower().startswith("content-disposition:")
            ),
            "",
        )
        name = _NAME.search(disposition)
        if not disposition.lower().startswith("form-data") or name is None:
            raise SiteError(400, f"{_MALFORMED}: a part has no name")
        filename = _FILENAME.search(disposition)
        return name.group(1), None if filename is None else filename.group(1)

    async def _until(self, marker: bytes, limit: int, what: str) -> bytes:
        """The bytes before `marker` (at most `limit`), and past the marker."""
        while True:
            at = self._buffer.find(marker)
            if at >= 0:
                if at > limit:
                    break
                value = self._take(at)
                self._take(len(marker))
                return value
            if len(self._buffer) > limit + len(marker) or not await self._more():
                break
        raise SiteError(400, f"{what} is over {limit:,} bytes or does not end")

    async def _exactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            if not await self._more():
                raise SiteError(400, f"{_MALFORMED}: it ended early")
        return self._take(count)

    def _take(self, count: int) -> bytes:
        taken = bytes(self._buffer[:count])
        del self._buffer[:count]
        self._taken += count
        return taken

    async def _more(self) -> bool:
        """Read the next chunk of the body into the buffer; False at its end."""
        while not self._ended:
            chunk = await anext(self._stream, None)
            if chunk is None:
                self._ended = True
            elif chunk:
                self._buffer += chunk
                return True
        return False
