"""What the adapters share: spaces (one mask location: obs["action_mask"]) and the running match."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gymnasium import spaces

from ..game import Game, Position
from ..match import Match
from ..seeding import derive_seed

#: the render modes every adapter gives: ``ansi`` returns the text, ``human`` prints it
RENDER_MODES = ["ansi", "human"]


def step_info(verdict: str = "", end_reason: str = "") -> dict[str, Any]:
    """Infos keep their keys at every step (Tianshou stacks them); ``""``: no verdict, not ended."""
    return {"policy_verdict": verdict, "end_reason": end_reason}


def accept_render_mode(mode: str | None) -> str | None:
    """Another mode than ours is accepted with a warning and renders nothing, as Gymnasium's make
    does (SB3's make_vec_env asks for "rgb_array", PettingZoo's render_test for "human")."""
    if mode is not None and mode not in RENDER_MODES:
        warnings.warn(f"render_mode {mode!r} is not supported ({RENDER_MODES}); render() gives None", stacklevel=3)
    return mode


def agent_name(player: int) -> str:
    return f"player_{player}"


def agent_spaces(
    game: Game[Any, Any],
) -> tuple[list[str], dict[str, int], dict[str, spaces.Dict], dict[str, spaces.Discrete]]:
    """Agent names, name -> seat, and one space object per agent (the same object every call,
    as PettingZoo's tests require)."""
    agents = [agent_name(p) for p in range(game.num_players)]
    obs_space, act_space = observation_space(game), action_space(game)
    return agents, {a: p for p, a in enumerate(agents)}, {a: obs_space for a in agents}, {a: act_space for a in agents}


def observation_space(game: Game[Any, Any]) -> spaces.Dict:
    low, high = game.observation_bounds
    return spaces.Dict(
        {
            "observation": spaces.Box(low=low, high=high, shape=(game.observation_size,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(game.num_actions,), dtype=np.int8),
        }
    )


def action_space(game: Game[Any, Any]) -> spaces.Discrete:
    return spaces.Discrete(game.num_actions)


def observe(game: Game[Any, Any], pos: Position[Any], player: int, *, live: bool = True) -> dict[str, np.ndarray]:
    """The numeric observation with the legality mask (all zeros for a player not to act)."""
    obs = np.asarray(game.encode_observation(pos.state, player), dtype=np.float32)
    mask = game.mask(pos, player) if live else np.zeros(game.num_actions, dtype=np.int8)
    return {"observation": obs, "action_mask": mask}


class MatchEnv:
    """An adapter's running episode: ``match`` (after ``reset()``) and the stream of reset seeds."""

    game: Game[Any, Any]
    render_mode: str | None
    match: Match | None = None
    _last_seed: int | None = None

    def _reset_seed(self, seed: int | None) -> int:
        """``seed``; None continues the stream of the last seeded reset (0 at first)."""
        if seed is None:
            seed = 0 if self._last_seed is None else derive_seed(self._last_seed, "next-reset")
        self._last_seed = int(seed)
        return self._last_seed

    @property
    def _live(self) -> Match:
        """The running episode's match (after ``reset()``)."""
        if self.match is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() first")
        return self.match

    def _render(self, to_act: Callable[[], object], seats: Iterable[int]) -> str | None:
        """``ansi``: the ply, who is to act (or why it ended) and ``seats``' observations; ``human`` prints it."""
        if self.render_mode not in RENDER_MODES:
            return None
        text = "not started"
        if self.match is not None:
            end = self.match.end
            status = f"ended: {end.reason.value}" if end is not None else f"to act: {to_act()}"
            lines = [f"{self.game.spec.id} ply {self.match.ply} ({status})"]
            text = "\n".join(lines + [f"{agent_name(p)}: {self.game.observe(self.match.position, p)}" for p in seats])
        if self.render_mode != "human":
            return text
        print(text)
        return None
