"""The statistics module (intervals, paired tests, multiple-comparison control, sample sizes) that
every consumer takes its intervals from: one module, past 500 lines, because it is the one place
statistics live (games, tournaments and training share it). Conventions (docs/tournaments.md
shows why):

- An interval covers a *population* quantity (over the deals the clusters were drawn from).
- Few clusters get a small-sample correction: t quantiles with ``m - 1`` degrees of freedom on
  cluster-level values (and the ``m / (m - 1)`` variance factor for bootstrap spreads).
- No zero-width interval from finite data: a share gets at least its Wilson score interval;
  other quantities with no spread at all get an unbounded interval.
- Only numpy and the standard library (no scipy): the t distribution is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, TypeAlias

import numpy as np

from .seeding import make_rng

#: a sample: a sequence of floats or a numeric array (every function reads it through np.asarray)
Floats: TypeAlias = "Sequence[float] | np.ndarray[Any, Any]"

_NORMAL = NormalDist()

__all__ = [
    "normal_cdf",
    "normal_quantile",
    "t_cdf",
    "t_sf",
    "t_quantile",
    "binomial_two_sided",
    "wilson_interval",
    "holm",
    "holm_adjusted",
    "benjamini_hochberg",
    "ClusterMean",
    "cluster_mean",
    "cluster_mean_interval",
    "clustered_mean",
    "cluster_bootstrap_weights",
    "small_sample_factor",
    "bootstrap_t_interval",
    "PairedInterval",
    "paired_bootstrap",
    "PairedBattery",
    "paired_battery",
    "paired_t",
    "sign_test",
    "wilcoxon_signed_rank",
    "deals_needed",
    "regression_slope",
]


# ---------------------------------------------------------------------- distributions
def normal_cdf(x: float) -> float:
    """Standard normal distribution function."""
    return _NORMAL.cdf(x)


def normal_quantile(p: float) -> float:
    """Standard normal quantile, ``0 < p < 1``."""
    return _NORMAL.inv_cdf(p)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        # the even then the odd step of the fraction; the odd step's factor says when to stop
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf(x: float, df: float) -> float:
    """Upper tail P(T > x) of Student's t with ``df`` degrees of freedom."""
    if math.isinf(df):
        return 1.0 - normal_cdf(x)
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + x * x))
    return tail if x >= 0 else 1.0 - tail


def t_cdf(x: float, df: float) -> float:
    """Distribution function of Student's t with ``df`` degrees of freedom."""
    return 1.0 - t_sf(x, df)


def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t with ``df`` (> 0) degrees of freedom, ``0 < p < 1``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile needs 0 < p < 1, got {p}")
    if df <= 0:
        raise ValueError(f"t_quantile needs df > 0, got {df}")
    if math.isinf(df):
        return normal_quantile(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    z = normal_quantile(p)
    lo, hi = 0.0, max(1.0, z)
    while t_cdf(hi, df) < p:
        hi *= 2.0
    # Newton steps on the distribution function (quadratic: a handful of evaluations), kept
    # inside the bracket [lo, hi] by bisection whenever a step would leave it
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    x = min(max(z + (z**3 + z) / (4 * df), lo), hi)
    for _ in range(200):
        f = t_cdf(x, df) - p
        if f < 0:
            lo = x
        else:
            hi = x
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(x * x / df))
        nx = x - f / density if density > 0 else 0.5 * (lo + hi)
        if not lo < nx < hi:
            nx = 0.5 * (lo + hi)
        if abs(nx - x) < 1e-12 * max(1.0, abs(nx)) or hi - lo < 1e-12 * max(1.0, hi):
            return nx
        x = nx
    return x


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes in ``n`` fair coin flips (doubled smaller tail)."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


