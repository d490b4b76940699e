"""A determinized Monte Carlo bot ("perfect information Monte Carlo"): the strongest sample bot.

Run it: `python -m sample_bots.pimc_bot --port 50051 [--budget 0.5] [--samples N]`.

Every decision samples the cards it cannot see many times over, consistently with what it has seen
(hand sizes, the cards played, the suits each seat has shown out of) and with the auction as the rule bot
(sample_bots/rule_bot.py) would have called it (the bid forms' signals, a bid's strength, a pass's
weakness, a double's trumps), and plays each sampled deal out to its end with the rule bot's card play
for every seat:

- in the play it scores each of its legal cards over the same sampled deals (so the comparison is
  between cards, not between lucky and unlucky deals) and plays the rule bot's card unless another did
  clearly better;
- in the auction it plays each sampled deal out once per denomination (its two best suits as trumps,
  and no trumps) with its own team as the contractors, which gives the chance of making each contract
  level; it bids the denomination whose lowest legal bid has the best expected tables, if that beats
  letting the standing bid play (played out the same way); it doubles a standing bid the samples
  expect to fail clearly often, and redoubles its own doubled contract when they expect it made
  clearly often. Never outbidding a partner is the rule bot's.

A deal's value to a team is the tables it wins or pays by the rules' table amounts (made or lost, the
band, the doubling), with a small bonus per card point so that a deal already decided still prefers
more points. The time budget per decision (`--budget`, 0.5 s by default) is cut to a share of the
arena's own time per decision when that is shorter, so the bot never draws on its bank of spare time;
`--samples` ends a decision sooner, after that many sampled deals.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, cast

from fiftysix.engine import (
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    BidForm,
    Call,
    CallKind,
    Card,
    Deal,
    Move,
    Phase,
    Rank,
    Suit,
    View,
    hand_size_for,
    sample_hands,
    table_amount,
)
from sample_bots import rule_bot
from sample_bots.run import run_bot
from sdk import Bot, BotView, MatchInfo

DEFAULT_BUDGET_S: Final = 0.5
"""Thinking time per decision, in seconds, when the arena allows at least that much."""
CLOCK_SHARE: Final = 0.5
"""The share of the arena's time per decision the bot may think for: the rest covers the view's trip."""
CLOCK_MARGIN_S: Final = 0.1
"""Kept back from that share on top: on a loaded machine a sample in progress at the deadline finished up
to 0.6 s late (bench/strength.py: 0.86 s for a 0.3 s auction budget), and the arena's clock also counts the
view's trip."""
POINT_BONUS: Final = 0.01
"""Tables a card point is worth in a deal's value: enough to order deals whose contract is settled."""
SAMPLE_TRIES: Final = 20
"""Draws tried per sample for one that explains the auction before taking the one that explains most."""
PLAY_Z: Final = 1.0
"""Standard errors by which a card must beat the rule bot's card over the same samples to be played."""
READING_SLACK: Final = 2.0
"""Points by which a sampled hand may miss the rule bot's reading of a call (`auction_reading`): other
bots bid otherwise, and this bot's partners sometimes bid on their samples."""
AUCTION_EDGE: Final = 1.5
"""Tables (over the square root of the samples) by which a call must beat the rule bot's to be made."""
DOUBLE_EDGE: Final = 0.6
"""Tables a double (or redouble) must be expected to gain on passing, a payer: the samples' chance that
the standing bid fails (or is made) is less sure than their ranking of bids, and a double may meet a
redouble. Valuing the standing bid 2 points weaker (this bot defended 2.4 points better than the rule bot
over 30 deals) with a 0.4 edge doubled half the rule bot's contracts, which it still made 68% of the
time (18 pairs): a double then gains nothing, and costs the bids it replaces."""
CANDIDATE_SUITS: Final = 2
"""Trump suits tried in the auction: the hand's best by the rule bot's estimate (each costs a play-out
per sample, and a suit the hand is short in does not win the auction's evaluation anyway)."""
AUCTION_SHARE: Final = 2.0
"""An auction decision may think this many times the budget (within the arena's clock): it samples whole
deals, several times each, and there are few of them."""


# Values and play-outs.


def value(deal: Deal, team: int) -> float:
    """What a finished deal is worth to `team`: tables won (positive) or paid, plus the point bonus."""
    contract = deal.contract
    assert contract is not None
    payers = len({deal.team_of[seat] for seat in deal.seats}) - 1
    tables = tables_won(team, contract.team, contract.number, deal.made, contract.doubling, payers)
    return tables + POINT_BONUS * deal.points[team]


