"""Deliberately bad bots, for the tests that prove the arena survives them.

Each kind misbehaves in one way. Most run in the test process (`start_bad_bot`); the crashing one must
be its own process, so the module also runs as a program: `python bad_bots.py KIND --port 0` serves
KIND and prints `{"port": N}`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Protocol

import grpc

from fiftysix.engine import Phase
from fiftysix.logs import configure_logging
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import PROTOCOL_VERSION
from sdk import Bot, BotView, Move, start


class SleepingBot(Bot):
    """Sleeps past any deadline in the play."""

    name = "sleeper"

    def decide(self, view: BotView) -> Move:
        if view.phase is Phase.PLAY:
            time.sleep(1.0)
        return view.legal_moves[0]


class IllegalBot(Bot):
    """Plays a card it does not hold."""

    name = "illegal"

    def decide(self, view: BotView) -> Move | str:
        if view.phase is Phase.PLAY:
            held = {str(card) for card in view.hand}
            return next(text for text in ("JS", "JH", "JD", "JC", "9S", "9H") if text not in held)
        return view.legal_moves[0]


class CrashingBot(Bot):
    """Its process dies in the middle of the match."""

    name = "crasher"

    def decide(self, view: BotView) -> Move:
        if view.phase is Phase.PLAY and len(view.tricks) >= 2:
            os._exit(3)
        return view.legal_moves[0]


class _RawBot(rpc.BotServiceServicer):
    """A servicer written against the protos directly, so it can break the protocol."""

    name = "raw"

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:  # noqa: N802
        return pb.DescribeResponse(name=self.name, protocol_version=PROTOCOL_VERSION, player_counts=[4, 6, 8])

    def PlaySeat(  # noqa: N802
        self, request_iterator: Iterator[pb.PlaySeatRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PlaySeatResponse]:
        for request in request_iterator:
            event = request.WhichOneof("event")
            if event == "match_start":
                yield pb.PlaySeatResponse(ready=pb.Ready())
            elif event == "decision":
                answer = self.answer(request.decision)
                if answer is None:
                    return
                yield answer
            elif event == "match_end":
                return

    def answer(self, decision: pb.DecisionRequest) -> pb.PlaySeatResponse | None:
        return pb.PlaySeatResponse(move=pb.MoveAnswer(decision_id=decision.decision_id, move_index=0))


class ClosingBot(_RawBot):
    """Ends its stream instead of answering once the cards are played."""

    name = "closer"

    def answer(self, decision: pb.DecisionRequest) -> pb.PlaySeatResponse | None:
        if decision.view.phase == pb.PHASE_PLAY:
            return None
        return super().answer(decision)


class HugeBot(_RawBot):
    """Answers with a message of several megabytes."""

    name = "huge"

    def answer(self, decision: pb.DecisionRequest) -> pb.PlaySeatResponse | None:
        if decision.view.phase == pb.PHASE_PLAY:
            return pb.PlaySeatResponse(
                move=pb.MoveAnswer(decision_id=decision.decision_id, notation="J" * 3_000_000)
            )
        return super().answer(decision)


class WrongTurnBot(_RawBot):
    """Answers a decision other than the one asked."""

    name = "wrong-turn"

    def answer(self, decision: pb.DecisionRequest) -> pb.PlaySeatResponse | None:
        return pb.PlaySeatResponse(move=pb.MoveAnswer(decision_id=decision.decision_id + 7, move_index=0))


class MalformedBot(_RawBot):
    """Answers with something that is not a move."""

    name = "malformed"

    def answer(self, decision: pb.DecisionRequest) -> pb.PlaySeatResponse | None:
        return pb.PlaySeatResponse(move=pb.MoveAnswer(decision_id=decision.decision_id, notation="XYZ"))


SDK_BOTS: dict[str, type[Bot]] = {"sleeper": SleepingBot, "illegal": IllegalBot, "crasher": CrashingBot}
RAW_BOTS: dict[str, type[_RawBot]] = {
    "closer": ClosingBot,
    "huge": HugeBot,
    "wrong-turn": WrongTurnBot,
    "malformed": MalformedBot,
}


class _Stoppable(Protocol):
    def stop(self, grace: float | None) -> object: ...


class RunningBadBot:
    """A bad bot serving on `port`; `stop()` ends it."""

    def __init__(self, port: int, server: _Stoppable) -> None:
        self.port = port
        self._server = server

    def stop(self) -> None:
        self._server.stop(0)


def start_bad_bot(kind: str) -> RunningBadBot:
    """Serve a bad bot of `kind` in this process on a free port."""
    if kind in SDK_BOTS:
        server = start(SDK_BOTS[kind])
        return RunningBadBot(server.port, server)
    raw = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    rpc.add_BotServiceServicer_to_server(RAW_BOTS[kind](), raw)
    port = raw.add_insecure_port("127.0.0.1:0")
    raw.start()
    return RunningBadBot(port, raw)


class NeverAccepting:
    """A port that listens but never accepts a connection (the kernel queues it; nobody answers)."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(1)
        self.port = int(self.socket.getsockname()[1])

    def stop(self) -> None:
        self.socket.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a deliberately bad 56 bot.")
    parser.add_argument("kind", choices=sorted([*SDK_BOTS, *RAW_BOTS]))
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    configure_logging(json_lines=True)  # logs to standard error; standard output carries the port
    if args.kind in SDK_BOTS:
        server = start(SDK_BOTS[args.kind], port=args.port)
        port = server.port
    else:
        running = start_bad_bot(args.kind)
        port = running.port
    print(json.dumps({"port": port}), flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
