"""Ratings with honest intervals from a tournament's finishing orders.

One file (over 500 lines) because every table it prints (ratings, differences, head-to-head, rank sets) comes from the same deal-cluster resamples and must be read together.

- Plackett–Luce strengths by the minorise-maximise method (Hunter 2004), as MegagemBench
  fits them: ties expanded into every consistent strict order (weighted equally), 0.1 virtual
  win and loss against an anchor of strength 1, log-strengths centred, reported on the Elo
  scale (400/ln 10 points per logit) around ``base``.
- The independent unit is the *deal*: every table plays the same deal seeds and a deal that
  favours one style favours it at every table, so a cluster is one deal with all its tables
  and seat rotations (one table on one deal only when deals are not shared between tables).
  Intervals cover the population of deals, not the deals played.
- 95% intervals for ratings and pairwise differences by a cluster bootstrap with a
  small-sample correction (``estimate ± t_{m-1} · sqrt(m/(m-1)) · bootstrap sd``, floored by
  the model standard error); none with fewer than 4 deals. "Resolved" pairs are Holm-
  controlled over all pairs; rank sets follow from the resolved pairs.
- Entrants that never meet (directly or through others) form separate groups: ranks and
  pairs are only given inside a group.
- Paired head-to-head for every pair: how often A finishes above B where both sit, with a
  deal-level t interval (and p-value) that counts deals, not games: never narrower than the
  Wilson interval of its games nor than the t interval of its per-deal shares with a
  pseudo-deal at each bound (a 12-0 sweep over 4 deals: p 0.058, not resolved), and the mean
  score difference.
- A TrueSkill-style rating (openskill's Plackett–Luce model), mean score, margin and
  finishing-position tables per player and per seat.

One file (over 500 lines) because every part reads the same per-deal stage statistics and the
summary is their one consumer; the generic statistics live in :mod:`arena_core.stats`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from arena_core.faults import FaultKind
from arena_core.stats import (
    bootstrap_t_interval,
    cluster_bootstrap_weights,
    cluster_mean,
    deals_needed,
    holm,
    holm_adjusted,
    t_quantile,
    t_sf,
)

from .results import OUTAGE, UNPLAYED
from .schedule import table_groups  # one union-find, shared with the design check
from .summary import HeadToHeadRow, LeaderboardRow, RatingMethod, RatingPair, RatingsSummary, SeatRow, WithoutFaulted

if TYPE_CHECKING:
    from .results import GameResult, ScheduleLine

ELO_PER_LOGIT = 400.0 / math.log(10.0)
MAX_TIE_ORDERINGS = 720
#: Below this many clusters (deals) no interval is given: there is no deal-to-deal spread to estimate.
MIN_CLUSTERS = 4


@dataclass(frozen=True)
class Outcome:
    """One scored game: the entrants in seat order, their scores, and its cluster."""

    key: str
    cluster: str
    seats: tuple[str, ...]
    scores: tuple[float, ...]


def tie_groups(scores: Sequence[float]) -> list[list[int]]:
    """Seat indices grouped by equal score, best group first."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and scores[groups[-1][0]] == scores[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def strict_orders(scores: Sequence[float]) -> list[tuple[float, tuple[int, ...]]]:
    """Every strict finishing order consistent with ``scores`` (ties expanded), with weights
    summing to 1. Past 720 orders, each tie group is expanded by cyclic shifts only."""
    groups = tie_groups(scores)
    count = math.prod(math.factorial(len(g)) for g in groups)
    if count <= MAX_TIE_ORDERINGS:
        choices = [list(itertools.permutations(g)) for g in groups]
    else:
        choices = [[tuple(g[s:] + g[:s]) for s in range(len(g))] for g in groups]
    combos = list(itertools.product(*choices))
    return [(1.0 / len(combos), tuple(itertools.chain.from_iterable(c))) for c in combos]


def finishing_positions(scores: Sequence[float]) -> list[float]:
    """1 = first; tied seats share the mean of their positions."""
    return [1.0 + sum(o > s for o in scores) + 0.5 * (sum(o == s for o in scores) - 1) for s in scores]


# ---------------------------------------------------------------------- Plackett–Luce
@dataclass(frozen=True)
class StageData:
    """Sufficient statistics of every Plackett–Luce stage (a choice of the next finisher among
    those still left), summed per cluster so any cluster reweighting (bootstrap) is a product.

    ``sets``: (U, n) incidence of the distinct "still left" sets; ``set_weight``: (C, U) how
    much stage weight each cluster puts on each set; ``wins``: (C, n) how often each player is
    chosen in each cluster (weighted by tie expansion).
    """

    num_players: int
    sets: np.ndarray
    set_weight: np.ndarray
    wins: np.ndarray

    @property
    def num_clusters(self) -> int:
        return int(self.set_weight.shape[0])


