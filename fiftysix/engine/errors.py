"""Errors raised by the rules engine. All are `ValueError`s so callers can catch bad input broadly."""

from __future__ import annotations


class NotationError(ValueError):
    """A card or call string that is not in canonical notation (docs/rules.md#notation)."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow now; `rule` names the rule that it breaks.

    The message is meant for a human ("must follow hearts: holds 9H, played JS").
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


class MatchOverError(ValueError):
    """A move applied to a match that has already ended."""


def quoted(text: str, limit: int = 24) -> str:
    """`text` quoted for an error message, cut after `limit` characters: notation comes from bots and
    files, and a message must stay one short line whatever they send."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"
