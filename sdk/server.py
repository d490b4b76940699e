"""Serve a `Bot` over gRPC: `serve(MyBot(), port=50051)`.

Each PlaySeat conversation gets its own copy of the bot (so a bot's attributes are per seat), runs on
its own server thread, and sees only its seat's messages.
"""

from __future__ import annotations

import copy
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from fiftysix.engine import MatchRules, Move, View, parse_move
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import (
    MAX_ANSWER_BYTES,
    MAX_REQUEST_BYTES,
    PROTOCOL_VERSION,
    RULESET_VALUES,
    MessageError,
    TimeControl,
    ViewDecoder,
    deal_result_from_message,
    fault_cause_from_message,
    rules_from_message,
)
from sdk.bot import Bot, BotView, Fault, MatchInfo, MatchSummary

log = structlog.get_logger("sdk")

SERVICE_NAME = "fiftysix.v1.BotService"
"""The service name under which the standard gRPC health service reports the bot."""


class _Seat:
    """The state of one seat's conversation."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.rules: MatchRules | None = None
        self.team_of: tuple[int, ...] = ()
        self.decoder: ViewDecoder | None = None
        """Decodes this seat's views one after another, reading only what is new (set per match)."""

    def handle(self, request: pb.PlaySeatRequest) -> pb.PlaySeatResponse | None:
        event = request.WhichOneof("event")
        if event == "match_start":
            start = request.match_start
            self.rules = rules_from_message(start.rules)
            self.team_of = tuple(start.team_of_seats)
            self.decoder = ViewDecoder(self.rules, self.team_of)
            info = MatchInfo(
                match_id=start.match_id,
                rules=self.rules,
                seat=start.seat,
                team_of=self.team_of,
                seat_names=tuple(start.seat_names),
                time_control=TimeControl(max(1, start.time_control.decision_ms), start.time_control.bank_ms),
            )
            self.bot.on_match_start(info)
            return pb.PlaySeatResponse(ready=pb.Ready())
        if self.rules is None or self.decoder is None:
            raise MessageError(f"{event} before match_start")
        if event == "decision":
            return self._decide(request.decision, self.decoder)
        if event == "deal_end":
            self.bot.on_deal_end(deal_result_from_message(request.deal_end, self.rules.players))
            return None
        if event == "match_end":
            end = request.match_end
            faults = tuple(
                Fault(f.seat, f.team, fault_cause_from_message(f.cause), f.detail, f.deal_number)
                for f in end.faults
            )
            self.bot.on_match_end(MatchSummary(end.reason, tuple(end.ranking), tuple(end.tables), faults))
            return None
        raise MessageError(f"unknown event {event!r}")

    def _decide(self, decision: pb.DecisionRequest, decoder: ViewDecoder) -> pb.PlaySeatResponse:
        view = decoder.view(
            decision.view,
            decision.legal_moves,
            BotView,
            decision_ms=decision.decision_ms,
            bank_ms=decision.bank_ms,
        )
        move = self.bot.decide(view)
        answer = pb.MoveAnswer(decision_id=decision.decision_id)
        index = _index_of(move, view)
        if index is None:
            log.warning("bot_chose_illegal_move", move=str(move), seat=view.seat)
            answer.notation = str(move)
        else:
            answer.move_index = index
        return pb.PlaySeatResponse(move=answer)


def _index_of(move: Move | str, view: View) -> int | None:
    if isinstance(move, str):
        try:
            move = parse_move(move, view.phase)
        except ValueError:
            return None
    try:
        return view.legal_moves.index(move)
    except ValueError:
        return None


