"""An upload through the site (`POST /api/bots/NAME/upload`), from its first byte to its answer, such that
no stranger can freeze the site or fill its disk.

- *Off the event loop*: the body is written to disk, the ladder read and written, and bundles removed, in
  threads, each with a store of its own (registration.py's steps); the bundle is hashed, unpacked and
  kept in a worker process (`Unpacker`: CPU work, which in a thread would hold the interpreter lock the
  loop needs); only the check (the bot started in the sandbox, answered over gRPC) runs on the loop, as
  every other request's I/O does.
- *Bounded*: at most `UploadLimits.at_once` uploads are processed at once, and one per participant's
  token; another gets a 503 with Retry-After (or a 429 for a second of one token) at once, before its body
  is read. A body must arrive whole within `body_s` seconds, and is written to disk as it comes (at most
  a MiB of it in memory).
- *Quotas per participant's token* (the host's is not limited): `per_hour` uploads in any hour, refused
  ones counted (every upload whose body was read counts, so a flood of bombs is throttled: the audit log
  records each as `bot_uploaded` or `upload_refused`); and `kept_bytes` of bundles kept for the token's
  bots' versions (each bundle once: its archive and its files), which frees only when the host prunes old
  versions (`arena bots prune`). Over either is a 429 saying which, and when it frees.
- *Nothing left*: whatever ends an upload (a bomb, a bad archive, a bot that fails its check or crashes,
  a quota, a client gone mid-body, an error of ours), its body's temporary folder, its bundle and its
  check's log go (registration.release); what the participant reads says why in terms of their upload,
  and the report of its check (the answer's `check`, kept in the store) says item by item what failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request

from arena.check import CheckReport
from arena.ladder.bots import ExposedFilesError
from arena.ladder.registration import (
    FailedCheckError,
    NotAnsweringError,
    Prepared,
    Registered,
    Registration,
    check_started,
    prepare,
    record,
)
from arena.ladder.run_bots import bot_host
from arena.ladder.store import LadderStore, StoreError, TokenHolder
from arena.ladder.uploads import KeptBundle, Uploads
from arena.sandbox.bubblewrap import Sandbox
from arena.sandbox.bundles import Bundle, BundleError, BundleLimits, store_bundle
from arena.site import management, params
from arena.site.data import SiteError
from arena.site.upload_limits import MIB, UploadLimits
from arena.untrusted import safe_text

log = structlog.get_logger("site")

HOUR_S: Final = 3600.0
WRITE_BYTES: Final = MIB
"""A body is written to disk in pieces of about this much (what it holds in memory at most)."""
BUNDLE_BYTES: Final = BundleLimits().bundle_bytes
"""The largest body an upload may send: a bundle's largest file."""
UNPACK_NICENESS: Final = 10
COUNTED: Final = ("bot_uploaded", "upload_refused")
"""The audit log's actions that the hourly quota counts."""

T = TypeVar("T")


class Unpacker:
    """Bundles hashed, unpacked and copied in processes of their own, started when first needed and at a
    lower priority (nice 10), not in threads: that work is CPU-bound (a bomb inflates hundreds of MiB),
    and in a thread it would hold the interpreter lock that the event loop needs for every request.
    `store` is called from a thread, which only waits."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def store(self, archive: Path, folder: Path, limits: BundleLimits) -> Bundle:
        """store_bundle, in a worker process.

        :raises BundleError: the bundle is refused.
        :raises SiteError: the worker died (it is replaced for the next upload).
        """
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.workers, multiprocessing.get_context("spawn"), os.nice, (UNPACK_NICENESS,)
                )
            pool = self._pool
        try:
            return pool.submit(store_bundle, archive, folder, limits).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False)
            log.error("unpacker_died")
            raise SiteError(503, "the bundle could not be unpacked now; try again in a minute", 60) from None

    def close(self) -> None:
        """Stop the worker processes (the site is stopping)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class UploadGate:
    """The uploads in progress in this site: at most `at_once`, one per participant's token. Used on the
    event loop alone, so it needs no lock."""

    def __init__(self, limits: UploadLimits) -> None:
        self.limits = limits
        self.uploading: list[str] = []

    def check_room(self) -> None:
        """A 503 when `at_once` uploads are in progress: said before anything else is done for the request
        (not even its token read), so that a flood of them costs the site next to nothing."""
        if len(self.uploading) >= self.limits.at_once:
            busy = f"the site is processing {self.limits.at_once} uploads already"
            raise SiteError(503, f"{busy}; try again in a few seconds", self.limits.retry_after_s)

    @contextlib.contextmanager
    def entered(self, holder: TokenHolder) -> Iterator[None]:
        """Count an upload in for as long as the block runs, or refuse it at once (429 or 503)."""
        who = management.actor(holder)
        if holder.role != "host" and who in self.uploading:
            raise SiteError(429, "an upload of this token is in progress: wait for its answer", 5)
        self.check_room()
        self.uploading.append(who)
        try:
            yield
        finally:
            self.uploading.remove(who)


