"""`arena ladder run|show|matches|record|output`: play rated matches between the registered bots, and read
the standings, the finished matches and what their bots wrote back."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Final

from arena.cli import arguments, export, listings, options, runs
from arena.cli.options import Commands, Parents, open_store, require_set_over
from arena.cli.progress import Progress
from arena.cli.sandbox_options import add_limits, sandbox_of
from arena.errors import ArenaError, UsageError
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots, idle_limit_for
from arena.ladder.ray_play import RayMatches
from arena.ladder.run_bots import ladder_bots
from arena.ladder.store import OUTPUTS_KEPT, LadderStore, StoreError
from arena.sandbox import bubblewrap
from arena.untrusted import safe_lines, safe_text

SAMPLE_BOTS: Final = {
    "random": "python -m sample_bots.random_bot --port 0 --port-file {port_file}",
    "rules": "python -m sample_bots.rule_bot --port 0 --port-file {port_file}",
}
"""What `ladder run --sample-bots` registers: name and command of each sample bot."""
DEFAULT_MATCHES: Final = 20
"""What `ladder run` plays when neither --matches, --forever nor --duration says otherwise."""


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena ladder` and its actions; `--db` goes before or after the action."""
    ladder = commands.add_parser(
        "ladder",
        help="play rated matches between registered bots; show standings",
        parents=[parents.group_database],
    )
    actions = ladder.add_subparsers(required=True, metavar="ACTION")
    run = actions.add_parser(
        "run",
        help="play matches in duplicate sets and rate them",
        description="Play rated matches between the registered bots. Each pairing is a duplicate set: the "
        "same deals once per rotation of the teams over the seats; a run ends on whole sets. Ctrl-C (or "
        "SIGTERM) starts no new match and lets the ones in progress finish; a second one cancels them "
        "(nothing of them is stored; the next run finishes their sets), prints the standings and exits "
        "with status 130.",
        parents=[parents.database, parents.ladder_match],
    )
    count = run.add_mutually_exclusive_group()
    count.add_argument(
        "--matches",
        type=arguments.matches,
        help=f"matches to play ({arguments.matches.range}; default 20, or no limit with --duration); "
        "a run plays whole sets, and finishes the sets an earlier run left unfinished first, so it may "
        "play a few more",
    )
    count.add_argument(
        "--forever", action="store_true", help="play until stopped with Ctrl-C (or until --duration)"
    )
    run.add_argument(
        "--duration",
        type=arguments.duration,
        metavar="TIME",
        help="start no new set after TIME, such as 90s, 30m, 2h or 1h30m "
        f"({arguments.duration.range}); with --matches, whichever comes first; the sets in play finish",
    )
    run.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="play the matches on a Ray cluster (needs the cluster extra); this run keeps pairing, "
        "ratings and the ladder file: `auto` joins the cluster `ray start` made on this machine, "
        "HOST:PORT or ray://HOST:PORT another; none starts one here. --concurrency matches are in "
        "play at once (give it the cluster's CPUs); see docs/scaling.md",
    )
    run.add_argument(
        "--probation-after",
        type=arguments.probation_after,
        default=3,
        help="put a bot on probation after this many forfeits in a row "
        f"({arguments.probation_after.range}; default 3; 0 never)",
    )
    run.add_argument(
        "--lease",
        type=arguments.lease,
        default=60.0,
        metavar="TIME",
        help="how long this run's claim of a set lasts without a renewal (renewed every third of it): "
        "when a run dies, other runs on the same file take its sets over this long after "
        f"({arguments.lease.range}; default 1m)",
    )
    host = run.add_argument_group(
        "bots the host cannot reach",
        "A bot that does not answer its check (a remote one) or does not start (a command) when its set "
        "starts is not rated for that set: the set is put back and tried again later, the wait doubling "
        "each time (up to an hour, or --retry if longer). After --down-after such failures in a row the "
        "bot is shown as down and left out of new sets until a check answers again.",
    )
    host.add_argument(
        "--check-timeout",
        type=arguments.check_timeout,
        default=5.0,
        metavar="TIME",
        help=f"how long a remote bot has to answer its check ({arguments.check_timeout.range}; default 5s)",
    )
    host.add_argument(
        "--retry",
        type=arguments.wait,
        default=30.0,
        metavar="TIME",
        help=f"the first wait before a set put back is tried again ({arguments.wait.range}; default 30s)",
    )
    host.add_argument(
        "--down-after",
        type=arguments.down_after,
        default=3,
        metavar="N",
        help=f"failures in a row after which a bot is down ({arguments.down_after.range}; default 3)",
    )
    host.add_argument(
        "--down-recheck",
        type=arguments.wait,
        default=60.0,
        metavar="TIME",
        help=f"how often the bots that are down are checked ({arguments.wait.range}; default 1m)",
    )
    run.add_argument(
        "--idle-bots",
        type=arguments.idle_bots,
        default=None,
        metavar="N",
        help="bot processes the arena started that it keeps running between their matches, over all bots "
        "(the least recently used is stopped first; "
        f"{arguments.idle_bots.range}; default 4, or concurrency x players if more)",
    )
    run.add_argument(
        "--port-range",
        type=arguments.port_range,
        default=None,
        metavar="LO-HI",
        help="the ports the bots the arena starts from a {port} command listen on, for hosts whose "
        "firewall opens only some (default: any free port; {port_file} commands pick their own)",
    )
    run.add_argument(
        "--sample-bots",
        action="store_true",
        help="register the sample bots (random, rules) if they are not yet",
    )
    add_limits(run)
    run.set_defaults(handler=run_ladder, prog=run.prog)

    show = actions.add_parser(
        "show",
        help="print the standings of a rating pool",
        description="Print the standings of one rating pool: each format (players x ruleset, such as "
        "4p-pairs or 6p-partnership) is rated apart. The pools and their match counts are listed above.",
        parents=[parents.database],
    )
    show.add_argument(
        "--pool", metavar="POOL", help="the pool, such as 6p-pairs (default: the pool with the most matches)"
    )
    show.add_argument("--json", action="store_true", help="print JSON (each line names its pool)")
    show.add_argument(
        "--crosstable",
        action="store_true",
        help="print the head-to-head results of each pair of bots instead (summed set scores and sets)",
    )
    show.set_defaults(handler=show_standings, prog=show.prog)

    matches = actions.add_parser(
        "matches", help="list the newest finished matches", parents=[parents.database]
    )
    matches.add_argument("--bot", help="only the matches of this bot")
    matches.add_argument(
        "--limit", type=arguments.limit, default=20, help=f"how many ({arguments.limit.range}; default 20)"
    )
    matches.add_argument("--json", action="store_true", help="print JSON")
    matches.set_defaults(handler=list_matches, prog=matches.prog)

    record = actions.add_parser(
        "record", help="write a stored match's game record (for arena replay)", parents=[parents.database]
    )
    record.add_argument("match_id", metavar="MATCH_ID")
    record.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    record.set_defaults(handler=export_record, prog=record.prog)

    output = actions.add_parser(
        "output",
        help="print what the bots the arena started wrote during a stored match, once its set is over",
        description="Print each seat's output (standard output and error) kept of a stored match: the "
        "bots the arena started (commands, uploads), at most --bot-output a match each, the bytes past it "
        "counted; remote bots keep their own. Like the record, held back until the match's set is over "
        f"(the bots' logs have it at once); kept for each bot's last {OUTPUTS_KEPT} matches. Characters "
        "that could drive a terminal are shown escaped.",
        parents=[parents.database],
    )
    output.add_argument("match_id", metavar="MATCH_ID")
    output.add_argument("--seat", type=arguments.seat, help=f"only this seat ({arguments.seat.range})")
    output.set_defaults(handler=print_outputs, prog=output.prog)

    export = actions.add_parser(
        "export",
        help="write every game record as JSON lines, a pool's standings as CSV, or the site as HTML",
        description="Write the ladder's data for other programs: --jsonl every stored game record, oldest "
        "first, one JSON document a line (streamed: memory stays flat however long the history); --csv "
        "the standings of a pool with a header line (FILE `-` is standard output); --html the leaderboards "
        "and match replays as HTML files that open with no server.",
        parents=[parents.database],
    )
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument("--jsonl", metavar="FILE", help="every game record, one a line (`-`: standard output)")
    what.add_argument("--csv", metavar="FILE", help="the standings of a pool (`-`: standard output)")
    what.add_argument(
        "--html", metavar="DIR", help="the static site: leaderboards and replays (made if missing)"
    )
    export.add_argument(
        "--pool", metavar="POOL", help="with --csv: the pool, such as 6p-pairs (default: the most matches)"
    )
    export.add_argument(
        "--limit",
        type=arguments.limit,
        default=1000,
        help=f"with --html: replays of the newest N matches of sets that are over ({arguments.limit.range}; "
        "default 1000)",
    )
    export.set_defaults(handler=export_data, prog=export.prog)