class BotServicer(rpc.BotServiceServicer):
    """The gRPC service for one bot; `bot_factory` makes the bot of each new seat."""

    def __init__(self, bot_factory: Callable[[], Bot]) -> None:
        self._bot_factory = bot_factory
        self._prototype = bot_factory()

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:  # noqa: N802
        """The handshake."""
        bot = self._prototype
        return pb.DescribeResponse(
            name=bot.name,
            version=bot.version,
            protocol_version=PROTOCOL_VERSION,
            player_counts=list(bot.player_counts),
            rulesets=[RULESET_VALUES[ruleset] for ruleset in bot.rulesets],
            author=bot.author,
        )

    def PlaySeat(  # noqa: N802
        self, request_iterator: Iterator[pb.PlaySeatRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PlaySeatResponse]:
        """One seat's conversation."""
        seat = _Seat(self._bot_factory())
        for request in request_iterator:
            try:
                response = seat.handle(request)
            except MessageError as error:
                log.error("arena_message_rejected", error=str(error))
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
            except Exception as error:
                # The bot's own code failed: end this seat's conversation with the reason, so the arena
                # records a fault instead of waiting for an answer that will never come.
                log.exception("bot_failed", error=repr(error))
                context.abort(grpc.StatusCode.INTERNAL, f"bot raised {error!r}")
            if response is not None:
                yield response
            if request.WhichOneof("event") == "match_end":
                return


def bot_factory_for(bot: Bot | type[Bot] | Callable[[], Bot]) -> Callable[[], Bot]:
    """A factory giving each seat its own bot: a class is instantiated, an instance is deep-copied."""
    if isinstance(bot, Bot):
        return lambda: copy.deepcopy(bot)
    if callable(bot):
        return bot
    raise TypeError(f"serve() needs a Bot, a Bot subclass or a factory of Bots, got {bot!r}")


class BotServer:
    """A running bot server; `port` is the port it listens on."""

    def __init__(self, server: grpc.Server, port: int, health_servicer: health.HealthServicer) -> None:
        self.server = server
        self.port = port
        self.health = health_servicer

    def stop(self, grace: float | None = 1.0) -> None:
        """Stop serving (health turns NOT_SERVING first), letting conversations in progress end within
        `grace` seconds."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()

    def wait(self) -> None:
        """Block until the server stops."""
        self.server.wait_for_termination()


def start(
    bot: Bot | type[Bot] | Callable[[], Bot],
    port: int = 0,
    host: str = "127.0.0.1",
    max_workers: int = 64,
    port_file: str | os.PathLike[str] | None = None,
    socket: str | os.PathLike[str] | None = None,
) -> BotServer:
    """Start serving `bot` in the background and return at once (port 0 picks a free port), or on the
    Unix-domain socket at `socket` instead of a port (how a sandboxed bot, which has no network, is
    reached).

    `max_workers` bounds the seats served at once: every seat's conversation holds a thread for its match.
    `port_file`, when given, receives the port the server listens on once it serves (written to a
    temporary file and renamed, so a reader never sees half of it): how the arena learns the port of a
    bot it started with `--port 0`.
    """
    servicer = BotServicer(bot_factory_for(bot))
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
        ("grpc.max_send_message_length", MAX_ANSWER_BYTES),
    ]
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="seat"),
        options=options,
        maximum_concurrent_rpcs=max_workers,
    )
    rpc.add_BotServiceServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    where = f"unix:{os.fspath(socket)}" if socket is not None else f"{host}:{port}"
    bound = server.add_insecure_port(where)
    if bound == 0:
        raise OSError(f"cannot listen on {where}")
    server.start()
    for service in ("", SERVICE_NAME):
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    if port_file is not None:
        write_port_file(Path(port_file), bound)
    if socket is None:
        log.info("bot_serving", bot=servicer._prototype.name, host=host, port=bound)
    else:
        log.info("bot_serving", bot=servicer._prototype.name, socket=os.fspath(socket))
    return BotServer(server, bound, health_servicer)


def write_port_file(path: Path, port: int) -> None:
    """Write `port` to `path` atomically: a temporary file beside it, then a rename."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(f"{port}\n", encoding="ascii")
    partial.replace(path)


def serve(
    bot: Bot | type[Bot] | Callable[[], Bot],
    port: int = 50051,
    host: str = "127.0.0.1",
    max_workers: int = 64,
    port_file: str | os.PathLike[str] | None = None,
    socket: str | os.PathLike[str] | None = None,
) -> None:
    """Serve `bot` until the process is interrupted (Ctrl-C or SIGTERM stop it gracefully); `port_file`
    and `socket` as for `start`."""
    server = start(bot, port, host, max_workers, port_file, socket)
    stopped = threading.Event()

    def stop(signum: int, frame: object) -> None:
        stopped.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    stopped.wait()
    server.stop()
