"""A bot that tries to pass a note to the other sandboxed processes of its bot, or of another bot, started
before it, beside it or after it: `python bot.py --socket PATH`, shipped in an uploaded bundle by
tests/arena/sandbox/test_private_processes.py (which also runs it without the SDK, with `--seconds`).

Before it serves, a process leaves a note (`arena-note-TOKEN`, TOKEN its own) through every channel it can
think of, and looks for the notes of others that are still there: files in every folder it can write (on
every mount that is not read-only: /tmp with its socket folder, ...) and in /, /tmp, /tmp/arena, /var/tmp,
/dev/shm, /dev, /run, /run/arena (where sockets once were), /bot, its working folder and $HOME; an abstract
Unix socket; SysV message queues, shared memory and semaphores; a POSIX message queue; the kernel's
keyrings; its host name and its name in /proc. While it serves it keeps looking, every `ROUND_SECONDS`,
also through what only works while the other runs too: locks on its own bot.py (flock and open file
description locks), which every process of the bot sees, and inotify on it; and the other processes in
/proc. It also leaves in its socket folder a folder closed to its own user, and closes the socket folder
itself once its socket is there, so that it is hard to remove.

It writes what it found to its standard error, which the arena puts in its log, as JSON lines:
`{"event": "noted", ...}` once, then `{"event": "looked", "round": N, ...}` after each round; `found` maps
each channel to the evidence of another process's note (empty: nothing crossed), and `problems` says which
channels failed to work at all. It plays the first legal move.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import fcntl
import json
import os
import platform
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

NOTE: Final = "arena-note"
TOKEN: Final = os.urandom(8).hex()
MINE: Final = f"{NOTE}-{TOKEN}"
ROUND_SECONDS: Final = 0.2
IPC_KEY: Final = 0x56_56_00_56
"""The one SysV key every process tries to create first: a second one that is refused met another's."""
LOOKED_FOLDERS: Final = (
    "/",
    "/tmp",
    "/tmp/arena",
    "/var/tmp",
    "/dev/shm",
    "/dev",
    "/run",
    "/run/arena",
    "/bot",
)
SKIPPED: Final = ("/proc",)
"""Not walked for folders to write in: each process's own, looked at apart."""
HARMLESS_FILES: Final = {
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
}
"""Devices anyone may write, where what goes in never comes out, and its own standard streams: not
reported."""
KEY_SYSCALLS: Final = {"x86_64": (248, 250), "aarch64": (217, 219)}
"""add_key and keyctl, by machine."""
KEY_SPECS: Final = {"session": -3, "user": -4, "user session": -5}
IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE, IN_IGNORED = 0x20, 0x1, 0x10, 0x8000

libc = ctypes.CDLL(None, use_errno=True)
found: dict[str, list[str]] = {}
"""Channel: evidence of another process's note."""
held: list[object] = []
"""What must stay open while the process lives for its notes to stay (sockets, descriptors)."""
SOCKET_FOLDER = "/tmp/arena"
"""The folder of its socket (`--socket`)."""


def crossed(channel: str, evidence: str) -> None:
    """Another process's note came through `channel`."""
    seen = found.setdefault(channel, [])
    if evidence not in seen:
        seen.append(evidence)


def _errno() -> OSError:
    number = ctypes.get_errno()
    return OSError(number, os.strerror(number))


