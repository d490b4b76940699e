"""Starting and stopping one bot process of a run, under its supervisor.

No process the arena starts may outlive it, even when it is killed with SIGKILL and even when a bot
forks helpers that leave its process group with setsid. So each bot runs under a supervisor
(supervisor.py beside this module, standard library only), started in a session of its own with a pipe
from the arena on its standard input; the supervisor starts the bot in a process group of its own and
writes its output to `{log_folder}/{run}/{name}-{n}.log`, so the arena's event loop does no work for the
logs. On Linux the supervisor is a child subreaper, so every orphaned descendant of the bot becomes its
child. It stops everything when the arena closes the pipe (`Processes.stop`), when the arena dies (the
pipe closes, and SIGTERM arrives as its parent-death signal), or when the bot exits: SIGTERM to the bot's
group and to every child it has, `grace` seconds, then SIGKILL until no child is left. The bot's own
parent-death signal is SIGKILL, so a supervisor that is itself killed takes the bot with it; only the
bot's escaped descendants would then survive, which takes a SIGKILL aimed at the supervisor itself.
Elsewhere than Linux the pipe still makes the supervisor stop the bot's group when the arena dies, without
death signals or adopted orphans.

A log keeps at most `log_limit_bytes` of a process's output: the first half, a line saying how many
bytes were dropped, and the last half, so a chatty bot cannot fill the disk.

A bot whose `Launch` says so (every uploaded bot unless registered with `--sandbox off`) runs in the
sandbox (arena/sandbox/bubblewrap.py) under its supervisor: no network, so it listens on a Unix-domain
socket in its own capped /tmp, which the arena reaches through the sandbox's root once it is there and is
a socket (arena/sandbox/sockets.py). An arena running as root gives each sandboxed process a user id of its
own. Its output past the sandbox's limit per match is dropped (the supervisor is told when each match
begins). Where bubblewrap cannot run, a sandboxed bot is not started, and the error says why. An
unsandboxed command with `{socket}` listens in a folder of its own that the arena makes in the host's
temporary folder and removes when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import structlog

from arena.ladder.bots.commands import (
    BotStartError,
    Launch,
    SandboxUnavailableError,
    command_arguments,
    free_port,
    read_port_file,
    wait_for_sandboxed_socket,
    wait_for_socket,
    wait_until_ready,
)
from arena.sandbox import bubblewrap, folders, sockets
from fiftysix.v1 import bot_pb2 as pb

log = structlog.get_logger("local_bots")


SUPERVISOR: Final = Path(__file__).with_name("supervisor.py")
LOG_LIMIT_BYTES: Final = 2 * 1024 * 1024
"""The default cap of a bot process's log: its first MiB and its last MiB."""
STOP_MARGIN_SECONDS: Final = 5.0
"""How long past the grace period a supervisor may take to stop before the arena kills it."""
ANSWER_SECONDS: Final = 5.0
"""How long a supervisor has to answer that a match is over (it answers at once: it only reads the pipe
it polls)."""


@dataclass(frozen=True, slots=True)
class CapturedOutput:
    """What a bot process wrote (standard output and error) during one match, as its supervisor kept it:
    the first `--bot-output` bytes, as bytes, and how many more it dropped."""

    output: bytes
    dropped: int
    version: int | None
    """The upload version the process runs (None: a host's command)."""


def match_path(log_path: Path) -> Path:
    """Where the supervisor of the process logging to `log_path` keeps its output of the match it plays."""
    return log_path.with_suffix(".match")


