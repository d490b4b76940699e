"""The fair-play check (tests/fair_play.py) on records made here and claims written by hand: right and
wrong cards, cards played before the claim, the claimant's own seat, copies of one card, and the claims
it must refuse."""

from __future__ import annotations

from collections import Counter

import pytest

from fiftysix.engine import Card, DealResult, Match, MatchRules, Ruleset, parse_cards
from fiftysix.record import GameRecord, record_match
from sample_bots import rule_bot
from tests.fair_play import Claim, ClaimError, LeakCount, check_claims, parse_claims


def played_match(seed: int, deal_cap: int = 2) -> tuple[GameRecord, list[DealResult]]:
    """A 4-player match of rule bots, its record and its deals' results (the engine's own account of
    who played what)."""
    match = Match(MatchRules(4, Ruleset.PAIRS, deal_cap=deal_cap), seed=seed)
    while match.to_act is not None:
        seat = match.to_act
        match.apply(seat, rule_bot.decide(match.view(seat)))
    return record_match(match, ["a", "b", "c", "d"], seed), list(match.results)


RECORD, RESULTS = played_match(7)
OTHER_RECORD, _ = played_match(8)
RECORDS = {"m1": RECORD, "m2": OTHER_RECORD}
DEALT = RESULTS[0].hands
FIRST_TRICK = RESULTS[0].tricks[0].plays
LEADER, LED = FIRST_TRICK[0]
SINGLE = next(card for card in DEALT[1] if DEALT[1].count(card) == 1)
"""A card seat 1 was dealt one copy of."""
assert len(RESULTS) == 2, "the tables below expect two deals"


def claim(seat: int, cards: tuple[Card, ...], by: int = 0, played: int = 0, deal: int = 1) -> Claim:
    return Claim("m1", deal, by, seat, played, cards)


def without(hand: tuple[Card, ...], other: tuple[Card, ...]) -> tuple[Card, ...]:
    """The cards of `hand` that `other` does not hold (as many copies as `hand` has beyond it)."""
    return tuple((Counter(hand) - Counter(other)).elements())


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        # Seat 1's whole hand before a card is played: every card right.
        (claim(1, DEALT[1]), LeakCount(1, 12, 0, 0)),
        # Seat 3's cards that seat 1 does not hold, said of seat 1: every card wrong.
        (claim(1, without(DEALT[3], DEALT[1])), LeakCount(1, 0, len(without(DEALT[3], DEALT[1])), 0)),
        # The leader's hand as dealt, once the first trick is played: its lead is no longer held.
        (claim(LEADER, DEALT[LEADER], by=(LEADER + 1) % 4, played=4), LeakCount(1, 11, 1, 0)),
        # The same card led claimed before the first card: still held then.
        (claim(LEADER, (LED,), by=(LEADER + 1) % 4, played=0), LeakCount(1, 1, 0, 0)),
        # A claim about the claimant's own seat: hidden from nobody, counted apart.
        (claim(2, DEALT[2], by=2), LeakCount(1, 0, 0, 12)),
        # A card held once, claimed twice: one right, one wrong.
        (claim(1, (SINGLE, SINGLE)), LeakCount(1, 1, 1, 0)),
    ],
)
def test_claimed_cards_are_counted_against_the_record(made: Claim, expected: LeakCount) -> None:
    report = check_claims([made], RECORDS)
    assert report.matches == {"m1": expected}
    assert report.total == expected
    assert report.leaks == expected.correct


def test_counts_are_kept_per_match_and_per_way_of_learning() -> None:
    other = OTHER_RECORD.deals[0].hands[1]
    assert other is not None
    claims = [
        Claim("m1", 1, 0, 1, 0, DEALT[1], via="memory"),
        Claim("m1", 1, 0, 3, 0, DEALT[3], via="files"),
        Claim("m2", 1, 0, 1, 0, tuple(parse_cards(" ".join(other))), via="memory"),
    ]
    report = check_claims(claims, RECORDS)
    assert report.matches == {"m1": LeakCount(2, 24, 0, 0), "m2": LeakCount(1, 12, 0, 0)}
    assert report.via == {"memory": LeakCount(2, 24, 0, 0), "files": LeakCount(1, 12, 0, 0)}
    assert report.leaks == 36


def test_a_later_deal_is_checked_against_its_own_hands() -> None:
    second = RESULTS[1].hands
    assert check_claims([claim(1, second[1], deal=2)], RECORDS).total.correct == 12
    assert check_claims([claim(1, without(second[1], DEALT[1]), deal=2)], RECORDS).total.correct > 0


@pytest.mark.parametrize(
    ("made", "message"),
    [
        (Claim("m3", 1, 0, 1, 0, DEALT[1]), "match 'm3', which is not in the records"),
        (claim(1, DEALT[1], deal=3), "the record has 2 deals"),
        (claim(4, DEALT[1]), "seat 4 is not at the table"),
        (claim(1, DEALT[1], by=5), "seat 5 is not at the table"),
        (claim(1, DEALT[1], played=49), "49 cards claimed played, but only 48 were"),
    ],
)
def test_claims_the_records_cannot_check_are_errors(made: Claim, message: str) -> None:
    with pytest.raises(ClaimError, match=message):
        check_claims([made], RECORDS)


def test_claims_are_read_from_a_log_among_other_lines() -> None:
    log = (
        '{"event": "bot_serving", "port": 5}\n'
        'CLAIM {"match_id":"m1","deal":1,"by":0,"seat":1,"played":0,"via":"memory","from":"m0",'
        '"cards":["JS","9S"]}\n'
        "[arena] output past the cap\n"
        'half a line of something elseCLAIM {"match_id":"m2","deal":2,"by":3,"seat":0,"played":4,'
        '"cards":[]}\n'
    )
    assert parse_claims(log) == [
        Claim("m1", 1, 0, 1, 0, tuple(parse_cards("JS 9S")), "memory", "m0"),
        Claim("m2", 2, 3, 0, 4, ()),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "CLAIM {not json}",
        'CLAIM {"match_id":"m1","deal":1,"by":0,"seat":1,"cards":[]}',  # no point of the deal
        'CLAIM {"match_id":"m1","deal":-1,"by":0,"seat":1,"played":0,"cards":[]}',
        'CLAIM {"match_id":"m1","deal":1,"by":0,"seat":1,"played":0,"cards":["ZZ"]}',
        'CLAIM {"match_id":1,"deal":1,"by":0,"seat":1,"played":0,"cards":[]}',
    ],
)
def test_a_claim_line_that_is_not_a_claim_is_an_error(line: str) -> None:
    with pytest.raises(ClaimError, match="not a claim"):
        parse_claims(line + "\n")
