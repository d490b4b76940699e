"""A hostile bot: it sends exactly the bytes a test scripts, at every point of the protocol.

Its responses bypass protobuf serialization (the server's serializer is the identity), so a script can
answer with bytes that are not protobuf, truncated messages, text that is not UTF-8, deeply nested
groups, oversized messages or valid messages of the wrong kind; or end a call with any status. What is
not scripted is answered correctly, so each script breaks the protocol exactly where it says.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
from grpc_health.v1 import health_pb2

from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import PROTOCOL_VERSION


@dataclass(frozen=True)
class Abort:
    """End the call with this status (the details are the bot's own text)."""

    code: grpc.StatusCode
    details: str


@dataclass(frozen=True)
class Answer:
    """A well-formed MoveAnswer to the decision asked (its id moved by `offset`), naming what it names."""

    offset: int = 0
    move_index: int | None = None
    notation: str | None = None

    def render(self, decision_id: int) -> bytes:
        choice: dict[str, Any] = {}
        if self.move_index is not None:
            choice["move_index"] = self.move_index
        if self.notation is not None:
            choice["notation"] = self.notation
        return move(max(0, decision_id + self.offset), **choice)


class _Valid:
    """The correct message at this point (Ready, or the first legal move of the decision asked)."""


VALID: Final = _Valid()
Action = bytes | Abort | Answer | _Valid


@dataclass
class Script:
    """What the bot sends; None or a missing entry means the correct message."""

    health: Action | None = None
    describe: Action | None = None
    ready: Sequence[Action] | None = None
    decisions: Mapping[int, Sequence[Action]] = field(default_factory=dict)
    """For the k-th decision of a stream (from 1): the messages sent in its place, in order."""
    after_end: Sequence[Action] = ()
    """Messages sent after MatchEnd, before the bot ends its side."""


def _raw(message: bytes) -> bytes:
    return message


def describe_reply(**fields: Any) -> bytes:
    """A DescribeResponse that plays everything, with `fields` changed."""
    values: dict[str, Any] = {
        "name": "hostile",
        "protocol_version": PROTOCOL_VERSION,
        "player_counts": [4, 6, 8],
    }
    values.update(fields)
    return pb.DescribeResponse(**values).SerializeToString()


def move(decision_id: int, **choice: Any) -> bytes:
    """A MoveAnswer message."""
    return pb.PlaySeatResponse(move=pb.MoveAnswer(decision_id=decision_id, **choice)).SerializeToString()


READY: Final = pb.PlaySeatResponse(ready=pb.Ready()).SerializeToString()


class HostileBot:
    """A gRPC server in threads that plays `script` (change it between matches)."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.sent_after_end = 0
        self.describes = 0
        """Describe calls answered: how often the arena asked for the handshake."""
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        bot_service = {
            "Describe": grpc.unary_unary_rpc_method_handler(
                self._describe, request_deserializer=pb.DescribeRequest.FromString, response_serializer=_raw
            ),
            "PlaySeat": grpc.stream_stream_rpc_method_handler(
                self._play_seat, request_deserializer=pb.PlaySeatRequest.FromString, response_serializer=_raw
            ),
        }
        health_service = {
            "Check": grpc.unary_unary_rpc_method_handler(
                self._health,
                request_deserializer=health_pb2.HealthCheckRequest.FromString,
                response_serializer=_raw,
            )
        }
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler("fiftysix.v1.BotService", bot_service),
                grpc.method_handlers_generic_handler("grpc.health.v1.Health", health_service),
            )
        )
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def address(self) -> str:
        """Where it listens."""
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop serving."""
        self._server.stop(0)

    def _unary(self, action: Action | None, valid: bytes, context: grpc.ServicerContext) -> bytes:
        return _bytes(VALID if action is None else action, valid, 1, context)

    def _health(self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext) -> bytes:
        serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        return self._unary(self.script.health, serving.SerializeToString(), context)

    def _describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> bytes:
        self.describes += 1
        return self._unary(self.script.describe, describe_reply(), context)

    def _play_seat(
        self, requests: Iterator[pb.PlaySeatRequest], context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        script = self.script
        decisions = 0
        for request in requests:
            event = request.WhichOneof("event")
            if event == "match_start":
                for action in script.ready or [VALID]:
                    yield _bytes(action, READY, 1, context)
            elif event == "decision":
                decisions += 1
                decision_id = request.decision.decision_id
                valid = move(decision_id, move_index=0)
                for action in script.decisions.get(decisions, [VALID]):
                    yield _bytes(action, valid, decision_id, context)
            elif event == "match_end":
                for action in script.after_end:
                    yield _bytes(action, READY, 1, context)
                    self.sent_after_end += 1
                return


def _bytes(action: Action, valid: bytes, decision_id: int, context: grpc.ServicerContext) -> bytes:
    """What `action` sends: its bytes, the valid message, an Answer to `decision_id`; an Abort ends the
    call instead."""
    if isinstance(action, Abort):
        context.abort(action.code, action.details)
    if isinstance(action, Answer):
        return action.render(decision_id)
    return action if isinstance(action, bytes) else valid


def nested_groups(depth: int) -> bytes:
    """A message of `depth` nested unknown groups (field 1000): deeper than protobuf's recursion limit."""
    start = _varint(1000 << 3 | 3)
    end = _varint(1000 << 3 | 4)
    return start * depth + end * depth


def non_utf8_notation(decision_id: int) -> bytes:
    """A MoveAnswer whose notation (a proto3 string) is not UTF-8."""
    text = b"\xff\xfeJS"
    answer = _varint(1 << 3 | 0) + _varint(decision_id) + _varint(3 << 3 | 2) + _varint(len(text)) + text
    return _varint(2 << 3 | 2) + _varint(len(answer)) + answer


def non_utf8_name() -> bytes:
    """A DescribeResponse whose name is not UTF-8 (and that plays everything)."""
    name = b"\x80bot\xff"
    counts = b"".join(_varint(4 << 3 | 0) + _varint(count) for count in (4, 6, 8))
    version = _varint(3 << 3 | 0) + _varint(PROTOCOL_VERSION)
    return _varint(1 << 3 | 2) + _varint(len(name)) + name + version + counts


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
