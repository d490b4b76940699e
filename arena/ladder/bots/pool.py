"""Bots that the arena starts itself from a registered command, so a ladder needs no hand-started
processes: the pool of a run's processes.

A command holds `{port_file}` or `{port}`. `{port_file}` is a path the arena chooses; the bot listens
on any port and writes the port there once it serves (atomically: a temporary file, then a rename), as
`python -m sample_bots.rule_bot --port 0 --port-file {port_file}` does; `{port}` in such a command is 0.
Otherwise `{port}` is replaced by a port the arena finds free (another process may take it before the bot
binds it: `{port_file}` has no such race). A first word `python` or `python3` is replaced by the
interpreter running the arena, so the sample bots run in the arena's own environment. The arena waits
until the bot answers the handshake and keeps its answer to Describe for the matches it plays, replaces a
bot whose process has died before its next match (as cutechess's `-recover` does), and stops every
process it started when the ladder ends. The processes one call needs start at once; the idle ones past
a limit are stopped, least recently used first. Each process runs under a supervisor (processes.py), so
that none outlives the arena.

Each run (each `LocalBots`) names its files in a folder of its own, `run`: the runner's name, which is
also the owner of its leases in the ladder (scheduler.py), so that two runners sharing a ladder and its
logs folder never write each other's logs, read or delete each other's port files, nor reach each other's
bots; a run that crashed leaves its folder as it was, and no other run touches it.

The supervisors of `stop_all` all stop at once, so stopping takes one grace period, not one per bot.
`stop_all` must be awaited in the event loop that started the bots, before it closes: asyncio would
otherwise kill the supervisors outright, and Linux sends the parent-death signal when the thread that
started a process exits, which is the loop's thread. A sandboxed process whose match ended with a fault of
its own is stopped rather than kept: whatever it left running goes with it.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final

import grpc
import structlog

from arena.ladder.bots.commands import BotStartError, BundleSource, Launch
from arena.ladder.bots.processes import LOG_LIMIT_BYTES, CapturedOutput, Processes, Running
from arena.ladder.store import BotEntry
from arena.runner import open_channel, split_addresses
from arena.sandbox import bubblewrap
from fiftysix.v1 import bot_pb2 as pb

log = structlog.get_logger("local_bots")


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
        hidden: Sequence[Path] = (),
        bundles: BundleSource | None = None,
    ) -> None:
        """`log_folder`: where the runs sharing it keep their bots' files, this one in `log_folder/run/`
        (`log_folder` afterwards); `run`: this run's name (default: `new_run_name()`), which a ladder uses
        as the owner of its leases too. `port_range`: the ports `{port}` commands get (default: any free
        port); `{port_file}` commands choose their own (they bind port 0 and report it). `sandbox`: how
        sandboxed bots run (default limits). `launch_of`: how a registered bot starts (default: its
        command, unsandboxed), so that uploads and the sandbox setting of each bot, kept beside the
        register, reach here. `isolate_deals=False` gives a process matches on deals it has played (the
        arena before the fair-play fix): only for the control that shows the leak it closes, and for
        measuring its cost. `hidden`: the host's files that `sandbox` was checked not to show bots
        (factory.py builds every run's pool that way), kept for a Ray worker to check again. `bundles`:
        where an uploaded bot's files come from when this machine's cache lacks them (None: they must be
        there already)."""
        if port_range is not None and not 1 <= port_range[0] <= port_range[1] <= 65535:
            raise ValueError(f"a port range is LO-HI within 1-65535, got {port_range}")
        if log_limit_bytes < 1024:
            raise ValueError(f"a log limit below 1024 bytes keeps nothing useful, got {log_limit_bytes}")
        if idle_limit < 0:
            raise ValueError(f"the idle limit is a number of processes, 0 or more; got {idle_limit}")
        self.run = run if run is not None else new_run_name()
        if not RUN_NAME.fullmatch(self.run):
            raise ValueError(f"a run's name is a folder name of letters, digits, . _ and -, got {self.run!r}")
        self.idle_limit = idle_limit
        self.launch_of = launch_of if launch_of is not None else _command_of
        self.isolate_deals = isolate_deals
        self.hidden = tuple(hidden)
        self.bundles = bundles
        self._pools: dict[str, list[Running]] = {}
        self._processes = Processes(
            self._pools,
            log_folder / self.run,
            startup_timeout,
            grace,
            log_limit_bytes,
            port_range,
            sandbox if sandbox is not None else bubblewrap.Sandbox(),
        )
        self._locks: dict[str, asyncio.Lock] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    @property
    def log_folder(self) -> Path:
        """This run's own folder, where its bots' logs and port files go."""
        return self._processes.log_folder

    @property
    def startup_timeout(self) -> float:
        """Seconds a process has to answer the handshake once started."""
        return self._processes.startup_timeout

    @property
    def grace(self) -> float:
        """Seconds between SIGTERM and SIGKILL when a process is stopped."""
        return self._processes.grace

    @property
    def log_limit_bytes(self) -> int:
        """The most of a process's output its log keeps."""
        return self._processes.log_limit_bytes

    @property
    def port_range(self) -> tuple[int, int] | None:
        """The ports `{port}` commands get (None: any free port)."""
        return self._processes.port_range

    @property
    def sandbox(self) -> bubblewrap.Sandbox:
        """How sandboxed bots run."""
        return self._processes.sandbox

    @property
    def started(self) -> int:
        """Processes started so far (each the start of one bot process)."""
        return self._processes.started

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

    def running_at(self, address: str) -> Running | None:
        """The process started here that serves at `address` (None: none does), for its log and the
        address its author knows it by."""
        return next(
            (running for pool in self._pools.values() for running in pool if running.address == address), None
        )

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

    def _close_channel(self, running: Running) -> None:
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
            await self._provide(bot.name, launch)
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
            await asyncio.gather(*(self._processes.stop(running) for running in dead))  # its pipe and channel
            self._retire_outdated(bot.name, pool, launch)
            # Newest first, so that the least recently used stay idle and are stopped first.
            if not self.isolate_deals:
                deals = None
            fresh = [running for running in pool if not running.busy and deals not in running.deals]
            taken = sorted(fresh, key=lambda r: -r.released_at)[:count]
            for running in taken:
                running.busy = True  # before any await: a release meanwhile must not stop them
            started = await asyncio.gather(
                *(self._processes.start(bot.name, launch) for _ in range(count - len(taken))),
                return_exceptions=True,
            )
            failures = [outcome for outcome in started if isinstance(outcome, BaseException)]
            if failures:
                fresh = [outcome for outcome in started if isinstance(outcome, Running)]
                for running in fresh:
                    pool.remove(running)
                await asyncio.gather(*(self._processes.stop(running) for running in fresh))
                self._give_back(taken)
                raise failures[0]
            taken.extend(outcome for outcome in started if isinstance(outcome, Running))
            for running in taken:
                if deals is not None:
                    running.deals.add(deals)
                self._processes.begin_match(running)  # its output is counted and kept from here
            return [running.address for running in taken]

    async def _provide(self, name: str, launch: Launch) -> None:
        """Make sure the files an uploaded bot starts from are on this machine (fetched by `bundles`).

        :raises BotStartError: they are not, and cannot be had.
        """
        if launch.bundle is None or launch.folder is None:
            return
        if self.bundles is not None:
            await self.bundles.provide(name, launch)
        elif not launch.folder.is_dir():
            raise BotStartError(f"the files of bot {name!r} are missing: {launch.folder}")

    async def outputs(self, addresses: Sequence[str]) -> dict[str, CapturedOutput]:
        """End the match that the processes at `addresses` (those the arena started) play and read what
        each wrote during it, by address: each process's supervisor first reads what is left in its pipe.
        A process whose supervisor did not answer is left out (logged)."""
        playing = [
            running for pool in self._pools.values() for running in pool if running.address in addresses
        ]
        read = await asyncio.gather(*(self._processes.match_output(running) for running in playing))
        return {running.address: output for running, output in zip(playing, read, strict=True) if output}

    def _retire_outdated(self, name: str, pool: list[Running], launch: Launch) -> None:
        """Stop the processes of `name` started otherwise than it starts now (a version since replaced, its
        files perhaps pruned): the idle ones now, in the background, those held by a match once it ends."""
        for running in [running for running in pool if running.launch != launch]:
            running.retire = "outdated"
            if not running.busy:
                pool.remove(running)
                log.info("local_bot_retired", bot=name, address=running.address, reason="outdated")
                self._in_background(self._processes.stop(running))

    def release(self, addresses: Sequence[str]) -> None:
        """Give processes back after a match; the least recently used idle ones past `idle_limit` are
        stopped (in the background: `stop_all` waits for them)."""
        self._give_back(
            [running for pool in self._pools.values() for running in pool if running.address in addresses]
        )

    def _give_back(self, processes: Sequence[Running]) -> None:
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
                        self._in_background(self._processes.stop(running))
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
            self._in_background(self._processes.stop(running))

    async def stop_all(self) -> None:
        """Stop every process started here, all at once: SIGTERM, then SIGKILL after the grace period,
        to the bot's process group and to every process it started; and wait for those being stopped."""
        everything = [running for pool in self._pools.values() for running in pool]
        self._pools.clear()
        stopping = list(self._stopping)
        started = time.monotonic()
        await asyncio.gather(*(self._processes.stop(running) for running in everything), *stopping)
        self._processes.close()
        if everything:
            log.info(
                "local_bots_stopped", count=len(everything), seconds=round(time.monotonic() - started, 2)
            )


def _command_of(bot: BotEntry) -> Launch:
    """A bot's registered command, run unsandboxed: how bots start when nothing else is said."""
    assert bot.command is not None
    return Launch(bot.command)
