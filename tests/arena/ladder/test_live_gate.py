"""The live gate: a set's events go out only once every rotation still playing has ended their deal."""

from __future__ import annotations

from typing import Any

import pytest

from arena.ladder.live_gate import LiveGate


def events_of(rotation: int, deals: int) -> list[dict[str, Any]]:
    """A short match's public events, each tagged with its rotation."""
    events: list[dict[str, Any]] = [{"type": "match_start", "rotation": rotation}]
    for deal in range(1, deals + 1):
        events.append({"type": "deal_start", "deal": deal, "rotation": rotation})
        events.append({"type": "call", "deal": deal, "seat": 0, "call": "28S", "rotation": rotation})
        events.append({"type": "card", "deal": deal, "seat": 0, "card": "JS", "rotation": rotation})
        events.append({"type": "deal_end", "deal": deal, "rotation": rotation})
    events.append({"type": "match_end", "rotation": rotation})
    return events


def test_a_move_waits_until_every_rotation_has_ended_its_deal() -> None:
    shown: list[bool] = []

    def noted() -> bool:
        shown.append(True)
        return True

    gate = LiveGate([0, 1], on_shown=noted)
    out: dict[int, list[dict[str, Any]]] = {0: [], 1: []}
    hooks = {rotation: gate.attach(rotation, out[rotation].append) for rotation in (0, 1)}
    first, second = events_of(0, 2), events_of(1, 2)
    for event in first[:6]:  # rotation 0: its start, all of deal 1, deal 2 begun
        hooks[0](event)
    assert [event["type"] for event in out[0]] == ["match_start"]  # who sits where goes out at once
    assert not shown
    for event in second[:4]:  # rotation 1: deal 1 played, not ended
        hooks[1](event)
    assert [event["type"] for event in out[0]] == ["match_start"]
    hooks[1](second[4])  # rotation 1 ends deal 1: deal 1 of both goes out, and nothing of deal 2
    assert [(event["type"], event.get("deal")) for event in out[0]] == [
        ("match_start", None),
        ("deal_start", 1),
        ("call", 1),
        ("card", 1),
        ("deal_end", 1),
    ]
    assert [event.get("deal") for event in out[1]] == [None, 1, 1, 1, 1]
    assert shown == [True]


def test_a_stored_rotation_waits_for_nobody_and_a_stopped_one_holds_the_rest_back() -> None:
    gate = LiveGate([0, 1, 2])
    out: dict[int, list[dict[str, Any]]] = {0: [], 1: [], 2: []}
    hooks = {rotation: gate.attach(rotation, out[rotation].append) for rotation in (0, 1, 2)}
    for event in events_of(0, 1):
        hooks[0](event)
    gate.stored(0)  # rotation 0 had one deal only: it is out of the count
    for event in events_of(1, 3):
        hooks[1](event)
    assert [event.get("deal") for event in out[1]] == [None]  # rotation 2 has not begun
    gate.stop(2)  # rotation 2 failed: it will be played again, so nothing more goes out
    assert [event.get("deal") for event in out[1]] == [None]
    assert not gate.shown


def test_the_end_of_a_match_goes_out_with_its_last_deal() -> None:
    gate = LiveGate([0, 1])
    out: list[dict[str, Any]] = []
    hook = gate.attach(0, out.append)
    other = gate.attach(1, lambda _event: None)
    for event in events_of(0, 1):
        hook(event)
    assert out[-1]["type"] == "match_start"
    for event in events_of(1, 1)[:5]:
        other(event)
    assert [event["type"] for event in out][-2:] == ["deal_end", "match_end"]


def test_nothing_goes_out_once_frozen_or_when_the_store_cannot_note_it_shown() -> None:
    gate = LiveGate([0])
    out: list[dict[str, Any]] = []
    hook = gate.attach(0, out.append)
    gate.freeze()  # the lease was lost: another runner plays these deals
    for event in events_of(0, 1):
        hook(event)
    assert out == []
    refusing = LiveGate([0], on_shown=lambda: False)
    shown: list[dict[str, Any]] = []
    hook = refusing.attach(0, shown.append)
    for event in events_of(0, 2):
        hook(event)
    assert [event["type"] for event in shown] == ["match_start"]  # no move while not noted as shown
    assert not refusing.shown


def test_a_rotation_the_gate_does_not_hold_cannot_be_attached() -> None:
    gate = LiveGate([1])
    with pytest.raises(ValueError, match="rotation 0"):
        gate.attach(0, lambda _event: None)
    gate.attach(1, lambda _event: None)
    gate.stored(1)
    with pytest.raises(ValueError, match="rotation 1"):
        gate.attach(1, lambda _event: None)
