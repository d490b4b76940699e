"""Game records: a played match as a JSON document, and back.

The format (documented in docs/game-record.md) holds the match settings, who sat where, the seed, and
for each deal the dealer, every hand as dealt, every call and card in order, and the result. Moves are
stored in canonical notation; whose move it is follows from the rules, so a record cannot claim a
move for the wrong seat. `version` lets records written by one version load in the next: older versions
are upgraded on load by the functions in `_UPGRADES`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

from fiftysix.engine import (
    MAX_SEED,
    MIN_SEED,
    SEED_RANGE,
    Card,
    Contract,
    DealResult,
    EndReason,
    Match,
    MatchRules,
    Ruleset,
)
from fiftysix.files import FileRefusedError, read_file, read_stream

FORMAT: Final = "fiftysix-game-record"
VERSION: Final = 2
"""The format version written. Version 2 is version 1 with seeds of up to 128 bits dealt by the engine's
keyed shuffle (fiftysix/engine/seeds.py); a version-1 record's seed dealt by Python's Mersenne Twister,
so a record keeps the version it was read as (`GameRecord.version`), and replay checks its hands
against the deal function of that version."""


class RecordError(ValueError):
    """A game record that cannot be read: not JSON, wrong shape, or from an unknown version.

    `deal` and `move` (both from 1) say where, when the problem is inside a deal.
    """

    def __init__(self, message: str, deal: int | None = None, move: int | None = None) -> None:
        where = ""
        if deal is not None:
            where = f"deal {deal}" + (f", move {move}" if move is not None else "") + ": "
        super().__init__(where + message)
        self.deal = deal
        self.move = move


class RecordFileError(RecordError):
    """A record that was not read at all: the file is missing or unreadable, is not a regular file (a
    FIFO, a device, a folder), or is over MAX_RECORD_BYTES."""


@dataclass
class DealRecord:
    """One deal as recorded: moves in order (calls then cards) and the result, if the deal ended."""

    number: int
    dealer: int
    hands: list[list[str] | None]
    calls: list[str]
    cards: list[str]
    result: dict[str, Any] | None


@dataclass
class GameRecord:
    """A whole match as recorded. `seed` is None when the hands were not dealt from a seed."""

    rules: MatchRules
    seats: list[str]
    seed: int | None
    first_dealer: int
    deals: list[DealRecord] = field(default_factory=list)
    result: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Fields written by the arena beside the game itself (match id, faults, timings)."""
    version: int = VERSION
    """The format version the record was read as and is written as: 1 for a record whose seed dealt by
    the first arena's Mersenne Twister shuffle, 2 (VERSION) for the keyed shuffle of today's engine."""

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dictionary."""
        document: dict[str, Any] = {
            "format": FORMAT,
            "version": self.version,
            "ruleset": self.rules.ruleset.value,
            "players": self.rules.players,
            "deal_cap": self.rules.deal_cap,
            "seats": list(self.seats),
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "deals": [
                {
                    "number": deal.number,
                    "dealer": deal.dealer,
                    "hands": deal.hands,
                    "calls": deal.calls,
                    "cards": deal.cards,
                    "result": deal.result,
                }
                for deal in self.deals
            ],
            "result": self.result,
        }
        document.update(self.extra)
        return document

    def dumps(self) -> str:
        """The record as JSON text: one deal's moves per line stays readable with indent=1."""
        return json.dumps(self.to_json(), indent=1) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the record to `path` (the whole file at once: a partial write is never left behind)."""
        target = Path(path)
        temporary = target.with_name(target.name + ".partial")
        try:
            temporary.write_text(self.dumps(), encoding="utf-8")
            temporary.replace(target)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
            raise


def result_json(result: DealResult) -> dict[str, Any]:
    """A deal result in record form."""
    return {
        "contract": contract_json(result.contract),
        "points": list(result.points),
        "made": result.made,
        "payments": [
            {"payer": payment.payer, "payee": payment.payee, "tables": payment.tables}
            for payment in result.payments
        ],
        "tables": list(result.tables),
        "teams_out": list(result.teams_out),
    }


def contract_json(contract: Contract) -> dict[str, Any]:
    """A contract in record form."""
    return {
        "number": contract.number,
        "trump": contract.trump.letter if contract.trump is not None else None,
        "bidder": contract.bidder,
        "team": contract.team,
        "doubling": contract.doubling,
        "call": str(contract.bid.call) if contract.bid is not None else None,
    }


def match_result_json(
    match: Match, reason: EndReason, ranking: Sequence[int] | None = None
) -> dict[str, Any]:
    """The end of a match in record form: why it ended, tables, each team's rank (by the rules unless
    `ranking` is given, as after a forfeit)."""
    ranks = match.ranking() if ranking is None else ranking
    return {"reason": reason.value, "tables": list(match.tables), "ranking": list(ranks)}


def record_match(match: Match, seats: list[str], seed: int | None) -> GameRecord:
    """The record of `match` as far as it has been played (finished deals and the current one)."""
    if len(seats) != match.rules.players:
        raise ValueError(f"{match.rules.players} seat names needed, got {len(seats)}")
    deals = [_deal_record(result) for result in match.results]
    if not match.is_over:
        deal = match.deal
        deals.append(
            DealRecord(
                number=match.deal_number,
                dealer=deal.dealer,
                hands=_hands_json(deal.dealt, deal.seats),
                calls=[str(made.call) for made in deal.calls],
                cards=[str(play.card) for trick in deal.tricks for play in trick.plays]
                + [str(play.card) for play in deal.trick],
                result=None,
            )
        )
    reason = match.end_reason
    result = match_result_json(match, reason) if reason is not None else None
    return GameRecord(match.rules, list(seats), seed, match.first_dealer, deals, result)


def _deal_record(result: DealResult) -> DealRecord:
    return DealRecord(
        number=result.number,
        dealer=result.dealer,
        hands=_hands_json(result.hands, result.seats),
        calls=[str(made.call) for made in result.calls],
        cards=[str(play.card) for trick in result.tricks for play in trick.plays],
        result=result_json(result),
    )


def _hands_json(hands: tuple[tuple[Card, ...], ...], seats: tuple[int, ...]) -> list[list[str] | None]:
    return [[str(card) for card in hand] if seat in seats else None for seat, hand in enumerate(hands)]


# Loading.


def _upgrade_nothing(document: dict[str, Any]) -> dict[str, Any]:
    return document


_UPGRADES: Final = {1: _upgrade_nothing, 2: _upgrade_nothing}
"""For each version, what loading does to a document of that version or an older one on its way to the
current version: nothing yet (version 2 changed what a seed deals, not the document, and a version-1
record keeps its version: see VERSION)."""


MAX_RECORD_BYTES: Final = 128 * 1024 * 1024
"""The largest record `load` and `load_stream` read (128 MiB). The largest record the arena writes is
about 24 MiB (8 players, the 10,000-deal cap, every auction the longest there is), and about 52 MiB if
besides each of its 4 teams used the 10,000 strikes a host may allow, every fault with the longest
detail: the limit leaves more than twice that, and refuses what would not fit in memory
(docs/game-record.md)."""

MAX_DEPTH: Final = 64
"""How deeply a record's JSON may nest: a record the arena writes nests 5 levels; a file nested thousands
deep is an attack on the parser (or on anything that walks the document recursively later)."""


def loads(text: str) -> GameRecord:
    """Parse a record from JSON text.

    :raises RecordError: on bad JSON, a wrong shape, or an unknown version; the message says what was
        expected and where.
    """
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise RecordError(f"not JSON: {error}") from None
    except RecursionError:
        raise RecordError(f"not a game record: JSON nested more than {MAX_DEPTH} levels deep") from None
    except RecordError:
        raise
    except ValueError:
        # The one other ValueError of json.loads: an integer beyond int()'s 4,300 digits.
        raise RecordError("not a game record: a number in it has thousands of digits") from None
    _check_depth(document)
    return from_json(document)


def load(path: str | Path) -> GameRecord:
    """Read a record from a file: a regular file of at most MAX_RECORD_BYTES.

    :raises RecordFileError: the file is missing, unreadable, not a regular file or too big.
    :raises RecordError: what it holds is not a record (see `loads`).
    """
    try:
        data = read_file(path, MAX_RECORD_BYTES, "a game record")
    except FileRefusedError as error:
        raise RecordFileError(str(error)) from None
    return _decoded(data)


def load_stream(stream: BinaryIO) -> GameRecord:
    """Read a record from a stream (standard input), at most MAX_RECORD_BYTES of it.

    :raises RecordFileError: the stream holds more, or cannot be read.
    :raises RecordError: what it holds is not a record (see `loads`).
    """
    try:
        data = read_stream(stream, MAX_RECORD_BYTES, "a game record")
    except FileRefusedError as error:
        raise RecordFileError(str(error)) from None
    return _decoded(data)


def _decoded(data: bytes) -> GameRecord:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RecordError(f"not UTF-8 text: {error}") from None
    return loads(text)


def _refuse_constant(name: str) -> Any:
    raise RecordError(f"not JSON: {name} is not a JSON number")


def _check_depth(document: Any) -> None:
    """Refuse a document nested deeper than MAX_DEPTH (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            raise RecordError(f"not a game record: JSON nested more than {MAX_DEPTH} levels deep")
        pending.extend((child, depth + 1) for child in children)


def from_json(document: Any) -> GameRecord:
    """Check the shape of a parsed record and build a `GameRecord` (moves are checked by replay)."""
    if not isinstance(document, dict):
        raise RecordError("a game record is a JSON object")
    if document.get("format") != FORMAT:
        raise RecordError(f"not a game record: 'format' must be {FORMAT!r}")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordError("'version' must be an integer")
    if version > VERSION:
        raise RecordError(f"record version {version} is newer than this arena reads ({VERSION}); upgrade it")
    if version not in _UPGRADES:
        raise RecordError(f"unknown record version {version}")
    for step in range(version, VERSION + 1):
        document = _UPGRADES[step](document)
    try:
        rules = MatchRules(
            players=_integer(document, "players"),
            ruleset=Ruleset.parse(_string(document, "ruleset")),
            deal_cap=_optional_integer(document, "deal_cap"),
        )
    except ValueError as error:
        raise RecordError(str(error)) from None
    seats = document.get("seats")
    if (
        not isinstance(seats, list)
        or len(seats) != rules.players
        or not all(isinstance(s, str) for s in seats)
    ):
        raise RecordError(f"'seats' must be a list of {rules.players} names")
    seed = _optional_integer(document, "seed")
    if seed is not None and not MIN_SEED <= seed <= MAX_SEED:
        raise RecordError(f"'seed' must be a whole number from {SEED_RANGE}, or null")
    first_dealer = _seat(document.get("first_dealer"), "first_dealer", rules.players)
    raw_deals = document.get("deals")
    if not isinstance(raw_deals, list):
        raise RecordError("'deals' must be a list")
    deals = [_deal_from_json(raw, index + 1, rules.players) for index, raw in enumerate(raw_deals)]
    result = document.get("result")
    if result is not None and not isinstance(result, dict):
        raise RecordError("'result' must be an object or null")
    known = {"format", "version", "ruleset", "players", "deal_cap", "seats", "seed", "first_dealer"}
    known |= {"deals", "result"}
    extra = {key: value for key, value in document.items() if key not in known}
    return GameRecord(rules, list(seats), seed, first_dealer, deals, result, extra, version)


def _deal_from_json(raw: Any, number: int, players: int) -> DealRecord:
    if not isinstance(raw, dict):
        raise RecordError("a deal must be an object", deal=number)
    if raw.get("number") != number:
        raise RecordError(f"deals must be numbered in order: expected number {number}", deal=number)
    dealer = _seat(raw.get("dealer"), "dealer", players, number)
    hands = raw.get("hands")
    if not isinstance(hands, list) or len(hands) != players:
        raise RecordError(f"'hands' must list {players} hands (null for seats out)", deal=number)
    for hand in hands:
        if hand is not None and (not isinstance(hand, list) or not all(isinstance(c, str) for c in hand)):
            raise RecordError("each hand must be a list of cards like 'JS' or null", deal=number)
    moves = []
    for key in ("calls", "cards"):
        value = raw.get(key)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise RecordError(f"{key!r} must be a list of strings in canonical notation", deal=number)
        moves.append(value)
    result = raw.get("result")
    if result is not None and not isinstance(result, dict):
        raise RecordError("'result' must be an object or null", deal=number)
    return DealRecord(number, dealer, hands, moves[0], moves[1], result)


def _seat(value: Any, key: str, players: int, deal: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < players:
        raise RecordError(f"{key!r} must be a seat number, 0 to {players - 1}", deal=deal)
    return value


def _integer(document: dict[str, Any], key: str) -> int:
    value = document.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{key!r} must be an integer")
    return value


def _optional_integer(document: dict[str, Any], key: str) -> int | None:
    if document.get(key) is None:
        return None
    return _integer(document, key)


def _string(document: dict[str, Any], key: str) -> str:
    value = document.get(key)
    if not isinstance(value, str):
        raise RecordError(f"{key!r} must be a string")
    return value
