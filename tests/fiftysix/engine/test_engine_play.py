"""The play of the tricks (docs/rules.md#the-play), driven through `Deal` with hand-built hands."""

from __future__ import annotations

from collections import Counter

import pytest
from engine_helpers import (
    PLAYER_COUNTS,
    RULESETS,
    build_hands,
    deal_for_trick,
    make_calls,
    make_deal,
    next_seat,
    play_out,
    rule_broken,
    snapshot,
    team_of_seats,
)

from fiftysix.engine import (
    PASS,
    Card,
    Deal,
    IllegalMoveError,
    Phase,
    Ruleset,
    ShuffledDeals,
    Suit,
    hand_size_for,
    parse_call,
    parse_card,
    parse_cards,
)

ALL_SPADES = "JS JS 9S 9S AS AS TS TS KS KS QS QS"
"""The twelve spades of the 48-card pack."""


# (players, contract, the trick from seat 0 on, the winning seat)
TRICKS = [
    # No trumps: the highest card of the suit led.
    (4, "28NT", "AH TH JH KH", 2),
    (4, "28NT", "KH JS QH 9C", 0),
    (4, "28NOES", "QD KD TD AD", 3),
    (4, "28NT", "9C JD JS JH", 0),
    # Trumps: the highest trump when any trump is played.
    (4, "28S", "AH 9S JH KH", 1),
    (4, "28S", "AH QS JS KH", 2),
    (4, "28S", "AH JS 9S TH", 1),
    (4, "28S", "JH KH 9H QS", 3),
    (4, "S28", "9S AS JS QS", 2),
    (4, "28S", "AH KH JH QC", 2),
    (4, "28H", "JS QH 9S AS", 1),
    (4, "28D", "KC QD QC 9D", 3),
    # Identical cards: the one played first wins.
    (4, "28NT", "AH JH JH KH", 1),
    (4, "28NT", "JH JH 9H AH", 0),
    (4, "28NT", "QC KC QC KC", 1),
    (4, "28S", "AH 9S 9S KH", 1),
    (4, "28S", "AH KS JS JS", 2),
    (4, "28S", "9S QS JS JS", 2),
    (6, "28C", "AD JC QD JC KD 9C", 1),
    (6, "28NT", "TH TH QH KH QH 9H", 5),
    # Eight players: 8 and 7 rank below the queen.
    (8, "28NT", "7H 8H 7H 8H QH KH QH KH", 5),
    (8, "28NT", "7H 8H 7H 8H 8C 7D 8S 8D", 1),
    (8, "28D", "8H 7H 7D 8D 7D 8D KH QH", 3),
    (8, "28NT", "JC 9C JC 9C AC AC TC TC", 0),
]


@pytest.mark.parametrize(("players", "contract", "plays", "winner"), TRICKS)
def test_trick_winner(players: int, contract: str, plays: str, winner: int) -> None:
    deal = deal_for_trick(players, contract, plays)
    cards = parse_cards(plays)
    for seat, card in enumerate(cards):
        assert deal.to_act == seat
        deal.apply(seat, card)
    assert len(deal.tricks) == 1
    trick = deal.tricks[0]
    assert trick.leader == 0
    assert trick.plays == tuple((seat, card) for seat, card in enumerate(cards))
    assert trick.winner == winner
    points = sum(card.points for card in cards)
    assert trick.points == points
    expected = [0] * len(set(team_of_seats(players)))
    expected[team_of_seats(players)[winner]] = points
    assert deal.points == expected
    assert deal.trick == []
    assert deal.to_act == winner  # the winner leads the next trick


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_the_dealers_right_leads_the_first_trick(players: int, ruleset: Ruleset) -> None:
    for dealer in range(players):
        # Whoever wins the auction, the dealer's right leads.
        deal = make_deal(players, dealer, ruleset=ruleset)
        bidder = (dealer + 3) % players
        while deal.to_act != bidder:
            deal.apply(deal.to_act, PASS)
        make_calls(deal, "30H" + " pass" * (players - 1))
        assert deal.phase is Phase.PLAY
        assert deal.to_act == next_seat(dealer, players)


def test_must_follow_suit_when_holding_it() -> None:
    deal = deal_for_trick(4, "28S", "KH QH JH 9H")
    deal.apply(0, parse_card("KH"))
    hearts = [card for card in deal.hands[1] if card.suit is Suit.HEARTS]
    other = next(card for card in deal.hands[1] if card.suit is not Suit.HEARTS)
    assert set(deal.legal_moves()) == set(hearts)
    before = snapshot(deal)
    with pytest.raises(IllegalMoveError, match=r"must follow hearts: holds (\w\w), played") as error:
        deal.apply(1, other)
    assert error.value.rule == "follow_suit"
    assert str(other) in str(error.value)
    held = str(error.value).split("holds ")[1].split(",")[0]
    assert parse_card(held) in hearts
    assert snapshot(deal) == before


@pytest.mark.parametrize("led", ["JS", "9H", "AD", "QC"])
def test_any_card_may_be_played_when_void_in_the_suit_led(led: str) -> None:
    suit = parse_card(led).suit
    hands = build_hands(4, required={0: led}, void={1: [suit]})
    deal = make_deal(4, 3, hands)
    make_calls(deal, "28NT pass pass pass")
    deal.apply(0, parse_card(led))
    hand = deal.hands[1]
    assert list(deal.legal_moves()) == list(dict.fromkeys(hand))
    for card in set(hand):
        trial = deal.copy()
        trial.apply(1, card)
        assert trial.trick[-1] == (1, card)


def test_the_leader_may_lead_any_card() -> None:
    deal = make_deal(4, 3)
    make_calls(deal, "28S pass pass pass")
    assert list(deal.legal_moves()) == list(dict.fromkeys(deal.hands[0]))


