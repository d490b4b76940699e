"""The C++ kit (sample_bots/cpp) against the real arena: its sample bot built with CMake from bot.proto
alone, passed by `arena check-bot` item by item, playing whole matches and a ladder without a fault, and
the JavaScript sample bot's game move for move; and the same bot built outside the kit's tree against the
installed kit (`find_package(fiftysix_bot)`), uploaded and answering in the sandbox.

The kit and its bot are built once per session into build/cpp (incremental: a second run rebuilds only
what changed), the kit installed into build/cpp/kit and the bot built on it into build/cpp/standalone; or
all taken as built from $FIFTYSIX_CPP_BOT_BUILD (.ci/run builds them there first). Needs cmake, a C++
compiler and gRPC for C++ (Debian: cmake g++ libgrpc++-dev protobuf-compiler protobuf-compiler-grpc):
without them the tests skip locally, and fail under CI (CI set), so CI can never skip them silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from bot_process import BotProcess, drain, start_with_port_file
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.check import Status, check_bot
from arena.cli import main as arena_main
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.sandbox import bubblewrap
from fiftysix.engine import EndReason, Match, MatchRules, Ruleset
from fiftysix.players import RandomPlayer
from fiftysix.record import loads
from fiftysix.replay import replay
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import TimeControl, decision_request, match_end_message, match_start_message
from sdk import BotServer

ROOT = Path(__file__).resolve().parents[2]
CPP_DIR = ROOT / "sample_bots" / "cpp"
JS_DIR = ROOT / "sample_bots" / "js"
BUILD_ENV = "FIFTYSIX_CPP_BOT_BUILD"
BUILD_TIMEOUT_S = 900.0
# What the bot logs when something goes wrong on its side (a rejected arena message is tested apart).
ERROR_EVENTS = ("bot_failed", "bot_failed_to_start", "arena_message_ignored")


def _unavailable(reason: str) -> None:
    """Skip, or fail under CI, which must be able to build and run the bot."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must install the C++ bot's packages and build it")
    pytest.skip(reason)


@dataclass(frozen=True)
class CppBuild:
    """The built bot and its unit tests, and how long the build took (0 when it was built before)."""

    folder: Path
    seconds: float

    @property
    def bot(self) -> Path:
        return self.folder / "cpp_bot"

    @property
    def unit_tests(self) -> Path:
        return self.folder / "cpp_bot_tests"

    @property
    def standalone_bot(self) -> Path:
        """The sample bot as a project of its own builds it, on the installed kit."""
        return self.folder / "standalone" / "cpp_bot"


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)


@pytest.fixture(scope="session")
def cpp_build() -> CppBuild:
    prebuilt = os.environ.get(BUILD_ENV)
    if prebuilt:
        build = CppBuild(Path(prebuilt).resolve(), 0.0)
        for binary in (build.bot, build.standalone_bot):
            if not binary.is_file():
                pytest.fail(f"${BUILD_ENV} is {prebuilt}, but it holds no {binary.relative_to(build.folder)}")
        return build
    cmake = shutil.which("cmake")
    if cmake is None:
        _unavailable("cmake is not installed: the C++ sample bot cannot be built")
        raise AssertionError("unreachable")
    folder = ROOT / "build" / "cpp"
    started = time.monotonic()
    if not (folder / "CMakeCache.txt").is_file():
        configured = _run([cmake, "-S", str(CPP_DIR), "-B", str(folder)])
        if configured.returncode != 0:
            output = configured.stdout + configured.stderr
            if any(package in output for package in ("gRPC", "Protobuf", "CMAKE_CXX_COMPILER")):
                shutil.rmtree(folder, ignore_errors=True)  # configure again once the packages are there
                _unavailable(f"gRPC for C++ or a compiler is missing: {output.strip().splitlines()[-1]}")
            pytest.fail(f"cmake could not configure the C++ bot:\n{output}")
    _build(cmake, folder)
    # As .ci/run does, and as a bot author outside this repository would: install the kit, then build a
    # bot on the installed package.
    installed = _run([cmake, "--install", str(folder), "--prefix", str(folder / "kit")])
    assert installed.returncode == 0, f"the C++ kit does not install:\n{installed.stdout}\n{installed.stderr}"
    standalone = folder / "standalone"
    if not (standalone / "CMakeCache.txt").is_file():
        configure = [
            cmake,
            "-S",
            str(CPP_DIR / "bot"),
            "-B",
            str(standalone),
            f"-DCMAKE_PREFIX_PATH={folder / 'kit'}",
        ]
        configured = _run(configure)
        assert configured.returncode == 0, (
            f"the installed kit is not found:\n{configured.stdout}{configured.stderr}"
        )
    _build(cmake, standalone)
    return CppBuild(folder, time.monotonic() - started)


