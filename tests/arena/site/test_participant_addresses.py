"""A participant cannot make the arena connect anywhere (SSRF), through the real site: uvicorn serving
`arena serve`'s app over a real ladder file, real gRPC bots on loopback, and listeners that count the
connections they are offered.

By default a participant's address must be public: loopback, private ranges, `unix:` and names that
resolve to them are refused before any connection, all with one text. Where the host allows a range (a
LAN event), the arena connects, and what the participant reads says only whether a 56 bot answered: a
closed port, a server of another kind, a bot that fails the handshake and one that dies inside Describe
read alike. The host's token
is trusted and told all."""

from __future__ import annotations

import http.server
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import describe_crash_bot
import pytest
import uvicorn
from structlog.testing import capture_logs

from arena.cli import main
from arena.ladder import registration
from arena.ladder.registration import no_answer_text
from arena.ladder.store import LadderStore
from arena.ladder.store.access import COMMAND_LINE
from arena.runner.address_policy import AddressPolicy, refused_text
from arena.site.app import SiteSettings, create_app
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


class CountingListener:
    """A port on 127.0.0.1 (and the same port on ::1 where it is free) and a Unix socket that accept
    every connection, count it and close it: what a service of the host that no bot should reach
    looks like to the arena."""

    def __init__(self, folder: Path) -> None:
        self.accepted = 0
        self._lock = threading.Lock()
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        self.port = int(tcp.getsockname()[1])
        self.sockets = [tcp]
        try:
            tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            tcp6.bind(("::1", self.port))
            self.sockets.append(tcp6)
        except OSError:
            pass  # no IPv6 loopback here: [::1] is then refused by the policy all the same
        self.path = folder / "service.sock"
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(self.path))
        self.sockets.append(unix)
        for one in self.sockets:
            one.listen(16)
            threading.Thread(target=self._accept, args=(one,), daemon=True).start()

    def _accept(self, listening: socket.socket) -> None:
        while True:
            try:
                connection, _ = listening.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
            connection.close()

    def close(self) -> None:
        for one in self.sockets:
            one.close()


