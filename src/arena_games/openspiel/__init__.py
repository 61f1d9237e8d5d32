"""OpenSpiel and Arena, both ways (the ``openspiel`` extra: ``pip install turn-arena-games[openspiel]``).

- OpenSpiel games as Arena games: the titles in :mod:`.titles` are registered as
  ``openspiel/<name>``; any other ``pyspiel`` name plays through :func:`openspiel_game`.
- Arena games as OpenSpiel games: :func:`as_pyspiel_game` gives a ``pyspiel`` game for any
  Arena game whose chance can be enumerated, so OpenSpiel's CFR, best response and
  exploitability run on it (docs/openspiel.md).
"""

from .bridge import OpenSpielGame, OpenSpielState, openspiel_game
from .export import ArenaPolicy, as_pyspiel_game, perfect_recall_violation
from .table import TITLES, Title
from .text import OpenSpielTextView

__all__ = [
    "ArenaPolicy",
    "OpenSpielGame",
    "OpenSpielState",
    "OpenSpielTextView",
    "TITLES",
    "Title",
    "as_pyspiel_game",
    "openspiel_game",
    "perfect_recall_violation",
]
