"""A PettingZoo parallel environment for games whose every decision is simultaneous."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo import ParallelEnv

from ..errors import ConfigError
from ..game import Game
from ..match import Match
from ..policy import RAISE, IllegalActionPolicy
from ..spec import TurnStructure
from . import spaces as sp
from .spaces import agent_name


class ArenaParallelEnv(sp.MatchEnv, ParallelEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """All live players act at once each step; moves are applied through commit-then-reveal."""

    def __init__(
        self,
        game: Game[Any, Any],
        *,
        policy: IllegalActionPolicy = RAISE,
        turn_cap: int | None = None,
        render_mode: str | None = None,
    ):
        if game.spec.turn_structure is not TurnStructure.SIMULTANEOUS:
            raise ConfigError(
                f"{game.spec.id} is {game.spec.turn_structure.value}: the parallel env needs a game whose every "
                "decision is simultaneous; use the AEC env (arena_core.env.aec_env) instead"
            )
        if policy.mode == "retry":
            raise ConfigError(
                "the parallel env cannot ask one agent again; use policy 'raise', 'penalize' or 'default' (or the AEC env for retries)"
            )
        self.game = game
        self.policy = policy
        self.turn_cap = turn_cap
        self.render_mode = sp.accept_render_mode(render_mode)
        self.metadata = {"name": f"arena/{game.spec.id}", "render_modes": sp.RENDER_MODES, "is_parallelizable": True}
        self.possible_agents, self._index, self._obs_spaces, self._act_spaces = sp.agent_spaces(game)
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        self.match = Match(self.game, self._reset_seed(seed), policy=self.policy, turn_cap=self.turn_cap)
        self.agents = self.possible_agents[:] if not self.match.done else []
        return self._observations(), {a: sp.step_info() for a in self.agents}

    def _observations(self) -> dict[str, Any]:
        live = not self._live.done
        return {
            a: sp.observe(self.game, self._live.position, p, live=live)
            for a, p in self._index.items()
            if a in self.agents
        }

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        match = self._live
        acting = [agent_name(p) for p in self.game.players_to_act(match.position)]
        missing = [a for a in acting if a not in actions]
        if missing:
            raise ValueError(f"step() needs an action for every live agent; missing {missing}")
        infos: dict[str, dict[str, Any]] = {a: sp.step_info() for a in self.agents}
        for agent in acting:
            if match.done:
                break
            outcome = match.submit_id(self._index[agent], actions[agent])
            if outcome.verdict is not None:
                infos[agent]["policy_verdict"] = outcome.verdict.value
        live = list(self.agents)
        obs = self._observations()
        rewards = {a: 0.0 for a in live}
        terminations = {a: False for a in live}
        truncations = {a: False for a in live}
        end = match.end
        if end is not None:
            returns = end.returns if end.returns is not None else [0.0] * self.game.num_players
            for a in live:
                rewards[a] = float(returns[self._index[a]])
                terminations[a] = bool(end.terminated)
                truncations[a] = bool(end.truncated)
                infos[a]["end_reason"] = end.reason.value
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        return self._render(lambda: list(self.agents), range(self.game.num_players))


def parallel_env(game: Game[Any, Any], **kwargs: Any) -> ArenaParallelEnv:
    return ArenaParallelEnv(game, **kwargs)
