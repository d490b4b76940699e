"""The strongest sample bot: the Monte Carlo search of `pimc_bot.py`, with what pays on top of it.

Run it: `python -m sample_bots.strong_bot --port 50051 [--budget 0.3] [--samples N]`.

Like the PIMC bot it samples the cards it cannot see (consistently with the voids shown and with the
auction as the rule bot would have called it), plays each sampled deal out with the rule bot's card play,
and compares its moves over the same samples. On top of that, each method measured on its own by
`bench/strength.py` (the README's Speed section has the figures):

- **Stakes** (`Stakes`): a deal's outcome is valued by the chance it leaves the team of winning the match
  (ahead at the deal cap, or the last team with tables), not by the tables it moves. Ahead late, the
  bot takes the safe contract and doubles less; behind, it reaches for the contract that can turn the
  match. The chance is a normal approximation of the table difference's random walk over the deals left
  (the spread per deal measured in self-play), or the gambler's ruin without a cap. Expert card players
  call this playing the match score, not the hand; Kermit (Skat) and bridge programs value outcomes by
  the scoring of the event for the same reason.
- **The doubles a bid draws** (`bid_worth`, `Methods.doubled_bids`): the opponents see their own cards,
  so a contract that fails is mostly a doubled one (against the PIMC bot 80% of this bot's failed
  contracts were doubled, 20% of its made ones). A bid is valued with those doubles, so a 28 pays from a
  chance of 3/4 of making it, not 2/3: +101 Elo against the PIMC bot where it scored +55 without (60
  pairs at 10 samples). Bridge players bid with the same risk in mind (a penalty double comes from the
  hand that sees the trumps); the shares are measured.
- **Own bids lifted** (`bid_chance`, `Methods.bid_lift`): the chance of making a bid counts each sample
  as made when its play-out took within `BID_LIFT` points of the bid. The play-outs play the rule bot's
  cards at every seat, and the bot's own search plays the contract better than that: unlifted, it made
  95% of its undoubled contracts against the rule bot, where about two thirds pays at 28. Against the
  rule bot +215 Elo (+151 to +295) where it scored +176 (+117 to +245) unlifted, the same 60 pairs, with
  467 contracts played instead of 383 and 92% still made; against the PIMC bot at the same seconds +112
  (+45 to +190) where it scored +98 (+29 to +176), 40 pairs, and +105 (+73 to +139) over 150 fresh
  pairs where unlifted it had scored +115 (+80 to +153): no gain shown there, none lost either, and a
  bias corrected that is measured (it made 93% of its undoubled contracts against the PIMC bot too).
- **Inference from the play** (`play_reading`): every card another seat has played in the deal says
  something about its hand. Each sampled deal is weighted by how likely it makes the cards actually
  played, with the rule bot's card play as the model of the other seats: a card the rule bot would have
  played from the sampled hand counts fully, another `PLAY_TRUST` as much. This is Policy-Based
  Inference (Rebstock, Solinas, Buro and Sturtevant, "Policy Based Inference in Trick-Taking Card Games",
  IEEE CoG 2019), which gained the Skat bot Kermit most of its strength; the auction's reading was
  already the PIMC bot's. Off by default (`Methods.inference`): here it cost about 50 Elo against the
  PIMC bot, whose play the rule bot's models poorly, and the weights leave few samples' worth.
- **The points as well as the contract** (`card_worth`, `Methods.points`): a card's sampled deals are
  played to the end, each worth its outcome's stakes plus `pimc_bot.POINT_BONUS` tables a card point
  the team takes, as the PIMC bot values them. Made or not alone ties most cards on most samples, and
  the rule bot's card then stands; the points order them by how wide the margin is, and a contract
  made (or beaten) by more points in the samples is made (or beaten) more often in the real deal, whose
  hands and play the samples only approximate: +158 Elo (+101 to +223) against the PIMC bot where the
  bot scored +83 (+30 to +140) stopping each play-out once the contract was decided (the same 60 pairs,
  the same seconds). Its redoubled contracts went from 11 made of 21 to 41 of 52, the deals played in
  the same contract at both tables from -0.16 tables a deal to +0.04. Bridge programs order
  double-dummy results by the tricks over the contract for the same reason.
- **Cheaper play-outs** (`RulePlay`): the rule bot's card play on values kept up to date as each card is
  played (each seat's cards and the others' as bit sets, counts per suit, the trick), not on a View
  rebuilt at every card: about 3.1 times as many play-outs a second (`bench/playout.py`), the same
  cards, so the same seconds buy about three times the samples. Bridge and Skat programs owe much of
  their strength to fast play-outs for the same reason: PIMC's error shrinks with the samples.
- **Time where the decision is close** (`Allowance`): a decision stops sampling once its choice is
  settled (every other card clearly worse, or equal on every sample so far), and what it saves goes to
  the next decisions that are still undecided at their share, within a cap, so the average stays the
  budget. Bridge and Go programs spend their clock this way (a decision is only as hard as its closest
  alternatives).

The budget (`--budget` seconds, `--samples` deals) is an average per decision of the match: a decision
spends between `MIN_SHARE` and `MAX_SHARE` of it, the auction `AUCTION_SHARE` times as much, and never
more than a share of the arena's own time per decision. With `--samples` its play is deterministic for
a given match and seat (the samples are seeded by them).
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final, cast

from fiftysix.engine import (
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    SUIT_BITS,
    Call,
    Card,
    Deal,
    Move,
    Phase,
    Suit,
    View,
    hand_size_for,
    pack_for,
    table_amount,
)
from sample_bots import pimc_bot, rule_bot
from sample_bots.run import run_bot
from sdk import Bot, BotView, MatchInfo

DEFAULT_BUDGET_S: Final = 0.3
"""Average thinking time per decision, in seconds, when the arena allows that much."""
MIN_SHARE: Final = 0.4
"""The share of its allowance a decision spends before it may stop as settled."""
MAX_SHARE: Final = 3.0
"""The most a close decision may spend, in allowances, from what settled decisions saved."""
BANK_CAP: Final = 20.0
"""Allowances saved at most: an easy stretch of a deal does not buy a whole later deal's worth."""
AUCTION_SHARE: Final = 2.0
"""An auction decision's allowance, in play decisions' allowances (as the PIMC bot's)."""
SETTLED_Z: Final = 2.0
"""Standard errors by which every other card must trail the chosen one for a decision to be settled."""
CHECK_EVERY: Final = 2
"""Samples between the checks whether a decision is settled."""
PLAY_TRUST: Final = 0.3
"""The weight, relative to a card the rule bot would have played, of a sampled hand for each card its
seat played that the rule bot would not have played from it: other bots play otherwise, but not at
random."""
SPREAD_PER_DEAL: Final = 3.5
"""The standard deviation of the change in the two teams' table difference over one deal (measured in
self-play of this bot at 4 players: contracts of 1 to 2 tables, doubled a third of the time). The measured
value is also the best one tried: against the PIMC bot 2.5 scored +50 Elo and 5.0 +29 where 3.5 scores
+101 (the same 60 pairs at 10 samples)."""
DOUBLED_IF_DOWN: Final = 0.8
DOUBLED_IF_MADE: Final = 0.2
"""The share of the bot's contracts the opponents double when it fails them and when it makes them (its
4-player matches against the PIMC bot: 32 of 40 failed contracts doubled, 24 of 107 made ones): the
opponents see their own cards, so a bid that fails is mostly a doubled one."""
BID_LIFT: Final = 3
"""Card points added to what each sample's play-out took in the bot's own candidate contract, for the
chance of making a bid (`bid_chance`; the module doc gives the figures)."""
MIN_SLOPE: Final = 0.01
"""The least win chance per table used to express the stakes in tables (a decided match has none)."""


