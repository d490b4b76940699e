"""The ladder's file as people read it: the registered bots, the standings and the finished matches, as
aligned text or as JSON. Every name and reason in it came from someone else, so it is made safe."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from arena.errors import ArenaError
from arena.ladder import Standing, default_pool, ladder_standings
from arena.ladder.rating import START_RATING
from arena.ladder.standings import HeadToHead, crosstable
from arena.ladder.store import LadderStore, parse_pool
from arena.untrusted import safe_text


def print_bots(store: LadderStore, *, as_json: bool) -> None:
    """The registered bots, their ratings and where they are: the rating in the pool with the most
    matches (JSON: `rating` there, and `ratings` in every pool where the bot was rated), their owner
    (`owner`, null when none), and whether the host could not reach them (`down`)."""
    pool = default_pool(store.ratings.pools())
    bots = store.registry.bots(pool)
    ratings = store.registry.bot_ratings()
    down = store.registry.down_bots()
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
            status = f"  owner: {safe_text(bot.owner, 64)}" if bot.owner is not None else ""
            status += f"  probation: {safe_text(bot.probation)}" if bot.probation else ""
            if bot.name in down:
                status += f"  down since {_when(down[bot.name])}"
            print(f"{safe_text(bot.name, 64):<20} {bot.rating:7.1f}  {safe_text(bot.where)}{status}")


def print_checks(store: LadderStore, name: str, *, as_json: bool) -> None:
    """The checks that registrations of bot `name` went through, newest first, one line each (JSON: each
    check with its report)."""
    checks = store.checks.checks_of_bot(name)
    if as_json:
        print(json.dumps([check.to_json() for check in checks], indent=1))
    elif not checks:
        print(f"No checks of {safe_text(name, 64)} are kept (only those of bots the arena starts are).")
    else:
        for check in checks:
            verdict = "passed" if check.passed else "refused"
            version = f"  version {check.version}" if check.version is not None else ""
            print(
                f"{check.id:>6}  {_when(check.checked_at)}  {verdict:<7}  {check.report.summary()}{version}  "
                f"by {safe_text(check.owner, 64)}"
            )


def _when(seconds: float) -> str:
    """A moment as people read it: UTC, to the second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_standings(standings: Sequence[Standing]) -> list[str]:
    """The standings in aligned columns."""
    header = (
        "rank",
        "bot",
        "elo",
        "95% interval",
        "LOS",
        "matches",
        "wins",
        "losses",
        "timeouts",
        "illegal",
        "crashes",
        "isolated",
    )
    rows = [header]
    for line in standings:
        interval = "-" if line.interval == float("inf") else f"+/- {line.interval:.0f}"
        superiority = "-" if line.superiority is None else f"{100 * line.superiority:.0f}%"
        name = safe_text(line.bot, 64) + (" (probation)" if line.probation else "")
        name += " (down)" if line.down_since is not None else ""
        rows.append(
            (
                str(line.rank),
                name,
                f"{line.rating:.0f}",
                interval,
                superiority,
                str(line.matches),
                str(line.wins),
                str(line.losses),
                str(line.timeouts),
                str(line.illegal_moves),
                str(line.crashes),
                "yes" if line.isolated else "shared" if line.shares_seats else "no",
            )
        )
    return _aligned(rows)


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """`rows` as aligned text: the second column (names) to the left, the others to the right."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if column == 1 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def format_crosstable(
    bots: Sequence[str], cells: Sequence[HeadToHead], ratings: dict[str, float]
) -> list[str]:
    """A crosstable as aligned text: a row per bot, best first, and a column per opponent (numbered as the
    rows), each cell the row's summed set score against the column's over their sets ("2.5/4")."""
    by_pair = {(cell.bot, cell.opponent): cell for cell in cells}
    rows = [("", "bot", "elo", "score", *(str(number) for number in range(1, len(bots) + 1)))]
    for number, bot in enumerate(bots, start=1):
        mine = [cell for cell in cells if cell.bot == bot]
        total = f"{_number(sum(cell.score for cell in mine))}/{sum(cell.sets for cell in mine)}"
        row = [str(number), safe_text(bot, 64), f"{ratings.get(bot, START_RATING):.0f}", total]
        for opponent in bots:
            cell = by_pair.get((bot, opponent))
            row.append(
                "x" if opponent == bot else "-" if cell is None else f"{_number(cell.score)}/{cell.sets}"
            )
        rows.append(tuple(row))
    return _aligned(rows)


def _number(value: float) -> str:
    """A score as people write it: 3, 2.5, 1.25."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def check_pool(pool: str) -> str:
    """`pool` if it names a format (`<players>p-<ruleset>`, such as 6p-partnership), perhaps of an event
    (`4p-pairs@sprt-20261130-120000`), in its canonical form; else an ArenaError."""
    try:
        return parse_pool(pool)
    except ValueError:
        raise ArenaError(
            f"no pool {safe_text(pool, 64)!r}: a pool is a format such as 4p-pairs or 6p-partnership, "
            "or an event's, such as 4p-pairs@sprt-20261130-120000"
        ) from None