class Site:
    """The site over a ladder file, served by uvicorn in a thread, with a participant's and the host's
    tokens."""

    def __init__(self, path: Path) -> None:
        self.path = path
        store = LadderStore(path)
        try:
            self.participant = store.access.add_token("entrant", "participant", COMMAND_LINE)
            self.host = store.access.add_token("boss", "host", COMMAND_LINE)
        finally:
            store.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.server = uvicorn.Server(
            uvicorn.Config(
                create_app(SiteSettings(path)), host="127.0.0.1", port=self.port, log_level="warning"
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the site did not start"
            time.sleep(0.05)

    def register(self, address: str, token: str, name: str = "entrant") -> tuple[int, dict[str, Any]]:
        return post(self.port, {"name": name, "address": address}, token)

    def allow(self, ranges: str) -> None:
        store = LadderStore(self.path)
        try:
            store.access.set_address_policy(AddressPolicy.parse(ranges), COMMAND_LINE)
        finally:
            store.close()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def post(port: int, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
    """POST /api/bots on the site at `port`: the status and the JSON answer."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/bots",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[CountingListener]:
    counting = CountingListener(tmp_path)
    yield counting
    counting.close()


@pytest.fixture
def bot() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    path = tmp_path / "ladder.db"
    LadderStore(path).close()
    served = Site(path)
    yield served
    served.stop()


def entrant(site: Site) -> Any:
    """The participant's bot as registered, or None."""
    store = LadderStore(site.path, read_only=True)
    try:
        return next((bot for bot in store.registry.bots() if bot.name == "entrant"), None)
    finally:
        store.close()


def test_a_participants_address_on_the_host_is_refused_alike_and_never_connected_to(
    site: Site, listener: CountingListener, bot: BotServer
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = int(probe.getsockname()[1])  # nothing listens there once the probe is closed
    addresses = [
        f"{host}:{port}"
        for port in (listener.port, closed, bot.port)
        for host in (
            "127.0.0.1",
            "localhost",
            "10.0.0.1",
            "[::1]",
            "127.1",
            "2130706433",
            "[::ffff:127.0.0.1]",
        )
    ] + [f"unix:{listener.path}", "unix:/no/such/folder/bot.sock", f"127.0.0.1:{bot.port},8.8.8.8:53"]
    answers = []
    with capture_logs() as logs:
        for address in addresses:
            status, answer = site.register(address, site.participant)
            answers.append((status, answer["error"].replace(address.split(",")[0], "ADDRESS")))
    assert answers == [(422, refused_text("ADDRESS"))] * len(addresses)
    time.sleep(0.2)  # a connection in flight would be counted by now
    assert listener.accepted == 0
    assert entrant(site) is None
    # The host's log says why, which the participant never reads.
    reasons = [entry["reason"] for entry in logs if entry["event"] == "participant_address_refused"]
    assert len(reasons) == len(addresses)
    assert "resolves to 127.0.0.1: loopback" in reasons[1]  # localhost
    assert "resolves to 10.0.0.1: private" in reasons[2]
    assert "Unix socket" in reasons[-3]
    # The host is trusted: its token registers a bot on loopback, and is told why one does not answer.
    assert site.register(f"127.0.0.1:{bot.port}", site.host, "hosted") == (
        201,
        {"bot": "hosted", "address": f"127.0.0.1:{bot.port}", "owner": None, "action": "bot_registered"},
    )


def test_where_the_host_allows_a_range_a_participant_reads_only_whether_a_bot_answered(
    site: Site, listener: CountingListener, bot: BotServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(registration, "CHECK_TIMEOUT_S", 0.5)
    site.allow("127.0.0.0/8")
    good = f"127.0.0.1:{bot.port}"
    status, answer = site.register(good, site.participant)
    assert (status, answer["action"]) == (201, "bot_registered")
    assert entrant(site).participant_address

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    not_serving = start(RandomBot)
    not_serving.health.enter_graceful_shutdown()  # a real bot whose health check says NOT_SERVING
    crashing, crashing_at = describe_crash_bot.spawn(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = int(probe.getsockname()[1])
    try:
        failing = [
            f"127.0.0.1:{closed}",  # nothing there
            f"127.0.0.1:{web.server_address[1]}",  # an HTTP server
            f"localhost:{listener.port}",  # a port that accepts and closes
            f"127.0.0.1:{not_serving.port}",  # a 56 bot that fails the handshake
            crashing_at,  # a 56 bot that dies inside Describe
        ]
        with capture_logs() as logs:
            answers = [site.register(address, site.participant) for address in failing]
    finally:
        web.shutdown()
        web.server_close()
        not_serving.stop(0)
        crashing.kill()
        crashing.wait()
    assert [(status, answer["error"]) for status, answer in answers] == [
        (422, no_answer_text(address)) for address in failing
    ]
    texts = {
        answer["error"].replace(address, "ADDRESS")
        for (_, answer), address in zip(answers, failing, strict=True)
    }
    assert len(texts) == 1
    assert listener.accepted > 0  # allowed: the arena did connect, and said nothing of what it found
    details = [entry["detail"] for entry in logs if entry["event"] == "participant_bot_not_answering"]
    assert len(details) == 5
    assert "not serving" in details[3]  # the host's log tells them apart
    assert "closed the connection during Describe: did it crash?" in details[4]
    assert entrant(site).address == good  # a refused update changes nothing
    assert site.register(f"unix:{listener.path}", site.participant)[0] == 422  # never a participant's
    assert site.register(good, site.host)[0] == 200  # the host's own registration...
    assert not entrant(site).participant_address  # ...is trusted from then on


def test_arena_serve_keeps_the_ranges_it_allows_for_the_runners(tmp_path: Path, bot: BotServer) -> None:
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    token = store.access.add_token("entrant", "participant", COMMAND_LINE)
    store.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "serve",
            "--db",
            str(path),
            "--port",
            str(port),
            "--allow-addresses",
            "127.0.0.0/8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = post(port, {"address": f"127.0.0.1:{bot.port}"}, token)
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the site did not answer"
                time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=20)
    finally:
        process.kill()
    assert answer[0] == 201, answer
    assert "Participants' bots may be at public addresses and in 127.0.0.0/8" in out
    store = LadderStore(path, read_only=True)
    try:
        assert store.access.address_policy() == AddressPolicy.parse("127.0.0.0/8")
        assert store.registry.bot("entrant").participant_address
        assert [(entry.actor, entry.action, entry.detail) for entry in store.access.audit_log(10)][-2:] == [
            ("host:command-line", "addresses_allowed", "127.0.0.0/8"),
            ("host:command-line", "token_added", "participant"),
        ]
    finally:
        store.close()


def test_a_range_that_is_not_one_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ladder.db"
    LadderStore(path).close()
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--db", str(path), "--allow-addresses", "10.0.0.0/8,10.0.0.1/8"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "arena serve: error: argument --allow-addresses: '10.0.0.1/8' is not an address range like "
        "10.0.0.0/8 or fd00::/8 (10.0.0.1/8 has host bits set) (see arena serve --help)\n"
    )
