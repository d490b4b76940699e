"""What the ladder's tests share: a time control and a ladder file with served bots registered (the
`servers` fixture is in conftest.py)."""

from __future__ import annotations

from pathlib import Path

from arena.ladder import LadderStore
from fiftysix.wire import TimeControl
from sdk import BotServer

FAST = TimeControl(decision_ms=500, bank_ms=500)
"""A time control for ladder tests: quick, and far from any timeout of a random bot."""


def registered(path: Path, servers: list[BotServer]) -> LadderStore:
    """A ladder file at `path` with the bots of `servers` registered as bot0, bot1, ..."""
    store = LadderStore(path)
    for index, server in enumerate(servers):
        store.add_bot(f"bot{index}", address=f"127.0.0.1:{server.port}")
    return store
