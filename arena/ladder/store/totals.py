"""Each bot's running totals per rating pool, and the pools, in the ladder's database (schema version 3):
what the pairing and the standings read, a row per bot, whatever the length of the history. Ported to
SQLAlchemy Core: it runs on SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any, Final

from sqlalchemy import select

from arena.ladder.rating import BotTotals
from arena.ladder.store.database import replace
from arena.ladder.store.file import StoreFile, every_method_store_errors, is_integer
from arena.ladder.store.relations import bot_totals, pools

_COUNTS: Final = tuple(bot_totals.c[field.name] for field in fields(BotTotals))
"""The columns of the counts, in BotTotals' order."""


@every_method_store_errors
class TotalsStore(StoreFile):
    """The store's part that reads and writes the running totals (the match's own transaction writes
    them, in LadderStore.save_match)."""

    def totals(self, pool: str) -> dict[str, BotTotals]:
        """Each bot's running totals in `pool` (every bot that played there, registered or not)."""
        rows = self._conn.execute(select(bot_totals.c.bot, *_COUNTS).where(bot_totals.c.pool == pool))
        return {row[0]: self._bot_totals(row[0], row[1:]) for row in rows}

    def matches_played(self, pool: str) -> dict[str, int]:
        """How many matches each bot played in `pool` (what the pairing reads)."""
        rows = self._conn.execute(
            select(bot_totals.c.bot, bot_totals.c.matches).where(bot_totals.c.pool == pool)
        )
        return {bot: int(matches) for bot, matches in rows}

    def pools(self) -> dict[str, int]:
        """Each pool with a stored match, with its number of matches, most matches first."""
        rows = self._conn.execute(
            select(pools.c.name, pools.c.matches).order_by(pools.c.matches.desc(), pools.c.name)
        )
        return {name: int(matches) for name, matches in rows}

    def _totals(self, bot: str, pool: str) -> BotTotals:
        row = self._conn.execute(
            select(*_COUNTS).where(bot_totals.c.bot == bot, bot_totals.c.pool == pool)
        ).first()
        return BotTotals() if row is None else self._bot_totals(bot, row)

    def _bot_totals(self, bot: str, row: Sequence[Any]) -> BotTotals:
        if not all(is_integer(value) for value in row):
            raise self._damaged(f"the totals of {bot!r}")
        return BotTotals(*row)

    def _save_totals(self, bot: str, pool: str, totals: BotTotals) -> None:
        replace(self._conn, bot_totals, [{"bot": bot, "pool": pool, **asdict(totals)}])
