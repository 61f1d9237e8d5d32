"""Equilibria are true equilibria (regret <= 1e-9), the counts the note states, the symmetric
equilibria and the symmetric-play ceiling (against a brute-force grid), the cache, and the
pre-registered baselines."""

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_games.matrix import equilibria as eq
from arena_games.matrix.payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, payoff_matrices

ALL_CELLS = [(a, k) for a in ARCHETYPE_NAMES for k in K_VALUES]


@pytest.fixture(scope="module")
def solved(private_cache):
    """Every (archetype, k) as the study gets it: from the shipped, checksummed table (memory
    cache only, so the reference points computed by later tests reuse these very solutions).
    The checks below hold the shipped table to the note's counts and to the regret bound."""
    eq.clear_memory_cache()
    return {(a, k): eq.extreme_equilibria(a, k, cache_dir=False) for a, k in ALL_CELLS}


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    """A disk cache private to this test session (shared by the matrix test modules)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(eq.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "matrix-cache"))
        yield


def test_every_profile_is_an_equilibrium_and_distinct(solved):
    for (a, k), eqs in solved.items():
        pm = payoff_matrices(a, k)
        assert eqs.rejected == 0, f"{a} k={k}: the solver returned {eqs.rejected} profiles with regret > 1e-9"
        assert len(eqs) >= 1
        for x, y in eqs.profiles():
            assert abs(x.sum() - 1) < 1e-12 and abs(y.sum() - 1) < 1e-12 and x.min() >= 0 and y.min() >= 0
            assert eq.regret(pm, x, y) <= eq.REGRET_TOL
        flat = np.hstack([eqs.row, eqs.col])
        for i in range(len(flat) - 1):  # pairwise max-abs distances exceed the dedupe tolerance
            assert np.min(np.max(np.abs(flat[i + 1 :] - flat[i]), axis=1)) > eq.DEDUPE_TOL


@pytest.mark.parametrize("k", K_VALUES)
def test_extreme_equilibrium_counts_stated_in_the_note(solved, k):
    assert len(solved["coordination", k]) == 2**k - 1
    assert len(solved["battle_of_sexes", k]) == 2**k - 1
    assert len(solved["anti_coordination", k]) == k * (k - 1) + 1
    assert len(solved["stag_hunt", k]) == k + math.comb(k, 2)
    assert len(solved["public_goods", k]) == len(solved["prisoners_dilemma", k]) == len(solved["hide_and_seek", k]) == 1


@pytest.mark.parametrize("k", K_VALUES)
def test_unique_equilibria_are_the_stated_ones(solved, k):
    for a in ("public_goods", "prisoners_dilemma"):
        ((x, y),) = solved[a, k].profiles()
        assert x[0] == 1 and y[0] == 1  # contribute nothing / claim the minimum
    ((x, y),) = solved["hide_and_seek", k].profiles()
    np.testing.assert_allclose(x, 1 / k, atol=1e-12)
    np.testing.assert_allclose(y, 1 / k, atol=1e-12)
    assert eq.reference_points("hide_and_seek", k).baseline == pytest.approx(2 / k - 1, abs=1e-12)


@pytest.mark.parametrize("a,k", [(a, k) for a in ARCHETYPE_NAMES for k in (2, 3, 4)])
def test_exact_arithmetic_gives_the_same_count(solved, a, k):
    """The shipped table against pygambit in exact arithmetic (needs the solver extra)."""
    gbt = pytest.importorskip(
        "pygambit", reason="the exact cross-check needs the solver extra: pip install 'turn-arena[solver]'"
    )

    pm = payoff_matrices(a, k)
    s = pm.integer_scale()
    g = gbt.Game.from_arrays((pm.A * s).astype(int), (pm.B * s).astype(int))
    assert len(gbt.nash.enummixed_solve(g, rational=True).equilibria) == len(solved[a, k])


@pytest.mark.parametrize("a,k", ALL_CELLS)
def test_symmetric_equilibria_are_equilibria_and_mirrored(solved, a, k):
    pm = payoff_matrices(a, k)
    sym = eq.symmetric_equilibria(a, k, extreme=solved[a, k])
    assert sym
    for p in sym:
        assert eq.regret(pm, p, eq.mirrored(a, k, p)) <= eq.REGRET_TOL
    # every symmetric profile the solver found is among them
    for x, y in solved[a, k].profiles():
        if np.max(np.abs(eq.mirrored(a, k, x) - y)) <= eq.DEDUPE_TOL:
            assert any(np.max(np.abs(x - p)) <= eq.DEDUPE_TOL for p in sym)


@pytest.mark.parametrize("k", K_VALUES)
def test_battle_of_sexes_symmetric_equilibria(k):
    ref = eq.reference_points("battle_of_sexes", k)
    # the two-venue symmetric NE: own favourite with probability 3/5, welfare 2.4
    assert ref.sensitivity["best_symmetric_ne"] == pytest.approx(2.4)
    two_venue = [p for p, v in ref.symmetric_ne if abs(v - 2.4) < 1e-9]
    assert any(abs(p[0] - 0.6) < 1e-9 and abs(p[1] - 0.4) < 1e-9 for p in two_venue)
    # the pre-registered baseline is the full-support one: 1.09 at k=3, 0.226 at k=10 (note, section 3.1)
    if k == 3:
        assert ref.baseline == pytest.approx(1.09, abs=0.005)
    if k == 10:
        assert ref.baseline == pytest.approx(0.226, abs=0.0005)
    largest = max(sum(1 for v in p if v > 1e-7) for p, _ in ref.symmetric_ne)
    assert largest == k


@pytest.mark.parametrize("k", K_VALUES)
def test_stag_hunt_mixes_and_baseline(k):
    pm = payoff_matrices("stag_hunt", k)
    for a, b in itertools.combinations(range(k), 2):  # a 50/50 mix on two levels is a symmetric NE worth 2(k + a)
        p = np.zeros(k)
        p[[a, b]] = 0.5
        assert eq.regret(pm, p, p) <= 1e-12
        assert p @ pm.welfare @ p == pytest.approx(2 * (k + a + 1))  # effort levels are index + 1
    assert eq.reference_points("stag_hunt", k).baseline == pytest.approx(2 * (k + 1))
    if k >= 3:  # degenerate: a mix on efforts {1, 3} leaves effort 2 a best reply too
        p = np.zeros(k)
        p[[0, 2]] = 0.5
        payoff = pm.A @ p
        assert payoff[1] == pytest.approx(payoff.max())


@pytest.mark.parametrize("a", ["coordination", "anti_coordination"])
@pytest.mark.parametrize("k", K_VALUES)
def test_baseline_is_uniform_for_coordination_games(a, k):
    ref = eq.reference_points(a, k)
    assert ref.baseline == pytest.approx(ref.uniform)


@pytest.mark.parametrize("k", K_VALUES)
def test_public_goods_and_pd_baseline_is_the_worst_cell(k):
    for a in ("public_goods", "prisoners_dilemma"):
        ref = eq.reference_points(a, k)
        assert ref.baseline == ref.worst_cell == ref.ne_best == ref.ne_worst


def _brute_force_ceiling(a, k, steps):
    pm = payoff_matrices(a, k)
    m = ARCHETYPES[a].mirror(k)
    best = -np.inf
    for counts in itertools.product(range(steps + 1), repeat=k - 1):
        if sum(counts) > steps:
            continue
        p = np.array([*counts, steps - sum(counts)], float) / steps
        best = max(best, p @ pm.welfare @ p[m])
    return best


@pytest.mark.parametrize(
    "a,k,steps",
    [(a, k, s) for a in ARCHETYPE_NAMES if ARCHETYPES[a].role_symmetric for k, s in ((2, 2000), (3, 90), (4, 30))],
)
def test_symmetric_ceiling_against_a_grid(a, k, steps):
    value, p = eq.symmetric_ceiling(a, k)
    pm = payoff_matrices(a, k)
    assert p.min() >= 0 and p.sum() == pytest.approx(1)
    assert p @ pm.welfare @ eq.mirrored(a, k, p) == pytest.approx(value, abs=1e-9)  # achievable
    grid = _brute_force_ceiling(a, k, steps)
    assert value >= grid - 1e-9  # no grid point beats it
    assert value - grid <= 0.02 * (pm.welfare.max() - pm.welfare.min())  # and the grid comes close


@given(st.sampled_from([a for a in ARCHETYPE_NAMES if ARCHETYPES[a].role_symmetric]), st.integers(2, 10), st.data())
@settings(max_examples=60, deadline=None)
def test_no_symmetric_play_beats_the_ceiling(a, k, data):
    weights = np.array(data.draw(st.lists(st.floats(0, 1), min_size=k, max_size=k)))
    if weights.sum() == 0:
        weights[0] = 1
    p = weights / weights.sum()
    value, _ = eq.symmetric_ceiling(a, k)
    pm = payoff_matrices(a, k)
    assert p @ pm.welfare @ eq.mirrored(a, k, p) <= value + 1e-9


def test_stated_ceilings():
    for k in K_VALUES:
        assert eq.symmetric_ceiling("coordination", k)[0] == pytest.approx(2)
        assert eq.symmetric_ceiling("anti_coordination", k)[0] == pytest.approx(2 * (1 - 1 / k))
        assert eq.symmetric_ceiling("battle_of_sexes", k)[0] == pytest.approx(2.5)
        assert eq.symmetric_ceiling("stag_hunt", k)[0] == pytest.approx(4 * k)
        assert eq.symmetric_ceiling("public_goods", k)[0] == pytest.approx(3 * (k - 1))
        assert eq.symmetric_ceiling("prisoners_dilemma", k)[0] == pytest.approx(2 * k + 2)
    assert eq.reference_points("hide_and_seek", 4).symmetric_ceiling is None


def test_reference_points_are_ordered():
    for a, k in ALL_CELLS:
        ref = eq.reference_points(a, k)
        assert ref.worst_cell <= ref.ne_worst <= ref.ne_mean <= ref.ne_best <= ref.best_cell
        assert ref.worst_cell <= ref.uniform <= ref.best_cell
        assert ref.sensitivity["worst_symmetric_ne"] <= ref.baseline <= ref.sensitivity["best_symmetric_ne"]
        if ref.symmetric_ceiling is not None:
            assert ref.sensitivity["best_symmetric_ne"] <= ref.symmetric_ceiling + 1e-9
        json.dumps(ref.to_json())


@pytest.mark.parametrize("k", K_VALUES)
def test_baseline_strategies(k):
    stag = eq.reference_points("stag_hunt", k).baseline_strategy
    # a 50/50 mix of effort 1 with a higher effort (all such mixes are worth 2(k + 1))
    assert (
        stag[0] == pytest.approx(0.5) and sorted(stag[1:])[-1] == pytest.approx(0.5) and sum(stag) == pytest.approx(1)
    )
    np.testing.assert_allclose(eq.reference_points("coordination", k).baseline_strategy, 1 / k)
    ref = eq.reference_points("battle_of_sexes", k)
    assert min(ref.baseline_strategy) > 0  # full support
    listed = ref.to_json()
    assert listed["symmetric_ne_count"] == len(ref.symmetric_ne) and len(listed["symmetric_ne"]) <= 16


def test_disk_cache_round_trip_and_repair(tmp_path, solved, monkeypatch):
    """The disk cache of recomputed cells (the solver stood in for by the verified shipped cell)."""
    monkeypatch.setattr(eq, "solve_extreme_equilibria", lambda a, k: eq.shipped_cell(a, k)[0])
    eq.clear_memory_cache()
    first = eq.extreme_equilibria("anti_coordination", 4, cache_dir=tmp_path, shipped=False)
    (path,) = tmp_path.glob("*anti_coordination-k4.json")
    eq.clear_memory_cache()
    again = eq.extreme_equilibria("anti_coordination", 4, cache_dir=tmp_path, shipped=False)
    np.testing.assert_array_equal(first.row, again.row)
    np.testing.assert_array_equal(first.col, again.col)
    # a tampered entry (no longer an equilibrium) is detected by regret and recomputed
    data = json.loads(path.read_text())
    data["row"][0] = [0.5, 0.5, 0.0, 0.0]
    data["col"][0] = [0.5, 0.5, 0.0, 0.0]
    path.write_text(json.dumps(data))
    eq.clear_memory_cache()
    assert eq._read_cache(tmp_path, "anti_coordination", 4) is None
    repaired = eq.extreme_equilibria("anti_coordination", 4, cache_dir=tmp_path, shipped=False)
    assert len(repaired) == len(solved["anti_coordination", 4])
    path.write_text("not json")
    eq.clear_memory_cache()
    assert len(eq.extreme_equilibria("anti_coordination", 4, cache_dir=tmp_path, shipped=False)) == 13
    # a truncated entry (valid JSON, valid equilibria, but too few) is not used: the manifest knows the count
    data = json.loads(json.dumps(repaired.to_json()))
    data["row"], data["col"] = data["row"][:4], data["col"][:4]
    path.write_text(json.dumps(data))
    eq.clear_memory_cache()
    assert eq._read_cache(tmp_path, "anti_coordination", 4) is None
    assert len(eq.extreme_equilibria("anti_coordination", 4, cache_dir=tmp_path, shipped=False)) == 13
    eq.clear_memory_cache()


def test_a_study_does_not_solve_with_the_shipped_table(tmp_path, monkeypatch):
    """With the shipped (checksummed) table intact, a study never calls the solver."""
    calls = []
    real = eq.solve_extreme_equilibria
    monkeypatch.setattr(eq, "solve_extreme_equilibria", lambda a, k: calls.append((a, k)) or real(a, k))
    monkeypatch.setenv(eq.CACHE_ENV, str(tmp_path))
    eq.clear_memory_cache()
    from arena_games.matrix.study import StudyConfig, run_study

    config = StudyConfig(player="matrix_uniform", archetypes=("chicken", "stag_hunt"), ks=(3, 4), trials=4)
    run_study(config, None)
    eq.clear_memory_cache()  # as a fresh process would start
    run_study(config, None)
    assert calls == [] and list(tmp_path.glob("*.json")) == []
    eq.clear_memory_cache()
