"""What the arena isolates and what it asks of remote bots: addresses that are distinct endpoints (aliases
refused at registration), remote bots skipped by a run of isolated bots only."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from arena.cli import main
from arena.ladder import LadderError, LadderSettings
from arena.ladder.isolation import check_distinct_endpoints, shares_seats, unfit_reason
from arena.ladder.pairing import EventPairing, RatingPairing
from arena.ladder.registration import Registration, SharedAddressError, register_bot
from arena.ladder.store import LadderStore
from arena.ladder.store.entries import BotEntry, isolated
from fiftysix.engine import MatchRules, Ruleset


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1:5000,localhost:5000",
        "127.0.0.1:5000,127.0.0.1:5000",
        "127.0.0.1:5000,0.0.0.0:5000",
        "127.0.0.1:5000,127.0.0.2:5000",
        "[::1]:5000,127.0.0.1:5000",
        "[::ffff:10.0.0.5]:7,10.0.0.5:7",
        "unix:/tmp/bot.sock,unix:/tmp/../tmp/bot.sock",
        "10.0.0.5:50051,10.0.0.6:50051,10.0.0.5:50051",
    ],
)
def test_aliases_of_one_endpoint_are_refused(address: str) -> None:
    with pytest.raises(ValueError, match=r"same endpoint|given twice"):
        check_distinct_endpoints(address)


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1:5000,127.0.0.1:5001", "10.0.0.5:50051,10.0.0.6:50051", "unix:/tmp/a.sock,unix:/tmp/b.sock"],
)
def test_distinct_endpoints_pass(address: str) -> None:
    check_distinct_endpoints(address)


def test_registration_refuses_two_aliases_before_any_check(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    wanted = Registration("twin", address="127.0.0.1:5000,localhost:5000")
    with pytest.raises(SharedAddressError, match="same endpoint"):
        asyncio.run(register_bot(store, wanted, new=True))
    assert store.registry.bots() == []


def entry(name: str, address: str | None = None) -> BotEntry:
    command = None if address else "python -m sample_bots.random_bot --port {port}"
    return BotEntry(name, address, command, 1500.0, None)


@pytest.mark.parametrize(
    ("players", "ruleset", "addresses", "shared"),
    [
        (4, Ruleset.PAIRS, 1, True),
        (4, Ruleset.PAIRS, 2, False),
        (6, Ruleset.PARTNERSHIP, 2, True),
        (6, Ruleset.PARTNERSHIP, 3, False),
        (8, Ruleset.PAIRS, 2, False),
        (8, Ruleset.PARTNERSHIP, 3, True),
    ],
)
def test_a_remote_bot_with_fewer_addresses_than_seats_shares_a_process(
    players: int, ruleset: Ruleset, addresses: int, shared: bool
) -> None:
    bot = entry("remote", ",".join(f"10.0.0.{index}:5000" for index in range(1, addresses + 1)))
    assert shares_seats(bot, MatchRules(players, ruleset)) is shared
    assert not shares_seats(entry("local"), MatchRules(players, ruleset))


def test_only_bots_the_arena_starts_are_isolated() -> None:
    assert isolated([entry("a"), entry("b")])
    assert not isolated([entry("a"), entry("b", "10.0.0.1:1,10.0.0.2:1")])
    assert unfit_reason(entry("b", "10.0.0.1:1,10.0.0.2:1"), isolated_only=True) is not None
    assert unfit_reason(entry("b", "10.0.0.1:1,10.0.0.2:1"), isolated_only=False) is None
    assert unfit_reason(entry("a"), isolated_only=True) is None


def test_a_run_of_isolated_bots_only_never_pairs_a_remote_bot(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    for name in ("one", "two", "three"):
        store.registry.add_bot(name, command="python -m sample_bots.random_bot --port {port}")
    store.registry.add_bot("remote", address="127.0.0.1:5000,127.0.0.1:5001")
    settings = LadderSettings(isolated_only=True)
    pairing = RatingPairing(store, settings, random.Random(1), {})
    pairing.check()
    chosen = {name for _ in range(60) for name in pairing.next_bots() or []}
    assert chosen == {"one", "two", "three"}
    strict = LadderSettings(isolated_only=True, event="e")
    with pytest.raises(LadderError, match="remote bot"):
        EventPairing(store, strict, ["one", "remote"], iter([])).check()
    EventPairing(store, LadderSettings(event="e"), ["one", "remote"], iter([])).check()


def test_the_standings_mark_the_bots_the_arena_cannot_isolate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ladder.db")
    store = LadderStore(db)
    store.registry.add_bot("started", command="python -m sample_bots.random_bot --port {port}")
    store.registry.add_bot("remote", address="127.0.0.1:5000,127.0.0.1:5001")
    store.registry.add_bot("shared", address="127.0.0.1:5002")
    store.close()
    assert main(["ladder", "show", "--db", db]) == 0
    shown = capsys.readouterr().out
    rows = {line.split()[1]: line.split()[-1] for line in shown.splitlines()[2:5]}
    assert rows == {"started": "yes", "remote": "no", "shared": "shared"}
    assert "isolated no: a remote bot" in shown
    assert main(["ladder", "show", "--json", "--db", db]) == 0
    lines = {
        line["bot"]: (line["isolated"], line["shares_seats"]) for line in json.loads(capsys.readouterr().out)
    }
    assert lines == {"started": (True, False), "remote": (False, False), "shared": (False, True)}
