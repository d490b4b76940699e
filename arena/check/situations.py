"""The scripted situations of the compliance check: each a match played up to one of the protocol's
corners (a redouble window, a team gone out, identical cards, ...), where the bot then takes over."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from arena.check.agreement import ITEM as AGREEMENT_ITEM
from fiftysix.engine import (
    PASS,
    Card,
    DealResult,
    FixedFirstDeal,
    Match,
    MatchRules,
    Move,
    Phase,
    Ruleset,
    hand_size_for,
    pack_for,
    parse_cards,
    parse_move,
)
from fiftysix.wire import (
    FaultCause,
    FaultRecord,
)

PLAYER_COUNTS: Final = (4, 6, 8)


# The scripted situations.


def config_name(players: int, ruleset: Ruleset) -> str:
    """`4 players pairs`: how items and reasons name a configuration."""
    return f"{players} players {ruleset.value}"


ALL_CONFIGS: Final = tuple((players, ruleset) for players in PLAYER_COUNTS for ruleset in Ruleset)
MATCH_ITEMS: Final = tuple(f"match {config_name(players, ruleset)}" for players, ruleset in ALL_CONFIGS)


@dataclass
class Script:
    """A situation ready to be played: the match at the bot's first decision and how to go on."""

    match: Match
    seat: int
    """The seat the bot plays; the checker plays every other seat (pass in the auction, first legal card)."""
    finished: list[DealResult]
    """Deals that ended before the bot's first decision: the bot is told them in DealEnd messages first."""
    moves_made: int
    """Moves made so far in the match, so that decision ids count every seat's decisions, as the arena's."""
    stop_after: int | None = None
    """End the match (by forfeit) after this many of the bot's answers instead of at the end of the deal."""
    faults: tuple[FaultRecord, ...] = ()
    """The faults told in MatchEnd."""


class _Table:
    """A match the checker plays for every seat to reach a situation."""

    def __init__(
        self,
        rules: MatchRules,
        seed: int = 1,
        first_hands: Mapping[int, Sequence[Card]] | None = None,
        tables: Sequence[int] | None = None,
    ) -> None:
        deals = FixedFirstDeal(first_hands, seed) if first_hands is not None else None
        # The last seat deals, so seat 0 makes the first call and leads the first trick.
        self.match = Match(rules, seed=seed, deals=deals, first_dealer=rules.players - 1)
        if tables is not None:
            self.match.tables = list(tables)
        self.finished: list[DealResult] = []
        self.moves = 0

    def apply(self, move: Move) -> None:
        seat = self.match.to_act
        assert seat is not None
        self.moves += 1
        result = self.match.apply(seat, move)
        if result is not None:
            self.finished.append(result)

    def play(self, moves: str) -> None:
        """Make the space-separated `moves` (calls or cards in notation), each by the seat to act."""
        for text in moves.split():
            self.apply(parse_move(text, self.match.deal.phase))

    def advance(self, until: Callable[[Match], bool]) -> None:
        """Play the checker's own moves for whoever is to act until `until(match)` holds."""
        while not until(self.match):
            self.apply(checker_move(self.match))

    def script(self, seat: int, **extra: Any) -> Script:
        assert self.match.to_act == seat, "a situation starts with the bot's seat to act"
        return Script(self.match, seat, self.finished, self.moves, **extra)


def checker_move(match: Match) -> Move:
    """The move the checker makes for a seat it plays: pass in the auction, the first legal card."""
    return PASS if match.deal.phase is Phase.AUCTION else match.legal_moves()[0]


def _hands(players: int, required: Mapping[int, str]) -> dict[int, list[Card]]:
    """A full table's hands in which each seat holds its `required` cards; the rest of the pack in turn."""
    size = hand_size_for(players)
    hands = {seat: parse_cards(required.get(seat, "")) for seat in range(players)}
    rest = list(pack_for(players))
    for hand in hands.values():
        for card in hand:
            rest.remove(card)
    seat = 0
    for card in rest:
        while len(hands[seat]) >= size:
            seat = (seat + 1) % players
        hands[seat].append(card)
        seat = (seat + 1) % players
    return hands


def _team_size(rules: MatchRules) -> int:
    return rules.players // rules.team_count


def _redouble_window(rules: MatchRules) -> Script:
    # Seat 0 (the bot's partner) bids, seat 1 doubles; the first of the contracting team after the
    # doubler is the first seat of team 0 after seat 1, which is seat `team_count`.
    table = _Table(rules)
    table.play("28S double")
    return table.script(rules.team_count)


def _after_double(rules: MatchRules) -> Script:
    table = _Table(rules)
    table.play("28S double" + " pass" * _team_size(rules))
    table.advance(lambda match: match.to_act == 1)
    return table.script(1)


def _after_redouble(rules: MatchRules) -> Script:
    # The bot's seat 0 bid 28S (the checker made that call for it) and leads the first trick.
    table = _Table(rules)
    table.play("28S double redouble")
    return table.script(0)