def stage_data(outcomes: Sequence[Outcome], names: Sequence[str]) -> tuple[StageData, list[str]]:
    """The stages of every game, summed per cluster; returns them with the cluster labels (sorted)."""
    index = {n: i for i, n in enumerate(names)}
    clusters = sorted({o.cluster for o in outcomes})
    cindex = {c: i for i, c in enumerate(clusters)}
    n = len(names)
    set_index: dict[frozenset[Any], int] = {}
    set_weight: dict[tuple[int, int], float] = {}
    wins = np.zeros((len(clusters), n))
    for o in outcomes:
        c = cindex[o.cluster]
        ids = [index[s] for s in o.seats]
        for w, order in strict_orders(o.scores):
            for r in range(len(order) - 1):
                left = frozenset(ids[i] for i in order[r:])
                u = set_index.setdefault(left, len(set_index))
                set_weight[(c, u)] = set_weight.get((c, u), 0.0) + w
                wins[c, ids[order[r]]] += w
    sets = np.zeros((len(set_index), n))
    for members, u in set_index.items():
        sets[u, list(members)] = 1.0
    weight = np.zeros((len(clusters), len(set_index)))
    for (c, u), w in set_weight.items():
        weight[c, u] = w
    return StageData(n, sets, weight, wins), clusters


def fit_plackett_luce(
    data: StageData,
    cluster_weights: np.ndarray | None = None,
    *,
    regularization: float = 0.1,
    method: str = "newton",
    tol: float = 1e-9,
    max_iter: int | None = None,
) -> np.ndarray:
    """Centred log-strengths θ: shape (B, n) for ``cluster_weights`` of shape (B, clusters),
    or (n,) without weights.

    The estimate maximises the Plackett–Luce likelihood plus ``regularization`` virtual wins
    and losses of every player against an anchor of strength 1 (MegagemBench's prior), then
    is centred. ``method``: ``"newton"`` (default; a few damped Newton steps, all resamples at
    once) or ``"mm"`` (Hunter's minorise-maximise iteration; same maximum, slower when a
    player is far from the rest). Stops when no log-strength moves more than ``tol``."""
    single = cluster_weights is None
    cw = np.ones((1, data.num_clusters)) if single else np.atleast_2d(np.asarray(cluster_weights, dtype=float))
    weight = cw @ data.set_weight  # (B, U)
    wins = cw @ data.wins  # (B, n)
    if regularization <= 0 and np.any(wins <= 0):
        raise ValueError("a player never finishes above anyone; use regularization > 0 for a finite rating")
    if method == "newton":
        theta = _newton(wins, weight, data.sets, regularization, tol, max_iter or 100)
    elif method == "mm":
        theta = _minorise_maximise(wins, weight, data.sets, regularization, tol, max_iter or 100_000)
    else:
        raise ValueError(f"unknown method {method!r}; use 'newton' or 'mm'")
    theta -= theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def _minorise_maximise(
    wins: np.ndarray, weight: np.ndarray, sets: np.ndarray, reg: float, tol: float, max_iter: int
) -> np.ndarray:
    num = reg + wins
    gamma = np.ones_like(wins)
    for _ in range(max_iter):
        totals = gamma @ sets.T  # (B, U)
        den = (weight / np.where(totals > 0, totals, 1.0)) @ sets + 2.0 * reg / (gamma + 1.0)
        new = np.where(den > 0, num / np.where(den > 0, den, 1.0), gamma)
        if reg <= 0:  # without the anchor the scale is free: pin it
            new /= np.exp(np.log(new).mean(axis=1, keepdims=True))
        delta = np.max(np.abs(np.log(new) - np.log(gamma)))
        gamma = new
        if delta < tol:
            break
    theta: np.ndarray = np.log(gamma)
    return theta


def _newton(
    wins: np.ndarray,
    weight: np.ndarray,
    sets: np.ndarray,
    reg: float,
    tol: float,
    max_iter: int,
    max_step: float = 2.0,
) -> np.ndarray:
    b, n = wins.shape
    theta = np.zeros((b, n))
    eye = np.eye(n)
    for _ in range(max_iter):
        gamma = np.exp(theta)
        totals = gamma @ sets.T  # (B, U)
        p = gamma[:, None, :] * sets[None, :, :] / np.where(totals > 0, totals, 1.0)[:, :, None]  # (B, U, n)
        wp = weight[:, :, None] * p
        expected = wp.sum(axis=1)  # (B, n)
        sig = gamma / (gamma + 1.0)
        grad = wins - expected + reg * (1.0 - 2.0 * sig)
        # negative Hessian: sum_u w_u (diag p_u - p_u p_u^T) + 2 reg diag(sig (1 - sig)), positive definite for reg > 0
        neg_h = -np.matmul(wp.transpose(0, 2, 1), p)
        neg_h += (expected + 2.0 * reg * sig * (1.0 - sig))[:, :, None] * eye + 1e-12 * eye
        step = np.linalg.solve(neg_h, grad[:, :, None])[:, :, 0]
        biggest = np.max(np.abs(step), axis=1, keepdims=True)
        step *= np.minimum(1.0, max_step / np.maximum(biggest, 1e-300))
        theta += step
        if reg <= 0:
            theta -= theta.mean(axis=1, keepdims=True)
        if np.max(biggest) < tol:
            break
    return theta


