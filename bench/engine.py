"""Engine speed: random legal play through whole deals and whole matches, on one core.

Run by hand: `python bench/engine.py [--seconds 3]`. Every step generates the legal moves and applies a
uniformly random one, as a search or a random bot would. Deals are dealt from seeds outside the timed
loop for the "deal" figures (the auction and all tricks are timed); the "match" figures include dealing,
settlement and elimination.

Side by side, in alternating rounds (a shared machine's load changes by the second, so only figures
taken turn about compare; each round's ratio is printed, then their median):

- `--vs-openspiel`: random 4-player playouts of 56 (shuffle, deal, auction, every trick) against
  OpenSpiel's C++ hearts random playouts driven from Python (chance nodes deal the cards, every action
  chosen uniformly among the legal ones). Needs `pip install -e '.[bench]'` (OpenSpiel). Target
  (issue 14): a ratio of at least 1.
- `--baseline DIR`: the same playouts with this checkout's engine against the engine of another checkout
  (say `git worktree add /tmp/base main`), each in its own process: how a change is measured.
- `--search`: determinized playouts as a search bot runs them, from a mid-deal position: copy the deal,
  then trusted moves (`Deal.apply_trusted`) to the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fiftysix import engine
from fiftysix.engine import Deal, Match, MatchRules, Phase, Ruleset, ShuffledDeals, pack_for

clock = time.process_time
"""Rates are per second of this process's CPU time, not of wall time: on a shared machine the other
processes then change them far less (the side-by-side figures still alternate, for what they do change)."""

Measure = Callable[[float], tuple[int, float]]
"""Runs for about the given seconds; returns (playouts, elapsed seconds)."""


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
    start = clock()
    deadline = start + seconds
    while True:
        deal = Deal(seats, team_of, deals % players, hands[deals % len(hands)])
        apply = deal.apply
        legal_moves = deal.legal_moves
        while deal.phase is not Phase.FINISHED:
            apply(deal.to_act, choice(legal_moves()))
            decisions += 1
        deals += 1
        if deals % 50 == 0 and clock() > deadline:
            break
    return deals, decisions, clock() - start


def bench_matches(players: int, ruleset: Ruleset, seconds: float) -> tuple[int, int, int, float]:
    """Play random matches for about `seconds`; returns (matches, deals, decisions, elapsed)."""
    rules = MatchRules(players, ruleset)
    rng = random.Random(2)
    choice = rng.choice
    matches = deals = decisions = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        match = Match(rules, seed=matches)
        while not match.is_over:
            seat = match.deal.to_act
            if match.apply(seat, choice(match.deal.legal_moves())) is not None:
                deals += 1
            decisions += 1
        matches += 1
    return matches, deals, decisions, clock() - start


def random_playouts(seconds: float) -> tuple[int, float]:
    """Random 4-player playouts of 56 from the shuffle to the last trick, through the public API only
    (`Deal`, `legal_moves`, `apply`: what every checkout's engine has, so `--baseline` can run it)."""
    players = 4
    seats = tuple(range(players))
    team_of = tuple(seat % 2 for seat in seats)
    pack = list(pack_for(players))
    rng = random.Random(3)
    choice = rng.choice
    shuffle = rng.shuffle
    finished = Phase.FINISHED
    playouts = 0
    start = clock()
    deadline = start + seconds
    while True:
        shuffle(pack)
        deal = Deal(seats, team_of, playouts % players, {seat: pack[seat::players] for seat in seats})
        apply = deal.apply
        legal_moves = deal.legal_moves
        while deal.phase is not finished:
            apply(deal.to_act, choice(legal_moves()))
        playouts += 1
        if playouts % 20 == 0 and clock() > deadline:
            return playouts, clock() - start


def openspiel_playouts(game_name: str) -> Measure:
    """Random playouts of an OpenSpiel game driven from Python, every action (chance or player) chosen
    uniformly among the legal ones, as `random_playouts` does. Uniform chance is exact for hearts, spades
    and bridge (every deal equally likely; checked on one playout first) and the cheapest way to drive
    them, so OpenSpiel is measured at its fastest. Both loops look up their methods once a playout and
    their constants once (a bound method looked up at every step costs OpenSpiel a tenth of its time)."""
    try:
        import pyspiel  # type: ignore[import-not-found]  # optional: only for --vs-openspiel
    except ImportError:
        raise SystemExit("--vs-openspiel needs OpenSpiel: pip install -e '.[bench]'") from None

    game = pyspiel.load_game(game_name)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node() and len({chance for _, chance in state.chance_outcomes()}) > 1:
            raise SystemExit(f"{game_name} has chance outcomes that are not equally likely")
        state.apply_action(random.choice(state.legal_actions()))

    def measure(seconds: float) -> tuple[int, float]:
        choice = random.Random(4).choice
        playouts = 0
        start = clock()
        deadline = start + seconds
        while True:
            state = game.new_initial_state()
            is_terminal = state.is_terminal
            apply_action = state.apply_action
            legal_actions = state.legal_actions
            while not is_terminal():
                apply_action(choice(legal_actions()))
            playouts += 1
            if playouts % 20 == 0 and clock() > deadline:
                return playouts, clock() - start

    return measure


def search_playouts(seconds: float) -> tuple[int, float]:
    """Playouts as a search bot runs them: from the fourth trick of a seeded 4-player deal, copy the
    deal and finish it with random trusted moves (no re-validation)."""
    players = 4
    seats = tuple(range(players))
    team_of = tuple(seat % 2 for seat in seats)
    rng = random.Random(5)
    root = Deal(seats, team_of, 0, ShuffledDeals(7).hands(1, seats, 0))
    while len(root.tricks) < 3:
        root.apply(root.to_act, rng.choice(root.legal_moves()))
    choice = rng.choice
    playouts = 0
    start = clock()
    deadline = start + seconds
    while True:
        deal = root.copy()
        apply_trusted = deal.apply_trusted
        legal_moves = deal.legal_moves
        while deal.phase is not Phase.FINISHED:
            apply_trusted(choice(legal_moves()))
        playouts += 1
        if playouts % 50 == 0 and clock() > deadline:
            return playouts, clock() - start


def in_checkout(directory: Path, seconds: float) -> Measure:
    """`random_playouts` run by this script in a child process, importing the engine from `directory`."""

    def measure(round_seconds: float) -> tuple[int, float]:
        env = {**os.environ, "PYTHONPATH": str(directory)}
        command = [sys.executable, __file__, "--worker", "--seconds", str(round_seconds)]
        output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
        figures = json.loads(output)
        return int(figures["playouts"]), float(figures["seconds"])

    return measure


def side_by_side(
    names: tuple[str, str], measures: tuple[Measure, Measure], rounds: int, seconds: float
) -> None:
    """Alternate the two measures for `rounds` rounds; print each round's rates, its ratio, the medians."""
    first, second = names
    print(f"{'round':<7}{first + '/s':>22}{second + '/s':>22}{'ratio':>8}")
    ratios: list[float] = []
    rates: tuple[list[float], list[float]] = ([], [])
    for number in range(1, rounds + 1):
        order = (0, 1) if number % 2 else (1, 0)  # who goes first alternates too
        round_rates = [0.0, 0.0]
        for index in order:
            playouts, elapsed = measures[index](seconds)
            round_rates[index] = playouts / elapsed
        ratio = round_rates[0] / round_rates[1]
        ratios.append(ratio)
        rates[0].append(round_rates[0])
        rates[1].append(round_rates[1])
        print(f"{number:<7}{round_rates[0]:>22,.0f}{round_rates[1]:>22,.0f}{ratio:>8.2f}")
    print(
        f"{'median':<7}{statistics.median(rates[0]):>22,.0f}{statistics.median(rates[1]):>22,.0f}"
        f"{statistics.median(ratios):>8.2f}   (ratios {min(ratios):.2f} to {max(ratios):.2f})"
    )


def table(seconds: float) -> None:
    """The figures of every table size and ruleset, one after the other."""
    print("Random legal play, one core (uniformly random moves, legal moves generated every step)")
    print(f"{'what':<28}{'deals/s':>10}{'decisions/s':>14}{'us/decision':>13}{'decisions/deal':>16}")
    for players in (4, 6, 8):
        deals, decisions, elapsed = bench_deals(players, seconds)
        print(
            f"{f'{players}-player deals':<28}{deals / elapsed:>10,.0f}{decisions / elapsed:>14,.0f}"
            f"{elapsed / decisions * 1e6:>13.2f}{decisions / deals:>16.1f}"
        )
    for players in (4, 6, 8):
        for ruleset in Ruleset:
            matches, deals, decisions, elapsed = bench_matches(players, ruleset, seconds)
            label = f"{players}-player {ruleset.value} matches"
            print(
                f"{label:<28}{deals / elapsed:>10,.0f}{decisions / elapsed:>14,.0f}"
                f"{elapsed / decisions * 1e6:>13.2f}{decisions / deals:>16.1f}"
                f"   ({matches / elapsed:,.0f} matches/s, {deals / matches:.1f} deals/match)"
            )


def main() -> None:
    """Print the figures asked for."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds side by side (default 6)")
    parser.add_argument("--vs-openspiel", action="store_true", help="against OpenSpiel's C++ hearts")
    parser.add_argument("--game", default="hearts", help="the OpenSpiel game for --vs-openspiel")
    parser.add_argument("--baseline", type=Path, help="against the engine of the checkout in this folder")
    parser.add_argument("--search", action="store_true", help="search playouts: copy and trusted moves")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.worker:
        print(f"engine: {Path(engine.__file__).parent}")
    if args.worker:
        playouts, elapsed = random_playouts(args.seconds)
        print(json.dumps({"playouts": playouts, "seconds": elapsed}))
    elif args.vs_openspiel:
        print(f"Random playouts, one core: 4-player 56 (pure Python) against OpenSpiel {args.game} (C++)")
        side_by_side(
            ("56", args.game), (random_playouts, openspiel_playouts(args.game)), args.rounds, args.seconds
        )
    elif args.baseline is not None:
        here = Path(__file__).resolve().parents[1]
        print(f"Random 4-player playouts, one core: {here} against {args.baseline}, each in its own process")
        side_by_side(
            ("this checkout", "baseline"),
            (in_checkout(here, args.seconds), in_checkout(args.baseline.resolve(), args.seconds)),
            args.rounds,
            args.seconds,
        )
    elif args.search:
        playouts, elapsed = search_playouts(args.seconds)
        print(f"Search playouts from the fourth trick of a 4-player deal: {playouts / elapsed:,.0f}/s")
    else:
        table(args.seconds)


if __name__ == "__main__":
    main()
