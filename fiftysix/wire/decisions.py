"""A match's DecisionRequests as serialized bytes, assembled from pieces kept between decisions: the
one encoder of decisions, for the match runner and the compliance checker alike.

The arena asks for a decision hundreds of times a match, and each request differs from the one before
by about one move. Filling a message per request would re-encode the whole public record for every seat
(a play written once into each seat's message, then serialized again for every request); here each
inner message (a call made, a play, a trick, the contract, a legal move) is serialized by protobuf once
and kept, the public part of the view is kept once for all the seats, and only the three outer messages
(PlaySeatRequest, DecisionRequest, View) are written here, in protobuf's wire format as protobuf writes
it (fields in number order, defaults left out). The tests read the bytes back as a bot does and compare
them with the engine's view, over whole matches of every size and ruleset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from fiftysix.engine import ALL_CARDS, Bid, Call, Card, Deal, Match, Move, Phase, Trick
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire.encode import card_message, fill_contract, move_message
from fiftysix.wire.terms import DENOMINATION_VALUES, PHASE_VALUES, SUIT_VALUES


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_VARINTS: Final = tuple(_varint(value) for value in range(1 << 14))
"""Every varint below 16384 (every length and number a decision holds, but the largest lists of
legal calls): one lookup instead of a loop."""


def _number(value: int) -> bytes:
    return _VARINTS[value] if value < 16384 else _varint(value)


def _key(field: int, wire_type: int) -> bytes:
    return _VARINTS[field << 3 | wire_type]


def _uint(field: int, value: int) -> bytes:
    """A singular integer or enum field; proto3 leaves out a zero."""
    return _key(field, 0) + _number(value) if value else b""


def _present_uint(field: int, value: int) -> bytes:
    """An `optional` integer field that is set: written even when zero."""
    return _key(field, 0) + _number(value)


def _embedded(field: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, a message or a packed list."""
    return _key(field, 2) + _number(len(payload)) + payload


def _packed(field: int, values: Sequence[int]) -> bytes:
    """A repeated integer field (packed in proto3); an empty list is left out."""
    if not values:
        return b""
    return _embedded(field, b"".join([_number(value) for value in values]))


# Field numbers: PlaySeatRequest.decision, then DecisionRequest's and View's fields (protos/fiftysix/v1).
_REQUEST_DECISION: Final = 2
_DECISION_ID, _DECISION_VIEW, _LEGAL_MOVES, _DECISION_MS, _BANK_MS, _MOVES = 1, 2, 3, 4, 5, 6
_SEAT, _DEAL_NUMBER, _DEALER, _PHASE, _TO_ACT, _SEATS, _TABLES, _TEAMS_OUT, _HAND, _CALLS = range(1, 11)
_HIGH_BID, _DOUBLING, _CONTRACT, _TRICKS, _TRICK, _POINTS, _LED_SUIT, _TRUMP, _TRICK_WINNER = range(11, 20)
_HAND_CARDS, _TRICK_WINNING_CARD = 20, 21

