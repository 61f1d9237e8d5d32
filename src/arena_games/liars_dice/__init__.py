"""Liar's dice, native: TextArena ``LiarsDice-v0``'s rules as pure Python (a differential test
holds the two together), fast enough to train on, and the Liar's dice bots that play both.

:class:`LiarsDice` here is the registered game (``liars_dice``); the bots
(:mod:`.bots`) read any game that says what a seat knows of the round (:class:`RoundViewer`).
"""

from .rules import CALL, LiarsDice, LiarsDiceState, RoundView, RoundViewer, encode_round, encoding_size

__all__ = ["CALL", "LiarsDice", "LiarsDiceState", "RoundView", "RoundViewer", "encode_round", "encoding_size"]
