"""The ladder tests' fixtures: random bots served in the test process, for a whole test module; a real
PostgreSQL server for the whole session, and the store's location on each dialect."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres_support import PostgresServer, postgres_server

from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


@pytest.fixture(scope="module")
def servers() -> Iterator[list[BotServer]]:
    """Three random bots, one server each."""
    running = [start(RandomBot) for _ in range(3)]
    yield running
    for server in running:
        server.stop(0)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server, started once (skipped where PostgreSQL is missing, failed under CI)."""
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where a store test keeps its ladder, once per dialect: a new SQLite file, or a new database on
    the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("store") / "arena.db")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()
