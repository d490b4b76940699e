"""The supervisor of one bot process the arena starts: it makes sure nothing the bot starts outlives it,
and writes the bot's output to a log file of bounded size.

processes.py (beside it) runs it by path as `python -I supervisor.py [--match-output=BYTES]
[--match-file=PATH] [--pass-fd=FD] ARENA_PID LOG_PATH LOG_LIMIT GRACE COMMAND...`, in a session of its
own, with a pipe from the arena on standard input and one to it on standard output. It uses the
standard library alone and nothing of the arena package: it must start fast, run as a plain script, and
never fork with gRPC loaded. On Linux it

- asks for SIGTERM when the arena dies (PR_SET_PDEATHSIG), checks the arena is still its parent (the
  arena may have died before that request), and becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so
  every orphaned descendant of the bot, even one that left the bot's session with setsid, becomes its
  child rather than init's;
- starts the bot in a session and process group of its own, with SIGKILL as the bot's death signal
  (checked the same way), and its standard output and error on a pipe;
- stops when the arena asks (it closes the pipe), when the arena dies (the pipe closes and SIGTERM
  arrives), or when the bot exits: SIGTERM to the bot's group and to every child it has, at most
  GRACE seconds to finish, then SIGKILL to the group and to every child, again and again (orphans keep
  arriving as their parents die) until it has none left, reaping each; then it exits with the bot's
  status (128 + N for a signal N).

Elsewhere it starts and stops the bot's group the same way, with no guarantee for escaped descendants.
The log keeps the first half of LOG_LIMIT bytes and the last half, with a line between saying how many
bytes were dropped; lines starting with `[arena]` are the supervisor's own. The arena writes a line
`match N` on the pipe as the bot's N-th match begins (a process plays one seat of one match at a time)
and `end N` once it is over. With `--match-output`, the bot's output past BYTES in one match (and in the
time after it, until the next begins) is dropped, and noted, before it reaches the log. With
`--match-file=PATH`, what is kept of the output from `match N` to `end N` is also written to PATH
(emptied as each match begins); at `end N` the supervisor first reads whatever the bot wrote before it
(still in the pipe), then answers `ended N DROPPED` on its standard output, DROPPED the bytes of the
match not in the file, so that the arena reads the file whole (`unknown N` when match N is not the one
in play). A bot that exits during a match has its match ended and answered the same way. Output between
`end N` and the next match is late: it reaches the log, not the file. With `--pass-fd` (repeated for
each), the bot's command gets the supervisor's descriptor FD, as FD (bwrap reads the system call filter
from one and writes where its sandbox runs to another); the supervisor closes its own copy once the bot
has started.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Final

PR_SET_PDEATHSIG: Final = 1
PR_SET_CHILD_SUBREAPER: Final = 36
LINUX: Final = sys.platform == "linux"
POLL_SECONDS: Final = 0.05
FLUSH_SECONDS: Final = 1.0
"""How often the kept tail of a log over its cap is written out, so the file stays current."""
READ_BYTES: Final = 65536
DRAIN_READS: Final = 32
"""Reads at most at the end of a match: a pipe holds at most 1 MiB (the most a bot may make it)."""


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


class CappedLog:
    """The bot's output in its log file, appended after what the file already holds: the first
    `limit // 2` bytes, and once more than `limit` came, a line saying how many were dropped and the
    last bytes. A chatty bot cannot fill the disk, and the log still shows how it started and ended."""

    def __init__(self, path: Path, limit: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        self.start = os.lseek(self.fd, 0, os.SEEK_END)
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = 0
        self.after_head = 0
        """Bytes received after the head, kept or not."""
        self.tail = bytearray()
        """The last bytes after the head; up to twice `tail_limit`, so trimming it costs little."""
        self.flushed_at = time.monotonic()
        self.dirty = False
        self.broken = False
        self.line_ended = True

    def write(self, data: bytes) -> None:
        """Log `data`: straight to the file until the cap is reached, then into the kept tail."""
        if self.broken or not data:
            return
        self.line_ended = data.endswith(b"\n")
        room = self.head_limit - self.head
        if room > 0:
            self._write_at(self.start + self.head, data[:room])
            self.head += min(room, len(data))
            data = data[room:]
        if not data:
            return
        at = self.start + self.head + self.after_head
        self.after_head += len(data)
        self.tail += data
        if len(self.tail) > 2 * self.tail_limit:
            del self.tail[: -self.tail_limit]
        if self.after_head <= self.tail_limit:
            self._write_at(at, data)
        else:
            self.dirty = True

    def note(self, text: str) -> None:
        """A line of the supervisor's own."""
        self.write(("" if self.line_ended else "\n").encode() + f"[arena] {text}\n".encode())

    def flush(self) -> None:
        """Rewrite what follows the head: the dropped-bytes line and the kept tail."""
        self.flushed_at = time.monotonic()
        if not self.dirty or self.broken:
            return
        self.dirty = False
        kept = bytes(self.tail[-self.tail_limit :])
        dropped = self.after_head - len(kept)
        text = b"\n[arena] %d bytes of output dropped here\n" % dropped + kept
        self._write_at(self.start + self.head, text)
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, self.start + self.head + len(text))

    def close(self) -> None:
        self.flush()
        os.close(self.fd)

    def _write_at(self, offset: int, data: bytes) -> None:
        # A full disk must not stop the supervisor from cleaning up: the log just stops.
        try:
            view = memoryview(data)
            while view:
                written = os.pwrite(self.fd, view, offset)
                view = view[written:]
                offset += written
        except OSError:
            self.broken = True


