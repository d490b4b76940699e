"""Re-run one seat of a recorded match against a bot ("works locally, fails on the server"): the arena's
side of that seat's stream, held as the runner holds it (handshake, MatchStart with the record's rules,
seat, names and clock, every decision in the arena's own bytes under the decision id the arena sent,
DealEnd, MatchEnd), with every other seat's moves taken from the record. Each decision of the seat is
compared with what the record says happened there: the move it played, or its fault (after a
substituted fault the record's random move is played on, as the arena played it).

A fault is kept with where it happened (`FaultRecord.move_number`: the moves of its deal before it), so
it is expected at the first step of the conversation at that place that fails: the handshake and
MatchStart stand at deal 1, move 0; the DealEnd of a deal at the next deal's move 0; a decision at its
own. A recorded fault the bot does not make there is a difference at the seat's next decision, or at the
end of the record.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Final

from arena.errors import ArenaError
from arena.runner.connection import HandshakeError, handshake, incompatibility, open_channel
from arena.runner.match import ask_decision, open_seat, position
from arena.runner.settings import MatchSettings
from arena.runner.stream import Conversation, Ending, SeatFaultError
from arena.untrusted import safe_text
from fiftysix.engine import EndReason, Match, Move, View
from fiftysix.record import GameRecord
from fiftysix.replay import RecordCursor
from fiftysix.wire import (
    DecisionEncoder,
    FaultCause,
    FaultRecord,
    TimeControl,
    deal_end_message,
    match_end_message,
)

PATIENT_TIMEOUT_S: Final = 365 * 86400.0
"""How long a patient rerun waits for an answer (a bot stopped in a debugger): for ever, in effect."""


class RerunError(ArenaError):
    """A rerun that cannot be made: a seat, deal or move the record does not have, faults or a clock in
    it that do not read, a bot that cannot be reached. Nothing was compared: exit status 2."""

    exit_status: ClassVar[int] = 2


class Verdict(Enum):
    """How one step of the seat compares with the record."""

    SAME = "same"
    """The bot played the recorded move."""
    REPRODUCED = "reproduced"
    """The bot made the recorded fault again (the same cause)."""
    DIFFERS = "differs"
    """Anything else: another move, a fault not recorded, a recorded fault not made, another cause."""


@dataclass(frozen=True, slots=True)
class Compared:
    """One step of the seat compared with the record: a decision (`number` is its move in the match and
    the decision id it was asked with), or another step where the bot failed or was expected to
    (`number` None: the handshake and MatchStart, a DealEnd, a place the record has a fault at)."""

    where: str
    """The step in words: `move 57 (deal 2, move 17)`, `the DealEnd of deal 3`..."""
    number: int | None = None
    recorded: Move | None = None
    """The move the record has here: the one played in the bot's place after a substituted fault; None
    where the record has none (not a decision, or its last, a forfeit)."""
    fault: FaultRecord | None = None
    """The seat's fault the record has here."""
    answer: Move | None = None
    """The move the bot answered."""
    cause: FaultCause | None = None
    """The fault the bot made here instead, with `detail`."""
    detail: str = ""
    view: View | None = None
    """The seat's view at a decision where the bot differs (what it was sent there), and `legal`, the
    decision's legal moves."""
    legal: Sequence[Move] = ()

    @property
    def verdict(self) -> Verdict:
        """Whether the bot did here what the record says."""
        if self.fault is not None:
            return Verdict.REPRODUCED if self.cause is self.fault.cause else Verdict.DIFFERS
        if self.cause is None and self.answer == self.recorded:
            return Verdict.SAME
        return Verdict.DIFFERS


class Stop(Enum):
    """Why a rerun stopped."""

    END = "end"
    """Every move of the record was played (or the seat's recorded forfeit reproduced)."""
    UNTIL = "until"
    """The move given to stop at was reached."""
    DIFFERENCE = "difference"
    """The bot did not do what the record says (the last `Compared`)."""


@dataclass
class RerunOutcome:
    """How a rerun went: every step compared, why it stopped, how the bot ended its stream after MatchEnd
    (None when it was not sent one)."""

    compared: list[Compared] = field(default_factory=list)
    stop: Stop = Stop.END
    ending: tuple[Ending, str] | None = None

    @property
    def difference(self) -> Compared | None:
        """The step the rerun stopped at, when it stopped at a difference."""
        return self.compared[-1] if self.stop is Stop.DIFFERENCE else None


