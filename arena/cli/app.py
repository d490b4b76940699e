"""The `arena` command: the parser assembled from the command modules, and the one place where a
command's errors become one line and an exit status."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Final, NoReturn

from arena.cli import bots, check_bot, ladder, match, play, replay, rerun, serve, sprt, tokens, tournament
from arena.cli.options import Commands, Handler, Parents
from arena.errors import ArenaError
from arena.untrusted import safe_text

COMMANDS: Final[tuple[Callable[[Commands, Parents], None], ...]] = (
    play.register,
    match.register,
    bots.register,
    ladder.register,
    sprt.register,
    tournament.register,
    check_bot.register,
    replay.register,
    rerun.register,
    serve.register,
    tokens.register,
)
"""Each command module adds its own parser, in the order `arena --help` lists them."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors, like every other error of `arena` (--help has the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {safe_text(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every command. Each (sub)command sets `handler`, which runs it, and
    `prog`, which names it in its error lines."""
    parser: argparse.ArgumentParser = _Parser(
        prog="arena", description="A bot-battle arena for the card game 56."
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    parents = Parents.build()
    for register in COMMANDS:
        register(commands, parents)
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
    prog = "arena"
    try:
        args = build_parser().parse_args(arguments_given)
        prog = args.prog
        handler: Handler = args.handler
        return handler(args)
    except ArenaError as error:
        # The message may quote files, records and bots: one line, no terminal escapes, bounded.
        print(f"{prog}: error: {safe_text(str(error), 1000)}", file=sys.stderr)
        return error.exit_status
    except BrokenPipeError:
        # The reader went away (`arena play | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        return _internal_error(error, arguments_given)
