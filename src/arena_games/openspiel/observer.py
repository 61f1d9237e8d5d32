"""OpenSpiel's observer interface for an exported Arena game (``make_py_observer``).

An Arena game has one observation per seat (``observe``) and, where it declares one, its numeric
encoding (``encode_observation``). OpenSpiel asks for observations by kind
(``pyspiel.IIGObservationType``: public information, whose private information, perfect recall);
this module gives each kind that those two can honestly make, and refuses the others (``None``,
what ``open_spiel.python.observation.make_observation`` returns for a kind a game does not give):

| kind asked | perfect-information game | imperfect-information game |
|---|---|---|
| public + own private (OpenSpiel's observation and information state) | the seat's observation; with perfect recall also the action history | the seat's observation (perfect recall exactly when the game's observation is: ``perfect_recall_violation``) |
| public + every player's private | every seat's observation | every seat's observation |
| public only | the action history (everything is public) | refused: Arena does not split an observation into public and private parts |
| own private only | empty (nothing is private) | refused, likewise |
| neither | empty | empty |

Tensors: ``[one-hot seat] + encode_observation(state, seat)`` (every seat's encoding in turn for
the all-players kind), given only by a game whose encoding tells every two observations of a seat
apart (``observation_size > 0`` and ``spec.observation_is_state``); a perfect-information game
gives no perfect-recall tensor (its encoding is the position, not the history: OpenSpiel's own
tic-tac-toe does the same). Where there is no tensor, ``tensor`` is None and OpenSpiel's
``provides_*_tensor`` says so; asking for it is refused by OpenSpiel with its own error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from arena_core.spec import Information

if TYPE_CHECKING:
    from .export import ArenaGame, ArenaState

OWN, ALL, PUBLIC, PRIVATE, NOTHING = "own", "all", "public", "private", "nothing"


def has_tensor(game: Any) -> bool:
    """Whether the Arena game's numeric encoding can stand for its observations."""
    return bool(game.observation_size > 0 and game.spec.observation_is_state)


def observer_kind(iig_obs_type: Any, *, perfect_information: bool) -> str | None:
    """Which of this module's kinds answers ``iig_obs_type`` (None: the default observation); None
    when the kind cannot be given honestly."""
    if iig_obs_type is None:
        return OWN
    private = iig_obs_type.private_info
    kinds = pyspiel.PrivateInfoType
    if iig_obs_type.public_info:
        if private == kinds.SINGLE_PLAYER:
            return OWN
        if private == kinds.ALL_PLAYERS:
            return ALL
        return PUBLIC if perfect_information else None
    if private == kinds.NONE:
        return NOTHING
    if perfect_information:
        return PRIVATE  # a perfect-information game has no private information: empty
    return None


class ArenaObserver:
    """One kind of observation of an exported game (see the module docstring)."""

    def __init__(self, game: ArenaGame, kind: str, perfect_recall: bool):
        self.kind = kind
        arena = game.arena
        self._perfect = arena.spec.information is Information.PERFECT
        self._history = self._perfect and perfect_recall and kind in (OWN, ALL)
        self._players = arena.num_players
        self.dict: dict[str, np.ndarray] = {}
        self.tensor: np.ndarray | None = None
        if kind in (OWN, ALL) and has_tensor(arena) and not (self._perfect and perfect_recall):
            width = arena.observation_size * (self._players if kind == ALL else 1)
            self.tensor = np.zeros(self._players + width, np.float32)
            self.dict = {"seat": self.tensor[: self._players], "observation": self.tensor[self._players :]}

    def set_from(self, state: ArenaState, player: int) -> None:
        if self.tensor is None:
            return
        self.tensor.fill(0.0)
        pos = state.position
        if pos is None:  # the chance root (OpenSpiel reads the tensor's size there): zeros
            return
        arena = state.arena
        self.tensor[player] = 1.0
        seats = range(self._players) if self.kind == ALL else (player,)
        size, at = arena.observation_size, self._players
        for seat in seats:
            self.tensor[at : at + size] = np.asarray(arena.encode_observation(pos.state, seat), np.float32)
            at += size

    def string_from(self, state: ArenaState, player: int) -> str:
        if self.kind in (PRIVATE, NOTHING):
            return ""
        if self.kind == PUBLIC:
            return json.dumps({"history": state.history()})
        pos = _position(state, player)
        arena = state.arena
        view: dict[str, Any]
        if self.kind == OWN:
            view = {"seat": player, "observation": arena.observe(pos, player)}
        else:
            view = {"seat": player, "observations": [arena.observe(pos, s) for s in range(self._players)]}
        if self._history:
            view["history"] = state.history()
        return json.dumps(view, sort_keys=True)


def _position(state: ArenaState, player: int) -> Any:
    pos = state.position
    if pos is None:
        raise pyspiel.SpielError(
            f"{state.arena.spec.id}: no observation for player {player} at the chance root (the deal is not drawn yet)"
        )
    return pos
