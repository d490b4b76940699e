"""What a spectator may see of a match while it is played: its public events, as JSON-ready dictionaries.

Built from public information only: who sits where, each call and each card as it is made (every seat
sees them), each deal's hands once that deal has ended (`DealResult` is all public then), the faults by
seat and cause, and the end. Never a view (it holds a hand), never the seed (it fixes every hand), never
a fault's detail (an illegal move's message names cards the bot holds). The runner calls its `on_event`
hook with these; the ladder publishes them for `arena serve` (arena/ladder/live_feed.py), and the site
passes on only the keys listed in `PUBLIC_KEYS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from fiftysix.engine import Card, DealResult, MatchRules, Move
from fiftysix.record import result_json
from fiftysix.wire import FaultRecord

PUBLIC_KEYS: Final[dict[str, frozenset[str]]] = {
    "match_start": frozenset({"type", "match_id", "players", "ruleset", "deal_cap", "seats"}),
    "deal_start": frozenset({"type", "deal", "dealer", "seats"}),
    "call": frozenset({"type", "deal", "seat", "call"}),
    "card": frozenset({"type", "deal", "seat", "card"}),
    "deal_end": frozenset({"type", "deal", "hands", "result"}),
    "fault": frozenset({"type", "deal", "seat", "cause", "substituted"}),
    "match_end": frozenset({"type", "reason", "ranking", "tables"}),
}
"""Each event type and the keys it may carry: the site drops any other type or key."""


def match_start(match_id: str, rules: MatchRules, seats: Sequence[str]) -> dict[str, Any]:
    """The match begins: who plays each seat."""
    return {
        "type": "match_start",
        "match_id": match_id,
        "players": rules.players,
        "ruleset": rules.ruleset.value,
        "deal_cap": rules.deal_cap,
        "seats": list(seats),
    }


def deal_start(deal: int, dealer: int, seats: Sequence[int]) -> dict[str, Any]:
    """A deal is dealt to `seats` (those still at the table); its hands stay hidden until it ends."""
    return {"type": "deal_start", "deal": deal, "dealer": dealer, "seats": list(seats)}


def move_made(deal: int, seat: int, move: Move) -> dict[str, Any]:
    """A call or a card, made by `seat`: every seat at the table sees it."""
    if isinstance(move, Card):
        return {"type": "card", "deal": deal, "seat": seat, "card": str(move)}
    return {"type": "call", "deal": deal, "seat": seat, "call": str(move)}


def deal_end(result: DealResult) -> dict[str, Any]:
    """A deal has ended: its hands are public now, with its result."""
    hands = [
        [str(card) for card in hand] if seat in result.seats else None
        for seat, hand in enumerate(result.hands)
    ]
    return {"type": "deal_end", "deal": result.number, "hands": hands, "result": result_json(result)}


def fault(record: FaultRecord) -> dict[str, Any]:
    """A bot's fault, by seat and cause only (its detail may name cards the bot holds)."""
    return {
        "type": "fault",
        "deal": record.deal_number,
        "seat": record.seat,
        "cause": record.cause.value,
        "substituted": record.substituted,
    }


def match_end(reason: str, ranking: Sequence[int], tables: Sequence[int]) -> dict[str, Any]:
    """The match is over."""
    return {"type": "match_end", "reason": reason, "ranking": list(ranking), "tables": list(tables)}


def public_only(event: Any) -> dict[str, Any] | None:
    """`event` with only the keys its type may carry, or None when it is not a known event: what the
    site sends is cut to this whatever the table holds."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    allowed = PUBLIC_KEYS.get(kind) if isinstance(kind, str) else None
    if allowed is None:
        return None
    return {key: value for key, value in event.items() if key in allowed}
