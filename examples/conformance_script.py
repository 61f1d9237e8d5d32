"""A game author's first run of the conformance kit, from the script that defines the game.

    python examples/conformance_script.py

The class lives in ``__main__``; the kit's cross-process check imports this file by path in its
subprocesses (this block does not run there), so every check runs, none is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena_core import Game, GameSpec, Utility
from arena_core.testing import assert_conformance


@dataclass(frozen=True, slots=True)
class PileState:
    stones: int
    to_play: int
    winner: int | None = None


class TakeAway(Game[PileState, int]):
    """A pile of 5 to 9 stones (the deal); take 1-3 in turn; taking the last stone wins."""

    spec = GameSpec(
        id="take_away",
        min_players=2,
        max_players=2,
        utility=Utility.ZERO_SUM,
        chance=True,
        max_length=9,
        reward_bounds=(-1, 1),
        description="Take 1-3 stones; the last stone wins.",
    )
    State = PileState
    num_actions, observation_size = 3, 2
    observation_bounds = (0.0, 9.0)

    def initial_state(self, rng):
        return PileState(int(rng.integers(5, 10)), 0)

    def to_move(self, s):
        return () if s.winner is not None else (s.to_play,)

    def legal_actions(self, s, p):
        return tuple(range(1, min(3, s.stones) + 1))

    def next_state(self, s, joint):
        left = s.stones - joint[s.to_play]
        return PileState(left, 1 - s.to_play, s.to_play if left == 0 else None)

    def is_terminal(self, s):
        return s.winner is not None

    def returns(self, s):
        return (1.0, -1.0) if s.winner == 0 else (-1.0, 1.0)

    def observation(self, s, p):
        return {"stones": s.stones, "to_play": s.to_play}

    def encode_observation(self, s, p):
        return np.array([s.stones, s.to_play], dtype=np.float32)

    def action_id(self, a):
        return a - 1

    def action_from_id(self, i):
        if i not in (0, 1, 2):
            raise ValueError(f"no action with index {i}")
        return i + 1


if __name__ == "__main__":
    results = assert_conformance(TakeAway(), max_examples=10)
    print(", ".join(f"{r.name} {r.status}" for r in results))
    print(f"{sum(r.status == 'passed' for r in results)}/{len(results)} checks passed")
