"""Arena games as OpenSpiel games: :func:`as_pyspiel_game`.

Any Arena game whose chance can be enumerated (``Game.enumerate_deals()``, or no chance at all)
becomes a ``pyspiel`` game, so OpenSpiel's CFR, best response and exploitability run on it,
third-party plugins included:

- the root is a chance node whose outcomes are the deals, with their probabilities (a game
  without chance starts at its one deal, seed 0);
- a decision node is an Arena position; its actions are the Arena action ids;
- a simultaneous move is played as its commitments in order: a later committer's information
  state does not show the earlier commitments (the Arena position hides them), so OpenSpiel
  sees the imperfect-information game it is;
- the information-state string of a seat is ``{"seat": seat, "observation": observe(...)}`` as
  canonical JSON: perfect recall exactly when the game's observation is (as
  ``arena_train.exact`` requires too; every shipped game with enumerable deals qualifies).

:class:`ArenaPolicy` reads a policy table keyed like ``arena_train.exact`` (canonical JSON of
the observation -> ``{action id: probability}``) as an OpenSpiel policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.registry import load
from arena_core.spec import Information, Utility

Deals = list[tuple[int, float]]


def arena_key(game: Game[Any, Any], pos: Position[Any], seat: int) -> str:
    """The information-state key ``arena_train.exact`` uses (canonical JSON of the observation)."""
    return json.dumps(game.observe(pos, seat), sort_keys=True)


def _deals(game: Game[Any, Any]) -> Deals:
    listed = game.enumerate_deals()
    if listed is None:
        if game.spec.chance:
            raise ConfigError(
                f"{game.spec.id} draws chance but cannot enumerate its deals (no enumerate_deals()); "
                "as_pyspiel_game needs every chance outcome with its probability"
            )
        return [(0, 1.0)]
    deals = [(int(s), float(p)) for s, p in listed if p > 0]
    total = sum(p for _, p in deals)
    if not deals or abs(total - 1.0) > 1e-9:
        raise ConfigError(f"{game.spec.id}.enumerate_deals() probabilities sum to {total}, not 1")
    return deals


class _Shared:
    """Immutable parts a state shares with its clones (OpenSpiel clones a Python state with
    ``copy.deepcopy``; copying the Arena game at every clone cost 1.5 ms)."""

    __slots__ = ("arena", "deals", "position", "seat")

    def __init__(self, arena: Game[Any, Any], deals: Deals, position: Position[Any] | None):
        self.arena, self.deals, self.position = arena, deals, position
        #: OpenSpiel's current player (read often by its algorithms, so computed once)
        if position is None:
            self.seat = int(pyspiel.PlayerId.CHANCE)
        else:
            seat = arena.current_player(position)
            self.seat = int(pyspiel.PlayerId.TERMINAL) if seat is None else int(seat)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self


class _Observer:
    """OpenSpiel's observer interface: strings only (no tensor)."""

    def __init__(self, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, Any] = {}

    def set_from(self, state: ArenaState, player: int) -> None:
        """No tensor to fill."""

    def string_from(self, state: ArenaState, player: int) -> str:
        pos = state.position
        if pos is None:
            return json.dumps({"seat": player, "observation": None})
        return json.dumps({"seat": player, "observation": state.arena.observe(pos, player)}, sort_keys=True)


class ArenaGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel ships no type information: its base is Any
    """An Arena game seen by OpenSpiel (made by :func:`as_pyspiel_game`)."""

    def __init__(self, arena: Game[Any, Any]):
        self.arena = arena
        self.deals = _deals(arena)
        spec = arena.spec
        self.has_chance = arena.enumerate_deals() is not None
        kinds = pyspiel.GameType
        utility = {
            Utility.ZERO_SUM: kinds.Utility.ZERO_SUM,
            Utility.CONSTANT_SUM: kinds.Utility.CONSTANT_SUM,
            Utility.GENERAL_SUM: kinds.Utility.GENERAL_SUM,
        }[spec.utility]
        perfect = spec.information is Information.PERFECT
        game_type = pyspiel.GameType(
            short_name="arena_" + re.sub(r"[^A-Za-z0-9_]", "_", spec.id),
            long_name=f"Arena {spec.id}",
            dynamics=kinds.Dynamics.SEQUENTIAL,
            chance_mode=kinds.ChanceMode.EXPLICIT_STOCHASTIC if self.has_chance else kinds.ChanceMode.DETERMINISTIC,
            information=kinds.Information.PERFECT_INFORMATION if perfect else kinds.Information.IMPERFECT_INFORMATION,
            utility=utility,
            reward_model=kinds.RewardModel.TERMINAL,
            max_num_players=arena.num_players,
            min_num_players=arena.num_players,
            provides_information_state_string=True,
            provides_information_state_tensor=False,
            provides_observation_string=True,
            provides_observation_tensor=False,
            parameter_specification={},
        )
        lo, hi = spec.reward_bounds
        info = pyspiel.GameInfo(
            num_distinct_actions=arena.num_actions,
            max_chance_outcomes=len(self.deals) if self.has_chance else 0,
            num_players=arena.num_players,
            min_utility=float(lo),
            max_utility=float(hi),
            utility_sum=spec.declared_sum,
            max_game_length=spec.max_length,
        )
        super().__init__(game_type, info, {})

    def new_initial_state(self) -> ArenaState:
        return ArenaState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
        return _Observer(bool(iig_obs_type is None or iig_obs_type.perfect_recall))