# ---------------------------------------------------------------------- shares and corrections
def wilson_interval(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a success probability from ``successes`` of ``n`` independent
    trials (fractional counts allowed, e.g. ties as halves). Covers the trials' success
    probability; never zero width for ``n > 0``; ``(0, 1)`` for ``n == 0``."""
    if n <= 0:
        return (0.0, 1.0)
    if not -1e-9 <= successes <= n + 1e-9:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got {successes} of {n}")
    successes = min(max(successes, 0.0), n)
    z = normal_quantile(0.5 + level / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def holm(pvalues: Floats, alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: True where the hypothesis is rejected. Controls the chance of
    any false rejection among all the hypotheses (family-wise error) at ``alpha``."""
    p = list(pvalues)
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [False] * len(p)
    for rank, i in enumerate(order):
        if not (p[i] <= alpha / (len(p) - rank)):
            break
        out[i] = True
    return out


def holm_adjusted(pvalues: Floats) -> list[float]:
    """Holm's adjusted p-values (``max over j <= i of (m - j) p_(j)`` in sorted order, capped at 1):
    :func:`holm` rejects at ``alpha`` where the adjusted p-value is <= ``alpha`` (to rounding)."""
    p = list(pvalues)
    out, running = [1.0] * len(p), 0.0
    for rank, i in enumerate(sorted(range(len(p)), key=lambda i: p[i])):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Floats, q: float = 0.05) -> list[bool]:
    """Benjamini–Hochberg step-up procedure: True where rejected; controls the expected share of
    false rejections among the rejections (false discovery rate) at ``q`` (independent or
    positively dependent tests)."""
    p = list(pvalues)
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    last = -1
    for rank, i in enumerate(order):
        if p[i] <= q / (m / (rank + 1)):  # q/m at the first rank and q at the last, as Holm's and Bonferroni's
            last = rank
    out = [False] * m
    for rank in range(last + 1):
        out[order[rank]] = True
    return out


def small_sample_factor(m: int, level: float = 0.95) -> float:
    """How much to widen a normal-theory (or bootstrap-spread) interval from ``m`` clusters:
    ``sqrt(m / (m - 1)) * t_{m-1} / z`` (bootstrap spreads divide by ``m``, not ``m - 1``, and
    a t quantile accounts for estimating the spread from ``m`` values)."""
    if m < 2:
        raise ValueError("a small-sample correction needs at least 2 clusters")
    q = 0.5 + level / 2.0
    return math.sqrt(m / (m - 1)) * t_quantile(q, m - 1) / normal_quantile(q)


# ---------------------------------------------------------------------- cluster means
@dataclass(frozen=True)
class ClusterMean:
    """A ratio mean over clusters with its interval and a two-sided p-value against ``null``."""

    estimate: float
    low: float
    high: float
    se: float
    clusters: int
    count: float
    pvalue: float


def cluster_mean(
    cluster_sums: Floats,
    cluster_counts: Floats,
    level: float = 0.95,
    *,
    bounds: tuple[float, float] | None = None,
    null: float | None = None,
) -> ClusterMean:
    """Mean ``sum(sums) / sum(counts)`` from per-cluster totals, its interval and p-value.

    Covers the population mean over clusters like these. The interval is ``estimate ± t_{m-1} ·
    se`` with the linearised (ratio) cluster variance ``m/(m-1) Σ (s_i - r n_i)² / N²``. With
    ``bounds`` (values known to lie in ``[lo, hi]``) it also contains the Wilson score interval of
    the ``N`` observations taken as independent (no t correction: a known least spread) and the t
    interval of the cluster means with one pseudo-cluster at each bound (``m - 1`` degrees of
    freedom; docs/tournaments.md, "The small-sample correction"); without ``bounds`` and with no
    spread at all it is unbounded. The p-value (against ``null``, default the middle of ``bounds``
    or 0) is the largest of those tests', so it agrees with the interval. Raises ValueError for
    fewer than 2 clusters.
    """
    s = np.asarray(cluster_sums, dtype=float)
    n = np.asarray(cluster_counts, dtype=float)
    if s.shape != n.shape or s.ndim != 1:
        raise ValueError("cluster_sums and cluster_counts must be 1-D and the same length")
    keep = n > 0
    s, n = s[keep], n[keep]
    m = len(s)
    if m < 2:
        raise ValueError(f"a cluster interval needs at least 2 clusters with data, got {m}")
    total = float(n.sum())
    r = float(s.sum()) / total
    var = m / (m - 1) * float(np.sum((s - r * n) ** 2)) / total**2
    se = math.sqrt(max(var, 0.0))
    tq = t_quantile(0.5 + level / 2.0, m - 1)
    if null is None:
        null = 0.0 if bounds is None else 0.5 * (bounds[0] + bounds[1])
    if se > 1e-12 * max(1.0, abs(r)):
        lo, hi = r - tq * se, r + tq * se
        p = 2.0 * t_sf(abs(r - null) / se, m - 1)
    else:
        lo, hi = (-math.inf, math.inf) if bounds is None else (r, r)
        p = 1.0 if bounds is None else (0.0 if r != null else 1.0)
    if bounds is not None:
        b0, b1 = bounds
        width = b1 - b0
        if width <= 0:
            raise ValueError("bounds must be (low, high) with low < high")
        share = min(max((r - b0) / width, 0.0), 1.0)
        w0, w1 = wilson_interval(share * total, total, level)
        lo, hi = max(b0, min(lo, b0 + w0 * width)), min(b1, max(hi, b0 + w1 * width))
        sn = (null - b0) / width
        if 0.0 < sn < 1.0:
            z = (share - sn) / math.sqrt(sn * (1 - sn) / total)
            p = max(p, 2.0 * (1.0 - normal_cdf(abs(z))))
        # the deals as the unit: cluster means padded with one pseudo-cluster at each bound
        padded = np.concatenate([s / n, [b0, b1]])
        se_pad = float(padded.std(ddof=1)) / math.sqrt(m + 2)
        lo, hi = max(b0, min(lo, r - tq * se_pad)), min(b1, max(hi, r + tq * se_pad))
        if se_pad > 0:
            p = max(p, 2.0 * t_sf(abs(r - null) / se_pad, m - 1))
        se = max(se, se_pad)
    return ClusterMean(r, float(lo), float(hi), se, m, total, float(min(1.0, p)))


