"""Rows of the ladder's file read back into typed values, checked: a row that does not hold what the
arena wrote (a file edited by hand, a damaged one) is a StoreError, never a crash further on.

A match's faults are kept once, in `matches.faults`: the arena's game record carries the same list, which
`match_records` keeps as null (`kept_record`) and a read puts back (`given_record`), so a record reads
back as it was given; an older file's records, which hold their faults, are read as they are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Select, select

from arena.ladder.store import relations
from arena.ladder.store.entries import StoredMatch
from arena.ladder.store.file import StorePart, is_integer, is_number
from fiftysix.engine import SEED_BITS
from fiftysix.wire import FaultRecord

_HALF: Final = 1 << 64


def _signed(half: int) -> int:
    """An unsigned 64-bit value as the signed one of the same bits (what a BIGINT column holds)."""
    return half - _HALF if half >= _HALF >> 1 else half


def split_seed(seed: int) -> tuple[int, int]:
    """A set's seed (of SEED_BITS at most) as its two columns, `seed` (the lower 64 bits) and
    `seed_high` (the upper 64), each as the signed 64-bit value of the same bits.

    >>> split_seed(5)
    (5, 0)
    >>> split_seed(2**128 - 1)
    (-1, -1)

    :raises ValueError: for a seed outside 0 to 2^128 - 1.
    """
    if not 0 <= seed < 1 << SEED_BITS:
        raise ValueError(f"a set's seed is a whole number from 0 to 2^{SEED_BITS} - 1, got {seed}")
    return _signed(seed % _HALF), _signed(seed >> 64)


def joined_seed(low: int, high: int | None) -> int:
    """A set's seed from its two columns (`split_seed`'s inverse); a set stored before schema 5 has no
    upper half (None), and its `seed` column is the whole seed as it was given (possibly negative).

    >>> joined_seed(-1, -1) == 2**128 - 1
    True
    >>> joined_seed(-7, None)
    -7
    """
    if high is None:
        return low
    return (high % _HALF) << 64 | low % _HALF


def match_columns() -> Select[Any]:
    """The columns of a stored match (MatchRows._stored_match reads them), from `matches`."""
    matches = relations.matches
    return select(
        matches.c.id,
        matches.c.set_id,
        matches.c.rotation,
        matches.c.team_bots,
        matches.c.reason,
        matches.c.ranking,
        matches.c.bot_ranks,
        matches.c.faults,
        matches.c.decisions,
        matches.c.seconds,
    )


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def kept_record(record: dict[str, Any], faults: list[dict[str, Any]]) -> dict[str, Any]:
    """A game record as `match_records` keeps it: the match's own faults (`faults`, as the arena's
    record lists them) null in it, since `matches.faults` keeps them."""
    if record.get("faults") == faults:
        return {**record, "faults": None}
    return record


def given_record(kept: Any, faults: Any) -> Any:
    """A game record as it was given (`kept_record` undone): the match's `faults` where it holds null."""
    if isinstance(kept, dict) and "faults" in kept and kept["faults"] is None:
        return {**kept, "faults": faults}
    return kept


class MatchRows(StorePart):
    """The store's part that turns rows of `matches` into `StoredMatch`es."""

    def _stored_match(self, row: Sequence[Any]) -> StoredMatch:
        """A row of `matches`, checked: a damaged row is a StoreError, not a crash in the standings."""
        match_id, set_id, rotation, team_bots, reason, ranking, bot_ranks, faults, decisions, seconds = row
        what = f"match {match_id!r}"
        team_bots = self._decoded(team_bots, f"the bots of {what}")
        ranking = self._decoded(ranking, f"the ranking of {what}")
        bot_ranks = self._decoded(bot_ranks, f"the ranks of {what}")
        faults = self._decoded(faults, f"the faults of {what}")
        if not (
            isinstance(match_id, str)
            and all(is_integer(value) for value in (set_id, rotation, decisions))
            and isinstance(reason, str)
            and is_number(seconds)
            and _is_list_of(team_bots, str)
            and _is_list_of(ranking, int)
            and isinstance(bot_ranks, dict)
            and all(is_integer(rank) for rank in bot_ranks.values())
        ):
            raise self._damaged(what)
        return StoredMatch(
            match_id,
            set_id,
            rotation,
            tuple(team_bots),
            reason,
            tuple(ranking),
            bot_ranks,
            self._faults(faults, len(team_bots), f"the faults of {what}"),
            decisions,
            float(seconds),
        )

    def _faults(self, stored: Any, teams: int, what: str) -> tuple[FaultRecord, ...]:
        """The faults of a match, as `save_match` wrote them: each of one of its `teams`."""
        if not isinstance(stored, list):
            raise self._damaged(what)
        try:
            faults = tuple(FaultRecord.from_json(fault) for fault in stored)
        except ValueError:
            raise self._damaged(what) from None
        if any(fault.team >= teams for fault in faults):
            raise self._damaged(what)
        return faults
