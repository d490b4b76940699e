"""One deal of 56: the auction (docs/rules.md#the-auction) and the play of the tricks
(docs/rules.md#the-play).

`Deal` is the engine's hot path: a mutable state with a cheap `copy()`, `legal_moves()` and `apply()`.
It knows nothing of tables or matches; `fiftysix.engine.match` settles the deal it ends with.

Each hand is kept as two ints, the set of cards it holds and the set it holds twice (`Card.bit`;
`hands.py` holds what reads and checks them): the legal plays, the follow rule and a card played are then
a few bit operations and a table look-up, and `hands` and `dealt` are built from the sets when read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Final

from fiftysix.engine.calls import (
    ALL_CALLS,
    DOUBLE,
    MAX_BID,
    PASS,
    REDOUBLE,
    REDOUBLE_CALLS,
    Call,
    CallKind,
    legal_calls,
)
from fiftysix.engine.cards import ALL_CARDS, Card, Suit, format_cards
from fiftysix.engine.errors import IllegalMoveError
from fiftysix.engine.hands import (
    MOVES_OF,
    SUIT_BITS,
    Hands,
    cards_in,
    check_hands,
    hand_of,
    is_pack,
    not_the_pack,
)
from fiftysix.engine.rules import STARTING_TABLES, MatchRules
from fiftysix.engine.values import Bid, CallMade, Contract, Move, Phase, Play, Trick
from fiftysix.engine.view import View

# An enum member read through its class costs ten times a global's lookup, and the phase is read at
# every step.
_AUCTION: Final = Phase.AUCTION
_PLAY: Final = Phase.PLAY
_FINISHED: Final = Phase.FINISHED
_BID: Final = CallKind.BID

_BIT: Final = attrgetter("bit")

_new_tuple: Final = tuple.__new__
"""Builds a named tuple from all its fields without the Python frame of its `__new__`, for the values a
deal makes at every bid and every trick."""


_PLAYS: Final = tuple(
    tuple(Play(seat, card) for card in sorted(ALL_CARDS, key=attrgetter("index"))) for seat in range(8)
)
"""Every play, by seat and `Card.index`: built once, not at every card of every playout."""

_CALLS_MADE: Final = tuple({call: CallMade(seat, call) for call in ALL_CALLS} for seat in range(8))
"""Every call made, by seat and call: built once, as `_PLAYS` are."""


class Deal:
    """The state of one deal, from the first call to the last card.

    `seats` are the players still at the table in playing order; `team_of` maps every seat of the match
    (present or not) to its team. Hands are validated against the pack for the number of players.

    One class of about 480 lines, the auction and the play together, because it is the hot path of
    every playout and every search rollout: each step reads and writes the same slots (the seat to act,
    the hands' bit sets, the trick and its winner) in methods that call each other directly, and
    splitting it into helper objects or mixins would add a call or an attribute lookup to every move.
    The tables it reads hands with, and the checks of a new deal's hands, are in `hands.py`.
    """

    __slots__ = (
        "seats",
        "team_of",
        "dealer",
        "hands",
        "_held",
        "_twice",
        "_dealt",
        "phase",
        "to_act",
        "_next",
        "calls",
        "high_bid",
        "_passes",
        "_doubling",
        "_doubler",
        "_redoublers",
        "contract",
        "trick",
        "tricks",
        "points",
        "trump",
        "_led",
        "_led_bits",
        "_winning_seat",
        "_winning_card",
        "_trick_points",
    )

    seats: tuple[int, ...]
    team_of: tuple[int, ...]
    dealer: int
    hands: Sequence[list[Card]]
    """Each seat's cards (by seat; empty for a seat not at the table), sorted spades, hearts, diamonds,
    clubs and high to low: a live view of `_held` and `_twice` that builds a seat's list when read."""
    _held: list[int]
    """Each seat's distinct cards as a set of `Card.bit`s: what legal plays and the follow rule read, and
    with `_twice` the whole hand (`hands`)."""
    _twice: list[int]
    """The cards each seat holds both copies of (of the double pack), as a set of `Card.bit`s."""
    _dealt: tuple[tuple[int, ...], tuple[int, ...]]
    """`_held` and `_twice` as dealt (`dealt`)."""
    phase: Phase
    to_act: int
    _next: tuple[int, ...]
    calls: list[CallMade]
    high_bid: Bid | None
    _passes: int
    _doubling: int
    _doubler: int | None
    _redoublers: list[int]
    contract: Contract | None
    trick: list[Play]
    tricks: list[Trick]
    points: list[int]
    trump: Suit | None
    """The contract's trump suit; None for no trumps, and while the auction is on."""
    _led: Suit
    """The suit led to the trick on the table (left over from the last trick when it is empty)."""
    _led_bits: int
    """The bits of the suit led (`SUIT_BITS`), to test a set of cards held for it."""
    _winning_seat: int
    _winning_card: Card
    """The play winning the trick on the table so far, by seat and card (left over from the last trick
    when the table is empty)."""
    _trick_points: int

    def __init__(
        self,
        seats: Sequence[int],
        team_of: Sequence[int],
        dealer: int,
        hands: Mapping[int, Sequence[Card]],
    ) -> None:
        self.seats = tuple(seats)
        self.team_of = tuple(team_of)
        if dealer not in self.seats:
            raise ValueError(f"the dealer must be a seat at the table {self.seats}, got {dealer}")
        self.dealer = dealer
        self._next = _next_seats(self.seats, len(self.team_of))
        check_hands(self.seats, hands)
        self._set_hands(hands)
        if not is_pack(self._held, self._twice, len(self.seats)):
            raise not_the_pack(self.seats, hands)
        self._dealt = (tuple(self._held), tuple(self._twice))
        self.phase = _AUCTION
        self.to_act = self._next[dealer]
        self.calls = []
        self.high_bid = None
        self._passes = 0
        self._doubling = 1
        self._doubler = None
        self._redoublers = []
        self.contract = None
        self.trick = []
        self.tricks = []
        self.points = [0] * (max(self.team_of) + 1)
        self.trump = None
        self._led = Suit.SPADES
        self._led_bits = 0
        self._winning_seat = -1
        self._winning_card = ALL_CARDS[0]
        self._trick_points = 0

    @classmethod
    def from_view(cls, view: View, hands: Mapping[int, Sequence[Card]]) -> Deal:
        """The deal as it stands in `view`, with `hands` the cards still held by the other seats at the
        table (the view's own hand is its seat's): a determinization for search, which then plays on.

        The auction is replayed (its rules stay in one place); completed tricks are taken as recorded.
        :raises ValueError: when `hands` do not fit the view: a size, a card that is not unseen, or a card
            of a suit its seat has shown out of.
        """
        if view.seat in hands:
            raise ValueError(f"seat {view.seat}'s hand comes from the view, not from `hands`")
        held = {seat: list(hands.get(seat, ())) for seat in view.seats}
        held[view.seat] = list(view.hand)
        for seat, suits in view.voids.items():
            for card in held[seat]:
                if card.suit in suits:
                    raise ValueError(f"seat {seat} has shown out of {card.suit.plural} but is given {card}")
        on_table: dict[int, list[Card]] = {seat: [] for seat in view.seats}
        for play in view.trick:
            on_table[play.seat].append(play.card)
        dealt = {seat: held[seat] + on_table[seat] for seat in view.seats}
        for trick in view.tricks:
            for play in trick.plays:
                dealt[play.seat].append(play.card)
        deal = cls(view.seats, view.team_of, view.dealer, dealt)
        for made in view.calls:
            deal.apply(made.seat, made.call)
        if view.tricks:
            deal.tricks = list(view.tricks)
            for trick in view.tricks:
                deal.points[deal.team_of[trick.winner]] += trick.points
            deal.to_act = view.tricks[-1].winner
        if view.tricks or view.trick:
            deal._set_hands({seat: held[seat] + on_table[seat] for seat in view.seats})
            for play in view.trick:
                deal._take(play.seat, play.card)
            if not any(deal._held):
                deal.phase = _FINISHED
        return deal

    def view(
        self,
        seat: int,
        rules: MatchRules,
        tables: Sequence[int] = (),
        teams_out: tuple[int, ...] = (),
        deal_number: int = 1,
    ) -> View:
        """What `seat` may know now: its own hand and everything public. The match's facts (rules, each
        team's tables, the teams out, the deal's number) come from the caller: a deal does not keep them.
        `tables` defaults to the starting tables of every team."""
        if not 0 <= seat < len(self.team_of):
            raise ValueError(f"no seat {seat} in a {len(self.team_of)}-player match")
        finished = self.phase is _FINISHED
        return View(
            seat=seat,
            rules=rules,
            team_of=self.team_of,
            seats=self.seats,
            tables=tuple(tables) if tables else (STARTING_TABLES,) * rules.team_count,
            teams_out=teams_out,
            deal_number=deal_number,
            dealer=self.dealer,
            phase=self.phase,
            to_act=None if finished else self.to_act,
            hand=tuple(hand_of(self._held[seat], self._twice[seat])),
            calls=tuple(self.calls),
            high_bid=self.high_bid,
            doubling=self._doubling,
            contract=self.contract,
            tricks=tuple(self.tricks),
            trick=tuple(self.trick),
            points=tuple(self.points),
            legal_moves=tuple(self.legal_moves()) if not finished and self.to_act == seat else (),
        )

    def copy(self) -> Deal:
        """An independent copy, for search and for trying moves."""
        other = object.__new__(Deal)
        for name in Deal.__slots__:
            object.__setattr__(other, name, getattr(self, name))
        other._held = list(self._held)
        other._twice = list(self._twice)
        other.hands = Hands(other._held, other._twice)
        other.calls = list(self.calls)
        other._redoublers = list(self._redoublers)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.points = list(self.points)
        return other

    @property
    def dealt(self) -> tuple[tuple[Card, ...], ...]:
        """Each seat's hand as dealt (by seat; empty for a seat not at the table), sorted."""
        held, twice = self._dealt
        return tuple(tuple(hand_of(*sets)) for sets in zip(held, twice, strict=True))

    def card_sets(self, seat: int) -> tuple[int, int]:
        """The cards `seat` holds and those it holds twice, as sets of `Card.bit`s: search code counts
        cards with them (a suit's bits are `SUIT_BITS[suit]`) without building hands."""
        return self._held[seat], self._twice[seat]

    @property
    def next_seat(self) -> tuple[int, ...]:
        """For each seat at the table, the next seat in playing order (-1 for seats not at the table)."""
        return self._next

    @property
    def doubling(self) -> int:
        """1, or 2 once doubled, or 4 once redoubled."""
        return self._doubling

    @property
    def in_redouble_window(self) -> bool:
        """Whether the auction is waiting for the contracting team to redouble or pass."""
        return bool(self._redoublers)

    @property
    def led_suit(self) -> Suit | None:
        """The suit led to the trick on the table, or None when the table is empty."""
        return self._led if self.trick else None

    @property
    def winning_play(self) -> Play | None:
        """The play winning the trick on the table so far, or None when the table is empty: the highest
        trump if any trump was played, else the highest card of the suit led (of two identical cards, the
        first played)."""
        return _PLAYS[self._winning_seat][self._winning_card.index] if self.trick else None

    @property
    def trick_points(self) -> int:
        """The card points in the trick on the table (0 when the table is empty)."""
        return self._trick_points if self.trick else 0

    def legal_moves(self) -> Sequence[Move]:
        """Every legal move for the seat to act, without repeats, in a stable order.

        Cards are listed spades, hearts, diamonds, clubs and high to low; calls as in `legal_calls`.
        Empty once the deal is finished.
        """
        if self.phase is _PLAY:
            held = self._held[self.to_act]
            if self.trick:
                following = held & self._led_bits
                if following:
                    return MOVES_OF[following]
            return cards_in(held)
        if self.phase is _AUCTION:
            if self._redoublers:
                return REDOUBLE_CALLS
            high = self.high_bid
            if high is None:
                return legal_calls(0, False)
            can_double = self._doubling == 1 and self.team_of[high.seat] != self.team_of[self.to_act]
            return legal_calls(high.number, can_double)
        return ()

    def apply(self, seat: int, move: Move) -> None:
        """Make `move` for `seat`, which must be the seat to act.

        :raises IllegalMoveError: when it is not `seat`'s turn or the move breaks a rule; the state is
            then unchanged.
        """
        phase = self.phase
        if seat != self.to_act or phase is _FINISHED:
            if phase is _FINISHED:
                raise IllegalMoveError("deal_finished", f"the deal is over; seat {seat} cannot play {move}")
            raise IllegalMoveError("turn", f"it is seat {self.to_act}'s turn, not seat {seat}'s")
        if phase is _PLAY:
            if not isinstance(move, Card):
                raise IllegalMoveError("play_a_card", f"the auction is over: play a card, not {move}")
            held = self._held[seat]
            if not held & move.bit:
                holds = format_cards(hand_of(held, self._twice[seat]))
                raise IllegalMoveError("play_own_card", f"seat {seat} does not hold {move}: holds {holds}")
            if self.trick and move.suit is not self._led and held & self._led_bits:
                first = MOVES_OF[held & self._led_bits][0]
                raise IllegalMoveError(
                    "follow_suit", f"must follow {self._led.plural}: holds {first}, played {move}"
                )
            self._take(seat, move)
        else:
            if not isinstance(move, Call):
                raise IllegalMoveError("call_in_auction", f"the auction is on: make a call, not {move}")
            self._call(seat, move)

    def apply_trusted(self, move: Move) -> None:
        """Play `move` for the seat to act without checking that it is legal: for search rollouts, whose
        moves come from `legal_moves()`. Calls are still checked (an auction is short; the play is what
        rollouts repeat). An illegal card corrupts the deal, so nothing that takes moves from a bot
        calls this: the arena always goes through `apply` (tests/test_layering.py keeps it so)."""
        if self.phase is _PLAY and isinstance(move, Card):
            self._take(self.to_act, move)
        else:
            self.apply(self.to_act, move)

    def _set_hands(self, hands: Mapping[int, Sequence[Card]]) -> None:
        """Keep each seat's cards as the set it holds and the set it holds twice (seats not in `hands`
        hold none). Three of a card in a hand leave sets that `is_pack` refuses (the carry of a sum)."""
        held = self._held = [0] * len(self.team_of)
        twice = self._twice = [0] * len(self.team_of)
        self.hands = Hands(held, twice)
        for seat, hand in hands.items():
            bits = list(map(_BIT, hand))
            once = held[seat] = sum(set(bits))
            twice[seat] = sum(bits) - once

    # The auction.

    def _call(self, seat: int, call: Call) -> None:
        if self._redoublers:
            self._call_in_redouble_window(seat, call)
            return
        if call is PASS:
            self.calls.append(_CALLS_MADE[seat][call])
            self._passes += 1
            if self.high_bid is None:
                if self._passes == len(self.seats):
                    self._all_passed()
                    return
            elif self._passes == len(self.seats) - 1:
                self._close_auction()
                return
            self.to_act = self._next[seat]
        elif call.kind is _BID:
            self._bid(seat, call)
        elif call is DOUBLE:
            high = self.high_bid
            if high is None:
                raise IllegalMoveError("double_needs_bid", "there is no bid to double yet")
            if self.team_of[high.seat] == self.team_of[seat]:
                raise IllegalMoveError(
                    "double_opponents_bid",
                    f"only an opponent's bid may be doubled: {high.call} was bid by seat {high.seat}, "
                    f"of seat {seat}'s own team",
                )
            self.calls.append(_CALLS_MADE[seat][call])
            self._doubling = 2
            self._doubler = seat
            team = self.team_of[high.seat]
            redoublers = []
            other = self._next[seat]
            while other != seat:
                if self.team_of[other] == team:
                    redoublers.append(other)
                other = self._next[other]
            self._redoublers = redoublers
            self.to_act = redoublers[0]
        else:
            raise IllegalMoveError(
                "redouble_after_double", "redouble is only allowed to the contracting team after a double"
            )

    def _bid(self, seat: int, call: Call) -> None:
        high = self.high_bid
        if high is None:
            if call.is_plus:
                raise IllegalMoveError(
                    "plus_after_first_bid", f"{call} needs a bid to add to; nobody has bid yet"
                )
            current = 0
            number = call.number
        else:
            current = high.number
            number = current + call.number if call.is_plus else call.number
        if number <= current:
            raise IllegalMoveError(
                "bid_higher", f"a bid must be higher than the current bid {high.call if high else ''}: {call}"
            )
        if number > MAX_BID:
            raise IllegalMoveError(
                "bid_at_most_56", f"{call} over {current} would make {number}; the highest bid is {MAX_BID}"
            )
        self.calls.append(_CALLS_MADE[seat][call])
        self.high_bid = _new_tuple(Bid, (seat, call, number, call.suit))
        self._passes = 0
        self.to_act = self._next[seat]

    def _call_in_redouble_window(self, seat: int, call: Call) -> None:
        if call is REDOUBLE:
            self.calls.append(_CALLS_MADE[seat][call])
            self._doubling = 4
            self._close_auction(redoubler=seat)
        elif call is PASS:
            self.calls.append(_CALLS_MADE[seat][call])
            self._redoublers.pop(0)
            if self._redoublers:
                self.to_act = self._redoublers[0]
            else:
                self._close_auction()
        else:
            raise IllegalMoveError(
                "redouble_or_pass",
                f"after a double the contracting team may only redouble or pass, not {call}",
            )

    def _all_passed(self) -> None:
        bidder = self._next[self.dealer]
        self._start_play(Contract(28, None, bidder, self.team_of[bidder], 1, None))

    def _close_auction(self, redoubler: int | None = None) -> None:
        high = self.high_bid
        assert high is not None
        self._redoublers = []
        self._start_play(
            Contract(
                high.number,
                high.trump,
                high.seat,
                self.team_of[high.seat],
                self._doubling,
                high,
                self._doubler,
                redoubler,
            )
        )

    def _start_play(self, contract: Contract) -> None:
        self.contract = contract
        self.trump = contract.trump
        self.phase = _PLAY
        self.to_act = self._next[self.dealer]

    # The play.

    def _take(self, seat: int, card: Card) -> None:
        """`seat` plays `card`, already known to be legal: the one place where a card changes the deal."""
        bit = card.bit
        twice = self._twice
        if twice[seat] & bit:
            twice[seat] ^= bit
        else:
            self._held[seat] ^= bit
        trick = self.trick
        suit = card.suit
        if trick:
            winning = self._winning_card
            if suit is winning.suit:
                if card.rank > winning.rank:
                    self._winning_card = card
                    self._winning_seat = seat
            elif suit is self.trump:
                self._winning_card = card
                self._winning_seat = seat
            points = self._trick_points + card.points
        else:
            self._led = suit
            self._led_bits = SUIT_BITS[suit]
            self._winning_card = card
            self._winning_seat = seat
            points = card.points
        trick.append(_PLAYS[seat][card.index])
        if len(trick) < len(self.seats):
            self._trick_points = points
            self.to_act = self._next[seat]
            return
        winner = self._winning_seat
        self.tricks.append(_new_tuple(Trick, (trick[0].seat, tuple(trick), winner, points)))
        self.points[self.team_of[winner]] += points
        self.trick = []
        self.to_act = winner
        if not self._held[seat]:
            self.phase = _FINISHED

    @property
    def made(self) -> bool:
        """Whether the contracting team took at least the contract's number of points (once finished)."""
        contract = self.contract
        if contract is None or self.phase is not _FINISHED:
            raise ValueError("the deal is not finished")
        return self.points[contract.team] >= contract.number


_NEXT_SEATS: dict[tuple[tuple[int, ...], int], tuple[int, ...]] = {}


def _next_seats(seats: tuple[int, ...], seat_count: int) -> tuple[int, ...]:
    """For each of `seat_count` seats, the next of `seats` in playing order (-1 when not at the table);
    kept per table, and the table checked once, since a search builds thousands of deals at the same one.

    :raises ValueError: when `seats` are not distinct seats of the match.
    """
    key = (seats, seat_count)
    found = _NEXT_SEATS.get(key)
    if found is None:
        if len(set(seats)) != len(seats) or not all(0 <= seat < seat_count for seat in seats):
            raise ValueError(f"seats at the table must be distinct seats 0..{seat_count - 1}, got {seats}")
        following = {seat: seats[(i + 1) % len(seats)] for i, seat in enumerate(seats)}
        found = _NEXT_SEATS[key] = tuple(following.get(seat, -1) for seat in range(seat_count))
    return found
