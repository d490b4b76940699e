"""A real PostgreSQL server for the store's tests: Debian's `postgresql` binaries, `initdb` and `pg_ctl`
in a temporary folder as an unprivileged user (PostgreSQL refuses to run as root), listening on a free
TCP port of 127.0.0.1 and on a unix socket in that folder, stopped and removed at the end. Where the
binaries are missing the tests skip, except under CI (CI set), which must install them. A test may stop
the server and start it again on the same port (`stop`, `start`, `restart`), as a host's restart or a
failover does to the ladder's runners and site.

The folder is in memory (/dev/shm) where there is room: a throwaway server (fsync off) needs no disk,
and its databases, one per test, come to a gigabyte or more, whose removal from a disk mounted with
`discard` (as this project's machines' are) took over a minute at the end of the suite."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Final

import pytest

SUPERUSER: Final = "arena"
"""The server's superuser (initdb's --username), trusted without a password on 127.0.0.1 only."""

_UNPRIVILEGED: Final = "nobody"
"""Who runs the server when the tests run as root."""

MEMORY: Final = Path("/dev/shm")
MEMORY_NEEDED: Final = 4 * 1024**3
"""The room in memory the server's folder takes only when there is at least this much free."""


def postgres_bin() -> Path | None:
    """The folder of `initdb` and `pg_ctl`: the newest Debian version installed, or the PATH's."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdecimal() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def require_postgres() -> Path:
    """The binaries' folder; skip without them, fail under CI (which installs `postgresql`)."""
    folder = postgres_bin()
    if folder is None or not (folder / "pg_ctl").exists():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's initdb and pg_ctl are missing; CI must install postgresql")
        pytest.skip("PostgreSQL's initdb and pg_ctl are missing here")
    return folder


def _server_parent() -> Path | None:
    """Where the server's folder goes: in memory when there is room, else the usual temporary folder."""
    try:
        return MEMORY if shutil.disk_usage(MEMORY).free >= MEMORY_NEEDED else None
    except OSError:
        return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """A running server; `new_database()` gives each test an empty database of its own."""

    def __init__(self, host: str, port: int, socket_folder: Path, pg_ctl: list[str] | None = None) -> None:
        self.host = host
        self.port = port
        self.socket_folder = socket_folder
        self._pg_ctl = pg_ctl
        """`pg_ctl -D DATA` as the server's user runs it (None: the server is not this test's to stop)."""
        self._numbers = count(1)

    def stop(self) -> None:
        """Stop the server as a host's restart does (`-m fast`: every connection is cut, every open
        transaction rolled back), and wait until it is down."""
        assert self._pg_ctl is not None
        subprocess.run([*self._pg_ctl, "-m", "fast", "-w", "stop"], check=True, capture_output=True)

    def start(self) -> None:
        """Start the stopped server again, on the same port and folder, and wait until it takes
        connections."""
        assert self._pg_ctl is not None
        options = (
            f"-h {self.host} -p {self.port} -k {self.socket_folder} -c fsync=off -c full_page_writes=off"
        )
        log = self.socket_folder / "server.log"
        subprocess.run(
            [*self._pg_ctl, "-w", "-l", str(log), "-o", options, "start"], check=True, capture_output=True
        )

    def restart(self, down_s: float = 0.0) -> None:
        """Stop the server, leave it down `down_s` seconds, start it again."""
        self.stop()
        time.sleep(down_s)
        self.start()

    def url(self, database: str = "postgres") -> str:
        """The database's URL as a host writes it for `--db` (psycopg 3 is implied)."""
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        name = f"test_{os.getpid()}_{next(self._numbers)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def psql(self, sql: str) -> None:
        """Run `sql` as the superuser through psycopg, outside a transaction (CREATE DATABASE needs it)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(sql.encode())


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a server in a temporary folder; stop it and remove the folder at the end."""
    binaries = require_postgres()
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-", dir=_server_parent()))
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam(_UNPRIVILEGED)
        os.chown(folder, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", _UNPRIVILEGED, "--"]
    data = folder / "data"
    port = _free_port()
    pg_ctl = [*run_as, str(binaries / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run(
            [
                *run_as,
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
        )
        server = PostgresServer("127.0.0.1", port, folder, pg_ctl)
        server.start()
        try:
            yield server
        finally:
            subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], check=False, capture_output=True)
    except subprocess.CalledProcessError as error:
        log = folder / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else error.stderr.decode()[-2000:]
        pytest.fail(f"PostgreSQL did not start: {detail}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
