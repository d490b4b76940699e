"""Hands for the other seats, drawn at random consistently with one seat's view: what a search bot
plays out (determinized, or "perfect information", Monte Carlo).

A draw is consistent when each seat gets as many cards as it still holds, the cards are exactly the
unseen ones, and no seat gets a card of a suit it has shown out of. `Deal.from_view` turns a draw into a
deal to play on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Final

from fiftysix.engine.cards import Card, Suit
from fiftysix.engine.view import View

Hands = dict[int, list[Card]]
"""Cards held by each other seat at the table."""

MAX_TRIES = 200
"""Draws tried before giving up: for a real view a draw is rarely refused more than a few times."""
QUICK_TRIES = 3
"""Quick draws tried before each draw checks that the cards left can still be dealt."""


def sample_hands(
    view: View,
    rng: random.Random,
    accept: Callable[[Mapping[int, list[Card]]], bool] | None = None,
    tries: int = MAX_TRIES,
) -> Hands:
    """A random consistent draw of the other seats' hands.

    Cards of suits that nobody has shown out of are dealt by one shuffle, so without voids every
    consistent draw is equally likely; cards of the other suits go first, one at a time, to the seats
    that may hold them, in proportion to the room each has left (close to uniform).
    `accept` may weigh a draw by what the auction suggests: a draw it refuses is drawn again (rejection
    sampling), up to `tries` times, after which the last consistent draw is returned anyway.

    :raises ValueError: when no consistent draw turned up in `tries` attempts (the view is inconsistent).
    """
    others = [seat for seat in view.seats if seat != view.seat]
    voids = view.voids
    takers = {suit: [seat for seat in others if suit not in voids[seat]] for suit in Suit}
    constrained = {suit for suit in Suit if len(takers[suit]) < len(others)}
    unseen = view.unseen_cards
    hard = [card for card in unseen if card.suit in constrained]
    easy = [card for card in unseen if card.suit not in constrained]
    room = {seat: view.cards_left[seat] for seat in others}
    last: Hands | None = None
    for attempt in range(tries):
        # A quick draw can paint itself into a corner late in a deal with many voids; the careful one
        # never does, at ten times the cost.
        careful = attempt >= QUICK_TRIES
        hands = _draw(others, room, takers, hard, easy, rng, careful)
        if hands is None:
            continue
        if accept is None or accept(hands):
            return hands
        last = hands
    if last is None:
        raise ValueError(f"no deal of the unseen cards fits seat {view.seat}'s view")
    return last


def _draw(
    others: list[int],
    room: Mapping[int, int],
    takers: Mapping[Suit, list[int]],
    hard: list[Card],
    easy: list[Card],
    rng: random.Random,
    careful: bool,
) -> Hands | None:
    """One attempt: None when the cards of the constrained suits left some card without a seat. A
    `careful` attempt gives a card only to a seat that leaves the rest dealable, so it fails only when
    no consistent draw exists."""
    left = dict(room)
    hands: Hands = {seat: [] for seat in others}
    hard = list(hard)
    rng.shuffle(hard)
    hard.sort(key=lambda card: len(takers[card.suit]))  # the most constrained first; stable, so random within
    supply = dict.fromkeys(Suit, 0)
    for card in (*hard, *easy):
        supply[card.suit] += 1
    for card in hard:
        seats = [seat for seat in takers[card.suit] if left[seat]]
        if careful:
            seats = [seat for seat in seats if _dealable(supply, left, takers, card.suit, seat)]
        if not seats:
            return None
        seat = seats[0] if len(seats) == 1 else rng.choices(seats, [left[seat] for seat in seats])[0]
        hands[seat].append(card)
        left[seat] -= 1
        supply[card.suit] -= 1
    easy = list(easy)
    rng.shuffle(easy)
    start = 0
    for seat in others:
        hands[seat] += easy[start : start + left[seat]]
        start += left[seat]
    return hands


_SUIT_SETS: Final = [[suit for suit in Suit if mask >> suit & 1] for mask in range(1, 1 << len(Suit))]


def _dealable(
    supply: Mapping[Suit, int],
    left: Mapping[int, int],
    takers: Mapping[Suit, list[int]],
    suit: Suit,
    seat: int,
) -> bool:
    """Whether the cards left can still be dealt after `seat` takes one of `suit`: by Hall's theorem,
    when every set of suits has no more cards than the seats that may take them have room."""
    for suits in _SUIT_SETS:
        cards = sum(supply[each] for each in suits) - (suit in suits)
        seats = {taker for each in suits for taker in takers[each]}
        if cards > sum(left[taker] for taker in seats) - (seat in seats):
            return False
    return True
