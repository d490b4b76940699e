"""Protocol conversions: the incremental decision encoder gives exactly the full message; faults read back
from JSON as they were written."""

from __future__ import annotations

import dataclasses
import random

import pytest

from fiftysix.engine import Match, MatchRules, Ruleset
from fiftysix.wire import (
    DecisionEncoder,
    FaultCause,
    FaultRecord,
    TimeControl,
    ViewDecoder,
    deal_end_message,
    deal_result_from_message,
    decision_message,
    match_start_message,
    view_from_message,
)


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_incremental_encoder_matches_full_encoding(players: int, ruleset: Ruleset) -> None:
    rng = random.Random(players)
    for seed in range(4):
        match = Match(MatchRules(players, ruleset), seed=seed)
        encoder = DecisionEncoder(match)
        decision_id = 0
        while not match.is_over:
            seat = match.deal.to_act
            view = match.view(seat)
            decision_id += 1
            bank_ms = rng.choice([0, 1, 123, 200_000])
            full = decision_message(decision_id, view, view.legal_moves, 1000, bank_ms).SerializeToString()
            assert encoder.decision(decision_id, match.legal_moves(), 1000, bank_ms) == full
            match.apply(seat, rng.choice(view.legal_moves))


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_incremental_decoder_gives_the_engine_view(players: int, ruleset: Ruleset) -> None:
    # Each seat decodes its own decisions in order (as the SDK does); one more decoder reads views of
    # seats in a random order, so what it kept never fits and it must notice.
    rng = random.Random(players)
    rules = MatchRules(players, ruleset, deal_cap=4)
    for seed in range(2):
        match = Match(rules, seed=seed)
        decoders = [ViewDecoder(rules, match.team_of) for _ in range(players)]
        shuffled = ViewDecoder(rules, match.team_of)
        while not match.is_over:
            seat = match.deal.to_act
            view = match.view(seat)
            message = decision_message(1, view, view.legal_moves, 1000, 0).decision
            assert decoders[seat].view(message.view, message.legal_moves) == view
            other = match.view(rng.randrange(players))
            decoded = shuffled.view(decision_message(1, other, (), 1000, 0).decision.view)
            assert decoded == dataclasses.replace(other, legal_moves=())
            match.apply(seat, rng.choice(view.legal_moves))


@pytest.mark.parametrize("players", [4, 8])
def test_view_round_trips_through_the_wire(players: int) -> None:
    rng = random.Random(3)
    rules = MatchRules(players)
    match = Match(rules, seed=5)
    while not match.is_over:
        seat = match.deal.to_act
        view = match.view(seat)
        request = decision_message(1, view, view.legal_moves, 1000, 0)
        decoded = view_from_message(
            request.decision.view, rules, view.team_of, list(request.decision.legal_moves)
        )
        assert decoded == view
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
