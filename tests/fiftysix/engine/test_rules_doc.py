"""docs/rules.md agrees with the engine: its tables and worked examples are read from the Markdown and
checked against `fiftysix.engine`, so the page cannot drift from the code it describes.

Each test names the section it reads; a section that loses its table or its rows fails here rather
than passing on nothing.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import re
from pathlib import Path

import pytest
from engine_helpers import deal_for_trick, make_calls, make_deal

from fiftysix.engine import (
    BidForm,
    Call,
    Card,
    MatchRules,
    NotationError,
    Phase,
    Rank,
    Ruleset,
    Suit,
    hand_size_for,
    legal_calls,
    pack_for,
    parse_call,
    parse_card,
    ranks_for,
    table_amount,
)

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "docs" / "rules.md"
ENGINE = ROOT / "fiftysix" / "engine"


def section(title: str) -> str:
    """The text of the section headed `title`, up to the next heading of the same or a higher level."""
    lines = RULES.read_text(encoding="utf-8").splitlines()
    for start, line in enumerate(lines):
        heading = re.fullmatch(r"(#+) (.*)", line)
        if heading and heading.group(2) == title:
            level = len(heading.group(1))
            body = []
            for later in lines[start + 1 :]:
                other = re.match(r"(#+) ", later)
                if other and len(other.group(1)) <= level:
                    break
                body.append(later)
            return "\n".join(body)
    raise AssertionError(f"docs/rules.md has no section {title!r}")


def table(title: str) -> list[dict[str, str]]:
    """The rows of the first table in the section `title`, each a dict from column heading to cell."""
    rows = [line for line in section(title).splitlines() if line.startswith("|")]
    assert len(rows) > 2, f"no table in the section {title!r}"
    header, separator, *body = ([cell.strip() for cell in row.strip("|").split("|")] for row in rows)
    assert set("".join(separator)) <= set("-:"), f"the table in {title!r} has no separator row"
    return [dict(zip(header, cells, strict=True)) for cells in body]


def code(cell: str) -> str:
    """The text of the first code span in `cell`."""
    found = re.search(r"`([^`]*)`", cell)
    assert found is not None, f"no code in {cell!r}"
    return found.group(1)


def numbers(text: str) -> list[int]:
    return [int(number) for number in re.findall(r"\d+", text)]


SUITS_BY_NAME = {suit.plural: suit for suit in Suit}


def test_the_pack_table() -> None:
    rows = table("The pack")
    assert [int(row["players at the table"]) for row in rows] == [4, 6, 8]
    for row in rows:
        players = int(row["players at the table"])
        assert row["ranks in each suit"].split() == [rank.letter for rank in ranks_for(players)]
        assert int(row["cards in the pack"]) == len(pack_for(players))
        assert int(row["cards per hand"]) == hand_size_for(players)


def test_the_rank_and_points_table() -> None:
    rows = table("Rank and points")
    high_to_low = sorted(Rank, reverse=True)
    assert [code(row["letter"]) for row in rows] == [rank.letter for rank in high_to_low]
    for row, rank in zip(rows, high_to_low, strict=True):
        assert row["rank"] == rank.name.lower()
        assert int(row["points"]) == rank.points
        assert parse_card(code(row["letter"]) + "S").rank is rank
        in_pack = {players for players in (4, 6, 8) if rank in ranks_for(players)}
        assert set(numbers(row["in the pack with"])) == in_pack, rank


def test_the_points_stated_add_up() -> None:
    text = section("Rank and points")
    assert "**56 points**" in text
    assert sum(card.points for card in pack_for(4)) == sum(card.points for card in pack_for(8)) == 56
    example = re.search(r"A hand `([^`]*)` holds [^=]*= (\d+) points", text)
    assert example is not None
    assert sum(parse_card(text).points for text in example.group(1).split()) == int(example.group(2))


@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_the_teams_table(ruleset: Ruleset) -> None:
    rows = table("Players, seats and teams")
    assert [int(row["players"]) for row in rows] == [4, 6, 8]
    for row in rows:
        rules = MatchRules(int(row["players"]), ruleset)
        teams = row[f"teams in `{ruleset.value}` (seats)"].split("·")
        stated = {numbers(team)[0]: tuple(numbers(team)[1:]) for team in teams}
        assert stated == {team: rules.seats_of(team) for team in range(rules.team_count)}


CONTRACT = re.compile(r"(current bid \+ )?(\d+), (spades|hearts|diamonds|clubs|no trumps)")


def test_the_bid_forms_table() -> None:
    rows = table("Bid forms")
    assert {BidForm[code(row["`BidForm`"])] for row in rows} == set(BidForm)
    for row in rows:
        example = code(row["example"])
        call = parse_call(example)
        assert str(call) == example, "examples are written canonically"
        assert call.form is BidForm[code(row["`BidForm`"])], example
        contract = CONTRACT.fullmatch(row["contract it makes"])
        assert contract is not None, row["contract it makes"]
        plus, number, denomination = contract.groups()
        assert call.trump is SUITS_BY_NAME.get(denomination), example
        if plus:
            assert call.contract_number(30) == 30 + int(number), example
        else:
            assert call.contract_number(30) == int(number), example
        first_bid = call in legal_calls(0, can_double=False)
        assert first_bid == (row["allowed"] == "as the first bid or later"), example
        if not first_bid:
            assert row["allowed"] == "only after the first bid"
            assert call in legal_calls(28, can_double=False), example


def test_the_auction_examples() -> None:
    rows = table("Auction examples")
    assert len(rows) >= 8
    for row in rows:
        players, ruleset = row["players, ruleset"].split(", ")
        deal = make_deal(int(players), int(players) - 1, ruleset=Ruleset.parse(ruleset))
        make_calls(deal, code(row["calls"]))
        assert deal.phase is Phase.PLAY, row["calls"]
        assert str(deal.contract) == code(row["contract"]), row["calls"]


ORDINAL = re.compile(r"(\d)(?:st|nd|rd|th) card, `([^`]*)`")


def test_the_trick_examples() -> None:
    rows = table("Trick examples")
    assert len(rows) >= 8
    for row in rows:
        contract, cards = code(row["contract"]), code(row["cards played"])
        winner = ORDINAL.match(row["winner"])
        assert winner is not None, row["winner"]
        position, card = int(winner.group(1)), winner.group(2)
        assert cards.split()[position - 1] == card, f"{cards}: the {position}th card is not {card}"
        deal = deal_for_trick(4, contract, cards)
        for text in cards.split():
            deal.apply(deal.to_act, parse_card(text))
        assert deal.tricks[0].winner == position - 1, f"{contract}: {cards}"


def test_the_table_amounts_table() -> None:
    rows = table("Table amounts")
    columns = {
        "made": (True, 1),
        "made, doubled": (True, 2),
        "made, redoubled": (True, 4),
        "lost": (False, 1),
        "lost, doubled": (False, 2),
        "lost, redoubled": (False, 4),
    }
    covered = []
    for row in rows:
        bounds = numbers(row["contract"])
        contracts = range(bounds[0], bounds[-1] + 1)
        covered += contracts
        for column, (made, doubling) in columns.items():
            for contract in contracts:
                assert table_amount(contract, made, doubling) == int(row[column]), (contract, column)
    assert covered == list(range(28, 57))


def test_the_notation_table() -> None:
    rows = table("Reading notation")
    for row in rows:
        text = code(row["text read"])
        parsed: list[Card | Call] = []
        for parse in (parse_card, parse_call):
            with contextlib.suppress(NotationError):
                parsed.append(parse(text))
        if row["written"]:
            assert [str(move) for move in parsed] == [code(row["written"])], text
            if isinstance(parsed[0], Card):
                card = parsed[0]
                assert row["means"] == f"the {card.rank.name.lower()} of {card.suit.plural}"
        else:
            assert parsed == [], f"{text} is read as {parsed}"
            assert row["means"].startswith("not notation")


def test_the_legal_moves_example() -> None:
    example = re.search(
        r"Over a current bid of (\d+) \(an opponent's\), the list begins `([^`]*) \.\.\.`",
        section("Legal moves"),
    )
    assert example is not None
    stated = example.group(2).split()
    listed = [str(call) for call in legal_calls(int(example.group(1)), can_double=True)]
    assert listed[: len(stated)] == stated


def rules_raised_by_the_engine() -> set[str]:
    """The `rule` of every `IllegalMoveError(...)` that the engine's code raises."""
    rules = set()
    for path in ENGINE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "IllegalMoveError"
            ):
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path.name}: a rule that is not a literal"
                rules.add(first.value)
    return rules


def test_the_illegal_moves_table_names_every_rule_the_engine_raises() -> None:
    documented = [code(row["`rule`"]) for row in table("Illegal moves")]
    assert len(documented) == len(set(documented))
    assert set(documented) == rules_raised_by_the_engine()


CODE_LINK = re.compile(r"\[((?:`[^`]+`(?:, )?)+)\]\(\.\./([^)#]+\.py)\)")


def test_the_code_named_beside_each_section_exists() -> None:
    links = CODE_LINK.findall(RULES.read_text(encoding="utf-8"))
    assert len(links) >= 20
    for names, path in links:
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        for name in re.findall(r"`([^`]+)`", names):
            target: object = module
            for part in name.split("."):
                assert hasattr(target, part), f"docs/rules.md links {name} to {path}, which has no such name"
                target = getattr(target, part)
