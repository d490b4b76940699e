"""The signed-in pages over HTTP, on a real uvicorn server: signing in with a token (the cookie, the
delay, the bound per client, a wrong token that says only so), sessions that end with their token,
CSRF on every form, what an entrant and the host each see, and that nobody else sees an entrant's pages
(guessed URLs, another entrant's CSRF token). Each test comes from its own client address (a trusted
proxy's X-Forwarded-For), so that the bound on sign-in attempts per client counts each apart."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
import structlog
from site_support import served
from sqlalchemy import update

from arena.ladder.ratings import rate_set
from arena.ladder.store import LadderStore, relations
from arena.site.app import SiteSettings, create_app
from arena.site.sign_in import COOKIE, TLS_COOKIE, SignInLimits
from arena.site.upload_limits import UploadLimits
from arena.site.uploading import UploadGate
from fiftysix.wire import FaultCause, FaultRecord
from tests.arena.ladder.match_support import save_match

DELAY_S = 0.05
LIMITS = SignInLimits(delay_s=DELAY_S, attempts=4)
FIELDS_S = 1.5
"""How long the upload form's fields may take here (a stalled form waits this long for its 408)."""
SHOWN_DETAIL = "played 9H, which it does not hold"
HELD_DETAIL = "played QS: the held-back detail"


@dataclass
class Arena:
    """The served site, its ladder file, the tokens and the matches."""

    url: str
    db: Path
    tokens: dict[str, str]
    over_match: str
    held_match: str
    uploads: UploadGate


def fault(detail: str) -> FaultRecord:
    return FaultRecord(
        seat=0, team=0, cause=FaultCause.ILLEGAL_MOVE, detail=detail, deal_number=1, substituted=True
    )


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """Entrants ann (two bots) and bea (one), the host boss, a bot nobody owns; a set of ann against bea
    that is over (rated), and one in play, each with a fault of ann's."""
    db = tmp_path_factory.mktemp("account") / "ladder.db"
    store = LadderStore(db)
    try:
        tokens = {
            name: store.access.add_token(name, role, "host:command-line")
            for name, role in (("ann", "participant"), ("bea", "participant"), ("boss", "host"))
        }
        for name, owner in (("ann", "ann"), ("ann-2", "ann"), ("bea", "bea"), ("zed", None)):
            store.registry.add_bot(name, address=f"192.0.2.1:{len(name)}", owner=owner)
        over = store.sets.create_set(4, "pairs", None, 1, ["ann", "bea"], isolated=False)
        save_match(store, "over0", over, 0, "score", [2, 1], [fault(SHOWN_DETAIL)], {}, 10, 0.5)
        save_match(store, "over1", over, 1, "score", [1, 2], [], {}, 10, 0.5)
        assert rate_set(store, over) is not None
        held = store.sets.create_set(4, "pairs", None, 2, ["ann", "bea"], isolated=False)
        save_match(store, "held0", held, 0, "score", [2, 1], [fault(HELD_DETAIL)], {}, 10, 0.5)
        # ann's versions: 1 current when the set was rated, 2 (running now) uploaded after it.
        for sha256 in ("a" * 64, "b" * 64):
            store.uploads.add_upload("ann", sha256, "python bot.py --socket {socket}")
        store.uploads.set_launch("ann", "python bot.py --socket {socket}", True, 2)
        rated_at = store.browse.rating_history("ann", "4p-pairs", 1)[0].at
        for version, at in ((1, rated_at - 60), (2, rated_at + 1)):
            store.file._conn.execute(
                update(relations.bot_uploads)
                .where(relations.bot_uploads.c.bot == "ann", relations.bot_uploads.c.version == version)
                .values(uploaded_at=at)
            )
    finally:
        store.close()
    settings = SiteSettings(db, sign_in=LIMITS, uploads=UploadLimits(per_hour=1, fields_s=FIELDS_S))
    app = create_app(settings)
    with served(app) as url:
        yield Arena(url, db, tokens, "over0", "held0", app.state.uploads)


