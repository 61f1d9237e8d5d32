"""The OpenSpiel titles registered as Arena games (``openspiel/<name>``), one class each.

Each class is made from the :class:`~.bridge.Title` below by :func:`~.bridge.title_class`
(its spec read from OpenSpiel: player counts, chance, information, utility, bounds, length).
Any other ``pyspiel`` name plays through :func:`~.bridge.openspiel_game`.
"""

from __future__ import annotations

from .bridge import Title, title_class

#: name -> how it is offered (player counts, engine cap, whether OpenSpiel can resample hidden state)
TITLES: dict[str, Title] = {
    t.name: t
    for t in (
        Title("kuhn_poker", players=(2, 3), resample=True),
        Title("leduc_poker", resample=True),
        Title("liars_dice"),
        Title("goofspiel", {"num_cards": 5}),
        Title("tic_tac_toe"),
        Title("connect_four"),
        Title("breakthrough", {"rows": 6, "columns": 6}),
        Title("hex", {"board_size": 5}),
        Title("phantom_ttt"),
        Title("dark_hex", {"board_size": 3}),
        Title("pig", {"winscore": 30}, players=(2, 3), engine_cap=True),
        Title("backgammon", engine_cap=True),
        Title("blotto"),
        Title("first_sealed_auction"),
        Title("oshi_zumo", {"coins": 10, "horizon": 20}, engine_cap=True),
        Title("dots_and_boxes"),
        Title("nim"),
        Title("mancala", engine_cap=True),
        Title("clobber", {"rows": 4, "columns": 4}),
        Title("othello"),
        Title("checkers", engine_cap=True),
        Title("chess", engine_cap=True),
        Title("tiny_hanabi"),
        Title("matrix_rps"),
        Title("matrix_pd"),
        Title("euchre", resample=True),
        Title("amazons"),
    )
}

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
