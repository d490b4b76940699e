"""End to end: real gRPC bot servers on port 0, real matches over loopback, real faults."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from grpc_health.v1 import health_pb2

from arena.ladder.bots import free_port
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import Card, DealResult, MatchRules, Phase, Ruleset, parse_card
from fiftysix.record import loads
from fiftysix.replay import replay
from fiftysix.wire import FaultCause, TimeControl
from sample_bots.random_bot import RandomBot
from sdk import Bot, BotServer, BotView, MatchInfo, MatchSummary, Move, start


def play(rules: MatchRules, bots: list[BotAddress], seed: int = 1, **settings: object) -> MatchOutcome:
    match_settings = MatchSettings(rules, seed, **settings)  # type: ignore[arg-type]
    return asyncio.run(run_match(match_settings, seats_for_teams(rules, bots)))


@pytest.fixture(scope="module")
def random_servers() -> Iterator[list[BotServer]]:
    servers = [start(RandomBot) for _ in range(4)]
    yield servers
    for server in servers:
        server.stop(0)


def addresses(servers: list[BotServer], count: int) -> list[BotAddress]:
    return [BotAddress(f"random-{i}", f"127.0.0.1:{servers[i].port}") for i in range(count)]


@pytest.mark.parametrize("players", [4, 6, 8])
@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_real_match_over_loopback(random_servers: list[BotServer], players: int, ruleset: Ruleset) -> None:
    rules = MatchRules(players, ruleset)
    outcome = play(rules, addresses(random_servers, rules.team_count), seed=players)
    assert outcome.faults == []
    assert outcome.reason == "one_team_left"
    assert sorted(outcome.ranking)[0] == 1
    assert sum(outcome.tables) == 12 * rules.team_count
    assert outcome.decisions == sum(
        len(r.calls) + sum(len(t.plays) for t in r.tricks) for r in outcome.results
    )
    replayed = replay(loads(outcome.record.dumps()))
    assert replayed.complete
    assert replayed.match.ranking() == outcome.ranking


class SpyBot(Bot):
    """Records everything its seat is told, to check what crosses the wire."""

    name = "spy"
    seen: dict[int, list[tuple[Card, ...]]]
    events: list[str]
    lock = threading.Lock()

    def __init__(self) -> None:
        self.seat = -1
        self.hands: list[tuple[Card, ...]] = []
        self.deal_ends: list[DealResult] = []
        self.summary: MatchSummary | None = None

    def on_match_start(self, match: MatchInfo) -> None:
        self.seat = match.seat
        with SpyBot.lock:
            SpyBot.events.append(f"start:{match.seat}")

    def decide(self, view: BotView) -> Move:
        assert view.seat == self.seat
        assert view.to_act == self.seat
        assert view.bank_ms > 0
        assert view.decision_ms == 2000
        if view.phase is Phase.PLAY and not view.tricks and not view.trick:
            self.hands.append(view.hand)
        return view.legal_moves[-1] if view.phase is Phase.AUCTION else view.legal_moves[0]

    def on_deal_end(self, result: DealResult) -> None:
        self.deal_ends.append(result)

    def on_match_end(self, summary: MatchSummary) -> None:
        self.summary = summary
        with SpyBot.lock:
            SpyBot.seen[self.seat] = self.hands
            SpyBot.events.append(f"end:{self.seat}:{len(self.deal_ends)}")


def test_each_seat_gets_its_own_conversation_and_only_its_own_cards() -> None:
    SpyBot.seen = {}
    SpyBot.events = []
    spy = start(SpyBot)
    try:
        rules = MatchRules(4, Ruleset.PAIRS, deal_cap=2)
        bots = [BotAddress("spy-a", f"127.0.0.1:{spy.port}"), BotAddress("spy-b", f"127.0.0.1:{spy.port}")]
        outcome = play(rules, bots, seed=7, time_control=TimeControl(2000, 5000))
        # Every seat's conversation ends on its own server thread: wait for all four before stopping.
        deadline = time.monotonic() + 10
        while len(SpyBot.seen) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        spy.stop(1)
    assert outcome.faults == []
    assert sorted(SpyBot.seen) == [0, 1, 2, 3]
    assert sorted(event for event in SpyBot.events if event.startswith("start")) == [
        f"start:{s}" for s in range(4)
    ]
    deals = len(outcome.results)
    assert sorted(e for e in SpyBot.events if e.startswith("end")) == [f"end:{s}:{deals}" for s in range(4)]
    for seat, hands in SpyBot.seen.items():
        # The hand each seat saw at its first play is exactly the hand dealt to it (minus its lead card
        # when it led), never anyone else's.
        for result, hand in zip(outcome.results, hands, strict=False):
            assert set(hand) <= set(result.hands[seat])


class IllegalBot(Bot):
    name = "illegal"

    def decide(self, view: BotView) -> Move | str:
        if view.phase is Phase.PLAY:
            held = set(view.hand)
            return next(card for card in _all_cards() if card not in held)
        return "pass"


def _all_cards() -> list[Card]:
    return [parse_card(rank + suit) for suit in "SHDC" for rank in "J9ATKQ"]


class SlowBot(Bot):
    name = "slow"

    def decide(self, view: BotView) -> Move:
        time.sleep(0.5)
        return view.legal_moves[0]


class CrashingBot(Bot):
    name = "crashing"

    def decide(self, view: BotView) -> Move:
        if view.phase is Phase.PLAY:
            raise RuntimeError("bug in the bot")
        return view.legal_moves[0]


class FourOnlyBot(RandomBot):
    name = "four-only"
    player_counts = (4,)


@pytest.mark.parametrize(
    ("bad", "cause", "players", "time_control"),
    [
        (IllegalBot, FaultCause.ILLEGAL_MOVE, 4, TimeControl()),
        (SlowBot, FaultCause.TIMEOUT, 4, TimeControl(decision_ms=50, bank_ms=100)),
        (CrashingBot, FaultCause.DISCONNECTED, 4, TimeControl()),
        (FourOnlyBot, FaultCause.INCOMPATIBLE, 6, TimeControl()),
    ],
)
def test_bad_bot_forfeits_and_the_arena_goes_on(
    random_servers: list[BotServer],
    bad: type[Bot],
    cause: FaultCause,
    players: int,
    time_control: TimeControl,
) -> None:
    server = start(bad)
    try:
        rules = MatchRules(players, Ruleset.PARTNERSHIP)
        bots = [
            BotAddress("good", f"127.0.0.1:{random_servers[0].port}"),
            BotAddress("bad", f"127.0.0.1:{server.port}"),
        ]
        outcome = play(rules, bots, seed=3, time_control=time_control)
    finally:
        server.stop(0)
    assert outcome.reason == "forfeit"
    assert outcome.faults
    assert {fault.cause for fault in outcome.faults} == {cause}
    assert {fault.team for fault in outcome.faults} == {1}
    assert outcome.ranking == (1, 2)
    document = json.loads(outcome.record.dumps())
    assert document["faults"][0]["cause"] == cause.value
    assert document["result"]["reason"] == "forfeit"
    assert not replay(loads(outcome.record.dumps())).complete
    # The arena still plays clean matches afterwards.
    clean = play(MatchRules(4), addresses(random_servers, 2), seed=5)
    assert clean.faults == []


def test_unreachable_bot_is_a_typed_fault(random_servers: list[BotServer]) -> None:
    rules = MatchRules(4)
    bots = [
        BotAddress("good", f"127.0.0.1:{random_servers[0].port}"),
        BotAddress("gone", f"127.0.0.1:{free_port()}"),
    ]
    outcome = play(rules, bots, seed=1, connect_timeout_s=2.0)
    assert [fault.seat for fault in outcome.faults] == [1, 3]
    assert {fault.cause for fault in outcome.faults} == {FaultCause.UNREACHABLE}
    assert outcome.ranking == (1, 2)


def bot_process(module: str, *arguments: str) -> tuple[subprocess.Popen[str], int]:
    """Start a bot as its own process on port 0 and read the port from its JSON log."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, *arguments, "--port", "0"], stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        event = json.loads(line)
        if event.get("event") == "bot_serving":
            return process, int(event["port"])
    process.kill()
    raise AssertionError(f"{module} did not start")


