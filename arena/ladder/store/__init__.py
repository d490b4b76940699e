"""The ladder's store: everything that persists, on SQLite (the default, a file) or PostgreSQL (a
`--db` URL), and the upgrades of older files. The typed values kept (`entries`); the relations (SQL
tables) both dialects create from (`relations`) and the SQL an older SQLite file is upgraded through
(`schema`); opening a `--db`, the schema checked and the write lock (`database`); the file's errors and
checks (`file`); the store itself (`ladder_store`), made of parts: rows read back (`rows`), leases
(`leases`), running totals (`totals`), the live events (`live`), tokens and the audit log (`access`), the
site's pages of history (`browse`), uploads' versions and launches (`uploads`). It imports neither the
run nor the bots (tests/test_layering.py)."""

from __future__ import annotations

from arena.ladder.store.access import COMMAND_LINE, TokenHolder
from arena.ladder.store.browse import MatchSummary
from arena.ladder.store.database import is_server_url
from arena.ladder.store.entries import (
    BOT_NAME_RULE,
    DEFAULT_POOL,
    OWNER_RULE,
    BotEntry,
    DuplicateSet,
    RatingChange,
    StoredMatch,
    event_name,
    is_bot_name,
    is_owner_name,
    isolated,
    parse_pool,
    pool_name,
    pool_rules,
    shared_owner,
)
from arena.ladder.store.file import DuplicateMatchError, RatingsChangedError, StoreError
from arena.ladder.store.ladder_store import LadderStore
from arena.ladder.store.live import event_text
from arena.ladder.store.schema import DEFAULT_DB, SCHEMA_VERSION
from arena.ladder.store.uploads import Upload

__all__ = [
    "BOT_NAME_RULE",
    "COMMAND_LINE",
    "DEFAULT_DB",
    "DEFAULT_POOL",
    "OWNER_RULE",
    "SCHEMA_VERSION",
    "BotEntry",
    "DuplicateMatchError",
    "DuplicateSet",
    "LadderStore",
    "MatchSummary",
    "RatingChange",
    "RatingsChangedError",
    "StoreError",
    "StoredMatch",
    "TokenHolder",
    "Upload",
    "event_name",
    "event_text",
    "is_bot_name",
    "is_owner_name",
    "is_server_url",
    "isolated",
    "parse_pool",
    "pool_name",
    "pool_rules",
    "shared_owner",
]
