"""Uploads cannot freeze the site or fill its disk (issue 22), through a real `arena serve`: pages answer
while a bomb unpacks; uploads beyond the bound are refused at once; refused uploads of every kind leave
nothing in the bundles folder nor in the host's temporary folder, and say why without a path of the host;
the quotas per participant's token refuse with a 429 that says which and when it frees, and the host's
token is not limited."""

from __future__ import annotations

import io
import os
import socket
import sqlite3
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sandbox_support import random_bot_bundle, require_bubblewrap
from site_server import MIB, listing, serving, token, zip_bomb

from arena.cli import main
from arena.ladder.store import LadderStore
from arena.ladder.uploads import bundles_folder


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return zip_bomb(tmp_path_factory.mktemp("bomb") / "bomb.zip").read_bytes()


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return random_bot_bundle(tmp_path_factory.mktemp("good")).read_bytes()


def tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def ladder(tmp_path: Path) -> Path:
    db = tmp_path / "arena.db"
    LadderStore(db).close()
    return db


def refusals(db: Path, actor: str) -> list[str]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT detail FROM audit WHERE actor = ? AND action = 'upload_refused' ORDER BY id", (actor,)
        )
        return [str(detail) for (detail,) in rows]


def test_pages_answer_while_bombs_unpack_and_more_uploads_wait_their_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bomb: bytes
) -> None:
    db = ladder(tmp_path)
    ann, bea, cy = (token(db, name, capsys) for name in ("ann", "bea", "cy"))
    bundles = bundles_folder(db)

    def unpacking() -> int:
        return len(list(bundles.glob(".unpacking-*")))

    with serving(db, "--uploads-at-once", "2") as site, ThreadPoolExecutor(2) as pool:
        bombing = [
            pool.submit(site.upload, name, bomb, secret) for name, secret in (("ann", ann), ("bea", bea))
        ]
        deadline = time.monotonic() + 60
        while unpacking() < 2:
            assert not any(future.done() for future in bombing), [future.result() for future in bombing]
            assert time.monotonic() < deadline, "the bombs were never unpacked"
            time.sleep(0.005)
        # While they unpack: a page answers, and other uploads are refused at once, before their body.
        assert site.request("GET", "/api/pools")[0] == 200
        status, answer, headers = site.request("POST", "/api/bots/cy/upload?run=x", b"x", cy)
        assert (status, headers["retry-after"], headers["connection"]) == (503, "10", "close"), answer
        assert "processing 2 uploads already" in answer["error"]
        assert unpacking() == 2, "the page and the refusal waited for the bombs"
        answers = [future.result() for future in bombing]
    assert [status for status, _ in answers] == [400, 400]
    assert all("unpacks to more than 268435456 bytes" in answer["error"] for _, answer in answers)
    assert listing(bundles) == [".lock"]


def test_one_upload_at_a_time_per_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bomb: bytes
) -> None:
    db = ladder(tmp_path)
    ann, host = token(db, "ann", capsys), token(db, "boss", capsys, "--host")
    bundles = bundles_folder(db)
    with serving(db) as site, ThreadPoolExecutor(1) as pool:
        bombing = pool.submit(site.upload, "ann", bomb, ann)
        deadline = time.monotonic() + 60
        while not list(bundles.glob(".unpacking-*")):
            assert not bombing.done(), bombing.result()
            assert time.monotonic() < deadline, "the bomb was never unpacked"
            time.sleep(0.005)
        status, answer, headers = site.request("POST", "/api/bots/ann/upload?run=x", b"x", ann)
        assert (status, headers["retry-after"]) == (429, "5"), answer
        assert "an upload of this token is in progress" in answer["error"]
        assert site.upload("ann", b"junk", host)[0] == 400  # the host's token is not held back
        assert bombing.result()[0] == 400


