"""Bot strength: in-process duplicate pairs of matches (no gRPC), each matchup's Elo with its 95% interval.

Run by hand: `python bench/strength.py [--matchup pimc:rules] [--pairs 50] [--budget 0.2] [--deals 8]`
(`--samples N` makes a search bot sample N deals a decision, within the budget, whatever the load; a
side named `NAME@N` samples N deals whatever `--samples` says, so that two search bots can be given
the same seconds a decision by their sample counts: both sides' seconds are printed).

A duplicate pair plays one seeded match twice, the two bots swapping teams, so both play the same
cards dealt from the same seats. A match scores 1 for a win (first alone), 1/2 for a shared first place
and 0 for a loss; a pair scores the mean of its two matches. The Elo difference is 400 log10(s / (1 - s))
for the mean score s over the pairs, and its 95% interval comes from s +- 1.96 standard errors of the
pair scores. The tables the first bot's team ends a match with, less those it started with, are a
finer measure of the same matches (a match may be won by 1 table or by 24). Seconds per decision are
wall-clock times of the first bot's decisions (a time budget is wall-clock too, so a loaded machine
gives a search bot fewer samples, not more time). Two-team tables only: 4 players, or 6 and 8 in
`partnership`.

`--by-deal` ends each matchup with where its tables went: the deals both matches of a pair played (the
same cards at the same seats) by whether their auctions ended alike (then the difference is the play's),
in the doubling only, or in the contract, with the tables the first bot's team gained in each kind; and
every contract by the side that held it and its doubling (undoubled, doubled, redoubled): how many,
how many made, the tables they moved.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from fiftysix.engine import STARTING_TABLES, Match, MatchRules, Ruleset
from fiftysix.wire import TimeControl
from sample_bots.pimc_bot import PimcBot
from sample_bots.random_bot import RandomBot
from sample_bots.rule_bot import RuleBot
from sample_bots.strong_bot import Methods, StrongBot
from sdk import Bot, BotView, MatchInfo


def _without(method: str, budget: float, samples: int | None) -> Bot:
    """The strong bot without one of its methods, to measure that method's share."""
    return StrongBot(budget, samples=samples, methods=Methods(**{method: False}))


BOTS: dict[str, Callable[[float, int | None], Bot]] = {
    "strong": lambda budget, samples: StrongBot(budget, samples=samples),
    **{
        f"strong-no-{method.replace('_', '-')}": partial(_without, method)
        for method in ("stakes", "allowance", "points", "doubled_bids", "bid_lift")
    },
    "strong-inference": lambda budget, samples: StrongBot(
        budget, samples=samples, methods=Methods(inference=True)
    ),
    "pimc": lambda budget, samples: PimcBot(budget, samples=samples),
    "rules": lambda budget, samples: RuleBot(),
    "random": lambda budget, samples: RandomBot(),
}
"""The bots a matchup may name; each is made with the search budget and samples a decision (ignored by
those that do not search)."""


@dataclass(frozen=True)
class Settings:
    """One matchup's settings, sent to the worker processes."""

    first: str
    second: str
    rules: MatchRules
    budget_s: float
    samples: int | None
    time_control: TimeControl

    def make(self, side: str) -> Bot:
        """A fresh bot for one side, `NAME` or `NAME@SAMPLES`."""
        name, _, samples = side.partition("@")
        return BOTS[name](self.budget_s, int(samples) if samples else self.samples)


@dataclass(frozen=True)
class DealOutcome:
    """How one deal of a match ended: its contract (by the team that held it, the same cards in both
    matches of a pair), whether it was made, and the tables the first bot's team gained by it."""

    team: int
    number: int
    doubling: int
    made: bool
    gained: int


@dataclass
class PairResult:
    """A duplicate pair's score for the first bot, its decision times and its contracts."""

    seed: int
    score: float
    decision_seconds: list[float] = field(default_factory=list)
    second_seconds: list[float] = field(default_factory=list)
    """The second bot's decision times, to compare both sides' thinking."""
    contracts: list[int] = field(default_factory=lambda: [0, 0])
    """Contracts won in the auction by the first bot's team and by the second's."""
    made: list[int] = field(default_factory=lambda: [0, 0])
    bid: list[int] = field(default_factory=lambda: [0, 0])
    """The contracts' numbers summed, for the mean contract each side plays."""
    doubled: list[int] = field(default_factory=lambda: [0, 0])
    """Of those contracts, the ones doubled (or redoubled), and of these the ones made."""
    doubled_made: list[int] = field(default_factory=lambda: [0, 0])
    tables: float = 0.0
    """Tables gained by the first bot's team, the mean of the pair's two matches."""
    deals: tuple[list[DealOutcome], list[DealOutcome]] = field(default_factory=lambda: ([], []))
    """Each match's deals in order, the match with the first bot on team 0 first."""


