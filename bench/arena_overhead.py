"""Arena overhead per decision: a real match over loopback against a raw ping-pong of the same messages.

Run by hand: `python bench/arena_overhead.py [--matches 20]`. It starts an instant-answering bot in its own
process (it answers every decision with a random legal index without decoding the view, so its own
time is as small as gRPC allows), then:

1. plays 4-player matches between two instances of it through the arena (`run_match`) and times every
   decision from the legal moves to the applied move;
2. after each match, at once, sends as many decision requests of the same kind (real ones, recorded
   from matches, so the sizes match) over the same kind of stream to the same bot, timing only write +
   read: the raw transport. Match by match, so that a change in the machine's load between the two
   hits both alike (rounds of whole arena runs and whole raw runs drifted apart by tens of us);
3. prints decisions/s, p50/p99 of both, and the arena's own work per decision (arena minus raw).

Target (issue 14): the arena's own work at most 12% of the raw round trip. On a loaded machine the
rounds' figures swing by tens of microseconds: take the median of several rounds, and see
bench/arena_instructions.py for the same comparison in instructions. For information it also plays the
SDK's RandomBot (which decodes every view into engine types) through the arena.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import TypeAlias

import grpc
import grpc.aio

from arena.runner import BotAddress, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import Match, MatchRules
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import PROTOCOL_VERSION, DecisionEncoder, TimeControl, match_start_message

RawCall: TypeAlias = "grpc.aio.StreamStreamCall[pb.PlaySeatRequest, pb.PlaySeatResponse]"


class InstantBot(rpc.BotServiceServicer):
    """Answers at once: Ready to MatchStart, a random legal index to every decision."""

    def Describe(self, request: pb.DescribeRequest, context: grpc.aio.ServicerContext) -> pb.DescribeResponse:  # type: ignore[type-arg]  # noqa: N802
        return pb.DescribeResponse(name="instant", protocol_version=PROTOCOL_VERSION, player_counts=[4, 6, 8])

    async def PlaySeat(  # noqa: N802
        self,
        request_iterator: AsyncIterator[pb.PlaySeatRequest],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[pb.PlaySeatResponse]:
        rng = random.Random(1)
        async for request in request_iterator:
            event = request.WhichOneof("event")
            if event == "decision":
                decision = request.decision
                index = rng.randrange(len(decision.legal_moves))
                yield pb.PlaySeatResponse(
                    move=pb.MoveAnswer(decision_id=decision.decision_id, move_index=index)
                )
            elif event == "match_start":
                yield pb.PlaySeatResponse(ready=pb.Ready())


async def serve_instant_bot() -> None:
    """Serve InstantBot on a free port, print the port, serve until killed."""
    server = grpc.aio.server()
    rpc.add_BotServiceServicer_to_server(InstantBot(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(json.dumps({"port": port}), flush=True)
    await server.wait_for_termination()


def start_bot_process(arguments: list[str]) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stderr is not None
    stream = process.stdout if arguments[0] == __file__ else process.stderr
    for line in stream:
        if line.startswith("{"):
            event = json.loads(line)
            if "port" in event:
                return process, int(event["port"])
    raise RuntimeError("the bot process did not start")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def recorded_requests(count: int) -> list[pb.PlaySeatRequest]:
    """Real decision requests from random 4-player matches, the messages the arena sends."""
    rng = random.Random(5)
    requests: list[pb.PlaySeatRequest] = []
    seed = 0
    while len(requests) < count:
        match = Match(MatchRules(4), seed=seed)
        encoder = DecisionEncoder(match)
        while not match.is_over and len(requests) < count:
            seat = match.deal.to_act
            legal = match.legal_moves()
            request = encoder.decision(len(requests) + 1, legal, 1000, 10000)
            requests.append(pb.PlaySeatRequest.FromString(request))
            match.apply(seat, rng.choice(legal))
        seed += 1
    return requests


async def raw_ping_pong(port: int, requests: list[pb.PlaySeatRequest]) -> list[float]:
    """Time write + read of each request on a PlaySeat stream of its own (bench/ladder.py's transport)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call: RawCall = rpc.BotServiceStub(channel).PlaySeat(None)
        await call.write(match_start_message("raw", MatchRules(4), 0, ["a"] * 4, TimeControl()))
        await call.read()
        times = await ping_pong(call, requests)
        await call.done_writing()
    return times


async def ping_pong(call: RawCall, requests: list[pb.PlaySeatRequest]) -> list[float]:
    """Time write + read of each request on an open PlaySeat stream."""
    times = []
    for request in requests:
        started = time.perf_counter()
        await call.write(request)
        async with asyncio.timeout(5):
            await call.read()
        times.append(time.perf_counter() - started)
    return times


async def arena_matches(port: int, matches: int) -> tuple[list[float], int, float]:
    """Play `matches` 4-player matches; returns (per-decision seconds, decisions, wall seconds)."""
    times, decisions, wall, _ = await interleaved(port, matches, [])
    return times, decisions, wall


async def interleaved(
    port: int, matches: int, requests: list[pb.PlaySeatRequest]
) -> tuple[list[float], int, float, list[float]]:
    """Play `matches` 4-player matches, each followed at once by a raw ping-pong of as many of `requests`
    (taken in turn) on one stream kept open meanwhile, so that a change in the machine's load hits both
    alike; returns (per-decision seconds, decisions, wall seconds of the matches, raw seconds)."""
    rules = MatchRules(4)
    bots = [BotAddress("a", f"127.0.0.1:{port}"), BotAddress("b", f"127.0.0.1:{port}")]
    times: list[float] = []
    raw: list[float] = []
    decisions = 0
    wall = 0.0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call: RawCall = rpc.BotServiceStub(channel).PlaySeat(None)
        await call.write(match_start_message("raw", rules, 0, ["a"] * 4, TimeControl()))
        await call.read()
        for seed in range(matches):
            started = time.perf_counter()
            outcome = await run_match(MatchSettings(rules, seed), seats_for_teams(rules, bots))
            wall += time.perf_counter() - started
            if outcome.faults:
                raise RuntimeError(f"unexpected faults: {outcome.faults}")
            times.extend(outcome.decision_seconds)
            decisions += outcome.decisions
            if requests:
                batch = [requests[(len(raw) + number) % len(requests)] for number in range(outcome.decisions)]
                raw.extend(await ping_pong(call, batch))
        await call.done_writing()
    return times, decisions, wall, raw


def report(label: str, times: list[float]) -> None:
    print(
        f"  {label:<50} p50 {percentile(times, 0.5) * 1e6:7.0f} us"
        f"   p99 {percentile(times, 0.99) * 1e6:7.0f} us   mean {statistics.fmean(times) * 1e6:7.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=15, help="4-player matches a round (default 15)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of arena and raw runs (default 3)")
    parser.add_argument("--serve-instant-bot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_instant_bot:
        asyncio.run(serve_instant_bot())
        return
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    instant, instant_port = start_bot_process([__file__, "--serve-instant-bot"])
    sdk_bot, sdk_port = start_bot_process(["-m", "sample_bots.random_bot", "--port", "0"])
    rounds = []
    try:
        requests = recorded_requests(3000)
        asyncio.run(interleaved(instant_port, 2, requests))  # warm up both sides
        for _ in range(args.rounds):
            rounds.append(asyncio.run(interleaved(instant_port, args.matches, requests)))
        sdk_times, sdk_decisions, sdk_wall = asyncio.run(arena_matches(sdk_port, max(2, args.matches // 4)))
    finally:
        for process in (instant, sdk_bot):
            process.terminate()
            process.wait(10)
    print(
        f"4-player matches over loopback, bots in another process: {args.rounds} rounds of {args.matches}"
        " matches, each followed by a raw ping-pong of as many decisions"
    )
    overheads = []
    for number, (times, decisions, wall, raw) in enumerate(rounds, start=1):
        overhead = percentile(times, 0.5) - percentile(raw, 0.5)
        overheads.append((overhead / percentile(raw, 0.5), overhead, number))
        print(f" round {number}: {decisions} decisions, {decisions / wall:,.0f} decisions/s (wall clock)")
        report("arena, per decision (legal moves to applied move)", times)
        report("raw stream ping-pong, same messages", raw)
        print(f"  arena's own work: {overhead * 1e6:.0f} us = {overhead / percentile(raw, 0.5):.0%} of raw")
    ratio, overhead, number = sorted(overheads)[len(overheads) // 2]
    print(
        f"Median round ({number}): the arena's own work per decision is {overhead * 1e6:.0f} us ="
        f" {ratio:.0%} of the raw round trip (p50 arena - p50 raw; target at most 12%)"
    )
    print("For information, the SDK's RandomBot (decodes every view into engine types):")
    print(f"  decisions per second: {sdk_decisions / sdk_wall:,.0f}")
    report("arena + SDK bot, per decision", sdk_times)


if __name__ == "__main__":
    main()
