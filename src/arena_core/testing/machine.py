"""A hypothesis state machine that plays, clones, serialises and replays a game, checking the
protocol's invariants after every step; subclass it, set ``game``, add invariants (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
from typing import Any, ClassVar

try:
    from hypothesis import strategies as st
except ImportError:  # say what to install, not just what is missing
    raise ImportError("arena_core.testing.machine needs hypothesis: pip install hypothesis") from None
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ..episode import digest
from ..errors import GameOverError, IllegalActionError, NotYourTurnError
from ..game import Game, Position
from .strategies import Playthrough, _report, illegal_actions, legal_actions, seeds

__all__ = ["GameStateMachine"]


def _view(game: Game[Any, Any], pos: Position[Any]) -> str:
    """Everything every player can see and do at ``pos``, as one digest."""
    return digest(
        [[game.observe(pos, p), [game.action_to_str(a) for a in game.legal(pos, p)]] for p in range(game.num_players)]
        + [list(game.players_to_act(pos)), pos.ply]
    )


class GameStateMachine(RuleBasedStateMachine):
    """Plays one game per run; subclass it, set ``game``, add ``@invariant()`` methods that read
    ``game``, ``seed``, ``position``, ``moves`` (``(seat, action)`` so far) and ``playthrough``."""

    game: ClassVar[Game[Any, Any]]
    #: where a failing run's episode is written (default: ``$ARENA_FAILING_EPISODES``)
    save_failing_to: ClassVar[str | os.PathLike[str] | None] = None

    def __init__(self) -> None:
        super().__init__()
        if not isinstance(getattr(type(self), "game", None), Game):
            raise TypeError(f"{type(self).__name__} must set the class attribute `game` to a Game instance")
        self.seed = 0
        self.position: Position[Any] | None = None
        self.moves: list[tuple[int, Any]] = []
        self._positions: list[Position[Any]] = []

    @property
    def playthrough(self) -> Playthrough:
        return Playthrough(self.game, self.seed, tuple(self.moves), tuple(self._positions))

    @property
    def over(self) -> bool:
        return self.position is not None and self.game.is_over(self.position)

    def _running(self) -> bool:
        return self.position is not None and not self.game.is_over(self.position)

    def _here(self) -> Position[Any]:
        assert self.position is not None  # every rule's precondition: a deal was made
        return self.position

    def _to_act(self, pos: Position[Any]) -> int:
        seat = self.game.current_player(pos)
        assert seat is not None  # the rule's precondition: the game is running
        return seat

    # ------------------------------------------------------------------ rules
    @initialize(seed=seeds())
    def deal(self, seed: int) -> None:
        self.seed = seed
        self.position = self.game.start(seed)
        self.moves, self._positions = [], [self.position]

    @precondition(lambda self: self._running() and len(self.moves) < self.game.spec.max_length)
    @rule(data=st.data())
    def play_legal(self, data: st.DataObject) -> None:
        """The player to act plays one of its legal actions."""
        pos = self._here()
        seat = self._to_act(pos)
        action = data.draw(legal_actions(self.game, pos, seat), label=f"action of player {seat}")
        self.position = self.game.act(pos, seat, action)
        self.moves.append((seat, action))
        self._positions.append(self.position)

    @precondition(lambda self: self.position is not None)
    @rule(data=st.data())
    def illegal_is_rejected(self, data: st.DataObject) -> None:
        """An illegal action (or acting out of turn, or after the end) raises and changes nothing."""
        game, before = self.game, self._here()
        seat = data.draw(st.integers(0, game.num_players - 1), label="seat")
        strategy = illegal_actions(game, before, seat)
        if strategy.is_empty:
            return
        action = data.draw(strategy, label="illegal action")
        seen = _view(game, before)
        with contextlib.suppress(IllegalActionError, NotYourTurnError, GameOverError):
            game.act(before, seat, action)
            raise AssertionError(
                f"player {seat}'s illegal action {game._describe(action)} was accepted at ply {before.ply}"
            )
        if _view(game, before) != seen:
            raise AssertionError(
                f"a rejected action changed the position at ply {before.ply} (act must not mutate its input)"
            )

    @precondition(lambda self: self._running())
    @rule(data=st.data())
    def clone_plays_the_same(self, data: st.DataObject) -> None:
        """A deep copy of the position, given the same action, gives the same next position."""
        game, pos = self.game, self._here()
        seat = self._to_act(pos)
        action = data.draw(legal_actions(game, pos, seat), label=f"probe action of player {seat}")
        clone = copy.deepcopy(pos)
        if _view(game, clone) != _view(game, pos):
            raise AssertionError(f"a deep copy of the position at ply {pos.ply} shows something different")
        if _view(game, game.act(clone, seat, action)) != _view(game, game.act(pos, seat, action)):
            raise AssertionError(f"the same action on a clone of ply {pos.ply} gives a different position")

    @precondition(lambda self: self.position is not None)
    @rule()
    def continue_from_json(self) -> None:
        """Round-trip the position through JSON and play on from the restored copy."""
        game, pos = self.game, self._here()
        restored = game.position_from_json(json.loads(json.dumps(game.position_to_json(pos))))
        if _view(game, restored) != _view(game, pos):
            raise AssertionError(f"the position at ply {pos.ply} looks different after a JSON round trip")
        self.position = self._positions[-1] = restored

    @precondition(lambda self: self.position is not None)
    @rule()
    def replay_from_seed(self) -> None:
        """The seed and the moves so far reproduce the position."""
        pos = Playthrough.replayed(self.game, self.seed, tuple(self.moves)).final
        if _view(self.game, pos) != _view(self.game, self._here()):
            raise AssertionError(
                f"replaying seed {self.seed} and {len(self.moves)} moves does not reproduce the position"
            )

    # ------------------------------------------------------------------ protocol invariants
    @invariant()
    def protocol_holds(self) -> None:
        if self.position is None:
            return
        game, pos = self.game, self.position
        waiting = game.players_to_act(pos)
        if pos.ply != len(self.moves):
            raise AssertionError(f"ply {pos.ply} after {len(self.moves)} decisions")
        if len(self.moves) > game.spec.max_length:
            raise AssertionError(f"{len(self.moves)} decisions > declared max_length {game.spec.max_length}")
        if game.is_over(pos):
            if waiting or any(game.legal(pos, p) for p in range(game.num_players)):
                raise AssertionError("a player still has legal actions after the end")
            self._check_returns(game.final_returns(pos))
            return
        if not waiting:
            raise AssertionError(f"nobody is to act at ply {pos.ply}, yet the game is not over")
        for p in range(game.num_players):
            legal = game.legal(pos, p)
            if (p in waiting) != bool(legal):
                raise AssertionError(
                    f"player {p} {'is' if p in waiting else 'is not'} to act at ply {pos.ply} but has {len(legal)} legal actions"
                )
            mask = game.mask(pos, p)
            if set(mask.nonzero()[0].tolist()) != {game.action_id(a) for a in legal}:
                raise AssertionError(f"player {p}'s mask at ply {pos.ply} is not its legal set")

    def _check_returns(self, returns: tuple[float, ...]) -> None:
        spec = self.game.spec
        lo, hi = spec.reward_bounds
        if len(returns) != self.game.num_players or not all(
            math.isfinite(r) and lo - 1e-9 <= r <= hi + 1e-9 for r in returns
        ):
            raise AssertionError(f"returns {returns} outside the declared bounds {spec.reward_bounds}")
        if spec.declared_sum is not None and abs(sum(returns) - spec.declared_sum) > 1e-6:
            raise AssertionError(f"returns {returns} do not sum to the declared {spec.declared_sum}")

    def teardown(self) -> None:
        if self.position is not None:
            _report(self.playthrough, self.save_failing_to)
