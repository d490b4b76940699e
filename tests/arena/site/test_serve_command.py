"""`arena serve` as a command: its errors are one line, and it serves until Ctrl-C."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from arena.cli import main
from arena.ladder.store import LadderStore
from arena.ladder.store.live import event_text


def ladder_file(tmp_path: Path) -> Path:
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("solo", address="127.0.0.1:1")
    store.close()
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_no_ladder_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--db", str(tmp_path / "none.db")]) == 1
    error = capsys.readouterr().err
    assert error.startswith("arena serve: error: no ladder at ")
    assert error.count("\n") == 1


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--db", str(ladder_file(tmp_path)), "--port", str(port)]) == 1
    assert (
        capsys.readouterr().err
        == f"arena serve: error: cannot listen on 127.0.0.1:{port}: the port is in use\n"
    )


def test_an_unknown_host_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--db", str(ladder_file(tmp_path)), "--host", "no such host.invalid"]) == 1
    assert capsys.readouterr().err.startswith("arena serve: error: cannot listen on no such host.invalid")


def test_it_serves_until_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--db", str(ladder_file(tmp_path)), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/standings", timeout=2) as answer:
                    standings = json.load(answer)
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the site did not answer"
                time.sleep(0.1)
        assert [line["bot"] for line in standings["standings"]] == ["solo"]
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130  # interrupted, as every command stopped by Ctrl-C
    assert "Traceback" not in err
    assert f"at http://127.0.0.1:{port}/" in out


def test_it_serves_the_live_streams_it_is_told_to(tmp_path: Path) -> None:
    """--max-streams reaches the site: one stream opens, the next is refused with a one-line reason."""
    path = ladder_file(tmp_path)
    store = LadderStore(path)
    store.live.add_live_events(
        "m1", [(0, time.time(), event_text({"type": "card", "deal": 1, "seat": 0, "card": "JS"}))]
    )
    store.close()
    port = free_port()
    command = ["serve", "--db", str(path), "--port", str(port), "--max-streams", "1"]
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *command], stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/api/live/m1/events"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                first = urllib.request.urlopen(url, timeout=5)
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the site did not answer"
                time.sleep(0.1)
        with first:
            assert first.readline() == b"id: 0\n"
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url, timeout=5)
        assert refused.value.code == 503
        assert refused.value.headers["Retry-After"] == "30"
        assert json.load(refused.value) == {
            "error": "every place for a live stream is taken (1 at once); try again soon"
        }
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)


def test_the_command_lines_writes_are_audited_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(ladder_file(tmp_path))
    assert main(["bots", "probation", "--db", db, "solo", "--reason", "testing"]) == 0
    assert main(["bots", "probation", "--db", db, "solo", "--clear"]) == 0
    assert main(["bots", "remove", "--db", db, "solo"]) == 0
    capsys.readouterr()
    assert main(["tokens", "audit", "--db", db, "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert [(entry["actor"], entry["action"], entry["detail"]) for entry in reversed(audit)] == [
        ("host:command-line", "probation_set", "testing"),
        ("host:command-line", "probation_cleared", ""),
        ("host:command-line", "bot_removed", ""),
    ]
