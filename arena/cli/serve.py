"""`arena serve`: the competition site over the ladder's file (leaderboard, bots, matches, replays, live
matches, the JSON and management APIs), read while a ladder runs. It keeps the address ranges it allows
participants' bots at (`--allow-addresses`; none without it) in the ladder's file, where the site and
every runner read them (arena/ladder/store/access.py). An upload is checked in the sandbox with the
limits of the `--bot-*` options, as `arena ladder run` runs it; the site refuses to start where that
sandbox would show bots the ladder's files."""

from __future__ import annotations

import argparse
import errno
import socket

from arena.cli import arguments, options
from arena.cli.options import Commands, Parents, open_store
from arena.cli.sandbox_options import add_limits, sandbox_of
from arena.errors import ArenaError
from arena.ladder.run_bots import bot_host
from arena.ladder.store import COMMAND_LINE
from arena.runner.address_policy import AddressPolicy
from arena.site.stream_limits import StreamLimits
from arena.site.upload_limits import MIB, UploadLimits
from arena.untrusted import safe_text


def register(commands: Commands, parents: Parents) -> None:
    """Add `arena serve`."""
    serve = commands.add_parser(
        "serve",
        help="serve the competition site (leaderboard, replays, live matches, JSON API)",
        description="Serve the ladder's site over HTTP: everything public is read-only; writes need a token "
        "(arena tokens add). Put it behind a TLS proxy to serve it beyond this machine.",
        parents=[parents.group_database, options.logging_options(level="info"), options.store_wait()],
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=arguments.port, default=8056, help=f"port ({arguments.port.range}; default 8056)"
    )
    serve.add_argument(
        "--live-delay",
        type=arguments.live_delay,
        default=0,
        metavar="SECONDS",
        help=f"show matches in play this late ({arguments.live_delay.range}; default 0: as the moves are "
        "made, a hand shown only once its deal is over)",
    )
    stream_defaults = StreamLimits()
    serve.add_argument(
        "--max-streams",
        type=arguments.streams,
        default=stream_defaults.max_streams,
        metavar="N",
        help=f"live streams open at once, in all ({arguments.streams.range}; default "
        f"{stream_defaults.max_streams}); past that a stream is refused with 503",
    )
    serve.add_argument(
        "--max-streams-per-client",
        type=arguments.streams,
        default=stream_defaults.per_client,
        metavar="N",
        help=f"live streams open at once from one address (an IPv6 /64) ({arguments.streams.range}; default "
        f"{stream_defaults.per_client}); past that, 429. Behind a proxy, have it send X-Forwarded-For",
    )
    serve.add_argument(
        "--allow-addresses",
        type=arguments.address_ranges,
        default=AddressPolicy(),
        metavar="RANGES",
        help="address ranges where participants' bots may be besides public addresses, separated by "
        "commas, for a LAN event (e.g. 10.0.0.0/8,192.168.1.0/24; default none: public addresses only; "
        "kept in the ladder file for its runners)",
    )
    upload_defaults = UploadLimits()
    serve.add_argument(
        "--uploads-at-once",
        type=arguments.uploads_at_once,
        default=upload_defaults.at_once,
        metavar="N",
        help="uploads processed at once; another is a 503 with Retry-After "
        f"({arguments.uploads_at_once.range}; default {upload_defaults.at_once})",
    )
    serve.add_argument(
        "--uploads-per-hour",
        type=arguments.uploads_per_hour,
        default=upload_defaults.per_hour,
        metavar="N",
        help="uploads a participant's token may make in any hour, refused ones counted "
        f"({arguments.uploads_per_hour.range}; default {upload_defaults.per_hour}; "
        "the host's token is not limited)",
    )
    serve.add_argument(
        "--upload-quota",
        type=arguments.upload_quota_mib,
        default=upload_defaults.kept_bytes // MIB,
        metavar="MiB",
        help="bundles kept for a participant's bots' versions, archives and files "
        f"({arguments.upload_quota_mib.range}; default {upload_defaults.kept_bytes // MIB:,}; "
        "freed by arena bots prune)",
    )
    add_limits(serve)
    serve.set_defaults(handler=serve_site, prog=serve.prog)


def serve_site(args: argparse.Namespace) -> int:
    """Run the site until Ctrl-C."""
    import uvicorn  # the server is only needed here

    from arena.site.app import SiteSettings, create_app

    sandbox = sandbox_of(args)
    with open_store(args, writes=False, wait_s=args.store_wait) as store:
        where = store.name  # the file exists and is a ladder: said now in one line, not on every request
        bot_host(store, sandbox).check()  # an upload's check may not show its bot the ladder's files
    try:
        socket.getaddrinfo(args.host, args.port)
    except (OSError, UnicodeError):
        raise ArenaError(
            f"cannot listen on {safe_text(args.host, 100)}: not an address of this machine"
        ) from None
    options.configure_logging_from(args)
    limits = StreamLimits(max_streams=args.max_streams, per_client=args.max_streams_per_client)
    uploads = UploadLimits(
        at_once=args.uploads_at_once, per_hour=args.uploads_per_hour, kept_bytes=args.upload_quota * MIB
    )
    app = create_app(
        SiteSettings(args.db, float(args.live_delay), limits, uploads, sandbox, store_wait_s=args.store_wait)
    )
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    server = uvicorn.Server(config)
    try:
        probe = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((args.host, args.port))
        probe.close()
    except OSError as error:
        reason = "the port is in use" if error.errno == errno.EADDRINUSE else error.strerror
        raise ArenaError(f"cannot listen on {safe_text(args.host, 100)}:{args.port}: {reason}") from None
    with open_store(args, writes=False, wait_s=args.store_wait) as store:
        if store.access.address_policy() != args.allow_addresses:  # a read-only file can still be served
            store.access.set_address_policy(args.allow_addresses, COMMAND_LINE)
    print(f"Serving {safe_text(where)} at http://{safe_text(args.host, 100)}:{args.port}/ (Ctrl-C stops)")
    ranges = args.allow_addresses.text
    print(f"Participants' bots may be at public addresses{' and in ' + ranges if ranges else ' only'}")
    server.run()
    return 0
