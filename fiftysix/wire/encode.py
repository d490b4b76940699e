"""Engine objects to protocol messages: what the arena sends (and the SDK's answers' shape)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from fiftysix.engine import (
    ALL_CARDS,
    Call,
    Card,
    Contract,
    DealResult,
    EndReason,
    MatchRules,
    Move,
    Trick,
    View,
)
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire.terms import (
    BID_FORM_VALUES,
    CALL_KIND_VALUES,
    DENOMINATION_VALUES,
    PHASE_VALUES,
    PROTOCOL_VERSION,
    RANK_VALUES,
    RULESET_VALUES,
    SUIT_VALUES,
    FaultRecord,
    TimeControl,
)


def _card_message(card: Card) -> pb.Card:
    return pb.Card(suit=SUIT_VALUES[card.suit], rank=RANK_VALUES[card.rank], points=card.points)


def _call_message(call: Call, current: int) -> pb.Call:
    if call.form is None:
        return pb.Call(kind=CALL_KIND_VALUES[call.kind])
    return pb.Call(
        kind=CALL_KIND_VALUES[call.kind],
        form=BID_FORM_VALUES[call.form],
        number=call.number,
        contract_number=call.contract_number(current),
        denomination=DENOMINATION_VALUES[call.suit],
    )


def move_message(move: Move, current: int) -> pb.Move:
    """A legal move as a structured value. `current` is the number of the bid a call follows (0 before any
    bid), which a plus bid's contract number depends on; a card ignores it."""
    if isinstance(move, Card):
        return pb.Move(card=_card_message(move))
    return pb.Move(call=_call_message(move, current))


def _legal_entry(move: Move, current: int) -> bytes:
    """One legal move as a serialized DecisionRequest holds it: its notation and its structured value."""
    return pb.DecisionRequest(
        legal_moves=[str(move)], moves=[move_message(move, current)]
    ).SerializeToString()


_CARD_ENTRIES: Final = {card: _legal_entry(card, 0) for card in ALL_CARDS}
_CALL_LISTS: dict[tuple[int, int], tuple[Sequence[Move], bytes]] = {}
_CALL_LISTS_KEPT: Final = 256
"""The engine shares one tuple per (current bid, may double): about 60 in all. More means tuples made
elsewhere, so the cache starts again rather than grow."""


def _legal_bytes(legal_moves: Sequence[Move], current: int) -> bytes:
    """A DecisionRequest's `legal_moves` and `moves` as serialized fields, which MergeFromString appends.

    Bytes because the auction lists up to 395 calls: building that many messages in Python takes about
    80 us a decision, parsing their cached bytes about 15. Cards are cached one by one (32 of them), the
    engine's tuples of legal calls whole, by identity (the tuple is held, so its id stays its own).
    """
    if legal_moves and isinstance(legal_moves[0], Card):
        return b"".join(
            [
                _CARD_ENTRIES[move] if isinstance(move, Card) else _legal_entry(move, current)
                for move in legal_moves
            ]
        )
    key = (id(legal_moves), current)
    cached = _CALL_LISTS.get(key)
    if cached is not None and cached[0] is legal_moves:
        return cached[1]
    entries = b"".join([_legal_entry(move, current) for move in legal_moves])
    if len(_CALL_LISTS) >= _CALL_LISTS_KEPT:
        _CALL_LISTS.clear()
    _CALL_LISTS[key] = (legal_moves, entries)
    return entries


def _current_bid(view: View) -> int:
    """The number a plus bid adds to now (0 before any bid)."""
    return view.high_bid.number if view.high_bid is not None else 0


def _fill_trick_state(message: pb.View, view: View) -> None:
    """The suit led and the seat winning the trick on the table (the engine's own reading of the trick)."""
    led = view.led_suit
    message.led_suit = SUIT_VALUES[led] if led is not None else pb.SUIT_UNSPECIFIED
    winning = view.winning_play
    if winning is None:
        message.ClearField("trick_winner")
    else:
        message.trick_winner = winning.seat


def rules_message(rules: MatchRules) -> pb.MatchRules:
    """Match settings as a message."""
    return pb.MatchRules(
        players=rules.players, ruleset=RULESET_VALUES[rules.ruleset], deal_cap=rules.deal_cap or 0
    )


