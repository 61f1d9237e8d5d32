"""Importing this module registers every exportable Arena game with ``pyspiel`` (as importing
``open_spiel.python.games`` registers OpenSpiel's Python games), so that
``pyspiel.load_game("arena_kuhn_poker")`` works in a process that has exported nothing yet:

    import arena_games.openspiel.pyspiel_games  # noqa: F401
    game = pyspiel.load_game("arena_leduc_poker")

It loads every installed game class (TextArena's titles import TextArena: a few seconds). To
register a few games only, call :func:`arena_games.openspiel.export.register` with their classes.
Unpickling an exported game or state needs none of this: the pickle registers its game.
"""

from __future__ import annotations

from .export import register_all

#: {game id: OpenSpiel short name} of the games registered by this import
REGISTERED = register_all()
