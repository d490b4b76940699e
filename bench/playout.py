"""The strong bot's play-outs (`strong_bot.play_out`: the rule bot's card play at every seat of a sampled
deal), this checkout's against another's, side by side.

Run by hand: `python bench/playout.py [--players 4] [--ruleset pairs] [--rounds 6] [--seconds 1]`. Each
side is a child process importing the bots from its own checkout: by default this one against commit
`BASELINE` (main before the play-outs kept the rule bot's reading up to date, exported with `git
archive`), or `--ref REF`, or `--baseline DIR` (a checkout). Each process sets up the same play-outs: the
rule bot's auction of 20 seeded deals, then at the first card 5 deals sampled as the strong bot samples
them (`pimc_bot.sampled_hands`), each played out after each of the leader's distinct cards, to the end
(`--until-decided`: until the contract is decided, as a play decision's play-outs stop). The rounds
alternate (a shared machine's load changes by the second), each side playing `--seconds` of its own CPU
time (`time.process_time`); each round's rates, their ratio, then the medians. Both sides must choose the
same cards: the tricks of every play-out are compared (by digest) before any figure counts.

`--profile` prints instead where the play-outs of the checkout imported spend their time (cProfile, by own
time): `PYTHONPATH=. python bench/playout.py --profile` for this one.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import inspect
import json
import os
import pstats
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine import Measure, side_by_side

from fiftysix.engine import Deal, Match, MatchRules, Phase, Ruleset, Suit, View
from sample_bots import pimc_bot, rule_bot, strong_bot

BASELINE = "6d4094029d0afb8df884ad153f63f20303042860"
"""Main before the play-outs kept what the rule bot reads up to date (it built a view per card)."""
DEALS = 20
"""Seeded deals, each auctioned by the rule bot: the play-outs start at their first card."""
SAMPLES = 5
"""Deals sampled at each first card, each played out after every distinct card the leader may lead."""

Case = tuple[Deal, View, Mapping[int, frozenset[Suit]]]
"""A deal to play out (the first card played), the leader's view before it, the voids then shown."""
PlayOut = Callable[[Deal, View, Mapping[int, frozenset[Suit]]], object]


def cases(players: int, ruleset: Ruleset) -> list[Case]:
    """The play-outs to time, the same in every checkout (seeded, through functions both have)."""
    rng = random.Random(1)
    found: list[Case] = []
    for seed in range(DEALS):
        match = Match(MatchRules(players, ruleset, deal_cap=1), seed=seed)
        while match.deal.phase is Phase.AUCTION:
            seat = match.deal.to_act
            match.apply(seat, rule_bot.decide(match.view(seat)))
        view = match.view(match.deal.to_act)
        reading = pimc_bot.auction_reading(view)
        cards = pimc_bot.distinct_cards(view)
        shown_out = pimc_bot.voids_after(view, cards)
        for _ in range(SAMPLES):
            root = Deal.from_view(view, pimc_bot.sampled_hands(view, rng, reading))
            for card in cards:
                deal = root.copy()
                deal.apply_trusted(card)
                found.append((deal, view, shown_out[card]))
    return found


def checkout_play_out(until_decided: bool) -> PlayOut:
    """`strong_bot.play_out` of the checkout imported, called alike whichever its signature: the
    baseline's took the view too (it built a view from it at every card)."""
    play_out: Callable[..., object] = strong_bot.play_out
    if "context" in inspect.signature(play_out).parameters:
        return lambda deal, view, shown_out: play_out(deal, view, shown_out, until_decided=until_decided)
    return lambda deal, view, shown_out: play_out(deal, shown_out, until_decided=until_decided)


def digest(played: list[Deal]) -> str:
    """A digest of every card played in `played`, in order."""
    text = "|".join(
        " ".join(f"{play.seat}{play.card}" for trick in deal.tricks for play in trick.plays)
        for deal in played
    )
    return hashlib.sha256(text.encode()).hexdigest()


