"""How each command bot starts (arena/ladder/uploads.py): the sandbox setting recorded for the command it
was registered with, and only for that one, whoever changes the register afterwards."""

from __future__ import annotations

from pathlib import Path

from arena.ladder.bots import Launch
from arena.ladder.store import LadderStore
from arena.ladder.uploads import Uploads

SOCKET_COMMAND = "python -m sample_bots.random_bot --socket {socket}"
PORT_COMMAND = "python -m sample_bots.random_bot --port {port}"


def test_a_launch_holds_for_the_command_it_was_recorded_with(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = LadderStore(db)
    uploads = Uploads(store)
    try:
        assert store.uploads.sandboxed_bots() == []  # a ladder without the tables yet
        store.registry.add_bot("x", command=SOCKET_COMMAND)
        assert uploads.launch_of(store.registry.bot("x")) == Launch(
            SOCKET_COMMAND
        )  # no row: the host's command
        store.uploads.set_launch("x", SOCKET_COMMAND, True, None)
        assert uploads.launch_of(store.registry.bot("x")) == Launch(SOCKET_COMMAND, sandboxed=True)
        assert store.uploads.sandboxed_bots() == ["x"]
        # Another writer (the site, a script) removes it and registers the name anew: the row is stale.
        store.registry.remove_bot("x")
        assert store.uploads.sandboxed_bots() == []
        store.registry.add_bot("x", command=PORT_COMMAND)
        assert uploads.launch_of(store.registry.bot("x")) == Launch(PORT_COMMAND)
        assert store.uploads.sandboxed_bots() == []
    finally:
        store.close()
