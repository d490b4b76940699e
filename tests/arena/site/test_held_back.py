"""Fair play: while a duplicate set is not over (rated or void), nothing public names a card of its deals:
not the site's pages, its JSON API or its management API's answers, not the static export, not the
command line's output meant for publishing (standings, matches, records, exports). The ladder here has
one such set, cut short after its first rotation, whose match has faults that name cards (an illegal
move's message lists the seat's legal cards) and put its bot on probation. Once the set is over, the
details are shown with the match."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bad_bots import IllegalBot
from markupsafe import escape
from site_support import FAST
from starlette.testclient import TestClient

from arena.cli import main
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from arena.site.app import SiteSettings, create_app
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


@dataclass
class HeldLadder:
    """A ladder file with one set not over, its bots' servers, and what the set must not show."""

    path: Path
    servers: list[BotServer]
    match_id: str
    details: list[str]
    cards: re.Pattern[str]
    host_token: str


def card_pattern(records: list[dict[str, Any]]) -> re.Pattern[str]:
    """Every card of the records' deals, as whole tokens (`JS` but not `JSON`, `9H` but not `19H`)."""
    cards = {
        card
        for record in records
        for deal in record["deals"]
        for hand in deal["hands"]
        if hand is not None
        for card in hand
    }
    assert cards
    alternatives = "|".join(sorted(map(re.escape, cards)))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")


def settings(matches: int = 2) -> LadderSettings:
    """One strike played on, then a forfeit; a single forfeit puts a bot on probation."""
    return LadderSettings(matches=matches, seed=6, time_control=FAST, strikes=1, probation_after=1)


def run_ladder(store: LadderStore, folder: Path, chosen: LadderSettings, stop_after_first: bool) -> None:
    """A ladder run; with `stop_after_first` it is stopped (as Ctrl-C does) once its first match is
    stored, which leaves that match's set unfinished."""
    ladder: Ladder | None = None

    def stop(_outcome: object, _report: object) -> None:
        assert ladder is not None
        ladder.stop()

    ladder = Ladder(store, chosen, LocalBots(folder / "logs"), on_match=stop if stop_after_first else None)
    asyncio.run(ladder.run())


def build(folder: Path) -> HeldLadder:
    servers = [start(RandomBot), start(IllegalBot)]
    path = folder / "ladder.db"
    store = LadderStore(path)
    try:
        store.registry.add_bot("bot0", address=f"127.0.0.1:{servers[0].port}")
        store.registry.add_bot("illegal", address=f"127.0.0.1:{servers[1].port}")
        run_ladder(store, folder, settings(), stop_after_first=True)
        [(duplicate, missing)] = store.sets.unfinished_sets()
        assert missing == [1]
        [match] = store.matches.finished(duplicate.id)
        cards = card_pattern([store.browse.match_record(match.id)])
        details = [fault.detail for fault in match.faults]
        # What the scan looks for is there to be found: the faults name cards, and the bot is on probation.
        assert details
        assert all(cards.search(detail) for detail in details)
        assert store.registry.bot("illegal").probation is not None
        token = store.access.add_token("boss", "host", "tests")
    finally:
        store.close()
    return HeldLadder(path, servers, match.id, details, cards, token)


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HeldLadder]:
    built = build(tmp_path_factory.mktemp("held"))
    yield built
    for server in built.servers:
        server.stop(0)


@pytest.fixture(scope="module")
def client(held: HeldLadder) -> Iterator[TestClient]:
    with TestClient(create_app(SiteSettings(held.path)), raise_server_exceptions=False) as test_client:
        yield test_client


SITE = [
    ("/", 200),
    ("/?pool=4p-pairs", 200),
    ("/bots/bot0", 200),
    ("/bots/illegal", 200),
    ("/matches", 200),
    ("/matches?bot=illegal", 200),
    ("/matches/{match}", 403),
    ("/live", 200),
    ("/api/pools", 200),
    ("/api/standings", 200),
    ("/api/standings?pool=4p-pairs", 200),
    ("/api/bots/bot0", 200),
    ("/api/bots/illegal", 200),
    ("/api/matches", 200),
    ("/api/matches?bot=illegal&pool=4p-pairs", 200),
    ("/api/matches/{match}", 403),
    ("/api/live", 200),
]


@pytest.mark.parametrize(("path", "status"), SITE, ids=[path for path, _ in SITE])
def test_no_page_nor_api_answer_names_a_card_of_a_set_not_over(
    client: TestClient, held: HeldLadder, path: str, status: int
) -> None:
    answer = client.get(path.format(match=held.match_id))
    assert answer.status_code == status, answer.text
    assert held.cards.findall(answer.text) == []


def test_the_management_apis_answers_name_no_card(client: TestClient, held: HeldLadder) -> None:
    headers = {"Authorization": f"Bearer {held.host_token}"}
    for body in ({"reason": "looked at by the host"}, {"clear": True}):
        answer = client.post("/api/bots/bot0/probation", content=json.dumps(body), headers=headers)
        assert answer.status_code == 200, answer.text
        assert held.cards.findall(answer.text) == []


CLI = [
    (["ladder", "show"], 0),
    (["ladder", "show", "--json"], 0),
    (["ladder", "show", "--crosstable"], 0),
    (["ladder", "matches"], 0),
    (["ladder", "matches", "--json"], 0),
    (["ladder", "matches", "--bot", "illegal", "--json"], 0),
    (["ladder", "record", "{match}"], 1),
    (["ladder", "export", "--csv", "-"], 0),
    (["ladder", "export", "--jsonl", "-"], 0),
    (["bots", "list"], 0),
    (["bots", "list", "--json"], 0),
]


