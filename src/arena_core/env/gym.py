"""A Gymnasium single-agent view: one seat plays against fixed players; legality and the
illegal-action policy (:data:`GYM_POLICY`): docs/core.md, "Environments"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from ..errors import ConfigError
from ..game import Game
from ..match import Match
from ..players import Decision, Player, begin_episodes, end_episodes
from ..policy import IllegalActionPolicy
from ..runner import step_player
from . import spaces as sp

#: the Gym view's default illegal-action policy: play the game's default action instead
GYM_POLICY = IllegalActionPolicy(mode="default")


class UniformRandomOpponent:
    """The default opponent: a uniformly random legal action, drawn from (episode seed, seat, ply)."""

    name = "uniform_random"

    def act(self, decision: Decision) -> Any:
        legal = decision.legal_actions
        return legal[int(decision.rng("uniform_random").integers(len(legal)))]


class ArenaGymEnv(sp.MatchEnv, gym.Env):
    """Seat ``seat`` is the learner; ``opponents`` fill the other seats in order (by default
    :class:`UniformRandomOpponent` in each). The reward is the learner's return at the end (0
    before, and 0 when truncated)."""

    metadata = {"render_modes": sp.RENDER_MODES}

    def __init__(
        self,
        game: Game[Any, Any],
        opponents: Sequence[Player] | None = None,
        *,
        seat: int = 0,
        policy: IllegalActionPolicy = GYM_POLICY,
        turn_cap: int | None = None,
        render_mode: str | None = None,
    ):
        self.render_mode = sp.accept_render_mode(render_mode)
        if opponents is None:
            opponents = [UniformRandomOpponent() for _ in range(game.num_players - 1)]
        if len(opponents) != game.num_players - 1:
            raise ConfigError(
                f"{game.spec.id} with {game.num_players} players needs {game.num_players - 1} opponents, got {len(opponents)}"
            )
        if not 0 <= seat < game.num_players:
            raise ConfigError(f"seat must be in 0..{game.num_players - 1}, got {seat}")
        self.game = game
        self.seat = seat
        self.policy = policy
        self.turn_cap = turn_cap
        self._seats: list[Player | None] = list(opponents[:seat]) + [None] + list(opponents[seat:])
        self.observation_space = sp.observation_space(game)
        self.action_space = sp.action_space(game)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        seed = self._reset_seed(seed)
        self.match = Match(self.game, seed, policy=self.policy, turn_cap=self.turn_cap)
        begin_episodes(self._seats, self.game, seed)
        self._advance()
        if self.match.done:  # the others ended it before the learner's first turn
            end_episodes(self._seats, self.match)
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self.match is None or self.match.done:
            raise RuntimeError("call reset() before step(): the episode has ended")
        outcome = self.match.submit_id(self.seat, action)
        self._advance()
        if self.match.done:
            end_episodes(self._seats, self.match)
        end = self.match.end
        reward = float(end.returns[self.seat]) if end is not None and end.returns is not None else 0.0
        info = self._info("" if outcome.verdict is None else outcome.verdict.value)
        return self._obs(), reward, bool(end and end.terminated), bool(end and end.truncated), info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a boolean vector over ``range(num_actions)`` (all
        False once the episode has ended); the interface of sb3-contrib's maskable algorithms."""
        if self.match is None or self.match.done:
            return np.zeros(self.game.num_actions, dtype=bool)
        return self.game.mask(self.match.position, self.seat).astype(bool)

    def render(self) -> str | None:
        """``ansi``: the learner's observation and whose turn it is, as text (``human`` prints it)."""
        return self._render(lambda: f"player_{self._live.to_act()}", [self.seat])

    def _advance(self) -> None:
        match = self._live
        while (seat := match.to_act()) is not None and seat != self.seat:
            player = self._seats[seat]
            assert player is not None  # only the learner's seat is empty
            step_player(match, seat, player)

    def _obs(self) -> dict[str, np.ndarray]:
        return sp.observe(self.game, self._live.position, self.seat, live=not self._live.done)

    def _info(self, verdict: str = "") -> dict[str, Any]:
        """The same keys at reset and every step (``""``: no verdict, not ended)."""
        end = self._live.end
        return {
            "legal_actions": self._live.legal_actions(self.seat),
            "action_mask": self.action_masks().astype(np.int8),
            "illegal_action": verdict != "",
            **sp.step_info(verdict, "" if end is None else end.reason.value),
        }