def _all_pass(rules: MatchRules) -> Script:
    table = _Table(rules)
    table.play(" ".join(["pass"] * rules.players))
    table.advance(lambda match: match.to_act == 1)
    return table.script(1)


def _team_out(rules: MatchRules) -> Script:
    # The last team holds one table. Seat 0 holds the top spades, so after every player passes its team
    # makes the all-pass 28 and every other team pays it a table: the last team goes out in deal 1.
    # Deal 2 is played by the players left, with the smaller table's pack and hands.
    players, teams = rules.players, rules.team_count
    tables = [12] * teams
    tables[-1] = 1
    tables[0] += 11
    strong = " ".join(str(card) for card in pack_for(players)[: hand_size_for(players)])
    table = _Table(rules, first_hands=_hands(players, {0: strong}), tables=tables)
    table.play(" ".join(["pass"] * players))
    table.advance(lambda match: match.deal_number == 2)
    return table.script(1)


def _last_trick(rules: MatchRules) -> Script:
    seat = rules.players - 1
    table = _Table(rules)
    table.play(" ".join(["pass"] * rules.players))
    table.advance(lambda match: match.to_act == seat and len(match.deal.hands[seat]) == 1)
    return table.script(seat)


def _identical_cards(rules: MatchRules) -> Script:
    # Both copies of KH are on the table (seat 0 led one, seat 1 followed with the other); the bot's
    # seat 2 holds both copies of JH, listed once among its legal moves.
    hands = _hands(rules.players, {0: "KH", 1: "KH", 2: "JH JH 9H"})
    table = _Table(rules, first_hands=hands)
    table.play("28H" + " pass" * (rules.players - 1) + " KH KH")
    return table.script(2)


def _match_end_with_faults(rules: MatchRules) -> Script:
    # The bot plays two decisions; then an opponent's seat (0) forfeits mid-deal after an earlier strike.
    table = _Table(rules)
    table.play("28S" + " pass" * (rules.players - 1))
    table.advance(lambda match: match.to_act == 1)
    team = rules.team_of(0)
    faults = (
        FaultRecord(0, team, FaultCause.TIMEOUT, "no move within 1000 ms", 1, substituted=True),
        FaultRecord(0, team, FaultCause.ILLEGAL_MOVE, "'QD' is not a legal move now; legal: KS", 1),
    )
    return table.script(1, stop_after=2, faults=faults)


@dataclass(frozen=True, slots=True)
class Situation:
    """A scripted situation: its item name, what it is, where it can be played and how it is built."""

    name: str
    description: str
    configs: tuple[tuple[int, Ruleset], ...]
    """Where it can be played, in order of preference: the first the bot plays is used."""
    build: Callable[[MatchRules], Script]
    deal_cap: int = 1


SITUATIONS: Final = (
    Situation(
        "redouble window",
        "the bot's partner bid 28S and an opponent doubled: the legal moves are pass and redouble",
        ALL_CONFIGS,
        _redouble_window,
    ),
    Situation(
        "play after double",
        "28S doubled: the bot plays the deal with doubling 2 in its view",
        ALL_CONFIGS,
        _after_double,
    ),
    Situation(
        "play after redouble",
        "the bot's seat bid 28S, an opponent doubled, its partner redoubled: the bot leads, doubling 4",
        ALL_CONFIGS,
        _after_redouble,
    ),
    Situation(
        "all-pass contract",
        "every player passed: 28 no trumps with contract.all_pass true and no high bid",
        ALL_CONFIGS,
        _all_pass,
    ),
    Situation(
        "team gone out",
        "a team ran out of tables in deal 1 (DealEnd with teams_out); deal 2 is played by the players left "
        "(view.seats shorter than the players, the smaller table's pack and hands)",
        ((8, Ruleset.PAIRS), (6, Ruleset.PAIRS)),
        _team_out,
        deal_cap=2,
    ),
    Situation(
        "last trick",
        "the bot's first decision is the last trick of a deal: a one-card hand",
        ALL_CONFIGS,
        _last_trick,
    ),
    Situation(
        "identical cards",
        "both copies of KH are on the table and the bot holds both copies of JH: the legal list has no "
        "repeats",
        ALL_CONFIGS,
        _identical_cards,
    ),
    Situation(
        "match end with faults",
        "after two of the bot's decisions an opponent forfeits mid-deal: MatchEnd with reason forfeit and "
        "two faults, one of them a strike",
        ALL_CONFIGS,
        _match_end_with_faults,
    ),
)
ITEM_NAMES: Final = (
    "handshake",
    "health",
    *MATCH_ITEMS,
    *(situation.name for situation in SITUATIONS),
    AGREEMENT_ITEM,
)
"""Every item of the check, in report order (`--only` filters by these names)."""


def build_situation(situation: Situation, players: int, ruleset: Ruleset) -> Script:
    """The script of `situation` in a match of `players` and `ruleset`."""
    return situation.build(MatchRules(players, ruleset, situation.deal_cap))
