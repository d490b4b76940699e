"""Whether the host can reach the bots of a set before it is played: a remote bot must answer the
handshake on each of its addresses, a command bot must start. A bot the host fails to reach is not rated
for the set (the scheduler puts it back); after `down_after` failures in a row it is marked down and
skipped, and checked again now and then until it answers.

A bot whose address a participant gave is checked against the host's address policy first, each time
(address_policy.py): an address the policy refuses now (a name that resolves elsewhere since it was
registered) is never connected to, and the bot counts as not reached. `pinned` is that check, for the
set player's matches too.

The policy is applied by the runner, which holds the register; the reaching itself (`reach`: the command
started, the handshake) is done where the matches are played (the run's `MatchPlayer`: here, or on a Ray
worker), so that a command bot is started, and a remote bot called, from where its matches will be."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

import structlog

from arena.ladder.bots import BotStartError, LocalBots
from arena.ladder.outages import StoreWait
from arena.ladder.run_settings import LadderReport, LadderSettings
from arena.ladder.store import BotEntry, DuplicateSet, LadderStore
from arena.runner import split_addresses
from arena.runner.address_policy import AddressPolicy, AddressRefusedError, pin_addresses
from arena.runner.connection import HandshakeError, handshake, open_channel
from arena.untrusted import safe_text
from fiftysix.wire import FaultCause

log = structlog.get_logger("ladder")

Reach = Callable[[BotEntry, int, float], Awaitable[str | None]]
"""Why a bot cannot be started or reached where the matches are played (None: it answers): the bot (its
addresses as the policy pinned them), the seats to start processes for, the handshake's timeout."""


async def pinned(bot: BotEntry, policy: AddressPolicy) -> BotEntry:
    """`bot` as the arena connects to it: a participant's addresses resolved and checked by `policy`,
    each replaced by the gRPC target it checked; any other bot as it is.

    :raises AddressRefusedError: an address the policy refuses (logged, with why).
    """
    if bot.address is None or not bot.participant_address:
        return bot
    try:
        return dataclasses.replace(bot, address=await pin_addresses(policy, bot.address))
    except AddressRefusedError as error:
        log.warning("participant_address_refused", bot=bot.name, address=error.address, reason=error.reason)
        raise


class Availability:
    """The checks of one run, and what they record in the store and the run's report (through the run's
    waits for a store that went away)."""

    def __init__(
        self,
        store: LadderStore,
        settings: LadderSettings,
        reach: Reach,
        report: LadderReport,
        store_wait: StoreWait | None = None,
    ) -> None:
        """`reach`: the run's `MatchPlayer.unreachable`, which checks a bot where its matches are played."""
        self.store = store
        self.settings = settings
        self.reach = reach
        self.report = report
        self.store_wait = store_wait or StoreWait(settings.store_wait_s)

    async def check(
        self, bots: Sequence[BotEntry], duplicate: DuplicateSet, rotations: int = 1
    ) -> dict[str, str]:
        """Check the bots of a set about to start; those not reached, with why. Every bot's record of
        failures in a row is brought up to date (and one that answers again is down no more). A command
        bot starts the processes of all `rotations` to be played (each rotation needs processes of its
        own: bots/pool.py), so that they begin together."""
        seats = duplicate.players // len(duplicate.bots) * rotations
        reasons = await asyncio.gather(*(self.unreachable(bot, seats) for bot in bots))
        failed = {bot.name: reason for bot, reason in zip(bots, reasons, strict=True) if reason is not None}
        call, registry = self.store_wait.call, self.store.registry
        for bot in bots:
            name = bot.name
            if name not in failed:
                if await call(partial(registry.record_host_success, name)):
                    self.report.bots_back.append(name)
                    log.info("bot_back_up", bot=name)
                continue
            log.warning("bot_not_reached", bot=name, set_id=duplicate.id, detail=failed[name])
            if await call(partial(registry.record_host_failure, name, self.settings.down_after)):
                reason = f"not reached {self.settings.down_after} times in a row (last: {failed[name]})"
                self.report.bots_down.append((name, reason))
                log.warning("bot_marked_down", bot=name, reason=reason)
        return failed

    async def recheck_down(self) -> None:
        """Check every bot marked down (and not on probation); one that answers is down no more."""
        call, registry = self.store_wait.call, self.store.registry
        down = await call(registry.down_bots)
        bots = [bot for bot in await call(registry.bots) if bot.name in down and bot.probation is None]
        reasons = await asyncio.gather(*(self.unreachable(bot, 1) for bot in bots))
        for bot, reason in zip(bots, reasons, strict=True):
            if reason is None and await call(partial(registry.record_host_success, bot.name)):
                self.report.bots_back.append(bot.name)
                log.info("bot_back_up", bot=bot.name)

    async def unreachable(self, bot: BotEntry, seats: int) -> str | None:
        """Why the host cannot reach or start `bot` now (None: it answers): a participant's addresses must
        pass the host's policy, then the bot is reached where the matches are played (`reach`; a command
        bot's launch is read from the store before anything starts, so a store that went away is waited
        for and the reach tried again)."""
        try:
            bot = await pinned(bot, await self.store_wait.call(self.store.access.address_policy))
        except AddressRefusedError as error:
            return f"its address is not allowed by the host's address policy ({error.reason})"
        return await self.store_wait.run(partial(self.reach, bot, seats, self.settings.check_timeout_s))


async def reach(local_bots: LocalBots, bot: BotEntry, seats: int, timeout_s: float) -> str | None:
    """Why `bot` cannot be started or reached from this process (None: it answers). A command bot must
    start `seats` processes in `local_bots` (kept there, idle, for the matches); a remote bot must answer
    the handshake within `timeout_s` on each of its addresses (an answer that is wrong is the bot's own
    fault, for its match to record)."""
    if bot.address is None:
        try:
            where = await local_bots.acquire(bot, seats)
        except BotStartError as error:
            return f"did not start: {safe_text(error)}"
        local_bots.release(where)
        return None
    reasons = await asyncio.gather(
        *(_address_unreachable(address, timeout_s) for address in split_addresses(bot.address))
    )
    return next((reason for reason in reasons if reason is not None), None)


async def _address_unreachable(address: str, timeout_s: float) -> str | None:
    channel = open_channel(address)
    try:
        await handshake(channel, address, timeout_s, attempts=None, first_delay=0.05)
    except HandshakeError as error:
        return safe_text(error.detail) if error.cause is FaultCause.UNREACHABLE else None
    finally:
        await channel.close(grace=None)
    return None
