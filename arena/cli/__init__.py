"""The `arena` command line: ladder, bots, match, check-bot, play, replay.

This is the one place that prints for people; everything below it returns values or logs.
"""

from __future__ import annotations

from arena.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