def test_refused_uploads_of_every_kind_leave_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bomb: bytes, good: bytes
) -> None:
    require_bubblewrap()
    db = ladder(tmp_path)
    names = ["ann", "bea", "cy", "dee", "eve", "fay"]
    tokens = {name: token(db, name, capsys) for name in names}
    crashing = tar_gz({"bot.py": b"import sys\nprint('\\x1b[2J starting')\nraise SystemExit('no luck')\n"})
    bundles = bundles_folder(db)
    with serving(db, "--uploads-at-once", "8") as site:
        status, answer = site.upload("ann", good, tokens["ann"])  # one kept bundle to start with
        assert status == 201, answer
        kept, temporary = listing(bundles), listing(site.tmpdir)
        uploads: list[tuple[str, bytes, str]] = [
            ("bea", bomb, "python%20bot.py"),  # unpacks to more than 256 MiB
            ("cy", b"PK\x03\x04 not really a zip", "python%20bot.py"),  # not an archive
            ("dee", good, "python%20missing.py"),  # the same bytes as ann's, and it does not start
            ("eve", crashing, "python%20bot.py"),  # crashes in the check
            ("fay", tar_gz({"bot.py": b"pass\n" * 1000}), "python%20bot.py"),  # ends without serving
        ]
        with ThreadPoolExecutor(len(uploads) + 1) as pool:
            cut = pool.submit(send_half_a_body, site.port, tokens["ann"])
            answers = list(pool.map(lambda u: site.upload(u[0], u[1], tokens[u[0]], u[2]), uploads))
            cut.result()
        wait_for(lambda: refusals(db, "participant:ann") != [], "the cut upload was never refused")
        assert listing(bundles) == kept  # ann's bundle stays: dee's refusal shares it
        assert listing(site.tmpdir) == temporary
    statuses = [status for status, _ in answers]
    assert statuses == [400, 400, 422, 422, 422], answers
    messages = [answer["error"] for _, answer in answers]
    assert "unpacks to more than" in messages[0]
    assert "neither" in messages[1] or "not a readable .zip" in messages[1]
    assert "its output: " in messages[3]
    assert "\\x1b[2J starting" in messages[3]  # the bot's first lines, escaped
    assert "no luck" in messages[3]
    assert refusals(db, "participant:ann") == ["the bundle did not arrive whole: the connection closed"]
    for message in messages:
        # The interpreter's path may be quoted in the bot's own output (its Python says where it runs
        # from, as every bot in the sandbox can read): no other host path may be.
        shown = message.replace(sys.executable, "PYTHON")
        for path in (str(tmp_path), str(site.tmpdir), "/tmp/"):
            assert path not in shown, message


def send_half_a_body(port: int, secret: str) -> None:
    """An upload whose client goes away mid-body."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        head = (
            "POST /api/bots/ann/upload?run=python%20bot.py HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {secret}\r\nContent-Length: 1000000\r\n\r\n"
        )
        connection.sendall(head.encode() + b"\x1f\x8b" + b"x" * 100_000)
        time.sleep(0.5)


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_quotas_refuse_participants_with_a_429_and_never_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder(tmp_path)
    ann, bea, host = token(db, "ann", capsys), token(db, "bea", capsys), token(db, "boss", capsys, "--host")
    archive = tmp_path / "big.tar.gz"
    archive.write_bytes(tar_gz({"bot.py": os.urandom(MIB)}))
    # bea's bot has a version already (the host's, unchecked): its bundle is over her quota of 1 MiB.
    command = ["bots", "add", "--db", str(db), "bea", "--upload", str(archive), "--run", "python bot.py"]
    assert main([*command, "--owner", "bea", "--no-check"]) == 0
    bundles = bundles_folder(db)
    with serving(db, "--uploads-per-hour", "2", "--upload-quota", "1") as site:
        for _ in range(2):
            assert site.upload("ann", b"not an archive", ann)[0] == 400  # refused, and counted
        status, answer, headers = site.request("POST", "/api/bots/ann/upload?run=x", b"junk", ann)
        assert status == 429
        assert "over the quota of 2 uploads an hour for this token (refused uploads count)" in answer["error"]
        assert "the next is allowed in 60 min" in answer["error"]
        assert 3500 < int(headers["retry-after"]) <= 3600
        for _ in range(3):  # the host is not limited
            assert site.upload("ann", b"not an archive", host)[0] == 400
        status, answer = site.upload("bea", b"junk", bea)  # refused before its body is read
        assert status == 429
        assert "over the quota of 1.0 MiB kept for this token's bots" in answer["error"]
        assert "arena bots prune" in answer["error"]
    assert refusals(db, "participant:bea") == []  # not counted: nothing was read
    kept = listing(bundles)
    # A new bundle that would bring ann over her quota is refused once unpacked, and leaves nothing.
    with serving(db, "--upload-quota", "1") as site:
        status, answer = site.upload("ann", tar_gz({"bot.py": os.urandom(MIB)}), ann)
        assert status == 429, answer
        assert "and this upload" in answer["error"]
        assert listing(bundles) == kept
