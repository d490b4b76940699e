"""What search code needs of a deal: public trump, suit led and trick winner, a cheap copy, the trusted
fast path (which must end every deal exactly as the checked `apply` does), a deal rebuilt from a view
and hands for the others, and random hands that fit a view."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest
from engine_helpers import PLAYER_COUNTS, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftysix.engine import (
    Deal,
    IllegalMoveError,
    Match,
    MatchRules,
    Phase,
    Ruleset,
    parse_card,
    sample_hands,
)
from fiftysix.engine.sampling import QUICK_TRIES


def random_deal(players: int, seed: int) -> Deal:
    """The first deal of a seeded match."""
    return Match(MatchRules(players), seed=seed).deal


@pytest.mark.parametrize("players", PLAYER_COUNTS)
@pytest.mark.parametrize("seed", range(5))
def test_trusted_moves_end_the_deal_as_checked_moves_do(players: int, seed: int) -> None:
    checked = random_deal(players, seed)
    trusted = checked.copy()
    rng = random.Random(seed)
    while checked.phase is not Phase.FINISHED:
        move = rng.choice(checked.legal_moves())
        checked.apply(checked.to_act, move)
        trusted.apply_trusted(move)
        assert snapshot(trusted) == snapshot(checked)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_public_trump_led_suit_winner_and_trick_points_agree_with_the_view(players: int) -> None:
    match = Match(MatchRules(players), seed=players)
    rng = random.Random(players)
    while match.deal.phase is not Phase.FINISHED and not match.is_over:
        deal = match.deal
        seat = deal.to_act
        view = match.view(seat)
        assert deal.trump is view.trump
        assert deal.led_suit is view.led_suit
        assert deal.winning_play == view.winning_play
        assert deal.trick_points == view.trick_points
        if match.apply(seat, rng.choice(deal.legal_moves())) is not None:
            break


def test_trusted_calls_are_still_checked() -> None:
    deal = random_deal(4, 1)
    with pytest.raises(IllegalMoveError):
        deal.apply_trusted(parse_card("JS"))


def test_a_copy_is_independent() -> None:
    deal = random_deal(4, 2)
    before = snapshot(deal)
    trial = deal.copy()
    rng = random.Random(2)
    while trial.phase is not Phase.FINISHED:
        trial.apply_trusted(rng.choice(trial.legal_moves()))
    assert snapshot(deal) == before


def positions(players: int, ruleset: Ruleset, seed: int) -> Iterator[Match]:
    """Every position of a seeded match's first deal, each seat acting at random."""
    match = Match(MatchRules(players, ruleset), seed=seed)
    rng = random.Random(seed)
    while True:
        yield match
        if match.apply(match.deal.to_act, rng.choice(match.deal.legal_moves())) is not None:
            return


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from(PLAYER_COUNTS), ruleset=st.sampled_from(list(Ruleset)), seed=st.integers(0, 2**32)
)
def test_a_deal_rebuilt_from_a_view_and_the_true_hands_is_the_deal(
    players: int, ruleset: Ruleset, seed: int
) -> None:
    for match in positions(players, ruleset, seed):
        deal = match.deal
        seat = deal.to_act
        view = match.view(seat)
        others = {other: list(deal.hands[other]) for other in deal.seats if other != seat}
        rebuilt = Deal.from_view(view, others)
        assert snapshot(rebuilt) == snapshot(deal)
        assert rebuilt.dealt == deal.dealt
        assert rebuilt.view(seat, view.rules, view.tables, view.teams_out, view.deal_number) == view


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from(PLAYER_COUNTS), ruleset=st.sampled_from(list(Ruleset)), seed=st.integers(0, 2**32)
)
def test_sampled_hands_fit_the_view(players: int, ruleset: Ruleset, seed: int) -> None:
    rng = random.Random(seed)
    for match in positions(players, ruleset, seed):
        seat = match.deal.to_act
        view = match.view(seat)
        hands = sample_hands(view, rng)
        assert sorted(hands) == sorted(other for other in view.seats if other != seat)
        assert Counter(card for hand in hands.values() for card in hand) == Counter(view.unseen_cards)
        for other, hand in hands.items():
            assert len(hand) == view.cards_left[other]
            assert not {card.suit for card in hand} & view.voids[other]
        deal = Deal.from_view(view, hands)  # consistent, so it builds
        assert deal.view(seat, view.rules, view.tables, view.teams_out, view.deal_number) == view


def test_a_hand_that_breaks_a_void_shown_is_refused() -> None:
    for match in positions(4, Ruleset.PAIRS, 3):
        view = match.view(match.deal.to_act)
        shown = [(seat, suit) for seat, suits in view.voids.items() for suit in suits if seat != view.seat]
        if not shown:
            continue
        seat, suit = shown[0]
        hands = {other: list(match.deal.hands[other]) for other in view.seats if other != view.seat}
        third = next(
            other for other in hands if other != seat and any(card.suit is suit for card in hands[other])
        )
        given = next(card for card in hands[third] if card.suit is suit)
        taken = hands[seat].pop()
        hands[third].remove(given)
        hands[third].append(taken)
        hands[seat].append(given)
        with pytest.raises(ValueError, match="has shown out of"):
            Deal.from_view(view, hands)
        return
    pytest.fail("no void was shown in the whole deal")


def test_the_sampler_honours_accept() -> None:
    match = next(positions(4, Ruleset.PAIRS, 4))
    view = match.view(match.deal.to_act)
    first = min(other for other in view.seats if other != view.seat)
    jack = parse_card("JS")
    hands = sample_hands(view, random.Random(1), accept=lambda hands: jack in hands[first])
    if jack in view.hand and view.hand.count(jack) == 2:
        pytest.skip("the seat holds both jacks of spades")
    assert jack in hands[first]


@pytest.mark.parametrize("ruleset", list(Ruleset))
@pytest.mark.parametrize("seed", range(12))
def test_one_careful_draw_always_fits(ruleset: Ruleset, seed: int) -> None:
    # Eight players show many voids late in a deal, where quick draws may find no seat for a card; the
    # careful draw after them must not fail when a consistent deal exists (and the true one does).
    rng = random.Random(seed)
    for match in positions(8, ruleset, seed):
        view = match.view(match.deal.to_act)
        hands = sample_hands(view, rng, tries=QUICK_TRIES + 1)
        Deal.from_view(view, hands)
