"""Engine objects to protocol messages: what the arena sends but its decisions (`decisions.py` writes
those, from the moves, contracts and tricks made here), and the SDK's answers' shape."""

from __future__ import annotations

from collections.abc import Sequence

from fiftysix.engine import (
    Call,
    Card,
    Contract,
    DealResult,
    EndReason,
    MatchRules,
    Move,
    Trick,
)
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire.terms import (
    BID_FORM_VALUES,
    CALL_KIND_VALUES,
    DENOMINATION_VALUES,
    PROTOCOL_VERSION,
    RANK_VALUES,
    RULESET_VALUES,
    SUIT_VALUES,
    FaultRecord,
    TimeControl,
)


def card_message(card: Card) -> pb.Card:
    """A card as a structured value (the notation's `str(card)` beside it where both are sent)."""
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
        return pb.Move(card=card_message(move))
    return pb.Move(call=_call_message(move, current))


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
        plays.add(seat=play.seat, card=str(play.card), played_card=card_message(play.card))
        if play.seat == trick.winner:
            message.winning_card.CopyFrom(card_message(play.card))


def deal_end_message(result: DealResult) -> pb.PlaySeatRequest:
    """The end of a deal, every hand included (they are public once the deal is over)."""
    request = pb.PlaySeatRequest()
    end = request.deal_end
    end.deal_number = result.number
    end.dealer = result.dealer
    end.seats.extend(result.seats)
    for seat in result.seats:
        hand = result.hands[seat]
        end.hands.add(
            seat=seat, cards=[str(card) for card in hand], dealt_cards=[card_message(card) for card in hand]
        )
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
