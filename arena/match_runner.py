"""Run one match between remote bots over gRPC: the arena's main loop.

For every seat the runner opens its own PlaySeat stream to the bot that plays it, asks the seat to act
whenever the engine says so, checks each answer, and tells every seat the end of each deal and of the
match. A bot that cannot be reached, fails the handshake, answers late, answers with an illegal or
malformed move, answers another decision, or drops its stream is recorded as a `FaultRecord` with a
typed cause, and the match is decided by the fault policy: the faulting bot's team forfeits and ranks
last (the other teams rank by their standing at that moment).

`run_match` is the containment boundary: nothing a bot sends or does can raise out of it. Every message
from a bot is bounded (size, and how many may wait unread), undecodable bytes are a `protocol_error`
fault, every text from a bot is escaped and cut (`safe_text`) before it is kept, and every stream, task
and channel is closed on the way out, even when the match is cancelled. An unforeseen error of the
arena's own ends the match with reason `arena_error`, logged with its traceback, no bot blamed.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import grpc
import grpc.aio
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.engine import DealResult, IllegalMoveError, Match, MatchRules, Move
from arena.protocol import (
    PROTOCOL_VERSION,
    RULESET_VALUES,
    AnswerError,
    DecisionEncoder,
    FaultCause,
    FaultRecord,
    TimeControl,
    deal_end_message,
    match_end_message,
    match_start_message,
    read_answer,
)
from arena.record import GameRecord, end_reason, record_match
from arena.untrusted import safe_text
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc

log = structlog.get_logger("arena")

ARENA_VERSION: Final = "0.1.0"
MAX_MESSAGE_BYTES: Final = 64 * 1024
"""Largest message the arena accepts from a bot; a real answer is a few bytes, a description a few
hundred. A larger one ends the bot's stream (gRPC refuses it) and is a `protocol_error`."""
MAX_WAITING_MESSAGES: Final = 16
"""Messages a bot may have sent beyond those the arena is waiting for (answers to decisions it timed out
on are waited for too). More is a flood: a `protocol_error`, and the arena stops reading."""
MAX_MESSAGES_AFTER_END: Final = 4
"""Messages a bot may send after MatchEnd before the arena closes its stream (they are discarded)."""
ARENA_ERROR: Final = "arena_error"
"""The end reason of a match stopped by an error of the arena's own."""


# grpc.aio.EOF is missing from grpc-stubs; it is the value read() returns once the bot ends its stream.
END_OF_STREAM: Final[object] = grpc.aio.EOF  # type: ignore[attr-defined]

# The errors a conversation with a bot can raise; anything else is a bug of ours and must surface.
CONVERSATION_ERRORS: Final = (grpc.RpcError, grpc.aio.UsageError, asyncio.InvalidStateError, OSError)


@dataclass(frozen=True, slots=True)
class BotAddress:
    """A bot to play against: its name (for standings and records) and where it listens.

    `address` is `HOST:PORT`, or several separated by commas: one per seat, so that no single bot
    process ever plays two seats of a team (partners then cannot share what their hands hold). The
    k-th seat of the bot's team uses the k-th address (cycling when there are fewer addresses).
    """

    name: str
    address: str

    @classmethod
    def parse(cls, text: str) -> BotAddress:
        """Parse `NAME=HOST:PORT[,HOST:PORT...]`, with an error that says what was expected."""
        name, equals, address = text.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"expected NAME=HOST:PORT, like alice=127.0.0.1:50051; got {text!r}")
        bot = cls(name.strip(), address.strip())
        for one in bot.addresses:
            check_address(one)
        return bot

    @property
    def addresses(self) -> tuple[str, ...]:
        """The addresses, one per seat of the team (or one for all)."""
        return split_addresses(self.address)


def split_addresses(text: str) -> tuple[str, ...]:
    """The addresses in `HOST:PORT[,HOST:PORT...]` (one per seat, or one for all), stripped."""
    return tuple(part.strip() for part in text.split(","))


