"""Cards of 56: suits, ranks, points, the packs, and their canonical notation (docs/rules.md#the-cards,
docs/rules.md#writing-cards).

Every `Card` is interned: `Card(Rank.JACK, Suit.SPADES) is JS`. The two copies of a card in the double
pack are the same value, which is exactly the rule "two cards of the same rank and suit are identical".
"""

from __future__ import annotations

from enum import IntEnum
from operator import attrgetter
from typing import Any, Final

from fiftysix.engine.errors import NotationError, quoted


class Suit(IntEnum):
    """The four suits, in the order used for sorting hands and listing moves."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        """The suit's letter in canonical notation: S, H, D or C."""
        return _SUIT_LETTERS[self]

    @property
    def plural(self) -> str:
        """The suit's English name, lower case (for messages)."""
        return self.name.lower()


class Rank(IntEnum):
    """Ranks valued by strength within a suit: a higher value beats a lower one."""

    SEVEN = 0
    EIGHT = 1
    QUEEN = 2
    KING = 3
    TEN = 4
    ACE = 5
    NINE = 6
    JACK = 7

    @property
    def letter(self) -> str:
        """The rank's character in canonical notation: J 9 A T K Q 8 7."""
        return _RANK_LETTERS[self]

    @property
    def points(self) -> int:
        """Card points: J = 3, 9 = 2, A = 1, 10 = 1, others 0."""
        return _RANK_POINTS[self]


_SUIT_LETTERS: Final = {Suit.SPADES: "S", Suit.HEARTS: "H", Suit.DIAMONDS: "D", Suit.CLUBS: "C"}
_RANK_LETTERS: Final = {
    Rank.JACK: "J",
    Rank.NINE: "9",
    Rank.ACE: "A",
    Rank.TEN: "T",
    Rank.KING: "K",
    Rank.QUEEN: "Q",
    Rank.EIGHT: "8",
    Rank.SEVEN: "7",
}
_RANK_POINTS: Final = {Rank.JACK: 3, Rank.NINE: 2, Rank.ACE: 1, Rank.TEN: 1}
_RANK_POINTS.update({rank: 0 for rank in Rank if rank not in _RANK_POINTS})


class Card:
    """One card: a rank of a suit. Interned, immutable, hashable, ordered for sorting hands.

    `sort_key` orders spades, hearts, diamonds, clubs and, within a suit, high to low; that is the
    order in which hands are shown and legal plays are listed.
    """

    __slots__ = ("rank", "suit", "points", "index", "bit", "sort_key", "_text")

    rank: Rank
    suit: Suit
    points: int
    index: int
    bit: int
    """`1 << sort_key`: a set of distinct cards is an int, as `Deal` keeps each hand. Sevens and eights
    take the top bits of their suit, so a set of cards of the 48-card pack fits in 30 bits, the ints that
    Python adds and masks fastest."""
    sort_key: int
    _text: str

    def __new__(cls, rank: Rank, suit: Suit) -> Card:
        return _CARDS[suit * 8 + rank]

    @classmethod
    def _make(cls, rank: Rank, suit: Suit) -> Card:
        card = object.__new__(cls)
        for name, value in (
            ("rank", rank),
            ("suit", suit),
            ("points", rank.points),
            ("index", suit * 8 + rank),
            ("sort_key", suit * 8 + (7 - rank)),
            ("bit", 1 << (suit * 8 + (7 - rank))),
            ("_text", rank.letter + suit.letter),
        ):
            object.__setattr__(card, name, value)
        return card

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[Rank, Suit]]:
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: Any) -> Card:
        return self

    def __lt__(self, other: Card) -> bool:
        return self.sort_key < other.sort_key

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card({self._text})"


_CARDS: Final[list[Card]] = [Card._make(rank, suit) for suit in Suit for rank in Rank]

ALL_CARDS: Final[tuple[Card, ...]] = tuple(sorted(_CARDS))
"""The 32 distinct cards (8 ranks in 4 suits), in display order."""

_SHORT_RANKS: Final[tuple[Rank, ...]] = (Rank.JACK, Rank.NINE, Rank.ACE, Rank.TEN, Rank.KING, Rank.QUEEN)
_LONG_RANKS: Final[tuple[Rank, ...]] = (*_SHORT_RANKS, Rank.EIGHT, Rank.SEVEN)


def ranks_for(players: int) -> tuple[Rank, ...]:
    """The ranks in play for `players`, high to low."""
    return _LONG_RANKS if players == 8 else _SHORT_RANKS


SORT_KEY: Final = attrgetter("sort_key")
"""`key=` for sorting cards in display order: an int compared in C, where `Card.__lt__` costs a call."""

_PACKS: Final[dict[int, tuple[Card, ...]]] = {
    players: tuple(
        sorted(2 * [Card(rank, suit) for suit in Suit for rank in ranks_for(players)], key=SORT_KEY)
    )
    for players in (4, 6, 8)
}


def pack_for(players: int) -> tuple[Card, ...]:
    """The pack for `players` at the table: 48 cards for 4 or 6 players, 64 for 8 (two of each card).

    Built once per player count: search asks for it at every deal it samples.
    """
    pack = _PACKS.get(players)
    if pack is None:
        raise ValueError(f"56 is played by 4, 6 or 8 players, not {players}")
    return pack


def hand_size_for(players: int) -> int:
    """Cards per hand: 12 with 4 players, 8 with 6 or 8."""
    return len(pack_for(players)) // players


_SUIT_BY_LETTER: Final = {suit.letter: suit for suit in Suit}
_RANK_BY_TEXT: Final = {rank.letter: rank for rank in Rank} | {"10": Rank.TEN}
_CARD_BY_TEXT: Final = {str(card): card for card in _CARDS}


def parse_suit(text: str) -> Suit:
    """Parse a suit letter (any case): S, H, D or C."""
    suit = _SUIT_BY_LETTER.get(text.strip().upper())
    if suit is None:
        raise NotationError(f"expected a suit letter S, H, D or C, got {quoted(text)}")
    return suit


def parse_card(text: str) -> Card:
    """Parse a card in canonical notation (any case; `10` accepted for the ten): `JS`, `9h`, `10D`."""
    card = _CARD_BY_TEXT.get(text)
    if card is not None:  # canonical, as the arena sends every card: one lookup
        return card
    cleaned = text.strip().upper()
    rank = _RANK_BY_TEXT.get(cleaned[:-1])
    suit = _SUIT_BY_LETTER.get(cleaned[-1:])
    if rank is None or suit is None:
        raise NotationError(
            f"expected a card: a rank J 9 A T K Q 8 7 then a suit S H D C (like JS or TD), got {quoted(text)}"
        )
    return Card(rank, suit)


def parse_cards(text: str) -> list[Card]:
    """Parse cards separated by spaces or commas: `JS 9S TD`."""
    return [parse_card(part) for part in text.replace(",", " ").split()]


def format_cards(cards: Any) -> str:
    """Cards in canonical notation separated by spaces."""
    return " ".join(str(card) for card in cards)
