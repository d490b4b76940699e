"""The arena's one error family: every failure the `arena` command reports to people is an `ArenaError`.

The command line catches this base class at one place and prints one line with the error's exit status,
as python-chess's callers catch `EngineError`. This module imports nothing of the project, so that any
layer of the host can raise these without an import cycle.
"""

from __future__ import annotations

from typing import ClassVar


class ArenaError(Exception):
    """A failure to report in one line (a file that cannot be used, a bot that cannot be reached...);
    the message is written for people. `arena` exits with `exit_status`."""

    exit_status: ClassVar[int] = 1


class UsageError(ArenaError):
    """A command given in a way that cannot work (what argparse cannot check alone): exit status 2."""

    exit_status: ClassVar[int] = 2