def check_address(address: str) -> None:
    """Raise ValueError unless `address` is `HOST:PORT` with a port from 1 to 65535."""
    host, colon, port = address.strip().rpartition(":")
    if not colon or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT with a port from 1 to 65535, got {address!r}")


@dataclass
class MatchSettings:
    """Everything that fixes a match besides the bots."""

    rules: MatchRules
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    connect_timeout_s: float = 5.0
    """Time for each bot's handshake (all attempts) and for its Ready answer."""
    strikes: int = 0
    """The fault policy: 0 forfeits at a bot's first fault; N plays a random legal move in the bot's
    place for each of its first N timeouts, illegal, malformed or misdirected answers, and forfeits at
    the next. A bot whose stream is gone cannot be substituted: it forfeits at once."""
    send_timeout_s: float = 5.0
    """Time for a message to a bot to be accepted by its stream (a bot that stops reading blocks it)."""


@dataclass
class MatchOutcome:
    """A finished match: the ranking, why it ended, the faults, the record, and timing figures."""

    match_id: str
    rules: MatchRules
    seat_names: list[str]
    reason: str
    ranking: tuple[int, ...]
    tables: tuple[int, ...]
    faults: list[FaultRecord]
    record: GameRecord
    results: list[DealResult]
    decisions: int
    decision_seconds: list[float]
    """Wall time of each decision: view, encoding, the bot's round trip, checking and applying."""
    waited_seconds: float
    """Of that, the time spent waiting for the bots' answers (transport and the bots' own work)."""
    elapsed: float
    arena_error: str | None = None
    """What went wrong when the arena itself stopped the match (reason `arena_error`)."""

    @property
    def forfeited_teams(self) -> tuple[int, ...]:
        """Teams that forfeited by a fault (not counting strikes played on with a random move)."""
        return tuple(sorted({fault.team for fault in self.faults if not fault.substituted}))


class _SeatFaultError(Exception):
    """A fault of one seat's bot, raised inside the runner and turned into a FaultRecord."""

    def __init__(self, seat: int, cause: FaultCause, detail: str) -> None:
        super().__init__(detail)
        self.seat = seat
        self.cause = cause
        self.detail = detail


def describe_error(error: BaseException) -> str:
    """An error from a bot's conversation in one line; the status text is the bot's own, so it is
    escaped and cut."""
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {safe_text(error.details(), 300)}"
    return f"{type(error).__name__}: {safe_text(error, 300)}"


UNDECODABLE: Final = "that does not decode (bytes that are not protobuf, truncated, or text not in UTF-8)"


@dataclass(frozen=True, slots=True)
class _Broken:
    """What the reader found instead of a message: the fault it stands for."""

    cause: FaultCause
    detail: str


