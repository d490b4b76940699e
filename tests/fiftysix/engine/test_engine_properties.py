"""Invariants of the engine under random legal play, over 4, 6 and 8 players and both rulesets.

Hypothesis draws only small values (a seed, a player count, a ruleset, a seat); the moves come from
`random.Random(seed)`, so failing examples shrink to a seed that replays the whole match.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import pytest
from engine_helpers import ALL_CALLS, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftysix.engine import (
    ALL_CARDS,
    PASS,
    STARTING_TABLES,
    Card,
    DealResult,
    FixedFirstDeal,
    IllegalMoveError,
    Match,
    MatchOverError,
    MatchRules,
    Move,
    Phase,
    Ruleset,
    ShuffledDeals,
    View,
    table_amount,
)

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

players_st = st.sampled_from([4, 6, 8])
rulesets_st = st.sampled_from(list(Ruleset))
seeds_st = st.integers(min_value=0, max_value=2**32 - 1)
pass_probabilities_st = st.sampled_from([0.0, 0.6, 0.85])

EVERY_MOVE: tuple[Move, ...] = (*ALL_CALLS, *ALL_CARDS)


def choose(match: Match, rng: random.Random, pass_probability: float) -> Move:
    """A random legal move; in the auction a pass with `pass_probability`, so contracts vary."""
    legal = match.legal_moves()
    if match.deal.phase is Phase.AUCTION and PASS in legal and rng.random() < pass_probability:
        return PASS
    return rng.choice(list(legal))


def play_match(match: Match, seed: int, pass_probability: float) -> tuple[list[tuple[int, str]], int]:
    """Play `match` to its end with random legal moves; the moves made and how many there were."""
    rng = random.Random(seed)
    record = []
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        move = choose(match, rng, pass_probability)
        record.append((seat, str(move)))
        match.apply(seat, move)
    return record, len(record)


def match_state(match: Match) -> tuple[object, ...]:
    """Everything observable about a match, for checking that a rejected move changed nothing."""
    return (
        snapshot(match.deal),
        match.deal_number,
        tuple(match.tables),
        match.to_act,
        match.is_over,
        len(match.results),
        tuple(match.view(seat) for seat in range(match.rules.players)),
    )


def check_result(match: Match, result: DealResult, tables_before: Sequence[int]) -> None:
    """The invariants of one settled deal."""
    team_count = match.rules.team_count
    assert sum(result.points) == 56
    assert sum(match.tables) == STARTING_TABLES * team_count
    assert all(tables >= 0 for tables in match.tables)
    contract = result.contract
    assert result.made == (result.points[contract.team] >= contract.number)
    amount = table_amount(contract.number, result.made, contract.doubling)
    moved = [0] * team_count
    for payment in result.payments:
        assert 0 < payment.tables <= amount
        assert (payment.payee if result.made else payment.payer) == contract.team
        moved[payment.payer] -= payment.tables
        moved[payment.payee] += payment.tables
    assert [before + change for before, change in zip(tables_before, moved, strict=True)] == match.tables
    assert all(match.tables[team] == 0 for team in result.teams_out)
    for trick in result.tricks:
        # The view's own reckoning of the trick agrees with the engine's.
        view = dataclasses.replace(match.view(0), trick=trick.plays, contract=contract)
        winning = view.winning_play
        assert winning is not None
        assert winning.seat == trick.winner


@PROPERTY_SETTINGS
@given(
    players=players_st,
    ruleset=rulesets_st,
    seed=seeds_st,
    pass_probability=pass_probabilities_st,
)
def test_random_play_keeps_every_invariant(
    players: int, ruleset: Ruleset, seed: int, pass_probability: float
) -> None:
    rules = MatchRules(players, ruleset, deal_cap=6)
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    tables_before = list(match.tables)
    while not match.is_over:
        seat = match.to_act
        # Exactly one seat to act, at the table, with moves to make.
        assert seat is not None
        assert seat in match.deal.seats
        assert match.view(seat).is_to_act
        assert sum(match.view(other).is_to_act for other in range(players)) == 1
        legal = list(match.legal_moves())
        assert legal
        assert len(set(legal)) == len(legal)
        # Every listed move applies, on a copy, and leaves the original alone.
        before = snapshot(match.deal)
        for move in legal:
            trial = match.deal.copy()
            trial.apply(seat, move)
        assert snapshot(match.deal) == before
        # A move not listed is refused and changes nothing; so is any move out of turn.
        state = match_state(match)
        illegal = rng.choice([move for move in EVERY_MOVE if move not in legal])
        with pytest.raises(IllegalMoveError) as refused:
            match.apply(seat, illegal)
        assert refused.value.rule
        other = rng.choice([other for other in range(players) if other != seat])
        with pytest.raises(IllegalMoveError) as refused:
            match.apply(other, rng.choice(legal))
        assert refused.value.rule == "turn"
        assert match_state(match) == state
        result = match.apply(seat, choose(match, rng, pass_probability))
        if result is not None:
            check_result(match, result, tables_before)
            tables_before = list(match.tables)
    assert match.to_act is None
    assert match.legal_moves() == ()
    assert len(match.teams_in) == 1 or match.deal_number == 6
    with pytest.raises(MatchOverError):
        match.apply(0, PASS)


@PROPERTY_SETTINGS
@given(players=players_st, ruleset=rulesets_st, seed=seeds_st, pass_probability=st.sampled_from([0.0, 0.6]))
def test_random_play_ends_the_match_with_one_team_left(
    players: int, ruleset: Ruleset, seed: int, pass_probability: float
) -> None:
    match = Match(MatchRules(players, ruleset), seed=seed)
    _, moves = play_match(match, seed, pass_probability)
    assert moves > 0
    assert match.is_over
    assert len(match.teams_in) == 1
    winner = match.teams_in[0]
    ranking = match.ranking()
    assert ranking[winner] == 1
    assert all(rank > 1 for team, rank in enumerate(ranking) if team != winner)
    assert match.tables[winner] == STARTING_TABLES * match.rules.team_count
    for result in match.results:
        assert sum(result.points) == 56
        assert sum(result.tables) == STARTING_TABLES * match.rules.team_count
    # Teams out in the same deal rank equal; out later ranks higher.
    for team in range(match.rules.team_count):
        for other in range(match.rules.team_count):
            if team in match.out_in_deal and other in match.out_in_deal:
                earlier = match.out_in_deal[team] < match.out_in_deal[other]
                same = match.out_in_deal[team] == match.out_in_deal[other]
                assert (ranking[team] > ranking[other]) == earlier
                assert (ranking[team] == ranking[other]) == same


@PROPERTY_SETTINGS
@given(players=players_st, ruleset=rulesets_st, seed=seeds_st)
def test_the_same_seed_gives_the_same_match(players: int, ruleset: Ruleset, seed: int) -> None:
    rules = MatchRules(players, ruleset, deal_cap=8)
    first, second = Match(rules, seed=seed), Match(rules, seed=seed)
    assert play_match(first, seed, 0.6) == play_match(second, seed, 0.6)
    assert first.results == second.results
    assert first.tables == second.tables
    assert first.ranking() == second.ranking()


def cards_in(value: object) -> Iterator[Card]:
    """Every card anywhere inside `value`: in dataclasses, tuples and lists, at any depth."""
    if isinstance(value, Card):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from cards_in(getattr(value, field.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from cards_in(item)


def check_view_shows_only_own_cards(match: Match, seat: int, view: View) -> None:
    """The view holds the seat's hand exactly, and no card but those and the cards played."""
    dealt = match.deal.dealt[seat]
    played = [play for trick in view.tricks for play in trick.plays] + list(view.trick)
    played_by_seat = Counter(play.card for play in played if play.seat == seat)
    assert view.hand == tuple(match.deal.hands[seat])
    assert Counter(view.hand) + played_by_seat == Counter(dealt)
    private = [*view.hand, *(move for move in view.legal_moves if isinstance(move, Card))]
    assert Counter(cards_in(view)) == Counter(private) + Counter(play.card for play in played)


