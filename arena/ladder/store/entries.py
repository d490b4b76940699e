"""What the ladder keeps, as typed values: a registered bot, a duplicate set, a match as it ended (to be
stored) and as it is stored (its faults as FaultRecords), one bot's part in a set's rating event. The
store saves and loads them (and the rating package's values: totals, sums, fitted ratings); the
scheduler, the ratings and the standings work on them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import FaultRecord

DEFAULT_POOL: Final = "4p-pairs"
"""The pool of the default format (4 players, pairs): the one read when no other is named."""

NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""What names a bot or an event: 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit
(safe in a pool name, a URL path and a file name)."""

BOT_NAME_RULE: Final = "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"


def is_bot_name(text: str) -> bool:
    """Whether `text` may name a new bot (BOT_NAME_RULE): the command line and the site's API ask."""
    return NAME.fullmatch(text) is not None


def parse_pool(text: str) -> str:
    """The pool that `text` names, in its canonical form (`<players>p-<ruleset>`, such as 4p-pairs, or
    an event's `<players>p-<ruleset>@EVENT`).

    :raises ValueError: when it names no format.
    """
    text, at, event = text.partition("@")
    if at and NAME.fullmatch(event) is None:
        raise ValueError(f"no pool {text + at + event!r}: an event name is letters, digits, '.', '_' and '-'")
    players, _, ruleset = text.partition("p-")
    if not players.isdecimal() or len(players) > 2:
        raise ValueError(f"no pool {text!r}: a pool is a format such as 4p-pairs or 6p-partnership")
    try:
        parsed = Ruleset.parse(ruleset)
        MatchRules(int(players), parsed)
    except ValueError:
        raise ValueError(f"no pool {text!r}: a pool is a format such as 4p-pairs or 6p-partnership") from None
    return pool_name(int(players), parsed.value, event if at else None)


def pool_rules(pool: str) -> MatchRules:
    """The format of a pool as `parse_pool` writes it (`4p-pairs`, `6p-partnership@EVENT`).

    :raises ValueError: when it names no format.
    """
    players, _, ruleset = parse_pool(pool).partition("@")[0].partition("p-")
    return MatchRules(int(players), Ruleset.parse(ruleset))


def event_name(text: str) -> str:
    """`text` if it may name an event (letters, digits, `.`, `_`, `-`; at most 64), else a ValueError."""
    if NAME.fullmatch(text) is None:
        raise ValueError(
            f"an event name is letters, digits, '.', '_' and '-' (at most 64), got {text[:64]!r}"
        )
    return text


def pool_name(players: int, ruleset: str, event: str | None = None) -> str:
    """The rating pool of a format: its players and ruleset, such as `4p-pairs` or `6p-partnership`.
    Every format is rated apart: a bot's 4-player rating says little of its 6-player play. The sets of an
    event (an SPRT, a tournament) are rated in a pool of their own, `4p-pairs@EVENT`, apart from the
    ladder's."""
    return f"{players}p-{ruleset}" + ("" if event is None else f"@{event}")


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A registered bot: reached at `address` (host:port), or started from `command` by the arena."""

    name: str
    address: str | None
    command: str | None
    rating: float
    probation: str | None
    owner: str | None = None
    """The bot's author (the participant whose token registered it, or as the host set it), None when
    unknown: the ladder never puts two bots of one owner in a set."""
    participant_address: bool = False
    """The address was given by a participant (not the host): the arena checks it against the host's
    address policy each time it connects (arena/runner/address_policy.py)."""

    @property
    def where(self) -> str:
        """The address, or the command that starts the bot."""
        return self.address if self.address is not None else f"command: {self.command}"


OWNER_RULE: Final = (
    "an owner is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit (a participant's "
    "token name)"
)


def is_owner_name(text: str) -> bool:
    """Whether `text` may name a bot's owner (OWNER_RULE: the names of tokens and bots alike)."""
    return NAME.fullmatch(text) is not None


def shared_owner(bots: Iterable[BotEntry]) -> str | None:
    """An owner that two of these bots have (the first such, in their order), None when no two share
    one: a bot without an owner shares it with nobody."""
    seen: set[str] = set()
    for bot in bots:
        if bot.owner is not None:
            if bot.owner in seen:
                return bot.owner
            seen.add(bot.owner)
    return None


