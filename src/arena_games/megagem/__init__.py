"""MegaGem: the native sealed-bid gem auction (MegagemBench rules), its bots and text view."""
from .cards import COLOURS, AUCTION_CARDS, VALUE_CHARTS, CardKind
from .rules import Action, AuctionRecord, Bid, MegaGem, MegaGemParams, MegaGemState, Phase, Reveal, resolve_winner

__all__ = [
    "AUCTION_CARDS", "Action", "AuctionRecord", "Bid", "COLOURS", "CardKind", "MegaGem", "MegaGemParams",
    "MegaGemState", "Phase", "Reveal", "VALUE_CHARTS", "resolve_winner",
]
