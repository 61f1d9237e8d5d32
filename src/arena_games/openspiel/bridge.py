"""OpenSpiel games as Arena games: one class per (OpenSpiel name, parameters).

The state is data: the chance seed drawn from the Arena deal, and OpenSpiel's history grouped
into moves (a chance outcome or one player's action: ``(a,)``; a simultaneous move: one
action per player). The live ``pyspiel`` state is a cache keyed by the Arena state's identity
(forward play costs one OpenSpiel step per action); any other state (a branch, a restored
one) is rebuilt by replaying its history on a fresh OpenSpiel state.

Chance: every chance node is resolved inside the rules, never shown to a player, from the
chance seed and the chance node's index (:func:`arena_core.seeding.derive_seed`), so an
episode is (spec, deal seed, actions) and replays exactly. Termination is OpenSpiel's
``is_terminal``; a title whose engine ends a game by its own move cap (``engine_cap``)
reports a draw at that cap as a ``turn_cap`` truncation (no result), never as the draw
OpenSpiel scores it (a game decided on the last allowed move keeps its result). Text views read OpenSpiel's observation and information-state strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyspiel

from arena_core.episode import EndReason
from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.seeding import derive_seed
from arena_core.spec import GameSpec, Information, TurnStructure, Utility

from .table import TITLES, OptionValue, Title

Move = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OpenSpielState:
    """The chance seed (from the Arena deal) and OpenSpiel's history grouped into moves."""

    chance_seed: int
    history: tuple[Move, ...] = ()


def _load(name: str, options: Mapping[str, OptionValue], players: int | None) -> Any:
    opts = dict(options)
    if players is not None:
        opts["players"] = players
    try:
        return pyspiel.load_game(name, opts)
    except pyspiel.SpielError as exc:
        raise ConfigError(f"OpenSpiel cannot load {name!r} with {opts}: {str(exc).strip().splitlines()[-1]}") from None


def _player_counts(title: Title) -> list[int | None]:
    if title.players is None:
        return [None]
    lo, hi = title.players
    return list(range(lo, hi + 1))


def _utility(kind: Any) -> Utility:
    u = pyspiel.GameType.Utility
    if kind == u.ZERO_SUM:
        return Utility.ZERO_SUM
    if kind == u.CONSTANT_SUM:
        return Utility.CONSTANT_SUM
    return Utility.GENERAL_SUM


def spec_of(title: Title) -> tuple[GameSpec, int, int]:
    """The Arena spec of a title (over every player count it offers), its action-space size
    and its numeric observation size at the default player count (an instance sets its own:
    the size can depend on the player count)."""
    games = [_load(title.name, title.options, n) for n in _player_counts(title)]
    first = games[0]
    kind = first.get_type()
    simultaneous = kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    perfect = kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION and not simultaneous
    utility = _utility(kind.utility)
    counts = [g.num_players() for g in games]
    exempt: dict[str, str] = {}
    if not perfect and not title.resample:
        reason = f"OpenSpiel's {title.name} does not implement ResampleFromInfostate (no sampler of consistent states)"
        exempt["no_private_leak"] = "checked through sample_hidden_state; " + reason
        exempt["hidden_state_sampling"] = reason
    spec = GameSpec(
        id=f"openspiel/{title.name}",
        version=f"open_spiel-{_version()}" + (f"-{dict(title.options)}" if title.options else ""),
        min_players=min(counts),
        max_players=max(counts),
        turn_structure=TurnStructure.SIMULTANEOUS if simultaneous else TurnStructure.SEQUENTIAL,
        chance=kind.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=Information.PERFECT if perfect else Information.IMPERFECT,
        utility=utility,
        constant_sum=first.utility_sum() if utility is Utility.CONSTANT_SUM else None,
        max_length=max(g.max_game_length() * (g.num_players() if simultaneous else 1) for g in games),
        reward_bounds=(min(g.min_utility() for g in games), max(g.max_utility() for g in games)),
        observation_is_state=False,  # the tensor is OpenSpiel's, the observation also holds its strings
        exempt_checks=exempt,
        description=(
            f"OpenSpiel's {kind.long_name} ({title.name}"
            + (f", {dict(title.options)}" if title.options else "")
            + "), played through the arena bridge: actions are OpenSpiel's action ids, the observation is "
            "OpenSpiel's observation and information-state strings, chance is drawn from the deal seed."
        ),
    )
    return spec, first.num_distinct_actions(), _tensor_size(_load(title.name, title.options, None))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("open_spiel")
    except PackageNotFoundError:  # a source build
        return "unknown"


def _tensor_size(g: Any) -> int:
    kind = g.get_type()
    if kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION and kind.provides_information_state_tensor:
        return int(g.information_state_tensor_size())
    if kind.provides_observation_tensor:
        return int(g.observation_tensor_size())
    if kind.provides_information_state_tensor:
        return int(g.information_state_tensor_size())
    return 1