_clients = iter(range(1, 250))


def client(arena: Arena) -> httpx2.Client:
    """A browser of its own (cookies), from an address of its own."""
    return httpx2.Client(base_url=arena.url, headers={"X-Forwarded-For": f"198.51.100.{next(_clients)}"})


def add_token(arena: Arena, name: str) -> None:
    store = LadderStore(arena.db)
    try:
        arena.tokens[name] = store.access.add_token(name, "participant", "host:command-line")
    finally:
        store.close()


def raw_connection(arena: Arena) -> socket.socket:
    """A connection to the site for what no HTTP client sends: a body cut short, or stalled."""
    host, port = arena.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=20)


def signed_in(arena: Arena, name: str) -> httpx2.Client:
    browser = client(arena)
    answer = browser.post("/sign-in", data={"token": arena.tokens[name]})
    assert answer.status_code == 303, answer.text
    return browser


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found is not None
    return found.group(1)


def test_a_token_signs_in_to_a_session_cookie_and_nothing_of_either_is_logged(arena: Arena) -> None:
    browser = client(arena)
    with structlog.testing.capture_logs() as logs:
        answer = browser.post("/sign-in", data={"token": arena.tokens["ann"]})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/account"
        cookie = answer.headers["set-cookie"]
        session_id = browser.cookies[COOKIE]
        page = browser.get("/account")
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path", "samesite", "max-age"} <= attributes
    assert "SameSite=strict" in cookie
    assert "Path=/" in cookie
    assert f"Max-Age={int(LIMITS.lifetime_s)}" in cookie
    assert "secure" not in attributes  # plain HTTP
    assert len(session_id) >= 43
    assert arena.tokens["ann"] not in cookie
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    policy = {
        rule.split()[0]: rule.split()[1:] for rule in page.headers["content-security-policy"].split(";")
    }
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["default-src"] == ["'self'"]  # no inline script, nor another site's
    assert policy["form-action"] == ["'self'"]
    assert {"ann", "ann-2"} <= set(re.findall(r'href="/account/bots/([^"]+)"', page.text))
    assert "/account/bots/bea" not in page.text
    for secret in (arena.tokens["ann"], session_id):
        assert secret not in page.text
        assert secret not in repr(logs)
    assert [entry["event"] for entry in logs] == ["signed_in"]
    # Behind a TLS proxy that uvicorn trusts (127.0.0.1 here), the cookie is Secure, and __Host-: a
    # cookie that a page of a sibling host planted (it cannot plant that name) signs nobody in.
    tls = {"X-Forwarded-Proto": "https"}
    behind_tls = client(arena).post("/sign-in", data={"token": arena.tokens["ann"]}, headers=tls)
    assert behind_tls.headers["set-cookie"].startswith(f"{TLS_COOKIE}=")
    assert "Secure" in behind_tls.headers["set-cookie"]
    for name, status in ((TLS_COOKIE, 200), (COOKIE, 303)):
        visit = client(arena).get("/account", headers={**tls, "Cookie": f"{name}={session_id}"})
        assert visit.status_code == status, name


def test_a_wrong_token_reads_only_wrong_token_after_the_same_delay(arena: Arena) -> None:
    wrong = ["a56_" + "x" * 43, "", " ", "a56_" + "x" * 500, "ann", "%00", arena.tokens["boss"] + "x"]
    for token in wrong:
        started = time.monotonic()
        answer = client(arena).post("/sign-in", data={"token": token})
        assert time.monotonic() - started >= DELAY_S
        assert answer.status_code == 401
        assert re.findall(r'<p class="error" role="alert">(.*?)</p>', answer.text) == ["wrong token"]
        assert COOKIE not in answer.headers.get("set-cookie", "")
        if token.strip():
            assert token not in answer.text


