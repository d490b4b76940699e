"""The strong bot (sample_bots/strong_bot.py): legal moves in every kind of table, the same play for the
same seed and sample count, its stakes, its reading of the play, its allowance, its play-outs (the rule
bot's cards, from what the rule bot would read of a real view at every card), and the whole protocol
through `arena check-bot` against the bot running as its own process. Its strength is measured by
bench/strength.py, its play-outs' speed by bench/playout.py, not here."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
from bot_process import start_with_port_file

from fiftysix.engine import Card, Deal, Match, MatchRules, Move, Phase, Ruleset, Suit, sample_hands
from fiftysix.wire import TimeControl
from sample_bots import pimc_bot, rule_bot
from sample_bots.strong_bot import (
    BANK_CAP,
    BID_LIFT,
    MAX_SHARE,
    MIN_SHARE,
    PLAY_TRUST,
    Allowance,
    Methods,
    RulePlay,
    Stakes,
    StrongBot,
    bid_chance,
    bid_worth,
    card_worth,
    play_out,
    play_reading,
)
from sdk import BotView, MatchInfo

SAMPLES = 3
"""Enough to search: these tests check legality and sameness, not strength."""


def play(match: Match, bots: dict[int, StrongBot], others: random.Random) -> list[Move]:
    """Play `match` to its end, `bots` at their seats and random moves elsewhere; the moves made."""
    for seat, bot in bots.items():
        names = tuple("strong" if other in bots else "random" for other in range(match.rules.players))
        bot.on_match_start(MatchInfo("m1", match.rules, seat, match.team_of, names, TimeControl()))
    moves: list[Move] = []
    while match.to_act is not None:
        seat = match.to_act
        view = match.view(seat)
        # A roomy clock, so that the machine's load never cuts a decision short: the samples alone decide.
        bot_view = BotView.from_view(view, decision_ms=600_000)
        move = bots[seat].decide(bot_view) if seat in bots else others.choice(view.legal_moves)
        assert move in view.legal_moves
        match.apply(seat, move)
        moves.append(move)
    return moves


@pytest.mark.parametrize(
    ("players", "ruleset"),
    [(4, Ruleset.PAIRS), (4, Ruleset.PARTNERSHIP), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)],
)
def test_plays_only_legal_moves(players: int, ruleset: Ruleset) -> None:
    match = Match(MatchRules(players, ruleset, deal_cap=1), seed=players)
    play(match, {seat: StrongBot(samples=SAMPLES) for seat in range(0, players, 2)}, random.Random(players))


@pytest.mark.parametrize(
    "methods",
    [
        Methods(),
        Methods(inference=True),
        Methods(stakes=False, allowance=False, points=False, bid_lift=False),
    ],
)
def test_the_same_seed_and_sample_count_play_the_same(methods: Methods) -> None:
    def moves() -> list[Move]:
        match = Match(MatchRules(4, deal_cap=2), seed=7)
        bots = {seat: StrongBot(samples=SAMPLES, methods=methods) for seat in (0, 1)}
        return play(match, bots, random.Random(7))

    assert moves() == moves()


def test_stakes_value_the_match_not_the_tables() -> None:
    rules = MatchRules(4, deal_cap=8)
    view = Match(rules, seed=1).view(0)
    last = Stakes(view.team, (13, 12), (0, 1), 0, 1.0, True)
    # At the last deal one table ahead: a contract of 28 made or lost by the team is a win or a loss...
    assert last.worth(0, 28, True, 1) == 1.0
    assert last.worth(0, 28, False, 1) == 0.0
    # ...and five ahead, losing a doubled 28 (4 tables) loses the match, losing it undoubled (2) does not.
    ahead = Stakes(view.team, (15, 10), (0, 1), 0, 1.0, True)
    assert ahead.worth(0, 28, False, 1) == 1.0
    assert ahead.worth(0, 28, False, 2) == 0.0
    # With deals to come, a made contract is worth more than a lost one, and less than certain.
    early = Stakes.of(view)
    assert early.by_match
    assert early.deals_left == 7
    assert early.worth(0, 28, False, 1) < early.unchanged() < early.worth(0, 28, True, 1)
    # Without a cap: the gambler's ruin, the team's share of the tables.
    endless = Stakes(view.team, (13, 11), (0, 1), None, 1.0, True)
    assert endless.worth(1, 28, True, 1) == pytest.approx(12 / 24)


def test_stakes_in_tables_with_more_than_two_teams_or_the_method_off() -> None:
    view = Match(MatchRules(6, Ruleset.PAIRS), seed=1).view(0)
    stakes = Stakes.of(view)
    assert not stakes.by_match
    assert stakes.worth(view.team, 40, True, 1) == 2 * 2  # two paying teams, 2 tables each
    assert stakes.worth(view.team, 28, False, 2) == -2 * 4
    assert not Stakes.of(Match(MatchRules(4), seed=1).view(0), by_match=False).by_match


def test_a_bid_is_valued_with_the_doubles_it_draws() -> None:
    view = Match(MatchRules(4), seed=1).view(0)
    stakes = Stakes.of(view, by_match=False)  # in tables: won 1, lost 2, each doubled
    # Undoubled, a 28 pays from a chance of 2/3 on...
    assert bid_worth(stakes, view.team, 28, 2 / 3, False) == pytest.approx(0)
    # ...doubled in 80% of the deals it fails and 20% of those it makes, from 3/4: 0.75 (1 + 0.2) tables
    # won against 0.25 (2 + 0.8 * 2) lost.
    assert bid_worth(stakes, view.team, 28, 0.75, True) == pytest.approx(0)
    assert bid_worth(stakes, view.team, 28, 0.7, True) < 0 < bid_worth(stakes, view.team, 28, 0.7, False)
    # A sure contract is worth more when it draws a double (made and doubled pays twice).
    assert bid_worth(stakes, view.team, 40, 1.0, True) == pytest.approx(2 * (1 + 0.2))


def test_an_own_bid_counts_the_samples_points_lifted() -> None:
    taken = [24, 26, 27, 29, 30, 33]
    assert bid_chance(taken, 30, lifted=False) == pytest.approx(2 / 6)
    # Each sample's points lifted by BID_LIFT: those within it of the bid count as made too.
    assert bid_chance(taken, 30, lifted=True) == pytest.approx(
        sum(count + BID_LIFT >= 30 for count in taken) / 6
    )
    assert bid_chance(taken, 30, lifted=True) > bid_chance(taken, 30, lifted=False)
    assert bid_chance(taken, 34 + BID_LIFT, lifted=True) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_a_card_is_worth_its_outcome_and_with_the_points_the_points_taken(seed: int) -> None:
    view = Match(MatchRules(4), seed=seed).view(0)
    hands = sample_hands(view, random.Random(seed))
    shown_out = {seat: frozenset[Suit]() for seat in view.seats}
    for declarer, trump in ((0, Suit.SPADES), (1, None)):
        deal = pimc_bot.contracted(view, hands, declarer, trump)
        played = deal.copy()
        play_out(played, shown_out)
        for team in (0, 1):
            stakes = Stakes(team, (11, 13), (0, 1), 5, 1.0, True)
            outcome = stakes.worth(deal.team_of[declarer], 28, played.made, 1)
            assert card_worth(deal.copy(), shown_out, stakes, points=False) == outcome
            with_points = card_worth(deal.copy(), shown_out, stakes, points=True)
            assert with_points == pytest.approx(outcome + pimc_bot.POINT_BONUS * played.points[team])
            assert played.points[team] > 0


@pytest.mark.parametrize(("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP)])
def test_the_real_hands_of_rule_bots_explain_their_play(players: int, ruleset: Ruleset) -> None:
    """Rule bots' real hands explain every card they played (weight 1); random hands often do not."""
    weighed = less = 0
    for seed in range(6):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None:
            view = match.view(match.to_act)
            weigh = play_reading(view)
            if weigh is not None and view.phase is Phase.PLAY:
                held = {seat: list(match.deal.hands[seat]) for seat in view.seats if seat != view.seat}
                assert weigh(held) == 1.0
                random_weight = weigh(sample_hands(view, rng))
                unexplained = math.log(random_weight) / math.log(
                    PLAY_TRUST
                )  # cards the rule bot would not play
                assert unexplained == pytest.approx(round(unexplained))
                less += random_weight < 1
                weighed += 1
            match.apply(view.seat, rule_bot.decide(view))
    assert weighed > 20
    assert less > 0


