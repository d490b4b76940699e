"""The ladder's store: registered bots, duplicate sets, finished matches and rating events, saved and
loaded as typed values (faults as FaultRecords). It persists; the ladder computes (pairing in
scheduler.py, rating events in ratings.py, standings in standings.py).

Every finished match is written in its own transaction the moment it ends, and a set's rating event is
saved in one transaction with the check that the set was neither rated nor made void before, so a ladder
killed at any point (even by SIGKILL) loses no finished match and never rates a set twice or in part;
the next run resumes the unfinished sets. A set in which the arena itself failed (an error of ours, not
of a bot) is made void: kept in the history, never rated, never resumed. A row that does not hold what
the arena wrote (the file was edited by hand?) is a StoreError, not a crash further on. The file itself
(schema, opening, read-only files, errors) is store_file.py; what the site keeps and reads (the live
events of matches in play, tokens and the audit log, pages of history) is store_live.py,
store_access.py and store_browse.py.

Cost: what the ladder reads and writes for each match and each set does not grow with the history.
Saving a match also updates, in its transaction, a row per bot in `match_bots` (read newest first by
index for the probation check) and the bot's running totals in its pool (tally.py counts them), which
the pairing and the standings read; a game record sits in `match_records`, read only by `match_record`.
Every format (players x ruleset) is its own rating pool (`DuplicateSet.pool`): a bot has a rating per
pool, the starting rating where it has none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

from sqlalchemy import Select, and_, delete, func, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError

from arena.ladder.rating import (
    START_RATING,
    FittedRating,
    PairResult,
    PoolSums,
    SetResult,
    add_match,
    add_set,
    match_tallies,
)
from arena.ladder.store import relations
from arena.ladder.store.access import AccessStore
from arena.ladder.store.browse import BrowseStore, set_is_over
from arena.ladder.store.database import upsert
from arena.ladder.store.entries import (
    DEFAULT_POOL,
    BotEntry,
    DuplicateSet,
    RatingChange,
    StoredMatch,
    pool_name,
)
from arena.ladder.store.file import (
    DATABASE_ERRORS,
    DuplicateMatchError,
    RatingsChangedError,
    StoreError,
    every_method_store_errors,
    is_integer,
    is_number,
)
from arena.ladder.store.leases import LeaseStore
from arena.ladder.store.live import LiveStore
from arena.ladder.store.rows import MatchRows, joined_seed, match_columns, split_seed
from arena.ladder.store.totals import TotalsStore
from arena.ladder.store.uploads import UploadStore
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import FaultRecord


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _are_numbers(*values: Any) -> bool:
    return all(is_number(value) for value in values)


def _are_rules(players: int, ruleset: str, deal_cap: int | None) -> bool:
    """Whether a stored set's settings make a match (the ladder plays it next)."""
    try:
        MatchRules(players, Ruleset.parse(ruleset), deal_cap)
    except ValueError:
        return False
    return True


RECORDS_PAGE: Final = 32
"""Game records read at a time when the whole history is streamed (`game_records`): a match's record is
tens of KB, so a page stays near a MB, and a query by index per 32 records costs nothing next to them."""


