"""Registering a bot, the one way for every front end (`arena bots add/update`, the site's management
API): by address, by the host's command, or by an uploaded bundle. The bundle is kept first (a refused
bundle registers nothing), the bot is checked to answer (a command or an upload is started once, in the
sandbox when it is to run there), then it is registered and how it starts is recorded (uploads.py).

An address a participant gives (`Registration.policy` set) is checked against the host's address policy
before anything connects to it, and the check connects to the address it checked (address_policy.py);
what the participant reads back says only whether a 56 bot answered there, the same whatever else is
there (a closed port, another program, nothing at all), after the same time; the host's log keeps why."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import structlog

from arena.errors import ArenaError, UsageError
from arena.ladder.bot_commands import BotStartError, Launch, wait_until_ready
from arena.ladder.entries import BotEntry
from arena.ladder.isolation import check_distinct_endpoints
from arena.ladder.local_bots import LocalBots
from arena.ladder.store import LadderStore
from arena.ladder.store_file import StoreError
from arena.ladder.store_uploads import Upload
from arena.ladder.uploads import Uploads
from arena.runner import split_addresses
from arena.runner.address_policy import AddressPolicy, AddressRefusedError, pin_addresses

log = structlog.get_logger("ladder")

CHECK_TIMEOUT_S: Final = 5.0
"""How long a bot at an address has to answer the health check and handshake before it is refused (a
participant's that does not answer is refused after this long, whatever the reason)."""


class NotAnsweringError(ArenaError):
    """A bot to register that did not answer (not reached, not started, or a failed handshake)."""


class AddressNotAllowedError(NotAnsweringError):
    """A participant's address that the host's address policy refuses: nothing was connected to."""


class SharedAddressError(UsageError):
    """A remote bot to register whose addresses are not distinct processes' (the same endpoint twice, or
    two aliases of one): partners would share a process."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A bot to register: at `address`, or started by `launch` (its files from `bundle`, an archive to
    upload, when given: `launch.folder` is then filled in once the bundle is kept); `owner`, its author,
    recorded when given (None: none for a new bot, the one it has for an update); `policy`, the host's
    address policy, when a participant gives the address."""

    name: str
    address: str | None = None
    launch: Launch | None = None
    bundle: Path | None = None
    owner: str | None = None
    policy: AddressPolicy | None = None
    """The host's address policy when a participant gives the address; None: the host's own
    registration, trusted and told all."""


@dataclass(frozen=True, slots=True)
class Registered:
    """The bot as registered, and the version its upload became (None for other bots)."""

    entry: BotEntry
    upload: Upload | None
    launch: Launch | None


async def register_bot(store: LadderStore, wanted: Registration, new: bool, check: bool = True) -> Registered:
    """Add (`new`) or update a bot as `wanted` says; with `check`, only once it has answered.

    :raises StoreError: the name is taken (add) or unknown (update), or the file cannot be written.
    :raises BundleError: the upload is refused.
    :raises NotAnsweringError: the bot did not answer.
    :raises AddressNotAllowedError: a participant's address that the host's policy refuses.
    :raises SharedAddressError: two of its addresses reach one endpoint.
    """
    if (wanted.address is None) == (wanted.launch is None):
        raise ValueError("a bot is registered with either an address or a launch")
    pinned = None
    if wanted.address is not None and wanted.policy is not None:
        try:
            pinned = await pin_addresses(wanted.policy, wanted.address)
        except AddressRefusedError as error:
            log.warning(
                "participant_address_refused", bot=wanted.name, address=error.address, reason=error.reason
            )
            raise AddressNotAllowedError(str(error)) from None
    if wanted.address is not None:
        try:  # names are resolved: not on the event loop
            await asyncio.to_thread(check_distinct_endpoints, wanted.address)
        except ValueError as error:
            raise SharedAddressError(str(error)) from None
    if new and wanted.name in {bot.name for bot in store.bots()}:
        raise StoreError(f"a bot named {wanted.name!r} is already registered")
    if not new:
        store.bot(wanted.name)  # a StoreError if there is no such bot, before any bot is started
    uploads = Uploads(store)
    launch = wanted.launch
    bundle = uploads.keep(wanted.bundle) if wanted.bundle is not None else None
    if bundle is not None and launch is not None:
        launch = Launch(launch.command, launch.sandboxed, bundle.folder)
    if check and pinned is not None:
        assert wanted.address is not None
        await check_participant_answers(wanted.name, wanted.address, pinned)
    elif check:
        await check_answers(wanted.name, wanted.address, launch)
    command = launch.command if launch is not None else None
    participant_address = pinned is not None
    if new:
        entry = store.add_bot(wanted.name, wanted.address, command, wanted.owner, participant_address)
    else:
        entry = store.update_bot(wanted.name, wanted.address, command, participant_address)
        if wanted.owner is not None and wanted.owner != entry.owner:
            entry = store.set_owner(wanted.name, wanted.owner)
    upload = None
    if launch is None:
        store.forget_launch(wanted.name)
    elif bundle is None:
        store.set_launch(wanted.name, launch.command, launch.sandboxed, None)
    else:
        upload = store.add_upload(wanted.name, bundle.sha256, launch.command)
        store.set_launch(wanted.name, launch.command, launch.sandboxed, upload.version)
    return Registered(entry, upload, launch)


def unregister_bot(store: LadderStore, name: str) -> None:
    """Remove a bot from the register; its finished matches and its uploads stay."""
    store.remove_bot(name)
    store.forget_launch(name)


async def check_answers(name: str, address: str | None, launch: Launch | None) -> None:
    """Make sure a bot answers the handshake before registering it (a command is started and stopped).

    :raises NotAnsweringError: saying why it does not.
    """
    if address is not None:
        for one in split_addresses(address):
            try:
                await wait_until_ready(one, timeout=CHECK_TIMEOUT_S)
            except BotStartError as error:
                raise NotAnsweringError(f"cannot reach {name!r} at {one}: {error}") from None
        return
    assert launch is not None
    logs = Path(tempfile.mkdtemp(prefix="arena-check-"))
    local = LocalBots(logs, launch_of=lambda _bot: launch)
    try:
        await local.acquire(BotEntry(name, None, launch.command, 0.0, None), 1)
    except BotStartError as error:
        raise NotAnsweringError(str(error)) from None  # its log is kept: the message names it
    finally:
        await local.stop_all()
    shutil.rmtree(logs, ignore_errors=True)


def no_answer_text(address: str) -> str:
    """What a participant reads when no bot answered at their address: the same whatever is there."""
    return (
        f"no 56 bot answered at {address} (the arena's health check and Describe handshake, tried for "
        f"{CHECK_TIMEOUT_S:g} s)"
    )


async def check_participant_answers(name: str, address: str, pinned: str) -> None:
    """Make sure a participant's bot answers the handshake at each of its addresses, connecting to
    `pinned` (what address_policy.py checked). A failure reads the same whatever its cause, and comes
    after CHECK_TIMEOUT_S whatever its cause, so neither the text nor the time tells a closed port
    from a server of another kind; the host's log says why.

    :raises NotAnsweringError: naming the first address without a bot.
    """
    for shown, target in zip(split_addresses(address), split_addresses(pinned), strict=True):
        started = time.monotonic()
        try:
            await wait_until_ready(target, timeout=CHECK_TIMEOUT_S)
        except BotStartError as error:
            log.warning(
                "participant_bot_not_answering", bot=name, address=shown, target=target, detail=str(error)
            )
            await asyncio.sleep(max(0.0, started + CHECK_TIMEOUT_S - time.monotonic()))
            raise NotAnsweringError(no_answer_text(shown)) from None
