"""Scripted Kuhn poker players."""

from __future__ import annotations

from typing import Any

from arena_core.errors import PlayerError
from arena_core.players import BasePlayer, Decision


class KingOnlyPlayer(BasePlayer):
    """Bets or calls with the king; checks or folds otherwise.

    The best response to it earns 1/4 per game over all deals with seats alternating (first to
    act: bet the jack as a bluff, check the queen, fold to a bet; second: bet whenever checked
    to, fold to a bet), while the best policy that ignores its own card earns 1/6."""

    name = "kuhn_king_only"

    def act(self, decision: Decision) -> Any:
        card = decision.observation.get("card")
        if card not in ("J", "Q", "K"):
            raise PlayerError(f"kuhn_king_only plays Kuhn poker only; observation has card={card!r}")
        by_name = {str(a): a for a in decision.legal_actions}
        return by_name["bet" if card == "K" else "pass"]
