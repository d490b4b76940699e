"""The sandbox of a bot the arena starts: the bubblewrap (`bwrap`) command line that runs it with a
read-only view of the system, its own folder read-only, a private size-capped `/tmp`, no network, its own
namespaces, a filter of system calls, and limits on memory, CPU time, processes, file size and open files;
and the check that bubblewrap can run here at all.

Private to each process. Every process runs in a sandbox of its own, made anew, so that no process of a bot
(before it, beside it or after it) can leave anything for another, nor find anything another left:

- `/tmp` (its `HOME` and `TMPDIR` too) is a size-capped memory file system of the sandbox's own, gone with
  it, and the only place it may write: its socket folder (/tmp/arena) is in it, where the arena finds the
  socket through the sandbox's own root (sockets.py), so no host folder is writable to it and all it
  writes counts against that one cap; there is no /var, and /dev is a read-only one of its own (/dev/shm
  an empty read-only folder);
- its namespaces: network (no network at all, and the abstract Unix sockets are per network namespace),
  IPC (SysV message queues, semaphores and shared memory, POSIX message queues), PID (its /proc shows its
  own processes alone), UTS (its host name is `bot`), mount, user and cgroup;
- its environment is `ENVIRONMENT` alone, the same for every process; its output goes to a log file the
  supervisor writes on the host, which the sandbox does not show.

What every process sees is read-only: the system (`SYSTEM_FOLDERS`, `SYSTEM_FILES`), the arena's Python,
its bundle at /bot, and the device nodes that bwrap binds in /dev (null, zero, full, random, urandom, tty;
what goes in never comes out). The kernel shares more than the namespaces separate, so the system call
filter (`system_call_filter`, installed by bwrap's `--seccomp`) refuses what would let one sandbox reach
another through the files they share or the user id they share: the keyrings (a key outlives its process,
and another process of the same user sees it), watches on files (inotify, fanotify, dnotify: a watch on a
shared file sees the others' opens), and file locks (another sandbox would see a lock on a shared file:
taking one succeeds without taking it, asking who holds one fails); memory no limit would count (memfds,
SysV shared memory, extended attributes: see `REFUSED_CALLS`); and every system call of another ABI
(32-bit, x32), whose numbers the filter does not check. What still crosses is what no filter can see: the
timing of shared resources, such as the page cache of those read-only files and the machine's load.

Two ways, one view. An arena running as an ordinary user runs bwrap unprivileged in a user namespace of
its own (nested user namespaces refused). An arena running as root runs bwrap privileged (it can show the
bot folders that only root may reach), and inside it `setpriv` drops to a user id of the bot process's own
(never root: the kernel does not count root's processes against RLIMIT_NPROC, and root owns the host's
files) with no new privileges, then a second, unprivileged bwrap puts the bot in a user namespace that
allows none inside it (else the bot could make one, and mount there a tmpfs that no limit bounds). The
limits are set inside with `prlimit`, so that the process count is the sandbox's own: set outside, a user
namespace would count every process of the arena's user.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import platform
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

BOT_FOLDER: Final = "/bot"
"""Where the bot's own files are, read-only; its working directory."""
SOCKET_FOLDER: Final = "/tmp/arena"
"""Where the bot creates its socket: a folder of its private /tmp, open to it (mode 1777, as /tmp)."""
SOCKET_NAME: Final = "bot.sock"
SOCKET_PATH: Final = f"{SOCKET_FOLDER}/{SOCKET_NAME}"
"""The socket the bot listens on, as the bot sees it (`{socket}` in its command)."""

SYSTEM_FOLDERS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system the bot sees, read-only (on a merged-/usr system all but /usr are symbolic links)."""
SYSTEM_FILES: Final = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/ssl/certs",
)
"""What of /etc the bot sees: what programs need to load and run; no accounts, no passwords, no hosts."""

ENVIRONMENT: Final = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    # glibc reserves 64 MiB of address space per malloc arena and per thread: without a cap a threaded
    # server runs out of its address-space limit long before it uses that memory.
    "MALLOC_ARENA_MAX": "2",
}
"""The whole environment of a sandboxed bot: nothing of the arena's (its tokens, its paths) gets in."""

