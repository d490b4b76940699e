"""A ladder between the cheating bot (tests/bots/cheating_bot.py) and the rule bot, and the check of the
cheater's claims against the stored records (tests/fair_play.py): the instrument of the fair-play
tests, for each way a bot can be entered.

- `command`: registered with `--command`, started by the arena (one process per seat, kept for later
  matches); `share=True` gives its processes a common folder (`--share-dir`), as the host's /tmp would,
  `share=False` shares nothing between processes (`--no-share`), so the leak measured is the arena's
  alone: a process that sees a deal twice.
- `remote-per-seat`: one process per seat of a team, started here on ports of their own with a common
  `--share-dir`, registered as `HOST:PORT,HOST:PORT`: processes the host does not run, which may talk to
  each other as they please (docs/bot-guide.md section 8), so they leak whatever the arena does with its
  own processes.
- `upload`: a bundle (the packages and the bot as `bot.py`) registered with `--upload`, run in the
  sandbox, where the places it shares through (`$TMPDIR`, `/tmp`, its folder) are private or read-only.
  Skipped where bubblewrap cannot run, failed under CI (tests/arena/sandbox/sandbox_support.py).
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Final, Literal

from arena.cli import main
from arena.ladder.store import LadderStore
from tests.arena.sandbox.sandbox_support import python_only, require_bubblewrap
from tests.fair_play import LeakReport, check_claims, read_claims, stored_records

Mode = Literal["command", "remote-per-seat", "upload"]
MODES: Final[tuple[Mode, ...]] = ("command", "remote-per-seat", "upload")

ROOT: Final = Path(__file__).resolve().parents[3]
CHEATER: Final = ROOT / "tests" / "bots" / "cheating_bot.py"
RULES_COMMAND: Final = "python -m sample_bots.rule_bot --port 0 --port-file {port_file}"
SEED: Final = 56
"""The ladder's seed: the same pairings and deals in every run of a test."""
DEAL_CAP: Final = 8
"""Deals a match at most (ranked by tables then): a match between rule bots can last thousands of
decisions, and a few deals show a leak as well as many."""
START_SECONDS: Final = 30.0


def ladder_file(tmp_path: Path) -> Path:
    """The ladder file `run_cheater_ladder` plays in."""
    return tmp_path / "arena.db"


