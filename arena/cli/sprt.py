"""`arena sprt A B --elo0 E0 --elo1 E1`: play duplicate sets between two registered bots until the
sequential probability ratio test decides whether A is elo1 stronger than B rather than elo0 (the test
itself is arena/ladder/rating/sprt.py; the sets are played by the ladder's machinery: leases, local bots,
containment, storage, probation).

The sets are stored like the ladder's, in the event's own rating pool (`4p-pairs@sprt-...`, see `arena
ladder show --pool`), so they never move the ladder's ratings. Run again with the same `--event`, a test
goes on from the sets already played (and finishes a set left unfinished).

Exit status: 0 when H1 is accepted, 1 when H0 is accepted (an error is 1 too, and says so on standard
error), 2 for bad usage, 3 when --max-sets sets were played without a decision, 130 when stopped at once
by a second Ctrl-C (143 after SIGTERM).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
from typing import Final

from arena.cli import arguments, options, runs
from arena.cli.options import Commands, Parents, open_store
from arena.cli.sandbox_options import add_limits, sandbox_of
from arena.errors import UsageError
from arena.ladder import Ladder, LadderReport
from arena.ladder.bots import idle_limit_for
from arena.ladder.pairing import EventPairing
from arena.ladder.rating import SetScores, SprtSettings, decision, elo_estimate, log_likelihood_ratio
from arena.ladder.run_bots import ladder_bots
from arena.ladder.store import LadderStore
from arena.runner import MatchOutcome
from arena.untrusted import safe_text

UNDECIDED: Final = 3
"""The exit status when --max-sets sets were played without a decision."""


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena sprt`."""
    sprt = commands.add_parser(
        "sprt",
        help="test whether bot A is stronger than bot B (sequential probability ratio test)",
        description="Play duplicate sets between two registered bots until the SPRT decides between "
        "H0 (A is ELO0 stronger than B) and H1 (A is ELO1 stronger), printing the log-likelihood ratio and "
        "its bounds after each set. Exit status 0 for H1, 1 for H0, 3 when --max-sets is reached first. "
        "The sets are stored in the event's own pool (FORMAT@EVENT), apart from the ladder's ratings.",
        parents=[parents.group_database, parents.ladder_match],
    )
    sprt.add_argument("first", metavar="A", type=arguments.bot_name, help="the bot tested (the new version)")
    sprt.add_argument("second", metavar="B", type=arguments.bot_name, help="the bot it is compared with")
    sprt.add_argument(
        "--elo0", type=arguments.elo, required=True, help=f"H0's Elo difference A - B ({arguments.elo.range})"
    )
    sprt.add_argument(
        "--elo1",
        type=arguments.elo,
        required=True,
        help=f"H1's Elo difference A - B, above ELO0 ({arguments.elo.range})",
    )
    sprt.add_argument(
        "--alpha",
        type=arguments.error_rate,
        default=0.05,
        help=f"the chance of accepting H1 when H0 holds ({arguments.error_rate.range}; default 0.05)",
    )
    sprt.add_argument(
        "--beta",
        type=arguments.error_rate,
        default=0.05,
        help=f"the chance of accepting H0 when H1 holds ({arguments.error_rate.range}; default 0.05)",
    )
    sprt.add_argument(
        "--max-sets",
        type=arguments.sets,
        default=None,
        help=f"stop undecided after this many sets, exit status 3 ({arguments.sets.range}; default: none)",
    )
    sprt.add_argument(
        "--event",
        type=arguments.event,
        default=None,
        help="the event's name, which names its pool (default: sprt-DATE-TIME-XXXX); the same name again "
        "goes on from the sets already played",
    )
    add_limits(sprt)
    sprt.set_defaults(handler=run_sprt, prog=sprt.prog)


