"""`arena check-bot HOST:PORT`: a compliance check that a bot author runs against their own bot.

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

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena import arguments
from arena.engine import (
    PASS,
    Card,
    DealResult,
    FixedFirstDeal,
    Match,
    MatchRules,
    Move,
    Phase,
    Ruleset,
    View,
    hand_size_for,
    pack_for,
    parse_call,
    parse_card,
    parse_cards,
)
from arena.engine.errors import quoted
from arena.logs import configure_logging
from arena.match_runner import (
    ARENA_VERSION,
    CONVERSATION_ERRORS,
    END_OF_STREAM,
    MAX_MESSAGE_BYTES,
    UNDECODABLE,
    BotAddress,
    MatchOutcome,
    MatchSettings,
    check_address,
    describe_error,
    run_match,
    seats_for_teams,
)
from arena.players import RandomPlayer
from arena.protocol import (
    PROTOCOL_VERSION,
    RULESETS_BY_VALUE,
    AnswerError,
    FaultCause,
    FaultRecord,
    TimeControl,
    deal_end_message,
    decision_message,
    match_end_message,
    match_start_message,
    read_answer,
    rules_from_message,
    view_from_message,
)
from arena.record import end_reason
from arena.untrusted import safe_text
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc

HANDSHAKE_TIMEOUT_S: Final = 5.0
"""Time for the health check and for Describe (the arena's own handshake allows the same)."""
READY_TIMEOUT_S: Final = 5.0
"""Time for the Ready that answers MatchStart (as in the arena)."""
SEND_TIMEOUT_S: Final = 5.0
"""Time for a message to the bot to be accepted by its stream."""
END_TIMEOUT_S: Final = 2.0
"""Time for the bot to end its stream after MatchEnd."""
MATCH_DEAL_CAP: Final = 3
"""Deals in each whole match: enough to cross deal boundaries, few enough to stay quick."""
PLAYER_COUNTS: Final = (4, 6, 8)
NOTE: Final = (
    "In the scripted situations the checker plays every seat up to the situation (earlier moves of the "
    "bot's own seat included, as the arena does when it substitutes a move); then the bot plays its seat "
    "to the end of the deal. No bank of spare time is given: every answer must come within decision_ms."
)


class Status(Enum):
    """The verdict of one item. WARN never fails the check; SKIP is only for what the bot does not play."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    WARN = "WARN"


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One line of the report: an item's name, its verdict and a one-line reason."""

    name: str
    status: Status
    reason: str
    kind: str
    """`handshake`, `match` or `situation`: the part of the check the item belongs to."""
    details: Mapping[str, object] = field(default_factory=dict)
    """Machine-readable extras for --json (the configuration a situation was played in, its seat)."""

    def line(self) -> str:
        """The item as the report prints it: `PASS  handshake: ...`."""
        return f"{self.status.value:<5} {self.name}: {safe_text(self.reason, 2000)}"

    def to_json(self) -> dict[str, object]:
        """The item as a JSON-ready dictionary."""
        return {
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "kind": self.kind,
            **self.details,
        }


@dataclass
class CheckReport:
    """Everything the check found about one bot."""

    address: str
    decision_ms: int
    items: list[CheckItem] = field(default_factory=list)

    def count(self, status: Status) -> int:
        """How many items have `status`."""
        return sum(1 for item in self.items if item.status is status)

    @property
    def ok(self) -> bool:
        """Whether nothing failed."""
        return self.count(Status.FAIL) == 0

    def summary(self) -> str:
        """The last line: `N passed, M failed` and, when there are any, skips and warnings."""
        text = f"{self.count(Status.PASS)} passed, {self.count(Status.FAIL)} failed"
        skipped, warnings = self.count(Status.SKIP), self.count(Status.WARN)
        if skipped:
            text += f", {skipped} skipped"
        if warnings:
            text += f", {warnings} warning" + ("s" if warnings > 1 else "")
        return text

    def to_json(self) -> dict[str, object]:
        """The report as a JSON-ready dictionary."""
        return {
            "address": self.address,
            "decision_ms": self.decision_ms,
            "ok": self.ok,
            "passed": self.count(Status.PASS),
            "failed": self.count(Status.FAIL),
            "skipped": self.count(Status.SKIP),
            "warnings": self.count(Status.WARN),
            "note": NOTE,
            "items": [item.to_json() for item in self.items],
        }


class BotUnreachableError(RuntimeError):
    """Nothing answers at the address: there is no bot to check."""


class _CheckFailedError(Exception):
    """An item failed; the message is the one-line reason."""


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


# The scripted situations.


def _config_name(players: int, ruleset: Ruleset) -> str:
    return f"{players} players {ruleset.value}"


ALL_CONFIGS: Final = tuple((players, ruleset) for players in PLAYER_COUNTS for ruleset in Ruleset)
MATCH_ITEMS: Final = tuple(f"match {_config_name(players, ruleset)}" for players, ruleset in ALL_CONFIGS)


@dataclass
class Script:
    """A situation ready to be played: the match at the bot's first decision and how to go on."""

    match: Match
    seat: int
    """The seat the bot plays; the checker plays every other seat (pass in the auction, first legal card)."""
    finished: list[DealResult]
    """Deals that ended before the bot's first decision: the bot is told them in DealEnd messages first."""
    moves_made: int
    """Moves made so far in the match, so that decision ids count every seat's decisions, as the arena's."""
    stop_after: int | None = None
    """End the match (by forfeit) after this many of the bot's answers instead of at the end of the deal."""
    faults: tuple[FaultRecord, ...] = ()
    """The faults told in MatchEnd."""


class _Table:
    """A match the checker plays for every seat to reach a situation."""

    def __init__(
        self,
        rules: MatchRules,
        seed: int = 1,
        first_hands: Mapping[int, Sequence[Card]] | None = None,
        tables: Sequence[int] | None = None,
    ) -> None:
        deals = FixedFirstDeal(first_hands, seed) if first_hands is not None else None
        # The last seat deals, so seat 0 makes the first call and leads the first trick.
        self.match = Match(rules, seed=seed, deals=deals, first_dealer=rules.players - 1)
        if tables is not None:
            self.match.tables = list(tables)
        self.finished: list[DealResult] = []
        self.moves = 0

    def apply(self, move: Move) -> None:
        seat = self.match.to_act
        assert seat is not None
        self.moves += 1
        result = self.match.apply(seat, move)
        if result is not None:
            self.finished.append(result)

    def play(self, moves: str) -> None:
        """Make the space-separated `moves` (calls or cards in notation), each by the seat to act."""
        for text in moves.split():
            auction = self.match.deal.phase is Phase.AUCTION
            self.apply(parse_call(text) if auction else parse_card(text))

    def advance(self, until: Callable[[Match], bool]) -> None:
        """Play the checker's own moves for whoever is to act until `until(match)` holds."""
        while not until(self.match):
            self.apply(checker_move(self.match))

    def script(self, seat: int, **extra: Any) -> Script:
        assert self.match.to_act == seat, "a situation starts with the bot's seat to act"
        return Script(self.match, seat, self.finished, self.moves, **extra)


def checker_move(match: Match) -> Move:
    """The move the checker makes for a seat it plays: pass in the auction, the first legal card."""
    return PASS if match.deal.phase is Phase.AUCTION else match.legal_moves()[0]


def _hands(players: int, required: Mapping[int, str]) -> dict[int, list[Card]]:
    """A full table's hands in which each seat holds its `required` cards; the rest of the pack in turn."""
    size = hand_size_for(players)
    hands = {seat: parse_cards(required.get(seat, "")) for seat in range(players)}
    rest = list(pack_for(players))
    for hand in hands.values():
        for card in hand:
            rest.remove(card)
    seat = 0
    for card in rest:
        while len(hands[seat]) >= size:
            seat = (seat + 1) % players
        hands[seat].append(card)
        seat = (seat + 1) % players
    return hands


def _team_size(rules: MatchRules) -> int:
    return rules.players // rules.team_count


def _redouble_window(rules: MatchRules) -> Script:
    # Seat 0 (the bot's partner) bids, seat 1 doubles; the first of the contracting team after the
    # doubler is the first seat of team 0 after seat 1, which is seat `team_count`.
    table = _Table(rules)
    table.play("28S double")
    return table.script(rules.team_count)


def _after_double(rules: MatchRules) -> Script:
    table = _Table(rules)
    table.play("28S double" + " pass" * _team_size(rules))
    table.advance(lambda match: match.to_act == 1)
    return table.script(1)


def _after_redouble(rules: MatchRules) -> Script:
    # The bot's seat 0 bid 28S (the checker made that call for it) and leads the first trick.
    table = _Table(rules)
    table.play("28S double redouble")
    return table.script(0)


def _all_pass(rules: MatchRules) -> Script:
    table = _Table(rules)
    table.play(" ".join(["pass"] * rules.players))
    table.advance(lambda match: match.to_act == 1)
    return table.script(1)


def _team_out(rules: MatchRules) -> Script:
    # The last team holds one table. Seat 0 holds the top spades, so after every player passes its team
    # makes the all-pass 28 and every other team pays it a table: the last team goes out in deal 1.
    # Deal 2 is played by the players left, with the smaller table's pack and hands.
    players, teams = rules.players, rules.team_count
    tables = [12] * teams
    tables[-1] = 1
    tables[0] += 11
    strong = " ".join(str(card) for card in pack_for(players)[: hand_size_for(players)])
    table = _Table(rules, first_hands=_hands(players, {0: strong}), tables=tables)
    table.play(" ".join(["pass"] * players))
    table.advance(lambda match: match.deal_number == 2)
    return table.script(1)


def _last_trick(rules: MatchRules) -> Script:
    seat = rules.players - 1
    table = _Table(rules)
    table.play(" ".join(["pass"] * rules.players))
    table.advance(lambda match: match.to_act == seat and len(match.deal.hands[seat]) == 1)
    return table.script(seat)


def _identical_cards(rules: MatchRules) -> Script:
    # Both copies of KH are on the table (seat 0 led one, seat 1 followed with the other); the bot's
    # seat 2 holds both copies of JH, listed once among its legal moves.
    hands = _hands(rules.players, {0: "KH", 1: "KH", 2: "JH JH 9H"})
    table = _Table(rules, first_hands=hands)
    table.play("28H" + " pass" * (rules.players - 1) + " KH KH")
    return table.script(2)


def _match_end_with_faults(rules: MatchRules) -> Script:
    # The bot plays two decisions; then an opponent's seat (0) forfeits mid-deal after an earlier strike.
    table = _Table(rules)
    table.play("28S" + " pass" * (rules.players - 1))
    table.advance(lambda match: match.to_act == 1)
    team = rules.team_of(0)
    faults = (
        FaultRecord(0, team, FaultCause.TIMEOUT, "no move within 1000 ms", 1, substituted=True),
        FaultRecord(0, team, FaultCause.ILLEGAL_MOVE, "'QD' is not a legal move now; legal: KS", 1),
    )
    return table.script(1, stop_after=2, faults=faults)


@dataclass(frozen=True, slots=True)
class Situation:
    """A scripted situation: its item name, what it is, where it can be played and how it is built."""

    name: str
    description: str
    configs: tuple[tuple[int, Ruleset], ...]
    """Where it can be played, in order of preference: the first the bot plays is used."""
    build: Callable[[MatchRules], Script]
    deal_cap: int = 1


SITUATIONS: Final = (
    Situation(
        "redouble window",
        "the bot's partner bid 28S and an opponent doubled: the legal moves are pass and redouble",
        ALL_CONFIGS,
        _redouble_window,
    ),
    Situation(
        "play after double",
        "28S doubled: the bot plays the deal with doubling 2 in its view",
        ALL_CONFIGS,
        _after_double,
    ),
    Situation(
        "play after redouble",
        "the bot's seat bid 28S, an opponent doubled, its partner redoubled: the bot leads, doubling 4",
        ALL_CONFIGS,
        _after_redouble,
    ),
    Situation(
        "all-pass contract",
        "every player passed: 28 no trumps with contract.all_pass true and no high bid",
        ALL_CONFIGS,
        _all_pass,
    ),
    Situation(
        "team gone out",
        "a team ran out of tables in deal 1 (DealEnd with teams_out); deal 2 is played by the players left "
        "(view.seats shorter than the players, the smaller table's pack and hands)",
        ((8, Ruleset.PAIRS), (6, Ruleset.PAIRS)),
        _team_out,
        deal_cap=2,
    ),
    Situation(
        "last trick",
        "the bot's first decision is the last trick of a deal: a one-card hand",
        ALL_CONFIGS,
        _last_trick,
    ),
    Situation(
        "identical cards",
        "both copies of KH are on the table and the bot holds both copies of JH: the legal list has no "
        "repeats",
        ALL_CONFIGS,
        _identical_cards,
    ),
    Situation(
        "match end with faults",
        "after two of the bot's decisions an opponent forfeits mid-deal: MatchEnd with reason forfeit and "
        "two faults, one of them a strike",
        ALL_CONFIGS,
        _match_end_with_faults,
    ),
)
ITEM_NAMES: Final = ("handshake", "health", *MATCH_ITEMS, *(situation.name for situation in SITUATIONS))
"""Every item of the check, in report order (`--only` filters by these names)."""


def build_situation(situation: Situation, players: int, ruleset: Ruleset) -> Script:
    """The script of `situation` in a match of `players` and `ruleset`."""
    return situation.build(MatchRules(players, ruleset, situation.deal_cap))


# One scripted conversation.


class _Stream:
    """The checker's side of one PlaySeat stream."""

    def __init__(self, call: grpc.aio.StreamStreamCall[pb.PlaySeatRequest, pb.PlaySeatResponse]) -> None:
        self.call = call

    async def send(self, request: pb.PlaySeatRequest, what: str) -> None:
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self.call.write(request)
        except TimeoutError:
            raise _CheckFailedError(f"the bot stopped reading its stream (sending {what})") from None
        except CONVERSATION_ERRORS as error:
            raise _CheckFailedError(
                f"the stream broke when sending {what}: {describe_error(error)}"
            ) from None

    async def receive(self, timeout: float, waiting_for: str) -> pb.PlaySeatResponse:
        """The bot's next message; TimeoutError when none comes within `timeout` seconds."""
        try:
            async with asyncio.timeout(timeout):
                response = await self.call.read()
        except TimeoutError:
            raise  # (TimeoutError is an OSError) the caller says what was too slow
        except CONVERSATION_ERRORS as error:
            raise _CheckFailedError(
                f"the stream failed while waiting for {waiting_for}: {describe_error(error)}"
            ) from None
        if response is END_OF_STREAM:
            raise _CheckFailedError(f"the bot ended the stream before {waiting_for}")
        if not isinstance(response, pb.PlaySeatResponse):
            raise _CheckFailedError(f"waiting for {waiting_for}, the bot sent a message {UNDECODABLE}")
        return response

    async def decide(
        self, decision_id: int, view: View, legal: Sequence[Move], decision_ms: int
    ) -> tuple[Move, float]:
        """Ask one decision; the move the bot chose and how long it took, in seconds."""
        request = decision_message(decision_id, view, legal, decision_ms, 0)
        started = time.monotonic()
        await self.send(request, f"decision {decision_id}")
        # Wait a little past the limit, to tell "slow" from "silent".
        grace_ms = min(decision_ms, 1000)
        try:
            response = await self.receive(
                (decision_ms + grace_ms) / 1000, f"its answer to decision {decision_id}"
            )
        except TimeoutError:
            raise _CheckFailedError(
                f"too slow: no answer within {decision_ms + grace_ms} ms; the limit is {decision_ms} ms"
            ) from None
        elapsed = time.monotonic() - started
        if elapsed * 1000 > decision_ms:
            raise _CheckFailedError(
                f"too slow: answered after {elapsed * 1000:.0f} ms; the limit is {decision_ms} ms"
            )
        try:
            move = read_answer(response, decision_id, legal)
        except AnswerError as error:
            raise _CheckFailedError(explain_answer(response, decision_id, legal, error)) from None
        return move, elapsed

    async def expect_end(self) -> None:
        """Close the checker's side (as the arena does after MatchEnd) and wait for the bot to end with OK."""
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self.call.done_writing()
            async with asyncio.timeout(END_TIMEOUT_S):
                response = await self.call.read()
                code = await self.call.code()
        except TimeoutError:
            raise _CheckFailedError(
                f"the bot did not end the stream within {END_TIMEOUT_S:.0f} s of MatchEnd"
            ) from None
        except CONVERSATION_ERRORS as error:
            raise _CheckFailedError(f"the stream failed after MatchEnd: {describe_error(error)}") from None
        if response is not END_OF_STREAM:
            if not isinstance(response, pb.PlaySeatResponse):
                raise _CheckFailedError(f"after MatchEnd the bot sent a message {UNDECODABLE}")
            kind = response.WhichOneof("answer") or "an empty message"
            raise _CheckFailedError(f"the bot sent {kind} after MatchEnd, where no answer is expected")
        if code is not grpc.StatusCode.OK:
            details = safe_text(await self.call.details(), 300)
            raise _CheckFailedError(f"the bot ended the stream after MatchEnd with {code.name}: {details}")


def _moves_text(legal: Sequence[Move], limit: int = 20) -> str:
    more = " ..." if len(legal) > limit else ""
    return " ".join(str(move) for move in legal[:limit]) + more


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _seats_text(seats: Sequence[int]) -> str:
    names = [str(seat) for seat in seats]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def explain_answer(
    response: pb.PlaySeatResponse, decision_id: int, legal: Sequence[Move], error: AnswerError
) -> str:
    """What exactly was wrong with an answer that `read_answer` refused, in one line."""
    kind = response.WhichOneof("answer")
    if kind != "move":
        what = "Ready" if kind == "ready" else "an empty PlaySeatResponse"
        return f"answered with {what} where a MoveAnswer was expected"
    answer = response.move
    if error.cause is FaultCause.WRONG_DECISION:
        return f"answered decision_id {answer.decision_id}, but the decision asked was {decision_id}"
    choice = answer.WhichOneof("choice")
    if choice == "move_index":
        return (
            f"answered move_index {answer.move_index}, out of range: there are {len(legal)} legal moves "
            f"(legal: {_moves_text(legal)})"
        )
    if choice == "notation":
        if error.cause is FaultCause.MALFORMED_ANSWER:
            what = "card" if legal and isinstance(legal[0], Card) else "call"
            return (
                f"answered {quoted(answer.notation)}, which is not a {what} in the notation of RULES.md "
                f"({error})"
            )
        return f"answered {quoted(answer.notation)} which is not legal (legal: {_moves_text(legal)})"
    return "answered a MoveAnswer that names no move (neither move_index nor notation)"


def _where(view: View) -> str:
    if view.phase is Phase.AUCTION:
        return f"deal {view.deal_number}, auction"
    return f"deal {view.deal_number}, trick {len(view.tricks) + 1}"


async def _play_script(
    stub: rpc.BotServiceAsyncStub, script: Script, bot_name: str, decision_ms: int, match_id: str
) -> str:
    """Hold one seat's conversation through `script`; the PASS reason, or raise _CheckFailedError."""
    match, seat = script.match, script.seat
    rules = match.rules
    names = [bot_name if other == seat else "check-bot" for other in range(rules.players)]
    stream = _Stream(stub.PlaySeat(None))
    try:
        time_control = TimeControl(decision_ms, 0)
        await stream.send(match_start_message(match_id, rules, seat, names, time_control), "MatchStart")
        try:
            response = await stream.receive(READY_TIMEOUT_S, "Ready")
        except TimeoutError:
            raise _CheckFailedError(f"no Ready within {READY_TIMEOUT_S:.0f} s of MatchStart") from None
        if response.WhichOneof("answer") != "ready":
            what = response.WhichOneof("answer") or "an empty message"
            raise _CheckFailedError(f"answered MatchStart with {what} instead of Ready")
        for finished in script.finished:
            await stream.send(deal_end_message(finished), f"DealEnd of deal {finished.number}")
        decision_id = script.moves_made
        answers: list[tuple[Move, float]] = []
        legal_first: Sequence[Move] = ()
        while not match.is_over and (script.stop_after is None or len(answers) < script.stop_after):
            to_act = match.to_act
            assert to_act is not None
            decision_id += 1
            if to_act == seat:
                view = match.view(seat)
                legal = view.legal_moves
                try:
                    move, seconds = await stream.decide(decision_id, view, legal, decision_ms)
                except _CheckFailedError as error:
                    if answers:
                        raise _CheckFailedError(f"later in the deal ({_where(view)}): {error}") from None
                    raise
                if not answers:
                    legal_first = legal
                answers.append((move, seconds))
            else:
                move = checker_move(match)
            result = match.apply(to_act, move)
            if result is not None:
                await stream.send(deal_end_message(result), f"DealEnd of deal {result.number}")
        forfeited = {fault.team for fault in script.faults if not fault.substituted}
        reason = "forfeit" if forfeited else end_reason(match)
        end = match_end_message(reason, match.ranking(last=forfeited), match.tables, script.faults)
        await stream.send(end, "MatchEnd")
        await stream.expect_end()
    finally:
        stream.call.cancel()
    slowest = max(seconds for _, seconds in answers) * 1000
    first = answers[0][0]
    return (
        f"{_config_name(rules.players, rules.ruleset)}, seat {seat}: first answer {str(first)!r} "
        f"(legal: {_moves_text(legal_first, 8)}); {_plural(len(answers), 'answer')}, legal and in time "
        f"(slowest {slowest:.0f} ms); ended the stream after MatchEnd"
    )


# The in-process opponent of the whole matches.


class _Opponent(rpc.BotServiceServicer):
    """The checker's own opponent: random legal cards and a cautious random auction (RandomPlayer)."""

    async def Describe(  # noqa: N802
        self, request: pb.DescribeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.DescribeResponse:
        """Plays everything."""
        return pb.DescribeResponse(
            name="check-bot-opponent",
            version=ARENA_VERSION,
            protocol_version=PROTOCOL_VERSION,
            player_counts=list(PLAYER_COUNTS),
        )

    async def PlaySeat(  # noqa: N802
        self,
        request_iterator: AsyncIterator[pb.PlaySeatRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[pb.PlaySeatResponse]:
        """One seat: Ready, then a random legal move for every decision."""
        rules = MatchRules()
        team_of: tuple[int, ...] = ()
        player = RandomPlayer(random.Random(0))
        async for request in request_iterator:
            event = request.WhichOneof("event")
            if event == "match_start":
                start = request.match_start
                rules = rules_from_message(start.rules)
                team_of = tuple(start.team_of_seats)
                player = RandomPlayer(random.Random(f"{start.match_id}/{start.seat}"))
                yield pb.PlaySeatResponse(ready=pb.Ready())
            elif event == "decision":
                decision = request.decision
                view: View = view_from_message(decision.view, rules, team_of, decision.legal_moves)
                move = player.choose(view, view.legal_moves)
                answer = pb.MoveAnswer(
                    decision_id=decision.decision_id, move_index=view.legal_moves.index(move)
                )
                yield pb.PlaySeatResponse(move=answer)
            elif event == "match_end":
                return


# The check.


class _Checker:
    def __init__(
        self,
        address: str,
        decision_ms: int,
        only: Collection[str],
        on_item: Callable[[CheckItem], None] | None,
    ) -> None:
        self.address = address
        self.decision_ms = decision_ms
        self.only = [name.strip().lower() for name in only if name.strip()]
        self.on_item = on_item
        self.report = CheckReport(address, decision_ms)

    def selected(self, name: str) -> bool:
        return not self.only or any(wanted in name for wanted in self.only)

    def add(self, item: CheckItem) -> None:
        self.report.items.append(item)
        if self.on_item is not None:
            self.on_item(item)

    async def run(self) -> CheckReport:
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES), ("grpc.enable_retries", 0)]
        async with grpc.aio.insecure_channel(self.address, options=options) as channel:
            health_item = await self.health(channel)
            description = await self.handshake(channel, health_item)
            if self.selected("health"):
                self.add(health_item)
            if description is None:
                return self.report
            if any(self.selected(name) for name in MATCH_ITEMS):
                await self.matches(description)
            stub = rpc.BotServiceStub(channel)
            for situation in SITUATIONS:
                if self.selected(situation.name):
                    self.add(await self.situation(stub, situation, description))
        return self.report

    async def health(self, channel: grpc.aio.Channel) -> CheckItem:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=HANDSHAKE_TIMEOUT_S)
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
        if not isinstance(reply, health_pb2.HealthCheckResponse):
            return CheckItem("health", Status.FAIL, f"the health reply {UNDECODABLE}", "handshake")
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            return CheckItem(
                "health",
                Status.FAIL,
                f"the health service reports {status}; the arena treats the bot as unreachable",
                "handshake",
            )
        return CheckItem("health", Status.PASS, "grpc.health.v1 Check answers SERVING", "handshake")

    async def handshake(self, channel: grpc.aio.Channel, health_item: CheckItem) -> _Description | None:
        stub = rpc.BotServiceStub(channel)
        started = time.monotonic()
        try:
            reply = await stub.Describe(
                pb.DescribeRequest(protocol_version=PROTOCOL_VERSION, arena_version=ARENA_VERSION),
                timeout=HANDSHAKE_TIMEOUT_S,
            )
        except grpc.aio.AioRpcError as error:
            code = error.code()
            health_failed = health_item.status is Status.FAIL
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
        if not isinstance(reply, pb.DescribeResponse):
            reason = f"the Describe reply {UNDECODABLE}; nothing else can be checked"
            self.add(CheckItem("handshake", Status.FAIL, reason, "handshake"))
            return None
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
            shown = ", ".join(map(str, wrong[:8])) + (f" ... ({len(wrong)} values)" if len(wrong) > 8 else "")
            problems.append(f"player_counts holds {shown}: only 4, 6 and 8 exist")
        bad_rulesets = sorted({value for value in reply.rulesets if value not in RULESETS_BY_VALUE})
        if bad_rulesets:
            problems.append(
                f"rulesets holds {', '.join(map(str, bad_rulesets[:8]))}: only RULESET_PAIRS (1) and "
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
        server = grpc.aio.server()
        rpc.add_BotServiceServicer_to_server(_Opponent(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            for (players, ruleset), name in zip(ALL_CONFIGS, MATCH_ITEMS, strict=True):
                if not self.selected(name):
                    continue
                rules = MatchRules(players, ruleset, MATCH_DEAL_CAP)
                if not description.plays(rules):
                    self.add(CheckItem(name, Status.SKIP, description.why_not(players, ruleset), "match"))
                    continue
                self.add(await self.match(name, rules, description, f"127.0.0.1:{port}"))
        finally:
            await server.stop(0)

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
        self, stub: rpc.BotServiceAsyncStub, situation: Situation, description: _Description
    ) -> CheckItem:
        name = situation.name
        config = next(
            (config for config in situation.configs if description.plays(MatchRules(*config))), None
        )
        if config is None:
            names = [_config_name(*config) for config in situation.configs]
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
            reason = await _play_script(stub, script, description.name, self.decision_ms, match_id)
        except _CheckFailedError as error:
            return CheckItem(name, Status.FAIL, str(error), "situation", details)
        return CheckItem(name, Status.PASS, reason, "situation", details)


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
        f"{_plural(len(outcome.results), 'deal')}, {_plural(answers, 'answer')} from seats "
        f"{_seats_text(bot_seats)} (one stream each), "
        f"all legal and in time; ended by {outcome.reason}"
    )


async def check_bot(
    address: str,
    decision_ms: int = 1000,
    only: Collection[str] = (),
    on_item: Callable[[CheckItem], None] | None = None,
) -> CheckReport:
    """Check the bot at `address` (`HOST:PORT`) item by item; `only` keeps the items whose names contain
    one of its strings; `on_item` is called as each item is decided.

    :raises BotUnreachableError: when nothing answers at the address.
    """
    check_address(address)
    return await _Checker(address, decision_ms, only, on_item).run()


# The command line.


def _item_filter(text: str) -> list[str]:
    wanted = [part.strip().lower() for part in text.split(",") if part.strip()]
    for part in wanted:
        if not any(part in name for name in ITEM_NAMES):
            raise argparse.ArgumentTypeError(
                f"no item is named like {part!r}; items: {', '.join(ITEM_NAMES)}"
            )
    return wanted


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `arena check-bot`."""
    parser = commands.add_parser(
        "check-bot",
        help="check that a bot at HOST:PORT follows the protocol, item by item",
        description="Play a bot through every situation of the protocol (handshake, health, whole matches "
        "for each player count and ruleset it plays, scripted situations) and report what passed and what "
        "did not. Exit status: 0 nothing failed, 1 something failed or the bot cannot be reached, "
        "2 bad usage.",
    )
    parser.add_argument("address", type=arguments.address, metavar="HOST:PORT", help="where the bot listens")
    parser.add_argument(
        "--decision-ms",
        type=arguments.decision_ms,
        default=1000,
        help=f"time allowed for each answer, {arguments.decision_ms.range} (default 1000); no bank is given",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--only",
        type=_item_filter,
        action="append",
        metavar="NAME[,NAME...]",
        help="check only the items whose names contain one of these (repeatable), e.g. 'match 4', "
        f"'redouble'; items: {', '.join(ITEM_NAMES)}",
    )
    parser.set_defaults(handler=_check_bot_command)


def _check_bot_command(args: argparse.Namespace) -> int:
    # The match runner logs every fault as a warning; the report says the same, so only errors are logged.
    configure_logging(level="error")
    only = [name for names in args.only or () for name in names]
    printed_note = False

    def show(item: CheckItem) -> None:
        nonlocal printed_note
        if item.kind == "situation" and not printed_note:
            print(f"Note: {NOTE}")
            printed_note = True
        print(item.line(), flush=True)

    if not args.json:
        print(f"Checking the bot at {args.address} (answers within {args.decision_ms} ms)", flush=True)
    try:
        report = asyncio.run(check_bot(args.address, args.decision_ms, only, None if args.json else show))
    except BotUnreachableError as error:
        print(f"arena check-bot: error: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(report.summary())
    return 0 if report.ok else 1
