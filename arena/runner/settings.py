"""What fixes a match besides its bots (`MatchSettings`, with a new match's id) and what a played match
gives back (`MatchOutcome`): the runner's input and output, apart from its loop."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Final

from fiftysix.engine import DealResult, EndReason, MatchRules
from fiftysix.record import GameRecord
from fiftysix.wire import FaultRecord, TimeControl

MATCH_ID_BYTES: Final = 8
"""A match id is this many random bytes from the OS's secure source, in hex (16 characters)."""


def new_match_id() -> str:
    """A new match's id: random, and nothing else. Every bot of the match is told it (MatchStart), so it
    holds nothing the bot could use: not the set, the rotation, the seed nor a count (the ladder's store
    keeps which set and rotation each match id played). Hex digits only: safe in a URL and a file
    name."""
    return secrets.token_hex(MATCH_ID_BYTES)


@dataclass
class MatchSettings:
    """Everything that fixes a match besides the bots."""

    rules: MatchRules
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    match_id: str = field(default_factory=new_match_id)
    connect_timeout_s: float = 5.0
    """Time for each bot's handshake (all attempts) and for its Ready answer."""
    strikes: int = 0
    """The fault policy: 0 forfeits at a bot's first fault; N plays a random legal move in the bot's
    place for each of its first N timeouts, illegal, malformed or misdirected answers, and forfeits at
    the next. A bot whose stream is gone cannot be substituted: it forfeits at once."""
    send_timeout_s: float = 5.0
    """Time for a message to a bot to be accepted by its stream (a bot that stops reading blocks it)."""


@dataclass
class MatchOutcome:
    """A finished match: the ranking, why it ended, the faults, the record, and timing figures."""

    match_id: str
    rules: MatchRules
    seat_names: list[str]
    reason: EndReason
    ranking: tuple[int, ...]
    tables: tuple[int, ...]
    faults: list[FaultRecord]
    record: GameRecord
    results: list[DealResult]
    decisions: int
    decision_seconds: list[float]
    """Wall time of each decision: legal moves, encoding, the bot's round trip, checking and applying."""
    waited_seconds: float
    """Of that, the time spent waiting for the bots' answers (transport and the bots' own work)."""
    elapsed: float
    arena_error: str | None = None
    """What went wrong when the arena itself stopped the match (reason `arena_error`)."""

    @property
    def forfeited_teams(self) -> tuple[int, ...]:
        """Teams that forfeited by a fault (not counting strikes played on with a random move)."""
        return tuple(sorted({fault.team for fault in self.faults if not fault.substituted}))