def export_html(args: argparse.Namespace) -> int:
    """Write the static site (--html)."""
    from arena.site.export import export_html as write_site  # Jinja2 is only needed here

    folder = Path(args.html)
    if folder.exists() and not folder.is_dir():
        raise ArenaError(f"cannot export to {safe_text(args.html)}: it is not a folder")
    with open_store(args, writes=False) as store:
        try:
            done = write_site(store, folder, args.limit)
        except OSError as error:
            raise ArenaError(f"cannot export to {safe_text(args.html)}: {error.strerror}") from None
    skipped = f" ({done.skipped} records that do not replay skipped)" if done.skipped else ""
    wrote = f"Wrote {done.leaderboards} leaderboards and {done.replays} replays to {safe_text(args.html)}"
    print(f"{wrote}{skipped}; open {safe_text(str(folder / 'index.html'))}")
    return 0


def show_standings(args: argparse.Namespace) -> int:
    """Print the standings."""
    with open_store(args, writes=False) as store:
        if args.crosstable:
            listings.print_crosstable(store, as_json=args.json, pool=args.pool)
        else:
            listings.print_standings(store, as_json=args.json, pool=args.pool)
    return 0


def list_matches(args: argparse.Namespace) -> int:
    """Print the newest finished matches (of one bot), newest first."""
    with open_store(args, writes=False) as store:
        listings.print_matches(store, args.bot, args.limit, as_json=args.json)
    return 0


