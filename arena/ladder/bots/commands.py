"""How a registered command becomes a bot that answers: its arguments (`{port}`, `{port_file}` or
`{socket}` filled in, `python` meaning the arena's own interpreter), a free port, the port a bot reports in
its port file (read without ever blocking: the bot chose what is there), the socket it made (in the
sandbox: found through the sandbox's root), and the first handshake. Used by
processes.py, which starts the processes, and pool.py, which keeps them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import shlex
import socket
import stat
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, TypeVar

from arena.errors import ArenaError
from arena.runner.connection import HandshakeError, handshake, open_channel
from arena.sandbox.sockets import SandboxSocketError, SocketFinder
from arena.untrusted import safe_text
from fiftysix.v1 import bot_pb2 as pb


class BotStartError(ArenaError, RuntimeError):
    """A local bot that did not start: its process exited, or it never answered the handshake. The
    message is for the host (it may name the log and the command line); `reason` says why without a path
    of the host, for whoever uploaded the bot, and `log_path` is where its output went, when it ran."""

    def __init__(self, message: str, reason: str | None = None, log_path: Path | None = None) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.log_path = log_path


class SandboxUnavailableError(BotStartError):
    """A sandboxed bot that was not started because the sandbox cannot run here: the host's problem, not
    the bot's."""


PORT_FILE_POLL_SECONDS: Final = 0.02
PLACES: Final = ("{port}", "{port_file}", "{socket}")
"""Where a command says how the bot is reached; one of them must be in it."""


@dataclass(frozen=True, slots=True)
class Launch:
    """How the arena starts a registered bot: its command, whether in the sandbox (then it listens on
    `{socket}`), the folder of its uploaded files (the sandbox's /bot; None: a command of the host's),
    the upload version they are (kept with each match's output), and the SHA-256 of the bundle they
    are unpacked from (`folder` is then this machine's cache entry of it, which a `BundleSource` fills
    when it lacks it)."""

    command: str
    sandboxed: bool = False
    folder: Path | None = None
    version: int | None = None
    bundle: str | None = None


class BundleSource(Protocol):
    """Where a machine gets the uploaded bundles its bots start from, by hash: the ladder's store on the
    runner's machine (arena/ladder/uploads.py)."""

    async def provide(self, name: str, launch: Launch) -> None:
        """Make `launch.folder` hold the files of the bundle `launch.bundle` for the bot `name`: at once
        when it does, else fetched, checked against its hash and unpacked there.

        :raises BotStartError: the bundle cannot be had, or is not the bytes of its hash.
        """
        ...

    async def archive(self, name: str, sha256: str) -> bytes:
        """The archive of the bundle `sha256` of the bot `name`, checked against its hash (for another
        machine to unpack: a Ray worker).

        :raises BotStartError: the bundle cannot be had, or is not the bytes of its hash.
        """
        ...


def free_port(port_range: tuple[int, int] | None = None, avoid: Collection[int] = ()) -> int:
    """A TCP port on 127.0.0.1 that is free now and not in `avoid` (ports handed to bots that have not
    bound them yet): any, or one of `port_range` (both ends included), for hosts whose firewall opens
    only some ports.

    :raises BotStartError: when no such port is free.
    """
    if port_range is None:
        for _attempt in range(100):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("127.0.0.1", 0))
                port = int(probe.getsockname()[1])
            if port not in avoid:
                return port
        raise BotStartError("no free port that is not already handed out")
    low, high = port_range
    candidates = [port for port in range(low, high + 1) if port not in avoid]
    random.shuffle(candidates)  # two runs on one host rarely reach for the same port first
    for candidate in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return candidate
    raise BotStartError(f"no free port from {low} to {high}")


def command_arguments(
    command: str, port: int, port_file: Path | None = None, socket: str | None = None
) -> list[str]:
    """The argument list of a registered command: `{port}` becomes `port`, `{port_file}` becomes
    `port_file` (in a command with both, `{port}` is 0: the bot binds any port and reports it), `{socket}`
    becomes `socket`, the socket path a sandboxed bot listens on."""
    if not any(place in command for place in PLACES):
        raise ValueError(
            f"a bot command must contain {{port}} where the port goes, {{port_file}} where the bot "
            f"writes the port it listens on, or {{socket}} where its socket goes, got {command!r}"
        )
    reported = "{port_file}" in command
    file_text = str(port_file if port_file is not None else Path("port"))
    port_text = "0" if reported else str(port)
    socket_text = socket if socket is not None else "bot.sock"
    # Replaced word by word after splitting, so a path with spaces stays one argument.
    arguments = [
        word.replace("{port_file}", file_text).replace("{port}", port_text).replace("{socket}", socket_text)
        for word in shlex.split(command)
    ]
    if arguments and arguments[0] in ("python", "python3"):
        arguments[0] = sys.executable
    return arguments


