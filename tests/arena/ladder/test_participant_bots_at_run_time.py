"""DNS rebinding: a participant's address is checked by the host's policy each time the ladder connects
to it, and connected to as checked. A name that now resolves to the host's own services is never
connected to: the bot is not reached (and goes down), or forfeits the match it was to play."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from arena.ladder.store.access import COMMAND_LINE
from arena.runner import address_policy
from arena.runner.address_policy import AddressPolicy, refused_text
from fiftysix.wire import FaultCause, TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

FAST = TimeControl(decision_ms=500, bank_ms=500)


def quick(matches: int, seed: int) -> LadderSettings:
    return LadderSettings(
        matches=matches, deal_cap=2, time_control=FAST, seed=seed,
        check_timeout_s=0.3, retry_s=0.2, down_after=2, down_recheck_s=0.2,
    )  # fmt: skip


class CountingPort:
    """A port on `host` that accepts every connection, counts it and closes it."""

    def __init__(self, host: str, port: int = 0) -> None:
        self.accepted = 0
        self.socket = socket.socket()
        self.socket.bind((host, port))
        self.port = int(self.socket.getsockname()[1])
        self.socket.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def host_bot() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


def test_a_participants_name_that_now_resolves_to_loopback_is_never_connected_to(
    tmp_path: Path, host_bot: BotServer
) -> None:
    """Registered while the host allowed loopback (or while its name resolved to a public address), the
    bot's name resolves to loopback now, which the policy refuses: before each set it is not reached
    without a connection, and goes down."""
    service = CountingPort("127.0.0.1")
    other = start(RandomBot)
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.registry.add_bot("hosted", address=f"127.0.0.1:{host_bot.port}")
        store.registry.add_bot("other", address=f"127.0.0.1:{other.port}")
        store.registry.add_bot("entrant", address=f"localhost:{service.port}", participant_address=True)
        with capture_logs() as logs:
            report = asyncio.run(Ladder(store, quick(4, 3), LocalBots(tmp_path)).run())
        assert service.accepted == 0
        assert [name for name, _ in report.bots_down] == ["entrant"]
        assert (
            "not allowed by the host's address policy (resolves to 127.0.0.1: loopback)"
            in report.bots_down[0][1]
        )
        assert list(store.registry.down_bots()) == ["entrant"]
        assert all("entrant" not in match.bot_ranks for match in store.matches.finished())
        refusals = [entry for entry in logs if entry["event"] == "participant_address_refused"]
        assert refusals
        assert all(entry["bot"] == "entrant" for entry in refusals)
        assert report.matches >= 4  # the others played on
    finally:
        service.close()
        other.stop(0)
        store.close()


def test_a_name_is_connected_to_as_checked_and_checked_again_for_each_match(
    tmp_path: Path, host_bot: BotServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host allows 127.0.0.2 only (a LAN event, say), where the participant's bot serves. Its name
    is one the system cannot resolve: the matches it plays prove that the arena connects to the address
    the policy checked. Then the name resolves to 127.0.0.1 between a set's check and its matches,
    where a service of the host listens on the same port: each match checks again, the bot forfeits,
    and nothing connects to the service."""
    entrant = start(RandomBot, host="127.0.0.2")
    service = CountingPort("127.0.0.1", entrant.port)
    answers = ["127.0.0.2"]
    resolved: list[str] = []

    def resolve(host: str, port: int) -> list[tuple[str, int]]:
        assert host == "entrant.test"
        resolved.append(answers[min(len(resolved), len(answers) - 1)])
        return [(resolved[-1], 0)]

    monkeypatch.setattr(address_policy, "resolve_host", resolve)
    store = LadderStore(tmp_path / "ladder.db")
    try:
        store.access.set_address_policy(AddressPolicy.parse("127.0.0.2/32"), COMMAND_LINE)
        store.registry.add_bot("hosted", address=f"127.0.0.1:{host_bot.port}")
        store.registry.add_bot("entrant", address=f"entrant.test:{entrant.port}", participant_address=True)
        report = asyncio.run(Ladder(store, quick(2, 5), LocalBots(tmp_path)).run())
        played = store.matches.finished()
        assert len(played) == 2
        assert report.sets_voided == 0
        assert all("entrant" in match.bot_ranks and not match.faults for match in played)

        resolved.clear()
        answers[:] = ["127.0.0.2", "127.0.0.1"]  # the set's check sees .2, its matches .1
        report = asyncio.run(Ladder(store, quick(2, 6), LocalBots(tmp_path)).run())
        assert service.accepted == 0
        assert report.sets_voided >= 1
        forfeited = [match for match in store.matches.finished() if match not in played]
        assert forfeited
        for match in forfeited:
            [fault] = [fault for fault in match.faults if fault.cause is FaultCause.UNREACHABLE]
            # What the match record (public) says: nothing of what the name resolved to.
            assert fault.detail == f"did not start: {refused_text(f'entrant.test:{entrant.port}')}"
    finally:
        service.close()
        entrant.stop(0)
        store.close()
