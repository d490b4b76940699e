"""`arena serve`'s web application: the routes, each a thin adapter between a request (its parameters
checked by params.py) and data.py (reads), management.py (writes) or live.py (the live streams), and the
signed-in pages' (account.py); pages rendered by render.py. Every failure a request can cause is a 4xx
with a message (JSON under /api/, a page elsewhere), and a client gone mid-body one log line; the
ladder file is opened read-only for each read, so the site never holds a lock a running ladder waits
for. A ladder that cannot be read now (a locked file, a database server away) is a one-line 503 with
Retry-After, and the next request that finds it readable is served as usual: nothing is to restart."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.ladder.outages import DEFAULT_STORE_WAIT_S, StoreWait
from arena.ladder.registration import Registration
from arena.ladder.store import LadderStore, StoreError
from arena.sandbox.bubblewrap import Sandbox
from arena.site import data, management, params, render, uploading
from arena.site.account import AccountPages
from arena.site.live import LiveHub, client_of
from arena.site.sign_in import SignInLimits
from arena.site.stream_limits import StreamLimits
from arena.site.upload_limits import UploadLimits

log = structlog.get_logger("site")

T = TypeVar("T")


@dataclass(frozen=True)
class SiteSettings:
    """What `arena serve` was given."""

    db: str | Path
    """The ladder: a SQLite file, or a PostgreSQL URL."""
    live_delay_s: float = 0.0
    """Spectators see a match's events this many seconds after they happened."""
    streams: StreamLimits = field(default_factory=StreamLimits)
    """How many live streams are served at once, and how they are fed."""
    uploads: UploadLimits = field(default_factory=UploadLimits)
    """How many uploads at once, and each participant's quotas (uploading.py)."""
    sandbox: Sandbox = field(default_factory=Sandbox)
    """The limits of the sandbox an upload is checked in (`arena serve --bot-memory ...`)."""
    sign_in: SignInLimits = field(default_factory=SignInLimits)
    """How long the signed-in pages' sessions last, and how often a client may try to sign in."""
    store_wait_s: float = DEFAULT_STORE_WAIT_S
    """How long the live streams wait for a store server that went away before they end (a page asked
    for meanwhile is a 503 at once, and served again as soon as the server is back)."""


def _pool(request: Request) -> str | None:
    return data.checked_pool(params.text(request.query_params, "pool"))


def _listing(request: Request) -> tuple[str | None, str | None, int]:
    """A list of matches asked for: the bot, the pool and the page."""
    return params.text(request.query_params, "bot"), _pool(request), params.page(request.query_params)


def _bot_name(request: Request) -> str:
    return params.bot_name(str(request.path_params["name"]))