class MatchOutput:
    """The bot's output as the log gets it: at most `limit` bytes per match (None: no limit), the rest
    dropped and noted, so that a bot printing without end costs the log nothing past its share; with a
    `match_path`, what is kept of the match in play also goes there, for the arena to store with it."""

    def __init__(self, log: CappedLog, limit: int | None, match_path: Path | None = None) -> None:
        self.log = log
        self.limit = limit
        self.written = 0
        self.dropped = 0
        self.match: str | None = None
        """The number of the match in play (between `match N` and `end N`), None between matches."""
        self.received = 0
        """Bytes the bot wrote during the match in play."""
        self.stored = 0
        """Of them, those in the match file."""
        self.fd: int | None = None
        if match_path is not None:
            self.fd = os.open(match_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)

    def write(self, data: bytes) -> None:
        kept = data if self.limit is None else data[: max(0, self.limit - self.written)]
        self.written += len(kept)
        self.log.write(kept)
        if self.match is not None:
            self.received += len(data)
            self._store(kept)
        if len(kept) < len(data):
            if not self.dropped:
                self.log.note(f"output past {self.limit} bytes in this match: the rest is dropped")
            self.dropped += len(data) - len(kept)

    def _store(self, data: bytes) -> None:
        # A full disk only shortens the file: the bytes missing are counted as dropped.
        if self.fd is None or not data:
            return
        try:
            view = memoryview(data)
            while view:
                written = os.pwrite(self.fd, view, self.stored)
                view = view[written:]
                self.stored += written
        except OSError:
            return

    def begin(self, number: str) -> None:
        """Match `number` begins: a new count, an empty match file."""
        self._note_dropped()
        self.written = 0
        self.match = number
        self.received = self.stored = 0
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)

    def end(self, number: str) -> int | None:
        """Match `number` is over: the bytes of it not in the match file, or None when it is not the
        match in play."""
        if number != self.match:
            return None
        self.match = None
        return self.received - self.stored

    def close(self) -> None:
        self._note_dropped()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _note_dropped(self) -> None:
        if self.dropped:
            self.log.note(f"{self.dropped} bytes of output dropped (past {self.limit} bytes in a match)")
        self.dropped = 0