def play_match(settings: Settings, seed: int, first_team: int, result: PairResult) -> float:
    """Play one seeded match with the first bot's seats on `first_team`; its score for the first bot."""
    match = Match(settings.rules, seed=seed)
    names = [settings.first if match.team_of[seat] == first_team else settings.second for seat in match.seats]
    bots = [settings.make(name) for name in names]
    for seat, bot in enumerate(bots):
        bot.on_match_start(
            MatchInfo(
                f"strength-{seed}", settings.rules, seat, match.team_of, tuple(names), settings.time_control
            )
        )
    control = settings.time_control
    tables_before = match.tables[first_team]
    while match.to_act is not None:
        seat = match.to_act
        view = BotView.from_view(match.view(seat), control.decision_ms, control.bank_ms)
        started = time.perf_counter()
        move = bots[seat].decide(view)
        spent = time.perf_counter() - started
        (result.decision_seconds if match.team_of[seat] == first_team else result.second_seconds).append(
            spent
        )
        if isinstance(move, str) or move not in view.legal_moves:
            raise AssertionError(f"{names[seat]} chose {move}, not among the legal moves")
        deal_result = match.apply(seat, move)
        if deal_result is not None:
            side = 0 if deal_result.contract.team == first_team else 1
            result.contracts[side] += 1
            result.made[side] += deal_result.made
            result.bid[side] += deal_result.contract.number
            if deal_result.contract.doubling > 1:
                result.doubled[side] += 1
                result.doubled_made[side] += deal_result.made
            contract = deal_result.contract
            gained = deal_result.tables[first_team] - tables_before
            tables_before = deal_result.tables[first_team]
            result.deals[first_team].append(
                DealOutcome(contract.team, contract.number, contract.doubling, deal_result.made, gained)
            )
            for bot in bots:
                bot.on_deal_end(deal_result)
    result.tables += (match.tables[first_team] - STARTING_TABLES) / 2
    ranking = match.ranking()
    mine, theirs = ranking[first_team], ranking[1 - first_team]
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def play_pair(settings: Settings, seed: int) -> PairResult:
    """Both matches of a duplicate pair."""
    result = PairResult(seed, 0.0)
    result.score = (play_match(settings, seed, 0, result) + play_match(settings, seed, 1, result)) / 2
    return result


def elo(score: float) -> float:
    """The Elo difference that expects `score` (clipped to +-800 at a clean sweep)."""
    if score <= 0:
        return -800.0
    if score >= 1:
        return 800.0
    return max(-800.0, min(800.0, 400 * math.log10(score / (1 - score))))


def summary(settings: Settings, results: list[PairResult]) -> str:
    """The matchup's line: Elo and interval, the score, seconds per decision, contracts made."""
    scores = [result.score for result in results]
    mean = statistics.fmean(scores)
    error = statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 else 0.5
    low, high = elo(mean - 1.96 * error), elo(mean + 1.96 * error)
    tables = [result.tables for result in results]
    tables_error = statistics.stdev(tables) / math.sqrt(len(tables)) if len(tables) > 1 else math.inf
    times = sorted(second for result in results for second in result.decision_seconds)
    second_times = [second for result in results for second in result.second_seconds]
    contracts = [sum(result.contracts[side] for result in results) for side in (0, 1)]
    made = [sum(result.made[side] for result in results) for side in (0, 1)]
    bid = [sum(result.bid[side] for result in results) for side in (0, 1)]
    doubled = [sum(result.doubled[side] for result in results) for side in (0, 1)]
    doubled_made = [sum(result.doubled_made[side] for result in results) for side in (0, 1)]
    rates = [
        (
            f"{made[side] / contracts[side]:.0%} of {contracts[side]} at {bid[side] / contracts[side]:.1f}"
            if contracts[side]
            else "none"
        )
        + f" ({doubled_made[side]} of {doubled[side]} doubled)"
        for side in (0, 1)
    ]
    return (
        f"{settings.first} vs {settings.second}: {elo(mean):+.0f} Elo "
        f"(95% interval {low:+.0f} to {high:+.0f}) "
        f"over {len(results)} duplicate pairs, score {mean:.3f}, "
        f"tables {statistics.fmean(tables):+.2f} a match (+-{1.96 * tables_error:.2f}); "
        f"{settings.first} s/decision mean {statistics.fmean(times):.3f} p50 {times[len(times) // 2]:.3f} "
        f"max {times[-1]:.3f}, {settings.second} mean {statistics.fmean(second_times):.3f}; "
        f"contracts made: {settings.first} {rates[0]}, {settings.second} {rates[1]}"
    )


