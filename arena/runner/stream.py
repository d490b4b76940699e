"""One seat's PlaySeat stream, the arena's side: every message a bot sends on it is bounded in size (the
channel's limit, `connection.open_channel`; a larger one ends the stream) and in number
(`MAX_WAITING_MESSAGES`), bytes that do not decode are a `protocol_error`, every text a bot chooses
(status details) is escaped and cut (`safe_text`) before anyone keeps it, and a stream the bot ends in any
way (a status, a reset, a closed connection, an END_STREAM with no trailers) is known at once: never
taken for a slow bot.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from dataclasses import dataclass
from enum import Enum
from typing import Final

import grpc
import grpc.aio
import structlog

from arena.runner.connection import CONVERSATION_ERRORS, UNDECODABLE, describe_error
from arena.untrusted import safe_text
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import MAX_ANSWER_BYTES, FaultCause

log = structlog.get_logger("arena")

MAX_WAITING_MESSAGES: Final = 16
"""Messages a bot may have sent beyond those the arena is waiting for (answers to decisions it timed out
on are waited for too, up to as many again). More is a flood: a `protocol_error`, and the arena stops
reading, so a seat never holds more than 32 messages of at most 64 KiB."""
MAX_MESSAGES_AFTER_END: Final = 4
"""Messages a bot may send after MatchEnd before the arena closes its stream (they are discarded)."""
END_STATUS_TIMEOUT_S: Final = 1.0
"""How long the arena waits for a bot's status once the bot has ended its side of the stream. The gRPC
core gives it at once (with or without trailers) when the arena has ended its own side; the bound is for
the unforeseen only. No status by then: the stream ended without one, `disconnected` all the same."""

# grpc.aio.EOF is missing from grpc-stubs; it is the value a read returns once the bot ends its stream.
END_OF_STREAM: Final[object] = grpc.aio.EOF  # type: ignore[attr-defined]


class SeatFaultError(Exception):
    """A fault of one seat's bot, raised by a conversation and turned into a fault record by its user."""

    def __init__(self, seat: int, cause: FaultCause, detail: str) -> None:
        super().__init__(detail)
        self.seat = seat
        self.cause = cause
        self.detail = detail


@dataclass(frozen=True, slots=True)
class _Broken:
    """What the reader found instead of a message: the fault it stands for."""

    cause: FaultCause
    detail: str


class Ending(Enum):
    """How a bot ended its stream after MatchEnd."""

    CLOSED = "closed"
    """It ended its side with status OK, as it should."""
    SENT_MORE = "sent_more"
    """It sent messages after MatchEnd."""
    STATUS = "status"
    """It ended with a status other than OK."""
    SILENT = "silent"
    """It did not end its side within the grace period."""
    LOST = "lost"
    """The stream was gone already, or broke."""


def stream_failure(error: BaseException, what: str) -> tuple[FaultCause, str]:
    """The fault a broken stream stands for (see `status_failure`)."""
    if isinstance(error, grpc.aio.AioRpcError):
        return status_failure(error.code(), error.details(), what)
    return FaultCause.DISCONNECTED, f"{what}: {describe_error(error)}"


def status_failure(code: grpc.StatusCode, details: str | None, what: str) -> tuple[FaultCause, str]:
    """The fault a stream ended with a status other than OK stands for: RESOURCE_EXHAUSTED (a message over
    the limit, or the bot's own status) broke the protocol; anything else is a loss. Either way the stream
    is gone, so neither can be forgiven by a strike. The details are the bot's own text: escaped and
    cut."""
    status = f"{code.name}: {safe_text(details, 300)}"
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        return (
            FaultCause.PROTOCOL_ERROR,
            f"{what} (a message over the {MAX_ANSWER_BYTES // 1024} KiB limit, a status over gRPC's, "
            f"or the bot's own status): {status}",
        )
    return FaultCause.DISCONNECTED, f"{what}: {status}"


