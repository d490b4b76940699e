"""check-bot's own item `structured moves agree with the notation`: it passes on the arena's requests,
names whatever a broken request gets wrong, and fails the item (not the bot's items) when the checker's
requests are broken."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

import pytest

from arena.check import Status, check_bot
from arena.check.agreement import ITEM, disagreement
from fiftysix.engine import Match, MatchRules, Move, parse_move
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.wire import DecisionEncoder, decision_request
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start


def _match_after(moves: str, players: int = 4) -> Match:
    """A match after `moves` (calls, then cards) from seat 0's first call."""
    match = Match(MatchRules(players), seed=4, first_dealer=players - 1)
    for text in moves.split():
        match.apply(match.deal.to_act, parse_move(text, match.deal.phase))
    return match


def _request(match: Match) -> pb.PlaySeatRequest:
    return decision_request(match, 7, 1000, 0)


def _auction() -> Match:
    return _match_after("28S")


def _play() -> Match:
    # 28S by seat 0 (spades trumps), everybody passes, then two cards on the table.
    first = _match_after("28S pass pass pass").legal_moves()[0]
    second = _match_after(f"28S pass pass pass {first}").legal_moves()[-1]
    return _match_after(f"28S pass pass pass {first} {second}")


def _trick_taken() -> Match:
    # 28S by seat 0, everybody passes, a whole trick played (each seat its first legal card), one more card.
    moves = "28S pass pass pass"
    for _ in range(5):
        moves += f" {_match_after(moves).legal_moves()[0]}"
    return _match_after(moves)


def _swap_first_two(decision: pb.DecisionRequest) -> None:
    first, second = pb.Move(), pb.Move()
    first.CopyFrom(decision.moves[0])
    second.CopyFrom(decision.moves[1])
    decision.moves[0].CopyFrom(second)
    decision.moves[1].CopyFrom(first)


def _last_plus_bid(decision: pb.DecisionRequest) -> pb.Call:
    return next(move.call for move in reversed(decision.moves) if move.call.form == pb.BID_FORM_PLUS_SUIT)


CORRUPTIONS: list[tuple[str, Callable[[], Match], Callable[[pb.DecisionRequest], object], str]] = [
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
    (
        "a hand card missing",
        _auction,
        lambda d: d.view.hand_cards.pop(),
        "11 hand_cards for 12 cards in hand",
    ),
    (
        "a hand card's rank",
        _auction,
        lambda d: setattr(d.view.hand_cards[0], "rank", pb.RANK_UNSPECIFIED),
        "hand_cards[0] beside",
    ),
    (
        "a played card's suit",
        _play,
        lambda d: setattr(d.view.trick[1].played_card, "suit", d.view.trick[1].played_card.suit % 4 + 1),
        "trick[1].played_card is",
    ),
    (
        "no winning card on the table",
        _play,
        lambda d: d.view.ClearField("trick_winning_card"),
        "trick_winning_card is present without a card on the table, or absent with one",
    ),
    (
        "a taken trick's winning card",
        _trick_taken,
        lambda d: setattr(d.view.tricks[0].winning_card, "points", 7),
        "tricks[0].winning_card",
    ),
]


@pytest.mark.parametrize("match_of", [_auction, _play, _trick_taken, lambda: _match_after("28S double")])
def test_the_arena_requests_agree(match_of: Callable[[], Match]) -> None:
    match = match_of()
    assert disagreement(_request(match), match.view(match.deal.to_act)) is None


@pytest.mark.parametrize(
    ("match_of", "corrupt", "expected"),
    [corruption[1:] for corruption in CORRUPTIONS],
    ids=[corruption[0] for corruption in CORRUPTIONS],
)
def test_a_broken_request_is_named(
    match_of: Callable[[], Match], corrupt: Callable[[pb.DecisionRequest], object], expected: str
) -> None:
    match = match_of()
    request = _request(match)
    corrupt(request.decision)
    problem = disagreement(request, match.view(match.deal.to_act))
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
    encode = DecisionEncoder.decision

    def trumpless(
        encoder: DecisionEncoder, decision_id: int, legal: Sequence[Move], decision_ms: int, bank_ms: int
    ) -> bytes:
        request = pb.PlaySeatRequest.FromString(encode(encoder, decision_id, legal, decision_ms, bank_ms))
        request.decision.view.ClearField("trump")
        return request.SerializeToString()

    monkeypatch.setattr(DecisionEncoder, "decision", trumpless)
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
