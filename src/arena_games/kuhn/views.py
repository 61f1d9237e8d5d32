"""Kuhn poker's compact view (the ``"compact"`` entry of ``arena_games.kuhn.KuhnPoker.views()``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena_core.game import Game, Position
from arena_core.views import Menu

KUHN_LABELS = ("p", "b")  # pass, bet: single bytes are always single tokens of a byte-level BPE
KUHN_HISTORY = ("c", "r")  # past actions (check/raise) in other tokens than the answers


@dataclass(frozen=True)
class KuhnCompactView:
    """``"kuhn <seat> <history or -> <card>"``; the answer is ``p`` (pass) or ``b`` (bet).
    The private card comes last and the history uses other letters than the answers (a tiny
    model's last position then depends on the card; see docs/training.md)."""

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        obs = game.observe(pos, player)
        history = "".join(KUHN_HISTORY[0] if h == "pass" else KUHN_HISTORY[1] for h in obs["history"]) or "-"
        actions = tuple(game.legal(pos, player))
        labels = tuple(KUHN_LABELS[game.action_id(a)] for a in actions)
        return Menu(f"kuhn {player} {history} {obs['card']}", actions, labels, (True,) * len(actions))
