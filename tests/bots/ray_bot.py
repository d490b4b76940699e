"""A command bot for the Ray tests: the random bot, which notes whether a Ray worker started it, and on
which node, and can kill that worker once, mid-match.

`python ray_bot.py --port-file F --trace FILE` appends a line to FILE when it starts: `ray-worker PID
FOLDER BOT` when a Ray worker process, PID, is among its ancestors (the arena started it on a worker),
FOLDER being the Ray temporary folder of that worker's node (its raylet's: one a node in
tests/ray_cluster.py's clusters) and BOT its own pid; else `no-worker`. At each match's start it writes
`ray node FOLDER` (or `ray node none`) to its standard output, which the arena stores with the match:
where the match was played. With `--kill-worker-once MARKER`, at its first decision it creates MARKER
and SIGKILLs that worker (unless MARKER is there already), so the match dies with the worker and Ray
plays it again. With `--kill-worker-always MARKER` it does so in every attempt (appending each worker's
pid to MARKER), so that Ray's retries run out.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

from sample_bots.random_bot import RandomBot
from sdk import BotView, MatchInfo, Move, serve


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


class NodeNoting(RandomBot):
    """The random bot, which writes at each match's start the Ray node it runs on."""

    node: str | None = None

    def on_match_start(self, match: MatchInfo) -> None:
        super().on_match_start(match)
        print(f"ray node {self.node or 'none'}", flush=True)


def killer(marker: Path, always: bool = False) -> type[NodeNoting]:
    """The random bot, which kills its Ray worker at its first decision unless `marker` exists (or,
    `always`, in any case, noting each worker killed in `marker`)."""

    class WorkerKiller(NodeNoting):
        def decide(self, view: BotView) -> Move:
            worker = ray_worker_ancestor()
            if worker is not None and (always or not marker.exists()):
                with marker.open("a", encoding="utf-8") as noted:
                    noted.write(f"{worker}\n" if always else str(worker))
                os.kill(worker, signal.SIGKILL)
            return super().decide(view)

    return WorkerKiller


def main() -> None:
    """Note where it runs, then serve."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--kill-worker-once", default=None)
    parser.add_argument("--kill-worker-always", default=None)
    args = parser.parse_args()
    worker = ray_worker_ancestor()
    node = None if worker is None else ray_node_folder(worker)
    with open(args.trace, "a", encoding="utf-8") as trace:
        trace.write(f"ray-worker {worker} {node} {os.getpid()}\n" if worker is not None else "no-worker\n")
    NodeNoting.node = node
    bot: type[NodeNoting] = NodeNoting
    if args.kill_worker_once is not None:
        bot = killer(Path(args.kill_worker_once))
    elif args.kill_worker_always is not None:
        bot = killer(Path(args.kill_worker_always), always=True)
    serve(bot, port=0, port_file=args.port_file)


if __name__ == "__main__":
    main()
