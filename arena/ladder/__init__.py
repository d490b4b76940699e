"""The Elo ladder: the run. Which bots play which duplicate sets and when (`scheduler`: claiming sets,
workers, run control), who plays the next set (`pairing`), one match of a set with its checks, storage,
rating and containment (`set_play`), where a match is played (`match_play`: in process; `ray_play`: on a
Ray cluster, Ray imported there only), what a match adds to its bots' totals and a set's rating event
(`ratings`), the standings (`standings`), registering a bot for every front end (`registration`,
`uploads`). It stands on three sub-packages: `store` (everything that persists), `bots` (the processes
the arena starts) and `rating` (the math).

The names below are loaded when first used (PEP 562), so that importing a sub-package (the read-only
site reads the store) does not load the run and its process pool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from arena.lazy import lazy_names

if TYPE_CHECKING:
    from arena.ladder.ratings import rate_set, store_match
    from arena.ladder.run_settings import LadderError, LadderReport, LadderSettings
    from arena.ladder.scheduler import Ladder
    from arena.ladder.standings import Standing, default_pool, ladder_standings, matches_per_bot

_HOMES: Final = {
    "Ladder": "scheduler",
    "LadderError": "run_settings",
    "LadderReport": "run_settings",
    "LadderSettings": "run_settings",
    "Standing": "standings",
    "default_pool": "standings",
    "ladder_standings": "standings",
    "matches_per_bot": "standings",
    "rate_set": "ratings",
    "store_match": "ratings",
}

__all__ = [
    "Ladder",
    "LadderError",
    "LadderReport",
    "LadderSettings",
    "Standing",
    "default_pool",
    "ladder_standings",
    "matches_per_bot",
    "rate_set",
    "store_match",
]


__getattr__ = lazy_names(__name__, _HOMES)
