"""The Python SDK for 56 bots: subclass `Bot`, implement `decide(view)`, then `serve(MyBot())`.

Views and moves are the rules engine's own types (`View`, `Card`, `Call`, `Suit`, ...), so the helpers
a card player needs are methods of the view: `cards_of(suit)`, `led_suit`, `trump`, `winning_play`,
`trick_points`, `played_cards`, `partners`, `points`.
"""

from arena.engine import (
    DOUBLE,
    PASS,
    REDOUBLE,
    BidForm,
    Call,
    CallKind,
    Card,
    Contract,
    DealResult,
    MatchRules,
    Move,
    Phase,
    Play,
    Rank,
    Ruleset,
    Suit,
    Trick,
    View,
    parse_call,
    parse_card,
)
from sdk.bot import Bot, BotView, Fault, MatchInfo, MatchSummary
from sdk.server import BotServer, serve, start

__all__ = [
    "DOUBLE",
    "PASS",
    "REDOUBLE",
    "BidForm",
    "Bot",
    "BotServer",
    "BotView",
    "Call",
    "CallKind",
    "Card",
    "Contract",
    "DealResult",
    "Fault",
    "MatchInfo",
    "MatchRules",
    "MatchSummary",
    "Move",
    "Phase",
    "Play",
    "Rank",
    "Ruleset",
    "Suit",
    "Trick",
    "View",
    "parse_call",
    "parse_card",
    "serve",
    "start",
]
