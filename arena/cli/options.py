"""The options that several commands share, each defined once as an argparse parent parser, and the
values they turn into (rules, time control, the ladder's file, logging, a saved record).

A command module lists the blocks it takes (`parents=[...]`) in its own `register`; `Parents` builds
every block once per parser.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from arena.cli import arguments
from arena.errors import ArenaError
from arena.ladder.outages import DEFAULT_STORE_WAIT_S, StoreWait
from arena.ladder.store import DEFAULT_DB, LadderStore, is_server_url
from arena.untrusted import safe_text
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.logs import configure_logging
from fiftysix.record import GameRecord
from fiftysix.wire import TimeControl

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""Where a command module adds its parser: what `add_subparsers` returns."""
Handler: TypeAlias = Callable[[argparse.Namespace], int]
"""What runs a command: it takes the parsed arguments and returns the exit status."""


def _block() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(add_help=False)


def database(default: str) -> argparse.ArgumentParser:
    """`--db`. A group (`arena ladder`, `arena bots`) takes it with the real default, and each of its
    actions takes it again with no default at all (`argparse.SUPPRESS`): so `--db` is accepted before or
    after the action, and a value given before the action is not overwritten by the action's default."""
    block = _block()
    block.add_argument(
        "--db",
        default=default,
        help="the ladder: a SQLite file, or a PostgreSQL database as postgresql://user@host/dbname"
        " (with the [cluster] extra; the password from ~/.pgpass or $PGPASSWORD);"
        " default: $ARENA_DB or ./arena.db",
    )
    return block


def match_settings(*, seed: int | None) -> argparse.ArgumentParser:
    """`--players`, `--ruleset`, `--seed`, `--deal-cap`: which match is played. `seed` is the default
    seed; None leaves it to chance (the ladder then draws one)."""
    block = _block()
    block.add_argument("--players", type=arguments.players, default=4, help="4, 6 or 8 (default 4)")
    block.add_argument(
        "--ruleset", type=arguments.ruleset, default=Ruleset.PAIRS, help="pairs (default) or partnership"
    )
    seed_help = (
        f"seed the run's pairings and its sets' seeds, {arguments.seed.range}, to reproduce a run (whoever "
        "knows it knows every deal; default: each set's seed is 128 bits from the OS's secure source)"
        if seed is None
        else f"match seed, {arguments.seed.range}: fixes every deal (default {seed})"
    )
    block.add_argument("--seed", type=arguments.seed, default=seed, help=seed_help)
    block.add_argument(
        "--deal-cap",
        type=arguments.deal_cap,
        default=None,
        help=f"end a match after this many deals ({arguments.deal_cap.range})",
    )
    return block


def time_control() -> argparse.ArgumentParser:
    """`--decision-ms`, `--bank-ms`: the clock of the commands that play bots."""
    block = _block()
    block.add_argument(
        "--decision-ms",
        type=arguments.decision_ms,
        default=1000,
        help=f"time per decision ({arguments.decision_ms.range}; default 1000)",
    )
    block.add_argument(
        "--bank-ms",
        type=arguments.bank_ms,
        default=10000,
        help=f"per-match time bank ({arguments.bank_ms.range}; default 10000)",
    )
    return block


def strikes() -> argparse.ArgumentParser:
    """`--strikes`: the fault policy of the commands that play bots."""
    block = _block()
    block.add_argument(
        "--strikes",
        type=arguments.strikes,
        default=0,
        help="fault policy: play a random legal move for a bot's first N bad answers in a match, then "
        f"forfeit ({arguments.strikes.range}; default 0: forfeit at once)",
    )
    return block


def logging_options(*, level: str) -> argparse.ArgumentParser:
    """`--log-json`, `--log-level` (default `level`)."""
    block = _block()
    block.add_argument("--log-json", action="store_true", help="log JSON lines even on a terminal")
    block.add_argument(
        "--log-level", default=level, choices=["debug", "info", "warning", "error"], help=f"default {level}"
    )
    return block


def record_output() -> argparse.ArgumentParser:
    """`--save`, `--brief`: what becomes of a match played on the spot (`play`, `match`)."""
    block = _block()
    block.add_argument("--save", metavar="FILE", help="save the game record (JSON) to FILE")
    block.add_argument("--brief", action="store_true", help="do not print the hands of each deal")
    return block


def concurrency() -> argparse.ArgumentParser:
    """`--concurrency`: how many matches of a ladder run, an SPRT or a tournament are played at once; and
    `--isolated-only`: whether it takes remote bots."""
    block = _block()
    block.add_argument(
        "--concurrency",
        type=arguments.concurrency,
        default=1,
        help=f"matches played at once ({arguments.concurrency.range}; default 1)",
    )
    block.add_argument(
        "--isolated-only",
        action="store_true",
        help="play only bots the arena starts itself (--command, --upload), whose seats and sets it "
        "isolates; remote bots (addresses) are skipped (docs/hosting.md, fair play)",
    )
    return block