class _Conversation:
    """One seat's PlaySeat stream.

    A reader task moves the bot's answers into a queue as they come: waiting for an answer with a
    deadline then never cancels the stream's own read (cancelling it would end the whole call), so a
    bot that answered late can be substituted and play on. The queue is bounded: a bot that floods it
    breaks its stream. After MatchEnd the reader discards what comes, and closes a stream that keeps
    sending.
    """

    def __init__(
        self,
        seat: int,
        call: grpc.aio.StreamStreamCall[pb.PlaySeatRequest, pb.PlaySeatResponse],
        send_timeout: float,
    ) -> None:
        self.seat = seat
        self.call = call
        self.send_timeout = send_timeout
        self.unanswered = 0
        """Decisions that timed out and were substituted: their late answers are still to come."""
        self.encoder = DecisionEncoder()
        self.ended = False
        """MatchEnd was sent: what the bot sends now is discarded."""
        self._answers: collections.deque[pb.PlaySeatResponse | _Broken | None] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self.reader = asyncio.get_running_loop().create_task(self._read_all())

    def _deliver(self, item: pb.PlaySeatResponse | _Broken | None) -> None:
        if isinstance(item, pb.PlaySeatResponse) and len(self._answers) >= (
            MAX_WAITING_MESSAGES + self.unanswered
        ):
            # A flood: whatever waits is dropped, and the fault is the next thing the runner reads.
            self._answers.clear()
            item = _Broken(
                FaultCause.PROTOCOL_ERROR,
                f"sent more than {MAX_WAITING_MESSAGES} messages that were not asked for",
            )
        self._answers.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _read_all(self) -> None:
        after_end = 0
        try:
            while True:
                response = await self.call.read()
                if response is END_OF_STREAM:
                    self._deliver(None)
                    return
                if self.ended:
                    after_end += 1
                    if after_end > MAX_MESSAGES_AFTER_END:
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
            self._deliver(_Broken(*_stream_failure(error, "stream failed")))
        except Exception as error:  # an error no bot should be able to cause: keep it, blame the stream
            log.exception("stream_reader_failed", seat=self.seat)
            self._deliver(_Broken(FaultCause.DISCONNECTED, f"stream failed: {describe_error(error)}"))

    def close(self) -> None:
        """Cancel the call and stop reading."""
        self.call.cancel()
        self.reader.cancel()

    async def end(self, end: pb.PlaySeatRequest, grace: float, lost: bool) -> None:
        """Send MatchEnd and wait, up to `grace` seconds, for the bot to end its side of the stream
        (cancelling the read earlier would cancel the call before the bot has read MatchEnd)."""
        self.ended = True
        self._answers.clear()
        if lost:
            self.close()
            return
        try:
            await self.send(end)
            async with asyncio.timeout(grace):
                await self.call.done_writing()
                await asyncio.shield(self.reader)
        except (_SeatFaultError, TimeoutError, *CONVERSATION_ERRORS):
            self.close()

    async def send(self, request: pb.PlaySeatRequest) -> None:
        try:
            async with asyncio.timeout(self.send_timeout):
                await self.call.write(request)
        except TimeoutError:
            raise _SeatFaultError(
                self.seat,
                FaultCause.DISCONNECTED,
                f"the bot stopped reading its stream for {self.send_timeout} s",
            ) from None
        except CONVERSATION_ERRORS as error:
            raise _SeatFaultError(self.seat, *_stream_failure(error, "stream closed")) from None

    async def receive(self, timeout: float | None, waiting_for: str) -> pb.PlaySeatResponse:
        """The bot's next message; `timeout` None leaves the deadline to the caller."""
        if not self._answers:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                if timeout is None:
                    await self._waiter
                else:
                    async with asyncio.timeout(timeout):
                        await self._waiter
            except TimeoutError:
                raise _SeatFaultError(
                    self.seat, FaultCause.TIMEOUT, f"no {waiting_for} within {(timeout or 0) * 1000:.0f} ms"
                ) from None
            finally:
                self._waiter = None
        response = self._answers[0]
        if response is None:  # left in place: every later read sees the end too
            raise _SeatFaultError(
                self.seat, FaultCause.DISCONNECTED, f"the bot closed the stream before its {waiting_for}"
            )
        if isinstance(response, _Broken):  # left in place too: the stream is of no more use
            raise _SeatFaultError(self.seat, response.cause, response.detail)
        self._answers.popleft()
        return response

    async def ask(self, request: pb.PlaySeatRequest, decision_id: int, timeout: float) -> pb.PlaySeatResponse:
        """Send a decision and return its answer, skipping late answers to decisions that were
        substituted. One deadline covers both: a bot that stops reading its stream times out too."""
        try:
            async with asyncio.timeout(timeout):
                try:
                    await self.call.write(request)
                except CONVERSATION_ERRORS as error:
                    raise _SeatFaultError(self.seat, *_stream_failure(error, "stream closed")) from None
                while True:
                    response = await self.receive(None, "move")
                    late = response.WhichOneof("answer") == "move" and response.move.decision_id < decision_id
                    if not (late and self.unanswered):
                        return response
                    self.unanswered -= 1
        except TimeoutError:
            raise _SeatFaultError(
                self.seat, FaultCause.TIMEOUT, f"no move within {timeout * 1000:.0f} ms"
            ) from None


