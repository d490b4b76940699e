"""The bots of a run on a ladder, as every command that plays its sets builds them (`ladder run`, `sprt`,
`tournament`), through the one factory (bots/factory.py): their files in the ladder's logs folder, each
bot started as the register and its uploads say (an upload's bundle fetched from the store when this
machine lacks it), and the sandbox refused if it would show bots the ladder's file, its logs folder or
its bundles (`bot_host`, which registration checks against too)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.ladder import bots
from arena.ladder.bots import BotHost
from arena.ladder.store import LadderStore, bundles_folder
from arena.ladder.uploads import Uploads
from arena.sandbox.bubblewrap import Sandbox

if TYPE_CHECKING:
    from arena.ladder.bots import LocalBots


def logs_folder(store: LadderStore) -> Path:
    """Where the runs on the ladder in `store` keep their bots' logs (`{stem}-logs/`, a folder per run)."""
    return Path(f"{store.files_stem}-logs")


def bot_host(store: LadderStore, sandbox: Sandbox) -> BotHost:
    """The bots the host starts for the ladder in `store`: sandboxed as `sandbox` says, and never shown
    the ladder's file, its logs folder nor its bundles."""
    return BotHost(sandbox, (store.path, logs_folder(store), bundles_folder(store.files_stem)))


def ladder_bots(
    store: LadderStore, sandbox: Sandbox, idle_limit: int, port_range: tuple[int, int] | None = None
) -> LocalBots:
    """The processes of a run's command bots on the ladder in `store`, uploaded ones started from this
    machine's bundles folder, fetched from the store into it when it lacks them.

    :raises ExposedFilesError: the sandbox would show bots one of the ladder's files.
    """
    uploads = Uploads(store)
    return bots.local_bots(
        logs_folder(store),
        bot_host(store, sandbox),
        uploads.launch_of,
        idle_limit=idle_limit,
        port_range=port_range,
        bundles=uploads,
    )
