"""Engine objects to protocol messages: what the arena sends (and the SDK's answers' shape)."""

from __future__ import annotations

from collections.abc import Sequence

from fiftysix.engine import (
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
    DENOMINATION_VALUES,
    PHASE_VALUES,
    PROTOCOL_VERSION,
    RULESET_VALUES,
    FaultRecord,
    TimeControl,
)


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


def _fill_contract(message: pb.Contract, contract: Contract) -> None:
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


def _fill_trick(message: pb.Trick, trick: Trick) -> None:
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
        _fill_contract(message.contract, view.contract)
    for trick in view.tricks:
        _fill_trick(message.tricks.add(), trick)
    for play in view.trick:
        message.trick.add(seat=play.seat, card=str(play.card))
    message.points.extend(view.points)


def decision_message(
    decision_id: int, view: View, legal_moves: Sequence[Move], decision_ms: int, bank_ms: int
) -> pb.PlaySeatRequest:
    """A request to act, with the seat's view and every legal move in notation."""
    request = pb.PlaySeatRequest()
    decision = request.decision
    decision.decision_id = decision_id
    fill_view(decision.view, view)
    decision.legal_moves.extend([str(move) for move in legal_moves])
    decision.decision_ms = decision_ms
    decision.bank_ms = bank_ms
    return request


class DecisionEncoder:
    """Builds one seat's DecisionRequests incrementally: within a deal, the calls and tricks already
    sent are kept in a reused message and only what is new is added.

    This keeps the arena's encoding work per decision small and flat through the deal (a whole view is
    rebuilt only at a new deal); the result is the same message `decision_message` builds, which a test
    checks. The returned message is reused by the next call: send it before asking for another.
    """

    def __init__(self) -> None:
        self._request = pb.PlaySeatRequest()
        self._deal_number = 0
        self._calls_sent = 0
        self._tricks_sent = 0
        self._legal_cache: dict[int, tuple[tuple[Move, ...], list[str]]] = {}

    def decision(
        self, decision_id: int, view: View, legal_moves: tuple[Move, ...], decision_ms: int, bank_ms: int
    ) -> pb.PlaySeatRequest:
        """The request for this decision (see `decision_message`)."""
        decision = self._request.decision
        message = decision.view
        if view.deal_number != self._deal_number:
            message.Clear()
            self._deal_number = view.deal_number
            self._calls_sent = self._tricks_sent = 0
            message.seat = view.seat
            message.deal_number = view.deal_number
            message.dealer = view.dealer
            message.seats.extend(view.seats)
            message.teams_out.extend(view.teams_out)
        message.phase = PHASE_VALUES[view.phase]
        message.to_act = view.to_act if view.to_act is not None else 0
        del message.tables[:]
        message.tables.extend(view.tables)
        del message.hand[:]
        message.hand.extend([str(card) for card in view.hand])
        calls = message.calls
        for made in view.calls[self._calls_sent :]:
            calls.add(seat=made.seat, call=str(made.call))
        self._calls_sent = len(view.calls)
        high = view.high_bid
        if high is not None and (
            message.high_bid.call != str(high.call) or message.high_bid.seat != high.seat
        ):
            message.high_bid.seat = high.seat
            message.high_bid.call = str(high.call)
            message.high_bid.number = high.number
            message.high_bid.denomination = DENOMINATION_VALUES[high.trump]
        message.doubling = view.doubling
        if view.contract is not None and not message.HasField("contract"):
            _fill_contract(message.contract, view.contract)
        for trick in view.tricks[self._tricks_sent :]:
            _fill_trick(message.tricks.add(), trick)
        self._tricks_sent = len(view.tricks)
        del message.trick[:]
        for play in view.trick:
            message.trick.add(seat=play.seat, card=str(play.card))
        del message.points[:]
        message.points.extend(view.points)
        decision.decision_id = decision_id
        del decision.legal_moves[:]
        decision.legal_moves.extend(self._legal_texts(legal_moves))
        decision.decision_ms = decision_ms
        decision.bank_ms = bank_ms
        return self._request

    def _legal_texts(self, legal_moves: tuple[Move, ...]) -> list[str]:
        # The auction's legal-call tuples are shared by the engine, so their notation is worth keeping.
        cached = self._legal_cache.get(id(legal_moves))
        if cached is not None and cached[0] is legal_moves:
            return cached[1]
        texts = [str(move) for move in legal_moves]
        if len(legal_moves) > 16:
            self._legal_cache[id(legal_moves)] = (legal_moves, texts)
        return texts


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
    _fill_contract(end.contract, result.contract)
    for trick in result.tricks:
        _fill_trick(end.tricks.add(), trick)
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
