"""A bot whose process dies inside Describe: it accepts the connection and answers the health check
SERVING, then, asked Describe, writes a line to its standard error and exits (status 3) without
answering. How a crash at the first call looks to the arena (`arena check-bot`, `arena bots add`, an
upload through the site), which must say that the bot was reached and closed the connection, not that it
could not be reached.

Run it as `python describe_crash_bot.py --port N`, `--port 0 --port-file PATH` or `--socket PATH`; it
needs only gRPC and the game's generated stubs (an upload's bundle holds `fiftysix`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path
from typing import Final

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc

LAST_WORDS: Final = "describe_crash_bot: dying inside Describe"
"""What it writes to its standard error before it exits: the arena quotes it."""
COMMAND: Final = f"{sys.executable} {Path(__file__).resolve()} --port 0 --port-file {{port_file}}"
"""How the arena starts it (`arena bots add --command`)."""


def spawn(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Run it as a process of its own, its port file in `folder`; the process and where it serves, once it
    does. (The caller stops it if it is still there: one Describe ends it.)"""
    port_file = folder / "describe_crash_bot.port"
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, __file__, "--port", "0", "--port-file", str(port_file)],
        env={**os.environ, "PYTHONPATH": str(root)},
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not port_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("describe_crash_bot did not start")
        time.sleep(0.02)
    return process, f"127.0.0.1:{port_file.read_text(encoding='ascii').strip()}"


class DyingInDescribe(rpc.BotServiceServicer):
    """Exits the process at the first Describe, before any answer is sent."""

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:  # noqa: N802
        print(LAST_WORDS, file=sys.stderr, flush=True)
        os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a 56 bot that dies inside Describe.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--socket")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    rpc.add_BotServiceServicer_to_server(DyingInDescribe(), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    where = f"unix:{args.socket}" if args.socket else f"127.0.0.1:{args.port}"
    port = server.add_insecure_port(where)
    server.start()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    if args.port_file is not None:
        partial = args.port_file.with_name(args.port_file.name + ".partial")
        partial.write_text(f"{port}\n", encoding="ascii")
        partial.replace(args.port_file)
    shown = where if args.socket else f"127.0.0.1:{port}"
    print(f"describe_crash_bot: serving at {shown}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
