"""Playing matches against remote bots: seating, the connection to a bot, the fault policy, the loop."""

from arena.runner.connection import open_channel
from arena.runner.match import run_match
from arena.runner.seating import BotAddress, check_address, seats_for_teams, split_addresses
from arena.runner.settings import MatchOutcome, MatchSettings, new_match_id

__all__ = [
    "BotAddress",
    "MatchOutcome",
    "MatchSettings",
    "check_address",
    "new_match_id",
    "open_channel",
    "run_match",
    "seats_for_teams",
    "split_addresses",
]
