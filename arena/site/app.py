"""`arena serve`'s web application: the routes, each a thin adapter between a request and data.py
(reads), management.py (writes) or the live table; pages rendered by render.py. Every failure a request
can cause is a 4xx with a message (JSON under /api/, a page elsewhere); the ladder file is opened
read-only for each read, so the site never holds a lock a running ladder waits for."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.ladder import LadderStore, StoreError
from arena.ladder.registration import Registration
from arena.runner.public_events import public_only
from arena.site import data, management, render, uploading
from arena.site.upload_limits import UploadLimits

log = structlog.get_logger("site")

POLL_S: Final = 0.5
"""How often a live stream looks for new events."""
KEEPALIVE_S: Final = 15.0
STREAM_LIMIT_S: Final = 4 * 3600.0
"""A live stream ends after this long (the browser reconnects, from where it was)."""
MAX_NAME: Final = 200
MAX_STREAMS: Final = 200
"""Live streams open at once: each polls the ladder file, so a crowd of them is refused (503), not
served slowly to everybody."""

T = TypeVar("T")


@dataclass(frozen=True)
class SiteSettings:
    """What `arena serve` was given."""

    db: str | Path
    """The ladder: a SQLite file, or a PostgreSQL URL."""
    live_delay_s: float = 0.0
    """Spectators see a match's events this many seconds after they happened."""
    uploads: UploadLimits = field(default_factory=UploadLimits)
    """How many uploads at once, and each participant's quotas (uploading.py)."""


def _param(request: Request, key: str, limit: int = MAX_NAME) -> str | None:
    value = request.query_params.get(key)
    if value is None or value == "":
        return None
    if len(value) > limit or not value.isprintable():
        raise data.SiteError(400, f"{key!r} must be printable text of at most {limit} characters")
    return value


def _page(request: Request) -> int:
    text = request.query_params.get("page")
    if text is None or text == "":
        return 1
    if not text.isdecimal() or len(text) > 6 or not 1 <= int(text) <= data.MAX_PAGE:
        raise data.SiteError(400, f"'page' must be a whole number from 1 to {data.MAX_PAGE:,}")
    return int(text)


def _path_name(request: Request, key: str) -> str:
    value = str(request.path_params[key])
    if len(value) > MAX_NAME or not value.isprintable():
        raise data.SiteError(404, "no such page")
    return value


