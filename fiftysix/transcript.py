"""Golden transcripts ("playthroughs", as in OpenSpiel): a whole match rendered as plain text.

A transcript records, for every decision of a match, what every seat at the table sees, the legal moves
of the seat to act and the move chosen, and a line for each finished deal. Checked-in transcripts pin
the engine's exact behaviour: any change to it shows up as a diff to review.

Pure: standard library and `fiftysix.engine` only, no I/O; every function returns a string. The format is
line-oriented so that a diff points at the decision that changed; `LEGEND` explains it and heads every
transcript.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from fiftysix.engine import (
    Bid,
    CallMade,
    Contract,
    DealResult,
    Match,
    MatchRules,
    Move,
    Payment,
    Phase,
    Play,
    Suit,
    Trick,
    View,
    format_cards,
    parse_call,
)
from fiftysix.players import RandomPlayer

Chooser = Callable[[View, Sequence[Move]], Move]
"""Picks a move for the seat to act from its view and its legal moves (never empty)."""

LEGEND: Final[tuple[str, ...]] = (
    "Format, one decision per `step`:",
    "  public  the fields of the view that every seat at the table shares (the view of the seat to act);",
    "  view    one line per seat at the table: `seat` and `hand`, the only private fields; a seat whose",
    "          shared fields differ from the `public` line would get its whole view, marked `differs`;",
    "  legal   the legal moves of the seat to act, in the engine's order; `move` the one chosen;",
    "  result  a finished deal: contract, points, payments, tables, teams out, dealt hands, calls, tricks.",
    "Notation: lists by comma, `-` when empty; calls `seat:call`; high bid `seat:call=contract`;",
    "  tricks `leader>cards/winner+points` (cards played in table order from the leader);",
    "  payments `payer>payee:tables` (teams); rules `players p/ruleset/deal cap`.",
)
"""The explanation of the format, printed at the top of every transcript."""


def render_view(view: View) -> str:
    """Every field of `view` on one line, in a fixed order: `seat=0 hand=[...] rules=... points=...`."""
    return " ".join(_private_fields(view) + _public_fields(view))


def render_moves(moves: Iterable[Move]) -> str:
    """Legal moves in canonical notation, in the engine's order, separated by spaces."""
    return " ".join(str(move) for move in moves)


def render_rules(rules: MatchRules) -> str:
    """Match settings as `4p/pairs/cap2` (`nocap` when the match has no deal cap)."""
    cap = "nocap" if rules.deal_cap is None else f"cap{rules.deal_cap}"
    return f"{rules.players}p/{rules.ruleset.value}/{cap}"


def render_result(result: DealResult) -> str:
    """Every field of a finished deal's result on one line."""
    hands = " ".join(f"{seat}:[{format_cards(result.hands[seat])}]" for seat in result.seats)
    fields = (
        f"deal={result.number}",
        f"dealer={result.dealer}",
        f"at={_numbers(result.seats)}",
        f"contract={_contract(result.contract)}",
        f"points={_numbers(result.points)}",
        f"made={'yes' if result.made else 'no'}",
        f"payments=[{' '.join(_payment(payment) for payment in result.payments)}]",
        f"tables={_numbers(result.tables)}",
        f"out={_numbers(result.teams_out)}",
        f"hands=[{hands}]",
        f"calls=[{_calls(result.calls)}]",
        f"tricks=[{_tricks(result.tricks, result.seats)}]",
    )
    return " ".join(fields)


def transcript(match: Match, choose: Chooser, header: Sequence[str] = ()) -> str:
    """Play `match` to its end with `choose` and return the transcript, ending with a newline.

    `header` lines come first, then `LEGEND`, each line prefixed with `# `. Then, for every decision,
    a `step` with the views of all seats at the table, the `legal` moves of the seat to act and its
    `move`; a `result` line when a deal ends; and at the `end` the final views and the teams' `ranking`.

    :raises ValueError: when `choose` returns a move that is not legal (from the engine).
    """
    lines = [f"# {line}".rstrip() for line in (*header, *LEGEND)]
    lines.append(
        f"match rules={render_rules(match.rules)} seed={match.seed} first_dealer={match.first_dealer}"
    )
    step = 0
    while not match.is_over:
        seat = match.deal.to_act
        step += 1
        lines.append(f"step {step}")
        lines.extend(_views(match, seat))
        legal = match.legal_moves()
        lines.append(f"legal seat={seat} count={len(legal)} moves=[{render_moves(legal)}]")
        move = choose(match.view(seat), legal)
        lines.append(f"move seat={seat} {move}")
        result = match.apply(seat, move)
        if result is not None:
            lines.append(f"result {render_result(result)}")
    lines.append("end")
    lines.extend(_views(match, match.deal.seats[0]))
    lines.append(f"ranking={_numbers(match.ranking())}")
    return "\n".join(lines) + "\n"


