"""`arena rerun`: records made by the arena's own runner with real bots on loopback, re-run one seat at a
time against real bots (in this process, and one in its own process that crashes): recorded faults
reproduced move for move, the first difference found at the right move, --from-deal and --until-move,
a stored match held back until its set is over, and every error in one line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from bad_bots import start_bad_bot

from arena.ladder.store import LadderStore
from arena.runner import BotAddress, MatchSettings, run_match, seats_for_teams
from fiftysix.engine import MatchRules, Move, Ruleset
from fiftysix.record import GameRecord, load
from fiftysix.replay import RecordCursor, RecordedMove
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from fiftysix.wire import PROTOCOL_VERSION, FaultRecord, TimeControl
from sdk import Bot, BotView, start
from tests.arena.ladder.match_support import save_match
from tests.cli_in_process import run_here

RULES = MatchRules(4, Ruleset.PAIRS, deal_cap=3)
CLOCK = TimeControl(decision_ms=2000, bank_ms=2000)
BAD_BOTS = Path(__file__).resolve().parents[2] / "bots" / "bad_bots.py"


class FirstBot(Bot):
    """Always the first legal move: the same answers however often it is asked."""

    name = "first"

    def decide(self, view: BotView) -> Move:
        return view.legal_moves[0]


class LastBot(Bot):
    """Always the last legal move: it bids where the first passes."""

    name = "last"

    def decide(self, view: BotView) -> Move:
        return view.legal_moves[-1]


class Listening(rpc.BotServiceServicer):
    """A bot written against the protos that plays the first legal move and keeps every message each of
    its streams was sent, to compare what the rerun sends with what the arena sent."""

    def __init__(self) -> None:
        self.streams: list[list[pb.PlaySeatRequest]] = []
        self.from_the_arena: dict[int, list[pb.PlaySeatRequest]] = {}
        """What the arena sent each of its seats in the clean match (`records`)."""
        self.port = 0

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:  # noqa: N802
        return pb.DescribeResponse(name="listening", protocol_version=PROTOCOL_VERSION, player_counts=[4])

    def PlaySeat(  # noqa: N802
        self, request_iterator: Iterator[pb.PlaySeatRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PlaySeatResponse]:
        heard: list[pb.PlaySeatRequest] = []
        self.streams.append(heard)
        for request in request_iterator:
            heard.append(request)
            event = request.WhichOneof("event")
            if event == "match_start":
                yield pb.PlaySeatResponse(ready=pb.Ready())
            elif event == "decision":
                yield pb.PlaySeatResponse(
                    move=pb.MoveAnswer(decision_id=request.decision.decision_id, move_index=0)
                )
            elif event == "match_end":
                return

    def seat_streams(self) -> dict[int, list[pb.PlaySeatRequest]]:
        """Every stream heard so far by its seat (each match or rerun plays a seat once); then none."""
        streams = {stream[0].match_start.seat: stream for stream in self.streams}
        self.streams.clear()
        return streams


@pytest.fixture(scope="module")
def listening() -> Iterator[Listening]:
    servicer = Listening()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    rpc.add_BotServiceServicer_to_server(servicer, server)
    servicer.port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer
    server.stop(0)


@pytest.fixture(scope="module")
def ports(listening: Listening) -> Iterator[dict[str, int]]:
    servers = {"first": start(FirstBot), "last": start(LastBot)}
    bad = {kind: start_bad_bot(kind) for kind in ("illegal", "malformed", "closer")}
    yield (
        {name: server.port for name, server in servers.items()}
        | {kind: running.port for kind, running in bad.items()}
        | {"listening": listening.port}
    )
    for server in servers.values():
        server.stop(0)
    for running in bad.values():
        running.stop()


@pytest.fixture(scope="module")
def records(
    ports: dict[str, int], listening: Listening, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Matches played by the arena, saved: `clean` (a FirstBot and the listening bot, which play alike,
    3 deals; what the arena sent the listening bot's seats is kept), and one for each bad
    bot against a FirstBot with one strike (its team's first fault substituted, the next a forfeit)."""
    folder = tmp_path_factory.mktemp("records")

    async def play(name: str, other: str, strikes: int) -> GameRecord:
        bots = [
            BotAddress("first", f"127.0.0.1:{ports['first']}"),
            BotAddress(name, f"127.0.0.1:{ports[other]}"),
        ]
        settings = MatchSettings(RULES, 7, CLOCK, f"match-{name}", strikes=strikes)
        return (await run_match(settings, seats_for_teams(RULES, bots))).record

    async def play_all() -> dict[str, GameRecord]:
        kinds = {"clean": ("listening", 0), "illegal": ("illegal", 1), "malformed": ("malformed", 1)}
        kinds["closer"] = ("closer", 1)
        played = await asyncio.gather(
            *(play(name, other, strikes) for name, (other, strikes) in kinds.items())
        )
        return dict(zip(kinds, played, strict=True))

    paths = {}
    played = asyncio.run(play_all())
    listening.from_the_arena = listening.seat_streams()
    for name, record in played.items():
        paths[name] = folder / f"{name}.json"
        record.save(paths[name])
    return paths


