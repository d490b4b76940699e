"""`arena tokens add|list|remove|audit`: who may write through the site's API, and what was written."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from arena.cli import arguments
from arena.cli.options import Commands, Parents, open_store
from arena.ladder.store import COMMAND_LINE
from arena.untrusted import safe_text


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena tokens` and its actions; `--db` goes before or after the action."""
    tokens = commands.add_parser(
        "tokens", help="tokens for the site's management API", parents=[parents.group_database]
    )
    actions = tokens.add_subparsers(required=True, metavar="ACTION")
    add = actions.add_parser(
        "add",
        help="make a token and print it once",
        description="Make a token and print it once (only its SHA-256 digest is kept). A participant's token "
        "registers or updates the bot named NAME only; the host's (--host) does every write.",
        parents=[parents.database],
    )
    add.add_argument("name", type=arguments.bot_name, metavar="NAME")
    add.add_argument("--host", action="store_true", help="the host's token: every write, every bot")
    add.set_defaults(handler=add_token, prog=add.prog)
    listing = actions.add_parser("list", help="list who has a token", parents=[parents.database])
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=list_tokens, prog=listing.prog)
    remove = actions.add_parser("remove", help="revoke a token", parents=[parents.database])
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(handler=remove_token, prog=remove.prog)
    audit = actions.add_parser(
        "audit", help="the newest writes and who made them", parents=[parents.database]
    )
    audit.add_argument(
        "--limit", type=arguments.limit, default=50, help=f"({arguments.limit.range}; default 50)"
    )
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.set_defaults(handler=show_audit, prog=audit.prog)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def add_token(args: argparse.Namespace) -> int:
    """Make a token and print it, once."""
    with open_store(args, writes=True) as store:
        token = store.access.add_token(args.name, "host" if args.host else "participant", COMMAND_LINE)
    role = "the host" if args.host else f"the participant {args.name} (their bot {args.name} only)"
    print(f"Token for {role}, shown this once (only its digest is kept):\n{token}")
    return 0


def list_tokens(args: argparse.Namespace) -> int:
    """Who has a token (never the tokens)."""
    with open_store(args, writes=False) as store:
        holders = store.access.tokens()
    if args.json:
        print(
            json.dumps(
                [{"name": h.name, "role": h.role, "created_at": h.created_at} for h in holders], indent=1
            )
        )
    elif not holders:
        print("No tokens. Make one with: arena tokens add NAME [--host]")
    for holder in holders if not args.json else []:
        print(f"{safe_text(holder.name, 64):<24} {holder.role:<12} made {_when(holder.created_at)}")
    return 0


def remove_token(args: argparse.Namespace) -> int:
    """Revoke a token."""
    with open_store(args, writes=True) as store:
        store.access.remove_token(args.name, COMMAND_LINE)
    print(f"Revoked the token of {safe_text(args.name, 64)}")
    return 0


def show_audit(args: argparse.Namespace) -> int:
    """The newest writes, newest first."""
    with open_store(args, writes=False) as store:
        entries = store.access.audit_log(args.limit)
    if args.json:
        print(json.dumps([vars_of(entry) for entry in entries], indent=1))
        return 0
    if not entries:
        print("No writes recorded.")
    for entry in entries:
        what = f"{entry.action} {safe_text(entry.target, 64)}"
        detail = f" ({safe_text(entry.detail, 200)})" if entry.detail else ""
        print(f"{_when(entry.at)}  {safe_text(entry.actor, 80):<30} {what}{detail}")
    return 0


def vars_of(entry: object) -> dict[str, object]:
    """An audit entry as JSON."""
    return {key: getattr(entry, key) for key in ("at", "actor", "action", "target", "detail")}
