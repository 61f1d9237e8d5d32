"""A player's conversations in the transcript view (docs/players.md, "The transcript view"): one
:class:`Conversation` per ``(episode seed, seat)``, kept in :class:`SeatConversations`. The views that
build each turn are the game's (:mod:`arena_core.transcript`); this is the player's bookkeeping.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena_core.errors import ConfigError
from arena_core.transcript import ChatMessage, TranscriptTurn, TranscriptView

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Game, Position
    from arena_core.players import Decision

#: the assistant message that stands for a turn that got no answer (its request failed)
NO_ANSWER = "(no answer)"
#: the start of the user message when the same decision is asked again after an answer
NOT_ACCEPTED = "Your last answer was not accepted as a legal move; answer again."


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


__all__ = ["NOT_ACCEPTED", "NO_ANSWER", "Conversation", "SeatConversations", "TranscriptPrompt"]