@dataclass(frozen=True, slots=True)
class RerunPlan:
    """What a rerun plays: the record, the seat, the deal its bot is first asked in and the move it stops
    after, and what the record holds beside the game (the match id, the clock, the faults)."""

    record: GameRecord
    seat: int
    from_deal: int
    until_move: int | None
    match_id: str
    time_control: TimeControl
    faults: tuple[FaultRecord, ...]

    @classmethod
    def of(
        cls, record: GameRecord, seat: int, from_deal: int = 1, until_move: int | None = None
    ) -> RerunPlan:
        """The plan for a record that `replay` accepted. The bot is told the record's match id, or
        `rerun` for a record that has none (one saved by `arena play`).

        :raises RerunError: for a seat, deal or move the record does not have, or faults or a clock in
            it that do not read.
        """
        rules, deals = record.rules, len(record.deals)
        if not 0 <= seat < rules.players:
            raise RerunError(
                f"no seat {seat}: the record is of a {rules.players}-player match "
                f"(seats 0 to {rules.players - 1})"
            )
        if not 1 <= from_deal <= deals:
            raise RerunError(f"no deal {from_deal} to start from: the record's deals are 1 to {deals}")
        if until_move is not None:
            moves, first = moves_before(record, deals + 1), moves_before(record, from_deal) + 1
            if until_move > moves:
                raise RerunError(f"no move {until_move} to stop at: the record's moves are 1 to {moves}")
            if until_move < first:
                raise RerunError(
                    f"move {until_move} comes before deal {from_deal}, which starts at move {first}"
                )
        extra = record.extra
        match_id = extra.get("match_id")
        try:
            faults = tuple(FaultRecord.from_json(fault) for fault in _list(extra.get("faults")))
            clock = extra.get("time_control")
            time_control = (
                TimeControl(_whole(clock, "decision_ms"), _whole(clock, "bank_ms"))
                if clock is not None
                else TimeControl()
            )
        except ValueError as error:
            raise RerunError(f"the record's faults or clock do not read: {safe_text(error, 200)}") from None
        return cls(
            record,
            seat,
            from_deal,
            until_move,
            match_id if isinstance(match_id, str) and match_id else "rerun",
            time_control,
            faults,
        )


def moves_before(record: GameRecord, deal: int) -> int:
    """How many moves the record holds before deal `deal` (all of them for one past its last)."""
    return sum(len(earlier.calls) + len(earlier.cards) for earlier in record.deals[: deal - 1])


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("'faults' must be a list")
    return value


def _whole(clock: Any, key: str) -> int:
    value = clock.get(key) if isinstance(clock, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"'time_control' must hold {key!r} as a whole number")
    return value


def _at(fault: FaultRecord, place: tuple[int, int]) -> bool:
    """Whether `fault` happened at `place` (a deal and the moves of it made); a fault kept without its
    move stands anywhere in its deal."""
    return fault.deal_number == place[0] and fault.move_number in (None, place[1])


def _before(fault: FaultRecord, place: tuple[int, int]) -> bool:
    if fault.move_number is None:
        return fault.deal_number < place[0]
    return (fault.deal_number, fault.move_number) < place


def fault_place(fault: FaultRecord) -> str:
    """Where a recorded fault happened, in words."""
    if fault.move_number is None:
        return f"deal {fault.deal_number}"
    return f"deal {fault.deal_number}, before its move {fault.move_number + 1}"


def decision_place(number: int, deal: int, move: int) -> str:
    """A decision in words: `move 57 (deal 2, move 17)`: its move in the match (the decision id), then in
    its deal."""
    return f"move {number} (deal {deal}, move {move})"


