"""Match settings and the fixed tables of the rules: teams, starting tables, table amounts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final

STARTING_TABLES: Final = 12
POINTS_PER_DEAL: Final = 56
MAX_DEAL_CAP: Final = 10_000
"""The largest deal cap: far more deals than any match needs, small enough for every store and message."""


class Ruleset(Enum):
    """`pairs` (the default) or `partnership` (two fixed teams): docs/rules.md#rulesets."""

    PAIRS = "pairs"
    PARTNERSHIP = "partnership"

    @classmethod
    def parse(cls, text: str) -> Ruleset:
        """The ruleset named `text` (any case), with an error listing the choices."""
        for ruleset in cls:
            if ruleset.value == text.strip().lower():
                return ruleset
        raise ValueError(f"expected a ruleset, pairs or partnership; got {text!r}")


class EndReason(StrEnum):
    """Why a match ended. The rules end a match in two ways (`Match.end_reason`); the two others are
    decided by whoever runs the match (the arena's fault policy, or its own failure). The values are
    what records, messages and the ladder's file hold."""

    ONE_TEAM_LEFT = "one_team_left"
    """Every other team ran out of tables."""
    DEAL_CAP = "deal_cap"
    """The deal cap was reached with more than one team left."""
    FORFEIT = "forfeit"
    """A bot's fault decided the match: its team ranks last."""
    ARENA_ERROR = "arena_error"
    """The arena itself failed, through no fault of the bots; such a match is never rated."""

    @property
    def by_the_rules(self) -> bool:
        """Whether the rules ended the match (it was played to its end)."""
        return self in (EndReason.ONE_TEAM_LEFT, EndReason.DEAL_CAP)


@dataclass(frozen=True, slots=True)
class MatchRules:
    """The settings of a match that every bot is told: player count, ruleset, optional deal cap."""

    players: int = 4
    ruleset: Ruleset = Ruleset.PAIRS
    deal_cap: int | None = None

    def __post_init__(self) -> None:
        if self.players not in (4, 6, 8):
            raise ValueError(f"56 is played by 4, 6 or 8 players, not {self.players}")
        if self.deal_cap is not None and not 1 <= self.deal_cap <= MAX_DEAL_CAP:
            raise ValueError(f"the deal cap must be 1 to {MAX_DEAL_CAP:,}, got {self.deal_cap}")

    @property
    def team_count(self) -> int:
        """Number of teams: players / 2 in `pairs`, always 2 in `partnership`."""
        return 2 if self.ruleset is Ruleset.PARTNERSHIP else self.players // 2

    def team_of(self, seat: int) -> int:
        """The team of `seat`: partners sit opposite, so every player sits between two opponents."""
        return seat % self.team_count

    def seats_of(self, team: int) -> tuple[int, ...]:
        """The seats of `team`, in playing order."""
        return tuple(seat for seat in range(self.players) if seat % self.team_count == team)

    def partners_of(self, seat: int) -> tuple[int, ...]:
        """The other seats of `seat`'s team (all of them, at the table or not)."""
        return tuple(other for other in self.seats_of(self.team_of(seat)) if other != seat)


class TeamSeat:
    """`team` and `partners` of the seat that a view or a bot's match information is for: the one
    reading of a seat's team for both (the engine's `View`, the SDK's `MatchInfo`)."""

    __slots__ = ()

    seat: int
    rules: MatchRules
    team_of: tuple[int, ...]
    """The team of every seat of the match."""

    @property
    def team(self) -> int:
        """This seat's team."""
        return self.team_of[self.seat]

    @property
    def partners(self) -> tuple[int, ...]:
        """The other seats of this seat's team (all of them, at the table or not)."""
        return self.rules.partners_of(self.seat)


_BANDS: Final = ((28, 39, 1, 2), (40, 47, 2, 3), (48, 55, 3, 4), (56, 56, 4, 5))


def table_amount(contract: int, made: bool, doubling: int) -> int:
    """Tables each paying team pays (docs/rules.md#table-amounts).

    `doubling` is 1 (undoubled), 2 (doubled) or 4 (redoubled). When the contract is `made` each other team
    pays the contractors; when lost the contractors pay each other team.
    """
    if doubling not in (1, 2, 4):
        raise ValueError(f"doubling is 1, 2 or 4, got {doubling}")
    for low, high, won_amount, lost_amount in _BANDS:
        if low <= contract <= high:
            return (won_amount if made else lost_amount) * doubling
    raise ValueError(f"a contract is 28 to 56, got {contract}")
