"""Every command that starts bots refuses a sandbox that would show them the ladder's files (the sandbox
shows bots the arena's Python installation read-only, so a ladder kept inside it would be open to all):
`ladder run`, `sprt`, `tournament`, the check of `bots add --command` and `--upload`, `serve` and an
upload through the site's API. The installation holding the ladder is played by showing bots the
ladder's folder besides it (`exposed`). And for real, in bubblewrap: under `arena tournament` an uploaded
bot that tries to read the ladder's file and its bundles is stopped, its matches forfeited."""

from __future__ import annotations

import shlex
import subprocess
import tarfile
from pathlib import Path
from typing import Final

import pytest
import uvicorn
from sandbox_support import ROOT, python_only, random_bot_bundle, require_bubblewrap
from starlette.testclient import TestClient

from arena.cli import main
from arena.ladder.bots import free_port
from arena.ladder.store import LadderStore
from arena.sandbox.bubblewrap import Sandbox
from arena.site.app import SiteSettings, create_app
from tests.cli_in_process import run_here

RULE_BOT: Final = "python -m sample_bots.rule_bot --port 0 --port-file {port_file}"
QUICK: Final = ("--deal-cap", "1", "--decision-ms", "2000")
REFUSED: Final = "would show bots"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A ladder with two sample bots, registered without being started."""
    path = tmp_path / "ladder" / "arena.db"
    path.parent.mkdir()
    for name in ("a", "b"):
        assert main(["bots", "add", name, "--command", RULE_BOT, "--no-check", "--db", str(path)]) == 0
    return path


@pytest.fixture
def exposed(db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sandbox shows bots the ladder's folder, as it would if the arena's Python installation held it."""
    shared = Sandbox.shared_folders
    monkeypatch.setattr(Sandbox, "shared_folders", lambda self: (*shared(self), db.parent.resolve()))
    return db


def registered(db: Path) -> list[tuple[str, int]]:
    """Each bot registered and how many versions it was uploaded in."""
    store = LadderStore(db, read_only=True)
    try:
        return [(bot.name, len(store.uploads.uploads_of(bot.name))) for bot in store.registry.bots()]
    finally:
        store.close()


def refused(run: subprocess.CompletedProcess[str], command: str) -> None:
    """A usage error in one line, naming the folder shown and the ladder's file in it."""
    assert run.returncode == 2, run.stdout + run.stderr
    line = run.stderr.strip()
    assert line.startswith(f"arena {command}: error: the sandbox would show bots "), line
    assert "which holds" in line
    assert "move the ladder's file out of the arena's Python installation" in line
    assert "\n" not in line


def test_ladder_run_refuses(exposed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_here(capsys, "ladder", "run", "--matches", "1", *QUICK, "--db", str(exposed))
    refused(run, "ladder run")


def test_sprt_refuses(exposed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sprt = ("sprt", "a", "b", "--elo0", "0", "--elo1", "10", "--max-sets", "1")
    refused(run_here(capsys, *sprt, *QUICK, "--db", str(exposed)), "sprt")


def test_tournament_refuses(exposed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tournament = ("tournament", "--format", "round-robin", "--bots", "a,b")
    refused(run_here(capsys, *tournament, *QUICK, "--db", str(exposed)), "tournament")
    assert not list(exposed.parent.glob("arena.db-logs/*/*.log"))  # no bot was started


def test_registering_a_command_refuses_to_check_it(exposed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_here(capsys, "bots", "add", "c", "--command", RULE_BOT, "--db", str(exposed))
    refused(run, "bots add")
    assert registered(exposed) == [("a", 0), ("b", 0)]


def test_registering_an_upload_refuses_to_check_it(
    exposed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = random_bot_bundle(tmp_path)
    upload = ("--upload", str(archive), "--run", "python bot.py")
    refused(run_here(capsys, "bots", "add", "up", *upload, "--db", str(exposed)), "bots add")
    refused(run_here(capsys, "bots", "update", "a", *upload, "--db", str(exposed)), "bots update")
    assert registered(exposed) == [("a", 0), ("b", 0)]
    assert not any((exposed.parent / "arena.db.bundles").glob("*/bot.py"))  # the bundle went too


def test_the_site_refuses_to_serve(
    exposed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: None)  # it would serve until stopped
    run = run_here(capsys, "serve", "--port", str(free_port()), "--db", str(exposed))
    refused(run, "serve")


def test_an_upload_through_the_site_is_refused_unchecked(
    exposed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["tokens", "--db", str(exposed), "add", "ann"]) == 0
    token = capsys.readouterr().out.split()[-1]
    bundle = random_bot_bundle(tmp_path).read_bytes()
    with TestClient(create_app(SiteSettings(exposed))) as client:
        answer = client.post(
            "/api/bots/ann/upload?run=python%20bot.py",
            content=bundle,
            headers={"Authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 500, answer.text
    assert answer.json()["error"].endswith("its sandbox would show bots the ladder's files")
    assert str(tmp_path) not in answer.text  # the participant is told no path of the host
    assert registered(exposed) == [("a", 0), ("b", 0)]
    assert not any((exposed.parent / "arena.db.bundles").glob("*/bot.py"))


def test_a_bot_under_a_tournament_cannot_read_the_ladder(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guard's other half, in bubblewrap: where the sandbox does not show it the ladder's folder, an
    uploaded bot that opens the ladder's file and the bundles at its first decision fails, and forfeits."""
    require_bubblewrap()
    archive = db.parent.parent / "reader.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(ROOT / "tests/bots/sandbox_bot.py", "bot.py")
    targets = f"{db},{db.parent / 'arena.db.bundles'}"
    run = f"python bot.py --attack read --target {shlex.quote(targets)}"
    add = ("bots", "add", "reader", "--upload", str(archive), "--run", run, "--no-check", "--db", str(db))
    assert run_here(capsys, *add).returncode == 0
    tournament = (
        "tournament",
        "--format",
        "gauntlet",
        "--bots",
        "reader,a",
        "--event",
        "guard",
        "--db",
        str(db),
    )
    played = run_here(capsys, *tournament, *QUICK)
    assert played.returncode == 0, played.stderr
    assert "Played 2 matches (1 of 1 sets rated, 2 faults)" in played.stdout
    logs = "".join(
        path.read_text(errors="replace") for path in db.parent.glob("arena.db-logs/*/reader-*.log")
    )
    assert "FileNotFoundError" in logs or "PermissionError" in logs