class OpenSpielGame(Game[OpenSpielState, int]):
    """Base of every OpenSpiel title; :func:`title_class` fills in ``title``, ``spec`` and sizes."""

    os_title: ClassVar[Title]
    State = OpenSpielState
    #: live OpenSpiel states kept per game instance
    cache_size: ClassVar[int] = 64

    def default_num_players(self) -> int:
        return int(_load(self.os_title.name, self.os_title.options, None).num_players())

    def setup(self) -> None:
        players = None if self.os_title.players is None else self.num_players
        self.os_game = _load(self.os_title.name, self.os_title.options, players)
        kind = self.os_game.get_type()
        self._simultaneous = kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        self._obs_string = kind.provides_observation_string
        self._info_string = kind.provides_information_state_string
        imperfect = kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION
        if imperfect and kind.provides_information_state_tensor:
            self._tensor = "information_state_tensor"
        elif kind.provides_observation_tensor:
            self._tensor = "observation_tensor"
        elif kind.provides_information_state_tensor:
            self._tensor = "information_state_tensor"
        else:
            self._tensor = ""
        self.observation_size = _tensor_size(self.os_game)
        self._everyone = tuple(range(self.num_players))
        self._at: dict[int, tuple[OpenSpielState, Any]] = {}

    def __reduce__(self) -> tuple[Callable[..., OpenSpielGame], tuple[Any, ...]]:
        """Pickled as the title and player count (the OpenSpiel game and the cache are rebuilt)."""
        return _rebuild, (type(self).__qualname__, self.os_title, self.num_players)

    # ------------------------------------------------------------------ live states
    def live(self, state: OpenSpielState) -> Any:
        """The OpenSpiel state at ``state`` (do not mutate it: clone first)."""
        entry = self._at.get(id(state))
        if entry is not None and entry[0] is state:
            return entry[1]
        s = self.os_game.new_initial_state()
        for move in state.history:
            if s.is_simultaneous_node():
                s.apply_actions(list(move))
            else:
                s.apply_action(move[0])
        self._remember(state, s)
        return s

    def _remember(self, state: OpenSpielState, live: Any) -> None:
        self._at[id(state)] = (state, live)
        if len(self._at) > self.cache_size:
            del self._at[next(iter(self._at))]

    def _settle(self, seed: int, history: tuple[Move, ...], live: Any) -> OpenSpielState:
        """Resolve chance nodes from ``seed`` until a decision or the end; the new state."""
        moves = list(history)
        while live.is_chance_node():
            outcomes = live.chance_outcomes()
            u = derive_seed(seed, "chance", len(moves)) / float(2**63)  # keyed by the move's index
            cum = 0.0
            pick = outcomes[-1][0]
            for action, p in outcomes:
                cum += p
                if u < cum:
                    pick = action
                    break
            live.apply_action(pick)
            moves.append((int(pick),))
        state = OpenSpielState(seed, tuple(moves))
        self._remember(state, live)
        return state

    # ------------------------------------------------------------------ rules hooks
    def initial_state(self, rng: np.random.Generator) -> OpenSpielState:
        seed = int(rng.integers(2**62))
        return self._settle(seed, (), self.os_game.new_initial_state())

    def to_move(self, state: OpenSpielState) -> tuple[int, ...]:
        s = self.live(state)
        if s.is_terminal():
            return ()
        if s.is_simultaneous_node():
            return self._everyone
        return (int(s.current_player()),)

    def legal_actions(self, state: OpenSpielState, player: int) -> list[int]:
        return [int(a) for a in self.live(state).legal_actions(player)]

    def is_legal(self, state: OpenSpielState, player: int, action: int) -> bool:
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            return False
        return int(action) in self.live(state).legal_actions(player)

    def next_state(self, state: OpenSpielState, joint: Mapping[int, int]) -> OpenSpielState:
        s = self.live(state).clone()
        if s.is_simultaneous_node():
            move: Move = tuple(int(joint[p]) for p in self._everyone)
            s.apply_actions(list(move))
        else:
            ((_, action),) = joint.items()
            move = (int(action),)
            s.apply_action(move[0])
        return self._settle(state.chance_seed, state.history + (move,), s)

    def is_terminal(self, state: OpenSpielState) -> bool:
        return bool(self.live(state).is_terminal())

    def returns(self, state: OpenSpielState) -> list[float]:
        return [float(r) for r in self.live(state).returns()]

    def end_reason(self, state: OpenSpielState) -> EndReason:
        """A game the engine stopped at its move cap and scored as a draw is a truncation; a
        game decided on the last allowed move keeps its result."""
        if (
            self.os_title.engine_cap
            and self.decisions(state) >= self.os_game.max_game_length()
            and len(set(self.returns(state))) == 1
        ):
            return EndReason.TURN_CAP
        return EndReason.NATURAL

    def decisions(self, state: OpenSpielState) -> int:
        """OpenSpiel decision nodes passed (chance outcomes not counted)."""
        return len(state.history) - self._chance_moves(state)

    def _chance_moves(self, state: OpenSpielState) -> int:
        s = self.os_game.new_initial_state()
        n = 0
        for move in state.history:
            if s.is_chance_node():
                n += 1
                s.apply_action(move[0])
            elif s.is_simultaneous_node():
                s.apply_actions(list(move))
            else:
                s.apply_action(move[0])
        return n

    def observation(self, state: OpenSpielState, player: int) -> dict[str, Any]:
        s = self.live(state)
        out: dict[str, Any] = {"player": player}
        if self._obs_string:
            out["observation"] = s.observation_string(player)
        if self._info_string:
            out["information_state"] = s.information_state_string(player)
        if not self._obs_string and not self._info_string:
            out["state"] = str(s)
        return out

    def encode_observation(self, state: OpenSpielState, player: int) -> np.ndarray:
        if not self._tensor:
            return np.zeros(1, dtype=np.float32)
        return np.asarray(getattr(self.live(state), self._tensor)(player), dtype=np.float32)

    def action_id(self, action: int) -> int:
        return int(action)

    def action_from_id(self, index: int) -> int:
        if not 0 <= int(index) < self.num_actions:
            raise ValueError(f"{self.spec.id} has actions 0..{self.num_actions - 1}, not {index}")
        return int(index)

    def action_label(self, state: OpenSpielState, player: int, action: int) -> str:
        """OpenSpiel's own name of ``action`` for ``player`` at ``state`` (e.g. ``x(1,1)``, ``Raise``)."""
        return str(self.live(state).action_to_string(player, int(action)))

    def rules_text(self) -> str:
        return self.spec.description

    def text_view(self) -> Any:
        from .text import OpenSpielTextView

        return OpenSpielTextView()

    def views(self) -> Mapping[str, Callable[[], Any]]:
        """The core's views, and ``"human"``: OpenSpiel's own string for the seat (its board or cards)."""
        from .text import OpenSpielHumanView

        return {**super().views(), "human": OpenSpielHumanView}


