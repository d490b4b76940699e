"""The `arena` command line: ladder, bots, match, check-bot, play, replay.

This is the one place that prints for people; everything below it returns values or logs.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NoReturn

from arena import arguments
from arena.check.command import add_parser as add_check_bot_parser
from arena.ladder import (
    DEFAULT_DB,
    BotEntry,
    BotStartError,
    Ladder,
    LadderError,
    LadderSettings,
    LadderStore,
    LocalBots,
    Standing,
    StoreError,
    ladder_standings,
    wait_until_ready,
)
from arena.progress import Progress
from arena.runner import MatchSettings, run_match, seats_for_teams, split_addresses
from arena.untrusted import safe_text
from fiftysix.engine import DealResult, Match, MatchRules, Ruleset, first_dealer_for
from fiftysix.logs import configure_logging
from fiftysix.players import RandomPlayer
from fiftysix.pretty import describe_deal, describe_ranking, describe_rules
from fiftysix.record import GameRecord, RecordError, load, record_match
from fiftysix.replay import replay
from fiftysix.wire import TimeControl


def add_match_settings(parser: argparse.ArgumentParser) -> None:
    """The options every command that plays a match shares."""
    parser.add_argument("--players", type=arguments.players, default=4, help="4, 6 or 8 (default 4)")
    parser.add_argument(
        "--ruleset", type=arguments.ruleset, default=Ruleset.PAIRS, help="pairs (default) or partnership"
    )
    parser.add_argument(
        "--seed",
        type=arguments.seed,
        default=1,
        help=f"match seed, {arguments.seed.range}: fixes every deal (default 1)",
    )
    parser.add_argument(
        "--deal-cap",
        type=arguments.deal_cap,
        default=None,
        help=f"end the match after this many deals ({arguments.deal_cap.range})",
    )


def add_time_control(parser: argparse.ArgumentParser) -> None:
    """The clock options of the commands that play bots."""
    parser.add_argument(
        "--decision-ms",
        type=arguments.decision_ms,
        default=1000,
        help=f"time per decision ({arguments.decision_ms.range}; default 1000)",
    )
    parser.add_argument(
        "--bank-ms",
        type=arguments.bank_ms,
        default=10000,
        help=f"per-match time bank ({arguments.bank_ms.range}; default 10000)",
    )


def _unwritable(path: str) -> str | None:
    """Why a record cannot be saved at `path`, or None: checked before a match is played, so that a
    typo in --save does not throw the match away at its end."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        return f"cannot save to {path}: it is a directory"
    if not folder.is_dir():
        return f"cannot save to {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot save to {path}: no permission to write in {folder}"
    return None


def _save(command: str, record: GameRecord, path: str) -> int:
    """Save a game record; a failure is one error line (status 1)."""
    try:
        record.save(path)
    except OSError as error:
        return _error(command, f"cannot save to {path}: {error.strerror}")
    print(f"Game record saved to {safe_text(path)}")
    return 0


def _play(args: argparse.Namespace) -> int:
    if args.save and (problem := _unwritable(args.save)):
        return _error("play", problem)
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
        return _save("play", record_match(match, names, args.seed), args.save)
    return 0


def _error(command: str, message: str, status: int = 1) -> int:
    """Print one error line for `arena COMMAND` and return the exit status. The message may quote files,
    records and bots, so it is made safe (one line, no terminal escapes, bounded)."""
    print(f"arena {command}: error: {safe_text(message, 1000)}", file=sys.stderr)
    return status


def _replay(args: argparse.Namespace) -> int:
    try:
        record = load(args.file)
        replayed = replay(record)
    except RecordError as error:
        return _error("replay", f"{args.file}: {error}")
    rules = record.rules
    if not args.quiet:
        print("\n".join(describe_rules(rules, record.seed, record.first_dealer)))
        for result in replayed.results:
            print("")
            print("\n".join(describe_deal(result, rules, show_hands=False)))
        print("")
        if replayed.complete:
            match = replayed.match
            names = [safe_text(name, 64) for name in record.seats]
            print("\n".join(describe_ranking(match.ranking(), match.tables, rules, names)))
    reason = safe_text((record.result or {}).get("reason"), 100)
    ended = "complete" if replayed.complete else f"stopped early ({reason})"
    checked = f"{len(record.deals)} deals replayed, every move legal and every result checked"
    print(f"{safe_text(args.file)}: {checked}; {ended}")
    return 0