async def _next_message(
    call: grpc.aio.StreamStreamCall[pb.PlaySeatRequest | bytes, pb.PlaySeatResponse],
) -> object:
    """The bot's next message, or END_OF_STREAM as soon as the bot has ended its side of the stream.

    Not `call.read()`: at the end that waits for the call's status, and the gRPC core has none for a
    stream the bot ended with a bare END_STREAM (no trailers) until the arena ends its own side too, so
    read() would never return and the seat would time out over its whole bank. The call's own `_read`
    is what read() awaits before that wait (the one private name the arena uses; the tests of every way
    a stream ends, tests/arena/runner/test_stream_endings.py, pin it); `Conversation._final_status`
    then gets the status.
    """
    if call.done():
        return END_OF_STREAM
    return await call._read()  # type: ignore[attr-defined]


_PLAY_SEAT: Final = pb.DESCRIPTOR.services_by_name["BotService"].methods_by_name["PlaySeat"]
PLAY_SEAT_METHOD: Final = f"/{_PLAY_SEAT.containing_service.full_name}/{_PLAY_SEAT.name}"
"""The PlaySeat method's path, for a stream whose requests may come serialized already."""


def _serialized(request: pb.PlaySeatRequest | bytes) -> bytes:
    """A request as sent: decisions come serialized already (`fiftysix.wire.DecisionEncoder`)."""
    return request if isinstance(request, bytes) else request.SerializeToString()


