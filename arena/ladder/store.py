"""The ladder's store: registered bots, duplicate sets, finished matches and rating events, saved and
loaded as typed values (faults as FaultRecords). It persists; the ladder computes (pairing in
scheduler.py, rating events in ratings.py, standings in standings.py).

Every finished match is written in its own transaction the moment it ends, and a set's rating event is
saved in one transaction with the check that the set was neither rated nor made void before, so a ladder
killed at any point (even by SIGKILL) loses no finished match and never rates a set twice or in part;
the next run resumes the unfinished sets. A set in which the arena itself failed (an error of ours, not
of a bot) is made void: kept in the history, never rated, never resumed. A row that does not hold what
the arena wrote (the file was edited by hand?) is a StoreError, not a crash further on. The file itself
(schema, opening, read-only files, errors) is store_file.py; what the site keeps and reads (the live
events of matches in play, tokens and the audit log, pages of history) is store_live.py,
store_access.py and store_browse.py.

Cost: what the ladder reads and writes for each match and each set does not grow with the history.
Saving a match also updates, in its transaction, a row per bot in `match_bots` (read newest first by
index for the probation check) and the bot's running totals in its pool (tally.py counts them), which
the pairing and the standings read; a game record sits in `match_records`, read only by `match_record`.
Every format (players x ruleset) is its own rating pool (`DuplicateSet.pool`): a bot has a rating per
pool, the starting rating where it has none.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from arena.ladder.elo import START_RATING
from arena.ladder.entries import (
    DEFAULT_POOL,
    BotEntry,
    DuplicateSet,
    RatingChange,
    StoredMatch,
    pool_name,
)
from arena.ladder.store_access import AccessStore
from arena.ladder.store_browse import BrowseStore
from arena.ladder.store_file import (
    DuplicateMatchError,
    RatingsChangedError,
    StoreError,
    every_method_store_errors,
    is_integer,
    is_number,
)
from arena.ladder.store_leases import LeaseStore
from arena.ladder.store_live import LiveStore
from arena.ladder.store_rows import MatchRows
from arena.ladder.store_totals import TotalsStore
from arena.ladder.tally import add_match, add_pair_score, match_tallies, set_pair_scores
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import FaultRecord


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _are_rules(players: int, ruleset: str, deal_cap: int | None) -> bool:
    """Whether a stored set's settings make a match (the ladder plays it next)."""
    try:
        MatchRules(players, Ruleset.parse(ruleset), deal_cap)
    except ValueError:
        return False
    return True


