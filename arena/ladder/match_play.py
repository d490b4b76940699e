"""Where a ladder's match is played: the bots started or found, `run_match` called, the processes given
back. The set player (set_play.py) keeps pairing, leases, storing and rating; a `MatchPlayer` only plays.

`MatchOrder` holds all a match needs and nothing of the store, so that it can be pickled and played in
another process (ray_play.py plays it on a Ray worker), and a `PlayedMatch` comes back, the outcome with
what each bot process the arena started wrote during the match; `LocalMatches` plays it here, the
default. A `MatchPlayer` also checks a set's bots before the set (`unreachable`), from where it plays
their matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from arena.ladder.availability import reach
from arena.ladder.bots import BotStartError, LocalBots
from arena.ladder.live_gate import Publish
from arena.ladder.store import BotEntry, SeatOutput, StoreError
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.untrusted import safe_text


@dataclass(frozen=True)
class MatchOrder:
    """One match to play: its settings (seed, rules, time control, match id) and each team's bot, or why
    the bot cannot play (removed from the register meanwhile)."""

    settings: MatchSettings
    bots: tuple[BotEntry | str, ...]
    """Per team: the registered bot, or the text of why it cannot be started."""
    names: tuple[str, ...]
    """Per team: the bot's name."""


@dataclass(frozen=True)
class PlayedMatch:
    """A match played: its outcome, and what each bot the arena started for it wrote during it (a seat
    each; none for remote bots, whose output is their own)."""

    outcome: MatchOutcome
    outputs: tuple[SeatOutput, ...] = ()


NotStarted = Callable[[str, str], None]
"""Called with a bot's name and why when it does not start: the set is then made void."""

Replay = Callable[[str], Publish | None]
"""Called when a match is lost before its end (the process playing it died) and about to be played again
from its seed under the new match id given: where the new attempt's events go (what the lost one sent is
forgotten), or None when it must not be played again (its set's deals were shown live)."""


class MatchPlayer(Protocol):
    """Plays one match and returns it played; None when the run began to stop before it began."""

    async def play(
        self,
        order: MatchOrder,
        not_started: NotStarted,
        on_event: Publish | None,
        replay: Replay | None = None,
    ) -> PlayedMatch | None:
        """Play `order` (see the class); `replay` is asked before a lost match is played again."""
        ...

    async def unreachable(self, bot: BotEntry, seats: int, timeout_s: float) -> str | None:
        """Why `bot` cannot be started or reached where this player plays its matches (None: it
        answers): `availability.reach` there."""
        ...


async def play_order(
    local_bots: LocalBots,
    order: MatchOrder,
    not_started: NotStarted,
    on_event: Publish | None = None,
    stopping: Callable[[], bool] = lambda: False,
) -> PlayedMatch | None:
    """Start or find every team's bot in `local_bots`, play the match, read what each process the arena
    started wrote during it, give the processes back. Every seat is a process of its own, never one that
    played these deals before (bots/pool.py). A bot that does not start now (it did when the set started)
    forfeits at once (an `unreachable` fault), and `not_started` is told. None: `stopping()` became true
    while the bots started, so the match is not begun."""
    settings = order.settings
    rules = settings.rules
    seats_per_team = rules.players // rules.team_count
    taken: list[str] = []
    faulty: list[str] = []
    addresses: list[BotAddress] = []
    absent: dict[int, str] = {}
    started: dict[int, BotEntry] = {}  # by team: the bots whose processes the arena started
    try:
        for team, (name, bot) in enumerate(zip(order.names, order.bots, strict=True)):
            try:
                if isinstance(bot, str):
                    raise BotStartError(bot)
                where = await local_bots.acquire(bot, seats_per_team, deals=str(settings.seed))
            except (BotStartError, StoreError) as error:  # StoreError: its launch cannot be read
                detail = f"did not start: {safe_text(error)}"
                absent[rules.seats_of(team)[0]] = detail
                not_started(name, detail)
                where = ["-"]
            else:
                if bot.command is not None:
                    started[team] = bot
            taken.extend(address for address in where if address != "-")
            addresses.append(BotAddress(name, ",".join(where)))
        if stopping():
            return None
        seats = seats_for_teams(rules, addresses)
        # Checked when started, connected once: no handshake and no new connection per match.
        described = local_bots.described(taken)
        channels = local_bots.channels(taken)
        faulty = list(taken)  # until the match ends well: a cancelled match keeps no channel
        outcome = await run_match(
            settings, seats, absent=absent, described=described, channels=channels, on_event=on_event
        )
        faulty = [seats[fault.seat].address for fault in outcome.faults]
        captured = await local_bots.outputs(taken)
        outputs = []
        for seat, played in enumerate(seats):
            entry, output = started.get(rules.team_of(seat)), captured.get(played.address)
            if entry is not None and output is not None:
                outputs.append(
                    SeatOutput(seat, entry.name, output.version, output.output, output.dropped, entry.owner)
                )
        return PlayedMatch(outcome, tuple(outputs))
    finally:
        local_bots.forget_channels(faulty)
        local_bots.release(taken)


class LocalMatches:
    """Plays matches in this process, with the run's `LocalBots` (the default)."""

    def __init__(self, local_bots: LocalBots, stopping: Callable[[], bool]) -> None:
        self.local_bots = local_bots
        self.stopping = stopping

    async def play(
        self,
        order: MatchOrder,
        not_started: NotStarted,
        on_event: Publish | None,
        replay: Replay | None = None,
    ) -> PlayedMatch | None:
        """Play `order` here (see `play_order`); a match played in this process is never played again
        (`replay` unused): if this process dies, so does the run."""
        return await play_order(self.local_bots, order, not_started, on_event, self.stopping)

    async def unreachable(self, bot: BotEntry, seats: int, timeout_s: float) -> str | None:
        """Why `bot` cannot be started or reached from here (`availability.reach`)."""
        return await reach(self.local_bots, bot, seats, timeout_s)
