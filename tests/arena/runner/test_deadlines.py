"""A seat's decisions share one deadline timer (stream.py): a decision that stalls after others were
answered in time still times out at its own deadline, neither at an earlier decision's nor later."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.runner.connection import open_channel
from arena.runner.stream import Conversation, SeatFaultError
from fiftysix.engine import Match, MatchRules
from fiftysix.wire import DecisionEncoder, FaultCause, TimeControl, match_start_message
from sdk import Bot, BotView, Move, start


class StallsOnThirdBot(Bot):
    name = "stalls"

    def __init__(self) -> None:
        self.decisions = 0

    def decide(self, view: BotView) -> Move:
        self.decisions += 1
        if self.decisions == 3:
            time.sleep(1.0)
        return view.legal_moves[0]


async def ask(port: int, timeouts: list[float]) -> list[tuple[float, FaultCause | None]]:
    """Decisions 0.1 s apart, with these timeouts; how long each took and its fault, if any."""
    rules = MatchRules(4)
    match = Match(rules, seed=1)
    encoder = DecisionEncoder(match)
    outcomes: list[tuple[float, FaultCause | None]] = []
    async with open_channel(f"127.0.0.1:{port}") as channel:
        conversation = Conversation(0, channel, send_timeout=5.0)
        await conversation.send(match_start_message("deadlines", rules, 0, ["s"] * 4, TimeControl()))
        await conversation.receive(5.0, "Ready")
        for decision_id, timeout in enumerate(timeouts, start=1):
            seat = match.deal.to_act
            legal = match.legal_moves()
            request = encoder.decision(decision_id, legal, 100, 0)
            started = time.perf_counter()
            try:
                await conversation.ask(request, decision_id, timeout)
                outcomes.append((time.perf_counter() - started, None))
            except SeatFaultError as fault:
                outcomes.append((time.perf_counter() - started, fault.cause))
                conversation.unanswered += 1
            match.apply(seat, legal[0])
            await asyncio.sleep(0.1)
        conversation.close()
    return outcomes


def test_a_stalled_decision_times_out_at_its_own_deadline() -> None:
    server = start(StallsOnThirdBot)
    try:
        outcomes = asyncio.run(ask(server.port, [0.4, 0.4, 0.4, 2.0]))
    finally:
        server.stop(0)
    # The timer was set at the first decision's deadline (0.4 s after it); the third decision started
    # about 0.2 s later, so its deadline is 0.2 s past the timer's: it must wait its whole 0.4 s.
    elapsed, cause = outcomes[2]
    assert cause is FaultCause.TIMEOUT
    assert elapsed == pytest.approx(0.4, abs=0.1)
    assert [cause for _, cause in (outcomes[0], outcomes[1])] == [None, None]
    # The fourth (given time enough) is answered once the stalled answer has come and been skipped.
    assert outcomes[3][1] is None
