"""Protocol conversions: the decision encoder's bytes read back as the engine's view, wherever it starts;
results and faults read back as they were written."""

from __future__ import annotations

import random

import pytest

from fiftysix.engine import Match, MatchRules, Ruleset
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import (
    DecisionEncoder,
    FaultCause,
    FaultRecord,
    TimeControl,
    ViewDecoder,
    card_from_message,
    deal_end_message,
    deal_result_from_message,
    match_start_message,
    view_from_message,
)


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_decisions_read_back_as_the_engine_view(players: int, ruleset: Ruleset) -> None:
    # What a bot reads from the encoder's bytes is the seat's view, its legal moves and its clock.
    rng = random.Random(players)
    rules = MatchRules(players, ruleset)
    for seed in range(3):
        match = Match(rules, seed=seed)
        encoder = DecisionEncoder(match)
        decision_id = 0
        while not match.is_over:
            seat = match.deal.to_act
            view = match.view(seat)
            decision_id += 1
            bank_ms = rng.choice([0, 1, 123, 200_000])
            request = pb.PlaySeatRequest.FromString(
                encoder.decision(decision_id, match.legal_moves(), 1000, bank_ms)
            )
            decision = request.decision
            assert (decision.decision_id, decision.decision_ms, decision.bank_ms) == (
                decision_id,
                1000,
                bank_ms,
            )
            assert view_from_message(decision.view, rules, view.team_of, list(decision.legal_moves)) == view
            match.apply(seat, rng.choice(view.legal_moves))


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP), (8, Ruleset.PAIRS)]
)
def test_an_encoder_asked_only_some_decisions_writes_the_same_bytes(players: int, ruleset: Ruleset) -> None:
    # The runner asks every decision; the checker only its bot's seat's, with other moves (a whole
    # auction, cards on the table, a deal) made in between; a new encoder starts anywhere in a deal.
    rng = random.Random(players)
    match = Match(MatchRules(players, ruleset, deal_cap=4), seed=players)
    every, seat_zero = DecisionEncoder(match), DecisionEncoder(match)
    decision_id = 0
    while not match.is_over:
        seat = match.deal.to_act
        legal = match.legal_moves()
        decision_id += 1
        request = every.decision(decision_id, legal, 1000, 0)
        if seat == 0:
            assert seat_zero.decision(decision_id, legal, 1000, 0) == request
        assert DecisionEncoder(match).decision(decision_id, legal, 1000, 0) == request
        match.apply(seat, rng.choice(legal))


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_incremental_decoder_gives_the_engine_view(players: int, ruleset: Ruleset) -> None:
    # Each seat decodes its own decisions in order (as the SDK does); one more decoder reads some of the
    # decisions of every seat, at random, so what it kept often does not fit and it must notice.
    rng = random.Random(players)
    rules = MatchRules(players, ruleset, deal_cap=4)
    for seed in range(2):
        match = Match(rules, seed=seed)
        encoder = DecisionEncoder(match)
        decoders = [ViewDecoder(rules, match.team_of) for _ in range(players)]
        shuffled = ViewDecoder(rules, match.team_of)
        while not match.is_over:
            seat = match.deal.to_act
            view = match.view(seat)
            message = pb.PlaySeatRequest.FromString(
                encoder.decision(1, match.legal_moves(), 1000, 0)
            ).decision
            assert decoders[seat].view(message.view, message.legal_moves) == view
            if rng.random() < 0.3:
                assert shuffled.view(message.view, message.legal_moves) == view
            match.apply(seat, rng.choice(view.legal_moves))


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (8, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP)]
)
def test_deal_results_round_trip_through_the_wire(players: int, ruleset: Ruleset) -> None:
    rng = random.Random(8)
    match = Match(MatchRules(players, ruleset), seed=8)
    while not match.is_over:
        seat = match.deal.to_act
        result = match.apply(seat, rng.choice(match.legal_moves()))
        if result is not None:
            message = deal_end_message(result).deal_end
            assert deal_result_from_message(message, players) == result
            for hand in message.hands:  # the structured cards beside the notation name the same cards
                assert [str(card_from_message(card)) for card in hand.dealt_cards] == list(hand.cards)
            for trick in message.tricks:
                assert [str(card_from_message(play.played_card)) for play in trick.plays] == [
                    play.card for play in trick.plays
                ]
                winner = next(play.card for play in trick.plays if play.seat == trick.winner)
                assert str(card_from_message(trick.winning_card)) == winner


@pytest.mark.parametrize(
    ("decision_ms", "bank_ms"), [(0, 0), (2**32, 0), (5 * 10**9, 0), (1, -1), (1, 2**32), (1, 10**30)]
)
def test_time_control_refuses_what_a_uint32_cannot_carry(decision_ms: int, bank_ms: int) -> None:
    with pytest.raises(ValueError, match="decision time must be 1 to 4,294,967,295 ms"):
        TimeControl(decision_ms, bank_ms)


def test_time_control_at_the_uint32_limits_encodes() -> None:
    largest = TimeControl(2**32 - 1, 2**32 - 1)
    start = match_start_message("m", MatchRules(), 0, ["a", "b", "c", "d"], largest).match_start
    assert (start.time_control.decision_ms, start.time_control.bank_ms) == (2**32 - 1, 2**32 - 1)


@pytest.mark.parametrize("cause", list(FaultCause))
@pytest.mark.parametrize("substituted", [False, True])
@pytest.mark.parametrize("move_number", [None, 0, 31])
def test_a_fault_reads_back_from_its_json(
    cause: FaultCause, substituted: bool, move_number: int | None
) -> None:
    fault = FaultRecord(
        seat=3, team=1, cause=cause, detail="late \u00e9", deal_number=7, substituted=substituted,
        move_number=move_number,
    )  # fmt: skip
    assert FaultRecord.from_json(fault.to_json()) == fault
    assert ("move_number" in fault.to_json()) is (move_number is not None)


def test_a_fault_written_before_strikes_was_a_forfeit() -> None:
    written = {"seat": 1, "team": 1, "cause": "timeout", "detail": "late", "deal_number": 2}
    assert FaultRecord.from_json(written) == FaultRecord(
        1, 1, FaultCause.TIMEOUT, "late", 2, substituted=False
    )


GOOD_FAULT = {"seat": 1, "team": 1, "cause": "timeout", "detail": "", "deal_number": 2, "substituted": False}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([GOOD_FAULT], "a fault is a JSON object, not list"),
        ({**GOOD_FAULT, "cause": "asleep"}, "'cause' must be one of timeout, illegal_move"),
        ({**GOOD_FAULT, "cause": ["timeout"]}, "'cause' must be one of"),
        ({**GOOD_FAULT, "cause": "TIMEOUT"}, "'cause' must be one of"),
        ({key: value for key, value in GOOD_FAULT.items() if key != "team"}, "'team' must be a whole number"),
        ({**GOOD_FAULT, "seat": -1}, "'seat' must be a whole number from 0"),
        ({**GOOD_FAULT, "deal_number": 2.0}, "'deal_number' must be a whole number"),
        ({**GOOD_FAULT, "team": True}, "'team' must be a whole number"),
        ({**GOOD_FAULT, "detail": None}, "'detail' must be a string"),
        ({**GOOD_FAULT, "substituted": 0}, "'substituted' must be true or false"),
        ({**GOOD_FAULT, "move_number": -1}, "'move_number' must be a whole number from 0"),
        ({**GOOD_FAULT, "move_number": "3"}, "'move_number' must be a whole number"),
    ],
)
def test_a_fault_of_the_wrong_shape_is_a_value_error(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultRecord.from_json(data)
