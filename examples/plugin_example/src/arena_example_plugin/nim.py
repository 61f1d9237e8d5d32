"""Nim with one pile: a complete Arena game in a few lines."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field

from arena_core import Game, GameParams, GameSpec, Utility


class NimParams(GameParams):
    stones: int = Field(default=15, ge=1, le=100)
    max_take: int = Field(default=3, ge=1, le=10)


@dataclass(frozen=True, slots=True)
class NimState:
    stones: int
    to_play: int
    winner: int | None = None


class Nim(Game[NimState, int]):
    spec = GameSpec(
        id="example_nim",
        min_players=2,
        max_players=2,
        utility=Utility.ZERO_SUM,
        max_length=100,
        reward_bounds=(-1.0, 1.0),
        description="One pile of stones; take 1 to max_take stones in turn; taking the last stone wins.",
    )
    Params = NimParams
    State = NimState
    observation_bounds = (0.0, 1.0)

    def setup(self) -> None:
        self.num_actions = self.params.max_take
        self.observation_size = 2

    def initial_state(self, rng: np.random.Generator) -> NimState:
        return NimState(stones=self.params.stones, to_play=0)

    def to_move(self, state):
        return () if state.winner is not None else (state.to_play,)

    def legal_actions(self, state, player):
        return tuple(range(1, min(self.params.max_take, state.stones) + 1))

    def next_state(self, state, joint):
        take = joint[state.to_play]
        left = state.stones - take
        return NimState(left, 1 - state.to_play, state.to_play if left == 0 else None)

    def is_terminal(self, state):
        return state.winner is not None

    def returns(self, state):
        return tuple(1.0 if p == state.winner else -1.0 for p in range(2))

    def observation(self, state, player):
        return {"stones": state.stones, "max_take": self.params.max_take}

    def encode_observation(self, state, player):
        return np.array([state.stones / self.params.stones, player], dtype=np.float32)

    def action_id(self, action):
        return action - 1

    def action_from_id(self, index):
        if not 0 <= index < self.params.max_take:
            raise ValueError(f"index {index} out of range")
        return index + 1

    def action_to_str(self, action):
        return f"take {action}"
