"""Research: 56 as a PettingZoo AEC environment (docs/research.md). Needs numpy and pettingzoo, the
`research` extra; the rest of `fiftysix` does not.

`env()` is the environment with PettingZoo's usual wrappers, `FiftySixEnv` the bare one; `ACTIONS`
maps action indices to moves, `ObservationLayout` names the parts of an observation.
"""

from fiftysix.env.actions import (
    ACTION_COUNT,
    ACTIONS,
    ALL_CALLS,
    CALL_COUNT,
    CARD_COUNT,
    action_of,
    move_of,
)
from fiftysix.env.aec import NAME, FiftySixEnv, agent_name, env
from fiftysix.env.observations import ObservationLayout

__all__ = [
    "ACTIONS",
    "ACTION_COUNT",
    "ALL_CALLS",
    "CALL_COUNT",
    "CARD_COUNT",
    "NAME",
    "FiftySixEnv",
    "ObservationLayout",
    "action_of",
    "agent_name",
    "env",
    "move_of",
]
