"""The sandbox itself, without the arena: what a program inside it can and cannot do, both ways it runs
(an arena running as an ordinary user: bwrap in a user namespace; an arena running as root: privileged
bwrap, then a user id of the bot's own). The ordinary-user case runs as `nobody` when the tests run as
root, so it is tested here either way. And `arena bots add --upload`: refused, in one line, where
bubblewrap cannot run, unless told `--sandbox off`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest
from sandbox_support import require_bubblewrap

from arena.cli import main
from arena.sandbox import bubblewrap
from arena.sandbox.bubblewrap import Limits, Sandbox

MIB: Final = 1024 * 1024
LIMITS: Final = Limits(memory_bytes=256 * MIB, cpu_seconds=10, processes=16, tmp_bytes=4 * MIB)
SYSTEM_PYTHON: Final = Path("/usr/bin/python3")
NOBODY: Final = 65534

PROBE: Final = r"""
import json, os, signal, socket, sys, time
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
port = int(sys.argv[1])
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = "done"
    except BaseException as error:
        results[name] = type(error).__name__
attempt("host loopback", lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
attempt("internet", lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
attempt("read /etc/shadow", lambda: open("/etc/shadow").read())
attempt("read /etc/passwd", lambda: open("/etc/passwd").read())
for folder in ("/", "/bot", "/usr", "/etc", "/dev", "/run", "/proc", "/tmp"):
    attempt("write " + folder, lambda: open(os.path.join(folder, "evil"), "w").write("x"))
attempt("fill /tmp", lambda: open("/tmp/big", "wb").write(b"0" * (8 * 1024 * 1024)))
attempt("8 GB", lambda: bytearray(8 * 1024 ** 3))
attempt("own files", lambda: open("/bot/mine.txt").read())
def user_namespace():
    import ctypes
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare")
attempt("user namespace", user_namespace)
import ctypes, fcntl, platform, sqlite3
libc = ctypes.CDLL(None, use_errno=True)
def succeeded(result):
    if result < 0:
        raise OSError(ctypes.get_errno(), "refused")
# KEYCTL_GET_KEYRING_ID of the session keyring, by machine
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
attempt("keyring", lambda: succeeded(libc.syscall(keyctl, 0, -3, 0)))
attempt("inotify", lambda: succeeded(libc.inotify_init1(0)))
if platform.machine() == "x86_64":
    attempt("x32 system call", lambda: succeeded(libc.syscall(0x40000000 | 39)))  # getpid
def lock():
    with open("/bot/mine.txt") as file:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.lockf(file, fcntl.LOCK_SH | fcntl.LOCK_NB)
attempt("lock", lock)
def who_locks():
    with open("/bot/mine.txt") as file:
        fcntl.fcntl(file, fcntl.F_GETLK, bytes(32))
attempt("who locks", who_locks)
def database():
    if os.path.exists("/tmp/big"):
        os.remove("/tmp/big")  # the full /tmp of "fill /tmp"
    with sqlite3.connect("/tmp/bot.db") as db:
        db.execute("CREATE TABLE seen (card TEXT)")
        db.execute("INSERT INTO seen VALUES ('JH')")
    assert sqlite3.connect("/tmp/bot.db").execute("SELECT card FROM seen").fetchall() == [("JH",)]
attempt("database", database)
children = []
try:
    for _ in range(100):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        children.append(pid)
except OSError:
    pass
results["processes"] = len(children)
results["pid"] = os.getpid()
results["uid"] = os.getuid()
results["environment"] = sorted(os.environ)
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines())
keys = ("CapInh", "CapPrm", "CapEff", "CapAmb", "NoNewPrivs")
results["status"] = {key: status[key].strip() for key in keys}
print(json.dumps(results))
"""


@pytest.fixture
def bot_folder() -> Iterator[Path]:
    """A bot folder that `nobody` can reach (pytest's own folders are root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="arena-sandbox-test-"))
    base.chmod(0o755)
    bot = base / "bot"
    bot.mkdir(mode=0o755)
    (bot / "mine.txt").write_text("mine")
    (bot / "mine.txt").chmod(0o644)
    yield bot
    shutil.rmtree(base)


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _ways() -> list[tuple[str, int | None, Callable[[], None] | None]]:
    if os.geteuid() != 0:
        return [("ordinary user", None, None)]
    return [("ordinary user", None, _as_nobody), ("root", bubblewrap.SANDBOX_UIDS[7], None)]


@pytest.mark.parametrize(("way", "uid", "become"), _ways(), ids=[way for way, _, _ in _ways()])
def test_inside_the_sandbox(
    bot_folder: Path, way: str, uid: int | None, become: Callable[[], None] | None
) -> None:
    require_bubblewrap()
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 to probe the sandbox with")
    bot = bot_folder
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    sandbox = Sandbox(LIMITS, share_arena_python=False)
    probe = [str(SYSTEM_PYTHON), "-c", PROBE, str(listener.getsockname()[1])]
    with bubblewrap.filter_descriptor() as filter_fd:
        finished = subprocess.run(
            bubblewrap.command_line(sandbox, probe, bot, uid, filter_fd=filter_fd),
            env={**bubblewrap.ENVIRONMENT, "SECRET_TOKEN": "x"} if become is None else bubblewrap.ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=become,
            check=False,
            pass_fds=(filter_fd,),
        )
    assert finished.returncode == 0, finished.stderr
    results = json.loads(finished.stdout)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    refused = [
        "host loopback",
        "internet",
        "read /etc/shadow",
        "read /etc/passwd",
        "write /",
        "write /bot",
        "write /usr",
        "write /etc",
        "write /dev",
        "write /run",
        "write /proc",
        "fill /tmp",
        "8 GB",
        "user namespace",
        "keyring",
        "inotify",
        "who locks",
        *(["x32 system call"] if "x32 system call" in results else []),
    ]
    assert {name: results[name] for name in refused if results[name] == "done"} == {}
    assert results["write /tmp"] == "done"
    assert results["own files"] == "done"
    assert results["lock"] == "done"  # granted, though not taken: no other process sees it
    assert results["database"] == "done"
    assert 0 < results["processes"] < LIMITS.processes
    assert results["pid"] < 10  # its own PID namespace
    assert results["uid"] != 0
    assert "SECRET_TOKEN" not in results["environment"]
    assert results["status"] == {
        "CapInh": "0000000000000000",
        "CapPrm": "0000000000000000",
        "CapEff": "0000000000000000",
        "CapAmb": "0000000000000000",
        "NoNewPrivs": "1",
    }
    assert not (bot / "evil").exists()


def test_the_command_line_keeps_the_bot_apart() -> None:
    """The parts of the bwrap command line that each guarantee rests on."""
    arguments = bubblewrap.command_line(Sandbox(), ["run"], Path("/b"), uid=None, filter_fd=7, info_fd=8)
    text = " ".join(arguments)
    for part in (
        "--seccomp 7",
        "--info-fd 8",
        "--unshare-all --unshare-user --disable-userns",
        "--die-with-parent",
        "--ro-bind /b /bot",
        "--tmpfs /tmp --perms 1777 --dir /tmp/arena",
        "--remount-ro /dev --remount-ro /",
        "--nproc=64",
        "-- run",
    ):
        assert part in text
    assert "--bind" not in arguments  # no host folder is writable to it: it writes in its /tmp alone
    as_root = " ".join(bubblewrap.command_line(Sandbox(), ["run"], None, uid=3_000_123, filter_fd=7))
    assert "--seccomp 7" in as_root
    assert "--unshare-net" in as_root
    assert "setpriv --reuid=3000123 --regid=3000123 --clear-groups --inh-caps=-all --no-new-privs" in as_root
    assert "--unshare-user --disable-userns --die-with-parent --dev-bind / / -- prlimit" in as_root
    with pytest.raises(ValueError, match="processes"):
        Limits(processes=1)
    with pytest.raises(ValueError, match="no system call filter for riscv64"):
        bubblewrap.system_call_filter("riscv64")


def test_a_shared_folder_may_not_show_the_ladder(tmp_path: Path) -> None:
    sandbox = Sandbox(shared=(tmp_path,), share_arena_python=False)
    with pytest.raises(ValueError, match="holds"):
        sandbox.check_hidden([tmp_path / "arena.db"])
    sandbox.check_hidden([tmp_path.parent / "elsewhere.db"])


def _upload(folder: Path) -> Path:
    source = folder / "bot.py"
    source.write_text("print('a bot')\n")
    archive = folder / "bot.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, "bot.py")
    return archive


def test_an_upload_is_refused_where_bubblewrap_cannot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bubblewrap, "unavailable_reason", lambda as_root=None: "bubblewrap is not installed")
    archive, db = _upload(tmp_path), tmp_path / "arena.db"
    status = main(["bots", "add", "up", "--upload", str(archive), "--run", "python bot.py", "--db", str(db)])
    error = capsys.readouterr().err.strip()
    assert status == 1
    assert error.count("\n") == 0
    assert error.startswith("arena bots add: error: bot 'up' runs in the sandbox, but bubblewrap is not")
    assert "--sandbox off" in error
    assert "up" not in capsys.readouterr().out
    assert main(["bots", "list", "--db", str(db)]) == 0
    assert "up" not in capsys.readouterr().out


def test_usage_errors_of_uploads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive, db = str(_upload(tmp_path)), str(tmp_path / "arena.db")
    cases = [
        (["--upload", archive], "--run CMD goes with --upload"),
        (["--upload", archive, "--run", "python bot.py --port {port}"], "not on a port"),
        (["127.0.0.1:5000", "--sandbox", "on"], "--sandbox is for bots the arena starts"),
        (["--command", "python bot.py --port {port}", "--sandbox", "on"], "needs {socket}"),
        (["127.0.0.1:5000", "--upload", archive, "--run", "x"], "give one of"),
    ]
    for extra, problem in cases:
        assert main(["bots", "add", "b", *extra, "--db", db]) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("arena bots add: error: ")
        assert problem in error
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.py")
        tar.addfile(info)
    assert main(["bots", "add", "b", "--upload", str(evil), "--run", "python bot.py", "--db", db]) == 1
    assert "leads out of the bundle" in capsys.readouterr().err
    assert not (tmp_path / "escape.py").exists()


def test_a_ladder_warns_at_once_when_its_sandboxed_bots_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    archive, db = str(_upload(tmp_path)), str(tmp_path / "arena.db")
    for name in ("a", "b"):
        command = ["bots", "add", name, "--upload", archive, "--run", "python bot.py", "--no-check"]
        assert main([*command, "--db", db]) == 0
    monkeypatch.setattr(bubblewrap, "unavailable_reason", lambda as_root=None: "bubblewrap is not installed")
    assert main(["ladder", "run", "--matches", "1", "--duration", "1s", "--db", db]) == 0
    warning = [line for line in capsys.readouterr().err.splitlines() if line.startswith("arena ladder run:")]
    assert warning == [
        "arena ladder run: warning: 2 bots run in the sandbox (a, b), but bubblewrap is not installed; they "
        "will not start (register them with --sandbox off only if you trust their code)"
    ]


def test_a_bot_past_its_cpu_seconds_is_killed(bot_folder: Path) -> None:
    require_bubblewrap()
    uid = bubblewrap.SANDBOX_UIDS[8] if os.geteuid() == 0 else None
    sandbox = Sandbox(Limits(cpu_seconds=1), share_arena_python=False)
    spin = ["/bin/sh", "-c", "while :; do :; done"]
    started = time.monotonic()
    with bubblewrap.filter_descriptor() as filter_fd:
        finished = subprocess.run(
            bubblewrap.command_line(sandbox, spin, bot_folder, uid, filter_fd=filter_fd),
            env=bubblewrap.ENVIRONMENT,
            capture_output=True,
            timeout=60,
            check=False,
            pass_fds=(filter_fd,),
        )
    assert finished.returncode != 0
    assert time.monotonic() - started < 30


def test_a_python_installed_under_tmp_stays_seen_over_the_private_tmp() -> None:
    """A virtualenv made in /tmp (as CI may make it) is bound after the private /tmp, not hidden by it."""
    venv = Path(tempfile.mkdtemp(prefix="arena-venv-", dir="/tmp"))
    try:
        sandbox = Sandbox(shared=(venv,), share_arena_python=False)
        line = bubblewrap.command_line(sandbox, ["true"], filter_fd=3)
        private_tmp = line.index("--tmpfs")
        bound = [
            index for index, word in enumerate(line) if word == "--ro-bind" and line[index + 1] == str(venv)
        ]
        assert len(bound) == 1
        assert bound[0] > private_tmp
    finally:
        venv.rmdir()
