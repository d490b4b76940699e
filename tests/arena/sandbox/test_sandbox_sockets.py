"""The arena reaches a sandboxed bot's socket in the bot's own /tmp through the sandbox's root
(arena/sandbox/sockets.py), both ways the sandbox runs (an arena running as an ordinary user, as `nobody`
when the tests run as root; an arena running as root), and is never led elsewhere by what the bot put
there: a symbolic link to a socket of the host, a file, its socket folder replaced by a link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest
from sandbox_support import require_bubblewrap

from arena.sandbox import bubblewrap

ROOT: Final = Path(__file__).resolve().parents[3]
SYSTEM_PYTHON: Final = Path("/usr/bin/python3")
NOBODY: Final = 65534

BOT: Final = r"""
import os, socket, sys, time
what, host_socket = sys.argv[1], sys.argv[2]
path = "/tmp/arena/bot.sock"
def listen():
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen()
    connection, _ = listener.accept()
    connection.sendall(b"bot")
if what == "socket":
    listen()
elif what == "link":
    os.symlink(host_socket, path)
elif what == "file":
    open(path, "w").close()
elif what == "folder link":
    try:
        os.rmdir("/tmp/arena")
    except OSError:  # not its to remove: then its own socket, as it should
        listen()
    else:
        os.symlink(os.path.dirname(host_socket), "/tmp/arena")
time.sleep(60)
"""

ARENA: Final = r"""
import json, os, socket, subprocess, sys, threading, time
sys.path.insert(0, sys.argv[1])
from arena.sandbox import bubblewrap, sockets
what, folder, uid = sys.argv[2], sys.argv[3], None if sys.argv[4] == "-" else int(sys.argv[4])
host_socket = os.path.join(folder, "host", "bot.sock")
os.mkdir(os.path.dirname(host_socket))
host = socket.socket(socket.AF_UNIX)
host.bind(host_socket)
host.listen()
def serve_host():
    while True:
        connection, _ = host.accept()
        connection.sendall(b"host")
threading.Thread(target=serve_host, daemon=True).start()
sandbox = bubblewrap.Sandbox(bubblewrap.Limits(tmp_bytes=1024 * 1024), share_arena_python=False)
info_read, info_write = os.pipe()
with bubblewrap.filter_descriptor() as filter_fd:
    arguments = bubblewrap.command_line(
        sandbox, [sys.executable, "-c", sys.argv[5], what, host_socket], None, uid,
        filter_fd=filter_fd, info_fd=info_write,
    )
    process = subprocess.Popen(arguments, env=bubblewrap.ENVIRONMENT, pass_fds=(filter_fd, info_write))
os.close(info_write)
finder = sockets.SocketFinder(info_read)
deadline = time.monotonic() + 10
result = "missing"
try:
    while time.monotonic() < deadline:
        try:
            descriptor = finder.find()
        except FileNotFoundError:
            time.sleep(0.02)
            continue
        except sockets.SandboxSocketError as error:
            result = f"refused: {error}"
            break
        client = socket.socket(socket.AF_UNIX)
        client.connect(sockets.address(descriptor).removeprefix("unix:"))
        result = client.recv(10).decode()
        break
finally:
    finder.close()
    process.kill()
    process.wait()
print(json.dumps(result))
"""


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder of the host that `nobody` can write in (pytest's own folders are root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="arena-sockets-test-"))
    base.chmod(0o777)
    yield base
    shutil.rmtree(base)


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _ways() -> list[tuple[str, int | None, Callable[[], None] | None]]:
    if os.geteuid() != 0:
        return [("ordinary user", None, None)]
    return [("ordinary user", None, _as_nobody), ("root", bubblewrap.SANDBOX_UIDS[30], None)]


CASES: Final = [
    # what the bot puts where its socket goes, then what the arena reaches, each way
    ("socket", {"ordinary user": "bot", "root": "bot"}),
    ("link", {"ordinary user": "refused", "root": "refused"}),
    ("file", {"ordinary user": "refused", "root": "refused"}),
    # As root the socket folder is root's, in the sticky /tmp: the bot cannot replace it at all.
    ("folder link", {"ordinary user": "refused", "root": "bot"}),
]


@pytest.mark.parametrize(("way", "uid", "become"), _ways(), ids=[way for way, _, _ in _ways()])
@pytest.mark.parametrize(("what", "reached"), CASES, ids=[what for what, _ in CASES])
def test_the_arena_reaches_the_bot_s_socket_and_nothing_else(
    folder: Path,
    way: str,
    uid: int | None,
    become: Callable[[], None] | None,
    what: str,
    reached: dict[str, str],
) -> None:
    require_bubblewrap()
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 to run the arena's side with")
    who = "-" if uid is None else str(uid)
    finished = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", ARENA, str(ROOT), what, str(folder), who, BOT],
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=become,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout)
    assert result.split(":")[0] == reached[way], result
