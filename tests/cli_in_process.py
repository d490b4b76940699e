"""The `arena` command run in the test's own process, read back as a finished process would be: for the
many cases of one family, where a process each would cost a second apiece."""

from __future__ import annotations

import json
import subprocess

import pytest

from arena.cli import main


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """`arena ARGS` in this process: its exit status (a usage error's too) and what it printed."""
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, printed.out, printed.err)


def played_without_faults(capsys: pytest.CaptureFixture[str], db: str, bot: str) -> dict[str, object]:
    """`bot`'s line of `arena ladder show --json` on the ladder `db`, once checked that it played and
    faulted in none of its matches (the kits' short ladders)."""
    shown = run_here(capsys, "ladder", "show", "--db", db, "--json")
    assert shown.returncode == 0, shown.stderr
    line = next(line for line in json.loads(shown.stdout) if line["bot"] == bot)
    assert line["matches"] > 0, line
    assert all(count == 0 for count in line["faults"].values()), line
    return dict(line)
