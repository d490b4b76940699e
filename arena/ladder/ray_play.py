"""Playing a ladder's matches on a Ray cluster (`arena ladder run --ray [ADDRESS]`).

The runner keeps pairing, leases, the store, the ratings and the live gate; only the playing of a match
(its bots started or found, `run_match`) is a Ray task on a worker, a streaming generator: the match's
public events come back while it plays, in batches and in order, and the runner gives each to its set's
live gate (live_gate.py), so a match on a worker is live on the site under the same fair-play rules as
one played in process; then the outcome, with what each command bot wrote during the match, comes back
pickled, and the runner stores and rates it exactly as in process. A set is still rated once, by the
runner.

A match whose worker process (or node) died is played again by the runner, not by Ray, from its seed,
so on the same deals, under a new match id (`MATCH_RETRIES` times at most): what the lost attempt sent
is forgotten (its live events deleted, its held events dropped), so no spectator sees an event twice or
out of order, and nothing of it was stored, since only the runner stores. Only while its set has shown
nothing live, though: once a move of the set was shown, its deals are public and the set is made void
instead (set_play.py), as for a match lost in process.

The bots of a set are checked on a worker too (`RayMatches.unreachable`): a command bot is started
there, a remote bot called from there, so the runner's machine needs neither the bots' files nor a way
to them. Remote bots are called from the worker that plays the match. Command bots are started on that
worker: each Ray worker process keeps a `LocalBots` pool of its own across its matches and checks,
served by an event loop in a thread of its own (the processes and channels belong to that loop); when
the worker process ends, its bots' supervisors see the pipe close and stop them. So a worker machine
needs the project installed (`pip install 'fiftysix-arena[cluster]'`, the same version as the runner's)
and each host's command bot's files at the same paths on every worker.

Uploaded bots need nothing on the worker's disk: the runner ships their bundles. It reads a bundle's
bytes from the store once, checks them against their hash and puts them in Ray's object store
(`ray.put`, once per hash for the run's life), and each task names the bundles of its match by
reference; a worker keeps them in a bundles folder of its own (uploads.worker_cache: never a folder the
runner names), asking Ray for the bytes only when that folder lacks them, checking their hash again and
unpacking them as the site did. So workers need no credentials of the database, and a worker that never
saw the site's folder plays uploaded bots; a bundle that does not match its hash is refused there in one
line and its bot forfeits (the set is void).

Ray is an optional dependency (the `cluster` extra), imported only here and only when used.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import functools
import itertools
import queue
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import structlog

from arena.errors import ArenaError
from arena.ladder.availability import reach
from arena.ladder.bots import BotHost, BotStartError, Launch, LocalBots, local_bots, new_run_name
from arena.ladder.live_gate import Publish
from arena.ladder.match_play import MatchOrder, NotStarted, PlayedMatch, Replay, play_order
from arena.ladder.store import BotEntry
from arena.ladder.uploads import keep_sent, worker_cache
from arena.runner import new_match_id
from arena.sandbox import bubblewrap
from arena.sandbox.bundles import BundleLimits
from arena.untrusted import safe_text

log = structlog.get_logger("ladder")

MATCH_RETRIES: Final = 3
"""How many times the runner plays a match again after the worker process playing it died (while its
set has shown nothing live), and Ray checks a bot again after the worker checking it died."""


REACH_TIMEOUT_S: Final = 5.0
"""How long the head of a cluster has to accept a connection before `--ray HOST:PORT` gives up."""


class RayUnavailableError(ArenaError):
    """Ray is not installed, or the cluster cannot be joined."""


@dataclass(frozen=True)
class WorkerBots:
    """How a worker starts command bots: the runner's `LocalBots` settings, picklable."""

    log_folder: Path
    """The runner's own folder; each worker process logs in `worker-HOST-PID-RANDOM` within it."""
    startup_timeout: float
    grace: float
    log_limit_bytes: int
    idle_limit: int
    port_range: tuple[int, int] | None
    sandbox: bubblewrap.Sandbox
    hidden: tuple[Path, ...]
    """The host's files that the sandbox must not show bots, checked again on the worker (its Python
    installation, which the sandbox shows, may lie elsewhere than the runner's)."""
    launches: dict[str, Launch] = field(default_factory=dict)
    """How each command bot of the match starts (read from the store by the runner)."""
    bundles: dict[str, Any] = field(default_factory=dict)
    """The Ray object of each uploaded bundle of the match, by hash: its archive's bytes."""

    @classmethod
    def like(cls, local_bots: LocalBots) -> WorkerBots:
        """The settings of the runner's `local_bots`."""
        return cls(
            local_bots.log_folder,
            local_bots.startup_timeout,
            local_bots.grace,
            local_bots.log_limit_bytes,
            local_bots.idle_limit,
            local_bots.port_range,
            local_bots.sandbox,
            local_bots.hidden,
        )


