"""Every way a bot's stream can end at the transport is `disconnected` at once, never a timeout: a bare
END_STREAM with no trailers (which the grpc library never sends: the bot speaks HTTP/2 by hand), a
RST_STREAM, a GOAWAY, a closed or reset connection, trailers with an error or with no status, a
trailers-only reply. A bot that is only slow stays a `timeout`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from raw_http2_bot import MATCH_END, READY, End, Plan, RawHttp2Bot

from arena.check import Status, check_bot
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.runner.connection import open_channel
from arena.runner.stream import Conversation, Ending
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import FaultCause, TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

RAW_TEAM = 1
TIME_CONTROL = TimeControl(decision_ms=300, bank_ms=2000)
STRIKES = 3
"""Enough to forgive every timeout a seat could have before its bank runs out: a timeout would show."""


@pytest.fixture(scope="module")
def good() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def raw() -> Iterator[RawHttp2Bot]:
    bot = RawHttp2Bot(Plan(End.SILENT))
    yield bot
    bot.stop()


def play(raw: RawHttp2Bot, good: BotServer, plan: Plan, strikes: int = STRIKES) -> MatchOutcome:
    """One 4-player match, the raw bot on team 1 (seats 1 and 3)."""
    raw.plan = plan
    rules = MatchRules(4, Ruleset.PAIRS, deal_cap=1)
    bots = [BotAddress("good", f"127.0.0.1:{good.port}"), BotAddress("raw", raw.address)]
    settings = MatchSettings(
        rules, seed=3, time_control=TIME_CONTROL, connect_timeout_s=2.0, strikes=strikes, send_timeout_s=1.0
    )
    outcome = asyncio.run(run_match(settings, seats_for_teams(rules, bots)))
    assert all(rules.team_of(fault.seat) == RAW_TEAM for fault in outcome.faults), outcome.faults
    return outcome


ENDINGS = [
    *(
        Plan(end, decision)
        for end in End
        if end not in (End.SILENT, End.TRAILERS_ONLY)
        for decision in (0, 2)
    ),
    Plan(End.TRAILERS_ONLY, 0),
]


@pytest.mark.parametrize("plan", ENDINGS, ids=lambda plan: f"{plan.end.name.lower()}-at-{plan.decision}")
def test_a_stream_ended_at_the_transport_is_disconnected_at_once(
    raw: RawHttp2Bot, good: BotServer, plan: Plan
) -> None:
    outcome = play(raw, good, plan)
    assert outcome.reason == "forfeit"
    assert outcome.forfeited_teams == (RAW_TEAM,)
    # Not one timeout forgiven by a strike: the bank was not drawn on, the first fault is the end.
    assert [(fault.cause, fault.substituted) for fault in outcome.faults][:1] == [
        (FaultCause.DISCONNECTED, False)
    ], outcome.faults
    assert not any(fault.cause is FaultCause.TIMEOUT for fault in outcome.faults)
    assert outcome.waited_seconds < TIME_CONTROL.bank_ms / 1000 / 2
    assert outcome.record.extra["faults"][0]["cause"] == "disconnected"


def test_a_stream_ended_without_trailers_says_so(raw: RawHttp2Bot, good: BotServer) -> None:
    outcome = play(raw, good, Plan(End.NO_TRAILERS, 2), strikes=0)
    [fault] = outcome.faults
    assert fault.cause is FaultCause.DISCONNECTED
    assert "END_STREAM" in fault.detail
    assert (fault.move_number or 0) > 0  # it played its first decision


@pytest.mark.parametrize("decision", [0, 2])
def test_a_bot_that_is_only_slow_stays_a_timeout(raw: RawHttp2Bot, good: BotServer, decision: int) -> None:
    outcome = play(raw, good, Plan(End.SILENT, decision), strikes=0)
    assert {fault.cause for fault in outcome.faults} == {FaultCause.TIMEOUT}


def test_an_end_without_trailers_after_match_end_is_a_match_played_out(
    raw: RawHttp2Bot, good: BotServer
) -> None:
    outcome = play(raw, good, Plan(End.NO_TRAILERS, MATCH_END))
    assert outcome.faults == []
    assert outcome.reason == "deal_cap"


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (Plan(End.NO_TRAILERS, 1), "stream failed: UNKNOWN"),
        (Plan(End.NO_TRAILERS, MATCH_END), "ended the stream after MatchEnd with UNKNOWN"),
    ],
)
def test_check_bot_reports_an_end_without_trailers(raw: RawHttp2Bot, plan: Plan, expected: str) -> None:
    raw.plan = plan
    report = asyncio.run(check_bot(raw.address, decision_ms=300, only=["all-pass contract"]))
    [verdict] = [entry for entry in report.items if entry.name == "all-pass contract"]
    assert verdict.status is Status.FAIL, verdict
    assert expected in verdict.line()
    assert "too slow" not in verdict.line()


@pytest.mark.parametrize("end", [End.CLOSED, End.NO_TRAILERS])
def test_a_stream_the_bot_ended_before_match_end_is_lost_not_closed(raw: RawHttp2Bot, end: End) -> None:
    """MatchEnd is not sent to a bot that ended its stream: the bot did not end it as told."""
    raw.plan = Plan(end, READY)

    async def run() -> tuple[Ending, str]:
        channel = open_channel(raw.address)
        conversation = Conversation(0, channel, send_timeout=1.0)
        try:
            await conversation.send(pb.PlaySeatRequest(match_start=pb.MatchStart(match_id="0" * 16)))
            await asyncio.wait({conversation.reader}, timeout=5)
            return await conversation.end(pb.PlaySeatRequest(match_end=pb.MatchEnd()), 1.0, lost=False)
        finally:
            conversation.close()
            await channel.close()

    assert asyncio.run(run()) == (Ending.LOST, "ended its stream before MatchEnd")
