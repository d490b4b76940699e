"""A progress line for long runs: matches done, rate and time left.

The total may grow as the run goes (a ladder run plays whole sets, so it may play more matches than
asked); a run bounded by time alone shows the time left instead of a total.

On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) a plain line is printed every
few matches, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


class Progress:
    """Counts finished matches toward `total` (None when the run goes on until stopped or out of
    time), for at most `duration_s` seconds (None: no limit)."""

    def __init__(
        self,
        total: int | None,
        stream: TextIO | None = None,
        width: int = 24,
        duration_s: float | None = None,
    ) -> None:
        self.total = total
        self.duration_s = duration_s
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.done = 0
        self.faults = 0
        self.started = time.monotonic()
        self.interactive = self.stream.isatty()
        self._last_plain = 0.0

    def line(self) -> str:
        """The progress line as it stands."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed * 60 if elapsed > 0 else 0.0
        parts = []
        if self.total:
            filled = min(self.width, self.width * self.done // self.total)
            parts.append("[" + "#" * filled + "-" * (self.width - filled) + "]")
            parts.append(f"{self.done}/{self.total} matches")
        else:
            parts.append(f"{self.done} matches")
        parts.append(f"{rate:.1f}/min")
        left: float | None = None
        if self.total and self.done:
            left = max(0, self.total - self.done) * elapsed / self.done
        if self.duration_s is not None:
            time_left = self.duration_s - elapsed
            if time_left <= 0:
                left = None
                parts.append("time is up, finishing the sets in play")
            else:
                left = time_left if left is None else min(left, time_left)
        if left is not None:
            parts.append(f"{_clock(left)} left")
        parts.append(f"{_clock(elapsed)} elapsed")
        if self.faults:
            parts.append(f"{self.faults} faults")
        return "  ".join(parts)

    def advance(self, faults: int = 0, total: int | None = None) -> None:
        """One more match finished (with that many faults); `total`, when given, is the new total."""
        self.done += 1
        if total is not None:
            self.total = total
        self.faults += faults
        if self.interactive:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        elif time.monotonic() - self._last_plain >= 5 or self.done == self.total:
            self._last_plain = time.monotonic()
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the line."""
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()
