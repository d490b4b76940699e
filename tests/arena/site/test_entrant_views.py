"""What the signed-in pages show of a bot's own output in a match and of its checks (entrants.py), read
from a real SQLite store: the owner reads their bot's seats only once the set is over, the host every seat
of the bot, another entrant nothing (a 404, as a page that does not exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.check import CheckItem, CheckReport, Status
from arena.ladder.store import LadderStore, SeatOutput, TokenHolder
from arena.site import entrants
from arena.site.data import SiteError
from tests.arena.ladder.match_support import save_match

ANN, BEA, HOST = (
    TokenHolder("ann", "participant"),
    TokenHolder("bea", "participant"),
    TokenHolder("boss", "host"),
)


def test_a_bots_output_is_its_owners_once_the_set_is_over_and_the_hosts(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.registry.add_bot("ann", command="python bot.py --port {port}", owner="ann")
        store.registry.add_bot("bea", command="python bot.py --port {port}", owner="bea")
        duplicate = store.sets.create_set(4, "pairs", None, 1, ["ann", "bea"], isolated=True)
        outputs = (
            SeatOutput(0, "ann", 1, b"ann's line\n\x1b[2J cleared?\n", 0, "ann"),
            SeatOutput(1, "bea", 1, b"bea's secret\n", 0, "bea"),
            SeatOutput(2, "ann", 1, b"", 5, "ann"),
        )
        save_match(store, "m1", duplicate, 0, "one_team_left", [1, 2], [], {}, 3, 0.5, outputs)
        held = entrants.match_output(store, ANN, "ann", "m1")
        assert held["held_back"] is not None
        assert held["seats"] == []
        store.sets.void_set(duplicate.id, "a bot was removed")
        shown = entrants.match_output(store, ANN, "ann", "m1")
        assert [(seat["seat"], seat["lines"], seat["dropped"]) for seat in shown["seats"]] == [
            (0, ["ann's line", "\\x1b[2J cleared?"], 0),
            (2, [], 5),
        ]
        assert [seat["seat"] for seat in entrants.match_output(store, HOST, "bea", "m1")["seats"]] == [1]
        for holder, name, match in ((BEA, "ann", "m1"), (ANN, "bea", "m1"), (ANN, "ann", "nope")):
            with pytest.raises(SiteError) as refused:
                entrants.match_output(store, holder, name, match)
            assert refused.value.status == 404
    finally:
        store.close()


def test_an_entrants_page_lists_their_checks_and_a_version_its_own(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    try:
        failed = CheckReport("unix:/tmp/arena/bot.sock", 1000)
        failed.items.append(CheckItem("handshake", Status.FAIL, "it died", "protocol", output="boom"))
        store.checks.record_check("ann", "ann", failed)
        store.checks.record_check("bea", "bea", failed)
        page = entrants.entrant(store, ANN)
        assert [(check["bot"], check["passed"]) for check in page["checks"]] == [("ann", False)]
        assert page["checks"][0]["items"] == [
            {"name": "handshake", "status": "FAIL", "reason": "it died", "output": ["boom"]}
        ]
    finally:
        store.close()


def test_a_versions_run_command_is_shown_with_its_control_characters_escaped(tmp_path: Path) -> None:
    # An entrant chooses the run command; the host reads it on the bot's page: no direction override or
    # terminal escape reaches the page as it is.
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.registry.add_bot("ann", command="python bot.py --socket {socket}", owner="ann")
        store.uploads.add_upload("ann", "0" * 64, "python bot.py \u202e\x1b[2J --socket {socket}")
        shown = entrants.versions(store, "ann", "4p-pairs")
        assert [version["run"] for version in shown] == ["python bot.py \\u202e\\x1b[2J --socket {socket}"]
    finally:
        store.close()


def test_a_versions_check_is_shown_after_many_refused_uploads(tmp_path: Path) -> None:
    # A bot keeps 50 refused checks besides its versions': the version's own check is still found.
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.registry.add_bot("ann", command="python bot.py --socket {socket}", owner="ann")
        store.uploads.add_upload("ann", "0" * 64, "python bot.py --socket {socket}")
        passed = CheckReport("unix:/tmp/arena/bot.sock", 1000)
        passed.items.append(CheckItem("handshake", Status.PASS, "ok", "protocol"))
        kept = store.checks.record_check("ann", "ann", passed, 1)
        failed = CheckReport("unix:/tmp/arena/bot.sock", 1000)
        failed.items.append(CheckItem("handshake", Status.FAIL, "it died", "protocol"))
        for _ in range(60):
            store.checks.record_check("ann", "ann", failed)
        shown = entrants.versions(store, "ann", "4p-pairs")
        assert [version["check"]["id"] for version in shown] == [kept.id]
    finally:
        store.close()
