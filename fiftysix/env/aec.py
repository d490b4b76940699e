"""56 as a PettingZoo AEC environment: one agent per seat, one move per step, over the rules engine.

The engine decides everything (whose turn, what is legal, the deal's result); this module only maps
moves to action indices (`actions.py`), views to arrays (`observations.py`), and deal results to
rewards. An illegal action raises the engine's `IllegalMoveError`: what to do about it is a wrapper's
choice (PettingZoo's `TerminateIllegalWrapper`, as `env()` applies), not the environment's.
"""

from __future__ import annotations

import random
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from fiftysix.engine import EndReason, Match, MatchRules, Ruleset
from fiftysix.env.actions import ACTION_COUNT, move_of
from fiftysix.env.observations import ObservationLayout
from fiftysix.pretty import describe_deal

Observation = dict[str, npt.NDArray[Any]]

NAME: Final = "fiftysix_v0"


def agent_name(seat: int) -> str:
    """The agent that plays `seat`."""
    return f"seat_{seat}"


class FiftySixEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """A match of 56 for 4, 6 or 8 agents (`seat_0`...), in the `pairs` or `partnership` ruleset.

    Each agent observes a dict: `observation`, its view as a float32 vector (`layout` names the parts),
    and `action_mask`, 1 for each legal action. Rewards: at the end of each deal every agent gets its
    team's change in tables; at the end of the match, also `ranking_reward` times its team's place
    scaled from +1 (first) to -1 (last), and `infos[agent]["ranking"]` holds every team's rank. A seat
    whose team ran out of tables stays among the agents, never selected, until the match ends. A match
    stopped by `deal_cap` is truncated rather than terminated.
    """

    metadata: Final[dict[str, Any]] = {
        "name": NAME,
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 4,
        ruleset: Ruleset | str = Ruleset.PAIRS,
        deal_cap: int | None = None,
        ranking_reward: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if isinstance(ruleset, str):
            ruleset = Ruleset.parse(ruleset)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode is one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.rules = MatchRules(players, ruleset, deal_cap)
        self.ranking_reward = ranking_reward
        self.render_mode = render_mode
        self.layout = ObservationLayout(self.rules)
        self.possible_agents = [agent_name(seat) for seat in range(players)]
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, self.layout.high, (self.layout.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (ACTION_COUNT,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {agent: spaces.Discrete(ACTION_COUNT) for agent in self.possible_agents}
        self.match = Match(self.rules)
        self._rendered: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """Every agent's observation space is the same dict of two boxes."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """Every agent's action space is `Discrete(ACTION_COUNT)`: every card and every call."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new match; the same seed deals the same cards (no seed: a random one)."""
        if seed is None:
            seed = random.SystemRandom().randrange(2**32)
        self.match = Match(self.rules, seed=seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._rendered = []
        self.agent_selection = self._agent_to_act()

    def _agent_to_act(self) -> str:
        to_act = self.match.to_act
        return agent_name(to_act if to_act is not None else 0)

    def observe(self, agent: str) -> Observation:
        """What `agent` knows now: its seat's view as a vector, and its legal actions."""
        view = self.match.view(self._seat_of[agent])
        return {"observation": self.layout.observation(view), "action_mask": self.layout.action_mask(view)}

    def step(self, action: int | None) -> None:
        """The selected agent's move, as an action index (None once it is terminated or truncated).

        :raises IllegalMoveError: when the action is not legal now (the match is unchanged).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: None is an action only once the match is over")
        match = self.match
        tables_before = tuple(match.tables)
        result = match.apply(self._seat_of[agent], move_of(int(action)))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if result is not None:
            for other in self.agents:
                team = self.rules.team_of(self._seat_of[other])
                self.rewards[other] = float(result.tables[team] - tables_before[team])
            if self.render_mode is not None:
                self._rendered.extend(describe_deal(result, self.rules, show_hands=False))
        if match.is_over:
            self._finish()
        self.agent_selection = self._agent_to_act()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self) -> None:
        ranking = self.match.ranking()
        teams = self.rules.team_count
        truncated = self.match.end_reason is EndReason.DEAL_CAP
        for agent in self.agents:
            rank = ranking[self.rules.team_of(self._seat_of[agent])]
            self.rewards[agent] += self.ranking_reward * (1 - 2 * (rank - 1) / (teams - 1))
            self.infos[agent] = {"ranking": ranking, "tables": tuple(self.match.tables)}
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated

    def render(self) -> str | None:
        """The deals finished since the last render, as text (printed in `human` mode)."""
        text = "\n".join(self._rendered)
        self._rendered = []
        if self.render_mode == "human":
            if text:
                print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def env(**settings: Any) -> AECEnv:
    """The environment with PettingZoo's usual wrappers: an illegal action ends the match for the agent
    that made it (with a penalty) instead of raising, and actions are checked to be in the space."""
    wrapped: AECEnv = FiftySixEnv(**settings)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
