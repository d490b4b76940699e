"""`start(..., port_file=...)` and `--port-file`: a bot on port 0 tells its host the port it got."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from sample_bots.random_bot import RandomBot
from sdk import start


def test_start_writes_the_bound_port_to_the_port_file(tmp_path: Path) -> None:
    port_file = tmp_path / "bot.port"
    server = start(RandomBot, port=0, port_file=port_file)
    try:
        assert int(port_file.read_text()) == server.port > 0
        assert [path.name for path in tmp_path.iterdir()] == ["bot.port"]  # no partial file left
    finally:
        server.stop(0)


def test_a_sample_bot_on_port_0_writes_its_port_file(tmp_path: Path) -> None:
    port_file = tmp_path / "bot.port"
    command = [sys.executable, "-m", "sample_bots.random_bot", "--port", "0", "--port-file", str(port_file)]
    bot = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert bot.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert 0 < int(port_file.read_text()) < 65536
    finally:
        bot.terminate()
        bot.wait()
