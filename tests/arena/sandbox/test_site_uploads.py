"""Uploading a bot through the site's management API: the participant's own bot only, started in the
sandbox and checked before it is registered, each upload a new version, bad bundles refused with a 4xx."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_support import random_bot_bundle, require_bubblewrap
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
        first = client.post(url, content=bundle, headers=ann)
        assert first.status_code == 201, first.text
        assert first.json()["upload"]["version"] == 1
        assert first.json()["owner"] == "ann"
        again = client.post(url, content=bundle, headers=ann)
        assert again.status_code == 200, again.text
        assert again.json()["upload"]["version"] == 2
    store = LadderStore(db, read_only=True)
    try:
        assert [(bot.name, bot.owner) for bot in store.registry.bots()] == [("ann", "ann")]
        assert [upload.version for upload in store.uploads.uploads_of("ann")] == [1, 2]
        writes = [(entry.actor, entry.action) for entry in store.access.audit_log(10)]
        assert ("participant:ann", "bot_uploaded") in writes
    finally:
        store.close()


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