SANDBOX_UIDS: Final = range(3_000_000, 3_100_000)
"""The user ids an arena running as root gives its sandboxed processes, one each; no account needs them."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one sandboxed bot process may use. Memory is its address space; CPU time is over the process's
    life (it is started again for the next match after a kill); processes count threads too (a gRPC
    server holds a thread per seat it plays); output is per match, the rest dropped and noted in its log
    (that limit holds for every bot process the arena starts, sandboxed or not)."""

    memory_bytes: int = 1024 * 1024 * 1024
    cpu_seconds: int = 600
    processes: int = 64
    tmp_bytes: int = 64 * 1024 * 1024
    output_bytes: int = 1024 * 1024
    open_files: int = 256

    def __post_init__(self) -> None:
        bounds = {
            "memory_bytes": (64 * 1024 * 1024, 1 << 40),
            "cpu_seconds": (1, 7 * 24 * 3600),
            "processes": (4, 100_000),
            "tmp_bytes": (1024 * 1024, 1 << 40),
            "output_bytes": (1024, 1 << 40),
            "open_files": (16, 1 << 20),
        }
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"the sandbox limit {name} is {low} to {high}, got {value}")


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How sandboxed bots run: their limits and the host folders shown to them read-only besides the
    system (`shared`: the arena's own Python installation, so `python` in a command is the arena's
    interpreter with its packages, and whatever runtimes the host offers)."""

    limits: Limits = field(default_factory=Limits)
    shared: tuple[Path, ...] = ()
    share_arena_python: bool = True

    def shared_folders(self) -> tuple[Path, ...]:
        """`shared` and the arena's Python installation, resolved, without repeats or what /usr holds."""
        folders: list[Path] = []
        python = (Path(sys.base_prefix), Path(sys.prefix)) if self.share_arena_python else ()
        for folder in (*self.shared, *python):
            resolved = folder.resolve()
            if resolved.is_relative_to("/usr") or resolved in folders:
                continue
            folders.append(resolved)
        return tuple(folders)

    def check_hidden(self, paths: Sequence[Path]) -> None:
        """Refuse shared folders that would show the bot one of `paths` (the ladder's file, the uploads).

        :raises ValueError: naming the folder and the path.
        """
        for folder in self.shared_folders():
            for path in paths:
                if path.resolve().is_relative_to(folder):
                    raise ValueError(f"the sandbox would show bots {folder}, which holds {path}")


@dataclass(frozen=True, slots=True)
class _Machine:
    """What the system call filter needs to know of a machine: its audit architecture (a system call of
    any other, such as a 32-bit one, is refused) and the numbers of the calls it filters."""

    audit_arch: int
    calls: Mapping[str, int]
    x32: bool = False
    """Whether numbers with bit 30 set are another ABI's (x86-64's x32), refused too."""


_MACHINES: Final = {
    "x86_64": _Machine(
        0xC000003E,
        {
            "fcntl": 72,
            "flock": 73,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "inotify_init": 253,
            "inotify_init1": 294,
            "fanotify_init": 300,
            "shmget": 29,
            "setxattr": 188,
            "lsetxattr": 189,
            "fsetxattr": 190,
            "memfd_create": 319,
            "memfd_secret": 447,
            "setxattrat": 463,
        },
        x32=True,
    ),
    "aarch64": _Machine(
        0xC00000B7,
        {
            "fcntl": 25,
            "inotify_init1": 26,
            "flock": 32,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "fanotify_init": 262,
            "setxattr": 5,
            "lsetxattr": 6,
            "fsetxattr": 7,
            "shmget": 194,
            "memfd_create": 279,
            "memfd_secret": 447,
            "setxattrat": 463,
        },
    ),
}

REFUSED_CALLS: Final = {
    # The kernel's keyrings belong to no namespace: a key outlives its process, and every process of the
    # same user id sees its description in /proc/keys.
    "add_key": errno.ENOSYS,
    "request_key": errno.ENOSYS,
    "keyctl": errno.ENOSYS,
    # A watch on a file that every sandbox sees (its bundle, /usr, /dev/null) reports the opens of the
    # others.
    "inotify_init": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "fanotify_init": errno.ENOSYS,
    # Locks on such a file would be seen by the others: granted without being taken (0). Each sandbox
    # runs alone, so a lock has nothing to keep out there, and programs that lock files (SQLite) work.
    "flock": 0,
    # Memory that neither the /tmp cap (the blocks of its tmpfs) nor RLIMIT_AS (what is mapped) counts:
    # memfds (each as big as RLIMIT_FSIZE, one per descriptor), SysV shared memory segments (kept after
    # detaching, for as long as the sandbox's IPC namespace lives), and extended attributes of its files
    # (unswappable kernel memory; `statvfs` shows none of it). Programs fall back without them: a file in
    # /tmp for a memfd, an anonymous mapping for shared memory, no attributes (as on a file system that
    # has none: EOPNOTSUPP).
    "memfd_create": errno.ENOSYS,
    "memfd_secret": errno.ENOSYS,
    "shmget": errno.ENOSYS,
    "setxattr": errno.EOPNOTSUPP,
    "lsetxattr": errno.EOPNOTSUPP,
    "fsetxattr": errno.EOPNOTSUPP,
    "setxattrat": errno.EOPNOTSUPP,
}
"""System calls the sandbox refuses, with the error number each returns (0: it succeeds, doing nothing)."""

