"""A hand as two ints: the set of cards it holds and the set it holds twice (`Card.bit`s), as `Deal`
keeps it. Following suit is then one table look-up (`MOVES_OF`), a card played a few bit operations, and
a hand as cards (`hand_of`, `Hands`) is built only when read; whether hands are the pack is a count of
bits (`is_pack`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Final, overload

from fiftysix.engine.cards import ALL_CARDS, SORT_KEY, Card, Suit, format_cards, hand_size_for, pack_for

SUIT_BITS: Final = tuple(0xFF << 8 * suit for suit in Suit)
"""The bits of each suit's cards in a set of cards held (`Card.bit`)."""

MOVES_OF: Final = {
    pattern << 8 * suit: tuple(
        card for card in ALL_CARDS[8 * suit : 8 * suit + 8] if pattern << 8 * suit & card.bit
    )
    for suit in Suit
    for pattern in range(256)
}
"""The distinct cards in any set of cards of one suit, in display order: the legal plays to follow
suit are one look-up, where filtering the hand would cost a list, a dict and a tuple at every card."""


def cards_in(held: int) -> tuple[Card, ...]:
    """The distinct cards in a set of cards (`Card.bit`s), in display order."""
    moves = MOVES_OF
    return moves[held & 0xFF] + moves[held & 0xFF00] + moves[held & 0xFF0000] + moves[held & 0xFF000000]


def hand_of(held: int, twice: int) -> list[Card]:
    """A hand in display order, from the set of cards it holds and the set of those it holds twice: one
    look-up a suit, for a host reads the hand of the seat to act at every decision."""
    parts = _HAND_PARTS
    try:
        return [
            *parts[held & 0xFF | (twice & 0xFF) << 32],
            *parts[held & 0xFF00 | (twice & 0xFF00) << 32],
            *parts[held & 0xFF0000 | (twice & 0xFF0000) << 32],
            *parts[held & 0xFF000000 | (twice & 0xFF000000) << 32],
        ]
    except KeyError:  # a suit not seen in this shape yet
        for bits in SUIT_BITS:
            key = held & bits | (twice & bits) << 32
            if key not in parts:
                parts[key] = tuple(sorted(cards_in(held & bits) + cards_in(twice & bits), key=SORT_KEY))
        return hand_of(held, twice)


_HAND_PARTS: Final[dict[int, tuple[Card, ...]]] = {}
"""The cards of one suit of a hand, by the suit's part of the set held and of the set held twice (`held |
twice << 32`): kept as they turn up (at most 3 ** 8 a suit), since search bots read hands at every step."""


class Hands(Sequence[list[Card]]):
    """`Deal.hands`: a host reads one seat's hand at every decision, so only that one is built. It
    reads the deal's lists of sets, which a card played changes in place."""

    __slots__ = ("_held", "_twice")

    def __init__(self, held: list[int], twice: list[int]) -> None:
        self._held = held
        self._twice = twice

    def __len__(self) -> int:
        return len(self._held)

    @overload
    def __getitem__(self, seat: int) -> list[Card]: ...
    @overload
    def __getitem__(self, seat: slice) -> list[list[Card]]: ...
    def __getitem__(self, seat: int | slice) -> list[Card] | list[list[Card]]:
        if isinstance(seat, slice):
            return [hand_of(*sets) for sets in zip(self._held[seat], self._twice[seat], strict=True)]
        return hand_of(self._held[seat], self._twice[seat])

    def __repr__(self) -> str:
        return repr(list(self))


def check_hands(seats: tuple[int, ...], hands: Mapping[int, Sequence[Card]]) -> None:
    """Hands go to seats at the table (checked by `_next_seats`), as many cards to each as the pack for
    them gives; that they are the pack is `is_pack`'s test."""
    strays = hands.keys() - set(seats)
    if strays:
        raise ValueError(f"hands given for seats not at the table: {sorted(strays)}")
    size = hand_size_for(len(seats))
    for seat in seats:
        hand = hands.get(seat, ())
        if len(hand) != size:
            raise ValueError(f"seat {seat} must be dealt {size} cards, got {len(hand)}")


def is_pack(held: list[int], twice: list[int], players: int) -> bool:
    """Whether hands of the right sizes, as sets held and held twice (`Deal._set_hands`), are the pack
    for `players`: every card of the pack counted exactly twice, as a counter of bits in parallel. A hand
    with three of a card counts fewer cards than it has (its sets carry), so it never passes: a search
    deals thousands of deals, and this is all ints."""
    one = two = over = 0
    for bits in chain(held, twice):
        over |= two & bits
        two |= one & bits
        one |= bits
    return not over and one == two == PACK_BITS[players]


def not_the_pack(seats: tuple[int, ...], hands: Mapping[int, Sequence[Card]]) -> ValueError:
    """The error for hands that are not the pack: what is extra and what is missing."""
    dealt = sorted((card for seat in seats for card in hands[seat]), key=SORT_KEY)
    pack = list(pack_for(len(seats)))
    extra = _multiset_difference(dealt, pack)
    missing = _multiset_difference(pack, dealt)
    return ValueError(
        f"the hands are not the {len(pack)}-card pack for {len(seats)} players: "
        f"extra {format_cards(extra) or 'none'}, missing {format_cards(missing) or 'none'}"
    )


PACK_BITS: Final = {players: sum({card.bit for card in pack_for(players)}) for players in (4, 6, 8)}
"""The distinct cards of each pack, as a set of `Card.bit`s."""


def _multiset_difference(cards: list[Card], minus: list[Card]) -> list[Card]:
    remaining = list(minus)
    extra = []
    for card in cards:
        if card in remaining:
            remaining.remove(card)
        else:
            extra.append(card)
    return extra
