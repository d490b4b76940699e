"""Who plays the ladder's next set: the choice that teaches the most.

The first bot of a new set is the one with the fewest matches in the run's rating pool (its format; ties
broken at random); its opponents are drawn among the others with a weight that falls with the rating gap
in that pool, 1 / (1 + (gap / 100)^2), so close ratings meet most but every pairing stays possible. Both
read the store's running totals and ratings, not the history: a pick costs the same with 1k or 100k
matches stored.

Never two bots of one author in a ladder set (Halite's rule): bots with the same owner (`BotEntry.owner`)
could throw points to each other, between partners in 6- and 8-player `pairs` or between teams in any
match. So an opponent is drawn only among the bots whose owner is not in the set yet, the ladder pairs
nobody when there are fewer owners than teams (a bot without an owner is an owner of its own), and an
unfinished set whose bots have come to share an owner is not resumed. An SPRT or a tournament, which
the host runs between bots they chose (one author's versions, say), pairs as planned.

The runner (scheduler.py) asks a `Pairing` for the bots of each new set, so a run with another purpose
(a sequential test between two bots, a tournament) plays its sets through the same machinery.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, Protocol

import structlog

from arena.ladder.isolation import unfit_reason
from arena.ladder.run_settings import LadderError, LadderSettings
from arena.ladder.store import BotEntry, DuplicateSet, LadderStore, shared_owner

log = structlog.get_logger("ladder")

RATING_SCALE: Final = 100.0


class Pairing(Protocol):
    """Chooses the bots of a run's sets."""

    def check(self) -> None:
        """Raise a LadderError when the run cannot start (too few bots, say)."""

    def next_bots(self) -> list[str] | None:
        """The bots of the next new set, one a team in seat order; None when the run has no more sets to
        start (out of bots, or its plan is complete)."""

    def may_resume(self, duplicate: DuplicateSet) -> bool:
        """Whether an unfinished set in the store (left by an earlier run or put back) belongs to this run
        and may be finished by it now."""


def active_bots(store: LadderStore, settings: LadderSettings, down_too: bool = False) -> list[BotEntry]:
    """Registered bots not on probation, nor down (unless `down_too`), that may play the run's sets (not a
    remote bot in a run of isolated bots only: isolation.py), with their ratings in the run's pool."""
    down = {} if down_too else store.registry.down_bots()
    return [
        bot
        for bot in store.registry.bots(settings.pool)
        if bot.probation is None
        and bot.name not in down
        and unfit_reason(bot, settings.isolated_only) is None
    ]


