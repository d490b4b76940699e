"""`arena rerun MATCH_ID|FILE --seat N --bot HOST:PORT`: re-run one seat of a recorded match against a
bot run locally, every other seat's moves taken from the record, and stop at the first difference."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Final

from arena.check.report import plural
from arena.cli import arguments
from arena.cli.options import Commands, Parents, open_store
from arena.cli.replay import STANDARD_INPUT, load_record, source_name
from arena.errors import ArenaError, UsageError
from arena.runner.rerun import Compared, RerunError, RerunOutcome, RerunPlan, Stop, Verdict, rerun
from arena.runner.stream import Ending
from arena.untrusted import safe_text
from fiftysix.logs import configure_logging
from fiftysix.record import GameRecord, RecordError, from_json
from fiftysix.replay import replay
from fiftysix.transcript import render_moves, render_view
from fiftysix.wire import FaultCause

LOST: Final = frozenset({FaultCause.DISCONNECTED, FaultCause.PROTOCOL_ERROR})
"""The faults that leave no stream: a bot that crashed, or broke it."""
SHOWN_MOVES: Final = 60
"""Legal moves shown beside the view at a difference: an auction has up to 395."""


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena rerun`."""
    parser = commands.add_parser(
        "rerun",
        help="re-run one seat of a recorded match against your bot, move by move",
        description="Hold one seat's conversation with your bot as the arena held it in a recorded match "
        "(handshake, MatchStart, every decision with the view and legal moves the arena sent, DealEnd, "
        "MatchEnd), every other seat's moves taken from the record, and print the recorded move beside "
        "the bot's answer at each of the seat's decisions, until the first difference. A recorded fault "
        "of the seat (a timeout, an illegal move, a malformed answer, a crash) is expected again where it "
        "happened. Moves are counted from 1 over the whole match: move N was asked with decision_id N. "
        "Exit status: 0 the bot did every move as recorded (its recorded faults included), 1 it did "
        "something else, 2 the rerun could not be made (bad usage, a record that cannot be read or is "
        "held back, no bot at the address).",
        parents=[parents.group_database],
    )
    parser.add_argument(
        "source",
        metavar="MATCH_ID|FILE",
        help="a saved game record (`-`: standard input), or the id of a match stored in the ladder (--db) "
        "whose set is over",
    )
    parser.add_argument(
        "--seat", type=arguments.seat, required=True, help=f"the seat your bot plays ({arguments.seat.range})"
    )
    parser.add_argument(
        "--bot", type=arguments.one_address, required=True, metavar="HOST:PORT", help="where your bot listens"
    )
    parser.add_argument(
        "--from-deal",
        type=arguments.deal_number,
        default=1,
        metavar="D",
        help="ask the bot from deal D on (default 1): the deals before are played from the record and "
        f"the bot is sent only their DealEnds, as it was then ({arguments.deal_number.range})",
    )
    parser.add_argument(
        "--until-move",
        type=arguments.move_number,
        metavar="N",
        help="stop after move N of the match (counted from 1 over every deal: the decision_id the arena "
        f"asked it with; {arguments.move_number.range})",
    )
    parser.add_argument(
        "--patient",
        action="store_true",
        help="wait for each answer as long as it takes (to step through your bot in a debugger); a "
        "recorded timeout is then not reproduced",
    )
    parser.set_defaults(handler=rerun_match, prog=parser.prog)


def _stored(args: argparse.Namespace) -> GameRecord:
    """The record of the match MATCH_ID in the ladder, once its set is over (as `ladder record` and the
    site give it)."""
    source = args.source
    try:
        with open_store(args, writes=False) as store:
            summary = store.browse.match_summary(source)
            if summary.held_back is not None:
                raise RerunError(summary.held_back)
            document = store.browse.match_record(source)
    except RerunError:
        raise
    except ArenaError as error:  # no ladder, or no such match in it
        raise UsageError(f"{safe_text(source)}: no such file, and {error}") from None
    try:
        return from_json(document)
    except RecordError as error:
        raise RerunError(f"the record of match {safe_text(source)}: {error}") from None


