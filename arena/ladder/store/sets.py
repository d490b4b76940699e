"""The duplicate sets in the ladder's database: each recorded before its first match is played, read back
with the rotations still to play, made void (kept in the history, never rated nor resumed) or rated once.
A stored set the ladder could not play (the file was edited by hand?) is a StoreError, not a crash."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, and_, func, or_, select, update

from arena.ladder.store import relations
from arena.ladder.store.entries import DuplicateSet, pool_name
from arena.ladder.store.file import StorePart, every_method_store_errors, is_integer, is_number
from arena.ladder.store.rows import joined_seed, split_seed
from fiftysix.engine import MatchRules, Ruleset


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _are_rules(players: int, ruleset: str, deal_cap: int | None) -> bool:
    """Whether a stored set's settings make a match (the ladder plays it next)."""
    try:
        MatchRules(players, Ruleset.parse(ruleset), deal_cap)
    except ValueError:
        return False
    return True


@every_method_store_errors
class SetStore(StorePart):
    """The store's part that records duplicate sets, reads the unfinished ones, and makes them void."""

    def create_set(
        self,
        players: int,
        ruleset: str,
        deal_cap: int | None,
        seed: int,
        bots: Sequence[str],
        lease: tuple[str, float] | None = None,
        event: str | None = None,
        *,
        isolated: bool,
    ) -> DuplicateSet:
        """Record a new duplicate set before its first match is played: its `seed` (0 to 2^128 - 1, kept
        in two columns: `split_seed`), and whether its bots are all ones the arena starts itself
        (`isolated`: entries.isolated of their BotEntries); with `lease` (owner, seconds), claimed by that
        owner already (see `claim_set`); with `event`, played for that event and rated in its pool.

        :raises ValueError: for a seed outside 0 to 2^128 - 1.
        """
        low, high = split_seed(seed)
        now = time.time()
        owner, until = (None, None) if lease is None else (lease[0], now + lease[1])
        with self._transaction():
            inserted = self._conn.execute(
                relations.sets.insert().values(
                    created_at=now,
                    players=players,
                    ruleset=ruleset,
                    deal_cap=deal_cap,
                    seed=low,
                    seed_high=high,
                    bots=json.dumps(list(bots)),
                    rotations=len(bots),
                    lease_owner=owner,
                    lease_until=until,
                    event=event,
                    isolated=int(isolated),
                )
            )
        key = inserted.inserted_primary_key
        assert key is not None
        return DuplicateSet(
            int(key[0]), players, ruleset, deal_cap, seed, tuple(bots), len(bots), event, isolated
        )

    def mark_set_shown(self, set_id: int) -> None:
        """Note that a move of the set was made public on the live page now: the first time is kept
        (calling it again changes nothing), and an unknown set is left alone, as `void_set` does."""
        sets = relations.sets
        first_time = and_(sets.c.id == set_id, sets.c.shown_at.is_(None))
        with self._transaction():
            self._conn.execute(update(sets).where(first_time).values(shown_at=time.time()))

    def sets_not_isolated(self) -> dict[str, int]:
        """Per pool, its rated sets with a bot the arena could not isolate (a remote bot), counting the
        sets stored before schema 5 (not known to be isolated); pools without any are left out."""
        sets = relations.sets
        isolated = self._column(sets.c.isolated)
        rows = self._conn.execute(
            select(sets.c.players, sets.c.ruleset, sets.c.event, func.count())
            .where(sets.c.rated_at.is_not(None), or_(isolated.is_(None), isolated != 1))
            .group_by(sets.c.players, sets.c.ruleset, sets.c.event)
        )
        counts: dict[str, int] = {}
        for players, ruleset, event, count in rows:
            pool = pool_name(int(players), str(ruleset), event)
            counts[pool] = counts.get(pool, 0) + int(count)
        return counts

    def unfinished_sets(self) -> list[tuple[DuplicateSet, list[int]]]:
        """Sets not rated yet, each with the rotations still to play (possibly none)."""
        sets = relations.sets
        rows = self._conn.execute(
            self._set_columns()
            .where(sets.c.rated_at.is_(None), sets.c.void_reason.is_(None))
            .order_by(sets.c.id)
        ).all()
        unfinished = []
        for row in rows:
            duplicate = self._duplicate_set(row)
            played = select(relations.matches.c.rotation).where(relations.matches.c.set_id == duplicate.id)
            done = set(self._conn.scalars(played))
            unfinished.append((duplicate, [r for r in range(duplicate.rotations) if r not in done]))
        return unfinished

    def set_with_seed(self, seed: int) -> DuplicateSet | None:
        """The set dealt from `seed`, if one is stored: a runner whose connection was lost while it created
        a set finds it again (a seed is 128 random bits: it names one set). Not indexed: read only then."""
        low, high = split_seed(seed)
        sets = relations.sets
        row = self._conn.execute(
            self._set_columns().where(sets.c.seed == low, sets.c.seed_high == high).order_by(sets.c.id)
        ).first()
        return None if row is None else self._duplicate_set(row)

    def _set_columns(self) -> Select[Any]:
        # A read-only file of an older version lacks the later columns: read as NULL (`_column`).
        sets = relations.sets
        return select(
            sets.c.id,
            sets.c.players,
            sets.c.ruleset,
            sets.c.deal_cap,
            sets.c.seed,
            self._column(sets.c.seed_high),
            sets.c.bots,
            sets.c.rotations,
            self._column(sets.c.event),
            self._column(sets.c.isolated),
            self._column(sets.c.shown_at),
        )

    def _duplicate_set(self, row: Sequence[Any]) -> DuplicateSet:
        """A row of `_set_columns`, checked: a set the ladder could not play is a StoreError."""
        set_id, players, ruleset, deal_cap, seed, seed_high, bots_json, rotations, event = row[:9]
        isolated, shown_at = row[9:]
        bot_names = self._decoded(bots_json, f"the bots of set {set_id}")
        if not (
            all(is_integer(value) for value in (set_id, players, seed, rotations))
            and isinstance(ruleset, str)
            and (deal_cap is None or is_integer(deal_cap))
            and (seed_high is None or is_integer(seed_high))
            and _is_list_of(bot_names, str)
            and rotations == len(bot_names)
            and _are_rules(players, ruleset, deal_cap)
            and (event is None or isinstance(event, str))
            and isolated in (None, 0, 1)
            and (shown_at is None or is_number(shown_at))
        ):
            raise self._damaged(f"set {set_id}")
        return DuplicateSet(
            set_id,
            players,
            ruleset,
            deal_cap,
            joined_seed(seed, seed_high),
            tuple(bot_names),
            rotations,
            event,
            None if isolated is None else bool(isolated),
            None if shown_at is None else float(shown_at),
        )

    def void_set(self, set_id: int, reason: str) -> None:
        """Mark a set void: its stored matches stay in the history, it is never rated nor resumed."""
        with self._transaction():
            self._conn.execute(
                update(relations.sets)
                .where(relations.sets.c.id == set_id, relations.sets.c.rated_at.is_(None))
                .values(void_reason=reason)
            )

    def void_reason(self, set_id: int) -> str | None:
        """Why a set is void, or None."""
        reason: str | None = self._conn.scalar(
            select(relations.sets.c.void_reason).where(relations.sets.c.id == set_id)
        )
        return reason

    def rated_sets(self) -> set[int]:
        """The ids of the sets whose rating event was applied."""
        sets = relations.sets
        return set(self._conn.scalars(select(sets.c.id).where(sets.c.rated_at.is_not(None))))