def match_start_message(
    match_id: str,
    rules: MatchRules,
    seat: int,
    seat_names: Sequence[str],
    time_control: TimeControl,
) -> pb.PlaySeatRequest:
    """The first message of a seat's stream."""
    return pb.PlaySeatRequest(
        match_start=pb.MatchStart(
            protocol_version=PROTOCOL_VERSION,
            match_id=match_id,
            rules=rules_message(rules),
            seat=seat,
            team_of_seats=[rules.team_of(other) for other in range(rules.players)],
            seat_names=list(seat_names),
            time_control=pb.TimeControl(decision_ms=time_control.decision_ms, bank_ms=time_control.bank_ms),
        )
    )


def fill_contract(message: pb.Contract, contract: Contract) -> None:
    """Write `contract` into an empty Contract message."""
    message.number = contract.number
    message.denomination = DENOMINATION_VALUES[contract.trump]
    message.bidder = contract.bidder
    message.team = contract.team
    message.doubling = contract.doubling
    message.call = str(contract.bid.call) if contract.bid is not None else ""
    message.all_pass = contract.all_pass
    if contract.doubler is not None:
        message.doubler = contract.doubler
    if contract.redoubler is not None:
        message.redoubler = contract.redoubler


def fill_trick(message: pb.Trick, trick: Trick) -> None:
    """Write a completed trick into an empty Trick message."""
    message.leader = trick.leader
    message.winner = trick.winner
    message.points = trick.points
    plays = message.plays
    for play in trick.plays:
        plays.add(seat=play.seat, card=str(play.card))


def fill_view(message: pb.View, view: View) -> None:
    """Write `view` into an empty View message."""
    message.seat = view.seat
    message.deal_number = view.deal_number
    message.dealer = view.dealer
    message.phase = PHASE_VALUES[view.phase]
    message.to_act = view.to_act if view.to_act is not None else 0
    message.seats.extend(view.seats)
    message.tables.extend(view.tables)
    message.teams_out.extend(view.teams_out)
    message.hand.extend([str(card) for card in view.hand])
    calls = message.calls
    for made in view.calls:
        calls.add(seat=made.seat, call=str(made.call))
    high = view.high_bid
    if high is not None:
        message.high_bid.seat = high.seat
        message.high_bid.call = str(high.call)
        message.high_bid.number = high.number
        message.high_bid.denomination = DENOMINATION_VALUES[high.trump]
    message.doubling = view.doubling
    if view.contract is not None:
        fill_contract(message.contract, view.contract)
        message.trump = DENOMINATION_VALUES[view.contract.trump]
    for trick in view.tricks:
        fill_trick(message.tricks.add(), trick)
    for play in view.trick:
        message.trick.add(seat=play.seat, card=str(play.card))
    message.points.extend(view.points)
    _fill_trick_state(message, view)


def decision_message(
    decision_id: int, view: View, legal_moves: Sequence[Move], decision_ms: int, bank_ms: int
) -> pb.PlaySeatRequest:
    """A request to act, with the seat's view and every legal move in notation and as a structured value."""
    request = pb.PlaySeatRequest()
    decision = request.decision
    decision.decision_id = decision_id
    fill_view(decision.view, view)
    decision.MergeFromString(_legal_bytes(legal_moves, _current_bid(view)))
    decision.decision_ms = decision_ms
    decision.bank_ms = bank_ms
    return request


def deal_end_message(result: DealResult) -> pb.PlaySeatRequest:
    """The end of a deal, every hand included (they are public once the deal is over)."""
    request = pb.PlaySeatRequest()
    end = request.deal_end
    end.deal_number = result.number
    end.dealer = result.dealer
    end.seats.extend(result.seats)
    for seat in result.seats:
        end.hands.add(seat=seat, cards=[str(card) for card in result.hands[seat]])
    for made in result.calls:
        end.calls.add(seat=made.seat, call=str(made.call))
    fill_contract(end.contract, result.contract)
    for trick in result.tricks:
        fill_trick(end.tricks.add(), trick)
    end.points.extend(result.points)
    end.made = result.made
    for payment in result.payments:
        end.payments.add(payer=payment.payer, payee=payment.payee, tables=payment.tables)
    end.tables.extend(result.tables)
    end.teams_out.extend(result.teams_out)
    return request


def match_end_message(
    reason: EndReason, ranking: Sequence[int], tables: Sequence[int], faults: Sequence[FaultRecord]
) -> pb.PlaySeatRequest:
    """The end of the match."""
    return pb.PlaySeatRequest(
        match_end=pb.MatchEnd(
            reason=reason.value,
            ranking=list(ranking),
            tables=list(tables),
            faults=[
                pb.Fault(
                    seat=fault.seat,
                    team=fault.team,
                    cause=fault.cause.message_value,
                    detail=fault.detail,
                    deal_number=fault.deal_number,
                    substituted=fault.substituted,
                )
                for fault in faults
            ],
        )
    )