def test_the_allowance_saves_what_settled_decisions_leave_and_caps_a_close_one() -> None:
    allowance = Allowance(10)
    assert allowance.limit(1.0) == (10 * MIN_SHARE, 10)
    allowance.spent(1.0, 4)  # settled early: 6 saved
    assert allowance.limit(1.0) == (10 * MIN_SHARE, 16)
    for _ in range(30):
        allowance.spent(1.0, 0)
    assert allowance.limit(1.0)[1] == 10 * MAX_SHARE
    assert allowance.saved == 10 * BANK_CAP
    allowance.spent(2.0, 70)  # an auction decision spent 50 more than its share
    assert allowance.saved == 10 * BANK_CAP - 50
    allowance.spent(1.0, 1000)
    assert allowance.saved == 0


def test_passes_arena_check_bot(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "sample_bots.strong_bot", "--budget", "0.01"]
    bot = start_with_port_file(command, tmp_path / "strong.port", ())
    try:
        checked = subprocess.run(
            [sys.executable, "-m", "arena.cli", "check-bot", bot.address],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert " 0 failed" in checked.stdout
    finally:
        bot.stop()


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)]
)
def test_play_out_plays_the_pimc_bots_cards(players: int, ruleset: Ruleset) -> None:
    """The counted play-out chooses the cards of the PIMC bot's (which are the rule bot's:
    tests/sample_bots/test_pimc_bot.py), from odd positions with voids shown."""
    compared = stopped_early = 0
    for seed in range(6):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None:
            view = match.view(match.to_act)
            if view.phase is Phase.PLAY and rng.random() < 0.3:
                fast = Deal.from_view(view, sample_hands(view, rng))
                slow = fast.copy()
                short = fast.copy()
                play_out(fast, view.voids)
                pimc_bot.play_out(slow, view, view.voids)
                assert fast.tricks == slow.tricks
                # Stopped once the contract is decided, it tells the same outcome, sooner or as late.
                assert play_out(short, view.voids, until_decided=True) == slow.made
                assert short.tricks == slow.tricks[: len(short.tricks)]
                stopped_early += short.phase is Phase.PLAY
                compared += 1
            move = rng.choice(view.legal_moves) if view.phase is Phase.PLAY else rule_bot.decide(view)
            match.apply(view.seat, move)
    assert compared > 10
    assert stopped_early > 0