def writable_mounts() -> list[str]:
    """The mount points it sees that are not read-only (from /proc/self/mountinfo), /proc aside."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point, options = fields[4].replace("\\040", " "), fields[5].split(",")
        if "rw" in options and point != "/proc" and not point.startswith("/proc/"):
            points.append(point)
    return points


def folders() -> Iterator[str]:
    """Every folder where it may write: those on a mount that is not read-only."""
    for top in writable_mounts():
        for folder, subfolders, _files in os.walk(top):
            subfolders[:] = [name for name in subfolders if os.path.join(folder, name) not in SKIPPED]
            yield folder


def look_for_files(where: Iterator[str] | tuple[str, ...]) -> None:
    for folder in where:
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                if name.startswith(NOTE) and not name.startswith(MINE):
                    crossed("files", os.path.join(folder, name))


def note_in_files() -> list[str]:
    """A note in every folder it can write in; those folders."""
    written = []
    for folder in folders():
        path = os.path.join(folder, MINE)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            continue
        os.write(fd, MINE.encode())
        os.close(fd)
        written.append(folder)
    home = os.environ.get("HOME", "/")
    for path in (os.path.join(home, f"{MINE}.home"), f"{MINE}.cwd"):
        with contextlib.suppress(OSError), open(path, "w") as file:
            file.write(MINE)
    return written


def note_on_an_abstract_socket() -> None:
    for name in (NOTE, MINE):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind("\0" + name)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                crossed("abstract socket", f"@{name} is taken")
            listener.close()
            continue
        listener.listen()
        held.append(listener)


def look_at_abstract_sockets() -> None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/unix").read_text().splitlines():
            path = line.split()[-1]
            if path.startswith(f"@{NOTE}-") and path != f"@{MINE}":
                crossed("abstract socket", path)


def note_in_sysv_ipc() -> None:
    libc.msgget.restype = libc.shmget.restype = libc.semget.restype = ctypes.c_int
    create = 0o1000 | 0o2000 | 0o666  # IPC_CREAT | IPC_EXCL
    for kind, make in (
        ("msg", lambda: libc.msgget(IPC_KEY, create)),
        ("shm", lambda: libc.shmget(IPC_KEY, ctypes.c_size_t(4096), create)),
        ("sem", lambda: libc.semget(IPC_KEY, 1, create)),
    ):
        if make() < 0 and ctypes.get_errno() == errno.EEXIST:
            crossed("sysv ipc", f"{kind} key {IPC_KEY:#x} exists")


def note_in_a_posix_queue() -> None:
    mq_open = None
    for library in (libc, "librt.so.1"):
        with contextlib.suppress(OSError, AttributeError):
            mq_open = (ctypes.CDLL(library, use_errno=True) if isinstance(library, str) else library).mq_open
            break
    if mq_open is None:
        return
    mq_open.restype = ctypes.c_int
    mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    queue = mq_open(f"/{NOTE}".encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o666, None)
    if queue < 0 and ctypes.get_errno() == errno.EEXIST:
        crossed("posix message queue", f"/{NOTE} exists")


def note_in_keyrings() -> list[str]:
    """A key in each keyring it may add to; those keyrings."""
    numbers = KEY_SYSCALLS.get(platform.machine())
    if numbers is None:
        return []
    add_key, _keyctl = numbers
    libc.syscall.restype = ctypes.c_long
    added = []
    for name, spec in KEY_SPECS.items():
        description = f"{MINE}.{name.replace(' ', '-')}".encode()
        if libc.syscall(add_key, b"user", description, MINE.encode(), ctypes.c_size_t(len(MINE)), spec) > 0:
            added.append(name)
    return added


def look_in_keyrings() -> None:
    """Keys it can see (/proc/keys) and those in the keyrings it possesses."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/keys").read_text().splitlines():
            if f"{NOTE}-" in line and MINE not in line:
                crossed("keyrings", line)
    numbers = KEY_SYSCALLS.get(platform.machine())
    if numbers is None:
        return
    _add_key, keyctl = numbers
    for spec in KEY_SPECS.values():
        ids = (ctypes.c_int32 * 256)()
        size = libc.syscall(keyctl, 11, spec, ids, ctypes.c_size_t(ctypes.sizeof(ids)))  # KEYCTL_READ
        for key in ids[: max(0, min(size, ctypes.sizeof(ids))) // 4]:
            text = ctypes.create_string_buffer(512)
            if libc.syscall(keyctl, 6, key, text, ctypes.c_size_t(512)) > 0:  # KEYCTL_DESCRIBE
                description = text.value.decode(errors="replace").rsplit(";", 1)[-1]
                if description.startswith(f"{NOTE}-") and not description.startswith(MINE):
                    crossed("keyrings", description)


def note_in_names() -> None:
    """Its host name (refused: the UTS namespace is its own, and it may not change it) and its name."""
    hostname = socket.gethostname()
    if NOTE in hostname:
        crossed("host name", hostname)
    libc.sethostname(MINE.encode(), len(MINE))
    libc.prctl(15, NOTE.encode(), 0, 0, 0)  # PR_SET_NAME: this thread's name in /proc


def look_at_processes() -> None:
    """Any process but itself named like a note, or with a note on its command line or environment."""
    own = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == own:
            continue
        for part in ("comm", "cmdline", "environ"):
            with contextlib.suppress(OSError):
                text = Path(f"/proc/{entry}/{part}").read_bytes().decode(errors="replace")
                if NOTE in text:
                    crossed("processes", f"/proc/{entry}/{part}: {text.strip()[:80]}")
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{entry}/task"):
                comm = Path(f"/proc/{entry}/task/{task}/comm").read_text().strip()
                if comm == NOTE:
                    crossed("processes", f"/proc/{entry}/task/{task}/comm: {comm}")


def look_at_environment() -> None:
    for name, value in os.environ.items():
        if NOTE in name or NOTE in value:
            crossed("environment", f"{name}={value}")


def writable_files() -> list[str]:
    """Files under /dev, /sys and /proc/sys it can open for writing (opened, never written)."""
    opened = []
    for top in ("/dev", "/sys", "/proc/sys"):
        for folder, _subfolders, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
                except OSError:
                    continue
                os.close(fd)
                if path not in HARMLESS_FILES:
                    opened.append(path)
    return opened


class FileLocks:
    """Locks on its own bot.py, which every process of the bot sees: another's lock shows as a conflict."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        fcntl.flock(self.fd, fcntl.LOCK_SH)
        self.description_lock(fcntl.F_OFD_SETLK, fcntl.F_RDLCK)

    def description_lock(self, command: int, kind: int) -> int:
        """An open file description lock on the first byte; what a test (F_OFD_GETLK) found there."""
        asked = struct.pack("hhxxxxqqixxxx", kind, os.SEEK_SET, 0, 1, 0)
        return int(struct.unpack("hhxxxxqqixxxx", fcntl.fcntl(self.fd, command, asked))[0])

    def look(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            crossed("file locks", "flock: another holds a lock on bot.py")
        fcntl.flock(self.fd, fcntl.LOCK_SH)
        if self.description_lock(fcntl.F_OFD_GETLK, fcntl.F_WRLCK) != fcntl.F_UNLCK:
            crossed("file locks", "open file description lock: another holds one on bot.py")


class OpenWatch:
    """inotify on its own bot.py: an open it did not make itself is another process's."""

    def __init__(self, path: str) -> None:
        self.path = path.encode()
        self.fd = libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise _errno()
        self.watch = self._add()

    def _add(self) -> int:
        watch = int(libc.inotify_add_watch(self.fd, self.path, IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE))
        if watch < 0:
            raise _errno()
        return watch

    def look(self) -> None:
        """Another's opens since the last round; then one of its own, unwatched, for the others to see."""
        with contextlib.suppress(BlockingIOError):
            events = os.read(self.fd, 65536)
            for offset in range(0, len(events), 16):
                watch, mask = struct.unpack_from("iI", events, offset)
                if watch == self.watch and not mask & IN_IGNORED:
                    crossed("inotify", f"bot.py: event {mask:#x} by another process")
                    break
        libc.inotify_rm_watch(self.fd, self.watch)
        with open(self.path, "rb") as file:
            file.read(1)
        self.watch = self._add()


def leave_a_closed_folder() -> None:
    """Leave in the socket folder, while it may, a folder closed to its own user (the arena's, for an arena
    running as an ordinary user), with a note inside."""
    inner = os.path.join(SOCKET_FOLDER, f"{MINE}.d")
    os.mkdir(inner)
    Path(inner, MINE).write_text(MINE)
    os.chmod(inner, 0)


def close_the_socket_folder() -> None:
    """Once its socket is there: no more writing in the folder, for its user either (refused where the arena
    took the folder back)."""
    os.chmod(SOCKET_FOLDER, 0o500)


def report(event: str, **fields: object) -> None:
    line = {"event": event, "token": TOKEN, "at": time.time(), "found": found, **fields}
    sys.stderr.write(json.dumps(line) + "\n")
    sys.stderr.flush()


def attempt(action: Callable[[], object], problems: list[str]) -> None:
    """Run one channel's step; a channel that fails to run is reported, not fatal."""
    try:
        action()
    except Exception as error:
        problem = f"{getattr(action, '__qualname__', action)}: {type(error).__name__}: {error}"
        if problem not in problems:
            problems.append(problem)


def keep_looking(socket_path: str, locks: FileLocks | None, watch: OpenWatch | None) -> None:
    problems: list[str] = []
    while not os.path.exists(socket_path):
        time.sleep(0.01)
    attempt(close_the_socket_folder, problems)
    for number in range(1, 1_000_000):
        started = time.time()
        steps: list[Callable[[], object]] = [
            look_at_abstract_sockets,
            look_in_keyrings,
            look_at_processes,
            lambda: look_for_files(LOOKED_FOLDERS),
        ]
        steps += [step.look for step in (locks, watch) if step is not None]
        for step in steps:
            attempt(step, problems)
        report("looked", round=number, started=started, problems=problems)
        time.sleep(ROUND_SECONDS)


def note_everywhere() -> tuple[FileLocks | None, OpenWatch | None]:
    """Look for the notes left before, and leave one through every channel."""
    problems: list[str] = []
    writable: list[str] = []
    attempt(lambda: look_for_files(folders()), problems)
    attempt(look_at_environment, problems)
    attempt(look_in_keyrings, problems)
    attempt(lambda: writable.extend(note_in_files()), problems)
    for step in (note_on_an_abstract_socket, note_in_sysv_ipc, note_in_a_posix_queue):
        attempt(step, problems)
    keyrings: list[str] = []
    attempt(lambda: keyrings.extend(note_in_keyrings()), problems)
    attempt(note_in_names, problems)
    attempt(leave_a_closed_folder, problems)
    opened: list[str] = []
    attempt(lambda: opened.extend(writable_files()), problems)
    own = str(Path(sys.argv[0]).resolve())
    locks = watch = None
    try:
        locks = FileLocks(own)
    except OSError as error:
        problems.append(f"file locks: {error}")
    try:
        watch = OpenWatch(own)
    except OSError as error:
        problems.append(f"inotify: {error}")
    report(
        "noted",
        writable_mounts=writable_mounts(),
        writable_folders=writable,
        writable_files=opened,
        keyrings=keyrings,
        streams=[os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)],
        problems=problems,
        pid=os.getpid(),
    )
    return locks, watch


def serve_bot(socket_path: str) -> None:
    """Serve a bot that plays the first legal move (the SDK imported only here: without it, the probe runs
    on any Python)."""
    from sdk import Bot, BotView, Move, serve

    class NoteBot(Bot):
        name = "note"

        def decide(self, view: BotView) -> Move:
            return view.legal_moves[0]

    serve(NoteBot, socket=socket_path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--seconds", type=float, help="no bot: listen on a plain socket, end after this")
    args = parser.parse_args()
    SOCKET_FOLDER = os.path.dirname(args.socket)
    locks, watch = note_everywhere()
    threading.Thread(target=keep_looking, args=(args.socket, locks, watch), daemon=True).start()
    if args.seconds is None:
        serve_bot(args.socket)
    else:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(args.socket)
        listener.listen()
        time.sleep(args.seconds)
