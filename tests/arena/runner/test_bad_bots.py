"""Every kind of bad bot: the arena keeps running, records the fault with its cause, applies the match
policy, and the other bots' matches are unaffected."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bad_bots import NeverAccepting, start_bad_bot

from arena.ladder import Ladder, LadderSettings, ladder_standings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.record import loads
from fiftysix.replay import replay
from fiftysix.wire import FaultCause, TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

FAST = TimeControl(decision_ms=200, bank_ms=200)


@pytest.fixture(scope="module")
def good() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


def settings(match_id: str, **extra: object) -> MatchSettings:
    return MatchSettings(MatchRules(4, Ruleset.PAIRS), 6, FAST, match_id, connect_timeout_s=1.5, **extra)  # type: ignore[arg-type]


async def bad_and_clean(bad_port: int, good_port: int, **extra: object) -> tuple[MatchOutcome, MatchOutcome]:
    """A match against the bad bot and, at the same time, a clean match between good bots."""
    rules = MatchRules(4, Ruleset.PAIRS)
    bad = [BotAddress("good", f"127.0.0.1:{good_port}"), BotAddress("bad", f"127.0.0.1:{bad_port}")]
    clean = [BotAddress("good-a", f"127.0.0.1:{good_port}"), BotAddress("good-b", f"127.0.0.1:{good_port}")]
    return await asyncio.gather(
        run_match(settings("bad-match", **extra), seats_for_teams(rules, bad)),
        run_match(settings("clean-match"), seats_for_teams(rules, clean)),
    )


@pytest.fixture(scope="module")
def clean_baseline(good: BotServer) -> MatchOutcome:
    rules = MatchRules(4, Ruleset.PAIRS)
    clean = [BotAddress("good-a", f"127.0.0.1:{good.port}"), BotAddress("good-b", f"127.0.0.1:{good.port}")]
    return asyncio.run(run_match(settings("clean-match"), seats_for_teams(rules, clean)))


def assert_clean_match_unaffected(clean: MatchOutcome, baseline: MatchOutcome) -> None:
    assert clean.faults == []
    assert clean.reason == "one_team_left"
    # The same match id and seed give the same moves: identical to the match played alone.
    assert clean.record.deals == baseline.record.deals
    assert clean.ranking == baseline.ranking


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        ("sleeper", FaultCause.TIMEOUT),
        ("illegal", FaultCause.ILLEGAL_MOVE),
        ("malformed", FaultCause.MALFORMED_ANSWER),
        ("closer", FaultCause.DISCONNECTED),
        ("huge", FaultCause.PROTOCOL_ERROR),
        ("wrong-turn", FaultCause.WRONG_DECISION),
    ],
)
def test_bad_bot_in_process(
    good: BotServer, clean_baseline: MatchOutcome, kind: str, cause: FaultCause
) -> None:
    bad = start_bad_bot(kind)
    try:
        outcome, clean = asyncio.run(bad_and_clean(bad.port, good.port))
    finally:
        bad.stop()
    assert outcome.reason == "forfeit"
    assert [fault.cause for fault in outcome.faults] == [cause]
    assert outcome.faults[0].team == 1
    assert outcome.faults[0].detail
    assert outcome.ranking == (1, 2)
    document = json.loads(outcome.record.dumps())
    assert document["faults"][0]["cause"] == cause.value
    replay(loads(outcome.record.dumps()))
    assert_clean_match_unaffected(clean, clean_baseline)


def test_bot_whose_process_crashes(good: BotServer, clean_baseline: MatchOutcome) -> None:
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parents[2] / "bots" / "bad_bots.py"), "crasher"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = json.loads(process.stdout.readline())["port"]
        outcome, clean = asyncio.run(bad_and_clean(port, good.port))
        assert process.wait(10) == 3
    finally:
        process.kill()
        process.wait()
    assert outcome.reason == "forfeit"
    assert {fault.cause for fault in outcome.faults} == {FaultCause.DISCONNECTED}
    assert outcome.ranking == (1, 2)
    assert_clean_match_unaffected(clean, clean_baseline)


def test_bot_that_never_accepts_the_connection(good: BotServer, clean_baseline: MatchOutcome) -> None:
    silent = NeverAccepting()
    try:
        outcome, clean = asyncio.run(bad_and_clean(silent.port, good.port))
    finally:
        silent.stop()
    assert {fault.cause for fault in outcome.faults} == {FaultCause.UNREACHABLE}
    assert [fault.seat for fault in outcome.faults] == [1, 3]
    assert outcome.decisions == 0
    assert_clean_match_unaffected(clean, clean_baseline)


@pytest.mark.parametrize(
    ("kind", "cause"), [("illegal", FaultCause.ILLEGAL_MOVE), ("sleeper", FaultCause.TIMEOUT)]
)
def test_strikes_substitute_random_moves_then_forfeit(good: BotServer, kind: str, cause: FaultCause) -> None:
    bad = start_bad_bot(kind)
    try:
        outcome, _clean = asyncio.run(bad_and_clean(bad.port, good.port, strikes=3))
    finally:
        bad.stop()
    assert [fault.substituted for fault in outcome.faults] == [True, True, True, False]
    assert {fault.cause for fault in outcome.faults} == {cause}
    assert outcome.reason == "forfeit"
    assert outcome.forfeited_teams == (1,)
    replay(loads(outcome.record.dumps()))
    # Each fault knows the moves made in its deal before it: the forfeit came after the last one stored.
    document = json.loads(outcome.record.dumps())
    made = {deal["number"]: len(deal["calls"]) + len(deal["cards"]) for deal in document["deals"]}
    forfeit = outcome.faults[-1]
    assert forfeit.move_number == made[forfeit.deal_number]
    strikes = [(fault.deal_number, fault.move_number) for fault in outcome.faults[:-1]]
    assert all(number is not None and number < made[deal] for deal, number in strikes)
    assert len(set(strikes)) == 3


def test_strikes_are_enough_for_a_bot_that_errs_rarely(good: BotServer) -> None:
    bad = start_bad_bot("illegal")
    try:
        outcome, _clean = asyncio.run(bad_and_clean(bad.port, good.port, strikes=1000))
    finally:
        bad.stop()
    assert outcome.faults
    assert all(fault.substituted for fault in outcome.faults)
    assert outcome.reason == "one_team_left"
    assert replay(loads(outcome.record.dumps())).complete


def test_ladder_puts_a_failing_bot_on_probation_and_skips_it(tmp_path: Path, good: BotServer) -> None:
    bad = start_bad_bot("illegal")
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.registry.add_bot("good-one", address=f"127.0.0.1:{good.port}")
        store.registry.add_bot("good-two", address=f"127.0.0.1:{good.port}")
        store.registry.add_bot("bad", address=f"127.0.0.1:{bad.port}")
        ladder = Ladder(
            store,
            LadderSettings(matches=16, seed=4, time_control=FAST, probation_after=2),
            LocalBots(tmp_path),
        )
        report = asyncio.run(ladder.run())
    finally:
        bad.stop()
    probation = store.registry.bot("bad").probation
    bad_matches = [match for match in store.matches.finished() if "bad" in match.bot_ranks]
    # The count, the cause and the match; never the fault's detail (it names the seat's legal cards).
    assert probation == f"forfeited its last 2 matches (last: illegal_move in match {bad_matches[-1].id})"
    assert "legal:" in bad_matches[-1].faults[-1].detail
    assert report.probations[0] == ("bad", probation)
    after = store.matches.finished()[store.matches.finished().index(bad_matches[-1]) + 1 :]
    assert after, "the ladder went on with the other bots"
    assert all("bad" not in match.bot_ranks for match in after)
    standings = {line.bot: line for line in ladder_standings(store)}
    assert standings["bad"].illegal_moves >= 2
    assert standings["bad"].probation == probation
    store.close()