def create_app(settings: SiteSettings) -> Starlette:
    """The site over the ladder file of `settings`."""

    @contextmanager
    def reader() -> Iterator[LadderStore]:
        store = LadderStore(settings.db, read_only=True, timeout=5.0)
        try:
            yield store
        finally:
            store.close()

    async def read(function: Callable[[LadderStore], T]) -> T:
        def run() -> T:
            with reader() as store:
                return function(store)

        return await run_in_threadpool(run)

    links = render.Links()
    streams_open = [0]
    gate = uploading.UploadGate(settings.uploads)
    unpacker = uploading.Unpacker(settings.uploads.at_once)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await run_in_threadpool(unpacker.close)

    def html(template: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(render.page(template, links, **context), status_code=status)

    # Pages.

    async def leaderboard(request: Request) -> Response:
        pool = data.checked_pool(_param(request, "pool"))
        shown = await read(lambda store: data.standings(store, pool))
        recent = await read(lambda store: data.matches(store, None, shown["pool"], 1)["matches"][:10])
        return html("leaderboard.html", data=shown, recent=recent)

    async def bot_page(request: Request) -> Response:
        name = _path_name(request, "name")
        pool = data.checked_pool(_param(request, "pool"))
        shown = await read(lambda store: data.bot(store, name, pool))
        return html("bot.html", data=shown, chart=render.bot_chart(shown))

    async def matches_page(request: Request) -> Response:
        bot, pool, page = _param(request, "bot"), data.checked_pool(_param(request, "pool")), _page(request)
        shown = await read(lambda store: data.matches(store, bot, pool, page))
        known = await read(data.pools)

        def page_url(number: int) -> str:
            query = {key: value for key, value in (("bot", bot), ("pool", pool)) if value}
            return "/matches?" + render.urlencode({**query, "page": number})

        return html("matches.html", data=shown, pools=known, page_url=page_url)

    async def match_page(request: Request) -> Response:
        match_id = _path_name(request, "match_id")
        view = await read(lambda store: data.match_view(store, match_id))
        return html("match.html", data=view, ranking=render.ranking(view))

    async def live_page(request: Request) -> Response:
        before = time.time() - settings.live_delay_s
        live = await read(lambda store: data.live_matches(store, before))
        return html("live_list.html", live=live, delay=settings.live_delay_s)

    async def live_match_page(request: Request) -> Response:
        match_id = _path_name(request, "match_id")
        await _live_or_404(match_id)
        return html("live.html", match_id=match_id)

    # The JSON API.

    async def api_pools(request: Request) -> Response:
        return JSONResponse(await read(data.pools))

    async def api_standings(request: Request) -> Response:
        pool = data.checked_pool(_param(request, "pool"))
        return JSONResponse(await read(lambda store: data.standings(store, pool)))

    async def api_bot(request: Request) -> Response:
        name = _path_name(request, "name")
        pool = data.checked_pool(_param(request, "pool"))
        return JSONResponse(await read(lambda store: data.bot(store, name, pool)))

    async def api_matches(request: Request) -> Response:
        bot, pool, page = _param(request, "bot"), data.checked_pool(_param(request, "pool")), _page(request)
        return JSONResponse(await read(lambda store: data.matches(store, bot, pool, page)))

    async def api_match(request: Request) -> Response:
        match_id = _path_name(request, "match_id")
        return JSONResponse(await read(lambda store: data.record(store, match_id)))

    async def api_live(request: Request) -> Response:
        before = time.time() - settings.live_delay_s
        return JSONResponse(await read(lambda store: data.live_matches(store, before)))

    async def _live_or_404(match_id: str) -> None:
        before = time.time() - settings.live_delay_s
        live = await read(lambda store: [m["match_id"] for m in data.live_matches(store, before)])
        if match_id not in live:
            raise data.SiteError(404, f"no match {match_id!r} in play (a finished match is at /matches/ID)")

    async def api_live_events(request: Request) -> Response:
        match_id = _path_name(request, "match_id")
        after = request.headers.get("last-event-id") or request.query_params.get("after") or "-1"
        if not after.lstrip("-").isdecimal() or len(after) > 12:
            raise data.SiteError(400, "'after' (or Last-Event-ID) must be a whole number")
        await _live_or_404(match_id)
        if streams_open[0] >= MAX_STREAMS:
            raise data.SiteError(503, "too many spectators at once; try again in a minute")
        return StreamingResponse(
            _stream(match_id, int(after)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _stream(match_id: str, after: int) -> AsyncIterator[str]:
        """`_messages`, counted among the streams open."""
        streams_open[0] += 1
        try:
            async for message in _messages(match_id, after):
                yield message
        finally:
            streams_open[0] -= 1

    async def _messages(match_id: str, after: int) -> AsyncIterator[str]:
        """The match's public events as server-sent events, each cut to its public keys; `end` when the
        match is no longer in play, or has had no new event for LIVE_FRESH_S (its runner died)."""
        started = last_sent = last_event = time.monotonic()
        while time.monotonic() - started < STREAM_LIMIT_S:
            before = time.time() - settings.live_delay_s
            events, live = await read(partial(_newest, match_id, after, before))
            if events:
                last_event = time.monotonic()
            for seq, event in events:
                after = seq
                public = public_only(event)
                if public is not None:
                    last_sent = time.monotonic()
                    yield f"id: {seq}\ndata: {json.dumps(public, separators=(',', ':'))}\n\n"
            if (not live and not events) or time.monotonic() - last_event > data.LIVE_FRESH_S:
                yield f"event: end\ndata: {json.dumps({'match_id': match_id})}\n\n"
                return
            if time.monotonic() - last_sent > KEEPALIVE_S:
                last_sent = time.monotonic()
                yield ": keep-alive\n\n"
            await asyncio.sleep(POLL_S)

    # Management (a token needed).

    def _newest(
        match_id: str, after: int, before: float, store: LadderStore
    ) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
        return store.live_events(match_id, after, before=before), store.is_live(match_id)

    async def api_add_bot(request: Request) -> Response:
        holder = await read(lambda store: management.holder_of(store, request.headers.get("authorization")))
        document = management.json_body(await _body(request))
        name, address = management.bot_request(holder, document)
        wanted = Registration(name, address, owner=management.owner_of(holder, document))
        done, action, status = await management.register(settings.db, holder, wanted)
        answer = {"bot": name, "address": address, "owner": done.entry.owner, "action": action}
        return JSONResponse(answer, status_code=status)

    async def api_upload_bot(request: Request) -> Response:
        name = _path_name(request, "name")
        gate.check_room()
        holder = await read(lambda store: management.holder_of(store, request.headers.get("authorization")))
        launch = management.upload_request(holder, name, request.query_params.get("run"))
        wanted = Registration(name, launch=launch, owner=management.owner_of(holder))
        done, action, status = await uploading.upload(
            request, settings.db, holder, wanted, settings.uploads, gate, unpacker
        )
        assert done.upload is not None
        upload = {"version": done.upload.version, "sha256": done.upload.sha256, "run": done.upload.run}
        answer = {"bot": name, "owner": done.entry.owner, "action": action, "upload": upload}
        return JSONResponse(answer, status_code=status)

    async def api_remove_bot(request: Request) -> Response:
        name = _path_name(request, "name")
        holder = await read(lambda store: management.holder_of(store, request.headers.get("authorization")))
        await run_in_threadpool(management.remove_bot, settings.db, holder, name)
        return JSONResponse({"bot": name, "action": "bot_removed"})

    async def api_probation(request: Request) -> Response:
        name = _path_name(request, "name")
        holder = await read(lambda store: management.holder_of(store, request.headers.get("authorization")))
        document = management.json_body(await _body(request))
        reason = await run_in_threadpool(management.set_probation, settings.db, holder, name, document)
        return JSONResponse({"bot": name, "probation": reason})

    async def _body(request: Request) -> bytes:
        declared = request.headers.get("content-length", "0")
        if not declared.isdecimal() or int(declared) > management.MAX_BODY_BYTES:
            raise data.SiteError(413, f"the request body is over {management.MAX_BODY_BYTES} bytes")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > management.MAX_BODY_BYTES:
                raise data.SiteError(413, f"the request body is over {management.MAX_BODY_BYTES} bytes")
        return body

    # Errors: a message for people, never a traceback.

    def failure(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            answer: Response = JSONResponse({"error": message}, status_code=status)
        else:
            answer = html("error.html", status=status, message=message)
        if request.method == "POST":
            # The body may be unread (an upload refused before it: a quota, too many at once): closing
            # spares the site reading it only to throw it away, which a flood of them would make it do.
            answer.headers["Connection"] = "close"
        return answer

    async def site_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, data.SiteError)
        answer = failure(request, error.status, error.message)
        if error.retry_after_s is not None:
            answer.headers["Retry-After"] = str(error.retry_after_s)
        return answer

    async def store_error(request: Request, error: Exception) -> Response:
        log.warning("ladder_file_unreadable", reason=str(error))
        return failure(request, 503, f"the ladder file cannot be read now: {error}")

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        message = {404: "no such page", 405: "method not allowed"}.get(error.status_code, str(error.detail))
        return failure(request, error.status_code, message)

    routes = [
        Route("/", leaderboard),
        Route("/bots/{name}", bot_page),
        Route("/matches", matches_page),
        Route("/matches/{match_id}", match_page),
        Route("/live", live_page),
        Route("/live/{match_id}", live_match_page),
        Route("/api/pools", api_pools),
        Route("/api/standings", api_standings),
        Route("/api/bots", api_add_bot, methods=["POST"]),
        Route("/api/bots/{name}", api_bot, methods=["GET"]),
        Route("/api/bots/{name}", api_remove_bot, methods=["DELETE"]),
        Route("/api/bots/{name}/probation", api_probation, methods=["POST"]),
        Route("/api/bots/{name}/upload", api_upload_bot, methods=["POST"]),
        Route("/api/matches", api_matches),
        Route("/api/matches/{match_id}", api_match),
        Route("/api/live", api_live),
        Route("/api/live/{match_id}/events", api_live_events),
        Mount("/static", app=StaticFiles(directory=render.STATIC), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            data.SiteError: site_error,
            StoreError: store_error,
            HTTPException: http_error,
        },
    )
