"""Serve a bot from the command line: `python -m sdk package.module:BotClass --port 50051`."""

from __future__ import annotations

import argparse
import importlib
import sys

from fiftysix.logs import configure_logging
from sdk.bot import Bot
from sdk.server import serve


def load_bot(target: str) -> type[Bot]:
    """The Bot class named by `module:Class`."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"expected module:Class, like sample_bots.random_bot:RandomBot; got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SystemExit(f"cannot import {module_name}: {error}") from None
    bot = getattr(module, attribute, None)
    if not (isinstance(bot, type) and issubclass(bot, Bot)):
        raise SystemExit(f"{target} is not a Bot subclass")
    return bot


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m sdk", description="Serve a 56 bot over gRPC.")
    parser.add_argument("bot", help="the bot class, as module:Class")
    parser.add_argument("--port", type=int, default=50051, help="port to listen on (default 50051; 0 = any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port-file", help="once listening, write the port to this file (for --port 0: how a host learns it)"
    )
    parser.add_argument("--socket", help="listen on this Unix socket instead of a port (sandboxed bots)")
    parser.add_argument("--log-json", action="store_true", help="log JSON lines even on a terminal")
    args = parser.parse_args(argv)
    configure_logging(json_lines=True if args.log_json else None)
    serve(load_bot(args.bot), port=args.port, host=args.host, port_file=args.port_file, socket=args.socket)
    return 0


if __name__ == "__main__":
    sys.exit(main())
