"""Uploaded bundles: kept by content hash, unpacked once; every trick of a hostile archive (a path out of
the folder, an absolute path, links, devices, a zip bomb, too many members, a name twice) is refused with
nothing left behind."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from arena.sandbox.bundles import (
    BLOCK_BYTES,
    BundleError,
    BundleLimits,
    Swept,
    alone,
    holding,
    kept_bytes,
    store_bundle,
    sweep,
)


def tar_gz(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    path.write_bytes(buffer.getvalue())
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.linkname = link
    return info


def zip_file(path: Path, members: list[tuple[str, bytes, int]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, data)
    return path


def test_a_tar_bundle_is_kept_by_hash_and_unpacked(tmp_path: Path) -> None:
    archive = tar_gz(
        tmp_path / "bot.tar.gz",
        [
            (member("bot.py", mode=0o600), b"print('hi')\n"),
            (member("bin", tarfile.DIRTYPE, 0o700), b""),
            (member("bin/run", mode=0o700), b"#!/bin/sh\n"),
            (member("./lib/x.txt"), b"x"),
        ],
    )
    store = tmp_path / "store"
    bundle = store_bundle(archive, store)
    assert bundle.folder == store / bundle.sha256
    assert (bundle.folder / "bot.py").read_text() == "print('hi')\n"
    assert stat.S_IMODE((bundle.folder / "bot.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((bundle.folder / "bin/run").stat().st_mode) == 0o755
    assert stat.S_IMODE((bundle.folder / "bin").stat().st_mode) == 0o755
    assert (bundle.folder / "lib/x.txt").read_text() == "x"
    assert (store / f"{bundle.sha256}.tar.gz").read_bytes() == archive.read_bytes()
    assert store_bundle(archive, store) == bundle  # the same bytes: the same folder, not unpacked again
    parts = [bundle.sha256, f"{bundle.sha256}.bytes", f"{bundle.sha256}.tar.gz"]
    assert sorted(path.name for path in store.iterdir()) == parts
    # Counted as the disk takes it: three files and two folders (`lib` made on a member's way), a block each.
    assert bundle.bytes == archive.stat().st_size + 5 * BLOCK_BYTES
    assert kept_bytes(store, bundle.sha256) == bundle.bytes


def test_a_zip_bundle_is_unpacked(tmp_path: Path) -> None:
    archive = zip_file(tmp_path / "bot.zip", [("bot.py", b"pass\n", 0o100644), ("run.sh", b"", 0o100755)])
    bundle = store_bundle(archive, tmp_path / "store")
    assert (bundle.folder / "bot.py").read_text() == "pass\n"
    assert stat.S_IMODE((bundle.folder / "run.sh").stat().st_mode) == 0o755


Maker = Callable[[Path], Path]
SYMLINK: Final = member("l", tarfile.SYMTYPE, link="/etc")
HARD_LINK: Final = member("l", tarfile.LNKTYPE, link="x")
REFUSED: list[tuple[str, Maker, str]] = [
    ("traversal", lambda p: tar_gz(p / "b.tar.gz", [(member("../evil.py"), b"x")]), "leads out"),
    ("deep traversal", lambda p: tar_gz(p / "b.tar.gz", [(member("a/../../evil"), b"x")]), "leads out"),
    ("absolute", lambda p: tar_gz(p / "b.tar.gz", [(member("/etc/evil"), b"x")]), "absolute"),
    ("symlink", lambda p: tar_gz(p / "b.tar.gz", [(SYMLINK, b"")]), "not a"),
    ("hard link", lambda p: tar_gz(p / "b.tar.gz", [(HARD_LINK, b"")]), "not a"),
    ("device", lambda p: tar_gz(p / "b.tar.gz", [(member("d", tarfile.CHRTYPE), b"")]), "not a"),
    ("fifo", lambda p: tar_gz(p / "b.tar.gz", [(member("f", tarfile.FIFOTYPE), b"")]), "not a"),
    ("twice", lambda p: tar_gz(p / "b.tar.gz", [(member("a"), b"1"), (member("a"), b"2")]), "twice"),
    (
        "file, then folder",
        lambda p: tar_gz(p / "b.tar.gz", [(member("a"), b"1"), (member("a/b"), b"")]),
        "both",
    ),
    ("control character", lambda p: tar_gz(p / "b.tar.gz", [(member("a\x1b[2J"), b"1")]), "control"),
    ("backslash", lambda p: zip_file(p / "b.zip", [("..\\evil", b"x", 0o100644)]), "backslash"),
    ("zip traversal", lambda p: zip_file(p / "b.zip", [("../evil", b"x", 0o100644)]), "leads out"),
    ("zip absolute", lambda p: zip_file(p / "b.zip", [("/tmp/evil", b"x", 0o100644)]), "absolute"),
    ("zip symlink", lambda p: zip_file(p / "b.zip", [("l", b"/etc/passwd", 0o120777)]), "not a"),
    ("neither format", lambda p: _write(p / "b.tar", b"plain text"), "neither"),
    ("broken gzip", lambda p: _write(p / "b.tar.gz", b"\x1f\x8b" + b"\x00" * 100), "not a readable"),
]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("case", "make", "problem"), REFUSED, ids=[case for case, _, _ in REFUSED])
def test_hostile_bundles_are_refused_leaving_nothing(
    tmp_path: Path, case: str, make: Maker, problem: str
) -> None:
    store = tmp_path / "store"
    with pytest.raises(BundleError, match=problem):
        store_bundle(make(tmp_path), store)
    assert not (tmp_path / "evil").exists()
    assert not (tmp_path / "evil.py").exists()
    assert not store.exists() or list(store.iterdir()) == []


def test_a_zip_bomb_is_stopped_by_what_is_written_not_what_headers_say(tmp_path: Path) -> None:
    archive = zip_file(tmp_path / "bomb.zip", [("zeros", b"\0" * (8 * 1024 * 1024), 0o100644)])
    assert archive.stat().st_size < 100_000
    with pytest.raises(BundleError, match="more than 1048576 bytes"):
        store_bundle(archive, tmp_path / "store", BundleLimits(unpacked_bytes=1024 * 1024))
    assert list((tmp_path / "store").iterdir()) == []


def test_a_tar_bomb_and_a_huge_long_name_are_stopped(tmp_path: Path) -> None:
    limits = BundleLimits(unpacked_bytes=1024 * 1024)
    archive = tar_gz(tmp_path / "bomb.tar.gz", [(member("zeros"), b"\0" * (8 * 1024 * 1024))])
    with pytest.raises(BundleError, match="more than"):
        store_bundle(archive, tmp_path / "store", limits)
    # A GNU long-name header that claims 64 MiB: tarfile would read it whole into memory.
    header = tarfile.TarInfo("././@LongLink")
    header.type = tarfile.GNUTYPE_LONGNAME
    header.size = 64 * 1024 * 1024
    raw = header.tobuf(format=tarfile.GNU_FORMAT) + b"a" * header.size
    (tmp_path / "long.tar.gz").write_bytes(gzip.compress(raw))
    with pytest.raises(BundleError, match=r"more than|not a readable"):
        store_bundle(tmp_path / "long.tar.gz", tmp_path / "store", limits)


def test_too_many_members_and_too_big_a_file(tmp_path: Path) -> None:
    many = tar_gz(tmp_path / "many.tar.gz", [(member(f"f{n}"), b"") for n in range(30)])
    with pytest.raises(BundleError, match="more than 20 members"):
        store_bundle(many, tmp_path / "store", BundleLimits(members=20))
    many_zip = zip_file(tmp_path / "many.zip", [(f"f{n}", b"", 0o100644) for n in range(30)])
    with pytest.raises(BundleError, match="more than 20 members"):
        store_bundle(many_zip, tmp_path / "store", BundleLimits(members=20))
    with pytest.raises(BundleError, match="over the limit"):
        store_bundle(many, tmp_path / "store", BundleLimits(bundle_bytes=10))
    with pytest.raises(BundleError, match="cannot read"):
        store_bundle(tmp_path / "missing.zip", tmp_path / "store")


def test_a_bundle_that_is_no_regular_file_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "bot.tar.gz"
    os.mkfifo(fifo)  # read as a plain open would, it waits for a writer
    with pytest.raises(BundleError, match="not a regular file: a FIFO"):
        store_bundle(fifo, tmp_path / "store")
    with pytest.raises(BundleError, match="not a regular file: a character device"):
        store_bundle(Path("/dev/zero"), tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_no_message_names_a_path_of_the_host(tmp_path: Path) -> None:
    """A participant reads these messages: the archive's path is the host's (a temporary file)."""
    cases = [
        (tmp_path / "missing.zip", "the bundle: cannot read"),
        (_write(tmp_path / "b.bin", b"plain text"), "neither a .tar.gz nor a .zip"),
        (tmp_path, "not a regular file: a directory"),
    ]
    for archive, problem in cases:
        with pytest.raises(BundleError, match=problem) as refused:
            store_bundle(archive, tmp_path / "store")
        assert str(tmp_path) not in str(refused.value)
    big = _write(tmp_path / "big.zip", b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(BundleError, match="over the limit") as refused:
        store_bundle(big, tmp_path / "store", BundleLimits(bundle_bytes=10))
    assert str(tmp_path) not in str(refused.value)


def test_a_sweep_removes_the_bundles_no_one_wants_and_waits_for_holders(tmp_path: Path) -> None:
    store = tmp_path / "store"
    wanted = store_bundle(zip_file(tmp_path / "a.zip", [("a", b"a" * 1000, 0o100644)]), store)
    unwanted = store_bundle(zip_file(tmp_path / "b.zip", [("b", b"b" * 3000, 0o100644)]), store)
    (store / ".unpacking-cut-short").mkdir()
    (store / "README").write_text("the host's own note")
    with holding(store), alone(store) as taken:  # an upload in progress: nothing may be swept
        assert not taken
    with alone(store) as taken:
        assert taken
        assert sweep(store, lambda: {wanted.sha256}) == Swept(1, unwanted.bytes)
    names = sorted(path.name for path in store.iterdir())
    assert names == sorted(
        [".lock", "README", wanted.sha256, f"{wanted.sha256}.bytes", f"{wanted.sha256}.zip"]
    )