class SprtProgress:
    """The test as the sets are rated: reads the event pool's sums of A against B after each match and
    prints a line for each new set; `go_on` tells the pairing whether to start another set."""

    def __init__(
        self, store: LadderStore, settings: SprtSettings, pool: str, first: str, second: str
    ) -> None:
        self.store = store
        self.settings = settings
        self.pool = pool
        self.first = first
        self.second = second
        self.scores = self.read()
        self.decided = decision(self.scores, settings) if self.scores.sets else None
        self.created = 0
        self.max_sets: int | None = None

    def read(self) -> SetScores:
        """The sums of A's set scores against B in the event's pool."""
        pair = tuple(sorted((self.first, self.second)))
        line = self.store.ratings.pool_sums(self.pool).pairs.get((pair[0], pair[1]))
        scores = SetScores() if line is None else SetScores(line.sets, line.score, line.squares)
        return scores if pair[0] == self.first else scores.reversed()

    def go_on(self) -> bool:
        """Whether to start another set: no decision yet, and --max-sets not reached by the sets rated and
        started."""
        if self.decided is not None:
            return False
        if self.max_sets is not None and self.scores.sets + self.created >= self.max_sets:
            return False
        self.created += 1
        return True

    def on_match(self, _outcome: MatchOutcome, _report: LadderReport) -> None:
        """After each stored match: a line for the set it completed, if it did, and the decision."""
        now = self.read()
        if now.sets == self.scores.sets:
            return
        latest = now.score - self.scores.score
        self.created -= now.sets - self.scores.sets
        self.scores = now
        print(self.line(latest), flush=True)
        if self.decided is None:
            self.decided = decision(now, self.settings)

    def line(self, latest: float) -> str:
        """One set's line: its score, the running score, the LLR within its bounds, the Elo estimate."""
        scores, settings = self.scores, self.settings
        elo, low, high = elo_estimate(scores)
        ratio = log_likelihood_ratio(scores, settings)
        return (
            f"set {scores.sets}: {safe_text(self.first, 64)} scored {latest:g}, in all "
            f"{scores.score:g}/{scores.sets}; LLR {ratio:+.2f} "
            f"({settings.lower:+.2f}, {settings.upper:+.2f}); Elo {elo:+.1f} [{low:+.1f}, {high:+.1f}]"
        )


def run_sprt(args: argparse.Namespace) -> int:
    """Play sets until the test decides; print each set's line, then the hypothesis accepted and the Elo
    difference. Returns 0 (H1), 1 (H0), 3 (undecided at --max-sets) or 128 + a signal's number."""
    try:
        settings = SprtSettings(args.elo0, args.elo1, args.alpha, args.beta)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.first == args.second:
        raise UsageError("A and B are the same bot: an SPRT compares two bots")
    rules = options.rules_of(args)
    if rules.team_count != 2:
        raise UsageError(
            f"a {args.players}-player {args.ruleset.value} match has {rules.team_count} teams: an SPRT is "
            "between two bots (4 players, or the partnership ruleset)"
        )
    options.configure_logging_from(args)
    event = args.event or runs.new_event("sprt")
    with open_store(args, writes=True, wait_s=args.store_wait) as store:
        ladder_settings = dataclasses.replace(runs.settings_of(args), matches=None, event=event)
        progress = SprtProgress(store, settings, ladder_settings.pool, args.first, args.second)
        progress.max_sets = args.max_sets
        pairing = EventPairing(
            store,
            ladder_settings,
            [args.first, args.second],
            itertools.repeat([args.first, args.second]),
            progress.go_on,
        )
        local_bots = ladder_bots(
            store,
            sandbox_of(args),
            idle_limit=idle_limit_for(
                args.concurrency, ladder_settings.players, ladder_settings.rules.team_count
            ),
        )
        ladder = Ladder(store, ladder_settings, local_bots, on_match=progress.on_match, pairing=pairing)
        pairing.check()
        print(
            f"SPRT {safe_text(args.first, 64)} vs {safe_text(args.second, 64)} in {ladder_settings.pool}: "
            f"H0 Elo {settings.elo0:+g}, H1 Elo {settings.elo1:+g}, alpha {settings.alpha:g}, "
            f"beta {settings.beta:g}; LLR bounds ({settings.lower:+.2f}, {settings.upper:+.2f})",
            flush=True,
        )
        if progress.scores.sets:
            print(f"Going on from {progress.scores.sets} sets already played in {ladder_settings.pool}")
        signals = runs.play(ladder, local_bots)
        runs.say_down(pairing)
        return _verdict(progress, ladder_settings.pool, signals)


def _verdict(progress: SprtProgress, pool: str, signals: list[int]) -> int:
    """Print the hypothesis accepted and the Elo difference; the exit status."""
    scores, settings = progress.scores, progress.settings
    first, second = safe_text(progress.first, 64), safe_text(progress.second, 64)
    elo, low, high = elo_estimate(scores)
    if progress.decided == "H1":
        print(f"H1 accepted: {first} - {second} is {settings.elo1:+g} Elo rather than {settings.elo0:+g}")
        status = 0
    elif progress.decided == "H0":
        print(f"H0 accepted: {first} - {second} is {settings.elo0:+g} Elo rather than {settings.elo1:+g}")
        status = 1
    else:
        print(f"No decision after {scores.sets} sets", file=sys.stderr if signals else sys.stdout)
        status = UNDECIDED
    interval = f"{elo:+.1f} [{low:+.1f}, {high:+.1f}] (95%)"
    print(f"Elo {first} - {second}: {interval} over {scores.sets} sets; pool {pool}")
    return runs.interrupted(signals) or status
