"""The `arena` command line: play, match, replay (and, as they land, ladder, bots, check-bot).

This is the one place that prints for people; everything below it returns values or logs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from collections.abc import Callable, Sequence

from arena.engine import DealResult, Match, MatchRules, Ruleset, first_dealer_for
from arena.logs import configure_logging
from arena.match_runner import BotAddress, MatchSettings, run_match, seats_for_teams
from arena.players import RandomPlayer
from arena.pretty import describe_deal, describe_ranking, describe_rules
from arena.protocol import TimeControl
from arena.record import RecordError, load, record_match
from arena.replay import replay


def _players(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 4, 6 or 8, got {text!r}") from None
    if value not in (4, 6, 8):
        raise argparse.ArgumentTypeError(f"56 is played by 4, 6 or 8 players, not {value}")
    return value


def _ruleset(text: str) -> Ruleset:
    try:
        return Ruleset.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected zero or more, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def add_match_settings(parser: argparse.ArgumentParser) -> None:
    """The options every command that plays a match shares."""
    parser.add_argument("--players", type=_players, default=4, help="4, 6 or 8 (default 4)")
    parser.add_argument(
        "--ruleset", type=_ruleset, default=Ruleset.PAIRS, help="pairs (default) or partnership"
    )
    parser.add_argument("--seed", type=_seed, default=1, help="match seed: fixes every deal (default 1)")
    parser.add_argument(
        "--deal-cap", type=_positive, default=None, help="end the match after this many deals"
    )


def _play(args: argparse.Namespace) -> int:
    rules = MatchRules(args.players, args.ruleset, args.deal_cap)
    match = Match(rules, seed=args.seed)
    players = [RandomPlayer(random.Random(f"{args.seed}/player/{seat}")) for seat in range(rules.players)]
    out = sys.stdout
    print("\n".join(describe_rules(rules, args.seed, match.first_dealer)), file=out)
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        move = players[seat].choose(match.view(seat), match.legal_moves())
        result = match.apply(seat, move)
        if result is not None:
            print("", file=out)
            print("\n".join(describe_deal(result, rules, show_hands=not args.brief)), file=out)
    print("", file=out)
    print("\n".join(describe_ranking(match.ranking(), match.tables, rules)), file=out)
    if args.save:
        names = [f"random-{seat}" for seat in range(rules.players)]
        record_match(match, names, args.seed).save(args.save)
        print(f"Game record saved to {args.save}", file=out)
    return 0


def _replay(args: argparse.Namespace) -> int:
    try:
        record = load(args.file)
        replayed = replay(record)
    except RecordError as error:
        print(f"{args.file}: {error}", file=sys.stderr)
        return 1
    rules = record.rules
    if not args.quiet:
        print("\n".join(describe_rules(rules, record.seed, record.first_dealer)))
        for result in replayed.results:
            print("")
            print("\n".join(describe_deal(result, rules, show_hands=False)))
        print("")
        if replayed.complete:
            match = replayed.match
            print("\n".join(describe_ranking(match.ranking(), match.tables, rules, record.seats)))
    ended = "complete" if replayed.complete else f"stopped early ({(record.result or {}).get('reason')})"
    print(
        f"{args.file}: {len(record.deals)} deals replayed, every move legal and every result checked; {ended}"
    )
    return 0


def _bot(text: str) -> BotAddress:
    try:
        return BotAddress.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _match(args: argparse.Namespace) -> int:
    rules = MatchRules(args.players, args.ruleset, args.deal_cap)
    names = [bot.name for bot in args.bot]
    if len(set(names)) != len(names):
        print(f"arena match: error: bot names must differ, got {', '.join(names)}", file=sys.stderr)
        return 2
    try:
        seats = seats_for_teams(rules, args.bot)
        time_control = TimeControl(args.decision_ms, args.bank_ms)
    except ValueError as error:
        print(f"arena match: error: {error}", file=sys.stderr)
        return 2
    configure_logging(json_lines=True if args.log_json else None, level=args.log_level)
    settings = MatchSettings(rules, args.seed, time_control)
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
        print(
            f"Fault: seat {fault.seat} ({outcome.seat_names[fault.seat]}, team {fault.team}) "
            f"{fault.cause.value} in deal {fault.deal_number}: {fault.detail}"
        )
    if outcome.faults:
        teams = ", ".join(str(team) for team in outcome.forfeited_teams)
        print(f"The match is decided by forfeit: team {teams} ranks last.")
    print("\n".join(describe_ranking(outcome.ranking, outcome.tables, rules, outcome.seat_names)))
    if args.save:
        outcome.record.save(args.save)
        print(f"Game record saved to {args.save}")
    return 3 if outcome.faults else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="arena", description="A bot-battle arena for the card game 56.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = commands.add_parser("play", help="play a seeded match among built-in random players and print it")
    add_match_settings(play)
    play.add_argument("--save", metavar="FILE", help="save the game record (JSON) to FILE")
    play.add_argument("--brief", action="store_true", help="do not print the hands of each deal")
    play.set_defaults(handler=_play)

    match = commands.add_parser(
        "match",
        help="play one match between bots over gRPC, one bot per team",
        description="Play one match between remote bots. Exit status: 0 played to the end, "
        "3 decided by a bot's fault (forfeit), 2 bad usage.",
    )
    match.add_argument(
        "--bot",
        type=_bot,
        action="append",
        required=True,
        metavar="NAME=HOST:PORT",
        help="a bot for the next team (give one per team: 2 teams, or players/2 in the pairs ruleset)",
    )
    add_match_settings(match)
    match.add_argument("--decision-ms", type=_positive, default=1000, help="time per decision (default 1000)")
    match.add_argument(
        "--bank-ms", type=_non_negative, default=10000, help="per-match time bank (default 10000)"
    )
    match.add_argument("--match-id", help="the match id to use in logs and the record (default: random)")
    match.add_argument("--save", metavar="FILE", help="save the game record (JSON) to FILE")
    match.add_argument("--brief", action="store_true", help="do not print the hands of each deal")
    match.add_argument("--log-json", action="store_true", help="log JSON lines even on a terminal")
    match.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="default info"
    )
    match.set_defaults(handler=_match)

    replay_parser = commands.add_parser(
        "replay", help="check a game record move by move and print the results"
    )
    replay_parser.add_argument("file", metavar="FILE", help="a game record (JSON)")
    replay_parser.add_argument("--quiet", action="store_true", help="print only the verdict")
    replay_parser.set_defaults(handler=_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 failure, 2 bad usage)."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except BrokenPipeError:
        # The reader went away (`arena play | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
