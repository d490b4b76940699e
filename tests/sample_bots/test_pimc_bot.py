"""The determinized Monte Carlo bot (sample_bots/pimc_bot.py): legal moves in every kind of table, its
time budget cut to the arena's clock, and the whole protocol through `arena check-bot` against the bot
running as its own process, as the ladder starts it. Its strength is measured by bench/strength.py, not
here: a few matches cannot tell +150 Elo from noise."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fiftysix.engine import (
    Card,
    Deal,
    Match,
    MatchRules,
    Phase,
    Ruleset,
    Suit,
    View,
    hand_size_for,
    pack_for,
    sample_hands,
)
from sample_bots import rule_bot
from sample_bots.pimc_bot import (
    AUCTION_SHARE,
    CLOCK_MARGIN_S,
    CLOCK_SHARE,
    PimcBot,
    auction_reading,
    budget_for,
    distinct_cards,
    hand_estimates,
    play_out,
)
from sdk import BotView

BUDGET_S = 0.005
"""Enough for a sample or two: these tests check legality, not strength."""


@pytest.mark.parametrize(
    ("players", "ruleset"),
    [(4, Ruleset.PAIRS), (4, Ruleset.PARTNERSHIP), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)],
)
def test_plays_only_legal_moves(players: int, ruleset: Ruleset) -> None:
    match = Match(MatchRules(players, ruleset, deal_cap=1), seed=players)
    bot = PimcBot(BUDGET_S, seed=1)
    others = random.Random(players)
    while match.to_act is not None:
        seat = match.to_act
        view = match.view(seat)
        move = bot.decide(BotView.from_view(view)) if seat % 2 == 0 else others.choice(view.legal_moves)
        assert move in view.legal_moves
        match.apply(seat, move)


def test_thinks_within_the_arena_clock() -> None:
    view = Match(MatchRules(4), seed=1).view(Match(MatchRules(4), seed=1).deal.to_act)
    assert view.phase is Phase.AUCTION
    roomy = BotView.from_view(view, decision_ms=10_000)
    assert budget_for(roomy, 0.2) == pytest.approx(0.2 * AUCTION_SHARE)
    tight = BotView.from_view(view, decision_ms=100)
    assert budget_for(tight, 0.2) == pytest.approx(0.1 * CLOCK_SHARE - CLOCK_MARGIN_S)


def test_passes_arena_check_bot(tmp_path: Path) -> None:
    port_file = tmp_path / "pimc.port"
    command = [sys.executable, "-m", "sample_bots.pimc_bot", "--port", "0", "--port-file", str(port_file)]
    process = subprocess.Popen([*command, "--budget", "0.02"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert process.poll() is None, "the bot exited before it listened"
            assert time.monotonic() < deadline, "the bot wrote no port file in 30 s"
            time.sleep(0.1)
        port = int(port_file.read_text())
        checked = subprocess.run(
            [sys.executable, "-m", "arena.cli", "check-bot", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert " 0 failed" in checked.stdout
    finally:
        process.terminate()
        process.wait(10)


def test_searches_one_card_of_each_equivalent_run() -> None:
    searched_less = 0
    for seed in range(20):
        match = Match(MatchRules(4), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None and match.results == []:
            view = match.view(match.to_act)
            if view.phase is Phase.PLAY:
                legal = [move for move in view.legal_moves if isinstance(move, Card)]
                kept = distinct_cards(view)
                assert set(kept) <= set(legal)
                for card in set(legal) - set(kept):
                    # Left out only beside a kept lower card of its suit with the same points.
                    assert any(
                        other.suit is card.suit and other.points == card.points and other.rank < card.rank
                        for other in kept
                    )
                searched_less += len(kept) < len(legal)
            match.apply(view.seat, rng.choice(view.legal_moves))
    assert searched_less > 0


def rule_bot_play_out(deal: Deal, context: View) -> None:
    """The play-out as the rule bot plays it from each seat's own view: what `play_out` must match."""
    while deal.phase is Phase.PLAY:
        view = deal.view(deal.to_act, context.rules, context.tables, context.teams_out, context.deal_number)
        deal.apply_trusted(rule_bot.choose_card(view))


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)]
)
def test_play_out_plays_the_rule_bots_cards(players: int, ruleset: Ruleset) -> None:
    compared = 0
    for seed in range(6):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None:
            view = match.view(match.to_act)
            if view.phase is Phase.PLAY and rng.random() < 0.3:
                fast = Deal.from_view(view, sample_hands(view, rng))
                slow = fast.copy()
                play_out(fast, view, view.voids)
                rule_bot_play_out(slow, view)
                assert fast.tricks == slow.tricks
                compared += 1
            # Random cards, so that the play-outs start from voids shown and odd positions.
            move = rng.choice(view.legal_moves) if view.phase is Phase.PLAY else rule_bot.decide(view)
            match.apply(view.seat, move)
    assert compared > 10


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)]
)
def test_reading_explains_the_rule_bots_auctions(players: int, ruleset: Ruleset) -> None:
    """The real hands of rule bots explain every call they made, so the reading rules out no deal that
    such opponents can hold; random hands often do not, so it rules out some."""
    unexplained_random = 0
    for seed in range(10):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None:
            view = match.view(match.to_act)
            reading = auction_reading(view)
            held = {seat: list(match.deal.hands[seat]) for seat in view.seats if seat != view.seat}
            assert reading(held) == 0
            unexplained_random += reading(sample_hands(view, rng)) > 0
            match.apply(view.seat, rule_bot.decide(view))
    assert unexplained_random > 0


@pytest.mark.parametrize("players", [4, 6, 8])
def test_hand_estimates_are_the_rule_bots(players: int) -> None:
    rng = random.Random(players)
    shape = rule_bot.TableShape(players, 2)
    pack = list(pack_for(players))
    for _ in range(300):
        hand = rng.sample(pack, hand_size_for(players))
        estimates = hand_estimates(hand, rule_bot.model_for(shape))
        for denomination in (*Suit, None):
            assert estimates[denomination] == rule_bot.estimate(hand, denomination, shape)