def test_legal_plays_list_each_card_once_in_hand_order() -> None:
    hands = build_hands(4, required={0: "JS JS 9S KH KH QC"})
    deal = make_deal(4, 3, hands)
    make_calls(deal, "28S pass pass pass")
    moves = [move for move in deal.legal_moves() if isinstance(move, Card)]
    assert len(moves) == len(deal.legal_moves()) == len(set(moves))
    assert moves == sorted(moves)
    assert moves[:2] == parse_cards("JS 9S")
    assert Counter(deal.hands[0])[parse_card("JS")] == 2


def test_a_card_not_held_is_illegal() -> None:
    hands = build_hands(4, required={1: "JS JS"})
    deal = make_deal(4, 3, hands)
    make_calls(deal, "28NT pass pass pass")
    before = snapshot(deal)
    with pytest.raises(IllegalMoveError, match="seat 0 does not hold JS") as error:
        deal.apply(0, parse_card("JS"))
    assert error.value.rule == "play_own_card"
    assert rule_broken(deal, 0, parse_card("7S")) == "play_own_card"  # not even in a 4-player pack
    assert snapshot(deal) == before


def test_a_card_already_played_is_no_longer_held() -> None:
    hands = build_hands(4, required={0: "JH", 2: "JH"})
    deal = make_deal(4, 3, hands)
    make_calls(deal, "28NT pass pass pass")
    deal.apply(0, parse_card("JH"))
    while deal.trick:
        deal.apply(deal.to_act, deal.legal_moves()[0])
    assert deal.tricks[0].winner == 0
    assert parse_card("JH") not in deal.hands[0]
    with pytest.raises(IllegalMoveError, match="seat 0 does not hold JH") as error:
        deal.apply(0, parse_card("JH"))
    assert error.value.rule == "play_own_card"


def test_a_call_during_the_play_is_illegal() -> None:
    deal = make_deal(4, 3)
    make_calls(deal, "28S pass pass pass")
    for call in ("pass", "double", "redouble", "29S"):
        assert rule_broken(deal, 0, parse_call(call)) == "play_a_card"
    assert rule_broken(deal, 1, parse_card("JS")) == "turn"


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
@pytest.mark.parametrize("contract", ["pass", "28S", "35NT", "40H"])
def test_all_tricks_are_played_out(players: int, ruleset: Ruleset, contract: str) -> None:
    hands = ShuffledDeals(players).hands(1, tuple(range(players)), 0)
    deal = Deal(range(players), team_of_seats(players, ruleset), 0, hands)
    make_calls(deal, contract + " pass" * (players - 1))
    assert deal.phase is Phase.PLAY
    play_out(deal)
    assert deal.phase is Phase.FINISHED
    assert deal.legal_moves() == ()
    assert len(deal.tricks) == hand_size_for(players)
    assert all(len(trick.plays) == players for trick in deal.tricks)
    played = Counter(play.card for trick in deal.tricks for play in trick.plays)
    assert played == Counter(card for seat in range(players) for card in hands[seat])
    assert all(hand == [] for hand in deal.hands)
    assert sum(deal.points) == 56
    teams = team_of_seats(players, ruleset)
    by_team = [0] * len(deal.points)
    for trick in deal.tricks:
        assert trick.points == sum(play.card.points for play in trick.plays)
        by_team[teams[trick.winner]] += trick.points
    assert deal.points == by_team
    for previous, trick in zip(deal.tricks, deal.tricks[1:], strict=False):
        assert trick.leader == previous.winner
        assert [play.seat for play in trick.plays] == [(trick.leader + i) % players for i in range(players)]
    assert deal.contract is not None
    assert deal.made == (deal.points[deal.contract.team] >= deal.contract.number)
    assert rule_broken(deal, deal.to_act, PASS) == "deal_finished"


def test_made_is_only_known_once_finished() -> None:
    deal = make_deal(4, 3)
    with pytest.raises(ValueError, match="not finished"):
        _ = deal.made
    make_calls(deal, "28S pass pass pass")
    with pytest.raises(ValueError, match="not finished"):
        _ = deal.made


@pytest.mark.parametrize("contract", ["28NT", "56NT", "pass", "28S", "S56"])
def test_the_contract_is_made_with_enough_points(contract: str) -> None:
    # Seat 0 leads and holds all twelve spades: it takes every trick in spades or no trumps.
    deal = make_deal(4, 3, build_hands(4, required={0: ALL_SPADES}))
    make_calls(deal, contract + " pass" * 3)
    play_out(deal)
    assert deal.contract is not None
    assert deal.contract.team == 0
    assert deal.points == [56, 0]
    assert deal.made


def test_a_contract_is_made_at_exactly_its_number() -> None:
    def played(hands: dict[int, list[Card]], number: int) -> Deal:
        deal = make_deal(4, 3, hands)
        make_calls(deal, f"{number}NT pass pass pass")
        play_out(deal)  # the cards played do not depend on the number bid
        return deal

    for seed in range(100):
        hands = ShuffledDeals(seed).hands(1, (0, 1, 2, 3), 3)
        points = played(hands, 28).points[0]
        if 28 <= points < 56:
            break
    assert played(hands, points).made
    assert not played(hands, points + 1).made


@pytest.mark.parametrize("contract", ["28NT", "56S", "S40"])
def test_the_contract_is_lost_without_enough_points(contract: str) -> None:
    deal = make_deal(4, 3, build_hands(4, required={0: ALL_SPADES}))
    make_calls(deal, "pass " + contract + " pass pass pass")
    play_out(deal)
    assert deal.contract is not None
    assert deal.contract.team == 1
    assert deal.points == [56, 0]
    assert not deal.made
