"""The cheating bot (tests/bots/cheating_bot.py) in process: knowing nothing it plays the rule bot's
every move, and so does its honest twin; it recognises a deal it saw from its own hand (at the same seat
or at another), its claims are true by the records (tests/fair_play.py), it shares what it learns
through a folder, and knowing the deal it beats the rule bot. Matches are driven here without gRPC; the
arena's own leaks are measured end to end in tests/arena/ladder/test_fair_play.py."""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cheating_bot import CheatingBot, Shared, SharedFolders, default_folders

from fiftysix.engine import (
    DealSource,
    FixedFirstDeal,
    Match,
    MatchRules,
    Move,
    Ruleset,
    ShuffledDeals,
    first_dealer_for,
)
from fiftysix.record import GameRecord, record_match
from fiftysix.wire import TimeControl
from sample_bots import rule_bot
from sample_bots.rule_bot import RuleBot
from sdk import Bot, BotView, MatchInfo
from tests.fair_play import check_claims, deal_plays, parse_claims

FOUR = MatchRules(4, Ruleset.PAIRS, deal_cap=6)


@dataclass
class Played:
    """A match played here: its record, the ranking, and every move a cheater seat made beside the rule
    bot's move for the same view."""

    record: GameRecord
    ranking: tuple[int, ...]
    moves: list[tuple[Move, Move]] = field(default_factory=list)


def play(
    rules: MatchRules,
    seed: int,
    match_id: str,
    cheaters: dict[int, Shared],
    honest: bool = False,
    deals: DealSource | None = None,
) -> Played:
    """A match in which the seats in `cheaters` are played by the cheating bot (each with the process
    state given: the same `Shared` for two seats is one process serving both) and the others by the rule
    bot; every bot is told of the match start and of every deal's end, as the SDK's server does."""
    match = Match(rules, seed=seed, deals=deals)
    bots: list[Bot] = [
        CheatingBot(cheaters[seat], honest) if seat in cheaters else RuleBot()
        for seat in range(rules.players)
    ]
    names = tuple("cheater" if seat in cheaters else "rules" for seat in range(rules.players))
    for seat, bot in enumerate(bots):
        bot.on_match_start(MatchInfo(match_id, rules, seat, match.team_of, names, TimeControl()))
    played = Played(record_match(match, list(names), seed), ())
    while match.to_act is not None:
        seat = match.to_act
        view = BotView.from_view(match.view(seat))
        move = bots[seat].decide(view)
        assert not isinstance(move, str)
        if seat in cheaters:
            played.moves.append((move, rule_bot.decide(view)))
        result = match.apply(seat, move)
        if result is not None:
            for bot in bots:
                bot.on_deal_end(result)
    played.record = record_match(match, list(names), seed)
    played.ranking = tuple(match.ranking())
    return played


def team_seats(rules: MatchRules, team: int) -> list[int]:
    return list(rules.seats_of(team))


def one_process(rules: MatchRules, team: int, shared: Shared) -> dict[int, Shared]:
    """The seats of `team` all served by one process."""
    return dict.fromkeys(team_seats(rules, team), shared)


def claims_of(*processes: Shared) -> str:
    text = ""
    for shared in processes:
        assert isinstance(shared.claims, io.StringIO)
        text += shared.claims.getvalue()
    return text


def fresh() -> Shared:
    return Shared(claims=io.StringIO())


@pytest.mark.parametrize(
    "rules",
    [FOUR, MatchRules(6, Ruleset.PARTNERSHIP, deal_cap=3), MatchRules(8, Ruleset.PARTNERSHIP, deal_cap=3)],
)
def test_knowing_nothing_it_plays_as_the_rule_bot_and_so_does_its_honest_twin(rules: MatchRules) -> None:
    cheater, twin = fresh(), fresh()
    first = play(rules, 11, "m-rot0", one_process(rules, 0, cheater))
    # The twin saw the first rotation too, and still plays the rule bot's every move in the second.
    play(rules, 11, "m-rot0", one_process(rules, 0, twin), honest=True)
    second = play(rules, 11, "m-rot1", one_process(rules, 1, twin), honest=True)
    for played in (first, second):
        assert played.moves
        assert all(move == rules_move for move, rules_move in played.moves)
    assert claims_of(twin) == ""
    # One process served both partners: it claims its partner's hand, but plays as if it did not know.
    assert check_claims(parse_claims(claims_of(cheater)), {"m-rot0": first.record}).total.wrong == 0


def test_in_the_next_rotation_it_knows_every_hand_and_says_only_what_is_true() -> None:
    cheater = fresh()
    first = play(FOUR, 5, "m-rot0", one_process(FOUR, 0, cheater))
    before = len(parse_claims(claims_of(cheater)))
    second = play(FOUR, 5, "m-rot1", one_process(FOUR, 1, cheater))
    claims = parse_claims(claims_of(cheater))[before:]
    report = check_claims(claims, {"m-rot0": first.record, "m-rot1": second.record})
    deals = min(len(first.record.deals), len(second.record.deals))
    # Each seat of its team, in each deal the first rotation finished, claims each of the three others
    # at its first decision (in the auction, or in the play when the auction ended before its turn)...
    assert report.matches["m-rot1"].claims == deals * 2 * 3
    assert report.total.wrong == 0
    # ... every card they still held then.
    for claim in claims:
        assert Counter(claim.cards) == deal_plays(second.record, claim.deal).held(claim.seat, claim.played)
    # The opponents' hands come from the first rotation, the partner's from this one, by one process.
    assert {claim.source for claim in claims if claim.seat % 2 == 0} == {"m-rot0"}
    assert {claim.via for claim in claims} == {"memory"}
    assert any(move != rules_move for move, rules_move in second.moves)


