"""Replay a game record move by move against the rules, and check that its results follow.

Used by `arena replay FILE`; `RecordCursor` walks a checked record one move at a time, for `arena rerun`
("works locally, fails on the server"). Every problem is reported with the deal and move number (both
from 1).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fiftysix.engine import (
    Card,
    DealResult,
    EndReason,
    IllegalMoveError,
    Match,
    Move,
    NotationError,
    Phase,
    ShuffledDeals,
    first_dealer_for,
    pack_for,
    parse_card,
    parse_move,
)
from fiftysix.record import GameRecord, RecordError, match_result_json, result_json

FINISHED_REASONS: Final = tuple(reason.value for reason in EndReason if reason.by_the_rules)
"""Match end reasons that the rules decide; any other reason (a forfeit) is the arena's policy."""


class ReplayError(RecordError):
    """A record whose moves or results do not follow the rules."""


@dataclass
class Replayed:
    """A record that replayed cleanly: the match as replayed and each finished deal's result."""

    match: Match
    results: list[DealResult]
    complete: bool
    """Whether the match was played to its end by the rules (not stopped by a forfeit)."""


class VersionOneDeals:
    """The deals a seed gave in records of version 1, before the engine's keyed shuffle: Python's
    Mersenne Twister seeded with the text `fiftysix/{seed}/deal/{number}/{players}`. Kept only to check
    such records (one deal seen gave away that seed and every later deal: nothing deals this way now)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> dict[int, list[Card]]:
        """The hands version 1 dealt: the pack shuffled, dealt one card at a time from the dealer's right."""
        pack = list(pack_for(len(seats)))
        random.Random(f"fiftysix/{self.seed}/deal/{deal_number}/{len(seats)}").shuffle(pack)
        start = seats.index(dealer) + 1
        order = [seats[(start + i) % len(seats)] for i in range(len(seats))]
        return {seat: pack[i :: len(seats)] for i, seat in enumerate(order)}


def version_one_first_dealer(seed: int, players: int) -> int:
    """The first dealer a seed chose in records of version 1."""
    return random.Random(f"fiftysix/{seed}/first-dealer").randrange(players)


def _seeded_deals(record: GameRecord) -> VersionOneDeals | ShuffledDeals | None:
    """The deals the record's seed gives, by the deal function of the record's version."""
    if record.seed is None:
        return None
    return VersionOneDeals(record.seed) if record.version == 1 else ShuffledDeals(record.seed)


def _seeded_first_dealer(record: GameRecord) -> int | None:
    """The first dealer the record's seed chooses, by the deal function of the record's version."""
    if record.seed is None:
        return None
    if record.version == 1:
        return version_one_first_dealer(record.seed, record.rules.players)
    return first_dealer_for(record.seed, record.rules.players)


class _RecordedDeals:
    """Hands taken from the record, checked against the seed when the record has one."""

    def __init__(self, record: GameRecord) -> None:
        self._record = record
        self._seeded = _seeded_deals(record)

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> dict[int, list[Card]]:
        if deal_number > len(self._record.deals):
            # The match goes on past the record: only allowed when the record stops early, which
            # replay() checks; deal from the seed (or a placeholder shuffle) so the match can exist.
            return (self._seeded or ShuffledDeals(0)).hands(deal_number, seats, dealer)
        deal = self._record.deals[deal_number - 1]
        hands: dict[int, list[Card]] = {}
        for seat, hand in enumerate(deal.hands):
            if (hand is None) != (seat not in seats):
                state = "at the table" if seat in seats else "out of the match"
                raise RecordError(
                    f"seat {seat} is {state}, so its hand must be {_hand_rule(state)}", deal_number
                )
            if hand is not None:
                try:
                    hands[seat] = [parse_card(card) for card in hand]
                except NotationError as error:
                    raise RecordError(f"hand of seat {seat}: {error}", deal_number) from None
        if self._seeded is not None:
            expected = self._seeded.hands(deal_number, seats, dealer)
            for seat in seats:
                if sorted(expected[seat]) != sorted(hands[seat]):
                    raise RecordError(
                        f"the hand of seat {seat} is not the one seed {self._record.seed} deals", deal_number
                    )
        return hands


def _hand_rule(state: str) -> str:
    return "a list of cards" if state == "at the table" else "null"


def recorded_match(record: GameRecord) -> Match:
    """A match at its start, dealt the record's hands (checked against its seed, if it has one).

    :raises RecordError: for a first deal that cannot be read.
    """
    try:
        return Match(record.rules, record.seed or 0, _RecordedDeals(record), record.first_dealer)
    except RecordError:
        raise
    except ValueError as error:
        raise RecordError(str(error), deal=1) from None


