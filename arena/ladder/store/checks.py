"""The compliance check each registration of a bot the arena starts went through (an upload, a command of
the host's), kept in the ladder's database with its report, passed or refused: a refused upload leaves
no bundle and no version (arena/ladder/uploads.py), but its report stays so that whoever uploaded it can
read why. A database without the relation (a read-only file of an older arena) reads as one without
checks."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Final

from sqlalchemy import ColumnElement, and_, delete, select

from arena.check.report import CheckReport
from arena.ladder.store.file import StoreError, StorePart, every_method_store_errors, is_integer, is_number
from arena.ladder.store.relations import bot_checks

LISTED: Final = 50
"""How many checks a listing gives by default, newest first."""
UNREGISTERED_KEPT: Final = 50
"""How many checks that registered no version (refused ones, and the host's commands) each bot keeps: the
newest; an older one goes as a new one is kept, so an entrant's refused uploads (up to `--uploads-per-hour`
of them) cannot grow the database without end. A version's check stays while the version does."""


@dataclass(frozen=True, slots=True)
class BotCheck:
    """One kept check: its id, the bot, who asked for the registration (`owner`: a token's name, which for
    a participant is also the bot's owner, or `host:command-line`), when, the upload version it
    registered (None: refused, or not an upload), whether it passed, and its report."""

    id: int
    bot: str
    owner: str
    checked_at: float
    version: int | None
    passed: bool
    report: CheckReport

    def to_json(self) -> dict[str, object]:
        """The check as JSON: its id, bot, who asked for it (`owner`), when, the version it registered
        (null: refused, or not an upload), and its report as `arena check-bot --json` prints it."""
        return {
            "id": self.id,
            "bot": self.bot,
            "owner": self.owner,
            "checked_at": self.checked_at,
            "version": self.version,
            **self.report.to_json(),
        }


@every_method_store_errors
class CheckStore(StorePart):
    """The store's part that keeps the registrations' checks."""

    def record_check(self, bot: str, owner: str, report: CheckReport, version: int | None = None) -> BotCheck:
        """Keep the check of a registration of `bot` that `owner` asked for (passed when nothing failed),
        with the version it registered."""
        now = time.time()
        row = {
            "bot": bot,
            "owner": owner,
            "checked_at": now,
            "version": version,
            "passed": int(report.ok),
            "report": json.dumps(report.to_json(), ensure_ascii=False),
        }
        with self._transaction():
            key = self._conn.execute(bot_checks.insert().values(**row)).inserted_primary_key
            if version is None:
                self._forget_unregistered(bot)
        assert key is not None
        return BotCheck(int(key[0]), bot, owner, now, version, report.ok, report)

    def checks_of_bot(self, bot: str, limit: int = LISTED) -> list[BotCheck]:
        """The newest `limit` checks of `bot`, newest first."""
        return self._checks(bot_checks.c.bot == bot, limit)

    def version_checks(self, bot: str) -> dict[int, BotCheck]:
        """The check each of `bot`'s kept versions registered with, by version (the newest if several)."""
        found: dict[int, BotCheck] = {}
        for check in self._checks(and_(bot_checks.c.bot == bot, bot_checks.c.version.is_not(None)), None):
            if check.version is not None:
                found.setdefault(check.version, check)
        return found

    def checks_by(self, owner: str, limit: int = LISTED) -> list[BotCheck]:
        """The newest `limit` checks that `owner` asked for (of any bot), newest first."""
        return self._checks(bot_checks.c.owner == owner, limit)

    def check(self, check_id: int) -> BotCheck:
        """One check by its id.

        :raises StoreError: there is no such check.
        """
        found = self._checks(bot_checks.c.id == check_id, 1)
        if not found:
            raise StoreError(f"no check {check_id} in {self.name}")
        return found[0]

    def _forget_unregistered(self, bot: str) -> None:
        """Forget the bot's checks that registered no version, but the newest UNREGISTERED_KEPT."""
        unregistered = and_(bot_checks.c.bot == bot, bot_checks.c.version.is_(None))
        oldest_kept = (
            select(bot_checks.c.id)
            .where(unregistered)
            .order_by(bot_checks.c.id.desc())
            .offset(UNREGISTERED_KEPT - 1)
            .limit(1)
            .scalar_subquery()
        )
        self._conn.execute(delete(bot_checks).where(unregistered, bot_checks.c.id < oldest_kept))

    def _checks(self, where: ColumnElement[bool], limit: int | None) -> list[BotCheck]:
        if "bot_checks" not in self._relations():
            return []
        rows = self._conn.execute(
            select(bot_checks).where(where).order_by(bot_checks.c.id.desc()).limit(limit)
        )
        checks = []
        for check_id, bot, owner, at, version, passed, text in rows:
            if not (
                is_integer(check_id)
                and isinstance(bot, str)
                and isinstance(owner, str)
                and is_number(at)
                and (version is None or is_integer(version))
                and passed in (0, 1)
            ):
                raise self._damaged(f"check {check_id}")
            try:
                report = CheckReport.from_json(self._decoded(text, f"the report of check {check_id}"))
            except ValueError:
                raise self._damaged(f"the report of check {check_id}") from None
            checks.append(BotCheck(check_id, bot, owner, float(at), version, bool(passed), report))
        return checks
