"""Run one match between remote bots over gRPC: the arena's main loop.

For every seat the runner opens its own PlaySeat stream to the bot that plays it, asks the seat to act
whenever the engine says so, checks each answer, and tells every seat the end of each deal and of the
match. A bot that cannot be reached, fails the handshake, answers late, answers with an illegal or
malformed move, answers another decision, breaks the protocol or drops its stream is recorded as a
`FaultRecord` with a typed cause, and the fault policy (`policy.py`) decides what it costs: by default the
faulting bot's team forfeits and ranks last (the other teams rank by their standing at that moment).

`run_match` is the containment boundary: nothing a bot sends or does can raise out of it (the limits
themselves are in `connection.py` and `stream.py`), every text from a bot is escaped and cut before it is
kept, and every stream, task and channel is closed on the way out, even when the match is cancelled. An
unforeseen error of the arena's own ends the match with reason `arena_error`, logged with its traceback,
no bot blamed. What fixes a match and what it gives back (`MatchSettings`, `MatchOutcome`) are in
`settings.py`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc.aio
import structlog

from arena.runner import public_events
from arena.runner.connection import HandshakeError, handshake, incompatibility, open_channel
from arena.runner.policy import FaultPolicy
from arena.runner.seating import BotAddress
from arena.runner.settings import MatchOutcome, MatchSettings
from arena.runner.stream import Conversation, SeatFaultError
from arena.untrusted import safe_text
from fiftysix.engine import DealResult, EndReason, IllegalMoveError, Match, Move
from fiftysix.record import match_result_json, record_match
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import (
    AnswerError,
    DecisionEncoder,
    FaultCause,
    FaultRecord,
    deal_end_message,
    match_end_message,
    match_start_message,
    read_answer,
)

log = structlog.get_logger("arena")


def position(match: Match) -> tuple[int, int]:
    """Where a fault happens now, as its record keeps it: the deal's number and the calls and cards of it
    made so far (a fault is at the decision for the next one)."""
    deal = match.deal
    played = sum(len(trick.plays) for trick in deal.tricks) + len(deal.trick)
    return match.deal_number, len(deal.calls) + played


async def open_seat(conversation: Conversation, settings: MatchSettings, names: Sequence[str]) -> None:
    """Send the seat's MatchStart and wait for its Ready.

    :raises SeatFaultError: for no Ready in time, another answer, or a stream that failed.
    """
    seat = conversation.seat
    await conversation.send(
        match_start_message(settings.match_id, settings.rules, seat, names, settings.time_control)
    )
    response = await conversation.receive(settings.connect_timeout_s, "Ready")
    if response.WhichOneof("answer") != "ready":
        raise SeatFaultError(seat, FaultCause.MALFORMED_ANSWER, "expected Ready in answer to MatchStart")


async def ask_decision(
    conversation: Conversation, request: bytes, decision_id: int, legal: Sequence[Move], timeout_s: float
) -> tuple[Move | None, FaultCause | None, str, float]:
    """Ask one decision on a seat's stream and read its answer: the move, or the fault's cause and detail
    (a timeout counted as a request left unanswered on the stream), and the seconds the seat took."""
    asked = time.perf_counter()
    try:
        response = await conversation.ask(request, decision_id, timeout_s)
        return read_answer(response, decision_id, legal), None, "", time.perf_counter() - asked
    except AnswerError as error:
        return None, error.cause, str(error), time.perf_counter() - asked
    except SeatFaultError as error:
        if error.cause is FaultCause.TIMEOUT:
            conversation.unanswered += 1
        return None, error.cause, error.detail, time.perf_counter() - asked


class _Runner:
    def __init__(
        self,
        settings: MatchSettings,
        seats: Sequence[BotAddress],
        on_deal: Callable[[DealResult], None] | None,
        described: Mapping[str, pb.DescribeResponse],
        shared_channels: Mapping[str, grpc.aio.Channel],
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        rules = settings.rules
        if len(seats) != rules.players:
            raise ValueError(f"a {rules.players}-player match needs a bot for each seat, got {len(seats)}")
        self.settings = settings
        self.seats = list(seats)
        self.on_deal = on_deal
        self.on_event = on_event
        self.described = described
        self.match = Match(rules, seed=settings.seed)
        self.shared_channels = shared_channels
        self.channels: dict[str, grpc.aio.Channel] = {}
        """The channels this match opened (and closes)."""
        self.conversations: list[Conversation] = []
        self.encoder = DecisionEncoder(self.match)
        self.faults: list[FaultRecord] = []
        self.policy = FaultPolicy(settings.strikes, rules.team_count, settings.match_id)
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
        deal_number, moves = position(self.match)
        record = FaultRecord(seat, team, cause, detail, deal_number, substituted, moves)
        self.faults.append(record)
        if self.on_event is not None:
            self.on_event(public_events.fault(record))
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
        channel = self.shared_channels.get(address) or self.channels.get(address)
        if channel is None:
            channel = self.channels[address] = open_channel(address)
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
        """The handshake with one address (unless it answered one already), then whether the bot plays
        this match."""
        reply = self.described.get(address)
        if reply is None:
            try:
                reply = await handshake(self.channel(address), address, self.settings.connect_timeout_s)
            except HandshakeError as error:
                return error.cause, error.detail
        return incompatibility(reply, address, self.settings.rules)

    async def open_streams(self) -> None:
        """Open every seat's stream, send MatchStart and wait for Ready."""
        settings = self.settings
        names = [bot.name for bot in self.seats]
        for seat, bot in enumerate(self.seats):
            self.conversations.append(Conversation(seat, self.channel(bot.address), settings.send_timeout_s))

        outcomes = await asyncio.gather(
            *(open_seat(conversation, settings, names) for conversation in self.conversations),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, SeatFaultError):
                self.fault(outcome.seat, outcome.cause, outcome.detail)
            elif isinstance(outcome, BaseException):
                raise outcome

    async def play(self) -> None:
        """The main loop: one decision at a time until the match ends or a bot forfeits."""
        match = self.match
        time_control = self.settings.time_control
        on_event = self.on_event
        if on_event is not None:
            on_event(public_events.deal_start(match.deal_number, match.dealer, match.seats))
        while not match.is_over:
            started = time.perf_counter()
            deal = match.deal
            seat = deal.to_act
            legal = deal.legal_moves()
            self.decisions += 1
            decision_id = self.decisions
            bank = self.bank_ms[seat]
            conversation = self.conversations[seat]
            request = self.encoder.decision(decision_id, legal, time_control.decision_ms, int(bank))
            timeout_s = (time_control.decision_ms + bank) / 1000
            move, cause, detail, waited = await ask_decision(
                conversation, request, decision_id, legal, timeout_s
            )
            if cause is not None:
                move = self.substitute(seat, cause, detail, decision_id, legal)
            assert move is not None
            self.waited_seconds += waited
            self.bank_ms[seat] = time_control.bank_left(bank, waited)
            deal_number = match.deal_number
            try:
                result = match.apply(seat, move)
            except IllegalMoveError as error:
                raise SeatFaultError(seat, FaultCause.ILLEGAL_MOVE, str(error)) from None
            if on_event is not None:
                on_event(public_events.move_made(deal_number, seat, move))
                if result is not None:
                    on_event(public_events.deal_end(result))
                    if not match.is_over:
                        on_event(public_events.deal_start(match.deal_number, match.dealer, match.seats))
            self.decision_seconds.append(time.perf_counter() - started)
            if result is not None:
                await self.broadcast(deal_end_message(result))
                log.debug("deal_ended", deal=result.number, contract=str(result.contract), made=result.made)
                if self.on_deal is not None:
                    self.on_deal(result)

    def substitute(
        self, seat: int, cause: FaultCause, detail: str, decision_id: int, legal: Sequence[Move]
    ) -> Move:
        """Apply the fault policy to a bad answer: a substitute move, or a forfeit (raised)."""
        if not self.policy.forgives(self.settings.rules.team_of(seat), cause):
            raise SeatFaultError(seat, cause, detail)
        self.fault(seat, cause, detail, substituted=True)
        return self.policy.substitute(decision_id, legal)

    async def broadcast(self, request: pb.PlaySeatRequest) -> None:
        for conversation in self.conversations:
            await conversation.send(request)

    async def finish(self, reason: EndReason, ranking: tuple[int, ...]) -> None:
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
        """Close every stream and the channels this match opened, whatever state they are in (also when
        cancelled)."""
        for conversation in self.conversations:
            conversation.close()
        readers = [conversation.reader for conversation in self.conversations]
        channels = list(self.channels.values())
        self.channels.clear()
        await asyncio.gather(*readers, return_exceptions=True)
        await asyncio.gather(*(channel.close(grace=None) for channel in channels), return_exceptions=True)