def pools_line(pools: dict[str, int], shown: str) -> str:
    """The pools and their match counts, on one line."""
    listed = ", ".join(f"{name} ({count} matches)" for name, count in pools.items()) or "none yet"
    return f"Pool {shown}; pools: {listed}"


def print_standings(store: LadderStore, *, as_json: bool, pool: str | None = None) -> None:
    """The standings of `pool` (default: the pool with the most matches) after the list of pools, and
    why each bot on probation is."""
    pools = store.ratings.pools()
    shown = default_pool(pools) if pool is None else check_pool(pool)
    standings = ladder_standings(store, shown)
    if as_json:
        print(json.dumps([line.to_json() for line in standings], indent=1))
    elif not standings:
        print("No bots registered yet.")
    else:
        print(pools_line(pools, shown))
        print("\n".join(format_standings(standings)))
        not_isolated = store.sets.sets_not_isolated().get(shown, 0)
        if not_isolated:
            print(
                f"{not_isolated} rated sets of {shown} had a bot the arena could not isolate (a remote bot, "
                "or a set stored before the arena recorded it)"
            )
        if not all(line.isolated for line in standings):
            print(
                "isolated no: a remote bot; the arena can neither restart nor separate its processes, so "
                "it may remember the rotations of a set; shared: it gives fewer addresses than a team's "
                "seats, so one process plays partners (docs/hosting.md, fair play; --isolated-only leaves "
                "such bots out)"
            )
        for line in standings:
            if line.probation:
                print(f"{safe_text(line.bot, 64)} is on probation: {safe_text(line.probation)}")
            if line.down_since is not None:
                print(
                    f"{safe_text(line.bot, 64)} is down since {_when(line.down_since)}: the arena could not "
                    "reach or start it when its sets started; it is skipped until it answers again"
                )


def print_event(store: LadderStore, pool: str, bots: Sequence[str]) -> None:
    """An event's report (a tournament's): its crosstable, then the ratings of its bots fitted over its
    own sets, with intervals and likelihoods of superiority."""
    print_crosstable(store, as_json=False, pool=pool)
    print("")
    print(f"Ratings over the sets of {pool} only:")
    print("\n".join(format_standings(ladder_standings(store, pool, only=set(bots)))))


def print_crosstable(store: LadderStore, *, as_json: bool, pool: str | None = None) -> None:
    """The head-to-head results of `pool` (default: the pool with the most matches), from its sums: a
    grid of bots against bots, or JSON (a line per ordered pair that met)."""
    pools = store.ratings.pools()
    shown = default_pool(pools) if pool is None else check_pool(pool)
    fitted = store.ratings.fitted_ratings(shown)
    bots, cells = crosstable(store.ratings.pool_sums(shown).pairs, fitted)
    if as_json:
        print(json.dumps([{"pool": shown, **cell.to_json()} for cell in cells], indent=1))
    elif not bots:
        print(f"No rated sets in {shown} yet.")
    else:
        print(
            f"Crosstable of {shown}: the row's summed set score against the column's / the sets they played"
        )
        ratings = {bot: line.rating for bot, line in fitted.items()}
        print("\n".join(format_crosstable(bots, cells, ratings)))


def print_matches(store: LadderStore, bot: str | None, limit: int, *, as_json: bool) -> None:
    """The newest finished matches (of one bot), newest first, as the site lists them: the faults'
    details only of matches whose set is over (they may name cards of deals still to be replayed)."""
    summaries, _more = store.browse.match_page(bot, None, 0, limit)
    if as_json:
        print(json.dumps([summary.to_json() for summary in summaries], indent=1))
        return
    if not summaries:
        print("No finished matches.")
    for match in (summary.match for summary in summaries):
        order = sorted(match.bot_ranks.items(), key=lambda item: (item[1], item[0]))
        ranks = ", ".join(f"{rank}. {safe_text(name, 64)}" for name, rank in order)
        faults = f"  {len(match.faults)} faults" if match.faults else ""
        shown_id, reason = safe_text(match.id, 64), safe_text(match.reason, 64)
        print(f"{shown_id:<24} set {match.set_id:<4} {reason:<14} {ranks}{faults}")
