"""A stored game record as the replay viewer draws it: every deal with its hands, its auction call by
call (with who called), its tricks card by card (with who led and who won) and its result, and the
faults by deal. Computed by replaying the record through the engine, so the page shows what the rules
say happened, not what a record claims; a record that does not replay is a ViewError."""

from __future__ import annotations

from typing import Any

from fiftysix.engine import CallMade, Play, Trick
from fiftysix.record import RecordError, from_json
from fiftysix.replay import replay


class ViewError(ValueError):
    """A stored record the viewer cannot draw (it does not replay)."""


def _calls(calls: tuple[CallMade, ...] | list[CallMade]) -> list[dict[str, Any]]:
    return [{"seat": made.seat, "call": str(made.call)} for made in calls]


def _trick(trick: Trick) -> dict[str, Any]:
    return {
        "leader": trick.leader,
        "plays": [{"seat": play.seat, "card": str(play.card)} for play in trick.plays],
        "winner": trick.winner,
        "points": trick.points,
    }


def _unfinished_trick(plays: list[Play]) -> dict[str, Any]:
    return {
        "leader": plays[0].seat,
        "plays": [{"seat": play.seat, "card": str(play.card)} for play in plays],
        "winner": None,
        "points": None,
    }


def replay_view(document: dict[str, Any]) -> dict[str, Any]:
    """The viewer's document for a stored record (see the module's note).

    :raises ViewError: when the record does not replay.
    """
    try:
        record = from_json(document)
        replayed = replay(record)
    except RecordError as error:
        raise ViewError(f"the stored record does not replay: {error}") from None
    faults = document.get("faults")
    faults = faults if isinstance(faults, list) else []
    deals: list[dict[str, Any]] = []
    for deal_record, result in zip(record.deals, replayed.results, strict=False):
        deals.append(
            {
                "number": result.number,
                "dealer": result.dealer,
                "hands": deal_record.hands,
                "calls": _calls(result.calls),
                "tricks": [_trick(trick) for trick in result.tricks],
                "result": deal_record.result,
            }
        )
    if len(record.deals) > len(replayed.results):  # a last deal stopped by a forfeit
        deal = replayed.match.deal
        tricks = [_trick(trick) for trick in deal.tricks]
        if deal.trick:
            tricks.append(_unfinished_trick(list(deal.trick)))
        last = record.deals[-1]
        deals.append(
            {
                "number": last.number,
                "dealer": last.dealer,
                "hands": last.hands,
                "calls": _calls(deal.calls),
                "tricks": tricks,
                "result": None,
            }
        )
    return {
        "match_id": document.get("match_id"),
        "players": record.rules.players,
        "ruleset": record.rules.ruleset.value,
        "seats": record.seats,
        "teams": [record.rules.team_of(seat) for seat in range(record.rules.players)],
        "deals": deals,
        "result": record.result,
        "faults": [
            {key: fault.get(key) for key in ("seat", "team", "cause", "detail", "deal_number", "substituted")}
            for fault in faults
            if isinstance(fault, dict)
        ],
    }
