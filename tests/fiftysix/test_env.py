"""The PettingZoo environment (fiftysix.env): PettingZoo's own API test for every size and ruleset, the
action space, the observation (and that it hides what it must), the rewards, and the snippets of
docs/research.md run for real."""

from __future__ import annotations

import asyncio
import random
import re
import types
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena.runner import BotAddress, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import (
    ALL_CARDS,
    STARTING_TABLES,
    FixedFirstDeal,
    IllegalMoveError,
    Match,
    MatchRules,
    Phase,
    Ruleset,
    first_dealer_for,
    legal_calls,
)
from fiftysix.env import (
    ACTION_COUNT,
    ACTIONS,
    ALL_CALLS,
    CARD_COUNT,
    FiftySixEnv,
    ObservationLayout,
    action_of,
    env,
    move_of,
)
from sdk import Bot, start

RESEARCH = Path(__file__).resolve().parents[2] / "docs" / "research.md"


def snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", RESEARCH.read_text(encoding="utf-8"), re.DOTALL)


def seat_of(agent: str) -> int:
    return int(agent.removeprefix("seat_"))


# PettingZoo's test warns that a dict observation is not a plain array; its own card games observe
# the same dict of an observation and an action mask.
@pytest.mark.filterwarnings("ignore:Observation:UserWarning")
@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_pettingzoo_api(players: int, ruleset: Ruleset) -> None:
    api_test(env(players=players, ruleset=ruleset), num_cycles=400)
    api_test(FiftySixEnv(players=players, ruleset=ruleset), num_cycles=400)


def test_the_same_seed_plays_the_same_match() -> None:
    seed_test(lambda render_mode=None: env(players=6, render_mode=render_mode), num_cycles=100)


def test_every_card_and_call_is_one_action() -> None:
    assert ACTION_COUNT == len(set(ACTIONS)) == 32 + 406
    assert ACTIONS[:CARD_COUNT] == ALL_CARDS
    for index in range(ACTION_COUNT):
        assert action_of(move_of(index)) == index
    every_call = set(ALL_CALLS)
    for current in (0, *range(28, 56)):
        assert set(legal_calls(current, True)) <= every_call
    with pytest.raises(ValueError, match="an action is 0 to 437"):
        move_of(ACTION_COUNT)


def test_the_layout_covers_the_vector_once() -> None:
    layout = ObservationLayout(MatchRules(8, Ruleset.PARTNERSHIP))
    covered = [index for part in layout.parts.values() for index in range(part.start, part.stop)]
    assert covered == list(range(layout.size))


def play_randomly(game: FiftySixEnv, seed: int) -> dict[str, float]:
    """A whole match of random legal actions, checking each observation; the total reward of each agent."""
    rng = random.Random(seed)
    game.reset(seed=seed)
    totals = dict.fromkeys(game.possible_agents, 0.0)
    layout = game.layout
    for agent in game.agent_iter():
        observation, reward, termination, truncation, _ = game.last()
        totals[agent] += reward
        if termination or truncation:
            game.step(None)
            continue
        view = game.match.view(seat_of(agent))
        vector, mask = observation["observation"], observation["action_mask"]
        hand = vector[layout.parts["hand"]]
        assert hand.sum() == len(view.hand)
        assert all(hand[ALL_CARDS.index(card)] >= 1 for card in view.hand)
        assert vector[layout.parts["to_act"]][seat_of(agent)] == 1
        assert {move_of(int(index)) for index in np.flatnonzero(mask)} == set(view.legal_moves)
        game.step(int(rng.choice(np.flatnonzero(mask))))
    return totals


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP), (8, Ruleset.PAIRS)]
)
def test_rewards_are_each_teams_tables_won_and_lost(players: int, ruleset: Ruleset) -> None:
    game = FiftySixEnv(players=players, ruleset=ruleset, deal_cap=6)
    totals = play_randomly(game, seed=players)
    rules = game.rules
    for agent, total in totals.items():
        assert total == game.match.tables[rules.team_of(seat_of(agent))] - STARTING_TABLES
    assert game.agents == []


