"""A seat's view (`Match.view`): its own hand and the public record, nothing else."""

from __future__ import annotations

import dataclasses
import random

import pytest
from engine_helpers import PLAYER_COUNTS, RULESETS, finish_deal, make_match

from fiftysix.engine import (
    DOUBLE,
    Match,
    MatchRules,
    Move,
    Phase,
    Ruleset,
    Suit,
    View,
    hand_size_for,
    parse_call,
)


def act(match: Match, move: Move) -> None:
    """Make `move` for the seat to act."""
    seat = match.to_act
    assert seat is not None
    match.apply(seat, move)


def views(match: Match) -> list[View]:
    """Every seat's view, seat by seat."""
    return [match.view(seat) for seat in range(match.rules.players)]


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_view_at_the_start_of_a_match(players: int, ruleset: Ruleset) -> None:
    rules = MatchRules(players, ruleset, deal_cap=20)
    match = Match(rules, seed=5)
    teams = 2 if ruleset is Ruleset.PARTNERSHIP else players // 2
    for seat, view in enumerate(views(match)):
        assert view.seat == seat
        assert view.rules == rules
        assert view.rules.deal_cap == 20  # the cap is told to every bot
        assert view.team_of == tuple(s % teams for s in range(players))
        assert view.team == seat % teams
        assert view.partners == tuple(s for s in range(players) if s % teams == seat % teams and s != seat)
        assert view.seats == tuple(range(players))
        assert view.tables == (12,) * teams
        assert view.teams_out == ()
        assert view.deal_number == 1
        assert view.dealer == match.dealer
        assert view.phase is Phase.AUCTION
        assert view.to_act == (match.dealer + 1) % players
        assert view.hand == match.deal.dealt[seat]
        assert len(view.hand) == hand_size_for(players)
        assert list(view.hand) == sorted(view.hand)
        assert view.calls == ()
        assert view.high_bid is None
        assert view.doubling == 1
        assert view.contract is None
        assert view.tricks == ()
        assert view.trick == ()
        assert view.points == (0,) * teams


def test_calls_and_the_contract_are_public() -> None:
    match = make_match(4, first_dealer=3)
    for text in ("pass", "30H", "double"):
        act(match, parse_call(text))
    for view in views(match):
        assert [(made.seat, str(made.call)) for made in view.calls] == [
            (0, "pass"),
            (1, "30H"),
            (2, "double"),
        ]
        assert view.high_bid is not None
        assert (view.high_bid.seat, view.high_bid.number, view.high_bid.trump) == (1, 30, Suit.HEARTS)
        assert view.doubling == 2
        assert view.to_act == 3  # the contracting team's first chance to redouble
        assert view.contract is None
    match.apply(3, parse_call("pass"))
    match.apply(1, parse_call("pass"))
    for view in views(match):
        assert view.phase is Phase.PLAY
        assert view.contract is not None
        assert (view.contract.number, view.contract.bidder, view.contract.doubling) == (30, 1, 2)
        assert view.contract.doubler == 2
        assert view.to_act == 0


def test_the_trick_tricks_and_points_are_public() -> None:
    match = make_match(4, first_dealer=3)  # seat 0 holds all twelve spades
    for text in ("28S", "pass", "pass", "pass"):
        act(match, parse_call(text))
    first = match.legal_moves()[0]
    match.apply(0, first)
    for view in views(match):
        assert view.trick == ((0, first),)
        assert view.tricks == ()
        assert view.points == (0, 0)
        assert view.to_act == 1
    assert len(match.view(0).hand) == 11
    assert len(match.view(1).hand) == 12
    for _ in range(3):
        act(match, match.legal_moves()[0])
    trick = match.deal.tricks[0]
    for view in views(match):
        assert view.trick == ()
        assert view.tricks == (trick,)
        assert view.points == (trick.points, 0)
        assert view.to_act == 0
    assert all(len(view.hand) == 11 for view in views(match))


def test_each_view_differs_only_in_the_seats_own_hand_and_moves() -> None:
    match = make_match(6, first_dealer=2)
    match.apply(3, parse_call("29D"))
    match.apply(4, DOUBLE)
    seen = views(match)
    for view in seen:
        public = dataclasses.replace(view, seat=0, hand=(), legal_moves=())
        assert public == dataclasses.replace(seen[0], hand=(), legal_moves=())
    assert len({view.hand for view in seen}) > 1