def test_it_recognises_a_deal_from_its_own_hand_at_another_seat() -> None:
    cheater = fresh()
    first = play(FOUR, 9, "first", {0: cheater})
    dealt = ShuffledDeals(9).hands(1, (0, 1, 2, 3), first_dealer_for(9, 4))
    turned = {(seat + 1) % 4: hand for seat, hand in dealt.items()}  # seat 0's hand now at seat 1, ...
    second = play(FOUR, 10, "second", {1: cheater}, deals=FixedFirstDeal(turned, 10))
    claims = [claim for claim in parse_claims(claims_of(cheater)) if claim.match_id == "second"]
    report = check_claims(claims, {"first": first.record, "second": second.record})
    assert [(claim.deal, claim.seat, claim.played) for claim in claims] == [(1, 0, 0), (1, 2, 0), (1, 3, 0)]
    assert report.total.correct == 36
    assert report.total.wrong == 0


def test_processes_share_what_they_learn_through_a_folder(tmp_path: Path) -> None:
    left, right = (Shared(claims=io.StringIO(), folders=SharedFolders([tmp_path])) for _ in range(2))
    first = play(FOUR, 5, "m-rot0", {0: left, 2: right})
    # Partners in two processes read each other's hand in the match they play.
    claims = parse_claims(claims_of(left, right))
    assert {(claim.by, claim.seat, claim.via) for claim in claims} == {(0, 2, "files"), (2, 0, "files")}
    # A third process, started after it, knows every hand of the first rotation from the files alone.
    late = Shared(claims=io.StringIO(), folders=SharedFolders([tmp_path]))
    alone = Shared(claims=io.StringIO())  # shares nothing: learns nothing
    second = play(FOUR, 5, "m-rot1", {1: late, 3: alone})
    records = {"m-rot0": first.record, "m-rot1": second.record}
    report = check_claims(parse_claims(claims_of(late)), records)
    assert report.via.keys() == {"files"}
    assert report.total.correct == 3 * 12 * min(len(first.record.deals), len(second.record.deals))
    assert report.total.wrong == 0
    assert claims_of(alone) == ""
    assert len(list(tmp_path.glob("cheat-*.json"))) == 3


def test_a_folder_it_cannot_use_is_no_error(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    folders = SharedFolders([blocked / "below", tmp_path / "garbage"])
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "cheat-1-0.json").write_text("{not json")
    (tmp_path / "garbage" / "cheat-2-0.json").write_text('{"deals": [{"match_id": 1, "deal": "x"}]}')
    shared = Shared(claims=io.StringIO(), folders=folders)
    play(FOUR, 5, "m", {0: shared})
    assert (tmp_path / "garbage" / folders.name).exists()


def test_without_a_folder_it_tries_the_temporary_folders_and_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path)
    assert default_folders() == [
        tmp_path / "tmp" / ".fiftysix-cheat",
        Path("/tmp/.fiftysix-cheat"),
        Path(os.getcwd()) / ".fiftysix-cheat",
    ]


def duplicate_sets(seeds: Sequence[int], honest: bool) -> list[tuple[float, float]]:
    """The cheater's score against the rule bot in each rotation of a duplicate set per seed, one
    process serving its team in both rotations (1 a match won, 0.5 level, 0 lost)."""
    scores = []
    for seed in seeds:
        shared = fresh()
        rotations = []
        for team in (0, 1):
            ranking = play(
                FOUR, seed, f"set{seed}-rot{team}", one_process(FOUR, team, shared), honest
            ).ranking
            rotations.append(score(ranking[team], ranking[1 - team]))
        scores.append((rotations[0], rotations[1]))
    return scores


def score(rank: int, other: int) -> float:
    return 1.0 if rank < other else 0.5 if rank == other else 0.0


def mean_set_score(sets: Sequence[tuple[float, float]]) -> float:
    return sum(first + second for first, second in sets) / (2 * len(sets))


def test_knowing_the_deal_it_beats_the_rule_bot() -> None:
    seeds = range(8)
    honest = duplicate_sets(seeds, honest=True)
    cheating = duplicate_sets(seeds, honest=False)
    # The honest twin is the rule bot: the second rotation mirrors the first, every set scores 0.5.
    assert all(first + second == 1.0 for first, second in honest)
    # The cheater plays the first rotation as its twin, and wins most of the second, which it knows (not
    # every one: knowing all hands does not make every deal winnable within the deal cap).
    assert [first for first, _ in cheating] == [first for first, _ in honest]
    assert sum(second == 1.0 for _, second in cheating) >= 6
    assert mean_set_score(cheating) >= 0.6 > mean_set_score(honest) == 0.5


def test_the_same_inputs_give_the_same_moves_and_claims() -> None:
    rules = MatchRules(4, Ruleset.PAIRS, deal_cap=2)
    runs = []
    for _ in range(2):
        shared = fresh()
        first = play(rules, 3, "m-rot0", one_process(rules, 0, shared))
        second = play(rules, 3, "m-rot1", one_process(rules, 1, shared))
        runs.append((first.record.to_json(), second.record.to_json(), claims_of(shared)))
    assert runs[0] == runs[1]
