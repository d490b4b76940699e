"""`arena ladder export`: the ladder's file for other programs. Every game record as JSON lines, streamed
from the database a record at a time (constant memory, whatever the length of the history), or a pool's
standings as CSV. `-` writes to standard output."""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from collections.abc import Iterator
from typing import Final, TextIO

from arena.cli.listings import check_pool
from arena.errors import ArenaError
from arena.ladder import default_pool, ladder_standings
from arena.ladder.store import LadderStore

STANDINGS_COLUMNS: Final = (
    "rank",
    "bot",
    "pool",
    "elo",
    "interval",
    "superiority",
    "matches",
    "wins",
    "losses",
    "timeouts",
    "illegal_moves",
    "crashes",
    "probation",
    "down",
)
"""The columns of `--csv`, in order: `interval` is the half width of the 95% interval (empty when the
bot has no rated set), `superiority` the likelihood that it is stronger than the next bot below."""


@contextlib.contextmanager
def output(path: str) -> Iterator[TextIO]:
    """The file at `path` opened for writing (standard output for `-`); an error is one line that names
    it."""
    if path == "-":
        yield sys.stdout
        return
    try:
        file = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 (closed below, errors named)
    except OSError as error:
        raise ArenaError(f"cannot write {path}: {error.strerror}") from None
    try:
        with file:
            yield file
    except OSError as error:
        raise ArenaError(f"cannot write {path}: {error.strerror}") from None


def write_records(store: LadderStore, out: TextIO) -> int:
    """Every stored game record of a set that is over, oldest first, one compact JSON document a line;
    returns how many. The records of sets not over are held back, as the site holds them: their other
    rotations replay the same deals."""
    count = 0
    for _match_id, record in store.browse.game_records(sets_over_only=True):
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
        count += 1
    return count


def write_standings(store: LadderStore, pool: str | None, out: TextIO) -> tuple[str, int]:
    """The standings of `pool` (default: the pool with the most matches) as CSV with a header line;
    returns the pool and the number of bots."""
    shown = default_pool(store.ratings.pools()) if pool is None else check_pool(pool)
    standings = ladder_standings(store, shown)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(STANDINGS_COLUMNS)
    for line in standings:
        writer.writerow(
            (
                line.rank,
                line.bot,
                line.pool,
                f"{line.rating:.1f}",
                "" if line.interval == float("inf") else f"{line.interval:.1f}",
                "" if line.superiority is None else f"{line.superiority:.3f}",
                line.matches,
                line.wins,
                line.losses,
                line.timeouts,
                line.illegal_moves,
                line.crashes,
                line.probation or "",
                "yes" if line.down_since is not None else "",
            )
        )
    return shown, len(standings)
