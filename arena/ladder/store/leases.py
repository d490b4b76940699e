"""The leases of sets in the ladder's database: several runners on one database share the sets, each
claiming a set for a while and renewing the claim as it plays; a set that could not start waits before
it is claimed again, longer each time in a row."""

from __future__ import annotations

import time
from collections.abc import Collection

from sqlalchemy import or_, select, update

from arena.ladder.store.entries import DuplicateSet
from arena.ladder.store.file import StoreFile, StorePart, every_method_store_errors, is_integer
from arena.ladder.store.relations import sets
from arena.ladder.store.sets import SetStore


@every_method_store_errors
class LeaseStore(StorePart):
    """The store's part that claims, renews and releases sets."""

    def __init__(self, file: StoreFile, sets: SetStore) -> None:
        super().__init__(file)
        self._sets = sets

    def claimable_sets(self, owner: str) -> list[tuple[DuplicateSet, list[int]]]:
        """The unfinished sets (see `unfinished_sets`) that `owner` may claim now: nobody else holds a
        live lease of them and they are not waiting to be tried again."""
        now = time.time()
        free = set(
            self._conn.scalars(
                select(sets.c.id).where(
                    sets.c.rated_at.is_(None),
                    sets.c.void_reason.is_(None),
                    or_(sets.c.lease_owner.is_(None), sets.c.lease_until < now, sets.c.lease_owner == owner),
                    or_(sets.c.not_before.is_(None), sets.c.not_before <= now),
                )
            )
        )
        if not free:
            return []
        return [
            (duplicate, missing)
            for duplicate, missing in self._sets.unfinished_sets()
            if duplicate.id in free
        ]

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
