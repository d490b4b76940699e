"""The ladder's SQLite file: registered bots, duplicate sets, finished matches, ratings.

Every finished match is written in its own transaction the moment it ends, and a set's rating event is
applied in one transaction with the check that it was not applied before, so a ladder killed at any
point (even by SIGKILL) loses no finished match and never rates a set twice; the next run resumes the
unfinished sets. A set in which the arena itself failed (an error of ours, not of a bot) is made void:
kept in the history, never rated, never resumed. The file uses SQLite's write-ahead log.

Schema versions: 1 (first release); 2 adds `sets.void_reason`. A file of an older version is upgraded in
place when it is opened.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from arena.elo import START_RATING, interval_half_width, pair_scores, rating_changes

SCHEMA_VERSION: Final = 2
DEFAULT_DB: Final = "arena.db"

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    address TEXT,
    command TEXT,
    rating REAL NOT NULL,
    probation TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    CHECK ((address IS NULL) <> (command IS NULL))
);
CREATE TABLE IF NOT EXISTS sets (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    players INTEGER NOT NULL,
    ruleset TEXT NOT NULL,
    deal_cap INTEGER,
    seed INTEGER NOT NULL,
    bots TEXT NOT NULL,
    rotations INTEGER NOT NULL,
    rated_at REAL,
    void_reason TEXT
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    set_id INTEGER NOT NULL REFERENCES sets (id),
    rotation INTEGER NOT NULL,
    team_bots TEXT NOT NULL,
    finished_at REAL NOT NULL,
    reason TEXT NOT NULL,
    ranking TEXT NOT NULL,
    bot_ranks TEXT NOT NULL,
    faults TEXT NOT NULL,
    record TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    seconds REAL NOT NULL,
    UNIQUE (set_id, rotation)
);
CREATE TABLE IF NOT EXISTS rating_events (
    set_id INTEGER NOT NULL REFERENCES sets (id),
    bot TEXT NOT NULL,
    before REAL NOT NULL,
    after REAL NOT NULL,
    PRIMARY KEY (set_id, bot)
);
"""


class StoreError(ValueError):
    """A request the store refuses: a duplicate or unknown bot, a file that is not a ladder."""


class DuplicateMatchError(StoreError):
    """A match of a set's rotation that is stored already (another runner played it)."""


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A registered bot: reached at `address` (host:port), or started from `command` by the arena."""

    name: str
    address: str | None
    command: str | None
    rating: float
    probation: str | None

    @property
    def where(self) -> str:
        """The address, or the command that starts the bot."""
        return self.address if self.address is not None else f"command: {self.command}"


@dataclass(frozen=True, slots=True)
class DuplicateSet:
    """A pairing played as one match per rotation of the teams over the seats, on the same deals."""

    id: int
    players: int
    ruleset: str
    deal_cap: int | None
    seed: int
    bots: tuple[str, ...]
    rotations: int

    def team_bots(self, rotation: int) -> tuple[str, ...]:
        """The bot of each team in a rotation: rotation r moves every bot r teams on."""
        count = len(self.bots)
        return tuple(self.bots[(team - rotation) % count] for team in range(count))


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as the ladder keeps it."""

    id: str
    set_id: int
    rotation: int
    team_bots: tuple[str, ...]
    reason: str
    ranking: tuple[int, ...]
    bot_ranks: dict[str, int]
    faults: list[dict[str, Any]]
    decisions: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings."""

    rank: int
    bot: str
    rating: float
    interval: float
    matches: int
    wins: int
    losses: int
    timeouts: int
    illegal_moves: int
    crashes: int
    probation: str | None

    def to_json(self) -> dict[str, Any]:
        """The standing as a JSON-ready dictionary (an infinite interval becomes null)."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "elo": round(self.rating, 1),
            "interval": None if self.interval == float("inf") else round(self.interval, 1),
            "matches": self.matches,
            "wins": self.wins,
            "losses": self.losses,
            "faults": {
                "timeouts": self.timeouts,
                "illegal_moves": self.illegal_moves,
                "crashes": self.crashes,
            },
            "probation": self.probation,
        }