def export_record(args: argparse.Namespace) -> int:
    """Write a stored match's game record (for `arena replay`) to a file or standard output, once its set
    is over (as the site gives it)."""
    with open_store(args, writes=False) as store:
        require_set_over(store, args.match_id)
        text = json.dumps(store.browse.match_record(args.match_id), indent=1) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise ArenaError(f"cannot write {args.output}: {error.strerror}") from None
        print(f"Game record of {safe_text(args.match_id)} saved to {safe_text(args.output)}")
    else:
        sys.stdout.write(text)
    return 0


def print_outputs(args: argparse.Namespace) -> int:
    """Print what each started bot of a stored match wrote during it, once its set is over (as its
    record)."""
    with open_store(args, writes=False) as store:
        require_set_over(store, args.match_id)
        outputs = store.outputs.of_match(args.match_id)
    match = safe_text(args.match_id)
    if args.seat is not None:
        outputs = [output for output in outputs if output.seat == args.seat]
    if not outputs:
        which = "" if args.seat is None else f" seat {args.seat} of"
        print(
            f"No output kept of{which} match {match}: its bots are remote (their output is their own), or "
            f"it is older than their last {OUTPUTS_KEPT} matches"
        )
    for output in outputs:
        version = "" if output.version is None else f" v{output.version}"
        dropped = f", {output.dropped:,} more dropped (past --bot-output)" if output.dropped else ""
        print(
            f"== match {match} seat {output.seat}: {safe_text(output.bot, 64)}{version}: "
            f"{len(output.output):,} bytes{dropped}"
        )
        for line in safe_lines(output.text):
            print(line)
    return 0


def export_data(args: argparse.Namespace) -> int:
    """Write every game record as JSON lines (--jsonl), a pool's standings as CSV (--csv), or the static
    site (--html)."""
    if args.pool is not None and args.csv is None:
        raise UsageError("--pool goes with --csv (the records of every pool are exported)")
    if args.html is not None:
        return export_html(args)
    with open_store(args, writes=False) as store:
        if args.jsonl is not None:
            with export.output(args.jsonl) as out:
                count = export.write_records(store, out)
            said = f"Exported {count} game records to {safe_text(args.jsonl)}"
            held = store.browse.held_back_matches()
            if held and args.jsonl == "-":
                print(f"{held} game records held back: their sets are not over", file=sys.stderr)
            elif held:
                said += f" ({held} held back: their sets are not over)"
        else:
            with export.output(args.csv) as out:
                pool, count = export.write_standings(store, args.pool, out)
            said = f"Exported the standings of {pool} ({count} bots) to {safe_text(args.csv)}"
    if "-" not in (args.jsonl, args.csv):
        print(said)
    return 0


def run_ladder(args: argparse.Namespace) -> int:
    """Play rated matches with a progress line on standard error; then print the report and standings.
    Returns 0, or 128 + the signal's number (130 for Ctrl-C) when a second signal stopped the run at
    once (after the report and standings of what finished)."""
    with open_store(args, writes=True, wait_s=args.store_wait) as store:
        return _run(args, store)


def _warn_if_unsandboxable(sandboxed: list[str]) -> None:
    """Say at once, in one line, when bots that run in the sandbox cannot start here (they are then
    postponed and marked down like any bot that does not start)."""
    reason = bubblewrap.unavailable_reason() if sandboxed else None
    if reason is not None:
        names = ", ".join(safe_text(name, 64) for name in sandboxed[:5]) + (
            ", ..." if len(sandboxed) > 5 else ""
        )
        print(
            f"arena ladder run: warning: {len(sandboxed)} bots run in the sandbox ({names}), but {reason}; "
            "they will not start (register them with --sandbox off only if you trust their code)",
            file=sys.stderr,
        )