def isolated(bots: Iterable[BotEntry]) -> bool:
    """Whether a set of these bots is isolated: every one a bot the arena starts itself (a command or an
    upload, one process a seat), none reached at a remote address (whose processes the arena cannot see,
    nor keep apart: one of them may play every seat and remember every deal)."""
    return all(bot.address is None for bot in bots)


@dataclass(frozen=True, slots=True)
class DuplicateSet:
    """A pairing played as one match per rotation of the teams over the seats, on the same deals."""

    id: int
    players: int
    ruleset: str
    deal_cap: int | None
    seed: int
    bots: tuple[str, ...]
    rotations: int
    event: str | None = None
    """The event the set was played for (an SPRT, a tournament), None for the ladder's sets."""
    isolated: bool | None = None
    """Whether every bot of the set was one the arena starts itself (a command or an upload, a process a
    seat) rather than a remote address (`isolated`); None for a set stored before schema 5."""
    shown_at: float | None = None
    """When a move of the set was first made public on the live page (seconds since the epoch), None
    when never (`SetStore.mark_set_shown`)."""

    @property
    def shown(self) -> bool:
        """Whether a move of the set was ever made public on the live page."""
        return self.shown_at is not None

    @property
    def pool(self) -> str:
        """The rating pool the set belongs to."""
        return pool_name(self.players, self.ruleset, self.event)

    def team_bots(self, rotation: int) -> tuple[str, ...]:
        """The bot of each team in a rotation: rotation r moves every bot r teams on."""
        count = len(self.bots)
        return tuple(self.bots[(team - rotation) % count] for team in range(count))


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One bot's part in a set's rating event: its rating before the set and after it."""

    bot: str
    before: float
    after: float


@dataclass(frozen=True, slots=True)
class SeatOutput:
    """What the bot process at one seat of a match wrote during it (standard output and error together),
    as the arena kept it: the first `--bot-output` bytes (`output`, the bot's bytes as they came) and how
    many more it dropped. Kept for the bots the arena starts; a remote bot's output is its own."""

    seat: int
    bot: str
    version: int | None
    """The upload version that played (None: a host's command)."""
    output: bytes
    dropped: int
    owner: str | None = None
    """The bot's owner when it played (BotEntry.owner)."""

    @property
    def text(self) -> str:
        """The output as text, never interpreted: bytes that are not UTF-8 replaced (U+FFFD)."""
        return self.output.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """A match of a set's rotation as it ended, whole: what the store keeps of it (`save_match`)."""

    id: str
    duplicate: DuplicateSet
    rotation: int
    reason: str
    ranking: tuple[int, ...]
    """The rank of each team (1 is best; equal ranks tie)."""
    faults: tuple[FaultRecord, ...]
    record: dict[str, Any]
    """The game record, as fiftysix.record writes it (GameRecord.to_json)."""
    decisions: int
    seconds: float
    outputs: tuple[SeatOutput, ...] = ()
    """What the bots the arena started wrote during the match, a seat each."""

    @property
    def team_bots(self) -> tuple[str, ...]:
        """The bot that played each team."""
        return self.duplicate.team_bots(self.rotation)

    @property
    def bot_ranks(self) -> dict[str, int]:
        """Each bot's rank."""
        return {bot: self.ranking[team] for team, bot in enumerate(self.team_bots)}


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as the ladder keeps it."""

    id: str
    set_id: int
    rotation: int
    team_bots: tuple[str, ...]
    reason: str
    ranking: tuple[int, ...]
    bot_ranks: dict[str, int]
    faults: tuple[FaultRecord, ...]
    decisions: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The match as a JSON-ready dictionary (faults as the store keeps them)."""
        return {
            "id": self.id,
            "set_id": self.set_id,
            "rotation": self.rotation,
            "team_bots": list(self.team_bots),
            "reason": self.reason,
            "ranking": list(self.ranking),
            "bot_ranks": dict(self.bot_ranks),
            "faults": [fault.to_json() for fault in self.faults],
            "decisions": self.decisions,
            "seconds": self.seconds,
        }
