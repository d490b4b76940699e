"""`arena check-bot HOST:PORT`: check that a bot follows the protocol, item by item, and print the
verdicts (the checker itself is `arena.check`)."""

from __future__ import annotations

import argparse
import asyncio
import json

from arena.check.checker import check_bot
from arena.check.report import NOTE, CheckItem, CheckReport
from arena.check.situations import ITEM_NAMES
from arena.cli import arguments
from arena.cli.options import Commands, Parents
from fiftysix.logs import configure_logging


def _item_filter(text: str) -> list[str]:
    wanted = [part.strip().lower() for part in text.split(",") if part.strip()]
    for part in wanted:
        if not any(part in name for name in ITEM_NAMES):
            raise argparse.ArgumentTypeError(
                f"no item is named like {part!r}; items: {', '.join(ITEM_NAMES)}"
            )
    return wanted


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena check-bot` (it shares no option block: its --decision-ms has no bank beside it)."""
    parser = commands.add_parser(
        "check-bot",
        help="check that a bot at HOST:PORT follows the protocol, item by item",
        description="Play a bot through every situation of the protocol (handshake, health, whole matches "
        "for each player count and ruleset it plays, scripted situations) and report what passed and what "
        "did not. Exit status: 0 nothing failed, 1 something failed or the bot cannot be reached, "
        "2 bad usage.",
    )
    parser.add_argument("address", type=arguments.address, metavar="HOST:PORT", help="where the bot listens")
    parser.add_argument(
        "--decision-ms",
        type=arguments.decision_ms,
        default=1000,
        help=f"time allowed for each answer, {arguments.decision_ms.range} (default 1000); no bank is given",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--only",
        type=_item_filter,
        action="append",
        metavar="NAME[,NAME...]",
        help="check only the items whose names contain one of these (repeatable), e.g. 'match 4', "
        f"'redouble'; items: {', '.join(ITEM_NAMES)}",
    )
    parser.set_defaults(handler=check, prog=parser.prog)


class ItemPrinter:
    """Prints a report's items as they come, one line each, with the note on the scripted situations
    before the first of them: how `arena check-bot` and `arena bots` print a check."""

    def __init__(self) -> None:
        self.noted = False

    def __call__(self, item: CheckItem) -> None:
        if item.kind == "situation" and not self.noted:
            print(f"Note: {NOTE}")
            self.noted = True
        print(item.line(), flush=True)


def print_report(report: CheckReport) -> None:
    """Print a whole report as `arena check-bot` does: its items, then the summary."""
    show = ItemPrinter()
    for item in report.items:
        show(item)
    print(report.summary())


def check(args: argparse.Namespace) -> int:
    """Check the bot item by item, printing each verdict as it comes (or the report as JSON); 1 if
    anything failed."""
    # The match runner logs every fault as a warning; the report says the same, so only errors are logged.
    configure_logging(level="error")
    only = [name for names in args.only or () for name in names]
    show = ItemPrinter()
    if not args.json:
        print(f"Checking the bot at {args.address} (answers within {args.decision_ms} ms)", flush=True)
    report = asyncio.run(check_bot(args.address, args.decision_ms, only, None if args.json else show))
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(report.summary())
    return 0 if report.ok else 1