def _match_id(request: Request) -> str:
    return params.match_id(str(request.path_params["match_id"]))


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
    hub = LiveHub(read, settings.streams, settings.live_delay_s, StoreWait(settings.store_wait_s))
    gate = uploading.UploadGate(settings.uploads)
    unpacker = uploading.Unpacker(settings.uploads.at_once)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await run_in_threadpool(unpacker.close)

    def html(template: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(render.page(template, links, status=status, **context), status_code=status)

    # Pages.

    async def leaderboard(request: Request) -> Response:
        pool = _pool(request)
        shown = await read(lambda store: data.standings(store, pool))
        recent = await read(lambda store: data.matches(store.browse, None, shown["pool"], 1)["matches"][:10])
        return html("leaderboard.html", data=shown, recent=recent)

    async def bot_page(request: Request) -> Response:
        name, pool = _bot_name(request), _pool(request)
        shown = await read(lambda store: data.bot(store, name, pool))
        return html("bot.html", data=shown, chart=render.bot_chart(shown))

    async def matches_page(request: Request) -> Response:
        bot, pool, page = _listing(request)
        shown = await read(lambda store: data.matches(store.browse, bot, pool, page))
        known = await read(data.pools)

        def page_url(number: int) -> str:
            query = {key: value for key, value in (("bot", bot), ("pool", pool)) if value}
            return "/matches?" + render.urlencode({**query, "page": number})

        return html("matches.html", data=shown, pools=known, page_url=page_url)

    async def match_page(request: Request) -> Response:
        match_id = _match_id(request)
        view = await read(lambda store: data.match_view(store.browse, match_id))
        return html("match.html", data=view, ranking=render.ranking(view))

    async def live_page(request: Request) -> Response:
        before = time.time() - settings.live_delay_s
        live = await read(lambda store: data.live_matches(store.live, before))
        return html("live_list.html", live=live, delay=settings.live_delay_s)

    async def live_match_page(request: Request) -> Response:
        match_id = _match_id(request)
        await _live_or_404(match_id)
        return html("live.html", match_id=match_id)

    # The JSON API.

    async def api_pools(request: Request) -> Response:
        return JSONResponse(await read(data.pools))

    async def api_standings(request: Request) -> Response:
        pool = _pool(request)
        return JSONResponse(await read(lambda store: data.standings(store, pool)))

    async def api_bot(request: Request) -> Response:
        name, pool = _bot_name(request), _pool(request)
        return JSONResponse(await read(lambda store: data.bot(store, name, pool)))

    async def api_matches(request: Request) -> Response:
        bot, pool, page = _listing(request)
        return JSONResponse(await read(lambda store: data.matches(store.browse, bot, pool, page)))

    async def api_match(request: Request) -> Response:
        match_id = _match_id(request)
        return JSONResponse(await read(lambda store: data.record(store.browse, match_id)))

    async def api_live(request: Request) -> Response:
        before = time.time() - settings.live_delay_s
        return JSONResponse(await read(lambda store: data.live_matches(store.live, before)))

    async def _live_or_404(match_id: str) -> None:
        before = time.time() - settings.live_delay_s
        live = await read(lambda store: [m["match_id"] for m in data.live_matches(store.live, before)])
        if match_id not in live:
            raise data.SiteError(404, f"no match {match_id!r} in play (a finished match is at /matches/ID)")

    async def api_live_events(request: Request) -> Response:
        match_id = _match_id(request)
        after = params.after(request.query_params, request.headers)
        client = client_of(request.client.host if request.client else None)
        return await hub.stream(match_id, after, client, lambda: _live_or_404(match_id))

    # Management (a token needed).

    async def api_add_bot(request: Request) -> Response:
        holder = await read(
            lambda store: management.holder_of(store.access, request.headers.get("authorization"))
        )
        document = management.json_body(await _body(request))
        name, address = management.bot_request(holder, document)
        wanted = Registration(name, address, owner=management.owner_of(holder, document), by=holder.name)
        done, action, status = await management.register(settings.db, holder, wanted)
        answer = {"bot": name, "address": address, "owner": done.entry.owner, "action": action}
        return JSONResponse(answer, status_code=status)

    async def api_upload_bot(request: Request) -> Response:
        name = _bot_name(request)
        gate.check_room()
        holder = await read(
            lambda store: management.holder_of(store.access, request.headers.get("authorization"))
        )
        wanted = management.upload_registration(holder, name, params.single(request.query_params, "run"))
        done, action, status = await uploading.upload(
            uploading.request_body(request),
            settings.db,
            holder,
            wanted,
            settings.uploads,
            gate,
            unpacker,
            settings.sandbox,
        )
        assert done.upload is not None
        assert done.check is not None
        upload = {"version": done.upload.version, "sha256": done.upload.sha256, "run": done.upload.run}
        answer = {
            "bot": name,
            "owner": done.entry.owner,
            "action": action,
            "upload": upload,
            "check": done.check.to_json(),
        }
        return JSONResponse(answer, status_code=status)

    async def api_remove_bot(request: Request) -> Response:
        name = _bot_name(request)
        holder = await read(
            lambda store: management.holder_of(store.access, request.headers.get("authorization"))
        )
        await run_in_threadpool(management.remove_bot, settings.db, holder, name)
        return JSONResponse({"bot": name, "action": "bot_removed"})

    async def api_probation(request: Request) -> Response:
        name = _bot_name(request)
        holder = await read(
            lambda store: management.holder_of(store.access, request.headers.get("authorization"))
        )
        document = management.json_body(await _body(request))
        reason = await run_in_threadpool(management.set_probation, settings.db, holder, name, document)
        return JSONResponse({"bot": name, "probation": reason})

    async def _body(request: Request) -> bytes:
        return await params.small_body(request, management.MAX_BODY_BYTES, "the request body")

    # Errors: a message for people, never a traceback.

    def failure(request: Request, status: int, message: str, more: dict[str, Any] | None = None) -> Response:
        if request.url.path.startswith("/api/"):
            answer: Response = JSONResponse({"error": message, **(more or {})}, status_code=status)
        else:
            answer = html("error.html", status=status, message=message)
        if request.method == "POST":
            # The body may be unread (an upload refused before it: a quota, too many at once): closing
            # spares the site reading it only to throw it away, which a flood of them would make it do.
            answer.headers["Connection"] = "close"
        return answer

    async def site_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, data.SiteError)
        answer = failure(request, error.status, error.message, error.more)
        if error.retry_after_s is not None:
            answer.headers["Retry-After"] = str(error.retry_after_s)
        return answer

    async def store_error(request: Request, error: Exception) -> Response:
        # The reason names the host's file or database server: the host's log has it, the visitor not.
        log.warning("ladder_file_unreadable", reason=str(error))
        answer = failure(request, 503, "the ladder cannot be read now; try again soon")
        answer.headers["Retry-After"] = "10"
        return answer

    async def client_gone(request: Request, error: Exception) -> Response:
        # The client closed the connection before its body was whole (anybody can, at will): one line,
        # not a traceback in the host's log; the answer goes nowhere.
        log.info("request_abandoned", path=request.url.path)
        return Response(status_code=400, headers={"Connection": "close"})

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
        *AccountPages(settings, read, html, gate, unpacker).routes(),
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
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            data.SiteError: site_error,
            StoreError: store_error,
            ClientDisconnect: client_gone,
            HTTPException: http_error,
        },
    )
    app.state.live = hub  # for the tests: the streams open, the matches watched
    app.state.uploads = gate  # for the tests: the uploads in progress
    return app
