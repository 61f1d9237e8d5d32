"""The archetype payoff matrices for k = 2..10, as data (see shared note ``matrix-games.md``).

Actions are ``0..k-1`` in the *underlying* (unrotated) order. ``A`` holds the row player's
payoffs and ``B`` the column player's; welfare is ``A + B``. Every archetype reduces to its
textbook 2x2 form at k = 2 (tests check it).

Role symmetry: for every archetype but hide-and-seek there is an involution ``mirror`` of the
actions with ``B[i, j] == A[mirror[j], mirror[i]]`` -- swapping the players and relabelling by
``mirror`` leaves the game unchanged. It is the identity except in battle of the sexes, where
it swaps the two favourite venues. "Symmetric play" means the column player draws from the
mirrored distribution of the row player's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

K_MIN, K_MAX = 2, 10
K_VALUES: tuple[int, ...] = tuple(range(K_MIN, K_MAX + 1))

#: the public-goods multiplier (MPCR m/2 = 0.75)
PUBLIC_GOODS_MULTIPLIER = 1.5
#: the traveler's-dilemma bonus/penalty
TRAVELERS_BONUS = 2
#: battle of the sexes: own favourite, other's favourite, neutral venue
BOS_HIGH, BOS_LOW, BOS_NEUTRAL = 3, 2, 1


def _coordination(i: int, j: int, k: int) -> tuple[float, float]:
    same = float(i == j)
    return same, same


def _anti_coordination(i: int, j: int, k: int) -> tuple[float, float]:
    differ = float(i != j)
    return differ, differ


def _stag_hunt(i: int, j: int, k: int) -> tuple[float, float]:
    ei, ej = i + 1, j + 1  # effort levels 1..k
    low = min(ei, ej)
    return float(2 * low - ei + k), float(2 * low - ej + k)


def _public_goods(i: int, j: int, k: int) -> tuple[float, float]:
    endowment = k - 1  # contributions c = 0..k-1
    share = PUBLIC_GOODS_MULTIPLIER / 2 * (i + j)
    return endowment - i + share, endowment - j + share


def _battle_of_sexes(i: int, j: int, k: int) -> tuple[float, float]:
    if i != j:
        return 0.0, 0.0
    if i == 0:  # the row player's favourite venue
        return float(BOS_HIGH), float(BOS_LOW)
    if i == 1:  # the column player's favourite venue
        return float(BOS_LOW), float(BOS_HIGH)
    return float(BOS_NEUTRAL), float(BOS_NEUTRAL)


def _prisoners_dilemma(i: int, j: int, k: int) -> tuple[float, float]:
    ci, cj = i + 2, j + 2  # claims 2..k+1
    if ci == cj:
        return float(ci), float(cj)
    low = min(ci, cj)
    return (
        (float(low + TRAVELERS_BONUS), float(low - TRAVELERS_BONUS))
        if ci < cj
        else (float(low - TRAVELERS_BONUS), float(low + TRAVELERS_BONUS))
    )


def _chicken(i: int, j: int, k: int) -> tuple[float, float]:
    di, dj = i + 1, j + 1  # demands 1..k from a pie of k+1
    if di + dj <= k + 1:
        return float(di), float(dj)
    return 0.0, 0.0


def _hide_and_seek(i: int, j: int, k: int) -> tuple[float, float]:
    a = 1.0 if i == j else -1.0  # the row player is the matcher
    return a, -a


@dataclass(frozen=True)
class Archetype:
    """One archetype: its name, what an action means, and how a cell pays."""

    name: str
    title: str
    action_meaning: str  # what underlying action index i stands for
    cell: Callable[[int, int, int], tuple[float, float]]
    role_symmetric: bool = True
    zero_sum: bool = False
    mirror_swap: tuple[int, int] | None = None  # the two actions the role symmetry exchanges

    def mirror(self, k: int) -> np.ndarray:
        """The action involution of the role symmetry (the identity unless ``mirror_swap``)."""
        m = np.arange(k)
        if self.mirror_swap is not None:
            a, b = self.mirror_swap
            m[a], m[b] = b, a
        return m


ARCHETYPES: dict[str, Archetype] = {
    a.name: a
    for a in (
        Archetype("coordination", "pure coordination", "action i; both get 1 if the actions match", _coordination),
        Archetype(
            "anti_coordination",
            "anti-coordination (dispersion)",
            "action i; both get 1 if the actions differ",
            _anti_coordination,
        ),
        Archetype("stag_hunt", "stag hunt as minimum effort", "effort level i+1", _stag_hunt),
        Archetype(
            "public_goods", "two-player public goods", "contribution i out of an endowment of k-1", _public_goods
        ),
        Archetype(
            "battle_of_sexes",
            "battle of the sexes with neutral venues",
            "venue i (0: row's favourite, 1: column's favourite, others neutral)",
            _battle_of_sexes,
            mirror_swap=(0, 1),
        ),
        Archetype("prisoners_dilemma", "prisoner's dilemma as traveler's dilemma", "claim i+2", _prisoners_dilemma),
        Archetype("chicken", "chicken as Nash demand", "demand i+1 from a pie of k+1", _chicken),
        Archetype(
            "hide_and_seek",
            "zero-sum hide and seek",
            "hiding place i (row matches, column hides)",
            _hide_and_seek,
            role_symmetric=False,
            zero_sum=True,
        ),
    )
}
ARCHETYPE_NAMES: tuple[str, ...] = tuple(ARCHETYPES)


@dataclass(frozen=True)
class PayoffMatrices:
    """Row payoffs ``A``, column payoffs ``B`` (read-only float arrays) of one (archetype, k)."""

    archetype: str
    k: int
    A: np.ndarray
    B: np.ndarray

    @property
    def welfare(self) -> np.ndarray:
        total: np.ndarray = self.A + self.B
        return total

    def integer_scale(self) -> int:
        """The smallest factor in 1, 2, 4 that makes every payoff an integer (for the solver)."""
        for scale in (1, 2, 4):
            if np.all(np.mod(self.A * scale, 1) == 0) and np.all(np.mod(self.B * scale, 1) == 0):
                return scale
        raise ValueError(f"{self.archetype} k={self.k}: payoffs are not multiples of 1/4")


def check_archetype(archetype: str, k: int) -> None:
    """Raise ValueError naming the fix if (archetype, k) is not a member of the family."""
    if archetype not in ARCHETYPES:
        raise ValueError(f"unknown archetype {archetype!r}; choose one of {', '.join(ARCHETYPE_NAMES)}")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not K_MIN <= k <= K_MAX:
        raise ValueError(f"k must be an int in {K_MIN}..{K_MAX}, got {k!r}")


@cache
def payoff_matrices(archetype: str, k: int) -> PayoffMatrices:
    """The payoff matrices of ``archetype`` with ``k`` actions (cached, read-only)."""
    check_archetype(archetype, k)
    cell = ARCHETYPES[archetype].cell
    A = np.empty((k, k))
    B = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            A[i, j], B[i, j] = cell(i, j, int(k))
    A.setflags(write=False)
    B.setflags(write=False)
    return PayoffMatrices(archetype, int(k), A, B)
