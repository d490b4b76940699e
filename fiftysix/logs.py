"""Logging set-up for programs (the arena command, bot servers). Libraries only get loggers.

structlog key-value events: a console renderer on a terminal, one JSON object a line otherwise.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(json_lines: bool | None = None, level: str = "info") -> None:
    """Configure structlog once for this process, writing to standard error.

    `json_lines` None chooses by whether standard error is a terminal.
    """
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info if json_lines else structlog.processors.StackInfoRenderer(),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
