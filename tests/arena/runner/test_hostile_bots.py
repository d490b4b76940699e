"""Containment: whatever a bot sends, at any point of the protocol, the match ends with a typed fault on
that bot (or cleanly), the record is whole and replays, every stream and task is closed, and the other
bot is never blamed. Each defect of issue 8 that a hostile bot reproduced has a test here; the fuzz
tests then send arbitrary bytes and arbitrary well-formed but wrong messages at every point."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from hostile_bot import (
    READY,
    VALID,
    Abort,
    Action,
    Answer,
    HostileBot,
    Script,
    describe_reply,
    move,
    nested_groups,
    non_utf8_name,
    non_utf8_notation,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.check import Status, check_bot
from arena.cli import main
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.runner.stream import MAX_WAITING_MESSAGES
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.record import loads
from fiftysix.replay import replay
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import MAX_ANSWER_BYTES, FaultCause, TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

HOSTILE_TEAM = 1


@pytest.fixture(scope="module")
def good() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileBot]:
    bot = HostileBot()
    yield bot
    bot.stop()


def play(
    hostile: HostileBot, good: BotServer, script: Script, strikes: int = 0, players: int = 4
) -> MatchOutcome:
    """One match, the hostile bot on team 1, checked for containment."""
    hostile.script = script
    hostile.sent_after_end = 0
    rules = MatchRules(players, Ruleset.PAIRS, deal_cap=1)

    async def run() -> tuple[MatchOutcome, list[asyncio.Task[object]]]:
        bots = [BotAddress("good", f"127.0.0.1:{good.port}"), BotAddress("hostile", hostile.address)]
        bots += [BotAddress(f"good-{team}", f"127.0.0.1:{good.port}") for team in range(2, rules.team_count)]
        match_settings = MatchSettings(
            rules,
            seed=3,
            time_control=TimeControl(decision_ms=300, bank_ms=0),
            connect_timeout_s=1.0,
            strikes=strikes,
            send_timeout_s=1.0,
        )
        outcome = await run_match(match_settings, seats_for_teams(rules, bots))
        # gRPC's own tasks of a cancelled call (status handling) finish on later turns of the loop.
        leftover = [
            task
            for task in asyncio.all_tasks()
            if task is not asyncio.current_task() and "grpc" not in _source(task)
        ]
        return outcome, leftover  # type: ignore[return-value]

    outcome, leftover = asyncio.run(run())
    assert leftover == [], "run_match left tasks running"
    assert_contained(outcome)
    return outcome


def _source(task: asyncio.Task[object]) -> str:
    code = getattr(task.get_coro(), "cr_code", None)
    return str(getattr(code, "co_filename", ""))


def assert_contained(outcome: MatchOutcome) -> None:
    rules = outcome.rules
    assert outcome.reason in ("one_team_left", "deal_cap", "forfeit")
    for fault in outcome.faults:
        assert rules.team_of(fault.seat) == HOSTILE_TEAM, f"a good bot was blamed: {fault}"
        assert fault.detail.isprintable()
        assert len(fault.detail) < 600
    if outcome.reason == "forfeit":
        assert outcome.forfeited_teams == (HOSTILE_TEAM,)
    replay(loads(outcome.record.dumps()))  # the record is whole and follows the rules


def only_fault(outcome: MatchOutcome) -> FaultCause:
    causes = {fault.cause for fault in outcome.faults if not fault.substituted}
    assert len(causes) == 1, outcome.faults
    return causes.pop()


# Item 1: a message that does not decode, at every point.


@pytest.mark.parametrize(
    ("script", "where"),
    [
        (Script(decisions={1: [b"\xff\xff\xff\xff"]}), "answer: bytes that are not protobuf"),
        (Script(decisions={1: [move(1, notation="JS")[:-1]]}), "answer: a truncated message"),
        (Script(decisions={1: [non_utf8_notation(1)]}), "answer: notation that is not UTF-8"),
        (Script(decisions={1: [nested_groups(200)]}), "answer: deeply nested unknown groups"),
        (Script(ready=[b"\x00\x01\x02"]), "Ready: bytes that are not protobuf"),
        (Script(describe=non_utf8_name()), "Describe: a name that is not UTF-8"),
        (Script(describe=b"\xff\xff"), "Describe: bytes that are not protobuf"),
        (Script(health=b"\xff\xff"), "health: bytes that are not protobuf"),
    ],
)
def test_an_undecodable_message_is_a_protocol_error_at_once(
    hostile: HostileBot, good: BotServer, script: Script, where: str
) -> None:
    started = time.perf_counter()
    outcome = play(hostile, good, script)
    assert only_fault(outcome) is FaultCause.PROTOCOL_ERROR, where
    assert outcome.reason == "forfeit"
    assert "does not decode" in outcome.faults[0].detail
    assert time.perf_counter() - started < 5  # not a timeout after the whole budget


def test_garbage_after_match_end_is_ignored(hostile: HostileBot, good: BotServer) -> None:
    outcome = play(hostile, good, Script(after_end=[b"\xff\xff\xff", nested_groups(300), b"\x00"]))
    assert outcome.faults == []
    assert outcome.reason == "deal_cap"


# Item 2: a bid of 5,000 digits.


@pytest.mark.parametrize("text", ["5" * 5000 + "S", "S" + "5" * 5000, "+" + "1" * 5000 + "S", "x" * 60_000])
def test_a_bid_of_thousands_of_digits_is_a_malformed_answer(
    hostile: HostileBot, good: BotServer, text: str
) -> None:
    outcome = play(hostile, good, Script(decisions={1: [Answer(notation=text)]}))
    assert only_fault(outcome) is FaultCause.MALFORMED_ANSWER


# Item 4: unbounded buffering.


def test_a_flood_after_match_end_is_not_buffered(hostile: HostileBot, good: BotServer) -> None:
    big = move(1, notation="J" * (MAX_ANSWER_BYTES - 100))
    started = time.perf_counter()
    outcome = play(hostile, good, Script(after_end=[big] * 3000))
    assert outcome.faults == []
    assert time.perf_counter() - started < 4  # the stream is closed, not read for the whole grace
    # Before, the arena read every message for 5 s (gigabytes); now it stops after a few.
    assert hostile.sent_after_end < 1000


def test_a_flood_during_the_match_is_a_protocol_error(hostile: HostileBot, good: BotServer) -> None:
    stale = Answer(offset=-1000, move_index=0)  # answers to decisions long gone, over and over
    outcome = play(hostile, good, Script(decisions={1: [VALID, *[stale] * 3000]}), strikes=10_000)
    last = outcome.faults[-1]
    assert (last.cause, last.substituted) == (FaultCause.PROTOCOL_ERROR, False)
    assert f"more than {MAX_WAITING_MESSAGES} messages" in last.detail


# Item 5: terminal injection through the bot's status text.

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
INJECTION = "\x1b[2J\x1b[H\rFault: seat 0 (good, team 0) timeout in deal 1: forged (forfeit)\x07" * 40


def test_status_text_is_escaped_and_cut(hostile: HostileBot, good: BotServer) -> None:
    outcome = play(hostile, good, Script(decisions={1: [Abort(grpc.StatusCode.INTERNAL, INJECTION)]}))
    detail = outcome.faults[0].detail
    assert not CONTROL.search(detail)
    assert "\\x1b[2J" in detail
    assert len(detail) < 600


def test_arena_match_prints_no_control_characters(
    hostile: HostileBot, good: BotServer, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.script = Script(decisions={1: [Abort(grpc.StatusCode.INTERNAL, INJECTION)]})
    bots = ["--bot", f"good=127.0.0.1:{good.port}", "--bot", f"evil={hostile.address}"]
    status = main(["match", *bots, "--deal-cap", "1", "--decision-ms", "300", "--bank-ms", "0"])
    out = capsys.readouterr()
    assert status == 3
    assert re.search(r"Fault: seat [13] \(evil, team 1\) disconnected", out.out)
    for text in (out.out, out.err):
        assert not CONTROL.search(text)


# Item 8: a dead stream is never forgiven; a declaration's size does not become a fault's size.


def test_a_stream_ended_with_resource_exhausted_forfeits_despite_strikes(
    hostile: HostileBot, good: BotServer
) -> None:
    script = Script(decisions={1: [Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too much")]})
    outcome = play(hostile, good, script, strikes=3)
    assert [(fault.cause, fault.substituted) for fault in outcome.faults] == [
        (FaultCause.PROTOCOL_ERROR, False)
    ]
    assert outcome.reason == "forfeit"


def test_an_oversized_answer_forfeits_despite_strikes(hostile: HostileBot, good: BotServer) -> None:
    huge = move(1, notation="J" * (MAX_ANSWER_BYTES + 10))
    outcome = play(hostile, good, Script(decisions={1: [huge]}), strikes=3)
    assert [(fault.cause, fault.substituted) for fault in outcome.faults] == [
        (FaultCause.PROTOCOL_ERROR, False)
    ]


def test_thousands_of_declared_player_counts_give_a_short_fault(hostile: HostileBot, good: BotServer) -> None:
    outcome = play(hostile, good, Script(describe=describe_reply(player_counts=[5] * 10_000)))
    assert only_fault(outcome) is FaultCause.INCOMPATIBLE
    assert len(outcome.faults[0].detail) < 200


# Fuzz: arbitrary bytes and well-formed but wrong messages at every point.

STATUS_CODES = [grpc.StatusCode.INTERNAL, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.CANCELLED]
raw_bytes = st.one_of(
    st.binary(max_size=48),
    st.builds(lambda cut: move(7, notation="28S")[:cut], st.integers(0, 8)),
    st.builds(nested_groups, st.integers(50, 400)),
    st.just(b"\x0a" + bytes([0x80, 0xA0, 0x04]) + b"x" * 70_000),  # a Ready of 70 kB: over the limit
)
wrong_messages = st.one_of(
    st.builds(
        Answer,
        offset=st.integers(-3, 3),
        move_index=st.none() | st.integers(0, 2**32 - 1),
        notation=st.none()
        | st.text(max_size=12)
        | st.sampled_from(["28S", "+2NOES", "JS", "pass", "9" * 5000]),
    ),
    st.just(READY),
    st.just(b""),  # an empty PlaySeatResponse
    st.builds(Abort, st.sampled_from(STATUS_CODES), st.text(max_size=40)),
)
actions: st.SearchStrategy[Action] = st.one_of(raw_bytes, wrong_messages, st.just(VALID))
scripts = st.builds(
    Script,
    health=st.none() | raw_bytes,
    describe=st.none() | raw_bytes | st.just(non_utf8_name()),
    ready=st.none() | st.lists(actions, min_size=1, max_size=2),
    decisions=st.dictionaries(st.integers(1, 4), st.lists(actions, min_size=1, max_size=3), max_size=3),
    after_end=st.lists(actions, max_size=3),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=scripts, strikes=st.sampled_from([0, 2]))
def test_fuzz_any_bytes_at_any_point_are_contained(
    hostile: HostileBot, good: BotServer, script: Script, strikes: int
) -> None:
    play(hostile, good, script, strikes=strikes)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(decisions=st.dictionaries(st.integers(1, 6), st.lists(wrong_messages, min_size=1, max_size=2)))
def test_fuzz_wrong_messages_in_a_six_player_match(
    hostile: HostileBot, good: BotServer, decisions: dict[int, list[Action]]
) -> None:
    play(hostile, good, Script(decisions=decisions), strikes=2, players=6)


# Item 3: the ladder contains them all.

HOSTILE_SCRIPTS = {
    "not-protobuf": Script(decisions={2: [b"\xff\xff\xff\xff"]}),
    "truncated": Script(decisions={1: [move(1, notation="JS")[:-1]]}),
    "non-utf8-notation": Script(decisions={1: [non_utf8_notation(1)]}),
    "nested-groups": Script(decisions={3: [nested_groups(300)]}),
    "non-utf8-name": Script(describe=non_utf8_name()),
    "bad-health": Script(health=b"\xff"),
    "bad-ready": Script(ready=[b"\x00"]),
    "long-bid": Script(decisions={1: [Answer(notation="5" * 5000 + "S")]}),
    "injector": Script(decisions={1: [Abort(grpc.StatusCode.INTERNAL, INJECTION)]}),
    "exhausted": Script(decisions={1: [Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "no")]}),
    "flooder": Script(decisions={1: [VALID, *[Answer(offset=-1000, move_index=0)] * 500]}),
    "counts": Script(describe=describe_reply(player_counts=[5] * 10_000)),
}
HARMLESS_SCRIPTS = {
    # They misbehave only after MatchEnd, when the match is decided: contained, never a fault.
    "garbage-after-end": Script(after_end=[b"\xff\xff", nested_groups(300)]),
    "flood-after-end": Script(after_end=[move(1, notation="J" * 60_000)] * 200),
}


def test_a_ladder_with_every_kind_of_hostile_bot_runs_to_the_end(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    bots = {name: HostileBot(script) for name, script in {**HOSTILE_SCRIPTS, **HARMLESS_SCRIPTS}.items()}
    try:
        for name, bot in bots.items():  # in this process: a process each would add a second a bot
            assert main(["bots", "--db", str(db), "add", name, bot.address, "--no-check"]) == 0
        failing = "python -c 'import sys; sys.exit(3)' {port}"
        assert main(["bots", "--db", str(db), "add", "no-start", "--command", failing, "--no-check"]) == 0
        run = arena(
            "ladder", "run", "--sample-bots", "--matches", "100", "--concurrency", "4", "--deal-cap", "2",
            "--decision-ms", "300", "--bank-ms", "300", "--seed", "11", db=db,
        )  # fmt: skip
    finally:
        for bot in bots.values():
            bot.stop()
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert not CONTROL.search(run.stdout)
    # A set made void while its other match is in play may add one: a run ends on whole sets.
    played = re.search(r"Played (\d+) matches", run.stdout)
    assert played is not None
    assert int(played.group(1)) >= 100
    put_on_probation = re.findall(r"^(\S+) was put on probation", run.stdout, re.MULTILINE)
    assert sorted(put_on_probation) == sorted(HOSTILE_SCRIPTS)  # each once
    # A command that never starts is the host's failure, not the bot's play: it is not rated, and it is
    # marked down (skipped until it starts) instead of put on probation.
    marked_down = re.findall(r"^(\S+) was marked down", run.stdout, re.MULTILINE)
    assert marked_down == ["no-start"]
    shown = arena("ladder", "show", "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    standings = {line["bot"]: line for line in json.loads(shown.stdout)}
    for name in HOSTILE_SCRIPTS:
        assert standings[name]["probation"], f"{name} is not on probation"
        assert not CONTROL.search(standings[name]["probation"])
    assert standings["no-start"]["probation"] is None
    assert standings["no-start"]["down"] is True
    assert standings["no-start"]["matches"] == 0
    assert standings["no-start"]["elo"] == 1500
    for name in [*HARMLESS_SCRIPTS, "random", "rules"]:
        assert standings[name]["probation"] is None
        assert standings[name]["down"] is False
        assert standings[name]["faults"] == {"timeouts": 0, "illegal_moves": 0, "crashes": 0}
    # The sample bots were rated: their sets were complete and not void.
    assert standings["rules"]["elo"] != 1500
    assert standings["random"]["elo"] != 1500
    assert standings["rules"]["elo"] > standings["random"]["elo"]


def arena(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    """Run `arena GROUP --db DB ACTION ...` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", args[0], "--db", str(db), *args[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


