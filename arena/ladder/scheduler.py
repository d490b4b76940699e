"""The Elo ladder: play duplicate sets between registered bots, K matches at a time, and rate them.

Pairing (the choice that teaches the most): the first bot of a new set is the one with the fewest
matches in the run's rating pool (its format; ties broken at random), its opponents are drawn among the
others with a weight that falls with the rating gap in that pool, 1 / (1 + (gap / 100)^2), so close
ratings meet most but every pairing stays possible. Both read the store's running totals and ratings,
not the history; the probation check reads a bot's last matches by index: a set costs the same with 1k
or 100k matches stored.
Each set is played once per rotation of the teams over the seats on the same seeded deals, and rated
as one event (ratings.py) as soon as its last match is stored. Sets left unfinished (by an earlier run,
or put back) are finished first when they may be claimed. Bots on probation or down are skipped.

Several runners on one file share the work through leases: a runner claims a set in the store before it
plays it (a new set is created claimed), renews the lease while the set's matches are played (every
`lease_s` / 3), and gives it up when the set is finished, void, or the run ends. A runner that dies keeps
its sets until their leases expire; then any runner takes them over. A set is rated once, by the runner
that stores its last match.

Fair to bots: when a set starts (each time a runner claims it), its bots are checked first: a remote bot
must answer the handshake (`check_timeout_s`), a command bot must start. A bot that does not is not
rated for that set: nothing is stored, the set is put back (retried after `retry_s`, doubling each time)
and the run goes on. After `down_after` such failures in a row the bot is marked down: skipped by pairing
until a check answers again (down bots are checked at the start of a run and every `down_recheck_s`).

A run ends on whole sets: after `matches` (as many more as the last set needs), or when no new set may
start after `duration_s`, or after `stop()`; `stop(now=True)` cancels the matches in progress instead
(nothing of them is stored; their sets stay unfinished for the next run). The report keeps sums and
counts, never the matches, so a run's memory does not grow with its length.

Containment: no bot ends a run. A bot's faults are recorded in its matches and lead to probation; a
command bot that does not start once its set has started (the check passed) forfeits that match (an
`unreachable` fault) and its set is made void, since a host-side failure must not be rated. A match that
fails for a reason nobody foresaw (an error of the arena's own) is stored with reason `arena_error`,
logged with its traceback, and its set made void; the run goes on. A rotation that another runner on the
same file stored first (after taking over a lease this runner lost) is skipped. Only a StoreError (a
file that cannot be written, or that does not hold what the arena wrote) stops a run, after the matches
in progress end, with a `LadderError` that says why.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator
from typing import Final

import structlog

from arena.ladder.availability import Availability
from arena.ladder.bot_commands import BotStartError
from arena.ladder.entries import BotEntry, DuplicateSet
from arena.ladder.held_sets import HeldSets, Job, SetInPlay
from arena.ladder.local_bots import LocalBots
from arena.ladder.probation import probation_reason
from arena.ladder.ratings import rate_set
from arena.ladder.run_settings import VOIDED_SETS_KEPT, LadderError, LadderReport, LadderSettings
from arena.ladder.store import LadderStore
from arena.ladder.store_file import DuplicateMatchError, StoreError
from arena.runner import (
    BotAddress,
    MatchOutcome,
    MatchSettings,
    run_match,
    seats_for_teams,
)
from arena.untrusted import safe_text
from fiftysix.engine import EndReason, MatchRules, Ruleset

log = structlog.get_logger("ladder")

RATING_SCALE: Final = 100.0


class Ladder:
    """One run of the ladder over a store."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        local_bots: LocalBots,
        on_match: Callable[[MatchOutcome, LadderReport], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.local_bots = local_bots
        self.on_match = on_match
        self.rng = random.Random(settings.seed)
        self.report = LadderReport()
        self.scheduled: dict[str, int] = {}
        self.stopping = False
        self.store_failure: StoreError | None = None
        self.launched = 0
        self.lost = 0
        """Matches launched that ended without being stored (see `planned_matches`)."""
        self.queued = 0
        self.out_of_time = False
        self._workers: list[asyncio.Task[None]] = []
        self.sets_held = HeldSets(store, settings)
        self.availability = Availability(store, settings, local_bots, self.report)
        """The sets this run holds a lease of (and the owner name of its leases)."""
        self._skipped: set[int] = set()

    def active_bots(self, down_too: bool = False) -> list[BotEntry]:
        """Registered bots not on probation, nor down (unless `down_too`), with their ratings in the run's
        pool."""
        down = {} if down_too else self.store.down_bots()
        return [
            bot
            for bot in self.store.bots(self.settings.pool)
            if bot.probation is None and bot.name not in down
        ]

    def check(self) -> None:
        """Refuse to start a ladder that cannot pair anybody (bots down count: they may answer again)."""
        teams = self.settings.rules.team_count
        active = self.active_bots(down_too=True)
        if len(active) < teams:
            raise LadderError(
                f"a {self.settings.players}-player {self.settings.ruleset.value} ladder needs at least "
                f"{teams} bots not on probation; {len(active)} registered (add some with `arena bots add`)"
            )

    def pick_bots(self) -> list[str]:
        """The bots of a new set: the least-played bot and opponents close to it in rating."""
        active = self.active_bots()
        counts = self.store.matches_played(self.settings.pool)
        played = {bot.name: counts.get(bot.name, 0) + self.scheduled.get(bot.name, 0) for bot in active}
        fewest = min(played.values())
        first = self.rng.choice([bot for bot in active if played[bot.name] == fewest])
        chosen = [first]
        others = [bot for bot in active if bot.name != first.name]
        while len(chosen) < self.settings.rules.team_count:
            weights = [1.0 / (1.0 + ((bot.rating - first.rating) / RATING_SCALE) ** 2) for bot in others]
            pick = self.rng.choices(others, weights=weights)[0]
            chosen.append(pick)
            others.remove(pick)
        self.rng.shuffle(chosen)
        return [bot.name for bot in chosen]

    def sets(self) -> Iterator[list[Job]]:
        """The matches to play, a set at a time, each set claimed: an unfinished set that may be claimed
        first, else a new set."""
        while True:
            resumed = self._claim_unfinished()
            if resumed is not None:
                yield resumed
                continue
            rules = self.settings.rules
            if len(self.active_bots()) < rules.team_count:
                log.warning("ladder_out_of_bots", reason="too few bots left off probation and up")
                return
            duplicate = self.store.create_set(
                rules.players,
                rules.ruleset.value,
                rules.deal_cap,
                self.rng.randrange(2**31),
                self.pick_bots(),
                lease=(self.sets_held.owner, self.settings.lease_s),
            )
            yield self.sets_held.hold(duplicate, range(duplicate.rotations))

    def _claim_unfinished(self) -> list[Job] | None:
        """Claim the first unfinished set that nobody holds, whose bots are all active, and return its
        matches still to play (a set with none left is rated, and the next one looked at)."""
        available = {bot.name for bot in self.active_bots()}
        for duplicate, missing in self.store.claimable_sets(self.sets_held.owner):
            if duplicate.id in self.sets_held.held:
                continue  # in play in this run
            if not set(duplicate.bots) <= available:
                if duplicate.id not in self._skipped:
                    self._skipped.add(duplicate.id)
                    log.info(
                        "set_skipped",
                        set_id=duplicate.id,
                        reason="a bot is not registered, on probation or down",
                    )
                continue
            if not self.store.claim_set(duplicate.id, self.sets_held.owner, self.settings.lease_s):
                continue  # another runner was first
            if not missing:
                self._rate(duplicate)
                self.store.release_set(duplicate.id, self.sets_held.owner)
                continue
            self.report.sets_resumed += 1
            log.info("set_resumed", set_id=duplicate.id, rotations=missing)
            return self.sets_held.hold(duplicate, missing)
        return None

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_s / 3)
            try:
                self.sets_held.renew()
            except StoreError as error:
                log.error("ladder_store_failed", error=str(error))
                self.store_failure = self.store_failure or error
                self.stop()
                return

    async def _start_set(self, in_play: SetInPlay) -> bool:
        """Whether the set's matches may be played: the first of them to get here checks the set's
        bots; when one does not answer, the set is put back and nobody is rated for it now."""
        async with in_play.check_lock:
            if not in_play.checked and not in_play.closed:
                in_play.checked = True
                await self._check_bots(in_play)
        return not in_play.closed

    async def _check_bots(self, in_play: SetInPlay) -> None:
        duplicate = in_play.duplicate
        registered = {bot.name: bot for bot in self.store.bots()}
        absent = [name for name in duplicate.bots if name not in registered]
        if absent:
            self._void(in_play, f"{absent[0]} is not registered")
            return
        failed = await self.availability.check([registered[name] for name in duplicate.bots], duplicate)
        if failed:
            in_play.postponed = True
            wait = self.sets_held.release(in_play, retry=True)
            self.report.sets_postponed += 1
            log.warning("set_postponed", set_id=duplicate.id, bots=sorted(failed), retry_in_s=round(wait, 1))

    async def recheck_down_bots(self) -> None:
        """Check every bot marked down (and not on probation); one that answers is down no more."""
        await self.availability.recheck_down()

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

    def _rate(self, duplicate: DuplicateSet) -> None:
        """Rate the set if it is finished (and not void, nor rated by another runner)."""
        started = time.perf_counter()
        event = rate_set(self.store, duplicate)
        self.report.storage_seconds += time.perf_counter() - started
        if event is not None:
            self.report.sets_rated += 1
            changes = {change.bot: round(change.after - change.before, 1) for change in event}
            log.info("set_rated", set_id=duplicate.id, changes=changes)

    async def play(self, job: Job) -> None:
        """Play one match of a set (once its bots answered when the set started), store it at once, and
        rate the set if it is complete. Whatever happens in the match, the run goes on (see the module's
        note on containment)."""
        try:
            if await self._start_set(job.set_in_play):
                await self._play(job)
                return
            self.launched -= 1  # not played: does not count towards the run's matches
            for name in job.duplicate.team_bots(job.rotation):
                self.scheduled[name] -= 1
        finally:
            self.sets_held.job_done(job.set_in_play)

    async def _play(self, job: Job) -> None:
        duplicate = job.duplicate
        team_bots = duplicate.team_bots(job.rotation)
        try:
            outcome = await self._play_match(job, team_bots)
        except StoreError:
            raise
        except asyncio.CancelledError:
            # Stopped at once: run_match has closed its streams; nothing of the match is stored.
            self.report.matches_cancelled += 1
            self.lost += 1
            log.info("ladder_match_cancelled", set_id=duplicate.id, rotation=job.rotation)
            raise
        except Exception as error:
            log.exception("ladder_match_failed", set_id=duplicate.id, rotation=job.rotation)
            self.report.arena_errors += 1
            self.lost += 1
            self._void(job.set_in_play, f"arena error in rotation {job.rotation}: {type(error).__name__}")
            return
        finally:
            for name in team_bots:
                self.scheduled[name] -= 1
        started = time.perf_counter()
        try:
            self.store.save_match(
                outcome.match_id,
                duplicate,
                job.rotation,
                outcome.reason,
                outcome.ranking,
                outcome.faults,
                outcome.record.to_json(),
                outcome.decisions,
                outcome.elapsed,
            )
        except DuplicateMatchError as error:
            log.warning("match_not_stored", set_id=duplicate.id, rotation=job.rotation, reason=str(error))
            self.lost += 1
            return
        report = self.report
        report.storage_seconds += time.perf_counter() - started
        report.matches += 1
        report.faults += len(outcome.faults)
        report.match_seconds += outcome.elapsed
        report.decisions += outcome.decisions
        report.decision_seconds += sum(outcome.decision_seconds)
        report.waited_seconds += outcome.waited_seconds
        if outcome.reason is EndReason.ARENA_ERROR:
            report.arena_errors += 1
            self._void(job.set_in_play, f"arena error in rotation {job.rotation}: {outcome.arena_error}")
        for name in team_bots:
            self._check_probation(name)
        self._rate(duplicate)
        if self.on_match is not None:
            self.on_match(outcome, report)

    async def _play_match(self, job: Job, team_bots: tuple[str, ...]) -> MatchOutcome:
        """Start or find every team's bot, play the match, give the processes back. A bot that does not
        start now (it did when the set started) forfeits at once, and its set is made void."""
        duplicate = job.duplicate
        rules = MatchRules(duplicate.players, Ruleset.parse(duplicate.ruleset), duplicate.deal_cap)
        seats_per_team = rules.players // rules.team_count
        settings = MatchSettings(
            rules,
            duplicate.seed,
            self.settings.time_control,
            match_id=f"set{duplicate.id}-rot{job.rotation}-{self.rng.randrange(16**6):06x}",
            strikes=self.settings.strikes,
        )
        taken: list[str] = []
        addresses: list[BotAddress] = []
        absent: dict[int, str] = {}
        try:
            for team, name in enumerate(team_bots):
                try:
                    where = await self.local_bots.acquire(self.store.bot(name), seats_per_team)
                except (BotStartError, StoreError) as error:  # StoreError: removed meanwhile
                    detail = f"did not start: {safe_text(error)}"
                    log.warning("bot_not_started", bot=name, set_id=duplicate.id, detail=detail)
                    absent[rules.seats_of(team)[0]] = detail
                    self._void(job.set_in_play, f"{name} did not start")
                    where = ["-"]
                taken.extend(address for address in where if address != "-")
                addresses.append(BotAddress(name, ",".join(where)))
            seats = seats_for_teams(rules, addresses)
            described = self.local_bots.described(taken)  # checked when started: no handshake per match
            return await run_match(settings, seats, absent=absent, described=described)
        finally:
            self.local_bots.release(taken)

    def _void(self, set_in_play: SetInPlay, reason: str) -> None:
        """Make a set void: never rated, never resumed; the rest of its matches are not played."""
        if set_in_play.void:
            return
        set_in_play.void = True
        set_id = set_in_play.duplicate.id
        self.report.sets_voided += 1
        if len(self.report.voided_sets) < VOIDED_SETS_KEPT:
            self.report.voided_sets.append((set_id, reason))
        self.store.void_set(set_id, reason)
        log.warning("set_voided", set_id=set_id, reason=reason)

    def _check_probation(self, name: str) -> None:
        reason = probation_reason(self.store, name, self.settings.probation_after, self.report)
        if reason is None:
            return
        try:
            self.store.set_probation(name, reason)
        except StoreError:
            return  # removed meanwhile
        self.report.probations.append((name, reason))
        log.warning("bot_put_on_probation", bot=name, reason=reason)

    @property
    def planned_matches(self) -> int | None:
        """How many matches this run will store as it stands (None: until stopped or out of time). Sets
        are played whole, and sets left unfinished by an earlier run first, so this may grow beyond
        `settings.matches`; a voided set's unplayed matches drop out of it."""
        known = self.launched - self.lost + self.queued
        target = self.settings.matches
        return None if target is None else max(target, known)

    async def run(self) -> LadderReport:
        """Play until the number of matches is reached or the time is up (rounded up to whole sets), or
        `stop()` is called."""
        self.check()
        started = time.perf_counter()
        deadline = None if self.settings.duration_s is None else started + self.settings.duration_s
        sets = self.sets()
        target = self.settings.matches
        current: list[Job] = []

        def next_job() -> Job | None:
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
                if target is not None and self.launched >= target:
                    return None
                if deadline is not None and time.perf_counter() >= deadline:
                    if not self.out_of_time:
                        self.out_of_time = True
                        log.info("ladder_out_of_time", seconds=self.settings.duration_s)
                    return None
                current = next(sets, [])
                if not current:
                    return None
            job = current.pop(0)
            self.launched += 1
            self.queued = len(current)
            for name in job.duplicate.team_bots(job.rotation):
                self.scheduled[name] = self.scheduled.get(name, 0) + 1
            return job

        async def worker() -> None:
            try:
                while (job := next_job()) is not None:
                    await self.play(job)
            except StoreError as error:
                # The store cannot be written: start nothing more, let the other matches end.
                log.error("ladder_store_failed", error=str(error))
                self.store_failure = self.store_failure or error
                self.stop()

        await self.recheck_down_bots()
        workers = [asyncio.create_task(worker()) for _ in range(self.settings.concurrency)]
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
        with what finished; their sets stay unfinished, for the next run to finish."""
        self.stopping = True
        if now:
            for task in self._workers:
                task.cancel()