@dataclass(frozen=True, slots=True)
class Methods:
    """Which of the methods on top of the PIMC bot's search the bot uses (the defaults are those that
    paid; the others are kept for measuring: `bench/strength.py` names the variants)."""

    stakes: bool = True
    inference: bool = False
    """Weigh the samples by the play (`play_reading`). Off: against the PIMC bot it cost 52 Elo over 60
    pairs at 10 samples (+3 with it, +55 without), the weights leaving about 4 of 10 samples' worth and
    the rule bot's play a poor model of the PIMC bot's."""
    allowance: bool = True
    points: bool = True
    """Value a card's sampled deals played to the end, with the points taken (`card_worth`); off, each
    play-out stops once the contract is decided and is worth its outcome alone (+83 Elo against the
    PIMC bot at the same seconds where the method scores +158, the same 60 pairs)."""
    doubled_bids: bool = True
    """Value a bid with the doubles it draws: `DOUBLED_IF_DOWN` of the deals it fails, `DOUBLED_IF_MADE`
    of those it makes."""
    bid_lift: bool = True
    """Give the bot's own bids `BID_LIFT` points more than the samples took (`bid_chance`)."""


# Stakes: what a deal's outcome is worth in the match.


@dataclass(frozen=True, slots=True)
class Stakes:
    """What an outcome of this deal is worth to `team`: its chance of winning the match afterwards, in
    units of tables at the current standing (`scale`: one table more is about one unit), or with more
    than two teams the tables themselves (the PIMC bot's value)."""

    team: int
    tables: tuple[int, ...]
    teams_in: tuple[int, ...]
    deals_left: int | None
    """Deals after this one before the cap; None without a cap."""
    scale: float
    by_match: bool
    """False: valued by the tables, as the PIMC bot does (more than two teams, or the method off)."""

    @classmethod
    def of(cls, view: View, by_match: bool = True) -> Stakes:
        """The stakes of the deal `view` is in."""
        cap = view.rules.deal_cap
        teams_in = tuple(team for team in range(view.rules.team_count) if team not in view.teams_out)
        left = None if cap is None else max(0, cap - view.deal_number)
        stakes = cls(view.team, view.tables, teams_in, left, 1.0, by_match and len(teams_in) == 2)
        if not stakes.by_match:
            return stakes
        other = next(team for team in teams_in if team != view.team)
        slope = (stakes._win_chance(1, -1, other) - stakes._win_chance(-1, 1, other)) / 2
        return cls(stakes.team, stakes.tables, teams_in, left, 1 / max(slope, MIN_SLOPE), True)

    def worth(self, contract_team: int, number: int, made: bool, doubling: int) -> float:
        """The value to `team` of this deal ending with the contract of `contract_team` for `number`
        made (or not), `doubling` 1, 2 or 4."""
        others = [team for team in self.teams_in if team != contract_team]
        if not self.by_match:
            return pimc_bot.tables_won(self.team, contract_team, number, made, doubling, len(others))
        amount = table_amount(number, made, doubling)
        other = others[0]
        if made:
            moved = min(amount, self.tables[other])
            change = {contract_team: moved, other: -moved}
        else:
            moved = min(amount, self.tables[contract_team])
            change = {contract_team: -moved, other: moved}
        opponent = next(team for team in self.teams_in if team != self.team)
        return self.scale * self._win_chance(change[self.team], change[opponent], opponent)

    def unchanged(self) -> float:
        """The value of the standing as it is (no tables moved)."""
        if not self.by_match:
            return 0.0
        opponent = next(team for team in self.teams_in if team != self.team)
        return self.scale * self._win_chance(0, 0, opponent)

    def _win_chance(self, mine: int, theirs: int, opponent: int) -> float:
        """The chance that `team` wins the match once its tables change by `mine` and the opponent's by
        `theirs` (a tie at the cap counts half)."""
        own, other = self.tables[self.team] + mine, self.tables[opponent] + theirs
        if own <= 0 or other <= 0:
            return 0.0 if own <= 0 else 1.0
        if self.deals_left is None:
            return own / (own + other)  # a fair random walk's chance of reaching the other end first
        if self.deals_left == 0:
            return 1.0 if own > other else 0.5 if own == other else 0.0
        return NormalDist().cdf((own - other) / (SPREAD_PER_DEAL * math.sqrt(self.deals_left)))


