"""`arena ladder run|show|matches|record`: play rated matches between the registered bots, and read the
standings and the finished matches back."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Final

from arena.cli import arguments, options, tables
from arena.cli.options import Commands, Parents, open_store
from arena.cli.progress import Progress
from arena.errors import ArenaError
from arena.ladder import IDLE_LIMIT, Ladder, LadderSettings, LadderStore, LocalBots
from arena.untrusted import safe_text

SAMPLE_BOTS: Final = {
    "random": "python -m sample_bots.random_bot --port 0 --port-file {port_file}",
    "rules": "python -m sample_bots.rule_bot --port 0 --port-file {port_file}",
}
"""What `ladder run --sample-bots` registers: name and command of each sample bot."""


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena ladder` and its actions; `--db` goes before or after the action."""
    ladder = commands.add_parser(
        "ladder",
        help="play rated matches between registered bots; show standings",
        parents=[parents.group_database],
    )
    actions = ladder.add_subparsers(required=True, metavar="ACTION")
    run = actions.add_parser(
        "run",
        help="play matches in duplicate sets and rate them",
        description="Play rated matches between the registered bots. Each pairing is a duplicate set: the "
        "same deals once per rotation of the teams over the seats; a run ends on whole sets.",
        parents=[parents.database, parents.ladder_match],
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
    run.set_defaults(handler=run_ladder, prog=run.prog)

    show = actions.add_parser("show", help="print the standings", parents=[parents.database])
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=show_standings, prog=show.prog)

    matches = actions.add_parser(
        "matches", help="list the newest finished matches", parents=[parents.database]
    )
    matches.add_argument("--bot", help="only the matches of this bot")
    matches.add_argument(
        "--limit", type=arguments.limit, default=20, help=f"how many ({arguments.limit.range}; default 20)"
    )
    matches.add_argument("--json", action="store_true", help="print JSON")
    matches.set_defaults(handler=list_matches, prog=matches.prog)

    record = actions.add_parser(
        "record", help="write a stored match's game record (for arena replay)", parents=[parents.database]
    )
    record.add_argument("match_id", metavar="MATCH_ID")
    record.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    record.set_defaults(handler=export_record, prog=record.prog)


def show_standings(args: argparse.Namespace) -> int:
    """Print the standings."""
    with open_store(args, writes=False) as store:
        tables.print_standings(store, as_json=args.json)
    return 0


def list_matches(args: argparse.Namespace) -> int:
    """Print the newest finished matches (of one bot), newest first."""
    with open_store(args, writes=False) as store:
        tables.print_matches(store, args.bot, args.limit, as_json=args.json)
    return 0


def export_record(args: argparse.Namespace) -> int:
    """Write a stored match's game record (for `arena replay`) to a file or standard output."""
    with open_store(args, writes=False) as store:
        text = json.dumps(store.match_record(args.match_id), indent=1) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise ArenaError(f"cannot write {args.output}: {error.strerror}") from None
        print(f"Game record of {safe_text(args.match_id)} saved to {safe_text(args.output)}")
    else:
        sys.stdout.write(text)
    return 0


def run_ladder(args: argparse.Namespace) -> int:
    """Play rated matches with a progress line on standard error; then print the report and standings."""
    with open_store(args, writes=True) as store:
        _run(args, store)
    return 0


def _run(args: argparse.Namespace, store: LadderStore) -> None:
    options.configure_logging_from(args)
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
        time_control=options.time_control_of(args),
        seed=args.seed,
        strikes=args.strikes,
        probation_after=args.probation_after,
    )
    # Idle room for a match's processes per worker, so that concurrent matches do not churn them.
    local_bots = LocalBots(
        Path(f"{args.db}-logs"), idle_limit=max(IDLE_LIMIT, settings.concurrency * settings.players)
    )
    progress = Progress(settings.matches)
    ladder = Ladder(
        store, settings, local_bots, on_match=lambda outcome, _report: progress.advance(len(outcome.faults))
    )
    ladder.check()

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
    try:
        asyncio.run(run())
    finally:
        progress.close()  # before any error line, so that the error is a line of its own
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
    tables.print_standings(store, as_json=False)


def _stop_once(loop: asyncio.AbstractEventLoop, ladder: Ladder) -> None:
    """First Ctrl-C: start no new match and let the running ones finish. A second one stops at once."""
    print("\nStopping after the matches in progress (Ctrl-C again to stop now)...", file=sys.stderr)
    ladder.stop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.remove_signal_handler(signum)
