"""Calls: notation of every form and the list of legal calls (docs/rules.md#bid-forms,
docs/rules.md#writing-calls, docs/rules.md#legal-moves)."""

from __future__ import annotations

import pytest
from engine_helpers import ALL_CALLS

from fiftysix.engine import (
    DOUBLE,
    MAX_BID,
    MIN_BID,
    PASS,
    REDOUBLE,
    BidForm,
    Call,
    CallKind,
    NotationError,
    Suit,
    legal_calls,
    parse_call,
)


@pytest.mark.parametrize(
    ("text", "kind", "form", "number", "suit", "canonical"),
    [
        ("pass", CallKind.PASS, None, 0, None, "pass"),
        ("PASS", CallKind.PASS, None, 0, None, "pass"),
        ("Pass", CallKind.PASS, None, 0, None, "pass"),
        ("double", CallKind.DOUBLE, None, 0, None, "double"),
        ("DoUbLe", CallKind.DOUBLE, None, 0, None, "double"),
        ("redouble", CallKind.REDOUBLE, None, 0, None, "redouble"),
        ("REDOUBLE", CallKind.REDOUBLE, None, 0, None, "redouble"),
        ("28S", CallKind.BID, BidForm.NUMBER_SUIT, 28, Suit.SPADES, "28S"),
        ("28s", CallKind.BID, BidForm.NUMBER_SUIT, 28, Suit.SPADES, "28S"),
        ("40h", CallKind.BID, BidForm.NUMBER_SUIT, 40, Suit.HEARTS, "40H"),
        ("56C", CallKind.BID, BidForm.NUMBER_SUIT, 56, Suit.CLUBS, "56C"),
        ("S28", CallKind.BID, BidForm.SUIT_NUMBER, 28, Suit.SPADES, "S28"),
        ("d33", CallKind.BID, BidForm.SUIT_NUMBER, 33, Suit.DIAMONDS, "D33"),
        ("C56", CallKind.BID, BidForm.SUIT_NUMBER, 56, Suit.CLUBS, "C56"),
        ("28NT", CallKind.BID, BidForm.NO_TRUMPS, 28, None, "28NT"),
        ("31nt", CallKind.BID, BidForm.NO_TRUMPS, 31, None, "31NT"),
        ("28NOES", CallKind.BID, BidForm.NOES, 28, None, "28NOES"),
        ("45Noes", CallKind.BID, BidForm.NOES, 45, None, "45NOES"),
        ("+2S", CallKind.BID, BidForm.PLUS_SUIT, 2, Suit.SPADES, "+2S"),
        ("+1h", CallKind.BID, BidForm.PLUS_SUIT, 1, Suit.HEARTS, "+1H"),
        ("+28D", CallKind.BID, BidForm.PLUS_SUIT, 28, Suit.DIAMONDS, "+28D"),
        ("+2NOES", CallKind.BID, BidForm.PLUS_NOES, 2, None, "+2NOES"),
        ("+2noes", CallKind.BID, BidForm.PLUS_NOES, 2, None, "+2NOES"),
        (" 29S ", CallKind.BID, BidForm.NUMBER_SUIT, 29, Suit.SPADES, "29S"),
    ],
)
def test_parse_and_print_every_form(
    text: str, kind: CallKind, form: BidForm | None, number: int, suit: Suit | None, canonical: str
) -> None:
    call = parse_call(text)
    assert (call.kind, call.form, call.number, call.suit) == (kind, form, number, suit)
    assert str(call) == canonical
    assert repr(call) == f"Call({canonical})"
    assert call.is_bid == (kind is CallKind.BID)
    assert call.trump == suit


def test_plain_calls_are_the_constants() -> None:
    assert parse_call("pass") is PASS
    assert parse_call("double") is DOUBLE
    assert parse_call("redouble") is REDOUBLE


def test_every_call_round_trips_in_any_case() -> None:
    assert len(ALL_CALLS) == 3 + 29 * 10 + 28 * 4 + 1
    for call in ALL_CALLS:
        text = str(call)
        assert parse_call(text) is call
        assert parse_call(text.lower()) is call
        assert parse_call(text.swapcase()) is call


def test_calls_are_interned_and_immutable() -> None:
    assert Call(CallKind.BID, BidForm.NUMBER_SUIT, 28, Suit.SPADES) is parse_call("28S")
    assert parse_call("28S") is not parse_call("S28")  # same contract, different signal
    with pytest.raises(AttributeError):
        PASS.number = 3