def bootstrap_cluster_weights(num_clusters: int, resamples: int, seed: int, *keys: int | str) -> np.ndarray:
    """(resamples, num_clusters) counts: clusters drawn with replacement (see :mod:`arena_core.stats`)."""
    return cluster_bootstrap_weights(num_clusters, resamples, seed, *keys)


def information_matrix(data: StageData, theta: np.ndarray, regularization: float = 0.1) -> np.ndarray:
    """(n, n) observed information (negative Hessian of the regularised log-likelihood) at θ,
    every game counted as independent: its inverse is the least uncertainty the games allow."""
    gamma = np.exp(np.asarray(theta, dtype=float))
    weight = data.set_weight.sum(axis=0)
    totals = data.sets @ gamma
    p = gamma[None, :] * data.sets / np.where(totals > 0, totals, 1.0)[:, None]  # (U, n)
    wp = weight[:, None] * p
    sig = gamma / (gamma + 1.0)
    info = -(wp.T @ p)
    info[np.diag_indices_from(info)] += wp.sum(axis=0) + 2.0 * regularization * sig * (1.0 - sig)
    out: np.ndarray = info
    return out


def model_covariance(data: StageData, theta: np.ndarray, regularization: float = 0.1) -> np.ndarray:
    """Covariance of the centred log-strengths from the information matrix (games independent)."""
    n = len(theta)
    centre = np.eye(n) - 1.0 / n
    return centre @ np.linalg.pinv(information_matrix(data, theta, regularization)) @ centre


def comparison_groups(outcomes: Sequence[Outcome], names: Sequence[str]) -> list[list[str]]:
    """Entrants split into groups connected by shared games (the comparison graph's components),
    largest first; ratings, ranks and pairs are only comparable inside a group."""
    index = {n: i for i, n in enumerate(names)}
    tables = [[index[s] for s in o.seats] for o in outcomes]
    return [[names[i] for i in group] for group in table_groups(len(names), tables)]


#: log-strengths closer than this share a rank: entrants with the same results have the same
#: maximum-likelihood strength, and the optimizer's last digits (which differ between numpy/scipy
#: releases) must not order them; 1e-6 logit is 0.0004 Elo, far below any interval's width
TIE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class RatingFit:
    """Ratings, their intervals, every within-group pairwise difference and rank sets.

    Intervals (when ``clusters >= min_clusters``) cover the population value: the rating the
    model would give on unlimited deals like these. ``pair_*`` are (n, n) arrays of
    ``rating[i] - rating[j]``, its interval, two-sided p-value and Holm verdict over all
    within-group pairs (NaN / False across groups); ``pair_sim_*`` its simultaneous interval (all
    pairs at once, Bonferroni: it excludes 0 only where the Holm verdict resolves the pair) and
    ``pair_p_holm`` the Holm-adjusted p-value (the verdict's footing). ``rank`` and the rank sets count only
    entrants of the same group; a rank set is ``[1 + resolved above, group size - resolved below]``.
    """

    names: list[str]
    theta: np.ndarray  # (n,) centred log-strengths
    rating: np.ndarray  # (n,) base + θ·400/ln10
    rank: np.ndarray  # (n,) within its group
    rating_interval: np.ndarray | None  # (n, 2)
    rank_interval: np.ndarray | None  # (n, 2)
    resamples: int
    clusters: int = 0
    groups: list[list[str]] | None = None
    pair_diff: np.ndarray | None = None
    pair_low: np.ndarray | None = None
    pair_high: np.ndarray | None = None
    pair_p: np.ndarray | None = None
    pair_resolved: np.ndarray | None = None
    pair_sd_per_cluster: np.ndarray | None = None  # spread of one cluster's difference (for deals_needed)
    pair_sim_low: np.ndarray | None = None  # simultaneous interval: level 1 - alpha / (pairs tested), Bonferroni
    pair_sim_high: np.ndarray | None = None
    pair_p_holm: np.ndarray | None = None  # Holm-adjusted p-value: resolved where <= alpha


