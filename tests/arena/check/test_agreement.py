"""check-bot's own item `structured moves agree with the notation`: it passes on the arena's requests,
names whatever a broken request gets wrong, and fails the item (not the bot's items) when the checker's
requests are broken."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

import arena.check.conversation
from arena.check import Status, check_bot
from arena.check.agreement import ITEM, disagreement
from fiftysix.engine import Match, MatchRules, Move, View, parse_move
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import decision_message
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


def _view_after(moves: str, players: int = 4) -> View:
    """The view of the seat to act after `moves` (calls, then cards) from seat 0's first call."""
    match = Match(MatchRules(players), seed=4, first_dealer=players - 1)
    for text in moves.split():
        match.apply(match.deal.to_act, parse_move(text, match.deal.phase))
    return match.view(match.deal.to_act)


def _request(view: View) -> pb.PlaySeatRequest:
    return decision_message(7, view, view.legal_moves, 1000, 0)


def _auction() -> View:
    return _view_after("28S")


def _play() -> View:
    # 28S by seat 0 (spades trumps), everybody passes, then two cards on the table.
    view = _view_after("28S pass pass pass")
    first = view.legal_moves[0]
    second_view = _view_after(f"28S pass pass pass {first}")
    return _view_after(f"28S pass pass pass {first} {second_view.legal_moves[-1]}")


def _swap_first_two(decision: pb.DecisionRequest) -> None:
    first, second = pb.Move(), pb.Move()
    first.CopyFrom(decision.moves[0])
    second.CopyFrom(decision.moves[1])
    decision.moves[0].CopyFrom(second)
    decision.moves[1].CopyFrom(first)


def _last_plus_bid(decision: pb.DecisionRequest) -> pb.Call:
    return next(move.call for move in reversed(decision.moves) if move.call.form == pb.BID_FORM_PLUS_SUIT)


CORRUPTIONS: list[tuple[str, Callable[[], View], Callable[[pb.DecisionRequest], object], str]] = [
    ("a move missing", _auction, lambda d: d.moves.pop(), "394 structured moves for 395 legal moves"),
    ("two moves swapped", _auction, _swap_first_two, "moves[0] is double but legal_moves[0] is 'pass'"),
    (
        "a plus bid's contract number",
        _auction,
        lambda d: setattr(_last_plus_bid(d), "contract_number", 55),
        "moves[394] (+28C over 28) makes contract_number 55, not 56",
    ),
    ("a call that is none", _auction, lambda d: d.moves[0].call.ClearField("kind"), "moves[0] beside 'pass'"),
    ("a card's points", _play, lambda d: setattr(d.moves[0].card, "points", 9), "has 9 points"),
    (
        "the led suit",
        _play,
        lambda d: setattr(d.view, "led_suit", pb.SUIT_UNSPECIFIED),
        "led_suit is SUIT_UNSPECIFIED, the engine says SUIT_",
    ),
    (
        "the trump",
        _play,
        lambda d: setattr(d.view, "trump", pb.DENOMINATION_NO_TRUMPS),
        "trump is DENOMINATION_NO_TRUMPS, the engine says DENOMINATION_SPADES",
    ),
    (
        "a trump in the auction",
        _auction,
        lambda d: setattr(d.view, "trump", 1),
        "the engine says DENOMINATION_UNSPECIFIED",
    ),
    (
        "no trick winner",
        _play,
        lambda d: d.view.ClearField("trick_winner"),
        "trick_winner is absent, the engine",
    ),
    (
        "a trick winner with no card on the table",
        _auction,
        lambda d: setattr(d.view, "trick_winner", 0),
        "trick_winner is seat 0, the engine says absent",
    ),
]


@pytest.mark.parametrize("view_of", [_auction, _play, lambda: _view_after("28S double")])
def test_the_arena_requests_agree(view_of: Callable[[], View]) -> None:
    view = view_of()
    assert disagreement(_request(view), view) is None


@pytest.mark.parametrize(
    ("view_of", "corrupt", "expected"),
    [corruption[1:] for corruption in CORRUPTIONS],
    ids=[corruption[0] for corruption in CORRUPTIONS],
)
def test_a_broken_request_is_named(
    view_of: Callable[[], View], corrupt: Callable[[pb.DecisionRequest], object], expected: str
) -> None:
    view = view_of()
    request = _request(view)
    corrupt(request.decision)
    problem = disagreement(request, view)
    assert problem is not None
    assert expected in problem


@pytest.fixture
def random_bot() -> Iterator[BotServer]:
    server = start(RandomBot)
    yield server
    server.stop(0)


def test_the_item_passes_on_the_checker_requests(random_bot: BotServer) -> None:
    report = asyncio.run(
        check_bot(f"127.0.0.1:{random_bot.port}", only=["redouble window", "last trick", ITEM])
    )
    verdicts = {item.name: item for item in report.items}
    assert [verdicts[name].status for name in ("redouble window", "last trick", ITEM)] == [Status.PASS] * 3
    assert " DecisionRequests of the scripted situations (" in verdicts[ITEM].reason


def test_the_item_is_skipped_when_no_situation_ran(random_bot: BotServer) -> None:
    report = asyncio.run(check_bot(f"127.0.0.1:{random_bot.port}", only=["handshake", ITEM]))
    assert [(item.name, item.status) for item in report.items] == [
        ("handshake", Status.PASS),
        (ITEM, Status.SKIP),
    ]


def test_broken_requests_fail_the_item_and_not_the_bot(
    random_bot: BotServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def trumpless(
        decision_id: int, view: View, legal: tuple[Move, ...], decision_ms: int, bank_ms: int
    ) -> pb.PlaySeatRequest:
        request = decision_message(decision_id, view, legal, decision_ms, bank_ms)
        request.decision.view.ClearField("trump")
        return request

    monkeypatch.setattr(arena.check.conversation, "decision_message", trumpless)
    report = asyncio.run(check_bot(f"127.0.0.1:{random_bot.port}", only=["last trick", ITEM]))
    verdicts = {item.name: item for item in report.items}
    assert verdicts["last trick"].status is Status.PASS
    assert verdicts[ITEM].status is Status.FAIL
    assert verdicts[ITEM].reason.startswith("decision ")
    assert (
        "trump is DENOMINATION_UNSPECIFIED, the engine says DENOMINATION_NO_TRUMPS" in verdicts[ITEM].reason
    )
    assert verdicts[ITEM].reason.endswith("(a bug in the arena, not in the bot: please report it)")
    assert not report.ok
