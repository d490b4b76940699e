"""Shared builders for the engine tests: tables of seats, hand-built deals, scripted auctions.

Kept as a plain module (not fixtures) so that table-driven tests can call the builders inside their
parameter lists and so that every helper is typed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from fiftysix.engine import (
    DOUBLE,
    PASS,
    REDOUBLE,
    Call,
    Card,
    Deal,
    DealResult,
    IllegalMoveError,
    Match,
    MatchRules,
    Move,
    Phase,
    Ruleset,
    Suit,
    hand_size_for,
    legal_calls,
    pack_for,
    parse_call,
    parse_cards,
)

PLAYER_COUNTS = (4, 6, 8)
RULESETS = (Ruleset.PAIRS, Ruleset.PARTNERSHIP)

ALL_CALLS: tuple[Call, ...] = tuple(
    dict.fromkeys((*legal_calls(0, True), *legal_calls(28, True), PASS, DOUBLE, REDOUBLE))
)
"""Every call there is: the plain bids from 28 up, every plus bid, pass, double and redouble."""


def team_of_seats(players: int, ruleset: Ruleset = Ruleset.PAIRS) -> tuple[int, ...]:
    """The team of every seat, written out from docs/rules.md#players-seats-and-teams (not from the
    engine)."""
    teams = 2 if ruleset is Ruleset.PARTNERSHIP else players // 2
    return tuple(seat % teams for seat in range(players))


def next_seat(seat: int, players: int) -> int:
    """The seat to the right of `seat` at a full table."""
    return (seat + 1) % players


def build_hands(
    players: int,
    required: Mapping[int, str] | None = None,
    void: Mapping[int, Iterable[Suit]] | None = None,
) -> dict[int, list[Card]]:
    """Hands for a full table of `players`: each seat holds its `required` cards, holds no card of the
    suits in its `void`, and the rest of the pack fills the hands.

    Suits with the fewest seats allowed to hold them are placed first, each card to the allowed seat
    with the most room, which is enough for every hand the tests ask for.
    """
    required = required or {}
    void_suits = {seat: set(suits) for seat, suits in (void or {}).items()}
    size = hand_size_for(players)
    hands: dict[int, list[Card]] = {seat: parse_cards(required.get(seat, "")) for seat in range(players)}
    remaining = list(pack_for(players))
    for hand in hands.values():
        for card in hand:
            remaining.remove(card)

    def allowed(suit: Suit) -> list[int]:
        return [seat for seat in range(players) if suit not in void_suits.get(seat, set())]

    for suit in sorted(Suit, key=lambda suit: len(allowed(suit))):
        for card in [card for card in remaining if card.suit is suit]:
            seats = [seat for seat in allowed(suit) if len(hands[seat]) < size]
            if not seats:
                raise AssertionError(f"cannot place {card}: the voids leave no room for it")
            seat = max(seats, key=lambda seat: size - len(hands[seat]))
            hands[seat].append(card)
    for seat, hand in hands.items():
        assert len(hand) == size, f"seat {seat} got {len(hand)} cards"
        assert not {card.suit for card in hand} & void_suits.get(seat, set()), f"seat {seat} not void"
    return hands


def make_deal(
    players: int,
    dealer: int,
    hands: Mapping[int, Sequence[Card]] | None = None,
    ruleset: Ruleset = Ruleset.PAIRS,
) -> Deal:
    """A deal at a full table; the hands default to any valid deal of the pack."""
    return Deal(
        range(players),
        team_of_seats(players, ruleset),
        dealer,
        hands if hands is not None else build_hands(players),
    )


def make_calls(deal: Deal, calls: str) -> None:
    """Make the space-separated `calls`, each by the seat to act."""
    for text in calls.split():
        deal.apply(deal.to_act, parse_call(text))


def rule_broken(deal: Deal, seat: int, move: Move) -> str:
    """The `rule` of the IllegalMoveError that `move` by `seat` raises (fails if it is legal)."""
    try:
        deal.apply(seat, move)
    except IllegalMoveError as error:
        return error.rule
    raise AssertionError(f"{move} by seat {seat} was accepted")


def deal_for_trick(players: int, contract: str, plays: str) -> Deal:
    """A deal in which seat 0 bids `contract`, everybody passes, and seat 0 leads the first trick.

    Seat `i` holds the `i`-th card of `plays`, and is void in the suit led whenever it does not follow.
    """
    cards = parse_cards(plays)
    led = cards[0].suit
    hands = build_hands(
        players,
        required={seat: str(card) for seat, card in enumerate(cards)},
        void={seat: [led] for seat, card in enumerate(cards) if card.suit is not led},
    )
    deal = make_deal(players, players - 1, hands)
    make_calls(deal, contract + " pass" * (players - 1))
    assert deal.phase is Phase.PLAY
    assert deal.to_act == 0
    return deal


def play_out(deal: Deal) -> None:
    """Finish the play of `deal`, each seat playing its first legal card."""
    while deal.phase is Phase.PLAY:
        deal.apply(deal.to_act, deal.legal_moves()[0])


def snapshot(deal: Deal) -> tuple[object, ...]:
    """Everything observable about a deal, for checking that a rejected move changed nothing."""
    return (
        deal.phase,
        deal.to_act,
        tuple(tuple(hand) for hand in deal.hands),
        tuple(deal.calls),
        deal.high_bid,
        deal.doubling,
        deal.in_redouble_window,
        deal.contract,
        tuple(deal.trick),
        tuple(deal.tricks),
        tuple(deal.points),
        tuple(deal.legal_moves()),
    )


class StrongSeatDeals:
    """A `DealSource` in which one seat holds the top spades: as many as a hand holds (all twelve with
    four players), so that seat wins every trick of a spades contract and its team takes all 56 points.

    The strong seat of each deal is given by deal number; by default it is the first leader (the
    dealer's right), who then also sweeps a no-trumps contract (such as the one after all pass).
    """

    def __init__(self, strong: Mapping[int, int] | None = None) -> None:
        self.strong = dict(strong or {})
        self.dealt: list[tuple[int, tuple[int, ...], int]] = []

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> dict[int, list[Card]]:
        """Top spades to the strong seat, the rest of the pack round the other seats."""
        self.dealt.append((deal_number, seats, dealer))
        leader = seats[(seats.index(dealer) + 1) % len(seats)]
        strong = self.strong.get(deal_number, leader)
        pack = list(pack_for(len(seats)))  # sorted: spades first, high to low
        size = hand_size_for(len(seats))
        others = [seat for seat in seats if seat != strong]
        hands: dict[int, list[Card]] = {strong: pack[:size]}
        for i, seat in enumerate(others):
            hands[seat] = pack[size + i :: len(others)]
        return hands


def make_match(
    players: int,
    first_dealer: int,
    tables: Sequence[int] | None = None,
    ruleset: Ruleset = Ruleset.PAIRS,
    deal_cap: int | None = None,
    strong: Mapping[int, int] | None = None,
) -> Match:
    """A match dealt by `StrongSeatDeals`, optionally starting from the given tables."""
    match = Match(
        MatchRules(players, ruleset, deal_cap),
        seed=0,
        deals=StrongSeatDeals(strong),
        first_dealer=first_dealer,
    )
    if tables is not None:
        match.tables = list(tables)
    return match


def finish_deal(match: Match, calls: str = "") -> DealResult:
    """Make `calls` (passes are added until the auction ends), then play out with first legal cards."""
    deal_number = match.deal_number
    for text in calls.split():
        assert match.to_act is not None
        assert match.apply(match.to_act, parse_call(text)) is None
    while True:
        assert match.to_act is not None
        assert match.deal_number == deal_number
        move = PASS if match.deal.phase is Phase.AUCTION else match.legal_moves()[0]
        result = match.apply(match.to_act, move)
        if result is not None:
            return result
