"""What the site shows, as JSON-ready dictionaries: the one place that turns the store's values into the
data of both the JSON API and the pages (the pages render these same dictionaries). Reads only; every
read is bounded (a page of matches, the last rating events, a bot's last matches).

A finished match's record (and its faults' details) stays private until its set is over (rated or
void): the set's other rotations replay the same deals, and a bot could read them while it plays. The
rule is `MatchSummary.held_back` and `MatchSummary.to_json` (arena/ladder/store/browse.py), which the
command line follows too; probation reasons never quote a fault's detail (arena/ladder/probation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from arena.ladder import Standing, default_pool, ladder_standings
from arena.ladder.store import (
    BrowseStore,
    LadderStore,
    LiveStore,
    MatchSummary,
    StoreError,
    parse_pool,
)
from arena.runner.public_events import public_only
from arena.site.replay_view import ViewError, replay_view

PAGE_SIZE: Final = 50
MAX_PAGE: Final = 100_000
BOT_MATCHES: Final = 200
"""A bot page's head-to-head results and faults are counted over its last this many matches."""
HISTORY_POINTS: Final = 500
LIVE_FRESH_S: Final = 120.0
"""A match in play whose newest event is older than this is not listed (its runner died)."""


@dataclass
class SiteError(Exception):
    """A request the site cannot answer: an HTTP status and a message for people."""

    status: int
    message: str
    retry_after_s: int | None = None
    """When to try again (a Retry-After header): a 503 of a busy site, a 429 of a quota."""
    more: dict[str, Any] = field(default_factory=dict)
    """More of the API's answer beside its `error` (a refused upload's `check`)."""

    def __str__(self) -> str:
        return self.message


def status_of(standing: Standing) -> str:
    """active, probation or down."""
    if standing.down_since is not None:
        return "down"
    return "probation" if standing.probation else "active"


def checked_pool(text: str | None) -> str | None:
    """A pool from a request, canonical, or a 400."""
    if text is None or text == "":
        return None
    try:
        return parse_pool(text)
    except ValueError as error:
        raise SiteError(400, str(error)) from None


def pools(store: LadderStore) -> list[dict[str, Any]]:
    """Every pool with its matches, most matches first, and its rated sets with a bot the arena could not
    isolate (a remote bot: docs/hosting.md, fair play)."""
    not_isolated = store.sets.sets_not_isolated()
    return [
        {"pool": name, "matches": count, "sets_not_isolated": not_isolated.get(name, 0)}
        for name, count in store.ratings.pools().items()
    ]


def standing_view(line: Standing) -> dict[str, Any]:
    """A bot's line of the standings as the pages show it: its JSON with its status in words."""
    return {**line.to_json(), "status": status_of(line)}


def standings(store: LadderStore, pool: str | None) -> dict[str, Any]:
    """The leaderboard of `pool` (default: the pool with the most matches)."""
    shown = pool or default_pool(store.ratings.pools())
    lines = [standing_view(line) for line in ladder_standings(store, shown)]
    return {"pool": shown, "pools": pools(store), "standings": lines}


def matches(browse: BrowseStore, bot: str | None, pool: str | None, page: int) -> dict[str, Any]:
    """A page (from 1) of finished matches, newest first."""
    found, more = browse.match_page(bot, pool, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    return {
        "bot": bot,
        "pool": pool,
        "page": page,
        "page_size": PAGE_SIZE,
        "has_next": more,
        "matches": [summary.to_json() for summary in found],
    }


def bot(store: LadderStore, name: str, pool: str | None) -> dict[str, Any]:
    """A bot's page: its standing in `pool`, its rating history there, its last matches, its results
    against each opponent and its faults (over its last BOT_MATCHES matches)."""
    try:
        store.registry.bot(name)
    except StoreError:
        raise SiteError(404, f"no bot named {name!r} is registered") from None
    shown = pool or default_pool(store.ratings.pools())
    standing = next(line for line in ladder_standings(store, shown) if line.bot == name)
    recent, _more = store.browse.match_page(name, shown, 0, BOT_MATCHES)
    head_to_head: dict[str, dict[str, int]] = {}
    faults: list[dict[str, Any]] = []
    for summary in recent:
        match = summary.match
        own = match.bot_ranks.get(name)
        for opponent, rank in match.bot_ranks.items():
            if opponent == name or own is None:
                continue
            line = head_to_head.setdefault(opponent, {"matches": 0, "ahead": 0, "behind": 0, "level": 0})
            line["matches"] += 1
            line["ahead" if own < rank else "behind" if own > rank else "level"] += 1
        teams = [team for team, bot_name in enumerate(match.team_bots) if bot_name == name]
        for fault in summary.to_json()["faults"]:
            if fault["team"] in teams:
                faults.append({**fault, "match_id": match.id, "set_over": summary.set_over})
    history = store.browse.rating_history(name, shown, HISTORY_POINTS)
    return {
        "name": name,
        "pool": shown,
        "pools": pools(store),
        "standing": standing_view(standing),
        "rating_history": [
            {"set_id": point.set_id, "at": point.at, "before": point.before, "after": point.after}
            for point in history
        ],
        "recent_matches": [summary.to_json() for summary in recent[:20]],
        "head_to_head": [{"opponent": opponent, **line} for opponent, line in sorted(head_to_head.items())],
        "faults": faults,
    }


def _summary_or_404(browse: BrowseStore, match_id: str) -> MatchSummary:
    try:
        return browse.match_summary(match_id)
    except StoreError:
        raise SiteError(404, f"no finished match {match_id!r}") from None


def record(browse: BrowseStore, match_id: str) -> dict[str, Any]:
    """A finished match's game record, once its set is over."""
    held_back = _summary_or_404(browse, match_id).held_back
    if held_back is not None:
        raise SiteError(403, held_back)
    return browse.match_record(match_id)


def match_view(browse: BrowseStore, match_id: str) -> dict[str, Any]:
    """The replay viewer's data: the match's summary and its record, drawn (see replay_view.py)."""
    document = record(browse, match_id)
    try:
        view = replay_view(document)
    except ViewError as error:
        raise SiteError(422, f"match {match_id}: {error}") from None
    return {**view, "summary": _summary_or_404(browse, match_id).to_json()}


def live_matches(live_events: LiveStore, before: float) -> list[dict[str, Any]]:
    """The matches in play (as of `before`, the spectators' delay), newest first."""
    listed = []
    for live in live_events.live_matches(LIVE_FRESH_S, before=before):
        start = public_only(live.start) or {}
        listed.append(
            {
                "match_id": live.match_id,
                "players": start.get("players"),
                "ruleset": start.get("ruleset"),
                "seats": start.get("seats", []),
                "started_at": live.started_at,
                "updated_at": live.updated_at,
            }
        )
    return listed
