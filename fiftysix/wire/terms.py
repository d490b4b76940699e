"""The terms both sides of the protocol share: its version, the size limits, the enum values, the
fault causes and records, the time control, and the errors of a message that breaks the protocol."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

from fiftysix.engine import (
    BidForm,
    CallKind,
    Phase,
    Rank,
    Ruleset,
    Suit,
)
from fiftysix.v1 import bot_pb2 as pb

PROTOCOL_VERSION: Final = 1
"""The protocol version this code speaks (bot.proto describes it)."""
MAX_REQUEST_BYTES: Final = 4 * 1024 * 1024
"""Largest message the arena sends a bot (a whole decision is a few kilobytes); every bot must accept
this much."""
MAX_ANSWER_BYTES: Final = 64 * 1024
"""Largest message a bot may send the arena (an answer is a few bytes, a description a few hundred); the
arena refuses a larger one as a protocol error."""

RULESET_VALUES: Final = {Ruleset.PAIRS: pb.RULESET_PAIRS, Ruleset.PARTNERSHIP: pb.RULESET_PARTNERSHIP}
"""Each ruleset's value in the protocol's Ruleset enum."""
RULESETS_BY_VALUE: Final = {value: key for key, value in RULESET_VALUES.items()}
"""The ruleset of each value of the protocol's Ruleset enum."""
PHASE_VALUES: Final = {
    Phase.AUCTION: pb.PHASE_AUCTION,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.FINISHED: pb.PHASE_FINISHED,
}
PHASES_BY_VALUE: Final = {value: key for key, value in PHASE_VALUES.items()}
DENOMINATION_VALUES: Final = {
    Suit.SPADES: pb.DENOMINATION_SPADES,
    Suit.HEARTS: pb.DENOMINATION_HEARTS,
    Suit.DIAMONDS: pb.DENOMINATION_DIAMONDS,
    Suit.CLUBS: pb.DENOMINATION_CLUBS,
    None: pb.DENOMINATION_NO_TRUMPS,
}
DENOMINATIONS_BY_VALUE: Final = {value: key for key, value in DENOMINATION_VALUES.items()}
SUIT_VALUES: Final = {
    Suit.SPADES: pb.SUIT_SPADES,
    Suit.HEARTS: pb.SUIT_HEARTS,
    Suit.DIAMONDS: pb.SUIT_DIAMONDS,
    Suit.CLUBS: pb.SUIT_CLUBS,
}
SUITS_BY_VALUE: Final = {value: key for key, value in SUIT_VALUES.items()}
# The protocol numbers ranks high to low from 1 (a lower number is a higher card), the engine low to high.
RANK_VALUES: Final = {
    Rank.JACK: pb.RANK_JACK,
    Rank.NINE: pb.RANK_NINE,
    Rank.ACE: pb.RANK_ACE,
    Rank.TEN: pb.RANK_TEN,
    Rank.KING: pb.RANK_KING,
    Rank.QUEEN: pb.RANK_QUEEN,
    Rank.EIGHT: pb.RANK_EIGHT,
    Rank.SEVEN: pb.RANK_SEVEN,
}
RANKS_BY_VALUE: Final = {value: key for key, value in RANK_VALUES.items()}
CALL_KIND_VALUES: Final = {
    CallKind.PASS: pb.CALL_KIND_PASS,
    CallKind.DOUBLE: pb.CALL_KIND_DOUBLE,
    CallKind.REDOUBLE: pb.CALL_KIND_REDOUBLE,
    CallKind.BID: pb.CALL_KIND_BID,
}
CALL_KINDS_BY_VALUE: Final = {value: key for key, value in CALL_KIND_VALUES.items()}
BID_FORM_VALUES: Final = {
    BidForm.NUMBER_SUIT: pb.BID_FORM_NUMBER_SUIT,
    BidForm.SUIT_NUMBER: pb.BID_FORM_SUIT_NUMBER,
    BidForm.NO_TRUMPS: pb.BID_FORM_NO_TRUMPS,
    BidForm.NOES: pb.BID_FORM_NOES,
    BidForm.PLUS_SUIT: pb.BID_FORM_PLUS_SUIT,
    BidForm.PLUS_NOES: pb.BID_FORM_PLUS_NOES,
}
BID_FORMS_BY_VALUE: Final = {value: key for key, value in BID_FORM_VALUES.items()}


