"""The `arena` command run in the test's own process, read back as a finished process would be: for the
many cases of one family, where a process each would cost a second apiece."""

from __future__ import annotations

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