def clustered_mean(
    values: Floats,
    clusters: Sequence[Any],
    level: float = 0.95,
    *,
    bounds: tuple[float, float] | None = None,
    null: float | None = None,
) -> ClusterMean:
    """Mean of per-observation ``values`` with the interval and p-value of :func:`cluster_mean`,
    the observations grouped by ``clusters`` (one label per value, e.g. the deal seed: trials on one
    deal then count as one unit, as any per-trial metric whose trials share deals needs). Raises
    ValueError for fewer than 2 distinct clusters."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) != len(clusters):
        raise ValueError("clustered_mean needs one cluster label per value")
    index: dict[Any, int] = {}
    for c in clusters:
        index.setdefault(c, len(index))
    ids = np.array([index[c] for c in clusters], dtype=int)
    sums = np.bincount(ids, weights=v, minlength=len(index))
    counts = np.bincount(ids, minlength=len(index)).astype(float)
    return cluster_mean(sums, counts, level, bounds=bounds, null=null)


def cluster_mean_interval(
    cluster_sums: Floats,
    cluster_counts: Floats,
    level: float = 0.95,
    *,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """Interval for the ratio mean ``sum(sums) / sum(counts)`` from per-cluster totals; see
    :func:`cluster_mean` (t with ``m - 1`` df on cluster-level values; never zero width)."""
    c = cluster_mean(cluster_sums, cluster_counts, level, bounds=bounds)
    return (c.low, c.high)


# ---------------------------------------------------------------------- bootstrap
def cluster_bootstrap_weights(num_clusters: int, resamples: int, seed: int, *keys: int | str) -> np.ndarray:
    """(resamples, num_clusters) counts: clusters drawn with replacement, from ``seed`` and ``keys``."""
    rng = make_rng(seed, "bootstrap", *keys)
    draws = rng.integers(num_clusters, size=(resamples, num_clusters))
    weights = np.zeros((resamples, num_clusters))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1.0)
    return weights


def bootstrap_t_interval(
    estimate: np.ndarray, boot: np.ndarray, clusters: int, level: float = 0.95, *, se_floor: np.ndarray | float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small-sample interval from a cluster bootstrap (``boot``: resamples along axis 0):
    ``estimate ± max(t_{m-1} · sqrt(m/(m-1)) · sd(boot), z · se_floor)``, where ``se_floor``
    is a known least standard error (e.g. the model's, every game independent; a known
    spread needs no t correction). Covers the population value the estimate targets.
    Returns (low, high, se) with ``se = half-width / t_{m-1}`` (for a t test that agrees)."""
    m = clusters
    if m < 2:
        raise ValueError("a bootstrap interval needs at least 2 clusters")
    sd = np.std(np.asarray(boot, dtype=float), axis=0, ddof=1) * math.sqrt(m / (m - 1))
    q = 0.5 + level / 2.0
    tq = t_quantile(q, m - 1)
    half = np.maximum(tq * sd, normal_quantile(q) * np.asarray(se_floor, dtype=float))
    est = np.asarray(estimate, dtype=float)
    return est - half, est + half, half / tq


@dataclass(frozen=True)
class PairedInterval:
    mean: float
    low: float
    high: float
    n: int


