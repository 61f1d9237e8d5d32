"""The language-model view of a matrix game: the payoff table from the player's own point of
view, the one-shot / no-communication statement, and a parser that reads exactly one label."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena_core.text import ParseResult, Prompt, parse_choice

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Position

    from .rules import MatrixGame, MatrixState

COUNTERPART_TEXT = {
    "copy": "The other player is an independent copy of you: the same model, given the same instructions from its own point of view.",
    "other": "The other player is another independent decision maker, given the same instructions from its own point of view.",
}


def rules_text(game: MatrixGame) -> str:
    return (
        f"This is a one-shot game between you and one other player. Each of you privately chooses one of {game.k} "
        "options, identified by labels. You both choose at the same time; neither of you sees the other's choice "
        "before choosing, and there is no communication of any kind. The game is played exactly once. "
        "Your payoff depends on both choices, as the payoff table shows."
    )


def _fmt(x: float) -> str:
    return f"{x:g}"


def payoff_table(labels: list[str], own: list[list[float]], other: list[list[float]]) -> str:
    """A markdown table: rows are your choice, columns the other player's, cells (yours, theirs)."""
    header = "| your choice \\ other's choice | " + " | ".join(labels) + " |"
    rule = "|---|" + "---|" * len(labels)
    rows = [
        f"| {labels[r]} | " + " | ".join(f"{_fmt(own[r][c])}, {_fmt(other[r][c])}" for c in range(len(labels))) + " |"
        for r in range(len(labels))
    ]
    return "\n".join([header, rule, *rows])


@dataclass(frozen=True)
class MatrixTextView:
    """Prompt: rules, counterpart statement, optional role cue, table; answer: one label
    (read strictly; ``lenient=True`` is the opt-in benchmark-compatible reading)."""

    lenient: bool = False

    def prompt(self, game: MatrixGame, pos: Position[MatrixState], player: int) -> Prompt:
        obs = game.observe(pos, player)
        labels = obs["labels"]
        system_parts = [rules_text(game), COUNTERPART_TEXT[obs["counterpart"]]]
        if obs["role"] is not None:
            system_parts.append(f"You are {obs['role']}; the other player is Player {2 - player}.")
        system_parts.append("Answer with exactly one label. End your answer with a line of the form 'Answer: <label>'.")
        user = (
            "Payoff table. Rows are your choice, columns are the other player's choice; each cell gives "
            "(your payoff, the other player's payoff).\n\n"
            + payoff_table(labels, obs["own_payoffs"], obs["other_payoffs"])
            + f"\n\nThe options are: {', '.join(labels)}. Which one do you choose?"
        )
        return Prompt(system=" ".join(system_parts), user=user, legal=tuple(labels))

    def parse(self, game: MatrixGame, pos: Position[MatrixState], player: int, text: str) -> ParseResult:
        legal = {game.action_to_str(a): a for a in game.legal(pos, player)}
        return parse_label(text, legal, default=lambda: game.default_action(pos.state, player), lenient=self.lenient)


JSON_KEYS = ("action", "label", "answer", "choice")


def parse_label(text: str, legal: dict[str, int], *, default: Callable[[], int], lenient: bool = False) -> ParseResult:
    """Read one label (keys of ``legal`` are the labels as listed) from ``text`` with the core's
    strict rules (:func:`arena_core.text.parse_choice`): a final line that is exactly a label,
    a JSON object with an "action", "label", "answer" or "choice" key, or ``Answer: X`` with
    nothing but punctuation after it. Letters in prose ("a", "I") are never labels; two
    different labels, hedges and labels only inside a think block are unparseable."""
    return parse_choice(text, legal, default=default, json_keys=JSON_KEYS, lenient=lenient)
