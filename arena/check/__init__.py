"""`arena check-bot`: the compliance check a bot author runs against their own bot, in its parts: the
report, the scripted situations, the checker's own opponent, and the checker. Its command line is
`arena.cli.check_bot`."""

from arena.check.checker import BotUnreachableError, check_bot
from arena.check.conversation import explain_answer
from arena.check.report import NOTE, CheckItem, CheckReport, Status
from arena.check.situations import ITEM_NAMES, SITUATIONS, Script, Situation, build_situation

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
