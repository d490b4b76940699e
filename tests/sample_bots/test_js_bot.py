"""The JavaScript kit (sample_bots/js: kit/ and its sample bot, bot.js) against the real arena.

The kit's own tests run under `node --test` (its plumbing over real gRPC, its types checked by tsc). The
bot runs as a real Node.js process on port 0: `arena check-bot` passes it item by item, the arena plays
whole matches between it and the Python random bot over loopback, and a short ladder plays it registered
as a command and uploaded as a bundle (run in the sandbox). Needs `node` and `(cd sample_bots/js && npm
ci)`: without them the tests skip locally, and fail under CI (CI set), so CI can never skip them silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from bot_process import BotProcess

from arena.check import Status, check_bot
from arena.cli import main
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.sandbox import bubblewrap
from fiftysix.engine import EndReason, Match, MatchRules, Ruleset
from fiftysix.record import loads
from fiftysix.replay import replay
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import TimeControl, decision_request, match_end_message, match_start_message
from sdk import BotServer

ROOT = Path(__file__).resolve().parents[2]
JS_DIR = ROOT / "sample_bots" / "js"
START_TIMEOUT_S = 15.0
# What the bot logs when something goes wrong on its side (a rejected arena message is tested apart).
ERROR_EVENTS = ("bot_failed", "stream_error", "bot_failed_to_start")


def _unavailable(reason: str, in_ci: str) -> None:
    """Skip, or fail under CI (saying what CI must do), which must run every test here."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; {in_ci}")
    pytest.skip(reason)


def _node_or_skip() -> str:
    """The path of `node`, or skip (fail under CI) when node or the installed packages are missing."""
    node = shutil.which("node")
    if node is None:
        _unavailable("node (Node.js) is not installed: the JS kit cannot run", "CI must install Node.js")
        raise AssertionError("unreachable")
    if not (JS_DIR / "node_modules").is_dir():
        _unavailable(
            "sample_bots/js/node_modules is missing: run `(cd sample_bots/js && npm ci)`",
            "CI must install the JS kit's packages before the tests",
        )
    return node


def _drain(stream: Iterator[str], lines: list[str], events: queue.Queue[dict[str, object]]) -> None:
    """Read the bot's stderr to the end (so its pipe never fills), passing JSON events on."""
    for line in stream:
        lines.append(line)
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.put(event)


