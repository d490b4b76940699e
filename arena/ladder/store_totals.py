"""Each bot's running totals per rating pool, and the pools, in the ladder's file (schema version 3): what
the pairing and the standings read, a row per bot, whatever the length of the history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple
from typing import Any

from arena.ladder.entries import BotTotals
from arena.ladder.store_file import StoreFile, every_method_store_errors, is_integer


@every_method_store_errors
class TotalsStore(StoreFile):
    """The store's part that reads and writes the running totals (the match's own transaction writes
    them, in LadderStore.save_match)."""

    def totals(self, pool: str) -> dict[str, BotTotals]:
        """Each bot's running totals in `pool` (every bot that played there, registered or not)."""
        rows = self._db.execute(f"SELECT bot, {self._TOTALS_COLUMNS} FROM bot_totals WHERE pool = ?", (pool,))
        return {row[0]: self._bot_totals(row[0], row[1:]) for row in rows}

    def matches_played(self, pool: str) -> dict[str, int]:
        """How many matches each bot played in `pool` (what the pairing reads)."""
        rows = self._db.execute("SELECT bot, matches FROM bot_totals WHERE pool = ?", (pool,))
        return {bot: int(matches) for bot, matches in rows}

    def pools(self) -> dict[str, int]:
        """Each pool with a stored match, with its number of matches, most matches first."""
        rows = self._db.execute("SELECT name, matches FROM pools ORDER BY matches DESC, name")
        return {name: int(matches) for name, matches in rows}

    _TOTALS_COLUMNS = "matches, wins, losses, timeouts, illegal_moves, crashes"

    def _totals(self, bot: str, pool: str) -> BotTotals:
        row = self._db.execute(
            f"SELECT {self._TOTALS_COLUMNS} FROM bot_totals WHERE bot = ? AND pool = ?", (bot, pool)
        ).fetchone()
        return BotTotals() if row is None else self._bot_totals(bot, row)

    def _bot_totals(self, bot: str, row: Sequence[Any]) -> BotTotals:
        if not all(is_integer(value) for value in row):
            raise self._damaged(f"the totals of {bot!r}")
        return BotTotals(*row)

    def _save_totals(self, bot: str, pool: str, totals: BotTotals) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO bot_totals VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bot, pool, *astuple(totals)),
        )
