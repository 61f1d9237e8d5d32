"""Leduc poker: a native, pure-Python game (two betting rounds, a public card).

:class:`LeducPoker` here is the registered game: the rules (:mod:`.rules`, which import no
view) with the game's views.
"""

from collections.abc import Callable, Mapping
from typing import Any

from . import rules
from .rules import LeducAction, LeducState
from .views import LeducCompactView


class LeducPoker(rules.LeducPoker):
    """Leduc poker with its views: the generic ones plus ``"compact"`` (:class:`LeducCompactView`)."""

    def views(self) -> Mapping[str, Callable[[], Any]]:
        return {**super().views(), "compact": LeducCompactView}


__all__ = ["LeducAction", "LeducCompactView", "LeducPoker", "LeducState"]
