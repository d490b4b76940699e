"""`arena bots add|update|remove|probation|list`: the ladder's register of bots."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from arena.cli import arguments, tables
from arena.cli.options import Commands, Handler, Parents, open_store
from arena.errors import ArenaError, UsageError
from arena.ladder import BotEntry, BotStartError, LocalBots, StoreError, wait_until_ready
from arena.ladder.store_access import COMMAND_LINE
from arena.runner import split_addresses
from arena.untrusted import safe_text


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena bots` and its actions; `--db` goes before or after the action."""
    bots = commands.add_parser(
        "bots",
        help="register, list, update and remove the ladder's bots",
        parents=[parents.group_database],
    )
    actions = bots.add_subparsers(required=True, metavar="ACTION")
    changes: list[tuple[str, str, Handler]] = [
        ("add", "register a bot", add_bot),
        ("update", "give a bot a new address or command", update_bot),
    ]
    for action, text, handler in changes:
        parser = actions.add_parser(action, help=text, parents=[parents.database])
        parser.add_argument("name", type=arguments.bot_name, metavar="NAME")
        parser.add_argument(
            "address", type=arguments.address, nargs="?", metavar="HOST:PORT", help="where the bot listens"
        )
        parser.add_argument(
            "--command",
            type=arguments.bot_command,
            help="instead of an address: a command that starts the bot (the arena starts and stops it), with "
            "{port_file} where the bot writes the port it listens on, e.g. "
            "'python -m sample_bots.rule_bot --port 0 --port-file {port_file}', "
            "or {port} where a free port goes",
        )
        parser.add_argument("--no-check", action="store_true", help="do not check that the bot answers")
        parser.set_defaults(handler=handler, prog=parser.prog)
    remove = actions.add_parser(
        "remove", help="unregister a bot (its matches stay in the history)", parents=[parents.database]
    )
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(handler=remove_bot, prog=remove.prog)
    probation = actions.add_parser(
        "probation", help="put a bot on probation (the ladder skips it)", parents=[parents.database]
    )
    probation.add_argument("name", metavar="NAME")
    choice = probation.add_mutually_exclusive_group(required=True)
    choice.add_argument("--reason", help="why the bot is on probation")
    choice.add_argument("--clear", action="store_true", help="take the bot off probation")
    probation.set_defaults(handler=set_probation, prog=probation.prog)
    listing = actions.add_parser("list", help="list the registered bots", parents=[parents.database])
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=list_bots, prog=listing.prog)


def add_bot(args: argparse.Namespace) -> int:
    """Register a bot, once it has answered (unless --no-check)."""
    _one_way_to_reach(args)
    with open_store(args, writes=True) as store:
        if args.name in {bot.name for bot in store.bots()}:
            raise StoreError(f"a bot named {args.name!r} is already registered")
        if not args.no_check:
            asyncio.run(_check_answers(args.name, args.address, args.command))
        entry = store.add_bot(args.name, args.address, args.command)
        store.record_write(COMMAND_LINE, "bot_registered", entry.name, entry.where)
        print(f"Registered {entry.name}: {entry.where}")
    return 0


def update_bot(args: argparse.Namespace) -> int:
    """Give a registered bot a new address or command, once it has answered (unless --no-check)."""
    _one_way_to_reach(args)
    with open_store(args, writes=True) as store:
        store.bot(args.name)  # a StoreError if there is no such bot, before any bot is started
        if not args.no_check:
            asyncio.run(_check_answers(args.name, args.address, args.command))
        entry = store.update_bot(args.name, args.address, args.command)
        store.record_write(COMMAND_LINE, "bot_updated", entry.name, entry.where)
        print(f"Updated {entry.name}: {entry.where}")
    return 0


def remove_bot(args: argparse.Namespace) -> int:
    """Unregister a bot; its finished matches stay."""
    with open_store(args, writes=True) as store:
        store.remove_bot(args.name)
        store.record_write(COMMAND_LINE, "bot_removed", args.name)
        print(f"Removed {safe_text(args.name)} (its finished matches stay in the history)")
    return 0


def set_probation(args: argparse.Namespace) -> int:
    """Put a bot on probation, or take it off."""
    with open_store(args, writes=True) as store:
        store.set_probation(args.name, None if args.clear else args.reason)
        action = "probation_cleared" if args.clear else "probation_set"
        store.record_write(COMMAND_LINE, action, args.name, args.reason or "")
        change = "off probation" if args.clear else f"on probation ({args.reason})"
        print(f"{safe_text(args.name)}: {safe_text(change)}")
    return 0


def list_bots(args: argparse.Namespace) -> int:
    """Print the registered bots."""
    with open_store(args, writes=False) as store:
        tables.print_bots(store, as_json=args.json)
    return 0


def _one_way_to_reach(args: argparse.Namespace) -> None:
    if (args.address is None) == (args.command is None):
        raise UsageError("give either HOST:PORT or --command CMD")


async def _check_answers(name: str, address: str | None, command: str | None) -> None:
    """Make sure a bot answers the handshake before registering it (a command is started and stopped)."""
    if address is not None:
        for one in split_addresses(address):
            try:
                await wait_until_ready(one, timeout=3.0)
            except BotStartError as error:
                raise ArenaError(
                    f"cannot reach {name!r} at {one}: {error} (use --no-check to register anyway)"
                ) from None
        return
    assert command is not None
    local = LocalBots(Path(tempfile.mkdtemp(prefix="arena-check-")))
    try:
        await local.acquire(BotEntry(name, None, command, 0.0, None), 1)
    finally:
        await local.stop_all()