_DECISION_ID_KEY: Final = _key(_DECISION_ID, 0)
_VIEW_KEY: Final = _key(_DECISION_VIEW, 2)
_REQUEST_DECISION_KEY: Final = _key(_REQUEST_DECISION, 2)
_SEAT_FIELDS: Final = tuple(_uint(_SEAT, seat) for seat in range(8))
_TURN_FIELDS: Final = {
    phase: tuple(_uint(_PHASE, PHASE_VALUES[phase]) + _uint(_TO_ACT, seat) for seat in range(8))
    for phase in (Phase.AUCTION, Phase.PLAY)
}
"""The phase and seat to act of every decision there can be."""
_DOUBLING_FIELDS: Final = {doubling: _uint(_DOUBLING, doubling) for doubling in (1, 2, 4)}
_CARD_BYTES: Final = {card: card_message(card).SerializeToString() for card in ALL_CARDS}
"""Each card as a serialized Card message, the piece every structured card field is written from."""
_HAND_ENTRIES: Final = {card: _embedded(_HAND, str(card).encode()) for card in ALL_CARDS}
_HAND_CARD_ENTRIES: Final = {card: _embedded(_HAND_CARDS, _CARD_BYTES[card]) for card in ALL_CARDS}
_WINNING_CARDS: Final = {card: _embedded(_TRICK_WINNING_CARD, _CARD_BYTES[card]) for card in ALL_CARDS}
_CARD_TEXTS: Final[dict[Move, bytes]] = {
    card: _embedded(_LEGAL_MOVES, str(card).encode()) for card in ALL_CARDS
}
_CARD_VALUES: Final[dict[Move, bytes]] = {
    card: _embedded(_MOVES, move_message(card, 0).SerializeToString()) for card in ALL_CARDS
}
_PLAY_MESSAGES: Final = tuple(
    {
        card: pb.Play(seat=seat, card=str(card), played_card=card_message(card)).SerializeToString()
        for card in ALL_CARDS
    }
    for seat in range(8)
)
"""Each Play there can be, serialized, by seat and card."""
_PLAYS: Final = tuple(
    {card: _embedded(_TRICK, play) for card, play in plays.items()} for plays in _PLAY_MESSAGES
)
"""Each play of the trick on the table, by seat and card."""
# Field numbers of a Trick (protos/fiftysix/v1).
_TRICK_LEADER, _TRICK_PLAYS, _TRICK_WINNER_SEAT, _TRICK_POINTS, _TRICK_WON_WITH = 1, 2, 3, 4, 5
_TRICK_PLAY_ENTRIES: Final = tuple(
    {card: _embedded(_TRICK_PLAYS, play) for card, play in plays.items()} for plays in _PLAY_MESSAGES
)
_TRICK_WINNING_CARDS: Final = {card: _embedded(_TRICK_WON_WITH, _CARD_BYTES[card]) for card in ALL_CARDS}


def _trick_entry(trick: Trick) -> bytes:
    """A completed trick as a View's `tricks` entry, written as protobuf writes a Trick (`fill_trick`'s
    message), from kept pieces."""
    payload = b"".join(
        [
            _uint(_TRICK_LEADER, trick.leader),
            *[_TRICK_PLAY_ENTRIES[play.seat][play.card] for play in trick.plays],
            _uint(_TRICK_WINNER_SEAT, trick.winner),
            _uint(_TRICK_POINTS, trick.points),
            *[_TRICK_WINNING_CARDS[play.card] for play in trick.plays if play.seat == trick.winner],
        ]
    )
    return _embedded(_TRICKS, payload)


_CALL_LISTS: dict[tuple[int, int], tuple[Sequence[Move], bytes, bytes]] = {}
_CALL_LISTS_KEPT: Final = 256
"""The engine shares one tuple per (current bid, may double): about 60 in all. More means tuples made
elsewhere, so the cache starts again rather than grow."""
_CALLS_MADE: dict[tuple[int, Call], bytes] = {}
_TRICK_STATES: dict[tuple[int, int, int], bytes] = {}
"""The led suit, trump and trick winner fields, by their values (the winner -1 while the table is
empty): at most 5 x 6 x 9."""


def _call_made(seat: int, call: Call) -> bytes:
    entry = _CALLS_MADE.get((seat, call))
    if entry is None:
        entry = _embedded(_CALLS, pb.CallMade(seat=seat, call=str(call)).SerializeToString())
        _CALLS_MADE[seat, call] = entry
    return entry


def _trick_state(led: int, trump: int, winner: int) -> bytes:
    key = (led, trump, winner)
    entry = _TRICK_STATES.get(key)
    if entry is None:
        entry = _TRICK_STATES[key] = (
            _uint(_LED_SUIT, led)
            + _uint(_TRUMP, trump)
            + (_present_uint(_TRICK_WINNER, winner) if winner >= 0 else b"")
        )
    return entry


_CALL_LEGAL: dict[tuple[Call, int], tuple[bytes, bytes]] = {}
"""Each call's `legal_moves` and `moves` entries, by the current bid a plus bid adds to (0 for the rest):
at most a few thousand."""


