"""The check a registration of a bot the arena starts goes through (`arena bots add --command`, real
processes, a real ladder file): the compliance check's items but the whole matches past the first, the
report kept passed or refused and read back with `arena bots checks`; a bot that dies inside Describe is
said to have crashed, with the first lines of its output, and one at an address is said to have closed the
connection."""

from __future__ import annotations

import json
from pathlib import Path

import describe_crash_bot
import pytest

from arena.check.situations import ITEM_NAMES, MATCH_ITEMS
from arena.cli import main

RULE_BOT = "python -m sample_bots.rule_bot --port 0 --port-file {port_file}"
CRASHED = "closed the connection during Describe: did it crash?"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_started_bot_is_registered_once_it_passes_and_each_check_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "arena.db")
    status, out, err = run(capsys, "bots", "add", "good", "--command", RULE_BOT, "--db", db)
    assert status == 0, err
    assert out.strip().endswith("checked: 12 passed, 0 failed, 5 skipped (check 1)")
    status, out, _ = run(capsys, "bots", "checks", "good", "--json", "--db", db)
    [kept] = json.loads(out)
    assert (kept["id"], kept["ok"], kept["version"], kept["owner"]) == (1, True, None, "host:command-line")
    verdicts = {item["name"]: item["status"] for item in kept["items"]}
    assert list(verdicts) == list(ITEM_NAMES)  # every item of arena check-bot...
    assert [verdicts[name] for name in MATCH_ITEMS] == ["PASS"] + ["SKIP"] * 5  # ...but one whole match
    assert "not played" in kept["items"][3]["reason"]

    status, out, err = run(
        capsys, "bots", "add", "crash", "--command", describe_crash_bot.COMMAND, "--db", db
    )
    assert status == 1
    [failed] = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert failed.startswith("FAIL  handshake: bot 'crash' did not start: the bot at 127.0.0.1:")
    assert CRASHED in failed
    assert "its output: describe_crash_bot: serving at 127.0.0.1:" in failed
    assert describe_crash_bot.LAST_WORDS in failed
    assert str(tmp_path) not in failed
    assert err == (
        "arena bots add: error: crash failed the check, so nothing was registered (its report is check 2: "
        "arena bots checks crash --id 2; use --no-check to register anyway)\n"
    )
    status, out, _ = run(capsys, "bots", "list", "--json", "--db", db)
    assert [bot["name"] for bot in json.loads(out)] == ["good"]
    status, out, err = run(
        capsys, "bots", "update", "good", "--command", RULE_BOT, "--quick-check", "--db", db
    )
    assert status == 0, err
    assert out.strip().endswith("checked: 2 passed, 0 failed (check 3)")  # the handshake and health alone
    status, out, _ = run(capsys, "bots", "checks", "crash", "--id", "2", "--db", db)
    assert status == 0
    assert out.splitlines()[:2] == ["Check 2 of crash (refused), by host:command-line:", failed]
    status, _, err = run(capsys, "bots", "checks", "good", "--id", "2", "--db", db)
    assert (status, err) == (1, "arena bots checks: error: check 2 is not one of good's\n")


def test_a_bot_at_an_address_that_dies_inside_describe_closed_the_connection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    process, address = describe_crash_bot.spawn(tmp_path)
    try:
        status, _, err = run(capsys, "bots", "add", "remote", address, "--db", str(tmp_path / "arena.db"))
    finally:
        process.kill()
        process.wait()
    assert status == 1
    assert err.startswith(f"arena bots add: error: cannot reach 'remote' at {address}: the bot at {address} ")
    assert CRASHED in err
