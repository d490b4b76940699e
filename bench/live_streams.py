"""The cost of spectators: does a crowd of live streams slow the rest of `arena serve`?

Run by hand: `python bench/live_streams.py [--streams 200] [--matches 4] [--requests 150]`. It starts, each
in its own process, a real `arena serve` (uvicorn) on a new ladder file and a writer that keeps
`--matches` matches in play on that file: random 4-player matches played by the engine alone, their public
events published through the ladder's own `LiveFeed` (batched, as a run writes them) at `--pace-ms` a
decision; each match id plays one engine match after another, so that its streams stay open however long
the bench takes. Then, in this process, it measures `GET /api/pools` (one request at a time, each on a
new connection):

- idle: no stream open;
- loaded: with `--streams` streams open, spread over the matches, each read as it arrives;
- idle again, the streams closed (the idle figure is both idle rounds together).

It prints the medians and the 90th percentiles, the ratio loaded / idle of the medians (the target: at
most 2), how many events the streams received, and the answer to one stream more than the cap (the target:
refused, 503 with a one-line reason and Retry-After). The server's cap is `--streams`, for one client
and in all (this process is one client).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.ladder.live_feed import LiveFeed
from arena.ladder.store import LadderStore
from arena.runner import public_events
from fiftysix.engine import Match, MatchRules

HOST = "127.0.0.1"


async def write_live(db: Path, matches: int, pace_s: float) -> None:
    """Keep `matches` matches in play on `db` until killed (see the module's note)."""
    store = LadderStore(db)
    rng = random.Random(1)

    async def one(number: int) -> None:
        match_id = f"bench-live-{number}"
        feed = LiveFeed(store.live, match_id)
        names = ["a", "b", "a", "b"]
        for seed in range(number * 10_000, (number + 1) * 10_000):
            match = Match(MatchRules(4), seed=seed)
            feed.publish(public_events.match_start(match_id, match.rules, names))
            feed.publish(public_events.deal_start(match.deal_number, match.dealer, match.seats))
            while not match.is_over:
                seat = match.deal.to_act
                move = rng.choice(match.legal_moves())
                deal = match.deal_number
                result = match.apply(seat, move)
                feed.publish(public_events.move_made(deal, seat, move))
                if result is not None:
                    feed.publish(public_events.deal_end(result))
                    if not match.is_over:
                        feed.publish(public_events.deal_start(match.deal_number, match.dealer, match.seats))
                await asyncio.sleep(pace_s)

    await asyncio.gather(*(one(number) for number in range(matches)))


@dataclass
class Stream:
    """An open live stream, read to the end as it arrives."""

    status: int
    head: str
    writer: asyncio.StreamWriter
    body: bytes = b""
    received: int = 0
    """Events received (each begins a line `id: `)."""
    last_id: int = -1
    """The newest event's number."""
    out_of_order: int = 0
    """Events numbered no higher than the one before (sent twice, or out of order)."""
    task: asyncio.Task[None] | None = None


async def open_stream(port: int, path: str) -> Stream:
    """Open `path` and read its status and headers; a 200 is then read in the background."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    stream = Stream(int(head.split(" ", 2)[1]), head, writer)
    if stream.status != 200:
        stream.body = await reader.read(4096)
        writer.close()
        return stream

    async def drain() -> None:
        while line := await reader.readline():
            if line.startswith(b"id: "):
                seq = int(line[4:])
                stream.out_of_order += seq <= stream.last_id
                stream.received += 1
                stream.last_id = seq

    stream.task = asyncio.create_task(drain())
    return stream


async def get(port: int, path: str) -> tuple[int, bytes, float]:
    """One request on a new connection: its status, body and seconds."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
    answer = await reader.read()
    elapsed = time.perf_counter() - started
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body, elapsed


async def latencies(port: int, requests: int) -> list[float]:
    """Seconds of `requests` GET /api/pools, one after another."""
    times = []
    for _ in range(requests):
        status, _body, elapsed = await get(port, "/api/pools")
        assert status == 200, status
        times.append(elapsed)
    return times


async def measure(port: int, streams: int, matches: int, requests: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            status, body, _ = await get(port, "/api/live")
            if status == 200 and len(json.loads(body)) == matches:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the site or the writer did not start")
        await asyncio.sleep(0.2)
    await latencies(port, 20)  # warm up
    idle = await latencies(port, requests)
    paths = [f"/api/live/bench-live-{number % matches}/events" for number in range(streams)]
    opened = await asyncio.gather(*(open_stream(port, path) for path in paths))
    refused = [stream.status for stream in opened if stream.status != 200]
    if refused:
        raise SystemExit(f"{len(refused)} of {streams} streams were refused: {sorted(set(refused))}")
    extra = await open_stream(port, paths[0])
    await asyncio.sleep(3.0)  # every stream past its backlog, on the shared feed
    received_before = sum(stream.received for stream in opened)
    started = time.perf_counter()
    loaded = await latencies(port, requests)
    loaded_s = time.perf_counter() - started
    received = sum(stream.received for stream in opened) - received_before
    ended = sum(1 for stream in opened if stream.task is not None and stream.task.done())
    newest: dict[str, int] = {}
    for path, stream in zip(paths, opened, strict=True):
        newest[path] = max(newest.get(path, -1), stream.last_id)
    lag = max(newest[path] - stream.last_id for path, stream in zip(paths, opened, strict=True))
    for stream in opened:
        stream.writer.close()
        if stream.task is not None:
            stream.task.cancel()
    await asyncio.sleep(1.0)
    idle += await latencies(port, requests)
    report(idle, loaded)
    print(
        f"streams: {streams} open over {matches} matches; during the loaded round they received "
        f"{received:,} events ({received / loaded_s / streams:.1f} a second each); {ended} ended early; "
        f"at its end, the furthest behind was {lag} events behind the newest of its match; "
        f"{sum(stream.out_of_order for stream in opened)} events out of order or twice"
    )
    retry = next(
        (
            line.split(":", 1)[1].strip()
            for line in extra.head.split("\r\n")
            if line.lower().startswith("retry-after")
        ),
        None,
    )
    shown = extra.body.decode("utf-8", "replace").strip().splitlines()
    print(f"stream {streams + 1}: {extra.status}, Retry-After {retry}, body {shown[-1] if shown else ''}")


def report(idle: list[float], loaded: list[float]) -> None:
    def line(label: str, times: list[float]) -> str:
        ordered = sorted(times)
        p90 = ordered[int(len(ordered) * 0.9)]
        return (
            f"{label}: median {statistics.median(times) * 1e3:.2f} ms, p90 {p90 * 1e3:.2f} ms ({len(times)})"
        )

    print("GET /api/pools, one at a time, each on a new connection")
    print(line("  idle  ", idle))
    print(line("  loaded", loaded))
    ratio = statistics.median(loaded) / statistics.median(idle)
    print(f"  ratio loaded / idle (medians): {ratio:.2f} (target <= 2)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--streams", type=int, default=200, help="streams open at once, the cap (default 200)"
    )
    parser.add_argument("--matches", type=int, default=4, help="matches in play (default 4)")
    parser.add_argument("--requests", type=int, default=150, help="requests timed per round (default 150)")
    parser.add_argument("--pace-ms", type=float, default=20.0, help="wait per decision, ms (default 20)")
    parser.add_argument("--write-live", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_live is not None:
        asyncio.run(write_live(args.write_live, args.matches, args.pace_ms / 1e3))
        return
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "ladder.db"
        LadderStore(db).close()
        port = free_port()
        logs = (Path(folder) / "serve.log").open("w")
        limits = ["--max-streams", str(args.streams), "--max-streams-per-client", str(args.streams)]
        serve = [sys.executable, "-m", "arena.cli", "serve", "--db", str(db), "--port", str(port), *limits]
        writer = [
            __file__,
            "--write-live",
            str(db),
            "--matches",
            str(args.matches),
            "--pace-ms",
            str(args.pace_ms),
        ]
        processes = [
            subprocess.Popen(serve, stdout=logs, stderr=logs),
            subprocess.Popen([sys.executable, *writer], stdout=logs, stderr=logs),
        ]
        try:
            asyncio.run(measure(port, args.streams, args.matches, args.requests))
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(10)
            logs.close()
            errors = (Path(folder) / "serve.log").read_text()
            if "Traceback" in errors:
                print(errors[-3000:])


if __name__ == "__main__":
    main()
