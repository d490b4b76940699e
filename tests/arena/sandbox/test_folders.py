"""A socket folder goes with its bot whatever the bot left there (arena/sandbox/folders.py): folders it
closed to its own user, which an arena running as an ordinary user is too (so it is tested as `nobody`
when the tests run as root), a folder it made read-only, folders nested deeper than shutil.rmtree's
recursion and than the longest path the system takes, and symbolic links, never followed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

from arena.sandbox.folders import remove_folder

ROOT: Final = Path(__file__).resolve().parents[3]
NOBODY: Final = 65534
SYSTEM_PYTHON: Final = Path("/usr/bin/python3")

MESS: Final = r"""
import os, sys
from pathlib import Path
from arena.sandbox.folders import remove_folder
folder, outside = Path(sys.argv[1]), Path(sys.argv[2])
folder.mkdir()
fd = os.open(folder, os.O_RDONLY)
for _ in range(1100):  # past rmtree's recursion; 56 kB of path, past PATH_MAX
    os.mkdir("d" * 50, dir_fd=fd)
    os.close(os.open("file", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
    inner = os.open("d" * 50, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
os.close(fd)
closed = folder / "closed"
(closed / "inside").mkdir(parents=True)
(closed / "inside" / "file").write_text("kept")
(closed / "inside").chmod(0)
closed.chmod(0)
(folder / "to a file").symlink_to(outside / "precious")
(folder / "to a folder").symlink_to(outside)
folder.chmod(0o500)
print(remove_folder(folder))
"""


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder that `nobody` can reach (pytest's own folders are root's alone); in memory where the system
    has a place for it (thousands of folders are made and removed)."""
    memory = Path("/dev/shm")
    where = memory if memory.is_dir() and os.access(memory, os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="arena-folders-test-", dir=where))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", "--", str(folder)], check=False)  # whatever a failed removal left


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _ways() -> list[tuple[str, Callable[[], None] | None]]:
    ways: list[tuple[str, Callable[[], None] | None]] = [("the arena's user", None)]
    if os.geteuid() == 0:
        ways.append(("nobody", _as_nobody))
    return ways


@pytest.mark.parametrize(("who", "become"), _ways(), ids=[who for who, _ in _ways()])
def test_a_folder_goes_whatever_its_bot_left_there(
    base: Path, who: str, become: Callable[[], None] | None
) -> None:
    python = sys.executable if become is None else str(SYSTEM_PYTHON)
    if become is not None and not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 to run as nobody")
    sockets, outside = base / "sockets", base / "outside"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)
    (outside / "precious").write_text("precious")
    if become is not None:
        os.chown(base, NOBODY, NOBODY)
    finished = subprocess.run(
        [python, "-c", MESS, str(sockets), str(outside)],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=become,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == ["True"]
    assert not os.path.lexists(sockets)
    assert (outside / "precious").read_text() == "precious"


def test_what_is_gone_or_not_a_folder(tmp_path: Path) -> None:
    assert remove_folder(tmp_path / "never made")
    file = tmp_path / "file"
    file.write_text("x")
    assert remove_folder(file)
    assert not file.exists()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "kept")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "inside").write_text("x")
    assert remove_folder(link)
    assert not os.path.lexists(link)
    assert (tmp_path / "kept" / "inside").exists()
