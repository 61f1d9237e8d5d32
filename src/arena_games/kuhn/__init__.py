"""Kuhn poker: the reference native game (chance deal, hidden cards).

:class:`KuhnPoker` here is the registered game: the rules (:mod:`.rules`, which import no view)
with the game's views, declared by ordinary method overrides (see docs/core.md, "Views").
"""

from collections.abc import Callable, Mapping
from typing import Any

from . import rules
from .rules import KuhnAction, KuhnState, nash_policy
from .views import KuhnCompactView


class KuhnPoker(rules.KuhnPoker):
    """Kuhn poker with its views: the generic ones plus ``"compact"`` (:class:`KuhnCompactView`)."""

    def views(self) -> Mapping[str, Callable[[], Any]]:
        return {**super().views(), "compact": KuhnCompactView}


__all__ = ["KuhnAction", "KuhnPoker", "KuhnState", "nash_policy"]
