"""Uploaded bots: a `.tar.gz` or `.zip` bundle kept by the SHA-256 of its bytes and unpacked once into a
folder of its own, which the sandbox shows the bot read-only.

A bundle comes from a stranger, so it is unpacked by this module, never by the archive libraries'
`extractall`: only regular files and folders (no symbolic or hard links, devices or FIFOs), names that are
relative, without `..`, backslashes or control characters, of bounded length and depth, at most
`BundleLimits.members` of them, and at most `BundleLimits.unpacked_bytes` written in all, counted as they
are written (a zip bomb's headers may lie). Files get mode 644 (755 when the bundle marks them
executable), folders 755, whatever the bundle says; each is created anew (O_EXCL | O_NOFOLLOW), so a name
that comes twice is refused too. A refused bundle leaves nothing behind; a bundle that is already kept is
not unpacked again.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from arena.errors import ArenaError
from arena.untrusted import safe_text
from fiftysix.files import FileRefusedError, read_file

CHUNK_BYTES: Final = 1024 * 1024
MAX_NAME_BYTES: Final = 1024
MAX_PART_BYTES: Final = 255
MAX_DEPTH: Final = 32
HEADER_SLACK_BYTES: Final = 16 * 1024 * 1024
"""What a tar stream may hold beyond its files' bytes: headers, long names, padding."""


class BundleError(ArenaError, ValueError):
    """A bundle refused: what is wrong with it, naming the member when one is."""


@dataclass(frozen=True, slots=True)
class BundleLimits:
    """How big a bundle may be: its file, the bytes unpacked from it, and its members."""

    bundle_bytes: int = 64 * 1024 * 1024
    unpacked_bytes: int = 256 * 1024 * 1024
    members: int = 10_000


@dataclass(frozen=True, slots=True)
class Bundle:
    """A kept bundle: its content hash and the folder it is unpacked in."""

    sha256: str
    folder: Path


def store_bundle(archive: Path, store: Path, limits: BundleLimits = BundleLimits()) -> Bundle:
    """Keep `archive` in `store` as `<sha256>.tar.gz` or `<sha256>.zip` and unpacked in `<sha256>/`.

    :raises BundleError: the file cannot be read, is too big, is neither format, or holds a member
        refused (see the module docstring).
    """
    try:
        data = read_file(archive, limits.bundle_bytes, "a bundle")
    except FileRefusedError as error:
        raise BundleError(f"{archive}: {error}") from None
    if data.startswith(b"\x1f\x8b"):
        suffix = ".tar.gz"
    elif data.startswith(b"PK\x03\x04"):
        suffix = ".zip"
    else:
        raise BundleError(f"{archive} is neither a .tar.gz nor a .zip file")
    sha256 = hashlib.sha256(data).hexdigest()
    folder = store / sha256
    if folder.is_dir():
        return Bundle(sha256, folder)
    store.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=store))
    try:
        partial.chmod(0o755)
        _unpack(io.BytesIO(data), suffix, partial, limits)  # the bytes hashed, not the file read again
        kept = store / f"{sha256}{suffix}"
        if not kept.exists():
            kept.write_bytes(data)
        try:
            partial.rename(folder)
        except OSError:
            if not folder.is_dir():  # another upload of the same bundle was first: keep that one
                raise
    except OSError as error:
        raise BundleError(f"cannot unpack {archive}: {error.strerror or error}") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return Bundle(sha256, folder)


def _unpack(source: IO[bytes], suffix: str, root: Path, limits: BundleLimits) -> None:
    budget = _Budget(limits)
    if suffix == ".zip":
        _unpack_zip(source, root, budget)
    else:
        _unpack_tar(source, root, budget)


class _Budget:
    """The members and bytes a bundle may still unpack."""

    def __init__(self, limits: BundleLimits) -> None:
        self.limits = limits
        self.members = 0
        self.written = 0

    def member(self) -> None:
        self.members += 1
        if self.members > self.limits.members:
            raise BundleError(f"the bundle has more than {self.limits.members} members")

    def spend(self, count: int) -> None:
        self.written += count
        if self.written > self.limits.unpacked_bytes:
            raise BundleError(f"the bundle unpacks to more than {self.limits.unpacked_bytes} bytes")