@dataclass(frozen=True)
class Body:
    """The bundle's bytes as they arrive (the API's raw request body, or the file of the site's upload
    form: upload_form.py), and the most of them the request declared (None: not declared)."""

    chunks: AsyncIterator[bytes]
    declared: int | None


def request_body(request: Request) -> Body:
    """A request whose whole body is the bundle (`POST /api/bots/NAME/upload`)."""
    return Body(request.stream(), params.content_length(request.headers, BUNDLE_BYTES, "the bundle"))


async def upload(
    body: Body,
    db: str | Path,
    holder: TokenHolder,
    wanted: Registration,
    limits: UploadLimits,
    gate: UploadGate,
    unpacker: Unpacker,
    sandbox: Sandbox,
) -> tuple[Registered, str, int]:
    """Process an upload of `body` as the module docstring says, its bot checked in `sandbox`: the bot as
    registered, the action and the status; a SiteError saying why it was refused."""
    with gate.entered(holder):
        return await admitted(body, db, holder, wanted, limits, unpacker, sandbox)


async def admitted(
    body: Body,
    db: str | Path,
    holder: TokenHolder,
    wanted: Registration,
    limits: UploadLimits,
    unpacker: Unpacker,
    sandbox: Sandbox,
) -> tuple[Registered, str, int]:
    """`upload` once its gate has let it in (the site's form enters the gate before it reads a byte)."""
    if body.declared is not None and body.declared > BUNDLE_BYTES:
        raise SiteError(413, f"the bundle is over {BUNDLE_BYTES:,} bytes")
    if holder.role != "host":
        await _in_store(db, lambda store: _check_quotas(store, holder, limits))
    folder = Path(await run_in_threadpool(tempfile.mkdtemp, None, "arena-upload-"))
    try:
        return await _process(body, db, holder, wanted, limits, unpacker, sandbox, folder / "bundle")
    finally:
        await run_in_threadpool(shutil.rmtree, folder, True)


async def _process(
    body_in: Body,
    db: str | Path,
    holder: TokenHolder,
    wanted: Registration,
    limits: UploadLimits,
    unpacker: Unpacker,
    sandbox: Sandbox,
    body: Path,
) -> tuple[Registered, str, int]:
    """The upload once let in: every way it ends is audited (a refusal as `upload_refused`), and ends with
    its bundle released (the last upload out removes every bundle no version names)."""
    prepared: Prepared | None = None
    try:
        try:
            await _save_body(body_in.chunks, body, limits)
            ready, host = await _in_store(
                db, lambda store: (_prepare(store, holder, wanted, body, unpacker), bot_host(store, sandbox))
            )
            prepared = ready
            if holder.role != "host":
                await _in_store(db, lambda store: _check_quotas(store, holder, limits, ready))
            assert ready.launch is not None
            report = await check_started(wanted.name, ready.launch, limits.check, limits.check_s, host=host)
            done = await _in_store(db, lambda store: _record(store, holder, ready, report))
        finally:
            kept = prepared.kept if prepared is not None else None
            await _in_store(db, lambda store: _release(store, wanted.name, kept))
    except (
        SiteError,
        BundleError,
        NotAnsweringError,
        StoreError,
        ExposedFilesError,
        ClientDisconnect,
    ) as error:
        refusal = _refusal(error)
        await _audit_refusal(db, holder, wanted.name, refusal.message)
        raise refusal from None
    except Exception:
        await _audit_refusal(db, holder, wanted.name, "an error of the site's")
        raise
    log.info("bot_uploaded", bot=wanted.name, by=management.actor(holder))
    return done, "bot_uploaded", 201 if prepared.new else 200


def _refusal(error: Exception) -> SiteError:
    """What the participant reads of why their upload was refused."""
    if isinstance(error, SiteError):
        return error
    if isinstance(error, BundleError):
        return SiteError(400, safe_text(error))
    if isinstance(error, FailedCheckError):
        return SiteError(422, safe_text(error), more={"check": error.check.to_json()})
    if isinstance(error, NotAnsweringError):
        return SiteError(422, safe_text(error))
    if isinstance(error, ExposedFilesError):
        log.error("upload_not_checked", reason=str(error))  # it names the host's folders
        return SiteError(500, "the site cannot check uploads: its sandbox would show bots the ladder's files")
    if isinstance(error, ClientDisconnect):
        return SiteError(400, "the bundle did not arrive whole: the connection closed")
    log.warning("upload_not_recorded", reason=str(error))  # a StoreError names the ladder's file
    return SiteError(503, "the upload cannot be recorded now (the ladder's file is busy); try later", 60)


