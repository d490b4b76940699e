"""Protocol messages to engine objects: a bot's answer checked against its decision (the arena's side),
and views, results and faults from the arena's messages (the SDK's side)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypeVar, overload

from google.protobuf import text_format

from fiftysix.engine import (
    ALL_CARDS,
    MIN_BID,
    REDOUBLE,
    Bid,
    Call,
    CallKind,
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
    Trick,
    View,
    legal_calls,
    parse_call,
    parse_card,
    parse_move,
)
from fiftysix.engine.errors import quoted
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire.terms import (
    BID_FORMS_BY_VALUE,
    CALL_KINDS_BY_VALUE,
    DENOMINATIONS_BY_VALUE,
    PHASES_BY_VALUE,
    RANKS_BY_VALUE,
    RULESETS_BY_VALUE,
    SUITS_BY_VALUE,
    AnswerError,
    FaultCause,
    MessageError,
)


def move_from_message(message: pb.Move) -> Move:
    """The engine's `Card` or `Call` of a structured move (the inverse of `move_message`).

    Read from the fields that define the move (suit and rank; kind, form, number and denomination); the
    derived ones (a card's points, a bid's contract number) are not looked at.

    :raises MessageError: when the message holds no move, an unknown enum value, or a combination that is
        no card or call (a bid without a form, a pass with a number, `28` of a plus form, ...).
    """
    which = message.WhichOneof("move")
    if which == "card":
        return card_from_message(message.card)
    if which == "call":
        return _call_from(message.call)
    raise MessageError("a Move holds neither a card nor a call")


def card_from_message(message: pb.Card) -> Card:
    """The engine's `Card` of a structured card, read from its suit and rank (its points are derived).

    :raises MessageError: when the suit or the rank is unspecified or unknown.
    """
    suit, rank = SUITS_BY_VALUE.get(message.suit), RANKS_BY_VALUE.get(message.rank)
    if suit is None or rank is None:
        raise MessageError(f"not a card: {_one_line(message)}")
    return Card(rank, suit)


def _call_from(message: pb.Call) -> Call:
    kind = CALL_KINDS_BY_VALUE.get(message.kind)
    form = BID_FORMS_BY_VALUE.get(message.form)
    bid = kind is CallKind.BID
    # A bid names its form and denomination; pass, double and redouble leave them unspecified.
    named = (form is not None, message.denomination != pb.DENOMINATION_UNSPECIFIED)
    if kind is None or named != (bid, bid) or (message.form and form is None):
        raise MessageError(f"not a call: {_one_line(message)}")
    try:
        return Call(kind, form, message.number, DENOMINATIONS_BY_VALUE[message.denomination] if bid else None)
    except (KeyError, ValueError):
        raise MessageError(f"not a call: {_one_line(message)}") from None


def _one_line(message: pb.Card | pb.Call) -> str:
    return "{" + text_format.MessageToString(message, as_one_line=True) + "}"


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
            move = parse_move(text, Phase.PLAY if isinstance(legal_moves[0], Card) else Phase.AUCTION)
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
    trump = DENOMINATIONS_BY_VALUE[message.denomination]
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
    plays = tuple([Play(play.seat, _card(play.card)) for play in message.plays])
    return Trick(message.leader, plays, message.winner, message.points)


_CARDS_BY_TEXT: Final[dict[str, Card]] = {str(card): card for card in ALL_CARDS}
_CALLS_BY_TEXT: Final[dict[str, Call]] = {
    str(call): call for call in (*legal_calls(0, True), *legal_calls(MIN_BID, True), REDOUBLE)
}
"""Every card and every call in canonical notation, as the arena writes them: one lookup each."""

V = TypeVar("V", bound=View)


def _card(text: str) -> Card:
    """A card in canonical notation by one lookup, anything else by the parser."""
    return _CARDS_BY_TEXT.get(text) or parse_card(text)


def _moves(texts: Sequence[str], phase: Phase) -> tuple[Move, ...]:
    table: Mapping[str, Move] = _CARDS_BY_TEXT if phase is Phase.PLAY else _CALLS_BY_TEXT
    try:
        return tuple(map(table.__getitem__, texts))
    except KeyError:  # not canonical: the parser accepts it or says why not
        return tuple(parse_move(text, phase) for text in texts)


class ViewDecoder:
    """Decodes one seat's views incrementally: within a deal the calls and tricks already decoded are
    kept and only those that are new are read, and the hand, the highest bid and the contract are read
    again only when they change. Each kept part is checked against the message (its count and its last
    entry) and read whole again when they disagree, so any sequence of views decodes right; a seat's
    views in the order of its match cost about what is new in each.
    """

    def __init__(self, rules: MatchRules, team_of: Sequence[int]) -> None:
        self.rules = rules
        self.team_of = tuple(team_of)
        self._deal_number = -1
        self._clear()

    def _clear(self) -> None:
        """Forget what was kept of a deal."""
        self._calls: tuple[CallMade, ...] = ()
        self._tricks: tuple[Trick, ...] = ()
        self._hand_texts: tuple[str, ...] = ()
        self._hand: tuple[Card, ...] = ()
        self._high: Bid | None = None
        self._contract: Contract | None = None

    def _read_calls(self, messages: Sequence[pb.CallMade]) -> tuple[CallMade, ...]:
        kept = self._calls
        count = len(kept)
        if len(messages) < count or (
            count
            and (messages[count - 1].seat != kept[-1].seat or messages[count - 1].call != str(kept[-1].call))
        ):
            kept, count = (), 0
        if len(messages) > count:
            kept += tuple(CallMade(made.seat, parse_call(made.call)) for made in messages[count:])
        self._calls = kept
        return kept

    def _read_tricks(self, messages: Sequence[pb.Trick]) -> tuple[Trick, ...]:
        kept = self._tricks
        count = len(kept)
        if len(messages) < count or (
            count
            and (messages[count - 1].leader, messages[count - 1].winner) != (kept[-1].leader, kept[-1].winner)
        ):
            kept, count = (), 0
        if len(messages) > count:
            kept += tuple(_trick_from(trick) for trick in messages[count:])
        self._tricks = kept
        return kept

    def _read_hand(self, texts: Sequence[str]) -> tuple[Card, ...]:
        key = tuple(texts)
        if key != self._hand_texts:
            cards = _CARDS_BY_TEXT
            self._hand = tuple([cards.get(text) or parse_card(text) for text in key])
            self._hand_texts = key
        return self._hand

    def _read_high(self, message: pb.View) -> Bid | None:
        if not message.HasField("high_bid"):
            return None
        bid, kept = message.high_bid, self._high
        if kept is None or (bid.seat, bid.call, bid.number) != (kept.seat, str(kept.call), kept.number):
            kept = Bid(bid.seat, parse_call(bid.call), bid.number, DENOMINATIONS_BY_VALUE[bid.denomination])
            self._high = kept
        return kept

    def _read_contract(self, message: pb.View, high: Bid | None) -> Contract | None:
        if not message.HasField("contract"):
            return None
        if self._contract is None:  # a deal's contract does not change once made
            self._contract = _contract_from(message.contract, high)
        return self._contract

    @overload
    def view(self, message: pb.View, legal_moves: Sequence[str] = ()) -> View: ...

    @overload
    def view(self, message: pb.View, legal_moves: Sequence[str], view_class: type[V], **extra: int) -> V: ...

    def view(
        self,
        message: pb.View,
        legal_moves: Sequence[str] = (),
        view_class: type[View] = View,
        **extra: int,
    ) -> View:
        """An engine `View` (or `view_class`, given `extra` fields too) of a View message and the
        decision's legal moves, if any.

        :raises MessageError: when a card or call is not in canonical notation or an enum is unknown.
        """
        try:
            if message.deal_number != self._deal_number:
                self._clear()
                self._deal_number = message.deal_number
            high = self._read_high(message)
            phase = PHASES_BY_VALUE[message.phase]
            return view_class(
                seat=message.seat,
                rules=self.rules,
                team_of=self.team_of,
                seats=tuple(message.seats),
                tables=tuple(message.tables),
                teams_out=tuple(message.teams_out),
                deal_number=message.deal_number,
                dealer=message.dealer,
                phase=phase,
                to_act=message.to_act if phase is not Phase.FINISHED else None,
                hand=self._read_hand(message.hand),
                calls=self._read_calls(message.calls),
                high_bid=high,
                doubling=message.doubling,
                contract=self._read_contract(message, high),
                tricks=self._read_tricks(message.tricks),
                trick=tuple([Play(play.seat, _card(play.card)) for play in message.trick]),
                points=tuple(message.points),
                legal_moves=_moves(legal_moves, phase),
                **extra,
            )
        except (NotationError, KeyError) as error:
            raise MessageError(f"bad view: {error}") from None


def view_from_message(
    message: pb.View, rules: MatchRules, team_of: Sequence[int], legal_moves: Sequence[str] = ()
) -> View:
    """An engine `View` from a View message and the decision's legal moves, if any (`ViewDecoder`
    decodes a seat's views one after another for less).

    :raises MessageError: when a card or call is not in canonical notation or an enum is unknown.
    """
    return ViewDecoder(rules, team_of).view(message, legal_moves)


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