def tables_won(team: int, contract_team: int, number: int, made: bool, doubling: int, payers: int) -> int:
    """The tables `team` wins (or pays, negative) when the contract of `contract_team` for `number`,
    `doubling` 1, 2 or 4, is made or not, with `payers` other teams at the table."""
    amount = table_amount(number, made, doubling)
    if contract_team == team:
        return amount * payers if made else -amount * payers
    return -amount if made else amount


def play_out(deal: Deal, context: View, shown_out: Mapping[int, frozenset[Suit]]) -> None:
    """Finish the play of `deal` with the rule bot's card play at every seat (a forced card needs no
    view). `context` gives the match's facts (rules, tables) for the views, `shown_out` the suits each
    seat had shown out of when the play-out started.

    The rule bot's card counting (`rule_bot.know`) rebuilds the unseen cards and the voids from the whole
    deal at every decision, half a play-out's time; here the voids are kept as the play-out goes, and
    the cards a seat cannot see are the other hands of the sampled deal, so the count is a pass over
    them. The cards chosen are the rule bot's own (tests/sample_bots/test_pimc_bot.py checks it)."""
    rules, tables, teams_out, number = context.rules, context.tables, context.teams_out, context.deal_number
    voids = {seat: set(suits) for seat, suits in shown_out.items()}
    hand_size = hand_size_for(len(deal.seats))
    trump = deal.trump
    while deal.phase is Phase.PLAY:
        legal = deal.legal_moves()
        seat = deal.to_act
        led = deal.led_suit
        card = legal[0]
        if len(legal) > 1:
            position = rule_bot.position_of(deal.view(seat, rules, tables, teams_out, number))
            knowledge = rollout_knowledge(deal, seat, trump, voids, hand_size)
            cards = cast(list[Card], list(legal))
            if led is None:
                card = rule_bot.choose_lead(position, cards, knowledge)
            else:
                card = rule_bot.choose_follow(position, cards, knowledge)
        assert isinstance(card, Card)
        if led is not None and card.suit is not led:
            voids[seat].add(led)
        deal.apply_trusted(card)


def rollout_knowledge(
    deal: Deal, seat: int, trump: Suit | None, voids: dict[int, set[Suit]], hand_size: int
) -> rule_bot.Knowledge:
    """`rule_bot.know` for `seat` in a play-out, where the cards it cannot see are the other hands."""
    unseen_count = [0] * len(Suit)
    top_unseen = [-1] * len(Suit)
    hands = deal.hands
    for other in deal.seats:
        if other != seat:
            for card in hands[other]:
                suit = card.suit
                unseen_count[suit] += 1
                if top_unseen[suit] < card.rank:
                    top_unseen[suit] = card.rank
    return rule_bot.Knowledge(trump, unseen_count, top_unseen, voids, hand_size)