def paired_bootstrap(
    a: Floats,
    b: Floats,
    *,
    seed: int,
    resamples: int = 2000,
    level: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> PairedInterval:
    """Bootstrap interval of mean(a - b) over paired units (deals): percentile interval
    widened about the mean by :func:`small_sample_factor`. Covers the population mean
    difference per unit. Never zero width from finite data: one unit says nothing, (-inf, inf);
    so do differences that are all the same, unless ``bounds`` (the range a per-unit difference
    can take) are given: then the t interval of the differences plus one pseudo-unit at each
    bound, clipped to the bounds (it narrows as identical units accumulate). With ``bounds``
    every interval is clipped to them (the mean lies within them)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.size == 0:
        raise ValueError("paired_bootstrap needs at least one pair")
    mean = float(d.mean())
    if d.size < 2:
        return PairedInterval(mean, -math.inf, math.inf, 1)
    if float(np.ptp(d)) <= 1e-12 * max(1.0, abs(mean)):  # the same difference everywhere (float noise aside)
        if bounds is None:
            return PairedInterval(mean, -math.inf, math.inf, int(d.size))
        low_bound, high_bound = bounds
        padded = np.concatenate([d, [low_bound, high_bound]])
        half = t_quantile(0.5 + level / 2.0, d.size - 1) * float(padded.std(ddof=1)) / math.sqrt(padded.size)
        return PairedInterval(mean, max(low_bound, mean - half), min(high_bound, mean + half), int(d.size))
    rng = make_rng(seed, "paired_bootstrap")
    idx = rng.integers(0, d.size, size=(resamples, d.size))
    means = d[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    c = small_sample_factor(d.size, level)
    lo, hi = mean + c * (min(lo, mean) - mean), mean + c * (max(hi, mean) - mean)
    if bounds is not None:  # the mean lies within them: an interval widened for few units is clipped too
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return PairedInterval(mean, float(lo), float(hi), int(d.size))


# ---------------------------------------------------------------------- paired tests
def paired_t(diffs: Floats, level: float = 0.95) -> tuple[float, float, float, float]:
    """One-sample t on per-unit differences: (mean, low, high, two-sided p). Covers the
    population mean difference; (mean, -inf, inf, 1) with no spread or fewer than 2 units (t
    cannot judge them: the exact sign and signed-rank tests still can)."""
    d = np.asarray(diffs, dtype=float)
    n = d.size
    if n == 0:
        raise ValueError("paired_t needs at least one difference")
    mean = float(d.mean())
    if n < 2 or float(d.std(ddof=1)) == 0.0:
        return mean, -math.inf, math.inf, 1.0
    se = float(d.std(ddof=1)) / math.sqrt(n)
    tq = t_quantile(0.5 + level / 2.0, n - 1)
    return mean, mean - tq * se, mean + tq * se, 2.0 * t_sf(abs(mean) / se, n - 1)


def sign_test(diffs: Floats) -> tuple[int, int, float]:
    """Exact sign test: (positives, non-zero units, two-sided p); zeros are dropped."""
    d = np.asarray(diffs, dtype=float)
    pos, neg = int((d > 0).sum()), int((d < 0).sum())
    return pos, pos + neg, binomial_two_sided(pos, pos + neg)


def wilcoxon_signed_rank(diffs: Floats) -> tuple[float, float]:
    """Wilcoxon signed-rank test: (W+ , two-sided p). Zeros dropped, ties get mid-ranks; exact
    null distribution for up to 50 non-zero units without ties, else the normal approximation
    with tie correction and continuity correction."""
    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 0.0, 1.0
    # mid-ranks of |d|: a group of t equal values ending at (1-based) rank e shares e - (t - 1) / 2
    _, group, sizes = np.unique(np.abs(d), return_inverse=True, return_counts=True, equal_nan=False)
    ranks = (np.cumsum(sizes) - (sizes - 1) / 2.0)[group]
    tie_term = float(np.sum(sizes**3 - sizes))
    w_plus = float(ranks[d > 0].sum())
    total = n * (n + 1) / 2.0
    if n <= 50 and tie_term == 0:
        counts = np.zeros(int(total) + 1)
        counts[0] = 1.0
        for k in range(1, n + 1):
            counts[k:] = counts[k:] + counts[:-k].copy()
        counts /= counts.sum()
        w = int(round(min(w_plus, total - w_plus)))
        return w_plus, float(min(1.0, 2.0 * counts[: w + 1].sum()))
    mean = total / 2.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0
    if var <= 0:
        return w_plus, 1.0
    z = (abs(w_plus - mean) - 0.5) / math.sqrt(var)
    return w_plus, float(min(1.0, 2.0 * (1.0 - normal_cdf(max(z, 0.0)))))


@dataclass(frozen=True)
class PairedBattery:
    """The robustness battery on per-deal differences (A minus B)."""

    n: int
    mean: float
    sd: float
    t_low: float
    t_high: float
    t_p: float
    wilcoxon_p: float
    bootstrap_low: float
    bootstrap_high: float
    sign_positive: int
    sign_nonzero: int
    sign_p: float
    win_share: float  # units with a positive difference (zeros count half)


def paired_battery(diffs: Floats, *, seed: int, resamples: int = 2000, level: float = 0.95) -> PairedBattery:
    """Paired t, Wilcoxon signed-rank, deal-cluster bootstrap, sign test and the share of units
    won, on the same per-unit differences (each unit one deal: independent by design)."""
    d = np.asarray(diffs, dtype=float)
    mean, lo, hi, p = paired_t(d, level)
    _, wp = wilcoxon_signed_rank(d)
    bi = paired_bootstrap(d, np.zeros_like(d), seed=seed, resamples=resamples, level=level)
    pos, nz, sp = sign_test(d)
    win = float(((d > 0).sum() + 0.5 * (d == 0).sum()) / d.size)
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    return PairedBattery(int(d.size), mean, sd, lo, hi, p, wp, bi.low, bi.high, pos, nz, sp, win)


# ---------------------------------------------------------------------- sample size
def deals_needed(
    effect: float,
    sd: float,
    level: float = 0.95,
    power: float = 0.8,
    *,
    comparisons: int = 1,
    max_deals: int = 1_000_000,
) -> int:
    """Independent units (deals) for a two-sided t test at ``level`` (Bonferroni over
    ``comparisons``) to detect a true mean difference ``effect`` (> 0) with probability ``power``
    when one unit's difference has standard deviation ``sd``: the smallest ``n >= 2`` with
    ``(t_{n-1}(1 - α/2) + t_{n-1}(power)) · sd / sqrt(n) <= effect``, or ``max_deals`` when even
    that many are not enough. Raises ValueError for an effect that is not positive."""
    if not math.isfinite(effect) or effect <= 0:
        raise ValueError(f"deals_needed: the effect must be a positive size, got {effect}")
    if not math.isfinite(sd) or sd < 0:
        raise ValueError(f"deals_needed: sd must be finite and non-negative, got {sd}")
    if sd == 0:
        return 2
    alpha = (1.0 - level) / max(1, comparisons)

    def enough(n: int) -> bool:
        return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)) * sd / math.sqrt(n) <= effect

    if enough(2):
        return 2
    # bracket from the normal approximation (a lower bound: t quantiles exceed normal ones), then bisect
    z = normal_quantile(1 - alpha / 2) + normal_quantile(power)
    guess = min(max_deals, max(3, math.ceil((z * sd / effect) ** 2)))
    if enough(guess):
        lo, hi = 2, guess
    else:
        lo, step = guess, max(2, guess // 16)
        while True:
            hi = min(max_deals, lo + step)
            if enough(hi):
                break
            if hi == max_deals:
                return max_deals
            lo, step = hi, 2 * step
    while hi - lo > 1:  # enough(lo) is False, enough(hi) is True
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------- regression
def regression_slope(y: Floats, x: Floats, level: float = 0.95) -> tuple[float, float, float, float]:
    """Least-squares slope of ``y`` on ``x`` over independent units: (slope, low, high,
    two-sided p against 0), t with ``n - 2`` degrees of freedom; (nan, -inf, inf, 1) with
    fewer than 3 units or no spread in ``x``, (slope, -inf, inf, 1) when the points lie exactly on
    a line (no residual spread to judge the slope by)."""
    yy, xx = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
    n = yy.size
    if n != xx.size:
        raise ValueError("regression_slope needs y and x of the same length")
    sxx = float(np.sum((xx - xx.mean()) ** 2)) if n else 0.0
    if n < 3 or sxx <= 0:
        return math.nan, -math.inf, math.inf, 1.0
    beta = float(np.sum((xx - xx.mean()) * (yy - yy.mean()))) / sxx
    resid = yy - yy.mean() - beta * (xx - xx.mean())
    se = math.sqrt(float(np.sum(resid**2)) / (n - 2) / sxx)
    if se == 0:
        return beta, -math.inf, math.inf, 1.0
    tq = t_quantile(0.5 + level / 2.0, n - 2)
    return beta, beta - tq * se, beta + tq * se, 2.0 * t_sf(abs(beta) / se, n - 2)
