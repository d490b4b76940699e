"""The rules engine of 56: pure Python, standard library only, no I/O.

Start with `Match` (a whole match) or `Deal` (one deal); moves are `Card`s and `Call`s, parsed from
canonical notation with `parse_card` and `parse_call`, or `parse_move` for whichever the phase calls for.
Search bots start from `Deal.from_view(view, sample_hands(view, rng))` and play on with
`Deal.apply_trusted`; `Deal.card_sets` and `SUIT_BITS` count a hand's cards without building it.
"""

from fiftysix.engine.calls import (
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    BidForm,
    Call,
    CallKind,
    legal_calls,
    parse_call,
)
from fiftysix.engine.cards import (
    ALL_CARDS,
    Card,
    Rank,
    Suit,
    format_cards,
    hand_size_for,
    pack_for,
    parse_card,
    parse_cards,
    parse_suit,
    ranks_for,
)
from fiftysix.engine.deal import Deal
from fiftysix.engine.errors import IllegalMoveError, MatchOverError, NotationError
from fiftysix.engine.hands import SUIT_BITS
from fiftysix.engine.match import (
    DealResult,
    DealSource,
    FixedFirstDeal,
    Match,
    Payment,
    ShuffledDeals,
    first_dealer_for,
)
from fiftysix.engine.rules import (
    MAX_DEAL_CAP,
    POINTS_PER_DEAL,
    STARTING_TABLES,
    EndReason,
    MatchRules,
    Ruleset,
    TeamSeat,
    table_amount,
)
from fiftysix.engine.sampling import sample_hands
from fiftysix.engine.seeds import MAX_SEED, MIN_SEED, SEED_BITS, SEED_RANGE
from fiftysix.engine.values import Bid, CallMade, Contract, Move, Phase, Play, Trick, parse_move
from fiftysix.engine.view import View

__all__ = [
    "ALL_CARDS",
    "DOUBLE",
    "MAX_BID",
    "MAX_DEAL_CAP",
    "MAX_SEED",
    "MIN_BID",
    "MIN_SEED",
    "PASS",
    "POINTS_PER_DEAL",
    "REDOUBLE",
    "SEED_BITS",
    "SEED_RANGE",
    "STARTING_TABLES",
    "SUIT_BITS",
    "Bid",
    "BidForm",
    "Call",
    "CallKind",
    "CallMade",
    "Card",
    "Contract",
    "Deal",
    "DealResult",
    "DealSource",
    "EndReason",
    "FixedFirstDeal",
    "IllegalMoveError",
    "Match",
    "MatchOverError",
    "MatchRules",
    "Move",
    "NotationError",
    "Payment",
    "Phase",
    "Play",
    "Rank",
    "Ruleset",
    "ShuffledDeals",
    "Suit",
    "TeamSeat",
    "Trick",
    "View",
    "first_dealer_for",
    "format_cards",
    "hand_size_for",
    "legal_calls",
    "pack_for",
    "parse_call",
    "parse_card",
    "parse_cards",
    "parse_move",
    "parse_suit",
    "ranks_for",
    "sample_hands",
    "table_amount",
]