REFUSED_FCNTL: Final = {
    5: errno.ENOLCK,  # F_GETLK: what locks others hold
    6: 0,  # F_SETLK
    7: 0,  # F_SETLKW
    36: errno.ENOLCK,  # F_OFD_GETLK
    37: 0,  # F_OFD_SETLK
    38: 0,  # F_OFD_SETLKW
    1024: errno.EINVAL,  # F_SETLEASE
    1025: errno.EINVAL,  # F_GETLEASE
    1026: errno.EINVAL,  # F_NOTIFY: dnotify, the older inotify
}
"""The commands of fcntl refused the same way: file locks, leases and directory notifications."""

_LOAD_WORD, _JUMP_IF_EQUAL, _JUMP_IF_AT_LEAST, _RETURN = 0x20, 0x15, 0x35, 0x06
_ALLOW: Final = 0x7FFF0000
_ERRNO: Final = 0x00050000
_NUMBER, _ARCH, _SECOND_ARGUMENT = 0, 4, 24
"""Offsets in struct seccomp_data (the second argument's low half on a little-endian machine)."""


@functools.cache
def system_call_filter(machine: str | None = None) -> bytes:
    """The classic BPF program (struct sock_filter, in the machine's byte order) that bwrap's `--seccomp`
    installs for the bot: `REFUSED_CALLS` and `REFUSED_FCNTL`, and every system call of another ABI.

    :raises ValueError: for a machine without a filter here (see `_MACHINES`).
    """
    name = platform.machine() if machine is None else machine
    if name not in _MACHINES:
        raise ValueError(f"the sandbox has no system call filter for {name} (only {', '.join(_MACHINES)})")
    found = _MACHINES[name]
    # (code, target if true, target if false, value): targets are labels, resolved to offsets below.
    program: list[tuple[int, str | None, str | None, int]] = [
        (_LOAD_WORD, None, None, _ARCH),
        (_JUMP_IF_EQUAL, None, f"errno {errno.ENOSYS}", found.audit_arch),
        (_LOAD_WORD, None, None, _NUMBER),
    ]
    if found.x32:
        program.append((_JUMP_IF_AT_LEAST, f"errno {errno.ENOSYS}", None, 0x40000000))
    for call, number in sorted(REFUSED_CALLS.items()):
        if call in found.calls:
            program.append((_JUMP_IF_EQUAL, f"errno {number}", None, found.calls[call]))
    program.append((_JUMP_IF_EQUAL, "fcntl", None, found.calls["fcntl"]))
    program.append((_RETURN, None, None, _ALLOW))
    labels = {"fcntl": len(program)}
    program.append((_LOAD_WORD, None, None, _SECOND_ARGUMENT))
    for command, number in sorted(REFUSED_FCNTL.items()):
        program.append((_JUMP_IF_EQUAL, f"errno {number}", None, command))
    program.append((_RETURN, None, None, _ALLOW))
    for number in sorted({errno.ENOSYS, *REFUSED_CALLS.values(), *REFUSED_FCNTL.values()}):
        labels[f"errno {number}"] = len(program)
        program.append((_RETURN, None, None, _ERRNO | number))
    code = b""
    for index, (operation, if_true, if_false, value) in enumerate(program):
        true, false = (0 if label is None else labels[label] - index - 1 for label in (if_true, if_false))
        code += struct.pack("=HBBI", operation, true, false, value)
    return code


@contextlib.contextmanager
def filter_descriptor() -> Iterator[int]:
    """A descriptor to read `system_call_filter()` from, for `command_line`'s `filter_fd`: the read end of
    a pipe that holds it (bwrap reads it to the end); it is closed here afterwards.

    :raises ValueError: as `system_call_filter`.
    """
    program = system_call_filter()
    read, write = os.pipe()
    try:
        os.write(write, program)  # far less than a pipe holds
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)


