"""MegaGem: the native sealed-bid gem auction (MegagemBench rules), its bots and text view."""

from .cards import AUCTION_CARDS, COLOURS, VALUE_CHARTS, CardKind
from .rules import Action, AuctionRecord, Bid, MegaGem, MegaGemParams, MegaGemState, Phase, Reveal, resolve_winner
from .text import MegaGemTextView, rules_text
from .transcript import MegaGemTranscriptView
from .views import MegaGemCompactView


def _attach_views(game: type[MegaGem]) -> None:
    """The game's views, attached where the game is registered (the entry point names this
    package, and Python runs it before any module in it): the rules (``rules.py``) never
    import their views, so the views may import the rules."""

    def views(self):
        return {**super(game, self).views(), "compact": MegaGemCompactView, "transcript": MegaGemTranscriptView}

    game.rules_text = rules_text  # type: ignore[method-assign, assignment]
    game.text_view = lambda self: MegaGemTextView()  # type: ignore[method-assign]
    game.views = views  # type: ignore[method-assign]


_attach_views(MegaGem)

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