def work(players: int, ruleset: Ruleset, until_decided: bool, seconds: float) -> dict[str, Any]:
    """Play the cases over and over for about `seconds` of CPU time (the copies made untimed); the
    play-outs, the CPU seconds, and the digest of the first pass's cards."""
    play_out = checkout_play_out(until_decided)
    todo = cases(players, ruleset)
    played = 0
    elapsed = 0.0
    first = ""
    while not played or elapsed < seconds:
        copies = [deal.copy() for deal, _, _ in todo]
        start = time.process_time()
        for deal, (_, view, shown_out) in zip(copies, todo, strict=True):
            play_out(deal, view, shown_out)
        elapsed += time.process_time() - start
        played += len(copies)
        first = first or digest(copies)
    return {"playouts": played, "seconds": elapsed, "digest": first}


def in_checkout(directory: Path, arguments: list[str], digests: list[str]) -> Measure:
    """This script's `work` in a child process importing the bots from `directory`; each digest is
    added to `digests`."""

    def measure(seconds: float) -> tuple[int, float]:
        env = {**os.environ, "PYTHONPATH": str(directory)}
        command = [sys.executable, __file__, "--worker", "--seconds", str(seconds), *arguments]
        done = subprocess.run(command, env=env, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["no output"]
            sys.exit(f"playout.py: error: the play-outs of {directory} failed: {lines[-1]}")
        figures = json.loads(done.stdout)
        digests.append(figures["digest"])
        return int(figures["playouts"]), float(figures["seconds"])

    return measure


def export(ref: str, folder: Path) -> Path:
    """The files of commit `ref` of this repository, written under `folder`."""
    here = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(here), "archive", ref], check=False, capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"playout.py: error: cannot export {ref}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def profile(players: int, ruleset: Ruleset, until_decided: bool) -> None:
    """Print where the play-outs of the checkout imported spend their own time."""
    play_out = checkout_play_out(until_decided)
    todo = cases(players, ruleset)
    profiler = cProfile.Profile()
    profiler.enable()
    for deal, view, shown_out in todo:
        play_out(deal.copy(), view, shown_out)
    profiler.disable()
    checkout = Path(strong_bot.__file__).resolve().parents[1]
    print(f"{len(todo)} play-outs of {checkout} (PYTHONPATH picks the checkout)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def main() -> None:
    """Print the figures asked for."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, choices=(4, 6, 8), default=4, help="players (default 4)")
    parser.add_argument("--ruleset", type=Ruleset.parse, default=Ruleset.PAIRS, help="pairs or partnership")
    parser.add_argument("--until-decided", action="store_true", help="stop once the contract is decided")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds a side a round (default 1)")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (default 6)")
    parser.add_argument("--ref", default=BASELINE, help="the baseline commit (default: main before)")
    parser.add_argument("--baseline", type=Path, help="the baseline checkout's folder, not --ref")
    parser.add_argument(
        "--profile", action="store_true", help="profile the play-outs of the checkout imported"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.players, args.ruleset, args.until_decided, args.seconds)))
        return
    if args.profile:
        profile(args.players, args.ruleset, args.until_decided)
        return
    arguments = ["--players", str(args.players), "--ruleset", args.ruleset.value]
    arguments += ["--until-decided"] if args.until_decided else []
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        baseline = args.baseline.resolve() if args.baseline else export(args.ref, Path(folder))
        if not (baseline / "sample_bots" / "strong_bot.py").is_file():
            sys.exit(f"playout.py: error: {baseline} is not a checkout with sample_bots/strong_bot.py")
        ours: list[str] = []
        theirs: list[str] = []
        measures = (in_checkout(here, arguments, ours), in_checkout(baseline, arguments, theirs))
        # One short round first: the digests must agree before any rate is worth printing.
        for measure in measures:
            measure(0.0)
        if ours[0] != theirs[0]:
            sys.exit(f"playout.py: error: the two checkouts chose different cards ({here} and {baseline})")
        kind = "until the contract is decided" if args.until_decided else "to the end"
        print(
            f"{args.players}-player {args.ruleset.value} play-outs {kind}, one core: {here} against "
            f"{args.baseline or args.ref[:7]}, each in its own process (the same cards in both)"
        )
        side_by_side(("this checkout", "baseline"), measures, args.rounds, args.seconds)
        if len(set(ours + theirs)) != 1:
            sys.exit("playout.py: error: a round chose different cards")


if __name__ == "__main__":
    main()
