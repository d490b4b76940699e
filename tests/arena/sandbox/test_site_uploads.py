"""Uploading a bot through the site's management API: the participant's own bot only, started in the
sandbox and checked before it is registered (the answer holds the check's report, kept passed or
refused; a bot that dies inside Describe is said to have crashed, with its first lines of output), each
upload a new version, bad bundles refused with a 4xx."""

from __future__ import annotations

import tarfile
from pathlib import Path

import describe_crash_bot
import pytest
from sandbox_support import ROOT, python_only, random_bot_bundle, require_bubblewrap
from starlette.testclient import TestClient

from arena.cli import main
from arena.ladder.store import LadderStore
from arena.site.app import SiteSettings, create_app


def token(db: Path, name: str, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    capsys.readouterr()
    assert main(["tokens", "--db", str(db), "add", name, *flags]) == 0
    return capsys.readouterr().out.split()[-1]


def test_a_participant_uploads_their_bot_and_a_new_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_bubblewrap()
    db = tmp_path / "arena.db"
    LadderStore(db).close()
    ann = {"Authorization": f"Bearer {token(db, 'ann', capsys)}"}
    bundle = random_bot_bundle(tmp_path).read_bytes()
    url = "/api/bots/ann/upload?run=python%20bot.py"
    with TestClient(create_app(SiteSettings(db))) as client:
        assert client.post(url, content=bundle).status_code == 401
        assert (
            client.post("/api/bots/bea/upload?run=python%20bot.py", content=bundle, headers=ann).status_code
            == 403
        )
        assert client.post("/api/bots/ann/upload", content=bundle, headers=ann).status_code == 400  # no run
        assert client.post(url, content=b"", headers=ann).status_code == 400
        garbage = client.post(url, content=b"not an archive", headers=ann)
        assert garbage.status_code == 400
        assert "error" in garbage.json()
        refused = client.post(
            "/api/bots/ann/upload?run=python%20bot.py%20--port%20{port}", content=bundle, headers=ann
        )
        assert refused.status_code == 400
        broken = client.post("/api/bots/ann/upload?run=python%20missing.py", content=bundle, headers=ann)
        assert broken.status_code == 422  # started in the sandbox, did not answer: not registered
        crashing = client.post(url, content=crash_bundle(tmp_path).read_bytes(), headers=ann)
        assert crashing.status_code == 422
        check = crashing.json()["check"]  # the report, item by item, kept for ann to read again
        assert (check["ok"], check["version"], check["owner"]) == (False, None, "ann")
        [item] = check["items"]
        assert item["status"] == "FAIL"
        assert (
            "the bot at unix:/tmp/arena/bot.sock closed the connection during Describe: did it crash?"
            in (item["reason"])
        )
        assert describe_crash_bot.LAST_WORDS in item["output"]  # its first lines
        assert describe_crash_bot.LAST_WORDS in crashing.json()["error"]
        assert str(tmp_path) not in crashing.text  # no path of the host
        assert "/proc/" not in crashing.text
        first = client.post(url, content=bundle, headers=ann)
        assert first.status_code == 201, first.text
        assert first.json()["upload"]["version"] == 1
        assert first.json()["owner"] == "ann"
        passed = first.json()["check"]
        assert (passed["ok"], passed["version"], passed["id"]) == (True, 1, check["id"] + 1)
        assert passed["failed"] == 0
        again = client.post(url, content=bundle, headers=ann)
        assert again.status_code == 200, again.text
        assert again.json()["upload"]["version"] == 2
    store = LadderStore(db, read_only=True)
    try:
        assert [(bot.name, bot.owner) for bot in store.registry.bots()] == [("ann", "ann")]
        assert [upload.version for upload in store.uploads.uploads_of("ann")] == [1, 2]
        kept = store.checks.checks_by("ann")
        assert [(one.version, one.passed) for one in kept] == [
            (2, True),
            (1, True),
            (None, False),
            (None, False),
        ]
        writes = [(entry.actor, entry.action) for entry in store.access.audit_log(10)]
        assert ("participant:ann", "bot_uploaded") in writes
    finally:
        store.close()


def crash_bundle(folder: Path) -> Path:
    """A bundle whose bot dies inside Describe (tests/bots/describe_crash_bot.py), with the game's stubs."""
    archive = folder / "crash.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ROOT / "fiftysix", "fiftysix", filter=python_only)
        tar.add(describe_crash_bot.__file__, "bot.py")
    return archive


def test_a_bundle_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    LadderStore(db).close()
    host = {"Authorization": f"Bearer {token(db, 'boss', capsys, '--host')}"}
    with TestClient(create_app(SiteSettings(db))) as client:
        headers = {**host, "Content-Length": str(65 * 1024 * 1024)}
        answer = client.post("/api/bots/ann/upload?run=python%20bot.py", content=b"x", headers=headers)
        assert answer.status_code == 413
        assert "over" in answer.json()["error"]
