"""MegaGem's compact view (the ``"compact"`` entry of ``MegaGem.views()``): about 40 tokens,
key numbers last, bids on a coarse grid with one character each."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arena_core.game import Game, Position
from arena_core.views import Menu

from .rules import Bid

#: the bids a small model may choose from, one character each (the grid is an action abstraction)
MEGAGEM_BID_GRID = (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 40)
MEGAGEM_BID_LABELS = tuple(string.digits + "abcdefghi")[: len(MEGAGEM_BID_GRID)]
_COLOUR_LETTERS = ("R", "B", "G", "P", "Y")
_CARD_LETTERS = {"treasure": "T", "loan": "L", "investment": "I"}


@dataclass(frozen=True)
class MegaGemCompactView:
    """Display counts, own collection and hand, the card on offer, then the key numbers last
    (own coins, the bid limit, the rival coins). Bids come from :data:`MEGAGEM_BID_GRID`,
    labelled ``0``-``9`` then ``a``-``i``; a reveal is a colour letter."""

    grid: tuple[int, ...] = MEGAGEM_BID_GRID

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        obs = game.observe(pos, player)
        legal = game.legal(pos, player)
        if obs["phase"] == "reveal":
            actions = tuple(legal)
            labels = tuple(_COLOUR_LETTERS[a.colour] for a in actions)
            text = "mg rv " + _counts(obs["hand"]) + " d" + _counts(obs["display_counts"]) + ":"
            return Menu(text, actions, labels, (True,) * len(actions))
        limit = int(obs["bid_limit"])
        bids = [b for b in self.grid if include_illegal or b <= limit]
        actions = tuple(Bid(b) for b in bids)
        labels = tuple(MEGAGEM_BID_LABELS[self.grid.index(b)] for b in bids)
        flags = tuple(b <= limit for b in bids)
        card = obs["current_card"] or {}
        kind = _CARD_LETTERS.get(card.get("type", ""), "?")
        amount = card.get("bonus", card.get("amount", "")) if kind != "T" else ""
        lot = (
            "".join(_COLOUR_LETTERS[_colour_index(c)] for c in obs["pool"][: int(card.get("gems", 0))])
            if kind == "T"
            else ""
        )
        me = obs["players"][player]
        rivals = " ".join(str(p["coins"]) for i, p in enumerate(obs["players"]) if i != player)
        text = (
            f"mg r{obs['round']} d{_counts(obs['display_counts'])} c{_counts(me['collection'])} h{_counts(obs['hand'])}"
            f" {kind}{lot}{amount} o{rivals} m{limit} {me['coins']}:"
        )
        return Menu(text, actions, labels, flags)


def _counts(d: Mapping[str, int]) -> str:
    return "".join(str(min(int(v), 9)) for v in d.values())


def _colour_index(name: str) -> int:
    for i, letter in enumerate(_COLOUR_LETTERS):
        if str(name)[:1].upper() == letter:
            return i
    raise ValueError(f"megagem: {name!r} is not a colour")
