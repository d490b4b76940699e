"""The ladder's relations as SQLAlchemy Core `Table`s (schema version 7): one definition that SQLite and
PostgreSQL both create from, and that the store's parts query through (no SQL text per dialect).

A new database (either dialect) is created from these; schema.py's CREATE TABLE text is what an older
SQLite file is upgraded through, and tests/arena/ladder/store/test_database.py keeps the two equal. Times are
seconds since the epoch (REAL on SQLite, double precision on PostgreSQL); JSON is kept as text, as the
SQLite file has it, so a value reads back the same from either."""

from __future__ import annotations

from typing import Final

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    text,
)

METADATA: Final = MetaData()

_ID: Final = BigInteger().with_variant(Integer(), "sqlite")
"""A row id: 64 bits on PostgreSQL; on SQLite `INTEGER PRIMARY KEY`, the rowid itself, as today's files
have it (SQLite numbers only that spelling by itself)."""

meta: Final = Table(
    "meta",
    METADATA,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
"""Settings of the database itself: `schema_version` (SCHEMA_VERSION, as decimal text), and
`allowed_addresses`, the address ranges the host allows participants' bots at beyond public addresses
(`arena serve --allow-addresses`; none when absent)."""

bots: Final = Table(
    "bots",
    METADATA,
    Column("name", Text, primary_key=True),
    Column("address", Text),
    Column("command", Text),
    Column("probation", Text),
    Column("created_at", Double, nullable=False),
    Column("updated_at", Double, nullable=False),
    Column("down_since", Double),
    Column("host_failures", Integer, nullable=False, server_default=text("0")),
    Column("owner", Text),
    Column("participant_address", Integer, nullable=False, server_default=text("0")),
    CheckConstraint("(address IS NULL) <> (command IS NULL)", name="bots_address_or_command"),
)
"""`owner` (version 5): the bot's author (the participant's token that registered it, or the host's
`--owner`), NULL when unknown; the ladder never puts two bots of one owner in a set. `participant_address`
(version 6): 1 when a participant's token gave the bot's address (the ladder then checks it against the
host's address policy each time it connects: arena/runner/address_policy.py), 0 for the host's own."""

sets: Final = Table(
    "sets",
    METADATA,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("created_at", Double, nullable=False),
    Column("players", Integer, nullable=False),
    Column("ruleset", Text, nullable=False),
    Column("deal_cap", Integer),
    Column("seed", BigInteger, nullable=False),
    Column("bots", Text, nullable=False),
    Column("rotations", Integer, nullable=False),
    Column("rated_at", Double),
    Column("void_reason", Text),
    Column("lease_owner", Text),
    Column("lease_until", Double),
    Column("not_before", Double),
    Column("start_failures", Integer, nullable=False, server_default=text("0")),
    Column("event", Text),
    Column("seed_high", BigInteger),
    Column("isolated", Integer),
    Column("shown_at", Double),
)
"""`seed` holds the lower 64 bits of the set's seed and `seed_high` the upper 64 (each as a signed 64-bit
value; a set stored before version 5 has no `seed_high`, and its `seed` is the whole seed): see
rows.split_seed. `isolated`: 1 when every bot of the set was one the arena starts itself, 0 when
one was a remote bot, NULL before version 5. `shown_at`: when a move of the set was first shown on the
live page (NULL: never)."""

matches: Final = Table(
    "matches",
    METADATA,
    Column("id", Text, primary_key=True),
    Column("set_id", _ID, ForeignKey("sets.id"), nullable=False),
    Column("rotation", Integer, nullable=False),
    Column("team_bots", Text, nullable=False),
    Column("finished_at", Double, nullable=False),
    Column("reason", Text, nullable=False),
    Column("ranking", Text, nullable=False),
    Column("bot_ranks", Text, nullable=False),
    Column("faults", Text, nullable=False),
    Column("decisions", Integer, nullable=False),
    Column("seconds", Double, nullable=False),
    UniqueConstraint("set_id", "rotation"),
)

rating_events: Final = Table(
    "rating_events",
    METADATA,
    Column("set_id", _ID, ForeignKey("sets.id"), nullable=False),
    Column("bot", Text, nullable=False),
    Column("before", Double, nullable=False),
    Column("after", Double, nullable=False),
    PrimaryKeyConstraint("set_id", "bot"),
)

match_records: Final = Table(
    "match_records",
    METADATA,
    Column("match_id", Text, primary_key=True),
    Column("record", Text, nullable=False),
)

match_bots: Final = Table(
    "match_bots",
    METADATA,
    Column("match_id", Text, nullable=False),
    Column("bot", Text, nullable=False),
    Column("rank", Integer, nullable=False),
    Column("own_forfeit", Integer, nullable=False),
    Column("finished_at", Double, nullable=False),
    PrimaryKeyConstraint("match_id", "bot"),
)

bot_totals: Final = Table(
    "bot_totals",
    METADATA,
    Column("bot", Text, nullable=False),
    Column("pool", Text, nullable=False),
    Column("matches", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("losses", Integer, nullable=False),
    Column("timeouts", Integer, nullable=False),
    Column("illegal_moves", Integer, nullable=False),
    Column("crashes", Integer, nullable=False),
    PrimaryKeyConstraint("pool", "bot"),
)

pools: Final = Table(
    "pools",
    METADATA,
    Column("name", Text, primary_key=True),
    Column("matches", Integer, nullable=False),
    Column("rated_sets", Integer, nullable=False, server_default=text("0")),
)

ratings: Final = Table(
    "ratings",
    METADATA,
    Column("bot", Text, nullable=False),
    Column("pool", Text, nullable=False),
    Column("rating", Double, nullable=False),
    Column("margin", Double),
    Column("superiority", Double),
    PrimaryKeyConstraint("bot", "pool"),
)

pair_results: Final = Table(
    "pair_results",
    METADATA,
    Column("pool", Text, nullable=False),
    Column("first", Text, nullable=False),
    Column("second", Text, nullable=False),
    Column("sets", Integer, nullable=False),
    Column("score", Double, nullable=False),
    Column("squares", Double, nullable=False),
    PrimaryKeyConstraint("pool", "first", "second"),
)

choice_sets: Final = Table(
    "choice_sets",
    METADATA,
    Column("pool", Text, nullable=False),
    Column("bots", Text, nullable=False),
    Column("weight", Double, nullable=False),
    PrimaryKeyConstraint("pool", "bots"),
)

places: Final = Table(
    "places",
    METADATA,
    Column("pool", Text, nullable=False),
    Column("bot", Text, nullable=False),
    Column("taken", Double, nullable=False),
    PrimaryKeyConstraint("pool", "bot"),
)

bundles: Final = Table(
    "bundles",
    METADATA,
    Column("sha256", Text, primary_key=True),
    Column("archive_bytes", BigInteger, nullable=False),
    Column("kept_bytes", BigInteger, nullable=False),
    Column("chunks", Integer, nullable=False),
    Column("stored_at", Double, nullable=False),
)
"""The uploaded bundles (version 7), each once by the SHA-256 of its archive (store/bundles.py): the
archive's size, what it takes kept on a machine (`kept_bytes`: the archive and its files and folders
counted by blocks, what the uploads' quota counts: arena/sandbox/bundles.py) and how many chunks hold
its bytes. A bundle is here exactly while a version of `bot_uploads` names it."""

bundle_chunks: Final = Table(
    "bundle_chunks",
    METADATA,
    Column("sha256", Text, ForeignKey("bundles.sha256"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
    PrimaryKeyConstraint("sha256", "seq"),
)
"""A bundle's archive bytes, in order (`seq` from 0), a chunk of store/bundles.py's CHUNK_BYTES a row
(the last one shorter): rows of a MiB, which either dialect reads and writes one at a time."""

Index("match_bots_by_bot", match_bots.c.bot, match_bots.c.finished_at, match_bots.c.match_id)
Index("matches_by_time", matches.c.finished_at, matches.c.id)
_OPEN: Final = text("rated_at IS NULL AND void_reason IS NULL")
Index("sets_open", sets.c.id, sqlite_where=_OPEN, postgresql_where=_OPEN)
Index("ratings_by_pool", ratings.c.pool, ratings.c.bot)

# The site's relations (`arena serve`), the uploads' (uploads.py), the bots' outputs (outputs.py) and the
# registrations' checks (checks.py): no schema version of their own.

live_events: Final = Table(
    "live_events",
    METADATA,
    Column("match_id", Text, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("at", Double, nullable=False),
    Column("event", Text, nullable=False),
    PrimaryKeyConstraint("match_id", "seq"),
    sqlite_with_rowid=False,
)

tokens: Final = Table(
    "tokens",
    METADATA,
    Column("name", Text, primary_key=True),
    Column("role", Text, nullable=False),
    Column("digest", Text, nullable=False, unique=True),
    Column("created_at", Double, nullable=False),
    CheckConstraint("role IN ('host', 'participant')", name="tokens_role"),
)

audit: Final = Table(
    "audit",
    METADATA,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("at", Double, nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("detail", Text, nullable=False),
)

sessions: Final = Table(
    "sessions",
    METADATA,
    Column("digest", Text, primary_key=True),
    Column("token_name", Text, nullable=False),
    Column("token_digest", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("last_seen", Double, nullable=False),
    Column("expires_at", Double, nullable=False),
)
"""Who is signed in to the site (arena/ladder/store/sessions.py): a session's id kept only as its SHA-256
`digest`, and the token it was made with (`token_name`, `token_digest`): it holds only while that very
token does."""
Index("sessions_by_token", sessions.c.token_name)

bot_uploads: Final = Table(
    "bot_uploads",
    METADATA,
    Column("bot", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("run", Text, nullable=False),
    Column("uploaded_at", Double, nullable=False),
    PrimaryKeyConstraint("bot", "version"),
)

bot_launches: Final = Table(
    "bot_launches",
    METADATA,
    Column("bot", Text, primary_key=True),
    Column("command", Text, nullable=False),
    Column("sandbox", Integer, nullable=False),
    Column("version", Integer),
)

match_outputs: Final = Table(
    "match_outputs",
    METADATA,
    Column("match_id", Text, nullable=False),
    Column("seat", Integer, nullable=False),
    Column("bot", Text, nullable=False),
    Column("owner", Text),
    Column("version", Integer),
    Column("finished_at", Double, nullable=False),
    Column("output", LargeBinary, nullable=False),
    Column("dropped_bytes", BigInteger, nullable=False),
    PrimaryKeyConstraint("match_id", "seat"),
)
"""What the bot process at each seat of a match wrote during it (outputs.py): a bot the arena started,
its `owner` and upload `version` as they were when it played, its `output` compressed (zlib), and the
bytes past `--bot-output` it dropped; `finished_at` the match's, for the retention."""

Index("match_outputs_by_bot", match_outputs.c.bot, match_outputs.c.finished_at)

bot_checks: Final = Table(
    "bot_checks",
    METADATA,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("bot", Text, nullable=False),
    Column("owner", Text, nullable=False),
    Column("checked_at", Double, nullable=False),
    Column("version", Integer),
    Column("passed", Integer, nullable=False),
    Column("report", Text, nullable=False),
)
"""The compliance check each registration of a bot the arena starts went through (checks.py): `owner`,
who asked for it (a token's name, or `host:command-line`); `version`, the upload it registered (NULL for a
refused one, and for a command of the host's); `report`, the check's report as `arena check-bot --json`
prints it."""

Index("bot_checks_by_bot", bot_checks.c.bot, bot_checks.c.id)
Index("bot_checks_by_owner", bot_checks.c.owner, bot_checks.c.id)

LADDER_RELATIONS: Final = frozenset(METADATA.tables) - {
    "live_events",
    "tokens",
    "sessions",
    "audit",
    "bot_uploads",
    "bot_launches",
    "match_outputs",
    "bot_checks",
}
"""The relations of the schema version proper (schema.py's `_COLUMNS`); the others are created by every
writer without a version of their own."""
