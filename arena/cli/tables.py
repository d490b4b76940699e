"""The ladder's file as people read it: the registered bots, the standings and the finished matches, as
aligned text or as JSON. Every name and reason in it came from someone else, so it is made safe."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from arena.errors import ArenaError
from arena.ladder import LadderStore, Standing, default_pool, ladder_standings, parse_pool
from arena.untrusted import safe_text


def print_bots(store: LadderStore, *, as_json: bool) -> None:
    """The registered bots, their ratings and where they are: the rating in the pool with the most
    matches (JSON: `rating` there, and `ratings` in every pool where the bot was rated), and whether the
    host could not reach them (`down`)."""
    pool = default_pool(store.pools())
    bots = store.bots(pool)
    ratings = store.bot_ratings()
    down = store.down_bots()
    if as_json:
        listed = [
            {
                **dataclasses.asdict(bot),
                "pool": pool,
                "ratings": ratings.get(bot.name, {}),
                "down": bot.name in down,
                "down_since": down.get(bot.name),
            }
            for bot in bots
        ]
        print(json.dumps(listed, indent=1))
    elif not bots:
        print("No bots registered. Add one with: arena bots add NAME HOST:PORT")
    else:
        print(f"Ratings in {pool}")
        for bot in bots:
            status = f"  probation: {safe_text(bot.probation)}" if bot.probation else ""
            if bot.name in down:
                status += f"  down since {_when(down[bot.name])}"
            print(f"{safe_text(bot.name, 64):<20} {bot.rating:7.1f}  {safe_text(bot.where)}{status}")


def _when(seconds: float) -> str:
    """A moment as people read it: UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_standings(standings: Sequence[Standing]) -> list[str]:
    """The standings as an aligned table."""
    header = (
        "rank",
        "bot",
        "elo",
        "95% interval",
        "matches",
        "wins",
        "losses",
        "timeouts",
        "illegal",
        "crashes",
    )
    rows = [header]
    for line in standings:
        interval = "-" if line.interval == float("inf") else f"+/- {line.interval:.0f}"
        name = safe_text(line.bot, 64) + (" (probation)" if line.probation else "")
        name += " (down)" if line.down_since is not None else ""
        rows.append(
            (
                str(line.rank),
                name,
                f"{line.rating:.0f}",
                interval,
                str(line.matches),
                str(line.wins),
                str(line.losses),
                str(line.timeouts),
                str(line.illegal_moves),
                str(line.crashes),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if column == 1 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def check_pool(pool: str) -> str:
    """`pool` if it names a format (`<players>p-<ruleset>`, such as 6p-partnership), else an ArenaError."""
    try:
        return parse_pool(pool)
    except ValueError:
        raise ArenaError(
            f"no pool {safe_text(pool, 64)!r}: a pool is a format such as 4p-pairs or 6p-partnership"
        ) from None


def pools_line(pools: dict[str, int], shown: str) -> str:
    """The pools and their match counts, on one line."""
    listed = ", ".join(f"{name} ({count} matches)" for name, count in pools.items()) or "none yet"
    return f"Pool {shown}; pools: {listed}"


def print_standings(store: LadderStore, *, as_json: bool, pool: str | None = None) -> None:
    """The standings of `pool` (default: the pool with the most matches) after the list of pools, and
    why each bot on probation is."""
    pools = store.pools()
    shown = default_pool(pools) if pool is None else check_pool(pool)
    standings = ladder_standings(store, shown)
    if as_json:
        print(json.dumps([line.to_json() for line in standings], indent=1))
    elif not standings:
        print("No bots registered yet.")
    else:
        print(pools_line(pools, shown))
        print("\n".join(format_standings(standings)))
        for line in standings:
            if line.probation:
                print(f"{safe_text(line.bot, 64)} is on probation: {safe_text(line.probation)}")
            if line.down_since is not None:
                print(
                    f"{safe_text(line.bot, 64)} is down since {_when(line.down_since)}: the arena could not "
                    "reach or start it when its sets started; it is skipped until it answers again"
                )


def print_matches(store: LadderStore, bot: str | None, limit: int, *, as_json: bool) -> None:
    """The newest finished matches (of one bot), newest first."""
    matches = store.recent_matches(bot, limit)
    if as_json:
        print(json.dumps([match.to_json() for match in matches], indent=1))
        return
    if not matches:
        print("No finished matches.")
    for match in matches:
        order = sorted(match.bot_ranks.items(), key=lambda item: (item[1], item[0]))
        ranks = ", ".join(f"{rank}. {safe_text(name, 64)}" for name, rank in order)
        faults = f"  {len(match.faults)} faults" if match.faults else ""
        shown_id, reason = safe_text(match.id, 64), safe_text(match.reason, 64)
        print(f"{shown_id:<24} set {match.set_id:<4} {reason:<14} {ranks}{faults}")
