"""A sample bot run as a process of its own (the JavaScript and C++ bots), as their tests see it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field


@dataclass
class BotProcess:
    """A running bot process, its port, everything it wrote to stderr, and the events it logs when
    something goes wrong on its side."""

    process: subprocess.Popen[str]
    port: int
    error_events: tuple[str, ...]
    lines: list[str] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def errors(self) -> list[str]:
        """The error events the bot logged so far."""
        return [line for line in list(self.lines) if any(f'"{event}"' in line for event in self.error_events)]
