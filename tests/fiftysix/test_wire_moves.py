"""The structured moves and trick state of a DecisionRequest: `moves[i]` is `legal_moves[i]` as a value,
and `led_suit`, `trump` and `trick_winner` say what the engine says, in random matches of every size and
ruleset; one move converts to its message and back; malformed structured moves are refused."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftysix.engine import (
    ALL_CARDS,
    REDOUBLE,
    Call,
    Card,
    Match,
    MatchRules,
    Move,
    Play,
    Ruleset,
    Suit,
    legal_calls,
    parse_call,
    parse_card,
    parse_move,
)
from fiftysix.players import RandomPlayer
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import DecisionEncoder, MessageError, move_from_message, move_message

EVERY_CALL: tuple[Call, ...] = tuple(dict.fromkeys((*legal_calls(0, True), *legal_calls(28, True), REDOUBLE)))
"""Pass, double, redouble, every plain bid from 28 and every plus bid."""


@pytest.mark.parametrize(
    ("move", "current", "expected"),
    [
        ("JS", 0, pb.Move(card=pb.Card(suit=pb.SUIT_SPADES, rank=pb.RANK_JACK, points=3))),
        ("9H", 0, pb.Move(card=pb.Card(suit=pb.SUIT_HEARTS, rank=pb.RANK_NINE, points=2))),
        ("TD", 30, pb.Move(card=pb.Card(suit=pb.SUIT_DIAMONDS, rank=pb.RANK_TEN, points=1))),
        ("7C", 0, pb.Move(card=pb.Card(suit=pb.SUIT_CLUBS, rank=pb.RANK_SEVEN, points=0))),
        ("pass", 30, pb.Move(call=pb.Call(kind=pb.CALL_KIND_PASS))),
        ("double", 30, pb.Move(call=pb.Call(kind=pb.CALL_KIND_DOUBLE))),
        ("redouble", 30, pb.Move(call=pb.Call(kind=pb.CALL_KIND_REDOUBLE))),
        (
            "28S",
            0,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_NUMBER_SUIT,
                    number=28,
                    contract_number=28,
                    denomination=pb.DENOMINATION_SPADES,
                )
            ),
        ),
        (
            "C31",
            29,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_SUIT_NUMBER,
                    number=31,
                    contract_number=31,
                    denomination=pb.DENOMINATION_CLUBS,
                )
            ),
        ),
        (
            "40NT",
            0,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_NO_TRUMPS,
                    number=40,
                    contract_number=40,
                    denomination=pb.DENOMINATION_NO_TRUMPS,
                )
            ),
        ),
        (
            "29NOES",
            28,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_NOES,
                    number=29,
                    contract_number=29,
                    denomination=pb.DENOMINATION_NO_TRUMPS,
                )
            ),
        ),
        (
            "+2H",
            30,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_PLUS_SUIT,
                    number=2,
                    contract_number=32,
                    denomination=pb.DENOMINATION_HEARTS,
                )
            ),
        ),
        (
            "+2NOES",
            33,
            pb.Move(
                call=pb.Call(
                    kind=pb.CALL_KIND_BID,
                    form=pb.BID_FORM_PLUS_NOES,
                    number=2,
                    contract_number=35,
                    denomination=pb.DENOMINATION_NO_TRUMPS,
                )
            ),
        ),
    ],
)
def test_a_move_as_a_structured_value(move: str, current: int, expected: pb.Move) -> None:
    engine_move: Move = parse_card(move) if move[-1] in "SHDC" and len(move) == 2 else parse_call(move)
    assert move_message(engine_move, current) == expected
    assert move_from_message(expected) is engine_move


@pytest.mark.parametrize("move", [*ALL_CARDS, *EVERY_CALL], ids=str)
def test_every_move_converts_back(move: Move) -> None:
    message = pb.Move.FromString(move_message(move, 30).SerializeToString())
    assert move_from_message(message) is move


def _bid(**fields: int) -> pb.Move:
    """The structured 28S with some fields changed."""
    message = pb.Move(call=pb.Call(kind=pb.CALL_KIND_BID, form=pb.BID_FORM_NUMBER_SUIT, number=28))
    message.call.denomination = pb.DENOMINATION_SPADES
    for name, value in fields.items():
        setattr(message.call, name, value)
    return message


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (pb.Move(), "neither a card nor a call"),
        (pb.Move(card=pb.Card(rank=pb.RANK_JACK)), "not a card"),
        (pb.Move(card=pb.Card(suit=pb.SUIT_CLUBS)), "not a card"),
        (pb.Move(card=pb.Card(suit=9, rank=pb.RANK_JACK)), "not a card"),  # type: ignore[arg-type]
        (pb.Move(call=pb.Call()), "not a call"),
        (pb.Move(call=pb.Call(kind=pb.CALL_KIND_PASS, number=28)), "not a call"),
        (pb.Move(call=pb.Call(kind=pb.CALL_KIND_DOUBLE, form=pb.BID_FORM_NOES)), "not a call"),
        (pb.Move(call=pb.Call(kind=pb.CALL_KIND_PASS, denomination=pb.DENOMINATION_SPADES)), "not a call"),
        (_bid(form=pb.BID_FORM_UNSPECIFIED), "not a call"),
        (_bid(form=17), "not a call"),
        (_bid(denomination=pb.DENOMINATION_UNSPECIFIED), "not a call"),
        (_bid(denomination=pb.DENOMINATION_NO_TRUMPS), "not a call"),
        (_bid(form=pb.BID_FORM_NO_TRUMPS), "not a call"),
        (_bid(number=27), "not a call"),
        (_bid(number=57), "not a call"),
        (_bid(form=pb.BID_FORM_PLUS_SUIT, number=0), "not a call"),
        (_bid(form=pb.BID_FORM_PLUS_NOES, number=3, denomination=pb.DENOMINATION_NO_TRUMPS), "not a call"),
        (_bid(kind=9), "not a call"),
    ],
)
def test_a_malformed_structured_move_is_refused(message: pb.Move, reason: str) -> None:
    with pytest.raises(MessageError, match=reason):
        move_from_message(message)


def _winner_of(trick: tuple[Play, ...], trump: Suit | None) -> int:
    """The seat winning a trick so far, worked out here apart from the engine: trumps beat the suit led,
    which beats the rest; then rank; of two identical cards the first played."""
    led = trick[0].card.suit
    best = max(
        enumerate(trick),
        key=lambda item: (item[1].card.suit is trump, item[1].card.suit is led, item[1].card.rank, -item[0]),
    )
    return best[1].seat


def _same_card(message: pb.Card, text: str) -> None:
    """A structured card is the card its notation beside it names, points included."""
    card = parse_card(text)
    assert pb.Suit.Name(message.suit) == f"SUIT_{card.suit.name}"
    assert pb.Rank.Name(message.rank) == f"RANK_{card.rank.name}"
    assert message.points == card.points


def _check_decision(request: bytes, legal: tuple[Move, ...], match: Match, seat: int) -> None:
    """What a bot reads from the bytes of one decision agrees with the notation and with the engine, and
    the bytes are the ones protobuf itself writes for that message (its fields in number order)."""
    message = pb.PlaySeatRequest.FromString(request)
    assert message.SerializeToString() == request
    decision = message.decision
    view, deal = decision.view, match.deal
    assert len(view.hand_cards) == len(view.hand)
    for card, text in zip(view.hand_cards, view.hand, strict=True):
        _same_card(card, text)
    for done in view.tricks:
        for play in done.plays:
            _same_card(play.played_card, play.card)
        winner = next(play for play in done.plays if play.seat == done.winner)
        _same_card(done.winning_card, winner.card)
    for play in view.trick:
        _same_card(play.played_card, play.card)
    current = deal.high_bid.number if deal.high_bid is not None else 0
    assert len(decision.moves) == len(decision.legal_moves) == len(legal)
    for text, message, move in zip(decision.legal_moves, decision.moves, legal, strict=True):
        parsed = parse_move(text, deal.phase)
        assert move_from_message(message) is parsed is move
        if isinstance(move, Card):
            assert pb.Suit.Name(message.card.suit) == f"SUIT_{move.suit.name}"
            assert pb.Rank.Name(message.card.rank) == f"RANK_{move.rank.name}"
            assert message.card.points == move.points
        elif move.is_bid:
            assert message.call.contract_number == move.contract_number(current) > current
        else:
            assert pb.CallKind.Name(message.call.kind) == f"CALL_KIND_{move.kind.name}"
    contract = deal.contract
    if contract is None:
        assert view.trump == pb.DENOMINATION_UNSPECIFIED
    else:
        trump = contract.trump.name if contract.trump is not None else "NO_TRUMPS"
        assert pb.Denomination.Name(view.trump) == f"DENOMINATION_{trump}"
    trick = tuple(deal.trick)
    if trick:
        assert pb.Suit.Name(view.led_suit) == f"SUIT_{trick[0].card.suit.name}"
        assert view.HasField("trick_winner")
        assert view.trick_winner == _winner_of(trick, contract.trump if contract else None)
        _same_card(view.trick_winning_card, next(str(p.card) for p in trick if p.seat == view.trick_winner))
    else:
        assert view.led_suit == pb.SUIT_UNSPECIFIED
        assert not view.HasField("trick_winner")
        assert not view.HasField("trick_winning_card")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from([4, 6, 8]),
    ruleset=st.sampled_from(list(Ruleset)),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    pass_probability=st.sampled_from([0.0, 0.6, 0.9]),
)
def test_structured_moves_and_trick_state_agree_with_the_engine(
    players: int, ruleset: Ruleset, seed: int, pass_probability: float
) -> None:
    match = Match(MatchRules(players, ruleset, deal_cap=3), seed=seed)
    player = RandomPlayer(random.Random(seed), pass_probability=pass_probability)
    encoder = DecisionEncoder(match)
    while not match.is_over:
        seat = match.deal.to_act
        view = match.view(seat)
        legal = view.legal_moves
        _check_decision(encoder.decision(seat + 1, legal, 1000, 0), legal, match, seat)
        match.apply(seat, player.choose(view, legal))


@pytest.mark.parametrize(("calls", "expected"), [((), 291), (("28S",), 395), (("28S", "double"), 2)])
def test_the_auction_lists_every_call_as_a_value(calls: tuple[str, ...], expected: int) -> None:
    # 291 calls open the auction (pass and every bid); after 28S an opponent may also double or add to it
    # (395, the longest list there is); after a double the contracting team may pass or redouble.
    match = Match(MatchRules(4), seed=2)
    for text in calls:
        match.apply(match.deal.to_act, parse_call(text))
    seat = match.deal.to_act
    view = match.view(seat)
    request = DecisionEncoder(match).decision(1, view.legal_moves, 1000, 0)
    _check_decision(request, view.legal_moves, match, seat)
    assert len(pb.PlaySeatRequest.FromString(request).decision.moves) == expected
