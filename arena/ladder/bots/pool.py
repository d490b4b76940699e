"""Bots that the arena starts itself from a registered command, so a ladder needs no hand-started
processes.

A command holds `{port_file}` or `{port}`. `{port_file}` is a path the arena chooses; the bot listens
on any port and writes the port there once it serves (atomically: a temporary file, then a rename), as
`python -m sample_bots.rule_bot --port 0 --port-file {port_file}` does; `{port}` in such a command is 0.
Otherwise `{port}` is replaced by a port the arena finds free (another process may take it before the bot
binds it: `{port_file}` has no such race). A first word `python` or `python3` is replaced by the
interpreter running the arena, so the sample bots run in the arena's own environment. The arena waits
until the bot answers the handshake and keeps its answer to Describe for the matches it plays, replaces a
bot whose process has died before its next match (as cutechess's `-recover` does), and stops every
process it started when the ladder ends. The processes one call needs start at once; the idle ones past
a limit are stopped, least recently used first.

No process the arena starts may outlive it, even when it is killed with SIGKILL and even when a bot
forks helpers that leave its process group with setsid. So each bot runs under a supervisor
(supervisor.py beside this module, standard library only), started in a session of its own with a pipe
from the arena on its standard input; the supervisor starts the bot in a process group of its own and
writes its output to `{log_folder}/{run}/{name}-{n}.log`, so the arena's event loop does no work for the
logs. Each run (each `LocalBots`) names its files in a folder of its own, `run`: the runner's name, which
is also the owner of its leases in the ladder (scheduler.py), so that two runners sharing a ladder and its
logs folder never write each other's logs, read or delete each other's port files, nor reach each other's
bots; a run that crashed leaves its folder as it was, and no other run touches it.
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

A bot whose `Launch` says so (every uploaded bot unless registered with `--sandbox off`) runs in the
sandbox (arena/sandbox/bubblewrap.py) under its supervisor: no network, so it listens on a Unix-domain
socket in its own capped /tmp, which the arena reaches through the sandbox's root once it is there and is
a socket (arena/sandbox/sockets.py). An arena running as root gives each sandboxed process a user id of its
own. Its output past the sandbox's limit per match is dropped (the supervisor is told when each match
begins), and a sandboxed process whose match ended with a fault of its own is stopped rather than kept:
whatever it left running goes with it. Where bubblewrap cannot run, a sandboxed bot is not started, and
the error says why. An unsandboxed command with `{socket}` listens in a folder of its own that the arena
makes in the host's temporary folder and removes when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import secrets
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final

import grpc
import structlog

from arena.ladder.bots.commands import (
    BotStartError,
    Launch,
    command_arguments,
    free_port,
    read_port_file,
    wait_for_sandboxed_socket,
    wait_for_socket,
    wait_until_ready,
)
from arena.ladder.store import BotEntry
from arena.runner import open_channel, split_addresses
from arena.sandbox import bubblewrap, folders, sockets
from fiftysix.v1 import bot_pb2 as pb

log = structlog.get_logger("local_bots")


SUPERVISOR: Final = Path(__file__).with_name("supervisor.py")
LOG_LIMIT_BYTES: Final = 2 * 1024 * 1024
"""The default cap of a bot process's log: its first MiB and its last MiB."""
STOP_MARGIN_SECONDS: Final = 5.0
"""How long past the grace period a supervisor may take to stop before the arena kills it."""


IDLE_LIMIT: Final = 4
"""The default number of idle processes kept for later matches, over all bots."""
RUN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""What a run's name may be: one plain folder name."""


