"""The leases of sets and the health of bots in the ladder's database (schema version 3): several
runners on one database share the sets, each claiming a set for a while and renewing the claim as it
plays; a bot the host cannot reach or start is counted, and marked down after enough failures in a row.
Ported to SQLAlchemy Core: it runs on SQLite and PostgreSQL alike."""

from __future__ import annotations

import time
from collections.abc import Collection

from sqlalchemy import or_, select, update

from arena.ladder.store.file import StoreFile, every_method_store_errors, is_integer, is_number
from arena.ladder.store.relations import bots, sets


@every_method_store_errors
class LeaseStore(StoreFile):
    """The store's part that claims, renews and releases sets, and records whether bots were reached."""

    def claim_set(self, set_id: int, owner: str, lease_s: float) -> bool:
        """Claim an unfinished set for `owner` for `lease_s` seconds, atomically: only when nobody holds
        it (no lease, an expired one, or `owner`'s own) and it is not waiting to be tried again."""
        now = time.time()
        with self._transaction():
            claimed = self._conn.execute(
                update(sets)
                .where(
                    sets.c.id == set_id,
                    sets.c.rated_at.is_(None),
                    sets.c.void_reason.is_(None),
                    or_(sets.c.lease_owner.is_(None), sets.c.lease_until < now, sets.c.lease_owner == owner),
                    or_(sets.c.not_before.is_(None), sets.c.not_before <= now),
                )
                .values(lease_owner=owner, lease_until=now + lease_s)
            )
        return claimed.rowcount == 1

    def renew_leases(self, owner: str, set_ids: Collection[int], lease_s: float) -> set[int]:
        """Extend `owner`'s leases of `set_ids` by `lease_s` seconds from now; the ids it still holds (a
        lease that expired and was claimed by another runner is lost)."""
        if not set_ids:
            return set()
        ours = (sets.c.lease_owner == owner, sets.c.id.in_(list(set_ids)))
        with self._transaction():
            self._conn.execute(update(sets).where(*ours).values(lease_until=time.time() + lease_s))
            held = self._conn.scalars(select(sets.c.id).where(*ours)).all()
        return set(held)

    def release_set(
        self, set_id: int, owner: str, retry_s: float | None = None, retry_max_s: float = 0
    ) -> float:
        """Give up `owner`'s lease of a set. With `retry_s`, the set could not start: nobody claims it
        for `retry_s` seconds, doubled for each time in a row this happened (at most `retry_max_s`).
        Returns the seconds until it may be claimed again (0 without `retry_s`)."""
        this_set = sets.c.id == set_id
        with self._transaction():
            row = self._conn.execute(
                select(sets.c.start_failures).where(this_set, sets.c.lease_owner == owner)
            ).first()
            if row is None:
                return 0.0  # not ours (any more)
            wait = 0.0
            if retry_s is not None:
                failures = row[0] if is_integer(row[0]) else 0
                wait = min(retry_s * 2 ** min(failures, 30), max(retry_s, retry_max_s))
                self._conn.execute(
                    update(sets)
                    .where(this_set)
                    .values(not_before=time.time() + wait, start_failures=sets.c.start_failures + 1)
                )
            self._conn.execute(update(sets).where(this_set).values(lease_owner=None, lease_until=None))
        return wait

    def record_host_failure(self, name: str, down_after: int) -> bool:
        """Count a failure of the host to reach or start a bot when a set started; at `down_after` in a
        row the bot is marked down. Returns whether it was marked down now."""
        this_bot = bots.c.name == name
        with self._transaction():
            self._conn.execute(update(bots).where(this_bot).values(host_failures=bots.c.host_failures + 1))
            marked = self._conn.execute(
                update(bots)
                .where(this_bot, bots.c.down_since.is_(None), bots.c.host_failures >= max(1, down_after))
                .values(down_since=time.time())
            )
        return marked.rowcount == 1

    def record_host_success(self, name: str) -> bool:
        """The host reached or started a bot: its count of failures starts again, and it is no longer
        down. Returns whether it was down."""
        this_bot = bots.c.name == name
        row = self._conn.execute(select(bots.c.host_failures, bots.c.down_since).where(this_bot)).first()
        if row is None or (row[0] == 0 and row[1] is None):
            return False  # nothing to write: most starts
        with self._transaction():
            self._conn.execute(update(bots).where(this_bot).values(host_failures=0, down_since=None))
        return row[1] is not None

    def down_bots(self) -> dict[str, float]:
        """The bots marked down, with when (seconds since the epoch); none in a read-only file of an
        older version."""
        if not self._has_column("bots", "down_since"):
            return {}
        rows = self._conn.execute(
            select(bots.c.name, bots.c.down_since).where(bots.c.down_since.is_not(None))
        )
        down = {}
        for name, since in rows:
            if not (isinstance(name, str) and is_number(since)):
                raise self._damaged(f"the row of bot {name!r}")
            down[name] = float(since)
        return down
