"""What a ladder run is asked to do (`LadderSettings`), what it did (`LadderReport`, sums only: its size
does not grow with the run), and why it could not (`LadderError`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from arena.errors import ArenaError
from arena.ladder.outages import DEFAULT_STORE_WAIT_S
from arena.ladder.store import pool_name
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import TimeControl


class LadderError(ArenaError, ValueError):
    """A ladder that cannot run as asked (too few bots off probation), or a run stopped because its
    store cannot be written (or its server stayed away past `store_wait_s`)."""


@dataclass
class LadderSettings:
    """How a ladder run plays: how many matches (None: until stopped), for how long, how many at once,
    what kind."""

    matches: int | None = 20
    duration_s: float | None = None
    """No new set starts this many seconds after the run started (None: no limit); with `matches`,
    whichever comes first. The sets already started are played to their end."""
    concurrency: int = 1
    players: int = 4
    ruleset: Ruleset = Ruleset.PAIRS
    deal_cap: int | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    seed: int | None = None
    """None (the default): every new set's seed is 128 bits from the OS's secure source and the pairing's
    draws are random. A seed makes the run reproducible: the pairing's draws and the sets' seeds come from
    generators seeded by it (scheduler.set_seeds), so whoever knows it knows every deal."""
    strikes: int = 0
    """The fault policy of every match (see MatchSettings.strikes)."""
    probation_after: int = 3
    """A bot whose matches end in a forfeit of its own this many times in a row goes on probation."""
    lease_s: float = 60.0
    """How long a claimed set stays this runner's without a renewal (renewed every third of it): after
    a runner dies, another takes its sets over this long after its last renewal."""
    check_timeout_s: float = 5.0
    """How long a remote bot has to answer the check when a set starts (and when a down bot is checked)."""
    retry_s: float = 30.0
    """A set put back because a bot did not answer when it started waits this long, doubled each time."""
    retry_max_s: float = 3600.0
    down_after: int = 3
    """A bot the host fails to reach or start this many times in a row when sets start is marked down
    (at least 1)."""
    down_recheck_s: float = 60.0
    """How often the down bots are checked during a run."""
    isolated_only: bool = False
    """Take only bots the arena starts itself (isolated: isolation.py); remote bots are skipped, and an
    event with one is refused."""
    store_wait_s: float = DEFAULT_STORE_WAIT_S
    """How long the run waits for a store server that went away (restarted, the network cut), trying it
    again with backoff, before it stops as it does at once with 0 (outages.py)."""
    event: str | None = None
    """The event whose sets the run plays (an SPRT, a tournament: rated in a pool of their own); None for
    the ladder."""

    @property
    def rules(self) -> MatchRules:
        """The rules of the new sets this run creates."""
        return MatchRules(self.players, self.ruleset, self.deal_cap)

    @property
    def pool(self) -> str:
        """The rating pool of the new sets this run creates."""
        return pool_name(self.players, self.ruleset.value, self.event)


VOIDED_SETS_KEPT: Final = 20
"""How many voided sets a report names; a long run that voids many keeps only their count beyond."""


@dataclass
class LadderReport:
    """What a ladder run did, with where the time went: sums and counts only, so that a run of any
    length holds the same memory (a match's outcome, its record above all, is stored and let go)."""

    matches: int = 0
    sets_rated: int = 0
    faults: int = 0
    seconds: float = 0.0
    match_seconds: float = 0.0
    storage_seconds: float = 0.0
    decisions: int = 0
    decision_seconds: float = 0.0
    waited_seconds: float = 0.0
    probations: list[tuple[str, str]] = field(default_factory=list)
    """Bots put on probation by this run, with why: each bot at most once, so bounded by the bots."""
    arena_errors: int = 0
    """Matches the arena itself failed (logged with their tracebacks); their sets are void."""
    matches_cancelled: int = 0
    """Matches in progress when the run was stopped at once (`stop(now=True)`): nothing of them is
    stored, and their sets are finished by the next run."""
    sets_voided: int = 0
    voided_sets: list[tuple[int, str]] = field(default_factory=list)
    """The first VOIDED_SETS_KEPT sets made void, with why (the rest are in the log and the store)."""
    sets_resumed: int = 0
    """Unfinished sets (an earlier or another runner's, or put back) this run claimed and played on."""
    sets_postponed: int = 0
    """Sets put back because a bot did not answer when they started (nothing of them stored)."""
    bots_down: list[tuple[str, str]] = field(default_factory=list)
    """Bots this run marked down, with why: each bot at most once per time it went down."""
    bots_back: list[str] = field(default_factory=list)
    """Bots marked down that answered again during this run."""
