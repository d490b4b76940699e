"""The fair-play check: what a bot claims to know of cards hidden from it, checked against the stored game
records.

A claim (a `CLAIM {...}` line that tests/bots/cheating_bot.py writes) says: in match M, deal N, when P
cards of the deal had been played, the seat `by` believes seat S still holds these cards. The truth is in
M's game record: S's hand as dealt less the cards S had played among the deal's first P cards. Each
claimed card that S really held then is correct (one card claimed twice counts only as often as S held
it), any other is wrong. A claim about the claimant's own seat tells nothing hidden from it: its cards are
counted as `own`, neither correct nor wrong. Correct cards are leaks the records verify: a bot that knew
nothing it should not would have none beyond lucky guesses, and a lucky guesser has as many wrong cards.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from fiftysix.engine import Card, Deal, parse_call, parse_card
from fiftysix.record import GameRecord, from_json

CLAIM_LINE: Final = re.compile(r"CLAIM (\{[^\n]*\})")
"""A claim in a log: `CLAIM ` and a JSON object on one line (whatever the line holds before it)."""


class ClaimError(ValueError):
    """A claim the records cannot check: an unknown match, deal or seat, a point the deal never reached,
    or a claim that is not one."""


@dataclass(frozen=True, slots=True)
class Claim:
    """What seat `by` claimed seat `seat` still held in deal `deal` of match `match_id`, when `played` cards
    of the deal had been played; `via` and `source` say how the claimant says it learned them (a match
    id: the deal it recognised)."""

    match_id: str
    deal: int
    by: int
    seat: int
    played: int
    cards: tuple[Card, ...]
    via: str = ""
    source: str = ""

    @classmethod
    def from_json(cls, document: Any) -> Claim:
        """A claim from its JSON object.

        :raises ClaimError: for a document that is not a claim.
        """
        try:
            if not isinstance(document, dict):
                raise TypeError("not an object")
            return cls(
                match_id=_text(document["match_id"]),
                deal=_number(document["deal"]),
                by=_number(document["by"]),
                seat=_number(document["seat"]),
                played=_number(document["played"]),
                cards=tuple(parse_card(_text(card)) for card in document["cards"]),
                via=_text(document.get("via", "")),
                source=_text(document.get("from", "")),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ClaimError(f"not a claim: {document!r} ({error})") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _number(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"{value!r} is not a whole number")
    return value


def parse_claims(text: str) -> list[Claim]:
    """Every claim in `text` (a bot's log), in order; other lines are ignored.

    :raises ClaimError: for a CLAIM line whose JSON is not a claim.
    """
    claims = []
    for found in CLAIM_LINE.finditer(text):
        try:
            document = json.loads(found.group(1))
        except ValueError:
            raise ClaimError(f"not a claim: {found.group(0)[:200]!r}") from None
        claims.append(Claim.from_json(document))
    return claims


def read_claims(paths: Iterable[Path]) -> list[Claim]:
    """Every claim in the files at `paths` (bot logs), file by file."""
    return [
        claim for path in paths for claim in parse_claims(path.read_text(encoding="utf-8", errors="replace"))
    ]


@dataclass(frozen=True, slots=True)
class LeakCount:
    """Claims and their cards: `correct` cards the claimed seat really held unplayed, `wrong` ones it did
    not, `own` cards claimed of the claimant's own seat (hidden from nobody, not counted either way)."""

    claims: int = 0
    correct: int = 0
    wrong: int = 0
    own: int = 0

    def __add__(self, other: LeakCount) -> LeakCount:
        return LeakCount(
            self.claims + other.claims,
            self.correct + other.correct,
            self.wrong + other.wrong,
            self.own + other.own,
        )


@dataclass(frozen=True)
class LeakReport:
    """The check of every claim: counts per match and per way of learning (`via`), and their total."""

    matches: dict[str, LeakCount] = field(default_factory=dict)
    via: dict[str, LeakCount] = field(default_factory=dict)

    @property
    def total(self) -> LeakCount:
        """All claims together."""
        return sum(self.matches.values(), LeakCount())

    @property
    def leaks(self) -> int:
        """Hidden cards claimed rightly: the leaks the records verify."""
        return self.total.correct


def check_claims(claims: Iterable[Claim], records: Mapping[str, GameRecord]) -> LeakReport:
    """Count each claim's correct, wrong and own cards against the record of its match.

    :raises ClaimError: for a claim about a match not in `records`, a deal not in its record, a seat not
        at that deal's table, or more cards played than the deal holds.
    """
    matches: dict[str, LeakCount] = {}
    via: dict[str, LeakCount] = {}
    plays: dict[tuple[str, int], DealPlays] = {}
    for claim in claims:
        record = records.get(claim.match_id)
        if record is None:
            raise ClaimError(f"a claim about match {claim.match_id!r}, which is not in the records")
        key = (claim.match_id, claim.deal)
        if key not in plays:
            plays[key] = deal_plays(record, claim.deal, claim.match_id)
        count = plays[key].check(claim)
        matches[claim.match_id] = matches.get(claim.match_id, LeakCount()) + count
        via[claim.via] = via.get(claim.via, LeakCount()) + count
    return LeakReport(matches, via)


@dataclass(frozen=True, slots=True)
class DealPlays:
    """One recorded deal: each seat's hand as dealt and every card played, by whom, in order."""

    where: str
    dealt: dict[int, tuple[Card, ...]]
    plays: tuple[tuple[int, Card], ...]

    def held(self, seat: int, played: int) -> Counter[Card]:
        """The cards `seat` still held once the deal's first `played` cards were played."""
        if seat not in self.dealt:
            raise ClaimError(f"{self.where}: seat {seat} is not at the table")
        if played > len(self.plays):
            raise ClaimError(f"{self.where}: {played} cards claimed played, but only {len(self.plays)} were")
        gone = Counter(card for player, card in self.plays[:played] if player == seat)
        return Counter(self.dealt[seat]) - gone

    def check(self, claim: Claim) -> LeakCount:
        """The counts of one claim about this deal."""
        held = self.held(claim.seat, claim.played)
        self.held(claim.by, claim.played)  # the claimant sits at this table too
        if claim.seat == claim.by:
            return LeakCount(claims=1, own=len(claim.cards))
        correct = sum((Counter(claim.cards) & held).values())
        return LeakCount(claims=1, correct=correct, wrong=len(claim.cards) - correct)


def deal_plays(record: GameRecord, number: int, match_id: str = "") -> DealPlays:
    """Deal `number` of `record`, replayed to learn who played each card.

    :raises ClaimError: for a deal the record does not hold, or one that does not replay.
    """
    where = f"match {match_id!r} deal {number}"
    if not 1 <= number <= len(record.deals):
        raise ClaimError(f"{where}: the record has {len(record.deals)} deals")
    recorded = record.deals[number - 1]
    try:
        dealt = {
            seat: tuple(parse_card(card) for card in hand)
            for seat, hand in enumerate(recorded.hands)
            if hand is not None
        }
        team_of = tuple(record.rules.team_of(seat) for seat in range(record.rules.players))
        deal = Deal(tuple(dealt), team_of, recorded.dealer, dealt)
        for call in recorded.calls:
            deal.apply(deal.to_act, parse_call(call))
        plays = []
        for text in recorded.cards:
            card = parse_card(text)
            plays.append((deal.to_act, card))
            deal.apply(deal.to_act, card)  # refused before the auction ends or after the last trick
    except ValueError as error:
        raise ClaimError(f"{where} does not replay: {error}") from None
    return DealPlays(where, dealt, tuple(plays))


def stored_records(db: str | Path) -> dict[str, GameRecord]:
    """Every game record of the ladder file `db`, by match id (read through the arena's store)."""
    from arena.ladder.store import LadderStore  # the arena only here: the check itself needs the game alone

    store = LadderStore(str(db))
    try:
        return {match_id: from_json(document) for match_id, document in store.browse.game_records()}
    finally:
        store.close()