def counted(knowledge: rule_bot.Knowledge) -> tuple[object, ...]:
    """A knowledge's values, its voids as plain sets (a view gives frozen ones, a play-out its own)."""
    voids = {seat: set(suits) for seat, suits in knowledge.voids.items()}
    return (
        knowledge.trump,
        list(knowledge.unseen_count),
        list(knowledge.top_unseen),
        voids,
        knowledge.hand_size,
    )


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_rule_play_reads_what_a_view_shows_and_plays_the_rule_bots_card(
    players: int, ruleset: Ruleset
) -> None:
    """At every card with a choice of play-outs from sampled deals (from many points of many deals, some
    of their cards random, for voids shown and odd positions), the counted play (`RulePlay`) holds what
    the rule bot reads of the real view of the seat to play (`rule_bot.know`, `rule_bot.position_of`) and
    picks the card the rule bot picks from that view; and `play_out` plays the rule bot's cards."""
    seen: set[str] = set()
    for seed in range(16):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        rng = random.Random(seed)
        while match.to_act is not None:
            view = match.view(match.to_act)
            if view.phase is Phase.PLAY and rng.random() < 0.2:
                deal = Deal.from_view(view, sample_hands(view, rng))
                reference, whole = deal.copy(), deal.copy()
                rule_play = RulePlay(deal, view.voids)
                while deal.phase is Phase.PLAY:
                    legal = deal.legal_moves()
                    seat_view = deal.view(
                        deal.to_act, view.rules, view.tables, view.teams_out, view.deal_number
                    )
                    card = legal[0]
                    if len(legal) > 1:
                        card = rule_play.card(legal)
                        assert card == rule_bot.choose_card(seat_view)
                        assert counted(rule_play.knowledge) == counted(rule_bot.know(seat_view))
                        assert rule_play.positions[deal.to_act] == rule_bot.position_of(seat_view)
                        seen.add("follow" if deal.trick else "lead")
                        seen.update(f"void {suit.name}" for suit in rule_play.voids[deal.to_act])
                    if rng.random() < 0.2:
                        card = rng.choice(legal)  # a card the rule bot might not play
                    assert isinstance(card, Card)
                    rule_play.play(card)
                # The whole play-out, against the rule bot's card from a real view at every step.
                while reference.phase is Phase.PLAY:
                    seat = reference.to_act
                    seat_view = reference.view(
                        seat, view.rules, view.tables, view.teams_out, view.deal_number
                    )
                    reference.apply_trusted(rule_bot.choose_card(seat_view))
                play_out(whole, view.voids)
                assert whole.tricks == reference.tricks
                seen.add("play-out")
            move = rng.choice(view.legal_moves) if view.phase is Phase.PLAY else rule_bot.decide(view)
            match.apply(view.seat, move)
    assert {"lead", "follow", "play-out", *(f"void {suit.name}" for suit in Suit)} <= seen
