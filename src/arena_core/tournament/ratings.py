"""Ratings with honest intervals from a tournament's finishing orders.

- Plackett–Luce strengths by the minorise-maximise method (Hunter 2004), as MegagemBench
  fits them: ties expanded into every consistent strict order (weighted equally), 0.1 virtual
  win and loss against an anchor of strength 1, log-strengths centred, reported on the Elo
  scale (400/ln 10 points per logit) around ``base``.
- 95% intervals for ratings and ranks by cluster bootstrap: a cluster is one table on one
  deal with all its seat rotations; clusters are resampled with replacement and the model
  refitted (every resample at once, as weights on the same data).
- Paired head-to-head for every pair: how often A finishes above B where both sit, with a
  cluster-bootstrap interval, and the mean score difference.
- A TrueSkill-style rating (openskill's Plackett–Luce model), mean score, margin and
  finishing-position tables per player and per seat.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..seeding import make_rng

ELO_PER_LOGIT = 400.0 / math.log(10.0)
MAX_TIE_ORDERINGS = 720


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
        return self.set_weight.shape[0]


def stage_data(outcomes: Sequence[Outcome], names: Sequence[str]) -> tuple[StageData, list[str]]:
    """The stages of every game, summed per cluster; returns them with the cluster labels (sorted)."""
    index = {n: i for i, n in enumerate(names)}
    clusters = sorted({o.cluster for o in outcomes})
    cindex = {c: i for i, c in enumerate(clusters)}
    n = len(names)
    set_index: dict[frozenset, int] = {}
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


def _minorise_maximise(wins, weight, sets, reg, tol, max_iter) -> np.ndarray:
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
    return np.log(gamma)


def _newton(wins, weight, sets, reg, tol, max_iter, max_step: float = 2.0) -> np.ndarray:
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


def ranks_of(theta: np.ndarray) -> np.ndarray:
    """Rank 1 = strongest, along the last axis."""
    return np.argsort(np.argsort(-theta, axis=-1, kind="stable"), axis=-1, kind="stable") + 1


def bootstrap_cluster_weights(num_clusters: int, resamples: int, seed: int, *keys: int | str) -> np.ndarray:
    """(resamples, num_clusters) counts: clusters drawn with replacement."""
    rng = make_rng(seed, "bootstrap", *keys)
    draws = rng.integers(num_clusters, size=(resamples, num_clusters))
    weights = np.zeros((resamples, num_clusters))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1.0)
    return weights


@dataclass(frozen=True)
class RatingFit:
    names: list[str]
    theta: np.ndarray  # (n,) centred log-strengths
    rating: np.ndarray  # (n,) base + θ·400/ln10
    rank: np.ndarray  # (n,)
    rating_interval: np.ndarray | None  # (n, 2)
    rank_interval: np.ndarray | None  # (n, 2)
    resamples: int


def plackett_luce_ratings(
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    *,
    resamples: int = 1000,
    regularization: float = 0.1,
    base: float = 1000.0,
    seed: int = 0,
    level: float = 0.95,
) -> RatingFit:
    """Point ratings, and percentile cluster-bootstrap intervals for ratings and ranks."""
    data, _ = stage_data(outcomes, names)
    theta = fit_plackett_luce(data, regularization=regularization)
    rating = base + ELO_PER_LOGIT * theta
    rank = ranks_of(theta)
    rating_iv = rank_iv = None
    if resamples > 0 and data.num_clusters > 0:
        weights = bootstrap_cluster_weights(data.num_clusters, resamples, seed)
        boot = fit_plackett_luce(data, weights, regularization=regularization)
        lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
        rating_iv = np.percentile(base + ELO_PER_LOGIT * boot, [lo, hi], axis=0).T
        rank_iv = np.percentile(ranks_of(boot), [lo, hi], axis=0).T
    return RatingFit(list(names), theta, rating, rank, rating_iv, rank_iv, resamples)


# ---------------------------------------------------------------------- head to head
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
    resolved: bool  # the interval excludes 0.5


def head_to_head(
    outcomes: Sequence[Outcome],
    names: Sequence[str],
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_games: int = 5,
    level: float = 0.95,
) -> list[HeadToHead]:
    """Paired comparison of every pair over the games where both sit (clusters resampled)."""
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    out = []
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
        if not per_cluster:
            continue
        sums = np.array([per_cluster[c] for c in sorted(per_cluster)])
        games = int(sums[:, 2].sum())
        above, diff = sums[:, 0].sum() / games, sums[:, 1].sum() / games
        interval = diff_interval = None
        if resamples > 0 and games >= min_games:
            rng = make_rng(seed, "head_to_head", ia, ib)
            idx = rng.integers(len(sums), size=(resamples, len(sums)))
            n = sums[idx, 2].sum(axis=1)
            # the bootstrap spread of a mean over m clusters is sqrt((m-1)/m) too narrow: widen it
            widen = math.sqrt(len(sums) / (len(sums) - 1)) if len(sums) > 1 else 1.0
            boot_above = above + widen * (sums[idx, 0].sum(axis=1) / n - above)
            boot_diff = diff + widen * (sums[idx, 1].sum(axis=1) / n - diff)
            interval = tuple(float(np.clip(x, 0.0, 1.0)) for x in np.percentile(boot_above, [lo, hi]))
            diff_interval = tuple(float(x) for x in np.percentile(boot_diff, [lo, hi]))
        resolved = interval is not None and (interval[0] > 0.5 or interval[1] < 0.5)
        out.append(HeadToHead(a, b, games, len(sums), float(above), interval, float(diff), diff_interval, resolved))
    return out


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
def player_table(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, dict]:
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


def seat_table(outcomes: Sequence[Outcome], num_seats: int) -> list[dict]:
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


def player_seat_positions(outcomes: Sequence[Outcome], names: Sequence[str], num_seats: int) -> dict[str, list[float | None]]:
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
def summarize(header, games, *, resamples: int | None = None, regularization: float = 0.1, base: float = 1000.0, seed: int = 0, min_pair_games: int = 5) -> dict:
    """Everything the leaderboard and the report show, as JSON-able data.

    ``header`` is the results file's schedule line, ``games`` its game lines.
    """
    schedule = header.schedule
    names = [e.name for e in schedule.entrants]
    resamples = 1000 if resamples is None else resamples
    scored = [g for g in games if g.returns is not None]
    outcomes = [Outcome(g.key, g.cluster, tuple(g.seats), tuple(g.returns)) for g in sorted(scored, key=lambda g: g.key)]
    fit = plackett_luce_ratings(outcomes, names, resamples=resamples, regularization=regularization, base=base, seed=seed)
    pairs = head_to_head(outcomes, names, resamples=resamples, seed=seed, min_games=min_pair_games)
    skill = openskill_ratings(outcomes, names)
    table = player_table(outcomes, names)
    faults = {n: 0 for n in names}
    for g in games:
        for f in g.faults:
            faults[f.player] += 1
    rows = []
    for i, n in enumerate(names):
        row = {
            "name": n,
            "rating": float(fit.rating[i]),
            "rating_low": None if fit.rating_interval is None else float(fit.rating_interval[i, 0]),
            "rating_high": None if fit.rating_interval is None else float(fit.rating_interval[i, 1]),
            "rank": int(fit.rank[i]),
            "rank_low": None if fit.rank_interval is None else float(fit.rank_interval[i, 0]),
            "rank_high": None if fit.rank_interval is None else float(fit.rank_interval[i, 1]),
            "theta": float(fit.theta[i]),
            "faults": faults[n],
            **table[n],
        }
        if n in skill:
            row.update(openskill_mu=skill[n][0], openskill_sigma=skill[n][1], openskill_ordinal=skill[n][2])
        rows.append(row)
    rows.sort(key=lambda r: r["rank"])
    expected = len(schedule.games())
    return {
        "name": header.name,
        "game": schedule.game,
        "params": schedule.params,
        "num_players": schedule.num_players,
        "design": schedule.design,
        "deals": len(schedule.deals),
        "tables": len(schedule.tables),
        "games_scheduled": expected,
        "games_recorded": len(games),
        "games_scored": len(scored),
        "games_truncated": len(games) - len(scored),
        "games_with_faults": sum(1 for g in games if g.faults),
        "clusters": len({o.cluster for o in outcomes}),
        "settings": header.settings.model_dump(mode="json"),
        "method": {
            "model": "Plackett-Luce (minorise-maximise), ties expanded",
            "regularization": regularization,
            "scale": f"{base:g} + {ELO_PER_LOGIT:.4f} x centred log-strength (Elo scale)",
            "intervals": f"95% percentile cluster bootstrap, {resamples} resamples, cluster = one table on one deal",
            "seed": seed,
        },
        "leaderboard": rows,
        "head_to_head": [
            {
                "a": p.a, "b": p.b, "games": p.games, "clusters": p.clusters,
                "a_above_b": p.a_above_b,
                "low": None if p.interval is None else p.interval[0],
                "high": None if p.interval is None else p.interval[1],
                "mean_score_diff": p.mean_score_diff,
                "diff_low": None if p.diff_interval is None else p.diff_interval[0],
                "diff_high": None if p.diff_interval is None else p.diff_interval[1],
                "resolved": p.resolved,
            }
            for p in pairs
        ],
        "seats": seat_table(outcomes, schedule.num_players),
        "player_seat_positions": player_seat_positions(outcomes, names, schedule.num_players),
    }
