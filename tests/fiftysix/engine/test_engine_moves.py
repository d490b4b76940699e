"""`parse_move`: the one reading of "a card or a call" by the phase of the deal (docs/rules.md#notation)."""

from __future__ import annotations

import re

import pytest

from fiftysix.engine import (
    DOUBLE,
    PASS,
    BidForm,
    Call,
    CallKind,
    Card,
    Move,
    NotationError,
    Phase,
    Rank,
    Suit,
    parse_move,
)


@pytest.mark.parametrize(
    ("text", "phase", "move"),
    [
        ("JS", Phase.PLAY, Card(Rank.JACK, Suit.SPADES)),
        ("10d", Phase.PLAY, Card(Rank.TEN, Suit.DIAMONDS)),
        ("pass", Phase.AUCTION, PASS),
        ("DOUBLE", Phase.AUCTION, DOUBLE),
        ("28S", Phase.AUCTION, Call(CallKind.BID, BidForm.NUMBER_SUIT, 28, Suit.SPADES)),
        ("+2NOES", Phase.AUCTION, Call(CallKind.BID, BidForm.PLUS_NOES, 2, None)),
    ],
)
def test_a_move_is_read_as_its_phase_calls_for(text: str, phase: Phase, move: Move) -> None:
    assert parse_move(text, phase) == move


@pytest.mark.parametrize(
    ("text", "phase", "message"),
    [
        ("pass", Phase.PLAY, "expected a card"),  # a call where a card is due
        ("JS", Phase.AUCTION, "expected a call"),  # a card where a call is due
        ("", Phase.PLAY, "expected a card"),
        ("\x1b[2J" * 20, Phase.AUCTION, "characters)"),  # garbage, quoted and cut
        ("JS", Phase.FINISHED, "the deal is over"),
    ],
)
def test_anything_else_is_a_notation_error(text: str, phase: Phase, message: str) -> None:
    with pytest.raises(NotationError, match=re.escape(message)):
        parse_move(text, phase)
