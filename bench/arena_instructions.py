"""The arena's own work per decision in instructions, not time: a measure that the machine's load does
not move (issue 14; bench/arena_overhead.py gives the times).

Run by hand: `python bench/arena_instructions.py [--code PATH]`; it needs valgrind with its headers
(Debian's `valgrind` package) and a C compiler. The arena process runs under callgrind with collection
off, switched on (every thread) only inside the runner's decision loop while it plays 4-player matches
against the instant bot of bench/arena_overhead.py, then, in another run, only around a raw ping-pong of
as many recorded decisions on one stream. Each run first warms up uncounted (3 matches; 300 round trips), is
run for 1 and for 4 counted matches, and the difference is divided by the difference in decisions, so
start-up and first-use costs cancel. (Without the warm-up they did not: matches 2 to 4 of a new process
still met new lists of legal calls, whose encoding is kept once made, about 40,000 instructions a
decision on average.) The bot runs outside valgrind. `--code PATH` measures another checkout (the main
branch, say) by this same method.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

TOGGLE_SOURCE = "#include <valgrind/callgrind.h>\nvoid toggle(void) { CALLGRIND_TOGGLE_COLLECT; }\n"
HERE = Path(__file__).resolve()
WARM_UP_MATCHES = 3
"""Matches each arena run plays before it counts: a process that has played a few matches has filled its
caches (each new list of legal calls is encoded once, at about 500,000 instructions), as the arena that
plays a ladder's matches has, and as bench/arena_overhead.py warms up before it times."""
WARM_UP_DECISIONS = 300
"""Round trips each raw run makes before it counts, for the same reason."""


def toggler() -> Callable[[], None]:
    """Callgrind's switch for collecting, from the library the parent built (a no-op outside valgrind)."""
    library = ctypes.CDLL(os.environ["FIFTYSIX_CALLGRIND_TOGGLE"])
    function: Callable[[], None] = library.toggle
    return function


def record(path: Path) -> None:
    """Real decision requests of four random 4-player matches, serialized, one per line in hex."""
    from fiftysix.engine import Match, MatchRules
    from fiftysix.wire import DecisionEncoder

    rng = random.Random(5)
    with path.open("w", encoding="ascii") as out:
        for seed in range(4):
            match = Match(MatchRules(4), seed=seed)
            encoder = DecisionEncoder(match)
            number = 0
            while not match.is_over:
                seat = match.deal.to_act
                legal = match.legal_moves()
                number += 1
                out.write(encoder.decision(number, legal, 1000, 10000).hex() + "\n")
                match.apply(seat, rng.choice(legal))


async def arena_matches(matches: int, port: int) -> int:
    """Play `matches` matches with collection on inside the decision loop; returns the decisions."""
    from arena.runner import BotAddress, MatchSettings, run_match, seats_for_teams
    from arena.runner import match as runner
    from fiftysix.engine import MatchRules
    from fiftysix.wire import TimeControl

    toggle = toggler()
    play: Callable[[Any], Coroutine[Any, Any, None]] = runner._Runner.play
    counting = False

    async def counted(self: Any) -> None:
        if not counting:
            await play(self)
            return
        toggle()
        try:
            await play(self)
        finally:
            toggle()

    runner._Runner.play = counted  # type: ignore[method-assign]
    rules = MatchRules(4)
    bots = [BotAddress("a", f"127.0.0.1:{port}"), BotAddress("b", f"127.0.0.1:{port}")]
    decisions = 0
    # Warm-up matches first (other seeds), not counted.
    for counting, seed in [
        *((False, 1000 + seed) for seed in range(WARM_UP_MATCHES)),
        *((True, seed) for seed in range(matches)),
    ]:
        # A generous clock: valgrind slows the arena fifty times or so, not the bot.
        settings = MatchSettings(rules, seed, time_control=TimeControl(60_000, 600_000))
        outcome = await run_match(settings, seats_for_teams(rules, bots))
        if outcome.faults:
            raise RuntimeError(f"unexpected faults: {outcome.faults}")
        if counting:
            decisions += outcome.decisions
    return decisions


