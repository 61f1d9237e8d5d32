"""MegaGem: the native sealed-bid gem auction (MegagemBench rules), its bots and text view.

:class:`MegaGem` here is the registered game: the rules (:mod:`.rules`, which import no view)
with the game's views, declared by ordinary method overrides (see docs/core.md, "Views").
"""

from collections.abc import Callable, Mapping
from typing import Any

from . import rules
from .cards import AUCTION_CARDS, COLOURS, VALUE_CHARTS, CardKind
from .residual import ResidualView
from .rules import Action, AuctionRecord, Bid, MegaGemParams, MegaGemState, Phase, Reveal, resolve_winner
from .text import MegaGemTextView, rules_text
from .transcript import MegaGemTranscriptView
from .views import MegaGemCompactView


class MegaGem(rules.MegaGem):
    """MegaGem with its views: the MegagemBench-style text view, the rules text as its options
    set them, ``"compact"`` (:class:`MegaGemCompactView`), ``"transcript"``
    (:class:`MegaGemTranscriptView`) and ``"residual"`` (:class:`ResidualView`, the residual
    student's menu around the expert)."""

    def rules_text(self) -> str:
        return rules_text(self)

    def text_view(self) -> MegaGemTextView:
        return MegaGemTextView()

    def views(self) -> Mapping[str, Callable[[], Any]]:
        return {
            **super().views(),
            "compact": MegaGemCompactView,
            "transcript": MegaGemTranscriptView,
            "residual": ResidualView,
        }


__all__ = [
    "AUCTION_CARDS",
    "Action",
    "AuctionRecord",
    "Bid",
    "COLOURS",
    "CardKind",
    "MegaGem",
    "MegaGemParams",
    "MegaGemState",
    "Phase",
    "Reveal",
    "VALUE_CHARTS",
    "resolve_winner",
]