_ILLEGAL_CAUSES: Final = ("illegal_move", "malformed_answer", "wrong_decision", "protocol_error")
_CRASH_CAUSES: Final = ("disconnected", "unreachable", "incompatible")


class LadderStore:
    """The ladder's SQLite file. Open it with `LadderStore(path)`; close it with `close()`."""

    def __init__(self, path: str | Path = DEFAULT_DB) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            with self._transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                if row is None:
                    self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                elif int(row[0]) > SCHEMA_VERSION:
                    raise StoreError(f"{self.path} was written by a newer arena (schema {row[0]})")
                elif int(row[0]) < SCHEMA_VERSION:
                    self._upgrade(int(row[0]))
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{self.path} is not a ladder database: {error}") from None

    def _upgrade(self, version: int) -> None:
        """Bring a file of an older schema version to this one, inside the opening transaction."""
        if version < 2:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(sets)")}
            if "void_reason" not in columns:
                self._db.execute("ALTER TABLE sets ADD COLUMN void_reason TEXT")
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # Bots.

    def add_bot(self, name: str, address: str | None = None, command: str | None = None) -> BotEntry:
        """Register a bot by address or by command; a name already taken is refused."""
        if (address is None) == (command is None):
            raise StoreError("a bot has either an address or a command")
        now = time.time()
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO bots (name, address, command, rating, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (name, address, command, START_RATING, now, now),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return self.bot(name)

    def bot(self, name: str) -> BotEntry:
        """The bot registered as `name`."""
        row = self._db.execute(
            "SELECT name, address, command, rating, probation FROM bots WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise StoreError(f"no bot named {name!r} is registered")
        return BotEntry(*row)

    def bots(self) -> list[BotEntry]:
        """Every registered bot, by name."""
        rows = self._db.execute("SELECT name, address, command, rating, probation FROM bots ORDER BY name")
        return [BotEntry(*row) for row in rows]

    def update_bot(self, name: str, address: str | None = None, command: str | None = None) -> BotEntry:
        """Give a bot a new address or command (its rating and history stay)."""
        self.bot(name)
        if (address is None) == (command is None):
            raise StoreError("give either a new address or a new command")
        with self._transaction():
            self._db.execute(
                "UPDATE bots SET address = ?, command = ?, updated_at = ? WHERE name = ?",
                (address, command, time.time(), name),
            )
        return self.bot(name)

    def remove_bot(self, name: str) -> None:
        """Unregister a bot; its finished matches stay in the history."""
        self.bot(name)
        with self._transaction():
            self._db.execute("DELETE FROM bots WHERE name = ?", (name,))

    def set_probation(self, name: str, reason: str | None) -> None:
        """Put a bot on probation (skipped by the ladder) with a reason, or take it off with None."""
        self.bot(name)
        with self._transaction():
            self._db.execute(
                "UPDATE bots SET probation = ?, updated_at = ? WHERE name = ?", (reason, time.time(), name)
            )

    # Sets and matches.

    def create_set(
        self, players: int, ruleset: str, deal_cap: int | None, seed: int, bots: Sequence[str]
    ) -> DuplicateSet:
        """Record a new duplicate set before its first match is played."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO sets (created_at, players, ruleset, deal_cap, seed, bots, rotations)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (time.time(), players, ruleset, deal_cap, seed, json.dumps(list(bots)), len(bots)),
            )
        assert cursor.lastrowid is not None
        return DuplicateSet(cursor.lastrowid, players, ruleset, deal_cap, seed, tuple(bots), len(bots))

    def unfinished_sets(self) -> list[tuple[DuplicateSet, list[int]]]:
        """Sets not rated yet, each with the rotations still to play (possibly none)."""
        rows = self._db.execute(
            "SELECT id, players, ruleset, deal_cap, seed, bots, rotations FROM sets"
            " WHERE rated_at IS NULL AND void_reason IS NULL ORDER BY id"
        ).fetchall()
        unfinished = []
        for row in rows:
            duplicate = DuplicateSet(
                row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])), row[6]
            )
            done = {
                played
                for (played,) in self._db.execute(
                    "SELECT rotation FROM matches WHERE set_id = ?", (duplicate.id,)
                )
            }
            unfinished.append((duplicate, [r for r in range(duplicate.rotations) if r not in done]))
        return unfinished

    def save_match(
        self,
        match_id: str,
        duplicate: DuplicateSet,
        rotation: int,
        reason: str,
        ranking: Sequence[int],
        faults: Sequence[dict[str, Any]],
        record: dict[str, Any],
        decisions: int,
        seconds: float,
    ) -> None:
        """Store a finished match at once, in its own transaction.

        :raises DuplicateMatchError: when this rotation of the set is stored already.
        """
        team_bots = duplicate.team_bots(rotation)
        bot_ranks = {bot: ranking[team] for team, bot in enumerate(team_bots)}
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO matches (id, set_id, rotation, team_bots, finished_at, reason, ranking,"
                    " bot_ranks, faults, record, decisions, seconds)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        match_id,
                        duplicate.id,
                        rotation,
                        json.dumps(list(team_bots)),
                        time.time(),
                        reason,
                        json.dumps(list(ranking)),
                        json.dumps(bot_ranks),
                        json.dumps(list(faults)),
                        json.dumps(record),
                        decisions,
                        seconds,
                    ),
                )
        except sqlite3.IntegrityError:
            raise DuplicateMatchError(
                f"set {duplicate.id} rotation {rotation} is stored already (by another runner?)"
            ) from None

    def void_set(self, set_id: int, reason: str) -> None:
        """Mark a set void: its stored matches stay in the history, it is never rated nor resumed."""
        with self._transaction():
            self._db.execute(
                "UPDATE sets SET void_reason = ? WHERE id = ? AND rated_at IS NULL", (reason, set_id)
            )

    def void_reason(self, set_id: int) -> str | None:
        """Why a set is void, or None."""
        row = self._db.execute("SELECT void_reason FROM sets WHERE id = ?", (set_id,)).fetchone()
        return None if row is None else row[0]

    def matches(self, set_id: int | None = None) -> list[StoredMatch]:
        """Finished matches (of one set, or all), oldest first."""
        if set_id is None:
            return self._select_matches("", (), "finished_at, id")
        return self._select_matches("WHERE set_id = ?", (set_id,), "finished_at, id")

    def recent_matches(self, bot: str | None, count: int) -> list[StoredMatch]:
        """The last `count` finished matches (that `bot` played, when given), newest first."""
        if bot is None:
            return self._select_matches("", (), "finished_at DESC, id DESC", count)
        return self._select_matches(
            "WHERE json_extract(bot_ranks, '$.' || json_quote(?)) IS NOT NULL",
            (bot,),
            "finished_at DESC, id DESC",
            count,
        )

    def _select_matches(
        self, where: str, parameters: tuple[Any, ...], order: str, limit: int = -1
    ) -> list[StoredMatch]:
        rows = self._db.execute(
            "SELECT id, set_id, rotation, team_bots, reason, ranking, bot_ranks, faults, decisions, seconds"
            f" FROM matches {where} ORDER BY {order} LIMIT ?",
            (*parameters, limit),
        )
        return [
            StoredMatch(
                row[0],
                row[1],
                row[2],
                tuple(json.loads(row[3])),
                row[4],
                tuple(json.loads(row[5])),
                json.loads(row[6]),
                json.loads(row[7]),
                row[8],
                row[9],
            )
            for row in rows
        ]

    def match_record(self, match_id: str) -> dict[str, Any]:
        """The game record of a stored match."""
        row = self._db.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        record: dict[str, Any] = json.loads(row[0])
        return record

    def rate_set(self, set_id: int) -> dict[str, float] | None:
        """Apply a finished set's rating event once; returns the changes, or None when the set is
        not finished or was rated already. A bot removed meanwhile counts with its last rating.
        """
        with self._transaction():
            row = self._db.execute(
                "SELECT rotations, rated_at, void_reason FROM sets WHERE id = ?", (set_id,)
            ).fetchone()
            if row is None or row[1] is not None or row[2] is not None:
                return None
            stored = self.matches(set_id)
            if len(stored) < row[0]:
                return None
            rankings = [match.bot_ranks for match in stored]
            ratings = {bot: self._rating(bot) for bot in rankings[0]}
            changes = rating_changes(ratings, rankings)
            for bot, change in changes.items():
                self._db.execute(
                    "INSERT INTO rating_events VALUES (?, ?, ?, ?)",
                    (set_id, bot, ratings[bot], ratings[bot] + change),
                )
                self._db.execute("UPDATE bots SET rating = ? WHERE name = ?", (ratings[bot] + change, bot))
            self._db.execute("UPDATE sets SET rated_at = ? WHERE id = ?", (time.time(), set_id))
        return changes

    def _rating(self, bot: str) -> float:
        row = self._db.execute("SELECT rating FROM bots WHERE name = ?", (bot,)).fetchone()
        if row is not None:
            return float(row[0])
        last = self._db.execute(
            "SELECT after FROM rating_events WHERE bot = ? ORDER BY set_id DESC LIMIT 1", (bot,)
        ).fetchone()
        return float(last[0]) if last is not None else START_RATING

    def match_count(self) -> dict[str, int]:
        """Finished matches per bot name."""
        counts: dict[str, int] = {}
        for match in self.matches():
            for bot in match.bot_ranks:
                counts[bot] = counts.get(bot, 0) + 1
        return counts

    # Standings.

    def standings(self) -> list[Standing]:
        """Every registered bot, best rating first, with its record and faults."""
        bots = self.bots()
        matches = self.matches()
        rated = {
            set_id
            for (set_id,) in self._db.execute("SELECT id FROM sets WHERE rated_at IS NOT NULL").fetchall()
        }
        by_set: dict[int, list[StoredMatch]] = {}
        for match in matches:
            by_set.setdefault(match.set_id, []).append(match)
        pair_results: dict[str, list[float]] = {}
        for set_id, stored in by_set.items():
            if set_id not in rated:
                continue
            for (bot, _other), score in pair_scores([match.bot_ranks for match in stored]).items():
                pair_results.setdefault(bot, []).append(score)
        lines = []
        for entry in bots:
            played = [match for match in matches if entry.name in match.bot_ranks]
            wins = losses = 0
            for match in played:
                rank = match.bot_ranks[entry.name]
                others = [r for bot, r in match.bot_ranks.items() if bot != entry.name]
                if all(rank < other for other in others):
                    wins += 1
                elif all(rank > other for other in others):
                    losses += 1
            causes = [
                fault["cause"]
                for match in played
                for fault in match.faults
                if match.team_bots[fault["team"]] == entry.name
            ]
            lines.append(
                Standing(
                    rank=0,
                    bot=entry.name,
                    rating=entry.rating,
                    interval=interval_half_width(pair_results.get(entry.name, [])),
                    matches=len(played),
                    wins=wins,
                    losses=losses,
                    timeouts=causes.count("timeout"),
                    illegal_moves=sum(causes.count(cause) for cause in _ILLEGAL_CAUSES),
                    crashes=sum(causes.count(cause) for cause in _CRASH_CAUSES),
                    probation=entry.probation,
                )
            )
        lines.sort(key=lambda line: (-line.rating, line.bot))
        ranked: list[Standing] = []
        for index, line in enumerate(lines):
            tied = index > 0 and line.rating == lines[index - 1].rating
            ranked.append(replace(line, rank=ranked[-1].rank if tied else index + 1))
        return ranked
