"""Seeded deals (fiftysix/engine/seeds.py): the documented keyed shuffle exactly, the same everywhere,
unbiased, and one deal independent of another deal and of nearby seeds (a deal made public says
nothing about the next)."""

from __future__ import annotations

import hashlib
import hmac
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fiftysix.engine import (
    MAX_SEED,
    MIN_SEED,
    Card,
    Match,
    MatchRules,
    ShuffledDeals,
    first_dealer_for,
    pack_for,
)
from fiftysix.engine.seeds import DrawStream, draw_key, seed_key

seeds_st = st.integers(MIN_SEED, MAX_SEED)


def reference_stream(seed: int, label: str) -> Iterator[int]:
    """The bytes of a draw as docs/rules.md states them, written out again with nothing shared."""
    key = hmac.new(seed.to_bytes(17, "big", signed=True), label.encode(), hashlib.sha256).digest()
    counter = 0
    while True:
        yield from hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
        counter += 1


def reference_below(stream: Iterator[int], bound: int) -> int:
    bits = (bound - 1).bit_length()
    while True:
        value = next(stream) % (1 << bits)
        if value < bound:
            return value


def reference_pack(seed: int, deal_number: int, players: int) -> list[Card]:
    pack = list(pack_for(players))
    stream = reference_stream(seed, f"fiftysix/deal/{deal_number}/{players}")
    for last in range(len(pack) - 1, 0, -1):
        other = reference_below(stream, last + 1)
        pack[last], pack[other] = pack[other], pack[last]
    return pack


@settings(max_examples=60, deadline=None)
@given(seed=seeds_st, players=st.sampled_from([4, 6, 8]), deal_number=st.integers(1, 10_000))
def test_the_deals_are_the_documented_keyed_shuffle(seed: int, players: int, deal_number: int) -> None:
    seats = tuple(range(players))
    dealer = deal_number % players
    hands = ShuffledDeals(seed).hands(deal_number, seats, dealer)
    pack = reference_pack(seed, deal_number, players)
    # Dealt one card at a time from the dealer's right.
    order = [seats[(dealer + 1 + i) % players] for i in range(players)]
    assert hands == {seat: pack[i::players] for i, seat in enumerate(order)}
    stream = reference_stream(seed, "fiftysix/first-dealer")
    assert first_dealer_for(seed, players) == reference_below(stream, players)


@pytest.mark.parametrize(
    ("seed", "first_dealer", "seat_0"),
    [
        (0, 3, "KC QH AS TC JC 9C TH TS KS QS JD JD"),
        (MAX_SEED, 3, "9H QS JS KH QD 9C TS JD JS KD 9D AD"),
        (MIN_SEED, 0, "TC AD 9S 9H QH TH JD TD KD 9C QS JS"),
    ],
)
def test_known_deals_never_change(seed: int, first_dealer: int, seat_0: str) -> None:
    """Pinned, so that no machine, Python version or refactoring deals another pack for a seed."""
    assert first_dealer_for(seed, 4) == first_dealer
    hand = ShuffledDeals(seed).hands(1, (0, 1, 2, 3), 3)[0]
    assert " ".join(map(str, hand)) == seat_0
    stream = DrawStream(draw_key(seed_key(1), "fiftysix/deal/1/4"))
    assert [stream.below(48) for _ in range(10)] == [33, 32, 46, 2, 29, 47, 45, 20, 9, 6]


@pytest.mark.parametrize("seed", [MIN_SEED - 1, MAX_SEED + 1, -(2**200)])
def test_a_seed_out_of_range_is_refused(seed: int) -> None:
    with pytest.raises(ValueError, match=r"a seed is a whole number from -\(2\^63-1\) to 2\^128-1"):
        ShuffledDeals(seed)
    with pytest.raises(ValueError, match="a seed is a whole number"):
        Match(MatchRules(4), seed=seed)


@pytest.mark.parametrize("bound", [1, 2, 3, 6, 8, 47, 48, 64, 256])
def test_every_index_below_a_bound_is_equally_likely(bound: int) -> None:
    """Rejection keeps the draws unbiased (a plain modulo would favour low indices for 48 or 6)."""
    stream = DrawStream(draw_key(seed_key(bound), "test/uniform"))
    draws = 400 * bound
    counts = Counter(stream.below(bound) for _ in range(draws))
    assert set(counts) == set(range(bound))
    expected = draws / bound
    chi_square = sum((counts[index] - expected) ** 2 / expected for index in range(bound))
    # Far above the 99.99th percentile of chi-square with bound - 1 degrees of freedom; the draws are fixed.
    assert chi_square < 3 * bound + 40


def test_every_order_of_a_shuffle_is_equally_likely() -> None:
    counts: Counter[tuple[int, ...]] = Counter()
    for number in range(6000):
        items = [0, 1, 2]
        DrawStream(draw_key(seed_key(number), "test/shuffle")).shuffle(items)
        counts[tuple(items)] += 1
    assert len(counts) == 6
    assert all(900 < count < 1100 for count in counts.values())


def dealt_pack(seed: int, deal_number: int) -> list[Card]:
    """The 4-player pack of a deal as the engine shuffled it (seat 3 deals: seat i got cards i, i + 4...)."""
    hands = ShuffledDeals(seed).hands(deal_number, (0, 1, 2, 3), 3)
    return [hands[position % 4][position // 4] for position in range(48)]


def _agreements(first: list[Card], second: list[Card]) -> int:
    """Positions at which two shuffles of a pack hold the same card."""
    return sum(a == b for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize(
    ("relation", "other"),
    [
        ("the next seed's deal 2", lambda seed: (seed + 1, 2)),
        ("deal 2 of a seed sharing its upper 120 bits", lambda seed: (seed ^ 0xA5, 2)),
        ("deal 2 of a seed differing in its top bit", lambda seed: (seed ^ 2**127, 2)),
        ("the same seed's deal 1", lambda seed: (seed, 1)),
        ("another set's deal 1", lambda seed: (seed - 1, 1)),
    ],
)
def test_a_deal_is_independent_of_related_deals(relation: str, other: object) -> None:
    """Knowing one deal (every hand is public when it ends) tells nothing of a related one: the packs
    agree in as many positions as two independent shuffles do. With a 48-card pack of 24 cards twice,
    a position agrees with chance 1/24, so 2 positions in 48 on average."""
    rng = random.Random(relation)
    total = 0
    samples = 400
    for _ in range(samples):
        seed = rng.getrandbits(128)
        related_seed, deal = other(seed)  # type: ignore[operator]
        total += _agreements(dealt_pack(seed, 2), dealt_pack(related_seed, deal))
    assert 1.6 < total / samples < 2.4, relation


def test_the_deals_of_a_match_differ_from_deal_to_deal_and_seed_to_seed() -> None:
    packs = {tuple(dealt_pack(seed, deal)) for seed in (0, 1, 2**64, 2**127) for deal in (1, 2, 3)}
    assert len(packs) == 12
