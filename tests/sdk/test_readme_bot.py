"""The bot shown in the README is complete and plays whole matches (the first Python block after
"## Write a bot")."""

from __future__ import annotations

import re
import types
from pathlib import Path

from fiftysix.engine import Match, MatchRules
from sdk import Bot, BotView

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_bot_source() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Write a bot", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_readme_bot_is_short_and_plays_a_match() -> None:
    source = readme_bot_source()
    assert len(source.strip().splitlines()) < 25
    module = types.ModuleType("readme_bot")
    exec(compile(source, "README.md", "exec"), module.__dict__)  # the module guard keeps serve() from running
    bot_class = module.HighCardBot
    assert issubclass(bot_class, Bot)
    rules = MatchRules(4)
    match = Match(rules, seed=2)
    bots = [bot_class() for _ in range(4)]
    while not match.is_over:
        seat = match.deal.to_act
        view = match.view(seat)
        move = bots[seat].decide(BotView.from_view(view, decision_ms=1000, bank_ms=1000))
        match.apply(seat, move)
    assert sorted(match.ranking()) == [1, 2]
