"""What the signed-in pages show, as dictionaries (reads only, like data.py, whose rules they keep: a
match's record and its faults' details stay held back until its set is over): an entrant's bots and the
checks of their uploads item by item, each bot's versions with when each ran, its rating then and the
check it went through, its matches with its own faults, and its own output in a match (held back like
the record); the host's entrants, their bots and the ladder's recent faults.

Who may see what is decided here, once: an entrant sees the bots they own (a bot's `owner` is the name
of the token that registered it), the host every bot, and a bot that is not the viewer's reads exactly as
one that does not exist (a 404 that names nothing), so a guessed URL tells nobody anything."""

from __future__ import annotations

from typing import Any, Final

from arena.ladder import Standing, default_pool, ladder_standings
from arena.ladder.store import BotCheck, BotEntry, LadderStore, StoreError, TokenHolder, Upload
from arena.ladder.store.browse import RatingPoint
from arena.site import data
from arena.site.data import HISTORY_POINTS, SiteError
from arena.untrusted import safe_lines, safe_text

NOT_FOUND: Final = "no such page"
"""What a page the viewer may not see says: the same as a page that does not exist."""
FAULT_MATCHES: Final = 200
"""The host's page lists the faults of the ladder's last this many matches."""
FAULTS_SHOWN: Final = 50
CHECKS_SHOWN: Final = 10
"""An entrant's page shows the checks of their last this many uploads (refused ones included)."""


def not_found() -> SiteError:
    return SiteError(404, NOT_FOUND)


def may_see(holder: TokenHolder, bot: BotEntry) -> bool:
    """Whether `holder` may see `bot`'s signed-in page: its owner, or the host."""
    return holder.role == "host" or bot.owner == holder.name


def entrant(store: LadderStore, holder: TokenHolder) -> dict[str, Any]:
    """An entrant's page: their bots with their standing in the main pool, and the bot their uploads
    register (the one named as their token: a new version of it, or the bot itself when new)."""
    registered = store.registry.bots()
    owned = [bot for bot in registered if bot.owner == holder.name]
    pool = default_pool(store.ratings.pools())
    standings = _standings(store, pool, [bot.name for bot in owned])
    current = store.uploads.launched_versions()
    bots = []
    for bot in owned:
        uploads = store.uploads.uploads_of(bot.name)
        bots.append(
            {
                "name": bot.name,
                "standing": standings.get(bot.name),
                "versions": len(uploads),
                "current_version": current.get(bot.name),
                "at_address": bot.address is not None,
            }
        )
    target = holder.name
    return {
        "name": holder.name,
        "pool": pool,
        "bots": bots,
        "upload_bot": target,
        "upload_bot_exists": any(bot.name == target for bot in registered),
        "checks": [check_view(check) for check in store.checks.checks_by(holder.name, CHECKS_SHOWN)],
    }


def check_view(check: BotCheck) -> dict[str, Any]:
    """A kept check as a page shows it: when, what it registered (or that it refused), and every item
    as `arena check-bot` reports it, with the bot's first lines of output where an item quotes them."""
    return {
        "id": check.id,
        "bot": check.bot,
        "checked_at": check.checked_at,
        "version": check.version,
        "passed": check.passed,
        "items": [
            {
                "name": item.name,
                "status": item.status.value,
                "reason": item.reason,
                "output": None if item.output is None else safe_lines(item.output),
            }
            for item in check.report.items
        ],
    }


def entrant_bot(
    store: LadderStore, holder: TokenHolder, name: str, pool: str | None, page: int
) -> dict[str, Any]:
    """A bot's signed-in page: its standing in `pool` (default: the main pool), its versions with when
    each ran and its rating then, and a page of its matches (every pool, newest first), each with the
    bot's own faults."""
    bot = _visible_bot(store, holder, name)
    shown = pool or default_pool(store.ratings.pools())
    standing = _standings(store, shown, [name]).get(name)
    listing = data.matches(store.browse, name, None, page)
    for match in listing["matches"]:
        teams = {team for team, team_bot in enumerate(match["team_bots"]) if team_bot == name}
        match["own_faults"] = [fault for fault in match["faults"] if fault["team"] in teams]
    return {
        "name": name,
        "owner": bot.owner,
        "where": "an address" if bot.address is not None else "a command the arena starts",
        "pool": shown,
        "pools": data.pools(store),
        "standing": standing,
        "versions": versions(store, name, shown),
        "matches": listing,
    }


