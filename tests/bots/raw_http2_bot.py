"""A bot that speaks HTTP/2 by hand (with the `h2` package), to end its PlaySeat stream in ways the grpc
library never would: an empty END_STREAM with no trailers, a bare RST_STREAM, a GOAWAY, a closed or
reset connection, trailers without a status, a trailers-only reply.

It answers the health check and Describe correctly, and plays every seat's stream correctly (Ready, then
the first legal move) until the decision its `Plan` names, where it ends the stream as the plan says.
The server runs in a thread with its own event loop, so a test's match runs in the test's own loop.
"""

from __future__ import annotations

import asyncio
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

import h2.config
import h2.connection
import h2.errors
import h2.events
from grpc_health.v1 import health_pb2

from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import PROTOCOL_VERSION

HEALTH_CHECK: Final = "/grpc.health.v1.Health/Check"
DESCRIBE: Final = "/fiftysix.v1.BotService/Describe"
PLAY_SEAT: Final = "/fiftysix.v1.BotService/PlaySeat"


class End(Enum):
    """How the bot ends a PlaySeat stream."""

    CLOSED = "trailers with status OK, as a bot should end, but early"
    NO_TRAILERS = "an empty END_STREAM with no trailers"
    RESET_STREAM = "RST_STREAM"
    RESET_STREAM_NO_ERROR = "RST_STREAM with NO_ERROR"
    GOAWAY = "GOAWAY, then the connection closed"
    GOAWAY_OPEN = "GOAWAY that disowns the stream, the connection left open"
    CONNECTION_CLOSED = "the connection closed"
    CONNECTION_RESET = "the connection reset"
    ERROR_STATUS = "trailers with a status other than OK"
    TRAILERS_WITHOUT_STATUS = "trailers with no grpc-status"
    TRAILERS_ONLY = "a trailers-only reply (a status and no messages)"
    SILENT = "nothing: the bot stops answering, its stream left open"


READY: Final = 0
DEAL_END: Final = -1
MATCH_END: Final = None


@dataclass(frozen=True)
class Plan:
    """Where the bot ends every PlaySeat stream and how: at its `decision`-th decision (READY: in place
    of Ready; DEAL_END: on its first DealEnd; MATCH_END: after MatchEnd, in place of its status OK)."""

    end: End
    decision: int | None = 1


def _message(payload: bytes) -> bytes:
    """A gRPC length-prefixed message (not compressed)."""
    return b"\x00" + struct.pack(">I", len(payload)) + payload


class _Stream:
    def __init__(self, path: str) -> None:
        self.path = path
        self.buffer = b""
        self.headers_sent = False
        self.decisions = 0
        self.done = False

    def messages(self) -> list[bytes]:
        """The complete messages received so far (removed from the buffer)."""
        found = []
        while len(self.buffer) >= 5:
            (length,) = struct.unpack(">I", self.buffer[1:5])
            if len(self.buffer) < 5 + length:
                break
            found.append(self.buffer[5 : 5 + length])
            self.buffer = self.buffer[5 + length :]
        return found


