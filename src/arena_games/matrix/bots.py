"""Scripted matrix-game players whose welfare has a closed form (for known-answer studies).

Each reads only its own decision (listing, own payoff table); none sees the rotation.
"""

from __future__ import annotations

import numpy as np

from arena_core.players import BasePlayer, Decision


class FirstLabelPlayer(BasePlayer):
    """Always picks the first label of its own listing."""

    name = "matrix_first_label"

    def act(self, decision: Decision) -> int:
        legal: tuple[int, ...] = decision.legal_actions
        return legal[0]


class UniformPlayer(BasePlayer):
    """Picks a label uniformly at random; the draw comes from (seed, episode seed, seat)."""

    name = "matrix_uniform"

    def act(self, decision: Decision) -> int:
        legal: tuple[int, ...] = decision.legal_actions
        return legal[int(decision.rng("matrix_uniform", self.seed).integers(len(legal)))]


class FocalLabelPlayer(BasePlayer):
    """Always picks one fixed label (``matrix_focal:label=C``), whatever the payoffs."""

    name = "matrix_focal"

    def __init__(self, seed: int = 0, label: str = "A"):
        super().__init__(seed)
        self.label = str(label)

    def act(self, decision: Decision) -> str:
        labels = decision.observation["labels"]
        if self.label.lower() not in (lab.lower() for lab in labels):
            raise ValueError(
                f"focal label {self.label!r} is not among the labels {labels}; choose a label the game offers"
            )
        return self.label


class MaxOwnPayoffPlayer(BasePlayer):
    """Picks the label whose row holds its largest own payoff (ties: the first listed)."""

    name = "matrix_max_payoff"

    def act(self, decision: Decision) -> int:
        own = np.asarray(decision.observation["own_payoffs"])
        row = int(np.argmax(own.max(axis=1)))  # argmax returns the first of ties
        legal: tuple[int, ...] = decision.legal_actions
        return legal[row]
