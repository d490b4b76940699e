"""The auction (docs/rules.md#the-auction), driven through `Deal` with hand-built hands."""

from __future__ import annotations

import pytest
from engine_helpers import (
    ALL_CALLS,
    PLAYER_COUNTS,
    RULESETS,
    build_hands,
    make_calls,
    make_deal,
    next_seat,
    rule_broken,
    snapshot,
    team_of_seats,
)

from fiftysix.engine import (
    DOUBLE,
    PASS,
    REDOUBLE,
    Deal,
    IllegalMoveError,
    Phase,
    Ruleset,
    ShuffledDeals,
    Suit,
    parse_call,
    parse_card,
    parse_cards,
)


def first_seat_deal(players: int, ruleset: Ruleset = Ruleset.PAIRS) -> Deal:
    """A deal dealt by the last seat, so that seat 0 calls first."""
    return make_deal(players, players - 1, ruleset=ruleset)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_auction_starts_at_the_dealers_right(players: int) -> None:
    for dealer in range(players):
        deal = make_deal(players, dealer)
        assert deal.phase is Phase.AUCTION
        assert deal.to_act == next_seat(dealer, players)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_calls_go_round_in_playing_order(players: int) -> None:
    dealer = 2
    deal = make_deal(players, dealer)
    seats = []
    for _ in range(players - 1):
        seats.append(deal.to_act)
        deal.apply(deal.to_act, PASS)
    assert seats == [(dealer + 1 + i) % players for i in range(players - 1)]
    assert [made.seat for made in deal.calls] == seats


def test_deal_with_shuffled_hands_starts_the_same_way() -> None:
    hands = ShuffledDeals(7).hands(1, (0, 1, 2, 3), 1)
    deal = Deal(range(4), team_of_seats(4), 1, hands)
    assert deal.to_act == 2
    assert [deal.hands[seat] for seat in range(4)] == [sorted(hands[seat]) for seat in range(4)]


@pytest.mark.parametrize(
    ("calls", "call", "rule"),
    [
        # Bids must be numerically higher; denominations are not ranked.
        ("28S", "28H", "bid_higher"),
        ("28S", "28NT", "bid_higher"),
        ("28S", "S28", "bid_higher"),
        ("30S", "30NT", "bid_higher"),
        ("30S", "30NOES", "bid_higher"),
        ("30S", "29C", "bid_higher"),
        ("30S", "31NT", None),
        ("30S", "31S", None),
        ("30S", "S31", None),
        ("30NT", "31C", None),
        ("30S", "31NOES", None),
        ("30S pass", "30H", "bid_higher"),
        ("30S pass", "56C", None),
        ("56NT", "56S", "bid_higher"),
        # Plus forms only after a first bid; +N makes previous + N, within 56.
        ("", "+1S", "plus_after_first_bid"),
        ("", "+2NOES", "plus_after_first_bid"),
        ("pass pass", "+2H", "plus_after_first_bid"),
        ("28S", "+1S", None),
        ("28S", "+2NOES", None),
        ("28S", "+28C", None),
        ("29S", "+28C", "bid_at_most_56"),
        ("55C", "+1S", None),
        ("55C", "+2NOES", "bid_at_most_56"),
        ("55C", "+2H", "bid_at_most_56"),
        ("54D", "+2NOES", None),
        # Double: only an opponent's bid, and only when there is one.
        ("", "double", "double_needs_bid"),
        ("pass pass", "double", "double_needs_bid"),
        ("28S", "double", None),
        ("28S pass", "double", "double_opponents_bid"),
        ("28S pass pass", "double", None),
        ("pass 28S", "double", None),
        ("pass 28S pass", "double", "double_opponents_bid"),
        # Redouble only in the window after a double.
        ("", "redouble", "redouble_after_double"),
        ("28S", "redouble", "redouble_after_double"),
        ("28S pass", "redouble", "redouble_after_double"),
        # In the window only redouble or pass.
        ("28S double", "29S", "redouble_or_pass"),
        ("28S double", "+1S", "redouble_or_pass"),
        ("28S double", "double", "redouble_or_pass"),
        ("28S double", "redouble", None),
        ("28S double", "pass", None),
        ("28S double pass", "30S", "redouble_or_pass"),
        ("28S double pass", "double", "redouble_or_pass"),
    ],
)
def test_call_legality_with_four_players(calls: str, call: str, rule: str | None) -> None:
    deal = first_seat_deal(4)
    make_calls(deal, calls)
    move = parse_call(call)
    assert (move in deal.legal_moves()) == (rule is None)
    if rule is None:
        deal.apply(deal.to_act, move)
        assert deal.calls[-1].call is move
    else:
        before = snapshot(deal)
        assert rule_broken(deal, deal.to_act, move) == rule
        assert snapshot(deal) == before


