"""A PettingZoo AEC environment for any arena game (docs/core.md, "Environments"); every info
has the keys of :func:`~.spaces.step_info` (the end's reason in ``infos[agent]["end_reason"]``)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ..episode import EpisodeRecord
from ..game import Game
from ..match import Match
from ..policy import RAISE, IllegalActionPolicy
from . import spaces as sp
from .spaces import agent_name


class ArenaAECEnv(sp.MatchEnv, AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """Agent-environment-cycle view of ``game``."""

    def __init__(
        self,
        game: Game[Any, Any],
        *,
        policy: IllegalActionPolicy = RAISE,
        turn_cap: int | None = None,
        time_cap_s: float | None = None,
        render_mode: str | None = None,
        record_observations: bool = False,
    ):
        super().__init__()
        self.record_observations = record_observations
        self.game = game
        self.policy = policy
        self.turn_cap = turn_cap
        self.time_cap_s = time_cap_s
        self.metadata = {"name": f"arena/{game.spec.id}", "render_modes": sp.RENDER_MODES, "is_parallelizable": False}
        self.render_mode = sp.accept_render_mode(render_mode)
        self.possible_agents, self._index, self._obs_spaces, self._act_spaces = sp.agent_spaces(game)

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_spaces[agent]

    # ------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.episode_seed = self._reset_seed(seed)
        self.match = Match(
            self.game,
            self.episode_seed,
            policy=self.policy,
            turn_cap=self.turn_cap,
            time_cap_s=self.time_cap_s,
            record_observations=self.record_observations,
        )
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: sp.step_info() for a in self.agents}
        self.agent_selection: str | None = None
        to_act = self.match.to_act()
        if to_act is None:  # a game that ends at the deal
            self._end_episode()
        else:
            self.agent_selection = agent_name(to_act)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self._index[agent]
        return sp.observe(self.game, self._live.position, player, live=not self._live.done)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if agent is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() first")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is live: step() needs an action index, not None")
        player = self._index[agent]
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
        outcome = self._live.submit_id(player, action)
        self.infos[agent] = sp.step_info("" if outcome.verdict is None else outcome.verdict.value)
        to_act = self._live.to_act()
        if to_act is None:
            self._end_episode()
        else:
            self.agent_selection = agent_name(to_act)
            self._accumulate_rewards()

    def _end_episode(self) -> None:
        end = self._live.end
        assert end is not None  # called once the match is done
        returns = end.returns if end.returns is not None else [0.0] * self.game.num_players
        for a in self.agents:
            p = self._index[a]
            self.rewards[a] = float(returns[p])
            self.terminations[a] = bool(end.terminated)
            self.truncations[a] = bool(end.truncated)
            self.infos[a] = sp.step_info(self.infos[a]["policy_verdict"], end.reason.value)
        if self.agent_selection is None:
            self.agent_selection = self.agents[0]
        self._accumulate_rewards()
        self._deads_step_first()

    def render(self) -> str | None:
        return self._render(lambda: self.agent_selection, range(self.game.num_players))

    # ------------------------------------------------------------ arena extras
    def legal_actions(self, agent: str) -> tuple[Any, ...]:
        """The typed legal actions of ``agent`` (empty if it is not to act)."""
        return self._live.legal_actions(self._index[agent])

    def structured_observation(self, agent: str) -> dict[str, Any]:
        return self._live.observation(self._index[agent])

    def prompt(self, agent: str) -> Any:
        """The text view for ``agent`` at this point (rebuilt from the state)."""
        return self.game.text_view().prompt(self.game, self._live.position, self._index[agent])

    @property
    def episode_record(self) -> EpisodeRecord:
        return self._live.record


def aec_env(game: Game[Any, Any], **kwargs: Any) -> ArenaAECEnv:
    """The AEC env of ``game`` wrapped in PettingZoo's order-enforcing wrapper."""
    from pettingzoo.utils import wrappers

    # the wrapper forwards every attribute it does not define to the env
    return cast(ArenaAECEnv, wrappers.OrderEnforcingWrapper(ArenaAECEnv(game, **kwargs)))