class Supervisor:
    """One bot process and everything it starts."""

    def __init__(self, arena_pid: int, log: CappedLog, grace: float, output: MatchOutput) -> None:
        self.arena_pid = arena_pid
        self.log = log
        self.output = output
        self.grace = grace
        self.stop_reason: str | None = None
        self.bot_pid = 0
        self.bot_status: int | None = None
        self.output_fd: int | None = None
        """The read end of the bot's output while it is open."""
        self.control = b""
        """What the arena wrote on the pipe after its last whole line."""
        self.selector = selectors.DefaultSelector()
        self.wake_read, wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._stop_on(f"{signal.Signals(signum).name} received"))
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes the loop through the fd
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.selector.register(0, selectors.EVENT_READ, "control")

    def _stop_on(self, reason: str) -> Callable[[int, FrameType | None], None]:
        def handler(_signum: int, _frame: FrameType | None) -> None:
            self.stop_reason = self.stop_reason or reason

        return handler

    def start(self, command: list[str], pass_fds: tuple[int, ...] = ()) -> bool:
        """Start the bot with its output on a pipe to us, and `pass_fds` open in it; False (and a note in the
        log) if it cannot."""
        output_read, output_write = os.pipe()
        supervisor = os.getpid()

        def die_with_supervisor() -> None:
            # Runs in the bot's process before exec: no supervisor, no bot.
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != supervisor:
                os.kill(os.getpid(), signal.SIGKILL)

        try:
            bot = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output_write,
                stderr=output_write,
                start_new_session=True,
                pass_fds=pass_fds,
                preexec_fn=die_with_supervisor if LINUX else None,  # safe: we have no threads
            )
        except (OSError, subprocess.SubprocessError) as error:
            self.log.note(f"cannot start {command[0]}: {error}")
            os.close(output_read)
            return False
        finally:
            os.close(output_write)
            for fd in pass_fds:
                os.close(fd)
        self.bot_pid = bot.pid
        bot.returncode = 0  # reap() collects its status with waitpid: Popen must not reap it too
        os.set_blocking(output_read, False)
        self.selector.register(output_read, selectors.EVENT_READ, "output")
        self.output_fd = output_read
        return True

    def pump(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for output, a request of the arena or a signal, and handle them: the
        arena's lines first, so that output that came with `match N` counts in match N (the arena wrote
        the line before the match's first message to the bot)."""
        ready = self.selector.select(max(0.0, timeout))
        for key, _events in sorted(ready, key=lambda event: event[0].data == "output"):
            fd = int(key.fd)
            if key.data == "wake":
                with contextlib.suppress(BlockingIOError):
                    while os.read(fd, 4096):
                        pass
                continue
            if key.data == "output" and self.output_fd is None:
                continue  # closed by a drain of this same wakeup
            try:
                data = os.read(fd, READ_BYTES)
            except BlockingIOError:
                continue
            if key.data == "output":
                self._output(data)
            elif not data:  # the arena closed its end of the pipe: it asks us to stop, or it died
                self.selector.unregister(fd)
                self.stop_reason = self.stop_reason or "the arena asked"
            else:
                self._control(data)
        if time.monotonic() - self.log.flushed_at >= FLUSH_SECONDS:
            self.log.flush()

    def _output(self, data: bytes) -> None:
        """The bot's output, or its end (b"")."""
        if data:
            self.output.write(data)
        elif self.output_fd is not None:
            self.selector.unregister(self.output_fd)
            os.close(self.output_fd)
            self.output_fd = None

    def _control(self, data: bytes) -> None:
        """The arena's lines: `match N` as a match begins, `end N` once it is over."""
        *lines, self.control = (self.control + data).split(b"\n")
        for line in lines:
            word, _, number = line.decode("ascii", "replace").partition(" ")
            if word == "match":
                self.output.begin(number)
            elif word == "end":
                self._drain()
                self._answer(number, self.output.end(number))
        self.control = self.control[-256:]  # a line is a few bytes: nothing else is kept

    def _drain(self) -> None:
        """Read what the bot wrote before the arena's last line: it is in the pipe already (a bot that
        writes on without pause has the rest counted after the match)."""
        for _read in range(DRAIN_READS):
            if self.output_fd is None:
                return
            try:
                self._output(os.read(self.output_fd, READ_BYTES))
            except BlockingIOError:
                return

    def _answer(self, number: str, dropped: int | None) -> None:
        """Tell the arena match `number` is over (its output in the match file), or unknown."""
        line = f"unknown {number}\n" if dropped is None else f"ended {number} {dropped}\n"
        with contextlib.suppress(OSError):  # an arena gone, or not reading: it waits for no one
            os.write(1, line.encode())

    def reap(self) -> bool:
        """Reap every finished child; whether any child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.bot_pid:
                self.bot_status = os.waitstatus_to_exitcode(status)

    def children(self) -> list[int]:
        """Our children now (the bot and the orphans we adopted); only the bot where /proc is missing."""
        if not LINUX:
            return [self.bot_pid] if self.bot_status is None else []
        pid = os.getpid()
        try:
            return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return _children_by_scan(pid)

    def supervise(self) -> None:
        """Log the bot's output until we are asked to stop or the bot exits."""
        while self.stop_reason is None and self.bot_status is None:
            self.pump(FLUSH_SECONDS)
            self.reap()

    def stop(self) -> None:
        """SIGTERM to the bot's group and to every child, a grace period, then SIGKILL until none is left."""
        if self.bot_status is None:
            arena_gone = os.getppid() != self.arena_pid
            self.log.note(f"stopping the bot: {'the arena is gone' if arena_gone else self.stop_reason}")
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        warned: set[int] = set()
        while self.reap() and time.monotonic() < deadline:
            for child in self.children():
                if child != self.bot_pid and child not in warned:
                    _signal(child, signal.SIGTERM)
                    warned.add(child)
            self.pump(min(POLL_SECONDS, deadline - time.monotonic()))
        killed = False
        while self.reap():
            killed = True
            self._signal_group(signal.SIGKILL)
            for child in self.children():
                _signal(child, signal.SIGKILL)
            self.pump(POLL_SECONDS)
        deadline = time.monotonic() + 1.0
        while self.output_fd is not None and time.monotonic() < deadline:
            self.pump(deadline - time.monotonic())
        if self.output.match is not None:  # the bot ended during a match: the arena waits for its output
            number = self.output.match
            self._answer(number, self.output.end(number))
        self.output.close()
        if killed:
            self.log.note(f"killed what was left after {self.grace:g} s")
        if self.bot_status is not None:
            self.log.note(f"the bot ended: {_describe(self.bot_status)}")

    def _signal_group(self, signum: int) -> None:
        # Only while the bot is unreaped: until then its pid, the group's id, cannot be reused.
        if self.bot_status is None and self.bot_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.bot_pid, signum)

    def exit_status(self) -> int:
        """The bot's status as an exit status: its own, or 128 + the signal that killed it."""
        if self.bot_status is None:
            return 1
        return self.bot_status if self.bot_status >= 0 else 128 - self.bot_status


