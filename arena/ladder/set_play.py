"""Playing one match of a duplicate set for a ladder run: check the set's bots when it starts, start or
find the bots, play, store at once, rate the set when its last match is stored, and keep every failure
inside.

Fair to bots: when a set starts (each time a runner claims it), its bots are checked first: a remote bot
must answer the handshake (`check_timeout_s`), a command bot must start. A bot that does not is not
rated for that set: nothing is stored, the set is put back (retried after `retry_s`, doubling each time)
and the run goes on. After `down_after` such failures in a row the bot is marked down (availability.py).

Containment: no bot ends a run. A bot's faults are recorded in its matches and lead to probation; a
command bot that does not start once its set has started (the check passed) forfeits that match (an
`unreachable` fault) and its set is made void, since a host-side failure must not be rated. A match that
fails for a reason nobody foresaw (an error of the arena's own) is stored with reason `arena_error`,
logged with its traceback, and its set made void; the run goes on. A rotation that another runner on the
same file stored first (after taking over a lease this runner lost) is skipped. Only a StoreError (a
file that cannot be written, or that does not hold what the arena wrote) is raised, for the run to stop.

A store server that goes away is waited for (outages.py): every store call here goes through the
run's `StoreWait`, so a match that finishes while the server is away is kept in memory and stored when it
is back (once: storing is idempotent by match id), and a set's check, its match's bots and its rating
go on where they were. Only past the wait's bound does the StoreError stop the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from functools import partial

import structlog

from arena.ladder.availability import Availability, pinned
from arena.ladder.bots import LocalBots
from arena.ladder.held_sets import HeldSets, Job, SetInPlay
from arena.ladder.live_feed import LiveFeed
from arena.ladder.live_gate import Publish
from arena.ladder.match_play import LocalMatches, MatchOrder, MatchPlayer, PlayedMatch, Replay
from arena.ladder.outages import StoreWait
from arena.ladder.probation import probation_reason
from arena.ladder.ratings import rate_set, store_match
from arena.ladder.run_settings import VOIDED_SETS_KEPT, LadderReport, LadderSettings
from arena.ladder.store import (
    BotEntry,
    DuplicateMatchError,
    DuplicateSet,
    FinishedMatch,
    LadderStore,
    StoreError,
    StoreUnreachableError,
)
from arena.runner import MatchOutcome, MatchSettings, new_match_id
from arena.runner.address_policy import AddressRefusedError
from fiftysix.engine import EndReason, MatchRules, Ruleset

log = structlog.get_logger("ladder")


class SetPlayer:
    """Plays a run's matches one job at a time, any number at once, and keeps the run's report."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        local_bots: LocalBots,
        sets_held: HeldSets,
        scheduled: dict[str, int],
        on_match: Callable[[MatchOutcome, LadderReport], None] | None = None,
        matches: MatchPlayer | None = None,
        store_wait: StoreWait | None = None,
    ) -> None:
        """`matches`: where matches are played (default: here, with `local_bots`); `store_wait`: the run's
        waits for its store (default: one of `settings.store_wait_s`)."""
        self.store = store
        self.settings = settings
        self.store_wait = store_wait or StoreWait(settings.store_wait_s)
        self.local_bots = local_bots
        self.sets_held = sets_held
        self.scheduled = scheduled
        self.on_match = on_match
        self.report = LadderReport()
        self.dropped = 0
        """Jobs handed to `play` and not played: their set was put back or made void before they began."""
        self.lost = 0
        """Matches played, or begun, that were not stored (cancelled, failed, stored by another runner)."""
        self.stopping = False
        """The run is stopping: a match not begun yet (its bots still starting) is not begun."""
        self.matches = matches if matches is not None else LocalMatches(local_bots, lambda: self.stopping)
        self.availability = Availability(
            store, settings, self.matches.unreachable, self.report, self.store_wait
        )

    async def play(self, job: Job) -> None:
        """Play one match of a set (once its bots answered when the set started), store it at once, and
        rate the set if it is complete. Whatever happens in the match, the run goes on (see the module's
        note on containment)."""
        try:
            if self.stopping or not await self._start_set(job.set_in_play):
                self.dropped += 1
                for name in job.duplicate.team_bots(job.rotation):
                    self.scheduled[name] -= 1
            elif not await self._play(job):
                self.dropped += 1
        finally:
            self.sets_held.job_done(job.set_in_play)

    def rate(self, duplicate: DuplicateSet) -> None:
        """Rate the set if it is finished (and not void, nor rated by another runner)."""
        started = time.perf_counter()
        event = rate_set(self.store, duplicate)
        self.report.storage_seconds += time.perf_counter() - started
        if event is not None:
            self.report.sets_rated += 1
            changes = {change.bot: round(change.after - change.before, 1) for change in event}
            log.info("set_rated", set_id=duplicate.id, changes=changes)

    def void(self, set_in_play: SetInPlay, reason: str) -> None:
        """Make a set void: never rated, never resumed; the rest of its matches are not played. Marked
        once written, so that a call the store failed may be made again."""
        if set_in_play.void:
            return
        self.void_set(set_in_play.duplicate.id, reason)
        set_in_play.void = True

    async def void_waiting(self, set_in_play: SetInPlay, reason: str) -> None:
        """`void`, waiting for a store that went away."""
        await self.store_wait.call(partial(self.void, set_in_play, reason))

    def void_set(self, set_id: int, reason: str) -> None:
        """Make a set void in the store, count it in the report and log it."""
        self.store.sets.void_set(set_id, reason)
        self.report.sets_voided += 1
        if len(self.report.voided_sets) < VOIDED_SETS_KEPT:
            self.report.voided_sets.append((set_id, reason))
        log.warning("set_voided", set_id=set_id, reason=reason)

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
        registered = {bot.name: bot for bot in await self.store_wait.call(self.store.registry.bots)}
        absent = [name for name in duplicate.bots if name not in registered]
        if absent:
            await self.void_waiting(in_play, f"{absent[0]} is not registered")
            return
        bots = [registered[name] for name in duplicate.bots]
        failed = await self.availability.check(bots, duplicate, in_play.jobs)
        if failed:
            in_play.postponed = True
            wait = self.sets_held.release(in_play, retry=True)
            self.report.sets_postponed += 1
            log.warning("set_postponed", set_id=duplicate.id, bots=sorted(failed), retry_in_s=round(wait, 1))

    async def _play(self, job: Job) -> bool:
        """Play and store one match; False when it was not begun (the run stopped while its bots
        started)."""
        duplicate = job.duplicate
        team_bots = duplicate.team_bots(job.rotation)
        match_id = new_match_id()  # random: a bot is told it, so it says nothing of the set or rotation
        feed = LiveFeed(self.store.live, match_id, store_wait=self.store_wait)
        gate = job.set_in_play.gate
        on_event = gate.attach(job.rotation, feed.publish)
        stored = cancelled = False

        def replay(new_id: str) -> Publish | None:
            # The match was lost mid-way: what it sent is forgotten, and unless its set was shown it starts
            # again under a new id, so that no spectator sees a match's events twice.
            nonlocal feed
            gate.stop(job.rotation)
            feed.discard()
            if gate.shown:
                return None
            feed = LiveFeed(self.store.live, new_id, store_wait=self.store_wait)
            return gate.attach(job.rotation, feed.publish)

        try:
            played = await self._play_match(job, team_bots, match_id, on_event, replay)
            if played is None:
                return False
            outcome = played.outcome
            feed.close()  # the match is over: nothing of it is written live while it is being stored
            stored = await self._store(job, played)
        except StoreError:
            raise
        except asyncio.CancelledError:
            # Stopped at once: run_match has closed its streams; nothing of the match is stored.
            cancelled = True
            self.report.matches_cancelled += 1
            self.lost += 1
            log.info("ladder_match_cancelled", set_id=duplicate.id, rotation=job.rotation)
            raise
        except Exception as error:
            log.exception("ladder_match_failed", set_id=duplicate.id, rotation=job.rotation)
            self.report.arena_errors += 1
            self.lost += 1
            reason = f"arena error in rotation {job.rotation}: {type(error).__name__}"
            await self.void_waiting(job.set_in_play, reason)
            return True
        finally:
            for name in team_bots:
                self.scheduled[name] -= 1
            if stored:
                gate.stored(job.rotation)
                feed.close()
            else:
                gate.stop(job.rotation)
                feed.discard()
                if gate.shown and not job.set_in_play.lease_lost:
                    # Its deals were public: playing them again would show them to the next players (the
                    # store knows they were shown: a runner that claims the set makes it void).
                    reason = f"rotation {job.rotation} not finished after its deals were shown"
                    if cancelled:  # stopping now: no wait for a store that went away
                        with contextlib.suppress(StoreError):
                            self.void(job.set_in_play, reason)
                    else:
                        await self.void_waiting(job.set_in_play, reason)
        if stored:
            call = self.store_wait.call
            for name in team_bots:
                await call(partial(self.check_probation, name))
            await call(partial(self.rate, duplicate))
            on_match = self.on_match
            if on_match is not None:
                await call(partial(on_match, outcome, self.report))  # an SPRT reads the store
        return True

    async def _store(self, job: Job, played: PlayedMatch) -> bool:
        """Store a match with its bots' outputs and add it to the report, once the store answers (the
        match is kept meanwhile); False when another runner stored its rotation first."""
        duplicate = job.duplicate
        outcome = played.outcome
        started = time.perf_counter()
        try:
            finished = FinishedMatch(
                outcome.match_id,
                duplicate,
                job.rotation,
                outcome.reason,
                tuple(outcome.ranking),
                tuple(outcome.faults),
                outcome.record.to_json(),
                outcome.decisions,
                outcome.elapsed,
                played.outputs,
            )
            await self.store_wait.call(partial(store_match, self.store.matches, finished))
        except DuplicateMatchError as error:
            log.warning("match_not_stored", set_id=duplicate.id, rotation=job.rotation, reason=str(error))
            self.lost += 1
            return False
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
            reason = f"arena error in rotation {job.rotation}: {outcome.arena_error}"
            await self.void_waiting(job.set_in_play, reason)
        return True

    async def _play_match(
        self,
        job: Job,
        team_bots: tuple[str, ...],
        match_id: str,
        on_event: Publish,
        replay: Replay,
    ) -> PlayedMatch | None:
        """Play the match with the run's `MatchPlayer`, each participant's address checked by the host's
        policy again and connected to as checked. A bot that does not start now (it did when the set
        started), or whose address the policy refuses now, forfeits at once, and its set is made void.
        None: the run began to stop while the bots started, so the match is not begun (its set stays
        unfinished). `replay`: asked by a player that plays a lost match again (ray_play.py)."""
        duplicate = job.duplicate
        rules = MatchRules(duplicate.players, Ruleset.parse(duplicate.ruleset), duplicate.deal_cap)
        settings = MatchSettings(
            rules,
            duplicate.seed,
            self.settings.time_control,
            match_id=match_id,
            strikes=self.settings.strikes,
        )
        bots: list[BotEntry | str] = []
        call = self.store_wait.call
        policy = await call(self.store.access.address_policy)
        for name in team_bots:
            try:
                bots.append(await pinned(await call(partial(self.store.registry.bot, name)), policy))
            except StoreUnreachableError:
                raise
            except StoreError as error:  # removed meanwhile
                bots.append(str(error))
            except AddressRefusedError as error:  # a participant's name resolves elsewhere since the check
                bots.append(str(error))
        unwritten: list[str] = []

        def not_started(name: str, detail: str) -> None:
            log.warning("bot_not_started", bot=name, set_id=duplicate.id, detail=detail)
            try:
                self.void(job.set_in_play, f"{name} did not start")
            except StoreError:  # written once the match is over (the store went away meanwhile)
                unwritten.append(f"{name} did not start")

        order = MatchOrder(settings, tuple(bots), team_bots)
        played = await self.matches.play(order, not_started, on_event, replay)
        for reason in unwritten:
            await self.void_waiting(job.set_in_play, reason)
        if played is None:
            log.info("ladder_match_not_begun", set_id=duplicate.id, rotation=job.rotation)
        return played

    def check_probation(self, name: str) -> None:
        """Put a bot on probation when its last matches ended in forfeits of its own."""
        reason = probation_reason(self.store.matches, name, self.settings.probation_after, self.report)
        if reason is None:
            return
        try:
            self.store.registry.set_probation(name, reason)
        except StoreError:
            return  # removed meanwhile
        self.report.probations.append((name, reason))
        log.warning("bot_put_on_probation", bot=name, reason=reason)