def replay(record: GameRecord) -> Replayed:
    """Play every recorded move through the engine and compare every recorded result.

    :raises RecordError: for hands or moves that cannot be read.
    :raises ReplayError: for an illegal move, a result that does not follow from the moves, or deals
        recorded after the match ended.
    """
    if record.seed is not None and record.first_dealer != _seeded_first_dealer(record):
        raise ReplayError(f"first dealer {record.first_dealer} is not the one seed {record.seed} chooses")
    if not record.deals:
        raise RecordError("the record has no deals")
    match = recorded_match(record)
    results: list[DealResult] = []
    for deal_record in record.deals:
        number = deal_record.number
        if match.is_over:
            raise ReplayError("deal recorded after the match had ended", deal=number)
        if match.dealer != deal_record.dealer:
            raise ReplayError(
                f"the dealer is seat {match.dealer}, not seat {deal_record.dealer}", deal=number
            )
        result = _replay_deal(match, deal_record.calls, deal_record.cards, number)
        if result is None:
            if deal_record.result is not None:
                raise ReplayError("a result is recorded but the deal was not played to the end", deal=number)
            if number != len(record.deals):
                raise ReplayError("only the last deal of a record may be unfinished", deal=number)
            break
        results.append(result)
        if deal_record.result is None:
            raise ReplayError("the deal ended but no result is recorded", deal=number)
        _compare(deal_record.result, result_json(result), "result", number)
    complete = match.is_over
    final = record.result
    if complete:
        if final is None:
            raise ReplayError("the match ended but no match result is recorded")
        assert match.end_reason is not None
        _compare(final, match_result_json(match, match.end_reason), "match result", None)
    elif final is not None and final.get("reason") in FINISHED_REASONS:
        raise ReplayError(f"the match result says {final.get('reason')!r} but the match is not over")
    return Replayed(match, results, complete)


def _replay_deal(match: Match, calls: Sequence[str], cards: Sequence[str], number: int) -> DealResult | None:
    """Apply one deal's moves; returns the result if the deal ended with its last card."""
    result: DealResult | None = None
    moves: list[tuple[str, bool]] = [(text, True) for text in calls] + [(text, False) for text in cards]
    for index, (text, is_call) in enumerate(moves, start=1):
        deal = match.deal
        if result is not None:
            raise ReplayError("move recorded after the deal ended", deal=number, move=index)
        if is_call and deal.phase is not Phase.AUCTION:
            raise ReplayError(f"call {text!r} recorded after the auction ended", deal=number, move=index)
        if not is_call and deal.phase is Phase.AUCTION:
            raise ReplayError(f"card {text!r} recorded before the auction ended", deal=number, move=index)
        seat = deal.to_act
        try:
            result = match.apply(seat, parse_move(text, deal.phase))
        except IllegalMoveError as error:
            raise ReplayError(f"seat {seat} {text}: illegal ({error.rule}): {error}", number, index) from None
        except RecordError:
            raise
        except NotationError as error:
            raise RecordError(f"seat {seat}: {error}", number, index) from None
        except ValueError as error:
            # The move ended the deal and the next deal's recorded hands are bad.
            raise RecordError(str(error), number + 1) from None
    return result


def _compare(recorded: dict[str, Any], computed: dict[str, Any], what: str, deal: int | None) -> None:
    for key, value in computed.items():
        if recorded.get(key) != value:
            raise ReplayError(
                f"{what}: {key} is recorded as {recorded.get(key)!r} but the moves give {value!r}", deal
            )


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One recorded move where it stands: `number` counts every call and card of the match from 1 (the
    id of the decision the arena asked it with); `deal` and `move` are where replay reports it (`move`
    counts the deal's calls and cards from 1: a fault's `move_number` is `move - 1`)."""

    number: int
    deal: int
    move: int
    seat: int
    played: Move


class RecordCursor:
    """A record played forward one move at a time: `match` stands before `next_move`; `advance` plays it.

    For a record that `replay` accepted: an illegal move or a bad hand raises as it does there.
    """

    def __init__(self, record: GameRecord) -> None:
        self.record = record
        self.match = recorded_match(record)
        self._moves = self._walk()
        self.next_move: RecordedMove | None = next(self._moves, None)
        """The record's next move, None once every move has been played."""

    def _walk(self) -> Iterator[RecordedMove]:
        number = 0
        for deal in self.record.deals:
            texts = [(text, Phase.AUCTION) for text in deal.calls]
            texts += [(text, Phase.PLAY) for text in deal.cards]
            for index, (text, phase) in enumerate(texts, start=1):
                number += 1
                seat = self.match.deal.to_act
                try:
                    played = parse_move(text, phase)
                except NotationError as error:
                    raise RecordError(f"seat {seat}: {error}", deal.number, index) from None
                yield RecordedMove(number, deal.number, index, seat, played)

    def advance(self) -> DealResult | None:
        """Play the next recorded move; the deal's result when it ended the deal.

        :raises ReplayError: when the move is illegal (a record that `replay` refuses).
        """
        step = self.next_move
        if step is None:
            raise ValueError("every recorded move has been played")
        try:
            result = self.match.apply(step.seat, step.played)
        except IllegalMoveError as error:
            raise ReplayError(
                f"seat {step.seat} {step.played}: illegal: {error}", step.deal, step.move
            ) from None
        self.next_move = next(self._moves, None)
        return result
