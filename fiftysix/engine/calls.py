"""Calls of the auction: pass, double, redouble and the six bid forms (docs/rules.md#the-auction,
docs/rules.md#writing-calls).

Every `Call` is interned, so calls compare and hash by identity and the tuples of legal calls can be
built once and shared.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Final

from fiftysix.engine.cards import Suit
from fiftysix.engine.errors import NotationError, quoted

MIN_BID: Final = 28
MAX_BID: Final = 56


class CallKind(Enum):
    """What a call does."""

    PASS = "pass"
    DOUBLE = "double"
    REDOUBLE = "redouble"
    BID = "bid"


class BidForm(Enum):
    """The six bid forms: the same contract may be bid in several forms, each a different signal."""

    NUMBER_SUIT = "number_suit"  # 28S: holds the jack of that suit
    SUIT_NUMBER = "suit_number"  # S28: strong in the suit, without its jack
    NO_TRUMPS = "no_trumps"  # 28NT: strong hand, no particular suit
    NOES = "noes"  # 28NOES: void in the suit most recently named; no trumps
    PLUS_SUIT = "plus_suit"  # +2S: that many high cards of the suit and no other; previous bid + N
    PLUS_NOES = "plus_noes"  # +2NOES: as noes; previous bid + 2

    @property
    def is_plus(self) -> bool:
        """Whether the bid's number is added to the current bid rather than stated."""
        return self in (BidForm.PLUS_SUIT, BidForm.PLUS_NOES)


class Call:
    """One call of the auction, in canonical notation when printed.

    For plus forms `number` is the increment (`+2S` has number 2); the contract number it makes depends
    on the current bid, see `contract_number`.
    """

    __slots__ = ("kind", "form", "number", "suit", "is_plus", "_text")

    kind: CallKind
    form: BidForm | None
    number: int
    suit: Suit | None
    is_plus: bool
    """Whether this is a bid whose number is added to the current bid (`BidForm.is_plus`)."""
    _text: str

    def __new__(
        cls,
        kind: CallKind,
        form: BidForm | None = None,
        number: int = 0,
        suit: Suit | None = None,
    ) -> Call:
        call = _CALLS.get((kind, form, number, suit))
        if call is None:
            raise ValueError(f"no such call: {kind}, {form}, {number}, {suit}")
        return call

    @classmethod
    def _make(cls, kind: CallKind, form: BidForm | None, number: int, suit: Suit | None) -> Call:
        call = object.__new__(cls)
        for name, value in (
            ("kind", kind),
            ("form", form),
            ("number", number),
            ("suit", suit),
            ("is_plus", form is not None and form.is_plus),
            ("_text", _notation(kind, form, number, suit)),
        ):
            object.__setattr__(call, name, value)
        _CALLS[(kind, form, number, suit)] = call
        return call

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Call is immutable")

    def __reduce__(self) -> tuple[type[Call], tuple[CallKind, BidForm | None, int, Suit | None]]:
        return (Call, (self.kind, self.form, self.number, self.suit))

    def __copy__(self) -> Call:
        return self

    def __deepcopy__(self, memo: Any) -> Call:
        return self

    @property
    def is_bid(self) -> bool:
        """Whether this call is a bid (as opposed to pass, double or redouble)."""
        return self.kind is CallKind.BID

    @property
    def trump(self) -> Suit | None:
        """The trump suit of the contract this bid makes; None for no trumps (and for non-bids)."""
        return self.suit

    def contract_number(self, current: int) -> int:
        """The number this bid makes when `current` is the current bid's number (0 before any bid)."""
        return current + self.number if self.is_plus else self.number

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Call({self._text})"


def _notation(kind: CallKind, form: BidForm | None, number: int, suit: Suit | None) -> str:
    if kind is not CallKind.BID:
        return str(kind.value)
    letter = suit.letter if suit is not None else ""
    if form is BidForm.NUMBER_SUIT:
        return f"{number}{letter}"
    if form is BidForm.SUIT_NUMBER:
        return f"{letter}{number}"
    if form is BidForm.NO_TRUMPS:
        return f"{number}NT"
    if form is BidForm.NOES:
        return f"{number}NOES"
    if form is BidForm.PLUS_SUIT:
        return f"+{number}{letter}"
    return f"+{number}NOES"


_CALLS: Final[dict[tuple[CallKind, BidForm | None, int, Suit | None], Call]] = {}

PASS: Final = Call._make(CallKind.PASS, None, 0, None)
DOUBLE: Final = Call._make(CallKind.DOUBLE, None, 0, None)
REDOUBLE: Final = Call._make(CallKind.REDOUBLE, None, 0, None)

for _number in range(MIN_BID, MAX_BID + 1):
    for _suit in Suit:
        Call._make(CallKind.BID, BidForm.NUMBER_SUIT, _number, _suit)
        Call._make(CallKind.BID, BidForm.SUIT_NUMBER, _number, _suit)
    Call._make(CallKind.BID, BidForm.NO_TRUMPS, _number, None)
    Call._make(CallKind.BID, BidForm.NOES, _number, None)