class MessageError(ValueError):
    """A message that does not hold what the protocol says it must."""


class FaultCause(Enum):
    """Why a bot failed, as recorded in results and sent in MatchEnd (see FaultCause in bot.proto)."""

    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    MALFORMED_ANSWER = "malformed_answer"
    WRONG_DECISION = "wrong_decision"
    DISCONNECTED = "disconnected"
    UNREACHABLE = "unreachable"
    INCOMPATIBLE = "incompatible"
    PROTOCOL_ERROR = "protocol_error"

    @property
    def message_value(self) -> pb.FaultCause.ValueType:
        """The enum value in bot.proto."""
        return pb.FaultCause.Value(f"FAULT_CAUSE_{self.name}")


class AnswerError(ValueError):
    """A bot's answer that is not an acceptable move; `cause` says which kind of fault it is."""

    def __init__(self, cause: FaultCause, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause


MAX_UINT32: Final = 2**32 - 1


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Time allowed per decision and the per-match bank of spare time, in milliseconds."""

    decision_ms: int = 1000
    bank_ms: int = 10000

    def __post_init__(self) -> None:
        # Both go to bots as uint32: refuse here what the message could not carry.
        if not 1 <= self.decision_ms <= MAX_UINT32 or not 0 <= self.bank_ms <= MAX_UINT32:
            raise ValueError(
                f"decision time must be 1 to {MAX_UINT32:,} ms and the bank 0 to {MAX_UINT32:,} ms; "
                f"got {self.decision_ms} and {self.bank_ms}"
            )

    def bank_left(self, bank_ms: float, waited_s: float) -> float:
        """The bank after a decision answered in `waited_s` seconds with `bank_ms` left before it: what the
        answer took beyond `decision_ms` comes out of the bank."""
        return max(0.0, bank_ms - max(0.0, waited_s * 1000 - self.decision_ms))


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """One bot fault in a match."""

    seat: int
    team: int
    cause: FaultCause
    detail: str
    deal_number: int
    substituted: bool = False
    """Whether a random legal move was played in the bot's place (a strike) instead of a forfeit."""
    move_number: int | None = None
    """The moves (calls and cards) made in its deal before it: it happened at the decision for the next
    one (so a replay can mark it where it happened); None when not known (a fault written before this
    was kept)."""

    def to_json(self) -> dict[str, object]:
        """The fault as a JSON-ready dictionary (for game records and the ladder's storage)."""
        data: dict[str, object] = {
            "seat": self.seat,
            "team": self.team,
            "cause": self.cause.value,
            "detail": self.detail,
            "deal_number": self.deal_number,
            "substituted": self.substituted,
        }
        if self.move_number is not None:
            data["move_number"] = self.move_number
        return data

    @classmethod
    def from_json(cls, data: object) -> FaultRecord:
        """The fault that `to_json` gave `data` (read back from the ladder's storage). A fault written
        before strikes existed has no `substituted`: it was a forfeit; one written before moves were
        counted has no `move_number`. Other keys are ignored.

        :raises ValueError: when `data` is not such a dictionary: a key missing or of the wrong type, a
            negative number, an unknown cause.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a fault is a JSON object, not {type(data).__name__}")

        def number(key: str) -> int:
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"a fault's {key!r} must be a whole number from 0")
            return value

        cause = _FAULT_CAUSES.get(data["cause"]) if isinstance(data.get("cause"), str) else None
        if cause is None:
            raise ValueError(f"a fault's 'cause' must be one of {', '.join(_FAULT_CAUSES)}")
        detail, substituted = data.get("detail"), data.get("substituted", False)
        if not isinstance(detail, str):
            raise ValueError("a fault's 'detail' must be a string")
        if not isinstance(substituted, bool):
            raise ValueError("a fault's 'substituted' must be true or false")
        move_number = None if data.get("move_number") is None else number("move_number")
        return cls(
            number("seat"), number("team"), cause, detail, number("deal_number"), substituted, move_number
        )


_FAULT_CAUSES: Final = {cause.value: cause for cause in FaultCause}
