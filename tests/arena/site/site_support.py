"""What the site's tests share: a ladder file with finished matches (some with faults), a bot named like
an attack, and the public events of one more match that is in play (published, never stored); the site
served by a real uvicorn server in a thread; the system Chromium for the browser tests, and where they
save their screenshots."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from bad_bots import IllegalBot
from starlette.applications import Starlette

from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.live_feed import LiveFeed
from arena.ladder.store import LadderStore
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import MatchRules
from fiftysix.wire import TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = Path(os.environ.get("SITE_SCREENSHOTS", ROOT / "test-artifacts" / "screenshots"))
"""Where the browser tests save their screenshots (CI keeps the folder as the run's artifacts)."""
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Without the background-networking flags, Chromium's own connections crowd out the page's here."""


def chromium() -> str:
    """The system Chromium, or skip (fail under CI) when it or Playwright is missing."""
    in_ci = bool(os.environ.get("CI"))
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        path = None
    if path is None:
        reason = "the browser tests need Debian's chromium and the playwright package"
        if in_ci:
            pytest.fail(f"{reason}; CI must install them (.ci/run does)")
        pytest.skip(reason)
    return path


EVIL = "<script>alert(1)</script>"
"""A bot name that would run a script if a page did not escape it."""
FAST = TimeControl(decision_ms=500, bank_ms=500)


@dataclass
class Ladder56:
    """The test ladder: its file, its bots' servers, and the match in play."""

    path: Path
    servers: list[BotServer]
    live_id: str
    live_outcome: MatchOutcome
    live_events: list[dict[str, Any]]


def build(folder: Path) -> Ladder56:
    """Fill a ladder file at `folder`/ladder.db (see the module's note): six matches between bot0 and
    bot1, then a set of `illegal` (a bot that plays cards it does not hold: one strike played on, then
    a forfeit) against one of them."""
    servers = [start(RandomBot) for _ in range(2)] + [start(IllegalBot)]
    path = folder / "ladder.db"
    store = LadderStore(path)
    try:
        for index, server in enumerate(servers[:2]):
            store.registry.add_bot(f"bot{index}", address=f"127.0.0.1:{server.port}")
        store.registry.add_bot(EVIL, address=f"127.0.0.1:{servers[0].port}")
        store.registry.set_probation(EVIL, f"probation reason {EVIL}")
        settings = LadderSettings(matches=6, seed=5, time_control=FAST, strikes=0)
        asyncio.run(Ladder(store, settings, LocalBots(folder / "logs")).run())
        store.registry.add_bot("illegal", address=f"127.0.0.1:{servers[2].port}")
        settings = LadderSettings(matches=2, seed=6, time_control=FAST, strikes=1)
        asyncio.run(Ladder(store, settings, LocalBots(folder / "logs")).run())
        events: list[dict[str, Any]] = []
        feed = LiveFeed(store.live, "live-match-1")

        def publish(event: dict[str, Any]) -> None:
            events.append(event)
            feed.publish(event)

        rules = MatchRules(4)
        bots = [
            BotAddress(f"bot{index}", f"127.0.0.1:{server.port}") for index, server in enumerate(servers[:2])
        ]

        async def play() -> MatchOutcome:
            outcome = await run_match(
                MatchSettings(rules, seed=77, time_control=FAST, match_id="live-match-1"),
                seats_for_teams(rules, bots),
                on_event=publish,
            )
            feed.flush()
            return outcome

        outcome = asyncio.run(play())
    finally:
        store.close()
    return Ladder56(path, servers, "live-match-1", outcome, events)


def stop(ladder: Ladder56) -> None:
    """Stop the bots."""
    for server in ladder.servers:
        server.stop(0)


@contextmanager
def served(app: Starlette, graceful_s: float = 2.0) -> Iterator[str]:
    """The site's address, `app` served by uvicorn in a thread until the block ends (then its open
    connections get `graceful_s` seconds to finish, as `arena serve` gives them)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=graceful_s
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "the site stopped"
        assert time.monotonic() < deadline, "the site did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
