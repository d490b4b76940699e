"""Engine speed: random legal play through whole deals and whole matches, on one core.

Run by hand: `python bench/engine.py [--seconds 3]`. Every step generates the legal moves and applies a
uniformly random one, as a search or a random bot would. Deals are dealt from seeds outside the timed
loop for the "deal" figures (the auction and all tricks are timed); the "match" figures include dealing,
settlement and elimination. Target (issue 2): at least 3,000 complete 4-player deals per second.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/arena.py shares its name with the `arena` package: take this folder off the import path so that
# `import arena` finds the package, not that script.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import random
import time

from fiftysix.engine import Deal, Match, MatchRules, Phase, Ruleset, ShuffledDeals


def bench_deals(players: int, seconds: float) -> tuple[int, int, float]:
    """Play random deals for about `seconds`; returns (deals, decisions, elapsed seconds)."""
    rules = MatchRules(players)
    seats = tuple(range(players))
    team_of = tuple(rules.team_of(seat) for seat in seats)
    source = ShuffledDeals(12345)
    hands = [source.hands(number, seats, 0) for number in range(1, 201)]
    rng = random.Random(1)
    choice = rng.choice
    deals = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        deal = Deal(seats, team_of, deals % players, hands[deals % len(hands)])
        apply = deal.apply
        legal_moves = deal.legal_moves
        while deal.phase is not Phase.FINISHED:
            apply(deal.to_act, choice(legal_moves()))
            decisions += 1
        deals += 1
        if deals % 50 == 0 and time.perf_counter() > deadline:
            break
    return deals, decisions, time.perf_counter() - start


def bench_matches(players: int, ruleset: Ruleset, seconds: float) -> tuple[int, int, int, float]:
    """Play random matches for about `seconds`; returns (matches, deals, decisions, elapsed)."""
    rules = MatchRules(players, ruleset)
    rng = random.Random(2)
    choice = rng.choice
    matches = deals = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        match = Match(rules, seed=matches)
        while not match.is_over:
            seat = match.deal.to_act
            if match.apply(seat, choice(match.deal.legal_moves())) is not None:
                deals += 1
            decisions += 1
        matches += 1
    return matches, deals, decisions, time.perf_counter() - start


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    args = parser.parse_args()
    print("Random legal play, one core (uniformly random moves, legal moves generated every step)")
    print(f"{'what':<28}{'deals/s':>10}{'decisions/s':>14}{'us/decision':>13}{'decisions/deal':>16}")
    for players in (4, 6, 8):
        deals, decisions, elapsed = bench_deals(players, args.seconds)
        print(
            f"{f'{players}-player deals':<28}{deals / elapsed:>10,.0f}{decisions / elapsed:>14,.0f}"
            f"{elapsed / decisions * 1e6:>13.2f}{decisions / deals:>16.1f}"
        )
    for players in (4, 6, 8):
        for ruleset in Ruleset:
            matches, deals, decisions, elapsed = bench_matches(players, ruleset, args.seconds)
            label = f"{players}-player {ruleset.value} matches"
            print(
                f"{label:<28}{deals / elapsed:>10,.0f}{decisions / elapsed:>14,.0f}"
                f"{elapsed / decisions * 1e6:>13.2f}{decisions / deals:>16.1f}"
                f"   ({matches / elapsed:,.0f} matches/s, {deals / matches:.1f} deals/match)"
            )


if __name__ == "__main__":
    main()