@pytest.mark.parametrize("calls", ["", "28S", "28S double", "28S pass pass pass", "pass pass pass pass"])
def test_only_the_seat_to_act_sees_legal_moves(calls: str) -> None:
    match = make_match(4, first_dealer=3)
    for text in calls.split():
        act(match, parse_call(text))
    for view in views(match):
        assert view.is_to_act == (view.seat == match.to_act)
        if view.is_to_act:
            assert view.legal_moves == tuple(match.legal_moves())
            assert view.legal_moves
        else:
            assert view.legal_moves == ()


def test_view_helpers_during_the_play() -> None:
    # Seat 0 holds all twelve spades and leads; spades are trumps.
    match = make_match(4, first_dealer=3)
    for text in ("28S", "pass", "pass", "pass"):
        act(match, parse_call(text))
    view = match.view(0)
    assert view.trump is Suit.SPADES
    assert view.led_suit is None
    assert view.winning_play is None
    assert view.trick_points == 0
    assert view.played_cards == ()
    assert view.cards_of(Suit.SPADES) == view.hand
    assert view.cards_of(Suit.HEARTS) == ()
    lead, second = match.deal.hands[0][0], match.deal.hands[1][0]
    match.apply(0, lead)
    match.apply(1, second)
    view = match.view(2)
    assert view.led_suit is Suit.SPADES
    assert view.winning_play == (0, lead)
    assert view.trick_points == lead.points + second.points
    assert view.played_cards == (lead, second)
    assert all(card.suit is Suit.HEARTS for card in view.cards_of(Suit.HEARTS))
    assert len(view.cards_of(Suit.HEARTS)) == sum(1 for card in view.hand if card.suit is Suit.HEARTS)


def test_view_trump_is_none_in_the_auction_and_for_no_trumps() -> None:
    match = make_match(4, first_dealer=3)
    assert match.view(0).trump is None
    for text in ("40NT", "pass", "pass", "pass"):
        act(match, parse_call(text))
    assert match.view(1).contract is not None
    assert match.view(1).trump is None


def test_the_view_follows_the_match_into_the_next_deal() -> None:
    match = make_match(4, first_dealer=3)
    result = finish_deal(match)
    view = match.view(2)
    assert view.deal_number == 2
    assert view.dealer == 0
    assert view.tables == tuple(result.tables) == (13, 11)
    assert view.calls == ()
    assert view.tricks == ()
    assert view.hand == match.deal.dealt[2]


def test_the_view_after_the_match_is_over() -> None:
    match = make_match(4, first_dealer=3, tables=[23, 1])
    finish_deal(match)
    for view in views(match):
        assert view.to_act is None
        assert view.phase is Phase.FINISHED
        assert view.tables == (24, 0)
        assert view.teams_out == (1,)
        assert view.hand == ()
        assert len(view.tricks) == 12


def test_views_are_frozen() -> None:
    view = make_match(4, first_dealer=3).view(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.hand = ()  # type: ignore[misc]


@pytest.mark.parametrize("seat", [-1, 4, 8])
def test_view_of_a_seat_not_in_the_match(seat: int) -> None:
    with pytest.raises(ValueError, match=f"no seat {seat}"):
        make_match(4, first_dealer=3).view(seat)


@pytest.mark.parametrize("players", [4, 6, 8])
def test_unseen_cards_are_exactly_the_other_hands(players: int) -> None:
    rng = random.Random(players)
    match = Match(MatchRules(players), seed=21)
    checked = 0
    while not match.is_over and checked < 300:
        seat = match.deal.to_act
        view = match.view(seat)
        others = sorted(card for other in view.seats if other != seat for card in match.deal.hands[other])
        assert list(view.unseen_cards) == others
        checked += 1
        match.apply(seat, rng.choice(match.legal_moves()))


def test_voids_and_seats_to_play() -> None:
    rng = random.Random(4)
    match = Match(MatchRules(4), seed=9)
    shown_out: set[tuple[int, Suit]] = set()
    while not match.is_over and match.deal_number == 1:
        seat = match.deal.to_act
        view = match.view(seat)
        if view.phase is Phase.PLAY:
            start = view.seats.index(seat)
            assert list(view.seats_to_play) == [
                view.seats[(start + k) % 4] for k in range(1, 4 - len(view.trick))
            ]
            assert {(s, suit) for s, suits in view.voids.items() for suit in suits} == shown_out
        move = rng.choice(match.legal_moves())
        if view.phase is Phase.PLAY and view.trick and move.suit is not view.trick[0].card.suit:  # type: ignore[union-attr]
            shown_out.add((seat, view.trick[0].card.suit))
        match.apply(seat, move)
