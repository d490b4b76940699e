"""The site through its ASGI app (no browser): pages and the JSON API over a ladder with finished
matches and one in play, escaping, bad input (fuzzed), tokens and the management API, the live stream."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from live_check import check_public_stream
from site_support import EVIL, Ladder56, build, stop
from starlette.testclient import TestClient

from arena.cli import main
from arena.ladder import registration
from arena.ladder.store import LadderStore
from arena.ladder.store.access import COMMAND_LINE
from arena.runner.address_policy import AddressPolicy
from arena.site.app import SiteSettings, create_app
from tests.arena.ladder.match_support import save_match


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder56]:
    built = build(tmp_path_factory.mktemp("site"))
    yield built
    stop(built)


@pytest.fixture(scope="module")
def client(ladder: Ladder56) -> Iterator[TestClient]:
    with TestClient(create_app(SiteSettings(ladder.path)), raise_server_exceptions=False) as test_client:
        yield test_client


def stored_ids(ladder: Ladder56, bot: str | None = None) -> list[str]:
    store = LadderStore(ladder.path, read_only=True)
    try:
        return [match.id for match in store.matches.recent_matches(bot, 100)]
    finally:
        store.close()


def test_the_leaderboard_lists_every_bot_with_its_status(client: TestClient) -> None:
    standings = client.get("/api/standings").json()
    assert standings["pool"] == "4p-pairs"
    by_bot = {line["bot"]: line for line in standings["standings"]}
    assert set(by_bot) == {"bot0", "bot1", "illegal", EVIL}
    assert by_bot["bot0"]["matches"] == 8
    assert by_bot["illegal"]["faults"]["illegal_moves"] == 4  # a strike played on, a forfeit; twice
    assert by_bot[EVIL]["status"] == "probation"
    assert not any(line["isolated"] for line in by_bot.values())  # served by the tests: remote
    assert client.get("/api/pools").json() == [{"pool": "4p-pairs", "matches": 8, "sets_not_isolated": 4}]
    page = client.get("/")
    assert page.status_code == 200
    assert "bot0" in page.text
    assert "probation" in page.text
    assert page.text.count('class="not-isolated"') == 4
    assert page.text.count(">shared</span>") == 4  # one address for both seats of a team
    assert 'class="not-isolated"' in client.get("/bots/bot0").text


@pytest.mark.parametrize("path", ["/", "/?pool=4p-pairs", "/bots/bot0", "/matches", "/matches?bot=bot0"])
def test_a_bot_named_like_a_script_is_text_on_every_page(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    assert EVIL not in page.text
    assert "alert(1)" not in page.text or "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_the_bot_page_has_a_chart_head_to_head_and_matches(client: TestClient) -> None:
    data = client.get("/api/bots/bot0").json()
    assert len(data["rating_history"]) == 4
    assert [(line["opponent"], line["matches"]) for line in data["head_to_head"]] == [
        ("bot1", 6),
        ("illegal", 2),
    ]
    for line in data["head_to_head"]:
        assert line["ahead"] + line["behind"] + line["level"] == line["matches"]
    assert data["head_to_head"][1]["ahead"] == 2  # the illegal bot forfeits both
    page = client.get("/bots/bot0")
    assert "<svg" in page.text
    assert "bot1" in page.text
    evil = client.get(f"/api/bots/{EVIL.replace('/', '%2F')}")
    assert evil.status_code == 404  # a name with '/' has no page of its own; it is still listed


def test_a_bots_faults_are_listed_with_their_causes(client: TestClient) -> None:
    faults = client.get("/api/bots/illegal").json()["faults"]
    assert sorted((fault["cause"], fault["substituted"]) for fault in faults) == [
        ("illegal_move", False),
        ("illegal_move", False),
        ("illegal_move", True),
        ("illegal_move", True),
    ]
    assert all(fault["detail"] for fault in faults)  # the set is over: the details are shown
    page = client.get("/bots/illegal").text
    assert "illegal_move (played on)" in page


def test_matches_are_paged_and_filtered(client: TestClient, ladder: Ladder56) -> None:
    listed = client.get("/api/matches?bot=bot1&pool=4p-pairs&page=1").json()
    assert [match["id"] for match in listed["matches"]] == stored_ids(ladder, "bot1")
    assert listed["has_next"] is False
    assert client.get("/api/matches?page=2").json()["matches"] == []
    assert client.get("/api/matches?pool=6p-pairs").json()["matches"] == []
    assert client.get("/api/matches?bot=nobody").json()["matches"] == []


def test_a_finished_match_gives_its_record_and_its_replay_page(client: TestClient, ladder: Ladder56) -> None:
    match_id = stored_ids(ladder)[0]
    record = client.get(f"/api/matches/{match_id}").json()
    assert record["format"] == "fiftysix-game-record"
    assert record["match_id"] == match_id
    page = client.get(f"/matches/{match_id}")
    assert page.status_code == 200
    assert 'id="replay-data"' in page.text


def test_a_match_of_a_set_in_play_is_held_back(ladder: Ladder56, client: TestClient) -> None:
    store = LadderStore(ladder.path)
    try:
        source = store.matches.finished()[0]
        duplicate = store.sets.create_set(4, "pairs", None, 9, ["bot0", "bot1"], isolated=False)
        record = store.browse.match_record(source.id)
        save_match(store, "held-1", duplicate, 0, "one_team_left", (1, 2), (), record, 10, 0.1)
    finally:
        store.close()
    answer = client.get("/api/matches/held-1")
    assert answer.status_code == 403
    assert "held back until set" in answer.json()["error"]
    assert client.get("/matches/held-1").status_code == 403
    listed = client.get("/api/matches").json()["matches"]
    assert listed[0]["id"] == "held-1"
    assert listed[0]["set_over"] is False


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/standings?pool=9p-pairs", 400),
        ("/api/standings?pool=" + "4" * 5000, 400),
        ("/api/matches?page=0", 400),
        ("/api/matches?page=-1", 400),
        ("/api/matches?page=1e3", 400),
        ("/api/matches?page=99999999999999999999", 400),
        ("/api/matches?bot=%00", 400),
        ("/api/matches?page=%D9%A3", 400),  # an Arabic-Indic 3: a digit, not one of ours
        ("/api/matches?page=1&page=2", 400),
        ("/api/matches?bot=bot0&bot=bot1", 400),
        ("/api/standings?pool=4p-pairs&pool=6p-pairs", 400),
        ("/api/live/live-match-1/events?after=--5", 400),
        ("/api/live/live-match-1/events?after=-5", 400),
        ("/api/live/live-match-1/events?after=%2B5", 400),
        ("/api/live/live-match-1/events?after=1e3", 400),
        ("/api/live/live-match-1/events?after=" + "9" * 5000, 400),
        ("/api/live/live-match-1/events?after=1&after=2", 400),
        ("/api/live/nothing/events?after=%D9%A3", 400),
        ("/api/live/" + "a" * 65 + "/events", 400),
        ("/api/live/a.b/events", 400),
        ("/api/matches/a%20b", 400),
        ("/matches/%3Cscript%3E", 400),
        ("/api/bots/%00", 400),
        ("/bots/" + "b" * 201, 400),
        ("/api/bots/nobody", 404),
        ("/api/matches/nothing", 404),
        ("/api/nothing", 404),
        ("/api/live/nothing/events", 404),
        ("/matches/nothing", 404),
        ("/nothing", 404),
        ("/?pool=x", 400),
    ],
)
def test_bad_requests_get_a_4xx_with_a_message(client: TestClient, path: str, status: int) -> None:
    answer = client.get(path)
    assert answer.status_code == status
    if path.startswith("/api/"):
        assert answer.json()["error"]
    else:
        assert "<h1>" in answer.text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(
        [
            "/api/standings",
            "/api/matches",
            "/api/bots/bot0",
            "/api/live",
            "/api/live/nothing/events",
            "/matches",
            "/live/nothing",
            "/",
        ]
    ),
    parameters=st.lists(
        st.tuples(st.sampled_from(["bot", "pool", "page", "after", "x"]), st.text(max_size=40)), max_size=4
    ),
)
def test_fuzzed_query_parameters_never_get_a_500(
    client: TestClient, path: str, parameters: list[tuple[str, str]]
) -> None:
    answer = client.get(path, params=parameters)
    assert answer.status_code < 500, (path, parameters, answer.text[:300])
    if answer.status_code >= 400 and path.startswith("/api/"):
        assert answer.json()["error"]
        assert "\n" not in answer.json()["error"]


def is_event_number(text: str) -> bool:
    """What `after` may be: -1, or up to nine ASCII digits (empty: not given)."""
    return text in ("", "-1") or (text.isascii() and text.isdecimal() and len(text) <= 9)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(after=st.text(max_size=12) | st.from_regex(r"-?[0-9]{1,12}", fullmatch=True))
@example(after="--5")
@example(after="\u0663")  # an Arabic-Indic 3
def test_after_is_an_event_number_or_a_400(client: TestClient, after: str) -> None:
    """Checked before the match is looked up: a bad `after` is a 400, a good one reaches the 404."""
    answer = client.get("/api/live/nothing/events", params={"after": after})
    assert answer.status_code == (404 if is_event_number(after) else 400), (after, answer.text)
    if answer.status_code == 400:
        assert answer.json() == {
            "error": "'after' (or Last-Event-ID) must be a whole number from -1 to 999,999,999"
        }


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(last_event_id=st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=12))
@example(last_event_id="--5")
@example(last_event_id="-5")
@example(last_event_id=" 7 ")
def test_last_event_id_is_an_event_number_or_a_400(client: TestClient, last_event_id: str) -> None:
    answer = client.get(
        "/api/live/nothing/events", headers={"Last-Event-ID": last_event_id.encode("latin-1")}
    )
    # A header's surrounding spaces are not part of its value.
    assert answer.status_code == (404 if is_event_number(last_event_id.strip(" ")) else 400), last_event_id


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(match_id=st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=80))
@example(match_id="/")
@example(match_id="a/")
def test_a_match_id_is_the_arenas_or_a_400(client: TestClient, match_id: str) -> None:
    """A malformed match id is a 400 (or a 404 when it does not even reach the route: a '/' in it, or
    Starlette's redirect of a path ending in '/' to the same path without it, on this site)."""
    quoted = quote(match_id, safe="")
    for path in (f"/api/matches/{quoted}", f"/api/live/{quoted}/events"):
        answer = client.get(path, follow_redirects=False)
        if answer.status_code == 307 and "/" in match_id:
            assert answer.headers["location"].startswith(str(client.base_url) + "/api/")
            continue
        expected = (404,) if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", match_id) else (400, 404)
        assert answer.status_code in expected, (path, answer.text)
        assert answer.json()["error"]


def test_the_live_stream_sends_public_events_only(client: TestClient, ladder: Ladder56) -> None:
    listed = client.get("/api/live").json()
    assert [match["match_id"] for match in listed] == [ladder.live_id]
    assert listed[0]["seats"] == ["bot0", "bot1", "bot0", "bot1"]
    messages = read_stream(client, f"/api/live/{ladder.live_id}/events")
    assert len(messages) == len(ladder.live_events)
    check_public_stream(messages, ladder.live_outcome.record.to_json())
    # Where a reconnecting browser left off: only what follows.
    tail = read_stream(client, f"/api/live/{ladder.live_id}/events?after={len(messages) - 3}")
    assert tail == messages[-2:]


def read_stream(client: TestClient, url: str) -> list[dict[str, Any]]:
    """The messages of a live stream up to the match's end."""
    messages: list[dict[str, Any]] = []
    with client.stream("GET", url) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                messages.append(json.loads(line[6:]))
                if messages[-1]["type"] == "match_end":
                    break
    return messages


def test_the_live_delay_holds_matches_back(ladder: Ladder56) -> None:
    with TestClient(create_app(SiteSettings(ladder.path, live_delay_s=3600))) as delayed:
        assert delayed.get("/api/live").json() == []
        assert delayed.get(f"/api/live/{ladder.live_id}/events").status_code == 404


def tokens(db: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["tokens", "--db", str(db), *args]) == 0
    return capsys.readouterr().out


def test_writes_need_a_token_and_are_audited(
    client: TestClient, ladder: Ladder56, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registration, "CHECK_TIMEOUT_S", 0.5)
    participant = tokens(ladder.path, "add", "newbot", capsys=capsys).split()[-1]
    host = tokens(ladder.path, "add", "boss", "--host", capsys=capsys).split()[-1]
    assert participant.startswith("a56_")
    assert len(participant) == 47
    listed = tokens(ladder.path, "list", capsys=capsys)
    assert "newbot" in listed
    assert participant not in listed
    store = LadderStore(ladder.path)
    try:
        assert participant not in Path(ladder.path).read_bytes().decode("latin-1")
        # The test's bots are on loopback: the host allows it (test_addresses.py refuses it by default).
        store.access.set_address_policy(AddressPolicy.parse("127.0.0.0/8"), COMMAND_LINE)
    finally:
        store.close()
    good = f"127.0.0.1:{ladder.servers[1].port}"

    def post(body: Any, token: str | None, path: str = "/api/bots") -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return client.post(path, content=json.dumps(body), headers=headers)

    assert post({"address": good}, None).status_code == 401
    assert post({"address": good}, "a56_wrong").status_code == 401
    assert post({"name": "bot0", "address": good}, participant).status_code == 403
    assert post({"address": "no-port"}, participant).status_code == 400
    assert post({"address": ",".join([good] * 5)}, participant).status_code == 400
    assert client.post("/api/bots", content=b"{").status_code == 401  # who, before what
    assert post([1, 2], participant).status_code == 400
    assert (
        client.post("/api/bots", content=b"{", headers={"Authorization": f"Bearer {participant}"}).status_code
        == 400
    )
    assert post({"address": "x" * 5000}, participant).status_code == 413
    unreachable = post({"address": "127.0.0.1:1"}, participant)
    assert unreachable.status_code == 422
    assert unreachable.json()["error"].startswith("no 56 bot answered at 127.0.0.1:1 ")
    assert post({"address": good, "owner": "someone-else"}, participant).status_code == 403
    created = post({"address": good}, participant)
    assert created.status_code == 201, created.text
    assert created.json()["owner"] == "newbot"  # the token owns the bots it registers
    assert post({"address": good}, participant).json()["action"] == "bot_updated"
    # The host gives it another owner (one author holding two tokens, say): a participant's update
    # keeps it, and the host's own registration records the owner it names.
    assert post({"name": "newbot", "address": good, "owner": "ann"}, host).json()["owner"] == "ann"
    assert post({"address": good}, participant).json()["owner"] == "ann"
    assert post({"name": "hostbot", "address": good, "owner": "bad name"}, host).status_code == 400
    assert post({"name": "hostbot", "address": good, "owner": "ann"}, host).json()["owner"] == "ann"
    assert post({"name": "hostbot", "address": good}, host).json()["owner"] == "ann"  # not named: stays
    store = LadderStore(ladder.path, read_only=True)
    try:
        assert (store.registry.bot("newbot").owner, store.registry.bot("hostbot").owner) == ("ann", "ann")
    finally:
        store.close()
    assert (
        client.delete("/api/bots/newbot", headers={"Authorization": f"Bearer {participant}"}).status_code
        == 403
    )
    assert post({"reason": "tests"}, participant, "/api/bots/newbot/probation").status_code == 403
    assert post({"reason": "tests"}, host, "/api/bots/newbot/probation").json() == {
        "bot": "newbot",
        "probation": "tests",
    }
    assert post({"reason": "x", "clear": True}, host, "/api/bots/newbot/probation").status_code == 400
    assert client.delete("/api/bots/newbot", headers={"Authorization": f"Bearer {host}"}).status_code == 200
    assert client.delete("/api/bots/newbot", headers={"Authorization": f"Bearer {host}"}).status_code == 404
    audit = json.loads(tokens(ladder.path, "audit", "--json", capsys=capsys))
    assert [(entry["actor"], entry["action"], entry["target"]) for entry in reversed(audit)] == [
        ("host:command-line", "token_added", "newbot"),
        ("host:command-line", "token_added", "boss"),
        ("host:command-line", "addresses_allowed", ""),
        ("participant:newbot", "bot_registered", "newbot"),
        ("participant:newbot", "bot_updated", "newbot"),
        ("host:boss", "bot_updated", "newbot"),
        ("participant:newbot", "bot_updated", "newbot"),
        ("host:boss", "bot_registered", "hostbot"),
        ("host:boss", "bot_updated", "hostbot"),
        ("host:boss", "probation_set", "newbot"),
        ("host:boss", "bot_removed", "newbot"),
    ]
    tokens(ladder.path, "remove", "newbot", capsys=capsys)
    assert post({"address": good}, participant).status_code == 401


def test_the_static_export_writes_self_contained_pages(
    ladder: Ladder56, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "site"
    assert main(["ladder", "export", "--db", str(ladder.path), "--html", str(folder)]) == 0
    assert "replays" in capsys.readouterr().out
    replays = sorted(path.name for path in (folder / "matches").iterdir())
    assert replays == sorted(f"{match_id}.html" for match_id in stored_ids(ladder) if match_id != "held-1")
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert EVIL not in index
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index
    for path in [folder / "index.html", *(folder / "matches").iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert 'src="/' not in text
        assert 'href="/' not in text
    replay = (folder / "matches" / replays[0]).read_text(encoding="utf-8")
    assert "<style>" in replay
    assert "Cards.build" in replay
    assert main(["ladder", "export", "--db", str(ladder.path), "--html", str(folder / "index.html")]) == 1


def test_a_ladder_that_cannot_be_read_is_a_503_that_names_nothing_of_the_host(tmp_path: Path) -> None:
    """The store's reason names the host's file (or database server): a visitor reads none of it."""
    db = tmp_path / "secret-folder" / "ladder.db"
    db.parent.mkdir()
    LadderStore(db).close()
    with TestClient(create_app(SiteSettings(db)), raise_server_exceptions=False) as broken:
        db.write_bytes(b"not a database at all" * 100)
        for path in ("/api/pools", "/"):
            answer = broken.get(path)
            assert answer.status_code == 503
            assert answer.headers["retry-after"] == "10"
            assert "secret-folder" not in answer.text
            assert "cannot be read now" in answer.text