def test_the_ranking_reward_comes_at_the_end() -> None:
    game = FiftySixEnv(players=4, deal_cap=3, ranking_reward=10.0)
    totals = play_randomly(game, seed=3)
    ranking = game.match.ranking()
    for agent, total in totals.items():
        team = game.rules.team_of(seat_of(agent))
        place = 10.0 if ranking[team] == 1 else -10.0
        assert total == game.match.tables[team] - STARTING_TABLES + place


def test_a_deal_cap_truncates() -> None:
    game = FiftySixEnv(players=4, deal_cap=1)
    game.reset(seed=1)
    while not game.match.is_over:
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    assert all(game.truncations.values())
    assert not any(game.terminations.values())
    assert game.infos["seat_0"]["ranking"] == game.match.ranking()


def test_an_illegal_action_raises_in_the_bare_environment() -> None:
    game = FiftySixEnv(players=4)
    game.reset(seed=1)
    with pytest.raises(IllegalMoveError):
        game.step(action_of(ALL_CARDS[0]))  # a card in the auction


@pytest.mark.parametrize("players", [4, 6, 8])
def test_an_observation_never_shows_another_seats_unplayed_cards(players: int) -> None:
    # The same seat 0 hand, the other hands dealt two ways: until seat 0 has seen a card of someone else's
    # (through the auction, which is played the same, and up to seat 0's first lead) its observations
    # must be the same.
    rules = MatchRules(players)
    dealer = first_dealer_for(1, players)
    first = Match(rules, seed=1).deal.hands
    others = [card for seat in range(1, players) for card in first[seat]]
    random.Random(2).shuffle(others)
    size = len(first[0])
    second = {0: first[0]} | {seat: others[(seat - 1) * size : seat * size] for seat in range(1, players)}
    assert second != {seat: first[seat] for seat in range(players)}
    matches = [
        Match(
            rules,
            deals=FixedFirstDeal({seat: first[seat] for seat in range(players)}, 1),
            first_dealer=dealer,
        ),
        Match(rules, deals=FixedFirstDeal(second, 1), first_dealer=dealer),
    ]
    layout = ObservationLayout(rules)
    calls = iter(["28S", "double"])
    while matches[0].deal.phase is Phase.AUCTION:
        seat = matches[0].deal.to_act
        seen = [layout.observation(match.view(0)) for match in matches]
        assert np.array_equal(seen[0], seen[1])
        text = next(calls, "pass")
        call = next(call for call in matches[0].view(seat).legal_moves if str(call) in (text, "pass"))
        for match in matches:
            match.apply(seat, call)
    seen = [layout.observation(match.view(0)) for match in matches]
    assert np.array_equal(seen[0], seen[1])
    assert matches[0].deal.phase is Phase.PLAY


def test_the_random_policy_loop_of_the_docs_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(snippets()[0], "docs/research.md", "exec"), {})
    assert re.fullmatch(r"\(\d, \d\)\n", capsys.readouterr().out)


def test_the_any_policy_loop_of_the_docs_runs() -> None:
    namespace: dict[str, object] = {}
    exec(compile(snippets()[1], "docs/research.md", "exec"), namespace)
    game = namespace["game"]
    assert isinstance(game, FiftySixEnv)
    assert game.match.is_over
    assert game.agents == []


def test_the_policy_bot_of_the_docs_plays_a_match_over_grpc() -> None:
    source = snippets()[2]
    assert len(source.strip().splitlines()) < 20
    module = types.ModuleType("policy_bot")
    exec(compile(source, "docs/research.md", "exec"), module.__dict__)  # the module guard keeps serve() off
    bot_class = module.PolicyBot
    assert issubclass(bot_class, Bot)
    server = start(bot_class)
    try:
        rules = MatchRules(4, deal_cap=3)
        bots = [
            BotAddress("policy", f"127.0.0.1:{server.port}"),
            BotAddress("again", f"127.0.0.1:{server.port}"),
        ]
        outcome = asyncio.run(run_match(MatchSettings(rules, seed=4), seats_for_teams(rules, bots)))
    finally:
        server.stop(grace=None)
    assert outcome.faults == []
    assert outcome.decisions > 30