def _call_legal(call: Call, current: int) -> tuple[bytes, bytes]:
    key = (call, current if call.form is not None and call.form.is_plus else 0)
    entries = _CALL_LEGAL.get(key)
    if entries is None:
        entries = _CALL_LEGAL[key] = (
            _embedded(_LEGAL_MOVES, str(call).encode()),
            _embedded(_MOVES, move_message(call, current).SerializeToString()),
        )
    return entries


def _legal_bytes(legal_moves: Sequence[Move], current: int) -> tuple[bytes, bytes]:
    """A DecisionRequest's `legal_moves` and `moves` fields, each list as written. Every entry is kept,
    and the engine's tuples of legal calls whole, by identity (the tuple is held, so its id stays its
    own): the auction lists up to 395 calls."""
    if legal_moves and isinstance(legal_moves[0], Card):
        return (
            b"".join([_CARD_TEXTS[move] for move in legal_moves]),
            b"".join([_CARD_VALUES[move] for move in legal_moves]),
        )
    key = (id(legal_moves), current)
    cached = _CALL_LISTS.get(key)
    if cached is not None and cached[0] is legal_moves:
        return cached[1], cached[2]
    entries = [_call_legal(move, current) for move in legal_moves if isinstance(move, Call)]
    texts, values = b"".join([text for text, _ in entries]), b"".join([value for _, value in entries])
    if len(_CALL_LISTS) >= _CALL_LISTS_KEPT:
        _CALL_LISTS.clear()
    _CALL_LISTS[key] = (legal_moves, texts, values)
    return texts, values


