"""End to end against real bot servers on loopback: a short ladder of three random bots, then what
`arena ladder show` reports of it (ratings with their likelihood of superiority, the crosstable) and
what `arena ladder export` writes (game records as JSON lines, standings as CSV)."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from ladder_support import FAST, registered

from arena.cli import export, main
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from fiftysix.record import from_json
from fiftysix.replay import replay
from sdk import BotServer
from tests.arena.ladder.match_support import save_match


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


def test_export_jsonl_writes_every_game_record_a_line(
    played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "records.jsonl"
    assert main(["ladder", "--db", str(played), "export", "--jsonl", str(out)]) == 0
    assert capsys.readouterr().out == f"Exported 12 game records to {out}\n"
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12
    for line in lines:
        assert replay(from_json(json.loads(line))).complete
    assert main(["ladder", "--db", str(played), "export", "--jsonl", "-"]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_export_jsonl_holds_back_the_records_of_sets_not_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the site holds them back: a set's other rotations replay the same deals."""
    db = tmp_path / "ladder.db"
    store = LadderStore(db)
    over = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=True)
    save_match(store, "over-0", over, 0, "forfeit", [1, 2], [], {"match_id": "over-0"}, 3, 0.5)
    store.sets.void_set(over.id, "a bot was removed")
    in_play = store.sets.create_set(4, "pairs", None, 2, ["a", "b"], isolated=True)
    save_match(store, "held-0", in_play, 0, "forfeit", [1, 2], [], {"match_id": "held-0"}, 3, 0.5)
    store.close()
    out = tmp_path / "records.jsonl"
    assert main(["ladder", "--db", str(db), "export", "--jsonl", str(out)]) == 0
    said = capsys.readouterr().out
    assert said == f"Exported 1 game records to {out} (1 held back: their sets are not over)\n"
    assert [json.loads(line)["match_id"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "over-0"
    ]
    assert main(["ladder", "--db", str(db), "export", "--jsonl", "-"]) == 0
    printed = capsys.readouterr()
    assert [json.loads(line)["match_id"] for line in printed.out.splitlines()] == ["over-0"]
    assert printed.err == "1 game records held back: their sets are not over\n"


def test_export_csv_writes_the_standings(
    played: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "standings.csv"
    assert main(["ladder", "--db", str(played), "export", "--csv", str(out)]) == 0
    assert capsys.readouterr().out == f"Exported the standings of 4p-pairs (3 bots) to {out}\n"
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert main(["ladder", "--db", str(played), "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(row["bot"], float(row["elo"]), int(row["matches"])) for row in rows] == [
        (line["bot"], line["elo"], line["matches"]) for line in shown
    ]
    assert rows[-1]["superiority"] == ""
    assert main(["ladder", "--db", str(played), "export", "--csv", "-", "--pool", "6p-pairs"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("rank,bot,pool,elo,interval,superiority,")
    assert [row.split(",")[3:5] for row in printed[1:]] == [["1500.0", ""]] * 3  # nothing rated there


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        (["export"], 2, "one of the arguments --jsonl --csv --html is required"),
        (["export", "--jsonl", "-", "--csv", "-"], 2, "not allowed with argument"),
        (["export", "--jsonl", "-", "--pool", "4p-pairs"], 2, "--pool goes with --csv"),
        (
            ["export", "--jsonl", "{missing}/records.jsonl"],
            1,
            "cannot write {missing}/records.jsonl: No such file",
        ),
        (["export", "--csv", "{tmp}"], 1, "cannot write {tmp}: Is a directory"),
        (["export", "--csv", "-", "--pool", "5p-pairs"], 1, "no pool '5p-pairs'"),
    ],
)
def test_export_errors_are_one_line(
    played: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    status: int,
    message: str,
) -> None:
    given = [argument.format(missing=tmp_path / "missing", tmp=tmp_path) for argument in arguments]
    with (
        pytest.raises(SystemExit) if status == 2 and "pool goes" not in message else contextlib.nullcontext()
    ):
        assert main(["ladder", "--db", str(played), *given]) == status
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("arena ladder export: error: ")
    assert message.format(missing=tmp_path / "missing", tmp=tmp_path) in error


def test_export_streams_the_records_in_constant_memory(tmp_path: Path) -> None:
    """3,000 records of about 4 KB (12 MB) go through with a peak of well under 1 MB allocated: a record
    page at a time (store.RECORDS_PAGE), never the history."""
    path = tmp_path / "big.db"
    store = LadderStore(path)
    store.sets.void_set(
        store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=True).id,
        "over, so its records are exported",
    )
    store.close()
    db = sqlite3.connect(path)
    record = json.dumps({"padding": "x" * 4000})
    db.executemany(
        "INSERT INTO matches (id, set_id, rotation, team_bots, finished_at, reason, ranking, bot_ranks,"
        " faults, decisions, seconds) VALUES (?, 1, ?, '[]', ?, 'r', '[]', '{}', '[]', 1, 0.1)",
        [(f"m{number}", number, number) for number in range(3000)],
    )
    db.executemany(
        "INSERT INTO match_records VALUES (?, ?)", [(f"m{number}", record) for number in range(3000)]
    )
    db.commit()
    db.close()
    store = LadderStore(path, read_only=True)
    written = 0

    class Counting(io.TextIOBase):
        def write(self, text: str) -> int:
            nonlocal written
            written += len(text)
            return len(text)

    tracemalloc.start()
    try:
        assert export.write_records(store, Counting()) == 3000  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        store.close()
    assert written > 12_000_000
    assert peak < 1_000_000
