"""The command line shared by the sample bots: `--port`, `--host`, `--port-file` and `--socket`, and any
options of the bot's own."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from fiftysix.logs import configure_logging
from sdk import Bot, serve


def run_bot(
    bot: type[Bot],
    add_options: Callable[[argparse.ArgumentParser], None] | None = None,
    make: Callable[[argparse.Namespace], Bot] | None = None,
) -> None:
    """Parse `--port/--host/--port-file/--socket` (and the options `add_options` adds) and serve `bot`
    until interrupted; `make` builds the bot from the parsed options (each seat plays a copy of it)."""
    parser = argparse.ArgumentParser(description=f"Serve the {bot.name} bot for 56 over gRPC.")
    parser.add_argument("--port", type=int, default=50051, help="port to listen on (default 50051; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port-file", help="once listening, write the port to this file (for --port 0: how a host learns it)"
    )
    parser.add_argument("--socket", help="listen on this Unix socket instead of a port (sandboxed bots)")
    if add_options is not None:
        add_options(parser)
    args = parser.parse_args()
    configure_logging()
    served = make(args) if make is not None else bot
    serve(served, port=args.port, host=args.host, port_file=args.port_file, socket=args.socket)
