"""One-shot matrix games scored against Nash (see docs/matrix.md and the shared note).

:class:`MatrixGame` here is the registered game: the rules (:mod:`.rules`, which import no view)
with the game's text view, declared by ordinary method overrides (see docs/core.md, "Views").
"""

from . import rules
from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, PayoffMatrices, payoff_matrices
from .rules import LABEL_SETS, MatrixParams, MatrixState
from .text import MatrixTextView, rules_text


class MatrixGame(rules.MatrixGame):
    """A matrix game with its text view (:class:`MatrixTextView`) and rules text."""

    def rules_text(self) -> str:
        return rules_text(self)

    def text_view(self) -> MatrixTextView:
        return MatrixTextView()


__all__ = [
    "ARCHETYPE_NAMES",
    "ARCHETYPES",
    "K_VALUES",
    "LABEL_SETS",
    "MatrixGame",
    "MatrixParams",
    "MatrixState",
    "PayoffMatrices",
    "payoff_matrices",
]