def rerun(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_here(capsys, "rerun", *args)


def decisions(record: GameRecord, seat: int) -> list[tuple[RecordedMove, list[Move]]]:
    """The seat's recorded moves with the legal moves of each, by the engine."""
    cursor = RecordCursor(record)
    found = []
    while (step := cursor.next_move) is not None:
        if step.seat == seat:
            found.append((step, list(cursor.match.legal_moves())))
        cursor.advance()
    return found


def where(step: RecordedMove) -> str:
    return f"move {step.number} (deal {step.deal}, move {step.move})"


def faults_of(record: GameRecord, seat: int) -> list[FaultRecord]:
    return [FaultRecord.from_json(fault) for fault in record.extra["faults"] if fault["seat"] == seat]


@pytest.mark.parametrize("kind", ["illegal", "malformed", "closer"])
def test_a_recorded_fault_is_reproduced_move_for_move(
    capsys: pytest.CaptureFixture[str], ports: dict[str, int], records: dict[str, Path], kind: str
) -> None:
    """Each seat of the faulting team, rerun against the same bot: every decision as recorded, the
    substituted fault at its move (the record's random move played on) and the forfeit where the record
    ends, made again."""
    record = load(records[kind])
    faulted = sorted({fault["seat"] for fault in record.extra["faults"]})
    assert faulted
    for seat in faulted:
        done = rerun(capsys, str(records[kind]), "--seat", str(seat), "--bot", f"127.0.0.1:{ports[kind]}")
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()[1:-1]
        faults = faults_of(record, seat)
        at_fault = {(fault.deal_number, fault.move_number) for fault in faults}
        expected = [where(step) for step, _ in decisions(record, seat)]
        if not faults[-1].substituted:  # the forfeit: the decision the record stops before
            total = sum(len(deal.calls) + len(deal.cards) for deal in record.deals)
            last = record.deals[-1]
            expected.append(
                f"move {total + 1} (deal {last.number}, move {len(last.calls) + len(last.cards) + 1})"
            )
        assert [line.split(":")[0] for line in lines] == expected
        reproduced = [line for line in lines if line.endswith(": reproduced")]
        assert len(reproduced) == len(faults) == len(at_fault)
        for fault, line in zip(faults, reproduced, strict=True):
            place = f"(deal {fault.deal_number}, move {(fault.move_number or 0) + 1})"
            assert f"{place}: recorded {fault.cause.value}" in line
            assert f"; the bot {fault.cause.value} (" in line
        assert all("; the bot " in line and ": differs" not in line for line in lines)
        assert done.stdout.splitlines()[-1].startswith("The bot played every move as recorded: ")
        assert done.stderr == ""


def test_a_bot_that_plays_otherwise_stops_at_its_first_different_move(
    capsys: pytest.CaptureFixture[str], ports: dict[str, int], records: dict[str, Path]
) -> None:
    record = load(records["clean"])
    for from_deal in (1, 3):
        first_different = next(
            (step, legal)
            for step, legal in decisions(record, 2)
            if step.deal >= from_deal and legal[-1] != step.played
        )
        step, legal = first_different
        args = ("--seat", "2", "--bot", f"127.0.0.1:{ports['last']}", "--from-deal", str(from_deal))
        done = rerun(capsys, str(records["clean"]), *args)
        assert done.returncode == 1, done.stdout + done.stderr
        out = done.stdout.splitlines()
        assert f"{where(step)}: recorded {step.played}; the bot {legal[-1]}: differs" in out
        assert out[-3].startswith("  view: seat=2 hand=[")
        assert f" deal={step.deal} " in out[-3]
        more = f" ... ({len(legal)} in all)" if len(legal) > 60 else ""
        assert out[-2] == "  legal: " + " ".join(str(move) for move in legal[:60]) + more
        assert out[-1] == f"The bot differs from the record at {where(step)}."
        assert all(f"(deal {deal}," not in done.stdout for deal in range(1, from_deal))


def test_a_recorded_fault_the_bot_does_not_make_is_a_difference(
    capsys: pytest.CaptureFixture[str], ports: dict[str, int], records: dict[str, Path]
) -> None:
    record = load(records["illegal"])
    fault = FaultRecord.from_json(record.extra["faults"][0])
    assert fault.substituted
    step, legal = next(
        (step, legal)
        for step, legal in decisions(record, fault.seat)
        if (step.deal, step.move - 1) == (fault.deal_number, fault.move_number)
    )
    done = rerun(
        capsys, str(records["illegal"]), "--seat", str(fault.seat), "--bot", f"127.0.0.1:{ports['first']}"
    )
    assert done.returncode == 1
    assert (
        f"{where(step)}: recorded illegal_move ({fault.detail}), {step.played} played in its place; "
        f"the bot {legal[0]}: differs"
    ) in done.stdout.splitlines()


def test_the_bot_is_sent_what_the_arena_sent_it(
    capsys: pytest.CaptureFixture[str], listening: Listening, records: dict[str, Path]
) -> None:
    """Message for message: MatchStart, every decision (view, legal moves, clock, decision id), DealEnd
    and MatchEnd; from deal 2, the same without the decisions of deal 1 (its DealEnd still sent); up to a
    move, the decisions up to it and no MatchEnd."""
    record = load(records["clean"])
    address = f"127.0.0.1:{listening.port}"
    arena_sent = listening.from_the_arena[1]
    assert [request.WhichOneof("event") for request in arena_sent].count("deal_end") == 3

    done = rerun(capsys, str(records["clean"]), "--seat", "1", "--bot", address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert listening.seat_streams() == {1: arena_sent}

    done = rerun(capsys, str(records["clean"]), "--seat", "1", "--bot", address, "--from-deal", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    asked = [step for step, _ in decisions(record, 1) if step.deal >= 2]
    assert [line.split(":")[0] for line in done.stdout.splitlines()[1:-1]] == [where(step) for step in asked]
    assert (
        done.stdout.splitlines()[-1]
        == f"The bot played every move as recorded: {len(asked)} decisions compared."
    )
    in_deal_1 = {step.number for step, _ in decisions(record, 1) if step.deal == 1}
    assert listening.seat_streams() == {
        1: [request for request in arena_sent if request.decision.decision_id not in in_deal_1]
    }

    stop = asked[4].number + 1  # a move of another seat: the seat's decisions up to it, then stop
    done = rerun(capsys, str(records["clean"]), "--seat", "1", "--bot", address, "--until-move", str(stop))
    assert done.returncode == 0, done.stdout + done.stderr
    upto = [where(step) for step, _ in decisions(record, 1) if step.number <= stop]
    assert [line.split(":")[0] for line in done.stdout.splitlines()[1:-1]] == upto
    assert done.stdout.splitlines()[-1].startswith(
        f"The bot played every move as recorded up to move {stop}: "
    )
    [sent] = listening.seat_streams().values()
    decided = [request for request in sent if request.WhichOneof("event") == "decision"]
    assert decided == [request for request in arena_sent if 0 < request.decision.decision_id <= stop]
    assert "match_end" not in [request.WhichOneof("event") for request in sent]


def test_a_stored_match_is_rerun_only_once_its_set_is_over(
    capsys: pytest.CaptureFixture[str], ports: dict[str, int], records: dict[str, Path], tmp_path: Path
) -> None:
    db = tmp_path / "ladder.db"
    store = LadderStore(db)
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["first", "first-b"], isolated=False)
    document = json.loads(records["clean"].read_text())
    save_match(store, "match-clean", duplicate, 0, "deal_cap", [1, 2], [], document, 1, 0.5)
    store.close()
    args = ("match-clean", "--db", str(db), "--seat", "0", "--bot", f"127.0.0.1:{ports['first']}")
    refused = rerun(capsys, *args)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr == (
        "arena rerun: error: match match-clean is held back until set 1 is over: its other rotations "
        "replay the same deals\n"
    )
    store = LadderStore(db)
    store.sets.void_set(duplicate.id, "a bot was removed")
    store.close()
    done = rerun(capsys, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Rerun of match match-clean (4 players, pairs ruleset, 3 deals): seat 0 ")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--seat", "4"), "arena rerun: error: no seat 4: the record is of a 4-player match (seats 0 to 3)"),
        (("--seat", "9"), "arena rerun: error: argument --seat: expected a whole number from 0 to 7, got 9"),
        (
            ("--seat", "0", "--from-deal", "4"),
            "arena rerun: error: no deal 4 to start from: the record's deals",
        ),
        (("--seat", "0", "--until-move", "100000"), "arena rerun: error: no move 100000 to stop at:"),
        (
            ("--seat", "0", "--from-deal", "2", "--until-move", "3"),
            "arena rerun: error: move 3 comes before deal 2",
        ),
        (
            ("--seat", "0", "--bot", "127.0.0.1:1,127.0.0.1:2"),
            "arena rerun: error: argument --bot: expected one",
        ),
        (
            ("--seat", "0", "--bot", "127.0.0.1:1"),
            "arena rerun: error: cannot reach the bot at 127.0.0.1:1: ",
        ),
    ],
)
def test_what_cannot_be_rerun_is_said_in_one_line(
    capsys: pytest.CaptureFixture[str],
    ports: dict[str, int],
    records: dict[str, Path],
    args: tuple[str, ...],
    said: str,
) -> None:
    bot = () if "--bot" in args else ("--bot", f"127.0.0.1:{ports['first']}")
    done = rerun(capsys, str(records["clean"]), *args, *bot)
    assert done.returncode == 2
    assert done.stderr.startswith(said)
    assert done.stderr.count("\n") == 1