def plackett_luce_ratings(
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    *,
    resamples: int = 1000,
    regularization: float = 0.1,
    base: float = 1000.0,
    seed: int = 0,
    level: float = 0.95,
    min_clusters: int = MIN_CLUSTERS,
) -> RatingFit:
    """Point ratings; with ``min_clusters`` or more clusters, small-sample cluster-bootstrap
    intervals for ratings and pairwise differences, Holm verdicts and rank sets.

    Each interval is ``estimate ± t_{m-1} · se`` with ``se`` the bootstrap spread times
    ``sqrt(m/(m-1))`` (m clusters), floored by the model standard error (every game
    independent) so that no finite data give a zero-width interval.
    """
    names = list(names)
    n = len(names)
    data, clusters = stage_data(outcomes, names)
    theta = fit_plackett_luce(data, regularization=regularization)
    groups = comparison_groups(outcomes, names)
    gid = np.zeros(n, dtype=int)
    for g, members in enumerate(groups):
        for name in members:
            gid[names.index(name)] = g
    same = gid[:, None] == gid[None, :]
    above = (theta[None, :] > theta[:, None] + TIE_TOLERANCE) & same  # [i, j]: j above i, same group
    rank = 1 + above.sum(axis=1)
    rating = base + ELO_PER_LOGIT * theta
    m = data.num_clusters
    if resamples <= 0 or m < max(2, min_clusters):
        return RatingFit(names, theta, rating, rank, None, None, resamples, m, groups)
    weights = cluster_bootstrap_weights(m, resamples, seed)
    boot = fit_plackett_luce(data, weights, regularization=regularization)
    cov = model_covariance(data, theta, regularization)
    lo, hi, _ = bootstrap_t_interval(theta, boot, m, level, se_floor=np.sqrt(np.clip(np.diag(cov), 0, None)))
    rating_iv = np.stack([base + ELO_PER_LOGIT * lo, base + ELO_PER_LOGIT * hi], axis=1)
    diff = theta[:, None] - theta[None, :]
    boot_diff = boot[:, :, None] - boot[:, None, :]
    var_floor = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    d_lo, d_hi, d_se = bootstrap_t_interval(diff, boot_diff, m, level, se_floor=np.sqrt(np.clip(var_floor, 0, None)))
    iu = [(i, j) for i in range(n) for j in range(i + 1, n) if same[i, j]]
    pvals = np.full((n, n), np.nan)
    for i, j in iu:
        se = d_se[i, j]
        pvals[i, j] = pvals[j, i] = 1.0 if se <= 0 else 2.0 * t_sf(abs(diff[i, j]) / se, m - 1)
    verdicts = holm([pvals[i, j] for i, j in iu], 1.0 - level)
    resolved = np.zeros((n, n), dtype=bool)
    p_holm = np.full((n, n), np.nan)
    for (i, j), v, adjusted in zip(iu, verdicts, holm_adjusted([pvals[i, j] for i, j in iu])):
        resolved[i, j] = resolved[j, i] = v
        p_holm[i, j] = p_holm[j, i] = adjusted
    # the same se as the p-value at level 1 - alpha/K: excludes 0 exactly where p <= alpha/K (Holm resolves it)
    sim_half = t_quantile(1.0 - (1.0 - level) / (2 * max(1, len(iu))), m - 1) * d_se
    sizes = np.array([len(groups[g]) for g in gid])
    rank_iv = np.stack(
        [1 + (resolved & above).sum(axis=1), sizes - (resolved & ~above & same & ~np.eye(n, dtype=bool)).sum(axis=1)],
        axis=1,
    ).astype(float)
    scale = ELO_PER_LOGIT
    nan_across = np.where(same, 1.0, np.nan)
    return RatingFit(
        names,
        theta,
        rating,
        rank,
        rating_iv,
        rank_iv,
        resamples,
        m,
        groups,
        scale * diff * nan_across,
        scale * d_lo * nan_across,
        scale * d_hi * nan_across,
        pvals,
        resolved,
        scale * d_se * math.sqrt(m) * nan_across,
        scale * (diff - sim_half) * nan_across,
        scale * (diff + sim_half) * nan_across,
        p_holm,
    )


# ---------------------------------------------------------------------- head to head
_Span = tuple[float, float] | None  # an interval, or none


@dataclass(frozen=True)
class HeadToHead:
    a: str
    b: str
    games: int
    clusters: int
    a_above_b: float  # share of shared games where A finished above B (ties count half)
    interval: tuple[float, float] | None
    mean_score_diff: float  # A's score minus B's
    diff_interval: tuple[float, float] | None
    resolved: bool  # Holm over all pairs: the share differs from 0.5
    pvalue: float | None = None
    p_holm: float | None = None  # Holm-adjusted: resolved where <= alpha
    simultaneous: tuple[float, float] | None = None  # the share at level 1 - alpha / (pairs tested)
    diff_simultaneous: tuple[float, float] | None = None


