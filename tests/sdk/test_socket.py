"""`start(..., socket=...)` and `--socket`: a bot listens on a Unix-domain socket (how a sandboxed bot,
which has no network, is reached), and the arena plays it at a `unix:` address."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.ladder.bots import wait_until_ready
from arena.runner import check_address
from sample_bots.random_bot import RandomBot
from sdk import start


def test_a_bot_started_on_a_socket_answers_the_handshake(tmp_path: Path) -> None:
    socket = tmp_path / "bot.sock"
    server = start(RandomBot, socket=socket)
    try:
        assert socket.is_socket()
        described = asyncio.run(wait_until_ready(f"unix:{socket}", timeout=10.0))
        assert described.name == "random"
    finally:
        server.stop(0)


def test_a_sample_bot_takes_the_socket_option(tmp_path: Path) -> None:
    socket = tmp_path / "bot.sock"
    command = [sys.executable, "-m", "sample_bots.random_bot", "--socket", str(socket)]
    bot = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not socket.exists():
            assert bot.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert asyncio.run(wait_until_ready(f"unix:{socket}", timeout=10.0)).name == "random"
    finally:
        bot.terminate()
        bot.wait()


@pytest.mark.parametrize("address", ["unix:/run/arena/bot.sock", "unix:relative.sock", "127.0.0.1:50051"])
def test_addresses_taken(address: str) -> None:
    check_address(address)


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("unix:", "1 to 107 bytes"),
        ("unix:/" + "x" * 107, "1 to 107 bytes"),
        ("unix:/tmp/a b.sock", "no spaces"),
        ("unix:/tmp/a\x1b.sock", "no spaces"),
    ],
)
def test_addresses_refused(address: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_address(address)
