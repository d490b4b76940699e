"""The fault policy, apart from the match loop: what a bad answer costs.

By default a fault forfeits. With strikes, a team's first N faults of the kinds that leave the stream
usable (a timeout, an illegal, malformed or misdirected answer) are each replaced by a random legal
move, the same for the same match and decision; the next forfeits. A fault that leaves no conversation
to go on with (a lost stream, a protocol error, an unreachable or incompatible bot) always forfeits.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from fiftysix.engine import Move
from fiftysix.wire import FaultCause

SUBSTITUTABLE: Final = frozenset(
    {FaultCause.TIMEOUT, FaultCause.ILLEGAL_MOVE, FaultCause.MALFORMED_ANSWER, FaultCause.WRONG_DECISION}
)
"""The faults a strike can forgive."""


class FaultPolicy:
    """Strikes left per team for one match."""

    def __init__(self, strikes: int, teams: int, match_id: str) -> None:
        self.strikes = strikes
        self.used = [0] * teams
        self.match_id = match_id

    def forgives(self, team: int, cause: FaultCause) -> bool:
        """Whether this fault of `team` is played on with a substitute move (using up a strike)."""
        if cause not in SUBSTITUTABLE or self.used[team] >= self.strikes:
            return False
        self.used[team] += 1
        return True

    def substitute(self, decision_id: int, legal: Sequence[Move]) -> Move:
        """The random legal move played in a faulting bot's place, fixed by the match and decision."""
        return random.Random(f"{self.match_id}/{decision_id}").choice(legal)
