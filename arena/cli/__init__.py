"""The `arena` command line: ladder, bots, match, check-bot, play, replay.

This is the one place that prints for people; everything below it returns values or logs.

gRPC's own C-core log is silenced here, before gRPC is loaded: it prints what a bot sends (the debug
text of an HTTP/2 GOAWAY, for one) raw to standard error, escapes and all, and every fault it could
report reaches the arena's own log and output anyway, escaped and cut. Set GRPC_VERBOSITY yourself to
see it when debugging.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRPC_VERBOSITY", "NONE")

from arena.cli.app import build_parser, main  # after the line above, on purpose

__all__ = ["build_parser", "main"]
