"""Pieces shared by the text-based players: their settings, listed legal strings to actions, text recording, retry
feedback, and their prompts in the snapshot or transcript view (:class:`ViewPrompts`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.players import Decision
from arena_core.text import ParseResult
from arena_core.transcript import TranscriptView
from arena_core.views import get_view

from .conversation import Conversation, SeatConversations

TextRecord = Literal["full", "hash", "none"]
SettingsT = TypeVar("SettingsT", bound=BaseModel)


def player_settings(model: type[SettingsT], owner: str, options: dict[str, Any]) -> SettingsT:
    """``model(**options)``, or a :class:`ConfigError` naming ``owner``, the problems and the known options."""
    try:
        return model(**options)
    except ValidationError as exc:
        known = ", ".join(model.model_fields)
        raise ConfigError(f"invalid {owner} options: {exc.errors(include_url=False)}; known options: {known}") from None


def text_record(kind: str, text: str, mode: TextRecord) -> dict[str, Any]:
    """``{kind: text}`` (full) or ``{kind_sha256: ...}`` (hash), always with ``{kind}_chars``."""
    out: dict[str, Any] = {f"{kind}_chars": len(text)}
    if mode == "full":
        out[kind] = text
    elif mode == "hash":
        out[f"{kind}_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return out


def retry_feedback(legal: Sequence[str], detail: str) -> str:
    """The user turn added after an unreadable answer."""
    return f"Your answer could not be read as a legal action ({detail}). Reply with exactly one of: {', '.join(legal)}"


NO_ACTION = object()


def legal_action_for(decision: Decision, text: str) -> Any:
    """The legal action a listed legal string stands for: the action whose canonical string it
    is (case- and space-insensitive), else what the game's parser reads from it, else
    :data:`NO_ACTION`. (A text view may list strings its parser does not read, e.g. MegaGem's
    ``bid 5`` whose parser wants ``{"bid": 5}``.)"""
    want = " ".join(text.split()).lower()
    for action in decision.legal_actions:
        if " ".join(decision.game.action_to_str(action).split()).lower() == want:
            return action
    parsed = decision.parse(text)
    return NO_ACTION if parsed.default_used else parsed.action


# ---------------------------------------------------------------------------- prompt views
#: the ``view`` option of the text-based players: ``snapshot`` rebuilds the whole prompt from the
#: position each turn (the game's text view); ``transcript`` extends one conversation per seat
#: and episode (the game's ``"transcript"`` view, :mod:`arena_core.transcript`)
PromptView = Literal["snapshot", "transcript"]
VIEW_FIELD_DESCRIPTION = (
    "snapshot: the whole prompt rebuilt from the position each turn; transcript: one conversation per seat and "
    "episode, each turn adding what happened since the seat's last turn (a different view is a different entrant)"
)


@dataclass(frozen=True)
class DecisionPrompt:
    """The messages a text-based player sends for one decision, in either view.

    ``messages``: the full list to send; ``legal``: the legal strings shown (for retry
    feedback); ``added``: how many of ``messages`` this decision added (all of them in the
    snapshot view); ``turn``: the seat's turn number in the conversation (0 in the snapshot
    view); ``conversation``: the seat's :class:`~arena_players.conversation.Conversation`
    (transcript view only) -- report the answer to it through :meth:`ViewPrompts.answered`."""

    messages: list[dict[str, str]]
    legal: tuple[str, ...]
    added: int
    turn: int
    conversation: Conversation | None = None

    def new_messages(self) -> list[dict[str, str]]:
        return self.messages[len(self.messages) - self.added :]


class ViewPrompts:
    """The prompts of a text-based player in its ``view``: the shared piece of the OpenAI and
    MLX players. In the transcript view it keeps one :class:`~arena_players.conversation.Conversation`
    per ``(episode seed, seat)`` (:class:`~arena_players.conversation.SeatConversations`, at most
    ``max_conversations``, least recently used dropped).

    Per decision: ``prompt(decision)`` -> send ``messages``; on an unreadable answer that the
    player retries with feedback, ``retry(prompt, answer, feedback)`` -> the next list (the answer
    and the feedback are appended: every request extends the one before it); once done,
    ``answered(prompt, final_answer)``. ``parse(decision, text)`` reads an answer with the
    view's parser (the game's text view in both built-in cases)."""

    def __init__(self, view: PromptView = "snapshot", *, max_conversations: int = 256):
        if view not in ("snapshot", "transcript"):
            raise ConfigError(f"view must be 'snapshot' or 'transcript', got {view!r}")
        self.view: PromptView = view
        self.conversations = SeatConversations(max_conversations)
        self._views: dict[int, tuple[Game[Any, Any], TranscriptView]] = {}  # id(game) -> (game, its transcript view)

    def begin_episode(self, game: Game[Any, Any], seat: int, episode_seed: int) -> None:
        if self.view == "transcript":
            self.conversations.begin(episode_seed, seat)

    def transcript_view(self, game: Game[Any, Any]) -> TranscriptView:
        entry = self._views.get(id(game))
        if entry is None or entry[0] is not game:
            view: TranscriptView = get_view(game, "transcript")
            entry = self._views[id(game)] = (game, view)
            if len(self._views) > 64:
                self._views.pop(next(iter(self._views)))
        return entry[1]

    def prompt(self, decision: Decision) -> DecisionPrompt:
        if self.view == "snapshot":
            p = decision.prompt()
            messages = p.messages()
            return DecisionPrompt(messages, tuple(p.legal), len(messages), 0)
        conv = self.conversations.get(decision.episode_seed, decision.seat)
        tp = conv.ask(self.transcript_view(decision.game), decision)
        return DecisionPrompt(list(tp.messages), tp.legal, tp.added, tp.turn, conv)

    def retry(self, prompt: DecisionPrompt, answer: str, feedback: str) -> DecisionPrompt:
        """The next request of a retry within one decision: ``prompt`` plus the unreadable
        answer plus the feedback (also recorded in the seat's conversation)."""
        if prompt.conversation is not None:
            messages = prompt.conversation.feedback(answer, feedback)
        else:
            messages = prompt.messages + [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": feedback},
            ]
        return DecisionPrompt(messages, prompt.legal, 1, prompt.turn, prompt.conversation)

    def answered(self, prompt: DecisionPrompt, answer: str) -> None:
        """The final answer of a decision (appended to the seat's conversation)."""
        if prompt.conversation is not None:
            prompt.conversation.answer(answer)

    def parse(self, decision: Decision, text: str) -> ParseResult:
        if self.view == "snapshot":
            return decision.parse(text)
        view = self.transcript_view(decision.game)
        return decision.view_with(lambda game, pos, seat: view.parse(game, pos, seat, text))
