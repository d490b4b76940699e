"""The `arena` command line: play, replay, and clear errors for bad flags and bad files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main


def run_arena(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real command in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_play_prints_deals_and_ranking_and_saves_a_record(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    finished = run_arena("play", "--players", "6", "--seed", "4", "--save", str(path))
    assert finished.returncode == 0, finished.stderr
    out = finished.stdout
    assert "Match: 6 players, pairs ruleset, seed 4" in out
    assert "Deal 1: dealer seat" in out
    assert "auction:" in out
    assert "trick  1:" in out
    assert "Final ranking:" in out
    assert json.loads(path.read_text())["players"] == 6
    replayed = run_arena("replay", str(path))
    assert replayed.returncode == 0, replayed.stderr
    assert "every move legal and every result checked; complete" in replayed.stdout


def test_same_seed_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--seed", "9", "--brief"]) == 0
    first = capsys.readouterr().out
    assert main(["play", "--seed", "9", "--brief"]) == 0
    assert capsys.readouterr().out == first
    assert main(["play", "--seed", "10", "--brief"]) == 0
    assert capsys.readouterr().out != first


def test_deal_cap_limits_the_match(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--seed", "3", "--deal-cap", "2", "--ruleset", "partnership"]) == 0
    out = capsys.readouterr().out
    assert "Deal 2:" in out
    assert "Deal 3:" not in out


def test_replay_reports_an_illegal_move_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    assert main(["play", "--seed", "2", "--save", str(path), "--brief"]) == 0
    document = json.loads(path.read_text())
    document["deals"][0]["calls"][0] = "+3H"
    path.write_text(json.dumps(document))
    finished = run_arena("replay", str(path))
    assert finished.returncode == 1
    assert "deal 1, move 1" in finished.stderr
    assert "plus_after_first_bid" in finished.stderr


def test_replay_of_a_malformed_file_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{ not json")
    finished = run_arena("replay", str(path))
    assert finished.returncode == 1
    assert "not JSON" in finished.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "--players", "5"], "4, 6 or 8"),
        (["play", "--ruleset", "bridge"], "pairs or partnership"),
        (["play", "--seed", "x"], "whole number"),
        (["play", "--deal-cap", "0"], "positive"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_flags_get_a_clear_error(args: list[str], message: str) -> None:
    finished = run_arena(*args)
    assert finished.returncode == 2
    assert message in finished.stderr