# Play-outs.

SUITS: Final = tuple(Suit)

TOP_RANK: Final = tuple(-1 if not bits else 7 - ((bits & -bits).bit_length() - 1) for bits in range(256))
"""The highest rank in a set of one suit's cards (`Card.bit`s shifted down to the low byte), -1 for none:
a suit's bits run from its highest rank, so its top card is the lowest bit set."""


def play_out(
    deal: Deal, shown_out: Mapping[int, frozenset[Suit]], until_decided: bool = False
) -> bool | None:
    """`pimc_bot.play_out` (the rule bot's card play at every seat) with what the rule bot reads kept up
    to date as the play-out goes (`RulePlay`), not rebuilt from a view at every card. The cards chosen
    are the same (tests/sample_bots/test_strong_bot.py checks it).

    With `until_decided` it stops at the first trick after which the contract is made or can no longer
    be (about a third of a play-out's cards are then left unplayed) and returns whether it is made;
    otherwise it plays to the end and returns None."""
    contract = deal.contract
    assert contract is not None
    need = contract.number
    spare = total_points(len(deal.seats)) - need  # the points the contractors may lose and still make it
    points = deal.points
    team = contract.team
    rule_play = RulePlay(deal, shown_out)
    legal_moves, choose, play = deal.legal_moves, rule_play.card, rule_play.play
    while deal.phase is Phase.PLAY:
        legal = legal_moves()
        card = legal[0] if len(legal) == 1 else choose(legal)
        assert isinstance(card, Card)
        play(card)
        if until_decided and not deal.trick:
            taken = points[team]
            if taken >= need:
                return True
            if sum(points) - taken > spare:
                return False
    return deal.made if until_decided else None


@functools.cache
def total_points(players: int) -> int:
    """The card points of a deal at a table of `players`."""
    return sum(card.points for card in pack_for(players))


@functools.cache
def opponents_after(
    seats: tuple[int, ...], team_of: tuple[int, ...]
) -> Mapping[int, tuple[tuple[int, ...], ...]]:
    """For each seat at the table, by the count of cards on the table before it plays, the opponents still
    to play to the trick after it (of `View.seats_to_play`): the same at every trick of every play-out at
    this table."""
    found = {}
    count = len(seats)
    for place, seat in enumerate(seats):
        following = [seats[(place + step) % count] for step in range(1, count)]
        found[seat] = tuple(
            tuple(other for other in following[: count - 1 - on_table] if team_of[other] != team_of[seat])
            for on_table in range(count)
        )
    return found


