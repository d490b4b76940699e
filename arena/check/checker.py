"""The compliance check that a bot author runs against their own bot.

The checker plays the bot through every situation the protocol has and reports, item by item, what
passed and what did not:

- `handshake` and `health`: Describe answers in time with a valid description; the standard
  grpc.health.v1 service says SERVING (a missing health service is only a warning).
- `match N players RULESET`: a whole match through the arena's own `run_match`, the bot playing every
  seat of one team (one stream per seat) against the checker's in-process random opponent.
- scripted situations (`redouble window`, `play after double`, ...): one PlaySeat conversation each, in
  which the checker acts as the arena from a state it reached by playing scripted moves for every seat
  (earlier moves of the bot's own seat included, as when the arena substitutes a move); the bot then
  plays its seat to the end of the deal, and must end the stream after MatchEnd.

Every answer must be a MoveAnswer to the decision asked, naming a legal move, within the decision's
`decision_ms`. The checker gives no bank of spare time (`bank_ms` is 0 in every request), so it is
stricter than a match: a bot that passes it never needs its bank.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2

from arena.check.agreement import ITEM as AGREEMENT_ITEM
from arena.check.agreement import Audit
from arena.check.conversation import CheckFailedError, play_script, seats_text
from arena.check.opponent import CheckOpponent
from arena.check.report import CheckItem, CheckReport, Status, plural
from arena.check.situations import (
    ALL_CONFIGS,
    MATCH_ITEMS,
    PLAYER_COUNTS,
    SITUATIONS,
    Situation,
    build_situation,
    config_name,
)
from arena.errors import ArenaError
from arena.runner import BotAddress, MatchOutcome, MatchSettings, check_address, run_match, seats_for_teams
from arena.runner.connection import (
    HandshakeError,
    closed_during,
    describe,
    describe_error,
    health_status,
    numbers_text,
    open_channel,
)
from arena.untrusted import safe_text
from fiftysix.engine import (
    MatchRules,
    Ruleset,
)
from fiftysix.wire import (
    PROTOCOL_VERSION,
    RULESETS_BY_VALUE,
    FaultCause,
    TimeControl,
)
from sdk import start

HANDSHAKE_TIMEOUT_S: Final = 5.0
"""Time for the health check and for Describe (the arena's own handshake allows the same)."""
MATCH_DEAL_CAP: Final = 3
"""Deals in each whole match: enough to cross deal boundaries, few enough to stay quick."""


class BotUnreachableError(ArenaError, RuntimeError):
    """Nothing answers at the address: there is no bot to check."""


@dataclass(frozen=True, slots=True)
class _Description:
    """What the bot declared in Describe, reduced to what the checker can use."""

    name: str
    player_counts: frozenset[int]
    rulesets: frozenset[Ruleset]

    def plays(self, rules: MatchRules) -> bool:
        return rules.players in self.player_counts and rules.ruleset in self.rulesets

    def why_not(self, players: int, ruleset: Ruleset) -> str:
        if players not in self.player_counts:
            counts = ", ".join(str(count) for count in sorted(self.player_counts)) or "none"
            return f"the bot does not play {players} players (it declares {counts})"
        return f"the bot does not play the {ruleset.value} ruleset"


# The check.


_UNANSWERED: Final = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED"})
"""The codes of a failed health check that came with no answer from the bot."""


class _Checker:
    def __init__(
        self,
        address: str,
        decision_ms: int,
        only: Collection[str],
        on_item: Callable[[CheckItem], None] | None,
        whole_matches: int | None,
    ) -> None:
        self.address = address
        self.decision_ms = decision_ms
        self.only = [name.strip().lower() for name in only if name.strip()]
        self.on_item = on_item
        self.whole_matches = whole_matches
        self.report = CheckReport(address, decision_ms)
        self.audit = Audit()

    def selected(self, name: str) -> bool:
        return not self.only or any(wanted in name for wanted in self.only)

    def add(self, item: CheckItem) -> None:
        self.report.items.append(item)
        if self.on_item is not None:
            self.on_item(item)

    async def run(self) -> CheckReport:
        async with open_channel(self.address) as channel:
            health_item = await self.health(channel)
            description = await self.handshake(channel, health_item)
            if self.selected("health"):
                self.add(health_item)
            if description is None:
                return self.report
            if any(self.selected(name) for name in MATCH_ITEMS):
                await self.matches(description)
            for situation in SITUATIONS:
                if self.selected(situation.name):
                    self.add(await self.situation(channel, situation, description))
            if self.selected(AGREEMENT_ITEM):
                self.add(self.audit.item())
        return self.report

    async def health(self, channel: grpc.aio.Channel) -> CheckItem:
        try:
            serving = await health_status(channel, HANDSHAKE_TIMEOUT_S)
        except HandshakeError as error:
            return CheckItem("health", Status.FAIL, f"the bot {error.detail}", "handshake")
        except grpc.aio.AioRpcError as error:
            code = error.code()
            if code is grpc.StatusCode.UNIMPLEMENTED:
                return CheckItem(
                    "health",
                    Status.WARN,
                    "no grpc.health.v1 health service (recommended, not required)",
                    "handshake",
                )
            reason = f"the health check failed: {describe_error(error)}"
            if code is grpc.StatusCode.NOT_FOUND:
                reason += " (the arena asks for the overall status, service '': set it to SERVING)"
            return CheckItem("health", Status.FAIL, reason, "handshake", {"code": code.name})
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(serving)
        if serving != health_pb2.HealthCheckResponse.SERVING:
            return CheckItem(
                "health",
                Status.FAIL,
                f"the health service reports {status}; the arena treats the bot as unreachable",
                "handshake",
            )
        return CheckItem("health", Status.PASS, "grpc.health.v1 Check answers SERVING", "handshake")

    async def handshake(self, channel: grpc.aio.Channel, health_item: CheckItem) -> _Description | None:
        started = time.monotonic()
        try:
            reply = await describe(channel, HANDSHAKE_TIMEOUT_S)
        except HandshakeError as error:
            reason = f"the bot {error.detail}; nothing else can be checked"
            self.add(CheckItem("handshake", Status.FAIL, reason, "handshake"))
            return None
        except grpc.aio.AioRpcError as error:
            code = error.code()
            health_failed = health_item.status is Status.FAIL
            answered = not health_failed or health_item.details.get("code") not in _UNANSWERED
            if code is grpc.StatusCode.UNAVAILABLE and answered:
                # It answered the health check, so it was reached: the connection closed under Describe.
                reason = f"the bot at {self.address} {closed_during('Describe')}"
                self.add(CheckItem("handshake", Status.FAIL, reason, "handshake"))
                return None
            if code is grpc.StatusCode.UNAVAILABLE or (
                code is grpc.StatusCode.DEADLINE_EXCEEDED and health_failed
            ):
                raise BotUnreachableError(
                    f"cannot reach a bot at {self.address}: {describe_error(error)}"
                ) from None
            if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                reason = f"Describe did not answer within {HANDSHAKE_TIMEOUT_S:.0f} s"
            elif code is grpc.StatusCode.UNIMPLEMENTED:
                reason = "Describe is not implemented: is this a 56 bot (fiftysix.v1.BotService)?"
            else:
                reason = f"Describe failed: {describe_error(error)}"
            self.add(
                CheckItem("handshake", Status.FAIL, reason + "; nothing else can be checked", "handshake")
            )
            return None
        elapsed_ms = (time.monotonic() - started) * 1000
        name, version = safe_text(reply.name.strip(), 64), safe_text(reply.version, 64)
        problems = []
        if reply.protocol_version != PROTOCOL_VERSION:
            problems.append(f"protocol_version is {reply.protocol_version}, not {PROTOCOL_VERSION}")
        if not name:
            problems.append("the name is empty")
        counts = list(reply.player_counts)
        if not counts:
            problems.append("player_counts is empty (list the counts the bot plays: 4, 6, 8)")
        elif not set(counts) <= set(PLAYER_COUNTS):
            wrong = sorted(set(counts) - set(PLAYER_COUNTS))
            problems.append(f"player_counts holds {numbers_text(wrong)}: only 4, 6 and 8 exist")
        bad_rulesets = sorted({value for value in reply.rulesets if value not in RULESETS_BY_VALUE})
        if bad_rulesets:
            problems.append(
                f"rulesets holds {numbers_text(bad_rulesets)}: only RULESET_PAIRS (1) and "
                "RULESET_PARTNERSHIP (2) exist"
            )
        rulesets = frozenset(
            RULESETS_BY_VALUE[value] for value in reply.rulesets if value in RULESETS_BY_VALUE
        )
        description = _Description(
            name=name or "bot",
            player_counts=frozenset(count for count in counts if count in PLAYER_COUNTS),
            rulesets=rulesets if reply.rulesets else frozenset(Ruleset),
        )
        details: dict[str, object] = {
            "bot_name": name,
            "bot_version": version,
            "protocol_version": reply.protocol_version,
            "player_counts": counts[:16],
            "rulesets": sorted(ruleset.value for ruleset in description.rulesets),
            "milliseconds": round(elapsed_ms, 1),
        }
        if problems:
            self.add(CheckItem("handshake", Status.FAIL, "; ".join(problems), "handshake", details))
        elif self.selected("handshake"):
            played = ", ".join(str(count) for count in sorted(description.player_counts))
            which = (
                "every ruleset"
                if description.rulesets == frozenset(Ruleset)
                else f"the {next(iter(description.rulesets)).value} ruleset"
            )
            version = f" {version}" if version else ""
            reason = (
                f"{name!r}{version} speaks protocol {reply.protocol_version}, plays {played} players, "
                f"{which} (answered in {elapsed_ms:.0f} ms)"
            )
            self.add(CheckItem("handshake", Status.PASS, reason, "handshake", details))
        return description

    async def matches(self, description: _Description) -> None:
        server = start(CheckOpponent)
        port = server.port
        played = 0
        try:
            for (players, ruleset), name in zip(ALL_CONFIGS, MATCH_ITEMS, strict=True):
                if not self.selected(name):
                    continue
                rules = MatchRules(players, ruleset, MATCH_DEAL_CAP)
                if not description.plays(rules):
                    self.add(CheckItem(name, Status.SKIP, description.why_not(players, ruleset), "match"))
                    continue
                if self.whole_matches is not None and played >= self.whole_matches:
                    self.add(CheckItem(name, Status.SKIP, _not_played(self.whole_matches), "match"))
                    continue
                played += 1
                self.add(await self.match(name, rules, description, f"127.0.0.1:{port}"))
        finally:
            await asyncio.to_thread(server.stop, 0)

    async def match(
        self, name: str, rules: MatchRules, description: _Description, opponent: str
    ) -> CheckItem:
        bots = [BotAddress(description.name, self.address)] + [
            BotAddress(f"check-bot-opponent-{team}", opponent) for team in range(1, rules.team_count)
        ]
        settings = MatchSettings(
            rules,
            seed=rules.players * 10 + list(Ruleset).index(rules.ruleset),
            time_control=TimeControl(self.decision_ms, 0),
            match_id=f"check-bot-{rules.players}p-{rules.ruleset.value}",
        )
        outcome = await run_match(settings, seats_for_teams(rules, bots))
        bot_seats = rules.seats_of(0)
        details: dict[str, object] = {"seats": list(bot_seats), "deals": len(outcome.results)}
        return CheckItem(name, *_match_verdict(outcome, bot_seats), "match", details)

    async def situation(
        self, channel: grpc.aio.Channel, situation: Situation, description: _Description
    ) -> CheckItem:
        name = situation.name
        config = next(
            (config for config in situation.configs if description.plays(MatchRules(*config))), None
        )
        if config is None:
            names = [config_name(*config) for config in situation.configs]
            wanted = f"neither {' nor '.join(names)}" if len(names) == 2 else f"none of {', '.join(names)}"
            return CheckItem(name, Status.SKIP, f"the bot plays {wanted}", "situation")
        players, ruleset = config
        script = build_situation(situation, players, ruleset)
        details: dict[str, object] = {
            "players": players,
            "ruleset": ruleset.value,
            "seat": script.seat,
            "situation": situation.description,
        }
        match_id = f"check-bot-{name.replace(' ', '-')}"
        try:
            reason = await play_script(
                channel, script, description.name, self.decision_ms, match_id, self.audit
            )
        except CheckFailedError as error:
            return CheckItem(name, Status.FAIL, str(error), "situation", details)
        return CheckItem(name, Status.PASS, reason, "situation", details)


def _not_played(whole_matches: int) -> str:
    matches = "1 whole match" if whole_matches == 1 else f"{whole_matches} whole matches"
    return f"not played: this check plays at most {matches} (arena check-bot plays one of each)"


def _match_verdict(outcome: MatchOutcome, bot_seats: Sequence[int]) -> tuple[Status, str]:
    faults = [fault for fault in outcome.faults if fault.seat in bot_seats]
    if faults:
        fault = faults[0]
        where = f"seat {fault.seat}, deal {fault.deal_number}" if fault.deal_number else f"seat {fault.seat}"
        if fault.cause is FaultCause.TIMEOUT:
            return Status.FAIL, f"too slow ({where}): {fault.detail}"
        return Status.FAIL, f"{fault.cause.value} ({where}): {fault.detail}"
    if outcome.faults:
        fault = outcome.faults[0]
        return Status.FAIL, f"the checker's own opponent faulted (a bug in check-bot): {fault.detail}"
    answers = 0
    for result in outcome.results:
        answers += sum(1 for made in result.calls if made.seat in bot_seats)
        answers += sum(1 for trick in result.tricks for play in trick.plays if play.seat in bot_seats)
    return Status.PASS, (
        f"{plural(len(outcome.results), 'deal')}, {plural(answers, 'answer')} from seats "
        f"{seats_text(bot_seats)} (one stream each), "
        f"all legal and in time; ended by {outcome.reason}"
    )


async def check_bot(
    address: str,
    decision_ms: int = 1000,
    only: Collection[str] = (),
    on_item: Callable[[CheckItem], None] | None = None,
    *,
    whole_matches: int | None = None,
) -> CheckReport:
    """Check the bot at `address` (`HOST:PORT` or `unix:PATH`) item by item; `only` keeps the items whose
    names contain one of its strings; `on_item` is called as each item is decided; `whole_matches`, when
    given, plays at most that many of the whole matches (the first configurations the bot plays, the
    others SKIP), which take most of a slow bot's check.

    :raises BotUnreachableError: when nothing answers at the address.
    """
    check_address(address)
    return await _Checker(address, decision_ms, only, on_item, whole_matches).run()
