"""One-shot matrix games scored against Nash (see docs/matrix.md and the shared note)."""
from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, PayoffMatrices, payoff_matrices
from .rules import LABEL_SETS, MatrixGame, MatrixParams, MatrixState

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
