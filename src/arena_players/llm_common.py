"""Pieces shared by the text-based players: their settings, listed legal strings to actions, text recording, retry feedback."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from arena_core.errors import ConfigError

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


def legal_action_for(decision, text: str) -> Any:
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
