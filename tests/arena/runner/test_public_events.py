"""run_match's `on_event` hook: the public events of a match, in order, and a hook that fails does not
end the match."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from bad_bots import IllegalBot

from arena.runner import BotAddress, MatchSettings, run_match, seats_for_teams
from arena.runner.public_events import PUBLIC_KEYS, public_only
from fiftysix.engine import EndReason, MatchRules
from fiftysix.wire import TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


@pytest.fixture(scope="module")
def bots() -> Iterator[list[BotServer]]:
    running = [start(RandomBot) for _ in range(2)]
    yield running
    for server in running:
        server.stop(0)


def play(bots: list[BotServer], on_event: Any, strikes: int = 0) -> Any:
    rules = MatchRules(4)
    seats = seats_for_teams(
        rules, [BotAddress(f"b{i}", f"127.0.0.1:{bot.port}") for i, bot in enumerate(bots)]
    )
    settings = MatchSettings(rules, seed=11, time_control=TimeControl(500, 500), strikes=strikes)
    return asyncio.run(run_match(settings, seats, on_event=on_event))


def test_every_move_is_an_event_in_the_records_order(bots: list[BotServer]) -> None:
    events: list[dict[str, Any]] = []
    outcome = play(bots, events.append)
    record = outcome.record.to_json()
    assert events[0]["type"] == "match_start"
    assert events[-1] == {
        "type": "match_end",
        "reason": outcome.reason.value,
        "ranking": list(outcome.ranking),
        "tables": list(outcome.tables),
    }
    for deal in record["deals"]:
        number = deal["number"]
        assert [e["call"] for e in events if e["type"] == "call" and e["deal"] == number] == deal["calls"]
        assert [e["card"] for e in events if e["type"] == "card" and e["deal"] == number] == deal["cards"]
    for event in events:
        assert set(event) <= PUBLIC_KEYS[event["type"]]
        assert public_only(event) == event


def test_a_fault_event_names_its_cause_never_its_detail(bots: list[BotServer]) -> None:
    """An illegal move's detail lists the seat's legal cards: a spectator gets the seat and the cause."""
    illegal = start(IllegalBot)
    try:
        events: list[dict[str, Any]] = []
        outcome = play([bots[0], illegal], events.append, strikes=1)
    finally:
        illegal.stop(0)
    assert [fault.substituted for fault in outcome.faults] == [True, False]
    assert all(re.search(r"legal: [JQKAT987][SHDC]", fault.detail) for fault in outcome.faults)
    shown = [event for event in events if event["type"] == "fault"]
    assert shown == [
        {
            "type": "fault",
            "deal": fault.deal_number,
            "seat": fault.seat,
            "cause": fault.cause.value,
            "substituted": fault.substituted,
        }
        for fault in outcome.faults
    ]
    assert [public_only(event) for event in shown] == shown


def test_a_failing_hook_is_switched_off_and_the_match_goes_on(bots: list[BotServer]) -> None:
    calls = 0

    def broken(event: dict[str, Any]) -> None:
        nonlocal calls
        calls += 1
        if event["type"] == "call":
            raise RuntimeError("the hook broke")

    outcome = play(bots, broken)
    assert outcome.reason is not EndReason.ARENA_ERROR
    assert outcome.faults == []
    assert calls == 3  # match_start, deal_start, the first call: then no more


@pytest.mark.parametrize(
    "event",
    [None, [], {"type": "hand", "cards": ["JS"]}, {"type": 3}, {"no": "type"}],
)
def test_anything_but_a_known_event_is_dropped(event: Any) -> None:
    assert public_only(event) is None


def test_unknown_keys_of_a_known_event_are_dropped() -> None:
    assert public_only({"type": "card", "deal": 1, "seat": 0, "card": "JS", "hand": ["9S"]}) == {
        "type": "card",
        "deal": 1,
        "seat": 0,
        "card": "JS",
    }
