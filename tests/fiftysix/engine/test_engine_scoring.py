"""Scoring a deal in tables (docs/rules.md#scoring): the table of amounts and the settlement of a match."""

from __future__ import annotations

import pytest
from engine_helpers import finish_deal, make_match, team_of_seats

from fiftysix.engine import Payment, Ruleset, table_amount

# (first contract number, last contract number, won, lost): docs/rules.md#table-amounts, undoubled.
BANDS = [(28, 39, 1, 2), (40, 47, 2, 3), (48, 55, 3, 4), (56, 56, 4, 5)]


@pytest.mark.parametrize(
    ("contract", "made", "doubling", "tables"),
    [
        # Band edges, undoubled.
        (28, True, 1, 1),
        (28, False, 1, 2),
        (39, True, 1, 1),
        (39, False, 1, 2),
        (40, True, 1, 2),
        (40, False, 1, 3),
        (47, True, 1, 2),
        (47, False, 1, 3),
        (48, True, 1, 3),
        (48, False, 1, 4),
        (55, True, 1, 3),
        (55, False, 1, 4),
        (56, True, 1, 4),
        (56, False, 1, 5),
        # Doubled: times 2.
        (28, True, 2, 2),
        (39, False, 2, 4),
        (40, True, 2, 4),
        (47, False, 2, 6),
        (48, True, 2, 6),
        (55, False, 2, 8),
        (56, True, 2, 8),
        (56, False, 2, 10),
        # Redoubled: times 4.
        (28, True, 4, 4),
        (39, False, 4, 8),
        (40, True, 4, 8),
        (47, False, 4, 12),
        (48, True, 4, 12),
        (55, False, 4, 16),
        (56, True, 4, 16),
        (56, False, 4, 20),
    ],
)
def test_table_amount_edges(contract: int, made: bool, doubling: int, tables: int) -> None:
    assert table_amount(contract, made, doubling) == tables


@pytest.mark.parametrize(("low", "high", "won", "lost"), BANDS)
@pytest.mark.parametrize("doubling", [1, 2, 4])
def test_table_amount_every_row(low: int, high: int, won: int, lost: int, doubling: int) -> None:
    for contract in range(low, high + 1):
        assert table_amount(contract, True, doubling) == won * doubling
        assert table_amount(contract, False, doubling) == lost * doubling


@pytest.mark.parametrize("contract", [0, 27, 57, 100])
def test_table_amount_rejects_numbers_outside_28_to_56(contract: int) -> None:
    with pytest.raises(ValueError, match="28 to 56"):
        table_amount(contract, True, 1)