async def wait_until_ready(
    address: str, timeout: float, process: asyncio.subprocess.Process | None = None, shown: str | None = None
) -> pb.DescribeResponse:
    """The arena's handshake, tried again with backoff until it answers or `timeout` seconds pass (or
    `process` exits); the bot's answer to Describe. The reason of a failure names the address as `shown`
    (default: `address`).

    :raises BotStartError: with the reason.
    """

    def exited() -> str | None:
        if process is not None and process.returncode is not None:
            return f"the bot process exited with status {process.returncode}"
        return None

    channel = open_channel(address)
    try:
        return await handshake(
            channel, shown or address, timeout, attempts=None, give_up=exited, first_delay=0.05
        )
    except HandshakeError as error:
        raise BotStartError(error.detail) from None
    finally:
        await channel.close(grace=None)


async def read_port_file(path: Path, timeout: float, process: asyncio.subprocess.Process) -> int:
    """The port a bot wrote to `path`, waited for up to `timeout` seconds while its process runs; the file
    is removed once read or given up on, so that none is left behind.

    :raises BotStartError: the process exited, the time ran out, or the file holds no port.
    """
    try:
        text = await _wait_for(
            lambda: _read_small_regular_file(path), timeout, process, "wrote no port to its port file"
        )
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    port = port_in(text)
    if port is None:
        raise BotStartError(
            f"the bot wrote {safe_text(text, 40)!r} to its port file, not a port "
            "(decimal digits, 1 to 65535, and at most a newline after them)"
        )
    return port


PORT_FILE_TEXT: Final = re.compile(r"[0-9]{1,5}\n?")
"""What a port file holds (docs/bot-guide.md, "Bots the arena starts: the command")."""


def port_in(text: str) -> int | None:
    """The port a port file's text names: decimal digits, 1 to 65535, optionally ending in one newline
    (as `echo` and most languages' line writers leave it); None for anything else (spaces, signs, other
    digits than ASCII ones), so that what the guide promises is exactly what is accepted."""
    if PORT_FILE_TEXT.fullmatch(text) is None:
        return None
    port = int(text)
    return port if 0 < port < 65536 else None


async def wait_for_socket(path: Path, timeout: float, process: asyncio.subprocess.Process) -> None:
    """Wait up to `timeout` seconds, while its process runs, for the bot's socket at `path`; a symbolic
    link or anything else than a socket there is refused (the bot chose what is there: the arena must not
    be led to connect elsewhere).

    :raises BotStartError: the process exited, the time ran out, or `path` is not a socket.
    """
    mode = await _wait_for(lambda: os.lstat(path).st_mode, timeout, process, "made no socket")
    if not stat.S_ISSOCK(mode):
        raise BotStartError("the bot put something else than a socket where its socket goes")


async def wait_for_sandboxed_socket(info_fd: int, timeout: float, process: asyncio.subprocess.Process) -> int:
    """An O_PATH descriptor of the socket a sandboxed bot made in its own /tmp, waited for up to `timeout`
    seconds while its process runs (`info_fd`: the read end of its bwrap's `--info-fd` pipe, closed here).
    Nothing but a socket is taken, reached by no link the bot made (arena/sandbox/sockets.py).

    :raises BotStartError: the process exited, the time ran out, or the socket cannot be reached.
    """
    finder = SocketFinder(info_fd)
    try:
        return await _wait_for(finder.find, timeout, process, "made no socket")
    except SandboxSocketError as error:
        raise BotStartError(str(error)) from None
    finally:
        finder.close()


_Read = TypeVar("_Read")


async def _wait_for(
    read: Callable[[], _Read], timeout: float, process: asyncio.subprocess.Process, missing: str
) -> _Read:
    """What `read` returns once it stops raising FileNotFoundError, polled while the bot's process runs.

    :raises BotStartError: the process exited, or `timeout` seconds passed ("the bot {missing} ...").
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return read()
        except FileNotFoundError:
            pass
        if process.returncode is not None:
            raise BotStartError(f"the bot process exited with status {process.returncode}")
        if time.monotonic() >= deadline:
            raise BotStartError(f"the bot {missing} within {timeout:g} s")
        await asyncio.sleep(PORT_FILE_POLL_SECONDS)


def _read_small_regular_file(path: Path) -> str:
    """The first bytes of `path`, read without ever blocking the event loop: the bot chose what is there,
    and a FIFO or a device would block a plain open or read for ever.

    :raises BotStartError: when `path` is not a regular file.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as error:  # a symbolic link, a file it may not read...
        raise BotStartError(f"cannot read the bot's port file: {safe_text(error)}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise BotStartError("the bot's port file is not a regular file")
        return os.read(descriptor, 64).decode("ascii", errors="replace")
    finally:
        os.close(descriptor)
