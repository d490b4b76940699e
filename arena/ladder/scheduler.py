"""A ladder run: claim sets, play their matches K at a time, and end on whole sets.

The bots of each new set come from a `Pairing` (pairing.py: by default the ladder's, least-played bot
first and opponents close in rating). Each set is played once per rotation of the teams over the seats
on the same seeded deals, and rated as one event as soon as its last match is stored (set_play.py, which
also checks a set's bots when it starts and keeps every failure of a match inside). Sets left unfinished
(by an earlier run, or put back) are finished first when they may be claimed. Bots on probation or down
are skipped.

Several runners on one file share the work through leases: a runner claims a set in the store before it
plays it (a new set is created claimed), renews the lease while the set's matches are played (every
`lease_s` / 3), and gives it up when the set is finished, void, or the run ends. A runner that dies keeps
its sets until their leases expire; then any runner takes them over. A set is rated once, by the runner
that stores its last match. Down bots are checked at the start of a run and every `down_recheck_s`.

A run ends on whole sets: after `matches` (as many more as the last set needs), or when no new set may
start after `duration_s`, or after `stop()`; `stop(now=True)` cancels the matches in progress instead
(nothing of them is stored; their sets stay unfinished for the next run, or void when a move of theirs
was shown live). The rotations of a new set start together when the workers allow (a set waits for as
many free workers as it has rotations, up to `concurrency`), so that its live events lag by a deal
(live_gate.py). The report keeps sums and
counts, never the matches, so a run's memory does not grow with its length. Only a StoreError (a file
that cannot be written, or that does not hold what the arena wrote) stops a run, after the matches in
progress end, with a `LadderError` that says why.

A store server that goes away (a PostgreSQL restart, a network cut) does not stop the run at once: every
store call of the run waits for it with backoff (outages.py), up to `store_wait_s`, and goes on where
it was; a match finished meanwhile is stored when the server is back. Leases may expire meanwhile: they
are renewed as soon as the server answers, before anything else, and a set another runner took over is
dropped as usual (a match of it already played is stored, or refused when the other runner stored that
rotation first). A lease given up or a live event written while the server is away is let go or kept
(held_sets.py, live_feed.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import random
import secrets
import time
from collections.abc import Callable
from functools import partial
from typing import Final

import structlog

from arena.ladder.bots import LocalBots
from arena.ladder.held_sets import HeldSets, Job
from arena.ladder.match_play import MatchPlayer
from arena.ladder.outages import StoreWait
from arena.ladder.pairing import Pairing, RatingPairing, active_bots
from arena.ladder.run_settings import LadderError, LadderReport, LadderSettings
from arena.ladder.set_play import SetPlayer
from arena.ladder.store import DuplicateSet, LadderStore, StoreError, isolated
from arena.runner import MatchOutcome
from fiftysix.engine import SEED_BITS
from fiftysix.engine.seeds import seed_key

log = structlog.get_logger("ladder")


class _Wait:
    """No job yet: wait until a worker finishes one (the next set waits for enough free workers)."""


WAIT: Final = _Wait()
"""`take_job`'s answer when a new set must wait for more free workers."""

STALE_LIVE_S: Final = 3600.0
"""A match in play whose newest live event is older than this has lost its runner."""