def test_a_revoked_token_reads_as_a_wrong_one(arena: Arena) -> None:
    store = LadderStore(arena.db)
    try:
        token = store.access.add_token("dot", "participant", "host:command-line")
        store.access.remove_token("dot", "host:command-line")
    finally:
        store.close()
    answer = client(arena).post("/sign-in", data={"token": token})
    assert answer.status_code == 401
    assert re.findall(r'<p class="error" role="alert">(.*?)</p>', answer.text) == ["wrong token"]


def test_sign_in_attempts_are_bounded_per_client(arena: Arena) -> None:
    browser = client(arena)
    for _ in range(LIMITS.attempts):
        assert browser.post("/sign-in", data={"token": "wrong"}).status_code == 401
    refused = browser.post("/sign-in", data={"token": arena.tokens["ann"]})
    assert refused.status_code == 429
    assert "too many sign-in attempts" in refused.text
    assert int(refused.headers["retry-after"]) > 0
    assert client(arena).post("/sign-in", data={"token": "wrong"}).status_code == 401  # another client


class Records(logging.Handler):
    """The log records of a standard logger (uvicorn's, which logs a request's traceback)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_body_cut_short_is_one_log_line_and_no_traceback(arena: Arena) -> None:
    """Anybody can start a sign-in and close the connection mid-body: the host's log gets one line."""
    handler = Records()
    errors = handler.records
    uvicorn_errors = logging.getLogger("uvicorn.error")
    uvicorn_errors.addHandler(handler)
    try:
        with structlog.testing.capture_logs() as logs:
            with raw_connection(arena) as raw:
                raw.sendall(
                    b"POST /sign-in HTTP/1.1\r\nHost: site\r\nContent-Length: 100\r\n"
                    + f"X-Forwarded-For: 198.51.100.{next(_clients)}\r\n".encode()
                    + b"Content-Type: application/x-www-form-urlencoded\r\n\r\ntoken=a56_"
                )
            deadline = time.monotonic() + 20
            while not errors and not any(entry["event"] == "request_abandoned" for entry in logs):
                assert time.monotonic() < deadline, "the site said nothing of the request"
                time.sleep(0.02)
    finally:
        uvicorn_errors.removeHandler(handler)
    assert [record.getMessage() for record in errors] == []
    assert [entry for entry in logs if entry["event"] == "request_abandoned"] == [
        {"event": "request_abandoned", "path": "/sign-in", "log_level": "info"}
    ]


def test_a_sign_in_form_sent_from_another_site_is_refused(arena: Arena) -> None:
    for header in ({"Origin": "https://evil.example"}, {"Referer": "https://evil.example/page"}):
        answer = client(arena).post("/sign-in", data={"token": arena.tokens["ann"]}, headers=header)
        assert answer.status_code == 403
        assert COOKIE not in answer.headers.get("set-cookie", "")


