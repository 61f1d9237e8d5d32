"""A tiny three-player game and players of known strength, for the tournament tests.

Draw-or-stand: each player holds a private card from a 12-card deck (0..11). In seat order,
each player stands or draws (replaces the card with the next card of the deck). The score is
``card // 2``, so ties happen. The right play is to draw a card below 6.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from arena_core.game import Game
from arena_core.players import BasePlayer, Decision
from arena_core.spec import GameSpec, Information, Utility

DECK = 12


@dataclass(frozen=True, slots=True)
class DrawState:
    cards: tuple[int, ...]
    deck: tuple[int, ...]
    turn: int = 0


class DrawOrStand(Game[DrawState, str]):
    spec = GameSpec(
        id="draw_or_stand",
        min_players=3,
        max_players=6,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.GENERAL_SUM,
        max_length=3,
        reward_bounds=(-1.0, 5.0),
        description="Stand or draw once; score is card // 2.",
    )
    State = DrawState
    num_actions = 2
    observation_size = 2

    def initial_state(self, rng: np.random.Generator) -> DrawState:
        order = tuple(int(x) for x in rng.permutation(DECK))
        n = self.num_players
        return DrawState(order[:n], order[n:])

    def to_move(self, state: DrawState) -> tuple[int, ...]:
        return () if state.turn >= self.num_players else (state.turn,)

    def legal_actions(self, state: DrawState, player: int) -> tuple[str, ...]:
        return ("stand", "draw")

    def next_state(self, state: DrawState, joint: Mapping[int, str]) -> DrawState:
        ((player, action),) = joint.items()
        if action == "draw":
            cards = list(state.cards)
            cards[player] = state.deck[0]
            return DrawState(tuple(cards), state.deck[1:], state.turn + 1)
        return DrawState(state.cards, state.deck, state.turn + 1)

    def is_terminal(self, state: DrawState) -> bool:
        return state.turn >= self.num_players

    def returns(self, state: DrawState) -> tuple[float, ...]:
        return tuple(float(c // 2) for c in state.cards)

    def observation(self, state: DrawState, player: int) -> dict:
        return {"card": state.cards[player], "turn": state.turn}

    def action_id(self, action: str) -> int:
        return ("stand", "draw").index(action)

    def action_from_id(self, index: int) -> str:
        return ("stand", "draw")[index]

    def encode_observation(self, state: DrawState, player: int) -> np.ndarray:
        return np.array([state.cards[player], state.turn], dtype=np.float32)


class Skilled(BasePlayer):
    """Plays right with probability ``skill``, else at random; ``delay_s`` slows each decision."""

    name = "skilled"

    def __init__(self, seed: int = 0, skill: float = 1.0, delay_s: float = 0.0):
        super().__init__(seed)
        self.skill, self.delay_s = float(skill), float(delay_s)

    def act(self, decision: Decision) -> str:
        if self.delay_s:
            time.sleep(self.delay_s)
        rng = decision.rng("skilled", self.seed)
        if rng.random() < self.skill:
            return "draw" if decision.observation["card"] < 6 else "stand"
        return ("stand", "draw")[int(rng.integers(2))]


class Crashing(BasePlayer):
    name = "crashing"

    def act(self, decision: Decision) -> str:
        raise RuntimeError("boom")


class Hanging(BasePlayer):
    name = "hanging"

    def act(self, decision: Decision) -> str:
        time.sleep(3600)
        return "stand"


class StubbornHanging(BasePlayer):
    """Hangs and swallows every Exception, as a naive retry loop would."""

    name = "stubborn"

    def act(self, decision: Decision) -> str:
        while True:
            try:
                time.sleep(3600)
            except Exception:
                pass


class Garbage(BasePlayer):
    name = "garbage"

    def act(self, decision: Decision) -> int:
        return 12345  # not an action of the game


def here() -> str:
    return os.path.dirname(os.path.abspath(__file__))
