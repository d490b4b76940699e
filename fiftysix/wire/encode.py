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
        message.trump = DENOMINATION_VALUES[view.contract.trump]
    for trick in view.tricks:
        _fill_trick(message.tricks.add(), trick)
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


class DecisionEncoder:
    """Builds one seat's DecisionRequests incrementally: one message is kept and reused, and only what
    changed since the seat's last decision is written into it.

    Within a deal a seat's view only grows or changes in known ways (calls and tricks are appended, the
    hand shrinks, the trick on the table grows until it is taken, the tables, the seats and the teams out
    change only between deals), so each decision costs about what is new in it, and a whole view is
    rebuilt only at a new deal. The result is the same message `decision_message` builds, which a test
    checks. The returned message is reused by the next call: send it before asking for another.
    """

    def __init__(self) -> None:
        self._request = pb.PlaySeatRequest()
        self._deal_number = 0
        self._calls_sent = 0
        self._tricks_sent = 0
        self._plays_sent = 0
        self._hand_sent = -1
        self._tables_sent: tuple[int, ...] = ()
        self._points_sent: tuple[int, ...] = ()
        self._high_sent: object = None
        self._legal_sent: tuple[tuple[Move, ...], int] | None = None

    def _new_deal(self, message: pb.View, view: View) -> None:
        message.Clear()
        self._deal_number = view.deal_number
        self._calls_sent = self._tricks_sent = self._plays_sent = 0
        self._hand_sent = -1
        self._tables_sent = self._points_sent = ()
        self._high_sent = None
        message.seat = view.seat
        message.deal_number = view.deal_number
        message.dealer = view.dealer
        message.seats.extend(view.seats)
        message.teams_out.extend(view.teams_out)

    def decision(
        self, decision_id: int, view: View, legal_moves: tuple[Move, ...], decision_ms: int, bank_ms: int
    ) -> pb.PlaySeatRequest:
        """The request for this decision (see `decision_message`)."""
        decision = self._request.decision
        message = decision.view
        if view.deal_number != self._deal_number:
            self._new_deal(message, view)
        message.phase = PHASE_VALUES[view.phase]
        message.to_act = view.to_act if view.to_act is not None else 0
        if view.tables != self._tables_sent:
            del message.tables[:]
            message.tables.extend(view.tables)
            self._tables_sent = view.tables
        hand = view.hand
        if len(hand) != self._hand_sent:  # within a deal a hand only loses the cards its seat plays
            del message.hand[:]
            message.hand.extend([str(card) for card in hand])
            self._hand_sent = len(hand)
        if len(view.calls) != self._calls_sent:
            calls = message.calls
            for made in view.calls[self._calls_sent :]:
                calls.add(seat=made.seat, call=str(made.call))
            self._calls_sent = len(view.calls)
        high = view.high_bid
        if high is not self._high_sent and high is not None:
            message.high_bid.seat = high.seat
            message.high_bid.call = str(high.call)
            message.high_bid.number = high.number
            message.high_bid.denomination = DENOMINATION_VALUES[high.trump]
            self._high_sent = high
        message.doubling = view.doubling
        if view.contract is not None and not message.HasField("contract"):
            _fill_contract(message.contract, view.contract)
            message.trump = DENOMINATION_VALUES[view.contract.trump]
        trick = view.trick
        if len(view.tricks) != self._tricks_sent:
            for done in view.tricks[self._tricks_sent :]:
                _fill_trick(message.tricks.add(), done)
            self._tricks_sent = len(view.tricks)
            del message.trick[:]
            self._plays_sent = 0
        if len(trick) != self._plays_sent or not self._plays_sent:
            plays = message.trick
            for play in trick[self._plays_sent :]:
                plays.add(seat=play.seat, card=str(play.card))
            self._plays_sent = len(trick)
            _fill_trick_state(message, view)
        if view.points != self._points_sent:
            del message.points[:]
            message.points.extend(view.points)
            self._points_sent = view.points
        decision.decision_id = decision_id
        current = _current_bid(view)
        sent = self._legal_sent
        if sent is None or sent[0] is not legal_moves or sent[1] != current:
            # An auction in which everybody passes asks a seat the same list again: keep it.
            del decision.legal_moves[:]
            del decision.moves[:]
            decision.MergeFromString(_legal_bytes(legal_moves, current))
            self._legal_sent = (legal_moves, current)
        decision.decision_ms = decision_ms
        decision.bank_ms = bank_ms
        return self._request


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
