"""Text views for language-model players: a prompt rebuilt from the state every turn, and a
parser from free text to an action that reports how it parsed."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game, Position


@dataclass(frozen=True)
class Prompt:
    """One turn's prompt: system text (the rules), user text (the state) and the legal strings."""

    system: str
    user: str
    legal: tuple[str, ...]

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@dataclass(frozen=True)
class ParseResult:
    """How an answer was read: which method matched, whether it named an action (valid), whether
    that action is legal, and whether the default was used instead."""

    action: Any
    method: str
    valid: bool
    legal: bool
    default_used: bool
    detail: str = ""

    def telemetry(self) -> dict[str, Any]:
        return {"parse_method": self.method, "valid": self.valid, "legal": self.legal, "default_used": self.default_used}


class TextView(Protocol):
    def prompt(self, game: "Game", pos: "Position", player: int) -> Prompt: ...

    def parse(self, game: "Game", pos: "Position", player: int, text: str) -> ParseResult: ...


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


@dataclass(frozen=True)
class GenericTextView:
    """Works for any game: the structured observation as JSON and the legal action strings.

    Answers are read by precedence: the whole answer is a legal string; a JSON object with an
    ``"action"`` key; the last non-empty line is a legal string; the last legal string that
    occurs as a whole phrase in the text. Otherwise the game's default action is used.
    """

    answer_instruction: str = "Think briefly, then end your answer with one line holding exactly one of the legal actions."
    extra: dict = field(default_factory=dict)

    def prompt(self, game: "Game", pos: "Position", player: int) -> Prompt:
        legal = tuple(game.action_to_str(a) for a in game.legal(pos, player))
        obs = game.observe(pos, player)
        system = (
            f"You are playing {game.spec.id} as player {player} of {game.num_players}.\n"
            f"{game.rules_text()}\n{self.answer_instruction}"
        )
        user = (
            "Your observation:\n"
            + json.dumps(obs, sort_keys=True, separators=(", ", ": "))
            + "\nLegal actions: "
            + ", ".join(legal)
        )
        return Prompt(system=system, user=user, legal=legal)

    def parse(self, game: "Game", pos: "Position", player: int, text: str) -> ParseResult:
        legal = {_norm(game.action_to_str(a)): a for a in game.legal(pos, player)}
        return parse_choice(text, legal, default=lambda: game.default_action(pos.state, player))


def json_field(text: str, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """``(key, value)`` from the first flat JSON object in ``text`` that has one of ``keys``
    (the first of ``keys`` it has), or None: how text views read a ``{"action": ...}`` answer."""
    for match in re.finditer(r"\{[^{}]*\}", text):
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            for key in keys:
                if key in obj:
                    return key, obj[key]
    return None


def parse_choice(text: str, legal: dict[str, Any], *, default) -> ParseResult:
    """Read one of ``legal`` (normalised string -> action) from ``text``; see GenericTextView."""
    if not isinstance(text, str):
        return ParseResult(default(), "default", False, False, True, f"not text: {type(text).__name__}")
    whole = _norm(text)
    if whole in legal:
        return ParseResult(legal[whole], "exact", True, True, False)
    found = json_field(text, ("action",))
    if found is not None:
        key = _norm(str(found[1]))
        if key in legal:
            return ParseResult(legal[key], "json", True, True, False)
        return ParseResult(default(), "json", True, False, True, f"{found[1]!r} is not legal")
    lines = [ln.strip().strip("`*'\".") for ln in text.strip().splitlines() if ln.strip()]
    if lines and _norm(lines[-1]) in legal:
        return ParseResult(legal[_norm(lines[-1])], "last_line", True, True, False)
    best, best_pos = None, -1
    for key, action in legal.items():
        for m in re.finditer(r"(?<![\w])" + re.escape(key) + r"(?![\w])", whole):
            if m.start() > best_pos:
                best, best_pos = action, m.start()
    if best is not None:
        return ParseResult(best, "mention", True, True, False)
    return ParseResult(default(), "default", False, False, True, "no legal action found in the answer")
