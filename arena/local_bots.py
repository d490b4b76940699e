"""Bots that the arena starts itself from a registered command, so a ladder needs no hand-started
processes.

A command holds `{port}`, replaced by a free port the arena picks (`python -m sample_bots.rule_bot
--port {port}`); a first word `python` or `python3` is replaced by the interpreter running the arena,
so the sample bots run in the arena's own environment. The arena waits until the bot answers the
handshake, restarts a bot whose process has died before its next match (as cutechess's `-recover`
does), and stops every process it started when the ladder ends. Each bot's output goes to a log file.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Final

import grpc
import grpc.aio
import structlog

from arena.protocol import PROTOCOL_VERSION
from arena.runner import split_addresses
from arena.storage import BotEntry
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc

log = structlog.get_logger("local_bots")


class BotStartError(RuntimeError):
    """A local bot that did not start: its process exited, or it never answered the handshake."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Run before the bot's own command, in a fresh interpreter: ask Linux to send SIGTERM when the arena
# dies, even by SIGKILL, so that a killed ladder leaves no bot processes behind, then become the bot.
# (A preexec_fn would do it in the arena's forked child, where gRPC's fork handlers break things.)
_LAUNCHER: Final = (
    "import ctypes, os, signal, sys; "
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
    "os.getppid() == int(sys.argv[1]) or sys.exit(0); "
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def command_arguments(command: str, port: int) -> list[str]:
    """The argument list of a registered command for `port`."""
    if "{port}" not in command:
        raise ValueError(f"a bot command must contain {{port}} where the port goes, got {command!r}")
    arguments = shlex.split(command.replace("{port}", str(port)))
    if arguments and arguments[0] in ("python", "python3"):
        arguments[0] = sys.executable
    return arguments


async def wait_until_ready(
    address: str, timeout: float, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Retry the handshake with backoff until it answers or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    last_error = "no answer"
    async with grpc.aio.insecure_channel(address) as channel:
        stub = rpc.BotServiceStub(channel)
        while True:
            if process is not None and process.poll() is not None:
                raise BotStartError(f"the bot process exited with status {process.returncode}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotStartError(
                    f"no answer to the handshake at {address} within {timeout:.0f} s: {last_error}"
                )
            try:
                await stub.Describe(
                    pb.DescribeRequest(protocol_version=PROTOCOL_VERSION), timeout=min(1.0, remaining)
                )
                return
            except grpc.RpcError as error:
                last_error = str(error.details()) if isinstance(error, grpc.aio.AioRpcError) else str(error)
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)


class _Running:
    def __init__(self, process: subprocess.Popen[bytes], address: str, log_file: IO[bytes]) -> None:
        self.process = process
        self.address = address
        self.log_file = log_file
        self.busy = False


class LocalBots:
    """The processes of the command bots of one ladder run: one process per seat being played.

    A match takes a process for every seat its bot plays (`acquire`) and gives them back when it ends
    (`release`), so no process ever holds two seats of a match, and concurrent matches get processes of
    their own. Idle processes are kept for the next match.
    """

    def __init__(self, log_folder: Path, startup_timeout: float = 30.0) -> None:
        self.log_folder = log_folder
        self.startup_timeout = startup_timeout
        self._pools: dict[str, list[_Running]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._started = 0

    async def acquire(self, bot: BotEntry, count: int) -> list[str]:
        """Where `bot` plays `count` seats: its registered addresses as they are (the match gives seat k
        of a team the k-th, cycling), or `count` idle processes of its command (started now when not
        enough are idle; dead ones restarted)."""
        if bot.address is not None:
            return list(split_addresses(bot.address))
        assert bot.command is not None
        lock = self._locks.setdefault(bot.name, asyncio.Lock())
        async with lock:
            pool = self._pools.setdefault(bot.name, [])
            for running in [running for running in pool if running.process.poll() is not None]:
                log.warning("local_bot_restarted", bot=bot.name, status=running.process.returncode)
                running.log_file.close()
                pool.remove(running)
            idle = [running for running in pool if not running.busy][:count]
            while len(idle) < count:
                running = await self._start(bot.name, bot.command)
                pool.append(running)
                idle.append(running)
            for running in idle:
                running.busy = True
            return [running.address for running in idle]

    def release(self, addresses: Sequence[str]) -> None:
        """Give processes back after a match."""
        for pool in self._pools.values():
            for running in pool:
                if running.address in addresses:
                    running.busy = False

    async def _start(self, name: str, command: str) -> _Running:
        port = free_port()
        arguments = command_arguments(command, port)
        if sys.platform == "linux":
            arguments = [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *arguments]
        self.log_folder.mkdir(parents=True, exist_ok=True)
        self._started += 1
        log_path = self.log_folder / f"{name}-{self._started}.log"
        log_file = log_path.open("ab")
        try:
            process = subprocess.Popen(
                arguments,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError as error:
            log_file.close()
            raise BotStartError(f"cannot start bot {name!r} ({' '.join(arguments)}): {error}") from None
        address = f"127.0.0.1:{port}"
        try:
            await wait_until_ready(address, self.startup_timeout, process)
        except BotStartError as error:
            process.kill()
            process.wait()
            log_file.close()
            raise BotStartError(
                f"bot {name!r} did not start: {error} (its output is in {log_path})"
            ) from None
        log.info("local_bot_started", bot=name, pid=process.pid, address=address)
        return _Running(process, address, log_file)

    def stop_all(self) -> None:
        """Stop every process started here: politely, then by force after 5 seconds."""
        everything = [running for pool in self._pools.values() for running in pool]
        for running in everything:
            if running.process.poll() is None:
                running.process.terminate()
        for running in everything:
            try:
                running.process.wait(5)
            except subprocess.TimeoutExpired:
                running.process.kill()
                running.process.wait()
            running.log_file.close()
        self._pools.clear()