@every_method_store_errors
class LadderStore(LeaseStore, TotalsStore, BrowseStore, LiveStore, AccessStore, MatchRows):
    """The ladder's store. Open it with `LadderStore(path)` (see StoreFile for `read_only` and
    `timeout`); close it with `close()`. Every error is a StoreError that names the file.
    """

    # Bots.

    def add_bot(self, name: str, address: str | None = None, command: str | None = None) -> BotEntry:
        """Register a bot by address or by command; a name already taken is refused. It starts with the
        starting rating in every pool (a removed bot's name registered again starts over)."""
        if (address is None) == (command is None):
            raise StoreError("a bot has either an address or a command")
        now = time.time()
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO bots (name, address, command, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (name, address, command, now, now),
                )
                self._db.execute("DELETE FROM ratings WHERE bot = ?", (name,))
        except sqlite3.IntegrityError:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return self.bot(name)

    _BOT_COLUMNS = (
        "SELECT name, address, command, coalesce(ratings.rating, ?), probation FROM bots"
        " LEFT JOIN ratings ON ratings.bot = bots.name AND ratings.pool = ?"
    )

    def bot(self, name: str, pool: str = DEFAULT_POOL) -> BotEntry:
        """The bot registered as `name`, with its rating in `pool`."""
        row = self._db.execute(f"{self._BOT_COLUMNS} WHERE name = ?", (START_RATING, pool, name)).fetchone()
        if row is None:
            raise StoreError(f"no bot named {name!r} is registered")
        return self._bot_entry(row)

    def bots(self, pool: str = DEFAULT_POOL) -> list[BotEntry]:
        """Every registered bot, by name, with its rating in `pool`."""
        rows = self._db.execute(f"{self._BOT_COLUMNS} ORDER BY name", (START_RATING, pool))
        return [self._bot_entry(row) for row in rows]

    def bot_ratings(self) -> dict[str, dict[str, float]]:
        """Each registered bot's rating in each pool where it has one (not the starting rating)."""
        ratings: dict[str, dict[str, float]] = {}
        rows = self._db.execute(
            "SELECT bot, pool, ratings.rating FROM ratings JOIN bots ON bots.name = ratings.bot"
            " ORDER BY bot, pool"
        )
        for bot, pool, rating in rows:
            if not is_number(rating):
                raise self._damaged(f"the rating of {bot!r}")
            ratings.setdefault(bot, {})[pool] = float(rating)
        return ratings

    def _bot_entry(self, row: Sequence[Any]) -> BotEntry:
        name, address, command, rating, probation = row
        if not (
            isinstance(name, str)
            and all(value is None or isinstance(value, str) for value in (address, command, probation))
            and is_number(rating)
        ):
            raise self._damaged(f"the row of bot {name!r}")
        return BotEntry(name, address, command, float(rating), probation)

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
        """Unregister a bot; its finished matches stay in the history, and its unfinished sets are made
        void (nobody could ever finish them)."""
        self.bot(name)
        orphans = [duplicate.id for duplicate, _missing in self.unfinished_sets() if name in duplicate.bots]
        with self._transaction():
            self._db.execute("DELETE FROM bots WHERE name = ?", (name,))
            self._db.executemany(
                "UPDATE sets SET void_reason = ? WHERE id = ? AND rated_at IS NULL",
                [(f"{name} was removed", set_id) for set_id in orphans],
            )

    def set_probation(self, name: str, reason: str | None) -> None:
        """Put a bot on probation (skipped by the ladder) with a reason, or take it off with None."""
        self.bot(name)
        with self._transaction():
            self._db.execute(
                "UPDATE bots SET probation = ?, updated_at = ? WHERE name = ?", (reason, time.time(), name)
            )

    # Sets and matches.

    def create_set(
        self,
        players: int,
        ruleset: str,
        deal_cap: int | None,
        seed: int,
        bots: Sequence[str],
        lease: tuple[str, float] | None = None,
    ) -> DuplicateSet:
        """Record a new duplicate set before its first match is played; with `lease` (owner, seconds),
        claimed by that owner already (see `claim_set`)."""
        now = time.time()
        owner, until = (None, None) if lease is None else (lease[0], now + lease[1])
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO sets (created_at, players, ruleset, deal_cap, seed, bots, rotations,"
                " lease_owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (now, players, ruleset, deal_cap, seed, json.dumps(list(bots)), len(bots), owner, until),
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
        for set_id, players, ruleset, deal_cap, seed, bots_json, rotations in rows:
            bots = self._decoded(bots_json, f"the bots of set {set_id}")
            if not (
                all(is_integer(value) for value in (set_id, players, seed, rotations))
                and isinstance(ruleset, str)
                and (deal_cap is None or is_integer(deal_cap))
                and _is_list_of(bots, str)
                and rotations == len(bots)
                and _are_rules(players, ruleset, deal_cap)
            ):
                raise self._damaged(f"set {set_id}")
            duplicate = DuplicateSet(set_id, players, ruleset, deal_cap, seed, tuple(bots), rotations)
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
        faults: Sequence[FaultRecord],
        record: dict[str, Any],
        decisions: int,
        seconds: float,
    ) -> None:
        """Store a finished match at once, in its own transaction.

        :raises DuplicateMatchError: when this rotation of the set is stored already.
        """
        team_bots = duplicate.team_bots(rotation)
        bot_ranks = {bot: ranking[team] for team, bot in enumerate(team_bots)}
        finished_at = time.time()
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO matches (id, set_id, rotation, team_bots, finished_at, reason, ranking,"
                    " bot_ranks, faults, decisions, seconds)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        match_id,
                        duplicate.id,
                        rotation,
                        json.dumps(list(team_bots)),
                        finished_at,
                        reason,
                        json.dumps(list(ranking)),
                        json.dumps(bot_ranks),
                        json.dumps([fault.to_json() for fault in faults]),
                        decisions,
                        seconds,
                    ),
                )
                self._db.execute("INSERT INTO match_records VALUES (?, ?)", (match_id, json.dumps(record)))
                self._db.execute("DELETE FROM live_events WHERE match_id = ?", (match_id,))
                pool = duplicate.pool
                for tally in match_tallies(team_bots, bot_ranks, faults):
                    self._db.execute(
                        "INSERT INTO match_bots VALUES (?, ?, ?, ?, ?)",
                        (match_id, tally.bot, tally.rank, tally.own_forfeit, finished_at),
                    )
                    self._save_totals(tally.bot, pool, add_match(self._totals(tally.bot, pool), tally))
                self._db.execute(
                    "INSERT INTO pools VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET matches = matches + 1",
                    (pool,),
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
        """The last `count` finished matches (that `bot` played, when given), newest first: read by
        index, whatever the length of the history."""
        if bot is None:
            return self._select_matches("", (), "finished_at DESC, id DESC", count)
        rows = self._db.execute(
            f"SELECT {self._MATCH_COLUMNS} FROM match_bots JOIN matches ON matches.id = match_bots.match_id"
            " WHERE match_bots.bot = ? ORDER BY match_bots.finished_at DESC, match_bots.match_id DESC"
            " LIMIT ?",
            (bot, count),
        )
        return [self._stored_match(row) for row in rows]

    def recent_forfeits(self, bot: str, count: int) -> list[bool]:
        """Whether each of the last `count` matches of `bot` (newest first) was a forfeit of its own (a
        fault of its not played on by a substitute): the probation check, read by index."""
        rows = self._db.execute(
            "SELECT own_forfeit FROM match_bots WHERE bot = ? ORDER BY finished_at DESC, match_id DESC"
            " LIMIT ?",
            (bot, count),
        )
        return [bool(own_forfeit) for (own_forfeit,) in rows]

    _MATCH_COLUMNS = (
        "matches.id, set_id, rotation, team_bots, reason, ranking, bot_ranks, faults, decisions, seconds"
    )

    def _select_matches(
        self, where: str, parameters: tuple[Any, ...], order: str, limit: int = -1
    ) -> list[StoredMatch]:
        rows = self._db.execute(
            f"SELECT {self._MATCH_COLUMNS} FROM matches {where} ORDER BY {order} LIMIT ?",
            (*parameters, limit),
        )
        return [self._stored_match(row) for row in rows]

    def match_record(self, match_id: str) -> dict[str, Any]:
        """The game record of a stored match."""
        row = self._db.execute("SELECT record FROM match_records WHERE match_id = ?", (match_id,)).fetchone()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        record = self._decoded(row[0], f"the record of match {match_id!r}")
        if not isinstance(record, dict):
            raise self._damaged(f"the record of match {match_id!r}")
        return record

    def ratings(self, bots: Iterable[str], pool: str = DEFAULT_POOL) -> dict[str, float]:
        """The current rating in `pool` of each of `bots` that has one: a registered bot's (the starting
        rating until it is rated there), or a removed bot's last. A bot neither registered nor ever rated
        in `pool` is left out."""
        known = {bot: self._rating(bot, pool) for bot in bots}
        return {bot: rating for bot, rating in known.items() if rating is not None}

    def _rating(self, bot: str, pool: str) -> float | None:
        """The bot's rating in `pool`: the starting rating for a registered bot never rated there, None
        for a bot neither registered nor ever rated there."""
        row = self._db.execute(
            "SELECT rating FROM ratings WHERE bot = ? AND pool = ?", (bot, pool)
        ).fetchone()
        if row is None:
            registered = self._db.execute("SELECT 1 FROM bots WHERE name = ?", (bot,)).fetchone()
            return START_RATING if registered else None
        if not is_number(row[0]):
            raise self._damaged(f"the rating of {bot!r}")
        return float(row[0])

    def save_rating_event(self, set_id: int, changes: Sequence[RatingChange]) -> bool:
        """Apply a set's rating event in one transaction: its rows of `rating_events`, each bot's new
        rating, the set marked rated. Returns False and changes nothing when the set is rated or void
        already (or unknown), so a set is rated exactly once, whoever tries and whenever they are killed.

        :raises RatingsChangedError: changing nothing, when a bot's rating is no longer its `before`
            (another runner rated a set of that bot since it was read).
        """
        with self._transaction():
            row = self._db.execute(
                "SELECT rated_at, void_reason, players, ruleset FROM sets WHERE id = ?", (set_id,)
            ).fetchone()
            if row is None or row[0] is not None or row[1] is not None:
                return False
            pool = pool_name(row[2], row[3])
            # A bot with no rating at all (neither registered nor rated) has none that could have moved.
            moved = [
                change.bot
                for change in changes
                if self._rating(change.bot, pool) not in (None, change.before)
            ]
            if moved:
                raise RatingsChangedError(
                    f"{self.path}: ratings changed while set {set_id} was being rated (of {', '.join(moved)})"
                )
            for change in changes:
                self._db.execute(
                    "INSERT INTO rating_events VALUES (?, ?, ?, ?)",
                    (set_id, change.bot, change.before, change.after),
                )
                self._db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?)"
                    " ON CONFLICT (bot, pool) DO UPDATE SET rating = excluded.rating",
                    (change.bot, pool, change.after),
                )
            rankings = [match.bot_ranks for match in self.matches(set_id)]
            if rankings:
                for bot, score in set_pair_scores(rankings):
                    self._save_totals(bot, pool, add_pair_score(self._totals(bot, pool), score))
            self._db.execute("UPDATE sets SET rated_at = ? WHERE id = ?", (time.time(), set_id))
        return True

    def rated_sets(self) -> set[int]:
        """The ids of the sets whose rating event was applied."""
        return {set_id for (set_id,) in self._db.execute("SELECT id FROM sets WHERE rated_at IS NOT NULL")}

    # Leases (see store_leases.py for claiming, renewing and releasing them).

    def claimable_sets(self, owner: str) -> list[tuple[DuplicateSet, list[int]]]:
        """The unfinished sets (see `unfinished_sets`) that `owner` may claim now: nobody else holds a
        live lease of them and they are not waiting to be tried again."""
        now = time.time()
        rows = self._db.execute(
            "SELECT id FROM sets WHERE rated_at IS NULL AND void_reason IS NULL"
            " AND (lease_owner IS NULL OR lease_until < ? OR lease_owner = ?)"
            " AND (not_before IS NULL OR not_before <= ?)",
            (now, owner, now),
        )
        free = {set_id for (set_id,) in rows}
        if not free:
            return []
        return [(duplicate, missing) for duplicate, missing in self.unfinished_sets() if duplicate.id in free]
