"""The site's writes: who may make them (a token in `Authorization: Bearer ...`), what they may do (a
participant registers or updates their own bot, by address or by uploading its files, and owns it: the
token's name is the bot's owner; the host does anything), the checks a bot must pass first (it answers
the arena's health check and handshake, started in the sandbox when uploaded: registration.py, as for
`arena bots add`; a participant's address must pass the host's address policy first, and what they read
back says only whether a 56 bot answered there), and the audit log line of each write, naming who made
it. An upload's whole course (bounded, under quotas, off the event loop) is uploading.py's."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import structlog

from arena.ladder.bots import Launch
from arena.ladder.registration import (
    NotAnsweringError,
    Registered,
    Registration,
    SharedAddressError,
    register_bot,
)
from arena.ladder.store import (
    BOT_NAME_RULE,
    OWNER_RULE,
    AccessStore,
    LadderStore,
    StoreError,
    TokenHolder,
    is_bot_name,
    is_owner_name,
)
from arena.ladder.uploads import socket_command
from arena.runner import check_address, split_addresses
from arena.site.data import SiteError
from arena.untrusted import safe_text

log = structlog.get_logger("site")

MAX_BODY_BYTES: Final = 4096
MAX_ADDRESSES: Final = 4
"""The most seats a team has (8-player partnership): more addresses than that are never used."""


def holder_of(access: AccessStore, authorization: str | None) -> TokenHolder:
    """Who the request's token belongs to, or a 401."""
    if not authorization:
        raise SiteError(401, "this needs a token: send 'Authorization: Bearer TOKEN' (arena tokens add)")
    scheme, _, token = authorization.partition(" ")
    holder = access.token_holder(token.strip()) if scheme.lower() == "bearer" else None
    if holder is None:
        raise SiteError(401, "the token is not valid (revoked, mistyped, or not 'Bearer TOKEN')")
    return holder


def actor(holder: TokenHolder) -> str:
    """How the audit log names who made a write."""
    return f"{holder.role}:{holder.name}"


def require_host(holder: TokenHolder) -> None:
    """A 403 unless the host's token was given."""
    if holder.role != "host":
        raise SiteError(403, "only the host's token may do this")


def json_body(body: bytes) -> dict[str, Any]:
    """A request's JSON object, or a 4xx."""
    if len(body) > MAX_BODY_BYTES:
        raise SiteError(413, f"the request body is over {MAX_BODY_BYTES} bytes")
    try:
        document = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        raise SiteError(400, "the request body is not JSON") from None
    if not isinstance(document, dict):
        raise SiteError(400, "the request body must be a JSON object")
    return document


def _text(document: dict[str, Any], key: str, limit: int) -> str | None:
    value = document.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > limit:
        raise SiteError(400, f"{key!r} must be a text of 1 to {limit} characters")
    return value


def owner_of(holder: TokenHolder, document: dict[str, Any] | None = None) -> str | None:
    """The owner a registration records: a participant's token owns the bots it registers (its name is
    the owner; `register` keeps an owner the bot has already, which the host may have set); the host's
    may name one (`owner`), else the bot's stays (a new bot has none)."""
    asked = None if document is None else _text(document, "owner", 64)
    if holder.role != "host":
        if asked is not None and asked != holder.name:
            raise SiteError(403, f"this token's bots are owned by {holder.name!r}")
        return holder.name
    if asked is not None and not is_owner_name(asked):
        raise SiteError(400, OWNER_RULE)
    return asked


def bot_request(holder: TokenHolder, document: dict[str, Any]) -> tuple[str, str]:
    """The bot name and address a POST /api/bots asks for, checked: a participant names only their
    own bot (the token's name, the default)."""
    name = _text(document, "name", 64) or holder.name
    address = _text(document, "address", 2000)
    if address is None:
        raise SiteError(400, "give the bot's 'address' (HOST:PORT, or several separated by commas)")
    if holder.role != "host" and name != holder.name:
        raise SiteError(403, f"this token registers the bot {holder.name!r} only")
    if not is_bot_name(name):
        raise SiteError(400, BOT_NAME_RULE)
    parts = split_addresses(address)
    if len(parts) > MAX_ADDRESSES:
        raise SiteError(400, f"at most {MAX_ADDRESSES} addresses (one per seat of a team)")
    for part in parts:
        try:
            check_address(part)
        except ValueError as error:
            raise SiteError(400, safe_text(error)) from None
    return name, ",".join(parts)


