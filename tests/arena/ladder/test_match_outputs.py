"""Each started bot's output, kept with its match: a real ladder run with two command bots that write a
known line at each decision (tests/bots/talking_bot.py); each seat's stored output is what that process
wrote in that match and nothing of another, cut at `--bot-output` with the rest counted; an entrant reads
only their own bots' and only once the set is over; the host reads them with `arena ladder output`."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from arena.ladder import Ladder, LadderReport, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore, SeatOutput
from arena.runner import MatchOutcome
from arena.sandbox.bubblewrap import Limits, Sandbox
from tests.arena.ladder.ladder_support import FAST
from tests.cli_in_process import run_here

TALKING = Path(__file__).resolve().parents[2] / "bots" / "talking_bot.py"
CAP = 1024
"""`--bot-output 1`: the smallest, which the chatty bot's lines pass in every match."""


def _command(transcripts: Path, *flags: str) -> str:
    arguments = [sys.executable, str(TALKING), "--port-file", "PORT_FILE", "--transcripts", str(transcripts)]
    return shlex.join([*arguments, *flags]).replace("PORT_FILE", "{port_file}")


def test_each_seat_keeps_its_own_output_of_each_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    db = tmp_path / "ladder.db"
    store = LadderStore(db)
    store.registry.add_bot("chatty", command=_command(transcripts), owner="ann")
    store.registry.add_bot("quiet", command=_command(transcripts, "--quiet"), owner="bob")
    seen_in_play: dict[str, tuple[list[SeatOutput], list[SeatOutput]]] = {}

    def on_match(outcome: MatchOutcome, _report: object) -> None:
        """As each match is stored: the host's read and the entrant's (the set over only at its end)."""
        match_id = outcome.match_id
        seen_in_play[match_id] = (store.outputs.of_match(match_id), store.outputs.own(match_id, "ann"))

    async def run() -> LadderReport:
        bots = LocalBots(tmp_path / "logs", sandbox=Sandbox(Limits(output_bytes=CAP)))
        settings = LadderSettings(matches=2, seed=5, deal_cap=1, time_control=FAST)
        try:
            return await Ladder(store, settings, bots, on_match=on_match).run()
        finally:
            await bots.stop_all()

    try:
        report = asyncio.run(run())
        assert (report.matches, report.sets_rated, report.faults) == (2, 1, 0)
        first, last = sorted(store.matches.finished(), key=lambda match: match.rotation)
        # While the set is not over (its last rotation unplayed), the entrant reads nothing; the host all.
        assert len(seen_in_play[first.id][0]) == 4
        assert seen_in_play[first.id][1] == []
        assert len(seen_in_play[last.id][1]) == 2  # the set was rated as its last match was stored
        cut = 0
        for match in (first, last):
            outputs = store.outputs.of_match(match.id)
            assert [output.seat for output in outputs] == [0, 1, 2, 3]
            for output in outputs:
                said = (transcripts / f"{match.id}-{output.seat}").read_bytes()
                assert output.output == said[:CAP]
                assert output.dropped == len(said) - len(output.output)
                assert output.owner == {"chatty": "ann", "quiet": "bob"}[output.bot]
                assert output.version is None  # a host's command, not an upload
                cut += output.dropped > 0
            # An entrant reads their own bot's seats, never another's.
            assert {output.bot for output in store.outputs.own(match.id, "ann")} == {"chatty"}
            assert {output.bot for output in store.outputs.own(match.id, "bob")} == {"quiet"}
            assert store.outputs.own(match.id, "eve") == []
        assert cut >= 2  # the chatty bot passed the cap, and its seats say by how much
    finally:
        store.close()
    capsys.readouterr()  # the run's log lines
    shown = run_here(capsys, "ladder", "output", first.id, "--seat", "1", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    header, *lines = shown.stdout.splitlines()
    assert header.startswith(f"== match {first.id} seat 1: ")
    assert lines
    assert all(line.startswith(f"talk {first.id} 1 ") for line in lines[:-1])