# Every deal below is dealt by `StrongSeatDeals`: the strong seat (the first leader unless given) takes
# all 56 points, so a contract is made exactly when the strong seat's team holds it.
# (players, ruleset, first dealer, strong seat, calls, tables before, payments (payer, payee, tables))
SETTLEMENTS = [
    # Four players, seat 0 leads and is strong.
    (4, Ruleset.PAIRS, 3, None, "pass pass pass pass", [12, 12], [(1, 0, 1)]),
    (4, Ruleset.PAIRS, 3, None, "28S", [12, 12], [(1, 0, 1)]),
    (4, Ruleset.PAIRS, 3, None, "39S", [12, 12], [(1, 0, 1)]),
    (4, Ruleset.PAIRS, 3, None, "40NT", [12, 12], [(1, 0, 2)]),
    (4, Ruleset.PAIRS, 3, None, "55S", [12, 12], [(1, 0, 3)]),
    (4, Ruleset.PAIRS, 3, None, "56NT", [12, 12], [(1, 0, 4)]),
    (4, Ruleset.PAIRS, 3, None, "pass 28S", [12, 12], [(1, 0, 2)]),
    (4, Ruleset.PAIRS, 3, None, "pass 40S", [12, 12], [(1, 0, 3)]),
    (4, Ruleset.PAIRS, 3, None, "pass 48NT", [12, 12], [(1, 0, 4)]),
    (4, Ruleset.PAIRS, 3, None, "pass 56S", [12, 12], [(1, 0, 5)]),
    (4, Ruleset.PAIRS, 3, None, "28S double", [12, 12], [(1, 0, 2)]),
    (4, Ruleset.PAIRS, 3, None, "28S double redouble", [12, 12], [(1, 0, 4)]),
    (4, Ruleset.PAIRS, 3, None, "28S double pass redouble", [12, 12], [(1, 0, 4)]),
    (4, Ruleset.PAIRS, 3, None, "pass 30S double", [12, 12], [(1, 0, 4)]),
    (4, Ruleset.PAIRS, 3, None, "pass 30S double pass redouble", [12, 12], [(1, 0, 8)]),
    # Capped: nobody pays more than it has.
    (4, Ruleset.PAIRS, 3, None, "pass 56S double pass redouble", [12, 12], [(1, 0, 12)]),
    (4, Ruleset.PAIRS, 3, None, "48S double", [21, 3], [(1, 0, 3)]),
    # The strong seat need not lead: with spades trumps it still takes every trick.
    (4, Ruleset.PAIRS, 3, 1, "pass 28S", [12, 12], [(0, 1, 1)]),
    (4, Ruleset.PAIRS, 3, 1, "28S", [12, 12], [(0, 1, 2)]),
    # Six players, three teams: every other team pays, or is paid, in full.
    (6, Ruleset.PAIRS, 5, None, "pass pass pass pass pass pass", [12, 12, 12], [(1, 0, 1), (2, 0, 1)]),
    (6, Ruleset.PAIRS, 5, None, "pass 28S", [12, 12, 12], [(1, 2, 2), (1, 0, 2)]),
    (6, Ruleset.PAIRS, 5, None, "pass pass 28S", [12, 12, 12], [(2, 0, 2), (2, 1, 2)]),
    (6, Ruleset.PAIRS, 5, None, "pass 28S", [12, 4, 12], [(1, 2, 2), (1, 0, 2)]),
    (6, Ruleset.PAIRS, 5, None, "28S double", [12, 12, 12], [(1, 0, 2), (2, 0, 2)]),
    # Six players, a losing contractor short of tables pays one at a time from its bidder's right.
    (6, Ruleset.PAIRS, 5, None, "pass 48S", [12, 5, 12], [(1, 2, 3), (1, 0, 2)]),
    (6, Ruleset.PAIRS, 5, None, "pass pass pass pass 48S", [12, 5, 12], [(1, 2, 3), (1, 0, 2)]),
    (6, Ruleset.PAIRS, 5, None, "pass pass 48S", [12, 12, 3], [(2, 0, 2), (2, 1, 1)]),
    (6, Ruleset.PAIRS, 5, None, "pass pass pass pass pass 48S", [12, 12, 3], [(2, 0, 2), (2, 1, 1)]),
    (6, Ruleset.PAIRS, 5, None, "pass 28S", [12, 1, 12], [(1, 2, 1)]),
    (6, Ruleset.PAIRS, 5, 4, "pass pass 28S", [12, 12, 3], [(2, 0, 2), (2, 1, 1)]),
    # Six players, capped winners' payments: each pays what it can.
    (6, Ruleset.PAIRS, 5, None, "40S double", [20, 1, 3], [(1, 0, 1), (2, 0, 3)]),
    # Eight players, four teams.
    (
        8,
        Ruleset.PAIRS,
        7,
        None,
        "pass pass pass pass pass pass pass pass",
        [12, 12, 12, 12],
        [(1, 0, 1), (2, 0, 1), (3, 0, 1)],
    ),
    (8, Ruleset.PAIRS, 7, None, "pass pass 28S", [12, 12, 12, 12], [(2, 3, 2), (2, 0, 2), (2, 1, 2)]),
    (8, Ruleset.PAIRS, 7, None, "pass pass 28S", [12, 12, 4, 12], [(2, 3, 2), (2, 0, 1), (2, 1, 1)]),
    (8, Ruleset.PAIRS, 7, None, "pass pass 28S", [12, 12, 1, 12], [(2, 3, 1)]),
    (8, Ruleset.PAIRS, 7, None, "pass pass 28S", [12, 12, 5, 12], [(2, 3, 2), (2, 0, 2), (2, 1, 1)]),
    (
        8,
        Ruleset.PAIRS,
        7,
        None,
        "pass 40S double",
        [12, 10, 12, 12],
        [(1, 2, 4), (1, 3, 3), (1, 0, 3)],
    ),
    (8, Ruleset.PAIRS, 7, None, "pass pass pass 30S", [12, 12, 12, 2], [(3, 0, 1), (3, 1, 1)]),
    (
        8,
        Ruleset.PAIRS,
        7,
        None,
        "28S double",
        [12, 1, 12, 2],
        [(1, 0, 1), (2, 0, 2), (3, 0, 2)],
    ),
    # Partnership: always one other team.
    (4, Ruleset.PARTNERSHIP, 3, None, "pass 28S", [12, 12], [(1, 0, 2)]),
    (6, Ruleset.PARTNERSHIP, 5, None, "pass 28S", [12, 12], [(1, 0, 2)]),
    (6, Ruleset.PARTNERSHIP, 5, None, "pass pass pass pass pass pass", [12, 12], [(1, 0, 1)]),
    (6, Ruleset.PARTNERSHIP, 5, None, "pass 28S double pass redouble", [12, 12], [(1, 0, 8)]),
    (8, Ruleset.PARTNERSHIP, 7, None, "40NT double", [12, 12], [(1, 0, 4)]),
    (8, Ruleset.PARTNERSHIP, 7, None, "pass 48S", [12, 12], [(1, 0, 4)]),
    (8, Ruleset.PARTNERSHIP, 7, None, "pass 48S double", [12, 5], [(1, 0, 5)]),
]


