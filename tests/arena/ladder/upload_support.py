"""What the tests of uploads across machines share: `arena` in a process of its own working in a folder
of its own (a machine that sees only what is there), the bundles folder a ladder has on such a machine,
and a bot uploaded through a real `arena serve` whose bundles folder is then gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from arena.ladder.store import LadderStore, bundles_folder
from tests.arena.sandbox.sandbox_support import random_bot_bundle
from tests.arena.sandbox.site_server import serving, token

ROOT: Final = Path(__file__).resolve().parents[3]


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`arena ARGS` in a process of its own working in `cwd`: a machine that sees only what is there."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def machine(tmp_path: Path, name: str, database: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundles folder the ladder at `database` has on a machine working in `tmp_path / name`."""
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    store = LadderStore(database)
    try:
        return bundles_folder(store.files_stem)
    finally:
        store.close()
        monkeypatch.chdir(tmp_path)


def upload_through_the_site(
    database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bundle: Path | None = None,
) -> str:
    """`ann`'s bundle (`bundle`, or the random bot's) uploaded by its participant through a site working
    in `tmp_path / site`; then the site's bundles folder removed, as if the site ran on a machine of its
    own: the bundle's hash."""
    monkeypatch.chdir(tmp_path)
    site_folder = machine(tmp_path, "site", database, monkeypatch)
    ann = token(database, "ann", capsys)
    with serving(database, cwd=tmp_path / "site") as site:
        status, answer = site.upload("ann", (bundle or random_bot_bundle(tmp_path)).read_bytes(), ann)
    assert status == 201, answer
    sha256 = str(answer["upload"]["sha256"])
    assert (site_folder / sha256).is_dir()  # the site kept it, unpacked, to check the bot
    shutil.rmtree(site_folder)
    return sha256