class ArenaState(pyspiel.State):  # type: ignore[misc]  # pyspiel ships no type information: its base is Any
    """A position of the Arena game (None at the chance root, where the deal is drawn)."""

    def __init__(self, game: ArenaGame):
        super().__init__(game)
        start = None if game.has_chance else game.arena.start(game.deals[0][0])
        self._shared = _Shared(game.arena, game.deals, start)

    @property
    def arena(self) -> Game[Any, Any]:
        return self._shared.arena

    @property
    def deals(self) -> Deals:
        return self._shared.deals

    @property
    def position(self) -> Position[Any] | None:
        """The Arena position (None at the chance root); positions are immutable."""
        return self._shared.position

    def current_player(self) -> int:
        return self._shared.seat

    def _legal_actions(self, player: int) -> list[int]:
        if self.position is None:
            return []
        return sorted(self.arena.action_id(a) for a in self.arena.legal(self.position, player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(i, p) for i, (_, p) in enumerate(self.deals)]

    def _apply_action(self, action: int) -> None:
        pos = self.position
        if pos is None:
            self._shared = _Shared(self.arena, self.deals, self.arena.start(self.deals[action][0]))
            return
        seat = self.arena.current_player(pos)
        if seat is None:
            raise pyspiel.SpielError(f"{self.arena.spec.id}: the game is over")
        self._shared = _Shared(self.arena, self.deals, self.arena.act_id(pos, seat, action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal seed {self.deals[action][0]}"
        return str(self.arena.action_to_str(self.arena.action_from_id(action)))

    def is_terminal(self) -> bool:
        return self._shared.seat == int(pyspiel.PlayerId.TERMINAL)

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.arena.num_players
        assert self.position is not None  # is_terminal says so
        return list(self.arena.final_returns(self.position))

    def __str__(self) -> str:
        return " ".join(str(a) for a in self.history())


def as_pyspiel_game(game_id: str, *, num_players: int | None = None, **params: Any) -> ArenaGame:
    """A ``pyspiel`` game for the registered Arena game ``game_id`` with ``params``.

    Refuses (``ConfigError``) a game with chance it cannot enumerate."""
    cls = load("games", game_id)
    return ArenaGame(cls(params or None, num_players=num_players))


def perfect_recall_violation(game: ArenaGame, *, max_nodes: int = 1_000_000) -> str | None:
    """Walk the exported tree (at most ``max_nodes`` decision nodes) and say where an
    information-state string is reached by two different sequences of its owner's own earlier
    information states and actions (not perfect recall: OpenSpiel's solvers would be wrong
    there); None when none is. Raises ``ConfigError`` past ``max_nodes``."""
    seen: dict[str, tuple[tuple[str, int], ...]] = {}
    nodes = 0

    def walk(state: ArenaState, own: tuple[tuple[tuple[str, int], ...], ...]) -> str | None:
        nonlocal nodes
        if state.is_terminal():
            return None
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                found = walk(state.child(action), own)
                if found:
                    return found
            return None
        nodes += 1
        if nodes > max_nodes:
            raise ConfigError(f"perfect_recall_violation: the tree has more than {max_nodes} decision nodes")
        seat = state.current_player()
        key = state.information_state_string(seat)
        earlier = seen.setdefault(key, own[seat])
        if earlier != own[seat]:
            return (
                f"{state.arena.spec.id}: information state {key} is reached after two different own histories "
                f"of seat {seat}: {list(earlier)} and {list(own[seat])}"
            )
        for action in state.legal_actions(seat):
            mine = list(own)
            mine[seat] = own[seat] + ((key, action),)
            found = walk(state.child(action), tuple(mine))
            if found:
                return found
        return None

    return walk(game.new_initial_state(), ((),) * game.num_players())


class ArenaPolicy:
    """An Arena policy table (``arena_train.exact``'s keys -> ``{action id: probability}``) as an
    OpenSpiel policy on ``as_pyspiel_game(...)``'s game (the interface of
    ``open_spiel.python.policy.Policy``: ``game``, ``player_ids``, ``action_probabilities``)."""

    def __init__(self, game: ArenaGame, table: Mapping[str, Mapping[int, float]]):
        self.game = game
        self.player_ids = list(range(game.num_players()))
        self.table = table

    def __call__(self, state: ArenaState, player_id: int | None = None) -> dict[int, float]:
        return self.action_probabilities(state, player_id)

    def action_probabilities(self, state: ArenaState, player_id: int | None = None) -> dict[int, float]:
        pos = state.position
        if pos is None:
            raise ConfigError("ArenaPolicy: the chance root has no policy")
        seat = state.current_player() if player_id is None else player_id
        key = arena_key(state.arena, pos, seat)
        dist = self.table.get(key)
        if dist is None:
            raise ConfigError(f"the policy table has no entry for information state {key}")
        return {a: float(dist.get(a, 0.0)) for a in state.legal_actions(seat)}
