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
- the game is registered with ``pyspiel`` under ``arena_<id>`` (:func:`register`), and its game
  string carries the player count and the parameters (``arena_matrix(archetype=coordination,
  k=3,...,players=2)``), so ``pyspiel.load_game(str(game))``, pickling and
  ``serialize_game_and_state`` rebuild the same game;
- observations and tensors: :mod:`.observer` (the information-state string of a seat is
  ``{"seat": seat, "observation": observe(...)}`` as canonical JSON: perfect recall exactly when
  the game's observation is, as ``arena_train.exact`` requires too; every shipped game with
  enumerable deals qualifies).

:class:`ArenaPolicy` reads a policy table keyed like ``arena_train.exact`` (canonical JSON of
the observation -> ``{action id: probability}``) as an OpenSpiel policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyspiel

from arena_core.errors import ConfigError
from arena_core.game import Game, Position
from arena_core.registry import load
from arena_core.spec import Information, Utility

from .observer import ArenaObserver, has_tensor, observer_kind

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

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as data (OpenSpiel's ``serialize_game_and_state`` pickles a Python state's
        ``__dict__``): the game's reference and parameters, and the position as JSON."""
        arena, pos = self.arena, self.position
        return (
            _shared_from,
            (
                _reference(type(arena)),
                arena.params.model_dump(mode="json"),
                arena.num_players,
                self.deals,
                None if pos is None else arena.position_to_json(pos),
            ),
        )


def _shared_from(
    reference: Any, params: dict[str, Any], num_players: int, deals: Deals, position: dict[str, Any] | None
) -> _Shared:
    from arena_core.registry import game_class

    cls = game_class(reference) if isinstance(reference, str) else reference
    arena = cls(params, num_players=num_players)
    return _Shared(arena, deals, None if position is None else arena.position_from_json(position))


class ArenaGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel ships no type information: its base is Any
    """An Arena game seen by OpenSpiel (made by :func:`as_pyspiel_game`, or by ``pyspiel.load_game``
    once its class is registered): its game string carries the player count and parameters."""

    def __init__(self, arena: Game[Any, Any]):
        self.arena = arena
        self.deals = _deals(arena)
        self.has_chance = arena.enumerate_deals() is not None
        self.registered_as = register(type(arena))
        spec = arena.spec
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
        super().__init__(_TYPES[self.registered_as], info, spiel_params(arena))

    def new_initial_state(self) -> ArenaState:
        return ArenaState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ArenaObserver | None:
        """OpenSpiel's observer of the kind asked, or None for a kind this game cannot give
        (:mod:`.observer` says which)."""
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        perfect = self.arena.spec.information is Information.PERFECT
        kind = observer_kind(iig_obs_type, perfect_information=perfect)
        if kind is None:
            return None
        return ArenaObserver(self, kind, bool(iig_obs_type is not None and iig_obs_type.perfect_recall))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (load_exported, (_reference(type(self.arena)), str(self)))


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

    def observation_tensor(self, *player: int) -> list[float]:
        """OpenSpiel's observation tensor; refused (``SpielError``) by a game that has none."""
        self._refuse_tensor("observation", self.get_game().get_type().provides_observation_tensor)
        return list(super().observation_tensor(*player))

    def information_state_tensor(self, *player: int) -> list[float]:
        """OpenSpiel's information-state tensor; refused (``SpielError``) by a game that has none."""
        self._refuse_tensor("information_state", self.get_game().get_type().provides_information_state_tensor)
        return list(super().information_state_tensor(*player))

    def _refuse_tensor(self, kind: str, provided: bool) -> None:
        if provided:
            return
        arena = self.arena
        if arena.spec.information is Information.PERFECT and kind == "information_state":
            why = "a perfect-information game's encoding is the position, not the history (use observation_tensor)"
        elif arena.observation_size <= 0:
            why = "the game declares no numeric encoding (observation_size is 0)"
        else:
            why = "its numeric encoding is a summary that does not tell its observations apart (observation_is_state=False)"
        raise pyspiel.SpielError(f"{arena.spec.id} gives no {kind}_tensor: {why}; the {kind}_string is available")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as (game, actions): rebuilt by replaying them."""
        return (load_exported_state, (_reference(type(self.arena)), str(self.get_game()), self.history()))


# ------------------------------------------------------------------ registration with pyspiel
#: short name -> the factory OpenSpiel calls for it; kept alive here for the interpreter's life
#: (OpenSpiel holds the callable in a C++ registry: a lambda there crashes the interpreter at exit)
_FACTORIES: dict[str, _Factory] = {}
#: short name -> its GameType (the same object for every instance, as OpenSpiel requires)
_TYPES: dict[str, Any] = {}
_SCALARS = (bool, int, float, str)
_UNSAFE = re.compile(r"[,()=\s]")


class _Factory:
    """What ``pyspiel.load_game("arena_<id>(players=N,param=value,...)")`` calls: builds the Arena
    game class with those parameters and exports it."""

    def __init__(self, cls: type[Game[Any, Any]]):
        self.cls = cls

    def __call__(self, params: Mapping[str, Any] | None = None) -> ArenaGame:
        given = dict(params or {})
        players = given.pop("players", None)
        return ArenaGame(self.cls(given or None, num_players=None if players is None else int(players)))


def _is_registered_class(cls: type[Game[Any, Any]]) -> bool:
    from arena_core.registry import game_class

    try:
        return game_class(cls.spec.id) is cls
    except Exception:  # not an entry point (a game defined in a script or a test)
        return False


def short_name(cls: type[Game[Any, Any]]) -> str:
    """OpenSpiel's name of an Arena game class: ``arena_<game id>`` (characters outside
    ``[A-Za-z0-9_]`` become ``_``) for the class registered under its id, ``arena_<id>__<class>``
    for any other class (a subclass in a script), so that no name stands for two games."""
    name = "arena_" + re.sub(r"[^A-Za-z0-9_]", "_", cls.spec.id)
    if not _is_registered_class(cls):
        name += "__" + re.sub(r"[^A-Za-z0-9_]", "_", cls.__qualname__)
    return name


def _param_defaults(cls: type[Game[Any, Any]]) -> dict[str, Any]:
    """The class's parameters OpenSpiel can carry (its defaults); a parameter whose default is None
    is left out (OpenSpiel's parameters have no None)."""
    defaults = cls.Params().model_dump(mode="json")
    return {k: v for k, v in defaults.items() if v is not None}


def spiel_params(arena: Game[Any, Any]) -> dict[str, Any]:
    """``arena``'s player count and parameters as OpenSpiel's game parameters (what its game
    string shows); ``ConfigError`` for a value a game string cannot carry."""
    declared = _param_defaults(type(arena))
    out: dict[str, Any] = {"players": arena.num_players}
    for key, value in arena.params.model_dump(mode="json").items():
        if value is None and key not in declared:
            continue
        if key not in declared:
            raise ConfigError(
                f"{arena.spec.id}: parameter {key}={value!r} cannot be exported to OpenSpiel: its default is None "
                "and OpenSpiel's parameters have no None (only the default can be exported)"
            )
        if not isinstance(value, _SCALARS) or (isinstance(value, str) and (not value or _UNSAFE.search(value))):
            raise ConfigError(
                f"{arena.spec.id}: parameter {key}={value!r} cannot be written in an OpenSpiel game string "
                "(only int, float, bool, or a non-empty str without spaces or any of ',()=')"
            )
        out[key] = value
    return out


def register(cls: type[Game[Any, Any]]) -> str:
    """Register the Arena game class with ``pyspiel`` (idempotent) so that
    ``pyspiel.load_game(str(game))`` rebuilds an exported game; its short name. ``ConfigError``
    when its default game cannot be exported (chance it cannot enumerate)."""
    name = short_name(cls)
    if name in _FACTORIES:
        return name
    default = cls(None)
    has_chance = default.enumerate_deals() is not None
    _deals(default)  # refuses, with the reason, a game with chance it cannot list
    spec = cls.spec
    kinds = pyspiel.GameType
    perfect = spec.information is Information.PERFECT
    tensor = has_tensor(default)
    params: dict[str, Any] = {"players": default.num_players, **_param_defaults(cls)}
    for key, value in params.items():
        if not isinstance(value, _SCALARS):
            raise ConfigError(
                f"{spec.id}: parameter {key} (default {value!r}) has no OpenSpiel type (int, float, bool or str)"
            )
    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"Arena {spec.id}",
        dynamics=kinds.Dynamics.SEQUENTIAL,
        chance_mode=kinds.ChanceMode.EXPLICIT_STOCHASTIC if has_chance else kinds.ChanceMode.DETERMINISTIC,
        information=kinds.Information.PERFECT_INFORMATION if perfect else kinds.Information.IMPERFECT_INFORMATION,
        utility={
            Utility.ZERO_SUM: kinds.Utility.ZERO_SUM,
            Utility.CONSTANT_SUM: kinds.Utility.CONSTANT_SUM,
            Utility.GENERAL_SUM: kinds.Utility.GENERAL_SUM,
        }[spec.utility],
        reward_model=kinds.RewardModel.TERMINAL,
        max_num_players=spec.max_players,
        min_num_players=spec.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=tensor and not perfect,
        provides_observation_string=True,
        provides_observation_tensor=tensor,
        parameter_specification=params,
    )
    factory = _Factory(cls)
    pyspiel.register_game(game_type, factory)
    _FACTORIES[name], _TYPES[name] = factory, game_type
    return name


def register_all(game_ids: Sequence[str] | None = None) -> dict[str, str]:
    """Register every available game of ``game_ids`` (default: every registered Arena game) that can
    be exported: ``{game id: short name}``; the others are skipped (:func:`exportable` says why)."""
    from arena_core.registry import availability, game_class, list_plugins

    ids = [p.name for p in list_plugins("games")] if game_ids is None else list(game_ids)
    done = {}
    for game_id in ids:
        if not availability("games", game_id)[0]:
            continue
        try:
            done[game_id] = register(game_class(game_id))
        except ConfigError:
            continue
    return done


def _reference(cls: type[Game[Any, Any]]) -> str | type[Game[Any, Any]]:
    """How a pickle names the class: its game id when it is the registered one, else the class."""
    return cls.spec.id if _is_registered_class(cls) else cls


def load_exported(reference: str | type[Game[Any, Any]], game_string: str) -> ArenaGame:
    """``pyspiel.load_game(game_string)`` after registering the class ``reference`` names (what
    unpickling an exported game calls, in any process)."""
    from arena_core.registry import game_class

    register(game_class(reference) if isinstance(reference, str) else reference)
    game: ArenaGame = pyspiel.load_game(game_string)
    return game


def load_exported_state(reference: str | type[Game[Any, Any]], game_string: str, actions: list[int]) -> ArenaState:
    """The state after ``actions`` in the exported game (what unpickling a state calls)."""
    state = load_exported(reference, game_string).new_initial_state()
    for action in actions:
        state.apply_action(action)
    return state


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
