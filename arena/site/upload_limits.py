"""What the site allows of uploads, apart from the site itself so that `arena serve`'s options read their
defaults without importing the web stack (every `arena` command imports the options)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from arena.ladder.registration import LAUNCH_CHECK_TIMEOUT_S, REGISTRATION_CHECK, CheckPlan

MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """What the site allows of uploads (`arena serve` options; docs/hosting.md lists them)."""

    at_once: int = 2
    """Uploads processed at once, over all tokens (`--uploads-at-once`)."""
    per_hour: int = 20
    """Uploads a participant's token may make in any hour, refused ones counted (`--uploads-per-hour`)."""
    kept_bytes: int = 1024 * MIB
    """Bytes of bundles kept for a participant's bots' versions (`--upload-quota`, in MiB)."""
    body_s: float = 120.0
    """How long a body may take to arrive (64 MiB at about 0.5 MiB/s)."""
    fields_s: float = 10.0
    """How long the site's upload form may take to send what comes before its bundle's bytes (its fields,
    the bundle's part headers)."""
    check_s: float = LAUNCH_CHECK_TIMEOUT_S
    """How long the uploaded bot has to answer in the sandbox."""
    check: CheckPlan = REGISTRATION_CHECK
    """Which items of the compliance check an upload goes through (registration.py)."""
    retry_after_s: int = 10
    """The Retry-After of a 503 when `at_once` uploads are in progress."""
