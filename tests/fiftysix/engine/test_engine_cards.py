"""Cards: packs, hand sizes, rank order, points and notation (docs/rules.md#the-cards,
docs/rules.md#writing-cards)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from fiftysix.engine import (
    ALL_CARDS,
    POINTS_PER_DEAL,
    Card,
    NotationError,
    Rank,
    Suit,
    format_cards,
    hand_size_for,
    pack_for,
    parse_card,
    parse_cards,
    parse_suit,
)

SHORT_RANKS = ["J", "9", "A", "T", "K", "Q"]
LONG_RANKS = [*SHORT_RANKS, "8", "7"]


@pytest.mark.parametrize(
    ("players", "pack_size", "hand_size", "ranks"),
    [(4, 48, 12, SHORT_RANKS), (6, 48, 8, SHORT_RANKS), (8, 64, 8, LONG_RANKS)],
)
def test_pack_and_hand_size_per_player_count(
    players: int, pack_size: int, hand_size: int, ranks: list[str]
) -> None:
    pack = pack_for(players)
    assert len(pack) == pack_size
    assert hand_size_for(players) == hand_size
    assert hand_size * players == pack_size  # the whole pack is dealt
    expected = Counter({parse_card(rank + suit): 2 for rank in ranks for suit in "SHDC"})
    assert Counter(pack) == expected


@pytest.mark.parametrize("players", [0, 2, 3, 5, 7, 9, 10])
def test_pack_for_rejects_other_player_counts(players: int) -> None:
    with pytest.raises(ValueError, match="4, 6 or 8"):
        pack_for(players)


@pytest.mark.parametrize("players", [4, 6, 8])
def test_points_per_pack_and_per_deal(players: int) -> None:
    pack = pack_for(players)
    assert sum(card.points for card in set(pack)) == 28
    assert sum(card.points for card in pack) == 56 == POINTS_PER_DEAL


@pytest.mark.parametrize(
    ("rank", "points"),
    [("J", 3), ("9", 2), ("A", 1), ("T", 1), ("K", 0), ("Q", 0), ("8", 0), ("7", 0)],
)
def test_card_points(rank: str, points: int) -> None:
    for suit in "SHDC":
        assert parse_card(rank + suit).points == points


def test_rank_order_high_to_low() -> None:
    order = [Rank.JACK, Rank.NINE, Rank.ACE, Rank.TEN, Rank.KING, Rank.QUEEN, Rank.EIGHT, Rank.SEVEN]
    for higher, lower in itertools.pairwise(order):
        assert higher > lower
    assert [rank.letter for rank in order] == LONG_RANKS


def test_pack_is_listed_by_suit_then_high_to_low() -> None:
    assert format_cards(pack_for(8)[:16]) == "JS JS 9S 9S AS AS TS TS KS KS QS QS 8S 8S 7S 7S"
    assert [card.suit for card in pack_for(4)[::12]] == [Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS]


def test_all_cards_are_the_32_distinct_cards() -> None:
    assert len(ALL_CARDS) == len(set(ALL_CARDS)) == 32
    assert set(ALL_CARDS) == set(pack_for(8))


def test_cards_are_interned_values() -> None:
    assert Card(Rank.JACK, Suit.SPADES) is parse_card("JS")
    assert parse_card("js") == parse_card("JS")
    assert len({parse_card("9H"), parse_card("9h"), parse_card("9H")}) == 1
    with pytest.raises(AttributeError):
        parse_card("JS").rank = Rank.NINE


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("JS", Rank.JACK, Suit.SPADES),
        ("js", Rank.JACK, Suit.SPADES),
        ("9H", Rank.NINE, Suit.HEARTS),
        ("aD", Rank.ACE, Suit.DIAMONDS),
        ("TC", Rank.TEN, Suit.CLUBS),
        ("tc", Rank.TEN, Suit.CLUBS),
        ("10C", Rank.TEN, Suit.CLUBS),
        ("10h", Rank.TEN, Suit.HEARTS),
        ("Kh", Rank.KING, Suit.HEARTS),
        ("QS", Rank.QUEEN, Suit.SPADES),
        ("8d", Rank.EIGHT, Suit.DIAMONDS),
        ("7C", Rank.SEVEN, Suit.CLUBS),
        (" JS ", Rank.JACK, Suit.SPADES),
    ],
)
def test_parse_card(text: str, rank: Rank, suit: Suit) -> None:
    card = parse_card(text)
    assert (card.rank, card.suit) == (rank, suit)


@pytest.mark.parametrize("card", ALL_CARDS, ids=str)
def test_card_notation_round_trips(card: Card) -> None:
    text = str(card)
    assert len(text) == 2
    assert text == text.upper()
    assert parse_card(text) is card
    assert parse_card(text.lower()) is card


@pytest.mark.parametrize(("card", "text"), [("10S", "TS"), ("jh", "JH"), ("9d", "9D"), ("qc", "QC")])
def test_card_printing_is_canonical(card: str, text: str) -> None:
    assert str(parse_card(card)) == text
    assert repr(parse_card(card)) == f"Card({text})"


@pytest.mark.parametrize(
    "text", ["", " ", "J", "S", "JX", "XS", "1S", "11S", "JSS", "10", "T0S", "SJ", "0S", "J S", "9♠"]
)
def test_bad_card_raises_notation_error_saying_what_was_expected(text: str) -> None:
    with pytest.raises(NotationError, match=r"expected a card: a rank J 9 A T K Q 8 7 then a suit S H D C"):
        parse_card(text)


def test_notation_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected a card"):
        parse_card("ZZ")


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        ("JS 9S TD", "JS 9S TD"),
        ("js,9s, 10d", "JS 9S TD"),
        ("  ", ""),
        ("QC,QC", "QC QC"),
    ],
)
def test_parse_cards_and_format_cards(text: str, cards: str) -> None:
    assert format_cards(parse_cards(text)) == cards


def test_parse_cards_reports_the_bad_card() -> None:
    with pytest.raises(NotationError, match="'XS'"):
        parse_cards("JS XS")


@pytest.mark.parametrize(
    ("text", "suit"), [("S", Suit.SPADES), ("h", Suit.HEARTS), ("D", Suit.DIAMONDS), ("c", Suit.CLUBS)]
)
def test_parse_suit(text: str, suit: Suit) -> None:
    assert parse_suit(text) is suit
    assert suit.letter == text.upper()


@pytest.mark.parametrize("text", ["", "X", "SP", "spades"])
def test_bad_suit_raises_notation_error(text: str) -> None:
    with pytest.raises(NotationError, match="expected a suit letter S, H, D or C"):
        parse_suit(text)
