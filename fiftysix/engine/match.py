"""A match of 56: deals in sequence, tables paid between teams, teams going out, the ranking.

docs/rules.md#the-deal, docs/rules.md#scoring, docs/rules.md#teams-going-out and
docs/rules.md#the-end-of-the-match. The match deals each hand itself from a `DealSource`:
`ShuffledDeals` (seeded, the default) or a recorded list of hands (for replays).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from fiftysix.engine.cards import Card, pack_for
from fiftysix.engine.deal import Deal
from fiftysix.engine.errors import MatchOverError
from fiftysix.engine.rules import STARTING_TABLES, EndReason, MatchRules, table_amount
from fiftysix.engine.seeds import deal_stream, first_dealer_stream, seed_key
from fiftysix.engine.values import CallMade, Contract, Move, Phase, Trick
from fiftysix.engine.view import View


class DealSource(Protocol):
    """Where a match gets each deal's hands."""

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> Mapping[int, Sequence[Card]]:
        """The hands of deal `deal_number` (from 1) for `seats` (in playing order) dealt by `dealer`."""
        ...


class ShuffledDeals:
    """Seeded shuffles: the same seed gives the same deals in every run and on every machine.

    Each deal's shuffle depends only on the seed, the deal number and the players at the table, so a
    deal does not change when an earlier deal is played differently (what duplicate play needs). It is
    drawn by a keyed cryptographic function of those (seeds.py), so a deal seen tells nothing of the
    seed or of any other deal. The dealer deals the whole pack one card at a time, starting with the
    player to their right.

    :raises ValueError: for a seed outside MIN_SEED to MAX_SEED.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._key = seed_key(seed)

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> dict[int, list[Card]]:
        """Shuffle the pack for `len(seats)` players and deal it from the dealer's right."""
        pack = list(pack_for(len(seats)))
        deal_stream(self._key, deal_number, len(seats)).shuffle(pack)
        start = seats.index(dealer) + 1
        order = [seats[(start + i) % len(seats)] for i in range(len(seats))]
        return {seat: pack[i :: len(seats)] for i, seat in enumerate(order)}


class FixedFirstDeal:
    """Chosen hands for deal 1, seeded shuffles after it: for tests, scripted situations and puzzles."""

    def __init__(self, first: Mapping[int, Sequence[Card]], seed: int) -> None:
        self.first = first
        self.later = ShuffledDeals(seed)

    def hands(self, deal_number: int, seats: tuple[int, ...], dealer: int) -> Mapping[int, Sequence[Card]]:
        """The chosen hands for deal 1, then shuffles."""
        if deal_number == 1:
            return self.first
        return self.later.hands(deal_number, seats, dealer)


def first_dealer_for(seed: int, players: int) -> int:
    """The first dealer of a match with this seed, chosen at random from the seed (seeds.py).

    :raises ValueError: for a seed outside MIN_SEED to MAX_SEED.
    """
    return first_dealer_stream(seed_key(seed)).below(players)


@dataclass(frozen=True, slots=True)
class Payment:
    """Tables moved from one team to another when a deal is settled."""

    payer: int
    payee: int
    tables: int


@dataclass(frozen=True, slots=True)
class DealResult:
    """Everything about a finished deal, all of it public once the deal is over."""

    number: int
    dealer: int
    seats: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    calls: tuple[CallMade, ...]
    contract: Contract
    tricks: tuple[Trick, ...]
    points: tuple[int, ...]
    made: bool
    payments: tuple[Payment, ...]
    tables: tuple[int, ...]
    teams_out: tuple[int, ...]


