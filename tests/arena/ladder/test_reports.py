"""End to end against real bot servers on loopback: a short ladder of three random bots, then what
`arena ladder show` reports of it (ratings with their likelihood of superiority, the crosstable)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from ladder_support import FAST, registered

from arena.cli import main
from arena.ladder import Ladder, LadderSettings, LocalBots
from sdk import BotServer


@pytest.fixture(scope="module")
def played(servers: list[BotServer], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ladder file where bot0, bot1 and bot2 (random bots) played 12 matches: 6 rated sets."""
    folder = tmp_path_factory.mktemp("reports")
    store = registered(folder / "ladder.db", servers)
    settings = LadderSettings(matches=12, deal_cap=2, time_control=FAST, seed=5)
    report = asyncio.run(Ladder(store, settings, LocalBots(folder)).run())
    assert report.sets_rated == 6
    store.close()
    return folder / "ladder.db"


def test_the_standings_give_each_bot_its_likelihood_of_superiority(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ladder", "--db", str(played), "show", "--json"]) == 0
    lines = json.loads(capsys.readouterr().out)
    assert [line["elo"] for line in lines] == sorted((line["elo"] for line in lines), reverse=True)
    assert sum(line["elo"] for line in lines) == pytest.approx(3 * 1500, abs=0.2)
    assert all(0.5 <= line["superiority"] <= 1.0 for line in lines[:2])
    assert lines[2]["superiority"] is None
    assert all(line["interval"] > 0 for line in lines)
    assert main(["ladder", "--db", str(played), "show"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].split()[:5] == ["rank", "bot", "elo", "95%", "interval"]
    assert "LOS" in text[1]
    assert text[2].split()[5].endswith("%")  # the best bot's LOS over the second
    assert text[4].split()[5] == "-"  # the last has none below it


def test_the_crosstable_shows_each_pair_head_to_head(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ladder", "--db", str(played), "show", "--crosstable", "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)
    by_pair = {(cell["bot"], cell["opponent"]): cell for cell in cells}
    assert all(cell["pool"] == "4p-pairs" for cell in cells)
    assert sum(cell["sets"] for cell in cells) == 2 * 6  # each set seen from both sides
    for (bot, opponent), cell in by_pair.items():
        mirror = by_pair[(opponent, bot)]
        assert cell["sets"] == mirror["sets"]
        assert cell["score"] + mirror["score"] == pytest.approx(cell["sets"])
    assert main(["ladder", "--db", str(played), "show", "--crosstable"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("Crosstable of 4p-pairs")
    assert text[1].split() == ["bot", "elo", "score", "1", "2", "3"]
    first = text[2].split()
    assert first[0] == "1"
    assert first[4] == "x"  # a bot against itself
    sets = sum(cell["sets"] for cell in cells if cell["bot"] == first[1])
    assert first[3].endswith(f"/{sets}")  # its summed score over all its sets


def test_a_pool_without_rated_sets_has_an_empty_crosstable(
    played: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ladder", "--db", str(played), "show", "--crosstable", "--pool", "6p-pairs"]) == 0
    assert capsys.readouterr().out == "No rated sets in 6p-pairs yet.\n"
    assert main(["ladder", "--db", str(played), "show", "--crosstable", "--pool", "5p-pairs"]) == 1
    assert capsys.readouterr().err.startswith("arena ladder show: error: no pool '5p-pairs'")
