"""`arena tournament --format round-robin|gauntlet --bots A,B,C`: every pairing of the bots given (the
gauntlet: the first bot against each of the others) played as duplicate sets by the ladder's machinery
(leases, local bots, containment, storage, probation), `--rounds` times, ending with the crosstable and
the ratings fitted over the tournament's own sets.

With three or four teams (6- and 8-player `pairs`) a "pairing" is a group of as many bots as teams:
round-robin plays every such group of the bots, the gauntlet the first bot with every group of the
others. The sets are stored in the event's own pool (`4p-pairs@tournament-...`), apart from the ladder's
ratings; `arena ladder show --pool` and `--crosstable` read it again later.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Final

from arena.cli import arguments, listings, options, runs
from arena.cli.options import Commands, Parents, open_store
from arena.cli.progress import Progress
from arena.cli.sandbox_options import add_limits, sandbox_of
from arena.errors import UsageError
from arena.ladder import Ladder
from arena.ladder.bots import idle_limit_for
from arena.ladder.pairing import TOURNAMENT_FORMATS, EventPairing, tournament_plan
from arena.ladder.run_bots import ladder_bots
from arena.untrusted import safe_text

MAX_BOTS: Final = 64
MAX_SETS: Final = 100_000
"""The most sets a tournament plans (64 bots in four-team groups would be 635,376 sets a round)."""
rounds: Final = arguments.Bounded(1, 1_000)


def bot_list(text: str) -> list[str]:
    """`A,B,C`: 1 to MAX_BOTS bot names, comma-separated."""
    names = [name.strip() for name in text.split(",")]
    if len(names) > MAX_BOTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_BOTS} bots, got {len(names)}")
    return [arguments.bot_name(name) for name in names]


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena tournament`."""
    tournament = commands.add_parser(
        "tournament",
        help="play a round-robin or a gauntlet between registered bots; crosstable and ratings",
        description="Play every pairing of the bots given (round-robin), or the first bot against each of "
        "the others (gauntlet), each as a duplicate set, --rounds times; then print the crosstable and the "
        "ratings fitted over the tournament's sets only. With 3 or 4 teams a pairing is a group of that "
        "many bots. The sets are stored in the event's own pool (FORMAT@EVENT).",
        parents=[parents.group_database, parents.ladder_match],
    )
    tournament.add_argument("--format", dest="form", choices=TOURNAMENT_FORMATS, required=True)
    tournament.add_argument(
        "--bots",
        type=bot_list,
        required=True,
        metavar="A,B,C",
        help=f"the bots, comma-separated (at most {MAX_BOTS})",
    )
    tournament.add_argument(
        "--rounds", type=rounds, default=1, help=f"times every pairing is played ({rounds.range}; default 1)"
    )
    tournament.add_argument(
        "--event",
        type=arguments.event,
        default=None,
        help="the event's name, which names its pool (default: tournament-DATE-TIME-XXXX)",
    )
    add_limits(tournament)
    tournament.set_defaults(handler=run_tournament, prog=tournament.prog)


def run_tournament(args: argparse.Namespace) -> int:
    """Play the tournament's sets with a progress line on standard error, then print the crosstable and
    the ratings. Returns 0, or 128 + a signal's number when a second signal stopped it at once."""
    rules = options.rules_of(args)
    try:
        plan = tournament_plan(args.form, args.bots, rules.team_count, args.rounds)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if len(plan) > MAX_SETS:
        raise UsageError(f"{len(plan):,} sets planned: at most {MAX_SETS:,} (fewer bots or rounds)")
    options.configure_logging_from(args)
    event = args.event or runs.new_event("tournament")
    with open_store(args, writes=True, wait_s=args.store_wait) as store:
        settings = dataclasses.replace(runs.settings_of(args), matches=None, event=event)
        pairing = EventPairing(store, settings, args.bots, iter(plan))
        local_bots = ladder_bots(
            store,
            sandbox_of(args),
            idle_limit=idle_limit_for(args.concurrency, settings.players, settings.rules.team_count),
        )
        progress = Progress(len(plan) * rules.team_count)
        ladder = Ladder(
            store,
            settings,
            local_bots,
            on_match=lambda outcome, _report: progress.advance(len(outcome.faults), None),
            pairing=pairing,
        )
        pairing.check()
        names = ", ".join(safe_text(bot, 64) for bot in args.bots)
        print(
            f"{args.form} of {names}: {len(plan)} sets of {rules.team_count} bots in {settings.pool}",
            file=sys.stderr,
        )
        try:
            signals = runs.play(ladder, local_bots)
        finally:
            progress.close()
        runs.say_down(pairing)
        report = ladder.report
        print(
            f"Played {report.matches} matches ({report.sets_rated} of {len(plan)} sets rated, "
            f"{report.faults} faults) in {report.seconds:.1f} s"
        )
        for set_id, reason in report.voided_sets:
            print(f"Set {set_id} was made void (never rated): {safe_text(reason)}")
        print("")
        listings.print_event(store, settings.pool, args.bots)
        return runs.interrupted(signals) or 0