@dataclass(frozen=True)
class RemoteResult:
    """What a worker sends back: the match played (its outcome as `run_match` returned it, and its bots'
    outputs) and the bots that did not start, with why."""

    played: PlayedMatch | None
    not_started: tuple[tuple[str, str], ...]


class _WorkerPool:
    """The command bots of one worker process, kept across its matches, on an event loop of their own."""

    def __init__(self, settings: WorkerBots) -> None:
        """:raises ExposedFilesError: the sandbox would show bots one of the host's files here."""
        self.launches: dict[str, Launch] = {}
        self.cache: Path | ArenaError
        """This machine's bundles folder, or why there is none (the uploaded bots then forfeit)."""
        try:
            self.cache = worker_cache()
        except ArenaError as error:
            self.cache = error
        hidden = settings.hidden if isinstance(self.cache, ArenaError) else (*settings.hidden, self.cache)
        # A folder of this process's own within the runner's.
        self.local_bots = local_bots(
            settings.log_folder,
            BotHost(settings.sandbox, hidden),
            self._launch_of,
            idle_limit=settings.idle_limit,
            port_range=settings.port_range,
            startup_timeout=settings.startup_timeout,
            grace=settings.grace,
            log_limit_bytes=settings.log_limit_bytes,
            run=f"worker-{new_run_name()}",
        )
        self.loop = asyncio.new_event_loop()
        # The loop's thread lives as long as the process: a bot's parent-death signal follows the thread
        # that started it.
        threading.Thread(target=self.loop.run_forever, name="arena-bots", daemon=True).start()
        atexit.register(self.stop)

    def _launch_of(self, bot: BotEntry) -> Launch:
        launch = self.launches.get(bot.name)
        if launch is None:
            raise BotStartError(f"the runner sent no command for {bot.name}")
        return launch

    def play(
        self, order: MatchOrder, launches: dict[str, Launch], bundles: dict[str, Any]
    ) -> Iterator[list[dict[str, Any]] | RemoteResult]:
        """Play `order` on this worker's loop, its uploaded bots' `bundles` kept here first (a bot whose
        bundle cannot be kept forfeits), yielding its public events in the order made (each batch what
        gathered while the last was sent), then the match played."""
        order, launches = self._with_bundles(order, launches, bundles)
        self.launches.update(launches)
        not_started: list[tuple[str, str]] = []
        events: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()  # None: the match ended
        played = asyncio.run_coroutine_threadsafe(
            play_order(
                self.local_bots, order, lambda name, detail: not_started.append((name, detail)), events.put
            ),
            self.loop,
        )
        played.add_done_callback(lambda _played: events.put(None))
        try:
            while True:
                event = events.get()
                batch: list[dict[str, Any]] = []
                while event is not None:
                    batch.append(event)
                    try:
                        event = events.get_nowait()
                    except queue.Empty:
                        break
                if batch:
                    yield batch
                if event is None:
                    break
            yield RemoteResult(played.result(), tuple(not_started))
        finally:
            played.cancel()  # the runner gave the match up: its bots' processes are given back

    def check(
        self,
        bot: BotEntry,
        seats: int,
        timeout_s: float,
        launches: dict[str, Launch],
        bundles: dict[str, Any],
    ) -> str | None:
        """`availability.reach` on this worker's loop (a command bot's processes stay in its pool), an
        uploaded bot started from its bundle kept here first."""
        kept = {name: self._kept(name, launch, bundles) for name, launch in launches.items()}
        for reason in kept.values():
            if isinstance(reason, str):
                return f"did not start: {reason}"
        self.launches.update(cast(dict[str, Launch], kept))
        return asyncio.run_coroutine_threadsafe(
            reach(self.local_bots, bot, seats, timeout_s), self.loop
        ).result()

    def _with_bundles(
        self, order: MatchOrder, launches: dict[str, Launch], bundles: dict[str, Any]
    ) -> tuple[MatchOrder, dict[str, Launch]]:
        """`order` and `launches` as this worker plays them: each uploaded bot started from its bundle in
        this machine's folder (received now when missing), or, when that fails, replaced by why."""
        here = dict(launches)
        bots = list(order.bots)
        for name, launch in launches.items():
            kept = self._kept(name, launch, bundles)
            if isinstance(kept, str):
                bots = [
                    kept if team_name == name else bot
                    for team_name, bot in zip(order.names, bots, strict=True)
                ]
            else:
                here[name] = kept
        return MatchOrder(order.settings, tuple(bots), order.names), here

    def _kept(self, name: str, launch: Launch, bundles: dict[str, Any]) -> Launch | str:
        """`launch` started from its bundle in this machine's folder (received now when missing), or why
        it cannot be (a launch without a bundle as it is)."""
        if launch.bundle is None:
            return launch
        sha256 = launch.bundle
        try:
            if isinstance(self.cache, ArenaError):
                log.error("bundles_folder_refused", reason=str(self.cache))  # it names the folder
                raise ArenaError("the worker has no bundles folder of its own (see its log)")
            if sha256 not in bundles:
                raise ArenaError(f"the runner sent no bundle {sha256[:12]}")
            received = functools.partial(_received, bundles[sha256])
            folder = keep_sent(self.cache, sha256, received, BundleLimits())
        except (ArenaError, OSError) as error:  # a BundleError: bytes not those of the hash
            detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            log.warning("bundle_not_kept", bot=name, sha256=sha256, reason=detail)
            return f"its bundle {sha256[:12]} was not kept on the worker: {detail}"
        return dataclasses.replace(launch, folder=folder)

    def stop(self) -> None:
        """Stop this worker's bots (the worker process is exiting)."""
        stopping = asyncio.run_coroutine_threadsafe(self.local_bots.stop_all(), self.loop)
        with contextlib.suppress(TimeoutError):  # their supervisors stop them when this process ends
            stopping.result(timeout=self.local_bots.grace + 10.0)


