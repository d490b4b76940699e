"""The command line and the site with the ladder on PostgreSQL (`--db postgresql://...`): bots registered,
a ladder run, its standings, records and export read back, the site serving it; a server that cannot be
reached, or psycopg missing, in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from postgres_support import PostgresServer
from starlette.testclient import TestClient

from arena.cli import main
from arena.ladder.store import LadderStore
from arena.site.app import SiteSettings, create_app
from fiftysix.record import from_json
from fiftysix.replay import replay
from tests.arena.ladder.ladder_support import assert_ladder_invariants


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def test_a_ladder_on_postgresql_from_the_command_line_to_the_site(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    db = postgres.new_database().replace("@", ":hunter2@", 1)  # a password (the server trusts anyone)
    run = arena(
        "ladder", "run", "--db", db, "--sample-bots", "--matches", "8", "--concurrency", "2", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert "Played 8 matches (4 sets rated, 0 faults)" in run.stdout
    assert "hunter2" not in run.stdout + run.stderr  # the password is never shown
    assert ":***@" in run.stderr  # the results' place is named, with the password hidden
    # The bots' logs go beside the ladder: a folder named after the server and database.
    [logs] = tmp_path.glob("*-logs")
    assert logs.name == f"127.0.0.1-{db.rsplit('/', 1)[1]}-logs"
    shown = arena("ladder", "show", "--db", db, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    standings = json.loads(shown.stdout)
    assert sorted(line["bot"] for line in standings) == ["random", "rules"]
    assert all(line["matches"] == 8 for line in standings)
    out = tmp_path / "records.jsonl"
    exported = arena("ladder", "--db", db, "export", "--jsonl", str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 8
    assert all(replay(from_json(record)).complete for record in records)
    store = LadderStore(db)
    try:
        assert_ladder_invariants(store)
    finally:
        store.close()
    with TestClient(create_app(SiteSettings(db))) as client:
        site = client.get("/api/standings")
        assert site.status_code == 200, site.text
        assert sorted(line["bot"] for line in site.json()["standings"]) == ["random", "rules"]
        matches = client.get("/api/matches").json()["matches"]
        assert len(matches) == 8
        assert client.get(f"/api/matches/{matches[0]['id']}").status_code == 200


def test_an_unreachable_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ladder", "show", "--db", "postgresql://arena:secret@127.0.0.1:1/ladder"]) == 1
    error = capsys.readouterr().err
    assert error.startswith(
        "arena ladder show: error: cannot reach postgresql://arena:***@127.0.0.1:1/ladder ("
    )
    assert error.count("\n") == 1
    assert "secret" not in error


def test_psycopg_missing_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    assert main(["bots", "list", "--db", "postgresql://arena@127.0.0.1:1/ladder"]) == 1
    assert capsys.readouterr().err == (
        "arena bots list: error: postgresql://arena@127.0.0.1:1/ladder: a PostgreSQL store needs psycopg:"
        " pip install 'fiftysix-arena[cluster]'\n"
    )