class RatingPairing:
    """The ladder's pairing: least-played bot first, opponents close to it in rating."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        rng: random.Random,
        scheduled: Mapping[str, int],
    ) -> None:
        self.store = store
        self.settings = settings
        self.rng = rng
        self.scheduled = scheduled
        """Matches of each bot launched by the run and not stored yet: they count as played."""

        self._refused: set[int] = set()
        """Unfinished sets not resumed because two of their bots share an owner (logged once each)."""

    def check(self) -> None:
        """Refuse a ladder that cannot pair anybody (bots down count: they may answer again)."""
        teams = self.settings.rules.team_count
        active = active_bots(self.store, self.settings, down_too=True)
        kind = f"a {self.settings.players}-player {self.settings.ruleset.value} ladder"
        if len(active) < teams:
            raise LadderError(
                f"{kind} needs at least {teams} bots not on probation; {len(active)} registered (add some "
                "with `arena bots add`)"
            )
        owners = owner_count(active)
        if owners < teams:
            raise LadderError(
                f"{kind} needs bots of at least {teams} owners (never two of one owner in a set); the "
                f"{len(active)} bots not on probation have {owners} (see `arena bots list`)"
            )

    def may_resume(self, duplicate: DuplicateSet) -> bool:
        """Every unfinished set of the ladder is its to finish, whatever its format (an event's sets are
        not: an SPRT or a tournament finishes its own), unless two of its bots have the same owner now
        (one was given the other's owner since the set began): that set is left as it is."""
        if duplicate.event != self.settings.event:
            return False
        registered = {bot.name: bot for bot in self.store.registry.bots()}
        owner = shared_owner(registered[name] for name in duplicate.bots if name in registered)
        if owner is None:
            return True
        if duplicate.id not in self._refused:
            self._refused.add(duplicate.id)
            log.info(
                "set_skipped", set_id=duplicate.id, reason=f"two of its bots have the same owner ({owner})"
            )
        return False

    def next_bots(self) -> list[str] | None:
        """The least-played bot and opponents close to it in rating, of owners not in the set yet; None
        when too few bots are up, or they have fewer owners than the set has teams."""
        teams = self.settings.rules.team_count
        active = active_bots(self.store, self.settings)
        if len(active) < teams or owner_count(active) < teams:
            return None
        counts = self.store.ratings.matches_played(self.settings.pool)
        played = {bot.name: counts.get(bot.name, 0) + self.scheduled.get(bot.name, 0) for bot in active}
        fewest = min(played.values())
        first = self.rng.choice([bot for bot in active if played[bot.name] == fewest])
        chosen = [first]
        others = [bot for bot in active if bot.name != first.name and not _same_owner(bot, first)]
        while len(chosen) < teams:
            # Enough owners are left: every owner not chosen yet still has a bot among `others`.
            weights = [1.0 / (1.0 + ((bot.rating - first.rating) / RATING_SCALE) ** 2) for bot in others]
            pick = self.rng.choices(others, weights=weights)[0]
            chosen.append(pick)
            others = [bot for bot in others if bot is not pick and not _same_owner(bot, pick)]
        self.rng.shuffle(chosen)
        return [bot.name for bot in chosen]


def owner_count(bots: Sequence[BotEntry]) -> int:
    """How many owners these bots have between them, a bot without an owner counting as one of its own:
    the most teams a set of them can fill, never two of one owner."""
    return len({bot.owner for bot in bots if bot.owner is not None}) + sum(bot.owner is None for bot in bots)


def _same_owner(bot: BotEntry, other: BotEntry) -> bool:
    return bot.owner is not None and bot.owner == other.owner


class EventPairing:
    """The pairing of an event (an SPRT, a tournament): the sets of `plan` in order, while `go_on()` says
    so, between `bots` only. The run's settings name the event: its sets are rated in the event's own pool
    (`4p-pairs@EVENT`), and only they are resumed (an event stopped and run again under the same name
    finishes them)."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        bots: Sequence[str],
        plan: Iterator[list[str]],
        go_on: Callable[[], bool] = lambda: True,
    ) -> None:
        if settings.event is None:
            raise ValueError("an event's run names its event")
        self.store = store
        self.settings = settings
        self.bots = list(bots)
        self.plan = plan
        self.go_on = go_on
        self.down: list[str] = []
        """The bots marked down that stopped the event (the host could not reach or start them)."""
        self._taken: list[str] | None = None
        """The plan's next set, taken from it but not returned yet (the store failed to say which bots
        are down): a call made again returns it, so that no set of the plan is skipped."""

    def check(self) -> None:
        """Refuse an event with a bot that is not registered or is on probation, or too few bots."""
        registered = {bot.name: bot for bot in self.store.registry.bots(self.settings.pool)}
        for name in self.bots:
            if name not in registered:
                raise LadderError(f"no bot named {name!r} is registered (see `arena bots list`)")
            if registered[name].probation is not None:
                raise LadderError(
                    f"{name} is on probation ({registered[name].probation}); take it back with "
                    f"`arena bots probation {name} --clear`"
                )
            unfit = unfit_reason(registered[name], self.settings.isolated_only)
            if unfit is not None:
                raise LadderError(f"{name} cannot play these sets: {unfit}")
        teams = self.settings.rules.team_count
        if len(set(self.bots)) < teams:
            raise LadderError(
                f"a {self.settings.players}-player {self.settings.ruleset.value} set needs {teams} bots"
            )

    def next_bots(self) -> list[str] | None:
        """The next set of the plan, or None when the plan is done, `go_on()` says stop, or a bot of the
        set is marked down (then `down` names them: an event plays its plan as planned, or stops)."""
        if self._taken is None:
            if not self.go_on():
                return None
            self._taken = next(self.plan, None)
        bots = self._taken
        if bots is not None:
            self.down = sorted(set(bots) & self.store.registry.down_bots().keys())
            if self.down:
                return None
        self._taken = None
        return bots

    def may_resume(self, duplicate: DuplicateSet) -> bool:
        """Only the event's own unfinished sets."""
        return duplicate.event == self.settings.event


TOURNAMENT_FORMATS: Final = ("round-robin", "gauntlet")


def tournament_plan(form: str, bots: Sequence[str], teams: int, rounds: int = 1) -> list[list[str]]:
    """The sets of a tournament, round after round: a set is a group of `teams` bots (one a team), played
    once per rotation over the seats. `round-robin`: every group of `teams` of the bots (with two teams,
    every pair); `gauntlet`: the first bot with every group of `teams` - 1 of the others (with two teams,
    the first against each other). Groups keep the order the bots were given in.

    :raises ValueError: for another format, a bot named twice, or too few bots to fill the teams.
    """
    if form not in TOURNAMENT_FORMATS:
        raise ValueError(f"the format is round-robin or gauntlet, got {form!r}")
    if len(set(bots)) != len(bots):
        raise ValueError("a bot is named twice")
    if len(bots) < teams:
        raise ValueError(f"{teams} teams need at least {teams} bots, got {len(bots)}")
    if form == "round-robin":
        groups = [list(group) for group in itertools.combinations(bots, teams)]
    else:
        groups = [[bots[0], *group] for group in itertools.combinations(bots[1:], teams - 1)]
    return [list(group) for _round in range(rounds) for group in groups]
