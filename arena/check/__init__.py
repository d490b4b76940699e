"""`arena check-bot`: the compliance check a bot author runs against their own bot, in its parts: the
report, the scripted situations, the checker's own opponent, and the checker. Its command line is
`arena.cli.check_bot`.

The report's names are loaded with the face; the others when first used (PEP 562), so that what only
reads a kept report (the store) does not load the checker, gRPC and the match runner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from arena.check.report import NOTE, CheckItem, CheckReport, Status
from arena.lazy import lazy_names

if TYPE_CHECKING:
    from arena.check.checker import BotUnreachableError, check_bot
    from arena.check.conversation import explain_answer
    from arena.check.situations import ITEM_NAMES, SITUATIONS, Script, Situation, build_situation

_HOMES: Final = {
    "BotUnreachableError": "checker",
    "check_bot": "checker",
    "explain_answer": "conversation",
    "ITEM_NAMES": "situations",
    "SITUATIONS": "situations",
    "Script": "situations",
    "Situation": "situations",
    "build_situation": "situations",
}

__all__ = [
    "ITEM_NAMES",
    "NOTE",
    "SITUATIONS",
    "BotUnreachableError",
    "CheckItem",
    "CheckReport",
    "Script",
    "Situation",
    "Status",
    "build_situation",
    "check_bot",
    "explain_answer",
]


__getattr__ = lazy_names(__name__, _HOMES)