def test_a_plus_bid_makes_previous_plus_n() -> None:
    deal = first_seat_deal(4)
    make_calls(deal, "30S +3H")
    assert deal.high_bid is not None
    assert (deal.high_bid.seat, deal.high_bid.number, deal.high_bid.trump) == (1, 33, Suit.HEARTS)
    make_calls(deal, "+2NOES")
    assert (deal.high_bid.seat, deal.high_bid.number, deal.high_bid.trump) == (2, 35, None)
    assert str(deal.high_bid.call) == "+2NOES"


@pytest.mark.parametrize(
    ("call", "number", "trump"),
    [
        ("28S", 28, Suit.SPADES),
        ("H29", 29, Suit.HEARTS),
        ("40NT", 40, None),
        ("33NOES", 33, None),
        ("56C", 56, Suit.CLUBS),
        ("D48", 48, Suit.DIAMONDS),
    ],
)
def test_each_bid_form_makes_its_contract(call: str, number: int, trump: Suit | None) -> None:
    deal = first_seat_deal(4)
    make_calls(deal, f"{call} pass pass pass")
    assert deal.phase is Phase.PLAY
    contract = deal.contract
    assert contract is not None
    assert (contract.number, contract.trump, contract.bidder, contract.team) == (number, trump, 0, 0)
    assert contract.doubling == 1
    assert contract.bid is not None
    assert str(contract.bid.call) == call.upper()


def test_a_player_who_passed_may_bid_later() -> None:
    deal = first_seat_deal(4)
    make_calls(deal, "pass 28S pass pass")
    assert deal.to_act == 0
    assert parse_call("29S") in deal.legal_moves()
    make_calls(deal, "29S")
    assert deal.high_bid is not None
    assert deal.high_bid.seat == 0
    make_calls(deal, "pass pass pass")
    assert deal.contract is not None
    assert (deal.contract.bidder, deal.contract.number) == (0, 29)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_auction_ends_after_a_bid_and_n_minus_1_passes(players: int) -> None:
    deal = first_seat_deal(players)
    make_calls(deal, "pass 30H")
    for _ in range(players - 2):
        deal.apply(deal.to_act, PASS)
        assert deal.phase is Phase.AUCTION
    deal.apply(deal.to_act, PASS)
    assert deal.phase is Phase.PLAY
    assert deal.contract is not None
    assert (deal.contract.bidder, deal.contract.number, deal.contract.trump) == (1, 30, Suit.HEARTS)
    assert deal.contract.team == team_of_seats(players)[1]


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_a_new_bid_restarts_the_count_of_passes(players: int) -> None:
    deal = first_seat_deal(players)
    make_calls(deal, "28S " + "pass " * (players - 2) + "29S")
    make_calls(deal, "pass " * (players - 2))
    assert deal.phase is Phase.AUCTION
    make_calls(deal, "pass")
    assert deal.contract is not None
    assert (deal.contract.bidder, deal.contract.number) == (players - 1, 29)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_passes_before_the_first_bid_do_not_count_towards_the_end(players: int) -> None:
    deal = first_seat_deal(players)
    make_calls(deal, "pass " * (players - 1))
    assert deal.phase is Phase.AUCTION
    make_calls(deal, "28D " + "pass " * (players - 2))
    assert deal.phase is Phase.AUCTION
    make_calls(deal, "pass")
    assert deal.contract is not None
    assert (deal.contract.bidder, deal.contract.trump) == (players - 1, Suit.DIAMONDS)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_all_pass_contracts_the_team_on_the_dealers_right_for_28_no_trumps(
    players: int, ruleset: Ruleset
) -> None:
    teams = team_of_seats(players, ruleset)
    for dealer in range(players):
        deal = make_deal(players, dealer, ruleset=ruleset)
        make_calls(deal, "pass " * (players - 1))
        assert deal.phase is Phase.AUCTION
        make_calls(deal, "pass")
        assert deal.phase is Phase.PLAY
        contract = deal.contract
        assert contract is not None
        right = next_seat(dealer, players)
        assert contract.all_pass
        assert contract.bid is None
        assert (contract.number, contract.trump, contract.doubling) == (28, None, 1)
        assert (contract.bidder, contract.team) == (right, teams[right])
        assert contract.team != teams[dealer]
        assert deal.high_bid is None
        assert deal.to_act == right  # and the dealer's right leads


