"""arena_core.stats: distributions against known values, interval invariants, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arena_core import stats


# ---------------------------------------------------------------------- known values
@pytest.mark.parametrize(
    "p, df, expected",
    [
        (0.975, 1, 12.706204736),
        (0.975, 3, 3.182446305),
        (0.975, 7, 2.364624252),
        (0.975, 30, 2.042272456),
        (0.995, 5, 4.032142984),
        (0.9, 10, 1.372183641),
        (0.8, 2, 1.060660172),
    ],
)
def test_t_quantile_known_values(p, df, expected):
    assert stats.t_quantile(p, df) == pytest.approx(expected, abs=1e-7)
    assert stats.t_quantile(1 - p, df) == pytest.approx(-expected, abs=1e-7)
    assert stats.t_cdf(expected, df) == pytest.approx(p, abs=1e-9)


def test_t_quantile_tends_to_normal():
    assert stats.t_quantile(0.975, math.inf) == pytest.approx(1.959963985, abs=1e-8)
    assert stats.t_quantile(0.975, 100000) == pytest.approx(1.96, abs=1e-3)
    with pytest.raises(ValueError):
        stats.t_quantile(1.0, 3)


def test_binomial_and_sign_test_known_values():
    assert stats.binomial_two_sided(0, 5) == pytest.approx(2 / 32)
    assert stats.binomial_two_sided(3, 12) == pytest.approx(0.14599609375)
    assert stats.sign_test([1, 2, -1, 0, 3]) == (3, 4, pytest.approx(0.625))


def test_wilcoxon_known_values():
    # exact: all 6 positive with distinct ranks -> p = 2 / 2^6
    assert stats.wilcoxon_signed_rank([1, 2, 3, 4, 5, 6])[1] == pytest.approx(2 / 64)
    w, p = stats.wilcoxon_signed_rank([1.0, -2.0, 3.0, -4.0, 5.0, 6.0, 7.0, -8.0])
    assert w == 22.0 and p == pytest.approx(0.640625)  # scipy.stats.wilcoxon: 0.640625
    assert stats.wilcoxon_signed_rank([0, 0, 0]) == (0.0, 1.0)


def test_paired_t_known_value():
    mean, lo, hi, p = stats.paired_t([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    half = 3.182446305 * math.sqrt(5 / 3) / 2
    assert (lo, hi) == (pytest.approx(2.5 - half), pytest.approx(2.5 + half))
    assert p == pytest.approx(0.0304663, abs=1e-6)  # scipy.stats.ttest_1samp


def test_wilson_known_and_never_zero_width():
    lo, hi = stats.wilson_interval(12, 12)
    assert lo == pytest.approx(0.7575, abs=1e-4) and hi == 1.0
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        stats.wilson_interval(5, 4)


# ---------------------------------------------------------------------- multiple comparisons
def test_holm_and_bh_known_cases():
    p = [0.01, 0.04, 0.03, 0.005]
    assert stats.holm(p, 0.05) == [True, False, False, True]  # 0.005<=.0125, 0.01<=.0167, 0.03>.025 stops
    assert stats.benjamini_hochberg(p, 0.05) == [True, True, True, True]  # 0.04 <= 0.05
    assert stats.holm([], 0.05) == [] and stats.benjamini_hochberg([]) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.floats(0.001, 0.2))
@example([0.0, 0.0, 0.05773277069527964], 0.05773277069527964)  # q * 3 / 3 rounded below q
def test_holm_between_bonferroni_and_bh(p, alpha):
    h, bh = stats.holm(p, alpha), stats.benjamini_hochberg(p, alpha)
    bonf = [x <= alpha / len(p) for x in p]
    for b, hh, q in zip(bonf, h, bh):
        assert (not b or hh) and (not hh or q)  # Bonferroni ⊆ Holm ⊆ BH
    # monotone: a rejected p-value rejects every smaller one
    for i in range(len(p)):
        for j in range(len(p)):
            if h[i] and p[j] < p[i]:
                assert h[j]


def test_holm_controls_familywise_error_under_the_null():
    rng = np.random.default_rng(3)
    any_false = sum(any(stats.holm(rng.random(78), 0.05)) for _ in range(2000))
    assert any_false / 2000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


# ---------------------------------------------------------------------- cluster means
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.floats(0, 1)), min_size=2, max_size=20))
def test_cluster_share_interval_never_zero_width_and_contains_estimate(clusters):
    counts = [c for c, _ in clusters]
    sums = [round(c * f * 2) / 2 for c, f in clusters]  # half-point ties allowed
    c = stats.cluster_mean(sums, counts, bounds=(0.0, 1.0))
    assert 0.0 <= c.low < c.high <= 1.0
    assert c.low - 1e-12 <= c.estimate <= c.high + 1e-12
    assert 0.0 <= c.pvalue <= 1.0
    # the interval excludes 0.5 exactly when the p-value is below 5% (they agree)
    if c.pvalue < 0.049:
        assert c.low > 0.5 or c.high < 0.5
    if c.low > 0.5001 or c.high < 0.4999:
        assert c.pvalue < 0.051


def test_separation_and_equal_shares_get_honest_width():
    sep = stats.cluster_mean([3, 3, 3, 3], [3, 3, 3, 3], bounds=(0, 1))
    assert sep.high == 1.0 and 0.4 < sep.low < 0.8
    eq = stats.cluster_mean([1, 1, 1, 1], [3, 3, 3, 3], bounds=(0, 1))
    assert eq.low < 0.2 and eq.high > 0.6
    assert stats.cluster_mean_interval([2.0, 2.0], [1, 1]) == (-math.inf, math.inf)
    with pytest.raises(ValueError):
        stats.cluster_mean_interval([1.0], [3])


def test_cluster_mean_interval_covers_with_few_correlated_clusters():
    """4 clusters, a shared cluster effect: the t interval keeps ~95%; a z interval would not."""
    rng = np.random.default_rng(11)
    trials, hit_t, hit_z = 4000, 0, 0
    for _ in range(trials):
        effect = rng.normal(0, 1.0, 4)
        x = effect[:, None] + rng.normal(0, 1.0, (4, 5))
        sums, counts = x.sum(axis=1), np.full(4, 5)
        lo, hi = stats.cluster_mean_interval(sums, counts)
        hit_t += lo <= 0.0 <= hi
        r = sums.sum() / 20
        se = math.sqrt(4 / 3 * np.sum((sums - r * counts) ** 2)) / 20
        hit_z += abs(r) <= 1.96 * se
    mc = 3 * math.sqrt(0.05 * 0.95 / trials)
    assert abs(hit_t / trials - 0.95) < mc
    assert hit_z / trials < 0.95 - mc  # the correction is what makes the difference


def test_bootstrap_t_interval_and_factor():
    assert stats.small_sample_factor(8) == pytest.approx(math.sqrt(8 / 7) * 2.364624252 / 1.959963985)
    lo, hi, se = stats.bootstrap_t_interval(np.array([1.0]), np.zeros((50, 1)), 5, se_floor=0.5)
    assert hi[0] - lo[0] == pytest.approx(2 * 1.959963985 * 0.5) and se[0] == pytest.approx(
        1.959963985 * 0.5 / 2.776445105
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=30))
def test_paired_bootstrap_brackets_mean_and_widens(values):
    a = np.array(values) + 0.25 * np.arange(len(values)) % 1.0
    iv = stats.paired_bootstrap(a, values, seed=2, resamples=300)
    assert iv.low - 1e-9 <= iv.mean <= iv.high + 1e-9


def test_paired_bootstrap_says_nothing_from_one_unit_or_no_spread_without_bounds():
    one = stats.paired_bootstrap([0.5], [0.0], seed=1)
    assert (one.low, one.high) == (-math.inf, math.inf)  # one deal: no spread to judge by
    flat = stats.paired_bootstrap([0.5] * 6, [0.0] * 6, seed=1)
    assert (flat.low, flat.high) == (-math.inf, math.inf) and flat.mean == 0.5


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 200), value=st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]))
def test_identical_differences_within_bounds_never_give_a_zero_width_interval(n, value):
    iv = stats.paired_bootstrap([value] * n, [0.0] * n, seed=3, bounds=(-1.0, 1.0))
    assert -1.0 <= iv.low <= iv.mean == value <= iv.high <= 1.0
    assert iv.high - iv.low > 0  # finite data never settles the difference exactly
    bigger = stats.paired_bootstrap([value] * (2 * n), [0.0] * (2 * n), seed=3, bounds=(-1.0, 1.0))
    assert bigger.high - bigger.low < iv.high - iv.low  # more identical deals, a narrower interval


def test_a_sweep_over_few_deals_is_not_resolved_but_over_many_is():
    few = stats.paired_bootstrap([0.5] * 3, [0.0] * 3, seed=4, bounds=(-1.0, 1.0))
    assert few.low <= 0.0  # 3 identical deals: the bounds still allow no difference
    many = stats.paired_bootstrap([0.5] * 100, [0.0] * 100, seed=4, bounds=(-1.0, 1.0))
    assert many.low > 0.3


# ---------------------------------------------------------------------- sample size
def test_deals_needed_matches_the_normal_formula_and_is_monotone():
    n = stats.deals_needed(0.5, 1.0)
    assert n == 34  # (1.96 + 0.84)^2 / 0.25 = 31.4, plus the t correction
    assert stats.deals_needed(0.25, 1.0) > n > stats.deals_needed(1.0, 1.0)
    assert stats.deals_needed(0.5, 1.0, comparisons=78) > n
    with pytest.raises(ValueError):
        stats.deals_needed(0.0, 1.0)


def test_deals_needed_achieves_its_power():
    rng = np.random.default_rng(5)
    n = stats.deals_needed(0.5, 1.0, power=0.8)
    hits = sum(stats.paired_t(rng.normal(0.5, 1.0, n))[3] < 0.05 for _ in range(2000))
    assert 0.77 <= hits / 2000 <= 0.86


def test_paired_battery_side_by_side():
    rng = np.random.default_rng(0)
    b = stats.paired_battery(rng.normal(1.0, 1.0, 30), seed=1)
    assert b.n == 30 and b.t_low < b.mean < b.t_high
    assert b.bootstrap_low < b.mean < b.bootstrap_high
    assert b.t_p < 0.01 and b.wilcoxon_p < 0.01 and b.sign_p < 0.05 and b.win_share > 0.6


def test_deals_needed_is_fast_for_tiny_effects_and_refuses_non_positive_ones():
    import time

    t0 = time.perf_counter()
    assert stats.deals_needed(0.01, 1.0) == 78491  # stepping one deal at a time took seconds
    assert stats.deals_needed(1e-6, 1.0) == 1_000_000  # capped, at once
    assert time.perf_counter() - t0 < 1.0
    for bad in (-0.5, 0.0, math.nan):
        with pytest.raises(ValueError, match="positive"):
            stats.deals_needed(bad, 1.0)


def test_clustered_mean_counts_deals_not_trials():
    """Trials grouped by their deal: a sweep of 12 trials over 4 deals is 4 units (p > 0.05);
    the same 12 trials on 12 deals are 12 units (p < 0.01)."""
    few = stats.clustered_mean([1.0] * 12, [d for d in range(4) for _ in range(3)], bounds=(0.0, 1.0), null=0.5)
    assert few.clusters == 4 and few.pvalue > 0.05 and few.low < 0.5
    many = stats.clustered_mean([1.0] * 12, list(range(12)), bounds=(0.0, 1.0), null=0.5)
    assert many.clusters == 12 and many.pvalue < 0.01 and many.low > 0.5


def test_regression_slope_known_value():
    beta, lo, hi, p = stats.regression_slope([1.0, 2.9, 5.1, 7.0], [0.0, 1.0, 2.0, 3.0])
    assert beta == pytest.approx(2.02) and lo < 2.02 < hi and p < 0.01


# ---------------------------------------------------------------------- a p-value agrees with its interval
_tiny_samples = st.lists(
    st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]) | st.floats(-5, 5, allow_nan=False, width=32),
    min_size=1,
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(diffs=_tiny_samples, level=st.sampled_from([0.9, 0.95, 0.99]))
@example(diffs=[2.0, 2.0], level=0.95)  # a separated pair of deals: no spread, no evidence for t
def test_paired_t_p_value_rejects_exactly_when_the_interval_excludes_zero(diffs, level):
    mean, lo, hi, p = stats.paired_t(diffs, level)
    alpha = 1 - level
    if abs(p - alpha) < 1e-9 or min(abs(lo), abs(hi)) < 1e-9:
        return  # on the boundary: float rounding decides
    assert (p < alpha) == (not lo <= 0 <= hi), (mean, lo, hi, p)


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(
        st.tuples(st.sampled_from([-1.0, 0.0, 1.0, 2.0]), st.sampled_from([0.0, 1.0, 2.0, 3.0])), min_size=1, max_size=7
    ),
    level=st.sampled_from([0.9, 0.95]),
)
@example(points=[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)], level=0.95)  # three collinear deals
def test_regression_slope_never_gives_a_zero_width_interval_and_agrees_with_its_p(points, level):
    y, x = [a for a, _ in points], [b for _, b in points]
    beta, lo, hi, p = stats.regression_slope(y, x, level)
    assert lo < hi, (beta, lo, hi)  # no zero-width interval from finite data
    alpha = 1 - level
    if abs(p - alpha) < 1e-9 or min(abs(lo), abs(hi)) < 1e-9:
        return
    assert (p < alpha) == (not lo <= 0 <= hi), (beta, lo, hi, p)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=8),
    st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=8),
)
def test_a_bounded_difference_interval_stays_in_its_range_on_tiny_and_separated_data(a, b):
    """Win rates per deal lie in [0, 1] and their differences in [-1, 1], so their mean does: an interval widened
    for few deals (the loop's ``+75.0 [-18.7, +121.9]`` on a 100-point scale) is clipped to it,
    keeps the mean inside and never shrinks to zero width."""
    n = min(len(a), len(b))
    iv = stats.paired_bootstrap(a[:n], b[:n], seed=7, resamples=300, bounds=(-1.0, 1.0))
    assert -1.0 <= iv.low <= iv.mean <= iv.high <= 1.0
    assert iv.high > iv.low


def test_a_near_sweep_over_three_deals_is_clipped_at_the_bound():
    # after won 2 of 2 games on every deal, before 0 of 2 on two deals and 1 of 2 on one: separated data
    iv = stats.paired_bootstrap([1.0, 1.0, 1.0], [0.0, 0.0, 0.5], seed=1, resamples=2000, bounds=(-1.0, 1.0))
    assert iv.high == 1.0 and iv.low < iv.mean < 1.0
    unbounded = stats.paired_bootstrap([1.0, 1.0, 1.0], [0.0, 0.0, 0.5], seed=1, resamples=2000)
    assert unbounded.high > 1.0  # the widening alone leaves the range: what the bounds are for
