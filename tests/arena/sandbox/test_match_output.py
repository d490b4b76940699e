"""The supervisor's cap on a sandboxed bot's output per match: past the cap the output is dropped and the
count noted; each match begins a new count (the arena writes a line `match` on the supervisor's pipe)."""

from __future__ import annotations

from pathlib import Path

from arena.ladder.bots.supervisor import CappedLog, MatchOutput


def test_output_past_the_cap_of_a_match_is_dropped_and_counted(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bot.log", 1024 * 1024)
    output = MatchOutput(log, limit=10)
    output.write(b"12345678")
    output.write(b"90abcdef")  # 6 bytes past the cap
    output.write(b"ghij")
    output.next_match()
    output.write(b"second\n")
    output.close()
    log.close()
    text = (tmp_path / "bot.log").read_text()
    assert text == (
        "1234567890\n"
        "[arena] output past 10 bytes in this match: the rest is dropped\n"
        "[arena] 10 bytes of output dropped (past 10 bytes in a match)\n"
        "second\n"
    )


def test_without_a_cap_everything_reaches_the_log(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bot.log", 1024 * 1024)
    output = MatchOutput(log, limit=None)
    output.write(b"x" * 5000)
    output.next_match()
    output.close()
    log.close()
    assert (tmp_path / "bot.log").read_bytes() == b"x" * 5000