# (players, ruleset, calls made from seat 0, doubler, the seats asked to redouble in order)
REDOUBLE_WINDOWS = [
    (4, Ruleset.PAIRS, "28S double", 1, [2, 0]),
    (4, Ruleset.PAIRS, "28S pass pass double", 3, [0, 2]),
    (4, Ruleset.PAIRS, "pass 28S double", 2, [3, 1]),
    (6, Ruleset.PAIRS, "28S double", 1, [3, 0]),
    (6, Ruleset.PAIRS, "28S pass double", 2, [3, 0]),
    (6, Ruleset.PAIRS, "28S pass pass pass double", 4, [0, 3]),
    (6, Ruleset.PAIRS, "pass pass 28S double", 3, [5, 2]),
    (8, Ruleset.PAIRS, "28S double", 1, [4, 0]),
    (8, Ruleset.PAIRS, "28S pass pass pass pass double", 5, [0, 4]),
    (8, Ruleset.PAIRS, "pass pass pass 28S pass pass double", 6, [7, 3]),
    (4, Ruleset.PARTNERSHIP, "28S double", 1, [2, 0]),
    (6, Ruleset.PARTNERSHIP, "28S double", 1, [2, 4, 0]),
    (6, Ruleset.PARTNERSHIP, "28S pass pass double", 3, [4, 0, 2]),
    (8, Ruleset.PARTNERSHIP, "28S double", 1, [2, 4, 6, 0]),
    (8, Ruleset.PARTNERSHIP, "28S pass pass double", 3, [4, 6, 0, 2]),
    (8, Ruleset.PARTNERSHIP, "pass 28S pass pass pass pass double", 6, [7, 1, 3, 5]),
]


@pytest.mark.parametrize(("players", "ruleset", "calls", "doubler", "window"), REDOUBLE_WINDOWS)
def test_after_a_double_each_contracting_player_may_redouble_once(
    players: int, ruleset: Ruleset, calls: str, doubler: int, window: list[int]
) -> None:
    deal = first_seat_deal(players, ruleset)
    make_calls(deal, calls)
    assert deal.calls[-1] == (doubler, DOUBLE)
    assert deal.in_redouble_window
    assert deal.doubling == 2
    assert deal.high_bid is not None
    bidder = deal.high_bid.seat
    teams = team_of_seats(players, ruleset)
    assert sorted(window) == [seat for seat in range(players) if teams[seat] == teams[bidder]]
    asked = []
    while deal.phase is Phase.AUCTION:
        assert deal.legal_moves() == (PASS, REDOUBLE)
        asked.append(deal.to_act)
        deal.apply(deal.to_act, PASS)
    assert asked == window
    contract = deal.contract
    assert contract is not None
    assert (contract.bidder, contract.doubling, contract.doubler, contract.redoubler) == (
        bidder,
        2,
        doubler,
        None,
    )
    assert deal.to_act == 0  # the dealer's right leads, whoever doubled


@pytest.mark.parametrize(("players", "ruleset", "calls", "doubler", "window"), REDOUBLE_WINDOWS)
@pytest.mark.parametrize("passes_first", [0, 1])
def test_a_redouble_ends_the_auction(
    players: int, ruleset: Ruleset, calls: str, doubler: int, window: list[int], passes_first: int
) -> None:
    deal = first_seat_deal(players, ruleset)
    make_calls(deal, calls + " pass" * passes_first)
    redoubler = window[passes_first]
    assert deal.to_act == redoubler
    deal.apply(redoubler, REDOUBLE)
    assert deal.phase is Phase.PLAY
    assert not deal.in_redouble_window
    contract = deal.contract
    assert contract is not None
    assert (contract.doubling, contract.doubler, contract.redoubler) == (4, doubler, redoubler)
    assert deal.calls[-1] == (redoubler, REDOUBLE)


@pytest.mark.parametrize(("players", "ruleset", "calls", "doubler", "window"), REDOUBLE_WINDOWS)
def test_only_the_next_contracting_player_may_act_in_the_window(
    players: int, ruleset: Ruleset, calls: str, doubler: int, window: list[int]
) -> None:
    deal = first_seat_deal(players, ruleset)
    make_calls(deal, calls)
    for seat in range(players):
        if seat != window[0]:
            for call in (PASS, REDOUBLE):
                assert rule_broken(deal, seat, call) == "turn"
    assert rule_broken(deal, window[0], parse_call("56NT")) == "redouble_or_pass"
    assert rule_broken(deal, window[0], DOUBLE) == "redouble_or_pass"