@every_method_store_errors
class LadderStore(LeaseStore, TotalsStore, BrowseStore, LiveStore, AccessStore, UploadStore, MatchRows):
    """The ladder's store. Open it with `LadderStore(path)` (see StoreFile for `read_only` and
    `timeout`); close it with `close()`. Every error is a StoreError that names the file.
    """

    # Bots (ported to SQLAlchemy Core: SQLite and PostgreSQL alike).

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
        orphans = [duplicate.id for duplicate, _missing in self.unfinished_sets() if name in duplicate.bots]
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

    # Sets and matches (creating and listing sets ported to SQLAlchemy Core).

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
        # A read-only file of an older version lacks the later columns: read as NULL (`_column`).
        sets = relations.sets
        rows = self._conn.execute(
            select(
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
            .where(sets.c.rated_at.is_(None), sets.c.void_reason.is_(None))
            .order_by(sets.c.id)
        ).all()
        unfinished = []
        for row in rows:
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
            duplicate = DuplicateSet(
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
            played = select(relations.matches.c.rotation).where(relations.matches.c.set_id == set_id)
            done = set(self._conn.scalars(played))
            unfinished.append((duplicate, [r for r in range(duplicate.rotations) if r not in done]))
        return unfinished

    def save_match(
        self,
        match_id: str,
        duplicate: DuplicateSet,
        rotation: int,
        reason: str,
        ranking: Sequence[int],
        faults: Sequence[FaultRecord],
        record: dict[str, Any],
        decisions: int,
        seconds: float,
    ) -> None:
        """Store a finished match at once, in its own transaction.

        :raises DuplicateMatchError: when this rotation of the set is stored already.
        """
        team_bots = duplicate.team_bots(rotation)
        bot_ranks = {bot: ranking[team] for team, bot in enumerate(team_bots)}
        finished_at = time.time()
        try:
            with self._transaction():
                self._conn.execute(
                    relations.matches.insert().values(
                        id=match_id,
                        set_id=duplicate.id,
                        rotation=rotation,
                        team_bots=json.dumps(list(team_bots)),
                        finished_at=finished_at,
                        reason=reason,
                        ranking=json.dumps(list(ranking)),
                        bot_ranks=json.dumps(bot_ranks),
                        faults=json.dumps([fault.to_json() for fault in faults]),
                        decisions=decisions,
                        seconds=seconds,
                    )
                )
                game = {"match_id": match_id, "record": json.dumps(record)}
                self._conn.execute(relations.match_records.insert().values(game))
                live = relations.live_events
                self._conn.execute(delete(live).where(live.c.match_id == match_id))
                pool = duplicate.pool
                for tally in match_tallies(team_bots, bot_ranks, faults):
                    self._conn.execute(
                        relations.match_bots.insert().values(
                            match_id=match_id,
                            bot=tally.bot,
                            rank=tally.rank,
                            own_forfeit=tally.own_forfeit,
                            finished_at=finished_at,
                        )
                    )
                    self._save_totals(tally.bot, pool, add_match(self._totals(tally.bot, pool), tally))
                counted = upsert(self._conn, relations.pools).values(name=pool, matches=1)
                self._conn.execute(
                    counted.on_conflict_do_update(
                        index_elements=["name"], set_={"matches": relations.pools.c.matches + 1}
                    )
                )
        except IntegrityError:
            raise DuplicateMatchError(
                f"set {duplicate.id} rotation {rotation} is stored already (by another runner?)"
            ) from None

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

    def matches(self, set_id: int | None = None) -> list[StoredMatch]:
        """Finished matches (of one set, or all), oldest first."""
        statement = match_columns().order_by(relations.matches.c.finished_at, relations.matches.c.id)
        if set_id is not None:
            statement = statement.where(relations.matches.c.set_id == set_id)
        return [self._stored_match(row) for row in self._conn.execute(statement)]

    def recent_matches(self, bot: str | None, count: int) -> list[StoredMatch]:
        """The last `count` finished matches (that `bot` played, when given), newest first: read by
        index, whatever the length of the history."""
        matches, match_bots = relations.matches, relations.match_bots
        if bot is None:
            statement = match_columns().order_by(matches.c.finished_at.desc(), matches.c.id.desc())
        else:
            statement = (
                match_columns()
                .select_from(match_bots.join(matches, matches.c.id == match_bots.c.match_id))
                .where(match_bots.c.bot == bot)
                .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            )
        return [self._stored_match(row) for row in self._conn.execute(statement.limit(count))]

    def recent_forfeits(self, bot: str, count: int) -> list[bool]:
        """Whether each of the last `count` matches of `bot` (newest first) was a forfeit of its own (a
        fault of its not played on by a substitute): the probation check, read by index."""
        match_bots = relations.match_bots
        rows = self._conn.scalars(
            select(match_bots.c.own_forfeit)
            .where(match_bots.c.bot == bot)
            .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            .limit(count)
        )
        return [bool(own_forfeit) for own_forfeit in rows]

    def match_record(self, match_id: str) -> dict[str, Any]:
        """The game record of a stored match."""
        records = relations.match_records
        row = self._conn.execute(select(records.c.record).where(records.c.match_id == match_id)).first()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        record = self._decoded(row[0], f"the record of match {match_id!r}")
        if not isinstance(record, dict):
            raise self._damaged(f"the record of match {match_id!r}")
        return record

    def game_records(self, sets_over_only: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every stored match's id and game record (with `sets_over_only`, of the matches whose set is
        over: what may be published), oldest first, read in pages of `RECORDS_PAGE` by the index on
        (finished_at, id): the whole history never sits in memory, and no cursor stays open between pages
        (a server-side cursor would hold a transaction). A damaged record, or a database error while
        reading, is a StoreError (raised by the iteration)."""
        return self._records_from(None, sets_over_only)

    def _records_from(
        self, after: tuple[float, str] | None, sets_over_only: bool
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        # A generator runs after the method that made it returned: its database errors are turned into
        # StoreErrors here, not by the wrapper of every public method.
        matches, records, sets = relations.matches, relations.match_records, relations.sets
        joined = matches.join(records, records.c.match_id == matches.c.id)
        if sets_over_only:
            joined = joined.join(sets, sets.c.id == matches.c.set_id)
        statement = (
            select(matches.c.finished_at, matches.c.id, records.c.record)
            .select_from(joined)
            .order_by(matches.c.finished_at, matches.c.id)
            .limit(RECORDS_PAGE)
        )
        if sets_over_only:
            statement = statement.where(set_is_over())
        while True:
            page = statement
            if after is not None:
                page = statement.where(tuple_(matches.c.finished_at, matches.c.id) > tuple_(*after))
            try:
                rows = self._conn.execute(page).all()
            except DATABASE_ERRORS as error:
                raise self._store_error(error) from None
            for _finished_at, match_id, text in rows:
                record = self._decoded(text, f"the record of match {match_id!r}")
                if not isinstance(record, dict):
                    raise self._damaged(f"the record of match {match_id!r}")
                yield match_id, record
            if len(rows) < RECORDS_PAGE:
                return
            after = (rows[-1][0], rows[-1][1])

    def pool_sums(self, pool: str) -> PoolSums:
        """The sums `pool`'s ratings are fitted from (a row per pair of bots, per group of bots that met
        and per bot, whatever the length of the history), and its count of rated sets."""
        results, choice_sets, places_table = relations.pair_results, relations.choice_sets, relations.places
        pairs: dict[tuple[str, str], PairResult] = {}
        for first, second, sets, score, squares in self._conn.execute(
            select(
                results.c.first, results.c.second, results.c.sets, results.c.score, results.c.squares
            ).where(results.c.pool == pool)
        ):
            if not (_is_list_of([first, second], str) and is_integer(sets) and _are_numbers(score, squares)):
                raise self._damaged(f"the results of {first!r} and {second!r} in {pool}")
            pairs[(first, second)] = PairResult(sets, float(score), float(squares))
        choices: dict[tuple[str, ...], float] = {}
        for text, weight in self._conn.execute(
            select(choice_sets.c.bots, choice_sets.c.weight).where(choice_sets.c.pool == pool)
        ):
            group = self._decoded(text, f"a group of bots of {pool}")
            if not (_is_list_of(group, str) and len(group) > 1 and is_number(weight)):
                raise self._damaged(f"a group of bots of {pool}")
            choices[tuple(group)] = float(weight)
        places = {}
        for bot, taken in self._conn.execute(
            select(places_table.c.bot, places_table.c.taken).where(places_table.c.pool == pool)
        ):
            if not (isinstance(bot, str) and is_number(taken)):
                raise self._damaged(f"the places of {bot!r} in {pool}")
            places[bot] = float(taken)
        rated = self._conn.scalar(select(relations.pools.c.rated_sets).where(relations.pools.c.name == pool))
        return PoolSums(pairs, choices, places, 0 if rated is None else int(rated))

    def fitted_ratings(self, pool: str) -> dict[str, FittedRating]:
        """Each bot's fitted rating in `pool` (every bot rated there, registered or not)."""
        fitted = {}
        ratings = relations.ratings
        rows = self._conn.execute(
            select(ratings.c.bot, ratings.c.rating, ratings.c.margin, ratings.c.superiority).where(
                ratings.c.pool == pool
            )
        )
        for bot, rating, margin, superiority in rows:
            if not (is_number(rating) and (margin is None or is_number(margin))) or not (
                superiority is None or is_number(superiority)
            ):
                raise self._damaged(f"the rating of {bot!r}")
            width = float("inf") if margin is None else float(margin)
            fitted[bot] = FittedRating(bot, float(rating), width, superiority)
        return fitted

    def save_rating_event(
        self,
        set_id: int,
        rated_sets: int,
        result: SetResult,
        fitted: Sequence[FittedRating],
        changes: Sequence[RatingChange],
    ) -> bool:
        """Apply a set's rating event in one transaction: the set's `result` added to its pool's sums, the
        pool's ratings replaced by `fitted` (the fit of those sums), the set's bots' `changes` kept in
        `rating_events`, the set marked rated. Returns False and changes nothing when the set is rated or
        void already (or unknown), so a set is rated exactly once, whoever tries and whenever they are
        killed.

        :raises RatingsChangedError: changing nothing, when the pool no longer has `rated_sets` rated sets
            (another runner rated a set of the pool since its sums were read: the fit is stale).
        """
        sets, pools, results = relations.sets, relations.pools, relations.pair_results
        choice_sets, places = relations.choice_sets, relations.places
        with self._transaction():
            row = self._conn.execute(
                select(
                    sets.c.rated_at, sets.c.void_reason, sets.c.players, sets.c.ruleset, sets.c.event
                ).where(sets.c.id == set_id)
            ).first()
            if row is None or row[0] is not None or row[1] is not None:
                return False
            pool = pool_name(row[2], row[3], row[4])
            counted = self._conn.scalar(select(pools.c.rated_sets).where(pools.c.name == pool))
            now = 0 if counted is None else counted
            if now != rated_sets:
                raise RatingsChangedError(
                    f"{self.name}: ratings changed while set {set_id} was being rated "
                    f"({now - rated_sets} other sets of {pool} rated meanwhile)"
                )
            before = PoolSums(rated_sets=rated_sets)
            for first, second in result.scores:
                line = self._conn.execute(
                    select(results.c.sets, results.c.score, results.c.squares).where(
                        results.c.pool == pool, results.c.first == first, results.c.second == second
                    )
                ).first()
                if line is not None:
                    before.pairs[(first, second)] = PairResult(int(line[0]), float(line[1]), float(line[2]))
            for group in result.choices:
                weight = self._conn.scalar(
                    select(choice_sets.c.weight).where(
                        choice_sets.c.pool == pool, choice_sets.c.bots == json.dumps(group)
                    )
                )
                before.choices[group] = 0.0 if weight is None else float(weight)
            for bot in result.places:
                taken = self._conn.scalar(
                    select(places.c.taken).where(places.c.pool == pool, places.c.bot == bot)
                )
                before.places[bot] = 0.0 if taken is None else float(taken)
            self._save_sums(pool, add_set(before, result))
            self._save_fit(pool, fitted)
            if changes:
                self._conn.execute(
                    relations.rating_events.insert(),
                    [
                        {"set_id": set_id, "bot": change.bot, "before": change.before, "after": change.after}
                        for change in changes
                    ],
                )
            counting = upsert(self._conn, pools).values(name=pool, matches=0, rated_sets=rated_sets + 1)
            self._conn.execute(
                counting.on_conflict_do_update(
                    index_elements=["name"], set_={"rated_sets": counting.excluded.rated_sets}
                )
            )
            self._conn.execute(update(sets).where(sets.c.id == set_id).values(rated_at=time.time()))
        return True

    def rated_sets(self) -> set[int]:
        """The ids of the sets whose rating event was applied."""
        sets = relations.sets
        return set(self._conn.scalars(select(sets.c.id).where(sets.c.rated_at.is_not(None))))

    # Leases (see store_leases.py for claiming, renewing and releasing them).

    def claimable_sets(self, owner: str) -> list[tuple[DuplicateSet, list[int]]]:
        """The unfinished sets (see `unfinished_sets`) that `owner` may claim now: nobody else holds a
        live lease of them and they are not waiting to be tried again."""
        now, sets = time.time(), relations.sets
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
        return [(duplicate, missing) for duplicate, missing in self.unfinished_sets() if duplicate.id in free]
