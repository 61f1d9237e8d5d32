"""Views: how a game is shown to a player, by name (``Game.views()``, :func:`default_views`),
supplied by the game itself and looked up through :func:`get_view` (docs/core.md).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ConfigError, PluginError

if TYPE_CHECKING:  # pragma: no cover
    from .game import Game, Position


@dataclass(frozen=True)
class Menu:
    """One decision as a menu-reading player sees it: the prompt text, the actions on offer
    (the legal set, or a larger fixed set), one distinct label per action and its legality."""

    text: str
    actions: tuple[Any, ...]
    labels: tuple[str, ...]
    legal: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not (len(self.actions) == len(self.labels) == len(self.legal)):
            raise ConfigError("a Menu needs one label and one legality flag per action")
        if len(set(self.labels)) != len(self.labels):
            raise ConfigError(f"menu labels must be distinct, got {self.labels}")
        if not any(self.legal):
            raise ConfigError("a Menu must offer at least one legal action")


class MenuViewProtocol(Protocol):
    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu: ...


@dataclass(frozen=True)
class MenuView:
    """Any game: its own text prompt, then ``A) <action>`` lines; the answer is the letter.
    Holds up to 52 legal actions (A-Z, a-z)."""

    letters: str = string.ascii_uppercase + string.ascii_lowercase

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        prompt = game.text_view().prompt(game, pos, player)
        actions = tuple(game.legal(pos, player))
        if len(actions) > len(self.letters):
            raise ConfigError(
                f"{game.spec.id}: {len(actions)} legal actions exceed the {len(self.letters)} menu letters; "
                "give the game a 'compact' view (override Game.views(), see arena_core.views)"
            )
        labels = tuple(self.letters[: len(actions)])
        lines = "\n".join(f"{lb}) {game.action_to_str(a)}" for lb, a in zip(labels, actions))
        text = f"{prompt.system}\n{prompt.user}\nChoose by letter:\n{lines}\nAnswer:"
        return Menu(text, actions, labels, (True,) * len(actions))


def default_views(game: Game[Any, Any]) -> dict[str, Callable[[], Any]]:
    """The views every game has: ``text`` (its ``text_view()``), ``menu`` (:class:`MenuView`),
    ``transcript`` (:class:`~arena_core.transcript.GenericTranscriptView`) and those that plugins
    register for every game in ``arena.views`` (turn-arena-players' ``human``); a game may override each."""
    from .transcript import GenericTranscriptView

    return {**_plugin_views(), "text": game.text_view, "menu": MenuView, "transcript": GenericTranscriptView}


@cache
def _plugin_views() -> dict[str, Callable[[], Any]]:
    import importlib.metadata as md

    eps = md.entry_points(group="arena.views")
    if len(set(eps.names)) < len(eps):
        raise PluginError(f"a view name is registered twice in arena.views: {sorted(ep.value for ep in eps)}")
    return {ep.name: partial(_build, ep) for ep in eps}


def _build(ep: Any) -> Any:
    return ep.load()()


def get_view(game: Game[Any, Any], name: str, *, fallback: str | None = None) -> Any:
    """A fresh instance of ``game``'s view ``name`` (or of ``fallback`` when the game has no
    such view); one clear line naming the views it has otherwise."""
    views: Mapping[str, Callable[[], Any]] = game.views()
    factory = views.get(name) or (views.get(fallback) if fallback else None)
    if factory is None:
        raise ConfigError(
            f"{game.spec.id} has no {name!r} view; it has {sorted(views)} (a game adds views by overriding Game.views())"
        )
    return factory()