async def raw_ping_pong(decisions: int, port: int, recorded: Path) -> int:
    """Send `decisions` recorded requests on one stream, each answered before the next, with collection
    on around the ping-pong only."""
    import grpc.aio

    from fiftysix.engine import MatchRules
    from fiftysix.v1 import bot_pb2 as pb
    from fiftysix.v1 import bot_pb2_grpc as rpc
    from fiftysix.wire import TimeControl, match_start_message

    toggle = toggler()
    lines = recorded.read_text(encoding="ascii").split()
    requests = [pb.PlaySeatRequest.FromString(bytes.fromhex(line)) for line in lines]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(None)
        await call.write(match_start_message("raw", MatchRules(4), 0, ["a"] * 4, TimeControl()))
        await call.read()
        for number in range(WARM_UP_DECISIONS):
            await call.write(requests[number % len(requests)])
            await call.read()
        toggle()
        for number in range(decisions):
            await call.write(requests[number % len(requests)])
            await call.read()
        toggle()
        await call.done_writing()
    return decisions


def counted_run(code: Path, toggle: Path, arguments: list[str]) -> tuple[int, int]:
    """(decisions, instructions) of one child run of this script under callgrind."""
    environment = os.environ | {"PYTHONPATH": str(code), "FIFTYSIX_CALLGRIND_TOGGLE": str(toggle)}
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        "--collect-atstart=no",
        sys.executable,
        str(HERE),
        *arguments,
    ]
    finished = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise SystemExit(
            f"bench/arena_instructions.py: error: a counted run failed:\n{finished.stderr[-3000:]}"
        )
    collected = re.search(r"Collected\s*:\s*(\d+)", finished.stderr)
    if collected is None:
        raise RuntimeError(f"callgrind reported no count:\n{finished.stderr[-2000:]}")
    return json.loads(finished.stdout.strip().splitlines()[-1])["decisions"], int(collected.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--code", type=Path, default=HERE.parent.parent, help="the checkout to measure")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import structlog

        # As in bench/arena_overhead.py: errors only, so that the per-deal debug line is not rendered and
        # counted.
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
        kind, count, port, *rest = args.child
        if kind == "record":
            record(Path(count))
            return
        if kind == "arena":
            decisions = asyncio.run(arena_matches(int(count), int(port)))
        else:
            decisions = asyncio.run(raw_ping_pong(int(count), int(port), Path(rest[0])))
        print(json.dumps({"decisions": decisions}))
        return
    code = args.code.resolve()
    with tempfile.TemporaryDirectory() as folder:
        toggle = Path(folder) / "toggle.so"
        source = Path(folder) / "toggle.c"
        source.write_text(TOGGLE_SOURCE, encoding="ascii")
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(toggle), str(source)], check=True)
        recorded = Path(folder) / "requests.hex"
        environment = os.environ | {"PYTHONPATH": str(code)}
        recording = [sys.executable, str(HERE), "--child", "record", str(recorded), "0"]
        subprocess.run(recording, env=environment, check=True)
        bot = subprocess.Popen(
            [sys.executable, str(HERE.parent / "arena_overhead.py"), "--serve-instant-bot"],
            env=environment,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert bot.stdout is not None
            port = str(json.loads(bot.stdout.readline())["port"])
            arena = [
                counted_run(code, toggle, ["--child", "arena", str(matches), port]) for matches in (1, 4)
            ]
            raw = [
                counted_run(code, toggle, ["--child", "raw", str(decisions), port, str(recorded)])
                for decisions, _ in arena
            ]
        finally:
            bot.terminate()
            bot.wait(10)
    per_arena = (arena[1][1] - arena[0][1]) / (arena[1][0] - arena[0][0])
    per_raw = (raw[1][1] - raw[0][1]) / (raw[1][0] - raw[0][0])
    own = per_arena - per_raw
    print(f"Instructions per decision of the arena process (callgrind), code at {code}:")
    print(f"  arena's decision loop {per_arena:,.0f}; raw stream ping-pong {per_raw:,.0f}")
    print(f"  arena's own work {own:,.0f} instructions = {own / per_raw:.0%} of the raw round trip's")


if __name__ == "__main__":
    main()
