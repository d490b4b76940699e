"""The Elo ladder. Computing: which bots play which duplicate sets and when, with containment and
probation (`scheduler`), ratings by maximum likelihood (`fit`), a set's rating event (`ratings`), the
standings (`standings`), what a match and a rated set add to the running totals and sums (`tally`).
Persisting: the typed values kept (`entries`), the store that saves and loads them (`store`) in its
SQLite file (`store_file`); uploaded bots' versions and how each command bot starts, in tables of their
own (`uploads`); registering a bot, for every front end (`registration`). Playing: where a match is
played (`match_play`: in process; `ray_play`: on a Ray cluster, Ray imported there only). Processes:
the bots the arena starts itself (`local_bots`, sandboxed through arena/sandbox when their launch says
so), each under a `supervisor` that runs as a script by path. Callers import from here."""

from arena.ladder.bot_commands import BotStartError, Launch, command_arguments, free_port, wait_until_ready
from arena.ladder.entries import (
    BOT_NAME_RULE,
    DEFAULT_POOL,
    START_RATING,
    BotEntry,
    BotTotals,
    DuplicateSet,
    FittedRating,
    PairResult,
    RatingChange,
    StoredMatch,
    event_name,
    is_bot_name,
    parse_pool,
    pool_name,
)
from arena.ladder.fit import Fit, fit_pool
from arena.ladder.local_bots import IDLE_LIMIT, LocalBots, idle_limit_for
from arena.ladder.ratings import rate_set
from arena.ladder.run_settings import LadderError, LadderReport, LadderSettings
from arena.ladder.scheduler import Ladder
from arena.ladder.schema import DEFAULT_DB, SCHEMA_VERSION
from arena.ladder.standings import Standing, default_pool, ladder_standings, matches_per_bot
from arena.ladder.store import LadderStore
from arena.ladder.store_file import DuplicateMatchError, RatingsChangedError, StoreError

__all__ = [
    "BOT_NAME_RULE",
    "DEFAULT_DB",
    "DEFAULT_POOL",
    "IDLE_LIMIT",
    "SCHEMA_VERSION",
    "START_RATING",
    "BotEntry",
    "BotStartError",
    "BotTotals",
    "DuplicateMatchError",
    "DuplicateSet",
    "Fit",
    "FittedRating",
    "Ladder",
    "LadderError",
    "LadderReport",
    "LadderSettings",
    "LadderStore",
    "Launch",
    "LocalBots",
    "PairResult",
    "RatingChange",
    "RatingsChangedError",
    "Standing",
    "StoreError",
    "StoredMatch",
    "command_arguments",
    "default_pool",
    "event_name",
    "fit_pool",
    "free_port",
    "idle_limit_for",
    "is_bot_name",
    "ladder_standings",
    "matches_per_bot",
    "parse_pool",
    "pool_name",
    "rate_set",
    "wait_until_ready",
]