def test_a_session_ends_with_sign_out_and_with_its_token_revoked_or_replaced(arena: Arena) -> None:
    store = LadderStore(arena.db)
    try:
        token = store.access.add_token("cy", "participant", "host:command-line")
    finally:
        store.close()
    arena.tokens["cy"] = token
    browser = signed_in(arena, "cy")
    signed_out = browser.cookies[COOKIE]
    page = browser.get("/account")
    assert page.status_code == 200
    out = browser.post("/sign-out", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303
    assert COOKIE not in browser.cookies
    replayed = client(arena)
    replayed.cookies.set(COOKIE, signed_out)  # a copy of the cookie is worth nothing after sign-out
    assert replayed.get("/account").status_code == 303
    browser = signed_in(arena, "cy")
    first = browser.cookies[COOKIE]
    assert browser.post("/sign-in", data={"token": arena.tokens["cy"]}).status_code == 303
    kept = browser.cookies[COOKIE]
    assert kept != first
    replayed.cookies.set(COOKIE, first)  # signing in again ends the browser's session before
    assert replayed.get("/account").status_code == 303
    assert browser.get("/account").status_code == 200
    store = LadderStore(arena.db)
    try:
        store.access.remove_token("cy", "host:command-line")  # revoked
        assert browser.get("/account").headers["location"] == "/sign-in"
        arena.tokens["cy"] = store.access.add_token("cy", "participant", "host:command-line")  # replaced
    finally:
        store.close()
    stale = client(arena)
    stale.cookies.set(COOKIE, kept)
    assert stale.get("/account").status_code == 303
    assert signed_in(arena, "cy").get("/account").status_code == 200


def test_every_form_needs_the_sessions_own_csrf_token(arena: Arena) -> None:
    ann, bea = signed_in(arena, "ann"), signed_in(arena, "bea")
    ann_csrf, bea_csrf = csrf_of(ann.get("/account").text), csrf_of(bea.get("/account").text)
    assert ann_csrf != bea_csrf
    for form in ({}, {"csrf": ""}, {"csrf": bea_csrf}, {"csrf": ann_csrf[:-1] + "0"}):
        refused = ann.post("/sign-out", data=form)
        assert refused.status_code == 403
        assert "reload the page" in refused.text
    for origin in ("https://evil.example", "null", f"{arena.url}.evil.example"):
        refused = ann.post("/sign-out", data={"csrf": ann_csrf}, headers={"Origin": origin})
        assert refused.status_code == 403
        # The browser sends no SameSite=Strict cookie with another site's form; the answer must not
        # take the cookie back either (a page of another site signing its visitors out).
        cross_site = client(arena).post("/sign-out", headers={"Origin": origin})
        assert cross_site.status_code == 403
        assert COOKIE not in cross_site.headers.get("set-cookie", "")
    upload = ann.post(
        "/account/upload", data={"csrf": bea_csrf, "run": "python bot.py"}, files={"bundle": ("b.zip", b"PK")}
    )
    assert upload.status_code == 403
    assert ann.get("/account").status_code == 200  # still signed in
    nobody = client(arena).post(
        "/account/upload", data={"csrf": ann_csrf, "run": "python bot.py"}, files={"bundle": ("b.zip", b"PK")}
    )
    assert nobody.status_code == 403


def test_an_entrant_sees_their_bots_matches_and_faults_held_back_as_the_site_holds_them(arena: Arena) -> None:
    page = signed_in(arena, "ann").get("/account/bots/ann")
    assert page.status_code == 200
    text = page.text
    assert f'href="/matches/{arena.over_match}"' in text  # a set that is over: its replay
    assert f'href="/matches/{arena.held_match}"' not in text  # in play: held back
    assert arena.held_match in text
    assert "held back until its set is over" in text
    assert SHOWN_DETAIL in text
    assert HELD_DETAIL not in text
    assert text.index("held0") < text.index("over1") < text.index("over0")  # newest first
    assert "illegal_move" in text
    # Each version with its time and the bot's rating then; the newest first.
    versions = re.findall(r'<article class="version" id="version-(\d)">(.*?)</article>', text, re.DOTALL)
    assert [number for number, _ in versions] == ["2", "1"]
    assert "running now" in versions[0][1]
    assert "No set was rated while it was current" in versions[0][1]
    assert re.search(r"until \S+ \S+ UTC\.\s+Elo \d+ after 1 set rated while it was current", versions[1][1])
    assert "No uploaded versions" in signed_in(arena, "ann").get("/account/bots/ann-2").text


GUESSES = [
    "/account/bots/ann",
    "/account/bots/ann-2",
    "/account/bots/%61nn",
    "/account/bots/ann?page=2",
    "/account/bots/ann?pool=4p-pairs",
    "/account/bots/nobody",
    "/account/bots/zed",
]


def test_another_entrant_cannot_see_an_entrants_bot_pages(arena: Arena) -> None:
    bea, nobody = signed_in(arena, "bea"), client(arena)
    assert "ann" not in bea.get("/account").text
    for path in GUESSES:
        answer = bea.get(path)
        assert answer.status_code == 404, path
        assert "<h1>404</h1>" in answer.text
        assert "no such page" in answer.text
        for private in ("ann-2", SHOWN_DETAIL, "over0", "held0"):
            assert private not in answer.text
        signed_out = nobody.get(path)
        assert (signed_out.status_code, signed_out.headers["location"]) == (303, "/sign-in")
        assert "ann" not in signed_out.text


def test_the_host_sees_entrants_their_bots_and_the_recent_faults(arena: Arena) -> None:
    boss = signed_in(arena, "boss")
    page = boss.get("/account")
    assert page.status_code == 200
    entrants = re.findall(r'<tr><td class="name">([^<]+)</td>', page.text)
    assert {"ann", "bea"} <= set(entrants)
    assert "boss" not in entrants
    assert "zed" in page.text
    assert "illegal_move" in page.text
    assert SHOWN_DETAIL in page.text
    assert HELD_DETAIL not in page.text
    assert boss.get("/account/bots/ann").status_code == 200  # the host sees every bot
    assert "Entrants" not in signed_in(arena, "bea").get("/account").text


def test_the_upload_form_goes_through_the_apis_path_and_quota(arena: Arena) -> None:
    ann = signed_in(arena, "ann")
    csrf = csrf_of(ann.get("/account").text)
    # The fields in another order than the page's are not this site's form.
    shuffled = ann.post(
        "/account/upload", data={"run": "python bot.py", "csrf": csrf}, files={"bundle": ("b.zip", b"PK")}
    )
    assert shuffled.status_code == 400
    # An empty upload through the API counts against the token's quota (1 an hour here)...
    api = httpx2.post(
        f"{arena.url}/api/bots/ann/upload?run=python%20bot.py",
        content=b"",
        headers={"Authorization": f"Bearer {arena.tokens['ann']}"},
    )
    assert api.status_code == 400
    # ...so the form's upload is refused by the same quota, and the page says why.
    refused = ann.post(
        "/account/upload", data={"csrf": csrf, "run": "python bot.py"}, files={"bundle": ("b.zip", b"PK")}
    )
    assert refused.status_code == 429
    reason = re.findall(
        r'<p class="error refusal" role="alert"><strong>Refused:</strong> (.*?)</p>', refused.text
    )
    assert reason
    assert "over the quota of 1 uploads an hour" in reason[0]
    assert 'value="python bot.py"' in refused.text  # the command as given, to correct
    store = LadderStore(arena.db, read_only=True)
    try:
        writes = [(entry.actor, entry.action) for entry in store.access.audit_log(5)]
    finally:
        store.close()
    assert ("participant:ann", "upload_refused") in writes


def test_the_upload_form_is_an_upload_from_its_first_byte(arena: Arena) -> None:
    """The form's fields are read inside the uploads' gate (another form of the token meanwhile is a
    429 at once), and a form that stops before its bundle is a 408, not a connection held for ever."""
    add_token(arena, "dee")
    dee = signed_in(arena, "dee")
    csrf = csrf_of(dee.get("/account").text)
    fields = "".join(
        f'--stalled\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in (("csrf", csrf), ("run", "python bot.py"))
    )
    with raw_connection(arena) as raw:
        raw.sendall(
            f"POST /account/upload HTTP/1.1\r\nHost: site\r\nCookie: {COOKIE}={dee.cookies[COOKIE]}\r\n"
            "Content-Type: multipart/form-data; boundary=stalled\r\nContent-Length: 10000\r\n\r\n"
            f"{fields}--stalled".encode()  # and then not the bundle's part headers, nor anything
        )
        deadline = time.monotonic() + 20
        while "participant:dee" not in arena.uploads.uploading:
            assert time.monotonic() < deadline, "the form is not counted as an upload in progress"
            time.sleep(0.01)
        second = dee.post(
            "/account/upload", data={"csrf": csrf, "run": "python bot.py"}, files={"bundle": ("b.zip", b"PK")}
        )
        assert second.status_code == 429
        assert "an upload of this token is in progress" in second.text
        answer = b""
        while b"\r\n" not in answer:
            answer += raw.recv(1000) or b"\r\n"
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert arena.uploads.uploading == []
