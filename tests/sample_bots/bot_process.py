"""A sample bot run as a process of its own (the JavaScript, C++ and Go bots), as their tests see it."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

START_TIMEOUT_S: Final = 15.0


@dataclass
class BotProcess:
    """A running bot process, its port, everything it wrote to stderr, and the events it logs when
    something goes wrong on its side."""

    process: subprocess.Popen[str]
    port: int
    error_events: tuple[str, ...]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def logged(self, event: str, timeout: float = 5.0) -> list[str]:
        """The lines that log `event`, once there is one (its stderr is read by a thread, so a line the
        bot wrote may not be read yet); fails after `timeout` seconds without one."""
        deadline = time.monotonic() + timeout
        while not (found := [line for line in list(self.lines) if f'"{event}"' in line]):
            assert time.monotonic() < deadline, f"the bot did not log {event} within {timeout} s"
            time.sleep(0.01)
        return found

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, as the arena stops a bot; its exit status once its stderr is read to the end, so
        `lines` holds all it wrote (killed, and the wait's error raised, if it outlives `timeout`)."""
        self.process.terminate()
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
            raise
        if self.reader is not None:
            self.reader.join(timeout)
        return status

    def errors(self) -> list[str]:
        """The error events the bot logged so far."""
        return [line for line in list(self.lines) if any(f'"{event}"' in line for event in self.error_events)]


def drain(stream: Iterable[str], lines: list[str]) -> None:
    """Read a bot's stderr to the end, so its pipe never fills."""
    for line in stream:
        lines.append(line)


def start_with_port_file(command: list[str], port_file: Path, error_events: tuple[str, ...]) -> BotProcess:
    """Start a bot that binds port 0 and writes the port it bound to `port_file` (`--port-file`, as the
    arena starts a command bot), and read it as the arena does; killed, with its stderr in the error, when
    it exits or writes nothing within START_TIMEOUT_S."""
    process = subprocess.Popen(
        [*command, "--port", "0", "--port-file", str(port_file)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=drain, args=(process.stderr, lines), daemon=True)
    reader.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not port_file.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            process.wait(10)
            raise AssertionError(f"{command[0]} did not start; its stderr:\n{''.join(lines)}")
        time.sleep(0.01)
    return BotProcess(process, int(port_file.read_text().strip()), error_events, lines, reader)
