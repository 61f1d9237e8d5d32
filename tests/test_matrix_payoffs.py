"""The archetype payoffs: textbook 2x2 forms at k = 2, and the properties the shared note states
for every k = 2..10 (pure equilibria, dominance, role symmetry, the chicken parity effect)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_games.matrix.equilibria import pure_equilibria
from arena_games.matrix.payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, check_archetype, payoff_matrices

# (row payoffs, column payoffs) of the textbook games, action 0 first
TEXTBOOK_2X2 = {
    "coordination": ([[1, 0], [0, 1]], [[1, 0], [0, 1]]),
    "anti_coordination": ([[0, 1], [1, 0]], [[0, 1], [1, 0]]),
    # hare (effort 1) pays 3 always; stag-stag 4; a lone stag 2
    "stag_hunt": ([[3, 3], [2, 4]], [[3, 2], [3, 4]]),
    # PD with T=1.75, R=1.5, P=1, S=0.75 (action 0 = contribute nothing = defect)
    "public_goods": ([[1, 1.75], [0.75, 1.5]], [[1, 0.75], [1.75, 1.5]]),
    "battle_of_sexes": ([[3, 0], [0, 2]], [[2, 0], [0, 3]]),
    # PD with T=4, R=3, P=2, S=0 (action 0 = the low claim = defect)
    "prisoners_dilemma": ([[2, 4], [0, 3]], [[2, 0], [4, 3]]),
    # dove (demand 1) gets 1 always; hawk 2 against a dove, 0 against a hawk
    "chicken": ([[1, 1], [2, 0]], [[1, 2], [1, 0]]),
    "hide_and_seek": ([[1, -1], [-1, 1]], [[-1, 1], [1, -1]]),
}

ALL_CELLS = [(a, k) for a in ARCHETYPE_NAMES for k in K_VALUES]


def test_eight_archetypes():
    assert len(ARCHETYPE_NAMES) == 8 and set(TEXTBOOK_2X2) == set(ARCHETYPE_NAMES)


@pytest.mark.parametrize("archetype", ARCHETYPE_NAMES)
def test_k2_is_the_textbook_game(archetype):
    pm = payoff_matrices(archetype, 2)
    A, B = TEXTBOOK_2X2[archetype]
    np.testing.assert_array_equal(pm.A, A)
    np.testing.assert_array_equal(pm.B, B)


@pytest.mark.parametrize("archetype", ["public_goods", "prisoners_dilemma"])
def test_k2_dilemmas_have_pd_ordering(archetype):
    A = payoff_matrices(archetype, 2).A
    T, R, P, S = A[0, 1], A[1, 1], A[0, 0], A[1, 0]
    assert T > R > P > S and 2 * R > T + S


@pytest.mark.parametrize("archetype,k", ALL_CELLS)
def test_shapes_and_read_only(archetype, k):
    pm = payoff_matrices(archetype, k)
    assert pm.A.shape == pm.B.shape == (k, k)
    with pytest.raises(ValueError):
        pm.A[0, 0] = 99.0


@pytest.mark.parametrize("archetype,k", [(a, k) for a, k in ALL_CELLS if ARCHETYPES[a].role_symmetric])
def test_role_symmetry(archetype, k):
    """Swapping the players and relabelling by the mirror leaves the game unchanged."""
    pm = payoff_matrices(archetype, k)
    m = ARCHETYPES[archetype].mirror(k)
    np.testing.assert_array_equal(m[m], np.arange(k))  # an involution
    for i, j in itertools.product(range(k), repeat=2):
        assert pm.B[i, j] == pm.A[m[j], m[i]]


@pytest.mark.parametrize("k", K_VALUES)
def test_hide_and_seek_is_zero_sum_without_role_symmetry(k):
    pm = payoff_matrices("hide_and_seek", k)
    np.testing.assert_array_equal(pm.A + pm.B, 0)
    assert not ARCHETYPES["hide_and_seek"].role_symmetric
    assert pure_equilibria("hide_and_seek", k) == []


def _diagonal(k):
    return [(i, i) for i in range(k)]


@pytest.mark.parametrize("k", K_VALUES)
def test_pure_equilibria_as_stated(k):
    off_diagonal = [(i, j) for i in range(k) for j in range(k) if i != j]
    assert pure_equilibria("coordination", k) == _diagonal(k)
    assert pure_equilibria("anti_coordination", k) == off_diagonal
    assert pure_equilibria("stag_hunt", k) == _diagonal(k)
    assert pure_equilibria("battle_of_sexes", k) == _diagonal(k)
    assert pure_equilibria("public_goods", k) == [(0, 0)]
    assert pure_equilibria("prisoners_dilemma", k) == [(0, 0)]
    # chicken: the k efficient splits d_i + d_j = k + 1 (demand = index + 1)
    assert pure_equilibria("chicken", k) == [(i, k - 1 - i) for i in range(k)]


@pytest.mark.parametrize("k", K_VALUES)
def test_stag_hunt_diagonal_strict_and_pareto_ranked(k):
    pm = payoff_matrices("stag_hunt", k)
    diag = np.diag(pm.A)
    assert np.all(np.diff(diag) > 0) and diag[-1] == 2 * k  # (k, k) is best
    for i in range(k):  # strict: every deviation loses
        assert all(pm.A[j, i] < pm.A[i, i] for j in range(k) if j != i)
    assert np.all(pm.A[0, :] == k + 1)  # the lowest effort pays k + 1 whatever the other does


@pytest.mark.parametrize("k", K_VALUES)
def test_public_goods_zero_is_strictly_dominant_and_the_worst_cell(k):
    pm = payoff_matrices("public_goods", k)
    for c in range(1, k):
        assert np.all(pm.A[0, :] > pm.A[c, :])
        assert np.all(pm.B[:, 0] > pm.B[:, c])
    W = pm.welfare
    E = k - 1
    for i, j in itertools.product(range(k), repeat=2):
        assert W[i, j] == 2 * E + 0.5 * (i + j)
    assert W[0, 0] == W.min() and np.sum(W == W.min()) == 1


def _iterated_weak_dominance(A: np.ndarray) -> list[int]:
    """Surviving row actions of a symmetric game after iterated removal of weakly dominated ones."""
    alive = list(range(A.shape[0]))
    changed = True
    while changed:
        changed = False
        for r in list(alive):
            sub = A[np.ix_(alive, alive)]
            ri = alive.index(r)
            if any(np.all(sub[o] >= sub[ri]) and np.any(sub[o] > sub[ri]) for o in range(len(alive)) if o != ri):
                alive.remove(r)
                changed = True
                break
    return alive


@pytest.mark.parametrize("k", K_VALUES)
def test_prisoners_dilemma_dominance(k):
    """k = 2: the low claim strictly dominates. Every k: iterated dominance leaves only the
    lowest claim, the unique NE, whose welfare 4 ties the worst cell; the optimum is 2k + 2."""
    pm = payoff_matrices("prisoners_dilemma", k)
    if k == 2:
        assert np.all(pm.A[0, :] > pm.A[1, :])
    assert _iterated_weak_dominance(pm.A) == [0]
    assert pm.welfare[0, 0] == 4 == pm.welfare.min()
    assert pm.welfare.max() == pm.welfare[k - 1, k - 1] == 2 * k + 2


@pytest.mark.parametrize("k", K_VALUES)
def test_chicken_parity(k):
    """Odd k: the equal split (k+1)/2 is a symmetric pure NE; even k: none is symmetric."""
    symmetric = [(i, j) for i, j in pure_equilibria("chicken", k) if i == j]
    if k % 2:
        assert symmetric == [((k + 1) // 2 - 1,) * 2]
    else:
        assert symmetric == []


@pytest.mark.parametrize("k", K_VALUES)
def test_battle_of_sexes_worst_cell_when_both_pick_their_own(k):
    pm = payoff_matrices("battle_of_sexes", k)
    assert pm.welfare[0, 1] == 0 == pm.welfare.min()  # row's favourite vs column's favourite
    assert pm.welfare[0, 0] == pm.welfare[1, 1] == 5
    assert all(pm.welfare[i, i] == 2 for i in range(2, k))


@given(st.sampled_from(ARCHETYPE_NAMES), st.integers(-5, 20))
@settings(max_examples=40, deadline=None)
def test_check_archetype_rejects_out_of_range(archetype, k):
    if 2 <= k <= 10:
        check_archetype(archetype, k)
    else:
        with pytest.raises(ValueError, match="k must be an int in 2..10"):
            check_archetype(archetype, k)


def test_unknown_archetype_names_the_choices():
    with pytest.raises(ValueError, match="choose one of coordination"):
        payoff_matrices("stag", 3)