def head_to_head(
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_games: int = 5,
    level: float = 0.95,
    min_clusters: int = MIN_CLUSTERS,
) -> list[HeadToHead]:
    """Paired comparison of every pair over the games where both sit.

    The share of games A finishes above B covers the deal-averaged probability that A finishes
    above B (:func:`arena_core.stats.cluster_mean`: t with m-1 df on cluster-level shares,
    never narrower than the Wilson score interval of the games nor than what the m deals
    allow, so p-values count deals, not games); no interval below
    ``min_clusters`` clusters or ``min_games`` games. ``resolved``: Holm over every pair with
    an interval; ``simultaneous``: the share's interval at level ``1 - alpha / K`` (K pairs with
    an interval; Bonferroni: all K cover at once with at least ``level``, and one excludes 0.5
    only where Holm resolves the pair). ``resamples`` and ``seed`` are kept for the call
    signature (no resampling is needed: the cluster-level interval is closed-form)."""
    alpha = 1.0 - level
    pairs: list[tuple[str, str, np.ndarray]] = []
    for ia, ib in itertools.combinations(range(len(names)), 2):
        a, b = names[ia], names[ib]
        per_cluster: dict[str, list[float]] = {}
        for o in outcomes:
            if a in o.seats and b in o.seats:
                sa, sb = o.scores[o.seats.index(a)], o.scores[o.seats.index(b)]
                acc = per_cluster.setdefault(o.cluster, [0.0, 0.0, 0.0])
                acc[0] += 1.0 if sa > sb else 0.5 if sa == sb else 0.0
                acc[1] += sa - sb
                acc[2] += 1
        if per_cluster:
            pairs.append((a, b, np.array([per_cluster[c] for c in sorted(per_cluster)])))

    def tested(sums: np.ndarray) -> bool:
        return resamples > 0 and sums[:, 2].sum() >= min_games and len(sums) >= max(2, min_clusters)

    family = max(1, sum(tested(sums) for _, _, sums in pairs))

    def intervals(sums: np.ndarray, at: float) -> tuple[_Span, _Span, float]:
        share = cluster_mean(sums[:, 0], sums[:, 2], at, bounds=(0.0, 1.0), null=0.5)
        d = cluster_mean(sums[:, 1], sums[:, 2], at)
        return (share.low, share.high), ((d.low, d.high) if math.isfinite(d.low) else None), share.pvalue

    rows: list[dict[str, Any]] = []
    for a, b, sums in pairs:
        games = int(sums[:, 2].sum())
        row: dict[str, Any] = dict(a=a, b=b, games=games, clusters=len(sums), interval=None, diff_interval=None)
        row.update(a_above_b=float(sums[:, 0].sum() / games), mean_score_diff=float(sums[:, 1].sum() / games))
        if tested(sums):
            row["interval"], row["diff_interval"], row["pvalue"] = intervals(sums, level)
            row["simultaneous"], row["diff_simultaneous"], _ = intervals(sums, 1.0 - alpha / family)
        rows.append(row)
    with_p = [i for i, r in enumerate(rows) if "pvalue" in r]
    ps = [rows[i]["pvalue"] for i in with_p]
    for i, verdict, adjusted in zip(with_p, holm(ps, alpha), holm_adjusted(ps)):
        rows[i].update(resolved=verdict, p_holm=adjusted)
    return [HeadToHead(**{"resolved": False, **r}) for r in rows]


