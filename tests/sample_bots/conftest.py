"""The sample bots' tests' fixtures: Python sample bots served in the test process as opponents, for a
whole module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sample_bots.random_bot import RandomBot
from sample_bots.rule_bot import RuleBot
from sdk import BotServer, start


@pytest.fixture(scope="module")
def random_bot() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def rule_bot() -> Iterator[BotServer]:
    server = start(RuleBot)
    yield server
    server.stop(0)
