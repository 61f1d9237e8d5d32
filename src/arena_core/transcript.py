"""Transcript views: one growing conversation per seat, so each prompt extends the last one
(docs/players.md, "The transcript view"). A turn is a pure function of ``(game, pos, player,
since)`` that reads the position only through the game's per-seat hooks; messages are only appended.
A player's per-seat conversations live with the players (``arena_players.conversation``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game, Position
    from .text import ParseResult

#: one chat message: ``{"role": "system" | "user" | "assistant", "content": text}``
ChatMessage = dict[str, str]

#: the generic view's first line on every turn after the first
SINCE_HEADER = "Since your last turn:"


@dataclass(frozen=True)
class TranscriptTurn:
    """What one of a seat's turns adds to its conversation: the opening messages on its first turn,
    exactly one ``user`` message after it; the legal strings shown; the marker its next turn gets."""

    messages: tuple[ChatMessage, ...]
    legal: tuple[str, ...]
    marker: Any = None


@runtime_checkable
class TranscriptView(Protocol):
    """A view that extends one conversation per seat."""

    def turn(self, game: Game[Any, Any], pos: Position[Any], player: int, since: Any) -> TranscriptTurn:
        """The messages of ``player``'s turn at ``pos``; ``since`` is the marker of its previous
        turn in this episode, or ``None`` on its first."""
        ...

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult:
        """Read an answer (usually the game's text view's parser)."""
        ...


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


def observation_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """One line per key of ``after`` that differs from ``before`` (sorted by key): a list that
    extends its old value shows only its new entries (``key (new): [...]``), any other change
    its new value (``key: value``); a key that is gone reads ``key: (gone)``."""
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines.append(f"{key}: (gone)")
            continue
        old, new = before.get(key), after[key]
        if key in before and old == new:
            continue
        if isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and new[: len(old)] == old:
            lines.append(f"{key} (new): {_json(new[len(old) :])}")
        else:
            lines.append(f"{key}: {_json(new)}")
    return lines


@dataclass(frozen=True)
class GenericTranscriptView:
    """Every game's transcript view, built on its text view: a later turn lists the changes of the
    seat's observation (:func:`observation_changes`) and the legal strings; the marker is the
    seat's last observation."""

    def turn(self, game: Game[Any, Any], pos: Position[Any], player: int, since: Any) -> TranscriptTurn:
        prompt = game.text_view().prompt(game, pos, player)
        obs = game.observe(pos, player)
        if since is None:
            return TranscriptTurn(tuple(prompt.messages()), tuple(prompt.legal), obs)
        changes = observation_changes(since, obs) or ["nothing you can see has changed"]
        user = "\n".join([SINCE_HEADER, *changes, "Legal actions: " + ", ".join(prompt.legal)])
        return TranscriptTurn(({"role": "user", "content": user},), tuple(prompt.legal), obs)

    def parse(self, game: Game[Any, Any], pos: Position[Any], player: int, text: str) -> ParseResult:
        result: ParseResult = game.text_view().parse(game, pos, player, text)
        return result


__all__ = [
    "SINCE_HEADER",
    "ChatMessage",
    "GenericTranscriptView",
    "TranscriptTurn",
    "TranscriptView",
    "observation_changes",
]