@pytest.mark.parametrize(("command", "status"), CLI, ids=[" ".join(command) for command, _ in CLI])
def test_no_command_output_names_a_card_of_a_set_not_over(
    held: HeldLadder, command: list[str], status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    argv = [command[0], "--db", str(held.path), *(part.format(match=held.match_id) for part in command[1:])]
    assert main(argv) == status
    printed = capsys.readouterr()
    assert held.cards.findall(printed.out + printed.err) == []


def test_the_static_export_names_no_card_of_a_set_not_over(held: HeldLadder, tmp_path: Path) -> None:
    folder = tmp_path / "site"
    assert main(["ladder", "export", "--db", str(held.path), "--html", str(folder)]) == 0
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    assert folder / "index.html" in files
    for path in files:
        assert held.cards.findall(path.read_text(encoding="utf-8")) == [], path


def test_the_probation_reason_names_the_count_the_cause_and_the_match(
    client: TestClient, held: HeldLadder
) -> None:
    [line] = [line for line in client.get("/api/standings").json()["standings"] if line["bot"] == "illegal"]
    assert line["probation"] == f"forfeited its last 1 matches (last: illegal_move in match {held.match_id})"


def test_a_match_of_a_set_not_over_is_listed_with_its_faults_causes_only(
    client: TestClient, held: HeldLadder
) -> None:
    [listed] = client.get("/api/matches?bot=illegal").json()["matches"]
    assert listed["id"] == held.match_id
    assert listed["set_over"] is False
    assert [fault["cause"] for fault in listed["faults"]] == ["illegal_move", "illegal_move"]
    assert [fault["detail"] for fault in listed["faults"]] == [None, None]
    page = client.get("/bots/illegal").text
    assert "(shown when the set is over)" in page
    assert f'href="/matches/{held.match_id}"' not in page  # no link to a page that is held back


def copy_of(held: HeldLadder, folder: Path) -> Path:
    """The ladder file copied whole (SQLite's backup), to be changed by one test alone."""
    path = folder / "ladder.db"
    source, target = sqlite3.connect(held.path), sqlite3.connect(path)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return path


def finish_by_playing(path: Path, folder: Path, client: TestClient, token: str) -> None:
    """The host takes the bot off probation and a ladder run plays the set's other rotation: rated."""
    cleared = client.post(
        "/api/bots/illegal/probation",
        content=json.dumps({"clear": True}),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert cleared.status_code == 200
    store = LadderStore(path)
    try:
        run_ladder(store, folder, settings(matches=1), stop_after_first=False)
        assert store.sets.unfinished_sets() == []
    finally:
        store.close()


def finish_by_removing(path: Path, folder: Path, client: TestClient, token: str) -> None:
    """The host removes the bot: its unfinished set is made void."""
    removed = client.delete("/api/bots/illegal", headers={"Authorization": f"Bearer {token}"})
    assert removed.status_code == 200
    store = LadderStore(path, read_only=True)
    try:
        assert store.sets.unfinished_sets() == []
    finally:
        store.close()


@pytest.mark.parametrize("finish", [finish_by_playing, finish_by_removing], ids=["rated", "void"])
def test_once_the_set_is_over_its_record_and_fault_details_are_shown(
    held: HeldLadder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    finish: Callable[[Path, Path, TestClient, str], None],
) -> None:
    path = copy_of(held, tmp_path)
    with TestClient(create_app(SiteSettings(path)), raise_server_exceptions=False) as over:
        finish(path, tmp_path, over, held.host_token)
        record = over.get(f"/api/matches/{held.match_id}")
        assert record.status_code == 200
        assert record.json()["match_id"] == held.match_id
        [listed] = [
            match for match in over.get("/api/matches").json()["matches"] if match["id"] == held.match_id
        ]
        assert listed["set_over"] is True
        assert [fault["detail"] for fault in listed["faults"]] == held.details
        page = over.get(f"/matches/{held.match_id}")
        assert page.status_code == 200
        for detail in held.details:
            assert str(escape(detail)) in page.text  # as the templates escape it
        bot_page = over.get("/api/bots/illegal")
        if finish is finish_by_playing:
            faults = [fault for fault in bot_page.json()["faults"] if fault["match_id"] == held.match_id]
            assert [fault["detail"] for fault in faults] == held.details
            assert f'href="/matches/{held.match_id}"' in over.get("/bots/illegal").text
        else:
            assert bot_page.status_code == 404  # removed: its matches stay listed
    capsys.readouterr()
    assert main(["ladder", "--db", str(path), "record", held.match_id]) == 0
    assert json.loads(capsys.readouterr().out)["match_id"] == held.match_id
    assert main(["ladder", "--db", str(path), "matches", "--json"]) == 0
    [shown] = [match for match in json.loads(capsys.readouterr().out) if match["id"] == held.match_id]
    assert [fault["detail"] for fault in shown["faults"]] == held.details
    assert main(["ladder", "--db", str(path), "export", "--jsonl", "-"]) == 0
    exported = [json.loads(line)["match_id"] for line in capsys.readouterr().out.splitlines()]
    assert held.match_id in exported
