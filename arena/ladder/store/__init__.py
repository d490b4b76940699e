"""The ladder's store: everything that persists, on SQLite (the default, a file) or PostgreSQL (a
`--db` URL), and the upgrades of older files. The typed values kept (`entries`); the relations (the SQL
tables) both dialects create from (`relations`) and the SQL an older SQLite file is upgraded through
(`schema`); opening a `--db`, the schema checked and the write lock (`database`); the open file, its
errors and the base of the parts (`file`); the upgrades of older files (`upgrades`); the store itself
(`ladder_store`), one open file and its parts, each taken by the consumers that need it: the bots
(`registry`), the sets (`sets`) and their leases (`leases`), the finished matches (`matches`, their rows
read back by `rows`, each started bot's output of each: `outputs`), the totals, sums and ratings
(`ratings`, written through `sums`), the live events (`live`), tokens and the audit log (`access`), who
is signed in to the site (`sessions`), the site's pages of history (`browse`), uploads' versions,
launches and bundles (`uploads`, the bundles' bytes written through `bundles`), the registrations'
compliance checks with their reports (`checks`). It imports neither the run nor the bots, and of the
rating package only its values, but for the upgrades (tests/test_layering.py)."""

from __future__ import annotations

from arena.ladder.store.access import COMMAND_LINE, AccessStore, TokenHolder
from arena.ladder.store.browse import BrowseStore, MatchSummary
from arena.ladder.store.bundles import Freed, StoredBundle, bundles_folder
from arena.ladder.store.checks import BotCheck, CheckStore
from arena.ladder.store.database import is_server_url
from arena.ladder.store.entries import (
    BOT_NAME_RULE,
    DEFAULT_POOL,
    OWNER_RULE,
    BotEntry,
    DuplicateSet,
    FinishedMatch,
    RatingChange,
    SeatOutput,
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
from arena.ladder.store.file import (
    DuplicateMatchError,
    RatingsChangedError,
    StoreError,
    StoreUnreachableError,
)
from arena.ladder.store.ladder_store import LadderStore
from arena.ladder.store.leases import LeaseStore
from arena.ladder.store.live import LiveStore, event_text
from arena.ladder.store.matches import MatchStore
from arena.ladder.store.outputs import OUTPUTS_KEPT, OutputStore
from arena.ladder.store.ratings import RatingStore
from arena.ladder.store.registry import BotRegistry
from arena.ladder.store.schema import DEFAULT_DB, SCHEMA_VERSION
from arena.ladder.store.sessions import Session, SessionStore
from arena.ladder.store.sets import SetStore
from arena.ladder.store.uploads import Upload, UploadStore

__all__ = [
    "BOT_NAME_RULE",
    "COMMAND_LINE",
    "DEFAULT_DB",
    "DEFAULT_POOL",
    "OUTPUTS_KEPT",
    "OWNER_RULE",
    "SCHEMA_VERSION",
    "AccessStore",
    "BotCheck",
    "BotEntry",
    "BotRegistry",
    "BrowseStore",
    "CheckStore",
    "DuplicateMatchError",
    "DuplicateSet",
    "FinishedMatch",
    "Freed",
    "LadderStore",
    "LeaseStore",
    "LiveStore",
    "MatchStore",
    "MatchSummary",
    "OutputStore",
    "RatingChange",
    "RatingStore",
    "RatingsChangedError",
    "SeatOutput",
    "Session",
    "SessionStore",
    "SetStore",
    "StoreError",
    "StoreUnreachableError",
    "StoredBundle",
    "StoredMatch",
    "TokenHolder",
    "Upload",
    "UploadStore",
    "bundles_folder",
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