def _received(shipped: Any) -> bytes:
    """The bytes of a bundle the runner shipped (its Ray object), fetched to this worker.

    :raises ArenaError: Ray could not fetch them (the runner is gone, the object lost).
    """
    ray = _import_ray()
    try:
        return bytes(ray.get(shipped))
    except ray.exceptions.RayError as error:
        raise ArenaError(f"the runner's bundle could not be fetched: {type(error).__name__}") from None


_pool: _WorkerPool | None = None
_pool_lock = threading.Lock()


def _worker_pool(settings: WorkerBots) -> _WorkerPool:
    """This worker process's pool, made by its first task."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _WorkerPool(settings)
        return _pool


def play_on_worker(order: MatchOrder, settings: WorkerBots) -> Iterator[list[dict[str, Any]] | RemoteResult]:
    """The Ray task (a streaming generator): play one match in this worker process, with its pool of
    command bots, yielding its public events as they come, then the match played."""
    yield from _worker_pool(settings).play(order, settings.launches, settings.bundles)


def check_on_worker(bot: BotEntry, seats: int, timeout_s: float, settings: WorkerBots) -> str | None:
    """The Ray task: why `bot` cannot be started or reached from this worker process (None: it answers)."""
    return _worker_pool(settings).check(bot, seats, timeout_s, settings.launches, settings.bundles)


def _import_ray() -> Any:
    try:
        import ray  # optional: only `--ray` needs it
    except ImportError:
        raise RayUnavailableError(
            "--ray needs Ray, which is not installed: pip install 'fiftysix-arena[cluster]'"
        ) from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail at once on a HOST:PORT nobody listens on (Ray itself would retry for minutes)."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailableError(f"a Ray address is auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as error:
        raise RayUnavailableError(f"cannot reach the Ray cluster at {address}: {error}") from None


class RayMatches:
    """Plays a ladder's matches as Ray tasks (a `MatchPlayer`). `address`: None starts a Ray instance
    of this process's own; `auto` joins the cluster that `ray start` made on this machine; else the
    address of a cluster's head (`HOST:6379`, or `ray://HOST:10001`)."""

    def __init__(self, address: str | None, local_bots: LocalBots) -> None:
        """:raises RayUnavailableError: Ray is missing or the cluster cannot be joined."""
        self.ray = _import_ray()
        if address is not None:
            _check_reachable(address)
        self.local_bots = local_bots
        self.workers = WorkerBots.like(local_bots)
        # A Ray instance of our own needs no dashboard; a cluster's head decides that for itself.
        own: dict[str, Any] = {"include_dashboard": False} if address is None else {}
        try:
            self.ray.init(address=address, log_to_driver=False, configure_logging=False, **own)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise RayUnavailableError(f"cannot join the Ray cluster at {address}: {error}") from None
        # Played again by `play`, not by Ray: a match's events already sent must not come twice.
        self.task = self.ray.remote(num_returns="streaming", max_retries=0)(play_on_worker)
        self.check = self.ray.remote(max_retries=MATCH_RETRIES, retry_exceptions=False)(check_on_worker)
        exceptions = self.ray.exceptions
        self.worker_lost: tuple[type[Exception], ...] = (
            exceptions.WorkerCrashedError,
            exceptions.NodeDiedError,
            exceptions.OutOfMemoryError,
            exceptions.ObjectLostError,
        )
        """What Ray raises when the worker process playing a task, or its node, is gone."""
        self.shipped: dict[str, Any] = {}
        """The Ray object of each bundle shipped to the workers, by hash: put once, kept for the run."""

    async def play(
        self,
        order: MatchOrder,
        not_started: NotStarted,
        on_event: Publish | None,
        replay: Replay | None = None,
    ) -> PlayedMatch | None:
        """Play `order` on a worker, its public events sent back as they come and given to `on_event`
        in order; what its bots wrote comes back with the outcome (their logs stay on the worker's disk).
        A match whose worker died is played again from its seed, under a new match id (at most
        `MATCH_RETRIES` times), when `replay` allows it; else Ray's error is raised (the worker is lost).
        """
        launches: dict[str, Launch] = {}
        bundles: dict[str, Any] = {}
        bots: list[BotEntry | str] = []
        for bot in order.bots:
            sent = bot
            if isinstance(bot, BotEntry) and bot.command is not None:
                try:
                    launches[bot.name] = await self._sent_launch(bot, bundles)
                except BotStartError as error:
                    sent = str(error)  # its files are missing: it forfeits, the set is void
            bots.append(sent)
        order = MatchOrder(order.settings, tuple(bots), order.names)
        settings = dataclasses.replace(self.workers, launches=launches, bundles=bundles)
        for attempt in itertools.count(1):
            try:
                result = await self._attempt(order, settings, on_event)
                break
            except self.worker_lost as error:
                match_id, new_id = order.settings.match_id, new_match_id()
                reason = f"lost {attempt} times" if attempt > MATCH_RETRIES else None
                if reason is None and replay is not None:
                    on_event = replay(new_id)
                    reason = "its set's deals were shown live" if on_event is None else None
                lost = {"match_id": match_id, "error": type(error).__name__}
                if reason is not None:
                    log.warning("ray_match_lost", **lost, reason=reason)
                    raise
                log.warning("ray_match_replayed", **lost, new_match_id=new_id)
                order = dataclasses.replace(
                    order, settings=dataclasses.replace(order.settings, match_id=new_id)
                )
        for name, detail in result.not_started:
            not_started(name, detail)
        return result.played

    async def _attempt(
        self, order: MatchOrder, settings: WorkerBots, on_event: Publish | None
    ) -> RemoteResult:
        """Play `order` once on a worker, its events given to `on_event` as they come back."""
        stream = self.task.remote(order, settings)
        try:
            async for reference in stream:
                item: list[dict[str, Any]] | RemoteResult = await reference
                if isinstance(item, RemoteResult):
                    return item
                if on_event is not None:
                    for event in item:
                        on_event(event)
        except asyncio.CancelledError:
            self.ray.cancel(stream, force=True)  # the worker's bots go with its process
            raise
        raise ArenaError("the worker's stream of the match ended without its outcome")

    async def unreachable(self, bot: BotEntry, seats: int, timeout_s: float) -> str | None:
        """Why `bot` cannot be started or reached from a worker (None: it answers): its processes started
        there (kept in that worker's pool), its addresses called from there; the runner's machine needs
        neither the bot's files nor a way to it."""
        settings = self.workers
        if bot.command is not None:
            bundles: dict[str, Any] = {}
            try:
                launch = await self._sent_launch(bot, bundles)
            except BotStartError as error:
                return f"did not start: {safe_text(error)}"
            settings = dataclasses.replace(settings, launches={bot.name: launch}, bundles=bundles)
        try:
            reason: str | None = await self.check.remote(bot, seats, timeout_s, settings)
        except self.worker_lost as error:
            return f"not checked: the workers checking it died ({type(error).__name__})"
        return reason

    async def _sent_launch(self, bot: BotEntry, bundles: dict[str, Any]) -> Launch:
        """How command bot `bot` starts on a worker, its bundle (an upload's) added to `bundles`, shipped.

        :raises BotStartError: its launch or its bundle cannot be had.
        """
        launch = self.local_bots.launch_of(bot)
        if launch.bundle is not None:
            bundles[launch.bundle] = await self._shipped(bot.name, launch.bundle)
        return launch

    async def _shipped(self, name: str, sha256: str) -> Any:
        """The Ray object holding the bundle `sha256` of the bot `name`, put the first time it is asked
        for (the bytes read from the store and checked against their hash by the run's bundle source).

        :raises BotStartError: it cannot be had (no bundle source: a pool built without the store).
        """
        shipped = self.shipped.get(sha256)
        if shipped is None:
            source = self.local_bots.bundles
            if source is None:
                raise BotStartError(
                    f"the bundle of bot {name!r} cannot be sent: this run has no store of bundles"
                )
            shipped = self.shipped[sha256] = self.ray.put(await source.archive(name, sha256))
        return shipped

    def close(self) -> None:
        """Leave the cluster (a Ray instance of our own stops, its workers and their bots with it)."""
        self.ray.shutdown()
