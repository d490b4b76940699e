"""The bot processes the arena starts itself: a bot's command, its port and its first handshake
(`commands`); the pool of processes a run keeps, sandboxed through arena/sandbox when a launch says so
(`pool`); each process under a supervisor (`supervisor.py`, standard library only, run by path, never
imported by the arena). It imports nothing of the run (tests/test_layering.py).

The pool's names are loaded when first used (PEP 562), so that what needs only a command's launch (the
site's management, which starts a bot only to check an upload) does not load the pool on import."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

from arena.ladder.bots.commands import BotStartError, Launch, command_arguments, free_port, wait_until_ready

if TYPE_CHECKING:
    from arena.ladder.bots.pool import IDLE_LIMIT, LocalBots, idle_limit_for, new_run_name

_IN_POOL: Final = frozenset({"IDLE_LIMIT", "LocalBots", "idle_limit_for", "new_run_name"})

__all__ = [
    "IDLE_LIMIT",
    "BotStartError",
    "Launch",
    "LocalBots",
    "command_arguments",
    "free_port",
    "idle_limit_for",
    "new_run_name",
    "wait_until_ready",
]


def __getattr__(name: str) -> object:
    if name not in _IN_POOL:
        raise AttributeError(f"module 'arena.ladder.bots' has no attribute {name!r}")
    return getattr(importlib.import_module("arena.ladder.bots.pool"), name)
