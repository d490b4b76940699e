"""The relations of the ladder's SQLite file as SQL text, version by version: what each schema version
added, took away or indexed. Only the store's modules (file.py, upgrades.py, database.py) read this; the
names with a leading underscore are theirs."""

from __future__ import annotations

import sqlite3
from typing import Final

SCHEMA_VERSION: Final = 7
DEFAULT_DB: Final = "arena.db"

_RELATIONS: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    address TEXT,
    command TEXT,
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

# Version 3 (scale): what makes the cost of a match and of a set independent of the history.
_SCALE_RELATIONS: Final = """
CREATE TABLE IF NOT EXISTS match_records (
    match_id TEXT PRIMARY KEY,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS match_bots (
    match_id TEXT NOT NULL,
    bot TEXT NOT NULL,
    rank INTEGER NOT NULL,
    own_forfeit INTEGER NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (match_id, bot)
);
CREATE TABLE IF NOT EXISTS bot_totals (
    bot TEXT NOT NULL,
    pool TEXT NOT NULL,
    matches INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    illegal_moves INTEGER NOT NULL,
    crashes INTEGER NOT NULL,
    PRIMARY KEY (pool, bot)
);
CREATE TABLE IF NOT EXISTS pools (
    name TEXT PRIMARY KEY,
    matches INTEGER NOT NULL,
    rated_sets INTEGER NOT NULL DEFAULT 0
);
"""
"""match_records: the game record of each match, kept out of `matches` so that no read of matches walks
through it. match_bots: one row per bot of each match, read newest first by (bot, finished_at) for the
probation check. bot_totals: each bot's running totals per pool (rating.values.BotTotals). pools: the matches
of each pool (and from version 4 its rated sets)."""

_RATINGS_RELATION: Final = """
CREATE TABLE IF NOT EXISTS ratings (
    bot TEXT NOT NULL,
    pool TEXT NOT NULL,
    rating REAL NOT NULL,
    margin REAL,
    superiority REAL,
    PRIMARY KEY (bot, pool)
);
"""
"""Each bot's rating per pool (version 3); from version 4 the pool's maximum-likelihood fit, rewritten
whole after each rated set, with the 95% `margin` and the likelihood of `superiority` over the next bot
below (rating.values.FittedRating). A bot without a row has the starting rating."""

# Version 4 (ratings by maximum likelihood): the sums the fit reads, a row per pair and per order.
_FIT_RELATIONS: Final = """
CREATE TABLE IF NOT EXISTS pair_results (
    pool TEXT NOT NULL,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    sets INTEGER NOT NULL,
    score REAL NOT NULL,
    squares REAL NOT NULL,
    PRIMARY KEY (pool, first, second)
);
CREATE TABLE IF NOT EXISTS choice_sets (
    pool TEXT NOT NULL,
    bots TEXT NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (pool, bots)
);
CREATE TABLE IF NOT EXISTS places (
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    taken REAL NOT NULL,
    PRIMARY KEY (pool, bot)
);
"""
"""pair_results: per pool and pair of bots (first < second by name) the rated sets they played together,
the summed score of first and the sum of its squares (rating.values.PairResult). choice_sets and places: the
finishing orders of three- and four-team pools read a place at a time (rating.values.PoolSums): how often each
group of bots (JSON, names sorted) was still unplaced when a place was given, how many places each bot
took."""

# Version 7 (bundles in the store): every uploaded bundle's bytes, so that any machine fetches them.
_BUNDLE_RELATIONS: Final = """
CREATE TABLE IF NOT EXISTS bundles (
    sha256 TEXT PRIMARY KEY,
    archive_bytes INTEGER NOT NULL,
    kept_bytes INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    stored_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bundle_chunks (
    sha256 TEXT NOT NULL REFERENCES bundles (sha256),
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (sha256, seq)
);
"""
"""bundles: each uploaded bundle once, by the SHA-256 of its archive, with its sizes and number of
chunks; bundle_chunks: its archive's bytes a MiB a row (relations.py says more)."""

_SCALE_INDEXES: Final = """
CREATE INDEX IF NOT EXISTS match_bots_by_bot ON match_bots (bot, finished_at, match_id);
CREATE INDEX IF NOT EXISTS matches_by_time ON matches (finished_at, id);
CREATE INDEX IF NOT EXISTS sets_open ON sets (id) WHERE rated_at IS NULL AND void_reason IS NULL;
CREATE INDEX IF NOT EXISTS ratings_by_pool ON ratings (pool, bot);
"""
"""Created after an upgrade has added the columns they name."""

