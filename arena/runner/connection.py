"""The arena's side of a connection to one bot: the channel and the handshake (`stream.py` holds one
seat's stream over it).

One place for every place the arena connects to a bot (the match runner, the compliance checker, the
bots the arena starts), so limits, error texts and the handshake are the same everywhere. Everything here
treats the bot as hostile: every message is bounded in size (`fiftysix.wire.MAX_ANSWER_BYTES` on the
channel), a reply that does not decode is a `protocol_error`, and every text a bot chooses (status
details) is escaped and cut (`safe_text`) before anyone keeps it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Final

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.untrusted import safe_text
from arena.version import VERSION
from fiftysix.engine import MatchRules
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import (
    MAX_ANSWER_BYTES,
    MAX_REQUEST_BYTES,
    PROTOCOL_VERSION,
    RULESET_VALUES,
    FaultCause,
)

HANDSHAKE_ATTEMPTS: Final = 4
"""Handshake tries for a bot that is briefly unreachable, with backoff 0.25, 0.5, 1 s between them."""

# The errors a conversation with a bot can raise; anything else is a bug of ours and must surface.
# grpc.aio.InternalError: ending the arena's side of a stream the bot ended without trailers.
CONVERSATION_ERRORS: Final = (
    grpc.RpcError,
    grpc.aio.UsageError,
    grpc.aio.InternalError,
    asyncio.InvalidStateError,
    OSError,
)

UNDECODABLE: Final = "that does not decode (bytes that are not protobuf, truncated, or text not in UTF-8)"


def describe_error(error: BaseException) -> str:
    """An error from a conversation with a bot in one line; the status text is the bot's own, so it is
    escaped and cut."""
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {safe_text(error.details(), 300)}"
    return f"{type(error).__name__}: {safe_text(error, 300)}"


def numbers_text(values: Sequence[int], limit: int = 8) -> str:
    """Numbers a bot declared, for a message: the first `limit`, and how many in all when there are more
    (a bot may declare hundreds of thousands)."""
    shown = ", ".join(str(value) for value in values[:limit])
    return shown + (f" ... ({len(values)} in all)" if len(values) > limit else "")


def open_channel(address: str) -> grpc.aio.Channel:
    """A channel to a bot with the arena's limits; no transparent retries (a deadline is a deadline)."""
    options = [
        ("grpc.max_receive_message_length", MAX_ANSWER_BYTES),
        ("grpc.max_send_message_length", MAX_REQUEST_BYTES),
        ("grpc.enable_retries", 0),
    ]
    return grpc.aio.insecure_channel(address, options=options)


def closed_during(call: str) -> str:
    """How every message says that a bot answered the handshake's first call and then the connection
    closed during `call`: the bot was reached, and most likely died (a crash, an exit) inside the call."""
    return f"closed the connection during {call}: did it crash?"


class _ClosedDuringCallError(Exception):
    """The bot answered an earlier call on the channel, then the connection closed during `call`."""

    def __init__(self, call: str) -> None:
        super().__init__(closed_during(call))
        self.call = call


class HandshakeError(Exception):
    """A bot that failed the handshake: why, as a fault cause and a one-line detail."""

    def __init__(self, cause: FaultCause, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause
        self.detail = detail


async def health_status(channel: grpc.aio.Channel, timeout: float) -> int:
    """The bot's overall status in the standard grpc.health.v1 service (`SERVING` is 1).

    :raises grpc.aio.AioRpcError: as the call failed (UNIMPLEMENTED: the bot has no health service).
    :raises HandshakeError: a reply that does not decode.
    """
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=""), timeout=timeout
    )
    if not isinstance(reply, health_pb2.HealthCheckResponse):
        raise HandshakeError(FaultCause.PROTOCOL_ERROR, f"sent a health reply {UNDECODABLE}")
    return int(reply.status)


async def describe(channel: grpc.aio.Channel, timeout: float) -> pb.DescribeResponse:
    """The bot's answer to Describe.

    :raises grpc.aio.AioRpcError: as the call failed.
    :raises HandshakeError: a reply that does not decode.
    """
    reply = await rpc.BotServiceStub(channel).Describe(
        pb.DescribeRequest(protocol_version=PROTOCOL_VERSION, arena_version=VERSION), timeout=timeout
    )
    if not isinstance(reply, pb.DescribeResponse):
        raise HandshakeError(FaultCause.PROTOCOL_ERROR, f"sent a Describe reply {UNDECODABLE}")
    return reply