def _build(cmake: str, folder: Path) -> None:
    """Build what `folder` is configured for, warning-free."""
    built = _run([cmake, "--build", str(folder), "-j2"])
    assert built.returncode == 0, f"{folder} does not build:\n{built.stdout}\n{built.stderr}"
    assert "warning" not in built.stdout + built.stderr, built.stdout + built.stderr


def start_bot(binary: Path, port_file: Path) -> BotProcess:
    """Start the bot on port 0 and read the port it bound from its port file, as the arena does."""
    bot = start_with_port_file([str(binary)], port_file, ERROR_EVENTS)
    assert sorted(path.name for path in port_file.parent.iterdir()) == [port_file.name]  # no temporary left
    return bot


@pytest.fixture(scope="module")
def cpp_bot(cpp_build: CppBuild, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    bot = start_bot(cpp_build.bot, tmp_path_factory.mktemp("cpp-bot") / "port")
    try:
        yield bot
    finally:
        bot.stop()


def play(rules: MatchRules, bots: list[BotAddress], seed: int) -> MatchOutcome:
    return asyncio.run(run_match(MatchSettings(rules, seed), seats_for_teams(rules, bots)))


def test_build_and_unit_tests(cpp_build: CppBuild) -> None:
    print(f"C++ bot build: {cpp_build.seconds:.1f} s")  # shown with -s; 0 when built before
    tests = subprocess.run(
        [str(cpp_build.unit_tests)], capture_output=True, text=True, timeout=60, check=False
    )
    assert tests.returncode == 0, tests.stderr
    assert "all passed" in tests.stdout


def test_describe_and_health(cpp_bot: BotProcess) -> None:
    with grpc.insecure_channel(cpp_bot.address) as channel:
        reply = rpc.BotServiceStub(channel).Describe(pb.DescribeRequest(protocol_version=1), timeout=5)
        health = health_pb2_grpc.HealthStub(channel)
        statuses = [
            health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
            for service in ("", "fiftysix.v1.BotService")
        ]
    assert (reply.name, reply.version, reply.protocol_version) == ("cpp-simple", "1.0.0", 1)
    assert list(reply.player_counts) == [4, 6, 8]
    assert list(reply.rulesets) == []
    assert reply.author
    assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 2


def test_check_bot_passes_every_item(cpp_bot: BotProcess) -> None:
    report = asyncio.run(check_bot(cpp_bot.address))
    assert [item.line() for item in report.items if item.status is not Status.PASS] == []
    assert report.count(Status.PASS) == len(report.items) >= 16
    assert cpp_bot.errors() == []


@pytest.mark.parametrize(
    ("players", "ruleset"),
    [(4, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP), (8, Ruleset.PARTNERSHIP)],
)
def test_cpp_bot_plays_whole_matches(
    cpp_bot: BotProcess, random_bot: BotServer, players: int, ruleset: Ruleset
) -> None:
    rules = MatchRules(players, ruleset)
    cpp = BotAddress("cpp", cpp_bot.address)
    rnd = BotAddress("random", f"127.0.0.1:{random_bot.port}")
    for seed, bots in ((players, [cpp, rnd]), (players + 1, [rnd, cpp])):
        outcome = play(rules, bots, seed)
        assert outcome.faults == []
        assert outcome.reason in ("one_team_left", "deal_cap")
        replayed = replay(loads(outcome.record.dumps()))
        assert replayed.complete
        assert replayed.match.ranking() == outcome.ranking
    assert cpp_bot.errors() == []


def test_cpp_bot_beats_the_random_bot(cpp_bot: BotProcess, random_bot: BotServer) -> None:
    # The JS bot's test, with the same seeds: the same strategy wins most of them.
    rules = MatchRules(4, Ruleset.PAIRS)
    cpp = BotAddress("cpp", cpp_bot.address)
    rnd = BotAddress("random", f"127.0.0.1:{random_bot.port}")
    wins = 0
    for seed in range(100, 106):
        cpp_team = seed % 2
        outcome = play(rules, [cpp, rnd] if cpp_team == 0 else [rnd, cpp], seed)
        assert outcome.faults == []
        wins += outcome.ranking[cpp_team] == 1 and outcome.ranking[1 - cpp_team] == 2
    assert wins >= 5, f"the C++ bot won only {wins} of 6 matches against the random bot"


def _node_or_unavailable() -> str:
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules").is_dir():
        _unavailable("node or sample_bots/js/node_modules is missing: the JS bot cannot run to compare")
        raise AssertionError("unreachable")
    return node


@pytest.fixture(scope="module")
def js_bot_address() -> Iterator[str]:
    process = subprocess.Popen(
        [_node_or_unavailable(), "bot.js", "--port", "0"],
        cwd=JS_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the first line says where it serves
            event = json.loads(line)
            assert event["event"] == "bot_serving", line
            threading.Thread(target=drain, args=(process.stderr, []), daemon=True).start()
            yield f"127.0.0.1:{event['port']}"
            break
        else:
            raise AssertionError("the JS bot did not start")
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize(
    ("players", "ruleset", "seed"),
    [(4, Ruleset.PAIRS, 21), (6, Ruleset.PAIRS, 22), (8, Ruleset.PARTNERSHIP, 23)],
)
def test_cpp_bot_plays_the_js_bots_game(
    cpp_bot: BotProcess, js_bot_address: str, rule_bot: BotServer, players: int, ruleset: Ruleset, seed: int
) -> None:
    # The same strategy: against the deterministic rule bot, in the same seats of the same seeded match,
    # the two bots make every call and play every card alike.
    rules = MatchRules(players, ruleset, deal_cap=6)
    rules_address = BotAddress("rules", f"127.0.0.1:{rule_bot.port}")
    deals = []
    for address in (cpp_bot.address, js_bot_address):
        simple = BotAddress("simple", address)
        bots = [simple if team % 2 == 0 else rules_address for team in range(rules.team_count)]
        outcome = play(rules, bots, seed)
        assert outcome.faults == []
        deals.append(outcome.record.to_json()["deals"])
    assert deals[0] == deals[1]
    assert sum(len(deal["cards"]) for deal in deals[0]) > 0


class _Requests:
    """A request stream the test feeds by hand and keeps open until `close()`."""

    def __init__(self) -> None:
        self._queue: queue.Queue[pb.PlaySeatRequest | None] = queue.Queue()

    def send(self, request: pb.PlaySeatRequest) -> None:
        self._queue.put(request)

    def close(self) -> None:
        self._queue.put(None)

    def __iter__(self) -> Iterator[pb.PlaySeatRequest]:
        while (request := self._queue.get()) is not None:
            yield request


def _both_forms(request: pb.PlaySeatRequest) -> list[pb.PlaySeatRequest]:
    """The decision twice: as an arena of an older minor version of protocol 1 sends it (notation only)
    and as this arena does (with the structured moves, the structured cards and the view's trump, led
    suit and trick winner), which the kit fills in from the notation."""
    assert len(request.decision.moves) == len(request.decision.legal_moves) > 0
    notation = pb.PlaySeatRequest()
    notation.CopyFrom(request)
    notation.decision.ClearField("moves")
    view = notation.decision.view
    for name in ("trump", "led_suit", "trick_winner", "hand_cards", "trick_winning_card"):
        view.ClearField(name)
    for play in [*view.trick, *(play for trick in view.tricks for play in trick.plays)]:
        play.ClearField("played_card")
    for trick in view.tricks:
        trick.ClearField("winning_card")
    structured = pb.PlaySeatRequest()
    structured.CopyFrom(request)
    structured.decision.decision_id += 1
    return [notation, structured]


@pytest.mark.parametrize(
    ("players", "ruleset", "seed"),
    [(4, Ruleset.PAIRS, 31), (6, Ruleset.PARTNERSHIP, 32), (8, Ruleset.PAIRS, 33)],
)
def test_structured_moves_and_notation_give_the_same_answers(
    cpp_bot: BotProcess, players: int, ruleset: Ruleset, seed: int
) -> None:
    # Every decision of a seeded match (the moves themselves chosen by the engine's random player) is
    # asked twice: in notation only, and with the structured moves and view fields. The bot must answer
    # both alike, by index, echoing each decision_id.
    rules = MatchRules(players, ruleset, deal_cap=2)
    match = Match(rules, seed=seed)
    chooser = RandomPlayer(random.Random(seed))
    names = [f"seat{seat}" for seat in range(players)]
    with grpc.insecure_channel(cpp_bot.address) as channel:
        stub = rpc.BotServiceStub(channel)
        streams = [_Requests() for _seat in range(players)]
        calls = [stub.PlaySeat(iter(requests), timeout=60) for requests in streams]
        responses = [iter(call) for call in calls]
        try:
            for seat in range(players):
                streams[seat].send(match_start_message("twice", rules, seat, names, TimeControl()))
                assert next(responses[seat]).WhichOneof("answer") == "ready"
            decision_id = 2**63
            decisions = 0
            while not match.is_over:
                seat = match.to_act
                view = match.view(seat)
                legal = tuple(match.legal_moves())
                answers = []
                for request in _both_forms(decision_request(match, decision_id, 1000, 0)):
                    streams[seat].send(request)
                    answer = next(responses[seat])
                    assert answer.move.decision_id == request.decision.decision_id
                    assert answer.move.WhichOneof("choice") == "move_index"
                    answers.append(answer.move.move_index)
                assert answers[0] == answers[1], f"{view.phase}: {[str(move) for move in legal]}"
                assert 0 <= answers[0] < len(legal)
                decision_id += 2
                decisions += 1
                match.apply(seat, chooser.choose(view, legal))
            for seat in range(players):
                streams[seat].send(match_end_message(EndReason.DEAL_CAP, match.ranking(), match.tables, ()))
                assert list(responses[seat]) == []
                assert calls[seat].code() == grpc.StatusCode.OK
        finally:
            for requests in streams:
                requests.close()
    assert decisions > 40
    assert cpp_bot.errors() == []


def test_decision_before_match_start_is_rejected_and_an_unknown_event_ignored(cpp_bot: BotProcess) -> None:
    match = Match(MatchRules(4), seed=3)
    with grpc.insecure_channel(cpp_bot.address) as channel:
        stub = rpc.BotServiceStub(channel)
        call = stub.PlaySeat(iter([decision_request(match, 1, 1000, 0)]), timeout=10)
        with pytest.raises(grpc.RpcError) as raised:
            list(call)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # A request with no event this bot knows (a newer arena's) is ignored; the conversation goes on.
        start_message = match_start_message("odd", MatchRules(4), 0, ["a", "b", "c", "d"], TimeControl())
        end = match_end_message(EndReason.DEAL_CAP, (1, 2), (12, 12), ())
        answers = list(stub.PlaySeat(iter([pb.PlaySeatRequest(), start_message, end]), timeout=10))
    assert [answer.WhichOneof("answer") for answer in answers] == ["ready"]
    assert cpp_bot.process.poll() is None
    cpp_bot.logged("arena_message_rejected")
    ignored = cpp_bot.logged("arena_message_ignored")
    assert len(ignored) == 1
    cpp_bot.lines.remove(ignored[0])  # expected here; an error anywhere else


def test_cancelled_stream_does_not_hurt_the_bot(cpp_bot: BotProcess, random_bot: BotServer) -> None:
    rules = MatchRules(4)
    requests = _Requests()
    with grpc.insecure_channel(cpp_bot.address) as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(iter(requests), timeout=10)
        try:
            requests.send(match_start_message("cancelled", rules, 0, ["a", "b", "c", "d"], TimeControl()))
            assert next(iter(call)).WhichOneof("answer") == "ready"
            call.cancel()  # type: ignore[no-untyped-call]  # grpc-stubs leaves cancel() untyped
        finally:
            requests.close()
    time.sleep(0.1)
    assert cpp_bot.process.poll() is None
    outcome = play(
        rules, [BotAddress("cpp", cpp_bot.address), BotAddress("random", f"127.0.0.1:{random_bot.port}")], 9
    )
    assert outcome.faults == []


def test_sigterm_stops_the_bot_gracefully_mid_match(cpp_build: CppBuild, tmp_path: Path) -> None:
    bot = start_bot(cpp_build.bot, tmp_path / "port")
    requests = _Requests()
    try:
        with grpc.insecure_channel(bot.address) as channel:
            call = rpc.BotServiceStub(channel).PlaySeat(iter(requests), timeout=30)
            requests.send(
                match_start_message("stopped", MatchRules(4), 0, ["a", "b", "c", "d"], TimeControl())
            )
            assert next(iter(call)).WhichOneof("answer") == "ready"
            started = time.monotonic()
            bot.process.send_signal(signal.SIGTERM)
            # The open conversation gets a second to end, then it is cancelled and the bot exits 0.
            assert bot.process.wait(10) == 0
            assert time.monotonic() - started < 5
            with pytest.raises(grpc.RpcError):
                list(call)
    finally:
        requests.close()
        if bot.process.poll() is None:
            bot.process.kill()
    events = [json.loads(line)["event"] for line in bot.lines if line.startswith("{")]
    assert events == ["bot_serving", "bot_stopping", "bot_stopped"]


def test_a_port_in_use_is_an_error(cpp_build: CppBuild, cpp_bot: BotProcess) -> None:
    # Not shared through SO_REUSEPORT, which gRPC would otherwise allow.
    second = subprocess.run(
        [str(cpp_build.bot), "--port", str(cpp_bot.port)],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert second.returncode == 1
    assert '"bot_failed_to_start"' in second.stderr
    with grpc.insecure_channel(cpp_bot.address) as channel:
        reply = rpc.BotServiceStub(channel).Describe(pb.DescribeRequest(protocol_version=1), timeout=5)
    assert reply.name == "cpp-simple"


def test_a_registered_command_plays_a_ladder(cpp_build: CppBuild, tmp_path: Path) -> None:
    # As README.md registers it: the arena starts one process per seat, reads its port file, plays.
    db = tmp_path / "ladder.db"

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "arena.cli", args[0], "--db", str(db), *args[1:]]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)

    bot_command = f"{cpp_build.bot} --port 0 --port-file {{port_file}}"
    added = arena("bots", "add", "cpp", "--command", bot_command)
    assert added.returncode == 0, added.stderr
    run = arena("ladder", "run", "--sample-bots", "--matches", "6", "--concurrency", "2", "--seed", "5")
    assert run.returncode == 0, run.stderr
    assert "(3 sets rated, 0 faults)" in run.stdout, run.stdout
    shown = arena("ladder", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    standings = {line["bot"]: line for line in json.loads(shown.stdout)}
    assert standings["cpp"]["matches"] > 0
    assert all(count == 0 for count in standings["cpp"]["faults"].values())


def test_a_bot_built_on_the_installed_kit_is_uploaded_and_answers_in_the_sandbox(
    cpp_build: CppBuild, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the kit's README uploads it: the binary alone in a bundle, `--run ./cpp_bot`; the arena adds
    # `--socket {socket}` and registers it only once it answered the handshake there.
    reason = bubblewrap.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the sandbox cannot run: {reason}; CI must install bubblewrap")
        pytest.skip(f"the sandbox cannot run here: {reason}")
    bundle = tmp_path / "cpp-bot.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(cpp_build.standalone_bot, "cpp_bot")
    db = tmp_path / "ladder.db"
    assert (
        arena_main(["bots", "add", "cpp", "--upload", str(bundle), "--run", "./cpp_bot", "--db", str(db)])
        == 0
    )
    assert "Registered cpp: command: ./cpp_bot --socket {socket}, version 1" in capsys.readouterr().out