class _CappedStream(io.RawIOBase):
    """The decompressed bytes of a gzip stream, refused past `cap`: tarfile reads a long name or a pax
    header whole into memory, whatever size its header claims."""

    def __init__(self, source: IO[bytes], cap: int) -> None:
        self.source = gzip.GzipFile(fileobj=source, mode="rb")
        self.left = cap

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.source.read(min(len(buffer), CHUNK_BYTES, self.left + 1))
        if len(data) > self.left:
            raise BundleError("the bundle unpacks to more than its limit of bytes")
        self.left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def _unpack_tar(source: IO[bytes], root: Path, budget: _Budget) -> None:
    stream = _CappedStream(source, budget.limits.unpacked_bytes + HEADER_SLACK_BYTES)
    try:
        # Stream mode: members are read one by one as they come, never listed first (listing a
        # compressed tar decompresses all of it).
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                budget.member()
                parts = _parts(member.name)
                if member.isdir():
                    _make_folder(root, parts)
                elif member.isreg() and not member.issparse():
                    reader = tar.extractfile(member)
                    assert reader is not None
                    _write_file(root, parts, reader, bool(member.mode & 0o111), budget)
                else:
                    raise BundleError(f"{_shown(member.name)} is not a regular file or a folder")
    except (tarfile.TarError, EOFError, UnicodeError, OSError, zlib.error) as error:
        raise BundleError(f"the bundle is not a readable .tar.gz file: {safe_text(error)}") from None


def _unpack_zip(source: IO[bytes], root: Path, budget: _Budget) -> None:
    try:
        with zipfile.ZipFile(source) as bundle:
            members = bundle.infolist()
            if len(members) > budget.limits.members:
                raise BundleError(f"the bundle has more than {budget.limits.members} members")
            for info in members:
                budget.member()
                parts = _parts(info.filename)
                kind = stat.S_IFMT(info.external_attr >> 16)
                if info.flag_bits & 0x1:
                    raise BundleError(f"{_shown(info.filename)} is encrypted")
                if info.is_dir():
                    _make_folder(root, parts)
                elif kind in (0, stat.S_IFREG):
                    with bundle.open(info) as reader:
                        executable = bool((info.external_attr >> 16) & 0o111)
                        _write_file(root, parts, reader, executable, budget)
                else:
                    raise BundleError(f"{_shown(info.filename)} is not a regular file or a folder")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, zlib.error) as error:
        raise BundleError(f"the bundle is not a readable .zip file: {safe_text(error)}") from None


def _parts(name: str) -> tuple[str, ...]:
    """The parts of a member's name, checked: relative, no `..`, no backslash or control character,
    bounded; `.` parts and a trailing slash dropped (`./` itself, the bundle's root, has none)."""
    shown = _shown(name)
    if not name or len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        raise BundleError(f"a member's name is empty or longer than {MAX_NAME_BYTES} bytes: {shown}")
    if not name.isprintable() or "\\" in name:
        raise BundleError(f"a member's name has a control character or a backslash: {shown}")
    if name.startswith("/"):
        raise BundleError(f"a member's name is an absolute path: {shown}")
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise BundleError(f"a member's name leads out of the bundle: {shown}")
    if len(parts) > MAX_DEPTH:
        raise BundleError(f"a member's name has more than {MAX_DEPTH} parts: {shown}")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES for part in parts):
        raise BundleError(f"a member's name has a part longer than {MAX_PART_BYTES} bytes: {shown}")
    return parts


def _make_folder(root: Path, parts: tuple[str, ...]) -> Path:
    """`root/parts...`, made with its parents where missing; none of them may be anything but a folder
    (nothing else than folders and files is ever made, so nothing here leads out of `root`)."""
    folder = root
    for part in parts:
        folder = folder / part
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o755)
        if folder.is_symlink() or not folder.is_dir():
            raise BundleError(f"{_shown('/'.join(parts))} is both a file and a folder in the bundle")
    return folder


def _write_file(
    root: Path, parts: tuple[str, ...], reader: IO[bytes], executable: bool, budget: _Budget
) -> None:
    if not parts:
        raise BundleError("a file of the bundle has no name")
    folder = _make_folder(root, parts[:-1])
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        descriptor = os.open(folder / parts[-1], flags, 0o755 if executable else 0o644)
    except FileExistsError:
        raise BundleError(f"{_shown('/'.join(parts))} comes twice in the bundle") from None
    with os.fdopen(descriptor, "wb") as target:
        os.fchmod(target.fileno(), 0o755 if executable else 0o644)  # whatever the umask says
        for chunk in _chunks(reader):
            budget.spend(len(chunk))
            target.write(chunk)


def _chunks(reader: IO[bytes]) -> Iterator[bytes]:
    while chunk := reader.read(CHUNK_BYTES):
        yield chunk


def _shown(name: str) -> str:
    return repr(safe_text(name, 80))