def run_cheater_ladder(
    tmp_path: Path,
    mode: Mode,
    players: int = 4,
    concurrency: int = 1,
    sets: int = 2,
    *,
    share: bool = False,
    deal_cap: int = DEAL_CAP,
    twin: bool = False,
    ray: tuple[str, dict[str, str]] | None = None,
) -> LeakReport:
    """Register the cheater (entered as `mode` says) and the rule bot in a new ladder file in `tmp_path`,
    play `sets` duplicate sets of `players` (4: `pairs`; 6 or 8: `partnership`, two teams) at
    `concurrency`, each match at most `deal_cap` deals, and check every claim in the cheater's logs
    against the stored records. `share` is for `command` mode (the other modes share as they must).
    `twin`: the opponent is the cheater's honest twin (`--honest`: it plays as the rule bot and remembers
    nothing) instead of the rule bot (registered as `rules` either way). `ray`: play on the Ray cluster at
    this address, `arena` run in a process of its own with this environment (Ray's driver changes its
    process)."""
    db = ladder_file(tmp_path)
    ruleset = "pairs" if players == 4 else "partnership"
    logs = tmp_path / "remote-logs"
    started: list[subprocess.Popen[bytes]] = []
    try:
        if mode == "command":
            sharing = f"--share-dir {tmp_path / 'shared'}" if share else "--no-share"
            command = f"python {CHEATER} --port 0 --port-file {{port_file}} {sharing}"
            assert main(["bots", "add", "cheater", "--command", command, "--no-check", "--db", str(db)]) == 0
        elif mode == "remote-per-seat":
            addresses = start_remote_cheaters(players // 2, tmp_path / "shared", logs, started)
            assert main(["bots", "add", "cheater", ",".join(addresses), "--db", str(db)]) == 0
        elif mode == "upload":
            require_bubblewrap()
            bundle = cheater_bundle(tmp_path)
            upload = ["bots", "add", "cheater", "--upload", str(bundle), "--run", "python bot.py"]
            assert main([*upload, "--no-check", "--db", str(db)]) == 0
        else:
            raise ValueError(f"no mode {mode!r}: one of {', '.join(MODES)}")
        opponent = f"python {CHEATER} --port 0 --port-file {{port_file}} --honest" if twin else RULES_COMMAND
        assert main(["bots", "add", "rules", "--command", opponent, "--no-check", "--db", str(db)]) == 0
        run = ["ladder", "run", "--matches", str(2 * sets), "--concurrency", str(concurrency)]
        run += [
            "--players",
            str(players),
            "--ruleset",
            ruleset,
            "--deal-cap",
            str(deal_cap),
            "--seed",
            str(SEED),
        ]
        if ray is None:
            assert main([*run, "--log-level", "warning", "--db", str(db)]) == 0
        else:
            address, environment = ray
            finished = subprocess.run(
                [sys.executable, "-m", "arena.cli", *run, "--ray", address, "--db", str(db)],
                env=environment,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert finished.returncode == 0, finished.stderr[-3000:]
    finally:
        for process in started:
            stop(process)
    # Each Ray worker process logs in a folder of its own within the ladder's.
    cheater_logs = sorted(Path(f"{db}-logs").rglob("cheater-*.log")) + sorted(logs.glob("cheater-*.log"))
    return check_claims(read_claims(cheater_logs), stored_records(db))


def start_remote_cheaters(
    count: int, share_dir: Path, logs: Path, started: list[subprocess.Popen[bytes]]
) -> list[str]:
    """Start `count` cheater processes sharing `share_dir`, each logging to `logs`; their addresses.
    Each process is added to `started` as soon as it runs, for the caller to stop."""
    logs.mkdir(parents=True, exist_ok=True)
    port_files = []
    for index in range(count):
        port_file = logs / f"cheater-{index}.port"
        with (logs / f"cheater-{index}.log").open("wb") as log:
            command = [sys.executable, str(CHEATER), "--port", "0", "--port-file", str(port_file)]
            started.append(
                subprocess.Popen([*command, "--share-dir", str(share_dir)], stdout=log, stderr=log)
            )
        port_files.append(port_file)
    deadline = time.monotonic() + START_SECONDS
    ports = []
    for port_file, process in zip(port_files, started, strict=True):
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the cheater did not start; see {port_file.with_suffix('.log')}")
            time.sleep(0.05)
        ports.append(int(port_file.read_text()))
    return [f"127.0.0.1:{port}" for port in ports]


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process started here: SIGTERM, then SIGKILL after 5 s."""
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cheater_bundle(folder: Path) -> Path:
    """An upload of the cheater as an entrant makes it: the game, the SDK, the sample bots, and the bot
    as bot.py."""
    archive = folder / "cheater.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix", "sample_bots"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(CHEATER, "bot.py")
    return archive


def cheater_set_score(tmp_path: Path, rotations: tuple[int, ...] | None = None) -> float:
    """The cheater's mean score against the rule bot over the matches of `run_cheater_ladder`'s ladder in
    `tmp_path` (1 a match it ranked above the rule bot, 0.5 level, 0 below; a set's score is the mean of
    its matches, so over whole sets this is the mean set score); `rotations` keeps only those."""
    store = LadderStore(str(ladder_file(tmp_path)))
    try:
        ranks = [
            match.bot_ranks
            for match in store.matches.finished()
            if rotations is None or match.rotation in rotations
        ]
    finally:
        store.close()
    if not ranks:
        raise ValueError("no match played")
    return sum(score(rank["cheater"], rank["rules"]) for rank in ranks) / len(ranks)


def score(rank: int, other: int) -> float:
    """A match's score for the bot ranked `rank` against the bot ranked `other` (1 is best)."""
    return 1.0 if rank < other else 0.5 if rank == other else 0.0