@pytest.mark.parametrize(
    ("players", "ruleset", "dealer", "strong", "calls", "before", "payments"), SETTLEMENTS
)
def test_settlement(
    players: int,
    ruleset: Ruleset,
    dealer: int,
    strong: int | None,
    calls: str,
    before: list[int],
    payments: list[tuple[int, int, int]],
) -> None:
    match = make_match(players, dealer, before, ruleset, strong={1: strong} if strong is not None else None)
    result = finish_deal(match, calls)
    teams = team_of_seats(players, ruleset)
    contract = result.contract
    strong_seat = strong if strong is not None else (dealer + 1) % players
    expected_points = [0] * len(before)
    expected_points[teams[strong_seat]] = 56
    assert list(result.points) == expected_points
    assert result.made == (contract.team == teams[strong_seat])
    assert list(result.payments) == [Payment(*payment) for payment in payments]  # none of 0 tables
    after = list(before)
    for payer, payee, tables in payments:
        after[payer] -= tables
        after[payee] += tables
    assert list(result.tables) == after
    assert match.tables == after
    assert sum(after) == sum(before)  # tables are only moved
    assert result.teams_out == tuple(team for team, held in enumerate(after) if held == 0)


def test_a_won_contract_pays_each_other_team_the_table_amount() -> None:
    # Cross-check the engine's table amounts against the settlement, for every doubling.
    for calls, doubling in [("44S", 1), ("44S double", 2), ("44S double redouble", 4)]:
        match = make_match(6, 5)
        result = finish_deal(match, calls)
        assert result.contract.doubling == doubling
        assert result.made
        assert [payment.tables for payment in result.payments] == [2 * doubling, 2 * doubling]
        assert {payment.payee for payment in result.payments} == {0}


@pytest.mark.parametrize("bidder", [1, 3, 5, 7])
def test_shortfall_order_is_the_same_from_either_seat_of_the_team(bidder: int) -> None:
    # Team 1 (seats 1 and 5) or team 3 (seats 3 and 7) loses 28 doubled, owing 4 to each of three
    # teams, and has 7 tables: 3 go to the first team from the bidder's right, 2 to each other team.
    match = make_match(8, 7, [12, 7, 12, 7])
    calls = "pass " * bidder + "28S double"
    result = finish_deal(match, calls)
    team = bidder % 4
    order = [(team + step) % 4 for step in (1, 2, 3)]
    assert result.contract.team == team
    assert [(payment.payee, payment.tables) for payment in result.payments] == list(
        zip(order, [3, 2, 2], strict=True)
    )
