"""The signed-in pages' routes: signing in with a token and out, an entrant's pages (their bots, each
bot's versions and matches, the upload form) and the host's page. Each is a thin adapter, as app.py's
routes are, between a request (its session checked first: sign_in.py) and entrants.py (what a viewer may
see, and the reads), the store's sessions, or uploading.py: the form's upload goes through the very path
of `POST /api/bots/NAME/upload` (the same gate, quotas, limits, check and audit), its bundle streamed from
the form (upload_form.py).

Without a session a page redirects to the sign-in form, and a form's POST is a 403; a page of another
entrant's bot is a 404, like one that does not exist. Signed-in pages are never cached nor framed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar
from urllib.parse import parse_qsl, quote, urlencode

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.ladder.store import LadderStore, Session, StoreError, TokenHolder
from arena.site import data, entrants, management, params, sign_in, uploading
from arena.site.data import SiteError
from arena.site.live import client_of
from arena.site.upload_form import UploadForm

if TYPE_CHECKING:
    from arena.site.app import SiteSettings

log = structlog.get_logger("site")

PRIVATE_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
"""What every signed-in page and answer carries: never kept by a cache, never framed by another site, and
no script, style or form target but the site's own files and routes (the pages have no inline script:
whatever of an entrant's a page shows the host, escaped already, could not run even if it slipped
through)."""
NOT_SIGNED_IN: Final = "you are not signed in (or your session has ended): sign in again"


T = TypeVar("T")


class Reader(Protocol):
    """app.py's `read`: a function of a read-only store, run in a thread."""

    def __call__(self, function: Callable[[LadderStore], T]) -> Awaitable[T]: ...


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a signed-in request is from: their token's holder, their session, its forms' CSRF token."""

    holder: TokenHolder
    session_id: str
    csrf: str


class AccountPages:
    """The signed-in pages over the site's store (`read`: a read-only store per call, in a thread) and its
    pages (`html`)."""

    def __init__(
        self,
        settings: SiteSettings,
        read: Reader,
        html: Callable[..., HTMLResponse],
        gate: uploading.UploadGate,
        unpacker: uploading.Unpacker,
    ) -> None:
        self.settings = settings
        self.limits = settings.sign_in
        self.read = read
        self.html = html
        self.gate = gate
        self.unpacker = unpacker
        self.attempts = sign_in.Attempts(self.limits)

    def routes(self) -> list[Route]:
        return [
            Route("/sign-in", self.sign_in_page, methods=["GET"]),
            Route("/sign-in", self.sign_in, methods=["POST"]),
            Route("/sign-out", self.sign_out, methods=["POST"]),
            Route("/account", self.account_page),
            Route("/account/bots/{name}", self.bot_page),
            Route("/account/bots/{name}/matches/{match_id}/output", self.output_page),
            Route("/account/upload", self.upload, methods=["POST"]),
        ]

    # Sessions.

    async def viewer(self, request: Request, touch: bool = True) -> Viewer | None:
        """The request's live session, or None; its last use written now and then (`touch_s`), unless
        `touch` is off (a sign-out, which removes it)."""
        signed_in = await self.signed_in(request, lambda _store, _holder: None, touch)
        return None if signed_in is None else signed_in[0]

    async def signed_in(
        self, request: Request, build: Callable[[LadderStore, TokenHolder], T], touch: bool = True
    ) -> tuple[Viewer, T] | None:
        """The request's live session and what `build` reads for its holder, both from one read-only
        store (one snapshot, one opening); None without a live session (`build` is then not called). The
        session's last use is written now and then (`touch_s`)."""
        session_id = sign_in.session_id_of(request)
        if session_id is None:
            return None
        now = time.time()

        def reading(store: LadderStore) -> tuple[Session, T | SiteError] | None:
            found = store.sessions.session(session_id, now, self.limits.idle_s)
            if found is None:
                return None
            try:
                return found, build(store, found.holder)
            except SiteError as error:  # answered once the session's use is written, as any page
                return found, error

        read = await self.read(reading)
        if read is None:
            return None
        found, shown = read
        if touch and found.last_seen < now - self.limits.touch_s:
            await run_in_threadpool(self._touch, session_id, now)
        if isinstance(shown, SiteError):
            raise shown
        return Viewer(found.holder, session_id, sign_in.csrf_token(session_id)), shown

    def _touch(self, session_id: str, now: float) -> None:
        try:
            with management.writer(self.settings.db) as store:
                store.sessions.touch(session_id, now)
        except StoreError as error:  # the page is still shown; the next one tries again
            log.warning("session_not_touched", reason=str(error))

    def page(self, template: str, viewer: Viewer | None, status: int = 200, **context: Any) -> HTMLResponse:
        answer = self.html(template, status, viewer=viewer, **context)
        answer.headers.update(PRIVATE_HEADERS)
        return answer

    async def sign_in_page(self, request: Request) -> Response:
        return self.page("sign_in.html", None)

    async def sign_in(self, request: Request) -> Response:
        """Check the token, open a session; every attempt is answered `delay_s` after it arrived."""
        arrived = time.monotonic()
        self.attempts.count(client_of(request.client.host if request.client else None), time.time())
        try:
            sign_in.check_origin(request)
            fields = _urlencoded(await params.small_body(request, management.MAX_BODY_BYTES, "the form"))
            token = fields.get("token", "").strip()
            holder = await self.read(lambda store: store.access.token_holder(token)) if token else None
            previous = sign_in.session_id_of(request)
            session_id = (
                None if holder is None else await run_in_threadpool(self._start, holder, token, previous)
            )
        finally:
            await asyncio.sleep(max(0.0, arrived + self.limits.delay_s - time.monotonic()))
        if holder is None or session_id is None:
            return self.page("sign_in.html", None, 401, message=sign_in.WRONG_TOKEN)
        log.info("signed_in", who=management.actor(holder))
        answer = RedirectResponse("/account", 303, headers=PRIVATE_HEADERS)
        sign_in.set_cookie(answer, request, session_id, self.limits.lifetime_s)
        return answer

    def _start(self, holder: TokenHolder, token: str, previous: str | None) -> str:
        """A new session (and the end of the one the browser had, if any: one browser, one session)."""
        with management.writer(self.settings.db) as store:
            if previous is not None:
                store.sessions.end(previous)
            limits = self.limits
            return store.sessions.start(holder, token, time.time(), limits.lifetime_s, limits.idle_s)

    async def sign_out(self, request: Request) -> Response:
        sign_in.check_origin(request)  # first: another site's form may not even take the cookie back
        viewer = await self.viewer(request, touch=False)
        if viewer is not None:
            sign_in.check_csrf(
                viewer.session_id,
                _urlencoded(await params.small_body(request, management.MAX_BODY_BYTES, "the form")).get(
                    sign_in.CSRF_FIELD
                ),
            )
            await run_in_threadpool(self._end, viewer.session_id)
            log.info("signed_out", who=management.actor(viewer.holder))
        answer = RedirectResponse("/", 303, headers=PRIVATE_HEADERS)
        sign_in.clear_cookie(answer, request)
        return answer

    def _end(self, session_id: str) -> None:
        with management.writer(self.settings.db) as store:
            store.sessions.end(session_id)

    # Pages.

    async def account_page(self, request: Request) -> Response:
        def build(store: LadderStore, holder: TokenHolder) -> dict[str, Any]:
            return entrants.host_view(store) if holder.role == "host" else entrants.entrant(store, holder)

        signed_in = await self.signed_in(request, build)
        if signed_in is None:
            return _to_sign_in()
        viewer, shown = signed_in
        return self.page("host.html" if viewer.holder.role == "host" else "account.html", viewer, data=shown)

    async def _entrant_page(self, viewer: Viewer, status: int = 200, **context: Any) -> HTMLResponse:
        shown = await self.read(lambda store: entrants.entrant(store, viewer.holder))
        return self.page("account.html", viewer, status, data=shown, **context)

    async def bot_page(self, request: Request) -> Response:
        def build(
            store: LadderStore, holder: TokenHolder
        ) -> tuple[str, str | None, str | None, dict[str, Any]]:
            # The request's parameters are checked once signed in: a stranger is sent to sign in first.
            name = params.bot_name(str(request.path_params["name"]))
            pool = data.checked_pool(params.text(request.query_params, "pool"))
            page = params.page(request.query_params)
            uploaded = params.single(request.query_params, "uploaded")
            return name, pool, uploaded, entrants.entrant_bot(store, holder, name, pool, page)

        signed_in = await self.signed_in(request, build)
        if signed_in is None:
            return _to_sign_in()
        viewer, (name, pool, uploaded, shown) = signed_in

        def page_url(number: int) -> str:
            query = {key: value for key, value in (("pool", pool), ("page", number)) if value}
            return f"/account/bots/{quote(name, safe='')}?" + urlencode(query)

        accepted = next((v for v in shown["versions"] if str(v["version"]) == uploaded), None)
        return self.page("account_bot.html", viewer, data=shown, accepted=accepted, page_url=page_url)

    async def output_page(self, request: Request) -> Response:
        """The bot's own output in one of its matches, once the match's set is over."""

        def build(store: LadderStore, holder: TokenHolder) -> dict[str, Any]:
            name = params.bot_name(str(request.path_params["name"]))
            match_id = params.match_id(str(request.path_params["match_id"]))
            return entrants.match_output(store, holder, name, match_id)

        signed_in = await self.signed_in(request, build)
        if signed_in is None:
            return _to_sign_in()
        viewer, shown = signed_in
        return self.page("account_output.html", viewer, data=shown)

    # The upload form.

    async def upload(self, request: Request) -> Response:
        """The upload form of an entrant's page: a new version of the bot named as their token (or the
        bot itself, when new), as `POST /api/bots/NAME/upload` makes it; accepted, the bot's page with
        its new version; refused, the entrant's page with the arena's reason. The form is an upload from
        its first byte: let in by the uploads' gate before any of it is read (one of a token at a time,
        `--uploads-at-once` in all), what comes before the bundle due within `fields_s`."""
        self.gate.check_room()
        viewer = await self.viewer(request)
        if viewer is None:
            raise SiteError(403, NOT_SIGNED_IN)
        sign_in.check_origin(request)
        holder = viewer.holder
        if holder.role != "participant":
            raise entrants.not_found()
        form = UploadForm(request)
        with self.gate.entered(holder):
            run, bundle = await self._form(form, viewer.session_id)
            try:
                wanted = management.upload_registration(holder, holder.name, run or None)
                limits = self.settings
                done, _action, _status = await uploading.admitted(
                    bundle, limits.db, holder, wanted, limits.uploads, self.unpacker, limits.sandbox
                )
            except SiteError as error:
                answer = await self._entrant_page(viewer, error.status, refusal=error.message, run=run)
                answer.headers["Connection"] = "close"  # the form's body may be unread (as app.failure says)
                if error.retry_after_s is not None:
                    answer.headers["Retry-After"] = str(error.retry_after_s)
                return answer
        assert done.upload is not None
        where = f"/account/bots/{quote(holder.name, safe='')}?uploaded={done.upload.version}"
        return RedirectResponse(where, 303, headers=PRIVATE_HEADERS)

    async def _form(self, form: UploadForm, session_id: str) -> tuple[str, uploading.Body]:
        """The form's run command and its bundle, once its CSRF token is checked: all but the bundle's
        bytes within `fields_s`, or a 408."""
        due_s = self.settings.uploads.fields_s
        try:
            async with asyncio.timeout(due_s):
                fields = await form.fields(sign_in.CSRF_FIELD, "run")
                sign_in.check_csrf(session_id, fields[sign_in.CSRF_FIELD])
                bundle = await form.bundle("bundle")
        except TimeoutError:
            raise SiteError(408, f"the upload form's fields did not arrive within {due_s:g} s") from None
        return fields["run"].strip(), bundle


def _to_sign_in() -> Response:
    return RedirectResponse("/sign-in", 303, headers=PRIVATE_HEADERS)


def _urlencoded(body: bytes) -> dict[str, str]:
    """A urlencoded form's fields (each given once), or a 400."""
    try:
        pairs = parse_qsl(
            body.decode("ascii"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=8
        )
    except (UnicodeDecodeError, ValueError):
        raise SiteError(400, "the form's body is not a urlencoded form") from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key in fields:
            raise SiteError(400, f"the form's field {key!r} is given twice")
        fields[key] = value
    return fields
