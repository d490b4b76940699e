"""The sandbox's options (the limits of each sandboxed bot process; `--bot-output` is every started bot's),
shared by every command that starts bots: `arena ladder run`, `sprt`, `tournament`, `bots add|update`
(the check) and `serve` (the check of an upload)."""

from __future__ import annotations

import argparse
from typing import Final

from arena.cli.arguments import Bounded
from arena.sandbox.bubblewrap import Limits, Sandbox

MIB: Final = 1024 * 1024
memory_mib: Final = Bounded(64, 1_048_576, " MiB")
cpu_seconds: Final = Bounded(1, 604_800, " s")
processes: Final = Bounded(4, 100_000)
tmp_mib: Final = Bounded(1, 1_048_576, " MiB")
output_kib: Final = Bounded(1, 1_073_741_824, " KiB")
DEFAULTS: Final = Limits()


def add_limits(parser: argparse.ArgumentParser) -> None:
    """The limits of sandboxed bots, as a group of `parser`'s options."""
    group = parser.add_argument_group(
        "sandboxed bots",
        "Uploaded bots (and bots registered with --sandbox on) run in a bubblewrap sandbox: no network, a "
        "read-only view of the system, their own files read-only, a private /tmp; one process per seat, "
        "each with these limits (see docs/hosting.md).",
    )
    limits: list[tuple[str, Bounded, int, str]] = [
        ("--bot-memory", memory_mib, DEFAULTS.memory_bytes // MIB, "address space of a bot process, MiB"),
        ("--bot-cpu", cpu_seconds, DEFAULTS.cpu_seconds, "CPU seconds of a bot process over its life"),
        ("--bot-processes", processes, DEFAULTS.processes, "processes and threads of a bot process"),
        ("--bot-tmp", tmp_mib, DEFAULTS.tmp_bytes // MIB, "all it may write: its /tmp, MiB"),
        (
            "--bot-output",
            output_kib,
            DEFAULTS.output_bytes // 1024,
            "output kept per match, KiB, of every bot the arena starts (sandboxed or not)",
        ),
    ]
    for option, kind, default, text in limits:
        group.add_argument(
            option, type=kind, default=default, metavar="N", help=f"{text} ({kind.range}; default {default})"
        )


def sandbox_of(args: argparse.Namespace) -> Sandbox:
    """The sandbox the options describe (the factory that starts bots checks what it shows them:
    arena/ladder/bots/factory.py)."""
    return Sandbox(
        Limits(
            memory_bytes=args.bot_memory * MIB,
            cpu_seconds=args.bot_cpu,
            processes=args.bot_processes,
            tmp_bytes=args.bot_tmp * MIB,
            output_bytes=args.bot_output * 1024,
        )
    )
