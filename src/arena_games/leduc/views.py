"""Leduc poker's compact view (the ``"compact"`` entry of ``arena_games.leduc.LeducPoker.views()``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena_core.game import Game, Position
from arena_core.views import Menu

LEDUC_LABELS = ("f", "c", "r")  # fold, call, raise: single bytes
LEDUC_HISTORY = {"call": "k", "raise": "u"}  # past actions in other letters than the answers


@dataclass(frozen=True)
class LeducCompactView:
    """``"leduc <seat> <round 1>/<round 2> <public or -> <card>"``; the answer is ``f``, ``c`` or
    ``r``. The private card comes last, as in Kuhn's compact view."""

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        obs = game.observe(pos, player)
        rounds = "/".join("".join(LEDUC_HISTORY[a] for a in r) or "-" for r in obs["rounds"])
        actions = tuple(game.legal(pos, player))
        labels = tuple(LEDUC_LABELS[game.action_id(a)] for a in actions)
        return Menu(
            f"leduc {player} {rounds} {obs['public'] or '-'} {obs['card']}", actions, labels, (True,) * len(actions)
        )
