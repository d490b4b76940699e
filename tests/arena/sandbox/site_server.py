"""A real `arena serve` for the uploads' tests: the command itself in a process of its own (uvicorn, the
ladder's SQLite file), its temporary folder pointed at one of the test's, and plain HTTP to it."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from arena.cli import main

ROOT: Final = Path(__file__).resolve().parents[3]
MIB: Final = 1024 * 1024


@dataclass
class Site:
    """A running `arena serve`: where it listens, its ladder (a file, or a PostgreSQL URL) and its
    temporary folder."""

    port: int
    db: Path | str
    tmpdir: Path
    process: subprocess.Popen[str]

    def request(
        self, method: str, path: str, body: bytes | None = None, token: str | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        """The status, the JSON answer and the headers of one request."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            text = answer.read()
            return answer.status, json.loads(text), {key.lower(): value for key, value in answer.getheaders()}
        finally:
            connection.close()

    def upload(self, name: str, body: bytes, token: str, run: str = "python%20bot.py") -> tuple[int, Any]:
        status, answer, _ = self.request("POST", f"/api/bots/{name}/upload?run={run}", body, token)
        return status, answer


def token(db: Path | str, name: str, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    """A new token for `name` (`arena tokens add`)."""
    capsys.readouterr()
    assert main(["tokens", "--db", str(db), "add", name, *flags]) == 0
    return capsys.readouterr().out.split()[-1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path | str, *options: str, cwd: Path = ROOT) -> Iterator[Site]:
    """`arena serve` on `db` with `options`, its TMPDIR a short folder of its own (a socket's path must
    stay short), working in `cwd` (where a PostgreSQL ladder's bundles folder is), until the block ends."""
    tmpdir = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))
    port = free_port()
    environment = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "arena.cli", "serve", "--db", str(db), "--port", str(port), *options]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=cwd
    )
    site = Site(port, db, tmpdir, process)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                site.request("GET", "/api/pools")
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the site did not answer"
                time.sleep(0.1)
        yield site
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=20)
        finally:
            process.kill()
        with contextlib.suppress(OSError):
            os.rmdir(tmpdir)  # empty: everything an upload made there is gone
        assert "Traceback" not in err, err


def zip_bomb(path: Path, unpacked_mib: int = 320) -> Path:
    """A zip of a few hundred KB that unpacks to `unpacked_mib` MiB of zeros, in files of 64 MiB."""
    zeros = bytes(MIB)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
        for number in range(unpacked_mib // 64):
            with bundle.open(f"zeros-{number}", "w", force_zip64=True) as member:
                for _ in range(64):
                    member.write(zeros)
    return path


def listing(folder: Path) -> list[str]:
    """Everything under `folder`, as paths relative to it."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []
