"""Registering a bot, the one way for every front end (`arena bots add/update`, the site's management
API): by address, by the host's command, or by an uploaded bundle. The bundle is kept first (a refused
bundle registers nothing), the bot is checked (a command or an upload is started once, in the sandbox when
it is to run there), then it is registered and how it starts is recorded (uploads.py). A refused upload
leaves nothing: neither its bundle nor the check's log; only its check's report is kept (for whoever
uploaded it to read why). The steps are apart (`prepare`, `check_started` or `check_addresses`,
`record`, then `Uploads.release`) so that the site runs the blocking ones in threads, each with a store
of its own, and only the check on its event loop; `register_bot` runs them in order.

A bot the arena starts goes through the compliance check (arena/check, what `arena check-bot` runs) as
`CheckPlan` says: by default every item but the whole matches past the first the bot plays, which take
most of a slow bot's check (the sample rule bot's takes about 0.5 s so, 1.6 s with all six; the PIMC
bot's 45 s, 160 s); it is registered only if no item failed (a warning or a skip does not refuse it), and
the report is kept either way (store/checks.py), its failed items quoting the first lines of the bot's
output. A bot at an address is only checked to answer the health check and Describe: someone else runs it
and may change it after any check, and its author has `arena check-bot` for the rest.

An address a participant gives (`Registration.policy` set) is checked against the host's address policy
before anything connects to it, and the check connects to the address it checked (address_policy.py);
what the participant reads back says only whether a 56 bot answered there, the same whatever else is
there (a closed port, another program, a bot that crashed inside Describe, nothing at all), after the
same time; the host's log keeps why."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import structlog

from arena import check as compliance
from arena.check import CheckItem, CheckReport, Status
from arena.errors import ArenaError, UsageError
from arena.ladder import bots
from arena.ladder.bots import BotHost, BotStartError, Launch, SandboxUnavailableError, wait_until_ready
from arena.ladder.isolation import check_distinct_endpoints
from arena.ladder.run_bots import bot_host
from arena.ladder.store import COMMAND_LINE, BotCheck, BotEntry, LadderStore, StoreError, Upload
from arena.ladder.uploads import KeptBundle, Unpack, Uploads
from arena.runner import split_addresses
from arena.runner.address_policy import AddressPolicy, AddressRefusedError, pin_addresses
from arena.sandbox import bubblewrap
from arena.sandbox.bubblewrap import Sandbox
from arena.sandbox.bundles import store_bundle
from arena.untrusted import safe_text

log = structlog.get_logger("ladder")

CHECK_TIMEOUT_S: Final = 5.0
"""How long a bot at an address has to answer the health check and handshake before it is refused (a
participant's that does not answer is refused after this long, whatever the reason)."""
LAUNCH_CHECK_TIMEOUT_S: Final = 30.0
"""How long a bot the arena starts for the check (a command, an upload) has to answer."""
OUTPUT_SHOWN_LINES: Final = 20
OUTPUT_SHOWN_BYTES: Final = 2000
"""How much of a bot's output the failed items of a check quote (its first lines)."""


@dataclass(frozen=True, slots=True)
class CheckPlan:
    """Which items of the compliance check a registration of a bot the arena starts runs: `only` as
    `arena check-bot --only` takes them (empty: every item), at most `whole_matches` whole matches (None:
    one of each configuration the bot plays), each answer within `decision_ms` (no bank)."""

    only: tuple[str, ...] = ()
    whole_matches: int | None = 1
    decision_ms: int = 1000


REGISTRATION_CHECK: Final = CheckPlan()
"""What a registration runs unless told otherwise: every item, and the first whole match the bot plays."""
ANSWER_CHECK: Final = CheckPlan(only=("handshake", "health"))
"""Only that the bot answers the health check and Describe (`arena bots add --quick-check`)."""


class NotAnsweringError(ArenaError):
    """A bot to register that did not answer (not reached, not started, or a failed handshake)."""


class FailedCheckError(NotAnsweringError):
    """A bot the arena started that failed its compliance check: nothing was registered; `check` is the
    kept check and its report."""

    def __init__(self, name: str, check: BotCheck) -> None:
        failed = next(item for item in check.report.items if item.status is Status.FAIL)
        super().__init__(f"{name!r} failed the check ({check.report.summary()}): {failed.line()}")
        self.check = check


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
    by: str = COMMAND_LINE
    """Who asks for the registration: a token's name, or the host's command line; its check is kept
    under that name."""


@dataclass(frozen=True, slots=True)
class Registered:
    """The bot as registered, the version its upload became (None for other bots), and the check it
    passed (None for a bot at an address, or one registered unchecked)."""

    entry: BotEntry
    upload: Upload | None
    launch: Launch | None
    check: BotCheck | None = None


@dataclass(frozen=True, slots=True)
class Prepared:
    """A registration checked against the register, its bundle kept (held until `Uploads.release`), and
    how the bot starts (None: at its address)."""

    wanted: Registration
    new: bool
    launch: Launch | None
    kept: KeptBundle | None


async def register_bot(
    store: LadderStore,
    wanted: Registration,
    new: bool,
    check: bool = True,
    sandbox: Sandbox | None = None,
    plan: CheckPlan = REGISTRATION_CHECK,
) -> Registered:
    """Add (`new`) or update a bot as `wanted` says; with `check`, only once it has answered, and a bot
    the arena starts once it has passed the check `plan` says (it runs as the host's bots do: sandboxed
    with `sandbox`'s limits, default ones when None, and never shown the ladder's files). A refused upload
    leaves no bundle (`Uploads.release`); a check's report is kept, passed or failed.

    :raises StoreError: the name is taken (add) or unknown (update), or the file cannot be written.
    :raises BundleError: the upload is refused.
    :raises FailedCheckError: a bot the arena started failed the check (its report is kept).
    :raises NotAnsweringError: a bot at an address did not answer.
    :raises AddressNotAllowedError: a participant's address that the host's policy refuses.
    :raises SharedAddressError: two of its addresses reach one endpoint.
    :raises ExposedFilesError: the sandbox would show the bot one of the ladder's files.
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
    prepared = prepare(store, wanted, new)
    report = None
    try:
        if check and pinned is not None:
            assert wanted.address is not None
            await check_participant_answers(wanted.name, wanted.address, pinned)
        elif check and wanted.address is not None:
            await check_addresses(wanted.name, wanted.address)
        elif check:
            assert prepared.launch is not None
            host = bot_host(store, sandbox if sandbox is not None else Sandbox())
            report = await check_started(wanted.name, prepared.launch, plan, host=host)
        return record(store, prepared, report)
    finally:
        if prepared.kept is not None:
            Uploads(store).release(prepared.kept)


def prepare(store: LadderStore, wanted: Registration, new: bool, unpack: Unpack = store_bundle) -> Prepared:
    """What comes before the check: the name is free (`new`) or registered, and the bundle, if any, is
    kept and unpacked by `unpack` (blocking work: the site runs this in a thread, and `unpack` in a
    process). Its bundle goes to `Uploads.release` once recorded or refused.

    :raises StoreError: the name is taken (add) or unknown (update).
    :raises BundleError: the upload is refused.
    """
    if new and wanted.name in {bot.name for bot in store.registry.bots()}:
        raise StoreError(f"a bot named {wanted.name!r} is already registered")
    if not new:
        store.registry.bot(wanted.name)  # a StoreError if there is no such bot, before any bot is started
    launch = wanted.launch
    kept = Uploads(store).keep(wanted.bundle, unpack) if wanted.bundle is not None else None
    if kept is not None and launch is not None:
        launch = Launch(launch.command, launch.sandboxed, kept.bundle.folder, bundle=kept.bundle.sha256)
    return Prepared(wanted, new, launch, kept)


def record(store: LadderStore, prepared: Prepared, report: CheckReport | None = None) -> Registered:
    """Register the bot once it has answered, or passed its check (`report`), and record how it starts:
    its upload's new version, with the bundle's bytes (into the store in the version's transaction, so
    that every machine can fetch them); the check is kept with the version it registered. A failed check
    is kept, and nothing else is written.

    :raises FailedCheckError: `report` has a failed item.
    """
    wanted, launch = prepared.wanted, prepared.launch
    if report is not None and not report.ok:
        raise FailedCheckError(wanted.name, store.checks.record_check(wanted.name, wanted.by, report))
    command = launch.command if launch is not None else None
    # A participant gave the address: register_bot pinned it by the policy (or refused it).
    participant_address = wanted.address is not None and wanted.policy is not None
    if prepared.new:
        entry = store.registry.add_bot(
            wanted.name, wanted.address, command, wanted.owner, participant_address
        )
    else:
        entry = store.registry.update_bot(wanted.name, wanted.address, command, participant_address)
        if wanted.owner is not None and wanted.owner != entry.owner:
            entry = store.registry.set_owner(wanted.name, wanted.owner)
    upload = None
    if launch is None:
        store.uploads.forget_launch(wanted.name)
    elif prepared.kept is None:
        store.uploads.set_launch(wanted.name, launch.command, launch.sandboxed, None)
    else:
        bundle = prepared.kept.bundle
        upload = store.uploads.add_upload(
            wanted.name, bundle.sha256, launch.command, bundle.archive, bundle.bytes
        )
        store.uploads.set_launch(wanted.name, launch.command, launch.sandboxed, upload.version)
    kept = None
    if report is not None:
        version = upload.version if upload is not None else None
        kept = store.checks.record_check(wanted.name, wanted.by, report, version)
    return Registered(entry, upload, launch, kept)


def unregister_bot(store: LadderStore, name: str) -> None:
    """Remove a bot from the register; its finished matches and its uploads stay."""
    store.registry.remove_bot(name)
    store.uploads.forget_launch(name)


async def check_addresses(name: str, address: str) -> None:
    """Make sure a bot at `address` (each of its addresses) answers the health check and Describe before
    it is registered.

    :raises NotAnsweringError: saying why it does not.
    """
    for one in split_addresses(address):
        try:
            await wait_until_ready(one, timeout=CHECK_TIMEOUT_S)
        except BotStartError as error:
            raise NotAnsweringError(f"cannot reach {name!r} at {one}: {error}") from None


async def check_started(
    name: str,
    launch: Launch,
    plan: CheckPlan = REGISTRATION_CHECK,
    timeout: float = LAUNCH_CHECK_TIMEOUT_S,
    *,
    host: BotHost,
) -> CheckReport:
    """Start the bot once as `host` says (it has `timeout` seconds to answer the handshake), run the
    compliance check's items that `plan` names on it, and stop it; its log goes with it, whatever
    happened. A bot that does not start has a report of one failed item, `handshake`, saying why.

    The report is for whoever uploaded the bot: its failed items quote the first lines of the bot's output
    (escaped, bounded), and it names the bot's address as the bot knows it (a sandboxed bot's socket), no
    path of the host.

    :raises ExposedFilesError: the sandbox would show the bot one of `host.hidden`.
    :raises NotAnsweringError: a sandboxed bot, where the sandbox cannot run.
    """
    logs = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="arena-check-"))
    try:
        local = bots.local_bots(logs, host, lambda _bot: launch, startup_timeout=timeout)
        log_path: Path | None = None
        address = shown = f"unix:{bubblewrap.SOCKET_PATH}" if launch.sandboxed else launch.command
        try:
            try:
                address = (await local.acquire(BotEntry(name, None, launch.command, 0.0, None), 1))[0]
            except SandboxUnavailableError as error:  # nothing of the bot was checked
                raise NotAnsweringError(error.reason) from None
            except BotStartError as error:
                log_path = error.log_path
                item = CheckItem("handshake", Status.FAIL, error.reason, "handshake")
                report = CheckReport(shown, plan.decision_ms, [item])
            else:
                running = local.running_at(address)
                assert running is not None
                log_path, shown = running.log_path, running.shown_address
                try:
                    # Through the face, which loads the checker now: not when the site is imported.
                    report = await compliance.check_bot(
                        address, plan.decision_ms, plan.only, whole_matches=plan.whole_matches
                    )
                except compliance.BotUnreachableError as error:
                    item = CheckItem("handshake", Status.FAIL, str(error), "handshake")
                    report = CheckReport(address, plan.decision_ms, [item])
        finally:
            await local.stop_all()
        output = await asyncio.to_thread(first_lines, log_path)
        return _as_shown(report, address, shown, output)
    finally:
        await asyncio.to_thread(shutil.rmtree, logs, True)


def _as_shown(report: CheckReport, address: str, shown: str, output: str | None) -> CheckReport:
    """`report` as its author reads it: their bot's address as it knows it, and how its output began on
    every failed item."""
    items = [
        dataclasses.replace(
            item,
            reason=item.reason.replace(address, shown),
            output=output if item.status is Status.FAIL else None,
        )
        for item in report.items
    ]
    return CheckReport(shown, report.decision_ms, items)


def first_lines(log: Path | None) -> str | None:
    """How a bot's output began, for the failed items of its check: its first lines, escaped and cut
    ("" when it wrote nothing; None when it never ran)."""
    if log is None:
        return None
    try:
        with log.open("rb") as file:
            head = file.read(OUTPUT_SHOWN_BYTES * 4)
    except OSError:
        return ""
    lines = head.decode("utf-8", "replace").strip().splitlines()[:OUTPUT_SHOWN_LINES]
    return safe_text(chr(10).join(lines), OUTPUT_SHOWN_BYTES)


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
