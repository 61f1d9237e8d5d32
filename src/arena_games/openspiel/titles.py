"""The OpenSpiel titles registered as Arena games (``openspiel/<name>``), one class each.

Each class is made from its :class:`~.table.Title` in :data:`~.table.TITLES` by :func:`~.bridge.title_class`
(its spec read from OpenSpiel: player counts, chance, information, utility, bounds, length).
Any other ``pyspiel`` name plays through :func:`~.bridge.openspiel_game`.
"""

from __future__ import annotations

from .bridge import title_class
from .table import TITLES

kuhn_poker = title_class("kuhn_poker", TITLES["kuhn_poker"])
leduc_poker = title_class("leduc_poker", TITLES["leduc_poker"])
liars_dice = title_class("liars_dice", TITLES["liars_dice"])
goofspiel = title_class("goofspiel", TITLES["goofspiel"])
tic_tac_toe = title_class("tic_tac_toe", TITLES["tic_tac_toe"])
connect_four = title_class("connect_four", TITLES["connect_four"])
breakthrough = title_class("breakthrough", TITLES["breakthrough"])
hex = title_class("hex", TITLES["hex"])  # OpenSpiel's name (shadows the builtin in this module only)
phantom_ttt = title_class("phantom_ttt", TITLES["phantom_ttt"])
dark_hex = title_class("dark_hex", TITLES["dark_hex"])
pig = title_class("pig", TITLES["pig"])
backgammon = title_class("backgammon", TITLES["backgammon"])
blotto = title_class("blotto", TITLES["blotto"])
first_sealed_auction = title_class("first_sealed_auction", TITLES["first_sealed_auction"])
oshi_zumo = title_class("oshi_zumo", TITLES["oshi_zumo"])
dots_and_boxes = title_class("dots_and_boxes", TITLES["dots_and_boxes"])
nim = title_class("nim", TITLES["nim"])
mancala = title_class("mancala", TITLES["mancala"])
clobber = title_class("clobber", TITLES["clobber"])
othello = title_class("othello", TITLES["othello"])
checkers = title_class("checkers", TITLES["checkers"])
chess = title_class("chess", TITLES["chess"])
tiny_hanabi = title_class("tiny_hanabi", TITLES["tiny_hanabi"])
matrix_rps = title_class("matrix_rps", TITLES["matrix_rps"])
matrix_pd = title_class("matrix_pd", TITLES["matrix_pd"])
euchre = title_class("euchre", TITLES["euchre"])
amazons = title_class("amazons", TITLES["amazons"])
