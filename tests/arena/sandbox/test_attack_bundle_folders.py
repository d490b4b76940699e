"""Attack (issue 22 follow-up): a bundle's folders and small files amplify on disk. Each member may name
up to 32 parts, and every missing folder on its way is made: uncounted, 10,000 members made some 310,000
folders (about 1.2 GiB of ext4 directory blocks and as many inodes), which neither the members cap nor
the uploads' kept-bytes quota saw (a 600 KB zip measured by hand: 64,000 entries, 262 MB on disk, counted
as 0.6 MB); and a one-byte file, counted as a byte, takes a block. Now every folder made counts as a
member, and files and folders count by blocks, in the limits and in the `.bytes` figure the quota reads."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.sandbox.bundles import BLOCK_BYTES, BundleError, BundleLimits, kept_bytes, store_bundle

MEMBERS = 10
DEPTH = 30


def deep_names() -> list[str]:
    """MEMBERS one-byte files, each at the end of a chain of DEPTH folders of its own."""
    return [
        "/".join([f"m{member}", *(f"d{depth}" for depth in range(DEPTH - 1)), "f"])
        for member in range(MEMBERS)
    ]


def deep_zip(path: Path) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name in deep_names():
            bundle.writestr(name, b"x")
    path.write_bytes(buffer.getvalue())
    return path


def deep_tar(path: Path) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in deep_names():
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    path.write_bytes(buffer.getvalue())
    return path


def entries(folder: Path) -> int:
    return sum(len(folders) + len(files) for _root, folders, files in os.walk(folder))


@pytest.mark.parametrize("make", [deep_zip, deep_tar], ids=["zip", "tar"])
def test_a_bundle_makes_no_more_entries_than_its_members_cap(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    archive = make(tmp_path / "deep")
    store = tmp_path / "store"
    with pytest.raises(BundleError, match=f"more than {MEMBERS} members") as refused:
        store_bundle(archive, store, BundleLimits(members=MEMBERS))
    assert str(tmp_path) not in str(refused.value)
    assert list(store.iterdir()) == []  # refused: nothing made
    # Under a cap that holds every folder it makes it is kept: each folder a member, each entry a block.
    made = MEMBERS * (DEPTH + 1)  # DEPTH folders and a file per member
    limits = BundleLimits(members=made)
    bundle = store_bundle(archive, store, limits)
    assert entries(bundle.folder) == made <= limits.members
    assert bundle.bytes == archive.stat().st_size + made * BLOCK_BYTES
    assert kept_bytes(store, bundle.sha256) == bundle.bytes  # the figure the uploads' quota reads
    with pytest.raises(BundleError, match=f"more than {made - 1} members"):
        store_bundle(archive, tmp_path / "other", BundleLimits(members=made - 1))


def tiny_files_zip(path: Path, count: int) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        for number in range(count):
            bundle.writestr(f"f{number}", b"x")
    return path


def test_many_tiny_files_are_counted_by_blocks(tmp_path: Path) -> None:
    archive = tiny_files_zip(tmp_path / "tiny.zip", 1_000)
    store = tmp_path / "store"
    bundle = store_bundle(archive, store)
    assert bundle.bytes >= 1_000 * 4096 + archive.stat().st_size
    assert kept_bytes(store, bundle.sha256) == bundle.bytes
    with pytest.raises(BundleError, match=r"more than 1048576 bytes \(each file counted by 4096-byte blocks"):
        store_bundle(archive, tmp_path / "small", BundleLimits(unpacked_bytes=1024 * 1024))
    assert list((tmp_path / "small").iterdir()) == []


def test_a_bundle_kept_before_its_size_was_written_is_counted_by_blocks_too(tmp_path: Path) -> None:
    """`kept_bytes` counts a bundle without a `.bytes` file (kept by an older arena) the same way."""
    store, made = tmp_path / "store", MEMBERS * (DEPTH + 1)
    bundle = store_bundle(deep_zip(tmp_path / "deep.zip"), store, BundleLimits(members=made))
    (store / f"{bundle.sha256}.bytes").unlink()
    assert (
        kept_bytes(store, bundle.sha256)
        == bundle.bytes
        == (tmp_path / "deep.zip").stat().st_size + made * BLOCK_BYTES
    )