@PROPERTY_SETTINGS
@given(
    players=players_st,
    ruleset=rulesets_st,
    seed=seeds_st,
    seat_index=st.integers(min_value=0, max_value=7),
    pass_probability=pass_probabilities_st,
)
def test_a_view_does_not_depend_on_other_seats_cards(
    players: int, ruleset: Ruleset, seed: int, seat_index: int, pass_probability: float
) -> None:
    seat = seat_index % players
    rng = random.Random(seed)
    dealer = rng.randrange(players)
    seats = tuple(range(players))
    hands = ShuffledDeals(seed).hands(1, seats, dealer)
    # The same deal except that the other seats' cards are shuffled among them, hand sizes kept.
    others = [other for other in seats if other != seat]
    pool = [card for other in others for card in hands[other]]
    rng.shuffle(pool)
    size = len(hands[seat])
    permuted = {seat: list(hands[seat])}
    permuted |= {other: pool[i * size : (i + 1) * size] for i, other in enumerate(others)}
    rules = MatchRules(players, ruleset)
    actual = Match(rules, deals=FixedFirstDeal(hands, seed), first_dealer=dealer)
    shuffled = Match(rules, deals=FixedFirstDeal(permuted, seed), first_dealer=dealer)

    def compare() -> None:
        view = actual.view(seat)
        assert shuffled.view(seat) == view
        check_view_shows_only_own_cards(actual, seat, view)
        check_view_shows_only_own_cards(shuffled, seat, shuffled.view(seat))

    compare()
    # Make the same public moves in both for as long as both deals allow them.
    while actual.deal_number == 1 and not actual.is_over:
        to_act = actual.to_act
        assert to_act is not None
        assert shuffled.to_act == to_act
        common = [move for move in actual.legal_moves() if move in shuffled.legal_moves()]
        if to_act == seat:
            assert list(actual.legal_moves()) == list(shuffled.legal_moves())
        if not common:
            break
        if actual.deal.phase is Phase.AUCTION and PASS in common and rng.random() < pass_probability:
            move: Move = PASS
        else:
            move = rng.choice(common)
        actual.apply(to_act, move)
        shuffled.apply(to_act, move)
        if actual.deal_number == 1:
            compare()  # (the next deal is a shuffle shared by both)


