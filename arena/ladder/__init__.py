"""The Elo ladder: which bots play which duplicate sets and when (`scheduler`), their ratings (`elo`),
the SQLite file that keeps bots, sets, matches and rating events (`store`), and the bot processes the
arena starts itself (`local_bots`, each under `supervisor`, which runs as a script by path)."""

from arena.ladder.local_bots import BotStartError, LocalBots, command_arguments, free_port, wait_until_ready
from arena.ladder.ratings import rate_set, rating_event
from arena.ladder.scheduler import Ladder, LadderError, LadderReport, LadderSettings
from arena.ladder.standings import Standing, ladder_standings, matches_per_bot
from arena.ladder.store import (
    DEFAULT_DB,
    SCHEMA_VERSION,
    BotEntry,
    DuplicateMatchError,
    DuplicateSet,
    LadderStore,
    RatingChange,
    RatingsChangedError,
    StoredMatch,
    StoreError,
)

__all__ = [
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "BotEntry",
    "BotStartError",
    "DuplicateMatchError",
    "DuplicateSet",
    "Ladder",
    "LadderError",
    "LadderReport",
    "LadderSettings",
    "LadderStore",
    "LocalBots",
    "RatingChange",
    "RatingsChangedError",
    "Standing",
    "StoreError",
    "StoredMatch",
    "command_arguments",
    "free_port",
    "ladder_standings",
    "matches_per_bot",
    "rate_set",
    "rating_event",
    "wait_until_ready",
]