class DecisionEncoder:
    """Builds the serialized DecisionRequests (whole PlaySeatRequests) of one match: each asks the seat
    to act at that moment, with that seat's view (`match.view(seat)`) and its legal moves.

    It reads the match itself, not a `View`: a view copies the public record into a new object at every
    decision, and the arena would only turn it into these bytes. Only the hand of the seat to act is
    read, so a request holds what that seat's view holds and nothing more. Within a deal the public
    record only grows or changes in known ways (calls and tricks are appended, the trick on the table
    grows until it is taken; the seats, tables and teams out change only between deals) and a hand only
    loses the cards its seat plays, so a decision costs about what is new in it; the whole view is
    written again only at a new deal. Ask for decisions in the order of the match: every one (the
    runner) or only some (the checker asks only its bot's seat's, with other moves made in between).
    """

    def __init__(self, match: Match) -> None:
        self._match = match
        self._deal: Deal | None = None
        self._clock = b""
        self._clock_sent = (-1, -1)
        self._legal_sent: tuple[Sequence[Move], int, bytes, bytes] | None = None

    def _new_deal(self, deal: Deal) -> None:
        """Forget what was kept of the last deal and write what stays the same through this one."""
        match = self._match
        self._deal = deal
        self._hands: dict[int, tuple[int, bytes, bytes]] = {}
        """Each seat's hand as last written: its size, its `hand` and its `hand_cards` fields."""
        self._head = _uint(_DEAL_NUMBER, match.deal_number) + _uint(_DEALER, deal.dealer)
        self._table = _packed(_SEATS, deal.seats) + _packed(_TABLES, match.tables)
        self._table += _packed(_TEAMS_OUT, match.teams_out)
        self._calls = b""
        self._calls_sent = 0
        self._high_sent: Bid | None = None
        self._high = self._contract = b""
        self._trump = 0
        self._tricks = b""
        self._tricks_sent = 0
        self._trick = self._trick_state = self._winning_card = b""
        self._plays_sent = 0
        self._points = _packed(_POINTS, deal.points)

    def _follow(self, deal: Deal) -> None:
        """Bring the public part up to the deal as it stands."""
        calls = deal.calls
        if len(calls) != self._calls_sent:
            self._calls += b"".join([_call_made(made.seat, made.call) for made in calls[self._calls_sent :]])
            self._calls_sent = len(calls)
            high = deal.high_bid
            if high is not self._high_sent and high is not None:
                bid = pb.View().high_bid
                bid.seat = high.seat
                bid.call = str(high.call)
                bid.number = high.number
                bid.denomination = DENOMINATION_VALUES[high.trump]
                self._high = _embedded(_HIGH_BID, bid.SerializeToString())
                self._high_sent = high
            contract = deal.contract
            if contract is not None and not self._contract:
                message = pb.View().contract
                fill_contract(message, contract)
                self._contract = _embedded(_CONTRACT, message.SerializeToString())
                self._trump = DENOMINATION_VALUES[contract.trump]
            if contract is None:  # else the play has begun, and cards may have been played since
                return
        tricks = deal.tricks
        if len(tricks) != self._tricks_sent:
            self._tricks += b"".join([_trick_entry(done) for done in tricks[self._tricks_sent :]])
            self._tricks_sent = len(tricks)
            self._points = _packed(_POINTS, deal.points)
            self._trick = b""
            self._plays_sent = 0
        plays = deal.trick
        if len(plays) != self._plays_sent:
            for play in plays[self._plays_sent :]:
                self._trick += _PLAYS[play.seat][play.card]
            self._plays_sent = len(plays)
        led = deal.led_suit
        winning = deal.winning_play
        self._trick_state = _trick_state(
            SUIT_VALUES[led] if led is not None else 0,
            self._trump,
            winning.seat if winning is not None else -1,
        )
        self._winning_card = _WINNING_CARDS[winning.card] if winning is not None else b""

    def decision(
        self, decision_id: int, legal_moves: Sequence[Move], decision_ms: int, bank_ms: int
    ) -> bytes:
        """The serialized PlaySeatRequest that asks the seat to act for a move; `legal_moves` are the
        deal's `legal_moves()`."""
        deal = self._match.deal
        if deal is not self._deal:
            self._new_deal(deal)
        self._follow(deal)
        seat = deal.to_act
        hand = deal.hands[seat]
        kept = self._hands.get(seat)
        if kept is None or kept[0] != len(hand):  # within a deal a hand only loses cards
            kept = self._hands[seat] = (
                len(hand),
                b"".join([_HAND_ENTRIES[card] for card in hand]),
                b"".join([_HAND_CARD_ENTRIES[card] for card in hand]),
            )
        view = b"".join(
            [
                _SEAT_FIELDS[seat],
                self._head,
                _TURN_FIELDS[deal.phase][seat],
                self._table,
                kept[1],
                self._calls,
                self._high,
                _DOUBLING_FIELDS[deal.doubling],
                self._contract,
                self._tricks,
                self._trick,
                self._points,
                self._trick_state,
                kept[2],
                self._winning_card,
            ]
        )
        high = deal.high_bid
        current = high.number if high is not None else 0
        sent = self._legal_sent
        if sent is not None and sent[0] is legal_moves and sent[1] == current:
            texts, values = sent[2], sent[3]
        else:
            texts, values = _legal_bytes(legal_moves, current)
            self._legal_sent = (legal_moves, current, texts, values)
        if (decision_ms, bank_ms) != self._clock_sent:
            self._clock = _uint(_DECISION_MS, decision_ms) + _uint(_BANK_MS, bank_ms)
            self._clock_sent = (decision_ms, bank_ms)
        decision = b"".join(
            [
                _DECISION_ID_KEY,
                _number(decision_id),
                _VIEW_KEY,
                _number(len(view)),
                view,
                texts,
                self._clock,
                values,
            ]
        )
        return b"".join([_REQUEST_DECISION_KEY, _number(len(decision)), decision])


def decision_request(match: Match, decision_id: int, decision_ms: int, bank_ms: int) -> pb.PlaySeatRequest:
    """The request asking the match's seat to act for a move, read back into a message, for a caller that
    reads or changes one request before it is sent (the tests); a match's decisions one after another
    are `DecisionEncoder`'s."""
    data = DecisionEncoder(match).decision(decision_id, match.legal_moves(), decision_ms, bank_ms)
    return pb.PlaySeatRequest.FromString(data)