def store_wait() -> argparse.ArgumentParser:
    """`--store-wait`: how long a run (`ladder run`, `sprt`, `tournament`) or the site (`serve`) waits for
    a PostgreSQL server that went away before it gives up."""
    block = _block()
    block.add_argument(
        "--store-wait",
        type=arguments.store_wait,
        default=DEFAULT_STORE_WAIT_S,
        metavar="TIME",
        help="when the PostgreSQL server cannot be reached (restarted, the network cut), try it again "
        "with backoff for up to TIME, logging each attempt, then go on where it was "
        f"({arguments.store_wait.range}; default {arguments.span(DEFAULT_STORE_WAIT_S)}; 0 stops at once)",
    )
    return block


def _combined(*blocks: argparse.ArgumentParser) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(add_help=False, parents=list(blocks))


@dataclass(frozen=True, slots=True)
class Parents:
    """The shared option blocks, built once per parser and handed to every command's `register`."""

    group_database: argparse.ArgumentParser
    """`--db` for `arena ladder` and `arena bots`, with its default ($ARENA_DB or ./arena.db)."""
    database: argparse.ArgumentParser
    """`--db` for each of their actions, with no default (the group's holds it)."""
    match_settings: argparse.ArgumentParser
    """The match settings with seed 1 by default: `play`."""
    bot_match: argparse.ArgumentParser
    """Every option of a match between bots: the match settings (seed 1), the time control, the strikes
    and logging at info: `match`."""
    ladder_match: argparse.ArgumentParser
    """The same options for the ladder's matches, but the seed is drawn unless given and logging defaults
    to warning (a progress line is drawn on the terminal), and `--concurrency` and `--store-wait`:
    `ladder run`, `sprt`, `tournament`."""
    record_output: argparse.ArgumentParser
    """`--save`, `--brief`: `play` and `match`."""

    @classmethod
    def build(cls) -> Parents:
        """Every block, once; $ARENA_DB is read now."""
        settings, clock, policy = match_settings(seed=1), time_control(), strikes()
        return cls(
            group_database=database(os.environ.get("ARENA_DB", DEFAULT_DB)),
            database=database(argparse.SUPPRESS),
            match_settings=settings,
            bot_match=_combined(settings, clock, policy, logging_options(level="info")),
            ladder_match=_combined(
                match_settings(seed=None),
                clock,
                policy,
                logging_options(level="warning"),
                concurrency(),
                store_wait(),
            ),
            record_output=record_output(),
        )


# What the options turn into.


def rules_of(args: argparse.Namespace) -> MatchRules:
    """The rules that the match settings name."""
    return MatchRules(args.players, args.ruleset, args.deal_cap)


def time_control_of(args: argparse.Namespace) -> TimeControl:
    """The clock that the time control options name."""
    return TimeControl(args.decision_ms, args.bank_ms)


def configure_logging_from(args: argparse.Namespace) -> None:
    """Configure logging as the logging options say."""
    configure_logging(json_lines=True if args.log_json else None, level=args.log_level)


@contextmanager
def open_store(args: argparse.Namespace, *, writes: bool, wait_s: float = 0.0) -> Iterator[LadderStore]:
    """The ladder's file that `--db` names, closed at the end. A command that only reads opens it so that
    it works on a read-only file; a StoreError at any point (opening, a query, a write, closing) is the
    command's error. A command that only reads never creates the file: a typo in --db is said, not
    answered with an empty ladder left behind. With `wait_s` (`--store-wait`), a server that cannot be
    reached is tried again for that long before the command gives up (outages.py)."""
    path = Path(args.db)
    if not writes and not is_server_url(args.db) and not path.exists() and path.parent.is_dir():
        raise ArenaError(
            f"no ladder at {safe_text(args.db)}: register a bot (arena bots add) or give --db / $ARENA_DB"
        )

    def opened() -> LadderStore:
        return LadderStore(args.db, read_only=False if writes else None)

    store = asyncio.run(StoreWait(wait_s).call(opened)) if wait_s > 0 else opened()
    try:
        yield store
    finally:
        store.close()


def require_set_over(store: LadderStore, match_id: str) -> None:
    """Raise unless the stored match's set is over: until then its record and its bots' outputs are held
    back (the set's other rotations replay the same deals), at the command line as on the site."""
    held_back = store.browse.match_summary(match_id).held_back
    if held_back is not None:
        raise ArenaError(held_back)


def check_writable(path: str) -> None:
    """Raise if a record cannot be saved at `path`: checked before a match is played, so that a typo in
    --save does not throw the match away at its end."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise ArenaError(f"cannot save to {path}: it is a directory")
    if not folder.is_dir():
        raise ArenaError(f"cannot save to {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ArenaError(f"cannot save to {path}: no permission to write in {folder}")


def save_record(record: GameRecord, path: str) -> None:
    """Save a game record and say so."""
    try:
        record.save(path)
    except OSError as error:
        raise ArenaError(f"cannot save to {path}: {error.strerror}") from None
    print(f"Game record saved to {safe_text(path)}")
