"""A command bot for the Ray tests: the random bot (or the rule bot), which notes whether a Ray worker
started it, and on which node, and can kill that worker, mid-match.

`python ray_bot.py --port-file F --trace FILE` appends a line to FILE when it starts: `ray-worker PID
FOLDER BOT` when a Ray worker process, PID, is among its ancestors (the arena started it on a worker),
FOLDER being the Ray temporary folder of that worker's node (its raylet's: one a node in
tests/ray_cluster.py's clusters) and BOT its own pid; else `no-worker`. At each match's start it writes
`ray node FOLDER` (or `ray node none`) to its standard output, which the arena stores with the match:
where the match was played. With `--match-trace MATCHES` it also appends `FOLDER MATCH_ID` to MATCHES
then, at once (the arena's log of a bot's output is written out every few seconds): where a match is in
play. With `--kill-worker-once MARKER`, at its first decision it creates MARKER and SIGKILLs that worker
(unless MARKER is there already), so the match dies with the worker and the runner plays it again. With
`--kill-worker-always MARKER` it does so in every attempt (appending each worker's pid to MARKER), so
that the retries run out. With `--kill-worker-when-shown MARKER --ladder
FILE`, at its first decision past the first deal it waits until a set of the ladder in FILE (SQLite) has
been shown live, then kills its worker, unless a process of the bot made MARKER first (only one does): a
match lost after its set was shown. With `--rules` it plays as the rule bot (whose matches last more
than a deal), not the random bot. With `--think-ms MS` it takes MS at each decision past the first deal,
as a bot that uses its clock does: the rule bot plays a deal in a tenth of a second, over before the
runner's live feed writes a batch, so a match is live on the site only while it lasts past the deal that
the gate shows first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sqlite3
import time
from pathlib import Path

from sample_bots.random_bot import RandomBot
from sample_bots.rule_bot import RuleBot
from sdk import Bot, BotView, MatchInfo, Move, serve


def _parent(pid: int) -> int:
    """The parent of process `pid`: the fourth field of its stat, after the command in parentheses."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def ray_worker_ancestor() -> int | None:
    """The pid of the nearest ancestor that is a Ray worker process (its title starts with `ray::`)."""
    pid = os.getppid()
    while pid > 1:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if command.startswith(b"ray::") or b"default_worker.py" in command:
                return pid
            pid = _parent(pid)
        except OSError:
            return None
    return None


def ray_node_folder(worker: int) -> str | None:
    """The Ray temporary folder of the node of `worker`, read from its parent, the node's raylet (whose
    sockets lie in FOLDER/session_*/sockets)."""
    try:
        command = Path(f"/proc/{_parent(worker)}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    for argument in command:
        name, _, value = argument.decode(errors="replace").partition("=")
        if name == "--raylet_socket_name":
            return value.split("/session_", 1)[0]
    return None


def node_noting(base: type[Bot], node: str | None, trace: Path | None) -> type[Bot]:
    """`base`, which writes at each match's start the Ray node it runs on, and notes it in `trace`."""

    class NodeNoting(base):  # type: ignore[valid-type,misc]
        def on_match_start(self, match: MatchInfo) -> None:
            super().on_match_start(match)
            print(f"ray node {node or 'none'}", flush=True)
            if trace is not None:
                with trace.open("a", encoding="utf-8") as noted:
                    noted.write(f"{node} {match.match_id}\n")

    return NodeNoting


def thinking(base: type[Bot], think_s: float) -> type[Bot]:
    """`base`, which takes `think_s` at each decision past the first deal."""

    class Thinking(base):  # type: ignore[valid-type,misc]
        def decide(self, view: BotView) -> Move:
            if view.deal_number >= 2:
                time.sleep(think_s)
            return super().decide(view)

    return Thinking


def killer(
    marker: Path | None,
    always: bool = False,
    when_shown: tuple[Path, Path] | None = None,
    base: type[Bot] = RandomBot,
) -> type[Bot]:
    """`base`, which kills its Ray worker at its first decision unless `marker` exists (or,
    `always`, in any case, noting each worker killed in `marker`); and, with `when_shown` (a marker and
    a ladder's file), once past the first deal and once a set was shown live, unless that marker exists."""

    class WorkerKiller(base):  # type: ignore[valid-type,misc]
        def decide(self, view: BotView) -> Move:
            worker = ray_worker_ancestor()
            if worker is not None and marker is not None and (always or not marker.exists()):
                with marker.open("a", encoding="utf-8") as noted:
                    noted.write(f"{worker}\n" if always else str(worker))
                os.kill(worker, signal.SIGKILL)
            elif worker is not None and when_shown is not None and view.deal_number >= 2:
                shown_marker, ladder = when_shown
                if not shown_marker.exists() and wait_until_shown(ladder):
                    try:
                        made = os.open(shown_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                    except FileExistsError:
                        pass  # the bot's process in the other rotation was first
                    else:
                        os.write(made, str(worker).encode())
                        os.close(made)
                        os.kill(worker, signal.SIGKILL)
            return super().decide(view)

    return WorkerKiller


def wait_until_shown(ladder: Path, timeout_s: float = 60.0) -> bool:
    """Whether a set of the ladder in `ladder` is noted as shown live within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.closing(sqlite3.connect(f"file:{ladder}?mode=ro", uri=True)) as connection:
            if connection.execute("SELECT 1 FROM sets WHERE shown_at IS NOT NULL").fetchone():
                return True
        time.sleep(0.05)
    return False


def main() -> None:
    """Note where it runs, then serve."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--match-trace", type=Path, default=None)
    parser.add_argument("--kill-worker-once", default=None)
    parser.add_argument("--kill-worker-always", default=None)
    parser.add_argument("--kill-worker-when-shown", default=None)
    parser.add_argument("--ladder", default=None)
    parser.add_argument("--rules", action="store_true")
    parser.add_argument("--think-ms", type=int, default=0)
    args = parser.parse_args()
    worker = ray_worker_ancestor()
    node = None if worker is None else ray_node_folder(worker)
    with open(args.trace, "a", encoding="utf-8") as trace:
        trace.write(f"ray-worker {worker} {node} {os.getpid()}\n" if worker is not None else "no-worker\n")
    bot = node_noting(RuleBot if args.rules else RandomBot, node, args.match_trace)
    if args.think_ms:
        bot = thinking(bot, args.think_ms / 1000)
    when_shown = None
    if args.kill_worker_when_shown is not None:
        when_shown = (Path(args.kill_worker_when_shown), Path(args.ladder))
    if args.kill_worker_always is not None:
        bot = killer(Path(args.kill_worker_always), always=True, base=bot)
    elif args.kill_worker_once is not None or when_shown is not None:
        once = None if args.kill_worker_once is None else Path(args.kill_worker_once)
        bot = killer(once, when_shown=when_shown, base=bot)
    serve(bot, port=0, port_file=args.port_file)


if __name__ == "__main__":
    main()