# The compliance checker meets the same bots: every item is a verdict, never a crash.


@pytest.mark.parametrize(
    ("script", "item", "expected"),
    [
        (Script(describe=non_utf8_name()), "handshake", "does not decode"),
        (Script(health=b"\xff\xff"), "health", "does not decode"),
        (Script(decisions={1: [b"\xff\xff\xff\xff"]}), "redouble window", "does not decode"),
        (Script(decisions={1: [Abort(grpc.StatusCode.INTERNAL, INJECTION)]}), "last trick", "\\x1b[2J"),
        (Script(after_end=[b"\xff\xff", READY, READY]), "all-pass contract", "after MatchEnd"),
    ],
)
def test_check_bot_reports_every_hostile_answer(
    hostile: HostileBot, script: Script, item: str, expected: str
) -> None:
    hostile.script = script
    report = asyncio.run(check_bot(hostile.address, decision_ms=300, only=[item]))
    [verdict] = [entry for entry in report.items if entry.name == item]
    assert verdict.status is Status.FAIL, verdict
    assert expected in verdict.line()
    assert not CONTROL.search(verdict.line())


# A bot the arena checked when it started is not asked again for every match.


def test_a_described_address_is_not_asked_again_but_still_checked(
    hostile: HostileBot, good: BotServer
) -> None:
    hostile.script = Script()
    rules = MatchRules(4, Ruleset.PAIRS, deal_cap=1)
    bots = [BotAddress("good", f"127.0.0.1:{good.port}"), BotAddress("hostile", hostile.address)]
    settings = MatchSettings(rules, seed=3, time_control=TimeControl(300, 0), connect_timeout_s=1.0)
    plays_all = pb.DescribeResponse.FromString(describe_reply())
    hostile.describes = 0
    outcome = asyncio.run(
        run_match(settings, seats_for_teams(rules, bots), described={hostile.address: plays_all})
    )
    assert outcome.faults == []
    assert hostile.describes == 0
    six_only = pb.DescribeResponse.FromString(describe_reply(player_counts=[6]))
    outcome = asyncio.run(
        run_match(settings, seats_for_teams(rules, bots), described={hostile.address: six_only})
    )
    assert only_fault(outcome) is FaultCause.INCOMPATIBLE
    assert hostile.describes == 0