def _stream_failure(error: BaseException, what: str) -> tuple[FaultCause, str]:
    """The fault a broken stream stands for: a stream ended by RESOURCE_EXHAUSTED (a message over the
    limit, or the bot's own status) broke the protocol; anything else is a loss. Either way the stream is
    gone, so neither can be forgiven by a strike."""
    if isinstance(error, grpc.aio.AioRpcError) and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
        return (
            FaultCause.PROTOCOL_ERROR,
            f"{what} (a message over the {MAX_MESSAGE_BYTES // 1024} KiB limit, a status over gRPC's, "
            f"or the bot's own status): {describe_error(error)}",
        )
    return FaultCause.DISCONNECTED, f"{what}: {describe_error(error)}"


_SUBSTITUTABLE: Final = (
    FaultCause.TIMEOUT,
    FaultCause.ILLEGAL_MOVE,
    FaultCause.MALFORMED_ANSWER,
    FaultCause.WRONG_DECISION,
)
_HANDSHAKE_ATTEMPTS: Final = 4
"""Handshake tries for a bot that is briefly unreachable, with backoff 0.25, 0.5, 1 s between them."""


class _Runner:
    def __init__(
        self,
        settings: MatchSettings,
        seats: Sequence[BotAddress],
        on_deal: Callable[[DealResult], None] | None,
    ) -> None:
        rules = settings.rules
        if len(seats) != rules.players:
            raise ValueError(f"a {rules.players}-player match needs a bot for each seat, got {len(seats)}")
        self.settings = settings
        self.seats = list(seats)
        self.on_deal = on_deal
        self.match = Match(rules, seed=settings.seed)
        self.channels: dict[str, grpc.aio.Channel] = {}
        self.conversations: list[_Conversation] = []
        self.faults: list[FaultRecord] = []
        self.strikes = [0] * rules.team_count
        self.decisions = 0
        self.decision_seconds: list[float] = []
        self.waited_seconds = 0.0
        time_control = settings.time_control
        self.bank_ms = [float(time_control.bank_ms)] * rules.players

    @property
    def forfeited(self) -> set[int]:
        """Teams that forfeited: a fault that was not substituted."""
        return {fault.team for fault in self.faults if not fault.substituted}

    def fault(self, seat: int, cause: FaultCause, detail: str, substituted: bool = False) -> None:
        team = self.settings.rules.team_of(seat)
        detail = safe_text(detail)
        record = FaultRecord(seat, team, cause, detail, self.match.deal_number, substituted)
        self.faults.append(record)
        log.warning(
            "bot_faulted",
            seat=seat,
            team=team,
            bot=self.seats[seat].name,
            cause=cause.value,
            detail=detail,
            substituted=substituted,
        )

    def channel(self, address: str) -> grpc.aio.Channel:
        channel = self.channels.get(address)
        if channel is None:
            options = [
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                ("grpc.enable_retries", 0),
            ]
            channel = self.channels[address] = grpc.aio.insecure_channel(address, options=options)
        return channel

    async def handshake(self) -> None:
        """Check and describe every distinct address; a bot that fails faults every seat it plays."""
        by_address: dict[str, list[int]] = {}
        for seat, bot in enumerate(self.seats):
            by_address.setdefault(bot.address, []).append(seat)
        checks = [self._check(address) for address in by_address]
        for address, problem in zip(by_address, await asyncio.gather(*checks), strict=True):
            if problem is not None:
                cause, detail = problem
                for seat in by_address[address]:
                    self.fault(seat, cause, detail)

    async def _check(self, address: str) -> tuple[FaultCause, str] | None:
        """Health check, then Describe; a bot briefly unreachable is retried with backoff."""
        channel = self.channel(address)
        health = health_pb2_grpc.HealthStub(channel)
        stub = rpc.BotServiceStub(channel)
        deadline = time.monotonic() + self.settings.connect_timeout_s
        delay = 0.25
        for attempt in range(1, _HANDSHAKE_ATTEMPTS + 1):
            remaining = deadline - time.monotonic()
            try:
                status = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=remaining)
                if not isinstance(status, health_pb2.HealthCheckResponse):
                    return (
                        FaultCause.PROTOCOL_ERROR,
                        f"the bot at {address} sent a health reply {UNDECODABLE}",
                    )
                if status.status != health_pb2.HealthCheckResponse.SERVING:
                    return FaultCause.UNREACHABLE, f"the bot at {address} reports its health as not serving"
            except grpc.aio.AioRpcError as error:
                # A bot without the standard health service is fine; the handshake below still decides.
                if error.code() is not grpc.StatusCode.UNIMPLEMENTED:
                    if attempt < _HANDSHAKE_ATTEMPTS and deadline - time.monotonic() > delay:
                        await asyncio.sleep(delay)
                        delay *= 2
                        continue
                    return (
                        FaultCause.UNREACHABLE,
                        f"cannot reach the bot at {address}: {describe_error(error)}",
                    )
            try:
                reply: pb.DescribeResponse = await stub.Describe(
                    pb.DescribeRequest(protocol_version=PROTOCOL_VERSION, arena_version=ARENA_VERSION),
                    timeout=max(0.1, deadline - time.monotonic()),
                )
            except CONVERSATION_ERRORS as error:
                return (
                    FaultCause.UNREACHABLE,
                    f"no answer to the handshake at {address}: {describe_error(error)}",
                )
            if not isinstance(reply, pb.DescribeResponse):
                return FaultCause.PROTOCOL_ERROR, f"the bot at {address} sent a Describe reply {UNDECODABLE}"
            return self._compatibility(address, reply)
        return FaultCause.UNREACHABLE, f"cannot reach the bot at {address}"

    def _compatibility(self, address: str, reply: pb.DescribeResponse) -> tuple[FaultCause, str] | None:
        rules = self.settings.rules
        if reply.protocol_version != PROTOCOL_VERSION:
            return (
                FaultCause.INCOMPATIBLE,
                f"the bot at {address} speaks protocol version {reply.protocol_version}; "
                f"this arena speaks {PROTOCOL_VERSION}",
            )
        if rules.players not in reply.player_counts:
            counts = ", ".join(str(count) for count in reply.player_counts[:8]) or "none"
            if len(reply.player_counts) > 8:
                counts += f" ... ({len(reply.player_counts)} counts)"
            return (
                FaultCause.INCOMPATIBLE,
                f"the bot at {address} plays {counts} players, not {rules.players}",
            )
        if reply.rulesets and RULESET_VALUES[rules.ruleset] not in reply.rulesets:
            return (
                FaultCause.INCOMPATIBLE,
                f"the bot at {address} does not play the {rules.ruleset.value} ruleset",
            )
        return None

    async def open_streams(self) -> None:
        """Open every seat's stream, send MatchStart and wait for Ready."""
        settings = self.settings
        names = [bot.name for bot in self.seats]
        for seat, bot in enumerate(self.seats):
            stub = rpc.BotServiceStub(self.channel(bot.address))
            self.conversations.append(_Conversation(seat, stub.PlaySeat(None), settings.send_timeout_s))

        async def start(conversation: _Conversation) -> None:
            seat = conversation.seat
            await conversation.send(
                match_start_message(settings.match_id, settings.rules, seat, names, settings.time_control)
            )
            response = await conversation.receive(settings.connect_timeout_s, "Ready")
            if response.WhichOneof("answer") != "ready":
                raise _SeatFaultError(
                    seat, FaultCause.MALFORMED_ANSWER, "expected Ready in answer to MatchStart"
                )

        outcomes = await asyncio.gather(
            *(start(conversation) for conversation in self.conversations), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, _SeatFaultError):
                self.fault(outcome.seat, outcome.cause, outcome.detail)
            elif isinstance(outcome, BaseException):
                raise outcome

    async def play(self) -> None:
        """The main loop: one decision at a time until the match ends or a bot forfeits."""
        match = self.match
        time_control = self.settings.time_control
        while not match.is_over:
            started = time.perf_counter()
            seat = match.deal.to_act
            view = match.view(seat)
            legal = view.legal_moves
            self.decisions += 1
            decision_id = self.decisions
            bank = self.bank_ms[seat]
            conversation = self.conversations[seat]
            request = conversation.encoder.decision(
                decision_id, view, legal, time_control.decision_ms, int(bank)
            )
            asked = time.perf_counter()
            try:
                response = await conversation.ask(
                    request, decision_id, (time_control.decision_ms + bank) / 1000
                )
                move = read_answer(response, decision_id, legal)
            except AnswerError as error:
                move = self.substitute(seat, error.cause, str(error), decision_id, legal)
            except _SeatFaultError as error:
                move = self.substitute(seat, error.cause, error.detail, decision_id, legal)
                if error.cause is FaultCause.TIMEOUT:
                    conversation.unanswered += 1
            waited = time.perf_counter() - asked
            self.waited_seconds += waited
            self.bank_ms[seat] = max(0.0, bank - max(0.0, waited * 1000 - time_control.decision_ms))
            try:
                result = match.apply(seat, move)
            except IllegalMoveError as error:
                raise _SeatFaultError(seat, FaultCause.ILLEGAL_MOVE, str(error)) from None
            self.decision_seconds.append(time.perf_counter() - started)
            if result is not None:
                await self.broadcast(deal_end_message(result))
                log.debug("deal_ended", deal=result.number, contract=str(result.contract), made=result.made)
                if self.on_deal is not None:
                    self.on_deal(result)

    def substitute(
        self, seat: int, cause: FaultCause, detail: str, decision_id: int, legal: Sequence[Move]
    ) -> Move:
        """Apply the fault policy to a bad answer: a random legal move while strikes last, else forfeit."""
        team = self.settings.rules.team_of(seat)
        if cause not in _SUBSTITUTABLE or self.strikes[team] >= self.settings.strikes:
            raise _SeatFaultError(seat, cause, detail)
        self.strikes[team] += 1
        self.fault(seat, cause, detail, substituted=True)
        return random.Random(f"{self.settings.match_id}/{decision_id}").choice(legal)

    async def broadcast(self, request: pb.PlaySeatRequest) -> None:
        for conversation in self.conversations:
            await conversation.send(request)

    async def finish(self, reason: str, ranking: tuple[int, ...]) -> None:
        """Send MatchEnd to every seat still listening and let each bot end its stream (up to a grace
        period). A bot that misbehaves now has its stream closed; the match is decided already."""
        end = match_end_message(reason, ranking, self.match.tables, self.faults)
        lost = {fault.seat for fault in self.faults if not fault.substituted}
        await asyncio.gather(
            *(
                conversation.end(end, self.settings.send_timeout_s, conversation.seat in lost)
                for conversation in self.conversations
            ),
            return_exceptions=True,
        )

    async def close(self) -> None:
        """Close every stream and channel, whatever state they are in (also when cancelled)."""
        for conversation in self.conversations:
            conversation.close()
        readers = [conversation.reader for conversation in self.conversations]
        channels = list(self.channels.values())
        self.channels.clear()
        await asyncio.gather(*readers, return_exceptions=True)
        await asyncio.gather(*(channel.close(grace=None) for channel in channels), return_exceptions=True)


