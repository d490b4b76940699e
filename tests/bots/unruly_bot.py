"""A bot program that misbehaves as a process, for the tests of the processes the arena starts.

It answers the handshake like any bot (it serves the random bot), and per flag: ignores SIGTERM, forks
a child that leaves the bot's process group and session and would live forever, writes megabytes of
output before serving, waits before serving, never serves at all, or prints the address each seat's
stream comes from (so a test can tell how many connections the arena opened). Run it as
`python unruly_bot.py --port N [FLAGS]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# gRPC and the bot are imported once the escapee is in place (see `main`): on a loaded machine their
# import takes seconds, longer than the short start-up limits of the tests that look for the escapee.

CHATTY_LINES = 200_000
"""About 9 MB of output: far more than any log cap a test sets."""


def fork_escapee(pid_file: Path) -> None:
    """Fork a child that calls setsid, ignores SIGTERM and sleeps forever; it writes its pid to `pid_file`
    (atomically, once it is set up) so a test can look for it, and we wait for that: once the bot answers
    the handshake, its escapee is in place."""
    if os.fork() != 0:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return
    try:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        partial = pid_file.with_name(pid_file.name + ".partial")
        partial.write_text(str(os.getpid()))
        partial.rename(pid_file)
        while True:
            time.sleep(3600)
    finally:
        os._exit(0)


def chatter() -> None:
    """Write a recognisable first line, many numbered lines and a recognisable last line."""
    out = sys.stdout.buffer
    out.write(b"unruly: first line\n")
    for number in range(CHATTY_LINES):
        out.write(b"unruly: chatter line %07d of the chatty bot\n" % number)
    out.write(b"unruly: last line\n")
    out.flush()


def log_peers() -> None:
    """Print `unruly: peer ADDRESS` at the start of every seat's stream: one address (the arena's side
    of one TCP connection) for all of them when the arena keeps its channel."""
    from sdk.server import BotServicer

    play_seat = BotServicer.PlaySeat

    def logged(self: BotServicer, requests: Iterator[Any], context: Any) -> Iterator[Any]:
        print(f"unruly: peer {context.peer()}", flush=True)
        yield from play_seat(self, requests, context)

    BotServicer.PlaySeat = logged  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a 56 bot whose process misbehaves.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ignore-term", action="store_true", help="ignore SIGTERM")
    parser.add_argument("--fork-escapee", type=Path, metavar="PIDFILE", help="fork a setsid child")
    parser.add_argument("--chatty", action="store_true", help="write megabytes of output first")
    parser.add_argument("--delay", type=float, default=0.0, help="sleep this many seconds before serving")
    parser.add_argument("--never-answer", action="store_true", help="never serve the handshake")
    parser.add_argument("--log-peers", action="store_true", help="print where each seat's stream is from")
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.fork_escapee is not None:
        fork_escapee(args.fork_escapee)
    if args.chatty:
        chatter()
    time.sleep(args.delay)
    if args.log_peers:
        log_peers()
    from sample_bots.random_bot import RandomBot
    from sdk import start

    server = None if args.never_answer else start(RandomBot, port=args.port)
    try:
        while True:
            time.sleep(3600)
    finally:
        if server is not None:
            server.stop(0)


if __name__ == "__main__":
    main()