class _Rerun:
    def __init__(
        self, plan: RerunPlan, address: str, patient: bool, on_compared: Callable[[Compared], None]
    ) -> None:
        self.plan = plan
        self.address = address
        self.patient = patient
        self.on_compared = on_compared
        record = plan.record
        self.settings = MatchSettings(record.rules, record.seed or 0, plan.time_control, plan.match_id)
        self.cursor = RecordCursor(record)
        self.encoder = DecisionEncoder(self.cursor.match)
        seat = plan.seat
        self.pending = [f for f in plan.faults if f.seat == seat and f.deal_number >= plan.from_deal]
        """The seat's recorded faults not met yet, in the order they happened."""
        self.forfeited = False
        """The seat's recorded forfeit was reproduced: the arena closed its stream without MatchEnd."""
        self.bank_ms = float(plan.time_control.bank_ms)
        self.outcome = RerunOutcome()

    @property
    def match(self) -> Match:
        return self.cursor.match

    def compare(self, compared: Compared) -> bool:
        """Keep and show one step compared; whether the rerun goes on after it."""
        if compared.fault is not None and compared.fault in self.pending:
            self.pending.remove(compared.fault)
        self.outcome.compared.append(compared)
        self.on_compared(compared)
        if compared.verdict is Verdict.DIFFERS:
            self.outcome.stop = Stop.DIFFERENCE
            return False
        if compared.fault is not None and not compared.fault.substituted:
            self.forfeited = True
            return False
        return True

    def expected_at(self, place: tuple[int, int]) -> FaultRecord | None:
        return next((fault for fault in self.pending if _at(fault, place)), None)

    def failed(self, where: str, place: tuple[int, int], error: SeatFaultError | HandshakeError) -> None:
        """The bot failed a step that is not a decision: compared with the fault recorded there."""
        self.compare(
            Compared(where, fault=self.expected_at(place), cause=error.cause, detail=safe_text(error.detail))
        )

    def overdue(self, place: tuple[int, int]) -> bool:
        """Whether a recorded fault before `place` was not made (a difference, compared and shown)."""
        missed = next((fault for fault in self.pending if _before(fault, place)), None)
        if missed is None:
            return False
        self.compare(Compared(fault_place(missed), fault=missed))
        return True

    async def run(self) -> RerunOutcome:
        channel = open_channel(self.address)
        try:
            try:
                reply = await handshake(channel, self.address, self.settings.connect_timeout_s)
            except HandshakeError as error:
                if error.cause is FaultCause.UNREACHABLE:
                    raise RerunError(error.detail) from None
                self.failed("the handshake", (1, 0), error)
                return self.outcome
            problem = incompatibility(reply, self.address, self.settings.rules)
            if problem is not None:
                self.failed("the handshake", (1, 0), HandshakeError(*problem))
                return self.outcome
            conversation = Conversation(self.plan.seat, channel, self.settings.send_timeout_s)
            try:
                await self.converse(conversation)
            finally:
                conversation.close()
                await asyncio.gather(conversation.reader, return_exceptions=True)
        finally:
            await channel.close(grace=None)
        return self.outcome

    async def converse(self, conversation: Conversation) -> None:
        plan, cursor = self.plan, self.cursor
        try:
            await open_seat(conversation, self.settings, plan.record.seats)
        except SeatFaultError as error:
            self.failed("MatchStart", (1, 0), error)
            return
        while (step := cursor.next_move) is not None:
            if plan.until_move is not None and step.number > plan.until_move:
                self.outcome.stop = Stop.UNTIL
                return
            if step.seat == plan.seat and step.deal >= plan.from_deal:
                place = (step.deal, step.move - 1)
                if self.overdue(place):
                    return
                where = decision_place(step.number, step.deal, step.move)
                compared = await self.decide(conversation, step.number, where, place, step.played)
                if not self.compare(compared):
                    return
            result = cursor.advance()
            if result is not None:
                try:
                    await conversation.send(deal_end_message(result))
                except SeatFaultError as error:
                    self.failed(f"the DealEnd of deal {result.number}", position(self.match), error)
                    return
        await self.finish(conversation)

    async def finish(self, conversation: Conversation) -> None:
        """The end of the record: the seat's forfeit if the record ends with one, faults not made, then
        MatchEnd as the arena sent it."""
        plan, match = self.plan, self.match
        if plan.until_move is not None:  # the last move, which it may be, was played
            self.outcome.stop = Stop.UNTIL
            return
        place = position(match)
        if not match.is_over and match.deal.to_act == plan.seat and match.deal_number >= plan.from_deal:
            fault = self.expected_at(place)
            if fault is not None:
                number = moves_before(plan.record, len(plan.record.deals) + 1) + 1
                where = decision_place(number, place[0], place[1] + 1)
                if not self.compare(await self.decide(conversation, number, where, place, None)):
                    return
        if self.pending:
            missed = self.pending[0]
            self.compare(Compared(fault_place(missed), fault=missed))
            return
        if self.forfeited or plan.record.result is None:
            return
        result = plan.record.result
        try:
            reason = EndReason(str(result.get("reason")))
            ranking = [int(rank) for rank in result.get("ranking", ())]
        except (TypeError, ValueError):
            return  # a result that does not read: replay checks only those the rules decide
        message = match_end_message(reason, ranking, match.tables, plan.faults)
        self.outcome.ending = await conversation.end(message, self.settings.send_timeout_s, lost=False)

    async def decide(
        self,
        conversation: Conversation,
        number: int,
        where: str,
        place: tuple[int, int],
        recorded: Move | None,
    ) -> Compared:
        """Ask the seat's decision `number` and say what the bot did, beside what the record has there:
        the move `recorded`, and the fault if one is."""
        match, clock = self.match, self.plan.time_control
        legal = match.legal_moves()
        bank = self.bank_ms
        request = self.encoder.decision(number, legal, clock.decision_ms, int(bank))
        timeout = PATIENT_TIMEOUT_S if self.patient else (clock.decision_ms + bank) / 1000
        fault = self.expected_at(place)
        answer, cause, detail, waited = await ask_decision(conversation, request, number, legal, timeout)
        self.bank_ms = clock.bank_left(bank, waited)
        compared = Compared(
            where, number, recorded, fault, answer, cause=cause, detail=safe_text(detail), legal=legal
        )
        if compared.verdict is Verdict.DIFFERS:  # the view is shown only there (the match has not moved)
            compared = dataclasses.replace(compared, view=match.view(self.plan.seat))
        return compared


async def rerun(
    plan: RerunPlan, address: str, on_compared: Callable[[Compared], None], patient: bool = False
) -> RerunOutcome:
    """Re-run the plan's seat against the bot at `address`; `on_compared` sees each step compared as it
    comes. `patient` waits for every answer as long as it takes (a recorded timeout is then never
    reproduced).

    :raises RerunError: when nothing answers at `address`.
    """
    return await _Rerun(plan, address, patient, on_compared).run()