class RulePlay:
    """The rule bot's card play in a deal played on (a play-out, or a replay of the cards played), with
    what its card play reads (`rule_bot.Knowledge` and each seat's `rule_bot.Position`) kept up to date
    as cards are played: building a view and counting the cards from it at every card took about two
    thirds of a play-out's time. The cards other seats hold are the pack's cards still in play less the
    seat's own, as sets of `Card.bit`s (`remaining`, and `remaining_twice` for both copies of a card)."""

    __slots__ = (
        "deal",
        "knowledge",
        "positions",
        "opponents_after",
        "by_seat",
        "total",
        "remaining",
        "remaining_twice",
        "voids",
    )

    def __init__(self, deal: Deal, shown_out: Mapping[int, frozenset[Suit]]) -> None:
        contract = deal.contract
        assert contract is not None
        self.deal = deal
        self.voids = {seat: set(suits) for seat, suits in shown_out.items()}
        self.knowledge = rule_bot.Knowledge(deal.trump, (), (), self.voids, hand_size_for(len(deal.seats)))
        self.opponents_after = opponents_after(deal.seats, deal.team_of)
        team_of = deal.team_of
        signals = rule_bot.jack_signals(deal.calls)
        self.positions: dict[int, rule_bot.Position] = {}
        self.by_seat: dict[int, list[int]] = {}
        """Each seat's cards of each suit (its position's `suit_lengths`)."""
        self.remaining = self.remaining_twice = 0
        for seat in deal.seats:
            held, twice = deal.card_sets(seat)
            self.remaining_twice |= self.remaining & held | twice
            self.remaining |= held
            team = team_of[seat]
            lengths = [(held & bits).bit_count() + (twice & bits).bit_count() for bits in SUIT_BITS]
            self.by_seat[seat] = lengths
            self.positions[seat] = rule_bot.Position(
                suit_lengths=lengths,
                led=None,
                winning=None,
                partner_winning=False,
                trick_points=0,
                opponents_after=(),
                contracting=team == contract.team,
                jack_suits=tuple(
                    suit for bidder, suit in signals if bidder != seat and team_of[bidder] == team
                ),
            )
        self.total = [sum(lengths[suit] for lengths in self.by_seat.values()) for suit in SUITS]

    def card(self, legal: Sequence[Move]) -> Card:
        """The rule bot's card among `legal` (two or more) for the seat to act."""
        deal = self.deal
        seat = deal.to_act
        held, twice = deal.card_sets(seat)
        unseen = self.remaining_twice & ~twice | self.remaining & ~held  # the cards of the other seats
        position = self.positions[seat]
        mine, total = position.suit_lengths, self.total
        knowledge = self.knowledge
        # By suit, written out: a comprehension costs a call, and this runs at every card with a choice.
        knowledge.unseen_count = [
            total[0] - mine[0],
            total[1] - mine[1],
            total[2] - mine[2],
            total[3] - mine[3],
        ]
        knowledge.top_unseen = [
            TOP_RANK[unseen & 0xFF],
            TOP_RANK[unseen >> 8 & 0xFF],
            TOP_RANK[unseen >> 16 & 0xFF],
            TOP_RANK[unseen >> 24],
        ]
        on_table = len(deal.trick)
        position.opponents_after = self.opponents_after[seat][on_table]
        cards = cast(list[Card], list(legal))
        if not on_table:
            position.led, position.winning, position.partner_winning, position.trick_points = (
                None,
                None,
                False,
                0,
            )
            return rule_bot.choose_lead(position, cards, knowledge)
        winner = deal.winning_play
        assert winner is not None
        position.led = deal.led_suit
        position.winning = winner.card
        position.partner_winning = deal.team_of[winner.seat] == deal.team_of[seat]
        position.trick_points = deal.trick_points
        return rule_bot.choose_follow(position, cards, knowledge)

    def play(self, card: Card) -> None:
        """Play `card` for the seat to act, and count it."""
        deal = self.deal
        seat, led = deal.to_act, deal.led_suit
        if led is not None and card.suit is not led:
            self.voids[seat].add(led)
        self.by_seat[seat][card.suit] -= 1
        self.total[card.suit] -= 1
        if self.remaining_twice & card.bit:
            self.remaining_twice ^= card.bit
        else:
            self.remaining ^= card.bit
        deal.apply_trusted(card)


# Inference from the play.