@pytest.mark.parametrize(
    ("players", "ruleset", "calls", "seat", "can_double"),
    [
        # Pairs: with 6 players seat 2 is an opponent of seat 0 (team 2 against team 0).
        (6, Ruleset.PAIRS, "28S pass", 2, True),
        (6, Ruleset.PAIRS, "28S pass pass", 3, False),
        (8, Ruleset.PAIRS, "28S pass pass pass", 4, False),
        (8, Ruleset.PAIRS, "28S pass", 2, True),
        # Partnership: seats alternate teams, so seat 2 is seat 0's partner.
        (6, Ruleset.PARTNERSHIP, "28S pass", 2, False),
        (6, Ruleset.PARTNERSHIP, "28S pass pass", 3, True),
        (8, Ruleset.PARTNERSHIP, "28S pass pass pass", 4, False),
        (8, Ruleset.PARTNERSHIP, "28S pass pass pass pass", 5, True),
    ],
)
def test_double_only_an_opponents_bid(
    players: int, ruleset: Ruleset, calls: str, seat: int, can_double: bool
) -> None:
    deal = first_seat_deal(players, ruleset)
    make_calls(deal, calls)
    assert deal.to_act == seat
    assert (DOUBLE in deal.legal_moves()) == can_double
    if can_double:
        deal.apply(seat, DOUBLE)
        assert deal.in_redouble_window
    else:
        assert rule_broken(deal, seat, DOUBLE) == "double_opponents_bid"


def test_double_follows_the_team_of_the_latest_bid() -> None:
    deal = first_seat_deal(4)
    make_calls(deal, "28S 29H pass")
    assert deal.to_act == 3
    assert DOUBLE not in deal.legal_moves()  # 29H is partner seat 1's bid
    assert rule_broken(deal, 3, DOUBLE) == "double_opponents_bid"
    make_calls(deal, "pass")
    assert deal.to_act == 0
    assert DOUBLE in deal.legal_moves()  # seat 0 bid before, but 29H is an opponent's
    deal.apply(0, DOUBLE)
    assert deal.to_act == 1  # seat 1's team is contracting: seats 1 then 3


def test_double_message_names_the_bid_and_seat() -> None:
    deal = first_seat_deal(4)
    make_calls(deal, "28S pass")
    with pytest.raises(IllegalMoveError, match=r"28S was bid by seat 0") as error:
        deal.apply(2, DOUBLE)
    assert error.value.rule == "double_opponents_bid"


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_calls_out_of_turn_are_illegal(players: int) -> None:
    deal = first_seat_deal(players)
    make_calls(deal, "pass 28S")
    assert deal.to_act == 2
    before = snapshot(deal)
    for seat in range(players):
        if seat != 2:
            with pytest.raises(IllegalMoveError, match="it is seat 2's turn") as error:
                deal.apply(seat, PASS)
            assert error.value.rule == "turn"
    assert snapshot(deal) == before


def test_a_card_during_the_auction_is_illegal() -> None:
    deal = first_seat_deal(4)
    card = deal.hands[0][0]
    assert rule_broken(deal, 0, card) == "call_in_auction"


def test_legal_calls_in_the_auction_are_exactly_the_calls_that_apply() -> None:
    for prefix in ["", "28S", "28S pass", "28S double", "pass 40NT pass pass"]:
        state = first_seat_deal(4)
        make_calls(state, prefix)
        legal = set(state.legal_moves())
        for call in ALL_CALLS:
            trial = state.copy()
            try:
                trial.apply(trial.to_act, call)
            except IllegalMoveError:
                assert call not in legal, f"{call} after {prefix!r}"
            else:
                assert call in legal, f"{call} after {prefix!r}"


def test_hands_must_be_the_whole_pack_in_equal_hands() -> None:
    hands = build_hands(4)
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    make_deal(4, 0, hands)  # still the pack
    hands[0][0] = parse_card("8S")
    with pytest.raises(ValueError, match="extra 8S"):
        make_deal(4, 0, hands)
    short = build_hands(6)
    short[0].append(short[1].pop())
    with pytest.raises(ValueError, match="seat 0 must be dealt 8 cards, got 9"):
        make_deal(6, 0, short)
    with pytest.raises(ValueError, match="dealer"):
        make_deal(4, 4)


@pytest.mark.parametrize(
    ("players", "required", "seat", "replaced", "by", "extra", "missing"),
    [
        (4, {0: "JS JS QS"}, 0, "QS", "JS", "JS", "QS"),  # three of a card in one hand
        (4, {0: "JS JS", 1: "9S 9S"}, 1, "9S 9S", "JS JS", "JS JS", "9S 9S"),  # four, two in two hands
        (8, {0: "7C 7C 8C"}, 0, "8C", "7C", "7C", "8C"),  # the last card of the 64-card pack
    ],
)
def test_hands_with_more_copies_of_a_card_than_the_pack_are_refused(
    players: int, required: dict[int, str], seat: int, replaced: str, by: str, extra: str, missing: str
) -> None:
    hands = build_hands(players, required=required)
    for old, new in zip(parse_cards(replaced), parse_cards(by), strict=True):
        hands[seat][hands[seat].index(old)] = new
    with pytest.raises(ValueError, match=f"extra {extra}, missing {missing}$"):
        make_deal(players, 0, hands)
