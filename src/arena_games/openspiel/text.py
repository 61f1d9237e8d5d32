"""The views of an OpenSpiel title: OpenSpiel's own strings.

The prompt shows the observation string OpenSpiel gives the player (or, for a game without
one, its information-state string) and the legal actions by OpenSpiel's names for them
(``x(1,1)``, ``Raise``); an answer names one of those (read by
:func:`arena_core.text.parse_choice`). Where two legal actions share a name, each is shown as
``<id>: <name>`` and answered by that whole string. The human view (``arena play --show``, the
human player) shows the same string as it is: OpenSpiel's board or cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena_core.game import Game, Position
from arena_core.text import ParseResult, Prompt, parse_choice


def legal_names(game: Game[Any, Any], pos: Position[Any], player: int) -> dict[str, int]:
    """OpenSpiel's name of each legal action of ``player`` -> the action (names made unique)."""
    actions = [int(a) for a in game.legal(pos, player)]
    names = [game.action_label(pos.state, player, a) for a in actions]
    if len(set(names)) != len(names):
        names = [f"{a}: {n}" for a, n in zip(actions, names)]
    return dict(zip(names, actions))


@dataclass(frozen=True)
class OpenSpielTextView:
    """Prompt from OpenSpiel's observation string; answers are OpenSpiel's action names."""

    answer_instruction: str = (
        "Think briefly, then end your answer with one line holding exactly one of the legal actions."
    )

    def prompt(self, game: Game[Any, Any], pos: Position[Any], player: int) -> Prompt:
        seen = seen_by(game, pos, player)
        legal = tuple(legal_names(game, pos, player))
        system = (
            f"You are playing {game.spec.id} as player {player} of {game.num_players}.\n"
            f"{game.rules_text()}\n{self.answer_instruction}"
        )
        user = f"What you see (OpenSpiel's view for player {player}):\n{seen}\nLegal actions: " + ", ".join(legal)
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult:
        return parse_choice(
            text, legal_names(game, pos, player), default=lambda: game.default_action(pos.state, player)
        )


def seen_by(game: Game[Any, Any], pos: Position[Any], player: int) -> str:
    """OpenSpiel's string for ``player``: its observation, else its information state, else the state."""
    obs = game.observe(pos, player)
    return str(obs.get("observation") or obs.get("information_state") or obs.get("state", ""))


@dataclass(frozen=True)
class OpenSpielHumanView:
    """What a person reads at a seat: OpenSpiel's own string for it (the board, the cards, the bids)."""

    def render(self, game: Game[Any, Any], pos: Position[Any], player: int) -> str:
        return "\n".join(line.rstrip() for line in seen_by(game, pos, player).rstrip("\n").splitlines())
