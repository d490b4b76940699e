"""Bots that the arena starts itself from a registered command, so a ladder needs no hand-started
processes.

A command holds `{port}`, replaced by a free port the arena picks (`python -m sample_bots.rule_bot
--port {port}`); a first word `python` or `python3` is replaced by the interpreter running the arena,
so the sample bots run in the arena's own environment. The arena waits until the bot answers the
handshake, restarts a bot whose process has died before its next match (as cutechess's `-recover`
does), and stops every process it started when the ladder ends.

No process the arena starts may outlive it, even when it is killed with SIGKILL and even when a bot
forks helpers that leave its process group with setsid. So each bot runs under a supervisor
(supervisor.py beside this module, standard library only), started in a session of its own with a pipe
from the arena on its standard input; the supervisor starts the bot in a process group of its own and
writes its output to `{log_folder}/{name}-{n}.log`, so the arena's event loop does no work for the logs.
On Linux the supervisor is a child subreaper, so every orphaned descendant of the bot becomes its child.
It stops everything when the arena closes the pipe (`stop_all`), when the arena dies (the pipe closes,
and SIGTERM arrives as its parent-death signal), or when the bot exits: SIGTERM to the bot's group and
to every child it has, `grace` seconds, then SIGKILL until no child is left. The bot's own parent-death
signal is SIGKILL, so a supervisor that is itself killed takes the bot with it; only the bot's escaped
descendants would then survive, which takes a SIGKILL aimed at the supervisor itself. Elsewhere than
Linux the pipe still makes the supervisor stop the bot's group when the arena dies, without death
signals or adopted orphans.

The supervisors of `stop_all` all stop at once, so stopping takes one grace period, not one per bot.
`stop_all` must be awaited in the event loop that started the bots, before it closes: asyncio would
otherwise kill the supervisors outright, and Linux sends the parent-death signal when the thread that
started a process exits, which is the loop's thread.

A log keeps at most `log_limit_bytes` of a process's output: the first half, a line saying how many
bytes were dropped, and the last half, so a chatty bot cannot fill the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import structlog

from arena.errors import ArenaError
from arena.ladder.entries import BotEntry
from arena.runner import split_addresses
from arena.runner.connection import HandshakeError, handshake, open_channel

log = structlog.get_logger("local_bots")


class BotStartError(ArenaError, RuntimeError):
    """A local bot that did not start: its process exited, or it never answered the handshake."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


SUPERVISOR: Final = Path(__file__).with_name("supervisor.py")
LOG_LIMIT_BYTES: Final = 2 * 1024 * 1024
"""The default cap of a bot process's log: its first MiB and its last MiB."""
STOP_MARGIN_SECONDS: Final = 5.0
"""How long past the grace period a supervisor may take to stop before the arena kills it."""


def command_arguments(command: str, port: int) -> list[str]:
    """The argument list of a registered command for `port`."""
    if "{port}" not in command:
        raise ValueError(f"a bot command must contain {{port}} where the port goes, got {command!r}")
    arguments = shlex.split(command.replace("{port}", str(port)))
    if arguments and arguments[0] in ("python", "python3"):
        arguments[0] = sys.executable
    return arguments


async def wait_until_ready(
    address: str, timeout: float, process: asyncio.subprocess.Process | None = None
) -> None:
    """The arena's handshake, tried again with backoff until it answers or `timeout` seconds pass (or
    `process` exits).

    :raises BotStartError: with the reason.
    """

    def exited() -> str | None:
        if process is not None and process.returncode is not None:
            return f"the bot process exited with status {process.returncode}"
        return None

    channel = open_channel(address)
    try:
        await handshake(channel, address, timeout, attempts=None, give_up=exited, first_delay=0.05)
    except HandshakeError as error:
        raise BotStartError(error.detail) from None
    finally:
        await channel.close(grace=None)