def random_chooser(seed: str, pass_probability: float = 0.7, max_raise: int = 3) -> Chooser:
    """A seeded `RandomPlayer` for transcripts: short auctions, contracts of every size. Stateful: make
    a new one for every match."""
    return RandomPlayer(random.Random(seed), pass_probability, max_raise).choose


def scripted_chooser(calls_by_deal: Mapping[int, Sequence[str]], otherwise: Chooser) -> Chooser:
    """The calls of `calls_by_deal[deal]` in order, at the start of each deal's auction; `otherwise`
    decides every other move (and is asked nothing while the script runs).

    :raises ValueError: when a scripted call is not legal at its turn.
    """

    def choose(view: View, legal: Sequence[Move]) -> Move:
        script = calls_by_deal.get(view.deal_number, ())
        if view.phase is Phase.AUCTION and len(view.calls) < len(script):
            call = parse_call(script[len(view.calls)])
            if call not in legal:
                raise ValueError(
                    f"scripted call {call} is not legal for seat {view.seat} in deal {view.deal_number}"
                )
            return call
        return otherwise(view, legal)

    return choose


def _views(match: Match, reference_seat: int) -> list[str]:
    """A `public` line from `reference_seat`'s view, then a line per seat at the table.

    Printing the shared fields once keeps an 8-player transcript readable and small; a seat whose
    shared fields differ still shows all of them, so nothing a seat sees is left out.
    """
    public = _public_fields(match.view(reference_seat))
    lines = [f"public {' '.join(public)}"]
    for seat in match.deal.seats:
        view = match.view(seat)
        if _public_fields(view) == public:
            lines.append(f"view {' '.join(_private_fields(view))}")
        else:
            lines.append(f"view {render_view(view)} differs")
    return lines


def _private_fields(view: View) -> list[str]:
    return [f"seat={view.seat}", f"hand=[{format_cards(view.hand)}]"]


def _public_fields(view: View) -> list[str]:
    return [
        f"rules={render_rules(view.rules)}",
        f"teams={_numbers(view.team_of)}",
        f"at={_numbers(view.seats)}",
        f"tables={_numbers(view.tables)}",
        f"out={_numbers(view.teams_out)}",
        f"deal={view.deal_number}",
        f"dealer={view.dealer}",
        f"phase={view.phase.value}",
        f"to_act={_optional(view.to_act)}",
        f"calls=[{_calls(view.calls)}]",
        f"high={_high_bid(view.high_bid)}",
        f"doubling={view.doubling}",
        f"contract={_contract(view.contract)}",
        f"tricks=[{_tricks(view.tricks, view.seats)}]",
        f"trick=[{_plays(view.trick, view.seats)}]",
        f"points={_numbers(view.points)}",
    ]


def _numbers(values: Iterable[int]) -> str:
    return ",".join(str(value) for value in values) or "-"


def _optional(value: int | None) -> str:
    return "-" if value is None else str(value)


def _denomination(number: int, trump: Suit | None) -> str:
    return f"{number}{trump.letter if trump is not None else 'NT'}"


def _calls(calls: Iterable[CallMade]) -> str:
    return " ".join(f"{made.seat}:{made.call}" for made in calls)


def _high_bid(bid: Bid | None) -> str:
    if bid is None:
        return "-"
    return f"{bid.seat}:{bid.call}={_denomination(bid.number, bid.trump)}"


def _contract(contract: Contract | None) -> str:
    if contract is None:
        return "-"
    fields = (
        _denomination(contract.number, contract.trump),
        f"by={contract.bidder}",
        f"team={contract.team}",
        f"doubling={contract.doubling}",
        f"bid={'all-pass' if contract.bid is None else _high_bid(contract.bid)}",
        f"doubler={_optional(contract.doubler)}",
        f"redoubler={_optional(contract.redoubler)}",
    )
    return f"[{' '.join(fields)}]"


def _plays(plays: Sequence[Play], seats: Sequence[int]) -> str:
    """`leader>cards` when the seats played in table order from the leader, else `seat:card,...`.

    The short form drops nothing: the long one shows any play out of turn, should the engine ever
    record one.
    """
    if not plays:
        return ""
    leader = plays[0].seat
    start = seats.index(leader) if leader in seats else 0
    in_order = [seats[(start + i) % len(seats)] for i in range(len(plays))]
    if [play.seat for play in plays] == in_order:
        return f"{leader}>" + ",".join(str(play.card) for play in plays)
    return ",".join(f"{play.seat}:{play.card}" for play in plays)


def _tricks(tricks: Iterable[Trick], seats: Sequence[int]) -> str:
    rendered = []
    for trick in tricks:
        plays = _plays(trick.plays, seats)
        if trick.plays and trick.plays[0].seat != trick.leader:
            # The recorded leader should be the first play's seat; show both if they ever disagree.
            plays = f"{trick.leader}?{plays}"
        rendered.append(f"{plays}/{trick.winner}+{trick.points}")
    return " ".join(rendered)


def _payment(payment: Payment) -> str:
    return f"{payment.payer}>{payment.payee}:{payment.tables}"
