"""The bot processes the arena starts itself: a bot's command, its port and its first handshake
(`commands`); what the host says of them, its sandbox and the files hidden from bots (`host`); starting
and stopping one process under its supervisor, sandboxed through arena/sandbox when a launch says so
(`processes`); the pool of processes a run keeps (`pool`), built for every run by one factory
(`factory`); the supervisor itself (`supervisor.py`, standard library only, run by path, never imported
by the arena). It imports nothing of the run (tests/test_layering.py).

The pool's and the factory's names are loaded when first used (PEP 562), so that what needs only a
command's launch or the host's settings (the site, which starts a bot only to check an upload) does not
load the pool on import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from arena.ladder.bots.commands import (
    BotStartError,
    BundleSource,
    Launch,
    SandboxUnavailableError,
    command_arguments,
    free_port,
    wait_until_ready,
)
from arena.ladder.bots.host import BotHost, ExposedFilesError
from arena.lazy import lazy_names

if TYPE_CHECKING:
    from arena.ladder.bots.factory import local_bots
    from arena.ladder.bots.pool import IDLE_LIMIT, LocalBots, idle_limit_for, new_run_name

_HOMES: Final = {
    "IDLE_LIMIT": "pool",
    "LocalBots": "pool",
    "idle_limit_for": "pool",
    "new_run_name": "pool",
    "local_bots": "factory",
}

__all__ = [
    "IDLE_LIMIT",
    "BotHost",
    "BotStartError",
    "BundleSource",
    "ExposedFilesError",
    "Launch",
    "LocalBots",
    "SandboxUnavailableError",
    "command_arguments",
    "free_port",
    "idle_limit_for",
    "local_bots",
    "new_run_name",
    "wait_until_ready",
]


__getattr__ = lazy_names(__name__, _HOMES)
