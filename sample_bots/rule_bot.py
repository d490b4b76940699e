"""A rule-based bot: bids from its hand's strength with honest bid-form signals, and plays by card sense.

Run it: `python -m sample_bots.rule_bot --port 50051`.

The auction (docs/rules.md#the-auction):

- every denomination is valued by a small linear model of the hand (trump length, jacks and nines of
  trumps, other jacks, voids; jacks and nines for no trumps) that estimates the points the team takes
  with that trump, partners' share included; the weights were fitted by least squares to this bot's own
  play over thousands of seeded deals, one set per table shape (players at the table, in a team);
- it bids only up to that estimate less a safety margin, in its best denomination, and the form of the
  bid is an honest signal: `28S` with the jack of spades, `S28` without it, `+NS` when its spades are
  N top cards (jacks and nines) and nothing else, `28NT` with a balanced hand (`28NOES` instead, when
  raising a partner's no trumps while void in the suit last named);
- it reads its partners' signals: a partner's bid is a floor for the team's strength in that
  denomination, so it supports the partner's suit rather than overcall it, and never outbids a partner;
- it doubles only holding the top of the opponents' trumps, and redoubles only a comfortable contract.

The play (docs/rules.md#the-play): it counts the cards (both copies of each, and that of two identical cards
the first played wins) to know which of its cards are masters and which seats are void. It throws points
onto a trick its partner wins safely, wins points with the cheapest card that keeps the trick, ruffs
only tricks worth it, draws trumps when its side holds the contract and the top trump, cashes masters
that cannot be ruffed, leads towards a partner's shown jack, and otherwise leads low from a long suit.

The bot keeps no state between decisions and uses no randomness, so it is deterministic given the match;
a decision takes a fraction of a millisecond.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from math import comb
from operator import attrgetter
from typing import Final

from sample_bots.run import run_bot
from sdk import (
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    BidForm,
    Bot,
    BotView,
    Call,
    CallKind,
    Card,
    Move,
    Phase,
    Rank,
    Suit,
    View,
    hand_size_for,
    pack_for,
)

TOP_RANKS: Final = (Rank.JACK, Rank.NINE)
"""The ranks a plus bid (`+2S`) counts as top cards."""
BAND_STARTS: Final = (40, 48, 56)
"""Contract numbers at which the tables won or lost step up (docs/rules.md#table-amounts)."""


# The table.


@dataclass(frozen=True, slots=True)
class TableShape:
    """How many players are at the table and how many of them are on one team (the bidding models'
    key: a hand is worth more with more partners and fewer cards per hand)."""

    players: int
    team_size: int


def table_shape(view: View) -> TableShape:
    """The shape of the table this deal is played at (teams that went out have left it)."""
    team_size = sum(1 for seat in view.seats if view.team_of[seat] == view.team)
    return TableShape(len(view.seats), team_size)


# Valuing a hand for the auction.


@dataclass(frozen=True, slots=True)
class Model:
    """A linear estimate of the points a team takes in a deal, from the hand of one of its players.

    With a trump suit: `base`, plus so much per trump, per jack and per nine of trumps, per jack of
    another suit and per void (a void ruffs). With no trumps: `no_trumps_base` plus so much per jack and
    per nine. `base` is mostly the partners' share. The weights were fitted by least squares to this
    bot's own play (some 4,000 seeded deals per table shape, the hand's longest suit as trumps); other
    features tried (aces and tens, singletons, the hand's points) did not improve the fit, since a point
    card that is not a winner goes to whoever wins the trick. `margin` is kept below the estimate when
    bidding: the points taken spread 8 to 11 either side of it.
    """

    base: float
    per_trump: float
    per_trump_jack: float
    per_trump_nine: float
    per_side_jack: float
    per_void: float
    no_trumps_base: float
    per_jack: float
    per_nine: float
    margin: float


MODELS: Final[dict[TableShape, Model]] = {
    TableShape(4, 2): Model(8.6, 3.4, 3.7, 1.7, 3.0, 3.6, 19.4, 3.2, 0.6, margin=4.0),
    TableShape(6, 2): Model(0.1, 4.7, 6.0, 2.6, 3.7, 2.4, 11.5, 5.1, 0.7, margin=4.7),
    TableShape(6, 3): Model(13.4, 3.6, 4.9, 2.2, 2.7, 2.4, 22.3, 4.2, 0.0, margin=5.4),
    TableShape(8, 2): Model(0.1, 3.4, 5.8, 3.9, 2.7, 1.8, 8.7, 4.7, 0.2, margin=4.4),
    TableShape(8, 4): Model(18.7, 2.3, 3.9, 2.3, 1.9, 1.7, 23.3, 3.9, 0.7, margin=5.5),
}
"""The bidding model of each table shape (players at the table, players in a team)."""


def model_for(shape: TableShape) -> Model:
    """The bidding model of `shape`; an unexpected shape borrows the nearest one of its player count."""
    model = MODELS.get(shape)
    if model is None:
        model = min(
            MODELS.items(),
            key=lambda item: (abs(item[0].players - shape.players), abs(item[0].team_size - shape.team_size)),
        )[1]
    return model


def estimate(hand: Sequence[Card], trump: Suit | None, shape: TableShape) -> float:
    """Points this hand's team is expected to take with `trump` (None: no trumps), partners unknown."""
    model = model_for(shape)
    if trump is None:
        jacks = sum(1 for card in hand if card.rank is Rank.JACK)
        nines = sum(1 for card in hand if card.rank is Rank.NINE)
        return model.no_trumps_base + model.per_jack * jacks + model.per_nine * nines
    trumps = [card for card in hand if card.suit is trump]
    side_suits = {card.suit for card in hand} - {trump}
    return (
        model.base
        + model.per_trump * len(trumps)
        + model.per_trump_jack * sum(1 for card in trumps if card.rank is Rank.JACK)
        + model.per_trump_nine * sum(1 for card in trumps if card.rank is Rank.NINE)
        + model.per_side_jack * sum(1 for card in hand if card.rank is Rank.JACK and card.suit is not trump)
        + model.per_void * (len(Suit) - 1 - len(side_suits))
    )


def typical_estimate(shape: TableShape, trump: Suit | None) -> float:
    """The expected `estimate` of a random hand with `trump` (any suit, or None): what a bid assumes of
    each of the bidder's partners, so a partner's bid plus this hand's strength above it is the team's."""
    model = model_for(shape)
    hand_size = hand_size_for(shape.players)
    pack = len(pack_for(shape.players))
    copies = 2 * hand_size / pack  # expected copies held of any one card
    if trump is None:
        return model.no_trumps_base + (model.per_jack + model.per_nine) * len(Suit) * copies
    void_chance = comb(pack - pack // len(Suit), hand_size) / comb(pack, hand_size)
    return (
        model.base
        + model.per_trump * hand_size / len(Suit)
        + (model.per_trump_jack + model.per_trump_nine) * copies
        + model.per_side_jack * (len(Suit) - 1) * copies
        + model.per_void * (len(Suit) - 1) * void_chance
    )


def is_balanced(hand: Sequence[Card]) -> bool:
    """No void and no suit much longer than a quarter of the hand: the shape for no trumps."""
    lengths = Counter(card.suit for card in hand)
    return len(lengths) == len(Suit) and max(lengths.values()) <= len(hand) // 4 + 1


# Reading the auction.


def bids_by(view: View, seats: Iterable[int]) -> list[tuple[int, Call, int]]:
    """The bids made by `seats` in this auction, in order: (seat, call, contract number)."""
    wanted = set(seats)
    current = 0
    found = []
    for made in view.calls:
        call = made.call
        if call.kind is not CallKind.BID:
            continue
        current = call.contract_number(current)
        if made.seat in wanted:
            found.append((made.seat, call, current))
    return found


def partner_seats(view: View) -> tuple[int, ...]:
    """This seat's partners still at the table."""
    return tuple(seat for seat in view.partners if seat in view.seats)


def opponent_seats(view: View) -> tuple[int, ...]:
    """The seats at the table of every other team."""
    return tuple(seat for seat in view.seats if view.team_of[seat] != view.team)


def last_named_suit(view: View) -> Suit | None:
    """The suit most recently named in a bid (what a noes bid says its bidder lacks)."""
    for made in reversed(view.calls):
        if made.call.kind is CallKind.BID and made.call.suit is not None:
            return made.call.suit
    return None


def team_estimates(view: View) -> dict[Suit | None, float]:
    """The team's points with each denomination: this hand's own estimate, raised by what partners'
    bids show (a partner's bid is at least that strong, plus what this hand holds above a typical one,
    unless this seat named the denomination first: the partner then counted this hand already),
    lowered where an opponent showed the jack of that suit."""
    shape = table_shape(view)
    hand = view.hand
    estimates: dict[Suit | None, float] = {
        denomination: estimate(hand, denomination, shape) for denomination in (*Suit, None)
    }
    named_here: set[Suit | None] = set()
    for seat, call, number in bids_by(view, (view.seat, *partner_seats(view))):
        if seat == view.seat:
            named_here.add(call.suit)
            continue
        supported = float(number)
        if call.suit not in named_here:
            supported += estimate(hand, call.suit, shape) - typical_estimate(shape, call.suit)
        estimates[call.suit] = max(estimates[call.suit], supported)
    for _, call, _ in bids_by(view, opponent_seats(view)):
        if call.form is BidForm.NUMBER_SUIT and call.suit is not None:
            estimates[call.suit] -= Rank.JACK.points
    return estimates


# The auction.

SUPPORT_PREFERENCE: Final = 3.0
"""How much better a suit of its own must look before the bot bids it over a partner's denomination."""
JUMP_MARGIN: Final = 4.0
"""How far beyond a band's start the estimate must go before the bot jumps to the higher band."""
REDOUBLE_MARGIN: Final = 10.0
"""How far above the contract the team's estimate must be before the bot redoubles (a double shows
strength against it, so the bar is high)."""


def choose_call(view: View) -> Call:
    """The call to make: redouble or pass after a double; otherwise pass, double or bid."""
    legal = view.legal_moves
    if REDOUBLE in legal:
        return REDOUBLE if should_redouble(view) else PASS
    high = view.high_bid
    if high is not None and view.team_of[high.seat] == view.team:
        return PASS  # a partner holds the bid: outbidding them only raises the stakes
    if DOUBLE in legal and should_double(view):
        return DOUBLE
    call = best_bid(view)
    return call if call is not None and call in legal else PASS


def best_bid(view: View) -> Call | None:
    """The bid to make, or None to pass: the lowest legal number in the denomination the team is
    strongest in, if the estimate (less the safety margin) reaches it; a jump to a richer band only when
    the estimate clears it comfortably."""
    current = view.high_bid.number if view.high_bid is not None else 0
    lowest = max(MIN_BID, current + 1)
    if lowest > MAX_BID:
        return None
    estimates = team_estimates(view)
    denomination = choose_denomination(view, estimates)
    limit = estimates[denomination] - model_for(table_shape(view)).margin
    if limit < lowest:
        return None
    number = lowest
    for band in BAND_STARTS:
        if number < band <= limit - JUMP_MARGIN:
            number = band
    return bid_call(view, denomination, number, current, int(limit))


def choose_denomination(view: View, estimates: dict[Suit | None, float]) -> Suit | None:
    """The best denomination: no trumps only for a balanced hand, a partner's denomination unless a
    suit of its own is clearly better."""
    candidates: list[Suit | None] = list(Suit)
    if is_balanced(view.hand):
        candidates.append(None)
    best = max(candidates, key=lambda denomination: estimates[denomination])
    supported = [call.suit for _, call, _ in bids_by(view, partner_seats(view))]
    if supported:
        partners_choice = supported[-1]
        if estimates[partners_choice] >= estimates[best] - SUPPORT_PREFERENCE:
            return partners_choice
    return best


def bid_call(view: View, denomination: Suit | None, number: int, current: int, limit: int) -> Call:
    """The bid making `number` in `denomination`, in the form that tells partners the truth about the
    hand (docs/rules.md#bid-forms): plus form for a holding of only top cards when the increment fits, the
    number-first form with the jack, suit-first without it; noes when void in the suit last named."""
    if denomination is None:
        named = last_named_suit(view)
        if named is not None and not view.cards_of(named):
            return Call(CallKind.BID, BidForm.NOES, number)
        return Call(CallKind.BID, BidForm.NO_TRUMPS, number)
    held = view.cards_of(denomination)
    if current and held and all(card.rank in TOP_RANKS for card in held):
        increment = len(held)
        if number <= current + increment <= min(limit, MAX_BID):
            return Call(CallKind.BID, BidForm.PLUS_SUIT, increment, denomination)
    form = BidForm.NUMBER_SUIT if any(card.rank is Rank.JACK for card in held) else BidForm.SUIT_NUMBER
    return Call(CallKind.BID, form, number, denomination)


def strong_in_trumps(hand: Sequence[Card], trump: Suit | None, number: int) -> bool:
    """Whether the hand holds the top of `trump` with length: a jack and a nine with a long suit, or a
    jack with a longer one; against no trumps, three jacks. Self-play showed weaker holdings defeat a
    sensibly bid contract too rarely (a double pays only when it fails more than a third of the time);
    against a contract of 40 or more the hand may be one card shorter."""
    if trump is None:
        return sum(1 for card in hand if card.rank is Rank.JACK) >= 3
    held = [card for card in hand if card.suit is trump]
    jacks = sum(1 for card in held if card.rank is Rank.JACK)
    nines = sum(1 for card in held if card.rank is Rank.NINE)
    long = len(hand) // 4 + 1 - (1 if number >= BAND_STARTS[0] else 0)
    return jacks >= 1 and len(held) >= (long if nines else long + 1)


def should_double(view: View) -> bool:
    """Double an opponent's bid only holding the top of their trumps."""
    high = view.high_bid
    return high is not None and strong_in_trumps(view.hand, high.trump, high.number)


def should_redouble(view: View) -> bool:
    """Redouble only when the team's estimate in the contract's denomination clears it comfortably."""
    high = view.high_bid
    if high is None:
        return False
    return team_estimates(view)[high.trump] >= high.number + REDOUBLE_MARGIN


# Counting the cards.


@dataclass(slots=True)
class Knowledge:
    """What the seat knows about the cards it cannot see at a play decision.

    `unseen_count` counts each suit's cards in other hands (the pack less this hand and every card
    played), `top_unseen` is the highest rank of each suit among them (-1 when none is out), both by
    suit; `voids` the suits each seat has shown out of, `hand_size` the cards each hand was dealt.
    Plain values, and not frozen: a play-out keeps one up to date card by card rather than build a
    view at every card (`strong_bot.RulePlay`).
    """

    trump: Suit | None
    unseen_count: Sequence[int]
    top_unseen: Sequence[int]
    voids: Mapping[int, AbstractSet[Suit]]
    hand_size: int


def know(view: View) -> Knowledge:
    """Count the cards: how many of each suit are still out, which is the top of each suit, who is void
    in what."""
    unseen_count = [0] * len(Suit)
    top_unseen = [-1] * len(Suit)
    for card in view.unseen_cards:  # in display order: a suit's first card is its highest
        if not unseen_count[card.suit]:
            top_unseen[card.suit] = card.rank
        unseen_count[card.suit] += 1
    return Knowledge(view.trump, unseen_count, top_unseen, view.voids, hand_size_for(len(view.seats)))


@dataclass(slots=True)
class Position:
    """Where the seat stands at a play decision: what the card play reads of its hand, of the trick on
    the table and of the auction. Plain values, for the reason `Knowledge` gives."""

    suit_lengths: Sequence[int]
    """The seat's cards of each suit, by suit."""
    led: Suit | None
    """The suit led to the trick on the table; None when the seat is to lead."""
    winning: Card | None
    """The card winning the trick on the table so far."""
    partner_winning: bool
    """Whether a partner played it."""
    trick_points: int
    opponents_after: tuple[int, ...]
    """The opponents still to play to the trick after this seat (every opponent, when it leads)."""
    contracting: bool
    """Whether the seat's team holds the contract."""
    jack_suits: tuple[Suit, ...]
    """The suits in which a partner signalled the jack (`jack_signals`), in the order bid."""


def position_of(view: View) -> Position:
    """The position of the seat to play in `view`."""
    seat, team_of, team = view.seat, view.team_of, view.team
    suit_lengths = [0] * len(Suit)
    for card in view.hand:
        suit_lengths[card.suit] += 1
    winner = view.winning_play
    contract = view.contract
    return Position(
        suit_lengths=suit_lengths,
        led=view.led_suit,
        winning=winner.card if winner is not None else None,
        partner_winning=winner is not None and team_of[winner.seat] == team,
        trick_points=view.trick_points,
        opponents_after=tuple(other for other in view.seats_to_play if team_of[other] != team),
        contracting=contract is not None and contract.team == team,
        jack_suits=tuple(
            suit for bidder, suit in jack_signals(view.calls) if bidder != seat and team_of[bidder] == team
        ),
    )


def jack_signals(calls: Iterable[tuple[int, Call]]) -> list[tuple[int, Suit]]:
    """The number-first bids of an auction (`28S`: the bidder holds the jack of spades), as the bidder's
    seat and the suit, in order."""
    return [
        (seat, call.suit)
        for seat, call in calls
        if call.form is BidForm.NUMBER_SUIT and call.suit is not None
    ]


def is_master(card: Card, knowledge: Knowledge) -> bool:
    """Whether no card still out in other hands outranks `card` in its suit (an identical card does not:
    the first played wins)."""
    return card.rank >= knowledge.top_unseen[card.suit]


def beats(card: Card, winning: Card, trump: Suit | None) -> bool:
    """Whether `card` played now takes the trick from `winning` (a card of the suit led or a trump)."""
    if card.suit is winning.suit:
        return card.rank > winning.rank
    return card.suit is trump


def may_beat(seat: int, card: Card, led: Suit, knowledge: Knowledge) -> bool:
    """Whether `seat`, yet to play, might take the trick from `card`: with a higher card of the suit led
    while it may still hold one, or with a trump (a higher one, over a trump) once it is void in the suit
    led. A seat counts as void only once it has shown out or the suit is all out: guessing voids from
    thin suits made the bot too timid to take tricks (measured in self-play)."""
    trump = knowledge.trump
    voids = knowledge.voids[seat]
    void_in_led = led in voids or knowledge.unseen_count[led] == 0
    if card.suit is led and not void_in_led and knowledge.top_unseen[led] > card.rank:
        return True
    if trump is None or trump is led or trump in voids or not void_in_led:
        return False
    if card.suit is led:
        return knowledge.unseen_count[trump] > 0
    return knowledge.top_unseen[trump] > card.rank


def holds(card: Card, led: Suit, knowledge: Knowledge, opponents: Iterable[int]) -> bool:
    """Whether `card`, winning a trick to which `led` was led (or which it leads) now, keeps it against
    every one of `opponents` still to play."""
    return not any(may_beat(seat, card, led, knowledge) for seat in opponents)


def keep_value(card: Card, position: Position, knowledge: Knowledge) -> float:
    """How much the seat wants to keep `card`: trumps, masters and points most; a card of a short suit
    least (throwing it brings a void, and a void a ruff)."""
    value = 8.0 * card.points + card.rank + 0.5 * position.suit_lengths[card.suit]
    if card.suit is knowledge.trump:
        value += 50.0
    if is_master(card, knowledge):
        value += 20.0
    return value


def lowest(cards: Sequence[Card], position: Position, knowledge: Knowledge) -> Card:
    """The card the seat minds losing least."""
    return min(cards, key=lambda card: keep_value(card, position, knowledge))


BY_RANK: Final = attrgetter("rank")
"""`key=` for cards by rank (an attribute read in C, not a call of Python code)."""


# The play.


def choose_card(view: View) -> Card:
    """The card to play: a lead, or a card to the trick on the table."""
    cards = [move for move in view.legal_moves if isinstance(move, Card)]
    position, knowledge = position_of(view), know(view)
    if not view.trick:
        return choose_lead(position, cards, knowledge)
    return choose_follow(position, cards, knowledge)


def choose_follow(position: Position, cards: list[Card], knowledge: Knowledge) -> Card:
    """Follow to a trick: feed points to a partner who wins it safely, take it with the cheapest card
    that keeps it when it is worth taking, and otherwise play the card minded least."""
    winning, led, after = position.winning, position.led, position.opponents_after
    assert winning is not None
    assert led is not None
    if position.partner_winning and holds(winning, led, knowledge, after):
        return feed(position, cards, knowledge)
    # An opponent wins the trick, or the partner may yet lose it: take it if it can be kept.
    beaters = sorted((card for card in cards if beats(card, winning, knowledge.trump)), key=BY_RANK)
    keeper = next((card for card in beaters if holds(card, led, knowledge, after)), None)
    if keeper is not None and worth_taking(position, keeper, knowledge):
        return keeper
    return lowest(cards, position, knowledge)


def worth_taking(position: Position, card: Card, knowledge: Knowledge) -> bool:
    """Whether to take the trick with `card`: a ruff only for a trick with points (two or more while
    the hand is long: trumps are worth keeping), a card of the suit led whenever the trick would carry
    points, the card's own included (a master held back may be ruffed later)."""
    if card.suit is knowledge.trump and position.led is not knowledge.trump:
        early = sum(position.suit_lengths) > knowledge.hand_size // 2
        return position.trick_points >= (2 if early else 1)
    return position.trick_points + card.points >= 1


def feed(position: Position, cards: list[Card], knowledge: Knowledge) -> Card:
    """The card to throw on a trick the partner wins: the most points that are not a master (a master
    takes its own trick later) and not a trump (unless trumps were led)."""
    trump = knowledge.trump
    givable = [
        card
        for card in cards
        if card.points
        and not is_master(card, knowledge)
        and (card.suit is not trump or position.led is trump)
    ]
    if givable:
        return max(givable, key=lambda card: (card.points, -card.rank))
    return lowest(cards, position, knowledge)


def choose_lead(position: Position, cards: list[Card], knowledge: Knowledge) -> Card:
    """Lead: draw trumps as the contracting side holding the top trump; cash a master that cannot be
    ruffed; lead towards a partner's shown jack; otherwise lead low from the longest side suit."""
    trump = knowledge.trump
    opponents = position.opponents_after
    if trump is not None and position.contracting and opponents_may_hold(opponents, trump, knowledge):
        top_trumps = [card for card in cards if card.suit is trump and is_master(card, knowledge)]
        if top_trumps:
            return min(top_trumps, key=BY_RANK)
    masters = [
        card
        for card in cards
        if card.suit is not trump
        and is_master(card, knowledge)
        and holds(card, card.suit, knowledge, opponents)
    ]
    if masters:
        return max(masters, key=lambda card: (card.points, knowledge.unseen_count[card.suit], -card.rank))
    for suit in position.jack_suits:
        if knowledge.top_unseen[suit] == Rank.JACK:  # the partner's jack is still out
            held = [card for card in cards if card.suit is suit]
            if held:
                return lowest(held, position, knowledge)
    side = [card for card in cards if card.suit is not trump] or cards
    return lead_low(position, side, knowledge)


def opponents_may_hold(opponents: Iterable[int], suit: Suit, knowledge: Knowledge) -> bool:
    """Whether a card of `suit` is still out and one of `opponents` has not shown out of it."""
    if knowledge.unseen_count[suit] == 0:
        return False
    return any(suit not in knowledge.voids[seat] for seat in opponents)


def lead_low(position: Position, cards: list[Card], knowledge: Knowledge) -> Card:
    """The lowest card of the longest suit, preferring a suit whose lowest card carries no points."""
    by_suit: dict[Suit, list[Card]] = {}
    for card in cards:
        by_suit.setdefault(card.suit, []).append(card)
    suit = min(
        by_suit,
        key=lambda suit: (lowest(by_suit[suit], position, knowledge).points, -len(by_suit[suit]), suit),
    )
    return lowest(by_suit[suit], position, knowledge)


# The bot.


def fallback(view: View) -> Move:
    """A safe legal move when a rule came up with an illegal one: pass, or the card minded least."""
    legal = view.legal_moves
    if PASS in legal:
        return PASS
    cards = [move for move in legal if isinstance(move, Card)]
    return lowest(cards, position_of(view), know(view)) if cards else legal[0]


class RuleBot(Bot):
    """Bids from hand strength with honest signals, plays by counting cards (see the module's doc).

    It needs none of the hooks: every decision is worked out afresh from the view, without randomness.
    """

    name = "rules"
    version = "1.0.0"
    author = "fiftysix arena"

    def decide(self, view: BotView) -> Move:
        """A call during the auction, a card during the play; always one of `view.legal_moves`."""
        return decide(view)


def decide(view: View) -> Move:
    """The rule bot's move for any view of a seat to act (a plain function, for tests and reuse)."""
    if not view.legal_moves:
        raise ValueError(f"seat {view.seat} is not to act: there is no legal move to choose")
    move: Move = choose_call(view) if view.phase is Phase.AUCTION else choose_card(view)
    return move if move in view.legal_moves else fallback(view)


if __name__ == "__main__":
    run_bot(RuleBot)