@pytest.mark.parametrize(
    ("text", "current", "number"),
    [
        ("28S", 0, 28),
        ("S30", 29, 30),
        ("40NT", 35, 40),
        ("33NOES", 30, 33),
        ("+2S", 30, 32),
        ("+1C", 55, 56),
        ("+5H", 28, 33),
        ("+2NOES", 41, 43),
    ],
)
def test_contract_number(text: str, current: int, number: int) -> None:
    assert parse_call(text).contract_number(current) == number


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("27S", "a bid's number is 28 to 56"),
        ("57S", "a bid's number is 28 to 56"),
        ("S27", "a bid's number is 28 to 56"),
        ("H57", "a bid's number is 28 to 56"),
        ("0NT", "expected a call"),
        ("100NOES", "a bid's number is 28 to 56"),
        ("+3NOES", r"a plus-noes bid is always \+2NOES"),
        ("+1NOES", r"a plus-noes bid is always \+2NOES"),
        ("+0S", "expected a call"),
        ("+29S", "a plus bid adds 1 to 28"),
        ("", "expected a call: pass, double, redouble, or a bid like 28S"),
        ("bid", "expected a call"),
        ("passs", "expected a call"),
        ("28", "expected a call"),
        ("S", "expected a call"),
        ("28X", "expected a call"),
        ("28SH", "expected a call"),
        ("28NTS", "expected a call"),
        ("+S", "expected a call"),
        ("+2", "expected a call"),
        ("+2NT", "expected a call"),
        ("-2S", "expected a call"),
        ("S+2", "expected a call"),
        ("NT28", "expected a call"),
        ("NOES28", "expected a call"),
        ("JS", "expected a call"),
        ("5" * 5000 + "S", "a bid's number is 28 to 56"),  # past int()'s 4,300-digit limit
        ("S" + "9" * 5000, "a bid's number is 28 to 56"),
        ("+" + "1" * 5000 + "S", "a plus bid adds 1 to 28"),
        ("x" * 100_000, r"got 'xxxxxxxxxxxxxxxxxxxxxxxx'\.\.\. \(100000 characters\)$"),
    ],
)
def test_bad_call_raises_notation_error(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        parse_call(text)


def test_legal_calls_before_any_bid() -> None:
    calls = legal_calls(0, False)
    assert calls[0] is PASS
    assert [str(call) for call in calls[1:11]] == [
        "28S",
        "28H",
        "28D",
        "28C",
        "S28",
        "H28",
        "D28",
        "C28",
        "28NT",
        "28NOES",
    ]
    assert len(calls) == 1 + 29 * 10
    assert DOUBLE not in calls
    assert REDOUBLE not in calls
    assert not any(call.form is not None and call.form.is_plus for call in calls)


def test_legal_calls_near_the_top_in_canonical_order() -> None:
    assert [str(call) for call in legal_calls(54, True)] == [
        *("pass", "double"),
        *("55S", "55H", "55D", "55C", "S55", "H55", "D55", "C55", "55NT", "55NOES"),
        *("+1S", "+1H", "+1D", "+1C"),
        *("56S", "56H", "56D", "56C", "S56", "H56", "D56", "C56", "56NT", "56NOES"),
        *("+2S", "+2H", "+2D", "+2C", "+2NOES"),
    ]


@pytest.mark.parametrize(("can_double", "expected"), [(True, ["pass", "double"]), (False, ["pass"])])
def test_nothing_is_bid_over_56(can_double: bool, expected: list[str]) -> None:
    assert [str(call) for call in legal_calls(MAX_BID, can_double)] == expected


@pytest.mark.parametrize("current", [0, 28, 29, 33, 40, 47, 54, 55, 56])
@pytest.mark.parametrize("can_double", [True, False])
def test_legal_calls_contents(current: int, can_double: bool) -> None:
    calls = legal_calls(current, can_double)
    assert len(set(calls)) == len(calls)
    assert calls[0] is PASS
    assert (DOUBLE in calls) == can_double
    assert REDOUBLE not in calls
    bids = [call for call in calls if call.is_bid]
    made = [call.contract_number(current) for call in bids]
    assert made == sorted(made)
    assert all(max(current + 1, MIN_BID) <= number <= MAX_BID for number in made)
    # Every bid that makes a legal number is listed, in every form.
    expected = {
        call
        for call in ALL_CALLS
        if call.is_bid
        and (current or not call.form or not call.form.is_plus)
        and max(current + 1, MIN_BID) <= call.contract_number(current) <= MAX_BID
    }
    assert set(bids) == expected
    plus_noes = [call for call in bids if call.form is BidForm.PLUS_NOES]
    assert plus_noes == ([parse_call("+2NOES")] if current and current + 2 <= MAX_BID else [])


@pytest.mark.parametrize(
    ("current", "present", "absent"),
    [
        (0, ["28S", "S28", "28NT", "28NOES", "56C"], ["+1S", "+2NOES", "double"]),
        (28, ["29S", "+1S", "+28C", "+2NOES", "S56"], ["28S", "S28", "28NT", "+29S"]),
        (30, ["31NT", "+1D", "+26H", "+2NOES"], ["30S", "30NT", "+27H", "+3NOES"]),
        (55, ["56NOES", "+1H"], ["+2S", "+2NOES", "55S"]),
    ],
)
def test_legal_calls_membership(current: int, present: list[str], absent: list[str]) -> None:
    texts = {str(call) for call in legal_calls(current, False)}
    assert set(present) <= texts
    assert not set(absent) & texts


@pytest.mark.parametrize(
    "text", ["pa ss", "re double", "+ 2 S", "028S", "+02S", "\u0662\u0668S", "\uff12\uff18S"]
)
def test_call_notation_is_strict_inside(text: str) -> None:
    with pytest.raises(NotationError, match="expected a call"):
        parse_call(text)
