"""Playing a run of sets from the command line (the ladder's, an SPRT's, a tournament's): the signals
that stop it and the bots the arena started, stopped at the end, whatever happens."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import sys
import time

from arena.cli import options
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.pairing import EventPairing
from arena.untrusted import safe_text


def play(ladder: Ladder, local_bots: LocalBots) -> list[int]:
    """Run `ladder` to its end and stop the bots it started; returns the signals received. The first
    Ctrl-C (or SIGTERM) starts no new match and lets the running ones finish; the second cancels them
    (nothing of them is stored) and stops now; later ones change nothing (the bots are being stopped,
    within their grace period)."""
    signals: list[int] = []

    def on_signal(signum: int) -> None:
        signals.append(signum)
        if len(signals) == 1:
            print("\nStopping after the matches in progress (Ctrl-C again to stop now)...", file=sys.stderr)
            ladder.stop()
        elif len(signals) == 2:
            print("\nStopping now: the matches in progress are cancelled...", file=sys.stderr)
            ladder.stop(now=True)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, on_signal, signum)
        try:
            await ladder.run()
        finally:
            await local_bots.stop_all()

    asyncio.run(run())
    return signals


def say_down(pairing: EventPairing) -> None:
    """Say on standard error which bots stopped an event by being down, if any did."""
    if pairing.down:
        names = ", ".join(safe_text(name, 64) for name in pairing.down)
        print(
            f"Stopped early: {names} did not answer or start when sets began and is marked down "
            "(see `arena bots list`; the event's sets left unfinished are finished by a run with the same "
            "--event)",
            file=sys.stderr,
        )


def settings_of(args: argparse.Namespace) -> LadderSettings:
    """A run's settings from the match options every run shares (`ladder run`, `sprt`, `tournament`);
    each command replaces those of its own (`dataclasses.replace`)."""
    return LadderSettings(
        concurrency=args.concurrency,
        players=args.players,
        ruleset=args.ruleset,
        deal_cap=args.deal_cap,
        time_control=options.time_control_of(args),
        seed=args.seed,
        strikes=args.strikes,
        isolated_only=args.isolated_only,
        store_wait_s=args.store_wait,
    )


def new_event(kind: str) -> str:
    """A new event's name: its kind, the UTC time and 4 random hex digits, so that two events started in
    the same second keep their sets apart (`sprt-20261130-120512-3f9a`)."""
    return f"{kind}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


def interrupted(signals: list[int]) -> int | None:
    """The exit status of a run stopped at once by a second signal (128 + its number), else None."""
    return 128 + signals[1] if len(signals) >= 2 else None