class _Connection(asyncio.Protocol):
    def __init__(self, plan: Callable[[], Plan]) -> None:
        self.plan = plan
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        self.streams: dict[int, _Stream] = {}
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.h2.initiate_connection()
        self.flush()

    def flush(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(self.h2.data_to_send())

    def data_received(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.flush()
            if self.transport is not None:
                self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                headers = dict(event.headers)  # type: ignore[arg-type]
                self.streams[event.stream_id] = _Stream(str(headers.get(":path", "")))
            elif isinstance(event, h2.events.DataReceived):
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                stream = self.streams.get(event.stream_id)
                if stream is not None and not stream.done:
                    stream.buffer += event.data
                    for message in stream.messages():
                        self.on_message(event.stream_id, stream, message)
            elif isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                stream = self.streams.get(event.stream_id)
                if stream is not None and stream.path == PLAY_SEAT and not stream.done:
                    self.finish(event.stream_id, stream)
        self.flush()

    def send(self, stream_id: int, stream: _Stream, payload: bytes) -> None:
        if not stream.headers_sent:
            self.h2.send_headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
            stream.headers_sent = True
        self.h2.send_data(stream_id, _message(payload))

    def finish(self, stream_id: int, stream: _Stream, status: int = 0) -> None:
        """End the stream as a gRPC server does: trailers with a status."""
        stream.done = True
        if not stream.headers_sent:
            self.h2.send_headers(
                stream_id,
                [(":status", "200"), ("content-type", "application/grpc"), ("grpc-status", str(status))],
                end_stream=True,
            )
        else:
            self.h2.send_headers(stream_id, [("grpc-status", str(status))], end_stream=True)

    def on_message(self, stream_id: int, stream: _Stream, message: bytes) -> None:
        if stream.path == HEALTH_CHECK:
            serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
            self.send(stream_id, stream, serving.SerializeToString())
            self.finish(stream_id, stream)
        elif stream.path == DESCRIBE:
            reply = pb.DescribeResponse(
                name="raw", protocol_version=PROTOCOL_VERSION, player_counts=[4, 6, 8]
            )
            self.send(stream_id, stream, reply.SerializeToString())
            self.finish(stream_id, stream)
        elif stream.path == PLAY_SEAT:
            self.play(stream_id, stream, pb.PlaySeatRequest.FromString(message))
        else:
            self.finish(stream_id, stream, status=12)  # UNIMPLEMENTED

    def play(self, stream_id: int, stream: _Stream, request: pb.PlaySeatRequest) -> None:
        event = request.WhichOneof("event")
        plan = self.plan()
        if event == "match_start":
            if plan.decision == READY:
                self.end(stream_id, stream, plan.end)
            else:
                self.send(stream_id, stream, pb.PlaySeatResponse(ready=pb.Ready()).SerializeToString())
        elif event == "decision":
            stream.decisions += 1
            if stream.decisions == plan.decision:
                self.end(stream_id, stream, plan.end)
                return
            answer = pb.MoveAnswer(decision_id=request.decision.decision_id, move_index=0)
            self.send(stream_id, stream, pb.PlaySeatResponse(move=answer).SerializeToString())
        elif event == "deal_end":
            if plan.decision == DEAL_END:
                self.end(stream_id, stream, plan.end)
        elif event == "match_end":
            if plan.decision is MATCH_END:
                self.end(stream_id, stream, plan.end)
            else:
                self.finish(stream_id, stream)

    def end(self, stream_id: int, stream: _Stream, end: End) -> None:
        stream.done = True
        assert self.transport is not None
        if end is End.CLOSED:
            stream.done = False
            self.finish(stream_id, stream)
        elif end is End.NO_TRAILERS:
            if not stream.headers_sent:
                self.h2.send_headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
            self.h2.end_stream(stream_id)
        elif end is End.RESET_STREAM:
            self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
        elif end is End.RESET_STREAM_NO_ERROR:
            self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.NO_ERROR)
        elif end is End.GOAWAY:
            self.h2.close_connection(h2.errors.ErrorCodes.NO_ERROR)
            self.flush()
            self.transport.close()
        elif end is End.GOAWAY_OPEN:
            self.h2.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=0)
        elif end is End.CONNECTION_CLOSED:
            self.flush()
            self.transport.close()
        elif end is End.CONNECTION_RESET:
            self.transport.abort()
        elif end is End.ERROR_STATUS:
            stream.done = False
            self.finish(stream_id, stream, status=13)  # INTERNAL
        elif end is End.TRAILERS_WITHOUT_STATUS:
            if not stream.headers_sent:
                self.h2.send_headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
            self.h2.send_headers(stream_id, [("x-ended", "by hand")], end_stream=True)
        elif end is End.TRAILERS_ONLY:
            assert not stream.headers_sent, "a trailers-only reply comes in place of Ready"
            self.finish(stream_id, stream, status=14)  # UNAVAILABLE


class RawHttp2Bot:
    """The server, listening on loopback in a thread of its own; change `plan` between matches."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.Server | None = None
        self._connections: list[_Connection] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait()
        assert self._server is not None
        self.port: int = self._server.sockets[0].getsockname()[1]

    @property
    def address(self) -> str:
        """Where it listens."""
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await self._loop.create_server(self._connect, "127.0.0.1", 0)

        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    def _connect(self) -> _Connection:
        connection = _Connection(lambda: self.plan)
        self._connections.append(connection)
        return connection

    def stop(self) -> None:
        """Stop serving and end the thread."""

        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for connection in self._connections:
                if connection.transport is not None:
                    connection.transport.abort()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
