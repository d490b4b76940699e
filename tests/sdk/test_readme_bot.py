"""The bot shown in the README (the first Python block after "## Write a bot") is complete: it plays whole
matches, passes `arena check-bot` item by item served by the SDK, and is rated on a short ladder from the
command sdk/README.md registers it with."""

from __future__ import annotations

import asyncio
import os
import re
import types
from pathlib import Path

import pytest

from arena.check import Status, check_bot
from fiftysix.engine import Match, MatchRules
from sample_bots.random_bot import RandomBot
from sdk import Bot, BotView, start
from tests.cli_in_process import played_without_faults, run_here

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def readme_bot_source() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Write a bot", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def readme_bot_class() -> type[Bot]:
    module = types.ModuleType("readme_bot")
    # The module guard keeps serve() from running.
    exec(compile(readme_bot_source(), "README.md", "exec"), module.__dict__)
    bot_class = module.HighCardBot
    assert isinstance(bot_class, type)
    assert issubclass(bot_class, Bot)
    return bot_class


def test_readme_bot_is_short_and_plays_a_match() -> None:
    assert len(readme_bot_source().strip().splitlines()) < 25
    bot_class = readme_bot_class()
    rules = MatchRules(4)
    match = Match(rules, seed=2)
    bots = [bot_class() for _ in range(4)]
    while not match.is_over:
        seat = match.deal.to_act
        view = match.view(seat)
        move = bots[seat].decide(BotView.from_view(view, decision_ms=1000, bank_ms=1000))
        match.apply(seat, move)
    assert sorted(match.ranking()) == [1, 2]


def test_readme_bot_passes_check_bot() -> None:
    server = start(readme_bot_class())
    try:
        report = asyncio.run(check_bot(f"127.0.0.1:{server.port}"))
    finally:
        server.stop(0)
    assert [item.line() for item in report.items if item.status is not Status.PASS] == []
    assert report.count(Status.PASS) == len(report.items) >= 17


def test_readme_bot_registered_as_a_command_plays_a_ladder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As sdk/README.md has it: the bot saved as mybot.py, registered from its folder with `python -m sdk`
    # on a port file, rated in two duplicate sets against the random bot (served here, by address).
    (tmp_path / "mybot.py").write_text(readme_bot_source(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    db = str(tmp_path / "ladder.db")
    opponent = start(RandomBot)
    try:
        command = "python -m sdk mybot:HighCardBot --port 0 --port-file {port_file}"
        for name, where in (("mine", ["--command", command]), ("random", [f"127.0.0.1:{opponent.port}"])):
            added = run_here(capsys, "bots", "add", name, *where, "--db", db)
            assert added.returncode == 0, added.stderr
        run = run_here(capsys, "ladder", "run", "--db", db, "--matches", "4", "--seed", "3")
    finally:
        opponent.stop(0)
    assert run.returncode == 0, run.stderr
    assert "(2 sets rated, 0 faults)" in run.stdout, run.stdout
    assert played_without_faults(capsys, db, "mine")["matches"] == 4
