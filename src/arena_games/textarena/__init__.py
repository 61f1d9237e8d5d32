"""TextArena titles as arena games (adapter, legal sets, title table) and arena games as
TextArena envs (reverse)."""
from .adapter import EndKind, LegalMethod, TextArenaGame, TitleSpec, make_title_class

__all__ = ["EndKind", "LegalMethod", "TextArenaGame", "TitleSpec", "make_title_class"]
