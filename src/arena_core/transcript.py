"""Transcript views: one growing conversation per seat, so each prompt extends the last one
(docs/players.md, "The transcript view"). A turn is a pure function of ``(game, pos, player,
since)`` that reads the position only through the game's per-seat hooks; messages are only appended.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game, Position
    from .players import Decision
    from .text import ParseResult

#: one chat message: ``{"role": "system" | "user" | "assistant", "content": text}``
ChatMessage = dict[str, str]

#: the assistant message that stands for a turn that got no answer (its request failed)
NO_ANSWER = "(no answer)"
#: the start of the user message when the same decision is asked again after an answer
NOT_ACCEPTED = "Your last answer was not accepted as a legal move; answer again."
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


@dataclass(frozen=True)
class TranscriptPrompt:
    """What to send for one turn: the whole conversation so far (``messages``), how many of
    them this turn added (``added``), the legal strings, and the seat's turn number (0-based)."""

    messages: tuple[ChatMessage, ...]
    added: int
    legal: tuple[str, ...]
    turn: int


@dataclass
class Conversation:
    """One seat's conversation in one episode (what a transcript-mode player keeps); ``pending``: the
    last message is a user turn with no answer yet; ``turns``: the distinct decisions asked."""

    messages: list[ChatMessage] = field(default_factory=list)
    marker: Any = None
    ply: int | None = None
    pending: bool = False
    turns: int = 0
    legal: tuple[str, ...] = ()
    _added: int = 0

    def reset(self) -> None:
        self.messages, self.marker, self.ply, self.pending, self.turns, self.legal = [], None, None, False, 0, ()

    def ask(self, view: TranscriptView, decision: Decision) -> TranscriptPrompt:
        """Append ``decision``'s turn and return the list to send. The same decision asked again
        while unanswered (a failed request retried) returns the same list; asked again after an
        answer, its user message starts with :data:`NOT_ACCEPTED`. A ply lower than the last
        turn's starts a new conversation (a new episode under the same key)."""
        if self.ply is not None and decision.ply < self.ply:
            self.reset()
        if self.pending and self.ply == decision.ply:
            return self._prompt()
        since = self.marker if self.messages else None

        def build(game: Game[Any, Any], pos: Position[Any], seat: int) -> TranscriptTurn:
            return view.turn(game, pos, seat, since)

        turn = decision.view_with(build)
        added = list(turn.messages)
        if not added or (self.messages and (len(added) != 1 or added[0].get("role") != "user")):
            raise ConfigError(
                f"{type(view).__name__}.turn must return the opening messages on a seat's first turn and exactly "
                f"one user message after it; got roles {[m.get('role') for m in added]}"
            )
        if self.pending:  # the last turn got no answer: keep the roles alternating
            self.messages.append({"role": "assistant", "content": NO_ANSWER})
        if self.messages and self.ply == decision.ply:
            added = [{"role": "user", "content": NOT_ACCEPTED + "\n" + added[0]["content"]}]
        else:
            self.turns += 1
        self.messages.extend(added)
        self.marker, self.ply, self.legal = turn.marker, decision.ply, turn.legal
        self.pending, self._added = True, len(added)
        return self._prompt()

    def answer(self, text: str) -> None:
        """The model's answer to the pending turn (appended as an assistant message)."""
        self.messages.append({"role": "assistant", "content": text})
        self.pending = False

    def feedback(self, text: str, feedback: str) -> list[ChatMessage]:
        """A retry within one decision: the unreadable answer and the feedback are appended (the
        turn stays pending); returns the list to send next."""
        self.messages.append({"role": "assistant", "content": text})
        self.messages.append({"role": "user", "content": feedback})
        self._added = 1
        return list(self.messages)

    def _prompt(self) -> TranscriptPrompt:
        return TranscriptPrompt(tuple(self.messages), self._added, self.legal, self.turns - 1)


class SeatConversations:
    """One player's conversations, keyed by ``(episode seed, seat)``; at most
    ``max_conversations`` kept (least recently used dropped first). Thread-safe map; one
    conversation is used by one seat's decisions, which come one at a time."""

    def __init__(self, max_conversations: int = 256):
        if max_conversations < 1:
            raise ConfigError(f"max_conversations must be at least 1, got {max_conversations}")
        self.max_conversations = int(max_conversations)
        self._items: OrderedDict[tuple[int, int], Conversation] = OrderedDict()
        self._lock = threading.Lock()

    def begin(self, episode_seed: int, seat: int) -> None:
        """An episode begins: drop the seat's old conversation under this key."""
        with self._lock:
            self._items.pop((int(episode_seed), int(seat)), None)

    def get(self, episode_seed: int, seat: int) -> Conversation:
        """The conversation of ``seat`` in the episode ``episode_seed`` (a new one if none)."""
        key = (int(episode_seed), int(seat))
        with self._lock:
            conv = self._items.get(key)
            if conv is None:
                conv = self._items[key] = Conversation()
                while len(self._items) > self.max_conversations:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(key)
            return conv

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> Sequence[tuple[int, int]]:
        with self._lock:
            return list(self._items)


__all__ = [
    "NOT_ACCEPTED",
    "NO_ANSWER",
    "SINCE_HEADER",
    "ChatMessage",
    "Conversation",
    "GenericTranscriptView",
    "SeatConversations",
    "TranscriptPrompt",
    "TranscriptTurn",
    "TranscriptView",
    "observation_changes",
]
