"""The upgrades of an older SQLite file, and the reading of one as it is (opened read-only): the
relations each later schema version added, filled from the file's history. Recomputing that history
(each bot's totals, each pool's sums and fit) is the one place the store applies the rating package's
counting and fit itself (tests/test_layering.py): a running ladder computes them above the store and hands
it the results.

Schema versions: 1 (first release); 2 adds `sets.void_reason`; 3 keeps game records in their own
relation, each match's bots in an indexed membership relation, running totals per bot and pool, and
ratings per pool (see `_SCALE_RELATIONS`), and adds the leases of sets (several runners on one file) and
the health of bots (see `_ADDED_COLUMNS`); 4 keeps the sums the ratings are fitted from
(`_FIT_RELATIONS`) and each rating's interval and likelihood of superiority, and drops the moments of
pairwise scores; 5 (fair play) adds a set's seed of 128 bits (`sets.seed_high`), whether its bots were all
started by the arena (`sets.isolated`), when it was first shown live (`sets.shown_at`), and each bot's
author (`bots.owner`); 6 marks the bots whose address a participant gave (`bots.participant_address`; on
upgrading, those whose address the audit log says a participant's token wrote last); 7 keeps the uploaded
bundles' bytes in the database (`bundles`, `bundle_chunks`; on upgrading, the archives of the ladder's
bundles folder that a version names, each checked against its hash). A file of an older
version is upgraded in place when it is opened for writing, and read as it is when opened read-only (the
relations it lacks are then computed from it into temporary ones, at a cost that grows with its history:
upgrading it once makes reads cheap).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import astuple
from typing import TYPE_CHECKING, Final

from sqlalchemy import Connection

from arena.ladder.rating.fit import fit_pool
from arena.ladder.rating.tally import add_match, add_set, match_tallies, set_result
from arena.ladder.rating.values import BotTotals, PoolSums
from arena.ladder.store.bundles import bundles_folder, take_in_bundle_files
from arena.ladder.store.database import mark_participant_addresses, void_sets_dealt_before_version_5
from arena.ladder.store.entries import pool_name
from arena.ladder.store.schema import (
    _ADDED_COLUMNS,
    _FIT_RELATIONS,
    _RATINGS_RELATION,
    _REMOVED_COLUMNS,
    _SCALE_INDEXES,
    _SCALE_RELATIONS,
    _SCHEMA,
    SCHEMA_VERSION,
)
from arena.ladder.store.sums import replace_sums, save_fit
from fiftysix.wire import FaultRecord

if TYPE_CHECKING:
    from arena.ladder.store.file import StoreFile


class Upgrade:
    """What opening an older SQLite file does to it: upgrade it in place (`upgrade`, inside the opening
    transaction), or derive what it lacks into temporary relations (`derive_for_reading`)."""

    def __init__(self, file: StoreFile) -> None:
        self._file = file
        self._db: sqlite3.Connection = file._db
        self._conn: Connection = file._conn

    def upgrade(self, version: int) -> None:
        """Bring a file of an older schema version to this one, inside the opening transaction: the relations
        it lacks created as their version first had them, the columns added since, the data moved, the
        indexes made. (A server database began at version 4; prepare_schema adds the later columns.)"""
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for relation, column, declaration in _ADDED_COLUMNS.get(step, ()):
                if column not in self._file._columns(relation):
                    self._db.execute(f"ALTER TABLE {relation} ADD COLUMN {column} {declaration}")
            for upgrade in _DATA_UPGRADES.get(step, ()):
                upgrade(self)
        for statement in _SCALE_INDEXES.split(";"):
            if statement.strip():
                self._db.execute(statement)
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    # Version 3 (scale): moving an older file's data into the new relations, or reading an older file.

    def _upgrade_scale(self) -> None:
        """Move the game records into `match_records`, fill the membership, totals and pools from the
        history, and drop the columns moved."""
        # A file of version 1 without a match (or a bot) got its relation created in the new shape.
        if "record" in self._file._columns("matches"):
            self._db.execute("INSERT INTO match_records SELECT id, record FROM matches")
        self._fill_scale_relations()
        self._drop_removed_columns(3)

    def _drop_removed_columns(self, version: int) -> None:
        for relation, column in _REMOVED_COLUMNS[version]:
            if column in self._file._columns(relation):
                self._db.execute(f"ALTER TABLE {relation} DROP COLUMN {column}")

    def derive_for_reading(self, version: int) -> None:
        """Read an older file as it is: the relations of later versions computed into temporary ones, its
        records read where they are. A temporary `ratings` (the fit's) shadows a version-3 file's own (the
        sequential Elo's): SQLite reads the temporary schema first."""
        if version < 3:
            self._db.execute(
                "CREATE TEMP VIEW match_records AS SELECT id AS match_id, record FROM main.matches"
            )
            for statement in _SCALE_RELATIONS.split(";"):
                if "match_records" not in statement and statement.strip():
                    self._db.execute(statement.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE"))
            self._fill_scale_relations()
        if version >= 4:
            return  # a version-4 file lacks columns only (read as NULL: `_column`)
        for statement in (_RATINGS_RELATION + _FIT_RELATIONS).split(";"):
            if statement.strip():
                self._db.execute(statement.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE"))
        if version == 3:  # its pools lack the count of rated sets
            self._db.execute(
                "CREATE TEMP TABLE pools AS SELECT name, matches, 0 AS rated_sets FROM main.pools"
            )
        for pool, rated_sets in self._fill_fit_relations().items():
            self._db.execute("UPDATE pools SET rated_sets = ? WHERE name = ?", (rated_sets, pool))

    def _fill_scale_relations(self) -> None:
        """Compute `match_bots`, `bot_totals` and `pools` from the matches and sets of a version-2 file:
        the totals as the standings counted them from the history (the ratings are the fit's, version 4)."""
        pools = {
            set_id: pool_name(players, ruleset)
            for set_id, players, ruleset in self._db.execute("SELECT id, players, ruleset FROM main.sets")
        }
        totals: dict[tuple[str, str], BotTotals] = {}
        pool_matches: dict[str, int] = {}
        rows = self._db.execute(
            "SELECT id, set_id, team_bots, bot_ranks, faults, finished_at FROM main.matches"
            " ORDER BY finished_at, id"
        )
        for match_id, set_id, team_bots_json, bot_ranks_json, faults_json, finished_at in rows:
            what = f"match {match_id!r}"
            team_bots = self._file._decoded(team_bots_json, f"the bots of {what}")
            bot_ranks = self._file._decoded(bot_ranks_json, f"the ranks of {what}")
            try:
                faults = [FaultRecord.from_json(fault) for fault in self._file._decoded(faults_json, what)]
                tallies = match_tallies(team_bots, bot_ranks, faults)
            except (TypeError, ValueError, AttributeError, IndexError, KeyError):
                raise self._file._damaged(what) from None
            pool = pools.get(set_id)
            if pool is None:
                raise self._file._damaged(what)
            pool_matches[pool] = pool_matches.get(pool, 0) + 1
            for tally in tallies:
                key = (tally.bot, pool)
                totals[key] = add_match(totals.get(key, BotTotals()), tally)
                self._db.execute(
                    "INSERT INTO match_bots VALUES (?, ?, ?, ?, ?)",
                    (match_id, tally.bot, tally.rank, tally.own_forfeit, finished_at),
                )
        for (bot, pool), line in totals.items():
            self._db.execute(
                "INSERT INTO bot_totals VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (bot, pool, *astuple(line)),
            )
        self._db.executemany("INSERT INTO pools (name, matches) VALUES (?, ?)", pool_matches.items())

    # Version 4 (ratings by maximum likelihood): the sums of the rated sets, and the ratings fitted.

    def _upgrade_fit(self) -> None:
        """Fill the sums the fit reads from the rated sets of the history (once), count each pool's rated
        sets, and replace the sequential Elo ratings with each pool's fit."""
        for pool, rated_sets in self._fill_fit_relations().items():
            self._db.execute("UPDATE pools SET rated_sets = ? WHERE name = ?", (rated_sets, pool))
        self._drop_removed_columns(4)

    def _fill_fit_relations(self) -> dict[str, int]:
        """Compute `pair_results`, `choice_sets`, `places` and `ratings` from the rated, not void, sets of the
        history (every earlier rating is replaced); returns each pool's number of rated sets."""
        pools = {
            set_id: pool_name(players, ruleset)
            for set_id, players, ruleset in self._db.execute(
                "SELECT id, players, ruleset FROM main.sets WHERE rated_at IS NOT NULL"
                + (" AND void_reason IS NULL" if self._file._has_column("sets", "void_reason") else "")
            )
        }
        rankings: dict[int, list[dict[str, int]]] = {}
        for set_id, bot_ranks_json in self._db.execute(
            "SELECT set_id, bot_ranks FROM main.matches ORDER BY set_id, rotation"
        ):
            if set_id in pools:
                ranks = self._file._decoded(bot_ranks_json, f"the ranks of a match of set {set_id}")
                rankings.setdefault(set_id, []).append(ranks)
        sums: dict[str, PoolSums] = {}
        for set_id, ranks in sorted(rankings.items()):
            try:
                result = set_result(ranks)
            except (TypeError, ValueError, KeyError, AttributeError):
                raise self._file._damaged(f"the ranks of the matches of set {set_id}") from None
            pool = pools[set_id]
            sums[pool] = add_set(sums.get(pool, PoolSums()), result)
        self._db.execute("DELETE FROM ratings")
        for pool, pool_sums in sums.items():
            replace_sums(self._conn, pool, pool_sums)
            save_fit(self._conn, pool, fit_pool(pool_sums).fitted())
        return {pool: pool_sums.rated_sets for pool, pool_sums in sums.items()}

    # Version 7 (bundles in the store): the bundle files kept beside the ladder, taken in.

    def _take_in_bundle_files(self) -> None:
        """Take the bundles the versions name into the database, from the ladder's bundles folder (an
        older file without uploads' relations has none)."""
        if "bot_uploads" in self._file._relations():
            take_in_bundle_files(self._conn, bundles_folder(self._file.files_stem))


_DATA_UPGRADES: Final[dict[int, tuple[Callable[[Upgrade], None], ...]]] = {
    3: (Upgrade._upgrade_scale,),
    4: (Upgrade._upgrade_fit,),
    5: (lambda upgrade: void_sets_dealt_before_version_5(upgrade._conn),),
    6: (lambda upgrade: mark_participant_addresses(upgrade._conn),),
    7: (Upgrade._take_in_bundle_files,),
}
"""For each schema version, what `upgrade` does after adding its columns: moving data into new relations."""
