"""Readable text for people: deals, results, standings. Used by the command line."""

from __future__ import annotations

from collections.abc import Sequence

from fiftysix.engine import DealResult, MatchRules, format_cards


def describe_rules(rules: MatchRules, seed: int | None, first_dealer: int) -> list[str]:
    """The match settings and the teams, as header lines."""
    cap = f", at most {rules.deal_cap} deals" if rules.deal_cap else ""
    seed_text = f"seed {seed}" if seed is not None else "hands as recorded"
    lines = [f"Match: {rules.players} players, {rules.ruleset.value} ruleset, {seed_text}{cap}"]
    lines.append(f"First dealer: seat {first_dealer}")
    for team in range(rules.team_count):
        seats = ", ".join(str(seat) for seat in rules.seats_of(team))
        lines.append(f"Team {team}: seats {seats}")
    return lines


def describe_deal(result: DealResult, rules: MatchRules, show_hands: bool = True) -> list[str]:
    """A finished deal: hands, auction, tricks, result and tables."""
    lines = [f"Deal {result.number}: dealer seat {result.dealer}, {len(result.seats)} players at the table"]
    if show_hands:
        for seat in result.seats:
            lines.append(f"  seat {seat} (team {rules.team_of(seat)}): {format_cards(result.hands[seat])}")
    calls = " ".join(f"{made.seat}:{made.call}" for made in result.calls)
    lines.append(f"  auction: {calls}")
    lines.append(f"  contract: {result.contract}")
    for index, trick in enumerate(result.tricks, start=1):
        plays = " ".join(f"{play.seat}:{play.card}" for play in trick.plays)
        lines.append(f"  trick {index:2}: {plays}  -> seat {trick.winner} ({trick.points} points)")
    contract = result.contract
    taken = result.points[contract.team]
    outcome = "made" if result.made else "lost"
    lines.append(f"  result: team {contract.team} took {taken} of 56 for {contract.number}: {outcome}")
    for payment in result.payments:
        plural = "" if payment.tables == 1 else "s"
        lines.append(f"  team {payment.payer} pays team {payment.payee} {payment.tables} table{plural}")
    lines.append("  tables: " + ", ".join(f"team {team} {held}" for team, held in enumerate(result.tables)))
    for team in result.teams_out:
        lines.append(f"  team {team} is out of tables")
    return lines


def describe_ranking(
    ranking: Sequence[int], tables: Sequence[int], rules: MatchRules, names: Sequence[str] | None = None
) -> list[str]:
    """The final ranking, best first; `names` are per seat when the teams have names."""
    lines = ["Final ranking:"]
    for team in sorted(range(len(ranking)), key=lambda team: (ranking[team], team)):
        seats = rules.seats_of(team)
        who = f"team {team} (seats {', '.join(str(s) for s in seats)})"
        if names is not None:
            who += " " + "/".join(sorted({names[seat] for seat in seats}))
        lines.append(f"  {ranking[team]}. {who}: {tables[team]} tables")
    return lines