async def run_match(
    settings: MatchSettings,
    seats: Sequence[BotAddress],
    on_deal: Callable[[DealResult], None] | None = None,
    absent: Mapping[int, str] | None = None,
) -> MatchOutcome:
    """Play one match; `seats` gives the bot of each seat (a bot playing several seats is listed for
    each, and gets one stream per seat). Calls `on_deal` after every deal. `absent` names seats whose bot
    could not be started, with why: each is an `unreachable` fault before anything is sent to anyone.

    Nothing a bot does raises out of here: it is a fault on that bot. An error of the arena's own ends
    the match with reason `arena_error` (logged with its traceback; the record says what it was).
    """
    runner = _Runner(settings, seats, on_deal)
    match = runner.match
    names = [bot.name for bot in seats]
    started = time.perf_counter()
    arena_error: str | None = None
    with structlog.contextvars.bound_contextvars(match_id=settings.match_id):
        log.info(
            "match_started",
            players=settings.rules.players,
            ruleset=settings.rules.ruleset.value,
            seed=settings.seed,
            bots=names,
        )
        for seat, detail in (absent or {}).items():
            runner.fault(seat, FaultCause.UNREACHABLE, detail)
        try:
            try:
                if not runner.forfeited:
                    await runner.handshake()
                if not runner.forfeited:
                    await runner.open_streams()
                if not runner.forfeited:
                    await runner.play()
            except _SeatFaultError as fault:
                runner.fault(fault.seat, fault.cause, fault.detail)
            except Exception as error:
                log.exception("match_failed_by_arena_error")
                arena_error = f"{type(error).__name__}: {safe_text(error)}"
            forfeited = runner.forfeited
            if arena_error is not None:
                reason = ARENA_ERROR
            elif forfeited:
                reason = "forfeit"
            else:
                reason = end_reason(match)
            ranking = match.ranking(last=forfeited)
            await runner.finish(reason, ranking)
        finally:
            await runner.close()
        record = record_match(match, names, settings.seed)
        record.result = {"reason": reason, "tables": list(match.tables), "ranking": list(ranking)}
        record.extra = {
            "match_id": settings.match_id,
            "time_control": {
                "decision_ms": settings.time_control.decision_ms,
                "bank_ms": settings.time_control.bank_ms,
            },
            "faults": [fault.to_json() for fault in runner.faults],
            "strikes": settings.strikes,
        }
        if arena_error is not None:
            record.extra["arena_error"] = arena_error
        elapsed = time.perf_counter() - started
        log.info(
            "match_ended",
            reason=reason,
            ranking=list(ranking),
            tables=list(match.tables),
            deals=len(match.results),
            decisions=runner.decisions,
            seconds=round(elapsed, 3),
        )
    return MatchOutcome(
        match_id=settings.match_id,
        rules=settings.rules,
        seat_names=names,
        reason=reason,
        ranking=ranking,
        tables=tuple(match.tables),
        faults=runner.faults,
        record=record,
        results=list(match.results),
        decisions=runner.decisions,
        decision_seconds=runner.decision_seconds,
        waited_seconds=runner.waited_seconds,
        elapsed=elapsed,
        arena_error=arena_error,
    )


def seats_for_teams(rules: MatchRules, team_bots: Sequence[BotAddress]) -> list[BotAddress]:
    """The bot of every seat when each team is played by one bot (`team_bots[team]`); the k-th seat of
    a team gets the bot's k-th address."""
    if len(team_bots) != rules.team_count:
        raise ValueError(
            f"a {rules.players}-player {rules.ruleset.value} match has {rules.team_count} teams: "
            f"give one bot per team, got {len(team_bots)}"
        )
    seats = []
    for seat in range(rules.players):
        team = rules.team_of(seat)
        bot = team_bots[team]
        addresses = bot.addresses
        position = rules.seats_of(team).index(seat)
        seats.append(BotAddress(bot.name, addresses[position % len(addresses)]))
    return seats
