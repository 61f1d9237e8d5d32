"""Menus for trainable models: the views come from the game (``Game.views()``, see
:mod:`arena_core.views`); here only what a tokenizer adds.

A view returns a :class:`Menu`: the prompt text, the actions on offer (the legal set, or a
larger fixed set when the trainer lets the policy choose illegal actions), their labels and
which of them are legal. Labels must each encode to exactly one token of the model's
tokenizer; :class:`ActionTokens` checks that and names the fix when they do not.

- :func:`compact_view`: the game's ``"compact"`` view (e.g. Kuhn poker's
  ``arena_games.kuhn.views.KuhnCompactView``), else its ``"menu"`` view.
- :class:`MenuView`: any game; its own prompt plus a lettered menu of its legal actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.views import Menu, MenuView, MenuViewProtocol, get_view

CompactView = MenuViewProtocol

__all__ = ["ActionTokens", "CompactView", "Menu", "MenuView", "Tokenizer", "compact_view", "menu_view"]


class Tokenizer(Protocol):
    """What the trainers need of a tokenizer (mlx-lm's ``TokenizerWrapper``, a Hugging Face
    tokenizer): ``encode(text)``, which may take ``add_special_tokens``, and ``decode(ids)``."""

    def encode(self, text: str, *args: Any, **kwargs: Any) -> Sequence[int]: ...

    def decode(self, ids: Sequence[int], *args: Any, **kwargs: Any) -> str: ...


def compact_view(game: Game[Any, Any]) -> CompactView:
    """The game's ``"compact"`` view, or its ``"menu"`` view when it has none."""
    view: CompactView = get_view(game, "compact", fallback="menu")
    return view


def menu_view(game: Game[Any, Any]) -> CompactView:
    """The game's ``"menu"`` view (its own prompt plus a lettered menu)."""
    view: CompactView = get_view(game, "menu")
    return view


class ActionTokens:
    """Maps menu labels to single token ids of a tokenizer (cached)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._cache: dict[str, int] = {}
        self._special = _takes_special(tokenizer)

    def encode_text(self, text: str) -> list[int]:
        return (
            list(self.tokenizer.encode(text, add_special_tokens=False))
            if self._special
            else list(self.tokenizer.encode(text))
        )

    def token(self, label: str) -> int:
        tok = self._cache.get(label)
        if tok is None:
            ids = self.encode_text(label)
            if len(ids) != 1:
                raise ConfigError(
                    f"action label {label!r} encodes to {len(ids)} tokens {ids}; every label must be one token "
                    "(use single characters as labels, or a view whose labels are in the vocabulary)"
                )
            tok = self._cache[label] = int(ids[0])
        return tok

    def tokens(self, labels: Sequence[str]) -> list[int]:
        ids = [self.token(lb) for lb in labels]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"labels {list(labels)} map to repeated tokens {ids}")
        return ids


def _takes_special(tokenizer: Tokenizer) -> bool:
    import inspect

    try:
        return "add_special_tokens" in inspect.signature(tokenizer.encode).parameters
    except (TypeError, ValueError):
        return False
