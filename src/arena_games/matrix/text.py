"""The language-model view of a matrix game: the payoff table from the player's own point of
view, the one-shot / no-communication statement, and a parser that reads exactly one label."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena_core.text import ParseResult, Prompt, json_field

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Position

    from .rules import MatrixGame

COUNTERPART_TEXT = {
    "copy": "The other player is an independent copy of you: the same model, given the same instructions from its own point of view.",
    "other": "The other player is another independent decision maker, given the same instructions from its own point of view.",
}


def rules_text(game: "MatrixGame") -> str:
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
    """Prompt: rules, counterpart statement, optional role cue, table; answer: one label."""

    def prompt(self, game: "MatrixGame", pos: "Position", player: int) -> Prompt:
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

    def parse(self, game: "MatrixGame", pos: "Position", player: int, text: str) -> ParseResult:
        return parse_label(text, {game.action_to_str(a).lower(): a for a in game.legal(pos, player)}, default=lambda: game.default_action(pos.state, player))


_STRIP = " \t\r\n*`'\"_.,;:!?()[]{}<>"
_ANSWER = re.compile(
    r"(?:final\s+answer|answer|choice|label)\s*(?:is\s*:?|[:=])\s*[*`'\"(\[]*\s*([^\s*`'\")\].,;:!?]+)",
    re.IGNORECASE,
)


def parse_label(text: str, legal: dict[str, int], *, default) -> ParseResult:
    """Read one label (keys of ``legal`` are lower-cased labels) from ``text``.

    Precedence: the whole answer is a label (markdown and punctuation stripped); a JSON object
    with an "action", "label" or "answer" key; the last "Answer: X" / "my choice is X" phrase;
    the last non-empty line is a label. No free mention search: single letters such as "a" and
    "I" occur in ordinary prose.
    """
    if not isinstance(text, str):
        return ParseResult(default(), "default", False, False, True, f"not text: {type(text).__name__}")
    whole = text.strip(_STRIP).lower()
    if whole in legal:
        return ParseResult(legal[whole], "exact", True, True, False)
    found = json_field(text, ("action", "label", "answer"))
    if found is not None:
        value = str(found[1]).strip(_STRIP).lower()
        if value in legal:
            return ParseResult(legal[value], "json", True, True, False)
        return ParseResult(default(), "json", False, False, True, f"{found[1]!r} is not one of the labels")
    answers = [m.group(1).strip(_STRIP).lower() for m in _ANSWER.finditer(text)]
    if answers:
        if answers[-1] in legal:
            return ParseResult(legal[answers[-1]], "answer_line", True, True, False)
    lines = [ln.strip(_STRIP).lower() for ln in text.strip().splitlines() if ln.strip(_STRIP)]
    if lines and lines[-1] in legal:
        return ParseResult(legal[lines[-1]], "last_line", True, True, False)
    if answers:
        return ParseResult(default(), "answer_line", False, False, True, f"{answers[-1]!r} is not one of the labels")
    return ParseResult(default(), "default", False, False, True, "no label found in the answer; end with 'Answer: <label>'")
