"""Any arena game as a TextArena-compatible env, so TextArena agents can play our games.

    env = ArenaTextArenaEnv("megagem")
    env.reset(num_players=3, seed=7)
    done = False
    while not done:
        pid, observation = env.get_observation()
        done, info = env.step(agents[pid](observation))
    rewards, game_info = env.close()

The surface is TextArena's (``reset(num_players, seed)``, ``get_observation() -> (pid, str)``,
``step(text) -> (done, info)``, ``close() -> (rewards, game_info)``) without its defects:
the observation is rebuilt from the game state on every call (reading it twice gives the same
text; nothing carries over between episodes), seeding never touches the global ``random``,
illegal text goes through an arena :class:`~arena_core.policy.IllegalActionPolicy` (by default
TextArena's own rule: one retry, then the offender loses) and is reported in ``info``, and a
harness cut-off is reported as truncation in ``game_info``, never as a draw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from arena_core.episode import EndReason
from arena_core.errors import ConfigError, GameOverError
from arena_core.faults import FaultKind
from arena_core.game import Game
from arena_core.match import Match
from arena_core.policy import IllegalActionPolicy
from arena_core.spec import GameParams

#: TextArena's default: the first invalid move is re-prompted, the second loses
TEXTARENA_POLICY = IllegalActionPolicy(mode="retry", max_retries=1, after_retries="forfeit")

_BRACKET = re.compile(r"\[([^\[\]]{1,300})\]")


def _ta_env_base() -> Any:
    try:
        from .bridge import _ta

        return _ta().Env
    except ImportError:  # textarena missing: the wrapper still works, it just is not a ta.Env subclass
        return object


class ArenaTextArenaEnv(_ta_env_base()):  # type: ignore[misc]  # the base is TextArena's Env (untyped) or object
    """An arena game behind TextArena's env API (see the module docstring)."""

    def __init__(
        self,
        game: Game[Any, Any] | str,
        params: Mapping[str, Any] | None = None,
        *,
        policy: IllegalActionPolicy = TEXTARENA_POLICY,
        turn_cap: int | None = None,
    ):
        if isinstance(game, str):
            from arena_core.registry import game_class

            self._game_cls: type[Game[Any, Any]] = game_class(game)
            self._params: GameParams | Mapping[str, Any] | None = params
            self.game: Game[Any, Any] | None = None
        elif isinstance(game, Game):
            if params is not None:
                raise ConfigError("pass params either in the Game instance or as params, not both")
            self._game_cls, self._params, self.game = type(game), game.params, game
        else:
            raise ConfigError(f"game must be an arena Game or a registered game id, got {type(game).__name__}")
        self.policy = policy
        self.turn_cap = turn_cap
        self.match: Match | None = None
        self._invalid: dict[int, bool] = {}
        self._turns: dict[int, int] = {}

    # ------------------------------------------------------------------ TextArena API
    def reset(self, num_players: int, seed: int | None = None) -> None:
        """Start a new episode. ``seed=None`` draws fresh entropy (never the global ``random``)."""
        if self.game is None or self.game.num_players != num_players:
            self.game = self._game_cls(self._params, num_players=num_players)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        self.match = Match(self.game, int(seed), policy=self.policy, turn_cap=self.turn_cap)
        self._invalid = {p: False for p in range(num_players)}
        self._turns = {p: 0 for p in range(num_players)}

    def get_observation(self) -> tuple[int, str]:
        """``(player to act, prompt text)``, rebuilt from the state; reading does not consume it."""
        match = self._require_match()
        pid = match.to_act()
        if pid is None:
            return -1, ""
        return pid, self.render(pid)

    def render(self, pid: int) -> str:
        """The prompt of ``pid``: rules, state, and the legal actions as TextArena-style tokens."""
        match = self._require_match()
        prompt = match.game.text_view().prompt(match.game, match.position, pid)
        tokens = ", ".join(f"'[{a}]'" for a in prompt.legal)
        return f"{prompt.system}\n\n{prompt.user}\n\nAvailable actions: {tokens}"

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        """Apply the acting player's text; invalid text is handled by the policy and reported."""
        match = self._require_match()
        pid = match.to_act()
        if match.done or pid is None:
            raise GameOverError(f"{match.game.spec.id}: the episode is over; call reset()")
        chosen = self._read(pid, action)
        if chosen is None:
            sub = match.fail(
                pid,
                f"no legal action in {str(action)[:200]!r}",
                attempted=str(action)[:200],
                illegal=True,
                fault=FaultKind.UNPARSEABLE,
            )
        else:
            sub = match.submit(pid, chosen)
        info: dict[str, Any] = {}
        if not sub.accepted:
            info = {"invalid_move": True, "player": pid, "verdict": sub.verdict.value if sub.verdict else None}
            self._invalid[pid] = True
        else:
            self._turns[pid] += 1
        return match.done, info

    def close(self) -> tuple[dict[int, float] | None, dict[int, dict[str, Any]]]:
        """TextArena's ``(rewards, game_info)``; rewards are None if the episode was truncated."""
        match = self._require_match()
        end = match.end
        info = {
            p: {
                "role": f"Player {p}",
                "invalid_move": self._invalid.get(p, False),
                "turn_count": self._turns.get(p, 0),
                "reason": "" if end is None else (end.detail or end.reason.value),
                "end_reason": None if end is None else end.reason.value,
                "truncated": bool(end is not None and end.reason.truncated),
            }
            for p in range(match.game.num_players)
        }
        if end is None or end.returns is None:
            return None, info
        return {p: float(r) for p, r in enumerate(end.returns)}, info

    # ------------------------------------------------------------------ helpers
    def truncate(self, detail: str = "") -> None:
        """End the episode from outside (a cut-off, reported as truncation)."""
        self._require_match().truncate(EndReason.TURN_CAP, detail)

    def _read(self, pid: int, text: str) -> Any:
        """The legal action ``text`` names, or None."""
        if not isinstance(text, str):
            return None
        match = self._require_match()
        game, pos = match.game, match.position
        legal = {" ".join(game.action_to_str(a).split()).lower(): a for a in game.legal(pos, pid)}
        for token in reversed(_BRACKET.findall(text)):  # the TextArena way: the last bracketed legal move
            key = " ".join(token.split()).lower()
            if key in legal:
                return legal[key]
        parsed = game.text_view().parse(game, pos, pid, text)  # the game's own answer format
        return None if parsed.default_used or not parsed.legal else parsed.action

    def _require_match(self) -> Match:
        if self.match is None:
            raise GameOverError("call reset(num_players, seed) before using the env")
        return self.match
