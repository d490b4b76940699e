"""Probation: a bot whose last matches each ended in a forfeit of its own is skipped by the ladder until
the host takes it back (`arena bots probation NAME --clear`). Strikes that were played on do not count;
faults of the host's side (a bot down, a set put back) are not matches at all."""

from __future__ import annotations

from arena.ladder.run_settings import LadderReport
from arena.ladder.store import MatchStore


def probation_reason(matches: MatchStore, name: str, count: int, report: LadderReport) -> str | None:
    """Why `name` goes on probation now, or None: each of its last `count` matches (0: never) ended in a
    forfeit of its own, and this run has not put it there already.

    The reason names the count, the cause of the last fault and its match, never the fault's detail: the
    reason is public (the standings show it) from the moment it is given, while the detail may name cards
    (an illegal move's message lists the seat's legal cards) of a set whose other rotations are still to
    replay those deals. The detail is kept with the match and shown with it once its set is over."""
    if count < 1 or any(bot == name for bot, _ in report.probations):
        return None
    forfeits = matches.recent_forfeits(name, count)
    if len(forfeits) < count or not all(forfeits):
        return None
    [newest] = matches.recent_matches(name, 1)
    own = [fault for fault in newest.faults if newest.team_bots[fault.team] == name and not fault.substituted]
    last = own[-1]
    return f"forfeited its last {count} matches (last: {last.cause.value} in match {newest.id})"
