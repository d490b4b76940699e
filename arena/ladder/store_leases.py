"""The leases of sets and the health of bots in the ladder's file (schema version 3): several runners on
one file share the sets, each claiming a set for a while and renewing the claim as it plays; a bot the
host cannot reach or start is counted, and marked down after enough failures in a row."""

from __future__ import annotations

import time
from collections.abc import Collection

from arena.ladder.store_file import StoreFile, every_method_store_errors, is_integer, is_number


@every_method_store_errors
class LeaseStore(StoreFile):
    """The store's part that claims, renews and releases sets, and records whether bots were reached."""

    def claim_set(self, set_id: int, owner: str, lease_s: float) -> bool:
        """Claim an unfinished set for `owner` for `lease_s` seconds, atomically: only when nobody holds
        it (no lease, an expired one, or `owner`'s own) and it is not waiting to be tried again."""
        now = time.time()
        with self._transaction():
            cursor = self._db.execute(
                "UPDATE sets SET lease_owner = ?, lease_until = ? WHERE id = ?"
                " AND rated_at IS NULL AND void_reason IS NULL"
                " AND (lease_owner IS NULL OR lease_until < ? OR lease_owner = ?)"
                " AND (not_before IS NULL OR not_before <= ?)",
                (owner, now + lease_s, set_id, now, owner, now),
            )
        return cursor.rowcount == 1

    def renew_leases(self, owner: str, set_ids: Collection[int], lease_s: float) -> set[int]:
        """Extend `owner`'s leases of `set_ids` by `lease_s` seconds from now; the ids it still holds (a
        lease that expired and was claimed by another runner is lost)."""
        if not set_ids:
            return set()
        marks = ", ".join("?" * len(set_ids))
        with self._transaction():
            self._db.execute(
                f"UPDATE sets SET lease_until = ? WHERE lease_owner = ? AND id IN ({marks})",
                (time.time() + lease_s, owner, *set_ids),
            )
            rows = self._db.execute(
                f"SELECT id FROM sets WHERE lease_owner = ? AND id IN ({marks})", (owner, *set_ids)
            ).fetchall()
        return {set_id for (set_id,) in rows}

    def release_set(
        self, set_id: int, owner: str, retry_s: float | None = None, retry_max_s: float = 0
    ) -> float:
        """Give up `owner`'s lease of a set. With `retry_s`, the set could not start: nobody claims it
        for `retry_s` seconds, doubled for each time in a row this happened (at most `retry_max_s`).
        Returns the seconds until it may be claimed again (0 without `retry_s`)."""
        with self._transaction():
            row = self._db.execute(
                "SELECT start_failures FROM sets WHERE id = ? AND lease_owner = ?", (set_id, owner)
            ).fetchone()
            if row is None:
                return 0.0  # not ours (any more)
            wait = 0.0
            if retry_s is not None:
                failures = row[0] if is_integer(row[0]) else 0
                wait = min(retry_s * 2 ** min(failures, 30), max(retry_s, retry_max_s))
                self._db.execute(
                    "UPDATE sets SET not_before = ?, start_failures = start_failures + 1 WHERE id = ?",
                    (time.time() + wait, set_id),
                )
            self._db.execute("UPDATE sets SET lease_owner = NULL, lease_until = NULL WHERE id = ?", (set_id,))
        return wait

    def record_host_failure(self, name: str, down_after: int) -> bool:
        """Count a failure of the host to reach or start a bot when a set started; at `down_after` in a
        row the bot is marked down. Returns whether it was marked down now."""
        with self._transaction():
            self._db.execute("UPDATE bots SET host_failures = host_failures + 1 WHERE name = ?", (name,))
            cursor = self._db.execute(
                "UPDATE bots SET down_since = ? WHERE name = ? AND down_since IS NULL AND host_failures >= ?",
                (time.time(), name, max(1, down_after)),
            )
        return cursor.rowcount == 1

    def record_host_success(self, name: str) -> bool:
        """The host reached or started a bot: its count of failures starts again, and it is no longer
        down. Returns whether it was down."""
        row = self._db.execute(
            "SELECT host_failures, down_since FROM bots WHERE name = ?", (name,)
        ).fetchone()
        if row is None or (row[0] == 0 and row[1] is None):
            return False  # nothing to write: most starts
        with self._transaction():
            self._db.execute("UPDATE bots SET host_failures = 0, down_since = NULL WHERE name = ?", (name,))
        return row[1] is not None

    def down_bots(self) -> dict[str, float]:
        """The bots marked down, with when (seconds since the epoch); none in a read-only file of an
        older version."""
        if not self._has_column("bots", "down_since"):
            return {}
        rows = self._db.execute("SELECT name, down_since FROM bots WHERE down_since IS NOT NULL")
        down = {}
        for name, since in rows:
            if not (isinstance(name, str) and is_number(since)):
                raise self._damaged(f"the row of bot {name!r}")
            down[name] = float(since)
        return down
