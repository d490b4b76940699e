"""The pool of processes the arena starts: bounded (the least recently used idle ones are stopped), started
in parallel, on a port the bot reports (`{port_file}`) or one the arena picks (`{port}`)."""

from __future__ import annotations

import asyncio
import json
import shlex
import socket
import sys
import tempfile
from pathlib import Path

import pytest

from arena.check import Status
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import BotHost, LocalBots
from arena.ladder.bots.commands import BotStartError, Launch, free_port, port_in
from arena.ladder.registration import check_started
from arena.ladder.store import BotEntry, LadderStore

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the supervisor's guarantees need Linux")

UNRULY = Path(__file__).resolve().parents[3] / "bots" / "unruly_bot.py"
REPORTING = "python -m sample_bots.random_bot --port 0 --port-file {port_file}"


def command_bot(name: str, command: str = REPORTING) -> BotEntry:
    return BotEntry(name, None, command, 1500.0, None)


def unruly(name: str, *flags: str) -> BotEntry:
    """A bot running tests/bots/unruly_bot.py on a port the arena picks."""
    command = shlex.join(["python", str(UNRULY), "--port", "PORT", *flags]).replace("PORT", "{port}")
    return command_bot(name, command)


def test_a_port_file_command_and_a_port_command_both_start(tmp_path: Path) -> None:
    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0)
        try:
            reported = await bots.acquire(command_bot("reported"), 2)
            picked = await bots.acquire(unruly("picked"), 1)
            described = bots.described([*reported, *picked])
            assert sorted(described) == sorted({*reported, *picked})
            assert {reply.name for reply in described.values()} == {"random"}
            assert len(set(reported)) == 2
            assert all(not address.endswith(":0") for address in reported)
        finally:
            await bots.stop_all()

    asyncio.run(run())
    assert list(tmp_path.rglob("*.port")) == []  # read and removed


def test_a_port_file_that_never_comes_is_a_start_error(tmp_path: Path) -> None:
    async def run() -> str:
        bots = LocalBots(tmp_path, startup_timeout=2.0, grace=1.0)
        try:
            with pytest.raises(BotStartError) as raised:
                await bots.acquire(
                    command_bot("mute", "python -c 'import time; time.sleep(60)' {port_file}"), 1
                )
            assert bots.running == 0
        finally:
            await bots.stop_all()
        return str(raised.value)

    assert "wrote no port to its port file" in asyncio.run(run())


WAITS_FOR_THE_OTHERS = """
import os, runpy, sys, time
folder, count = sys.argv[1], int(sys.argv[2])
open(os.path.join(folder, f"started-{os.getpid()}"), "w").close()
deadline = time.monotonic() + 120
while len([name for name in os.listdir(folder) if name.startswith("started-")]) < count:
    if time.monotonic() > deadline:
        sys.exit(3)  # started alone: the others wait for this one to answer first
    time.sleep(0.05)
sys.argv = ["random_bot", "--port", "0", "--port-file", sys.argv[3]]
runpy.run_module("sample_bots.random_bot", run_name="__main__")
"""


def test_processes_start_in_parallel(tmp_path: Path) -> None:
    """Each process answers only once all of them have started: started one after the other (each
    awaited before the next), the first would wait for the others for ever, whatever the machine's load."""
    count = 4
    script, folder = tmp_path / "waits.py", tmp_path / "starts"
    script.write_text(WAITS_FOR_THE_OTHERS)
    folder.mkdir()
    command = f"{sys.executable} {script} {folder} {count} {{port_file}}"

    async def run() -> int:
        bots = LocalBots(tmp_path / "logs", grace=1.0, startup_timeout=150.0)
        try:
            return len(set(await bots.acquire(BotEntry("waits", None, command, 1500.0, None), count)))
        finally:
            await bots.stop_all()

    assert asyncio.run(run()) == count


FAILS_FIRST = """
import os, runpy, sys
try:
    os.close(os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    sys.argv = ["random_bot", "--port", "0", "--port-file", sys.argv[2]]
    runpy.run_module("sample_bots.random_bot", run_name="__main__")
else:
    sys.exit(3)
"""


def test_a_failed_start_stops_the_others_of_the_call(tmp_path: Path) -> None:
    script = tmp_path / "fails_first.py"
    script.write_text(FAILS_FIRST)
    flaky = command_bot("flaky", f"python {script} {tmp_path / 'first'} {{port_file}}")

    async def run() -> None:
        bots = LocalBots(tmp_path, startup_timeout=10.0, grace=1.0)
        [kept] = await bots.acquire(command_bot("fine"), 1)
        bots.release([kept])
        try:
            # The first of three processes exits; the two that started are stopped.
            with pytest.raises(BotStartError, match="exited with status 3"):
                await bots.acquire(flaky, 3)
            assert (bots.running, bots.idle) == (1, 1)
        finally:
            await bots.stop_all()

    asyncio.run(run())
    logs = sorted(tmp_path.rglob("flaky-*.log"))
    assert len(logs) == 3
    stopped = [log for log in logs if "the arena asked" in log.read_text()]
    assert len(stopped) == 2, logs


