"""Deterministic scripted players."""

from __future__ import annotations

from typing import Any

from arena_core.players import BasePlayer, Decision


class FirstLegalPlayer(BasePlayer):
    """Always plays the first action of the canonical legal set."""

    name = "first_legal"

    def act(self, decision: Decision) -> Any:
        return decision.legal_actions[0]
