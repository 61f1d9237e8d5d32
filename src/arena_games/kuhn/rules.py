"""Kuhn poker rules: three cards, one each, ante 1, one betting round.

Histories end at: pass-pass (showdown for 1), bet-pass (bettor wins 1),
bet-bet (showdown for 2), pass-bet-pass (bettor wins 1), pass-bet-bet (showdown for 2).

The rules import none of their views: the registered game, ``arena_games.kuhn.KuhnPoker``,
is this class with its views (``arena_games/kuhn/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from arena_core.game import Game
from arena_core.spec import GameSpec, Information, Utility

CARD_NAMES = ("J", "Q", "K")


class KuhnAction(IntEnum):
    PASS = 0
    BET = 1

    def __str__(self) -> str:
        return self.name.lower()


_TERMINAL = {(0, 0), (1, 0), (1, 1), (0, 1, 0), (0, 1, 1)}
_DEAL_SEEDS: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class KuhnState:
    cards: tuple[int, int]
    history: tuple[KuhnAction, ...] = ()


class KuhnPoker(Game[KuhnState, KuhnAction]):
    spec = GameSpec(
        id="kuhn_poker",
        version="1",
        min_players=2,
        max_players=2,
        chance=True,
        information=Information.IMPERFECT,
        utility=Utility.ZERO_SUM,
        max_length=3,
        reward_bounds=(-2.0, 2.0),
        description=(
            "Kuhn poker. A deck of three cards J < Q < K; each player antes 1 chip and gets one "
            "private card. Player 0 acts first. 'pass' checks (or folds facing a bet); 'bet' adds 1 "
            "chip (or calls a bet). Pass-pass and bet-bet go to showdown; the higher card wins the pot. "
            "Passing facing a bet folds."
        ),
    )
    State = KuhnState
    num_actions = 2
    observation_size = 9
    observation_bounds = (0.0, 1.0)

    def initial_state(self, rng: np.random.Generator) -> KuhnState:
        deal = rng.permutation(3)
        return KuhnState(cards=(int(deal[0]), int(deal[1])))

    def to_move(self, state: KuhnState) -> tuple[int, ...]:
        if tuple(state.history) in _TERMINAL:
            return ()
        return (len(state.history) % 2,)

    def legal_actions(self, state: KuhnState, player: int) -> tuple[KuhnAction, ...]:
        return (KuhnAction.PASS, KuhnAction.BET)

    def is_legal(self, state: KuhnState, player: int, action: KuhnAction) -> bool:
        return type(action) is KuhnAction

    def next_state(self, state: KuhnState, joint: Mapping[int, KuhnAction]) -> KuhnState:
        (action,) = joint.values()
        return KuhnState(state.cards, state.history + (action,))

    def is_terminal(self, state: KuhnState) -> bool:
        return tuple(state.history) in _TERMINAL

    def returns(self, state: KuhnState) -> tuple[float, float]:
        h = tuple(state.history)
        if h == (1, 0):
            return (1.0, -1.0)
        if h == (0, 1, 0):
            return (-1.0, 1.0)
        stake = 2.0 if h[-1] == KuhnAction.BET else 1.0  # a call doubles the pot; pass-pass does not
        winner = 0 if state.cards[0] > state.cards[1] else 1
        return (stake, -stake) if winner == 0 else (-stake, stake)

    def observation(self, state: KuhnState, player: int) -> dict[str, Any]:
        return {
            "player": player,
            "card": CARD_NAMES[state.cards[player]],
            "history": [str(a) for a in state.history],
            "pot": 2 + sum(int(a) for a in state.history),
        }

    def encode_observation(self, state: KuhnState, player: int) -> np.ndarray:
        out = np.zeros(9, dtype=np.float32)
        out[state.cards[player]] = 1.0
        for i, a in enumerate(state.history):
            out[3 + 2 * i + int(a)] = 1.0
        return out

    def action_id(self, action: KuhnAction) -> int:
        return int(action)

    def action_from_id(self, index: int) -> KuhnAction:
        return KuhnAction(index)

    def enumerate_deals(self) -> list[tuple[int, float]]:
        """The 6 deals (ordered card pairs), each with probability 1/6, as the deal seed of
        each (the first seed that deals it); used for exact evaluation by enumeration."""
        global _DEAL_SEEDS
        if _DEAL_SEEDS is None:
            found: dict[tuple[int, int], int] = {}
            seed = 0
            while len(found) < 6:
                found.setdefault(self.start(seed).state.cards, seed)
                seed += 1
            _DEAL_SEEDS = tuple(found[c] for c in sorted(found))
        return [(s, 1 / 6) for s in _DEAL_SEEDS]

    def sample_hidden_state(self, state: KuhnState, player: int, rng: np.random.Generator) -> KuhnState:
        own = state.cards[player]
        other = int(rng.choice([c for c in range(3) if c != own]))
        cards = (own, other) if player == 0 else (other, own)
        return KuhnState(cards, state.history)


def nash_policy(alpha: float = 1 / 6) -> Callable[[int, int, tuple[int, ...]], float]:
    """A Nash equilibrium of Kuhn poker (the family parameterised by alpha in [0, 1/3]).

    Returns ``f(player, card, history) -> probability of BET``.
    """
    if not 0 <= alpha <= 1 / 3:
        raise ValueError("alpha must lie in [0, 1/3]")

    def bet_probability(player: int, card: int, history: tuple[int, ...]) -> float:
        h = tuple(int(a) for a in history)
        if player == 0 and h == ():
            return (alpha, 0.0, 3 * alpha)[card]
        if player == 0 and h == (0, 1):
            return (0.0, alpha + 1 / 3, 1.0)[card]
        if player == 1 and h == (0,):
            return (1 / 3, 0.0, 1.0)[card]
        if player == 1 and h == (1,):
            return (0.0, 1 / 3, 1.0)[card]
        raise ValueError(f"no decision for player {player} after {h}")

    return bet_probability