class Conversation:
    """One seat's PlaySeat stream.

    A reader task moves the bot's answers into a queue as they come: waiting for an answer with a
    deadline then never cancels the stream's own read (cancelling it would end the whole call), so a
    bot that answered late can be substituted and play on. The hand-off costs at most one pass of the
    event loop a decision (measured: 4.3 passes a decision in all, against 4.0 for a bare ping-pong): a
    task that awaited the read itself could be woken at its deadline only by cancelling that read, and
    any future that shields the read costs the same pass. The queue is bounded: a bot that floods it
    breaks its stream. After MatchEnd the reader discards what comes, and closes a stream that keeps
    sending.
    """

    def __init__(self, seat: int, channel: grpc.aio.Channel, send_timeout: float) -> None:
        self.seat = seat
        self.call: grpc.aio.StreamStreamCall[pb.PlaySeatRequest | bytes, pb.PlaySeatResponse] = (
            channel.stream_stream(
                PLAY_SEAT_METHOD,
                request_serializer=_serialized,
                response_deserializer=pb.PlaySeatResponse.FromString,
            )(None)
        )
        self.send_timeout = send_timeout
        self.unanswered = 0
        """Decisions that timed out and were substituted: their late answers are still to come."""
        self.ended = False
        """MatchEnd was sent: what the bot sends now is discarded."""
        self.sent_after_end = 0
        self.bot_ended = False
        """The bot ended its side of the stream: nothing more is written to it, and the reader is getting
        (or has delivered) what that stands for."""
        self._answers: collections.deque[pb.PlaySeatResponse | _Broken | None] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._asking: asyncio.Task[object] | None = None
        """The task asking a decision, while it is."""
        self._expired = False
        """The decision being asked passed its deadline: its task was cancelled for it."""
        self._deadline = 0.0
        self._timer: asyncio.TimerHandle | None = None
        """One timer shared by the seat's decisions (see `ask`)."""
        self.reader = self._loop.create_task(self._read_all())

    def _deliver(self, item: pb.PlaySeatResponse | _Broken | None) -> None:
        answers = self._answers
        # Late answers still to come are allowed for, up to as many again: memory stays bounded even
        # when a host allows thousands of strikes.
        if (
            len(answers) >= MAX_WAITING_MESSAGES
            and len(answers) >= MAX_WAITING_MESSAGES + min(self.unanswered, MAX_WAITING_MESSAGES)
            and isinstance(item, pb.PlaySeatResponse)
        ):
            # A flood: whatever waits is dropped, and the fault is the next thing the runner reads.
            answers.clear()
            item = _Broken(
                FaultCause.PROTOCOL_ERROR,
                f"sent more than {MAX_WAITING_MESSAGES} messages that were not asked for",
            )
        answers.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _arrival(self) -> asyncio.Future[None]:
        """A future done when the reader delivers the next message (or finds the stream broken)."""
        waiter = self._waiter = self._loop.create_future()
        return waiter

    async def _read_all(self) -> None:
        try:
            while True:
                response = await _next_message(self.call)
                if response is END_OF_STREAM:
                    self.bot_ended = True
                    self._deliver(await self._final_status())
                    return
                if self.ended:
                    self.sent_after_end += 1
                    if self.sent_after_end > MAX_MESSAGES_AFTER_END:
                        self.call.cancel()
                        return
                    continue
                if not isinstance(response, pb.PlaySeatResponse):
                    # grpc.aio logs a message that fails to deserialize and hands back None.
                    self._deliver(_Broken(FaultCause.PROTOCOL_ERROR, f"sent a message {UNDECODABLE}"))
                    return
                self._deliver(response)
                if isinstance(self._answers[-1], _Broken):
                    return
        except asyncio.CancelledError:
            raise
        except CONVERSATION_ERRORS as error:
            self._deliver(_Broken(*stream_failure(error, "stream failed")))
        except Exception as error:  # no bot should be able to cause this: keep it, blame the stream
            log.exception("stream_reader_failed", seat=self.seat)
            self._deliver(_Broken(FaultCause.DISCONNECTED, f"stream failed: {describe_error(error)}"))

    async def _final_status(self) -> _Broken | None:
        """What the end of the bot's side of the stream stands for, by its status: None for OK (the bot
        closed its stream), else the fault. The arena ends its own side first: for a stream the bot ended
        without trailers, that is what makes the gRPC core give a status."""
        await self._end_writing()
        try:
            async with asyncio.timeout(END_STATUS_TIMEOUT_S):
                code = await self.call.code()
                details = await self.call.details()
        except TimeoutError:
            return _Broken(
                FaultCause.DISCONNECTED,
                f"stream failed: the bot ended it and no status came within {END_STATUS_TIMEOUT_S:g} s",
            )
        if code is grpc.StatusCode.OK:
            return None
        return _Broken(*status_failure(code, details, "stream failed"))

    async def _end_writing(self) -> None:
        """End the arena's side of the stream. After a bot's end without trailers the core may refuse
        this (and give the status all the same): the status, not this, says how the stream ended."""
        with contextlib.suppress(*CONVERSATION_ERRORS):
            await self.call.done_writing()

    def close(self) -> None:
        """Cancel the call and stop reading."""
        self.call.cancel()
        self.reader.cancel()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def end(self, end: pb.PlaySeatRequest, grace: float, lost: bool) -> tuple[Ending, str]:
        """Send MatchEnd and wait, up to `grace` seconds, for the bot to end its side of the stream
        (cancelling the read earlier would cancel the call before the bot has read MatchEnd). Says how
        the bot ended; a stream that did not end well is closed."""
        self.ended = True
        self._answers.clear()
        if lost or self.bot_ended:
            self.close()
            return (
                Ending.LOST,
                "ended its stream before MatchEnd"
                if self.bot_ended
                else "the stream was lost before MatchEnd",
            )
        try:
            await self.send(end)
            async with asyncio.timeout(grace):
                await self._end_writing()
                await asyncio.shield(self.reader)
                code = await self.call.code()
                details = safe_text(await self.call.details(), 300)
        except TimeoutError:
            self.close()
            if self.sent_after_end:
                return Ending.SENT_MORE, f"sent {self.sent_after_end} messages after MatchEnd"
            return Ending.SILENT, f"did not end the stream within {grace:g} s of MatchEnd"
        except (SeatFaultError, *CONVERSATION_ERRORS) as error:
            self.close()
            return Ending.LOST, f"the stream failed after MatchEnd: {error}"
        if self.sent_after_end:
            return Ending.SENT_MORE, f"sent {self.sent_after_end} messages after MatchEnd"
        if code is not grpc.StatusCode.OK:
            return Ending.STATUS, f"ended the stream after MatchEnd with {code.name}: {details}"
        return Ending.CLOSED, "ended the stream after MatchEnd"

    async def send(self, request: pb.PlaySeatRequest | bytes) -> None:
        """Send one message; a bot that does not take it within the send timeout is disconnected. Nothing
        goes to a bot that ended its side of the stream: the next answer waited for is why."""
        if self.bot_ended:
            return
        try:
            async with asyncio.timeout(self.send_timeout):
                await self.call.write(request)
        except TimeoutError:
            raise SeatFaultError(
                self.seat,
                FaultCause.DISCONNECTED,
                f"the bot stopped reading its stream for {self.send_timeout:g} s",
            ) from None
        except CONVERSATION_ERRORS as error:
            if not self.bot_ended:  # else the write met the arena's own end of its side
                raise SeatFaultError(self.seat, *stream_failure(error, "stream closed")) from None

    async def receive(self, timeout: float, waiting_for: str) -> pb.PlaySeatResponse:
        """The bot's next message, within `timeout` seconds."""
        if not self._answers:
            try:
                async with asyncio.timeout(timeout):
                    await self._arrival()
            except TimeoutError:
                if self.bot_ended:  # not slow: the reader is getting the status (in a moment)
                    await asyncio.wait({self.reader})
                if not self._answers:
                    raise SeatFaultError(
                        self.seat, FaultCause.TIMEOUT, f"no {waiting_for} within {timeout * 1000:.0f} ms"
                    ) from None
        return self._next(waiting_for)

    def _next(self, waiting_for: str) -> pb.PlaySeatResponse:
        """The message the reader delivered first, or the fault it found instead."""
        response = self._answers[0]
        if response is None:  # left in place: every later read sees the end too
            raise SeatFaultError(
                self.seat, FaultCause.DISCONNECTED, f"the bot closed the stream before its {waiting_for}"
            )
        if isinstance(response, _Broken):  # left in place too: the stream is of no more use
            raise SeatFaultError(self.seat, response.cause, response.detail)
        self._answers.popleft()
        return response

    async def ask(
        self, request: pb.PlaySeatRequest | bytes, decision_id: int, timeout: float
    ) -> pb.PlaySeatResponse:
        """Send a decision and return its answer, skipping late answers to decisions that were
        substituted. One deadline covers both: a bot that stops reading its stream times out too.

        A decision costs neither a timer nor a deadline scope of its own: the seat's one timer
        (`_on_timer`) stands for every decision asked before it fires, and only when a decision's own
        deadline has passed does it cancel the asking task, which takes the cancellation back here and
        reports a timeout (as `asyncio.timeout` does, less its cost on every decision).
        """
        task = asyncio.current_task()
        assert task is not None
        cancelling = task.cancelling()
        self._asking = task
        self._expired = False
        self._arm(self._loop.time() + timeout)
        try:
            try:
                if not self.bot_ended:  # else the answers end with why, as the reader delivers it
                    await self.call.write(request)
            except CONVERSATION_ERRORS as error:
                if not self.bot_ended:  # else the write met the arena's own end of its side
                    raise SeatFaultError(self.seat, *stream_failure(error, "stream closed")) from None
            while True:
                if not self._answers:
                    await self._arrival()
                response = self._next("move")
                if not self.unanswered:
                    return response
                if not (response.WhichOneof("answer") == "move" and response.move.decision_id < decision_id):
                    return response
                self.unanswered -= 1
        except asyncio.CancelledError:
            if self._expired and task.uncancel() <= cancelling:  # ours alone: the deadline passed
                raise SeatFaultError(
                    self.seat, FaultCause.TIMEOUT, f"no move within {timeout * 1000:.0f} ms"
                ) from None
            raise
        finally:
            self._asking = None

    def _arm(self, deadline: float) -> None:
        """Make sure the timer fires by `deadline`: kept if it fires no later, moved earlier otherwise."""
        self._deadline = deadline
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = self._loop.call_at(deadline, self._on_timer, deadline)

    def _on_timer(self, when: float) -> None:
        """The timer set for `when`: the decision being asked expires if its deadline is no later, else
        the timer is set again for that deadline."""
        self._timer = None
        task = self._asking
        # A bot that ended its stream is not slow: the reader delivers why within END_STATUS_TIMEOUT_S,
        # which wakes the task.
        if task is None or self._expired or self.bot_ended:
            return
        if self._deadline > when:
            self._timer = self._loop.call_at(self._deadline, self._on_timer, self._deadline)
            return
        self._expired = True
        task.cancel()