class Running:
    """One started bot: its supervisor's process, where the bot serves, where its output goes, its answer
    to Describe, and whether a match holds it."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        address: str,
        log_path: Path,
        socket_folder: Path | None = None,
        sandboxed: bool = False,
    ) -> None:
        self.process = process
        self.address = address
        self.log_path = log_path
        self.socket_folder = socket_folder
        """The host folder of its socket, for an unsandboxed `{socket}` command (removed when it stops)."""
        self.socket_descriptor: int | None = None
        """An O_PATH descriptor of a sandboxed process's socket, which its address names (closed when it
        stops: until then it keeps the sandbox's /tmp in memory)."""
        self.sandboxed = sandboxed
        self.uid: int | None = None
        """The user id it runs as in the sandbox, when the arena runs as root."""
        self.retire: str | None = None
        """Why it is stopped rather than kept when it is given back: a sandboxed process that faulted, or
        one of a launch since replaced."""
        self.busy = True
        """Held by a match, or still starting."""
        self.description: pb.DescribeResponse | None = None
        """The bot's answer to the handshake once it has started."""
        self.released_at = 0.0
        """When it last became idle, so that the least recently used goes first."""
        self.channel: grpc.aio.Channel | None = None
        """The arena's channel to it, kept across its matches (opened by the first)."""
        self.deals: set[str] = set()
        """The deals it has played (`acquire`'s `deals` of each of its matches): it never plays them again."""
        self.launch: Launch | None = None
        """How it was started: once its bot starts otherwise (a new upload), it plays no more matches."""
        self.matches = 0
        """The matches begun with it (the supervisor's `match N`: the last is the one it plays)."""

    @property
    def match_path(self) -> Path:
        """Where its supervisor keeps its output of the match it plays (`--match-file`)."""
        return match_path(self.log_path)

    @property
    def shown_address(self) -> str:
        """Its address as messages for its author name it: a sandboxed bot's socket as the bot knows it
        (the arena reaches it through a descriptor of its own, a path of the arena's process), else the
        address itself."""
        return f"unix:{bubblewrap.SOCKET_PATH}" if self.sandboxed else self.address


