"""The one module that converts engine objects to protocol messages and back.

Both sides use it: the arena encodes views, decisions and results and decodes answers; the SDK decodes
views and results into engine types and encodes answers. The messages are defined in
protos/fiftysix/v1/bot.proto and generated into the `fiftysix` package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, TypeVar

from fiftysix.engine import (
    Bid,
    CallMade,
    Card,
    Contract,
    DealResult,
    MatchRules,
    Move,
    NotationError,
    Payment,
    Phase,
    Play,
    Ruleset,
    Suit,
    Trick,
    View,
    parse_call,
    parse_card,
)
from fiftysix.engine.errors import quoted
from fiftysix.v1 import bot_pb2 as pb

ViewType = TypeVar("ViewType", bound=View)

PROTOCOL_VERSION: Final = 1
"""The protocol version this code speaks (bot.proto describes it)."""

RULESET_VALUES: Final = {Ruleset.PAIRS: pb.RULESET_PAIRS, Ruleset.PARTNERSHIP: pb.RULESET_PARTNERSHIP}
"""Each ruleset's value in the protocol's Ruleset enum."""
RULESETS_BY_VALUE: Final = {value: key for key, value in RULESET_VALUES.items()}
_PHASES: Final = {
    Phase.AUCTION: pb.PHASE_AUCTION,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.FINISHED: pb.PHASE_FINISHED,
}
_PHASES_BACK: Final = {value: key for key, value in _PHASES.items()}
_DENOMINATIONS: Final = {
    Suit.SPADES: pb.DENOMINATION_SPADES,
    Suit.HEARTS: pb.DENOMINATION_HEARTS,
    Suit.DIAMONDS: pb.DENOMINATION_DIAMONDS,
    Suit.CLUBS: pb.DENOMINATION_CLUBS,
    None: pb.DENOMINATION_NO_TRUMPS,
}
_DENOMINATIONS_BACK: Final = {value: key for key, value in _DENOMINATIONS.items()}


class MessageError(ValueError):
    """A message that does not hold what the protocol says it must."""


class FaultCause(Enum):
    """Why a bot failed, as recorded in results and sent in MatchEnd (see FaultCause in bot.proto)."""

    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    MALFORMED_ANSWER = "malformed_answer"
    WRONG_DECISION = "wrong_decision"
    DISCONNECTED = "disconnected"
    UNREACHABLE = "unreachable"
    INCOMPATIBLE = "incompatible"
    PROTOCOL_ERROR = "protocol_error"

    @property
    def message_value(self) -> pb.FaultCause.ValueType:
        """The enum value in bot.proto."""
        return pb.FaultCause.Value(f"FAULT_CAUSE_{self.name}")


class AnswerError(ValueError):
    """A bot's answer that is not an acceptable move; `cause` says which kind of fault it is."""

    def __init__(self, cause: FaultCause, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause


MAX_UINT32: Final = 2**32 - 1


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Time allowed per decision and the per-match bank of spare time, in milliseconds."""

    decision_ms: int = 1000
    bank_ms: int = 10000

    def __post_init__(self) -> None:
        # Both go to bots as uint32: refuse here what the message could not carry.
        if not 1 <= self.decision_ms <= MAX_UINT32 or not 0 <= self.bank_ms <= MAX_UINT32:
            raise ValueError(
                f"decision time must be 1 to {MAX_UINT32:,} ms and the bank 0 to {MAX_UINT32:,} ms; "
                f"got {self.decision_ms} and {self.bank_ms}"
            )


# Engine -> messages.


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
    message.denomination = _DENOMINATIONS[contract.trump]
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
    message.phase = _PHASES[view.phase]
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
        message.high_bid.denomination = _DENOMINATIONS[high.trump]
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
        message.phase = _PHASES[view.phase]
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
            message.high_bid.denomination = _DENOMINATIONS[high.trump]
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


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """One bot fault in a match."""

    seat: int
    team: int
    cause: FaultCause
    detail: str
    deal_number: int
    substituted: bool = False
    """Whether a random legal move was played in the bot's place (a strike) instead of a forfeit."""

    def to_json(self) -> dict[str, object]:
        """The fault as a JSON-ready dictionary (for game records and the ladder's storage)."""
        return {
            "seat": self.seat,
            "team": self.team,
            "cause": self.cause.value,
            "detail": self.detail,
            "deal_number": self.deal_number,
            "substituted": self.substituted,
        }

    @classmethod
    def from_json(cls, data: object) -> FaultRecord:
        """The fault that `to_json` gave `data` (read back from the ladder's storage). A fault written
        before strikes existed has no `substituted`: it was a forfeit. Other keys are ignored.

        :raises ValueError: when `data` is not such a dictionary: a key missing or of the wrong type, a
            negative number, an unknown cause.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a fault is a JSON object, not {type(data).__name__}")

        def number(key: str) -> int:
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"a fault's {key!r} must be a whole number from 0")
            return value

        cause = _FAULT_CAUSES.get(data["cause"]) if isinstance(data.get("cause"), str) else None
        if cause is None:
            raise ValueError(f"a fault's 'cause' must be one of {', '.join(_FAULT_CAUSES)}")
        detail, substituted = data.get("detail"), data.get("substituted", False)
        if not isinstance(detail, str):
            raise ValueError("a fault's 'detail' must be a string")
        if not isinstance(substituted, bool):
            raise ValueError("a fault's 'substituted' must be true or false")
        return cls(number("seat"), number("team"), cause, detail, number("deal_number"), substituted)


_FAULT_CAUSES: Final = {cause.value: cause for cause in FaultCause}


def match_end_message(
    reason: str, ranking: Sequence[int], tables: Sequence[int], faults: Sequence[FaultRecord]
) -> pb.PlaySeatRequest:
    """The end of the match."""
    return pb.PlaySeatRequest(
        match_end=pb.MatchEnd(
            reason=reason,
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


def moves_text(legal_moves: Sequence[Move], limit: int = 20) -> str:
    """The first `limit` legal moves in notation, for messages that say what was allowed."""
    more = " ..." if len(legal_moves) > limit else ""
    return " ".join(str(move) for move in legal_moves[:limit]) + more


def read_answer(response: pb.PlaySeatResponse, decision_id: int, legal_moves: Sequence[Move]) -> Move:
    """The move a bot's answer names, checked against the decision it answers.

    :raises AnswerError: with cause WRONG_DECISION, MALFORMED_ANSWER or ILLEGAL_MOVE.
    """
    if response.WhichOneof("answer") != "move":
        raise AnswerError(FaultCause.MALFORMED_ANSWER, "expected a MoveAnswer to a DecisionRequest")
    answer = response.move
    if answer.decision_id != decision_id:
        raise AnswerError(
            FaultCause.WRONG_DECISION,
            f"answered decision {answer.decision_id} but decision {decision_id} was asked",
        )
    choice = answer.WhichOneof("choice")
    if choice == "move_index":
        index = answer.move_index
        if index >= len(legal_moves):
            raise AnswerError(
                FaultCause.ILLEGAL_MOVE, f"move_index {index} is out of range: {len(legal_moves)} legal moves"
            )
        return legal_moves[index]
    if choice == "notation":
        text = answer.notation
        try:
            move: Move = parse_card(text) if isinstance(legal_moves[0], Card) else parse_call(text)
        except ValueError as error:  # NotationError, and anything else odd text could raise
            raise AnswerError(FaultCause.MALFORMED_ANSWER, str(error)) from None
        if move not in legal_moves:
            raise AnswerError(
                FaultCause.ILLEGAL_MOVE,
                f"{quoted(text)} is not a legal move now; legal: {moves_text(legal_moves)}",
            )
        return move
    raise AnswerError(
        FaultCause.MALFORMED_ANSWER, "the MoveAnswer names no move (neither index nor notation)"
    )


# Messages -> engine (the SDK's side).


def rules_from_message(message: pb.MatchRules) -> MatchRules:
    """Match settings from a message."""
    ruleset = RULESETS_BY_VALUE.get(message.ruleset)
    if ruleset is None:
        raise MessageError(f"unknown ruleset {message.ruleset}")
    try:
        return MatchRules(message.players, ruleset, message.deal_cap or None)
    except ValueError as error:
        raise MessageError(str(error)) from None


def _contract_from(message: pb.Contract, high: Bid | None = None) -> Contract:
    trump = _DENOMINATIONS_BACK[message.denomination]
    bid = None
    if not message.all_pass:
        bid = (
            high if high is not None else Bid(message.bidder, parse_call(message.call), message.number, trump)
        )
    return Contract(
        message.number,
        trump,
        message.bidder,
        message.team,
        message.doubling,
        bid,
        message.doubler if message.HasField("doubler") else None,
        message.redoubler if message.HasField("redoubler") else None,
    )


def _trick_from(message: pb.Trick) -> Trick:
    plays = tuple(Play(play.seat, parse_card(play.card)) for play in message.plays)
    return Trick(message.leader, plays, message.winner, message.points)


def view_from_message(
    message: pb.View,
    rules: MatchRules,
    team_of: Sequence[int],
    legal_moves: Sequence[str] = (),
    view_type: type[ViewType] = View,  # type: ignore[assignment]
    **extra: Any,
) -> ViewType:
    """An engine `View` (or a subclass `view_type` with `extra` fields) from a View message and the
    decision's legal moves, if any.

    :raises MessageError: when a card or call is not in canonical notation or an enum is unknown.
    """
    try:
        high = None
        if message.HasField("high_bid"):
            bid = message.high_bid
            high = Bid(bid.seat, parse_call(bid.call), bid.number, _DENOMINATIONS_BACK[bid.denomination])
        phase = _PHASES_BACK[message.phase]
        moves: tuple[Move, ...] = tuple(
            parse_card(text) if phase is Phase.PLAY else parse_call(text) for text in legal_moves
        )
        return view_type(
            seat=message.seat,
            rules=rules,
            team_of=tuple(team_of),
            seats=tuple(message.seats),
            tables=tuple(message.tables),
            teams_out=tuple(message.teams_out),
            deal_number=message.deal_number,
            dealer=message.dealer,
            phase=phase,
            to_act=message.to_act if phase is not Phase.FINISHED else None,
            hand=tuple(parse_card(text) for text in message.hand),
            calls=tuple(CallMade(made.seat, parse_call(made.call)) for made in message.calls),
            high_bid=high,
            doubling=message.doubling,
            contract=_contract_from(message.contract) if message.HasField("contract") else None,
            tricks=tuple(_trick_from(trick) for trick in message.tricks),
            trick=tuple(Play(play.seat, parse_card(play.card)) for play in message.trick),
            points=tuple(message.points),
            legal_moves=moves,
            **extra,
        )
    except (NotationError, KeyError) as error:
        raise MessageError(f"bad view: {error}") from None


def deal_result_from_message(message: pb.DealEnd, players: int) -> DealResult:
    """An engine `DealResult` from a DealEnd message."""
    try:
        hands: list[tuple[Card, ...]] = [() for _ in range(players)]
        for hand in message.hands:
            hands[hand.seat] = tuple(parse_card(card) for card in hand.cards)
        return DealResult(
            number=message.deal_number,
            dealer=message.dealer,
            seats=tuple(message.seats),
            hands=tuple(hands),
            calls=tuple(CallMade(made.seat, parse_call(made.call)) for made in message.calls),
            contract=_contract_from(message.contract),
            tricks=tuple(_trick_from(trick) for trick in message.tricks),
            points=tuple(message.points),
            made=message.made,
            payments=tuple(Payment(p.payer, p.payee, p.tables) for p in message.payments),
            tables=tuple(message.tables),
            teams_out=tuple(message.teams_out),
        )
    except (NotationError, KeyError, IndexError) as error:
        raise MessageError(f"bad deal end: {error}") from None


def fault_cause_from_message(value: int) -> FaultCause:
    """The FaultCause of a message's enum value."""
    name = pb.FaultCause.Name(value).removeprefix("FAULT_CAUSE_")  # type: ignore[arg-type]
    return FaultCause[name]
