"""How the arena reaches the socket of a sandboxed bot. The bot makes it in its own /tmp
(`bubblewrap.SOCKET_PATH`), the size-capped memory file system of the sandbox's mount namespace, so that
no host folder is writable to it and everything it writes counts against that one cap.

The host does not see that file system by its path, but it does through /proc/PID/root of a process of
the sandbox: bwrap names its sandbox's first process (`--info-fd`: its pid and its mount namespace), which
`SocketFinder` holds by a pidfd and checks alive after each look, so that its pid, were it reused, is
never taken for it. From that root it opens the socket's path a name at a time, following no symbolic link
(the bot made what is under /tmp: a link could lead the arena to a socket of the host) and refusing
anything but folders and, at the end, a socket. It keeps an O_PATH descriptor of that socket, and gRPC
connects to `address(descriptor)`, `unix:/proc/self/fd/N`: that socket and no other for as long as the
descriptor is open, whatever the bot renames or makes afterwards. The descriptor keeps the sandbox's file
system in memory until it is closed, so it is closed once the process has stopped.

Linux only, as the sandbox is. Reading another process's root takes what ptrace access takes (the
arena's own user, whose user namespace the sandbox's is, or root) and a /proc without `hidepid`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

from arena.errors import ArenaError
from arena.sandbox.bubblewrap import SOCKET_PATH

_FOLDER_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW


class SandboxSocketError(ArenaError, RuntimeError):
    """A sandboxed bot's socket that cannot be reached: something else is where it goes, or the sandbox's
    files cannot be read from the host."""


@dataclass(frozen=True, slots=True)
class SandboxInfo:
    """What bwrap's `--info-fd` says of its sandbox: the pid of its first process (in the arena's PID
    namespace) and the inode of its mount namespace."""

    pid: int
    mount_namespace: int


def parse_info(said: bytes) -> SandboxInfo:
    """The sandbox bwrap described in `said` (a JSON object).

    :raises ValueError: `said` is not such an object.
    """
    try:
        info = json.loads(said)
        pid, namespace = info["child-pid"], info["mnt-namespace"]
    except (ValueError, TypeError, KeyError):
        raise ValueError(f"not what bubblewrap's --info-fd writes: {said[:200]!r}") from None
    if not (isinstance(pid, int) and isinstance(namespace, int) and pid > 0):
        raise ValueError(f"not what bubblewrap's --info-fd writes: {said[:200]!r}")
    return SandboxInfo(pid, namespace)


def address(descriptor: int) -> str:
    """The gRPC address of the socket whose O_PATH descriptor is `descriptor`, in this process."""
    return f"unix:/proc/self/fd/{descriptor}"


class SocketFinder:
    """Finds the socket of one sandbox, from the read end of the pipe whose write end its bwrap got as
    `--info-fd` (owned from here on: `close` closes it)."""

    def __init__(self, info_fd: int) -> None:
        os.set_blocking(info_fd, False)
        self._info_fd: int | None = info_fd
        self._said = b""
        self._info: SandboxInfo | None = None
        self._pidfd: int | None = None
        arena_root = os.stat("/")
        self._arena_root = (arena_root.st_dev, arena_root.st_ino)

    def find(self) -> int:
        """An O_PATH descriptor of the bot's socket, which the caller owns.

        :raises FileNotFoundError: not there yet: bwrap has not said where its sandbox is, the sandbox is
            still being made (or is gone), or the bot has not made its socket.
        :raises SandboxSocketError: something else is where the socket goes, or the sandbox's files cannot
            be read from here.
        """
        pidfd, pid = self._hold()
        try:
            root = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY)
        except FileNotFoundError:
            raise
        except OSError as error:
            where = f"/proc/{pid}/root"
            raise SandboxSocketError(f"cannot reach the sandbox's files through {where}: {error}") from None
        try:
            # Alive after the root was opened: that root was its, not that of a process given its pid later.
            try:
                signal.pidfd_send_signal(pidfd, 0)
            except ProcessLookupError:
                raise FileNotFoundError("the sandbox is gone") from None
            found = os.fstat(root)
            if (found.st_dev, found.st_ino) == self._arena_root:
                raise FileNotFoundError("the sandbox has not made its own root yet")
            return _open_socket(root)
        finally:
            os.close(root)

    def _hold(self) -> tuple[int, int]:
        """The pidfd and pid of the sandbox's first process, once bwrap has said which it is."""
        if self._pidfd is not None and self._info is not None:
            return self._pidfd, self._info.pid
        if self._info is None:
            self._info = self._read_info()
        pid = self._info.pid
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            raise FileNotFoundError("the sandbox is gone") from None
        try:
            namespace = os.stat(f"/proc/{pid}/ns/mnt").st_ino
            signal.pidfd_send_signal(pidfd, 0)
        except (FileNotFoundError, ProcessLookupError):
            os.close(pidfd)
            raise FileNotFoundError("the sandbox is gone") from None
        except OSError as error:
            os.close(pidfd)
            raise SandboxSocketError(f"cannot reach the sandbox's process {pid}: {error}") from None
        if namespace != self._info.mount_namespace:
            os.close(pidfd)
            raise FileNotFoundError("the sandbox is gone (its pid is another process's now)")
        self._pidfd = pidfd
        return pidfd, pid

    def _read_info(self) -> SandboxInfo:
        """What bwrap wrote on its info pipe, once it closed it."""
        while self._info_fd is not None:
            try:
                chunk = os.read(self._info_fd, 4096)
            except BlockingIOError:
                raise FileNotFoundError("bubblewrap has not said where its sandbox is yet") from None
            if not chunk:
                os.close(self._info_fd)
                self._info_fd = None
                break
            self._said += chunk
        if not self._said:
            raise FileNotFoundError("bubblewrap said nothing of its sandbox (did it start?)")
        try:
            return parse_info(self._said)
        except ValueError as error:
            raise SandboxSocketError(str(error)) from None

    def close(self) -> None:
        """Close the info pipe and the pidfd (not the descriptors `find` gave)."""
        for descriptor in (self._info_fd, self._pidfd):
            if descriptor is not None:
                with contextlib.suppress(OSError):
                    os.close(descriptor)
        self._info_fd = self._pidfd = None


def _open_socket(root: int) -> int:
    """`SOCKET_PATH` opened (O_PATH) from the sandbox's `root`, a name at a time, following no link.

    :raises FileNotFoundError: a name of it is missing.
    :raises SandboxSocketError: a name of it is something else than a folder, or the socket something else
        than a socket.
    """
    *folders, name = PurePosixPath(SOCKET_PATH).relative_to("/").parts
    folder = os.dup(root)
    try:
        for part in folders:
            try:
                inner = os.open(part, _FOLDER_FLAGS, dir_fd=folder)
            except FileNotFoundError:
                raise
            except OSError as error:  # a link, a file, a folder closed to us
                detail = f"the bot's socket folder cannot be opened ({part}): {error}"
                raise SandboxSocketError(detail) from None
            os.close(folder)
            folder = inner
        try:
            descriptor = os.open(name, os.O_PATH | os.O_NOFOLLOW, dir_fd=folder)
        except FileNotFoundError:
            raise
        except OSError as error:
            raise SandboxSocketError(f"the bot's socket cannot be opened: {error}") from None
    finally:
        os.close(folder)
    if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise SandboxSocketError("the bot put something else than a socket where its socket goes")
    return descriptor
