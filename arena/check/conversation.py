"""One scripted conversation of the compliance check: the checker acts as the arena on one seat's
stream, through the arena's own `Conversation`, from a situation's state to the end of its deal, and
explains in one line whatever the bot got wrong."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Final

import grpc
import grpc.aio

from arena.check.agreement import Audit
from arena.check.report import plural
from arena.check.situations import (
    Script,
    checker_move,
    config_name,
)
from arena.runner.stream import Conversation, Ending, SeatFaultError
from fiftysix.engine import (
    Card,
    EndReason,
    Move,
    Phase,
    View,
)
from fiftysix.engine.errors import quoted
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import (
    AnswerError,
    DecisionEncoder,
    FaultCause,
    TimeControl,
    deal_end_message,
    match_end_message,
    match_start_message,
    moves_text,
    read_answer,
)

READY_TIMEOUT_S: Final = 5.0
"""Time for the Ready that answers MatchStart (as in the arena)."""
SEND_TIMEOUT_S: Final = 5.0
"""Time for a message to the bot to be accepted by its stream."""
END_TIMEOUT_S: Final = 2.0
"""Time for the bot to end its stream after MatchEnd."""


class CheckFailedError(Exception):
    """An item failed; the message is the one-line reason."""


class _Seat:
    """The checker's side of one PlaySeat stream: the arena's own `Conversation`, with every fault told
    as a check failure."""

    def __init__(self, conversation: Conversation, audit: Audit, encoder: DecisionEncoder) -> None:
        self.conversation = conversation
        self.audit = audit
        self.encoder = encoder

    async def send(self, request: pb.PlaySeatRequest, what: str) -> None:
        try:
            await self.conversation.send(request)
        except SeatFaultError as error:
            raise CheckFailedError(f"sending {what}: {error.detail}") from None

    async def decide(
        self, decision_id: int, view: View, legal: Sequence[Move], decision_ms: int
    ) -> tuple[Move, float]:
        """Ask one decision, in the arena's own bytes (`DecisionEncoder`); the move the bot chose and how
        long it took, in seconds."""
        request = self.encoder.decision(decision_id, legal, decision_ms, 0)
        self.audit.record(request, view, f"decision {decision_id} ({_where(view)})")
        # Wait a little past the limit, to tell "slow" from "silent".
        grace_ms = min(decision_ms, 1000)
        started = time.monotonic()
        try:
            response = await self.conversation.ask(request, decision_id, (decision_ms + grace_ms) / 1000)
        except SeatFaultError as error:
            if error.cause is FaultCause.TIMEOUT:
                raise CheckFailedError(
                    f"too slow: no answer within {decision_ms + grace_ms} ms; the limit is {decision_ms} ms"
                ) from None
            raise CheckFailedError(
                f"waiting for its answer to decision {decision_id}: {error.detail}"
            ) from None
        elapsed = time.monotonic() - started
        if elapsed * 1000 > decision_ms:
            raise CheckFailedError(
                f"too slow: answered after {elapsed * 1000:.0f} ms; the limit is {decision_ms} ms"
            )
        try:
            move = read_answer(response, decision_id, legal)
        except AnswerError as error:
            raise CheckFailedError(explain_answer(response, decision_id, legal, error)) from None
        return move, elapsed

    async def end(self, end: pb.PlaySeatRequest) -> None:
        """Send MatchEnd and expect the bot to end its side of the stream with OK, and nothing more."""
        ending, detail = await self.conversation.end(end, END_TIMEOUT_S, lost=False)
        if ending is not Ending.CLOSED:
            raise CheckFailedError(f"the bot {detail}")


def seats_text(seats: Sequence[int]) -> str:
    names = [str(seat) for seat in seats]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def explain_answer(
    response: pb.PlaySeatResponse, decision_id: int, legal: Sequence[Move], error: AnswerError
) -> str:
    """What exactly was wrong with an answer that `read_answer` refused, in one line."""
    kind = response.WhichOneof("answer")
    if kind != "move":
        what = "Ready" if kind == "ready" else "an empty PlaySeatResponse"
        return f"answered with {what} where a MoveAnswer was expected"
    answer = response.move
    if error.cause is FaultCause.WRONG_DECISION:
        return f"answered decision_id {answer.decision_id}, but the decision asked was {decision_id}"
    choice = answer.WhichOneof("choice")
    if choice == "move_index":
        return (
            f"answered move_index {answer.move_index}, out of range: there are {len(legal)} legal moves "
            f"(legal: {moves_text(legal)})"
        )
    if choice == "notation":
        if error.cause is FaultCause.MALFORMED_ANSWER:
            what = "card" if legal and isinstance(legal[0], Card) else "call"
            return (
                f"answered {quoted(answer.notation)}, which is not a {what} in the notation of "
                f"docs/rules.md#notation ({error})"
            )
        return f"answered {quoted(answer.notation)} which is not legal (legal: {moves_text(legal)})"
    return "answered a MoveAnswer that names no move (neither move_index nor notation)"


def _where(view: View) -> str:
    if view.phase is Phase.AUCTION:
        return f"deal {view.deal_number}, auction"
    return f"deal {view.deal_number}, trick {len(view.tricks) + 1}"


async def play_script(
    channel: grpc.aio.Channel, script: Script, bot_name: str, decision_ms: int, match_id: str, audit: Audit
) -> str:
    """Hold one seat's conversation through `script`; the PASS reason, or raise CheckFailedError. Every
    DecisionRequest sent is checked into `audit` first."""
    match, seat = script.match, script.seat
    rules = match.rules
    names = [bot_name if other == seat else "check-bot" for other in range(rules.players)]
    conversation = Conversation(seat, channel, SEND_TIMEOUT_S)
    stream = _Seat(conversation, audit, DecisionEncoder(match))
    try:
        time_control = TimeControl(decision_ms, 0)
        await stream.send(match_start_message(match_id, rules, seat, names, time_control), "MatchStart")
        try:
            response = await conversation.receive(READY_TIMEOUT_S, "Ready")
        except SeatFaultError as error:
            if error.cause is FaultCause.TIMEOUT:
                raise CheckFailedError(f"no Ready within {READY_TIMEOUT_S:.0f} s of MatchStart") from None
            raise CheckFailedError(f"waiting for Ready: {error.detail}") from None
        if response.WhichOneof("answer") != "ready":
            what = response.WhichOneof("answer") or "an empty message"
            raise CheckFailedError(f"answered MatchStart with {what} instead of Ready")
        for finished in script.finished:
            await stream.send(deal_end_message(finished), f"DealEnd of deal {finished.number}")
        decision_id = script.moves_made
        answers: list[tuple[Move, float]] = []
        legal_first: Sequence[Move] = ()
        while not match.is_over and (script.stop_after is None or len(answers) < script.stop_after):
            to_act = match.to_act
            assert to_act is not None
            decision_id += 1
            if to_act == seat:
                view = match.view(seat)
                legal = view.legal_moves
                try:
                    move, seconds = await stream.decide(decision_id, view, legal, decision_ms)
                except CheckFailedError as error:
                    if answers:
                        raise CheckFailedError(f"later in the deal ({_where(view)}): {error}") from None
                    raise
                if not answers:
                    legal_first = legal
                answers.append((move, seconds))
            else:
                move = checker_move(match)
            result = match.apply(to_act, move)
            if result is not None:
                await stream.send(deal_end_message(result), f"DealEnd of deal {result.number}")
        forfeited = {fault.team for fault in script.faults if not fault.substituted}
        reason = EndReason.FORFEIT if forfeited else match.end_reason
        assert reason is not None  # a script without a forfeit plays its deal, and its match, to the end
        ranking = match.ranking(last=forfeited)
        await stream.end(match_end_message(reason, ranking, match.tables, script.faults))
    finally:
        conversation.close()
        await asyncio.gather(conversation.reader, return_exceptions=True)
    slowest = max(seconds for _, seconds in answers) * 1000
    first = answers[0][0]
    return (
        f"{config_name(rules.players, rules.ruleset)}, seat {seat}: first answer {str(first)!r} "
        f"(legal: {moves_text(legal_first, 8)}); {plural(len(answers), 'answer')}, legal and in time "
        f"(slowest {slowest:.0f} ms); ended the stream after MatchEnd"
    )
