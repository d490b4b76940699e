"""What a bot author implements: a `Bot` with one method, `decide(view) -> move`.

The SDK turns every protocol message into engine types (`View`, `Card`, `Call`, `DealResult`), so a
bot never touches protobuf. One bot object plays one seat of one match: `serve` makes a fresh copy of
the bot for every seat's conversation, so attributes set in the hooks are that seat's own state.
"""

from __future__ import annotations

from dataclasses import dataclass

from fiftysix.engine import DealResult, MatchRules, Move, Ruleset, TeamSeat, View
from fiftysix.wire import FaultCause, TimeControl


@dataclass(frozen=True, slots=True)
class BotView(View):
    """A seat's `View` when it must act, plus the time it has.

    `legal_moves` lists every legal move; `decide` must return one of them.
    """

    decision_ms: int = 0
    """Time for this decision before the bank is drawn on, in milliseconds."""
    bank_ms: int = 0
    """Spare time left in this seat's bank, in milliseconds."""

    @classmethod
    def from_view(cls, view: View, decision_ms: int = 1000, bank_ms: int = 0) -> BotView:
        """A BotView of an engine view, for driving a bot in-process (tests, local experiments)."""
        fields = {name: getattr(view, name) for name in View.__dataclass_fields__}
        return cls(**fields, decision_ms=decision_ms, bank_ms=bank_ms)


@dataclass(frozen=True, slots=True)
class MatchInfo(TeamSeat):
    """The start of a match, for the seat this bot plays."""

    match_id: str
    rules: MatchRules
    seat: int
    team_of: tuple[int, ...]
    seat_names: tuple[str, ...]
    time_control: TimeControl


@dataclass(frozen=True, slots=True)
class Fault:
    """A bot fault reported at the end of a match."""

    seat: int
    team: int
    cause: FaultCause
    detail: str
    deal_number: int


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """The end of a match: why it ended, each team's rank (1 is best) and tables, and any faults."""

    reason: str
    ranking: tuple[int, ...]
    tables: tuple[int, ...]
    faults: tuple[Fault, ...]


class Bot:
    """Subclass this and implement `decide`. The hooks are optional.

    Class attributes describe the bot in the handshake: `name`, `version`, `author`, the
    `player_counts` it can play and the `rulesets` it can play (all by default).
    """

    name: str = "bot"
    version: str = "0.1.0"
    author: str = ""
    player_counts: tuple[int, ...] = (4, 6, 8)
    rulesets: tuple[Ruleset, ...] = (Ruleset.PAIRS, Ruleset.PARTNERSHIP)

    def decide(self, view: BotView) -> Move | str:
        """Choose a move from `view.legal_moves` (a `Card` or `Call`, or its notation as a string)."""
        raise NotImplementedError("a Bot must implement decide(view)")

    def on_match_start(self, match: MatchInfo) -> None:
        """Called once, before the first decision of the match."""

    def on_deal_end(self, result: DealResult) -> None:
        """Called after every deal, with every hand of it (now public)."""

    def on_match_end(self, summary: MatchSummary) -> None:
        """Called once when the match is over."""
