"""`arena check-bot`: it passes the sample bots and names the item that a deliberately bad bot fails.

Bots are real gRPC servers on port 0 in this process (the SDK's `start`, or a raw servicer); the command
itself runs in its own process for the exit codes.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import describe_crash_bot
import pytest
from bad_bots import start_bad_bot

from arena.check import (
    ITEM_NAMES,
    SITUATIONS,
    CheckItem,
    CheckReport,
    Situation,
    Status,
    build_situation,
    check_bot,
    explain_answer,
)
from arena.check.situations import MATCH_ITEMS
from arena.cli import main
from arena.ladder.bots import free_port
from fiftysix.engine import DOUBLE, PASS, REDOUBLE, Move, Phase, Ruleset, hand_size_for, parse_cards
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import AnswerError, read_answer
from sample_bots.random_bot import RandomBot
from sdk import Bot, BotServer, BotView, start

ROOT = Path(__file__).resolve().parents[3]


def run_check(port: int, decision_ms: int = 1000, only: Sequence[str] = ()) -> CheckReport:
    return asyncio.run(check_bot(f"127.0.0.1:{port}", decision_ms, only))


def statuses(report: CheckReport) -> dict[str, Status]:
    return {item.name: item.status for item in report.items}


def reason(report: CheckReport, name: str) -> str:
    return next(item.reason for item in report.items if item.name == name)


def run_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "check-bot", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def serve() -> Iterator[list[BotServer]]:
    """Servers started by a test, stopped after it."""
    servers: list[BotServer] = []
    yield servers
    for server in servers:
        server.stop(0)


def started(servers: list[BotServer], bot: type[Bot]) -> int:
    server = start(bot)
    servers.append(server)
    return server.port


# The situations are what the report and the guide say they are.


@pytest.mark.parametrize(
    ("situation", "players", "ruleset"),
    [(situation, players, ruleset) for situation in SITUATIONS for players, ruleset in situation.configs],
    ids=lambda value: getattr(value, "name", str(value)),
)
def test_each_situation_starts_where_it_says(situation: Situation, players: int, ruleset: Ruleset) -> None:
    script = build_situation(situation, players, ruleset)
    match, seat = script.match, script.seat
    assert match.to_act == seat
    view = match.view(seat)
    legal = view.legal_moves
    assert len(set(legal)) == len(legal)
    name = situation.name
    if name == "redouble window":
        assert legal == (PASS, REDOUBLE)
        assert view.contract is None
        assert view.doubling == 2
        assert view.high_bid is not None
        assert view.team_of[view.high_bid.seat] == view.team
    elif name in ("play after double", "play after redouble"):
        assert view.phase is Phase.PLAY
        assert view.doubling == (2 if name == "play after double" else 4)
        assert view.contract is not None
        assert view.contract.doubling == view.doubling
    elif name == "all-pass contract":
        assert view.contract is not None
        assert view.contract.all_pass
        assert view.contract.number == 28
        assert view.contract.trump is None
        assert view.high_bid is None
    elif name == "team gone out":
        assert len(script.finished) == 1
        assert script.finished[0].teams_out == (match.rules.team_count - 1,)
        assert len(view.seats) == players - 2
        assert view.teams_out == (match.rules.team_count - 1,)
        assert len(view.hand) == hand_size_for(players - 2)
        assert sum(len(hand) for hand in match.deal.dealt) == 48
        assert sum(view.tables) == 12 * match.rules.team_count
    elif name == "last trick":
        assert len(view.hand) == 1
        assert view.phase is Phase.PLAY
    elif name == "identical cards":
        assert [play.card for play in view.trick] == parse_cards("KH KH")
        assert view.hand.count(parse_cards("JH")[0]) == 2
        assert len(legal) < len([card for card in view.hand if card.suit is view.trick[0].card.suit])
    elif name == "match end with faults":
        assert script.stop_after == 2
        assert [fault.substituted for fault in script.faults] == [True, False]
        assert {fault.team for fault in script.faults} != {view.team}
    else:
        raise AssertionError(f"no test for the situation {name!r}")


# Each wrong answer is named precisely.

LEGAL: tuple[Move, ...] = (PASS, REDOUBLE)


def _answer(**fields: object) -> pb.PlaySeatResponse:
    return pb.PlaySeatResponse(move=pb.MoveAnswer(**fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            _answer(decision_id=7, notation="double"),
            "answered 'double' which is not legal (legal: pass redouble)",
        ),
        (_answer(decision_id=7, notation="zz"), "answered 'zz', which is not a call in the notation"),
        (
            _answer(decision_id=7, move_index=2),
            "answered move_index 2, out of range: there are 2 legal moves",
        ),
        (_answer(decision_id=8, move_index=0), "answered decision_id 8, but the decision asked was 7"),
        (_answer(decision_id=7), "names no move"),
        (pb.PlaySeatResponse(ready=pb.Ready()), "answered with Ready where a MoveAnswer was expected"),
    ],
)
def test_wrong_answers_are_explained(response: pb.PlaySeatResponse, expected: str) -> None:
    with pytest.raises(AnswerError) as refused:
        read_answer(response, 7, LEGAL)
    assert expected in explain_answer(response, 7, LEGAL, refused.value)


# Good bots pass.


def test_random_bot_passes_every_item(serve: list[BotServer]) -> None:
    report = run_check(started(serve, RandomBot))
    assert [item.name for item in report.items] == list(ITEM_NAMES)
    failed = [item.line() for item in report.items if item.status is not Status.PASS]
    assert failed == []
    assert report.ok
    assert report.summary() == f"{len(ITEM_NAMES)} passed, 0 failed"


def test_rule_bot_passes_every_item(serve: list[BotServer]) -> None:
    if not (ROOT / "sample_bots" / "rule_bot.py").exists():
        pytest.skip("sample_bots/rule_bot.py is not there yet")
    rule_bot = importlib.import_module("sample_bots.rule_bot").RuleBot
    report = run_check(started(serve, rule_bot))
    assert [item.line() for item in report.items if item.status is not Status.PASS] == []


# Bad bots fail, and the report names the item.


class DoublesInTheRedoubleWindow(RandomBot):
    """Answers 'double' when only pass and redouble are legal."""

    name = "doubler"

    def decide(self, view: BotView) -> Move:
        if view.legal_moves == (PASS, REDOUBLE):
            return DOUBLE
        return super().decide(view)


def test_illegal_move_in_the_redouble_window_fails_that_item(serve: list[BotServer]) -> None:
    report = run_check(
        started(serve, DoublesInTheRedoubleWindow), only=["handshake", "redouble window", "last trick"]
    )
    assert statuses(report) == {
        "handshake": Status.PASS,
        "redouble window": Status.FAIL,
        "last trick": Status.PASS,
    }
    assert reason(report, "redouble window") == "answered 'double' which is not legal (legal: pass redouble)"
    assert not report.ok


class SlowBot(RandomBot):
    """Sleeps past any short deadline."""

    name = "slow"

    def decide(self, view: BotView) -> Move:
        time.sleep(0.3)
        return super().decide(view)


def test_slow_bot_is_too_slow(serve: list[BotServer]) -> None:
    report = run_check(started(serve, SlowBot), decision_ms=100, only=["match 4 players pairs", "last trick"])
    assert statuses(report)["match 4 players pairs"] is Status.FAIL
    assert reason(report, "match 4 players pairs").startswith("too slow")
    assert statuses(report)["last trick"] is Status.FAIL
    assert reason(report, "last trick").startswith("too slow: no answer within 200 ms; the limit is 100 ms")


class FourOnlyBot(RandomBot):
    """Declares 4 players only."""

    name = "four-only"
    player_counts = (4,)


def test_undeclared_player_counts_are_skipped_not_failed(serve: list[BotServer]) -> None:
    report = run_check(started(serve, FourOnlyBot), only=["match", "team gone out", "identical"])
    verdicts = statuses(report)
    assert report.ok
    for name in MATCH_ITEMS:
        assert verdicts[name] is (Status.PASS if name.startswith("match 4") else Status.SKIP), name
    assert verdicts["team gone out"] is Status.SKIP
    assert verdicts["identical cards"] is Status.PASS
    assert "does not play 6 players" in reason(report, "match 6 players pairs")


@pytest.fixture
def wrong_decision_port() -> Iterator[int]:
    bot = start_bad_bot("wrong-turn")  # written from the protos alone: no health service
    yield bot.port
    bot.stop()


def test_wrong_decision_id_fails_and_a_missing_health_service_only_warns(wrong_decision_port: int) -> None:
    report = run_check(wrong_decision_port, only=["handshake", "health", "match 4 players pairs", "all-pass"])
    verdicts = statuses(report)
    assert verdicts == {
        "handshake": Status.PASS,
        "health": Status.WARN,
        "match 4 players pairs": Status.FAIL,
        "all-pass contract": Status.FAIL,
    }
    assert reason(report, "match 4 players pairs").startswith("wrong_decision")
    assert "answered decision_id" in reason(report, "all-pass contract")
    assert report.summary() == "1 passed, 2 failed, 1 warning"


# The command: exit codes, the report, --json.


def test_command_passes_with_exit_0(serve: list[BotServer]) -> None:
    port = started(serve, RandomBot)
    finished = run_command(f"127.0.0.1:{port}", "--only", "handshake,match 6 players pairs,team gone out")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    lines = finished.stdout.splitlines()
    assert lines[-1] == "3 passed, 0 failed"
    assert any(line.startswith("PASS  team gone out: 8 players pairs") for line in lines)
    assert any(line.startswith("Note: ") for line in lines)


def test_command_fails_with_exit_1_and_json_names_the_item(wrong_decision_port: int) -> None:
    finished = run_command(
        f"127.0.0.1:{wrong_decision_port}", "--only", "handshake,redouble window", "--json"
    )
    assert finished.returncode == 1, finished.stderr
    report = json.loads(finished.stdout)
    assert report["ok"] is False
    assert [(item["name"], item["status"]) for item in report["items"]] == [
        ("handshake", "PASS"),
        ("redouble window", "FAIL"),
    ]
    assert report["items"][1]["players"] == 4


def test_command_unreachable_and_usage_errors() -> None:
    unreachable = run_command(f"127.0.0.1:{free_port()}")
    assert unreachable.returncode == 1
    assert unreachable.stderr.startswith("arena check-bot: error: cannot reach a bot at 127.0.0.1:")
    assert len(unreachable.stderr.strip().splitlines()) == 1
    assert run_command("not-an-address").returncode == 2
    assert run_command("127.0.0.1:50051", "--only", "no such item").returncode == 2
    assert run_command("127.0.0.1:50051", "--decision-ms", "0").returncode == 2


def test_a_bot_that_dies_inside_describe_is_said_to_have_crashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It answered the health check, so it was reached: not `cannot reach a bot`."""
    process, address = describe_crash_bot.spawn(tmp_path)
    try:
        assert main(["check-bot", address]) == 1
    finally:
        process.kill()
        process.wait()
    lines = capsys.readouterr().out.splitlines()
    assert (
        f"FAIL  handshake: the bot at {address} closed the connection during Describe: did it crash?" in lines
    )
    assert lines[-1] == "1 passed, 1 failed"  # health passed


# The report reads back from its JSON (the store keeps registrations' reports so).


def test_a_report_reads_back_from_its_json() -> None:
    report = CheckReport(
        "unix:/tmp/arena/bot.sock",
        800,
        [
            CheckItem("handshake", Status.PASS, "'b' speaks protocol 1", "handshake", {"bot_name": "b"}),
            CheckItem("last trick", Status.FAIL, "did it crash?", "situation", {"seat": 3}, "Trace\\nback"),
            CheckItem("match 4 players pairs", Status.FAIL, "crash", "match", output=""),
        ],
    )
    assert CheckReport.from_json(json.loads(json.dumps(report.to_json()))) == report
    assert report.items[1].line() == "FAIL  last trick: did it crash? its output: Trace\\nback"
    assert report.items[2].line() == "FAIL  match 4 players pairs: crash; it wrote nothing"
    document = report.to_json()
    for broken in ({**document, "items": [{"name": "x"}]}, {**document, "decision_ms": "800"}, []):
        with pytest.raises(ValueError, match="check"):
            CheckReport.from_json(broken)