def _record(args: argparse.Namespace) -> tuple[GameRecord, str]:
    """The record to rerun and what it is called: a file if one is there, else a match of the ladder."""
    source = args.source
    path = Path(source)
    if source == STANDARD_INPUT or path.exists() or path.is_symlink():
        try:
            record = load_record(source)
        except RecordError as error:
            raise RerunError(f"{safe_text(source_name(source))}: {error}") from None
        name = safe_text(source_name(source))
    else:
        record = _stored(args)
        name = f"match {safe_text(source)}"
    try:
        replay(record)
    except RecordError as error:
        raise RerunError(f"{name}: {error}") from None
    return record, name


def rerun_match(args: argparse.Namespace) -> int:
    """Re-run the seat, a line per step compared; 1 at the first difference."""
    configure_logging(level="error")
    record, name = _record(args)
    match_id = record.extra.get("match_id")
    plan = RerunPlan.of(record, args.seat, args.from_deal, args.until_move)
    rules = record.rules
    seat_name = safe_text(record.seats[args.seat], 64)
    what = f"{rules.players} players, {rules.ruleset.value} ruleset, {plural(len(record.deals), 'deal')}"
    which = name if not isinstance(match_id, str) or name.endswith(match_id) else f"{name} ({match_id})"
    span = f"from deal {args.from_deal}" if args.from_deal > 1 else "from the start"
    span += f" to move {args.until_move}" if args.until_move is not None else " to the end"
    against = f"seat {args.seat} ({seat_name}) against the bot at {args.bot}"
    print(f"Rerun of {safe_text(which)} ({what}): {against}, {span}", flush=True)

    def show(compared: Compared) -> None:
        print(describe(compared), flush=True)

    outcome = asyncio.run(rerun(plan, args.bot, show, patient=args.patient))
    return _verdict(outcome, args)


def describe(compared: Compared) -> str:
    """One step compared, on one line: where, what the record has, what the bot did, the verdict."""
    fault = compared.fault
    if fault is not None:
        recorded = f"{fault.cause.value} ({safe_text(fault.detail)})"
        if not fault.substituted:
            recorded += ", a forfeit"
        elif compared.recorded is not None:
            recorded += f", {compared.recorded} played in its place"
    else:
        recorded = str(compared.recorded) if compared.recorded is not None else "no fault"
    if compared.cause is not None:
        answered = f"{compared.cause.value} ({compared.detail})"
    elif compared.answer is not None:
        answered = str(compared.answer)
    else:
        answered = "no fault there"
    verdict = compared.verdict
    suffix = "" if verdict is Verdict.SAME else f": {verdict.value}"
    return f"{compared.where}: recorded {recorded}; the bot {answered}{suffix}"


def _verdict(outcome: RerunOutcome, args: argparse.Namespace) -> int:
    decisions = sum(1 for compared in outcome.compared if compared.number is not None)
    reproduced = sum(1 for compared in outcome.compared if compared.verdict is Verdict.REPRODUCED)
    difference = outcome.difference
    if difference is not None:
        if difference.view is not None:
            print(f"  view: {render_view(difference.view)}")
            legal = difference.legal
            more = f" ... ({len(legal)} in all)" if len(legal) > SHOWN_MOVES else ""
            print(f"  legal: {render_moves(legal[:SHOWN_MOVES])}{more}")
        if difference.fault is None and difference.cause in LOST:
            assert difference.cause is not None
            raise ArenaError(
                f"the bot at {args.bot} crashed or closed its stream at {difference.where}: "
                f"{difference.cause.value} ({difference.detail})"
            )
        print(f"The bot differs from the record at {difference.where}.")
        return 1
    counted = f"{plural(decisions, 'decision')} compared"
    if reproduced:
        counted += f", {plural(reproduced, 'recorded fault')} reproduced"
    last = outcome.compared[-1] if outcome.compared else None
    if last is not None and last.fault is not None and not last.fault.substituted:
        counted += " (the last a forfeit, where the record ends)"
    until = f" up to move {args.until_move}" if outcome.stop is Stop.UNTIL else ""
    print(f"The bot played every move as recorded{until}: {counted}.")
    if outcome.ending is not None and outcome.ending[0] is not Ending.CLOSED:
        print(
            f"Note: after MatchEnd the bot {outcome.ending[1]} (the arena closes such a stream: not a fault)."
        )
    return 0