def auction_reading(view: View) -> Callable[[Mapping[int, list[Card]]], int]:
    """How many of the other seats' calls sampled hands fail to explain, reading each call as the rule
    bot makes it (sample_bots/rule_bot.py), give or take `READING_SLACK` points:

    - a bid's form: a number-first bid (`28S`) holds the jack of its suit, a suit-first one (`S28`) not;
    - a bid's number: the team's estimate in its denomination (the hand's own, or a partner's bid raised
      by what the hand holds above a typical one) less the bidding margin reaches it;
    - a pass while free to bid (no partner has bid): no denomination's estimate reached the lowest bid;
    - a double: the top of the contract's trumps (a jack with length, or three jacks against no trumps).

    Without the passes and the strength every hand looks as strong as any other: the bot then takes
    silent opponents for strong and bidders for weak, and passes and doubles too much. A card since
    played counts as held."""
    shape = rule_bot.table_shape(view)
    model = rule_bot.model_for(shape)
    team_of = view.team_of
    jacks: list[tuple[int, Suit, bool]] = []
    floors: list[tuple[int, Suit | None, float, tuple[int, ...], frozenset[Suit]]] = []
    """(seat, denomination, points the team's estimate must reach, partners' numbers that support it,
    suits whose jack an opponent had shown: the rule bot counts them 3 points weaker)"""
    ceilings: list[tuple[int, float, frozenset[Suit]]] = []
    """(seat, points no denomination's estimate reached, suits whose jack an opponent had shown)"""
    doubles: list[tuple[int, Suit | None, int]] = []
    bids: list[tuple[int, Suit | None, int]] = []
    jack_bids: list[tuple[int, Suit]] = []
    current = 0
    high_seat: int | None = None
    doubled = False
    for made in view.calls:
        seat, call = made.seat, made.call
        lowest = max(MIN_BID, current + 1)
        mine = seat == view.seat
        if call.kind is CallKind.BID:
            number = call.contract_number(current)
            suit = call.suit
            if not mine:
                if call.form in (BidForm.NUMBER_SUIT, BidForm.SUIT_NUMBER) and suit is not None:
                    jacks.append((seat, suit, call.form is BidForm.NUMBER_SUIT))
                named_first = any(other == seat and named is suit for other, named, _ in bids)
                support = tuple(
                    count
                    for other, named, count in bids
                    if other != seat and team_of[other] == team_of[seat] and named is suit and not named_first
                )
                need = number + model.margin - READING_SLACK
                floors.append((seat, suit, need, support, _jacks_shown(jack_bids, seat, team_of)))
            bids.append((seat, suit, number))
            if call.form is BidForm.NUMBER_SUIT and suit is not None:
                jack_bids.append((seat, suit))
            current, high_seat = number, seat
        elif call == DOUBLE:
            doubled = True
            if not mine and high_seat is not None:
                doubles.append((seat, bids[-1][1], current))
        elif not (mine or doubled or lowest > MAX_BID) and not any(
            team_of[other] == team_of[seat] and other != seat for other, _, _ in bids
        ):
            ceiling = lowest + model.margin + READING_SLACK
            ceilings.append((seat, ceiling, _jacks_shown(jack_bids, seat, team_of)))
    judged = {seat for seat, *_ in floors} | {seat for seat, *_ in ceilings}
    typical = {denomination: rule_bot.typical_estimate(shape, denomination) for denomination in (*Suit, None)}
    played: dict[int, list[Card]] = {seat: [] for seat in view.seats}
    for plays in (*(trick.plays for trick in view.tricks), view.trick):
        for play in plays:
            played[play.seat].append(play.card)

    def broken(hands: Mapping[int, list[Card]]) -> int:
        dealt = {seat: [*hands[seat], *played[seat]] for seat in hands}
        worth = {seat: hand_estimates(dealt[seat], model) for seat in judged}
        count = 0
        for seat, suit, has_jack in jacks:
            held = any(card.suit is suit and card.rank is Rank.JACK for card in dealt[seat])
            count += held is not has_jack
        for seat, denomination, need, support, shown in floors:
            own = worth[seat][denomination]
            team = max([own, *(number + own - typical[denomination] for number in support)])
            count += team - (Rank.JACK.points if denomination in shown else 0) < need
        for seat, ceiling, shown in ceilings:
            estimates = worth[seat]
            best = max(
                estimates[denomination] - (Rank.JACK.points if denomination in shown else 0)
                for denomination in estimates
                if denomination is not None or rule_bot.is_balanced(dealt[seat])  # no trumps only then
            )
            count += best >= ceiling
        for seat, trump, number in doubles:
            count += not rule_bot.strong_in_trumps(dealt[seat], trump, number)
        return count

    return broken


def hand_estimates(hand: Sequence[Card], model: rule_bot.Model) -> dict[Suit | None, float]:
    """`rule_bot.estimate` of `hand` in every denomination in one pass over the hand: the reading asks
    for them for every seat of every sampled deal. The sums are the rule bot's, term by term, so they
    are equal to the last bit."""
    lengths = [0] * len(Suit)
    jacks = [0] * len(Suit)
    nines = [0] * len(Suit)
    for card in hand:
        lengths[card.suit] += 1
        if card.rank is Rank.JACK:
            jacks[card.suit] += 1
        elif card.rank is Rank.NINE:
            nines[card.suit] += 1
    all_jacks = sum(jacks)
    estimates: dict[Suit | None, float] = {
        suit: model.base
        + model.per_trump * lengths[suit]
        + model.per_trump_jack * jacks[suit]
        + model.per_trump_nine * nines[suit]
        + model.per_side_jack * (all_jacks - jacks[suit])
        + model.per_void * sum(1 for other in Suit if other is not suit and not lengths[other])
        for suit in Suit
    }
    estimates[None] = model.no_trumps_base + model.per_jack * all_jacks + model.per_nine * sum(nines)
    return estimates


def _jacks_shown(jack_bids: list[tuple[int, Suit]], seat: int, team_of: Sequence[int]) -> frozenset[Suit]:
    """Suits whose jack an opponent of `seat` has shown with a number-first bid."""
    return frozenset(suit for other, suit in jack_bids if team_of[other] != team_of[seat])


