"""The strong bot under the ladder's default time control: its faults over a run of real ladder matches.

Run by hand: `python bench/strong_clock.py [--matches 200] [--concurrency 2] [--budget 0.3]`. In a
temporary folder it makes a fresh ladder, registers the strong bot (sample_bots/strong_bot.py, at its
default budget unless `--budget` says otherwise) and the rule bot as commands the arena starts (one process
per seat, as a host registers them), plays the matches with `arena ladder run` at the ladder's default
time control (1,000 ms a decision, a 10 s bank) and prints the matches played, the strong bot's faults by
cause (a timeout is one), and the wall time. A search bot thinks for whole seconds a match, so it is
registered with a CPU limit per process of a week (`--bot-cpu`): the default 600 s would end a process
that plays many matches, which is the host's choice, not the bot's clock.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

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


def main() -> None:
    """Register the bots, play the matches, print the faults."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=200, help="matches to play (default 200)")
    parser.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--budget", type=float, help="the strong bot's --budget (default: its own)")
    args = parser.parse_args()
    budget = [] if args.budget is None else ["--budget", str(args.budget)]
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "arena.db")
        commands = {
            "strong": ["sample_bots.strong_bot", *budget],
            "rules": ["sample_bots.rule_bot"],
        }
        for name, command in commands.items():
            line = " ".join([sys.executable, "-m", *command, "--port", "0", "--port-file", "{port_file}"])
            arena(
                "bots",
                "add",
                "--db",
                db,
                name,
                "--command",
                line,
                "--quick-check",
                "--bot-cpu",
                str(BOT_CPU_S),
            )
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
        matches = json.loads(arena("ladder", "matches", "--db", db, "--limit", str(args.matches), "--json"))
    faults: Counter[str] = Counter()
    for match in matches:
        team_bots = match["team_bots"]
        for fault in match["faults"]:
            if team_bots[fault["team"]] == "strong":
                faults[fault["cause"]] += 1
    causes = ", ".join(f"{cause} {count}" for cause, count in sorted(faults.items())) or "none"
    print(
        f"{len(matches)} matches of the strong bot (budget {args.budget or 'default'}) against the rule bot "
        f"at the default time control, concurrency {args.concurrency}: the strong bot's faults: {causes}; "
        f"{wall / 60:.1f} minutes"
    )


if __name__ == "__main__":
    main()