def test_arena_match_command_against_bot_processes(tmp_path: Path) -> None:
    first, first_port = bot_process("sample_bots.random_bot")
    second, second_port = bot_process("sample_bots.random_bot")
    try:
        record = tmp_path / "match.json"
        finished = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena.cli",
                "match",
                "--bot",
                f"alice=127.0.0.1:{first_port}",
                "--bot",
                f"bob=127.0.0.1:{second_port}",
                "--players",
                "8",
                "--ruleset",
                "partnership",
                "--seed",
                "4",
                "--save",
                str(record),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        first.terminate()
        second.terminate()
        first.wait(10)
        second.wait(10)
    assert finished.returncode == 0, finished.stderr
    assert "Final ranking:" in finished.stdout
    assert "alice" in finished.stdout
    events = [json.loads(line) for line in finished.stderr.splitlines() if line.startswith("{")]
    match_ids = {
        event.get("match_id") for event in events if event["event"] in ("match_started", "match_ended")
    }
    assert len(match_ids) == 1
    assert None not in match_ids
    replayed = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", str(record)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert replayed.returncode == 0, replayed.stderr


def test_briefly_unreachable_bot_is_retried_with_backoff(random_servers: list[BotServer]) -> None:
    port = free_port()
    late: list[BotServer] = []

    def start_late() -> None:
        time.sleep(0.6)
        late.append(start(RandomBot, port=port))

    starter = threading.Thread(target=start_late)
    starter.start()
    try:
        rules = MatchRules(4)
        bots = [
            BotAddress("good", f"127.0.0.1:{random_servers[0].port}"),
            BotAddress("late", f"127.0.0.1:{port}"),
        ]
        outcome = play(rules, bots, seed=2, connect_timeout_s=5.0)
    finally:
        starter.join()
        for server in late:
            server.stop(0)
    assert outcome.faults == []
    assert outcome.reason == "one_team_left"


