"""`arena play`: a seeded match among built-in random players, printed deal by deal; no bot, no network."""

from __future__ import annotations

import argparse
import random

from arena.cli import options
from arena.cli.options import Commands, Parents
from fiftysix.engine import Match
from fiftysix.players import RandomPlayer
from fiftysix.pretty import describe_deal, describe_ranking, describe_rules
from fiftysix.record import record_match


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena play`."""
    parser = commands.add_parser(
        "play",
        help="play a seeded match among built-in random players and print it",
        parents=[parents.match_settings, parents.record_output],
    )
    parser.set_defaults(handler=play, prog=parser.prog)


def play(args: argparse.Namespace) -> int:
    """Play the match, print every deal and the ranking, and save the record if asked."""
    if args.save:
        options.check_writable(args.save)
    rules = options.rules_of(args)
    match = Match(rules, seed=args.seed)
    players = [RandomPlayer(random.Random(f"{args.seed}/player/{seat}")) for seat in range(rules.players)]
    print("\n".join(describe_rules(rules, args.seed, match.first_dealer)))
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        move = players[seat].choose(match.view(seat), match.legal_moves())
        result = match.apply(seat, move)
        if result is not None:
            print("")
            print("\n".join(describe_deal(result, rules, show_hands=not args.brief)))
    print("")
    print("\n".join(describe_ranking(match.ranking(), match.tables, rules)))
    if args.save:
        names = [f"random-{seat}" for seat in range(rules.players)]
        options.save_record(record_match(match, names, args.seed), args.save)
    return 0
