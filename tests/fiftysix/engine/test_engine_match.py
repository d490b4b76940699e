"""A match (docs/rules.md#the-deal, docs/rules.md#teams-going-out, docs/rules.md#the-end-of-the-match):
dealers, teams going out, smaller tables, the end, the ranking."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import (
    PLAYER_COUNTS,
    RULESETS,
    StrongSeatDeals,
    finish_deal,
    make_match,
    team_of_seats,
)

from fiftysix.engine import (
    MAX_DEAL_CAP,
    PASS,
    STARTING_TABLES,
    DealResult,
    EndReason,
    IllegalMoveError,
    Match,
    MatchOverError,
    MatchRules,
    Rank,
    Ruleset,
    ShuffledDeals,
    first_dealer_for,
    hand_size_for,
    pack_for,
    parse_call,
)


def all_pass(match: Match) -> DealResult:
    """Pass out the current deal (the team on the dealer's right is contracted) and play it out."""
    return finish_deal(match)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_a_new_match(players: int, ruleset: Ruleset) -> None:
    match = Match(MatchRules(players, ruleset), seed=3)
    teams = team_of_seats(players, ruleset)
    assert match.team_of == teams
    assert match.tables == [STARTING_TABLES] * len(set(teams))
    assert match.teams_in == tuple(range(len(set(teams))))
    assert match.seats == tuple(range(players))
    assert match.deal_number == 1
    assert match.dealer == first_dealer_for(3, players)
    assert match.to_act == (match.dealer + 1) % players
    assert not match.is_over
    assert match.results == []
    assert all(len(match.deal.hands[seat]) == hand_size_for(players) for seat in range(players))


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_the_dealer_passes_to_the_right(players: int) -> None:
    match = make_match(players, first_dealer=players - 2)
    dealers = []
    for _ in range(players + 1):
        dealers.append(match.dealer)
        result = all_pass(match)
        assert result.dealer == dealers[-1]
        assert not match.is_over
    assert dealers == [(players - 2 + i) % players for i in range(players + 1)]


def test_eight_players_fall_to_six_then_four() -> None:
    source = StrongSeatDeals()
    match = Match(MatchRules(8), deals=source, first_dealer=7)
    match.tables = [23, 12, 12, 1]

    # Deal 1: seat 0's team takes 1 table from each team; team 3 (seats 3 and 7) goes out.
    result = all_pass(match)
    assert result.teams_out == (3,)
    assert match.tables == [26, 11, 11, 0]
    assert match.teams_in == (0, 1, 2)
    assert match.seats == (0, 1, 2, 4, 5, 6)
    assert match.dealer == 0  # the next remaining seat after seat 7
    assert match.deal.seats == (0, 1, 2, 4, 5, 6)
    dealt = [card for seat in match.deal.seats for card in match.deal.hands[seat]]
    assert Counter(dealt) == Counter(pack_for(6))
    assert len(dealt) == 48
    assert {card.rank for card in dealt}.isdisjoint({Rank.EIGHT, Rank.SEVEN})
    assert all(len(match.deal.hands[seat]) == 8 for seat in match.deal.seats)
    assert match.deal.hands[3] == match.deal.hands[7] == []
    assert match.view(3).hand == ()
    assert match.to_act == 1

    # Deal 2: seat 1's team takes 1 table from teams 0 and 2; team 2 goes out.
    match.tables = [36, 11, 1, 0]
    result = all_pass(match)
    assert result.teams_out == (2,)
    assert match.tables == [35, 13, 0, 0]
    assert match.seats == (0, 1, 4, 5)
    assert match.dealer == 1
    dealt = [card for seat in match.deal.seats for card in match.deal.hands[seat]]
    assert Counter(dealt) == Counter(pack_for(4))
    assert all(len(match.deal.hands[seat]) == 12 for seat in match.deal.seats)
    assert match.to_act == 4

    # Deal 3: seat 4's team takes team 1's last table and wins.
    match.tables = [47, 1, 0, 0]
    result = all_pass(match)
    assert result.teams_out == (1,)
    assert match.is_over
    assert match.teams_in == (0,)
    assert match.ranking() == (1, 2, 3, 4)
    assert source.dealt == [
        (1, (0, 1, 2, 3, 4, 5, 6, 7), 7),
        (2, (0, 1, 2, 4, 5, 6), 0),
        (3, (0, 1, 4, 5), 1),
    ]


def test_the_dealer_passes_over_seats_that_left() -> None:
    # Dealer 0; seat 2 (team 2) holds the top spades and bids; team 1 (seats 1 and 4) pays its last table.
    match = make_match(6, first_dealer=0, tables=[12, 1, 23], strong={1: 2})
    result = finish_deal(match, "pass 28S")
    assert result.made
    assert result.teams_out == (1,)
    assert match.seats == (0, 2, 3, 5)
    assert match.dealer == 2
    assert match.to_act == 3


def test_the_dealer_passes_on_when_the_dealers_own_team_went_out() -> None:
    # Dealer 2 (team 2, with seat 5) pays its last table to seat 3's team.
    match = make_match(6, first_dealer=2, tables=[23, 12, 1])
    result = all_pass(match)
    assert result.teams_out == (2,)
    assert match.seats == (0, 1, 3, 4)
    assert match.dealer == 3
    assert match.to_act == 4
    # And from a dealer whose team went out, past further seats that left:
    match = make_match(8, first_dealer=3, tables=[12, 12, 23, 1], strong={1: 6})
    result = finish_deal(match, "pass pass 28S")  # seat 6 bids; teams 3, 0 and 1 pay
    assert result.teams_out == (3,)
    assert match.seats == (0, 1, 2, 4, 5, 6)
    assert match.dealer == 4


def test_the_match_ends_when_one_team_is_left() -> None:
    match = make_match(4, first_dealer=3, tables=[23, 1])
    assert match.end_reason is None
    result = all_pass(match)
    assert result.teams_out == (1,)
    assert match.is_over
    assert match.end_reason is EndReason.ONE_TEAM_LEFT
    assert match.to_act is None
    assert match.legal_moves() == ()
    assert match.ranking() == (1, 2)
    with pytest.raises(MatchOverError, match="the match is over"):
        match.apply(0, PASS)
    assert match.results == [result]


def test_teams_out_in_the_same_deal_rank_equal_and_later_ranks_higher() -> None:
    match = make_match(8, first_dealer=7, tables=[44, 1, 1, 2])
    result = all_pass(match)  # team 0 takes a table from each: teams 1 and 2 go out
    assert result.teams_out == (1, 2)
    assert match.seats == (0, 3, 4, 7)
    assert match.view(0).teams_out == (1, 2)
    # Eight players straight down to four: the 48-card pack in hands of 12.
    assert sorted(card for seat in match.seats for card in match.deal.hands[seat]) == list(pack_for(4))
    assert all(len(match.deal.hands[seat]) == 12 for seat in match.seats)
    match.tables = [1, 0, 0, 47]
    result = all_pass(match)  # dealer 0: seat 3's team takes team 0's last table
    assert result.teams_out == (0,)
    assert match.is_over
    assert match.ranking() == (2, 3, 3, 1)
    assert match.view(5).teams_out == (1, 2, 0)


def test_all_other_teams_out_at_once_ends_the_match() -> None:
    match = make_match(8, first_dealer=7, tables=[45, 1, 1, 1])
    all_pass(match)
    assert match.is_over
    assert match.ranking() == (1, 2, 2, 2)


def test_a_deal_cap_ends_the_match_and_ranks_by_tables() -> None:
    match = make_match(6, first_dealer=5, deal_cap=2)
    all_pass(match)  # team 0 takes 1 from each
    assert not match.is_over
    assert match.end_reason is None
    all_pass(match)  # team 1 takes 1 from each
    assert match.is_over
    assert match.end_reason is EndReason.DEAL_CAP
    assert match.to_act is None
    assert match.tables == [13, 13, 10]
    ranking = match.ranking()
    assert ranking[0] == ranking[1] == 1
    assert ranking[2] > 1


def test_at_the_cap_teams_still_in_rank_above_teams_out() -> None:
    match = make_match(6, first_dealer=5, tables=[22, 1, 13], deal_cap=1)
    all_pass(match)
    assert match.is_over
    assert match.tables == [24, 0, 12]
    assert match.ranking() == (1, 3, 2)


def test_teams_named_last_rank_below_all_others() -> None:
    # An arena's forfeit policy, not a rule: the forfeiting team ranks last whatever its tables.
    match = make_match(6, first_dealer=5, deal_cap=1)
    all_pass(match)
    assert match.tables == [14, 11, 11]
    assert match.ranking() == (1, 2, 2)
    forfeit = match.ranking(last={0})
    assert forfeit[1] == forfeit[2] == 1
    assert forfeit[0] > forfeit[1]


def test_a_deal_cap_of_one_allows_a_single_deal() -> None:
    match = Match(MatchRules(4, deal_cap=1), seed=9)
    rng = random.Random(9)
    while not match.is_over:
        assert match.deal_number == 1
        seat = match.to_act
        assert seat is not None
        match.apply(seat, rng.choice(list(match.legal_moves())))
    assert len(match.results) == 1


@pytest.mark.parametrize(
    ("players", "dealer", "tables", "strong", "calls", "winner"),
    [
        (4, 3, [23, 1], None, "", 0),
        (6, 5, [23, 1], None, "", 0),
        (8, 7, [23, 1], None, "pass 28S", 0),  # seat 1 bids and loses to seat 0's sweep
        (6, 5, [1, 23], 1, "28S", 1),  # seat 0 bids and loses to seat 1's spades
        (8, 2, [1, 23], None, "", 1),  # all pass: seat 3 is contracted and sweeps
    ],
)
def test_partnership_ends_when_one_of_the_two_teams_is_out(
    players: int, dealer: int, tables: list[int], strong: int | None, calls: str, winner: int
) -> None:
    match = make_match(
        players, dealer, tables, Ruleset.PARTNERSHIP, strong={1: strong} if strong is not None else None
    )
    assert match.team_of == tuple(seat % 2 for seat in range(players))
    result = finish_deal(match, calls)
    assert match.is_over
    assert match.teams_in == (winner,)
    assert result.teams_out == (1 - winner,)
    assert match.ranking()[winner] == 1
    assert match.ranking()[1 - winner] == 2


def test_partnership_plays_on_with_all_seats_while_both_teams_have_tables() -> None:
    match = make_match(6, 5, ruleset=Ruleset.PARTNERSHIP)
    for _ in range(3):
        all_pass(match)
        assert match.seats == tuple(range(6))
        assert len(match.tables) == 2
        assert sum(match.tables) == 24


def play_randomly(match: Match, rng: random.Random) -> list[str]:
    """Play `match` to its end with random legal moves; the record of every move made."""
    record = []
    while not match.is_over:
        seat = match.to_act
        assert seat is not None
        move = rng.choice(list(match.legal_moves()))
        record.append(f"{seat}:{move}")
        match.apply(seat, move)
    return record


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_the_same_seed_gives_the_same_match(players: int, ruleset: Ruleset) -> None:
    first = Match(MatchRules(players, ruleset), seed=42)
    second = Match(MatchRules(players, ruleset), seed=42)
    assert first.dealer == second.dealer
    assert first.deal.dealt == second.deal.dealt
    assert play_randomly(first, random.Random(1)) == play_randomly(second, random.Random(1))
    assert first.results == second.results
    assert first.ranking() == second.ranking()


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_different_seeds_give_different_deals(players: int) -> None:
    hands = {Match(MatchRules(players), seed=seed).deal.dealt for seed in range(5)}
    assert len(hands) == 5
    dealers = {first_dealer_for(seed, players) for seed in range(50)}
    assert dealers == set(range(players))  # every seat may deal first


def test_shuffled_deals_are_reproducible_and_deal_from_the_dealers_right() -> None:
    seats = (0, 1, 2, 3, 4, 5)
    source = ShuffledDeals(11)
    hands = source.hands(1, seats, 0)
    assert hands == ShuffledDeals(11).hands(1, seats, 0)
    assert Counter(card for hand in hands.values() for card in hand) == Counter(pack_for(6))
    assert all(len(hand) == 8 for hand in hands.values())
    assert hands != source.hands(2, seats, 0)
    assert hands != ShuffledDeals(12).hands(1, seats, 0)
    # The same shuffle dealt by the next dealer: every hand moves one seat to the right.
    moved = source.hands(1, seats, 1)
    assert all(moved[(seat + 1) % 6] == hands[seat] for seat in seats)


def test_an_illegal_move_leaves_the_match_unchanged() -> None:
    match = make_match(4, first_dealer=3)
    before = (match.to_act, list(match.deal.calls), match.tables, match.deal_number)
    with pytest.raises(IllegalMoveError) as error:
        match.apply(1, PASS)
    assert error.value.rule == "turn"
    with pytest.raises(IllegalMoveError) as error:
        match.apply(0, parse_call("+2S"))
    assert error.value.rule == "plus_after_first_bid"
    assert (match.to_act, list(match.deal.calls), match.tables, match.deal_number) == before


def test_apply_returns_the_result_only_when_a_deal_ends() -> None:
    match = make_match(4, first_dealer=3)
    dealt = match.deal.dealt
    assert match.apply(0, parse_call("28S")) is None
    result = finish_deal(match)
    assert result.number == 1
    assert result.hands == dealt
    assert result.dealer == 3
    assert result.seats == (0, 1, 2, 3)
    assert match.results == [result]
    assert match.deal_number == 2
    assert result.calls[0] == (0, parse_call("28S"))
    assert len(result.tricks) == 12
    assert sum(len(hand) for hand in result.hands) == 48
    assert match.deal.dealt != dealt  # the next deal is dealt at once


@pytest.mark.parametrize(
    ("players", "ruleset", "deal_cap", "message"),
    [
        (5, Ruleset.PAIRS, None, "4, 6 or 8"),
        (2, Ruleset.PARTNERSHIP, None, "4, 6 or 8"),
        (4, Ruleset.PAIRS, 0, "deal cap must be 1 to 10,000"),
        # Would overflow the protocol's uint32 and the ladder's SQLite integer.
        (4, Ruleset.PAIRS, MAX_DEAL_CAP + 1, "deal cap must be 1 to 10,000"),
        (4, Ruleset.PAIRS, 10**20, "deal cap must be 1 to 10,000"),
    ],
)
def test_match_rules_are_checked(players: int, ruleset: Ruleset, deal_cap: int | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MatchRules(players, ruleset, deal_cap)
    assert MatchRules(4, Ruleset.PAIRS, MAX_DEAL_CAP).deal_cap == MAX_DEAL_CAP


@pytest.mark.parametrize(
    ("text", "ruleset"), [("pairs", Ruleset.PAIRS), ("Partnership", Ruleset.PARTNERSHIP)]
)
def test_ruleset_parse(text: str, ruleset: Ruleset) -> None:
    assert Ruleset.parse(text) is ruleset


def test_ruleset_parse_rejects_others() -> None:
    with pytest.raises(ValueError, match="pairs or partnership"):
        Ruleset.parse("teams")


def test_the_first_dealer_must_be_a_seat() -> None:
    with pytest.raises(ValueError, match="first dealer"):
        Match(MatchRules(4), first_dealer=4)


def test_only_two_end_reasons_are_the_rules_own() -> None:
    assert {reason for reason in EndReason if reason.by_the_rules} == {
        EndReason.ONE_TEAM_LEFT,
        EndReason.DEAL_CAP,
    }
    assert EndReason("forfeit") is EndReason.FORFEIT  # the value records and messages hold
