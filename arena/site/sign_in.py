"""Signing in to the site with a token (arena tokens add): the session's cookie, the CSRF token of its
forms, the check that a form was posted from this site, and the bound on sign-in attempts per client.
The sessions themselves are the store's (arena/ladder/store/sessions.py).

- *The cookie* holds the session's id alone: HttpOnly (no script reads it), SameSite=Strict (no other
  site's page sends it), Path=/, a Max-Age of the session's lifetime, and over TLS Secure and named with
  the `__Host-` prefix (a browser takes such a cookie only from this very host, so a page of a sibling
  host, entrant.example.org beside arena.example.org, cannot plant a session of its own on a visitor,
  who would then upload their bot into its account). `arena serve` speaks plain HTTP behind a TLS
  proxy, so TLS is seen as uvicorn reports the scheme: `https` when the proxy says `X-Forwarded-Proto:
  https` and is one uvicorn trusts (127.0.0.1 by default; `FORWARDED_ALLOW_IPS` names others), as it
  trusts `X-Forwarded-For` for the client's address.
- *CSRF*: every form that changes something carries a token derived from the session's id (an HMAC of
  it: it names the session to nobody, and needs nothing stored), compared in constant time; and a POST
  whose Origin (or, without one, Referer) names another host is refused, the sign-in form's too.
- *Attempts*: at most `attempts` sign-ins per client (an IPv4 address, an IPv6 /64) in `window_s`,
  counted by each site process; every attempt is answered `delay_s` after it arrived, whatever its
  outcome, and a wrong one reads only "wrong token".

Nothing of a token or a session goes into a log line, a URL or a page (a page shows only the CSRF token,
which opens nothing by itself).
"""

from __future__ import annotations

import hashlib
import hmac
from collections import deque
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from arena.site.data import SiteError

COOKIE: Final = "arena_session"
"""The session's cookie over plain HTTP (on this machine, or a LAN)."""
TLS_COOKIE: Final = "__Host-" + COOKIE
"""The session's cookie over TLS."""
CSRF_FIELD: Final = "csrf"
MAX_CLIENTS: Final = 10_000
"""Clients whose attempts are remembered at once; past that the oldest are forgotten."""
WRONG_TOKEN: Final = "wrong token"


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """How long sessions last and how often a client may try to sign in."""

    lifetime_s: float = 12 * 3600.0
    """A session ends this long after its sign-in, whatever happens (the cookie's Max-Age)."""
    idle_s: float = 2 * 3600.0
    """A session unused this long ends."""
    touch_s: float = 300.0
    """A session's last use is written at most this often (a write each page would contend with the
    ladder for the file's lock)."""
    attempts: int = 10
    """Sign-in attempts a client may make in `window_s`; past that, 429."""
    window_s: float = 600.0
    delay_s: float = 1.0
    """Every sign-in attempt is answered this long after it arrived, right or wrong."""


class Attempts:
    """The sign-in attempts of each client in the last window, in this process. Used on the event loop
    alone, so it needs no lock."""

    def __init__(self, limits: SignInLimits) -> None:
        self.limits = limits
        self._by_client: dict[str, deque[float]] = {}

    def count(self, client: str, now: float) -> None:
        """Count an attempt of `client`, or a 429 when it has made too many (which are not counted)."""
        times = self._by_client.pop(client, deque())
        while times and times[0] <= now - self.limits.window_s:
            times.popleft()
        if len(times) >= self.limits.attempts:
            self._by_client[client] = times
            wait = max(1, round(times[0] + self.limits.window_s - now))
            raise SiteError(429, f"too many sign-in attempts from this address: try again in {wait} s", wait)
        times.append(now)
        self._by_client[client] = times  # the newest last: the first are the ones to forget
        while len(self._by_client) > MAX_CLIENTS:
            del self._by_client[next(iter(self._by_client))]


def csrf_token(session_id: str) -> str:
    """The CSRF token of a session's forms."""
    return hmac.new(session_id.encode(), b"arena-csrf", hashlib.sha256).hexdigest()


def check_csrf(session_id: str, given: str | None) -> None:
    """A 403 unless `given` is the session's CSRF token (compared in constant time)."""
    if given is None or not hmac.compare_digest(csrf_token(session_id).encode(), given.encode()):
        raise SiteError(
            403,
            "this form is out of date or was not sent from this site's page: reload the page and try again",
        )


def check_origin(request: Request) -> None:
    """A 403 for a POST whose Origin, or else Referer, names another host than the one it was sent to
    (the host and port, not the scheme: behind a TLS proxy the site itself is reached over plain HTTP)."""
    sent_from = request.headers.get("origin") or request.headers.get("referer")
    if sent_from is None:
        return
    if urlsplit(sent_from).netloc.lower() != request.url.netloc.lower():
        raise SiteError(
            403, "a form of another site was sent here: open this site's page and send it from there"
        )


def is_tls(request: Request) -> bool:
    """Whether the request came over TLS (see the module's docstring)."""
    return request.url.scheme == "https"


def cookie_name(request: Request) -> str:
    """The session's cookie for this request (see the module's docstring)."""
    return TLS_COOKIE if is_tls(request) else COOKIE


def set_cookie(response: Response, request: Request, session_id: str, lifetime_s: float) -> None:
    """Give the browser its session."""
    response.set_cookie(
        cookie_name(request),
        session_id,
        max_age=int(lifetime_s),
        path="/",
        secure=is_tls(request),
        httponly=True,
        samesite="strict",
    )


def clear_cookie(response: Response, request: Request) -> None:
    """Take the session back from the browser."""
    response.delete_cookie(
        cookie_name(request), path="/", secure=is_tls(request), httponly=True, samesite="strict"
    )


def session_id_of(request: Request) -> str | None:
    """The session id the request's cookie gives, None without one (or one no id could be)."""
    value = request.cookies.get(cookie_name(request))
    if value is None or not 20 <= len(value) <= 100 or not value.isascii() or not value.isprintable():
        return None
    return value