async def _check_and_describe(channel: grpc.aio.Channel, deadline: float) -> pb.DescribeResponse:
    """The health check, then Describe.

    :raises _ClosedDuringCallError: the health check was answered (even as UNIMPLEMENTED), then Describe
        failed as UNAVAILABLE: the bot was reached and closed the connection during Describe.
    """
    try:
        status = await health_status(channel, max(0.05, deadline - time.monotonic()))
        if status != health_pb2.HealthCheckResponse.SERVING:
            raise HandshakeError(FaultCause.UNREACHABLE, "reports its health as not serving")
    except grpc.aio.AioRpcError as error:
        if error.code() is not grpc.StatusCode.UNIMPLEMENTED:  # no health service is fine
            raise
    try:
        return await describe(channel, max(0.1, deadline - time.monotonic()))
    except grpc.aio.AioRpcError as error:
        if error.code() is grpc.StatusCode.UNAVAILABLE:
            raise _ClosedDuringCallError("Describe") from None
        raise


async def handshake(
    channel: grpc.aio.Channel,
    address: str,
    timeout: float,
    attempts: int | None = HANDSHAKE_ATTEMPTS,
    give_up: Callable[[], str | None] | None = None,
    first_delay: float = 0.25,
) -> pb.DescribeResponse:
    """Health check (a bot without the standard health service is fine), then Describe, within `timeout`
    seconds. A bot briefly unreachable is tried again with backoff (`first_delay` doubling, at most 1 s),
    `attempts` times in all (None: until the time is up); `give_up` may say why trying again is
    pointless (a bot process that exited). A bot that answered the health check and then closed the
    connection during Describe is not tried again: it was reached, and most likely crashed.

    :raises HandshakeError: UNREACHABLE, or PROTOCOL_ERROR (a reply that does not decode, a size limit
        broken).
    """
    deadline = time.monotonic() + timeout
    delay = first_delay
    attempt = 0
    while True:
        attempt += 1
        try:
            return await _check_and_describe(channel, deadline)
        except HandshakeError as error:
            raise HandshakeError(error.cause, f"the bot at {address} {error.detail}") from None
        except _ClosedDuringCallError as error:
            exited = give_up() if give_up is not None else None
            said = f"the bot at {address} {error}" + (f" ({exited})" if exited else "")
            raise HandshakeError(FaultCause.UNREACHABLE, said) from None
        except CONVERSATION_ERRORS as error:
            if isinstance(error, grpc.aio.AioRpcError) and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise HandshakeError(
                    FaultCause.PROTOCOL_ERROR,
                    f"the bot at {address} broke a size limit in the handshake: {describe_error(error)}",
                ) from None
            failure = f"cannot reach the bot at {address}: {describe_error(error)}"
        reason = give_up() if give_up is not None else None
        if reason is not None:
            raise HandshakeError(FaultCause.UNREACHABLE, reason)
        if (attempts is not None and attempt >= attempts) or deadline - time.monotonic() <= delay:
            raise HandshakeError(FaultCause.UNREACHABLE, f"{failure} (tried for {timeout:g} s)")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


def incompatibility(
    reply: pb.DescribeResponse, address: str, rules: MatchRules
) -> tuple[FaultCause, str] | None:
    """Why the bot that described itself with `reply` cannot play a match of `rules` (an `incompatible`
    fault and its detail), or None when it can."""
    if reply.protocol_version != PROTOCOL_VERSION:
        return (
            FaultCause.INCOMPATIBLE,
            f"the bot at {address} speaks protocol version {reply.protocol_version}; "
            f"this arena speaks {PROTOCOL_VERSION}",
        )
    if rules.players not in reply.player_counts:
        counts = numbers_text(reply.player_counts) or "none"
        return FaultCause.INCOMPATIBLE, f"the bot at {address} plays {counts} players, not {rules.players}"
    if reply.rulesets and RULESET_VALUES[rules.ruleset] not in reply.rulesets:
        return (
            FaultCause.INCOMPATIBLE,
            f"the bot at {address} does not play the {rules.ruleset.value} ruleset",
        )
    return None
