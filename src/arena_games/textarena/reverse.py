"""Any arena game as a TextArena env, so TextArena agents, wrappers and ``ta.make`` play our games.

    env = LLMObservationWrapper(ArenaTextArenaEnv("megagem"))   # or ta.make after register()
    env.reset(num_players=3, seed=7)
    done = False
    while not done:
        pid, observation = env.get_observation()
        done, info = env.step(agents[pid](observation))
    rewards, game_info = env.close()

The raw env speaks TextArena's format, so its standard wrappers work unchanged:
``get_observation() -> (pid, messages)``, the messages ``(sender, text, ObservationType)`` new to
that player since its last read (what the wrappers accumulate): on a player's first turn a
``PROMPT`` (the game's whole text prompt with ``Available actions: '[a]', ...``), on every turn a
``GAME_BOARD`` (the prompt's user part and the actions: what the seat sees now, rebuilt from the
state, so nothing hidden leaks), then any ``GAME_ADMIN`` note (an invalid move, the end); ``env.state`` holds
what the wrappers read (``role_mapping``, ``logs``, ``current_player_id``, ``num_players``,
``turn``, ``done``, ``game_info``, ``rewards``) and ``get_board_str()`` what ``SimpleRenderWrapper``
draws. :class:`ArenaPromptWrapper` gives the whole prompt rebuilt at every read instead (a string,
the same when read twice). :func:`register` puts a game in TextArena's registry for ``ta.make``.

Unlike TextArena's own envs, seeding never touches the global ``random``, illegal text goes
through an arena :class:`~arena_core.policy.IllegalActionPolicy` (by default TextArena's own rule:
one retry, then the offender loses) and is reported in ``info``, and a harness cut-off is reported
as truncation in ``game_info``, never as a draw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum
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


def _bracketed(action: str) -> bool:
    return action.startswith("[") and action.endswith("]")


GAME_ID = -1  # TextArena's sender id of the game's own messages


def _ta_attr(name: str, fallback: Any) -> Any:
    try:
        from .bridge import _ta

        return getattr(_ta().core, name)
    except ImportError:  # textarena missing: the env still works, it just is not a ta.Env subclass
        return fallback


class _Kinds(Enum):
    """TextArena's ObservationType members used here (its own enum when textarena is installed)."""

    PROMPT = 1
    GAME_BOARD = 5
    GAME_ADMIN = 6


Kinds: Any = _ta_attr("ObservationType", _Kinds)


class TextArenaStateView:
    """What TextArena's wrappers read from ``env.state``, kept up to date by the env."""

    def __init__(self, game_id: str, num_players: int, seed: int):
        self.num_players = num_players
        self.current_player_id = 0
        self.role_mapping: dict[int, str] = {p: f"Player {p}" for p in range(num_players)} | {GAME_ID: "GAME"}
        self.logs: list[tuple[int, str]] = [(GAME_ID, f"{game_id}: a new game, deal seed {seed}")]
        self.turn = 0
        self.done = False
        self.rewards: dict[int, float] | None = None
        self.game_info: dict[int, dict[str, Any]] = {}
        self.game_state: dict[str, Any] = {"game": game_id, "seed": seed}