async def _save_body(chunks: AsyncIterator[bytes], path: Path, limits: UploadLimits) -> None:
    """Write the bundle to `path` as it comes (a MiB at a time, in a thread), or a 4xx when it is empty,
    over the limit, or not all there within `limits.body_s` seconds."""
    limit = BUNDLE_BYTES
    size = 0
    pending = bytearray()
    with path.open("wb") as out:
        try:
            async with asyncio.timeout(limits.body_s):
                async for chunk in chunks:
                    size += len(chunk)
                    if size > limit:
                        raise SiteError(413, f"the bundle is over {limit:,} bytes")
                    pending += chunk
                    if len(pending) >= WRITE_BYTES:
                        await run_in_threadpool(out.write, bytes(pending))
                        pending.clear()
        except TimeoutError:
            raise SiteError(408, f"the bundle did not arrive within {limits.body_s:g} s") from None
        await run_in_threadpool(out.write, bytes(pending))
    if size == 0:
        raise SiteError(400, "send the bundle (a .tar.gz or .zip) as the request body")


def _prepare(
    store: LadderStore, holder: TokenHolder, wanted: Registration, body: Path, unpacker: Unpacker
) -> Prepared:
    """registration.prepare for this holder: whether the bot is new, and the owner that stands."""
    wanted, new = management.as_registered_by(store, holder, wanted)
    return prepare(store, dataclasses.replace(wanted, bundle=body), new, unpacker.store)


def _record(store: LadderStore, holder: TokenHolder, prepared: Prepared, report: CheckReport) -> Registered:
    done = record(store, prepared, report)
    assert done.upload is not None
    upload = done.upload
    detail = f"version {upload.version} ({upload.sha256[:12]}): {upload.run}"
    store.access.record_write(management.actor(holder), "bot_uploaded", prepared.wanted.name, detail)
    return done


def _release(store: LadderStore, name: str, kept: KeptBundle | None) -> None:
    try:
        Uploads(store).release(kept)
    except (StoreError, OSError) as error:  # the next upload's sweep removes what is left
        log.warning("upload_not_swept", bot=name, reason=str(error))


async def _audit_refusal(db: str | Path, holder: TokenHolder, name: str, reason: str) -> None:
    try:
        await _in_store(
            db,
            lambda store: store.access.record_write(management.actor(holder), "upload_refused", name, reason),
        )
    except StoreError as error:
        log.warning("upload_refusal_not_audited", bot=name, reason=str(error))
    log.info("upload_refused", bot=name, by=management.actor(holder), reason=reason)


def _check_quotas(
    store: LadderStore, holder: TokenHolder, limits: UploadLimits, adding: Prepared | None = None
) -> None:
    """A 429 when a participant's token is over a quota. Before the body is read (`adding` None): its
    uploads of the last hour, and whether the bundles kept for its bots leave any room; once the bundle is
    kept (`adding`), whether it fits (a bundle they have already costs nothing more)."""
    who = management.actor(holder)
    now = time.time()
    if adding is None:
        times = store.access.write_times(who, COUNTED, now - HOUR_S)
        if len(times) >= limits.per_hour:
            frees = times[len(times) - limits.per_hour] + HOUR_S - now
            at = time.strftime("%H:%M UTC", time.gmtime(now + frees))
            raise SiteError(
                429,
                f"over the quota of {limits.per_hour} uploads an hour for this token (refused uploads "
                f"count): the next is allowed in {_minutes(frees)}, at {at}",
                max(1, round(frees)),
            )
    kept = store.uploads.bundles_of(holder.name)
    taken = store.uploads.kept_bytes(kept)
    more = 0
    if adding is not None and adding.kept is not None and adding.kept.bundle.sha256 not in kept:
        more = adding.kept.bundle.bytes
    if taken + more > limits.kept_bytes or (adding is None and taken >= limits.kept_bytes):
        bringing = f", and this upload {_mib(more)} more" if more else ""
        raise SiteError(
            429,
            f"over the quota of {_mib(limits.kept_bytes)} kept for this token's bots: their versions' "
            f"bundles take {_mib(taken)}{bringing}; it frees when the host prunes old versions "
            "(arena bots prune)",
        )


def _mib(count: int) -> str:
    return f"{count / MIB:,.1f} MiB"


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


async def _in_store(db: str | Path, work: Callable[[LadderStore], T]) -> T:
    """`work` on the ladder opened for writing, in a thread (the store is used in that thread alone)."""

    def run() -> T:
        with management.writer(db) as store:
            return work(store)

    return await run_in_threadpool(run)
