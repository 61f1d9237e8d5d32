"""Small games used by the core tests: a simultaneous one and a three-player sequential one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field

from arena_core import Game, GameParams, GameSpec, Information, TurnStructure, Utility


class RoundsParams(GameParams):
    rounds: int = Field(default=3, ge=1, le=20)


@dataclass(frozen=True, slots=True)
class PenniesState:
    round: int
    score: tuple[int, int]
    last: tuple[int, ...] = ()


class RepeatedPennies(Game[PenniesState, int]):
    """Matching pennies over several rounds, both players choose at once each round."""

    spec = GameSpec(
        id="test_pennies",
        min_players=2,
        max_players=2,
        turn_structure=TurnStructure.SIMULTANEOUS,
        information=Information.IMPERFECT,
        utility=Utility.ZERO_SUM,
        max_length=40,
        reward_bounds=(-20, 20),
        description="Each round both choose heads or tails at once; player 0 wins the round on a match.",
    )
    Params = RoundsParams
    State = PenniesState
    num_actions = 2
    observation_size = 3
    observation_bounds = (-20.0, 20.0)

    def initial_state(self, rng):
        return PenniesState(0, (0, 0))

    def to_move(self, state):
        return () if state.round >= self.params.rounds else (0, 1)

    def legal_actions(self, state, player):
        return (0, 1)

    def next_state(self, state, joint):
        match = joint[0] == joint[1]
        s0, s1 = state.score
        return PenniesState(state.round + 1, (s0 + 1, s1) if match else (s0, s1 + 1), (joint[0], joint[1]))

    def is_terminal(self, state):
        return state.round >= self.params.rounds

    def returns(self, state):
        d = state.score[0] - state.score[1]
        return (float(d), float(-d))

    def observation(self, state, player):
        return {"round": state.round, "score": list(state.score), "last": list(state.last)}

    def encode_observation(self, state, player):
        return np.array([state.round, *state.score], dtype=np.float32)

    def action_id(self, action):
        return action

    def action_from_id(self, index):
        if index not in (0, 1):
            raise ValueError(index)
        return index

    def action_to_str(self, action):
        return ("heads", "tails")[action]

    def sample_hidden_state(self, state, player, rng):
        return state  # only commitments are hidden, and the core keeps those out of observations


@dataclass(frozen=True, slots=True)
class CountState:
    total: int
    to_play: int
    last: int | None = None


class CountToTwenty(Game[CountState, int]):
    """Three players add 1-3 in turn; whoever reaches 20 scores 2, the others -1."""

    spec = GameSpec(
        id="test_count20",
        min_players=2,
        max_players=3,
        utility=Utility.GENERAL_SUM,
        max_length=20,
        reward_bounds=(-1, 2),
        description="Add 1 to 3 in turn; reaching 20 wins.",
    )
    State = CountState
    num_actions = 3
    observation_size = 2
    observation_bounds = (0.0, 20.0)

    def default_num_players(self):
        return 3

    def initial_state(self, rng):
        return CountState(0, 0)

    def to_move(self, state):
        return () if state.total >= 20 else (state.to_play,)

    def legal_actions(self, state, player):
        return tuple(range(1, min(3, 20 - state.total) + 1))

    def next_state(self, state, joint):
        add = joint[state.to_play]
        return CountState(state.total + add, (state.to_play + 1) % self.num_players, state.to_play)

    def is_terminal(self, state):
        return state.total >= 20

    def returns(self, state):
        return tuple(2.0 if p == state.last else -1.0 for p in range(self.num_players))

    def observation(self, state, player):
        return {"total": state.total, "to_play": state.to_play}

    def encode_observation(self, state, player):
        return np.array([state.total, state.to_play], dtype=np.float32)

    def action_id(self, action):
        return action - 1

    def action_from_id(self, index):
        if index not in (0, 1, 2):
            raise ValueError(index)
        return index + 1

    def action_to_str(self, action):
        return f"add {action}"
