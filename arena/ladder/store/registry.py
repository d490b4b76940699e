"""The register of bots in the ladder's database: each bot by name, reached at an address or started
from a command, with its owner, its probation and its health (a bot the host cannot reach or start is
counted, and marked down after enough failures in a row), and its rating in each pool."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, and_, delete, func, select, update
from sqlalchemy.exc import IntegrityError

from arena.ladder.rating.values import START_RATING
from arena.ladder.store import relations
from arena.ladder.store.entries import DEFAULT_POOL, BotEntry
from arena.ladder.store.file import StoreError, StoreFile, StorePart, every_method_store_errors, is_number
from arena.ladder.store.sets import SetStore


@every_method_store_errors
class BotRegistry(StorePart):
    """The store's part that registers bots, changes and removes them, and records whether the host
    reached them."""

    def __init__(self, file: StoreFile, sets: SetStore) -> None:
        super().__init__(file)
        self._sets = sets

    def add_bot(
        self,
        name: str,
        address: str | None = None,
        command: str | None = None,
        owner: str | None = None,
        participant_address: bool = False,
    ) -> BotEntry:
        """Register a bot by address or by command, with its author (`owner`, None: unknown); a name
        already taken is refused. It starts with the starting rating in every pool (a removed bot's name
        registered again starts over). `participant_address`: a participant gave the address (the
        ladder checks it against the host's address policy each time it connects)."""
        if (address is None) == (command is None):
            raise StoreError("a bot has either an address or a command")
        now = time.time()
        try:
            with self._transaction():
                self._conn.execute(
                    relations.bots.insert().values(
                        name=name,
                        address=address,
                        command=command,
                        owner=owner,
                        participant_address=int(participant_address and address is not None),
                        created_at=now,
                        updated_at=now,
                    )
                )
                self._conn.execute(delete(relations.ratings).where(relations.ratings.c.bot == name))
        except IntegrityError:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return self.bot(name)

    def _bot_rows(self, pool: str) -> Select[Any]:
        """The registered bots with their rating in `pool` (the starting rating where they have none)."""
        in_pool = and_(relations.ratings.c.bot == relations.bots.c.name, relations.ratings.c.pool == pool)
        return select(
            relations.bots.c.name,
            relations.bots.c.address,
            relations.bots.c.command,
            func.coalesce(relations.ratings.c.rating, START_RATING),
            relations.bots.c.probation,
            self._column(relations.bots.c.owner),
            self._column(relations.bots.c.participant_address),
        ).select_from(relations.bots.outerjoin(relations.ratings, in_pool))

    def bot(self, name: str, pool: str = DEFAULT_POOL) -> BotEntry:
        """The bot registered as `name`, with its rating in `pool`."""
        row = self._conn.execute(self._bot_rows(pool).where(relations.bots.c.name == name)).first()
        if row is None:
            raise StoreError(f"no bot named {name!r} is registered")
        return self._bot_entry(row)

    def bots(self, pool: str = DEFAULT_POOL) -> list[BotEntry]:
        """Every registered bot, by name, with its rating in `pool`."""
        rows = self._conn.execute(self._bot_rows(pool).order_by(relations.bots.c.name))
        return [self._bot_entry(row) for row in rows]

    def bot_ratings(self) -> dict[str, dict[str, float]]:
        """Each registered bot's rating in each pool where it has one (not the starting rating)."""
        ratings_by_bot: dict[str, dict[str, float]] = {}
        rows = self._conn.execute(
            select(relations.ratings.c.bot, relations.ratings.c.pool, relations.ratings.c.rating)
            .join(relations.bots, relations.bots.c.name == relations.ratings.c.bot)
            .order_by(relations.ratings.c.bot, relations.ratings.c.pool)
        )
        for bot, pool, rating in rows:
            if not is_number(rating):
                raise self._damaged(f"the rating of {bot!r}")
            ratings_by_bot.setdefault(bot, {})[pool] = float(rating)
        return ratings_by_bot

    def _bot_entry(self, row: Sequence[Any]) -> BotEntry:
        name, address, command, rating, probation, owner, participant_address = row
        if not (
            isinstance(name, str)
            and all(value is None or isinstance(value, str) for value in (address, command, probation, owner))
            and is_number(rating)
            and participant_address in (None, 0, 1)
        ):
            raise self._damaged(f"the row of bot {name!r}")
        return BotEntry(name, address, command, float(rating), probation, owner, bool(participant_address))

    def update_bot(
        self,
        name: str,
        address: str | None = None,
        command: str | None = None,
        participant_address: bool = False,
    ) -> BotEntry:
        """Give a bot a new address or command (its rating and history stay); `participant_address` as
        for `add_bot` (the host's own update clears it)."""
        self.bot(name)
        if (address is None) == (command is None):
            raise StoreError("give either a new address or a new command")
        with self._transaction():
            self._conn.execute(
                update(relations.bots)
                .where(relations.bots.c.name == name)
                .values(
                    address=address,
                    command=command,
                    participant_address=int(participant_address and address is not None),
                    updated_at=time.time(),
                )
            )
        return self.bot(name)

    def set_owner(self, name: str, owner: str | None) -> BotEntry:
        """Give a bot an owner (its author), or none with None; its rating and history stay."""
        self.bot(name)
        with self._transaction():
            self._conn.execute(
                update(relations.bots)
                .where(relations.bots.c.name == name)
                .values(owner=owner, updated_at=time.time())
            )
        return self.bot(name)

    def remove_bot(self, name: str) -> None:
        """Unregister a bot; its finished matches stay in the history, and its unfinished sets are made
        void (nobody could ever finish them)."""
        self.bot(name)
        orphans = [
            duplicate.id for duplicate, _missing in self._sets.unfinished_sets() if name in duplicate.bots
        ]
        with self._transaction():
            self._conn.execute(delete(relations.bots).where(relations.bots.c.name == name))
            if orphans:
                self._conn.execute(
                    update(relations.sets)
                    .where(relations.sets.c.id.in_(orphans), relations.sets.c.rated_at.is_(None))
                    .values(void_reason=f"{name} was removed")
                )

    def set_probation(self, name: str, reason: str | None) -> None:
        """Put a bot on probation (skipped by the ladder) with a reason, or take it off with None."""
        self.bot(name)
        with self._transaction():
            self._conn.execute(
                update(relations.bots)
                .where(relations.bots.c.name == name)
                .values(probation=reason, updated_at=time.time())
            )

    def record_host_failure(self, name: str, down_after: int) -> bool:
        """Count a failure of the host to reach or start a bot when a set started; at `down_after` in a
        row the bot is marked down. Returns whether it was marked down now."""
        bots = relations.bots
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
        bots = relations.bots
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
        bots = relations.bots
        rows = self._conn.execute(
            select(bots.c.name, bots.c.down_since).where(bots.c.down_since.is_not(None))
        )
        down = {}
        for name, since in rows:
            if not (isinstance(name, str) and is_number(since)):
                raise self._damaged(f"the row of bot {name!r}")
            down[name] = float(since)
        return down