class _Running:
    """One started bot: its supervisor's process, where the bot serves, where its output goes."""

    def __init__(self, process: asyncio.subprocess.Process, address: str, log_path: Path) -> None:
        self.process = process
        self.address = address
        self.log_path = log_path
        self.busy = False


class LocalBots:
    """The processes of the command bots of one ladder run: one process per seat being played.

    A match takes a process for every seat its bot plays (`acquire`) and gives them back when it ends
    (`release`), so no process ever holds two seats of a match, and concurrent matches get processes of
    their own. Idle processes are kept for the next match. `stop_all` must be awaited before the event
    loop ends: it stops them all at once, each given `grace` seconds between SIGTERM and SIGKILL. Each
    process's log keeps at most `log_limit_bytes` of its output (the first half and the last half).
    """

    def __init__(
        self,
        log_folder: Path,
        startup_timeout: float = 30.0,
        grace: float = 5.0,
        log_limit_bytes: int = LOG_LIMIT_BYTES,
    ) -> None:
        if log_limit_bytes < 1024:
            raise ValueError(f"a log limit below 1024 bytes keeps nothing useful, got {log_limit_bytes}")
        self.log_folder = log_folder
        self.startup_timeout = startup_timeout
        self.grace = grace
        self.log_limit_bytes = log_limit_bytes
        self._pools: dict[str, list[_Running]] = {}
        self._starting: set[_Running] = set()
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
            for running in [running for running in pool if running.process.returncode is not None]:
                log.warning(
                    "local_bot_restarted",
                    bot=bot.name,
                    status=running.process.returncode,
                    log_file=str(running.log_path),
                )
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
        if shutil.which(arguments[0]) is None:
            program = arguments[0]
            raise BotStartError(
                f"cannot start bot {name!r} ({' '.join(arguments)}): {program!r} is not an executable program"
            )
        self.log_folder.mkdir(parents=True, exist_ok=True)
        self._started += 1
        log_path = self.log_folder / f"{name}-{self._started}.log"
        supervisor = [sys.executable, "-I", str(SUPERVISOR), str(os.getpid()), str(log_path)]
        try:
            process = await asyncio.create_subprocess_exec(
                *supervisor,
                str(self.log_limit_bytes),
                str(self.grace),
                *arguments,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            raise BotStartError(f"cannot start bot {name!r} ({' '.join(arguments)}): {error}") from None
        running = _Running(process, f"127.0.0.1:{port}", log_path)
        # Until it answers, only stop_all knows of it (if we are cancelled meanwhile).
        self._starting.add(running)
        try:
            await wait_until_ready(running.address, self.startup_timeout, process)
        except BotStartError as error:
            self._starting.discard(running)
            await self._stop(running)
            raise BotStartError(
                f"bot {name!r} did not start: {error} (its output is in {log_path})"
            ) from None
        self._starting.discard(running)
        log.info(
            "local_bot_started",
            bot=name,
            supervisor_pid=process.pid,
            address=running.address,
            log_file=str(log_path),
        )
        return running

    async def _stop(self, running: _Running) -> None:
        """Ask the supervisor to stop its bot (by closing its pipe) and wait for it; kill it (and so the
        bot, by its death signal) if it takes much longer than the grace period."""
        process = running.process
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), self.grace + STOP_MARGIN_SECONDS)
        except TimeoutError:
            log.error("local_bot_supervisor_killed", supervisor_pid=process.pid, reason="too slow to stop")
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def stop_all(self) -> None:
        """Stop every process started here, all at once: SIGTERM, then SIGKILL after the grace period,
        to the bot's process group and to every process it started."""
        everything = [*self._starting, *(running for pool in self._pools.values() for running in pool)]
        self._pools.clear()
        self._starting.clear()
        started = time.monotonic()
        await asyncio.gather(*(self._stop(running) for running in everything))
        if everything:
            log.info(
                "local_bots_stopped", count=len(everything), seconds=round(time.monotonic() - started, 2)
            )