def _register_sample_bots(store: LadderStore) -> None:
    """Register the sample bots not registered yet; one that another runner starting at the same time
    registers first is left as it is."""
    registered = {bot.name for bot in store.registry.bots()}
    for name, command in SAMPLE_BOTS.items():
        if name in registered:
            continue
        try:
            store.registry.add_bot(name, command=command)
        except StoreError:
            if name not in {bot.name for bot in store.registry.bots()}:
                raise
            continue
        print(f"Registered the sample bot {name}: {command}")


def _run(args: argparse.Namespace, store: LadderStore) -> int:
    options.configure_logging_from(args)
    if args.sample_bots:
        _register_sample_bots(store)
    if args.forever:
        matches = None
    elif args.matches is not None:
        matches = args.matches
    else:
        matches = None if args.duration is not None else DEFAULT_MATCHES
    settings = dataclasses.replace(
        runs.settings_of(args),
        matches=matches,
        duration_s=args.duration,
        probation_after=args.probation_after,
        lease_s=args.lease,
        check_timeout_s=args.check_timeout,
        retry_s=args.retry,
        retry_max_s=max(3600.0, args.retry),
        down_after=args.down_after,
        down_recheck_s=args.down_recheck,
    )
    local_bots = ladder_bots(
        store,
        sandbox_of(args),
        idle_limit=(
            idle_limit_for(settings.concurrency, settings.players, settings.rules.team_count)
            if args.idle_bots is None
            else args.idle_bots
        ),
        port_range=args.port_range,
    )
    _warn_if_unsandboxable(store.uploads.sandboxed_bots())
    on_ray = None if args.ray is None else RayMatches(args.ray or None, local_bots)
    try:
        return _play(args, store, settings, local_bots, on_ray)
    finally:
        if on_ray is not None:
            on_ray.close()


def _play(
    args: argparse.Namespace,
    store: LadderStore,
    settings: LadderSettings,
    local_bots: LocalBots,
    on_ray: RayMatches | None,
) -> int:
    progress = Progress(settings.matches, duration_s=settings.duration_s)
    ladder = Ladder(
        store,
        settings,
        local_bots,
        on_match=lambda outcome, _report: progress.advance(len(outcome.faults), ladder.planned_matches),
        matches=on_ray,
    )
    ladder.pairing.check()
    what = "until stopped (Ctrl-C)" if settings.matches is None else f"{settings.matches} matches"
    if args.duration is not None:
        what = f"{what} for at most {arguments.span(args.duration)}"
        if settings.matches is None:
            what = f"for {arguments.span(args.duration)} (Ctrl-C stops earlier)"
    where = "" if on_ray is None else " on Ray"
    print(
        f"Playing {what}, {settings.concurrency} at a time{where}; results in {safe_text(store.name)}",
        file=sys.stderr,
    )
    try:
        signals = runs.play(ladder, local_bots)
    finally:
        progress.close()  # before any error line, so that the error is a line of its own
    report = ladder.report
    print(
        f"Played {report.matches} matches ({report.sets_rated} sets rated, {report.faults} faults) "
        f"in {report.seconds:.1f} s"
    )
    for name, reason in report.probations:
        print(f"{safe_text(name, 64)} was put on probation: {safe_text(reason)}")
    for name, reason in report.bots_down:
        print(f"{safe_text(name, 64)} was marked down (skipped until it answers): {safe_text(reason)}")
    for name in report.bots_back:
        print(f"{safe_text(name, 64)} answers again (no longer down)")
    if report.sets_postponed:
        print(
            f"{report.sets_postponed} sets were put back, not rated: a bot did not answer when they "
            "started (they are tried again later)"
        )
    for set_id, reason in report.voided_sets:
        print(f"Set {set_id} was made void (never rated): {safe_text(reason)}")
    if report.sets_voided > len(report.voided_sets):
        print(f"... and {report.sets_voided - len(report.voided_sets)} more sets made void (see the log)")
    if report.arena_errors:
        print(f"{report.arena_errors} matches failed by an error of the arena's own (see the log)")
    if report.matches_cancelled:
        print(
            f"Stopped at once: {report.matches_cancelled} matches in progress were cancelled and not "
            "stored; the next run finishes their sets"
        )
    print("")
    listings.print_standings(store, as_json=False, pool=settings.pool)
    return runs.interrupted(signals) or 0