def play_reading(view: View) -> Callable[[Mapping[int, list[Card]]], float] | None:
    """The weight of sampled hands by the cards the other seats played in this deal: 1 for each card
    the rule bot would have played from the sampled hand at that point (or one next to it in rank with
    the same points, which it might as well have), `PLAY_TRUST` for each other card; None before any
    card of another seat that had a choice.

    The deal is replayed from its start with the sampled hands (each seat's hand now plus what it
    played), asking the rule bot at every card another seat played, with the cards counted as a
    play-out counts them (`RulePlay`)."""
    plays = [play for trick in view.tricks for play in trick.plays] + list(view.trick)
    if not any(play.seat != view.seat for play in plays):
        return None
    played: dict[int, list[Card]] = {seat: [] for seat in view.seats}
    for play in plays:
        played[play.seat].append(play.card)

    def weight(hands: Mapping[int, list[Card]]) -> float:
        dealt = {seat: [*hands[seat], *played[seat]] for seat in hands}
        dealt[view.seat] = [*view.hand, *played[view.seat]]
        deal = Deal(view.seats, view.team_of, view.dealer, dealt)
        for made in view.calls:
            deal.apply_trusted(made.call)
        rule_play = RulePlay(deal, {seat: frozenset() for seat in view.seats})
        result = 1.0
        for play in plays:
            if play.seat != view.seat:
                legal = deal.legal_moves()
                if len(legal) > 1 and not _alike(rule_play.card(legal), play.card):
                    result *= PLAY_TRUST
            rule_play.play(play.card)
        return result

    return weight


def _alike(chosen: Card, played: Card) -> bool:
    """Whether a played card is the one the model chose, or one next to it with the same points."""
    return (
        chosen.suit is played.suit and chosen.points == played.points and abs(chosen.rank - played.rank) <= 1
    )


# Time where the decision is close.


class Allowance:
    """A match's thinking, counted in play-outs (`--samples`: a sample of a decision costs one play-out
    per card or contract compared, so what one decision saves buys the same time in another) or in
    seconds: each decision may spend its share, plus what earlier settled decisions saved (up to
    `MAX_SHARE` shares), and saves what it does not spend."""

    def __init__(self, per_decision: float) -> None:
        self.per_decision = per_decision
        self.saved = 0.0

    def limit(self, share: float) -> tuple[float, float]:
        """The least and the most a decision of `share` allowances may spend."""
        base = self.per_decision * share
        return base * MIN_SHARE, min(base + self.saved, base * MAX_SHARE)

    def spent(self, share: float, used: float) -> None:
        """Book what a decision of `share` allowances used."""
        self.saved = min(self.saved + self.per_decision * share - used, self.per_decision * BANK_CAP)
        self.saved = max(self.saved, 0.0)


@dataclass
class Budget:
    """One decision's budget, from `allowance`: `share` allowances, at least `least` and at most `most`
    play-outs (by samples) or seconds from `started`, set by `plan` once the decision knows what one
    sample costs; with `fixed` (the method off) exactly its share."""

    allowance: Allowance
    share: float
    by_samples: bool
    fixed: bool
    started: float
    clock_s: float
    """The arena's time for the decision, less what the answer's trip needs."""
    per_sample: int = 1
    least: float = 0.0
    most: float = 0.0
    deadline: float = math.inf
    """The wall-clock time after which it samples no more, whatever it counts."""

    def plan(self, per_sample: int) -> None:
        """Set the limits for samples of `per_sample` play-outs each."""
        if self.by_samples:
            self.share *= per_sample
            self.per_sample = per_sample
        self.least, self.most = self.allowance.limit(self.share)
        if self.fixed:
            self.least = self.most = self.allowance.per_decision * self.share
        self.deadline = self.started + (self.clock_s if self.by_samples else min(self.most, self.clock_s))

    def used(self, samples: int) -> float:
        """What the decision has used after `samples`."""
        return samples * self.per_sample if self.by_samples else time.perf_counter() - self.started

    def book(self, samples: int) -> None:
        """Book what the decision used in the allowance."""
        if samples:
            self.allowance.spent(self.share, self.used(samples))

    def go_on(self, samples: int, settled: Callable[[], bool]) -> bool:
        """Whether to draw another sample after `samples`: not past the most or the deadline; past the
        least, only while the choice is not settled (checked every `CHECK_EVERY` samples)."""
        if time.perf_counter() >= self.deadline:
            return False
        used = self.used(samples)
        if used >= self.most:
            return False
        if used < self.least or samples % CHECK_EVERY:
            return True
        return not settled()


# Weighted comparisons.


def weighted_margin(differences: Sequence[float], weights: Sequence[float], z: float) -> tuple[float, float]:
    """The weighted mean of `differences` and its standard error times `z`, with the weights' effective
    number of samples (infinite error with fewer than two)."""
    total = sum(weights)
    if total <= 0 or len(differences) < 2:
        return 0.0, math.inf
    mean = sum(w * d for w, d in zip(weights, differences, strict=True)) / total
    variance = sum(w * (d - mean) ** 2 for w, d in zip(weights, differences, strict=True)) / total
    effective = total * total / sum(w * w for w in weights)
    if effective < 2:
        return mean, math.inf
    return mean, z * math.sqrt(variance * effective / (effective - 1) / effective)


# The play.