for _increment in range(1, MAX_BID - MIN_BID + 1):
    for _suit in Suit:
        Call._make(CallKind.BID, BidForm.PLUS_SUIT, _increment, _suit)
Call._make(CallKind.BID, BidForm.PLUS_NOES, 2, None)
_CALL_BY_TEXT: Final = {str(call): call for call in _CALLS.values()}
ALL_CALLS: Final[tuple[Call, ...]] = tuple(_CALLS.values())
"""Every call there is."""


def bid(number: int, suit: Suit | None, form: BidForm) -> Call:
    """The interned bid call of that form; `number` is the increment for plus forms."""
    return Call(CallKind.BID, form, number, suit)


def _bids_making(number: int, current: int) -> list[Call]:
    """Every bid form that makes a contract of `number` over a current bid of `current` (0: none)."""
    calls = [bid(number, suit, BidForm.NUMBER_SUIT) for suit in Suit]
    calls += [bid(number, suit, BidForm.SUIT_NUMBER) for suit in Suit]
    calls.append(bid(number, None, BidForm.NO_TRUMPS))
    calls.append(bid(number, None, BidForm.NOES))
    if current:
        increment = number - current
        calls += [bid(increment, suit, BidForm.PLUS_SUIT) for suit in Suit]
        if increment == 2:
            calls.append(bid(2, None, BidForm.PLUS_NOES))
    return calls


_LEGAL_CALLS: Final[dict[tuple[int, bool], tuple[Call, ...]]] = {}


def legal_calls(current: int, can_double: bool) -> tuple[Call, ...]:
    """The legal calls in an open auction, in canonical order.

    `current` is the current bid's number (0 when nobody has bid); `can_double` says whether the current
    bid was made by an opponent and is not doubled yet. Order: pass, double, then bids by the number they
    make and within a number by form (28S..28C, S28..C28, 28NT, 28NOES, +N suits, +2NOES).
    """
    key = (current, can_double)
    cached = _LEGAL_CALLS.get(key)
    if cached is None:
        calls = [PASS]
        if can_double:
            calls.append(DOUBLE)
        for number in range(max(current + 1, MIN_BID), MAX_BID + 1):
            calls += _bids_making(number, current)
        cached = _LEGAL_CALLS[key] = tuple(calls)
    return cached


REDOUBLE_CALLS: Final = (PASS, REDOUBLE)
"""The legal calls of a contracting-team player in the redouble window after a double."""

_NUMBER: Final = "([1-9][0-9]*)"
_BID_PATTERN: Final = re.compile(
    rf"(?:{_NUMBER}([SHDC]|NT|NOES)|([SHDC]){_NUMBER}|\+{_NUMBER}([SHDC]|NOES))", re.ASCII
)


def parse_call(text: str) -> Call:
    """Parse a call in canonical notation (any case): pass, double, redouble, 28S, S28, 28NT, 28NOES,
    +2S, +2NOES.

    Only the syntax and the range are checked here; whether the call is legal now is the auction's job.
    """
    call = _CALL_BY_TEXT.get(text)
    if call is not None:  # canonical, as the arena sends every call: one lookup
        return call
    cleaned = text.strip().upper()
    for plain in (PASS, DOUBLE, REDOUBLE):
        if cleaned == str(plain).upper():
            return plain
    match = _BID_PATTERN.fullmatch(cleaned)
    if match is None:
        raise NotationError(
            "expected a call: pass, double, redouble, or a bid like 28S, S28, 28NT, 28NOES, +2S, "
            f"+2NOES; got {quoted(text)}"
        )
    number_text, denomination, prefix_suit, suffix_number, increment, plus_denomination = match.groups()
    if increment is not None:
        # Two digits at most: longer numbers are out of range, and int() refuses over 4,300 digits.
        amount = int(increment) if len(increment) <= 2 else MAX_BID
        if plus_denomination == "NOES":
            if amount != 2:
                raise NotationError(f"a plus-noes bid is always +2NOES, got {quoted(text)}")
            return bid(2, None, BidForm.PLUS_NOES)
        if not 1 <= amount <= MAX_BID - MIN_BID:
            raise NotationError(f"a plus bid adds 1 to {MAX_BID - MIN_BID}, got {quoted(text)}")
        return bid(amount, _suit_of(plus_denomination), BidForm.PLUS_SUIT)
    digits = number_text if number_text is not None else suffix_number
    number = int(digits) if len(digits) <= 2 else MAX_BID + 1
    if not MIN_BID <= number <= MAX_BID:
        raise NotationError(f"a bid's number is {MIN_BID} to {MAX_BID}, got {quoted(text)}")
    if prefix_suit is not None:
        return bid(number, _suit_of(prefix_suit), BidForm.SUIT_NUMBER)
    if denomination == "NT":
        return bid(number, None, BidForm.NO_TRUMPS)
    if denomination == "NOES":
        return bid(number, None, BidForm.NOES)
    return bid(number, _suit_of(denomination), BidForm.NUMBER_SUIT)


def _suit_of(letter: str) -> Suit:
    return {"S": Suit.SPADES, "H": Suit.HEARTS, "D": Suit.DIAMONDS, "C": Suit.CLUBS}[letter]
