"""Text from outside the arena (bots, game records, database files), made safe to keep and to show.

A bot chooses its gRPC status text, its name, its notation; a record file chooses its seat names. Any of
them may hold terminal escapes (ESC, CR, BEL), Unicode direction overrides, or megabytes. `safe_text` is
the one function every such text passes through before it is stored or printed, so nothing from outside
can clear a screen, move the cursor, forge an output line or fill a disk.
"""

from __future__ import annotations

from typing import Final

MAX_TEXT_CHARS: Final = 500
"""Default length kept of one outside text (a fault detail, a reason): enough for any honest message."""


def safe_text(text: object, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` (or `str(text)`) with every character that is not printable escaped as Python's `repr`
    escapes it (`\\x1b`, `\\r`, `\\u202e`), and cut after `limit` characters with a note of how many more
    there were. Printable text within the limit comes back unchanged."""
    if not isinstance(text, str):
        text = str(text)
    if len(text) <= limit and text.isprintable():
        return text
    pieces: list[str] = []
    length = 0
    shown = 0
    for character in text[:limit]:
        piece = character if character.isprintable() else _escape(character)
        if length + len(piece) > limit:
            break
        pieces.append(piece)
        length += len(piece)
        shown += 1
    more = len(text) - shown
    return "".join(pieces) + (f"... [{more} more characters]" if more else "")


def _escape(character: str) -> str:
    code = ord(character)
    if character in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[character]
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe_lines(text: str) -> list[str]:
    """A bot's multi-line output as lines to show: each line `safe_text`-escaped but never cut (the
    output was capped when it was kept)."""
    return [safe_text(line, 10 * len(line) + 1) for line in text.splitlines()]
