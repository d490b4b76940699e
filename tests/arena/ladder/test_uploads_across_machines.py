"""Issue 26's bundles in the store, end to end with real parts on SQLite and PostgreSQL: a bot uploaded
through `arena serve` (a process of its own, in a working folder of its own) is played by `arena ladder
run` (another process, in another working folder) after the site's bundles folder is gone, so the runner
fetched it from the database; and one whose chunk in the database was tampered with is refused in one
line and never started, while the rest of the ladder plays on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import text

from arena.ladder.store import LadderStore
from sdk import BotServer
from tests.arena.ladder.upload_support import arena, machine, upload_through_the_site
from tests.arena.sandbox.sandbox_support import require_bubblewrap


def test_a_bundle_uploaded_to_the_site_is_played_by_a_runner_that_never_saw_its_folder(
    database: str,
    servers: list[BotServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bubblewrap()
    sha256 = upload_through_the_site(database, tmp_path, capsys, monkeypatch)
    store = LadderStore(database)
    try:
        store.registry.add_bot("rival", address=f"127.0.0.1:{servers[0].port}")
    finally:
        store.close()
    runner_folder = machine(tmp_path, "runner", database, monkeypatch)
    assert not (runner_folder / sha256).exists()
    run = ("ladder", "run", "--db", database, "--matches", "2", "--deal-cap", "1", "--concurrency", "2")
    played = arena(tmp_path / "runner", *run, "--bot-memory", "512", "--bot-processes", "48")
    assert played.returncode == 0, played.stderr[-3000:]
    assert "Played 2 matches (1 sets rated, 0 faults)" in played.stdout, played.stdout
    assert "Traceback" not in played.stderr
    # The runner fetched the bundle into its own machine's folder, and started ann from it in both
    # rotations (what each seat of ann wrote came back with its version).
    assert sorted(path.name for path in (runner_folder / sha256).iterdir()) == [
        "bot.py",
        "fiftysix",
        "sample_bots",
        "sdk",
    ]
    store = LadderStore(database)
    try:
        outputs = [store.outputs.of_match(match.id) for match in store.matches.finished()]
    finally:
        store.close()
    seats = [[(output.bot, output.version) for output in match] for match in outputs]
    assert seats == [[("ann", 1)] * 2] * 2
    if runner_folder != machine(tmp_path, "site", database, monkeypatch):  # a server database
        assert not machine(tmp_path, "site", database, monkeypatch).exists()  # the site's stayed gone


def test_a_tampered_bundle_is_refused_in_one_line_and_its_bot_never_starts(
    database: str,
    servers: list[BotServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bubblewrap()
    sha256 = upload_through_the_site(database, tmp_path, capsys, monkeypatch)
    store = LadderStore(database)
    try:
        store.file._conn.execute(
            text("UPDATE bundle_chunks SET data = :data WHERE sha256 = :sha256 AND seq = 0"),
            {"data": b"\x1f\x8b" + os.urandom(1000), "sha256": sha256},
        )
        for number, server in enumerate(servers[:2]):
            store.registry.add_bot(f"rival{number}", address=f"127.0.0.1:{server.port}")
        name = store.name
    finally:
        store.close()
    runner_folder = machine(tmp_path, "runner", database, monkeypatch)
    # Four matches: two sets, so that ann, the least played after a first set without it, is tried.
    run = ("ladder", "run", "--db", database, "--matches", "4", "--deal-cap", "1", "--down-after", "1")
    played = arena(tmp_path / "runner", *run, "--log-level", "warning")
    assert played.returncode == 0, played.stderr[-3000:]
    assert "Traceback" not in played.stderr
    refused = (
        f"the bundle {sha256[:12]} of bot 'ann' from {name} was refused: the bundle's bytes are not "
        f"those of its hash (expected {sha256[:12]}, got "
    )
    lines = [line for line in played.stdout.splitlines() if line.startswith("ann was marked down")]
    assert len(lines) == 1, played.stdout
    assert refused in lines[0]
    assert "Played 4 matches (2 sets rated, 0 faults)" in played.stdout  # the rivals played on
    assert not (runner_folder / sha256).exists()  # nothing of it kept, so nothing of it started
    store = LadderStore(database)
    try:
        assert all("ann" not in match.bot_ranks for match in store.matches.finished())
    finally:
        store.close()
