"""The rules protocol, and the base class that owns the invariants (docs/core.md).

A game fills in the rules hooks over an immutable state (``initial_state``, ``to_move``,
``legal_actions``, ``next_state``, ``is_terminal``, ``returns``, ``observation``, the action ids,
``encode_observation``) and may override the optional hooks and declarations, each declared here
with a typed default. The machinery (every ``@final`` method) works on a :class:`Position` and
owns the invariants, so no game re-implements them:

- a deal is the seed's: ``start(seed)`` draws every chance outcome from ``deal_rng(seed)``;
- legality has one place: ``act`` refuses an action outside ``legal_actions`` (``IllegalActionError``),
  a player not to move (``NotYourTurnError``) and any action after the end (``GameOverError``);
  the mask is derived from the same legal set;
- simultaneous moves are committed one by one and revealed at once (``Position.pending``);
- a terminal position absorbs: no one is to act, the mask is empty, ``final_returns`` is read there;
- positions serialise and replay (``position_to_json``/``position_from_json``), and ``describe``
  states the spec the kit checks the game against.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, final

import numpy as np
from pydantic import ValidationError

from .episode import EndReason
from .errors import (
    GameOverError,
    IllegalActionError,
    InvalidParamsError,
    NotYourTurnError,
    PlayerCountError,
    SerializationError,
)
from .seeding import deal_rng
from .serial import from_jsonable, to_jsonable
from .spec import GameParams, GameSpec, Information, NoParams

S = TypeVar("S")
A = TypeVar("A")


@dataclass(frozen=True, slots=True, init=False)
class Position(Generic[S]):
    """A game state plus the commitments made so far in the current simultaneous move."""

    state: S
    pending: tuple[tuple[int, Any], ...] = ()
    ply: int = 0

    def __init__(self, state: S, pending: tuple[tuple[int, Any], ...] = (), ply: int = 0):
        # one is built per action: the slots are written directly, at half the cost of the
        # frozen dataclass __init__ (object.__setattr__ per field)
        _set_state(self, state)
        _set_pending(self, pending)
        _set_ply(self, ply)

    def committed(self) -> frozenset[int]:
        return frozenset(p for p, _ in self.pending)


_set_state, _set_pending, _set_ply = Position.state.__set__, Position.pending.__set__, Position.ply.__set__  # type: ignore[attr-defined,misc]  # the slots' descriptors


class Game(ABC, Generic[S, A]):
    """Base class of every game: override the rules hooks and optional declarations, never the
    machinery (marked ``@final``)."""

    spec: ClassVar[GameSpec]
    Params: ClassVar[type[GameParams]] = NoParams
    #: size of the discrete action-index space (the mask length)
    num_actions: int

    # optional declarations --------------------------------------------------------
    #: the state type, read by the default :meth:`state_from_json` (None: override that method)
    State: ClassVar[type[Any] | None] = None
    #: length of :meth:`encode_observation`'s vector (0: not declared; the numeric encoding
    #: is then unusable, e.g. by the policy-gradient trainer)
    observation_size: int = 0
    #: ``(low, high)`` bounding every value of :meth:`encode_observation` (scalars, or arrays
    #: of ``observation_size``); the Gymnasium/PettingZoo spaces are ``Box(low, high)``
    observation_bounds: tuple[float | np.ndarray, float | np.ndarray] = (-math.inf, math.inf)

    def __init__(self, params: GameParams | Mapping[str, Any] | None = None, *, num_players: int | None = None):
        try:
            if params is None:
                self.params = self.Params()
            elif isinstance(params, self.Params):
                self.params = params
            elif isinstance(params, Mapping):
                self.params = self.Params(**params)
            else:
                raise InvalidParamsError(
                    f"{self.spec.id}: params must be a {self.Params.__name__} or a mapping, got {type(params).__name__}"
                )
        except ValidationError as exc:
            fields = ", ".join(f"{k}={v.default!r}" for k, v in self.Params.model_fields.items()) or "none"
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'params'}: {e['msg']} (got {e.get('input')!r})"
                for e in exc.errors()
            )
            raise InvalidParamsError(
                f"invalid parameters for {self.spec.id}: {problems}; known parameters (defaults): {fields}"
            ) from None
        n = self.default_num_players() if num_players is None else num_players
        if not isinstance(n, int) or not (self.spec.min_players <= n <= self.spec.max_players):
            raise PlayerCountError(
                f"{self.spec.id} is played by {self.spec.min_players}"
                + (f"-{self.spec.max_players}" if self.spec.max_players != self.spec.min_players else "")
                + f" players, not {n}"
            )
        self.num_players = n
        self.setup()

    # ------------------------------------------------------------------ rules hooks
    def setup(self) -> None:
        """Called once after params and num_players are set (precompute tables here)."""

    def default_num_players(self) -> int:
        return self.spec.min_players

    @abstractmethod
    def initial_state(self, rng: np.random.Generator) -> S:
        """The state after the deal; every chance draw comes from ``rng``."""

    @abstractmethod
    def to_move(self, state: S) -> Sequence[int]:
        """The players who must act now (several at a simultaneous move); empty at the end."""

    @abstractmethod
    def legal_actions(self, state: S, player: int) -> Sequence[A]:
        """The canonical legal set of ``player`` (who is to move) in ``state``."""

    @abstractmethod
    def next_state(self, state: S, joint: Mapping[int, A]) -> S:
        """Apply the (already checked) actions of every player in ``to_move(state)``."""

    @abstractmethod
    def is_terminal(self, state: S) -> bool: ...

    @abstractmethod
    def returns(self, state: S) -> Sequence[float]:
        """Each player's return in a terminal state."""

    @abstractmethod
    def observation(self, state: S, player: int) -> dict[str, Any]:
        """What ``player`` sees: a fresh JSON-able dict, nothing hidden from that player."""

    @abstractmethod
    def action_id(self, action: A) -> int:
        """Index of ``action`` in ``range(num_actions)``."""

    @abstractmethod
    def action_from_id(self, index: int) -> A: ...

    @abstractmethod
    def encode_observation(self, state: S, player: int) -> np.ndarray:
        """Flat float32 encoding of ``observation(state, player)`` of length ``observation_size``."""

    # optional hooks --------------------------------------------------------------
    def action_to_str(self, action: A) -> str:
        """Canonical string of an action (unique within any legal set)."""
        return str(action)

    def action_label(self, state: S, player: int, action: A) -> str:
        """What transcripts and people call ``action`` of ``player`` at ``state`` (default: the canonical string)."""
        return self.action_to_str(action)

    def default_action(self, state: S, player: int) -> A:
        """The substitute used by the 'default' illegal-action policy."""
        return self.legal_actions(state, player)[0]

    def legal_mask(self, state: S, player: int) -> np.ndarray:
        """Fast path for the mask of ``player`` (who is to move); must agree with
        ``legal_actions`` (the kit checks it). Override when a game can vectorise it."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        for a in self.legal_actions(state, player):
            m[self.action_id(a)] = 1
        return m

    def is_legal(self, state: S, player: int, action: A) -> bool:
        """Fast legality test; must agree with ``legal_actions`` (the kit checks it)."""
        return action in self.legal_actions(state, player)

    def illegal_reason(self, state: S, player: int, action: Any) -> str | None:
        """Why ``action`` (just rejected) is illegal, in the game's own words, if it can say;
        the match records it with the illegal-action policy event. Called only on rejections."""
        return None

    def sample_hidden_state(self, state: S, player: int, rng: np.random.Generator) -> S:
        """A complete state consistent with everything ``player`` has observed, hidden parts
        drawn from ``rng``. Perfect-information games return the state itself."""
        if self.spec.information is Information.PERFECT:
            return state
        raise NotImplementedError(f"{self.spec.id} does not implement sample_hidden_state")

    def end_reason(self, state: S) -> EndReason:
        """Why a terminal state ended: ``NATURAL`` (the rules), or for a wrapped engine also its own cap
        (``TURN_CAP``), a forfeit or player error (:meth:`end_offender`) or a dead end (``GAME_ERROR``)."""
        return EndReason.NATURAL

    def end_offender(self, state: S) -> int | None:
        """The player responsible for a ``FORFEIT`` or ``PLAYER_ERROR`` ending, if any."""
        return None

    def enumerate_deals(self) -> Sequence[tuple[int, float]] | None:
        """Every deal as ``(deal seed, probability)`` (the probabilities sum to 1), for exact
        evaluation by enumeration; None (the default) when the game cannot list them."""
        return None

    def round_rewards(self, before: S, after: S) -> tuple[float, ...] | None:
        """Per-seat rewards of the move from ``before`` to ``after`` when it settles a round the
        rules verify (Liar's dice: a call costs its loser a die, -1, and keeps one for the other
        party of the call, +1), else None. A game without rounds keeps this default; a game with
        them overrides it (:attr:`has_rounds` then says so). Trainers read it only when asked
        (GRPO's ``reward.kind = "round"``, docs/training.md); the game's outcome stays the reward
        by default and the judge of a result."""
        return None

    def rules_text(self) -> str:
        """The rules as prose, for language-model players."""
        return self.spec.description

    def state_to_json(self, state: S) -> Any:
        return to_jsonable(state)

    def state_from_json(self, data: Any) -> S:
        state_type = self.State
        if state_type is None:
            raise SerializationError(
                f"{self.spec.id}: set the class attribute State (the state type) or override state_from_json"
            )
        state: S = from_jsonable(state_type, data)
        return state

    # views (override by ordinary methods in the class the game registers; see docs/core.md)
    def text_view(self) -> Any:
        """The language-model view of this game (prompt and answer parser)."""
        from .text import GenericTextView

        return GenericTextView()

    def views(self) -> Mapping[str, Callable[[], Any]]:
        """This game's views: name -> zero-argument factory; override as
        ``{**super().views(), "compact": MyView}`` (docs/core.md)."""
        from .views import default_views

        return default_views(self)

    # ------------------------------------------------------------------ machinery
    @final
    @property
    def has_rounds(self) -> bool:
        """Whether the game declares rounds with their own rewards (overrides :meth:`round_rewards`)."""
        return type(self).round_rewards is not Game.round_rewards

    @final
    @property
    def has_hidden_state_sampler(self) -> bool:
        return (
            self.spec.information is Information.PERFECT
            or type(self).sample_hidden_state is not Game.sample_hidden_state
        )

    @final
    def start(self, seed: int) -> Position[S]:
        """The initial position of the deal named by ``seed``."""
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        return Position(self.initial_state(deal_rng(int(seed))))

    @final
    def is_over(self, pos: Position[S]) -> bool:
        return self.is_terminal(pos.state)

    @final
    def players_to_act(self, pos: Position[S]) -> tuple[int, ...]:
        """Players still to act at this decision point, in order."""
        return tuple(self._waiting(pos))

    @final
    def _waiting(self, pos: Position[S]) -> Sequence[int]:
        """:meth:`players_to_act` as whatever sequence ``to_move`` gives (no copy on the hot path)."""
        state = pos.state
        if self.is_terminal(state):
            return ()
        if not pos.pending:
            return self.to_move(state)
        done = pos.committed()
        return tuple(p for p in self.to_move(state) if p not in done)

    @final
    def current_player(self, pos: Position[S]) -> int | None:
        """The next player to act (commit order at a simultaneous move), or None at the end."""
        waiting = self._waiting(pos)
        return waiting[0] if waiting else None

    @final
    def legal(self, pos: Position[S], player: int) -> tuple[A, ...]:
        """The legal set of ``player`` at ``pos``; empty if that player is not to act."""
        if player not in self._waiting(pos):
            return ()
        return tuple(self.legal_actions(pos.state, player))

    @final
    def mask(self, pos: Position[S], player: int) -> np.ndarray:
        """The legality mask over ``range(num_actions)``, derived from :meth:`legal`."""
        if player not in self._waiting(pos):
            return np.zeros(self.num_actions, dtype=np.int8)
        return self.legal_mask(pos.state, player)

    @final
    def act(self, pos: Position[S], player: int, action: A) -> Position[S]:
        """Apply one player's action; simultaneous moves are committed, then revealed at once."""
        waiting = self._waiting(pos)
        if not waiting:
            raise GameOverError(f"{self.spec.id}: the game is over; no more actions")
        if player not in waiting:
            raise NotYourTurnError(f"{self.spec.id}: player {player} is not to act (waiting for {list(waiting)})")
        state = pos.state
        if not self.is_legal(state, player, action):
            legal = ", ".join(self.action_to_str(a) for a in self.legal_actions(state, player))
            raise IllegalActionError(
                f"{self.spec.id}: {self._describe(action)} is not legal for player {player}; legal: {legal}",
                player=player,
                action=action,
            )
        if len(waiting) > 1:
            return Position(state, pos.pending + ((player, action),), pos.ply + 1)
        if pos.pending:
            joint = dict(pos.pending)
            joint[player] = action
        else:
            joint = {player: action}
        return Position(self.next_state(state, joint), (), pos.ply + 1)

    @final
    def act_id(self, pos: Position[S], player: int, index: int) -> Position[S]:
        """:meth:`act` with an action index (as RL code and the AEC env submit)."""
        try:
            action = self.action_from_id(int(index))
        except (ValueError, IndexError, KeyError) as exc:
            raise IllegalActionError(
                f"{self.spec.id}: action index {index!r} is not an action ({exc})", player=player
            ) from None
        return self.act(pos, player, action)

    @final
    def observe(self, pos: Position[S], player: int) -> dict[str, Any]:
        """``player``'s observation; pending commitments are never visible."""
        return self.observation(pos.state, player)

    @final
    def final_returns(self, pos: Position[S]) -> tuple[float, ...]:
        if not self.is_terminal(pos.state):
            raise GameOverError(f"{self.spec.id}: returns are defined only at the end of the game")
        return tuple(float(r) for r in self.returns(pos.state))

    @final
    def action_from_str(self, pos: Position[S], player: int, text: str) -> A:
        """The legal action whose canonical string is ``text`` (case- and space-insensitive)."""
        want = " ".join(text.split()).lower()
        for a in self.legal(pos, player):
            if " ".join(self.action_to_str(a).split()).lower() == want:
                return a
        legal = ", ".join(self.action_to_str(a) for a in self.legal(pos, player))
        raise IllegalActionError(
            f"{self.spec.id}: {text!r} is not a legal action for player {player}; legal: {legal}", player=player
        )

    @final
    def position_to_json(self, pos: Position[S]) -> dict[str, Any]:
        return {
            "state": self.state_to_json(pos.state),
            "pending": [[p, self.action_id(a)] for p, a in pos.pending],
            "ply": pos.ply,
        }

    @final
    def position_from_json(self, data: Mapping[str, Any]) -> Position[S]:
        pending = tuple((int(p), self.action_from_id(int(i))) for p, i in data.get("pending", ()))
        return Position(self.state_from_json(data["state"]), pending, int(data.get("ply", 0)))

    @final
    def describe(self) -> dict[str, Any]:
        """The spec, parameters and player count as JSON-able data."""
        return {
            "spec": json.loads(self.spec.model_dump_json()),
            "params": self.params.model_dump(mode="json"),
            "num_players": self.num_players,
        }

    @final
    def _describe(self, action: Any) -> str:
        try:
            return repr(self.action_to_str(action))
        except Exception:  # a foreign object: describe it without trusting it
            return repr(action)

    def __repr__(self) -> str:
        params = self.params.model_dump()
        return f"{type(self).__name__}({params or ''}{', ' if params else ''}num_players={self.num_players})"