def test_the_least_recently_used_idle_process_is_stopped_first(tmp_path: Path) -> None:
    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0, idle_limit=1)
        try:
            [older] = await bots.acquire(command_bot("older"), 1)
            [newer] = await bots.acquire(command_bot("newer"), 1)
            bots.release([older])
            bots.release([newer])
            assert (bots.running, bots.idle) == (1, 1)
            assert await bots.acquire(command_bot("newer"), 1) == [newer]
            assert await bots.acquire(command_bot("older"), 1) != [older]
        finally:
            await bots.stop_all()

    asyncio.run(run())
    [log] = [path.read_text() for path in tmp_path.rglob("older-1.log")]
    assert "stopping the bot: the arena asked" in log


def test_the_pool_stays_bounded_while_twenty_command_bots_play(tmp_path: Path) -> None:
    idle_limit, concurrency, seats_a_match = 2, 2, 4
    bound = concurrency * seats_a_match + idle_limit
    store = LadderStore(tmp_path / "ladder.db")
    for number in range(20):
        store.registry.add_bot(f"bot{number:02}", command=REPORTING)
    bots = LocalBots(tmp_path / "logs", grace=1.0, idle_limit=idle_limit)
    counts: list[int] = []
    settings = LadderSettings(matches=4, concurrency=concurrency, players=4, deal_cap=1, seed=5)
    ladder = Ladder(store, settings, bots, on_match=lambda _outcome, _report: counts.append(bots.running))

    async def run() -> None:
        try:
            await ladder.run()
        finally:
            await bots.stop_all()

    try:
        asyncio.run(run())
        assert ladder.report.matches == 4
        assert ladder.report.faults == 0
    finally:
        store.close()
    assert len(counts) == 4
    assert max(counts) <= bound, counts
    # Many more processes than that were started in all: the bound is what kept them few.
    assert len(list(bots.log_folder.glob("*.log"))) > bound


@pytest.mark.parametrize(
    ("text", "port"),
    [
        ("50051", 50051),
        ("50051\n", 50051),  # what most languages' line writers leave, and the kits write
        ("1", 1),
        ("65535\n", 65535),
        ("", None),
        ("\n", None),
        ("0\n", None),
        ("65536", None),
        ("50051\n\n", None),
        ("50051\r\n", None),
        (" 50051", None),
        ("50051 ", None),
        ("+50051", None),
        ("5_0051", None),
        ("\u0665\u0660\u0660\u0665\u0661", None),  # digits, but not ASCII ones
        ("0x50", None),
    ],
)
def test_a_port_file_holds_decimal_digits_and_at_most_a_newline(text: str, port: int | None) -> None:
    # Exactly what docs/bot-guide.md promises: a bot's port file is read by this one function.
    assert port_in(text) == port


@pytest.mark.parametrize(
    "make", ["mkfifo {port_file}", "ln -s /dev/zero {port_file}"], ids=["fifo", "symlink to a device"]
)
def test_a_port_file_that_is_not_a_regular_file_is_a_start_error_not_a_hang(
    tmp_path: Path, make: str
) -> None:
    async def start() -> None:
        bots = LocalBots(tmp_path, startup_timeout=5.0, grace=1.0)
        try:
            bot = BotEntry("fifo", None, f"sh -c '{make}; exec sleep 30'", 1500.0, None)
            with pytest.raises(BotStartError, match="port file"):
                await asyncio.wait_for(bots.acquire(bot, 1), timeout=15)
        finally:
            await bots.stop_all()

    asyncio.run(start())


def test_port_commands_listen_within_the_port_range(tmp_path: Path) -> None:
    low = free_port()  # a free neighbourhood is likely around a port the kernel just gave out
    port_range = (low, low + 20) if low + 20 <= 65535 else (low - 20, low)

    async def start() -> list[str]:
        bots = LocalBots(tmp_path, grace=1.0, port_range=port_range)
        try:
            return await bots.acquire(
                command_bot("ranged", "python -m sample_bots.random_bot --port {port}"), 2
            )
        finally:
            await bots.stop_all()

    addresses = asyncio.run(start())
    ports = [int(address.rsplit(":", 1)[1]) for address in addresses]
    assert all(port_range[0] <= port <= port_range[1] for port in ports), ports


def test_a_port_range_with_no_free_port_is_a_start_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(BotStartError, match=f"no free port from {port} to {port}"):
            free_port((port, port))


def test_a_port_handed_out_is_never_handed_out_again() -> None:
    port = free_port()
    assert free_port((port, port)) == port  # free, and the only one of its range
    with pytest.raises(BotStartError, match=f"no free port from {port} to {port}"):
        free_port((port, port), avoid={port})  # handed to a bot that has not bound it yet
    assert all(free_port(avoid={port}) != port for _ in range(50))