def new_run_name() -> str:
    """A name for a run of its own: `HOST-PID-RANDOM` (the host's name as a folder name may hold it), which
    no other run on any host shares, before it, beside it or after it."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64].strip(".") or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(4)}"


def idle_limit_for(concurrency: int, players: int, teams: int = 2) -> int:
    """The idle processes a ladder keeps: room for a match's processes per worker, so that concurrent
    matches do not stop and start them over and over (a start takes about a second), and for every
    rotation of a set (each needs processes that have not played its deals: `teams` rotations)."""
    return max(IDLE_LIMIT, max(concurrency, teams) * players)


_BROKEN: Final = (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN)
"""Channel states after which a kept channel is replaced rather than waited on (a channel in transient
failure retries with a growing backoff)."""


class _Running:
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


class LocalBots:
    """The processes of the command bots of one ladder run: one process per seat being played, and at most
    `idle_limit` idle ones kept for later matches.

    A match takes a process for every seat its bot plays (`acquire`) and gives them back when it ends
    (`release`), so no process ever holds two seats of a match, and concurrent matches get processes of
    their own. No process plays the same deals twice: a process that played a match on some deals (the
    rotations of a duplicate set share them, as does any match with the same seed) is never given to
    another match on them, so what it remembers of a hand cannot serve it later; it stays in the pool
    for matches on other deals. The processes a call needs start at once. Idle processes are kept for
    the next match, at most `idle_limit` of them over all bots: past that the least recently used are
    stopped, so the processes alive never exceed those held by matches plus `idle_limit`. `stop_all`
    must be awaited before the event loop ends: it stops them all at once, each given `grace` seconds
    between SIGTERM and SIGKILL. Each process's log keeps at most `log_limit_bytes` of its output (the
    first half and the last half).
    """

    def __init__(
        self,
        log_folder: Path,
        startup_timeout: float = 30.0,
        grace: float = 5.0,
        log_limit_bytes: int = LOG_LIMIT_BYTES,
        idle_limit: int = IDLE_LIMIT,
        port_range: tuple[int, int] | None = None,
        sandbox: bubblewrap.Sandbox | None = None,
        launch_of: Callable[[BotEntry], Launch] | None = None,
        isolate_deals: bool = True,
        run: str | None = None,
    ) -> None:
        """`log_folder`: where the runs sharing it keep their bots' files, this one in `log_folder/run/`
        (`log_folder` afterwards); `run`: this run's name (default: `new_run_name()`), which a ladder uses
        as the owner of its leases too. `port_range`: the ports `{port}` commands get (default: any free
        port); `{port_file}` commands choose their own (they bind port 0 and report it). `sandbox`: how
        sandboxed bots run (default limits). `launch_of`: how a registered bot starts (default: its
        command, unsandboxed), so that uploads and the sandbox setting of each bot, kept beside the
        register, reach here. `isolate_deals=False` gives a process matches on deals it has played (the
        arena before the fair-play fix): only for the control that shows the leak it closes, and for
        measuring its cost."""
        if port_range is not None and not 1 <= port_range[0] <= port_range[1] <= 65535:
            raise ValueError(f"a port range is LO-HI within 1-65535, got {port_range}")
        if log_limit_bytes < 1024:
            raise ValueError(f"a log limit below 1024 bytes keeps nothing useful, got {log_limit_bytes}")
        if idle_limit < 0:
            raise ValueError(f"the idle limit is a number of processes, 0 or more; got {idle_limit}")
        self.run = run if run is not None else new_run_name()
        if not RUN_NAME.fullmatch(self.run):
            raise ValueError(f"a run's name is a folder name of letters, digits, . _ and -, got {self.run!r}")
        self.log_folder = log_folder / self.run
        """This run's own folder, where its bots' logs and port files go."""
        self.startup_timeout = startup_timeout
        self.grace = grace
        self.log_limit_bytes = log_limit_bytes
        self.idle_limit = idle_limit
        self.port_range = port_range
        self.sandbox = sandbox if sandbox is not None else bubblewrap.Sandbox()
        self.launch_of = launch_of if launch_of is not None else _command_of
        self.isolate_deals = isolate_deals
        self._socket_root: Path | None = None
        """A short folder of our own for sockets (a socket path has at most 107 bytes), made when needed."""
        self._uids: set[int] = set()
        """User ids given to sandboxed processes still running (an arena running as root)."""
        self._reserved: set[int] = set()
        """Ports picked for processes still being started (not yet in a pool)."""
        self._pools: dict[str, list[_Running]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._started = 0

    @property
    def started(self) -> int:
        """Processes started so far (each the start of one bot process)."""
        return self._started

    @property
    def running(self) -> int:
        """Processes started and not yet asked to stop: held by matches, starting, or idle."""
        return sum(len(pool) for pool in self._pools.values())

    @property
    def idle(self) -> int:
        """Idle processes kept for later matches."""
        return sum(not running.busy for pool in self._pools.values() for running in pool)

    def described(self, addresses: Sequence[str]) -> dict[str, pb.DescribeResponse]:
        """The answers to Describe of the processes at `addresses` (those the arena started), given when
        they started: a match need not ask them again."""
        return {
            running.address: running.description
            for pool in self._pools.values()
            for running in pool
            if running.address in addresses and running.description is not None
        }

    def channels(self, addresses: Sequence[str]) -> dict[str, grpc.aio.Channel]:
        """Channels to the processes at `addresses` (those the arena started), kept across their matches so
        that a match does not connect anew: one opened now where there is none yet, or where the last one
        failed (its connection lost, or a match ended with a fault of that process)."""
        channels = {}
        for pool in self._pools.values():
            for running in pool:
                if running.address not in addresses:
                    continue
                if running.channel is not None and running.channel.get_state() in _BROKEN:
                    self._close_channel(running)
                if running.channel is None:
                    running.channel = open_channel(running.address)
                channels[running.address] = running.channel
        return channels

    def forget_channels(self, addresses: Sequence[str]) -> None:
        """Close the kept channels to `addresses` (a match ended with a fault of theirs): the next match
        of those processes connects anew, so nothing a bot left on a connection carries over. Sandboxed
        processes among them are stopped when given back."""
        for pool in self._pools.values():
            for running in pool:
                if running.address in addresses:
                    self._close_channel(running)
                    if running.sandboxed:
                        running.retire = "faulted"

    def _close_channel(self, running: _Running) -> None:
        channel, running.channel = running.channel, None
        if channel is not None:
            self._in_background(channel.close(grace=None))

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` without waiting for it here; `stop_all` waits for it."""
        task = asyncio.get_running_loop().create_task(work)
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def acquire(self, bot: BotEntry, count: int, deals: str | None = None) -> list[str]:
        """Where `bot` plays `count` seats: its registered addresses as they are (the match gives seat k
        of a team the k-th), or `count` distinct idle processes of its command (those missing started
        now, all at once; dead ones replaced). `deals` names the deals of the match (its seed, as
        text): only processes that have not played them are taken, and they are marked as having played
        them; None (a check before a set) takes any and marks none.

        :raises BotStartError: a process did not start (the others started for this call are stopped).
        """
        if bot.address is not None:
            return list(split_addresses(bot.address))
        assert bot.command is not None
        launch = self.launch_of(bot)
        lock = self._locks.setdefault(bot.name, asyncio.Lock())
        async with lock:
            pool = self._pools.setdefault(bot.name, [])
            dead = [running for running in pool if running.process.returncode is not None]
            for running in dead:
                log.warning(
                    "local_bot_restarted",
                    bot=bot.name,
                    status=running.process.returncode,
                    log_file=str(running.log_path),
                )
                pool.remove(running)
            await asyncio.gather(*(self._stop(running) for running in dead))  # its pipe and channel
            self._retire_outdated(bot.name, pool, launch)
            # Newest first, so that the least recently used stay idle and are stopped first.
            if not self.isolate_deals:
                deals = None
            fresh = [running for running in pool if not running.busy and deals not in running.deals]
            taken = sorted(fresh, key=lambda r: -r.released_at)[:count]
            for running in taken:
                running.busy = True  # before any await: a release meanwhile must not stop them
            started = await asyncio.gather(
                *(self._start(bot.name, launch) for _ in range(count - len(taken))),
                return_exceptions=True,
            )
            failures = [outcome for outcome in started if isinstance(outcome, BaseException)]
            if failures:
                fresh = [outcome for outcome in started if isinstance(outcome, _Running)]
                for running in fresh:
                    pool.remove(running)
                await asyncio.gather(*(self._stop(running) for running in fresh))
                self._give_back(taken)
                raise failures[0]
            taken.extend(outcome for outcome in started if isinstance(outcome, _Running))
            for running in taken:
                if deals is not None:
                    running.deals.add(deals)
                _tell(running, b"match\n")  # the supervisor counts each match's output from here
            return [running.address for running in taken]

    def _retire_outdated(self, name: str, pool: list[_Running], launch: Launch) -> None:
        """Stop the processes of `name` started otherwise than it starts now (a version since replaced, its
        files perhaps pruned): the idle ones now, in the background, those held by a match once it ends."""
        for running in [running for running in pool if running.launch != launch]:
            running.retire = "outdated"
            if not running.busy:
                pool.remove(running)
                log.info("local_bot_retired", bot=name, address=running.address, reason="outdated")
                self._in_background(self._stop(running))

    def release(self, addresses: Sequence[str]) -> None:
        """Give processes back after a match; the least recently used idle ones past `idle_limit` are
        stopped (in the background: `stop_all` waits for them)."""
        self._give_back(
            [running for pool in self._pools.values() for running in pool if running.address in addresses]
        )

    def _give_back(self, processes: Sequence[_Running]) -> None:
        now = time.monotonic()
        for running in processes:
            running.busy = False
            running.released_at = now
            if running.retire is not None:
                for name, pool in self._pools.items():
                    if running in pool:
                        pool.remove(running)
                        reason = running.retire
                        log.info("local_bot_retired", bot=name, address=running.address, reason=reason)
                        self._in_background(self._stop(running))
        idle = sorted(
            (
                (running.released_at, name, running)
                for name, pool in self._pools.items()
                for running in pool
                if not running.busy
            ),
            key=lambda entry: entry[0],
        )
        for _, name, running in idle[: max(0, len(idle) - self.idle_limit)]:
            self._pools[name].remove(running)
            log.info("local_bot_retired", bot=name, address=running.address, reason="idle limit")
            self._in_background(self._stop(running))

    async def _start(self, name: str, launch: Launch) -> _Running:
        """Start one process of `name` as `launch` says and wait until it answers the handshake; it joins
        the pool busy, so that `stop_all` finds it even while it starts."""
        running = await self._start_process(name, launch)
        running.launch = launch
        return running

    async def _start_process(self, name: str, launch: Launch) -> _Running:
        self.log_folder.mkdir(parents=True, exist_ok=True)
        self._started += 1
        log_path = self.log_folder / f"{name}-{self._started}.log"
        if launch.sandboxed or "{socket}" in launch.command:
            return await self._start_on_socket(name, launch, log_path)
        command = launch.command
        port_file = self.log_folder / f"{name}-{self._started}.port" if "{port_file}" in command else None
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
    ) -> _Running:
        """The start itself, on a port already picked (0: the bot reports its own in `port_file`)."""
        arguments = command_arguments(command, port, port_file)
        if shutil.which(arguments[0]) is None:
            program = arguments[0]
            raise BotStartError(
                f"cannot start bot {name!r} ({' '.join(arguments)}): {program!r} is not an executable program"
            )
        process = await self._supervise(name, arguments, log_path)
        running = _Running(process, f"127.0.0.1:{port}", log_path)

        async def listening() -> None:
            if port_file is not None:
                reported = await read_port_file(port_file, self.startup_timeout, process)
                running.address = f"127.0.0.1:{reported}"

        return await self._join(name, running, listening)

    async def _join(self, name: str, running: _Running, listening: Callable[[], Awaitable[None]]) -> _Running:
        """Add a process just started to the pool (busy, so that `stop_all` finds it) and wait until it
        answers the handshake, once `listening` has waited for where it listens; one that does not is
        stopped and taken out again."""
        pool = self._pools.setdefault(name, [])
        pool.append(running)
        started = time.monotonic()
        try:
            await listening()
            left = self.startup_timeout - (time.monotonic() - started)
            running.description = await wait_until_ready(running.address, max(0.1, left), running.process)
        except BotStartError as error:
            if running in pool:
                pool.remove(running)
            await self._stop(running)
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
        environment alone, its output counted per match, and `pass_fds` passed on to bwrap)."""
        supervisor = [sys.executable, "-I", str(SUPERVISOR)]
        if sandboxed:
            supervisor.append(f"--match-output={self.sandbox.limits.output_bytes}")
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
                stdout=asyncio.subprocess.DEVNULL,
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

    async def _start_on_socket(self, name: str, launch: Launch, log_path: Path) -> _Running:
        """Start one process of `name` listening on a socket: in the sandbox when its launch says so (the
        socket in its own /tmp), else in a host folder of its own."""
        if not launch.sandboxed:
            return await self._start_unsandboxed_on_socket(name, launch, log_path)
        as_root = bubblewrap.privileged()
        problem = bubblewrap.unavailable_reason(as_root)
        if problem is not None:
            raise BotStartError(
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
        running = _Running(process, "unix:", log_path, sandboxed=True)
        running.uid = uid

        async def listening() -> None:
            descriptor = await wait_for_sandboxed_socket(info_read, self.startup_timeout, process)
            running.socket_descriptor = descriptor
            running.address = sockets.address(descriptor)

        return await self._join(name, running, listening)

    async def _start_unsandboxed_on_socket(self, name: str, launch: Launch, log_path: Path) -> _Running:
        """Start one process of a trusted `{socket}` command, its socket in a host folder of its own."""
        if self._socket_root is None:
            self._socket_root = Path(tempfile.mkdtemp(prefix="arena-sockets-"))
        socket_folder = self._socket_root / str(self._started)
        socket_folder.mkdir(mode=0o700)
        socket = socket_folder / bubblewrap.SOCKET_NAME
        arguments = command_arguments(launch.command, 0, socket=str(socket))
        try:
            process = await self._supervise(name, arguments, log_path, folder=launch.folder)
        except BotStartError:
            self._forget_socket_folder(socket_folder)
            raise
        running = _Running(process, f"unix:{socket}", log_path, socket_folder)
        return await self._join(name, running, lambda: wait_for_socket(socket, self.startup_timeout, process))

    def _forget_socket_folder(self, socket_folder: Path) -> None:
        """Remove a socket folder with whatever its bot left there."""
        if not folders.remove_folder(socket_folder):
            log.warning("local_bot_folder_left", folder=str(socket_folder))

    async def _stop(self, running: _Running) -> None:
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
        if running.socket_descriptor is not None:
            os.close(running.socket_descriptor)
            running.socket_descriptor = None
        if running.socket_folder is not None:
            self._forget_socket_folder(running.socket_folder)
        self._uids.discard(running.uid or 0)

    async def stop_all(self) -> None:
        """Stop every process started here, all at once: SIGTERM, then SIGKILL after the grace period,
        to the bot's process group and to every process it started; and wait for those being stopped."""
        everything = [running for pool in self._pools.values() for running in pool]
        self._pools.clear()
        stopping = list(self._stopping)
        started = time.monotonic()
        await asyncio.gather(*(self._stop(running) for running in everything), *stopping)
        if self._socket_root is not None:
            folders.remove_folder(self._socket_root)
            self._socket_root = None
        if everything:
            log.info(
                "local_bots_stopped", count=len(everything), seconds=round(time.monotonic() - started, 2)
            )


def _command_of(bot: BotEntry) -> Launch:
    """A bot's registered command, run unsandboxed: how bots start when nothing else is said."""
    assert bot.command is not None
    return Launch(bot.command)


def _tell(running: _Running, line: bytes) -> None:
    """Write `line` to a supervisor's pipe (it reads every line as the start of a match)."""
    stdin = running.process.stdin
    if stdin is not None and not stdin.is_closing():
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(line)