def by_deal(settings: Settings, results: list[PairResult]) -> str:
    """Where the tables were won and lost, deal by deal: each deal number both matches of a pair played
    (the same cards at the same seats) falls in one of three kinds, by whether the two auctions ended
    alike; for each kind the deals, the tables the first bot's team gained over both tables, and (same
    contract) how often one table made it and the other did not: a difference there is the play's. The
    deals of a match past the end of its pair's other match make a fourth kind."""
    kinds = ("same contract", "same contract, other doubling", "other contract", "at one table only")
    counts = dict.fromkeys(kinds, 0)
    gained = dict.fromkeys(kinds, 0)
    split = 0
    for result in results:
        both = min(len(deals) for deals in result.deals)
        for deals in result.deals:  # one match ended sooner
            counts[kinds[3]] += len(deals) - both
            gained[kinds[3]] += sum(outcome.gained for outcome in deals[both:])
        for one, other in zip(*result.deals, strict=False):
            if (one.team, one.number) != (other.team, other.number):
                kind = kinds[2]
            elif one.doubling != other.doubling:
                kind = kinds[1]
            else:
                kind = kinds[0]
                split += one.made != other.made
            counts[kind] += 1
            gained[kind] += one.gained + other.gained
    first = settings.first
    lines = [f"{first} vs {settings.second}, by deal (tables {first}'s team gained at both tables):"]
    for kind in kinds:
        mean = gained[kind] / counts[kind] if counts[kind] else 0.0
        extra = f", made at one table only {split}" if kind == kinds[0] else ""
        lines.append(f"  {kind}: {counts[kind]} deals, {gained[kind]:+d} tables ({mean:+.2f} a deal){extra}")
    lines.append(f"  by who held the contract and its doubling (tables {first}'s team gained):")
    held: dict[tuple[str, int], list[int]] = {}
    for result in results:
        for first_team, deals in enumerate(result.deals):
            for outcome in deals:
                holder = first if outcome.team == first_team else settings.second
                tally = held.setdefault((holder, outcome.doubling), [0, 0, 0])
                tally[0] += 1
                tally[1] += outcome.made
                tally[2] += outcome.gained
    names = {1: "undoubled", 2: "doubled", 4: "redoubled"}
    order = sorted(held.items(), key=lambda item: (item[0][1], item[0][0] != first))
    for (holder, doubling), (count, made, tables) in order:
        lines.append(f"    {holder} {names[doubling]}: {count} contracts, {made} made, {tables:+d} tables")
    return "\n".join(lines)


def main() -> None:
    """Play the matchups and print their figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--matchup",
        action="append",
        help=f"FIRST:SECOND, bots among {', '.join(BOTS)} (repeatable; default pimc:rules)",
    )
    parser.add_argument("--pairs", type=int, default=50, help="duplicate pairs per matchup (default 50)")
    parser.add_argument("--budget", type=float, default=0.2, help="search seconds a decision (default 0.2)")
    parser.add_argument(
        "--samples",
        type=int,
        help="deals a search bot samples a decision, within the budget (default: by time)",
    )
    parser.add_argument("--deals", type=int, default=8, help="deal cap of each match (default 8)")
    parser.add_argument("--players", type=int, default=4, choices=(4, 6, 8), help="players (default 4)")
    parser.add_argument("--ruleset", type=Ruleset.parse, default=Ruleset.PAIRS, help="pairs or partnership")
    parser.add_argument("--seed", type=int, default=1, help="the first pair's seed (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing pairs at once (default 1)")
    parser.add_argument("--decision-ms", type=int, default=1000, help="the arena's time a decision (1000)")
    parser.add_argument("--by-deal", action="store_true", help="end with where the tables went, by deal")
    args = parser.parse_args()
    rules = MatchRules(args.players, args.ruleset, deal_cap=args.deals)
    if rules.team_count != 2:
        parser.error("duplicate pairs need two teams: 4 players, or 6 and 8 in partnership")
    print(
        f"{args.players} players, {rules.ruleset.value}, {args.deals} deals a match, {args.pairs} pairs, "
        f"budget {args.budget} s, {args.samples or 'unlimited'} samples, {args.workers} worker(s)",
        flush=True,
    )
    for matchup in args.matchup or ["pimc:rules"]:
        first, second = matchup.split(":")
        for name, _, samples in (side.partition("@") for side in (first, second)):
            if name not in BOTS:
                parser.error(f"unknown bot in {matchup}: choose among {', '.join(BOTS)}")
            if samples and not (samples.isdigit() and int(samples) > 0):
                parser.error(f"{name}@{samples}: the samples after @ are a positive whole number")
        control = TimeControl(args.decision_ms, 10_000)
        settings = Settings(first, second, rules, args.budget, args.samples, control)
        seeds = range(args.seed, args.seed + args.pairs)
        results: list[PairResult] = []
        with ProcessPoolExecutor(args.workers) as pool:
            for result in pool.map(play_pair, [settings] * len(seeds), seeds):
                results.append(result)
                print(f"  pair {result.seed}: {result.score:.2f}   {summary(settings, results)}", flush=True)
        print(summary(settings, results), flush=True)
        if args.by_deal:
            print(by_deal(settings, results), flush=True)


if __name__ == "__main__":
    main()