def command_line(
    sandbox: Sandbox,
    command: Sequence[str],
    bot_folder: Path | None = None,
    uid: int | None = None,
    *,
    filter_fd: int,
    info_fd: int | None = None,
) -> list[str]:
    """The argument list that runs `command` in the sandbox: `bot_folder` (if any) read-only at /bot, its
    working directory. `uid`: the user id to run as when the arena is root (privileged bwrap, then
    `setpriv`); None when the arena is an ordinary user (a user namespace). `filter_fd`: the descriptor
    bwrap reads the system call filter from (`filter_descriptor`); `info_fd`: one bwrap writes its
    sandbox's pid to, and closes (`sockets.SocketFinder` reads it; the sandbox never gets either), which
    the process running these arguments must have open."""
    limits = sandbox.limits
    arguments = ["bwrap", "--die-with-parent", "--new-session", "--seccomp", str(filter_fd)]
    if info_fd is not None:
        arguments += ["--info-fd", str(info_fd)]
    if uid is None:
        arguments += ["--unshare-all", "--unshare-user", "--disable-userns"]
    else:
        # Root: no user namespace (the bot's ids must be real ones, not root's); setpriv needs to change ids.
        arguments += [
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        arguments += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    arguments += ["--hostname", "bot", "--clearenv"]
    for name, value in ENVIRONMENT.items():
        arguments += ["--setenv", name, value]
    for folder in SYSTEM_FOLDERS:
        path = Path(folder)
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            arguments += ["--ro-bind", folder, folder]
    made: set[Path] = set()
    for name in SYSTEM_FILES:
        arguments += [*_folders_above(Path(name), made), "--ro-bind-try", name, name]
    arguments += ["--proc", "/proc", "--dev", "/dev"]
    arguments += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    arguments += ["--perms", "1777", "--dir", SOCKET_FOLDER]
    made.update((Path("/tmp"), Path(SOCKET_FOLDER)))
    # After the private /tmp: an installation under /tmp (a virtualenv made there, as CI does) stays seen.
    for shared in sandbox.shared_folders():
        arguments += [*_folders_above(shared, made), "--ro-bind", str(shared), str(shared)]
    if bot_folder is not None:
        arguments += ["--ro-bind", str(bot_folder), BOT_FOLDER, "--chdir", BOT_FOLDER]
    else:
        arguments += ["--chdir", "/tmp"]
    # Last: the sandbox's own root and /dev are memory the bot would own in a user namespace, unbounded.
    arguments += ["--remount-ro", "/dev", "--remount-ro", "/"]
    arguments += ["--"]
    if uid is not None:
        arguments += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
        arguments += ["--no-new-privs", "--"]
        # Then, as that user, a user namespace that allows none inside it, over the same view: otherwise
        # the bot could make one of its own, and mount a tmpfs there that no limit of ours bounds.
        arguments += [
            "bwrap",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--dev-bind",
            "/",
            "/",
            "--",
        ]
    arguments += [
        "prlimit",
        f"--as={limits.memory_bytes}",
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.tmp_bytes}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
        *command,
    ]
    return arguments


def _folders_above(path: Path, made: set[Path]) -> list[str]:
    """Create the folders above a mount point (those not in `made` yet) open to all: bwrap would copy the
    modes of the host's, and a bot running as a user of its own could not reach /etc/... or /root/...."""
    arguments = []
    for folder in reversed(path.parents[:-1]):
        if folder not in made:
            made.add(folder)
            arguments += ["--perms", "0755", "--dir", str(folder)]
    return arguments


def privileged() -> bool:
    """Whether the arena runs as root, and so runs bwrap privileged and each bot as a user of its own."""
    return os.geteuid() == 0


@functools.cache
def unavailable_reason(as_root: bool | None = None) -> str | None:
    """Why the sandbox cannot run here (bwrap missing, or unable to make its namespaces), in one line; None
    when it can. Asked once per arena process: it runs `true` in a sandbox."""
    as_root = privileged() if as_root is None else as_root
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (on Debian or Ubuntu: apt-get install bubblewrap)"
    for tool in ("prlimit", "setpriv"):
        if not Path("/usr/bin", tool).exists():
            return f"/usr/bin/{tool} is missing (it comes with util-linux)"
    if platform.machine() not in _MACHINES:
        return f"the sandbox has no system call filter for {platform.machine()} (only {', '.join(_MACHINES)})"
    uid = SANDBOX_UIDS[0] if as_root else None
    try:
        with filter_descriptor() as filter_fd:
            finished = subprocess.run(
                command_line(Sandbox(), ["true"], uid=uid, filter_fd=filter_fd),
                env=ENVIRONMENT,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
                pass_fds=(filter_fd,),
            )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap does not run: {error}"
    if finished.returncode != 0:
        said = finished.stderr.decode(errors="replace").strip().splitlines()
        detail = said[-1] if said else f"exit status {finished.returncode}"
        return (
            f"bubblewrap cannot make its sandbox here ({detail[:200]}); user namespaces may be off "
            "(see sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone)"
        )
    return None