_SCHEMA: Final = _RELATIONS + _SCALE_RELATIONS + _RATINGS_RELATION + _FIT_RELATIONS + _BUNDLE_RELATIONS

_ADDED_COLUMNS: Final = {
    2: (("sets", "void_reason", "TEXT"),),
    # Version 3, leases and bot health: a set is claimed by one runner at a time (`lease_owner` until
    # `lease_until`, renewed while it plays); a set put back because a bot did not answer when it started
    # waits until `not_before` (`start_failures` doubles the wait). A bot the host failed to reach or start
    # `host_failures` times in a row is `down_since` then, until it answers again.
    3: (
        ("sets", "lease_owner", "TEXT"),
        ("sets", "lease_until", "REAL"),
        ("sets", "not_before", "REAL"),
        ("sets", "start_failures", "INTEGER NOT NULL DEFAULT 0"),
        ("bots", "down_since", "REAL"),
        ("bots", "host_failures", "INTEGER NOT NULL DEFAULT 0"),
    ),
    # Version 4, ratings by maximum likelihood: each rating's interval and likelihood of superiority, and
    # each pool's count of rated sets (which a rating event checks, to refit from sums no other runner
    # changed meanwhile).
    # And the event a set was played for (an SPRT, a tournament: rated in a pool of its own).
    4: (
        ("sets", "event", "TEXT"),
        ("ratings", "margin", "REAL"),
        ("ratings", "superiority", "REAL"),
        ("pools", "rated_sets", "INTEGER NOT NULL DEFAULT 0"),
    ),
    # Version 5, fair play: a set's seed of 128 bits (its upper 64 in `seed_high`, NULL for an older set,
    # whose `seed` is all of it), whether every bot of the set was one the arena started itself
    # (`isolated`, NULL when unknown), when a move of the set was first shown live (`shown_at`), and the
    # author of each bot (`owner`).
    5: (
        ("sets", "seed_high", "INTEGER"),
        ("sets", "isolated", "INTEGER"),
        ("sets", "shown_at", "REAL"),
        ("bots", "owner", "TEXT"),
    ),
    # Version 6, the public surface: whether a bot's address was given by a participant (`1`), so that
    # the ladder checks it against the host's address policy each time it connects (SSRF).
    6: (("bots", "participant_address", "INTEGER NOT NULL DEFAULT 0"),),
}
"""For each schema version, the columns it added to relations of the version before: `upgrade` adds them
(to a new file too, when its CREATE TABLE does not have them), and a read-only file of an older version
is read without them (NULL in their place). These are ALTER TABLE ... ADD COLUMN on both dialects: a
PostgreSQL database of version 4 or later is upgraded by adding them (database.prepare_schema, with the
declaration of the `Table`s), a SQLite file of any version by upgrades.py with the declaration here."""

_ADDED_RELATIONS: Final = {
    3: ("match_records", "match_bots", "bot_totals", "ratings", "pools"),
    4: ("pair_results", "choice_sets", "places"),
    7: ("bundles", "bundle_chunks"),
}
"""For each schema version, the relations it added: a read-only file of an older version has them
computed into temporary ones instead (upgrades.py, `derive_for_reading`), or, from version 7 on, reads
as holding nothing of them (a version-6 ladder kept its bundles in files only)."""

_REMOVED_COLUMNS: Final = {
    3: (("matches", "record"), ("bots", "rating")),
    # The running moments of each bot's pairwise scores, which the sequential Elo's interval rested on.
    4: (("bot_totals", "pair_count"), ("bot_totals", "pair_mean"), ("bot_totals", "pair_m2")),
}
"""For each schema version, the columns it took away (after moving what they held): a read-only file of
an older version still has them, and they are read from there."""


def _columns_of(schema: str) -> dict[str, tuple[str, ...]]:
    """Each relation of `schema` with its columns, from SQLite itself (the schema text stays the one
    source)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: tuple(row[1] for row in db.execute(f"PRAGMA table_info({name})")) for name in names}
    finally:
        db.close()


def _with_added_columns(columns: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """`columns`, with those of `_ADDED_COLUMNS` that the CREATE TABLE statements do not have."""
    added = dict(columns)
    for step in sorted(_ADDED_COLUMNS):
        for relation, column, _declaration in _ADDED_COLUMNS[step]:
            if column not in added[relation]:
                added[relation] = (*added[relation], column)
    return added


_COLUMNS: Final = _with_added_columns(_columns_of(_SCHEMA))