class ResamplingOpenSpielGame(OpenSpielGame):
    """A title whose OpenSpiel game implements ``ResampleFromInfostate`` (sequential games only):
    its hidden-state sampler."""

    def sample_hidden_state(self, state: OpenSpielState, player: int, rng: np.random.Generator) -> OpenSpielState:
        """OpenSpiel's ``resample_from_infostate`` (a terminal state is returned as it is: the
        resampler is defined at decision nodes only)."""
        live = self.live(state)
        if live.is_terminal():
            return state
        sampled = live.resample_from_infostate(player, lambda: float(rng.random()))
        history = tuple((int(a),) for a in sampled.history())
        out = OpenSpielState(int(rng.integers(2**62)), history)
        self._remember(out, sampled)
        return out


#: every class made, by (class name, title): unpickling finds the same class object
_CLASSES: dict[tuple[object, ...], type[OpenSpielGame]] = {}


def _class_key(name: str, title: Title) -> tuple[object, ...]:
    options = tuple(sorted(title.options.items()))
    return (name, title.name, options, title.players, title.engine_cap, title.resample)


def title_class(name: str, title: Title) -> type[OpenSpielGame]:
    """The Arena game class of one OpenSpiel title (what the entry points name); the same
    arguments give the same class."""
    made = _CLASSES.get(_class_key(name, title))
    if made is not None:
        return made
    spec, num_actions, size = spec_of(title)
    attrs = {
        "os_title": title,
        "spec": spec,
        "num_actions": num_actions,
        "observation_size": size,
        "__module__": "arena_games.openspiel.titles",
        "__qualname__": name,
        "__doc__": spec.description,
    }
    perfect = spec.information is Information.PERFECT
    made = type(name, (ResamplingOpenSpielGame if title.resample and not perfect else OpenSpielGame,), attrs)
    _CLASSES[_class_key(name, title)] = made
    return made


_MADE: dict[tuple[str, tuple[tuple[str, OptionValue], ...]], type[OpenSpielGame]] = {}


def openspiel_game(name: str, **options: OptionValue) -> type[OpenSpielGame]:
    """The Arena game class of any OpenSpiel game by its ``pyspiel`` name and parameters
    (e.g. ``openspiel_game("pig", horizon=10)``); the same arguments give the same class.
    Titles outside :data:`arena_games.openspiel.titles.TITLES` are offered at their default
    player count, without a hidden-state sampler and without an engine cap."""
    if name not in pyspiel.registered_names():
        raise ConfigError(f"{name!r} is not an OpenSpiel game; see pyspiel.registered_names()")
    key = (name, tuple(sorted(options.items())))
    made = _MADE.get(key)
    if made is None:
        known = TITLES.get(name)
        players = None
        if known is not None and "players" not in options:
            players = known.players
        title = Title(
            name,
            dict(options),
            players=players,
            engine_cap=known.engine_cap if known else False,
            resample=known.resample if known else False,
        )
        made = _MADE[key] = title_class("made_" + name, title)
    return made


def _rebuild(qualname: str, title: Title, num_players: int) -> OpenSpielGame:
    return title_class(qualname, title)(None, num_players=num_players)