def choose_card(
    view: View,
    budget: Budget,
    rng: random.Random,
    stakes: Stakes,
    inference: bool,
    points: bool,
) -> tuple[Card | None, int]:
    """The rule bot's card unless another did better over the weighted samples by more than
    `pimc_bot.PLAY_Z` standard errors of the difference, each sample valued by `card_worth`; and the
    samples drawn. None when not one sample was played out.

    Before the points were counted (`Methods.points` off), half a standard error instead, at the same
    seconds as the PIMC bot (20 samples against its 10), scored +92 Elo (+39 to +149) where one scored
    +83 (+30 to +140), the same 60 pairs: not a measurable gain; none at all (the best mean) +70 over
    the first 15 of them, where one scored +120. With the points, 0.02 tables a point scored +147 where
    `pimc_bot.POINT_BONUS` (0.01) scores +158 (the same 60 pairs), and 0.05 +65 over the first 27 of
    them, where 0.01 scores +218: the points order the cards best as a tie-break, not as a goal.

    Nor did an opponent model fitted in the match pay: counting, from each finished deal's hands (public
    then), how often every other seat played the rule bot's card, and drawing the samples to explain the
    cards of the seats that followed it (90% of the time, at a uniform prior) as they explain the
    auction (the first of `pimc_bot.SAMPLE_TRIES` draws that does, else the one that misses fewest).
    Against the rule bot, whose seats it then reads exactly, +187 Elo (+133 to +251) where the bot
    scored +176 (+117 to +245), the same 60 pairs, at 2.4 times the seconds (the replays); the PIMC
    bot's cards follow the rule bot's 79% of the time, so against it the model stays off."""
    cards = pimc_bot.distinct_cards(view)
    if len(cards) == 1:
        return cards[0], 0
    default = pimc_bot.searched_card(rule_bot.choose_card(view), cards)
    budget.plan(len(cards))
    values: dict[Card, list[float]] = {card: [] for card in cards}
    weights: list[float] = []
    reading = pimc_bot.auction_reading(view)
    weigh = play_reading(view) if inference else None
    shown_out = pimc_bot.voids_after(view, cards)

    def settled() -> bool:
        chosen = _best(values, weights, default)
        return all(
            _clearly_behind(values[chosen], values[card], weights) for card in cards if card is not chosen
        )

    while budget.go_on(len(weights), settled):
        hands = pimc_bot.sampled_hands(view, rng, reading)
        root = Deal.from_view(view, hands)
        sample: list[float] = []
        for card in cards:
            if sample and time.perf_counter() >= budget.deadline:
                break  # a sample must score every card: this one is dropped
            deal = root.copy()
            deal.apply_trusted(card)
            sample.append(card_worth(deal, shown_out[card], stakes, points))
        else:
            for card, worth in zip(cards, sample, strict=True):
                values[card].append(worth)
            weights.append(1.0 if weigh is None else weigh(hands))
    if not weights:
        return None, 0
    return _best(values, weights, default), len(weights)


def card_worth(deal: Deal, shown_out: Mapping[int, frozenset[Suit]], stakes: Stakes, points: bool) -> float:
    """What a sampled deal, just after the card searched, is worth to the stakes' team once played out by
    the rule bot: its outcome's stakes, plus (`points`) `pimc_bot.POINT_BONUS` tables a card point the
    team takes by the end; without the points the play-out stops as soon as the contract is decided."""
    contract = deal.contract
    assert contract is not None
    if not points:
        made = play_out(deal, shown_out, until_decided=True)
        assert made is not None
        return stakes.worth(contract.team, contract.number, made, contract.doubling)
    play_out(deal, shown_out)
    worth = stakes.worth(contract.team, contract.number, deal.made, contract.doubling)
    return worth + pimc_bot.POINT_BONUS * deal.points[stakes.team]


def _best(values: dict[Card, list[float]], weights: list[float], default: Card) -> Card:
    """The card that beats `default` by the largest margin clear of `pimc_bot.PLAY_Z` errors, else it."""
    best, best_margin = default, 0.0
    for card, worths in values.items():
        if card is default:
            continue
        differences = [mine - theirs for mine, theirs in zip(worths, values[default], strict=True)]
        mean, error = weighted_margin(differences, weights, pimc_bot.PLAY_Z)
        if mean - error > best_margin:
            best, best_margin = card, mean - error
    return best


def _clearly_behind(chosen: list[float], other: list[float], weights: list[float]) -> bool:
    """Whether `other` trails `chosen` by `SETTLED_Z` errors, or equals it on every sample."""
    differences = [mine - theirs for mine, theirs in zip(chosen, other, strict=True)]
    if not any(differences):
        return True
    mean, error = weighted_margin(differences, weights, SETTLED_Z)
    return mean - error > 0


# The auction.


