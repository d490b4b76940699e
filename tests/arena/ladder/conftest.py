"""The ladder tests' fixtures: random bots served in the test process, for a whole test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


@pytest.fixture(scope="module")
def servers() -> Iterator[list[BotServer]]:
    """Three random bots, one server each."""
    running = [start(RandomBot) for _ in range(3)]
    yield running
    for server in running:
        server.stop(0)
