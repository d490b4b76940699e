"""What each bot the arena started wrote during each match, kept with the match: one row a seat in
`match_outputs`, written in the match's own transaction (matches.py, through `add_outputs`), so a match is
never stored without its outputs nor they twice.

The output is the bot's bytes as its supervisor kept them (at most `--bot-output` a match), compressed
with zlib: a bot's log lines compress well, and bytes that are not text are kept as they came (the reader
decodes: SeatOutput.text). A seat's output costs at most `--bot-output` bytes, so the outputs of a bot
are kept for its last OUTPUTS_KEPT matches only: each match stored prunes the older ones of its bots, by
index, whatever the length of the history.

The host reads every seat's (`of_match`); an entrant reads only their own bots' (`own`), and only once the
match's set is over, as its record is held back (browse.set_is_over): the set's other rotations replay the
same deals, and what a bot printed may name its cards."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Connection, Select, delete, or_, select

from arena.ladder.store.browse import set_is_over
from arena.ladder.store.entries import SeatOutput
from arena.ladder.store.file import StorePart, every_method_store_errors, is_integer
from arena.ladder.store.relations import match_bots, match_outputs, matches, sets

OUTPUTS_KEPT: Final = 100
"""The matches of each bot whose outputs are kept: at most OUTPUTS_KEPT x seats x `--bot-output` bytes a
bot, before compression."""


def output_rows(match_id: str, finished_at: float, outputs: Sequence[SeatOutput]) -> list[dict[str, Any]]:
    """The rows of a match's outputs, compressed (before its transaction: compressing takes a while, the
    write lock must not wait for it)."""
    return [
        {
            "match_id": match_id,
            "seat": output.seat,
            "bot": output.bot,
            "owner": output.owner,
            "version": output.version,
            "finished_at": finished_at,
            "output": zlib.compress(output.output),
            "dropped_bytes": output.dropped,
        }
        for output in outputs
    ]


def add_outputs(connection: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Add a match's outputs (`output_rows`), its bots' rows of `match_bots` already added, and forget
    the outputs of those bots' matches before their last OUTPUTS_KEPT."""
    if not rows:
        return
    connection.execute(match_outputs.insert(), list(rows))
    for bot in sorted({row["bot"] for row in rows}):
        oldest_kept = connection.scalar(
            select(match_bots.c.finished_at)
            .where(match_bots.c.bot == bot)
            .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            .offset(OUTPUTS_KEPT - 1)
            .limit(1)
        )
        if oldest_kept is not None:
            connection.execute(
                delete(match_outputs).where(
                    match_outputs.c.bot == bot, match_outputs.c.finished_at < oldest_kept
                )
            )


def _columns() -> Select[Any]:
    outputs = match_outputs
    return select(
        outputs.c.seat,
        outputs.c.bot,
        outputs.c.version,
        outputs.c.output,
        outputs.c.dropped_bytes,
        outputs.c.owner,
    )


@every_method_store_errors
class OutputStore(StorePart):
    """The store's part that reads the bots' outputs of a match."""

    def of_match(self, match_id: str) -> list[SeatOutput]:
        """Every seat's output kept of the match, by seat (the host's read: nothing is held back)."""
        if "match_outputs" not in self._relations():
            return []
        statement = _columns().where(match_outputs.c.match_id == match_id)
        return self._outputs(match_id, statement)

    def own(self, match_id: str, owner: str) -> list[SeatOutput]:
        """The outputs of `owner`'s bots in the match, by seat (what an entrant may read): those of the
        bots they owned when it was played or that are named as they are (a participant's token is named
        as their bot), and only once the match's set is over (as its record: `browse.set_is_over`);
        none before, and never another owner's. Whether the match is held back: BrowseStore.match_summary."""
        if "match_outputs" not in self._relations():
            return []
        statement = (
            _columns()
            .select_from(
                match_outputs.join(matches, matches.c.id == match_outputs.c.match_id).join(
                    sets, sets.c.id == matches.c.set_id
                )
            )
            .where(
                match_outputs.c.match_id == match_id,
                or_(match_outputs.c.owner == owner, match_outputs.c.bot == owner),
                set_is_over(),
            )
        )
        return self._outputs(match_id, statement)

    def _outputs(self, match_id: str, statement: Select[Any]) -> list[SeatOutput]:
        read = []
        for seat, bot, version, output, dropped, owner in self._conn.execute(
            statement.order_by(match_outputs.c.seat)
        ):
            try:
                kept = zlib.decompress(output)
            except (zlib.error, TypeError):
                raise self._damaged(f"the output of seat {seat} in match {match_id!r}") from None
            if not (
                is_integer(seat)
                and isinstance(bot, str)
                and (version is None or is_integer(version))
                and is_integer(dropped)
                and (owner is None or isinstance(owner, str))
            ):
                raise self._damaged(f"the output of seat {seat} in match {match_id!r}")
            read.append(SeatOutput(seat, bot, version, kept, dropped, owner))
        return read
