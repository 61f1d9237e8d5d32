"""Uniformly random legal play, seeded."""

from __future__ import annotations

from typing import Any

from arena_core.players import BasePlayer, Decision


class RandomPlayer(BasePlayer):
    """Picks a legal action uniformly; the draw comes from (player seed, episode seed, seat, ply)."""

    name = "random"

    def act(self, decision: Decision) -> Any:
        legal = decision.legal_actions
        return legal[int(decision.rng("random", self.seed).integers(len(legal)))]