# ---------------------------------------------------------------------- openskill
def openskill_ratings(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """openskill Plackett–Luce (mu, sigma, ordinal = mu − 3σ) per entrant; games in key order."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        return {}
    model = PlackettLuce()
    current = {n: model.rating(name=n) for n in names}
    for o in sorted(outcomes, key=lambda o: o.key):
        teams = [[current[s]] for s in o.seats]
        rated = model.rate(teams, scores=list(o.scores))
        for s, team in zip(o.seats, rated):
            current[s] = team[0]
    return {n: (float(r.mu), float(r.sigma), float(r.ordinal())) for n, r in current.items()}


# ---------------------------------------------------------------------- tables
def player_table(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per entrant: games, mean score, mean margin (own score minus the others' mean), mean
    finishing position and first-place share (ties split)."""
    acc = {n: {"games": 0, "score": 0.0, "margin": 0.0, "position": 0.0, "wins": 0.0} for n in names}
    for o in outcomes:
        pos = finishing_positions(o.scores)
        top = max(o.scores)
        n_top = sum(s == top for s in o.scores)
        k = len(o.scores)
        for i, name in enumerate(o.seats):
            a = acc[name]
            a["games"] += 1
            a["score"] += o.scores[i]
            a["margin"] += o.scores[i] - (sum(o.scores) - o.scores[i]) / max(k - 1, 1)
            a["position"] += pos[i]
            a["wins"] += (1.0 / n_top) if o.scores[i] == top else 0.0
    return {
        n: {
            "games": a["games"],
            "mean_score": a["score"] / a["games"] if a["games"] else None,
            "mean_margin": a["margin"] / a["games"] if a["games"] else None,
            "mean_position": a["position"] / a["games"] if a["games"] else None,
            "win_share": a["wins"] / a["games"] if a["games"] else None,
        }
        for n, a in acc.items()
    }


def seat_table(outcomes: Sequence[Outcome], num_seats: int) -> list[dict[str, Any]]:
    """Per seat (seat bias): games, mean score, mean finishing position, first-place share."""
    rows = [{"seat": s, "games": 0, "score": 0.0, "position": 0.0, "wins": 0.0} for s in range(num_seats)]
    for o in outcomes:
        pos = finishing_positions(o.scores)
        top = max(o.scores)
        n_top = sum(s == top for s in o.scores)
        for i in range(len(o.scores)):
            r = rows[i]
            r["games"] += 1
            r["score"] += o.scores[i]
            r["position"] += pos[i]
            r["wins"] += (1.0 / n_top) if o.scores[i] == top else 0.0
    return [
        {
            "seat": r["seat"],
            "games": r["games"],
            "mean_score": r["score"] / r["games"] if r["games"] else None,
            "mean_position": r["position"] / r["games"] if r["games"] else None,
            "win_share": r["wins"] / r["games"] if r["games"] else None,
        }
        for r in rows
    ]


def player_seat_positions(
    outcomes: Sequence[Outcome], names: Sequence[str], num_seats: int
) -> dict[str, list[float | None]]:
    """Mean finishing position of each entrant in each seat."""
    total = {n: [0.0] * num_seats for n in names}
    count = {n: [0] * num_seats for n in names}
    for o in outcomes:
        pos = finishing_positions(o.scores)
        for i, name in enumerate(o.seats):
            total[name][i] += pos[i]
            count[name][i] += 1
    return {n: [total[n][s] / count[n][s] if count[n][s] else None for s in range(num_seats)] for n in names}


# ---------------------------------------------------------------------- summary
def deal_clusters(games: Iterable[GameResult]) -> dict[str, str]:
    """Game key -> cluster: the deal seed when deals are shared between tables (a deal's
    tables and rotations are one unit), otherwise the recorded table-on-deal cluster."""
    tables_per_seed: dict[int, set[Any]] = {}
    for g in games:
        tables_per_seed.setdefault(g.seed, set()).add(g.cluster)
    shared = any(len(t) > 1 for t in tables_per_seed.values())
    return {g.key: (f"deal {g.seed}" if shared else g.cluster) for g in games}


def few_games_note(
    fit: RatingFit, num_deals: int, *, gap: float = 100.0, level: float = 0.95, power: float = 0.8
) -> str | None:
    """One line when the games are too few to order the leaderboard, with the deals that would
    resolve a ``gap``-point difference (Bonferroni over all pairs, so Holm does at least as well)."""
    n = len(fit.names)
    pairs = sum(len(g) * (len(g) - 1) // 2 for g in (fit.groups or [fit.names]))
    if pairs == 0:
        return None
    if fit.pair_resolved is None:
        if num_deals < MIN_CLUSTERS:
            return (
                f"Too few deals for intervals ({num_deals} < {MIN_CLUSTERS}: no deal-to-deal spread to estimate); "
                f"play at least {MIN_CLUSTERS} deals, more to resolve close entrants."
            )
        return None
    order = np.argsort(fit.rank + 1000 * np.array([_group_index(fit, nm) for nm in fit.names]))
    adjacent = [
        (order[k], order[k + 1])
        for k in range(n - 1)
        if _group_index(fit, fit.names[order[k]]) == _group_index(fit, fit.names[order[k + 1]])
    ]
    open_pairs = [(i, j) for i, j in adjacent if not fit.pair_resolved[i, j]]
    if not open_pairs:
        return None
    assert fit.pair_sd_per_cluster is not None  # set with pair_resolved
    sd = float(np.nanmedian(fit.pair_sd_per_cluster[np.triu_indices(n, 1)]))
    if not math.isfinite(sd) or sd <= 0:
        return None
    need = deals_needed(gap, sd, level, power, comparisons=pairs)
    return (
        f"Too few games to order {len(open_pairs)} of {len(adjacent)} neighbouring pairs; about {need} deals "
        f"(now {num_deals}) would resolve a {gap:g}-point gap with {power:.0%} power (Holm over {pairs} pairs)."
    )


def _group_index(fit: RatingFit, name: str) -> int:
    for g, members in enumerate(fit.groups or [fit.names]):
        if name in members:
            return g
    return 0


def summarize(
    header: ScheduleLine,
    games: Sequence[GameResult],
    *,
    resamples: int | None = None,
    regularization: float = 0.1,
    base: float = 1000.0,
    seed: int = 0,
    min_pair_games: int = 5,
    note_gap: float = 100.0,
    faulted: str = "include",
) -> RatingsSummary:
    """Everything the leaderboard and the report show, typed (:class:`~arena_tournament.summary.RatingsSummary`).

    ``header`` is the results file's schedule line, ``games`` its game lines. ``faulted``: rate
    every scored game (``include``), leave out those an infrastructure fault touched (``exclude``),
    or both, the second as ``without_faulted`` (``both``).
    """
    if faulted not in ("include", "exclude", "both"):
        raise ValueError(f"faulted must be include, exclude or both, got {faulted!r}")

    def rate(rated: Sequence[GameResult]) -> RatingsSummary:
        return _summarize(
            header,
            rated,
            games,
            resamples=resamples,
            regularization=regularization,
            base=base,
            seed=seed,
            min_pair_games=min_pair_games,
            note_gap=note_gap,
        )

    touched = [g for g in games if infrastructure_touched(g)]
    kept = [g for g in games if not infrastructure_touched(g)]
    if faulted == "exclude":
        return rate(kept).model_copy(update={"games_excluded": len(touched)})
    summary = rate(games)
    if faulted == "both":
        clean = rate(kept)
        side = WithoutFaulted(games_excluded=len(touched), leaderboard=clean.leaderboard, note=clean.note)
        summary = summary.model_copy(update={"without_faulted": side})
    return summary


def infrastructure_touched(game: GameResult) -> bool:
    """Whether a move of ``game`` was played by the policy because the provider was unavailable
    (an entrant that opted into ``on_outage = "default"``)."""
    return any(f.kind is FaultKind.UNAVAILABLE for f in game.faults)


def _summarize(
    header: ScheduleLine,
    games: Sequence[GameResult],
    recorded: Sequence[GameResult],
    *,
    resamples: int | None,
    regularization: float,
    base: float,
    seed: int,
    min_pair_games: int,
    note_gap: float,
) -> RatingsSummary:
    """The summary rating ``games`` (of the ``recorded`` ones; the counts describe those)."""
    schedule = header.schedule
    names = [e.name for e in schedule.entrants]
    resamples = 1000 if resamples is None else resamples
    scored = [g for g in games if g.returns is not None]
    touched = [g for g in recorded if g.returns is not None and infrastructure_touched(g)]
    cluster_of = deal_clusters(scored)
    outcomes = [
        Outcome(g.key, cluster_of[g.key], tuple(g.seats), tuple(g.returns))
        for g in sorted(scored, key=lambda g: g.key)
        if g.returns is not None  # scored: never None here
    ]
    fit = plackett_luce_ratings(
        outcomes, names, resamples=resamples, regularization=regularization, base=base, seed=seed
    )
    pairs = head_to_head(outcomes, names, resamples=resamples, seed=seed, min_games=min_pair_games)
    num_deals = len({g.seed for g in scored})
    unit = (
        "one deal (all its tables and seat rotations)"
        if any(c.startswith("deal ") for c in cluster_of.values())
        else "one table on one deal"
    )
    return RatingsSummary(
        name=header.name,
        game=schedule.game,
        params=schedule.params,
        num_players=schedule.num_players,
        design=schedule.design,
        deals=len(schedule.deals),
        deals_scored=num_deals,
        tables=len(schedule.tables),
        games_scheduled=len(schedule.games()),
        games_recorded=len(recorded),
        games_scored=len(scored),
        games_truncated=sum(1 for g in recorded if g.returns is None and g.reason not in (UNPLAYED, OUTAGE)),
        games_unplayed=sum(1 for g in recorded if g.reason == UNPLAYED),
        games_with_faults=sum(1 for g in recorded if g.faults),
        clusters=len({o.cluster for o in outcomes}),
        games_replayed=sum(1 for g in recorded if g.retried and g.reason != OUTAGE),
        attempts_lost=sum(len(g.retried) for g in recorded),
        games_outage=sum(1 for g in recorded if g.reason == OUTAGE),
        games_with_outage_moves=len(touched),
        outage_entrants=sorted(
            {f.player for g in touched for f in g.faults if f.kind is FaultKind.UNAVAILABLE}, key=names.index
        ),
        settings=header.settings.model_dump(mode="json"),
        method=RatingMethod(
            model="Plackett-Luce (minorise-maximise), ties expanded",
            regularization=regularization,
            scale=f"{base:g} + {ELO_PER_LOGIT:.4f} x centred log-strength (Elo scale)",
            intervals=(
                f"95% cluster bootstrap ({resamples} resamples) with a small-sample t correction, cluster = {unit}; "
                f"none below {MIN_CLUSTERS} clusters; resolved = Holm over all pairs, "
                "and a pair's interval beside its verdict is simultaneous over the pairs tested (Bonferroni)"
            ),
            seed=seed,
        ),
        groups=fit.groups or [names],
        note=few_games_note(fit, num_deals, gap=note_gap),
        leaderboard=_leaderboard(fit, outcomes, recorded, names),
        rating_pairs=_rating_pairs(fit),
        head_to_head=[
            HeadToHeadRow(
                a=p.a,
                b=p.b,
                games=p.games,
                clusters=p.clusters,
                a_above_b=p.a_above_b,
                low=None if p.interval is None else p.interval[0],
                high=None if p.interval is None else p.interval[1],
                mean_score_diff=p.mean_score_diff,
                diff_low=None if p.diff_interval is None else p.diff_interval[0],
                diff_high=None if p.diff_interval is None else p.diff_interval[1],
                p=p.pvalue,
                resolved=p.resolved,
                p_holm=p.p_holm,
                sim_low=None if p.simultaneous is None else p.simultaneous[0],
                sim_high=None if p.simultaneous is None else p.simultaneous[1],
                diff_sim_low=None if p.diff_simultaneous is None else p.diff_simultaneous[0],
                diff_sim_high=None if p.diff_simultaneous is None else p.diff_simultaneous[1],
            )
            for p in pairs
        ],
        seats=[SeatRow(**row) for row in seat_table(outcomes, schedule.num_players)],
        player_seat_positions=player_seat_positions(outcomes, names, schedule.num_players),
    )


def _leaderboard(
    fit: RatingFit, outcomes: Sequence[Outcome], games: Sequence[GameResult], names: list[str]
) -> list[LeaderboardRow]:
    """One row per entrant, by group, then rank."""
    skill = openskill_ratings(outcomes, names)
    table = player_table(outcomes, names)
    faults = {n: 0 for n in names}
    for g in games:
        for f in g.faults:
            faults[f.player] += 1
    group_of = {n: gi for gi, members in enumerate(fit.groups or [names]) for n in members}

    def bound(iv: np.ndarray | None, i: int, side: int) -> float | None:
        return None if iv is None else float(iv[i, side])

    rows = [
        LeaderboardRow(
            name=n,
            rating=float(fit.rating[i]),
            rating_low=bound(fit.rating_interval, i, 0),
            rating_high=bound(fit.rating_interval, i, 1),
            rank=int(fit.rank[i]),
            rank_low=bound(fit.rank_interval, i, 0),
            rank_high=bound(fit.rank_interval, i, 1),
            group=group_of[n] + 1,
            theta=float(fit.theta[i]),
            faults=faults[n],
            **table[n],
            openskill_mu=skill[n][0] if n in skill else None,
            openskill_sigma=skill[n][1] if n in skill else None,
            openskill_ordinal=skill[n][2] if n in skill else None,
        )
        for i, n in enumerate(names)
    ]
    return sorted(rows, key=lambda r: (r.group, r.rank))


def _rating_pairs(fit: RatingFit) -> list[RatingPair]:
    """Every within-group pair, the higher-rated first (none without intervals)."""
    if fit.pair_resolved is None:
        return []
    assert fit.pair_diff is not None and fit.pair_low is not None  # set together
    assert fit.pair_high is not None and fit.pair_p is not None
    names = fit.names
    group_of = {n: gi for gi, members in enumerate(fit.groups or [names]) for n in members}
    out = []
    for i, j in itertools.combinations(range(len(names)), 2):
        if group_of[names[i]] != group_of[names[j]]:
            continue
        a, b = (i, j) if fit.theta[i] >= fit.theta[j] else (j, i)
        out.append(
            RatingPair(
                a=names[a],
                b=names[b],
                diff=float(fit.pair_diff[a, b]),
                low=float(fit.pair_low[a, b]),
                high=float(fit.pair_high[a, b]),
                p=float(fit.pair_p[a, b]),
                resolved=bool(fit.pair_resolved[a, b]),
                sim_low=None if fit.pair_sim_low is None else float(fit.pair_sim_low[a, b]),
                sim_high=None if fit.pair_sim_high is None else float(fit.pair_sim_high[a, b]),
                p_holm=None if fit.pair_p_holm is None else float(fit.pair_p_holm[a, b]),
            )
        )
    return out
