"""The item `structured moves agree with the notation`: the checker checks its own requests.

A bot may pick its move from `DecisionRequest.moves` instead of parsing `legal_moves`, read its cards
from the structured ones beside the notation (`hand_cards`, each play's `played_card`, each trick's
`winning_card`, `trick_winning_card`), and read `view.led_suit`, `view.trump` and `view.trick_winner`
instead of working them out. Every DecisionRequest
the checker sends in the scripted situations is read back from its bytes, as a bot reads it, and compared
with the notation and with the rules engine, so that a bot author knows the structured fields are safe to
use: `moves[i]` is the move `legal_moves[i]` names (with a card's points and a bid's contract number
right), the led suit and the trump are the engine's, and the trick winner is the engine's reading of
the trick on the table. A disagreement is a bug in the arena, never in the bot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from arena.check.report import CheckItem, Status, plural
from fiftysix.engine import Card, NotationError, Phase, View, parse_move
from fiftysix.engine.errors import quoted
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import MessageError, card_from_message, move_from_message

ITEM: Final = "structured moves agree with the notation"


def _suit_name(value: int) -> str:
    return pb.Suit.Name(value) if value in pb.Suit.values() else str(value)  # type: ignore[arg-type]


def _denomination_name(value: int) -> str:
    return pb.Denomination.Name(value) if value in pb.Denomination.values() else str(value)  # type: ignore[arg-type]


def _move_problem(index: int, text: str, message: pb.Move, phase: Phase, current: int) -> str | None:
    """What is wrong with `moves[index]` beside `legal_moves[index]`, or None."""
    try:
        named = parse_move(text, phase)
    except NotationError as error:
        return f"legal_moves[{index}] is {quoted(text)}, not in notation ({error})"
    try:
        move = move_from_message(message)
    except MessageError as error:
        return f"moves[{index}] beside {quoted(text)}: {error}"
    if move is not named:
        return f"moves[{index}] is {move} but legal_moves[{index}] is {quoted(text)}"
    if isinstance(move, Card):
        if message.card.points != move.points:
            return f"moves[{index}] ({move}) has {message.card.points} points, not {move.points}"
    elif move.is_bid and message.call.contract_number != move.contract_number(current):
        return (
            f"moves[{index}] ({move} over {current}) makes contract_number {message.call.contract_number}, "
            f"not {move.contract_number(current)}"
        )
    return None


def disagreement(request: pb.PlaySeatRequest, view: View) -> str | None:
    """What in the DecisionRequest `request`, asking the seat of `view`, disagrees with its notation or
    with the engine, in one line; None when everything agrees."""
    decision = request.decision
    message = decision.view
    texts, moves = decision.legal_moves, decision.moves
    if len(moves) != len(texts):
        return f"{len(moves)} structured moves for {len(texts)} legal moves"
    current = view.high_bid.number if view.high_bid is not None else 0
    for index, (text, move) in enumerate(zip(texts, moves, strict=True)):
        problem = _move_problem(index, text, move, view.phase, current)
        if problem is not None:
            return problem
    led = view.led_suit
    expected_led = f"SUIT_{led.name}" if led is not None else "SUIT_UNSPECIFIED"
    if _suit_name(message.led_suit) != expected_led:
        return f"led_suit is {_suit_name(message.led_suit)}, the engine says {expected_led}"
    contract = view.contract
    if contract is None:
        expected_trump = "DENOMINATION_UNSPECIFIED"
    else:
        expected_trump = f"DENOMINATION_{contract.trump.name if contract.trump is not None else 'NO_TRUMPS'}"
    if _denomination_name(message.trump) != expected_trump:
        return f"trump is {_denomination_name(message.trump)}, the engine says {expected_trump}"
    winning = view.winning_play
    sent = message.trick_winner if message.HasField("trick_winner") else None
    if sent != (winning.seat if winning is not None else None):
        expected = f"seat {winning.seat}" if winning is not None else "absent (no card on the table)"
        return f"trick_winner is {'absent' if sent is None else f'seat {sent}'}, the engine says {expected}"
    if message.HasField("trick_winning_card") != (winning is not None):
        return "trick_winning_card is present without a card on the table, or absent with one"
    if winning is not None:
        problem = _card_problem(message.trick_winning_card, str(winning.card), "trick_winning_card")
        if problem is not None:
            return problem
    return _cards_problem(message)


def _card_problem(message: pb.Card, text: str, where: str) -> str | None:
    """What is wrong with a structured card beside the notation `text` it stands for, or None."""
    try:
        card = card_from_message(message)
    except MessageError as error:
        return f"{where} beside {quoted(text)}: {error}"
    if str(card) != text:
        return f"{where} is {card} but its notation is {quoted(text)}"
    if message.points != card.points:
        return f"{where} ({card}) has {message.points} points, not {card.points}"
    return None


def _cards_problem(message: pb.View) -> str | None:
    """What disagrees between the view's structured cards and their notation (the hand, every play of the
    tricks and of the trick on the table, each trick's winning card), or None."""
    if len(message.hand_cards) != len(message.hand):
        return f"{len(message.hand_cards)} hand_cards for {len(message.hand)} cards in hand"
    pairs = [
        (card, text, f"hand_cards[{index}]")
        for index, (card, text) in enumerate(zip(message.hand_cards, message.hand, strict=True))
    ]
    for number, trick in enumerate(message.tricks):
        pairs += [
            (play.played_card, play.card, f"tricks[{number}].plays[{index}].played_card")
            for index, play in enumerate(trick.plays)
        ]
        won = [play.card for play in trick.plays if play.seat == trick.winner]
        pairs += [
            (
                trick.winning_card,
                won[0] if won else "(no play of the winner)",
                f"tricks[{number}].winning_card",
            )
        ]
    pairs += [
        (play.played_card, play.card, f"trick[{index}].played_card")
        for index, play in enumerate(message.trick)
    ]
    for card, text, where in pairs:
        problem = _card_problem(card, text, where)
        if problem is not None:
            return problem
    return None


@dataclass
class Audit:
    """The checker's own DecisionRequests, each checked as it is sent; the item sums them up."""

    decisions: int = 0
    moves: int = 0
    problem: str | None = None
    """The first disagreement found, with where it was."""

    def record(self, request: bytes, view: View, where: str) -> None:
        """Check one request the checker is about to send (asking the seat of `view`), read back from its
        bytes as a bot reads it."""
        message = pb.PlaySeatRequest.FromString(request)
        self.decisions += 1
        self.moves += len(message.decision.legal_moves)
        if self.problem is None:
            problem = disagreement(message, view)
            if problem is not None:
                self.problem = f"{where}: {problem}"

    def item(self) -> CheckItem:
        """The verdict over every request recorded."""
        if self.problem is not None:
            reason = f"{self.problem} (a bug in the arena, not in the bot: please report it)"
            return CheckItem(ITEM, Status.FAIL, reason, "arena")
        if not self.decisions:
            return CheckItem(
                ITEM, Status.SKIP, "no scripted situation sent a decision in this check", "arena"
            )
        return CheckItem(
            ITEM,
            Status.PASS,
            f"{plural(self.decisions, 'DecisionRequest')} of the scripted situations ({self.moves} legal "
            "moves): every moves[i] is legal_moves[i], every structured card is the card its notation "
            "names, and led_suit, trump and trick_winner are the engine's",
            "arena",
        )