def upload_registration(holder: TokenHolder, name: str, run: str | None) -> Registration:
    """The registration an upload asks for (`POST /api/bots/NAME/upload` or the entrant's upload form),
    checked: how the bot starts (`upload_request`), its owner, and who asked (the check is kept as theirs)."""
    return Registration(
        name, launch=upload_request(holder, name, run), owner=owner_of(holder), by=holder.name
    )


def upload_request(holder: TokenHolder, name: str, run: str | None) -> Launch:
    """How the bot a POST /api/bots/NAME/upload sends starts, checked: a participant uploads only their
    own bot; always in the sandbox (the site never runs a stranger's files unsandboxed)."""
    if holder.role != "host" and name != holder.name:
        raise SiteError(403, f"this token registers the bot {holder.name!r} only")
    if not is_bot_name(name):
        raise SiteError(400, BOT_NAME_RULE)
    if not run or len(run) > 2000:
        raise SiteError(400, "give the command that starts the bot in its folder: ?run=python%20bot.py")
    try:
        return Launch(socket_command(run), sandboxed=True)
    except ValueError as error:
        raise SiteError(400, f"run: {safe_text(error)}") from None


async def register(
    path: str | Path, holder: TokenHolder, wanted: Registration
) -> tuple[Registered, str, int]:
    """Register the bot or update it at a new address once it answers, as `arena bots add` does
    (registration.py), and log who did; the bot, what was done and the status. (An upload is
    uploading.py's.)"""
    with writer(path) as store:
        wanted, new = as_registered_by(store, holder, wanted)
        if holder.role != "host" and wanted.address is not None:
            wanted = dataclasses.replace(wanted, policy=store.access.address_policy())
        try:
            done = await register_bot(store, wanted, new=new)
        except SharedAddressError as error:
            raise SiteError(400, safe_text(error)) from None
        except NotAnsweringError as error:
            raise SiteError(422, safe_text(error)) from None
        action, detail = ("bot_registered" if new else "bot_updated"), done.entry.where
        store.access.record_write(actor(holder), action, wanted.name, detail)
    log.info(action, bot=wanted.name, by=actor(holder))
    return done, action, 201 if new else 200


def remove_bot(path: str | Path, holder: TokenHolder, name: str) -> None:
    """Unregister a bot (host only)."""
    require_host(holder)
    with writer(path) as store:
        _known(store, name)
        store.registry.remove_bot(name)
        store.access.record_write(actor(holder), "bot_removed", name)
    log.info("bot_removed", bot=name, by=actor(holder))


def set_probation(path: str | Path, holder: TokenHolder, name: str, document: dict[str, Any]) -> str | None:
    """Put a bot on probation with a reason, or take it off with {"clear": true} (host only)."""
    require_host(holder)
    clear = document.get("clear") is True
    reason = _text(document, "reason", 500)
    if clear == (reason is not None):
        raise SiteError(400, 'give either {"reason": "..."} or {"clear": true}')
    with writer(path) as store:
        _known(store, name)
        store.registry.set_probation(name, reason)
        store.access.record_write(
            actor(holder), "probation_cleared" if clear else "probation_set", name, reason or ""
        )
    log.info("probation_changed", bot=name, by=actor(holder), reason=reason)
    return reason


def _known(store: LadderStore, name: str) -> None:
    try:
        store.registry.bot(name)
    except StoreError:
        raise SiteError(404, f"no bot named {name!r} is registered") from None


def as_registered_by(
    store: LadderStore, holder: TokenHolder, wanted: Registration
) -> tuple[Registration, bool]:
    """`wanted` as `holder` may register it, and whether the bot is new: a participant's update keeps an
    owner the host gave the bot."""
    owners = {bot.name: bot.owner for bot in store.registry.bots()}
    new = wanted.name not in owners
    if holder.role != "host" and not new and owners[wanted.name] is not None:
        wanted = dataclasses.replace(wanted, owner=None)  # an owner the host gave it stands
    return wanted, new


@contextmanager
def writer(path: str | Path) -> Iterator[LadderStore]:
    """The ladder file opened for one write, closed after."""
    store = LadderStore(path, read_only=False, timeout=5.0)
    try:
        yield store
    finally:
        store.close()
