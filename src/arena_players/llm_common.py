"""Pieces shared by the language-model players: text recording and retry feedback."""
from __future__ import annotations

import hashlib
from typing import Any, Literal, Sequence

TextRecord = Literal["full", "hash", "none"]


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
