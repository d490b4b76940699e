"""A command bot for the Ray tests: the random bot, which notes whether a Ray worker started it and can
kill that worker once, mid-match.

`python ray_bot.py --port-file F --trace FILE` appends a line to FILE when it starts: `ray-worker PID` when
a Ray worker process is among its ancestors (the arena started it on a worker), else `no-worker`. With
`--kill-worker-once MARKER`, at its first decision it creates MARKER and SIGKILLs that worker (unless
MARKER is there already), so the match dies with the worker and Ray plays it again. With
`--kill-worker-always MARKER` it does so in every attempt (appending each worker's pid to MARKER), so
that Ray's retries run out.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

from sample_bots.random_bot import RandomBot
from sdk import BotView, Move, serve


def ray_worker_ancestor() -> int | None:
    """The pid of the nearest ancestor that is a Ray worker process (its title starts with `ray::`)."""
    pid = os.getppid()
    while pid > 1:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        if command.startswith(b"ray::") or b"default_worker.py" in command:
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return None


def killer(marker: Path, always: bool = False) -> type[RandomBot]:
    """The random bot, which kills its Ray worker at its first decision unless `marker` exists (or,
    `always`, in any case, noting each worker killed in `marker`)."""

    class WorkerKiller(RandomBot):
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
    with open(args.trace, "a", encoding="utf-8") as trace:
        trace.write(f"ray-worker {worker}\n" if worker is not None else "no-worker\n")
    bot: type[RandomBot] = RandomBot
    if args.kill_worker_once is not None:
        bot = killer(Path(args.kill_worker_once))
    elif args.kill_worker_always is not None:
        bot = killer(Path(args.kill_worker_always), always=True)
    serve(bot, port=0, port_file=args.port_file)


if __name__ == "__main__":
    main()