def peers_in(logs: list[Path]) -> list[list[str]]:
    """The addresses each process's seat streams came from, in order, per log file."""
    return [
        [line.split()[-1] for line in log.read_text().splitlines() if line.startswith("unruly: peer ")]
        for log in logs
    ]


def test_the_matches_of_a_process_share_one_connection(tmp_path: Path) -> None:
    """Connected once per process, not once per match; after a match with a fault of that process, the
    next match connects anew."""
    store = LadderStore(tmp_path / "ladder.db")
    for name in ("one", "two"):
        store.registry.add_bot(name, command=unruly(name, "--log-peers").command)
    settings = LadderSettings(matches=2, deal_cap=1, seed=4)
    bots = LocalBots(tmp_path / "logs", grace=1.0)

    async def run() -> None:
        try:
            await Ladder(store, settings, bots).run()
        finally:
            await bots.stop_all()

    asyncio.run(run())
    store.close()
    peers = peers_in(sorted(bots.log_folder.glob("*.log")))
    # A process a seat, and one for each rotation of a set (no process plays a deal twice).
    assert sum(len(streams) for streams in peers) == 2 * 4
    assert all(len(set(streams)) <= 1 for streams in peers), peers  # some started for a check only


def test_a_fault_drops_the_kept_connection(tmp_path: Path) -> None:
    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0)
        try:
            [address] = await bots.acquire(unruly("kept"), 1)
            first = bots.channels([address])[address]
            assert bots.channels([address])[address] is first
            bots.forget_channels([address])
            second = bots.channels([address])[address]
            assert second is not first
            bots.release([address])
        finally:
            await bots.stop_all()

    asyncio.run(run())


def test_the_check_before_registering_leaves_no_folder_whatever_the_bot_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    passed = asyncio.run(check_started("reported", Launch(REPORTING), host=BotHost()))
    assert passed.ok, passed.to_json()
    assert list(tmp_path.iterdir()) == []
    crash = 'python -c \'import sys; print("starting\\x1b[2J"); print("x" * 9000); sys.exit(3)\' {port_file}'
    refused = asyncio.run(check_started("mute", Launch(crash), host=BotHost()))
    assert list(tmp_path.iterdir()) == []  # nor when it did not answer: its log goes too
    [item] = refused.items
    assert (item.name, item.status) == ("handshake", Status.FAIL)
    assert "did not start" in item.reason
    assert "exited with status 3" in item.reason
    assert "its output: starting\\x1b[2J" in item.line()  # its first lines, escaped
    assert len(item.line()) < 2200  # and bounded
    assert str(tmp_path) not in json.dumps(refused.to_json())  # no path of the host


def test_no_process_plays_the_same_deals_twice(tmp_path: Path) -> None:
    """A process that played a match on some deals (a set's rotation) never gets another match on them
    (the set's next rotation), however many idle processes there are; on other deals it is reused."""

    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0, idle_limit=8)
        bot = command_bot("pooled")
        try:
            checked = await bots.acquire(bot, 2)  # the check before a set: no deals yet
            bots.release(checked)
            first_rotation = await bots.acquire(bot, 2, deals="seed-a")
            assert sorted(first_rotation) == sorted(checked)  # the checked processes play it
            bots.release(first_rotation)
            second_rotation = await bots.acquire(bot, 2, deals="seed-a")
            assert not set(second_rotation) & set(first_rotation)
            bots.release(second_rotation)
            other_set = await bots.acquire(bot, 4, deals="seed-b")
            assert set(other_set) == {*first_rotation, *second_rotation}  # no start needed
            bots.release(other_set)
            again = await bots.acquire(bot, 1, deals="seed-a")
            assert again[0] not in other_set
            assert bots.running == 5
        finally:
            await bots.stop_all()

    asyncio.run(run())


def test_a_process_of_a_replaced_launch_plays_no_more_matches(tmp_path: Path) -> None:
    """A bot given a new version while processes of the old one are pooled: the idle ones are stopped
    (their files may be pruned), the one a match holds once the match ends; the next match gets the new."""
    launches = {"now": Launch(REPORTING)}

    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0, launch_of=lambda _bot: launches["now"])
        bot = command_bot("versioned")
        try:
            old = await bots.acquire(bot, 2)
            bots.release(old[:1])  # one idle, one held by a match still in play
            launches["now"] = Launch(REPORTING.replace("random_bot", "rule_bot"))
            new = await bots.acquire(bot, 1)
            assert not set(new) & set(old)
            assert bots.running == 2  # the idle old one is stopped; the held one plays on until given back
            bots.release(old[1:])
            assert bots.running == 1
            bots.release(new)
            again = await bots.acquire(bot, 1)
            assert again == new
            assert {reply.name for reply in bots.described(again).values()} == {"rules"}
        finally:
            await bots.stop_all()

    asyncio.run(run())
