"""Uploaded bots: a `.tar.gz` or `.zip` bundle kept by the SHA-256 of its bytes and unpacked once into a
folder of its own, which the sandbox shows the bot read-only.

A bundle comes from a stranger, so it is unpacked by this module, never by the archive libraries'
`extractall`: only regular files and folders (no symbolic or hard links, devices or FIFOs), names that are
relative, without `..`, backslashes or control characters, of bounded length and depth. What it makes is
counted as it is made (a zip bomb's headers may lie) and as the disk takes it, since a stranger chooses the
shape to amplify: at most `BundleLimits.members` entries, each member and each folder made on a member's
way (a name of 32 parts may make 31 folders), and at most `BundleLimits.unpacked_bytes` taken, each file's
bytes rounded up to a `BLOCK_BYTES` block (at least one, even when empty) and a block per folder made.
Files get mode 644 (755 when the bundle marks them executable), folders 755, whatever the bundle says;
each is created anew (O_EXCL | O_NOFOLLOW), so a name that comes twice is refused too. A refused bundle
leaves nothing behind; a bundle that is already kept is not unpacked again. The archive is streamed
(hashed, unpacked, copied), never read whole into memory, and no message names a path of the host: a
participant reads them.

A bundles folder is a machine's cache of bundles by hash (the ladder's database holds their bytes:
arena/ladder/store/bundles.py). It holds, per bundle, `<sha256>/` (unpacked), `<sha256>.tar.gz` or
`<sha256>.zip` (the bytes as uploaded) and `<sha256>.bytes` (what it takes on disk: the archive's bytes,
and its files and folders counted by blocks as above; the figure the uploads' quota counts). An entry is
made in a folder of a temporary name and renamed last, so one that a killed process left half made is
never used (`sweep` removes it), and two processes keeping the same bundle at once keep it once. Bytes
fetched from elsewhere are kept with the hash they must have (`expected`): other bytes are refused before
anything of them is unpacked. Which bundles are still wanted is the ladder's to say (a version names
one): `sweep` removes the others. So that it never removes a bundle an upload is keeping and has not
recorded yet, or one being fetched, whoever keeps a bundle holds the folder shared (`holding`) until its
version is recorded or refused, and `sweep` runs only when it can take the folder alone (an `flock` on
`.lock` in it, which holds across processes: the site, the command line, a runner).
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from arena.errors import ArenaError
from arena.untrusted import safe_text
from fiftysix.files import FileRefusedError, open_file

CHUNK_BYTES: Final = 1024 * 1024
MAX_NAME_BYTES: Final = 1024
MAX_PART_BYTES: Final = 255
MAX_DEPTH: Final = 32
BLOCK_BYTES: Final = 4096
"""The block that unpacked files and folders are counted by: ext4's default block, what a folder or a
one-byte file takes at least (with an inode)."""
HEADER_SLACK_BYTES: Final = 16 * 1024 * 1024
"""What a tar stream may hold beyond its files' bytes: headers, long names, padding."""
LOCK_NAME: Final = ".lock"
UNPACKING_PREFIX: Final = ".unpacking-"
_KEPT_NAME: Final = re.compile(r"([0-9a-f]{64})(?:\.tar\.gz|\.zip|\.bytes)?")
"""The names of a kept bundle's parts: its folder, its archive, its size."""
LOCK_POLL_S: Final = 0.05


class BundleError(ArenaError, ValueError):
    """A bundle refused: what is wrong with it, naming the member when one is."""


class BundlesBusyError(ArenaError):
    """The bundles folder is held by uploads in progress for longer than one would wait."""


@dataclass(frozen=True, slots=True)
class BundleLimits:
    """How big a bundle may be: its file, what it takes unpacked (counted by `BLOCK_BYTES` blocks), and
    the entries it makes (its members and the folders made on their way)."""

    bundle_bytes: int = 64 * 1024 * 1024
    unpacked_bytes: int = 256 * 1024 * 1024
    members: int = 10_000


@dataclass(frozen=True, slots=True)
class Bundle:
    """A kept bundle: its content hash, the folder it is unpacked in, the bytes it takes (its archive,
    and its files and folders counted by blocks) and its archive as kept beside the folder."""

    sha256: str
    folder: Path
    bytes: int
    archive: Path


def store_bundle(
    archive: Path, store: Path, limits: BundleLimits = BundleLimits(), expected: str | None = None
) -> Bundle:
    """Keep `archive` in `store` as `<sha256>.tar.gz` or `<sha256>.zip`, unpacked in `<sha256>/`, its size
    in `<sha256>.bytes`. Hold `store` (`holding`) while the bundle is not yet wanted by a version.
    `expected`: the SHA-256 the bytes must have (bytes fetched by hash); others are refused unpacked.

    The archive is opened once, as fiftysix/files.py opens a file a person names (a FIFO or a device is
    refused unread), and copied into a folder of this store while it is hashed: what is unpacked and kept
    is that copy, so it is what was hashed even if the file given changes meanwhile.

    :raises BundleError: the file cannot be read, is too big, is not the bundle `expected`, is neither
        format, or holds a member refused (see the module docstring).
    """
    try:
        with open_file(archive, limits.bundle_bytes, "a bundle") as source:
            return _keep(source, store, limits, expected)
    except FileRefusedError as error:
        raise BundleError(f"the bundle: {error}") from None