def test_a_bot_reporting_not_serving_is_unreachable(random_servers: list[BotServer]) -> None:
    server = start(RandomBot)
    server.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    try:
        rules = MatchRules(4)
        bots = [
            BotAddress("good", f"127.0.0.1:{random_servers[0].port}"),
            BotAddress("sick", f"127.0.0.1:{server.port}"),
        ]
        outcome = play(rules, bots, seed=2)
    finally:
        server.stop(0)
    assert {fault.cause for fault in outcome.faults} == {FaultCause.UNREACHABLE}
    assert "not serving" in outcome.faults[0].detail


class SeatRecorder(Bot):
    """Remembers which seats its server process was asked to play."""

    name = "recorder"
    seats: ClassVar[list[int]]

    def on_match_start(self, match: MatchInfo) -> None:
        type(self).seats.append(match.seat)

    def decide(self, view: BotView) -> Move:
        return view.legal_moves[0]


def test_one_address_per_seat(random_servers: list[BotServer]) -> None:
    class First(SeatRecorder):
        seats: ClassVar[list[int]] = []

    class Second(SeatRecorder):
        seats: ClassVar[list[int]] = []

    first, second = start(First), start(Second)
    try:
        rules = MatchRules(4, Ruleset.PAIRS, deal_cap=1)
        team = BotAddress.parse(f"split=127.0.0.1:{first.port},127.0.0.1:{second.port}")
        outcome = play(rules, [team, BotAddress("good", f"127.0.0.1:{random_servers[0].port}")], seed=1)
    finally:
        first.stop(1)
        second.stop(1)
    assert outcome.faults == []
    assert First.seats == [0]
    assert Second.seats == [2]


def test_python_m_sdk_serves_a_bot_class() -> None:
    process, port = bot_process("sdk", "sample_bots.random_bot:RandomBot", "--log-json")
    try:
        rules = MatchRules(4)
        outcome = play(
            rules, [BotAddress("a", f"127.0.0.1:{port}"), BotAddress("b", f"127.0.0.1:{port}")], seed=3
        )
    finally:
        process.terminate()
        process.wait(10)
    assert outcome.faults == []
