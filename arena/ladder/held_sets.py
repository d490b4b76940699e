"""The sets one ladder run holds: each claimed with a lease in the store (so that several runners share
one file), renewed while its matches are played, given up when they are done, or put back to be tried
again later; a set whose lease another runner took over is dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

import structlog

from arena.ladder.live_gate import LiveGate
from arena.ladder.run_settings import LadderSettings
from arena.ladder.store import DuplicateSet, LadderStore, StoreError

log = structlog.get_logger("ladder")


@dataclass
class SetInPlay:
    """What the run knows of a set it plays, shared by the set's jobs and let go with them."""

    duplicate: DuplicateSet
    gate: LiveGate
    """Holds its live events until every rotation has ended their deal (live_gate.py)."""
    void: bool = False
    jobs: int = 0
    """Its matches this run has neither finished nor dropped; at 0 its lease is given up."""
    postponed: bool = False
    """A bot did not answer when it started: it was put back, none of its matches is played now."""
    lease_lost: bool = False
    """Another runner took it over (this runner did not renew its lease in time)."""
    checked: bool = False
    check_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """The first of its matches to start checks its bots; the others wait for that."""

    @property
    def closed(self) -> bool:
        """No more of its matches are to be started by this run."""
        return self.void or self.postponed or self.lease_lost


@dataclass
class Job:
    set_in_play: SetInPlay
    rotation: int

    @property
    def duplicate(self) -> DuplicateSet:
        return self.set_in_play.duplicate


class HeldSets:
    """The sets this run holds a lease of, under one owner name: the run's own (`LocalBots.run`, host,
    process and a random part, so that two runs in one process differ), which also names the folder of
    its bots' logs."""

    def __init__(self, store: LadderStore, settings: LadderSettings, owner: str) -> None:
        self.store = store
        self.settings = settings
        self.owner = owner
        self.held: dict[int, SetInPlay] = {}

    def __contains__(self, set_id: int) -> bool:
        return set_id in self.held

    def __bool__(self) -> bool:
        return bool(self.held)

    def hold(self, duplicate: DuplicateSet, rotations: Iterable[int]) -> list[Job]:
        """The jobs of a set this run has claimed; its lease is renewed until they are done."""
        rotations = list(rotations)
        in_play = SetInPlay(duplicate, gate=LiveGate(rotations, lambda: self._shown(duplicate.id)))
        jobs = [Job(in_play, rotation) for rotation in rotations]
        in_play.jobs = len(jobs)
        self.held[duplicate.id] = in_play
        return jobs

    def _shown(self, set_id: int) -> bool:
        """Note in the store that a move of the set goes live, so that no runner replays its deals; False
        when it cannot be noted (then nothing of the set goes live)."""
        try:
            self.store.sets.mark_set_shown(set_id)
        except StoreError as error:  # the live feed's own writes will fail too; the set goes on
            log.warning("set_shown_not_noted", set_id=set_id, error=str(error))
            return False
        return True

    def job_done(self, in_play: SetInPlay, count: int = 1) -> None:
        """`count` of a set's jobs finished or dropped; after the last, its lease is given up."""
        in_play.jobs -= count
        if in_play.jobs <= 0:
            self.release(in_play)

    def release(self, in_play: SetInPlay, retry: bool = False) -> float:
        """Give up the lease of a set (with `retry`: put it back to be tried again later); the seconds
        until it may be claimed again. A lease that cannot be given up expires by itself."""
        set_id = in_play.duplicate.id
        if self.held.pop(set_id, None) is None:
            return 0.0
        try:
            return self.store.leases.release_set(
                set_id,
                self.owner,
                retry_s=self.settings.retry_s if retry else None,
                retry_max_s=self.settings.retry_max_s,
            )
        except StoreError as error:
            log.warning("lease_not_released", set_id=set_id, error=str(error))
            return 0.0

    def renew(self) -> None:
        """Renew the leases of the sets in play; a set whose lease another runner took over is dropped."""
        if not self.held:
            return
        kept = self.store.leases.renew_leases(self.owner, list(self.held), self.settings.lease_s)
        for set_id in set(self.held) - kept:
            in_play = self.held.pop(set_id)
            in_play.lease_lost = True
            in_play.gate.freeze()  # the other runner plays its deals now
            log.warning("lease_lost", set_id=set_id, reason="another runner took the set over")