class Match:
    """A whole match: create it, then `apply` moves for `to_act` until `is_over`.

    `apply` returns the `DealResult` when a move ends a deal; the next deal is then dealt at once, so
    there is always exactly one seat to act until the match is over.
    """

    def __init__(
        self,
        rules: MatchRules,
        seed: int = 0,
        deals: DealSource | None = None,
        first_dealer: int | None = None,
    ) -> None:
        self.rules = rules
        self.seed = seed
        self._deals = deals if deals is not None else ShuffledDeals(seed)
        self.first_dealer = (
            first_dealer if first_dealer is not None else first_dealer_for(seed, rules.players)
        )
        if not 0 <= self.first_dealer < rules.players:
            raise ValueError(
                f"the first dealer must be a seat 0..{rules.players - 1}, got {self.first_dealer}"
            )
        self.team_of = tuple(rules.team_of(seat) for seat in range(rules.players))
        self.tables = [STARTING_TABLES] * rules.team_count
        self.out_in_deal: dict[int, int] = {}
        self.results: list[DealResult] = []
        self.seats = tuple(range(rules.players))
        self.deal_number = 1
        self.deal = self._new_deal(self.first_dealer)
        self.is_over = False

    def _new_deal(self, dealer: int) -> Deal:
        hands = self._deals.hands(self.deal_number, self.seats, dealer)
        return Deal(self.seats, self.team_of, dealer, hands)

    @property
    def dealer(self) -> int:
        """The dealer of the current (or, once over, the last) deal."""
        return self.deal.dealer

    @property
    def to_act(self) -> int | None:
        """The seat to act, or None once the match is over."""
        return None if self.is_over else self.deal.to_act

    @property
    def end_reason(self) -> EndReason | None:
        """Why the match ended by the rules (one team left, or the deal cap); None while it goes on."""
        if not self.is_over:
            return None
        return EndReason.ONE_TEAM_LEFT if len(self.teams_in) <= 1 else EndReason.DEAL_CAP

    @property
    def teams_in(self) -> tuple[int, ...]:
        """The teams that still have tables, in team order."""
        return tuple(team for team in range(self.rules.team_count) if team not in self.out_in_deal)

    @property
    def teams_out(self) -> tuple[int, ...]:
        """The teams out of tables, in the order they went out (by team within a deal)."""
        return tuple(sorted(self.out_in_deal, key=lambda team: (self.out_in_deal[team], team)))

    def legal_moves(self) -> Sequence[Move]:
        """The legal moves of the seat to act (empty once the match is over)."""
        return () if self.is_over else self.deal.legal_moves()

    def apply(self, seat: int, move: Move) -> DealResult | None:
        """Make `move` for `seat`; returns the deal's result if the move ended a deal.

        :raises IllegalMoveError: when the move is not legal now (the match is unchanged).
        :raises MatchOverError: when the match is already over.
        """
        if self.is_over:
            raise MatchOverError(f"the match is over; seat {seat} cannot play {move}")
        deal = self.deal
        deal.apply(seat, move)
        if deal.phase is not Phase.FINISHED:
            return None
        return self._settle(deal)

    def view(self, seat: int) -> View:
        """What `seat` may know now: its own hand and everything public."""
        if not 0 <= seat < self.rules.players:
            raise ValueError(f"no seat {seat} in a {self.rules.players}-player match")
        return self.deal.view(seat, self.rules, self.tables, self.teams_out, self.deal_number)

    def _settle(self, deal: Deal) -> DealResult:
        contract = deal.contract
        assert contract is not None
        made = deal.made
        payments = self._pay(contract, made)
        out_now = tuple(team for team in self.teams_in if self.tables[team] == 0)
        for team in out_now:
            self.out_in_deal[team] = self.deal_number
        result = DealResult(
            number=self.deal_number,
            dealer=deal.dealer,
            seats=deal.seats,
            hands=deal.dealt,
            calls=tuple(deal.calls),
            contract=contract,
            tricks=tuple(deal.tricks),
            points=tuple(deal.points),
            made=made,
            payments=payments,
            tables=tuple(self.tables),
            teams_out=out_now,
        )
        self.results.append(result)
        cap = self.rules.deal_cap
        if len(self.teams_in) <= 1 or (cap is not None and self.deal_number >= cap):
            self.is_over = True
            return result
        if out_now:
            self.seats = tuple(seat for seat in self.seats if self.team_of[seat] not in self.out_in_deal)
        self.deal_number += 1
        self.deal = self._new_deal(self._next_dealer(deal.dealer))
        return result

    def _next_dealer(self, dealer: int) -> int:
        players = self.rules.players
        for step in range(1, players + 1):
            seat = (dealer + step) % players
            if seat in self.seats:
                return seat
        raise AssertionError("no seat left at the table")

    def _pay(self, contract: Contract, made: bool) -> tuple[Payment, ...]:
        """Move tables for a finished deal, capped at what each payer has (docs/rules.md#scoring)."""
        amount = table_amount(contract.number, made, contract.doubling)
        others = self._other_teams_from(contract.bidder, contract.team)
        tables = self.tables
        if made:
            payments = []
            for team in others:
                paid = min(amount, tables[team])
                tables[team] -= paid
                tables[contract.team] += paid
                payments.append(Payment(team, contract.team, paid))
            return tuple(payments)
        owed = dict.fromkeys(others, amount)
        paid_to = dict.fromkeys(others, 0)
        if tables[contract.team] >= amount * len(others):
            paid_to = dict(owed)
        else:
            # Not enough for everybody: one table at a time to each team in turn until none is left.
            left = tables[contract.team]
            while left:
                for team in others:
                    if left and paid_to[team] < owed[team]:
                        paid_to[team] += 1
                        left -= 1
        for team, paid in paid_to.items():
            tables[contract.team] -= paid
            tables[team] += paid
        return tuple(Payment(contract.team, team, paid) for team, paid in paid_to.items() if paid)

    def _other_teams_from(self, bidder: int, team: int) -> list[int]:
        """The teams still in other than `team`, in playing order from the bidder's right."""
        order: list[int] = []
        players = self.rules.players
        for step in range(1, players):
            seat = (bidder + step) % players
            other = self.team_of[seat]
            if seat in self.seats and other != team and other not in order:
                order.append(other)
        return order

    def ranking(self, last: Collection[int] = ()) -> tuple[int, ...]:
        """Each team's rank (1 is best; equal ranks share a number), by docs/rules.md#the-ranking.

        Teams still in rank above teams that went out, by tables held (equal tables rank equal); teams
        that went out rank by the deal in which they went out (later is higher, same deal equal).
        Teams in `last` rank below all others (an arena's forfeit policy; the rules never use it).
        """
        teams = range(self.rules.team_count)

        def standing(team: int) -> tuple[int, int]:
            if team in last:
                return (-1, 0)
            out = self.out_in_deal.get(team)
            return (1, self.tables[team]) if out is None else (0, out)

        keys = [standing(team) for team in teams]
        return tuple(1 + sum(1 for other in keys if other > keys[team]) for team in teams)
