"""`arena match --bot NAME=HOST:PORT ...`: one match between bots over gRPC, printed deal by deal."""

from __future__ import annotations

import argparse
import asyncio

from arena.cli import arguments, options
from arena.cli.options import Commands, Parents
from arena.errors import UsageError
from arena.runner import MatchSettings, run_match, seats_for_teams
from arena.untrusted import safe_text
from fiftysix.engine import DealResult, first_dealer_for
from fiftysix.pretty import describe_deal, describe_ranking, describe_rules


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena match`."""
    parser = commands.add_parser(
        "match",
        help="play one match between bots over gRPC, one bot per team",
        description="Play one match between remote bots. Exit status: 0 played to the end, "
        "3 decided by a bot's fault (forfeit), 2 bad usage.",
        parents=[parents.bot_match, parents.record_output],
    )
    parser.add_argument(
        "--bot",
        type=arguments.bot_address,
        action="append",
        required=True,
        metavar="NAME=HOST:PORT",
        help="a bot for the next team (give one per team: 2 teams, or players/2 in the pairs ruleset)",
    )
    parser.add_argument("--match-id", help="the match id to use in logs and the record (default: random)")
    parser.set_defaults(handler=play_match, prog=parser.prog)


def play_match(args: argparse.Namespace) -> int:
    """Play the match; print every deal, the faults and the ranking; 3 if a forfeit decided it."""
    rules = options.rules_of(args)
    names = [bot.name for bot in args.bot]
    if len(set(names)) != len(names):
        raise UsageError(f"bot names must differ, got {', '.join(names)}")
    try:
        seats = seats_for_teams(rules, args.bot)
        time_control = options.time_control_of(args)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.save:
        options.check_writable(args.save)
    options.configure_logging_from(args)
    settings = MatchSettings(rules, args.seed, time_control, strikes=args.strikes)
    if args.match_id:
        settings.match_id = args.match_id
    print("\n".join(describe_rules(rules, args.seed, first_dealer_for(args.seed, rules.players))))
    for team, bot in enumerate(args.bot):
        print(f"Team {team} is played by {bot.name} at {bot.address}")

    def show(result: DealResult) -> None:
        print("")
        print("\n".join(describe_deal(result, rules, show_hands=not args.brief)), flush=True)

    outcome = asyncio.run(run_match(settings, seats, on_deal=show))
    print("")
    for fault in outcome.faults:
        action = "a random move was played instead" if fault.substituted else "forfeit"
        name = safe_text(outcome.seat_names[fault.seat], 64)
        print(
            f"Fault: seat {fault.seat} ({name}, team {fault.team}) "
            f"{fault.cause.value} in deal {fault.deal_number}: {safe_text(fault.detail)} ({action})"
        )
    if outcome.forfeited_teams:
        teams = ", ".join(str(team) for team in outcome.forfeited_teams)
        print(f"The match is decided by forfeit: team {teams} ranks last.")
    seat_names = [safe_text(name, 64) for name in outcome.seat_names]
    print("\n".join(describe_ranking(outcome.ranking, outcome.tables, rules, seat_names)))
    if args.save:
        options.save_record(outcome.record, args.save)
    return 3 if outcome.forfeited_teams else 0