def _describe(status: int) -> str:
    """A waitstatus_to_exitcode status in words."""
    if status >= 0:
        return f"exit status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"


def _signal(pid: int, signum: int) -> None:
    # Safe from pid reuse: `pid` is our child and we have not reaped it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _children_by_scan(parent: int) -> list[int]:
    """Children of `parent` from every /proc/PID/stat (for kernels without the children file)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(b")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
    return found


def main(argv: list[str]) -> int:
    """Supervise the bot `argv` describes (see the module docstring); the exit status is the bot's."""
    match_output: int | None = None
    match_file: Path | None = None
    pass_fds: tuple[int, ...] = ()
    while argv and argv[0].startswith(("--match-output=", "--match-file=", "--pass-fd=")):
        option, _, value = argv.pop(0).partition("=")
        if option == "--match-output":
            match_output = int(value)
        elif option == "--match-file":
            match_file = Path(value)
        else:
            pass_fds += (int(value),)
    if len(argv) < 5:
        sys.stderr.write(
            "usage: supervisor.py [--match-output=BYTES] [--match-file=PATH] [--pass-fd=FD] ARENA_PID "
            "LOG_PATH LOG_LIMIT GRACE COMMAND...\n"
        )
        return 2
    arena_pid, log_path, limit, grace, command = int(argv[0]), Path(argv[1]), int(argv[2]), argv[3], argv[4:]
    with contextlib.suppress(OSError):  # answers to the arena never block the supervisor
        os.set_blocking(1, False)
    log = CappedLog(log_path, limit)
    supervisor = Supervisor(arena_pid, log, float(grace), MatchOutput(log, match_output, match_file))
    try:
        if LINUX:
            _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
        if os.getppid() != arena_pid:
            log.note("the arena is gone; not starting the bot")
            return 1
        if not supervisor.start(command, pass_fds):
            return 127
        supervisor.supervise()
    except BaseException:
        log.note("supervisor error:\n" + traceback.format_exc())
        supervisor.stop_reason = supervisor.stop_reason or "supervisor error"
    finally:
        if supervisor.bot_pid:
            supervisor.stop()
        supervisor.output.close()
        log.close()
    return supervisor.exit_status()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
