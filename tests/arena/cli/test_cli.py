"""The `arena` command line: play, replay, and clear errors for bad flags and bad files."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import IO

import pytest

from arena.cli import arguments, build_parser, listings, main, sandbox_options, tournament
from arena.cli import ladder as ladder_command
from arena.cli import play as play_command
from arena.cli import replay as replay_command
from arena.errors import ArenaError, UsageError
from arena.ladder import Ladder, LadderError, LadderReport
from arena.ladder.bots import BotStartError
from arena.ladder.store import BrowseStore, LadderStore, StoreError
from fiftysix.record import MAX_RECORD_BYTES
from tests.arena.ladder.match_support import save_match
from tests.cli_in_process import run_here


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
        (["play", "--deal-cap", "0"], "1 to 10,000"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_flags_get_a_clear_error(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    finished = run_here(capsys, *args)
    assert finished.returncode == 2
    assert message in finished.stderr


def one_line_error(stderr: str) -> str:
    """The single error line of a failed command (and proof that nothing else was printed)."""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(("arena ", "arena: "))
    assert "error:" in lines[0]
    return lines[0]


def parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Parse `argv` in-process, expecting a usage error; returns its line."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return one_line_error(capsys.readouterr().err)


BOTS = ["--bot", "a=127.0.0.1:1", "--bot", "b=127.0.0.1:2"]
SPRT = ["sprt", "a", "b", "--elo0", "0", "--elo1", "10"]
TOURNAMENT = ["tournament", "--format", "gauntlet", "--bots", "a,b"]
RUN_OPTIONS = [
    ("--seed", arguments.seed),
    ("--deal-cap", arguments.deal_cap),
    ("--decision-ms", arguments.decision_ms),
    ("--bank-ms", arguments.bank_ms),
    ("--strikes", arguments.strikes),
    ("--concurrency", arguments.concurrency),
]
"""The numbers of every command that plays sets of an event."""
SANDBOX_LIMITS = [
    ("--bot-memory", sandbox_options.memory_mib),
    ("--bot-cpu", sandbox_options.cpu_seconds),
    ("--bot-processes", sandbox_options.processes),
    ("--bot-tmp", sandbox_options.tmp_mib),
    ("--bot-output", sandbox_options.output_kib),
]
"""The limits of sandboxed bots, options of every command that starts bots."""
BOUNDED_OPTIONS = [
    (["play"], "--seed", arguments.seed),
    (["play"], "--deal-cap", arguments.deal_cap),
    (["match", *BOTS], "--seed", arguments.seed),
    (["match", *BOTS], "--deal-cap", arguments.deal_cap),
    (["match", *BOTS], "--decision-ms", arguments.decision_ms),
    (["match", *BOTS], "--bank-ms", arguments.bank_ms),
    (["match", *BOTS], "--strikes", arguments.strikes),
    (["ladder", "run"], "--matches", arguments.matches),
    (["ladder", "run"], "--concurrency", arguments.concurrency),
    (["ladder", "run"], "--deal-cap", arguments.deal_cap),
    (["ladder", "run"], "--decision-ms", arguments.decision_ms),
    (["ladder", "run"], "--bank-ms", arguments.bank_ms),
    (["ladder", "run"], "--seed", arguments.seed),
    (["ladder", "run"], "--strikes", arguments.strikes),
    (["ladder", "run"], "--probation-after", arguments.probation_after),
    (["ladder", "run"], "--down-after", arguments.down_after),
    (["ladder", "run"], "--idle-bots", arguments.idle_bots),
    (["ladder", "matches"], "--limit", arguments.limit),
    (["ladder", "output", "m1"], "--seat", arguments.seat),
    (["check-bot", "127.0.0.1:1"], "--decision-ms", arguments.decision_ms),
    *(
        (command, option, bounds)
        for command in (
            ["ladder", "run"],
            SPRT,
            TOURNAMENT,
            ["bots", "add", "b"],
            ["bots", "update", "b"],
            ["serve"],
        )
        for option, bounds in SANDBOX_LIMITS
    ),
    *((SPRT, option, bounds) for option, bounds in RUN_OPTIONS),
    (SPRT, "--max-sets", arguments.sets),
    *((TOURNAMENT, option, bounds) for option, bounds in RUN_OPTIONS),
    (TOURNAMENT, "--rounds", tournament.rounds),
    (["serve"], "--port", arguments.port),
    (["serve"], "--live-delay", arguments.live_delay),
    (["serve"], "--max-streams", arguments.streams),
    (["serve"], "--max-streams-per-client", arguments.streams),
    (["serve"], "--uploads-at-once", arguments.uploads_at_once),
    (["serve"], "--uploads-per-hour", arguments.uploads_per_hour),
    (["serve"], "--upload-quota", arguments.upload_quota_mib),
    (["bots", "prune"], "--keep", arguments.keep_versions),
    (["bots", "checks", "b"], "--id", arguments.check_id),
    (["tokens", "audit"], "--limit", arguments.limit),
    (["ladder", "export", "--html", "out"], "--limit", arguments.limit),
    (["rerun", "match.json", "--bot", "127.0.0.1:1"], "--seat", arguments.seat),
    (["rerun", "match.json", "--bot", "127.0.0.1:1", "--seat", "0"], "--from-deal", arguments.deal_number),
    (["rerun", "match.json", "--bot", "127.0.0.1:1", "--seat", "0"], "--until-move", arguments.move_number),
]


@pytest.mark.parametrize(("command", "option", "bounds"), BOUNDED_OPTIONS)
def test_every_number_is_bounded_where_it_is_parsed(
    command: list[str], option: str, bounds: arguments.Bounded, capsys: pytest.CaptureFixture[str]
) -> None:
    """Just past either end, and a number int() refuses to convert (over 4,300 digits), are usage errors
    that name the range; both ends are accepted."""
    for value in (str(bounds.high + 1), str(bounds.low - 1), "9" * 5000, "-" + "9" * 5000):
        line = parse_error([*command, option, value], capsys)
        assert f"argument {option}: expected a whole number from {bounds.range}" in line
        assert len(line) < 300
    parser = build_parser()
    for value in (bounds.low, bounds.high):
        args = parser.parse_args([*command, option, str(value)])
        assert getattr(args, option[2:].replace("-", "_")) == value


def all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every option and positional of a parser and of its subcommands, at any depth."""
    found = []
    for action in parser._actions:
        found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                found.extend(all_actions(subparser))
    return found


