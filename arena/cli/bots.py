"""`arena bots add|update|remove|probation|prune|list|checks`: the ladder's register of bots, their uploads
and the checks their registrations went through."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from arena.check.report import plural
from arena.cli import arguments, listings
from arena.cli.check_bot import print_report
from arena.cli.options import Commands, Handler, Parents, open_store
from arena.cli.sandbox_options import add_limits, sandbox_of
from arena.errors import ArenaError, UsageError
from arena.ladder.bots import Launch
from arena.ladder.registration import (
    ANSWER_CHECK,
    REGISTRATION_CHECK,
    FailedCheckError,
    NotAnsweringError,
    Registration,
    register_bot,
    unregister_bot,
)
from arena.ladder.store import COMMAND_LINE
from arena.ladder.uploads import Uploads, socket_command
from arena.untrusted import safe_text
from fiftysix.logs import configure_logging


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
        ("update", "give a bot a new address, command or upload (a new version)", update_bot),
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
            "or {port} where a free port goes, or {socket} where the path of a Unix socket goes",
        )
        parser.add_argument(
            "--upload",
            type=Path,
            metavar="BUNDLE",
            help="instead: the bot's files, a .tar.gz or .zip (kept by content hash; each upload a new "
            "version), run in the sandbox with --run",
        )
        parser.add_argument(
            "--run",
            metavar="CMD",
            help="with --upload: the command that starts the bot in its folder, e.g. 'python bot.py'; the "
            "arena adds '--socket PATH' unless {socket} says where it goes",
        )
        parser.add_argument(
            "--sandbox",
            choices=("on", "off"),
            help="run the bot in the sandbox (default: on for --upload, off for --command; off only for "
            "code you trust)",
        )
        rule = "the ladder never puts two bots of one owner in a set"
        if action == "update":
            owners = parser.add_mutually_exclusive_group()
            owners.add_argument(
                "--owner",
                type=arguments.owner,
                help=f"give the bot this owner, its author ({rule}); alone, only the owner changes "
                "(without it, the owner stays)",
            )
            owners.add_argument("--no-owner", action="store_true", help="the bot has no owner any more")
        else:
            parser.add_argument(
                "--owner",
                type=arguments.owner,
                help=f"the bot's author, such as the participant's token name ({rule}; default: none)",
            )
        checks = parser.add_mutually_exclusive_group()
        checks.add_argument(
            "--no-check",
            action="store_true",
            help="register without checking the bot (a bot the arena starts goes through the compliance "
            "check by default: every item of arena check-bot but the whole matches past the first it plays)",
        )
        checks.add_argument(
            "--quick-check",
            action="store_true",
            help="check only that the bot answers the health check and Describe (for a slow bot of your own)",
        )
        add_limits(parser)
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
    prune = actions.add_parser(
        "prune",
        help="forget old versions of uploaded bots and remove the bundles no version names",
        description="Forget each bot's versions older than its newest N, except the one it runs and any "
        "a set not over yet may play, and remove the bundles no version names any more (a bundle that "
        "another version shares stays). Refused uploads leave nothing to prune.",
        parents=[parents.database],
    )
    prune.add_argument("names", nargs="*", metavar="NAME", help="only these bots (default: every bot)")
    prune.add_argument(
        "--keep",
        type=arguments.keep_versions,
        default=1,
        metavar="N",
        help=f"the newest versions of each bot to keep ({arguments.keep_versions.range}; default 1)",
    )
    prune.set_defaults(handler=prune_versions, prog=prune.prog)
    listing = actions.add_parser("list", help="list the registered bots", parents=[parents.database])
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=list_bots, prog=listing.prog)
    checked = actions.add_parser(
        "checks",
        help="list the checks a bot's registrations went through, or show one item by item",
        description="The checks that registrations of bot NAME went through (uploads and commands, passed or "
        "refused), newest first; with --id, that check's report item by item, as arena check-bot prints it.",
        parents=[parents.database],
    )
    checked.add_argument("name", metavar="NAME")
    checked.add_argument(
        "--id",
        type=arguments.check_id,
        metavar="ID",
        help=f"print this check's report item by item ({arguments.check_id.range})",
    )
    checked.add_argument("--json", action="store_true", help="print JSON")
    checked.set_defaults(handler=list_checks, prog=checked.prog)


def add_bot(args: argparse.Namespace) -> int:
    """Register a bot, once it has answered (unless --no-check)."""
    return _register(args, new=True)


def update_bot(args: argparse.Namespace) -> int:
    """Give a registered bot a new address, command or upload, once it has answered (unless --no-check)."""
    return _register(args, new=False)


def _register(args: argparse.Namespace, new: bool) -> int:
    """Add or update a bot as the options say (arena/ladder/registration.py does the work); an update
    that names only an owner (`--owner`, `--no-owner`) changes only that."""
    clears = getattr(args, "no_owner", False)
    if not new and (args.owner is not None or clears) and _only_the_owner(args):
        return _set_owner(args, None if clears else args.owner)
    wanted = Registration(args.name, args.address, _launch_of(args), args.upload, args.owner)
    plan = ANSWER_CHECK if args.quick_check else REGISTRATION_CHECK
    # The check's matches log every fault of the bot as a warning; the report says the same.
    configure_logging(level="error")
    with open_store(args, writes=True) as store:
        check = not args.no_check
        try:
            done = asyncio.run(
                register_bot(store, wanted, new=new, check=check, sandbox=sandbox_of(args), plan=plan)
            )
        except FailedCheckError as error:
            print_report(error.check.report)
            name, kept = safe_text(args.name, 64), error.check.id
            raise ArenaError(
                f"{name} failed the check, so nothing was registered (its report is check {kept}: "
                f"arena bots checks {name} --id {kept}; use --no-check to register anyway)"
            ) from None
        except NotAnsweringError as error:
            raise ArenaError(f"{error} (use --no-check to register anyway)") from None
        store.access.record_write(
            COMMAND_LINE, "bot_registered" if new else "bot_updated", done.entry.name, done.entry.where
        )
        if clears and done.entry.owner is not None:
            store.registry.set_owner(args.name, None)
            store.access.record_write(COMMAND_LINE, "bot_owner_set", args.name, "")
        elif not new and args.owner is not None:
            store.access.record_write(COMMAND_LINE, "bot_owner_set", args.name, args.owner)
    version = ""
    if done.upload is not None:
        version = f", version {done.upload.version} (bundle {done.upload.sha256[:12]})"
    sandboxed = (
        "" if done.launch is None else " (in the sandbox)" if done.launch.sandboxed else " (unsandboxed)"
    )
    action = "Registered" if new else "Updated"
    owner = "" if clears or done.entry.owner is None else f", owner {safe_text(done.entry.owner, 64)}"
    checked = (
        "" if done.check is None else f"; checked: {done.check.report.summary()} (check {done.check.id})"
    )
    print(f"{action} {done.entry.name}: {safe_text(done.entry.where)}{version}{sandboxed}{owner}{checked}")
    return 0


def _only_the_owner(args: argparse.Namespace) -> bool:
    """Whether an update names no new address, command or upload (nor an option of one)."""
    return all(value is None for value in (args.address, args.command, args.upload, args.run, args.sandbox))


def _set_owner(args: argparse.Namespace, owner: str | None) -> int:
    """Give a bot an owner, or none (its address or command stays, so it is not checked again)."""
    with open_store(args, writes=True) as store:
        entry = store.registry.set_owner(args.name, owner)
        store.access.record_write(COMMAND_LINE, "bot_owner_set", entry.name, owner or "")
    change = "no owner" if owner is None else f"owner {safe_text(owner, 64)}"
    print(f"Updated {entry.name}: {change}")
    return 0


def remove_bot(args: argparse.Namespace) -> int:
    """Unregister a bot; its finished matches stay, and so do its uploads."""
    with open_store(args, writes=True) as store:
        unregister_bot(store, args.name)
        store.access.record_write(COMMAND_LINE, "bot_removed", args.name)
        print(f"Removed {safe_text(args.name)} (its finished matches stay in the history)")
    return 0


def set_probation(args: argparse.Namespace) -> int:
    """Put a bot on probation, or take it off."""
    with open_store(args, writes=True) as store:
        store.registry.set_probation(args.name, None if args.clear else args.reason)
        action = "probation_cleared" if args.clear else "probation_set"
        store.access.record_write(COMMAND_LINE, action, args.name, args.reason or "")
        change = "off probation" if args.clear else f"on probation ({args.reason})"
        print(f"{safe_text(args.name)}: {safe_text(change)}")
    return 0


def prune_versions(args: argparse.Namespace) -> int:
    """Forget old versions and free their bundles (uploads.py says which may go); one line of what."""
    with open_store(args, writes=True) as store:
        done = Uploads(store).prune(args.keep, args.names)
        pruned = ", ".join(f"{upload.bot} v{upload.version}" for upload in done.versions)
        store.access.record_write(COMMAND_LINE, "versions_pruned", " ".join(args.names), safe_text(pruned))
    versions = plural(len(done.versions), "version")
    bots = plural(len({upload.bot for upload in done.versions}), "bot")
    freed = f"{done.freed.bytes / (1024 * 1024):,.1f} MiB in {plural(done.freed.bundles, 'bundle')}"
    print(f"Pruned {versions} of {bots}, kept {done.kept}: freed {freed}")
    return 0


def list_bots(args: argparse.Namespace) -> int:
    """Print the registered bots."""
    with open_store(args, writes=False) as store:
        listings.print_bots(store, as_json=args.json)
    return 0


def list_checks(args: argparse.Namespace) -> int:
    """Print a bot's kept checks, or one of them item by item."""
    with open_store(args, writes=False) as store:
        if args.id is None:
            listings.print_checks(store, args.name, as_json=args.json)
            return 0
        check = store.checks.check(args.id)
    if check.bot != args.name:
        raise ArenaError(f"check {args.id} is not one of {safe_text(args.name, 64)}'s")
    if args.json:
        print(json.dumps(check.to_json(), indent=1))
    else:
        verdict = "passed" if check.passed else "refused"
        print(f"Check {check.id} of {safe_text(check.bot, 64)} ({verdict}), by {safe_text(check.owner, 64)}:")
        print_report(check.report)
    return 0


def _launch_of(args: argparse.Namespace) -> Launch | None:
    """How the bot the options describe starts (None: reached at an address), its bundle not kept yet.

    :raises UsageError: options that do not go together.
    """
    ways = [args.address is not None, args.command is not None, args.upload is not None]
    if sum(ways) != 1:
        also = ", or for `update` --owner NAME / --no-owner alone" if hasattr(args, "no_owner") else ""
        raise UsageError(f"give one of HOST:PORT, --command CMD or --upload BUNDLE --run CMD{also}")
    if (args.run is None) != (args.upload is None):
        raise UsageError("--run CMD goes with --upload BUNDLE, and --upload needs it")
    if args.address is not None:
        if args.sandbox is not None:
            raise UsageError("--sandbox is for bots the arena starts (--command or --upload), not addresses")
        return None
    if args.upload is not None:
        try:
            command = socket_command(args.run)
        except ValueError as error:
            raise UsageError(f"--run: {safe_text(error)}") from None
        return Launch(command, args.sandbox != "off")
    sandboxed = args.sandbox == "on"
    if sandboxed and "{socket}" not in args.command:
        raise UsageError("a sandboxed bot has no network: its --command needs {socket} where its socket goes")
    return Launch(args.command, sandboxed)