def _keep(source: IO[bytes], store: Path, limits: BundleLimits, expected: str | None) -> Bundle:
    """`store_bundle` of the archive opened as `source`."""
    store.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=UNPACKING_PREFIX, dir=store))
    try:
        copy = partial / "archive"
        digest, size = hashlib.sha256(), 0
        with copy.open("wb") as target:
            while chunk := source.read(CHUNK_BYTES):
                size += len(chunk)
                if size > limits.bundle_bytes:  # it grew since it was opened
                    raise BundleError(
                        f"the bundle has more than {limits.bundle_bytes:,} bytes, over the limit"
                    )
                digest.update(chunk)
                target.write(chunk)
        sha256 = digest.hexdigest()
        if expected is not None and sha256 != expected:
            raise BundleError(
                f"the bundle's bytes are not those of its hash (expected {expected[:12]}, got {sha256[:12]})"
            )
        with copy.open("rb") as kept:
            head = kept.read(4)
        if head.startswith(b"\x1f\x8b"):
            suffix = ".tar.gz"
        elif head.startswith(b"PK\x03\x04"):
            suffix = ".zip"
        else:
            raise BundleError("the bundle is neither a .tar.gz nor a .zip file")
        folder = store / sha256
        if folder.is_dir():
            return Bundle(sha256, folder, kept_bytes(store, sha256), store / f"{sha256}{suffix}")
        files = partial / "files"
        files.mkdir(mode=0o755)
        with copy.open("rb") as kept:
            unpacked = _unpack(kept, suffix, files, limits)
        taken = size + unpacked
        (partial / "bytes").write_text(f"{taken}\n")
        # The folder last: once it is there the bundle is kept, its archive and size beside it.
        os.replace(copy, store / f"{sha256}{suffix}")
        os.replace(partial / "bytes", store / f"{sha256}.bytes")
        try:
            files.rename(folder)
        except OSError:
            if not folder.is_dir():  # another upload of the same bundle was first: keep that one
                raise
    except OSError as error:
        raise BundleError(f"cannot unpack the bundle: {error.strerror or error}") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return Bundle(sha256, folder, taken, store / f"{sha256}{suffix}")


@contextlib.contextmanager
def fetching(store: Path) -> Iterator[Path]:
    """A file to write a bundle's archive to as it is fetched (from the ladder's database, from the
    runner), for `store_bundle` to keep, while `store` is held shared (`holding`): in a folder of a
    temporary name in `store`, removed at the end (`sweep` removes what a killed process left)."""
    with holding(store):
        partial = Path(tempfile.mkdtemp(prefix=UNPACKING_PREFIX, dir=store))
        try:
            yield partial / "archive"
        finally:
            shutil.rmtree(partial, ignore_errors=True)


def own_folder(path: Path) -> Path:
    """`path` as a bundles folder of this user's alone, made (mode 700) when missing: a cache in a folder
    that others share (the temporary folder) must not be one another user made or can write, or they
    could put files under a bundle's name.

    :raises ArenaError: `path` is a symbolic link, not a folder, another user's, or writable by others
        (the host's to fix: the message names the folder).
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as error:
        raise ArenaError(f"cannot make the bundles folder {path}: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ArenaError(f"the bundles folder {path} is not a folder (a symbolic link?)")
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ArenaError(f"the bundles folder {path} is another user's or others may write in it")
    return path


def kept_bytes(store: Path, sha256: str) -> int:
    """The bytes the bundle `sha256` takes in `store` (0 when it is not kept): its `.bytes` file, or, for a
    bundle kept before those were written, its archive, files and folders counted now by blocks."""
    try:
        return int((store / f"{sha256}.bytes").read_text())
    except (OSError, ValueError):
        pass
    total = 0
    for path in (store / f"{sha256}.tar.gz", store / f"{sha256}.zip"):
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    for root, folders, names in os.walk(store / sha256):
        total += len(folders) * BLOCK_BYTES
        for name in names:
            with contextlib.suppress(OSError):
                total += _blocks(os.lstat(os.path.join(root, name)).st_size)
    return total


def _blocks(size: int) -> int:
    """What a file of `size` bytes is counted as taking: whole blocks, at least one."""
    return max(1, -(-size // BLOCK_BYTES)) * BLOCK_BYTES


@contextlib.contextmanager
def holding(store: Path) -> Iterator[None]:
    """Hold the bundles folder `store` shared while a bundle is kept and its version not yet recorded:
    no `sweep` runs meanwhile (it waits for a prune, which holds the folder alone)."""
    store.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(store / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH)
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def alone(store: Path, wait_s: float = 0.0) -> Iterator[bool]:
    """Hold `store` alone for as long as the block runs, waiting up to `wait_s` seconds for those who hold
    it to finish: whether it was taken (False: someone still holds it, so nothing may be swept)."""
    if not store.is_dir():
        yield True
        return
    descriptor = os.open(store / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(LOCK_POLL_S)
        yield True
    finally:
        os.close(descriptor)


@dataclass(frozen=True, slots=True)
class Swept:
    """What a sweep removed: bundles, and the bytes they took."""

    bundles: int = 0
    bytes: int = 0


def sweep(store: Path, wanted: Callable[[], set[str]]) -> Swept:
    """Remove from `store` every bundle whose hash `wanted()` leaves out, and what an unpacking cut short
    left. Only while `store` is held `alone` (`wanted` is asked then, so that no version recorded
    meanwhile is missed). Names that are not a bundle's are left alone."""
    try:
        names = os.listdir(store)
    except FileNotFoundError:
        return Swept()
    keep = wanted()
    unwanted: dict[str, list[str]] = {}
    for name in names:
        match = _KEPT_NAME.fullmatch(name)
        if match is not None and match.group(1) not in keep:
            unwanted.setdefault(match.group(1), []).append(name)
        elif match is None and name.startswith(UNPACKING_PREFIX):
            unwanted.setdefault(name, []).append(name)
    bundles = freed = 0
    for key, parts in unwanted.items():
        if _KEPT_NAME.fullmatch(key):
            bundles += 1
            freed += kept_bytes(store, key)
        for name in parts:
            path = store / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
    return Swept(bundles, freed)


