"""The bot processes the arena starts itself: a bot's command, its port and its first handshake
(`commands`); starting and stopping one process under its supervisor, sandboxed through arena/sandbox when
a launch says so (`processes`); the pool of processes a run keeps (`pool`), built for every run by one
factory with the host's sandbox and its files hidden from bots (`factory`); the supervisor itself
(`supervisor.py`, standard library only, run by path, never imported by the arena). It imports nothing of
the run (tests/test_layering.py)."""

from __future__ import annotations

from arena.ladder.bots.commands import BotStartError, Launch, command_arguments, free_port, wait_until_ready
from arena.ladder.bots.factory import BotHost, ExposedFilesError, local_bots
from arena.ladder.bots.pool import IDLE_LIMIT, LocalBots, idle_limit_for, new_run_name

__all__ = [
    "IDLE_LIMIT",
    "BotHost",
    "BotStartError",
    "ExposedFilesError",
    "Launch",
    "LocalBots",
    "command_arguments",
    "free_port",
    "idle_limit_for",
    "local_bots",
    "new_run_name",
    "wait_until_ready",
]
