"""The one way the arena builds the bot processes of a run (`arena ladder run`, `sprt`, `tournament`, the
check of a bot at registration, through the command line or the site, and a Ray worker): with the host's
sandbox limits, and only once it is sure the sandbox shows no bot one of the host's files it must hide
(the ladder's file, its logs folder, the uploaded bundles: host.py checks it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from arena.ladder.bots.commands import BundleSource, Launch
from arena.ladder.bots.host import BotHost
from arena.ladder.bots.pool import IDLE_LIMIT, LocalBots
from arena.ladder.bots.processes import LOG_LIMIT_BYTES
from arena.ladder.store import BotEntry


def local_bots(
    log_folder: Path,
    host: BotHost,
    launch_of: Callable[[BotEntry], Launch],
    *,
    idle_limit: int = IDLE_LIMIT,
    port_range: tuple[int, int] | None = None,
    startup_timeout: float = 30.0,
    grace: float = 5.0,
    log_limit_bytes: int = LOG_LIMIT_BYTES,
    run: str | None = None,
    bundles: BundleSource | None = None,
) -> LocalBots:
    """The processes of a run's command bots (pool.py), their files in `log_folder`, each bot started as
    `launch_of` says (an uploaded one from its bundle, fetched by `bundles` when missing), sandboxed ones
    as `host` says.

    :raises ExposedFilesError: the sandbox would show bots one of `host.hidden`.
    """
    host.check()
    return LocalBots(
        log_folder,
        startup_timeout=startup_timeout,
        grace=grace,
        log_limit_bytes=log_limit_bytes,
        idle_limit=idle_limit,
        port_range=port_range,
        sandbox=host.sandbox,
        launch_of=launch_of,
        run=run,
        hidden=host.hidden,
        bundles=bundles,
    )
