"""The Elo ladder. Computing: which bots play which duplicate sets and when, with containment and
probation (`scheduler`), Elo (`elo`), a set's rating event (`ratings`), the standings (`standings`),
what a match adds to its bots' running totals (`tally`).
Persisting: the typed values kept (`entries`), the store that saves and loads them (`store`) in its
SQLite file (`store_file`); uploaded bots' versions and how each command bot starts, in tables of their
own (`uploads`); registering a bot, for every front end (`registration`). Processes: the bots the arena
starts itself (`local_bots`, sandboxed through arena/sandbox when their launch says so), each under a
`supervisor` that runs as a script by path. Callers import from here."""

from arena.ladder.bot_commands import BotStartError, Launch, command_arguments, free_port, wait_until_ready
from arena.ladder.entries import (
    DEFAULT_POOL,
    BotEntry,
    BotTotals,
    DuplicateSet,
    RatingChange,
    StoredMatch,
    pool_name,
)
from arena.ladder.local_bots import IDLE_LIMIT, LocalBots, idle_limit_for
from arena.ladder.ratings import rate_set, rating_event
from arena.ladder.run_settings import LadderError, LadderReport, LadderSettings
from arena.ladder.scheduler import Ladder
from arena.ladder.schema import DEFAULT_DB, SCHEMA_VERSION
from arena.ladder.standings import Standing, default_pool, ladder_standings, matches_per_bot
from arena.ladder.store import LadderStore
from arena.ladder.store_file import DuplicateMatchError, RatingsChangedError, StoreError

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_POOL",
    "IDLE_LIMIT",
    "SCHEMA_VERSION",
    "BotEntry",
    "BotStartError",
    "BotTotals",
    "DuplicateMatchError",
    "DuplicateSet",
    "Ladder",
    "LadderError",
    "LadderReport",
    "LadderSettings",
    "LadderStore",
    "Launch",
    "LocalBots",
    "RatingChange",
    "RatingsChangedError",
    "Standing",
    "StoreError",
    "StoredMatch",
    "command_arguments",
    "default_pool",
    "free_port",
    "idle_limit_for",
    "ladder_standings",
    "matches_per_bot",
    "pool_name",
    "rate_set",
    "rating_event",
    "wait_until_ready",
]