def sampled_hands(
    view: View, rng: random.Random, reading: Callable[[Mapping[int, list[Card]]], int]
) -> Mapping[int, list[Card]]:
    """Hands for the other seats that explain the auction (`auction_reading`): the first of
    `SAMPLE_TRIES` draws that explains every call, else the one that explains the most (an opponent
    whose calls follow no such reading must not cost the bot its time, nor leave it with draws that
    ignore the auction altogether)."""
    best: Mapping[int, list[Card]] | None = None
    fewest = math.inf
    for _ in range(SAMPLE_TRIES):
        hands = sample_hands(view, rng)
        count = reading(hands)
        if count == 0:
            return hands
        if count < fewest:
            best, fewest = hands, count
    assert best is not None
    return best


def sampled_deal(view: View, rng: random.Random, reading: Callable[[Mapping[int, list[Card]]], int]) -> Deal:
    """One determinization of the deal as `view` sees it."""
    return Deal.from_view(view, sampled_hands(view, rng, reading))


# The play.


def distinct_cards(view: View) -> list[Card]:
    """The legal cards that can make a difference: of two cards of a suit with the same points and no
    card still out ranking between them (`KH QH` with no `KH` or `QH` elsewhere unplayed), whichever is
    played, the trick and the points go the same way, so only the lower is searched."""
    unseen = {(card.suit, card.rank) for card in view.unseen_cards}
    kept: list[Card] = []
    for card in sorted((move for move in view.legal_moves if isinstance(move, Card)), key=_strength):
        previous = kept[-1] if kept else None
        if (
            previous is not None
            and previous.suit is card.suit
            and previous.points == card.points
            and not any((card.suit, rank) in unseen for rank in range(previous.rank, card.rank + 1))
        ):
            continue  # as good as the lower card just kept
        kept.append(card)
    return kept


def searched_card(card: Card, cards: list[Card]) -> Card:
    """`card`, or the card of `distinct_cards` searched in its stead (the lowest of its equivalent run)."""
    if card in cards:
        return card
    return max(
        (
            other
            for other in cards
            if other.suit is card.suit and other.points == card.points and other.rank <= card.rank
        ),
        key=lambda other: other.rank,
    )


def voids_after(view: View, cards: list[Card]) -> dict[Card, Mapping[int, frozenset[Suit]]]:
    """The suits each seat has shown out of once each of `cards` is played (playing off the suit led
    shows this seat out of it): where a play-out after that card starts."""
    led = view.led_suit
    return {
        card: {**view.voids, view.seat: view.voids[view.seat] | {led}}
        if led is not None and card.suit is not led
        else view.voids
        for card in cards
    }


def candidate_contracts(
    view: View, default: Call, lowest: int, redoubling: bool
) -> tuple[list[Suit | None], list[tuple[int, Suit | None]]]:
    """The denominations the auction tries for this team (its `CANDIDATE_SUITS` best suits by the rule
    bot's estimate, no trumps, and the rule bot's own bid's), none once 56 is bid or when redoubling; and
    the contracts to play each sample out in: (declarer, denomination) for each of them, then the
    standing bid as it would play if all passed."""
    shape = rule_bot.table_shape(view)
    suits = sorted(Suit, key=lambda suit: -rule_bot.estimate(view.hand, suit, shape))[:CANDIDATE_SUITS]
    ours: list[Suit | None] = list(dict.fromkeys([*suits, None, *([default.suit] if default.is_bid else [])]))
    if lowest > MAX_BID or redoubling:
        ours = []
    contracts = [(view.seat, denomination) for denomination in ours]
    high = view.high_bid
    if high is not None:
        contracts.append((high.seat, high.trump))
    return ours, contracts


def _strength(card: Card) -> tuple[int, int]:
    return (card.suit, card.rank)


