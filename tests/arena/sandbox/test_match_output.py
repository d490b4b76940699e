"""The supervisor's cap on a bot's output per match: past the cap the output is dropped and the count
noted; each match begins a new count (the arena writes a line `match N` on the supervisor's pipe), and
what is kept of match N, from `match N` to `end N`, is also in the match file, the rest counted. As a
process: at `end N` it reads what the bot wrote before, late output stays out of every match, and a bot
that dies in a match has that match answered."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from arena.ladder.bots.processes import SUPERVISOR
from arena.ladder.bots.supervisor import CappedLog, MatchOutput

BOT = """
import os, sys, time
folder = sys.argv[1]
def wait(name):
    while not os.path.exists(os.path.join(folder, name)):
        time.sleep(0.005)
def say(data, name):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    open(os.path.join(folder, name), "w").close()
wait("go-1"); say(b"in match one\\n", "said-1")
wait("go-late"); say(b"late\\n", "said-late")
wait("go-2"); say(b"x" * 3000, "said-2")
sys.exit(3)
"""
"""A bot that writes when the test says (a file `go-STEP`) and says when it has (`said-STEP`)."""


def test_output_past_the_cap_of_a_match_is_dropped_and_counted(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bot.log", 1024 * 1024)
    output = MatchOutput(log, limit=10, match_path=tmp_path / "bot.match")
    output.write(b"started\n")  # before any match: the log's, not a match's
    output.begin("1")
    output.write(b"12345678")
    output.write(b"90abcdef")  # 6 bytes past the cap
    output.write(b"ghij")
    assert output.end("1") == 10
    assert (tmp_path / "bot.match").read_bytes() == b"1234567890"
    output.write(b"late")  # after the match: the log's (within the count of the match it follows)
    output.begin("2")
    assert (tmp_path / "bot.match").read_bytes() == b""
    output.write(b"second\n")
    assert output.end("1") is None  # not the match in play
    assert output.end("2") == 0
    output.close()
    log.close()
    assert (tmp_path / "bot.match").read_bytes() == b"second\n"
    text = (tmp_path / "bot.log").read_text()
    assert text == (
        "started\n"
        "1234567890\n"
        "[arena] output past 10 bytes in this match: the rest is dropped\n"
        "[arena] 14 bytes of output dropped (past 10 bytes in a match)\n"
        "second\n"
    )


def test_without_a_cap_everything_reaches_the_log(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bot.log", 1024 * 1024)
    output = MatchOutput(log, limit=None)
    output.write(b"x" * 5000)
    output.begin("1")
    output.close()
    log.close()
    assert (tmp_path / "bot.log").read_bytes() == b"x" * 5000


def _wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.005)


def _tell(pipe: IO[bytes] | None, line: bytes) -> None:
    assert pipe is not None
    pipe.write(line)
    pipe.flush()


def test_the_supervisor_keeps_each_match_and_answers_its_end(tmp_path: Path) -> None:
    kept, log = tmp_path / "bot.match", tmp_path / "bot.log"
    options = ["--match-output=1024", f"--match-file={kept}", str(os.getpid()), str(log), "65536", "1"]
    bot = [sys.executable, "-c", BOT, str(tmp_path)]
    supervisor = subprocess.Popen(
        [sys.executable, "-I", str(SUPERVISOR), *options, *bot],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert supervisor.stdout is not None
    try:
        _tell(supervisor.stdin, b"match 1\n")
        (tmp_path / "go-1").touch()
        _wait_for(tmp_path / "said-1")
        _tell(supervisor.stdin, b"end 1\n")  # the bot's line may still be in the pipe: read before answering
        assert supervisor.stdout.readline() == b"ended 1 0\n"
        assert kept.read_bytes() == b"in match one\n"
        _tell(supervisor.stdin, b"end 7\n")
        assert supervisor.stdout.readline() == b"unknown 7\n"
        (tmp_path / "go-late").touch()
        while b"late\n" not in log.read_bytes():  # read by the supervisor, between matches
            time.sleep(0.005)
        _tell(supervisor.stdin, b"match 2\n")
        (tmp_path / "go-2").touch()  # 3000 bytes, then the bot exits during the match
        assert supervisor.stdout.readline() == b"ended 2 1976\n"
        assert supervisor.wait(timeout=30) == 3
        assert kept.read_bytes() == b"x" * 1024
        assert b"late\n" in log.read_bytes()
    finally:
        supervisor.kill()
        supervisor.wait()