def _match(args: argparse.Namespace) -> int:
    rules = MatchRules(args.players, args.ruleset, args.deal_cap)
    names = [bot.name for bot in args.bot]
    if len(set(names)) != len(names):
        return _error("match", f"bot names must differ, got {', '.join(names)}", 2)
    try:
        seats = seats_for_teams(rules, args.bot)
        time_control = TimeControl(args.decision_ms, args.bank_ms)
    except ValueError as error:
        return _error("match", str(error), 2)
    if args.save and (problem := _unwritable(args.save)):
        return _error("match", problem)
    configure_logging(json_lines=True if args.log_json else None, level=args.log_level)
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
    if args.save and _save("match", outcome.record, args.save) != 0:
        return 1
    return 3 if outcome.forfeited_teams else 0


SAMPLE_BOTS = {
    "random": "python -m sample_bots.random_bot --port {port}",
    "rules": "python -m sample_bots.rule_bot --port {port}",
}


_READ_COMMANDS: Final = {"list", "show", "matches", "record"}
"""Subcommands of `bots` and `ladder` that only read the store: they work on a read-only file."""


def _with_store(command: str, args: argparse.Namespace, use: Callable[[LadderStore], int]) -> int:
    """Open the store, run `use` on it and close it. A StoreError at any point (opening, a query, a
    write, closing) is one error line and exit status 1."""
    action = args.bots_command if command == "bots" else args.ladder_command
    try:
        store = LadderStore(args.db, read_only=None if action in _READ_COMMANDS else False)
        try:
            return use(store)
        finally:
            store.close()
    except StoreError as error:
        return _error(f"{command} {action}", str(error))


async def _check_bot(name: str, address: str | None, command: str | None) -> None:
    """Make sure a bot answers the handshake before registering it (a command is started and stopped)."""
    if address is not None:
        for one in split_addresses(address):
            try:
                await wait_until_ready(one, timeout=3.0)
            except BotStartError as error:
                raise StoreError(
                    f"cannot reach {name!r} at {one}: {error} (use --no-check to register anyway)"
                ) from None
        return
    assert command is not None
    local = LocalBots(Path(tempfile.mkdtemp(prefix="arena-check-")))
    try:
        await local.acquire(BotEntry(name, None, command, 0.0, None), 1)
    except BotStartError as error:
        raise StoreError(str(error)) from None
    finally:
        await local.stop_all()


def _bots(args: argparse.Namespace) -> int:
    if args.bots_command in ("add", "update") and (args.address is None) == (args.command is None):
        return _error(f"bots {args.bots_command}", "give either HOST:PORT or --command CMD", 2)
    return _with_store("bots", args, lambda store: _bots_action(args, store))


def _bots_action(args: argparse.Namespace, store: LadderStore) -> int:
    if args.bots_command == "add" or args.bots_command == "update":
        address, command = args.address, args.command
        if args.bots_command == "add" and args.name in {bot.name for bot in store.bots()}:
            raise StoreError(f"a bot named {args.name!r} is already registered")
        if args.bots_command == "update":
            store.bot(args.name)
        if not args.no_check:
            asyncio.run(_check_bot(args.name, address, command))
        if args.bots_command == "add":
            entry = store.add_bot(args.name, address, command)
            print(f"Registered {entry.name}: {entry.where}")
        else:
            entry = store.update_bot(args.name, address, command)
            print(f"Updated {entry.name}: {entry.where}")
    elif args.bots_command == "remove":
        store.remove_bot(args.name)
        print(f"Removed {safe_text(args.name)} (its finished matches stay in the history)")
    elif args.bots_command == "probation":
        store.set_probation(args.name, None if args.clear else args.reason)
        change = "off probation" if args.clear else f"on probation ({args.reason})"
        print(f"{safe_text(args.name)}: {safe_text(change)}")
    else:
        bots = store.bots()
        if args.json:
            print(json.dumps([dataclasses.asdict(bot) for bot in bots], indent=1))
        elif not bots:
            print("No bots registered. Add one with: arena bots add NAME HOST:PORT")
        else:
            for bot in bots:
                status = f"  probation: {safe_text(bot.probation)}" if bot.probation else ""
                print(f"{safe_text(bot.name, 64):<20} {bot.rating:7.1f}  {safe_text(bot.where)}{status}")
    return 0


