"""How many live streams `arena serve` keeps open and how it feeds them: settings apart from the streams
themselves (live.py), so that the command line reads their defaults without loading the web server."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How many live streams the site serves, and how it feeds them."""

    max_streams: int = 200
    """Streams open at once, in all: past that a stream is refused (503)."""
    per_client: int = 20
    """Streams open at once from one client (an IPv4 address, an IPv6 /64): past that, 429."""
    poll_s: float = 0.5
    """How often the poller reads what is new."""
    queue_events: int = 2000
    """Events that may wait for one stream; past that its client is too slow, and the stream is dropped."""
    page_events: int = 500
    """Events read at once: a page of a stream's backlog, a match's new events in a tick."""
    keepalive_s: float = 15.0
    """A stream with nothing to send for this long sends a comment (proxies close silent connections)."""
    stream_s: float = 4 * 3600.0
    """A stream ends after this long (the browser reconnects from where it was)."""
    stuck_s: float = 10.0
    """A dropped stream that still cannot send this long after is cut (its client has stopped reading)."""