class Processes:
    """The processes of one run as they start and stop: where their logs and port files go (`log_folder`),
    the ports picked for them, their sockets' folders and the sandbox's user ids. Each process it starts
    joins `pools` (busy, under its bot's name) before it answers, so that whoever stops them all finds it
    even while it starts."""

    def __init__(
        self,
        pools: dict[str, list[Running]],
        log_folder: Path,
        startup_timeout: float,
        grace: float,
        log_limit_bytes: int,
        port_range: tuple[int, int] | None,
        sandbox: bubblewrap.Sandbox,
    ) -> None:
        self._pools = pools
        self.log_folder = log_folder
        self.startup_timeout = startup_timeout
        self.grace = grace
        self.log_limit_bytes = log_limit_bytes
        self.port_range = port_range
        self.sandbox = sandbox
        self._socket_root: Path | None = None
        """A short folder of our own for sockets (a socket path has at most 107 bytes), made when needed."""
        self._uids: set[int] = set()
        """User ids given to sandboxed processes still running (an arena running as root)."""
        self._reserved: set[int] = set()
        """Ports picked for processes still being started (not yet in a pool)."""
        self.started = 0
        """Processes started so far (each the start of one bot process)."""

    async def start(self, name: str, launch: Launch) -> Running:
        """Start one process of `name` as `launch` says and wait until it answers the handshake; it joins
        its pool busy, so that whoever stops them all finds it even while it starts."""
        running = await self._start_process(name, launch)
        running.launch = launch
        return running

    async def _start_process(self, name: str, launch: Launch) -> Running:
        self.log_folder.mkdir(parents=True, exist_ok=True)
        self.started += 1
        log_path = self.log_folder / f"{name}-{self.started}.log"
        if launch.sandboxed or "{socket}" in launch.command:
            return await self._start_on_socket(name, launch, log_path)
        command = launch.command
        port_file = self.log_folder / f"{name}-{self.started}.port" if "{port_file}" in command else None
        # Never the port of another process of ours, even one that has not bound it yet: started at
        # once, two bots would get the same free port (and gRPC's SO_REUSEPORT would let both bind it).
        handed_out = {
            int(running.address.rsplit(":", 1)[1])
            for pool in self._pools.values()
            for running in pool
            if not running.address.startswith("unix:")
        }
        port = 0 if port_file is not None else free_port(self.port_range, handed_out | self._reserved)
        self._reserved.add(port)
        try:
            return await self._start_on(name, command, port, port_file, log_path)
        finally:
            self._reserved.discard(port)

    async def _start_on(
        self, name: str, command: str, port: int, port_file: Path | None, log_path: Path
    ) -> Running:
        """The start itself, on a port already picked (0: the bot reports its own in `port_file`)."""
        arguments = command_arguments(command, port, port_file)
        if shutil.which(arguments[0]) is None:
            program = arguments[0]
            raise BotStartError(
                f"cannot start bot {name!r} ({' '.join(arguments)}): {program!r} is not an executable program"
            )
        process = await self._supervise(name, arguments, log_path)
        running = Running(process, f"127.0.0.1:{port}", log_path)

        async def listening() -> None:
            if port_file is not None:
                reported = await read_port_file(port_file, self.startup_timeout, process)
                running.address = f"127.0.0.1:{reported}"

        return await self._join(name, running, listening)

    async def _join(self, name: str, running: Running, listening: Callable[[], Awaitable[None]]) -> Running:
        """Add a process just started to its pool (busy, so that it is found and stopped) and wait until it
        answers the handshake, once `listening` has waited for where it listens; one that does not is
        stopped and taken out again."""
        pool = self._pools.setdefault(name, [])
        pool.append(running)
        started = time.monotonic()
        try:
            await listening()
            left = self.startup_timeout - (time.monotonic() - started)
            running.description = await wait_until_ready(
                running.address, max(0.1, left), running.process, running.shown_address
            )
        except BotStartError as error:
            if running in pool:
                pool.remove(running)
            await self.stop(running)
            raise BotStartError(
                f"bot {name!r} did not start: {error} (its output is in {running.log_path})",
                reason=f"bot {name!r} did not start: {error.reason}",
                log_path=running.log_path,
            ) from None
        log.info(
            "local_bot_started",
            bot=name,
            supervisor_pid=running.process.pid,
            address=running.address,
            sandboxed=running.sandboxed,
            log_file=str(running.log_path),
            seconds=round(time.monotonic() - started, 2),
        )
        return running

    async def _supervise(
        self,
        name: str,
        arguments: Sequence[str],
        log_path: Path,
        sandboxed: bool = False,
        folder: Path | None = None,
        pass_fds: Sequence[int] = (),
    ) -> asyncio.subprocess.Process:
        """Start `arguments` under a supervisor, in `folder` when given (a sandboxed bot with the sandbox's
        environment alone, and `pass_fds` passed on to bwrap); its output is counted and kept per match
        (`--bot-output`, for every bot the arena starts)."""
        supervisor = [
            sys.executable,
            "-I",
            str(SUPERVISOR),
            f"--match-output={self.sandbox.limits.output_bytes}",
            f"--match-file={match_path(log_path).resolve()}",
        ]
        supervisor += [f"--pass-fd={descriptor}" for descriptor in pass_fds]
        try:
            return await asyncio.create_subprocess_exec(
                *supervisor,
                str(os.getpid()),
                str(log_path.resolve()),
                str(self.log_limit_bytes),
                str(self.grace),
                *arguments,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                env=bubblewrap.ENVIRONMENT if sandboxed else None,
                cwd=folder,
                pass_fds=tuple(pass_fds),
            )
        except OSError as error:
            raise BotStartError(
                f"cannot start bot {name!r} ({' '.join(arguments)}): {error}",
                reason=f"cannot start bot {name!r}: {error.strerror or 'the system refused'}",
            ) from None

    async def _start_on_socket(self, name: str, launch: Launch, log_path: Path) -> Running:
        """Start one process of `name` listening on a socket: in the sandbox when its launch says so (the
        socket in its own /tmp), else in a host folder of its own."""
        if not launch.sandboxed:
            return await self._start_unsandboxed_on_socket(name, launch, log_path)
        as_root = bubblewrap.privileged()
        problem = bubblewrap.unavailable_reason(as_root)
        if problem is not None:
            raise SandboxUnavailableError(
                f"bot {name!r} runs in the sandbox, but {problem}; to run it unsandboxed anyway (only code "
                f"you trust), register it with --sandbox off"
            )
        if "{socket}" not in launch.command:
            raise BotStartError(
                f"bot {name!r} runs in the sandbox, which has no network: its command needs {{socket}}"
            )
        uid = None
        if as_root:
            # At random: two arenas on one host rarely pick the same (that would only pool their limits).
            uid = random.choice(bubblewrap.SANDBOX_UIDS)
            while uid in self._uids:
                uid = random.choice(bubblewrap.SANDBOX_UIDS)
            self._uids.add(uid)
        arguments = command_arguments(launch.command, 0, socket=bubblewrap.SOCKET_PATH)
        info_read, info_write = os.pipe()  # bwrap says there where its sandbox runs
        try:
            with bubblewrap.filter_descriptor() as filter_fd:
                sandboxed = bubblewrap.command_line(
                    self.sandbox, arguments, launch.folder, uid, filter_fd=filter_fd, info_fd=info_write
                )
                process = await self._supervise(
                    name, sandboxed, log_path, sandboxed=True, pass_fds=(filter_fd, info_write)
                )
        except BaseException:
            os.close(info_read)
            self._uids.discard(uid or 0)
            raise
        finally:
            os.close(info_write)
        running = Running(process, "unix:", log_path, sandboxed=True)
        running.uid = uid

        async def listening() -> None:
            descriptor = await wait_for_sandboxed_socket(info_read, self.startup_timeout, process)
            running.socket_descriptor = descriptor
            running.address = sockets.address(descriptor)

        return await self._join(name, running, listening)

    async def _start_unsandboxed_on_socket(self, name: str, launch: Launch, log_path: Path) -> Running:
        """Start one process of a trusted `{socket}` command, its socket in a host folder of its own."""
        if self._socket_root is None:
            self._socket_root = Path(tempfile.mkdtemp(prefix="arena-sockets-"))
        socket_folder = self._socket_root / str(self.started)
        socket_folder.mkdir(mode=0o700)
        socket = socket_folder / bubblewrap.SOCKET_NAME
        arguments = command_arguments(launch.command, 0, socket=str(socket))
        try:
            process = await self._supervise(name, arguments, log_path, folder=launch.folder)
        except BotStartError:
            self._forget_socket_folder(socket_folder)
            raise
        running = Running(process, f"unix:{socket}", log_path, socket_folder)
        return await self._join(name, running, lambda: wait_for_socket(socket, self.startup_timeout, process))

    def _forget_socket_folder(self, socket_folder: Path) -> None:
        """Remove a socket folder with whatever its bot left there."""
        if not folders.remove_folder(socket_folder):
            log.warning("local_bot_folder_left", folder=str(socket_folder))

    def begin_match(self, running: Running) -> None:
        """Tell `running`'s supervisor a match of it begins: its output is counted and kept from here."""
        running.matches += 1
        tell(running, b"match %d\n" % running.matches)

    async def match_output(self, running: Running) -> CapturedOutput | None:
        """End the match `running` plays (its supervisor reads what the bot wrote before now) and read its
        output of that match; None when its supervisor did not answer (killed, or too slow)."""
        number = running.matches
        tell(running, b"end %d\n" % number)
        dropped = await _answer(running, number)
        if dropped is None:
            log.warning(
                "bot_output_lost", log_file=str(running.log_path), reason="the supervisor did not answer"
            )
            return None
        try:
            with running.match_path.open("rb") as kept:
                output = kept.read(self.sandbox.limits.output_bytes)
        except OSError as error:
            log.warning("bot_output_lost", log_file=str(running.log_path), reason=str(error))
            return None
        return CapturedOutput(output, dropped, None if running.launch is None else running.launch.version)

    async def stop(self, running: Running) -> None:
        """Ask the supervisor to stop its bot (by closing its pipe) and wait for it; kill it (and so the
        bot, by its death signal) if it takes much longer than the grace period."""
        channel, running.channel = running.channel, None
        if channel is not None:
            await channel.close(grace=None)
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
        running.match_path.unlink(missing_ok=True)
        if running.socket_descriptor is not None:
            os.close(running.socket_descriptor)
            running.socket_descriptor = None
        if running.socket_folder is not None:
            self._forget_socket_folder(running.socket_folder)
        self._uids.discard(running.uid or 0)

    def close(self) -> None:
        """Remove the folder of the sockets (every process stopped)."""
        if self._socket_root is not None:
            folders.remove_folder(self._socket_root)
            self._socket_root = None


def tell(running: Running, line: bytes) -> None:
    """Write `line` to a supervisor's pipe (`match N`, `end N`: supervisor.py)."""
    stdin = running.process.stdin
    if stdin is not None and not stdin.is_closing():
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(line)


async def _answer(running: Running, number: int) -> int | None:
    """The supervisor's answer that match `number` is over: the bytes of it dropped, or None (it knows
    no such match, is gone, or did not answer within ANSWER_SECONDS). Answers to matches before it (one
    cut short) are passed over."""
    answers = running.process.stdout
    if answers is None:
        return None
    try:
        async with asyncio.timeout(ANSWER_SECONDS):
            while line := await answers.readline():
                word, _, rest = line.decode("ascii", "replace").strip().partition(" ")
                answered, _, dropped = rest.partition(" ")
                if answered == str(number):
                    return int(dropped) if word == "ended" and dropped.isdecimal() else None
    except (TimeoutError, ValueError):  # ValueError: a line past the reader's limit
        return None
    return None
