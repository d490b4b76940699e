"""The fixed action space: every card of the pack and every call of the auction, one index each.

Fixed so that a policy's output layer does not depend on the player count or the moment: the same
index always means the same move, and a mask says which are legal now. An 8-player pack holds two of
each card; both copies are the one action (they are the same card to the rules).
"""

from __future__ import annotations

from typing import Final

from fiftysix.engine import (
    ALL_CARDS,
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    BidForm,
    Call,
    CallKind,
    Move,
    Suit,
)


def _every_call() -> tuple[Call, ...]:
    """Pass, double, redouble, then the bids by number and form, then the plus bids."""
    calls: list[Call] = [PASS, DOUBLE, REDOUBLE]
    for number in range(MIN_BID, MAX_BID + 1):
        calls += [Call(CallKind.BID, BidForm.NUMBER_SUIT, number, suit) for suit in Suit]
        calls += [Call(CallKind.BID, BidForm.SUIT_NUMBER, number, suit) for suit in Suit]
        calls.append(Call(CallKind.BID, BidForm.NO_TRUMPS, number))
        calls.append(Call(CallKind.BID, BidForm.NOES, number))
    for increment in range(1, MAX_BID - MIN_BID + 1):
        calls += [Call(CallKind.BID, BidForm.PLUS_SUIT, increment, suit) for suit in Suit]
    calls.append(Call(CallKind.BID, BidForm.PLUS_NOES, 2))
    return tuple(calls)


ALL_CALLS: Final[tuple[Call, ...]] = _every_call()
"""Every call there is, in a fixed order (406 of them)."""
ACTIONS: Final[tuple[Move, ...]] = (*ALL_CARDS, *ALL_CALLS)
"""Action index -> move: the 32 cards in display order (`ALL_CARDS`), then `ALL_CALLS`."""
CARD_COUNT: Final = len(ALL_CARDS)
CALL_COUNT: Final = len(ALL_CALLS)
ACTION_COUNT: Final = len(ACTIONS)
_INDEX: Final[dict[Move, int]] = {move: index for index, move in enumerate(ACTIONS)}


def action_of(move: Move) -> int:
    """The action index of a move (cards and calls are interned, so this is one lookup)."""
    return _INDEX[move]


def move_of(action: int) -> Move:
    """The move an action index stands for.

    :raises ValueError: for an index outside the action space.
    """
    if not 0 <= action < ACTION_COUNT:
        raise ValueError(f"an action is 0 to {ACTION_COUNT - 1}, got {action}")
    return ACTIONS[action]