def format_standings(standings: Sequence[Standing]) -> list[str]:
    """The standings as an aligned table."""
    header = (
        "rank",
        "bot",
        "elo",
        "95% interval",
        "matches",
        "wins",
        "losses",
        "timeouts",
        "illegal",
        "crashes",
    )
    rows = [header]
    for line in standings:
        interval = "-" if line.interval == float("inf") else f"+/- {line.interval:.0f}"
        name = safe_text(line.bot, 64) + (" (probation)" if line.probation else "")
        rows.append(
            (
                str(line.rank),
                name,
                f"{line.rating:.0f}",
                interval,
                str(line.matches),
                str(line.wins),
                str(line.losses),
                str(line.timeouts),
                str(line.illegal_moves),
                str(line.crashes),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if column == 1 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def _show_standings(store: LadderStore, as_json: bool) -> None:
    standings = ladder_standings(store)
    if as_json:
        print(json.dumps([line.to_json() for line in standings], indent=1))
    elif not standings:
        print("No bots registered yet.")
    else:
        print("\n".join(format_standings(standings)))
        for line in standings:
            if line.probation:
                print(f"{safe_text(line.bot, 64)} is on probation: {safe_text(line.probation)}")


def _ladder(args: argparse.Namespace) -> int:
    return _with_store("ladder", args, lambda store: _ladder_action(args, store))


def _ladder_action(args: argparse.Namespace, store: LadderStore) -> int:
    if args.ladder_command == "show":
        _show_standings(store, args.json)
        return 0
    if args.ladder_command == "matches":
        _list_matches(store, args.bot, args.limit, args.json)
        return 0
    if args.ladder_command == "record":
        return _export_record(store, args.match_id, args.output)
    return _ladder_run(args, store)


def _list_matches(store: LadderStore, bot: str | None, limit: int, as_json: bool) -> None:
    """The newest finished matches (of one bot), newest first."""
    matches = store.recent_matches(bot, limit)
    if as_json:
        print(json.dumps([match.to_json() for match in matches], indent=1))
        return
    if not matches:
        print("No finished matches.")
    for match in matches:
        order = sorted(match.bot_ranks.items(), key=lambda item: (item[1], item[0]))
        ranks = ", ".join(f"{rank}. {safe_text(name, 64)}" for name, rank in order)
        faults = f"  {len(match.faults)} faults" if match.faults else ""
        shown_id, reason = safe_text(match.id, 64), safe_text(match.reason, 64)
        print(f"{shown_id:<24} set {match.set_id:<4} {reason:<14} {ranks}{faults}")


def _export_record(store: LadderStore, match_id: str, output: str | None) -> int:
    """Write a stored match's game record (for `arena replay`) to a file or standard output."""
    text = json.dumps(store.match_record(match_id), indent=1) + "\n"
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as error:
            return _error("ladder record", f"cannot write {output}: {error.strerror}")
        print(f"Game record of {safe_text(match_id)} saved to {safe_text(output)}")
    else:
        sys.stdout.write(text)
    return 0


def _ladder_run(args: argparse.Namespace, store: LadderStore) -> int:
    configure_logging(json_lines=True if args.log_json else None, level=args.log_level)
    if args.sample_bots:
        registered = {bot.name for bot in store.bots()}
        for name, command in SAMPLE_BOTS.items():
            if name not in registered:
                store.add_bot(name, command=command)
                print(f"Registered the sample bot {name}: {command}")
    settings = LadderSettings(
        matches=None if args.forever else args.matches,
        concurrency=args.concurrency,
        players=args.players,
        ruleset=args.ruleset,
        deal_cap=args.deal_cap,
        time_control=TimeControl(args.decision_ms, args.bank_ms),
        seed=args.seed,
        strikes=args.strikes,
        probation_after=args.probation_after,
    )
    local_bots = LocalBots(Path(f"{args.db}-logs"))
    progress = Progress(settings.matches)
    ladder = Ladder(
        store, settings, local_bots, on_match=lambda outcome, _report: progress.advance(len(outcome.faults))
    )
    try:
        ladder.check()
    except LadderError as error:
        return _error("ladder run", str(error))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, _stop_once, loop, ladder)
        try:
            await ladder.run()
        finally:
            await local_bots.stop_all()

    what = "until stopped (Ctrl-C)" if settings.matches is None else f"{settings.matches} matches"
    print(f"Playing {what}, {settings.concurrency} at a time; results in {args.db}", file=sys.stderr)
    failure = None
    try:
        asyncio.run(run())
    except LadderError as error:
        failure = str(error)
    finally:
        progress.close()
    if failure is not None:
        return _error("ladder run", failure)  # after the progress line has ended: a line of its own
    report = ladder.report
    print(
        f"Played {report.matches} matches ({report.sets_rated} sets rated, {report.faults} faults) "
        f"in {report.seconds:.1f} s"
    )
    for name, reason in report.probations:
        print(f"{safe_text(name, 64)} was put on probation: {safe_text(reason)}")
    for set_id, reason in report.voided_sets:
        print(f"Set {set_id} was made void (never rated): {safe_text(reason)}")
    if report.arena_errors:
        print(f"{report.arena_errors} matches failed by an error of the arena's own (see the log)")
    print("")
    _show_standings(store, as_json=False)
    return 0


def _stop_once(loop: asyncio.AbstractEventLoop, ladder: Ladder) -> None:
    """First Ctrl-C: start no new match and let the running ones finish. A second one stops at once."""
    print("\nStopping after the matches in progress (Ctrl-C again to stop now)...", file=sys.stderr)
    ladder.stop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.remove_signal_handler(signum)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors, like every other error of `arena` (--help has the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {safe_text(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser: argparse.ArgumentParser = _Parser(
        prog="arena", description="A bot-battle arena for the card game 56."
    )
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
        type=arguments.bot_address,
        action="append",
        required=True,
        metavar="NAME=HOST:PORT",
        help="a bot for the next team (give one per team: 2 teams, or players/2 in the pairs ruleset)",
    )
    add_match_settings(match)
    add_time_control(match)
    match.add_argument("--match-id", help="the match id to use in logs and the record (default: random)")
    match.add_argument(
        "--strikes",
        type=arguments.strikes,
        default=0,
        help="fault policy: play a random legal move for a bot's first N bad answers, then forfeit "
        f"({arguments.strikes.range}; default 0: forfeit at once)",
    )
    match.add_argument("--save", metavar="FILE", help="save the game record (JSON) to FILE")
    match.add_argument("--brief", action="store_true", help="do not print the hands of each deal")
    match.add_argument("--log-json", action="store_true", help="log JSON lines even on a terminal")
    match.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="default info"
    )
    match.set_defaults(handler=_match)

    db_help = "the ladder's SQLite file (default: $ARENA_DB or ./arena.db)"
    default_db = os.environ.get("ARENA_DB", DEFAULT_DB)

    bots = commands.add_parser("bots", help="register, list, update and remove the ladder's bots")
    bots.add_argument("--db", default=default_db, help=db_help)
    bots_commands = bots.add_subparsers(dest="bots_command", required=True, metavar="ACTION")
    for action, text in (("add", "register a bot"), ("update", "give a bot a new address or command")):
        parser_for = bots_commands.add_parser(action, help=text)
        parser_for.add_argument("name", type=arguments.bot_name, metavar="NAME")
        parser_for.add_argument(
            "address", type=arguments.address, nargs="?", metavar="HOST:PORT", help="where the bot listens"
        )
        parser_for.add_argument(
            "--command",
            type=arguments.bot_command,
            help="instead of an address: a command that starts the bot, with {port} where the port goes "
            "(the arena starts and stops it), e.g. 'python -m sample_bots.rule_bot --port {port}'",
        )
        parser_for.add_argument("--no-check", action="store_true", help="do not check that the bot answers")
    remove = bots_commands.add_parser("remove", help="unregister a bot (its matches stay in the history)")
    remove.add_argument("name", metavar="NAME")
    probation = bots_commands.add_parser("probation", help="put a bot on probation (the ladder skips it)")
    probation.add_argument("name", metavar="NAME")
    probation_choice = probation.add_mutually_exclusive_group(required=True)
    probation_choice.add_argument("--reason", help="why the bot is on probation")
    probation_choice.add_argument("--clear", action="store_true", help="take the bot off probation")
    listing = bots_commands.add_parser("list", help="list the registered bots")
    listing.add_argument("--json", action="store_true", help="print JSON")
    bots.set_defaults(handler=_bots)

    ladder = commands.add_parser("ladder", help="play rated matches between registered bots; show standings")
    ladder.add_argument("--db", default=default_db, help=db_help)
    ladder_commands = ladder.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    run = ladder_commands.add_parser(
        "run",
        help="play matches in duplicate sets and rate them",
        description="Play rated matches between the registered bots. Each pairing is a duplicate set: the "
        "same deals once per rotation of the teams over the seats; a run ends on whole sets.",
    )
    count = run.add_mutually_exclusive_group()
    count.add_argument(
        "--matches",
        type=arguments.matches,
        default=20,
        help=f"matches to play ({arguments.matches.range}; default 20)",
    )
    count.add_argument("--forever", action="store_true", help="play until stopped with Ctrl-C")
    run.add_argument(
        "--concurrency",
        type=arguments.concurrency,
        default=1,
        help=f"matches played at once ({arguments.concurrency.range}; default 1)",
    )
    run.add_argument("--players", type=arguments.players, default=4, help="4 (default), 6 or 8")
    run.add_argument(
        "--ruleset", type=arguments.ruleset, default=Ruleset.PAIRS, help="pairs (default) or partnership"
    )
    run.add_argument(
        "--deal-cap",
        type=arguments.deal_cap,
        default=None,
        help=f"end each match after this many deals ({arguments.deal_cap.range})",
    )
    add_time_control(run)
    run.add_argument(
        "--seed",
        type=arguments.seed,
        default=None,
        help=f"seed the pairings and deals, {arguments.seed.range} (default: random)",
    )
    run.add_argument(
        "--strikes",
        type=arguments.strikes,
        default=0,
        help="fault policy: play a random legal move for a bot's first N bad answers in a match, then "
        f"forfeit ({arguments.strikes.range}; default 0: forfeit at once)",
    )
    run.add_argument(
        "--probation-after",
        type=arguments.probation_after,
        default=3,
        help="put a bot on probation after this many forfeits in a row "
        f"({arguments.probation_after.range}; default 3; 0 never)",
    )
    run.add_argument(
        "--sample-bots",
        action="store_true",
        help="register the sample bots (random, rules) if they are not yet",
    )
    run.add_argument("--log-json", action="store_true", help="log JSON lines even on a terminal")
    run.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="default warning",
    )
    show = ladder_commands.add_parser("show", help="print the standings")
    show.add_argument("--json", action="store_true", help="print JSON")
    matches = ladder_commands.add_parser("matches", help="list the newest finished matches")
    matches.add_argument("--bot", help="only the matches of this bot")
    matches.add_argument(
        "--limit", type=arguments.limit, default=20, help=f"how many ({arguments.limit.range}; default 20)"
    )
    matches.add_argument("--json", action="store_true", help="print JSON")
    record = ladder_commands.add_parser(
        "record", help="write a stored match's game record (for arena replay)"
    )
    record.add_argument("match_id", metavar="MATCH_ID")
    record.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    ladder.set_defaults(handler=_ladder)

    add_check_bot_parser(commands)
    replay_parser = commands.add_parser(
        "replay", help="check a game record move by move and print the results"
    )
    replay_parser.add_argument("file", metavar="FILE", help="a game record (JSON)")
    replay_parser.add_argument("--quiet", action="store_true", help="print only the verdict")
    replay_parser.set_defaults(handler=_replay)
    return parser


def _internal_error(error: Exception, argv: Sequence[str]) -> int:
    """A bug of ours: one line for the user, the traceback in a file for the report."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        descriptor, path = tempfile.mkstemp(prefix=f"arena-crash-{stamp}-", suffix=".txt")
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="backslashreplace") as file:
            file.write(f"arena {' '.join(argv)}\nPython {sys.version}\n\n")
            traceback.print_exception(error, file=file)
        where = f"the traceback is in {path}"
    except OSError as write_error:
        where = f"the traceback could not be saved ({write_error.strerror})"
    try:
        message = str(error)
    except Exception:  # an exception that cannot even describe itself must not hide the report
        message = "(no message)"
    what = safe_text(f"{type(error).__name__}: {message}", 300)
    print(f"arena: error: internal error ({what}); {where}; please report it", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 failure, 2 bad usage, 3 a match decided
    by a forfeit, 130 interrupted, 141 output closed)."""
    arguments_given = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(arguments_given)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except BrokenPipeError:
        # The reader went away (`arena play | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        return _internal_error(error, arguments_given)


if __name__ == "__main__":
    sys.exit(main())
