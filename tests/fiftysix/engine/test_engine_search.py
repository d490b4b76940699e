"""What search code needs of a deal: public trump, suit led and trick winner, a cheap copy, and the
trusted fast path, which must end every deal exactly as the checked `apply` does."""

from __future__ import annotations

import random

import pytest
from engine_helpers import PLAYER_COUNTS, snapshot

from fiftysix.engine import Deal, IllegalMoveError, Match, MatchRules, Phase, parse_card


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
def test_public_trump_led_suit_and_winner_agree_with_the_view(players: int) -> None:
    match = Match(MatchRules(players), seed=players)
    rng = random.Random(players)
    while match.deal.phase is not Phase.FINISHED and not match.is_over:
        deal = match.deal
        seat = deal.to_act
        view = match.view(seat)
        assert deal.trump is view.trump
        assert deal.led_suit is view.led_suit
        assert deal.winning_play == view.winning_play
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