def test_no_number_option_is_unbounded_and_help_states_every_range() -> None:
    actions = all_actions(build_parser())
    assert all(action.type not in (int, float) for action in actions)
    bounded = [action for action in actions if isinstance(action.type, arguments.Bounded)]
    assert len(bounded) == len(BOUNDED_OPTIONS)
    for action in bounded:
        assert isinstance(action.type, arguments.Bounded)
        assert action.type.range in (action.help or ""), action.option_strings
    reals = [action for action in actions if isinstance(action.type, arguments.BoundedReal)]
    assert [action.option_strings[0] for action in reals] == ["--elo0", "--elo1", "--alpha", "--beta"]
    for action in reals:
        assert isinstance(action.type, arguments.BoundedReal)
        assert action.type.range in (action.help or ""), action.option_strings
    durations = [action for action in actions if isinstance(action.type, arguments.Duration)]
    # ladder run's (of the run options shared) and its own, then sprt's, tournament's and serve's
    assert [action.option_strings[0] for action in durations] == [
        "--store-wait", "--duration", "--lease", "--check-timeout", "--retry", "--down-recheck",
        "--store-wait", "--store-wait", "--store-wait",
    ]  # fmt: skip
    for action in durations:
        assert isinstance(action.type, arguments.Duration)
        assert action.type.range in (action.help or ""), action.option_strings


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), ("1h0m5s", 3605), ("8760h", 8760 * 3600)],
)
def test_a_duration_is_written_with_units(text: str, seconds: int) -> None:
    args = build_parser().parse_args(["ladder", "run", "--duration", text])
    assert args.duration == seconds


