"""Game records: round trip, replay, and every kind of bad record reported with deal and move."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fiftysix.engine import Match, MatchRules, Ruleset
from fiftysix.players import RandomPlayer
from fiftysix.record import VERSION, GameRecord, RecordError, load, loads, record_match
from fiftysix.replay import RecordCursor, RecordedMove, ReplayError, replay


def play_match(rules: MatchRules, seed: int, stop_after: int | None = None) -> Match:
    """A match among random players, optionally stopped after `stop_after` moves."""
    match = Match(rules, seed=seed)
    players = [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(rules.players)]
    moves = 0
    while not match.is_over and (stop_after is None or moves < stop_after):
        seat = match.to_act
        assert seat is not None
        match.apply(seat, players[seat].choose(match.view(seat), match.legal_moves()))
        moves += 1
    return match


def recorded(rules: MatchRules, seed: int) -> dict[str, Any]:
    match = play_match(rules, seed)
    names = [f"bot-{seat}" for seat in range(rules.players)]
    return record_match(match, names, seed).to_json()


@pytest.fixture(scope="module")
def four_player_record() -> dict[str, Any]:
    return recorded(MatchRules(4, Ruleset.PAIRS), seed=11)


def replay_json(document: dict[str, Any]) -> None:
    replay(loads(json.dumps(document)))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    players=st.sampled_from([4, 6, 8]),
    ruleset=st.sampled_from(list(Ruleset)),
    deal_cap=st.none() | st.integers(min_value=1, max_value=4),
)
def test_record_round_trip_replays_to_the_same_match(
    seed: int, players: int, ruleset: Ruleset, deal_cap: int | None
) -> None:
    rules = MatchRules(players, ruleset, deal_cap)
    match = play_match(rules, seed)
    record = record_match(match, [f"p{seat}" for seat in range(players)], seed)
    text = record.dumps()
    loaded = loads(text)
    assert loaded.dumps() == text
    replayed = replay(loaded)
    assert replayed.complete
    assert replayed.match.tables == match.tables
    assert replayed.match.ranking() == match.ranking()
    assert replayed.results == match.results


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=10**6),
    players=st.sampled_from([4, 6, 8]),
    ruleset=st.sampled_from(list(Ruleset)),
    stop_after=st.none() | st.integers(min_value=0, max_value=120),
)
def test_the_cursor_gives_each_recorded_move_where_and_by_whom_it_was_made(
    seed: int, players: int, ruleset: Ruleset, stop_after: int | None
) -> None:
    """Numbered over the match from 1 as the arena numbers its decisions, and from 1 within each deal
    (calls, then cards) as replay and a fault's move_number count them; by the seat that made the move;
    a record stopped at any move included."""
    rules = MatchRules(players, ruleset, deal_cap=2)
    match = Match(rules, seed=seed)
    chooser = RandomPlayer(random.Random(seed))
    made: list[RecordedMove] = []
    in_deal = 0
    while not match.is_over and (stop_after is None or len(made) < stop_after):
        seat = match.to_act
        assert seat is not None
        move = chooser.choose(match.view(seat), match.legal_moves())
        in_deal += 1
        made.append(RecordedMove(len(made) + 1, match.deal_number, in_deal, seat, move))
        if match.apply(seat, move) is not None:
            in_deal = 0
    cursor = RecordCursor(loads(record_match(match, ["p"] * players, seed).dumps()))
    walked: list[RecordedMove] = []
    results = []
    while (step := cursor.next_move) is not None:
        assert cursor.match.to_act == step.seat
        walked.append(step)
        if (result := cursor.advance()) is not None:
            results.append(result)
    assert walked == made
    assert results == match.results
    assert cursor.match.tables == match.tables


def test_unfinished_match_records_and_replays(tmp_path: Path) -> None:
    match = play_match(MatchRules(6), seed=5, stop_after=30)
    record = record_match(match, ["a"] * 6, 5)
    record.result = {"reason": "forfeit", "tables": list(match.tables), "ranking": []}
    path = tmp_path / "stopped.json"
    record.save(path)
    replayed = replay(load(path))
    assert not replayed.complete
    assert replayed.match.deal.calls == match.deal.calls


def test_record_without_seed_replays_with_hands_as_recorded(four_player_record: dict[str, Any]) -> None:
    document = copy.deepcopy(four_player_record)
    document["seed"] = None
    replay_json(document)


def test_saved_file_is_written_whole(tmp_path: Path, four_player_record: dict[str, Any]) -> None:
    path = tmp_path / "match.json"
    GameRecord.save(loads(json.dumps(four_player_record)), path)
    assert json.loads(path.read_text())["version"] == VERSION
    assert not list(tmp_path.glob("*.partial"))


def test_extra_fields_are_kept(four_player_record: dict[str, Any]) -> None:
    document = dict(four_player_record, match_id="m-1", faults=[])
    assert loads(json.dumps(document)).to_json()["match_id"] == "m-1"


def mutate(document: dict[str, Any], change: str) -> dict[str, Any]:
    """Apply one named corruption to a copy of a valid record."""
    bad = copy.deepcopy(document)
    first = bad["deals"][0]
    if change == "illegal_card":
        # Play the first card of the leader's hand twice: the second play is not held or breaks a rule.
        first["cards"][1] = first["cards"][0] if first["cards"][1] != first["cards"][0] else "QZ"
    elif change == "illegal_call":
        first["calls"][0] = "+2S"  # a plus bid with no bid before it
    elif change == "bad_notation":
        first["cards"][3] = "11S"
    elif change == "wrong_result":
        first["result"]["points"] = list(reversed(first["result"]["points"]))
        if first["result"]["points"][0] == first["result"]["points"][1]:
            first["result"]["made"] = not first["result"]["made"]
    elif change == "wrong_tables":
        first["result"]["tables"][0] += 1
    elif change == "wrong_dealer":
        first["dealer"] = (first["dealer"] + 1) % bad["players"]
    elif change == "short_hand":
        first["hands"][0] = first["hands"][0][:-1]
    elif change == "wrong_seed":
        bad["seed"] += 1
    elif change == "extra_call":
        first["calls"].append("pass")
    elif change == "missing_card":
        first["cards"].pop()
    elif change == "wrong_ranking":
        bad["result"]["ranking"] = list(reversed(bad["result"]["ranking"]))
    elif change == "extra_deal":
        bad["deals"].append(copy.deepcopy(bad["deals"][-1]))
        bad["deals"][-1]["number"] = len(bad["deals"])
    return bad


@pytest.mark.parametrize(
    ("change", "error", "where"),
    [
        ("illegal_card", ReplayError, "deal 1, move"),
        ("illegal_call", ReplayError, "deal 1, move 1:"),
        ("bad_notation", RecordError, "deal 1, move"),
        ("wrong_result", ReplayError, "deal 1: result"),
        ("wrong_tables", ReplayError, "deal 1: result: tables"),
        ("wrong_dealer", ReplayError, "deal 1: the dealer"),
        ("short_hand", RecordError, "deal 1"),
        ("wrong_seed", ReplayError, "seed"),
        ("extra_call", ReplayError, "deal 1, move"),
        ("missing_card", ReplayError, "deal 1"),
        ("wrong_ranking", ReplayError, "match result: ranking"),
        ("extra_deal", ReplayError, "after the match had ended"),
    ],
)
def test_bad_records_are_reported_with_where(
    four_player_record: dict[str, Any], change: str, error: type[Exception], where: str
) -> None:
    with pytest.raises(error) as raised:
        replay_json(mutate(four_player_record, change))
    assert where in str(raised.value)


def test_illegal_move_names_the_rule(four_player_record: dict[str, Any]) -> None:
    with pytest.raises(ReplayError, match=r"plus_after_first_bid"):
        replay_json(mutate(four_player_record, "illegal_call"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ("[]", "JSON object"),
        ('{"format": "other"}', "format"),
        ('{"format": "fiftysix-game-record", "version": 99}', "newer"),
        ('{"format": "fiftysix-game-record", "version": "1"}', "version"),
        ('{"format": "fiftysix-game-record", "version": 1, "players": 5, "ruleset": "pairs"}', "4, 6 or 8"),
        ('{"format": "fiftysix-game-record", "version": 1, "players": 4, "ruleset": "bridge"}', "ruleset"),
    ],
)
def test_malformed_documents(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        loads(text)


def test_malformed_deal_shape(four_player_record: dict[str, Any]) -> None:
    document = copy.deepcopy(four_player_record)
    document["deals"][0]["calls"] = "pass pass"
    with pytest.raises(RecordError, match=r"deal 1: 'calls' must be a list"):
        loads(json.dumps(document))


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_a_version_1_record_still_loads_and_replays() -> None:
    """A record written by version 1 of the format, kept as it was written: later versions must read it."""
    path = Path(__file__).with_name("fixtures") / "record-v1-6p.json"
    record = load(path)
    assert json.loads(path.read_text())["version"] == 1
    replayed = replay(record)
    assert replayed.complete
    assert len(replayed.results) == 2
    assert record.version == 1
    assert record.to_json()["version"] == 1  # written back as it was read: its seed dealt by version 1


@pytest.mark.parametrize("deal", [0, 1])
def test_a_version_1_records_hands_are_checked_against_its_seeds_old_deals(deal: int) -> None:
    """Version 1's seeds dealt by Python's Mersenne Twister; replay checks a version-1 record against
    those deals (today's engine deals another pack for the same seed), and a version-2 record against
    the keyed shuffle."""
    document = json.loads((Path(__file__).with_name("fixtures") / "record-v1-6p.json").read_text())
    assert document["seed"] == 11
    swapped = copy.deepcopy(document)
    hands = swapped["deals"][deal]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    assert hands[0][0] != hands[1][0]
    with pytest.raises(RecordError, match=rf"deal {deal + 1}: the hand of seat 0 is not the one seed 11"):
        replay_json(swapped)
    with pytest.raises(RecordError, match="not the one seed 11"):
        replay_json(dict(document, version=2))  # the same hands are not what seed 11 deals now


def test_a_seed_of_128_bits_records_and_replays() -> None:
    seed = 2**128 - 1
    document = recorded(MatchRules(4, Ruleset.PAIRS, deal_cap=1), seed)
    assert (document["seed"], document["version"]) == (seed, VERSION)
    replay_json(document)
    with pytest.raises(RecordError, match=r"'seed' must be a whole number from -\(2\^63-1\) to 2\^128-1"):
        loads(json.dumps(dict(document, seed=seed + 1)))