class ArenaTextArenaEnv(_ta_attr("Env", object)):  # type: ignore[misc]  # the base is TextArena's Env (untyped) or object
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
        self.state: TextArenaStateView | None = None
        self._invalid: dict[int, bool] = {}
        self._turns: dict[int, int] = {}
        self._messages: dict[int, list[tuple[int, str, Any]]] = {}  # each player's whole message log
        self._delivered: dict[int, int] = {}  # how much of it get_observation has delivered
        self._shown: dict[int, int | None] = {}  # the ply of the last board each player was shown
        self._notes: dict[int, list[str]] = {}  # notes for a player's next read

    # ------------------------------------------------------------------ TextArena API
    def reset(self, num_players: int, seed: int | None = None) -> None:
        """Start a new episode. ``seed=None`` draws fresh entropy (never the global ``random``)."""
        if self.game is None or self.game.num_players != num_players:
            self.game = self._game_cls(self._params, num_players=num_players)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        self.match = Match(self.game, int(seed), policy=self.policy, turn_cap=self.turn_cap)
        self.state = TextArenaStateView(self.game.spec.id, num_players, int(seed))
        players = range(num_players)
        self._invalid, self._turns = {p: False for p in players}, {p: 0 for p in players}
        self._messages, self._delivered = {p: [] for p in players}, {p: 0 for p in players}
        self._shown, self._notes = {p: None for p in players}, {p: [] for p in players}
        self._sync()

    def get_observation(self) -> tuple[int, list[tuple[int, str, Any]]]:
        """``(player to act, the messages new to that player)`` (the module docstring says which);
        ``(-1, [])`` once the game is over. :meth:`messages` gives a player's whole log."""
        match = self._require_match()
        pid = match.to_act()
        if pid is None:
            return -1, []
        log = self._messages[pid]
        if self._shown[pid] != match.ply:
            prompt = match.game.text_view().prompt(match.game, match.position, pid)
            if self._shown[pid] is None and not log:
                log.append((GAME_ID, self.render(pid), Kinds.PROMPT))
            log.append((GAME_ID, f"{prompt.user}\n\n{self._actions(prompt.legal)}", Kinds.GAME_BOARD))
            self._shown[pid] = match.ply
        log += [(GAME_ID, note, Kinds.GAME_ADMIN) for note in self._notes[pid]]
        self._notes[pid] = []
        new, self._delivered[pid] = log[self._delivered[pid] :], len(log)
        return pid, new

    def messages(self, pid: int) -> list[tuple[int, str, Any]]:
        """Every message ``pid`` has been sent this episode (reading it consumes nothing)."""
        self._require_match()
        return list(self._messages[pid])

    def get_board_str(self) -> str:
        """What ``SimpleRenderWrapper`` draws: the view of the player to act (or how it ended)."""
        match = self._require_match()
        pid = match.to_act()
        if pid is None:
            end = match.end
            return f"game over: {end.reason.value if end else ''}, returns {list(end.returns or []) if end else []}"
        return str(match.game.text_view().prompt(match.game, match.position, pid).user)

    def render(self, pid: int) -> str:
        """The prompt of ``pid``: rules, state, and the legal actions as TextArena-style tokens."""
        match = self._require_match()
        prompt = match.game.text_view().prompt(match.game, match.position, pid)
        return f"{prompt.system}\n\n{prompt.user}\n\n{self._actions(prompt.legal)}"

    @staticmethod
    def _actions(legal: Any) -> str:
        """TextArena's list of bracketed moves (a move already in brackets, as TextArena titles' are, kept)."""
        return "Available actions: " + ", ".join(f"'{a}'" if _bracketed(a) else f"'[{a}]'" for a in legal)

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
        state = self._state()
        state.logs.append((pid, str(action)))
        if not sub.accepted:
            info = {"invalid_move": True, "player": pid, "verdict": sub.verdict.value if sub.verdict else None}
            self._invalid[pid] = True
            self._notes[pid].append(
                f"Player {pid} attempted an invalid move ({info['verdict']}): {str(action)[:200]!r}"
            )
            self._shown[pid] = None if match.to_act() == pid else self._shown[pid]  # asked again: the board again
        else:
            self._turns[pid] += 1
            state.turn += 1
        self._sync()
        return match.done, info

    def close(self) -> tuple[dict[int, float] | None, dict[int, dict[str, Any]]]:
        """TextArena's ``(rewards, game_info)``; rewards are None if the episode was truncated."""
        return self._outcome()

    def _outcome(self) -> tuple[dict[int, float] | None, dict[int, dict[str, Any]]]:
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
        self._sync()

    def _state(self) -> TextArenaStateView:
        if self.state is None:
            raise GameOverError("call reset(num_players, seed) before using the env")
        return self.state

    def _sync(self) -> None:
        """``state`` after a change; at the end, the outcome to every player as a ``GAME_ADMIN`` note."""
        match, state = self._require_match(), self._state()
        pid = match.to_act()
        state.current_player_id = state.current_player_id if pid is None else pid
        state.game_state["ply"] = match.ply
        if match.done and not state.done:
            state.done = True
            state.rewards, state.game_info = self._outcome()
            end = match.end
            text = f"Game over ({end.reason.value if end else ''}): rewards {state.rewards}"
            state.logs.append((GAME_ID, text))
            for p, log in self._messages.items():
                log += [(GAME_ID, note, Kinds.GAME_ADMIN) for note in self._notes[p]] + [
                    (GAME_ID, text, Kinds.GAME_ADMIN)
                ]
                self._notes[p] = []

    def _read(self, pid: int, text: str) -> Any:
        """The legal action ``text`` names, or None."""
        if not isinstance(text, str):
            return None
        match = self._require_match()
        game, pos = match.game, match.position
        legal = {" ".join(game.action_to_str(a).split()).lower(): a for a in game.legal(pos, pid)}
        for token in reversed(_BRACKET.findall(text)):  # the TextArena way: the last bracketed legal move
            key = " ".join(token.split()).lower()
            for form in (key, f"[{key}]"):  # a title's own moves are bracketed already ("[4]")
                if form in legal:
                    return legal[form]
        parsed = game.text_view().parse(game, pos, pid, text)  # the game's own answer format
        return None if parsed.default_used or not parsed.legal else parsed.action

    def _require_match(self) -> Match:
        if self.match is None:
            raise GameOverError("call reset(num_players, seed) before using the env")
        return self.match


class ArenaPromptWrapper(_ta_attr("ObservationWrapper", object)):  # type: ignore[misc]  # TextArena's (untyped) or object
    """The observation as the whole prompt rebuilt from the state at every read (the same text when
    read twice; ``""`` once the game is over), instead of the messages TextArena's wrappers collect."""

    def __init__(self, env: ArenaTextArenaEnv):
        self.env = env

    def observation(self, player_id: int, observation: Any) -> str:
        return self.env.render(player_id) if player_id >= 0 else ""

    def get_observation(self) -> tuple[int, str]:
        pid, messages = self.env.get_observation()
        return pid, self.observation(pid, messages)


def make_env(game_id: str, **params: Any) -> ArenaTextArenaEnv:
    """What ``ta.make`` calls for a game :func:`register` put in TextArena's registry."""
    return ArenaTextArenaEnv(game_id, params or None)


def register(game_id: str, env_id: str | None = None) -> str:
    """Put the Arena game ``game_id`` in TextArena's registry (idempotent), so that
    ``ta.make(env_id)`` gives it behind TextArena's ``LLMObservationWrapper`` (as TextArena's own
    titles are) and ``ta.make(env_id + "-raw")`` gives the bare env; ``env_id`` defaults to
    ``arena_core.registration.registry_id(game_id)`` (``arena/kuhn_poker-v0``)."""
    from functools import partial

    from arena_core.registration import registry_id

    from .bridge import _ta

    ta = _ta()
    env_id = env_id or registry_id(game_id)
    if env_id not in ta.envs.registration.ENV_REGISTRY:
        ta.envs.registration.register_with_versions(
            id=env_id,
            entry_point=partial(make_env, game_id),
            wrappers={"default": [ta.wrappers.LLMObservationWrapper]},
        )
    return env_id