def set_seeds(seed: int | None) -> Callable[[], int]:
    """Where a run's new sets get their seeds (SEED_BITS each). Without a run seed: the OS's secure
    source (`secrets`), so that nobody can know a deal before it is dealt, nor work the seed out from the
    deals made public. With one (`--seed`, to reproduce a run): a generator seeded by it, the same
    seeds every time, known to whoever knows that seed (so not for a competition with stakes)."""
    if seed is None:
        return lambda: secrets.randbits(SEED_BITS)
    key = seed_key(seed)
    counter = itertools.count()

    def keyed() -> int:
        # HMAC-SHA256 of a counter: the seeds of sets made public tell nothing of the next ones.
        digest = hmac.digest(key, f"fiftysix/set-seed/{next(counter)}".encode(), "sha256")
        return int.from_bytes(digest[: SEED_BITS // 8], "big")

    return keyed


class Ladder:
    """One run of the ladder over a store."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        local_bots: LocalBots,
        on_match: Callable[[MatchOutcome, LadderReport], None] | None = None,
        pairing: Pairing | None = None,
        matches: MatchPlayer | None = None,
    ) -> None:
        """`matches`: where matches are played (default: in this process, with `local_bots`; ray_play.py
        plays them on a Ray cluster)."""
        self.store = store
        self.settings = settings
        self.rng = random.Random(settings.seed)
        """The run's own chance (the pairing's draws): seeded by `settings.seed` when given."""
        self.new_seed = set_seeds(settings.seed)
        """The seed of each new set (`set_seeds`)."""
        self.scheduled: dict[str, int] = {}
        """Matches of each bot launched and not finished yet."""
        self.pairing = pairing or RatingPairing(store, settings, self.rng, self.scheduled)
        self.sets_held = HeldSets(store, settings, local_bots.run)
        """The sets this run holds a lease of, owned under the run's name (its bots' logs folder's too)."""
        self.store_wait = StoreWait(settings.store_wait_s)
        """The run's waits for a store server that went away, shared by all its store calls."""
        self.renew_now: asyncio.Event | None = None
        """Set, while `run` runs, when the leases could not be renewed as the store came back after an
        outage: the keeper renews them at once."""
        self.store_wait.on_back.append(self._store_back)
        self.player = SetPlayer(
            store, settings, local_bots, self.sets_held, self.scheduled, on_match, matches, self.store_wait
        )
        self.report = self.player.report
        self.stopping = False
        self.store_failure: StoreError | None = None
        self.launched = 0
        """Jobs handed to the set player (`player.dropped` of them were not played)."""
        self.queued = 0
        self.out_of_time = False
        self._workers: list[asyncio.Task[None]] = []
        self._wake: Callable[[], None] | None = None
        """Wakes the workers waiting for a job (while `run` runs)."""
        self._skipped: set[int] = set()
        self._out_of_sets = False

    async def next_set(self) -> list[Job]:
        """The matches of the next set to play, claimed: an unfinished set that may be claimed first,
        else a new set; none when no more sets start (then never again in this run)."""
        if self._out_of_sets:
            return []
        call = self.store_wait.call
        resumed = await call(self._claim_unfinished)
        if resumed is not None:
            return resumed
        bots = await call(self.pairing.next_bots)
        if bots is None:
            self._out_of_sets = True
            log.info("ladder_out_of_sets", reason="no more sets to start (too few bots up, or done)")
            return []
        registered = {bot.name: bot for bot in await call(self.store.registry.bots)}
        entries = [registered[name] for name in bots if name in registered]  # one removed: voided
        rules = self.settings.rules
        seed = self.new_seed()
        create = partial(
            self.store.sets.create_set,
            rules.players,
            rules.ruleset.value,
            rules.deal_cap,
            seed,
            bots,
            lease=(self.sets_held.owner, self.settings.lease_s),
            event=self.settings.event,
            isolated=len(entries) == len(bots) and isolated(entries),
        )

        def again() -> DuplicateSet:
            # The connection may have been lost after the set was created: its seed (128 random bits)
            # finds it, so that the run does not leave a second set behind.
            return self.store.sets.set_with_seed(seed) or create()

        duplicate = await call(create, again)
        return self.sets_held.hold(duplicate, range(duplicate.rotations))

    def _claim_unfinished(self) -> list[Job] | None:
        """Claim the first unfinished set that nobody holds, whose bots are all active, and return its
        matches still to play (a set with none left is rated, and the next one looked at)."""
        available = {bot.name for bot in active_bots(self.store, self.settings)}
        for duplicate, missing in self.store.leases.claimable_sets(self.sets_held.owner):
            if duplicate.id in self.sets_held.held or not self.pairing.may_resume(duplicate):
                continue  # in play in this run, or not this run's
            if not set(duplicate.bots) <= available:
                if duplicate.id not in self._skipped:
                    self._skipped.add(duplicate.id)
                    log.info(
                        "set_skipped",
                        set_id=duplicate.id,
                        reason="a bot is not registered, on probation, down or unfit for this run",
                    )
                continue
            if not self.store.leases.claim_set(duplicate.id, self.sets_held.owner, self.settings.lease_s):
                continue  # another runner was first
            if duplicate.shown and missing:
                # Its deals were shown live before a rotation was stored (its runner died): never replayed.
                self.player.void_set(duplicate.id, "interrupted after its deals were shown live")
                self.store.leases.release_set(duplicate.id, self.sets_held.owner)
                continue
            if not missing:
                self.player.rate(duplicate)
                self.store.leases.release_set(duplicate.id, self.sets_held.owner)
                continue
            self.report.sets_resumed += 1
            log.info("set_resumed", set_id=duplicate.id, rotations=missing)
            return self.sets_held.hold(duplicate, missing)
        return None

    def _store_back(self) -> None:
        """The store answers again after an outage: renew the leases now, before the calls that waited go
        on, so that a set another runner took over meanwhile is dropped first (as the lease keeper drops
        one); when that fails, the keeper tries at once."""
        try:
            self.sets_held.renew()
        except StoreError:
            if self.renew_now is not None:
                self.renew_now.set()

    async def _keep_leases(self) -> None:
        renew_now = self.renew_now = asyncio.Event()
        while True:
            with contextlib.suppress(TimeoutError):
                # Every third of a lease, or at once when that failed as the store came back.
                await asyncio.wait_for(renew_now.wait(), self.settings.lease_s / 3)
            renew_now.clear()
            try:
                await self.store_wait.call(self.sets_held.renew)
            except StoreError as error:
                log.error("ladder_store_failed", error=str(error))
                self.store_failure = self.store_failure or error
                self.stop()
                return

    async def recheck_down_bots(self) -> None:
        """Check every bot marked down (and not on probation); one that answers is down no more."""
        await self.player.availability.recheck_down()

    async def _watch_down_bots(self) -> None:
        while True:
            await asyncio.sleep(self.settings.down_recheck_s)
            try:
                await self.recheck_down_bots()
            except StoreError as error:
                log.error("ladder_store_failed", error=str(error))
                self.store_failure = self.store_failure or error
                self.stop()
                return

    @property
    def planned_matches(self) -> int | None:
        """How many matches this run will store as it stands (None: until stopped or out of time). Sets
        are played whole, and sets left unfinished by an earlier run first, so this may grow beyond
        `settings.matches`; a voided set's unplayed matches drop out of it."""
        known = self.launched - self.player.dropped - self.player.lost + self.queued
        target = self.settings.matches
        return None if target is None else max(target, known)

    async def run(self) -> LadderReport:
        """Play until the number of matches is reached or the time is up (rounded up to whole sets), or
        `stop()` is called."""
        call = self.store_wait.call
        await call(self.pairing.check)
        # The live events of matches whose runner died an hour ago or more: nobody will delete them.
        await call(partial(self.store.live.prune_live_events, STALE_LIVE_S))
        started = time.perf_counter()
        deadline = None if self.settings.duration_s is None else started + self.settings.duration_s
        target = self.settings.matches
        current: list[Job] = []
        # A new set starts only when a worker is free for each of its rotations (up to all of them), so
        # that they are played at the same time and its live events lag by a deal (live_gate.py).
        concurrency = self.settings.concurrency
        needed = min(concurrency, self.settings.rules.team_count)
        idle = 0
        alive = concurrency
        """Workers not ended yet: a set never waits for more workers than are left."""
        changed = asyncio.Condition()

        async def notify() -> None:
            async with changed:
                changed.notify_all()

        waking: set[asyncio.Task[None]] = set()

        def wake() -> None:
            task = asyncio.get_running_loop().create_task(notify())
            waking.add(task)
            task.add_done_callback(waking.discard)

        self._wake = wake

        async def next_job() -> Job | None:
            nonlocal idle
            async with changed:
                idle += 1
                try:
                    while isinstance(job := await take_job(idle >= min(needed, alive)), _Wait):
                        await changed.wait()
                    changed.notify_all()  # the rest of a set just taken, for the others waiting
                    return job
                finally:
                    idle -= 1

        async def take_job(may_start_a_set: bool) -> Job | _Wait | None:
            # A set once started is played to its end, so a run ends on whole sets.
            nonlocal current
            if self.stopping:
                self.queued = 0
                return None
            for job in current:
                if job.set_in_play.closed:
                    self.sets_held.job_done(job.set_in_play)
            current = [job for job in current if not job.set_in_play.closed]
            self.queued = len(current)
            if not current:
                if target is not None and self.launched - self.player.dropped >= target:
                    return None
                if deadline is not None and time.perf_counter() >= deadline:
                    if not self.out_of_time:
                        self.out_of_time = True
                        log.info("ladder_out_of_time", seconds=self.settings.duration_s)
                    return None
                if not may_start_a_set:
                    return WAIT
                current = await self.next_set()
                if not current:
                    return None
                if self.stopping:  # while the store was read: the set's lease is given up at the end
                    current = []
                    self.queued = 0
                    return None
            job = current.pop(0)
            self.launched += 1
            self.queued = len(current)
            for name in job.duplicate.team_bots(job.rotation):
                self.scheduled[name] = self.scheduled.get(name, 0) + 1
            return job

        async def worker() -> None:
            nonlocal alive
            try:
                while (job := await next_job()) is not None:
                    try:
                        await self.player.play(job)
                    finally:
                        await notify()
            except StoreError as error:
                # The store cannot be written: start nothing more, let the other matches end.
                log.error("ladder_store_failed", error=str(error))
                self.store_failure = self.store_failure or error
                self.stop()
            finally:
                alive -= 1
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(notify())  # the others may start a set without it now

        await self.recheck_down_bots()
        workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
        self._workers = workers
        keepers = [asyncio.create_task(self._keep_leases()), asyncio.create_task(self._watch_down_bots())]
        try:
            await asyncio.wait(workers)
        except asyncio.CancelledError:
            for task in workers:
                task.cancel()
            await asyncio.wait(workers)
            raise
        finally:
            for task in keepers:
                task.cancel()
            await asyncio.gather(*keepers, return_exceptions=True)
            for in_play in list(self.sets_held.held.values()):
                self.sets_held.release(in_play)  # sets left unfinished: any runner may take them now
            self._workers = []
            self._wake = None
            self.renew_now = None
            self.report.seconds = time.perf_counter() - started
        for task in workers:
            if not task.cancelled():
                task.result()  # an error of the arena's own that escaped containment is raised here
        if self.store_failure is not None:
            raise LadderError(f"the ladder stopped: {self.store_failure}")
        return self.report

    def stop(self, now: bool = False) -> None:
        """Start no new match; the matches being played finish. With `now`, they are cancelled as well
        (each closes its streams on the way out), none of them is stored, and `run` returns at once
        with what finished; their sets stay unfinished, for the next run to finish (or void, when a move of
        theirs was shown live: set_play.py)."""
        self.stopping = True
        self.player.stopping = True
        if self._wake is not None:
            self._wake()  # the workers waiting for a set to start see that none will
        if now:
            for task in self._workers:
                task.cancel()