def choose_card(view: View, deadline: float, rng: random.Random, samples: int | None = None) -> Card | None:
    """The rule bot's card, unless another card did better over the deals sampled until `deadline` by
    more than `PLAY_Z` standard errors of the difference (the same deals score both, so the difference is
    measured far more precisely than either value); None when not even one deal was played out in time.
    `samples`, if given, stops the sampling at that many deals.
    With few samples a plain best average is mostly noise, and loses to the rule bot's judgement."""
    cards = distinct_cards(view)
    if len(cards) == 1:
        return cards[0]
    default = searched_card(rule_bot.choose_card(view), cards)
    values: dict[Card, list[float]] = {card: [] for card in cards}
    reading = auction_reading(view)
    shown_out = voids_after(view, cards)
    while time.perf_counter() < deadline and (samples is None or len(values[cards[0]]) < samples):
        root = sampled_deal(view, rng, reading)
        sample: list[float] = []
        for card in cards:
            if sample and time.perf_counter() >= deadline:
                break  # a sample must score every card: this one is dropped
            deal = root.copy()
            deal.apply_trusted(card)
            play_out(deal, view, shown_out[card])
            sample.append(value(deal, view.team))
        else:
            for card, worth in zip(cards, sample, strict=True):
                values[card].append(worth)
    if not values[default]:
        return None
    best, best_margin = default, 0.0
    for card in cards:
        differences = [mine - theirs for mine, theirs in zip(values[card], values[default], strict=True)]
        margin = statistics.fmean(differences) - PLAY_Z * standard_error(differences)
        if margin > best_margin:
            best, best_margin = card, margin
    return best


def standard_error(values: list[float]) -> float:
    """The standard error of the mean of `values` (infinite for fewer than two)."""
    if len(values) < 2:
        return math.inf
    return statistics.stdev(values) / math.sqrt(len(values))


# The auction.


def contracted(view: View, hands: Mapping[int, list[Card]], declarer: int, trump: Suit | None) -> Deal:
    """A fresh deal of these hands in which `declarer` alone bids, 28 in `trump`, in the form that tells
    the truth about its hand, and everybody else passes: how a denomination plays for that team."""
    deal = Deal(view.seats, view.team_of, view.dealer, {**hands, view.seat: view.hand})
    while deal.to_act != declarer:
        deal.apply(deal.to_act, PASS)
    if trump is None:
        form = BidForm.NO_TRUMPS
    else:
        has_jack = any(card.suit is trump and card.rank is Rank.JACK for card in deal.hands[declarer])
        form = BidForm.NUMBER_SUIT if has_jack else BidForm.SUIT_NUMBER
    deal.apply(declarer, Call(CallKind.BID, form, MIN_BID, trump))
    while deal.phase is Phase.AUCTION:
        deal.apply(deal.to_act, PASS)
    return deal


def tables_for(number: int, chance: float, payers: int) -> float:
    """Expected tables for the contractors of `number` made with probability `chance`, undoubled."""
    return payers * (chance * table_amount(number, True, 1) - (1 - chance) * table_amount(number, False, 1))


def choose_call(view: View, deadline: float, rng: random.Random, samples: int | None = None) -> Call | None:
    """The rule bot's call, unless the sampled deals expect clearly more tables from another: a bid at
    the lowest legal number in one of the candidate denominations, or a pass (what the standing bid is
    worth to this team if it plays). "Clearly" is `AUCTION_EDGE` tables over the square root of the
    samples. A double when the standing bid fails often enough that doubling it gains `DOUBLE_EDGE`
    tables on passing, and clearly beats every bid; a redouble when the team's doubled contract is made
    often enough that redoubling gains as much. The rule bot's own doubles and redoubles, and passing
    when a partner holds the bid, are kept; None when not even one deal was sampled. `samples`, if given,
    stops the sampling at that many deals."""
    legal = view.legal_moves
    high = view.high_bid
    default = rule_bot.choose_call(view)
    redoubling = REDOUBLE in legal
    if default in (DOUBLE, REDOUBLE) or (high and view.team_of[high.seat] == view.team and not redoubling):
        return default
    current = high.number if high is not None else 0
    lowest = max(current + 1, MIN_BID)
    reading = auction_reading(view)
    ours, contracts = candidate_contracts(view, default, lowest, redoubling)
    taken: list[list[int]] = [[] for _ in contracts]
    while contracts and time.perf_counter() < deadline and (samples is None or len(taken[0]) < samples):
        hands = sampled_hands(view, rng, reading)
        sample: list[int] = []
        for declarer, trump in contracts:
            if sample and time.perf_counter() >= deadline:
                break  # a sample must play every contract: this one is dropped
            deal = contracted(view, hands, declarer, trump)
            play_out(deal, view, view.voids)
            sample.append(deal.points[view.team_of[declarer]])
        else:
            for results, count in zip(taken, sample, strict=True):
                results.append(count)
    if not contracts or not taken[0]:
        return None
    sampled = len(taken[0])
    payers = len({view.team_of[seat] for seat in view.seats}) - 1
    points = dict(zip(ours, taken, strict=False))
    edge = AUCTION_EDGE / math.sqrt(sampled)
    if redoubling:
        assert high is not None
        gain = 2 * tables_for(
            high.number, chance_of(taken[-1], high.number), 1
        )  # a payer: doubled to redoubled
        return REDOUBLE if gain > DOUBLE_EDGE + edge else default
    passing = 0.0
    if high is not None:
        passing = -tables_for(high.number, chance_of(taken[-1], high.number), payers) / payers  # one payer

    def expected(call: Call) -> float:
        if call == DOUBLE:
            return 2 * passing  # every payment of the deal doubles
        if not call.is_bid:
            return passing
        number = call.contract_number(current)
        return tables_for(number, chance_of(points[call.suit], number), payers)

    options = [default] if lowest > MAX_BID else [default, PASS]
    for denomination in () if lowest > MAX_BID else ours:
        limit = lowest
        while limit < MAX_BID and chance_of(points[denomination], limit + 1) > break_even(limit + 1):
            limit += 1
        options.append(rule_bot.bid_call(view, denomination, lowest, current, limit))
    best = max((call for call in options if call in legal), key=expected)
    if DOUBLE in legal and passing > DOUBLE_EDGE and expected(DOUBLE) > expected(best) + edge:
        return DOUBLE
    if expected(best) > expected(default) + edge:
        return best
    return default