def test_a_missing_record_is_said_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    done = rerun(
        capsys, "no-such-match", "--db", str(tmp_path / "none.db"), "--seat", "0", "--bot", "127.0.0.1:1"
    )
    assert done.returncode == 2
    none = tmp_path / "none.db"
    assert done.stderr == (
        f"arena rerun: error: no-such-match: no such file, and no ladder at {none}: register a bot "
        "(arena bots add) or give --db / $ARENA_DB\n"
    )


def test_a_bot_that_crashes_mid_rerun_is_said_in_one_line(
    capsys: pytest.CaptureFixture[str], records: dict[str, Path]
) -> None:
    """The crasher's process dies at its first decision after two tricks, where the record has a card."""
    record = load(records["clean"])
    step = next(step for step, _ in decisions(record, 1) if _tricks_before(record, step) >= 2)
    process = subprocess.Popen([sys.executable, str(BAD_BOTS), "crasher"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = json.loads(process.stdout.readline())["port"]
        done = rerun(capsys, str(records["clean"]), "--seat", "1", "--bot", f"127.0.0.1:{port}")
        assert process.wait(10) == 3
    finally:
        process.kill()
        process.wait()
    assert done.returncode == 1
    assert f"{where(step)}: recorded {step.played}; the bot disconnected (" in done.stdout
    assert done.stderr.startswith(
        f"arena rerun: error: the bot at 127.0.0.1:{port} crashed or closed its stream at {where(step)}: "
        "disconnected ("
    )
    assert done.stderr.count("\n") == 1


def _tricks_before(record: GameRecord, step: RecordedMove) -> int:
    """Tricks played in the step's deal before it (0 in the auction; a trick is a card from each seat at
    the table)."""
    deal = record.deals[step.deal - 1]
    at_table = sum(1 for hand in deal.hands if hand is not None)
    return max(0, step.move - 1 - len(deal.calls)) // at_table