def _unpack(source: IO[bytes], suffix: str, root: Path, limits: BundleLimits) -> int:
    """Unpack into `root`; the bytes it takes, counted by blocks."""
    budget = _Budget(limits)
    if suffix == ".zip":
        _unpack_zip(source, root, budget)
    else:
        _unpack_tar(source, root, budget)
    return budget.taken


class _Budget:
    """The entries and bytes a bundle may still make, counted as the disk takes them."""

    def __init__(self, limits: BundleLimits) -> None:
        self.limits = limits
        self.members = 0
        self.taken = 0

    def member(self) -> None:
        """One more entry: a member of the archive, or a folder made on a member's way."""
        self.members += 1
        if self.members > self.limits.members:
            raise BundleError(
                f"the bundle has more than {self.limits.members} members "
                "(the folders on a member's way count as members too)"
            )

    def folder(self, named: bool) -> None:
        """A folder made: a block, and an entry unless it is the member itself (already counted)."""
        if not named:
            self.member()
        self.spend(BLOCK_BYTES)

    def file(self) -> None:
        """A file made, empty: the block it takes at least (its member is already counted)."""
        self.spend(BLOCK_BYTES)

    def grown(self, before: int, after: int) -> None:
        """A file grown from `before` to `after` bytes: the blocks that adds."""
        self.spend(_blocks(after) - _blocks(before))

    def spend(self, count: int) -> None:
        self.taken += count
        if self.taken > self.limits.unpacked_bytes:
            raise BundleError(
                f"the bundle unpacks to more than {self.limits.unpacked_bytes} bytes "
                f"(each file counted by {BLOCK_BYTES}-byte blocks, and a block per folder)"
            )


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
                    _make_folder(root, parts, budget, named=True)
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
                    _make_folder(root, parts, budget, named=True)
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


def _make_folder(root: Path, parts: tuple[str, ...], budget: _Budget, named: bool) -> Path:
    """`root/parts...`, made with its parents where missing, each counted (`named`: the last is the
    member itself, already counted as one); none of them may be anything but a folder (nothing else than
    folders and files is ever made, so nothing here leads out of `root`)."""
    folder = root
    for depth, part in enumerate(parts, 1):
        folder = folder / part
        try:
            folder.mkdir(mode=0o755)
        except FileExistsError:
            pass
        else:
            budget.folder(named=named and depth == len(parts))
        if folder.is_symlink() or not folder.is_dir():
            raise BundleError(f"{_shown('/'.join(parts))} is both a file and a folder in the bundle")
    return folder


def _write_file(
    root: Path, parts: tuple[str, ...], reader: IO[bytes], executable: bool, budget: _Budget
) -> None:
    if not parts:
        raise BundleError("a file of the bundle has no name")
    folder = _make_folder(root, parts[:-1], budget, named=False)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        descriptor = os.open(folder / parts[-1], flags, 0o755 if executable else 0o644)
    except FileExistsError:
        raise BundleError(f"{_shown('/'.join(parts))} comes twice in the bundle") from None
    with os.fdopen(descriptor, "wb") as target:
        os.fchmod(target.fileno(), 0o755 if executable else 0o644)  # whatever the umask says
        budget.file()
        written = 0
        for chunk in _chunks(reader):
            budget.grown(written, written + len(chunk))
            written += len(chunk)
            target.write(chunk)


def _chunks(reader: IO[bytes]) -> Iterator[bytes]:
    while chunk := reader.read(CHUNK_BYTES):
        yield chunk


def _shown(name: str) -> str:
    return repr(safe_text(name, 80))