def suit_preserving_shuffle(
    hands: Mapping[int, Sequence[Card]], keep: Mapping[int, Counter[Card]], rng: random.Random
) -> dict[int, list[Card]]:
    """`hands` with the cards outside `keep` shuffled among the seats that hold them, suit by suit.

    Each seat keeps its `keep` cards and its number of cards of every suit, so any play that followed
    suit (or showed a void) before is still legal with the new hands.
    """
    loose = {
        seat: list((Counter(hand) - keep.get(seat, Counter())).elements()) for seat, hand in hands.items()
    }
    new = {seat: list(keep.get(seat, Counter()).elements()) for seat in hands}
    for suit in {card.suit for cards in loose.values() for card in cards}:
        pool = [card for seat in hands for card in loose[seat] if card.suit is suit]
        rng.shuffle(pool)
        for seat in hands:
            count = sum(1 for card in loose[seat] if card.suit is suit)
            new[seat] += pool[:count]
            del pool[:count]
    return new


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=players_st,
    ruleset=rulesets_st,
    seed=seeds_st,
    seat_index=st.integers(min_value=0, max_value=7),
    cut=st.floats(min_value=0, max_value=1),
)
def test_a_view_in_the_play_does_not_depend_on_unplayed_cards_of_others(
    players: int, ruleset: Ruleset, seed: int, seat_index: int, cut: float
) -> None:
    seat = seat_index % players
    rng = random.Random(seed)
    dealer = rng.randrange(players)
    hands = ShuffledDeals(seed).hands(1, tuple(range(players)), dealer)
    rules = MatchRules(players, ruleset)
    # Play deal 1 at random and pick a moment in it.
    played = Match(rules, deals=FixedFirstDeal(hands, seed), first_dealer=dealer)
    moves: list[tuple[int, Move]] = []
    while played.deal_number == 1 and not played.is_over:
        to_act = played.to_act
        assert to_act is not None
        move = choose(played, rng, 0.7)
        moves.append((to_act, move))
        played.apply(to_act, move)
    moves = moves[: int(cut * (len(moves) - 1))]
    # Re-deal: the other seats' cards not played by that moment change places, suit by suit.
    keep = {
        other: Counter(move for who, move in moves if who == other and isinstance(move, Card))
        for other in hands
    }
    keep[seat] = Counter(hands[seat])
    permuted = suit_preserving_shuffle(hands, keep, rng)
    actual = Match(rules, deals=FixedFirstDeal(hands, seed), first_dealer=dealer)
    shuffled = Match(rules, deals=FixedFirstDeal(permuted, seed), first_dealer=dealer)
    for to_act, move in [*moves, (-1, PASS)]:
        view = actual.view(seat)
        assert shuffled.view(seat) == view
        check_view_shows_only_own_cards(actual, seat, view)
        if to_act >= 0:
            actual.apply(to_act, move)
            shuffled.apply(to_act, move)
