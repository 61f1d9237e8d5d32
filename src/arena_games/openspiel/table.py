"""The OpenSpiel titles offered as Arena games, as data: :class:`Title` and :data:`TITLES`
(the classes are made in :mod:`.titles`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: OpenSpiel parameter values (what ``pyspiel.load_game`` accepts)
OptionValue = bool | int | float | str


@dataclass(frozen=True)
class Title:
    """How one OpenSpiel game is offered: its name, options and what the table knows of it."""

    name: str
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    #: the player counts offered (OpenSpiel's ``players`` parameter); None: the game's default only
    players: tuple[int, int] | None = None
    #: the engine ends a game at ``max_game_length`` by its own cap and scores it as a draw:
    #: such an ending (a draw at the cap) is a truncation here
    engine_cap: bool = False
    #: OpenSpiel implements ``ResampleFromInfostate`` for this game (the hidden-state sampler)
    resample: bool = False


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
        Title("oshi_zumo", {"coins": 10, "horizon": 20}),  # at the horizon the rules score the position
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
