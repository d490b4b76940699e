"""The SDK's `MatchInfo` reads a seat's team and partners as the engine's `View` does (one helper,
`TeamSeat`, for both)."""

from __future__ import annotations

import pytest

from fiftysix.engine import Match, MatchRules, Ruleset
from fiftysix.wire import TimeControl
from sdk import MatchInfo


@pytest.mark.parametrize(
    ("players", "ruleset"), [(4, Ruleset.PAIRS), (6, Ruleset.PAIRS), (8, Ruleset.PARTNERSHIP)]
)
def test_match_info_and_view_agree_on_team_and_partners(players: int, ruleset: Ruleset) -> None:
    rules = MatchRules(players, ruleset)
    match = Match(rules, seed=1)
    for seat in range(players):
        info = MatchInfo("m", rules, seat, match.team_of, ("bot",) * players, TimeControl())
        view = match.view(seat)
        assert (info.team, info.partners) == (view.team, view.partners)
        assert seat not in info.partners
        assert all(match.team_of[partner] == info.team for partner in info.partners)
