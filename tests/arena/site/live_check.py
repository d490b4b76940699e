"""The check that a live stream leaks no hidden card: every message against the match's game record."""

from __future__ import annotations

from typing import Any

from arena.runner.public_events import PUBLIC_KEYS


def check_public_stream(messages: list[dict[str, Any]], record: dict[str, Any]) -> None:
    """Fail unless every message is a known public event with only its public keys, the calls and cards
    come in the record's order, and a deal's hands come only after its last card (never a card before
    it is played, never the seed)."""
    deals = record["deals"]
    calls_seen: dict[int, int] = {}
    cards_seen: dict[int, int] = {}
    ended: set[int] = set()
    assert messages
    assert messages[0]["type"] == "match_start"
    assert messages[0]["seats"] == record["seats"]
    for message in messages:
        kind = message["type"]
        assert set(message) <= PUBLIC_KEYS[kind], message
        assert "seed" not in message
        assert "view" not in message
        if kind == "call":
            deal = deals[message["deal"] - 1]
            index = calls_seen.get(message["deal"], 0)
            assert message["deal"] not in ended
            assert message["call"] == deal["calls"][index], (message, index)
            calls_seen[message["deal"]] = index + 1
        elif kind == "card":
            deal = deals[message["deal"] - 1]
            index = cards_seen.get(message["deal"], 0)
            assert message["deal"] not in ended
            assert message["card"] == deal["cards"][index], (message, index)
            cards_seen[message["deal"]] = index + 1
        elif kind == "deal_end":
            number = message["deal"]
            deal = deals[number - 1]
            # Every move of the deal was sent before its hands.
            assert calls_seen.get(number, 0) == len(deal["calls"])
            assert cards_seen.get(number, 0) == len(deal["cards"])
            assert message["hands"] == deal["hands"]
            ended.add(number)
        elif kind == "deal_start":
            assert message["deal"] not in ended
    assert ended == {deal["number"] for deal in deals if deal["result"] is not None}