def versions(store: LadderStore, name: str, pool: str) -> list[dict[str, Any]]:
    """The bot's uploaded versions, newest first, each with when it was the bot's current one (from its
    upload to the next; the newest until now while the bot still runs it) and its rating in `pool` then:
    the rating after the last set rated while it was current (ratings are the bot's, not a version's: a
    set rated just after an upload may have been played in part by the version before)."""
    uploads = store.uploads.uploads_of(name)
    running = store.uploads.launched_versions().get(name)
    history = store.browse.rating_history(name, pool, HISTORY_POINTS)
    checks = store.checks.version_checks(name)
    shown = []
    for index, upload in enumerate(uploads):
        newest = index + 1 == len(uploads)
        until = None if newest else uploads[index + 1].uploaded_at
        running_now = newest and running == upload.version
        rated = _rated_while(history, upload, until) if running_now or not newest else None
        shown.append(
            {
                "version": upload.version,
                "sha256": upload.sha256,
                "run": safe_text(
                    upload.run, 2000
                ),  # an entrant's text: control and direction characters escaped
                "from": upload.uploaded_at,
                "until": until,
                "running": running_now,
                "rated_sets": None if rated is None else len(rated),
                "rating": rated[-1].after if rated else None,
                "check": check_view(checks[upload.version]) if upload.version in checks else None,
            }
        )
    return shown[::-1]


def _rated_while(history: list[RatingPoint], upload: Upload, until: float | None) -> list[RatingPoint]:
    return [
        point for point in history if point.at >= upload.uploaded_at and (until is None or point.at < until)
    ]


def host_view(store: LadderStore) -> dict[str, Any]:
    """The host's page: every entrant (a participant's token) with the bots they own, every bot with its
    owner, and the faults of the ladder's last FAULT_MATCHES matches, newest first."""
    bots = store.registry.bots()
    pool = default_pool(store.ratings.pools())
    standings = _standings(store, pool, [bot.name for bot in bots])

    def line(bot: BotEntry) -> dict[str, Any]:
        return {"name": bot.name, "owner": bot.owner, "standing": standings.get(bot.name)}

    entrants = [
        {
            "name": holder.name,
            "since": holder.created_at,
            "bots": [line(bot) for bot in bots if bot.owner == holder.name],
        }
        for holder in store.access.tokens()
        if holder.role == "participant"
    ]
    recent, _more = store.browse.match_page(None, None, 0, FAULT_MATCHES)
    faults = []
    for summary in recent:
        shown = summary.to_json()
        for fault in shown["faults"]:
            team_bots = shown["team_bots"]
            bot_name = team_bots[fault["team"]] if 0 <= fault["team"] < len(team_bots) else None
            faults.append({**fault, "bot": bot_name, "match_id": shown["id"], "set_over": shown["set_over"]})
    return {
        "pool": pool,
        "entrants": entrants,
        "bots": [line(bot) for bot in bots],
        "faults": faults[:FAULTS_SHOWN],
        "fault_matches": FAULT_MATCHES,
    }


def match_output(store: LadderStore, holder: TokenHolder, name: str, match_id: str) -> dict[str, Any]:
    """What the bot `name` wrote in a match, seat by seat, as the arena kept it: for its owner only the
    seats of bots they own (`OutputStore.own`), for the host every seat of the bot; for both only once the
    match's set is over, as its record (the other rotations of the set replay the same deals)."""
    _visible_bot(store, holder, name)
    try:
        summary = store.browse.match_summary(match_id)
    except StoreError:
        raise not_found() from None
    if name not in summary.match.team_bots:
        raise not_found()
    held_back = summary.held_back
    if held_back is not None:
        return {"name": name, "match_id": match_id, "held_back": held_back, "seats": []}
    kept = (
        store.outputs.of_match(match_id)
        if holder.role == "host"
        else store.outputs.own(match_id, holder.name)
    )
    seats = [
        {
            "seat": output.seat,
            "version": output.version,
            "bytes": len(output.output),
            "dropped": output.dropped,
            "lines": safe_lines(output.text),
        }
        for output in kept
        if output.bot == name
    ]
    return {"name": name, "match_id": match_id, "held_back": None, "seats": seats}


def _visible_bot(store: LadderStore, holder: TokenHolder, name: str) -> BotEntry:
    try:
        bot = store.registry.bot(name)
    except StoreError:
        raise not_found() from None
    if not may_see(holder, bot):
        raise not_found()
    return bot


def _standings(store: LadderStore, pool: str, names: list[str]) -> dict[str, dict[str, Any]]:
    """The standings of `names` in `pool` (ranked among every bot), JSON-ready with their status, by bot."""
    lines: list[Standing] = ladder_standings(store, pool) if names else []
    return {line.bot: data.standing_view(line) for line in lines if line.bot in names}
