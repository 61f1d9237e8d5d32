"""TextArena titles as arena games (adapter, legal sets, title table) and arena games as
TextArena envs (reverse)."""

from typing import Any

from .adapter import EndKind, LegalMethod, TextArenaGame, TitleSpec, make_title_class

__all__ = ["EndKind", "LegalMethod", "TextArenaGame", "TitleSpec", "make_title_class", "title_game"]


def __getattr__(name: str) -> Any:
    if name == "title_game":  # builds the title table on first use
        from .titles import title_game

        return title_game
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