def chance_of(taken: list[int], number: int) -> float:
    """How often the sampled deals took `number` points or more."""
    return sum(count >= number for count in taken) / len(taken)


def break_even(number: int) -> float:
    """The chance of making a contract of `number` above which bidding it wins tables on average."""
    lost, won = table_amount(number, False, 1), table_amount(number, True, 1)
    return lost / (won + lost)


# The bot.


def budget_for(view: View, budget_s: float) -> float:
    """Seconds to think: the bot's budget (more in the auction), cut to a share of the arena's time per
    decision."""
    if view.phase is Phase.AUCTION:
        budget_s *= AUCTION_SHARE
    return min(budget_s, clock_for(view))


def clock_for(view: View) -> float:
    """The seconds the bot may think for within the arena's time per decision (`CLOCK_SHARE` of it less
    `CLOCK_MARGIN_S`); infinite for a view that carries no clock."""
    if isinstance(view, BotView) and view.decision_ms > 0:
        return view.decision_ms / 1000 * CLOCK_SHARE - CLOCK_MARGIN_S
    return math.inf


def decide(view: View, budget_s: float, rng: random.Random, samples: int | None = None) -> Move:
    """The move for `view` after at most `budget_s` seconds of sampling, or `samples` deals if that comes
    first (the rule bot's move when the time allows no sample at all)."""
    if not view.legal_moves:
        raise ValueError(f"seat {view.seat} is not to act: there is no legal move to choose")
    deadline = time.perf_counter() + budget_for(view, budget_s)
    move: Move | None
    if view.phase is Phase.AUCTION:
        move = choose_call(view, deadline, rng, None if samples is None else round(samples * AUCTION_SHARE))
    else:
        move = choose_card(view, deadline, rng, samples)
    if move is None or move not in view.legal_moves:
        return rule_bot.decide(view)
    return move


class PimcBot(Bot):
    """Samples the unseen cards and plays each sample out (see the module's doc)."""

    name = "pimc"
    version = "1.0.0"
    author = "fiftysix arena"

    def __init__(
        self, budget_s: float = DEFAULT_BUDGET_S, seed: int | None = None, samples: int | None = None
    ) -> None:
        self.budget_s = budget_s
        self.samples = samples
        """Deals sampled a decision, within the budget: the same search whatever the machine's load."""
        self.rng = random.Random(seed)

    def on_match_start(self, match: MatchInfo) -> None:
        """Seed from the match and seat, so that the samples of a rerun start alike."""
        self.rng.seed(f"{match.match_id}/{match.seat}")

    def decide(self, view: BotView) -> Move:
        """A call or card chosen by sampling; always one of `view.legal_moves`."""
        return decide(view, self.budget_s, self.rng, self.samples)


def budget_options(parser: argparse.ArgumentParser) -> None:
    """The bot's own command-line options: `--budget` seconds a decision, `--samples` deals."""
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help=f"seconds a decision (default {DEFAULT_BUDGET_S})",
    )
    parser.add_argument(
        "--samples", type=int, help="deals sampled a decision, within the budget (default: by time)"
    )


if __name__ == "__main__":
    run_bot(PimcBot, budget_options, lambda args: PimcBot(args.budget, samples=args.samples))
