"""One-shot matrix games scored against Nash (see docs/matrix.md and the shared note)."""

from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, PayoffMatrices, payoff_matrices
from .rules import LABEL_SETS, MatrixGame, MatrixParams, MatrixState
from .text import MatrixTextView, rules_text


def _attach_views(game: type[MatrixGame]) -> None:
    """The game's text view, attached where the game is registered (the entry point names this
    package, and Python runs it before any module in it): the rules never import their view."""
    game.rules_text = rules_text  # type: ignore[method-assign, assignment]
    game.text_view = lambda self: MatrixTextView()  # type: ignore[method-assign]


_attach_views(MatrixGame)

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
