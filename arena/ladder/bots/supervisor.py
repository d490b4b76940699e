"""The supervisor of one bot process the arena starts: it makes sure nothing the bot starts outlives it,
and writes the bot's output to a log file of bounded size.

processes.py (beside it) runs it by path as `python -I supervisor.py [--match-output=BYTES]
[--pass-fd=FD] ARENA_PID LOG_PATH LOG_LIMIT GRACE COMMAND...`, in a session of its own, with a pipe from
the arena on standard input. It uses the standard library alone and nothing of the arena package: it must
start fast, run as a plain script, and never fork with gRPC loaded. On Linux it

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
bytes were dropped; lines starting with `[arena]` are the supervisor's own. With `--match-output`, the
arena writes a line `match` on the pipe as each match of the bot begins, and the bot's output past BYTES
in one match is dropped, and noted, before it reaches the log. With `--pass-fd` (repeated for each), the
bot's command gets the supervisor's descriptor FD, as FD (bwrap reads the system call filter from one and
writes where its sandbox runs to another); the supervisor closes its own copy once the bot has started.
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
    dropped and noted, so that a bot printing without end costs the log nothing past its share."""

    def __init__(self, log: CappedLog, limit: int | None) -> None:
        self.log = log
        self.limit = limit
        self.written = 0
        self.dropped = 0

    def write(self, data: bytes) -> None:
        if self.limit is None:
            self.log.write(data)
            return
        room = max(0, self.limit - self.written)
        self.log.write(data[:room])
        self.written += min(room, len(data))
        if len(data) > room:
            if not self.dropped:
                self.log.note(f"output past {self.limit} bytes in this match: the rest is dropped")
            self.dropped += len(data) - room

    def next_match(self) -> None:
        self.close()
        self.written = 0

    def close(self) -> None:
        if self.dropped:
            self.log.note(f"{self.dropped} bytes of output dropped (past {self.limit} bytes in a match)")
        self.dropped = 0


class Supervisor:
    """One bot process and everything it starts."""

    def __init__(self, arena_pid: int, log: CappedLog, grace: float, match_output: int | None = None) -> None:
        self.arena_pid = arena_pid
        self.log = log
        self.output = MatchOutput(log, match_output)
        self.grace = grace
        self.stop_reason: str | None = None
        self.bot_pid = 0
        self.bot_status: int | None = None
        self.output_open = False
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
        self.output_open = True
        return True

    def pump(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for output, a request of the arena or a signal, and handle them."""
        for key, _events in self.selector.select(max(0.0, timeout)):
            fd = int(key.fd)
            if key.data == "wake":
                with contextlib.suppress(BlockingIOError):
                    while os.read(fd, 4096):
                        pass
                continue
            try:
                data = os.read(fd, READ_BYTES)
            except BlockingIOError:
                continue
            if key.data == "output":
                if data:
                    self.output.write(data)
                else:
                    self.selector.unregister(fd)
                    os.close(fd)
                    self.output_open = False
            elif not data:  # the arena closed its end of the pipe: it asks us to stop, or it died
                self.selector.unregister(fd)
                self.stop_reason = self.stop_reason or "the arena asked"
            else:  # a line per match that begins
                for _line in range(data.count(b"\n")):
                    self.output.next_match()
        if time.monotonic() - self.log.flushed_at >= FLUSH_SECONDS:
            self.log.flush()

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
        while self.output_open and time.monotonic() < deadline:
            self.pump(deadline - time.monotonic())
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
    match_output = None
    pass_fds: tuple[int, ...] = ()
    while argv and argv[0].startswith(("--match-output=", "--pass-fd=")):
        option, _, value = argv.pop(0).partition("=")
        if option == "--match-output":
            match_output = int(value)
        else:
            pass_fds += (int(value),)
    if len(argv) < 5:
        sys.stderr.write(
            "usage: supervisor.py [--match-output=BYTES] [--pass-fd=FD] ARENA_PID LOG_PATH LOG_LIMIT GRACE "
            "COMMAND...\n"
        )
        return 2
    arena_pid, log_path, limit, grace, command = int(argv[0]), Path(argv[1]), int(argv[2]), argv[3], argv[4:]
    log = CappedLog(log_path, limit)
    supervisor = Supervisor(arena_pid, log, float(grace), match_output)
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
        log.close()
    return supervisor.exit_status()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
