"""A bot that attacks its host the first time it is asked to decide: `python bot.py --attack NAME
[--target TEXT] --socket PATH`, shipped in an uploaded bundle by tests/arena/sandbox/test_hostile_bots.py.

Each attack raises when it is stopped, or never returns (the fork bomb, and the output while the arena
reads it), so a contained attack ends the bot's match with a fault of its own. An attack that got through
returns, and the bot plays on with legal moves: the test then sees a match without a fault, and the
evidence where it looks on the host.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable

from sdk import Bot, BotView, Move, serve

GIB = 1024 * 1024 * 1024


def network(target: str) -> None:
    """Connect to the test's listener on the host's loopback, then to the internet."""
    host, _, port = target.rpartition(":")
    reached = []
    for address in ((host, int(port)), ("1.1.1.1", 53), ("8.8.8.8", 443)):
        try:
            with socket.create_connection(address, timeout=2):
                reached.append(address)
        except OSError:
            pass
    if not reached:
        raise RuntimeError("no network")


def read(target: str) -> None:
    """Read a file of the host (/etc/shadow, the ladder's database, another bot's files)."""
    for path in target.split(","):
        with open(path, "rb") as file:
            file.read()


def write(target: str) -> None:
    """Write outside /tmp: its own files, the system, the sandbox's root, a folder of the host."""
    written = []
    for folder in ("/bot", "/usr", "/", "/etc", "/dev", "/run", *target.split(",")):
        try:
            with open(os.path.join(folder, "evil"), "w") as file:
                file.write("escaped")
            written.append(folder)
        except OSError:
            pass
    if not written:
        raise RuntimeError("nothing written")


def processes(target: str) -> None:
    """Look for the other bots' processes and the arena's, then signal every process it may."""
    seen = []
    for entry in os.listdir("/proc"):
        # Not itself: it names the target on its command line.
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as file:
                    seen.append(file.read())
            except OSError:
                pass
    # Its sandbox's own bwrap processes name the target too.
    if any(target.encode() in command for command in seen if not command.startswith(b"bwrap")):
        return
    # Every process it may signal but itself and its namespace's init: at most its sandbox's own.
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    raise RuntimeError(f"{len(seen)} processes seen, none of them {target}")


def fork_bomb(_target: str) -> None:
    """Fork for ever, in every process."""
    while True:
        with contextlib.suppress(OSError):
            os.fork()


def memory(_target: str) -> None:
    """Allocate 8 GB and touch it."""
    block = bytearray(8 * GIB)
    block[:: 4096 * 1024] = b"x" * len(block[:: 4096 * 1024])


def output(_target: str) -> None:
    """Print 1 GB, then fail."""
    chunk = b"y" * (1024 * 1024 - 1) + b"\n"
    for _ in range(1024):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    raise RuntimeError("printed 1 GB")


ATTACKS: dict[str, Callable[[str], None]] = {
    "network": network,
    "read": read,
    "write": write,
    "processes": processes,
    "fork_bomb": fork_bomb,
    "memory": memory,
    "output": output,
}


class AttackingBot(Bot):
    """Attacks once, then plays the first legal move."""

    name = "attacker"
    attack = "network"
    target = ""

    def __init__(self) -> None:
        self.done = False

    def decide(self, view: BotView) -> Move:
        if not self.done:
            self.done = True
            ATTACKS[self.attack](self.target)
        return view.legal_moves[0]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--attack", choices=sorted(ATTACKS), required=True)
    parser.add_argument("--target", default="")
    parser.add_argument("--socket", required=True)
    args = parser.parse_args()
    AttackingBot.attack, AttackingBot.target = args.attack, args.target
    serve(AttackingBot, socket=args.socket)
