"""The strong bot under the ladder's default time control: its faults over a run of real ladder matches.

Run by hand: `python bench/strong_clock.py [--matches 200] [--concurrency 2] [--budget 0.3]`. In a
temporary folder it makes a fresh ladder, registers the strong bot (sample_bots/strong_bot.py, at its
default budget unless `--budget` says otherwise) and the rule bot as commands the arena starts (one process
per seat, as a host registers them), plays the matches with `arena ladder run` at the ladder's default
time control (1,000 ms a decision, a 10 s bank) and prints the matches played, the strong bot's faults by
cause (a timeout is one), and the wall time. A search bot thinks for whole seconds a match, so it is
registered with a CPU limit per process of a week (`--bot-cpu`): the default 600 s would end a process
that plays many matches, which is the host's choice, not the bot's clock.

`--db FILE` keeps the ladder in that file instead: a later run with the same file plays `--matches`
more and counts every match in it, so that a run of 200 matches (3 to 4 hours on 2 cores) can be
played in pieces. One file is for one version of the bot: a hash of the sample bots' and the engine's
code and the budget is kept beside it (`FILE.bot`), and a run refuses a file kept for another, since a
change to the bot starts its count again.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BOT_CPU_S = 604_800
"""The CPU seconds each bot process may use over its life (`arena bots add --bot-cpu`)."""


def arena(*arguments: str) -> str:
    """Run an `arena` command; its standard output (a failure ends the bench with its error)."""
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", *arguments], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"arena {arguments[0]} {arguments[1]} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def bot_version(budget: float | None) -> str:
    """What a kept ladder's count holds for: the bot's and the engine's code, and the budget."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "sample_bots").glob("*.py"), *(ROOT / "fiftysix" / "engine").glob("*.py")]):
        digest.update(path.read_bytes())
    return f"code {digest.hexdigest()[:16]}, budget {budget or 'default'}"


def register(db: str, budget: float | None) -> None:
    """Register the strong bot and the rule bot in a fresh ladder as commands the arena starts."""
    commands = {
        "strong": ["sample_bots.strong_bot", *([] if budget is None else ["--budget", str(budget)])],
        "rules": ["sample_bots.rule_bot"],
    }
    for name, command in commands.items():
        line = " ".join([sys.executable, "-m", *command, "--port", "0", "--port-file", "{port_file}"])
        arena(
            "bots", "add", "--db", db, name, "--command", line, "--quick-check", "--bot-cpu", str(BOT_CPU_S)
        )


def main() -> None:
    """Register the bots (unless the kept ladder has them), play the matches, print the faults."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=200, help="matches to play (default 200)")
    parser.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--budget", type=float, help="the strong bot's --budget (default: its own)")
    parser.add_argument("--db", help="keep the ladder in this SQLite file and count every match in it")
    args = parser.parse_args()
    version = bot_version(args.budget)
    with contextlib.ExitStack() as stack:
        if args.db is None:
            db = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "arena.db")
        else:
            db = args.db
        stamp = Path(f"{db}.bot")
        if Path(db).exists():
            kept = stamp.read_text() if stamp.exists() else "unknown"
            if kept != version:
                sys.exit(f"strong_clock.py: error: {db} counts another bot or budget ({kept}, now {version})")
        else:
            register(db, args.budget)
            stamp.write_text(version)
        started = time.monotonic()
        arena(
            "ladder",
            "run",
            "--db",
            db,
            "--matches",
            str(args.matches),
            "--concurrency",
            str(args.concurrency),
        )
        wall = time.monotonic() - started
        matches = json.loads(arena("ladder", "matches", "--db", db, "--limit", "100000", "--json"))
    faults: Counter[str] = Counter()
    for match in matches:
        team_bots = match["team_bots"]
        for fault in match["faults"]:
            if team_bots[fault["team"]] == "strong":
                faults[fault["cause"]] += 1
    causes = ", ".join(f"{cause} {count}" for cause, count in sorted(faults.items())) or "none"
    print(
        f"{len(matches)} matches of the strong bot ({version}) against the rule bot at the default time "
        f"control, concurrency {args.concurrency}: the strong bot's faults: {causes}; this run "
        f"{wall / 60:.1f} minutes"
    )


if __name__ == "__main__":
    main()