@pytest.fixture(scope="module")
def js_bot() -> Iterator[BotProcess]:
    node = _node_or_skip()
    process = subprocess.Popen(
        [node, "bot.js", "--port", "0"],
        cwd=JS_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        lines: list[str] = []
        events: queue.Queue[dict[str, object]] = queue.Queue()
        reader = threading.Thread(target=_drain, args=(process.stderr, lines, events), daemon=True)
        reader.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        port: int | None = None
        while port is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or process.poll() is not None:
                raise AssertionError(f"the JS bot did not start; its stderr:\n{''.join(lines)}")
            try:
                event = events.get(timeout=min(remaining, 0.2))
            except queue.Empty:
                continue
            if event.get("event") == "bot_serving":
                port = int(str(event["port"]))
        yield BotProcess(process, port, ERROR_EVENTS, lines)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def play(rules: MatchRules, bots: list[BotAddress], seed: int) -> MatchOutcome:
    return asyncio.run(run_match(MatchSettings(rules, seed), seats_for_teams(rules, bots)))


def test_the_kits_own_tests_pass_under_node_test() -> None:
    # test/*.test.js: the kit over real gRPC (handshake, seats, answers, faults, socket, port file,
    # command line, SIGTERM), the sample strategy, messages.d.ts current with bot.proto, tsc --noEmit.
    node = _node_or_skip()
    run = subprocess.run(
        [node, "--test"], cwd=JS_DIR, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout
    passed = int(run.stdout.split("# pass ")[1].split()[0])
    assert passed >= 20, run.stdout[-2000:]


def test_check_bot_passes_every_item(js_bot: BotProcess) -> None:
    report = asyncio.run(check_bot(js_bot.address))
    assert [item.line() for item in report.items if item.status is not Status.PASS] == []
    assert report.count(Status.PASS) == len(report.items) >= 16
    assert js_bot.errors() == []


def test_describe(js_bot: BotProcess) -> None:
    with grpc.insecure_channel(js_bot.address) as channel:
        reply = rpc.BotServiceStub(channel).Describe(pb.DescribeRequest(protocol_version=1), timeout=5)
    assert reply.name == "js-simple"
    assert reply.version
    assert reply.protocol_version == 1
    assert list(reply.player_counts) == [4, 6, 8]
    assert list(reply.rulesets) == []


@pytest.mark.parametrize(
    ("players", "ruleset"),
    [(4, Ruleset.PAIRS), (6, Ruleset.PARTNERSHIP), (8, Ruleset.PARTNERSHIP)],
)
def test_js_bot_plays_whole_matches(
    js_bot: BotProcess, random_bot: BotServer, players: int, ruleset: Ruleset
) -> None:
    rules = MatchRules(players, ruleset)
    js = BotAddress("js", js_bot.address)
    rnd = BotAddress("random", f"127.0.0.1:{random_bot.port}")
    for seed, bots in ((players, [js, rnd]), (players + 1, [rnd, js])):
        outcome = play(rules, bots, seed)
        assert outcome.faults == []
        assert outcome.reason in ("one_team_left", "deal_cap")
        assert sorted(outcome.ranking)[0] == 1
        replayed = replay(loads(outcome.record.dumps()))
        assert replayed.complete
        assert replayed.match.ranking() == outcome.ranking
    assert js_bot.errors() == []


def test_js_bot_beats_the_random_bot(js_bot: BotProcess, random_bot: BotServer) -> None:
    # The random bot bids at random over hundreds of bids and loses its huge contracts; the JS bot bids
    # low and rarely. Over 40 seeds and each player count it has won every match; ask for most of 6.
    rules = MatchRules(4, Ruleset.PAIRS)
    js = BotAddress("js", js_bot.address)
    rnd = BotAddress("random", f"127.0.0.1:{random_bot.port}")
    wins = 0
    for seed in range(100, 106):
        js_team = seed % 2
        bots = [js, rnd] if js_team == 0 else [rnd, js]
        outcome = play(rules, bots, seed)
        assert outcome.faults == []
        wins += outcome.ranking[js_team] == 1 and outcome.ranking[1 - js_team] == 2
    assert wins >= 5, f"the JS bot won only {wins} of 6 matches against the random bot"


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


def test_stream_answers_by_index_with_the_same_decision_id_and_ends_after_match_end(
    js_bot: BotProcess,
) -> None:
    rules = MatchRules(4)
    match = Match(rules, seed=11)
    seat = match.deal.to_act
    view = match.view(seat)
    decision_id = 2**63 + 12345  # beyond a JavaScript number's exact range
    requests = _Requests()
    with grpc.insecure_channel(js_bot.address) as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(iter(requests), timeout=10)
        responses = iter(call)
        try:
            requests.send(match_start_message("direct", rules, seat, ["a", "b", "c", "d"], TimeControl()))
            assert next(responses).WhichOneof("answer") == "ready"
            requests.send(decision_request(match, decision_id, 1000, 5000))
            answer = next(responses)
            assert answer.WhichOneof("answer") == "move"
            assert answer.move.decision_id == decision_id
            assert answer.move.WhichOneof("choice") == "move_index"
            assert 0 <= answer.move.move_index < len(view.legal_moves)
            requests.send(match_end_message(EndReason.DEAL_CAP, (1, 2), (12, 12), ()))
            # The request stream stays open: the bot must end the conversation itself after MatchEnd.
            assert list(responses) == []
            assert call.code() == grpc.StatusCode.OK
        finally:
            requests.close()


def _notation_stripped(request: pb.PlaySeatRequest) -> pb.PlaySeatRequest:
    """The request without the notation a bot could work the structured fields out from: no legal_moves,
    no hand, no contract, no calls, no tricks, no cards on the table (the high bid's seat stays)."""
    stripped = pb.PlaySeatRequest()
    stripped.CopyFrom(request)
    decision = stripped.decision
    del decision.legal_moves[:]
    for name in ("hand", "contract", "calls", "tricks", "trick"):
        decision.view.ClearField(name)
    return stripped


def test_js_bot_chooses_from_the_structured_moves_and_view_fields(js_bot: BotProcess) -> None:
    # Asked every decision of a match twice, whole and without the notation, it gives the same answer: it
    # picks from `moves` and reads `hand_cards`, `trump` and `trick_winner` instead of legal_moves, hand,
    # contract and trick.
    rules = MatchRules(4, Ruleset.PAIRS, deal_cap=2)
    match = Match(rules, seed=21)
    requests = _Requests()
    answered = 0
    with grpc.insecure_channel(js_bot.address) as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(iter(requests), timeout=60)
        responses = iter(call)
        try:
            requests.send(match_start_message("stripped", rules, 0, ["a", "b", "c", "d"], TimeControl()))
            assert next(responses).WhichOneof("answer") == "ready"
            while not match.is_over:
                seat = match.deal.to_act
                view = match.view(seat)
                request = decision_request(match, answered, 1000, 5000)
                answers = []
                for sent in (request, _notation_stripped(request)):
                    requests.send(sent)
                    answers.append(next(responses).move.move_index)
                assert answers[0] == answers[1], f"decision {answered}: {view.legal_moves}"
                match.apply(seat, view.legal_moves[answers[0]])
                answered += 1
            requests.send(match_end_message(EndReason.DEAL_CAP, (1, 2), (12, 12), ()))
            assert list(responses) == []
        finally:
            requests.close()
    assert answered > 50
    assert js_bot.errors() == []


def test_cancelled_stream_does_not_hurt_the_bot(js_bot: BotProcess, random_bot: BotServer) -> None:
    rules = MatchRules(4)
    requests = _Requests()
    with grpc.insecure_channel(js_bot.address) as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(iter(requests), timeout=10)
        responses = iter(call)
        try:
            requests.send(match_start_message("cancelled", rules, 0, ["a", "b", "c", "d"], TimeControl()))
            assert next(responses).WhichOneof("answer") == "ready"
            call.cancel()  # type: ignore[no-untyped-call]  # grpc-stubs leaves cancel() untyped
        finally:
            requests.close()
    time.sleep(0.1)
    assert js_bot.process.poll() is None
    outcome = play(
        rules, [BotAddress("js", js_bot.address), BotAddress("random", f"127.0.0.1:{random_bot.port}")], 9
    )
    assert outcome.faults == []
    assert js_bot.errors() == []


def test_decision_before_match_start_is_rejected(js_bot: BotProcess) -> None:
    match = Match(MatchRules(4), seed=3)
    with grpc.insecure_channel(js_bot.address) as channel:
        call = rpc.BotServiceStub(channel).PlaySeat(
            iter([decision_request(match, 1, 1000, 5000)]), timeout=10
        )
        with pytest.raises(grpc.RpcError) as raised:
            list(call)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert js_bot.process.poll() is None
    js_bot.logged("arena_message_rejected")


def test_a_registered_command_and_an_uploaded_bundle_play_a_ladder(
    rule_bot: BotServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the kit's README says: the bot registered as a command (the arena starts it, reads its port file)
    # and as the bundle `npm run bundle` makes, uploaded and run in the sandbox (no network: everything it
    # needs is in the bundle), each beside the Python rule bot. Two sets one after the other: the second
    # goes to the bot that has played least, so all three play.
    node = _node_or_skip()
    reason = bubblewrap.unavailable_reason()
    if reason is not None:
        _unavailable(f"the sandbox cannot run here: {reason}", "CI must install bubblewrap")
    bundle = tmp_path / "js.tar.gz"
    made = subprocess.run(
        [node, "kit/bundle.js", str(bundle), "bot.js"],
        cwd=JS_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    db = str(tmp_path / "ladder.db")
    command = f"{shlex.quote(node)} {shlex.quote(str(JS_DIR / 'bot.js'))} --port 0 --port-file {{port_file}}"
    for registration in (
        ["js", "--command", command],
        ["js-upload", "--upload", str(bundle), "--run", "node bot.js"],
        ["rules", f"127.0.0.1:{rule_bot.port}"],  # served in this process: no interpreter to start
    ):
        assert main(["bots", "add", *registration, "--db", db]) == 0, capsys.readouterr().err
    assert "(in the sandbox)" in capsys.readouterr().out
    run = ["ladder", "run", "--matches", "4", "--concurrency", "1", "--deal-cap", "1", "--seed", "5"]
    assert main([*run, "--log-level", "warning", "--db", db]) == 0
    assert "(2 sets rated, 0 faults)" in capsys.readouterr().out
    assert main(["ladder", "show", "--json", "--db", db]) == 0
    standings = {line["bot"]: line for line in json.loads(capsys.readouterr().out)}
    assert sorted(standings) == ["js", "js-upload", "rules"]
    for bot in ("js", "js-upload"):
        assert standings[bot]["matches"] > 0
        assert all(count == 0 for count in standings[bot]["faults"].values())