def choose_call(
    view: View,
    budget: Budget,
    rng: random.Random,
    stakes: Stakes,
    doubles_drawn: bool,
    lifted: bool,
) -> tuple[Call | None, int]:
    """The PIMC bot's auction (`pimc_bot.choose_call`) valued by `stakes`, with a bid valued with the
    doubles it draws (`bid_worth`, with `doubles_drawn`) and its chance lifted (`bid_chance`, with
    `lifted`): the rule bot's call unless the samples expect clearly more (`pimc_bot.AUCTION_EDGE`
    tables over the square root of the samples) from a bid at the lowest legal number in a candidate
    denomination or from passing (the standing bid played as it stands); a double, or a redouble of the
    team's doubled contract, when it gains `pimc_bot.DOUBLE_EDGE` on passing. The rule bot's doubles and
    redoubles, and passing when a partner holds the bid, are kept. None when not one sample was drawn.

    Bidding more freely (a richer band's start too, doubles whenever the samples favour them) made 62%
    of its contracts against the PIMC bot's 84% and lost 3.4 tables a match (8 pairs at 10 samples):
    with few samples, the best of many options is mostly the luckiest. Valuing a bid as if doubled
    whenever that hurts (the worse of the two) passed too often; valuing a double as if every contract
    made were redoubled did not pay either, nor redoubling only when the samples make the contract 85%
    of the time (its redoubles then made 23 of 26 contracts, against 7 of 15, but it scored +70 Elo
    against the PIMC bot where it scores +101 without, 60 pairs at 10 samples), nor valuing a double with
    the redoubles it draws as measured (half of the doubled contracts made, a tenth of those failed):
    +80 on the same pairs. At the same seconds as the PIMC bot (20 samples against 10, +83 over those
    pairs), valuing each call by the auction played on from it with the rule bot's calls at every seat,
    then the deal played out (what a pass or a bid leads to, the others' bids and doubles included),
    scored +75 over 58 of them at 1.23 times the seconds, +24 over 22 with the doubles drawn on top.
    Its redoubles are where it loses most (`bench/strength.py --by-deal`: 11 of its 21 redoubled
    contracts made, -23 tables over 30 pairs, against -6 for its 29 doubled ones), yet redoubling only
    at 85% in the samples, the rule bot's redoubles not taken on trust, scored +70 (+19 to +125) over
    the 60 pairs: the deals that differed in the doubling only went from -1.5 tables a deal to -0.1,
    but the matches did not follow (a redouble when behind is a chance to turn the match). Nor did
    taking 30% of the samples' failures of an opponent's contract for made (+83), although the PIMC
    bot made about 60% of the contracts the samples gave 20 to 60%: the same match score, fewer
    doubles. With the card play counting the points (+158 over those pairs), neither valuing the bot's
    own bids 20% bolder (a fifth of the samples' failures taken as made: +191 over the first 36 pairs,
    as without) nor the chance of a bid taken half from a normal fit of the points the samples took
    (+170 over the first 32, where it scores +221) paid."""
    legal = view.legal_moves
    high = view.high_bid
    default = rule_bot.choose_call(view)
    redoubling = REDOUBLE in legal
    if default in (DOUBLE, REDOUBLE) or (high and view.team_of[high.seat] == view.team and not redoubling):
        return default, 0
    current = high.number if high is not None else 0
    lowest = max(current + 1, MIN_BID)
    reading = pimc_bot.auction_reading(view)
    ours, contracts = pimc_bot.candidate_contracts(view, default, lowest, redoubling)
    taken: list[list[int]] = [[] for _ in contracts]
    budget.plan(len(contracts))

    def settled() -> bool:
        return False  # an auction decision spends its allowance: there are few of them

    drawn = 0
    while contracts and budget.go_on(drawn, settled):
        hands = pimc_bot.sampled_hands(view, rng, reading)
        sample: list[int] = []
        for declarer, trump in contracts:
            if sample and time.perf_counter() >= budget.deadline:
                break  # a sample must play every contract: this one is dropped
            deal = pimc_bot.contracted(view, hands, declarer, trump)
            play_out(deal, view.voids)
            sample.append(deal.points[view.team_of[declarer]])
        else:
            drawn += 1
            for results, count in zip(taken, sample, strict=True):
                results.append(count)
    if not contracts or not drawn:
        return None, drawn
    points = dict(zip(ours, taken, strict=False))

    def made_or_not(team: int, number: int, chance: float, doubling: int) -> float:
        return chance * stakes.worth(team, number, True, doubling) + (1 - chance) * stakes.worth(
            team, number, False, doubling
        )

    standing = 0.0
    if high is not None:
        standing = pimc_bot.chance_of(taken[-1], high.number)

    def expected(call: Call) -> float:
        if high is None and not call.is_bid:
            return stakes.unchanged()  # as the PIMC bot: what others would bid instead is not searched
        if call == REDOUBLE:
            assert high is not None
            return made_or_not(view.team_of[high.seat], high.number, standing, 4)
        if call == DOUBLE:
            assert high is not None
            return made_or_not(view.team_of[high.seat], high.number, standing, 2)
        if not call.is_bid:
            assert high is not None
            return made_or_not(view.team_of[high.seat], high.number, standing, view.doubling)
        number = call.contract_number(current)
        chance = bid_chance(points[call.suit], number, lifted)
        return bid_worth(stakes, view.team, number, chance, doubles_drawn)

    edge = pimc_bot.AUCTION_EDGE / math.sqrt(drawn)
    if redoubling:
        gain = expected(REDOUBLE) - expected(PASS)
        return (REDOUBLE if gain > pimc_bot.DOUBLE_EDGE + edge else default), drawn
    options = [default] if lowest > MAX_BID else [default, PASS]
    options += [rule_bot.bid_call(view, denomination, lowest, current, lowest) for denomination in ours]
    best = max((call for call in options if call in legal), key=expected)
    if DOUBLE in legal:
        gain = expected(DOUBLE) - expected(PASS)
        if gain > pimc_bot.DOUBLE_EDGE and expected(DOUBLE) > expected(best) + edge:
            return DOUBLE, drawn
    if expected(best) > expected(default) + edge:
        return best, drawn
    return default, drawn