@pytest.mark.parametrize(
    "command",
    [
        ["ladder", "run"],
        ["sprt", "a", "b", "--elo0", "0", "--elo1", "10"],
        ["tournament", "--format", "round-robin", "--bots", "a,b"],
        ["serve"],
    ],
)
def test_the_store_wait_is_a_duration_and_0_stops_at_once(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args([*command, "--store-wait", "90s"]).store_wait == 90
    assert parser.parse_args([*command, "--store-wait", "0"]).store_wait == 0
    assert parser.parse_args(command).store_wait == 300  # default: 5 minutes


@pytest.mark.parametrize(
    ("text", "shown"),
    [("90", "'90'"), ("0s", "0s"), ("8761h", "8761h"), ("1h 30m", "'1h 30m'"), ("-5m", "'-5m'"), ("", "''")],
)
def test_a_bad_duration_is_one_line_that_says_what_is_expected(
    text: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = parse_error(["ladder", "run", f"--duration={text}"], capsys)
    assert line.startswith(
        "arena ladder run: error: argument --duration: expected a duration such as 90s, 30m, 2h or 1h30m, "
        f"from 1s to 8760h; got {shown}"
    )


def test_duration_combines_with_matches_or_forever() -> None:
    parser = build_parser()
    args = parser.parse_args(["ladder", "run", "--forever", "--duration", "1h"])
    assert (args.forever, args.duration) == (True, 3600)
    args = parser.parse_args(["ladder", "run", "--matches", "5", "--duration", "1h"])
    assert (args.matches, args.duration) == (5, 3600)


@pytest.mark.parametrize(
    "args",
    [
        # Overflowed uint32 only after the bots' handshake: now refused before any connection.
        ["match", *BOTS, "--decision-ms", "5000000000"],
        ["match", *BOTS, "--bank-ms", "5000000000"],
        ["match", *BOTS, "--deal-cap", "5000000000"],
        # Overflowed SQLite's integer.
        ["ladder", "--db", "DB", "matches", "--limit", str(10**30)],
        ["ladder", "--db", "DB", "run", "--deal-cap", str(10**20)],
    ],
)
def test_numbers_that_overflowed_are_one_line_usage_errors(args: list[str], tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    finished = run_arena(*[str(db) if arg == "DB" else arg for arg in args])
    assert finished.returncode == 2
    assert "expected a whole number from" in one_line_error(finished.stderr)
    assert not db.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested more than 64 levels"),
        (
            '{"format": "fiftysix-game-record", "version": 1, "seed": ' + "7" * 5000 + "}",
            "thousands of digits",
        ),
        ("\x1b[2J" + "x" * 10_000, "not JSON"),
    ],
    ids=["deep", "digits", "escapes"],
)
def test_replay_of_a_hostile_file_is_one_error_line(text: str, message: str, tmp_path: Path) -> None:
    """These raised RecursionError and ValueError: tracebacks."""
    path = tmp_path / "hostile.json"
    path.write_text(text)
    finished = run_arena("replay", str(path))
    assert finished.returncode == 1
    line = one_line_error(finished.stderr)
    assert line.startswith(f"arena replay: error: {path}: ")
    assert message in line
    assert "\x1b" not in line
    assert len(line) < 1200


def test_replay_shows_seat_names_and_reasons_from_the_file_escaped(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    assert main(["play", "--seed", "2", "--save", str(path), "--brief"]) == 0
    document = json.loads(path.read_text())
    document["seats"] = ["\x1b[2Jevil\nforged line"] * document["players"]
    path.write_text(json.dumps(document))
    finished = run_arena("replay", str(path))
    assert finished.returncode == 0, finished.stderr
    assert "\x1b" not in finished.stdout
    assert "\\x1b[2Jevil\\nforged line" in finished.stdout
    assert not any(line.startswith("forged line") for line in finished.stdout.splitlines())


def run_replay(source: str, stdin: int | IO[bytes] = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    """`arena replay SOURCE` in its own process, which must end well within the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "--quiet", source],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )


def no_record_file(kind: str, tmp_path: Path) -> Path:
    """A path that names no record file to read."""
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        return Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "oversize":
        with path.open("wb") as file:
            file.truncate(MAX_RECORD_BYTES + 1)  # sparse: its size is all that is looked at
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("device", "not a regular file: a character device"),
        ("directory", "not a regular file: a directory"),
        ("oversize", "134,217,729 bytes, over the limit of 134,217,728 for a game record"),
        ("missing", "cannot read: No such file or directory"),
    ],
)
def test_replay_refuses_a_path_that_names_no_record_file(
    kind: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/zero was read until MemoryError, a file of gigabytes read whole: a path that names no record
    file to read is one usage line, at once, without reading it."""
    path = no_record_file(kind, tmp_path)
    assert main(["replay", str(path)]) == 2
    assert one_line_error(capsys.readouterr().err) == f"arena replay: error: {path}: {message}"


def test_replay_of_a_fifo_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    """It waited for ever: opening a FIFO to read waits for a writer."""
    path = no_record_file("fifo", tmp_path)
    finished = run_replay(str(path))
    assert finished.returncode == 2
    assert (
        one_line_error(finished.stderr)
        == f"arena replay: error: {path}: not a regular file: a FIFO (a named pipe)"
    )


def test_replay_of_a_file_it_may_not_read_is_a_usage_line(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    path.write_text("{}")
    path.chmod(0)
    finished = run_arena_without_root("replay", str(path))
    assert finished.returncode == 2
    assert one_line_error(finished.stderr) == f"arena replay: error: {path}: cannot read: Permission denied"


def test_replay_reads_a_record_from_standard_input(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    assert main(["play", "--seed", "2", "--save", str(path), "--brief"]) == 0
    with path.open("rb") as record:
        finished = run_replay("-", stdin=record)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("standard input: ")
    assert "every result checked; complete" in finished.stdout


class EndlessInput:
    """Standard input that never ends (as `< /dev/zero`), counting what was read of it."""

    def __init__(self) -> None:
        self.served = 0

    def read(self, size: int) -> bytes:
        self.served += size
        return b" " * size


def test_replay_reads_at_most_the_limit_of_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    endless = EndlessInput()
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=endless))
    assert main(["replay", "-"]) == 2
    assert one_line_error(capsys.readouterr().err) == (
        "arena replay: error: standard input: more than 134,217,728 bytes, over the limit for a game record"
    )
    assert endless.served == MAX_RECORD_BYTES + 1


# The ladder's file: every StoreError, at opening or later, is one line; nothing stored is lost.


def run_arena_without_root(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command so that file permissions apply: root (as in containers) ignores them, so the
    capabilities that let it are dropped first."""
    return run_arena_without_root_argv(["-m", "arena.cli", *args])


def run_arena_without_root_argv(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Python with `argv`, as `run_arena_without_root` runs the arena."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file permissions do not apply")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run(
        [*prefix, sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


EACH_COMMAND = """
import contextlib, io, json, sys
from arena.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def run_arena_commands_without_root(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """`run_arena_without_root` of each command, all in one process (one start, not one a command)."""
    finished = run_arena_without_root_argv(["-c", EACH_COMMAND, json.dumps(commands)])
    assert finished.returncode == 0, finished.stderr
    return [
        subprocess.CompletedProcess(command, code, out, err)
        for command, (code, out, err) in zip(commands, json.loads(finished.stdout), strict=True)
    ]


def ladder_file(path: Path) -> Path:
    """A ladder file with two bots (one on probation, with escapes in its reason) and one stored match,
    of a set that is over (void)."""
    record_path = path.with_suffix(".json")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["play", "--seed", "3", "--save", str(record_path)]) == 0
    store = LadderStore(path)
    store.registry.add_bot("alpha", address="127.0.0.1:1")
    store.registry.add_bot("beta", address="127.0.0.1:2")
    duplicate = store.sets.create_set(4, "pairs", None, 3, ["alpha", "beta"], isolated=False)
    record = json.loads(record_path.read_text())
    save_match(store, "m1", duplicate, 0, "one_team_left", [1, 2], [], record, 10, 0.5)
    store.sets.void_set(duplicate.id, "over, so that its record is given")
    store.registry.set_probation("beta", "\x1b[2Jcrashed\nforged line")
    store.close()
    return path


def folder_listing(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


WRITE_COMMANDS = [
    ["bots", "add", "gamma", "127.0.0.1:3", "--no-check"],
    ["bots", "update", "alpha", "127.0.0.1:4", "--no-check"],
    ["bots", "remove", "alpha"],
    ["bots", "probation", "alpha", "--reason", "why"],
    ["ladder", "run", "--matches", "2"],
]
READ_COMMANDS = [
    (["bots", "list"], "alpha"),
    (["ladder", "show"], "beta is on probation: \\x1b[2Jcrashed\\nforged line"),
    (["ladder", "matches"], "m1"),
    (["ladder", "record", "m1"], '"fiftysix-game-record"'),
]


def with_db(command: list[str], db: Path) -> list[str]:
    return [command[0], "--db", str(db), *command[1:]]


@pytest.mark.parametrize("folder_writable", [True, False], ids=["file read-only", "folder read-only too"])
def test_a_read_only_ladder_file_is_read_and_never_written(tmp_path: Path, folder_writable: bool) -> None:
    """Writes said 'attempt to write a readonly database' in a traceback; reads failed too."""
    folder = tmp_path / "ladder"
    folder.mkdir()
    db = ladder_file(folder / "ladder.db")
    before = folder_listing(folder)
    db.chmod(0o444)
    if not folder_writable:
        folder.chmod(0o555)
    try:
        commands = [with_db(command, db) for command, _ in READ_COMMANDS]
        commands += [with_db(command, db) for command in WRITE_COMMANDS]
        results = run_arena_commands_without_root(commands)
        for (_, expected), finished in zip(READ_COMMANDS, results, strict=False):
            assert finished.returncode == 0, finished.stderr
            assert expected in finished.stdout
            assert "\x1b" not in finished.stdout
        for finished in results[len(READ_COMMANDS) :]:
            assert finished.returncode == 1
            line = one_line_error(finished.stderr)
            assert f"{db} is read-only (no permission to write" in line
            assert "this command changes it" in line
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    assert folder_listing(folder) == before


DB_ACTIONS = [
    ["ladder", "run"],
    ["ladder", "show"],
    ["ladder", "matches"],
    ["ladder", "record", "m1"],
    ["bots", "add", "gamma", "127.0.0.1:3"],
    ["bots", "update", "alpha", "127.0.0.1:3"],
    ["bots", "remove", "alpha"],
    ["bots", "probation", "alpha", "--clear"],
    ["bots", "list"],
]


@pytest.mark.parametrize("command", DB_ACTIONS, ids=" ".join)
def test_db_goes_before_or_after_the_action_and_wins_over_the_default(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena ladder run --db X` said 'unrecognized arguments'."""

    def db_of(argv: list[str]) -> str:
        value: str = build_parser().parse_args(argv).db
        return value

    group, action = command[:1], command[1:]
    monkeypatch.setenv("ARENA_DB", "from-environment.db")
    assert db_of(command) == "from-environment.db"
    assert db_of([*group, "--db", "before.db", *action]) == "before.db"
    assert db_of([*command, "--db", "after.db"]) == "after.db"
    assert db_of([*group, "--db", "before.db", *action, "--db", "after.db"]) == "after.db"
    monkeypatch.delenv("ARENA_DB")
    assert db_of(command) == "arena.db"
    assert db_of([*command, "--db", "after.db"]) == "after.db"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["ladder", "show"], "beta is on probation"),
        (["bots", "list"], "alpha"),
        (["bots", "add", "gamma", "127.0.0.1:3", "--no-check"], "Registered gamma: 127.0.0.1:3"),
    ],
)
def test_a_command_with_db_after_the_action_uses_that_file(
    command: list[str],
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = ladder_file(tmp_path / "ladder.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    assert main([*command, "--db", str(db)]) == 0
    assert expected in capsys.readouterr().out
    assert not (tmp_path / "arena.db").exists()
    if command[1] == "add":
        store = LadderStore(db)
        assert "gamma" in {bot.name for bot in store.registry.bots()}
        store.close()


def test_ladder_run_with_db_after_the_action_uses_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE bots (id INTEGER PRIMARY KEY, nickname TEXT)")
    connection.commit()
    connection.close()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    assert main(["ladder", "run", "--matches", "2", "--db", str(other)]) == 1
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"arena ladder run: error: {other} is not a ladder database")
    assert not (tmp_path / "arena.db").exists()


def damaged_ladder_file(path: Path) -> Path:
    """A ladder file whose last half is garbage: page 1 (the schema) is intact, so it opens, and every
    table has rows in the damaged half, so 'database disk image is malformed' comes from a query."""
    store = LadderStore(path)
    padding = "x" * 300
    for number in range(120):
        name = f"bot-{number:04}"
        store.registry.add_bot(name, command=f"run --port {{port}} {padding}")
        duplicate = store.sets.create_set(4, "pairs", None, number, [name, "bot-0000"], isolated=False)
        save_match(store, f"m{number:04}", duplicate, 0, padding, [1, 2], [], {"padding": padding}, 1, 0.1)
    store.close()
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:] = bytes(range(256)) * ((len(data) - middle) // 256 + 1)
    path.write_bytes(bytes(data[: len(path.read_bytes())]))
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["bots", "list"],
        ["ladder", "show"],
        ["ladder", "matches"],
        ["ladder", "record", "m0119"],
        ["ladder", "run", "--sample-bots"],
        ["bots", "add", "gamma", "127.0.0.1:3", "--no-check"],
        ["bots", "update", "bot-0119", "127.0.0.1:4", "--no-check"],
        ["bots", "remove", "bot-0119"],
        ["bots", "probation", "bot-0119", "--reason", "why"],
    ],
)
def test_a_ladder_file_damaged_late_gives_one_error_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = damaged_ladder_file(tmp_path / "ladder.db")
    finished = run_here(capsys, *with_db(command, db))
    assert finished.returncode == 1
    assert f"{db} is damaged or not a ladder database (database disk image is malformed)" in one_line_error(
        finished.stderr
    )


@pytest.mark.parametrize("command", [command for command, _ in READ_COMMANDS] + WRITE_COMMANDS)
def test_another_programs_database_gives_one_error_line_and_is_not_changed(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "other.db"
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE bots (id INTEGER PRIMARY KEY, nickname TEXT)")
    connection.commit()
    connection.close()
    before = folder_listing(tmp_path)
    finished = run_here(capsys, *with_db(command, db))
    assert finished.returncode == 1
    assert f"{db} is not a ladder database (it holds other tables: bots)" in one_line_error(finished.stderr)
    assert folder_listing(tmp_path) == before


def test_a_bad_db_path_gives_one_error_line(tmp_path: Path) -> None:
    unreadable = tmp_path / "secret.db"
    unreadable.write_bytes(b"")
    unreadable.chmod(0o000)
    cases = [
        (tmp_path, "is a directory, not a ladder database file"),
        (tmp_path / "missing" / "ladder.db", f"the folder {tmp_path / 'missing'} does not exist"),
        (unreadable, f"cannot read {unreadable}: permission denied"),
    ]
    for db, message in cases:
        finished = run_arena_without_root("ladder", "--db", str(db), "show")
        assert finished.returncode == 1
        assert message in one_line_error(finished.stderr)
    assert not (tmp_path / "missing").exists()


def test_save_and_export_to_a_missing_folder_are_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "match.json"
    played = run_arena("play", "--save", str(missing))
    assert played.returncode == 1
    assert f"cannot save to {missing}: the folder" in one_line_error(played.stderr)
    assert played.stdout == ""  # refused before playing: no match is played and then thrown away
    db = ladder_file(tmp_path / "ladder.db")
    exported = run_arena("ladder", "--db", str(db), "record", "m1", "-o", str(missing))
    assert exported.returncode == 1
    assert f"cannot write {missing}" in one_line_error(exported.stderr)


# One error family: an ArenaError anywhere in a command is one line, at one place, with its exit status.


@pytest.mark.parametrize(
    ("error", "status"),
    [(ArenaError, 1), (UsageError, 2), (StoreError, 1), (LadderError, 1), (BotStartError, 1)],
)
def test_an_arena_error_deep_in_a_command_is_one_line_with_its_status(
    error: type[ArenaError],
    status: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def fails(self: BrowseStore, bot: str | None, pool: str | None, offset: int, limit: int) -> None:
        raise error("the disk \x1b[2Jis\nfull")

    db = ladder_file(tmp_path / "ladder.db")
    monkeypatch.setattr(BrowseStore, "match_page", fails)
    assert main(["ladder", "--db", str(db), "matches"]) == status
    captured = capsys.readouterr()
    assert one_line_error(captured.err) == "arena ladder matches: error: the disk \\x1b[2Jis\\nfull"
    assert captured.out == ""


# Our own bugs and Ctrl-C.


def test_an_internal_error_is_one_line_with_the_traceback_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(replay_command, "replay_file", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["replay", "x.json"]) == 1
    line = one_line_error(capsys.readouterr().err)
    [crash] = tmp_path.glob("arena-crash-*.txt")
    assert line == (
        f"arena: error: internal error (RuntimeError: a bug of ours); the traceback is in {crash}; "
        "please report it"
    )
    text = crash.read_text()
    assert text.startswith("arena replay x.json\n")
    assert "Traceback" in text
    assert 'raise RuntimeError("a bug of ours")' in text


def test_ctrl_c_exits_130_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(play_command, "play", interrupted)
    assert main(["play"]) == 130
    assert capsys.readouterr().err == ""


def test_a_closed_output_stops_quietly_with_141() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--players", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.close()  # the reader goes away before the first line
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 141
    assert stderr == ""


class Terminal(io.StringIO):
    """Standard error as a terminal: the progress line is redrawn in place, without a newline."""

    def isatty(self) -> bool:
        return True


def test_a_stopped_ladder_run_ends_the_progress_line_before_its_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class StoppingLadder(Ladder):
        async def run(self) -> LadderReport:
            assert self.player.on_match is not None
            self.player.on_match(types.SimpleNamespace(faults=[]), self.report)  # type: ignore[arg-type]
            raise LadderError("the ladder stopped: the disk is full")

    db = ladder_file(tmp_path / "ladder.db")
    store = LadderStore(db)
    store.registry.set_probation("beta", None)
    store.close()
    monkeypatch.setattr(ladder_command, "Ladder", StoppingLadder)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["ladder", "--db", str(db), "run", "--matches", "2"]) == 1
    lines = terminal.getvalue().splitlines()
    assert "1/2 matches" in lines[-2]
    assert lines[-1] == "arena ladder run: error: the ladder stopped: the disk is full"


def test_grpc_s_own_log_is_silenced_unless_asked_for() -> None:
    """gRPC's C-core log prints bot-chosen text (an HTTP/2 GOAWAY's debug data) raw; the command turns it
    off before gRPC loads, and a user who sets GRPC_VERBOSITY keeps it."""
    code = "import os, arena.cli, grpc; print(os.environ['GRPC_VERBOSITY'])"
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert quiet.stdout.strip() == "NONE"
    environment = {**os.environ, "GRPC_VERBOSITY": "DEBUG"}
    asked = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment
    )
    assert asked.stdout.strip() == "DEBUG"


@pytest.mark.parametrize(
    "args",
    [
        ["match", "--bot", "a=x\ny:1", "--bot", "b=127.0.0.1:1"],
        ["check-bot", "\x1b]0;pwn\x07:1"],
        ["bots", "add", "ok", "\x1b[2J:1", "--no-check"],
    ],
    ids=["newline in a match host", "escape in a check-bot host", "escape in a registered host"],
)
def test_a_host_with_control_characters_is_refused_in_one_escaped_line(
    tmp_path: Path, args: list[str]
) -> None:
    finished = run_arena(*args, "--db", str(tmp_path / "x.db")) if args[0] == "bots" else run_arena(*args)
    assert finished.returncode == 2, finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "control characters" in lines[0]
    assert "\x1b" not in finished.stderr
    assert finished.stdout == ""


@pytest.mark.parametrize("action", [["ladder", "show"], ["ladder", "matches"], ["bots", "list"]])
def test_a_read_command_never_creates_a_ladder_file(tmp_path: Path, action: list[str]) -> None:
    path = tmp_path / "typo.db"
    finished = run_arena(*action, "--db", str(path))
    assert finished.returncode == 1
    assert finished.stderr.startswith(f"arena {' '.join(action)}: error: no ladder at {path}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["20000-20010", "80-80"])
def test_a_port_range_is_lo_hi(text: str) -> None:
    args = build_parser().parse_args(["ladder", "run", "--port-range", text])
    low, high = (int(part) for part in text.split("-"))
    assert args.port_range == (low, high)


@pytest.mark.parametrize("text", ["20010-20000", "0-10", "1-65536", "20000", "a-b", "1" * 5000 + "-2"])
def test_a_bad_port_range_is_one_line(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = parse_error(["ladder", "run", f"--port-range={text}"], capsys)
    assert "expected LO-HI, ports from 1 to 65535 with LO <= HI" in line


def test_the_host_side_options_reach_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Ladder] = []

    class CapturedLadder(Ladder):
        async def run(self) -> LadderReport:
            seen.append(self)
            return self.report

    db = ladder_file(tmp_path / "ladder.db")
    store = LadderStore(db)
    store.registry.set_probation("beta", None)
    store.close()
    monkeypatch.setattr(ladder_command, "Ladder", CapturedLadder)
    flags = ["--check-timeout", "2s", "--retry", "2h", "--down-after", "7", "--down-recheck", "90s"]
    assert main(["ladder", "--db", str(db), "run", "--matches", "2", *flags, "--idle-bots", "0"]) == 0
    [ladder] = seen
    settings = ladder.settings
    assert (settings.check_timeout_s, settings.retry_s, settings.down_after) == (2.0, 7200.0, 7)
    assert (settings.down_recheck_s, settings.retry_max_s) == (90.0, 7200.0)
    assert ladder.player.local_bots.idle_limit == 0
    assert main(["ladder", "--db", str(db), "run", "--matches", "2", "--concurrency", "3"]) == 0
    defaults = seen[1]
    assert (defaults.settings.check_timeout_s, defaults.settings.retry_s) == (5.0, 30.0)
    assert (defaults.settings.down_after, defaults.settings.retry_max_s) == (3, 3600.0)
    assert defaults.player.local_bots.idle_limit == 3 * 4


@pytest.mark.parametrize(
    ("given", "pool"),
    [
        ("4p-pairs", "4p-pairs"),
        ("06p-partnership", "6p-partnership"),
        ("8p-pairs@rr-1.b_c", "8p-pairs@rr-1.b_c"),
    ],
)
def test_a_pool_is_a_format_perhaps_of_an_event(given: str, pool: str) -> None:
    assert listings.check_pool(given) == pool


@pytest.mark.parametrize("given", ["5p-pairs", "4p-bridge", "4p-pairs@", "4p-pairs@a b", "pairs"])
def test_a_pool_that_is_no_format_is_refused(given: str) -> None:
    with pytest.raises(ArenaError, match="no pool"):
        listings.check_pool(given)


def test_a_bots_owner_is_set_changed_cleared_and_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ladder.db")

    def bots(*args: str) -> str:
        assert main(["bots", "--db", db, *args]) == 0
        return capsys.readouterr().out

    assert "owner ann" in bots("add", "alpha", "127.0.0.1:1", "--owner", "ann", "--no-check")
    bots("add", "beta", "127.0.0.1:2", "--no-check")
    listed = {bot["name"]: bot["owner"] for bot in json.loads(bots("list", "--json"))}
    assert listed == {"alpha": "ann", "beta": None}
    text = bots("list")
    assert "owner: ann" in next(line for line in text.splitlines() if line.startswith("alpha"))
    assert "owner" not in next(line for line in text.splitlines() if line.startswith("beta"))
    # The owner alone: the bot's address stays, and it is not checked again (nothing listens there).
    assert bots("update", "beta", "--owner", "ann").strip() == "Updated beta: owner ann"
    assert bots("update", "alpha", "127.0.0.1:3", "--no-check").strip().endswith("owner ann")  # kept
    assert bots("update", "alpha", "--no-owner").strip() == "Updated alpha: no owner"
    assert bots("update", "beta", "127.0.0.1:4", "--owner", "bob", "--no-check").strip().endswith("bob")
    store = LadderStore(db)
    try:
        assert [(bot.name, bot.address, bot.owner) for bot in store.registry.bots()] == [
            ("alpha", "127.0.0.1:3", None),
            ("beta", "127.0.0.1:4", "bob"),
        ]
        assert [entry.action for entry in store.access.audit_log(3)] == [
            "bot_owner_set",
            "bot_updated",
            "bot_owner_set",
        ]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["update", "alpha", "--owner", ""], r"an owner is 1-64 letters.*got '' \(--no-owner clears it\)"),
        (["add", "gamma", "127.0.0.1:1", "--owner", "two words"], "an owner is 1-64 letters"),
        (["update", "alpha", "--owner", "ann", "--no-owner"], "not allowed with argument"),
        (["add", "gamma", "127.0.0.1:1", "--no-owner"], "unrecognized arguments: --no-owner"),
        (["update", "alpha"], "or for `update` --owner NAME / --no-owner alone"),
    ],
)
def test_a_bad_owner_option_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    db = str(tmp_path / "ladder.db")
    assert main(["bots", "--db", db, "add", "alpha", "127.0.0.1:1", "--no-check"]) == 0
    capsys.readouterr()
    try:
        status = main(["bots", "--db", db, *args])  # an error of the action's own
    except SystemExit as exited:  # argparse's
        status = exited.code  # type: ignore[assignment]
    assert status == 2
    assert re.search(message, one_line_error(capsys.readouterr().err))
