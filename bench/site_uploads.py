"""Whether uploads can freeze the site: page latency while zip bombs are uploaded, against idle.

Run by hand: `python bench/site_uploads.py [--rounds 8] [--bombs 10] [--at-once 2,10]`. For each
`--uploads-at-once` value it starts a real `arena serve` (uvicorn, in a process of its own) on a fresh
ladder file and times `GET /api/pools`, one request after another, in rounds: `--idle` seconds idle, then
for as long as a burst of `--bombs` zip bombs uploaded at once takes to be answered (the host's token: no
quota throttles them). Idle and loaded alternate, so a change in the machine's load weighs on both. A bomb
is a zip of about 1.4 MB that unpacks to 320 MiB of zeros: each upload let in is unpacked until the
256 MiB limit refuses it (400), the others are turned away at once (503, or 0: closed while sent). It
prints, per setting, the latency's median, 95th percentile and maximum idle and under bombs, and their
ratios (the issue's target: under 2x idle), and what the site's temporary folder holds afterwards
(nothing). On 2 CPUs a round of 10 bombs all let in takes about half a minute.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import io
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from arena.ladder.store import LadderStore

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


def zip_bomb() -> bytes:
    """About 1.4 MB of zip that unpacks to 320 MiB of zeros (five files of 64 MiB)."""
    buffer = io.BytesIO()
    zeros = bytes(MIB)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as bundle:
        for number in range(5):
            with bundle.open(f"zeros-{number}", "w", force_zip64=True) as member:
                for _ in range(64):
                    member.write(zeros)
    return buffer.getvalue()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def request(port: int, method: str, path: str, body: bytes | None = None, token: str = "") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def upload(port: int, bomb: bytes, token: str) -> int:
    """The status of one bomb's upload (0: the site closed the connection before it was all sent, as it
    does when it refuses an upload before reading it)."""
    try:
        return request(port, "POST", "/api/bots/bomb/upload?run=x", bomb, token)
    except OSError:
        return 0


def latencies(port: int, seconds: float) -> list[float]:
    """Seconds of each GET /api/pools, one after another, for `seconds` (at least one)."""
    times: list[float] = []
    end = time.monotonic() + seconds
    while not times or time.monotonic() < end:
        started = time.perf_counter()
        assert request(port, "GET", "/api/pools") == 200
        times.append(time.perf_counter() - started)
    return times


def summary(times: list[float]) -> tuple[float, float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))], ordered[-1]


def measure(at_once: int, bombs: int, rounds: int, idle_s: float, bomb: bytes, folder: Path) -> None:
    db = folder / f"ladder-{at_once}.db"
    store = LadderStore(db)
    token = store.access.add_token("bench-host", "host", "host:bench")
    store.close()
    port = free_port()
    tmpdir = Path(tempfile.mkdtemp(prefix="bench-tmp-", dir=folder))
    command = [sys.executable, "-m", "arena.cli", "serve", "--db", str(db), "--port", str(port)]
    command += ["--uploads-at-once", str(at_once), "--log-level", "warning"]
    environment = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                request(port, "GET", "/api/pools")
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("the site did not start") from None
                time.sleep(0.1)
        latencies(port, 1.0)  # warm up
        idle: list[float] = []
        loaded: list[float] = []
        answers: collections.Counter[int] = collections.Counter()
        with ThreadPoolExecutor(bombs) as pool:
            for _ in range(rounds):  # idle and under bombs in turn, so that a change of load hits both
                idle += latencies(port, idle_s)
                burst = [pool.submit(upload, port, bomb, token) for _ in range(bombs)]
                while not all(future.done() for future in burst):
                    loaded += latencies(port, 0.0)
                answers.update(future.result() for future in burst)
    finally:
        process.terminate()
        process.wait(20)
    idle_stats, loaded_stats = summary(idle), summary(loaded)
    shown = ", ".join(f"{status}: {count}" for status, count in sorted(answers.items()))
    print(f"--uploads-at-once {at_once}, {bombs} bombs at once ({shown})")
    for label, (median, p95, worst), count in (
        ("idle", idle_stats, len(idle)),
        ("under bombs", loaded_stats, len(loaded)),
    ):
        print(
            f"  {label:12} {count:5} GETs: median {median * 1e3:7.2f} ms, p95 {p95 * 1e3:7.2f} ms, "
            f"max {worst * 1e3:7.2f} ms"
        )
    ratios = [loaded / idle for loaded, idle in zip(loaded_stats, idle_stats, strict=True)]
    print(f"  ratio        median {ratios[0]:.2f}x, p95 {ratios[1]:.2f}x, max {ratios[2]:.2f}x")
    left = sorted(path.name for path in tmpdir.iterdir())
    print(f"  left in the site's temporary folder: {left or 'nothing'}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="bursts of bombs per setting (default 5)")
    parser.add_argument(
        "--idle", type=float, default=1.5, help="seconds idle before each burst (default 1.5)"
    )
    parser.add_argument("--bombs", type=int, default=10, help="bombs uploaded at once (default 10)")
    parser.add_argument(
        "--at-once", default="2,10", help="the sites' --uploads-at-once values (default 2,10)"
    )
    args = parser.parse_args()
    bomb = zip_bomb()
    print(f"a bomb: {len(bomb):,} bytes, 320 MiB unpacked; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        for at_once in (int(value) for value in args.at_once.split(",")):
            measure(at_once, args.bombs, args.rounds, args.idle, bomb, Path(folder))


if __name__ == "__main__":
    main()