def bid_chance(taken: list[int], number: int, lifted: bool) -> float:
    """The chance of making the bot's own bid of `number` from the points its sampled deals `taken`,
    each lifted by `BID_LIFT` (with `lifted`): those that took the bid less the lift."""
    return pimc_bot.chance_of(taken, number - BID_LIFT if lifted else number)


def bid_worth(stakes: Stakes, team: int, number: int, chance: float, doubles_drawn: bool) -> float:
    """What a bid of `number` by `team` is worth if it becomes the contract and is made with `chance`:
    undoubled, or (`doubles_drawn`) doubled in `DOUBLED_IF_DOWN` of the deals it fails and
    `DOUBLED_IF_MADE` of those it makes."""
    made, down = stakes.worth(team, number, True, 1), stakes.worth(team, number, False, 1)
    if not doubles_drawn:
        return chance * made + (1 - chance) * down
    made_doubled, down_doubled = stakes.worth(team, number, True, 2), stakes.worth(team, number, False, 2)
    return chance * (made + DOUBLED_IF_MADE * (made_doubled - made)) + (1 - chance) * (
        down + DOUBLED_IF_DOWN * (down_doubled - down)
    )


# The bot.


def decide(
    view: View, allowance: Allowance, by_samples: bool, rng: random.Random, methods: Methods = Methods()
) -> Move:
    """The move for `view` within what `allowance` lets this decision spend (the rule bot's move when
    it allows not one sample)."""
    if not view.legal_moves:
        raise ValueError(f"seat {view.seat} is not to act: there is no legal move to choose")
    share = AUCTION_SHARE if view.phase is Phase.AUCTION else 1.0
    clock_s = pimc_bot.clock_for(view)
    budget = Budget(allowance, share, by_samples, not methods.allowance, time.perf_counter(), clock_s)
    stakes = Stakes.of(view, methods.stakes)
    move: Move | None
    if view.phase is Phase.AUCTION:
        move, drawn = choose_call(view, budget, rng, stakes, methods.doubled_bids, methods.bid_lift)
    else:
        move, drawn = choose_card(view, budget, rng, stakes, methods.inference, methods.points)
    budget.book(drawn)
    if move is None or move not in view.legal_moves:
        return rule_bot.decide(view)
    return move


class StrongBot(Bot):
    """Samples the unseen cards, weighs them by the play, values outcomes by the match (module doc)."""

    name = "strong"
    version = "1.0.0"
    author = "fiftysix arena"

    def __init__(
        self,
        budget_s: float = DEFAULT_BUDGET_S,
        seed: int | None = None,
        samples: int | None = None,
        methods: Methods = Methods(),
    ) -> None:
        self.budget_s = budget_s
        self.methods = methods
        self.samples = samples
        """Deals sampled a decision on average, within the budget: the same search whatever the load."""
        self.rng = random.Random(seed)
        self.allowance = Allowance(samples if samples is not None else budget_s)

    def on_match_start(self, match: MatchInfo) -> None:
        """Seed from the match and seat, so that the samples of a rerun start alike; a fresh allowance."""
        self.rng.seed(f"{match.match_id}/{match.seat}")
        self.allowance = Allowance(self.samples if self.samples is not None else self.budget_s)

    def decide(self, view: BotView) -> Move:
        """A call or card chosen by sampling; always one of `view.legal_moves`."""
        return decide(view, self.allowance, self.samples is not None, self.rng, self.methods)


def budget_options(parser: argparse.ArgumentParser) -> None:
    """The bot's own command-line options: `--budget` seconds a decision, `--samples` deals."""
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help=f"average seconds a decision (default {DEFAULT_BUDGET_S})",
    )
    parser.add_argument(
        "--samples",
        type=int,
        help="deals sampled a decision on average, within the budget (default: by time)",
    )


if __name__ == "__main__":
    run_bot(StrongBot, budget_options, lambda args: StrongBot(args.budget, samples=args.samples))