def _contained(on_event: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """`on_event`, switched off (and logged) at its first error, instead of ending the match."""
    failed = False

    def contained(event: dict[str, Any]) -> None:
        nonlocal failed
        if failed:
            return
        try:
            on_event(event)
        except Exception:
            failed = True
            log.exception("match_event_hook_failed", event_type=event.get("type"))

    return contained


async def run_match(
    settings: MatchSettings,
    seats: Sequence[BotAddress],
    on_deal: Callable[[DealResult], None] | None = None,
    absent: Mapping[int, str] | None = None,
    described: Mapping[str, pb.DescribeResponse] | None = None,
    channels: Mapping[str, grpc.aio.Channel] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> MatchOutcome:
    """Play one match; `seats` gives the bot of each seat (a bot playing several seats is listed for
    each, and gets one stream per seat). Calls `on_deal` after every deal. `absent` names seats whose bot
    could not be started, with why: each is an `unreachable` fault before anything is sent to anyone.
    `described` holds the Describe answers of addresses that passed the handshake already (processes
    the arena started and checked): they are only checked for compatibility, with no call. `channels`
    holds channels open already to some addresses (kept by the caller across matches, and not closed
    here); the match opens (and closes) its own to the others. `on_event` receives the match's public
    events as they happen (public_events.py: seats, calls, cards, each deal's hands once it has ended,
    faults by cause, the end), never a hand in play nor the seed. Watching must not change what is
    watched: an error in `on_event` is logged with its traceback and switches it off for the rest of the
    match, which goes on.

    Nothing a bot does raises out of here: it is a fault on that bot. An error of the arena's own ends
    the match with reason `arena_error` (logged with its traceback; the record says what it was).
    """
    if on_event is not None:
        on_event = _contained(on_event)
    runner = _Runner(settings, seats, on_deal, described or {}, channels or {}, on_event)
    match = runner.match
    names = [bot.name for bot in seats]
    started = time.perf_counter()
    arena_error: str | None = None
    with structlog.contextvars.bound_contextvars(match_id=settings.match_id):
        log.info(
            "match_started", players=settings.rules.players, ruleset=settings.rules.ruleset.value, bots=names
        )
        # The seed fixes every hand of the match (and of its set's other rotations): debug level only,
        # like the hands.
        log.debug("match_seeded", seed=settings.seed)
        if on_event is not None:
            on_event(public_events.match_start(settings.match_id, settings.rules, names))
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
            except SeatFaultError as fault:
                runner.fault(fault.seat, fault.cause, fault.detail)
            except Exception as error:
                log.exception("match_failed_by_arena_error")
                arena_error = f"{type(error).__name__}: {safe_text(error)}"
            forfeited = runner.forfeited
            if arena_error is not None:
                reason = EndReason.ARENA_ERROR
            elif forfeited:
                reason = EndReason.FORFEIT
            else:
                assert match.end_reason is not None  # play() returns only at the end
                reason = match.end_reason
            ranking = match.ranking(last=forfeited)
            if on_event is not None:
                on_event(public_events.match_end(reason.value, ranking, match.tables))
            await runner.finish(reason, ranking)
        finally:
            await runner.close()
        record = record_match(match, names, settings.seed)
        record.result = match_result_json(match, reason, ranking)
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
