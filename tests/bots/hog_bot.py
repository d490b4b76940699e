"""A bot that tries to write far more than its sandbox lets it, before it serves: `python bot.py --bytes N
--socket PATH`, shipped in an uploaded bundle by tests/arena/sandbox/test_write_cap.py.

It writes up to N bytes into every place it might write: the folder of its socket, /tmp, its working
folder, $HOME, /dev/shm, /var/tmp, /run, /run/arena, / and every folder on a mount that is not read-only,
in files of at most 1 MiB each (a file past its size limit is refused, so it makes many), until each place
refuses more. It leaves them all there, and reports on its standard error (its log) one JSON line,
`{"event": "hogged", "written": {PLACE: BYTES}, "descriptors": [...]}` (the descriptors it was started
with), then serves a bot that plays the first legal move.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Final

CHUNK: Final = 256 * 1024
FILE_BYTES: Final = 1024 * 1024
PLACES: Final = ("/tmp", "/dev/shm", "/var/tmp", "/run", "/run/arena", "/")


def open_descriptors() -> list[int]:
    """The descriptors open now (the listing's own aside: it is closed once listed)."""
    listed = [int(name) for name in os.listdir("/proc/self/fd")]
    found = []
    for descriptor in listed:
        with contextlib.suppress(OSError):
            os.fstat(descriptor)
            found.append(descriptor)
    return sorted(found)


def writable_mounts() -> Iterator[str]:
    """The mount points it sees that are not read-only, /proc aside."""
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            point, options = fields[4].replace("\\040", " "), fields[5].split(",")
            if "rw" in options and point != "/proc" and not point.startswith("/proc/"):
                yield point


def fill(folder: str, limit: int) -> int:
    """Write up to `limit` bytes in new files in `folder`; the bytes written."""
    written = 0
    for number in range(limit // FILE_BYTES + 1):
        try:
            path = os.path.join(folder, f"hog-{os.getpid()}-{number}")
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
        except OSError:
            return written
        try:
            in_file = 0
            while in_file < FILE_BYTES and written < limit:
                count = os.write(descriptor, b"h" * min(CHUNK, FILE_BYTES - in_file, limit - written))
                in_file += count
                written += count
        except OSError:
            return written
        finally:
            os.close(descriptor)
        if written >= limit:
            break
    return written


def hog(limit: int, socket_path: str) -> dict[str, int]:
    """Fill every place it might write; the bytes written in each."""
    places = [os.path.dirname(socket_path), os.getcwd(), os.environ.get("HOME", "/"), *PLACES]
    places += [folder for top in writable_mounts() for folder, _, _ in os.walk(top)]
    written: dict[str, int] = {}
    for place in dict.fromkeys(os.path.realpath(place) for place in places):
        written[place] = fill(place, limit)
    return written


def serve_bot(socket_path: str) -> None:
    from sdk import Bot, BotView, Move, serve

    class HogBot(Bot):
        name = "hog"

        def decide(self, view: BotView) -> Move:
            return view.legal_moves[0]

    serve(HogBot, socket=socket_path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, required=True)
    parser.add_argument("--socket", required=True)
    args = parser.parse_args()
    descriptors = open_descriptors()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file past RLIMIT_FSIZE: EFBIG, then the next file
    report = {"event": "hogged", "written": hog(args.bytes, args.socket), "descriptors": descriptors}
    sys.stderr.write(json.dumps(report) + "\n")
    sys.stderr.flush()
    serve_bot(args.socket)
