"""`arena replay FILE`: check a game record move by move and print what it shows."""

from __future__ import annotations

import argparse
import sys

from arena.cli.options import Commands, Parents
from arena.errors import ArenaError, UsageError
from arena.untrusted import safe_text
from fiftysix.pretty import describe_deal, describe_ranking, describe_rules
from fiftysix.record import MAX_RECORD_BYTES, GameRecord, RecordError, RecordFileError, load, load_stream
from fiftysix.replay import replay

STANDARD_INPUT = "-"


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena replay` (it shares no option block with other commands)."""
    parser = commands.add_parser("replay", help="check a game record move by move and print the results")
    parser.add_argument(
        "file",
        metavar="FILE",
        help=f"a game record (JSON), a regular file of at most {MAX_RECORD_BYTES // 2**20} MiB; "
        "`-`: standard input",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the verdict")
    parser.set_defaults(handler=replay_file, prog=parser.prog)


def source_name(file: str) -> str:
    """How a record's FILE reads in messages."""
    return "standard input" if file == STANDARD_INPUT else file


def load_record(file: str) -> GameRecord:
    """The record in FILE, or on standard input for `-`.

    :raises UsageError: the file is none to read (missing, not a regular file, too big), or standard
        input is closed.
    :raises RecordError: what it holds is not a record.
    """
    try:
        if file != STANDARD_INPUT:
            return load(file)
        if sys.stdin is None:  # started with its standard input closed
            raise UsageError("standard input is closed")
        return load_stream(sys.stdin.buffer)
    except RecordFileError as error:  # the file named is none to read: the command cannot work
        raise UsageError(f"{source_name(file)}: {error}") from None


def replay_file(args: argparse.Namespace) -> int:
    """Replay the record; print its deals and ranking (unless --quiet) and the verdict."""
    source = source_name(args.file)
    try:
        record = load_record(args.file)
        replayed = replay(record)
    except RecordError as error:  # the game's own error: the game never imports the host's ArenaError
        raise ArenaError(f"{source}: {error}") from None
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
    print(f"{safe_text(source)}: {checked}; {ended}")
    return 0
