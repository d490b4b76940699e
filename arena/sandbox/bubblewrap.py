"""The sandbox of a bot the arena starts: the bubblewrap (`bwrap`) command line that runs it with a
read-only view of the system, its own folder read-only, a private size-capped `/tmp`, no network, its own
PID namespace, and limits on memory, CPU time, processes, file size and open files; and the check that
bubblewrap can run here at all.

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

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

BOT_FOLDER: Final = "/bot"
"""Where the bot's own files are, read-only; its working directory."""
SOCKET_FOLDER: Final = "/run/arena"
"""The one writable host folder the bot sees: where it creates its socket."""
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
    server holds a thread per seat it plays); output is per match, the rest dropped and noted in its log."""

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


def command_line(
    sandbox: Sandbox,
    command: Sequence[str],
    socket_folder: Path,
    bot_folder: Path | None = None,
    uid: int | None = None,
) -> list[str]:
    """The argument list that runs `command` in the sandbox: `bot_folder` (if any) read-only at /bot, its
    working directory; `socket_folder` writable at /run/arena. `uid`: the user id to run as when the arena
    is root (privileged bwrap, then `setpriv`); None when the arena is an ordinary user (a user namespace)."""
    limits = sandbox.limits
    arguments = ["bwrap", "--die-with-parent", "--new-session"]
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
    made.add(Path("/tmp"))
    # After the private /tmp: an installation under /tmp (a virtualenv made there, as CI does) stays seen.
    for shared in sandbox.shared_folders():
        arguments += [*_folders_above(shared, made), "--ro-bind", str(shared), str(shared)]
    if bot_folder is not None:
        arguments += ["--ro-bind", str(bot_folder), BOT_FOLDER, "--chdir", BOT_FOLDER]
    else:
        arguments += ["--chdir", "/tmp"]
    arguments += [*_folders_above(Path(SOCKET_FOLDER), made), "--bind", str(socket_folder), SOCKET_FOLDER]
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
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    probe = command_line(Sandbox(), ["true"], folder, uid=SANDBOX_UIDS[0] if as_root else None)
    try:
        finished = subprocess.run(
            probe, env=ENVIRONMENT, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False
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
